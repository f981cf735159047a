//! `egdb info`: slices present, sizes, bytes, positions per byte, missing slices. See docs/cli.md.
use super::CliResult;
use checkers_egdb::plan::build_order;
use checkers_egdb::stats::read_dir_info;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Arguments of `egdb info`.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory.
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Also list every slice file, then every missing slice (`missing<TAB>NAME`).
    #[arg(long)]
    pub slices: bool,
}

/// Run `egdb info`.
pub fn run(args: Args) -> CliResult {
    let infos = read_dir_info(&args.dir)?;
    if infos.is_empty() {
        return Err(format!("no table files in {} (run egdb build)", args.dir.display()).into());
    }
    if args.slices {
        println!("slice\tpositions\tbytes\tpositions/byte");
        for f in &infos {
            println!(
                "{}\t{}\t{}\t{:.1}",
                f.slice,
                f.meta.positions,
                f.bytes,
                f.meta.positions as f64 / f.bytes.max(1) as f64
            );
        }
    }
    let present: BTreeSet<_> = infos.iter().map(|f| f.slice).collect();
    let max = infos
        .iter()
        .map(|f| f.slice.material.pieces())
        .max()
        .unwrap_or(0);
    println!("pieces\tslices\tmissing\tpositions\tbytes\tpositions/byte");
    let all = build_order(max);
    for n in 1..=max {
        let expected: Vec<_> = all
            .iter()
            .flat_map(|u| u.slices.iter())
            .filter(|s| s.material.pieces() == n)
            .collect();
        let have: Vec<_> = infos
            .iter()
            .filter(|f| f.slice.material.pieces() == n)
            .collect();
        let missing = expected.iter().filter(|s| !present.contains(s)).count();
        let pos: u64 = have.iter().map(|f| f.meta.positions).sum();
        let bytes: u64 = have.iter().map(|f| f.bytes).sum();
        println!(
            "{n}\t{}\t{missing}\t{pos}\t{bytes}\t{:.1}",
            have.len(),
            pos as f64 / bytes.max(1) as f64
        );
    }
    if args.slices {
        for n in 1..=max {
            for s in all
                .iter()
                .flat_map(|u| u.slices.iter())
                .filter(|s| s.material.pieces() == n && !present.contains(s))
            {
                println!("missing\t{s}");
            }
        }
    }
    Ok(())
}
