//! `egdb plan`: build order of slice units and their dependencies.
use super::CliResult;
use checkers_egdb::plan::build_order;

/// Arguments of `egdb plan`.
#[derive(clap::Args)]
pub struct Args {
    /// Plan every slice with 1..=N pieces (1-10).
    #[arg(long)]
    pieces: u32,
    /// Print JSON: `{"max_pieces": N, "units": [{"id", "slices", "sizes", "pieces", "deps",
    /// "dep_units", "capture_materials"}, ...]}`.
    #[arg(long)]
    json: bool,
}

/// Run `egdb plan`. Text form, one line per unit in build order:
/// `id<TAB>slices (comma-separated)<TAB>positions per slice<TAB>dep_units<TAB>deps<TAB>capture materials`
/// (lists comma-separated, `-` when empty).
pub fn run(args: Args) -> CliResult {
    if !(1..=10).contains(&args.pieces) {
        return Err(format!("--pieces must be between 1 and 10 (got {})", args.pieces).into());
    }
    let units = build_order(args.pieces);
    if args.json {
        let v = serde_json::json!({
            "max_pieces": args.pieces,
            "units": units.iter().map(|u| u.to_json()).collect::<Vec<_>>(),
        });
        println!("{v}");
        return Ok(());
    }
    let join = |v: Vec<String>| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(",")
        }
    };
    let mut out = String::new();
    for u in &units {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            u.id,
            join(u.slices.iter().map(|s| s.to_string()).collect()),
            u.sizes[0],
            join(u.dep_units.iter().map(|d| d.to_string()).collect()),
            join(u.deps.iter().map(|s| s.to_string()).collect()),
            join(u.capture_materials.iter().map(|m| m.to_string()).collect()),
        ));
    }
    print!("{out}");
    Ok(())
}
