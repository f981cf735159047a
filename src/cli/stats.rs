//! `egdb stats`: per-material statistics from the table headers. See docs/cli.md.
use super::CliResult;
use checkers_egdb::stats::{material_stats, missing_slices, read_dir_info};
use std::path::PathBuf;

/// Arguments of `egdb stats`.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory.
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Print a JSON array instead of text lines.
    #[arg(long)]
    pub json: bool,
}

/// Run `egdb stats`: one line per material and side to move,
/// `bm bk wm wk stm positions wins losses draws longest`.
pub fn run(args: Args) -> CliResult {
    let infos = read_dir_info(&args.dir)?;
    if infos.is_empty() {
        return Err(format!(
            "no table files in {} (run egdb build first)",
            args.dir.display()
        )
        .into());
    }
    let stats = material_stats(&infos);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
    } else {
        println!("bm bk wm wk stm positions wins losses draws longest");
        for s in &stats {
            println!(
                "{} {} {} {} {} {} {} {} {} {}",
                s.bm, s.bk, s.wm, s.wk, s.stm, s.positions, s.wins, s.losses, s.draws, s.longest
            );
        }
    }
    let missing = missing_slices(&infos);
    if let Some(first) = missing.first() {
        let partial: Vec<String> = stats
            .iter()
            .filter(|s| !s.complete)
            .map(|s| format!("{}{}{}{} {}", s.bm, s.bk, s.wm, s.wk, s.stm))
            .collect();
        return Err(format!(
            "tables incomplete: {} slice files missing (first {first}; see egdb info --slices); \
             partial totals above for: {}; materials with no file at all are not listed",
            missing.len(),
            if partial.is_empty() {
                "none".to_string()
            } else {
                partial.join(", ")
            }
        )
        .into());
    }
    Ok(())
}
