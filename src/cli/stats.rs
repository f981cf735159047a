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
    /// List the longest distance to conversion instead, per material and side to move, with
    /// one position attaining it: `bm bk wm wk stm longest_win FEN longest_loss FEN` (`-` when
    /// there is none); needs the `.dtc` files of `egdb build --dtc`.
    #[arg(long)]
    pub dtc: bool,
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
    if args.dtc {
        let rows = checkers_egdb::stats::longest_dtc(&args.dir)?;
        if rows.is_empty() {
            return Err(format!(
                "no distance files (*.dtc) in {} (run egdb build --dtc first)",
                args.dir.display()
            )
            .into());
        }
        if args.json {
            println!("{}", serde_json::to_string_pretty(&rows)?);
        } else {
            println!("bm bk wm wk stm longest_win fen longest_loss fen");
            let col = |x: &Option<(u32, String)>| match x {
                Some((d, f)) => format!("{d} {f}"),
                None => "- -".into(),
            };
            for r in &rows {
                println!(
                    "{} {} {} {} {} {} {}",
                    r.bm,
                    r.bk,
                    r.wm,
                    r.wk,
                    r.stm,
                    col(&r.longest_win),
                    col(&r.longest_loss)
                );
            }
        }
        return Ok(());
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
