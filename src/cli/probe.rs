//! `egdb probe [--dir DIR] [--json] [FEN...]`: win/loss/draw of positions from the tables.
//!
//! FENs come from the arguments or, without any, from stdin one per line (blank lines are
//! skipped). Each input gives one line on stdout, in input order:
//! - `FEN<TAB>win|loss|draw` (canonical FEN; value for the side to move, captures resolved);
//! - `INPUT<TAB>error: MESSAGE` for a bad FEN or a failed probe (e.g. a missing table).
//!
//! With `--json` each line is a JSON object instead: `{"fen":..,"value":"win"}` or
//! `{"input":..,"error":..}`. The exit status is non-zero when any input failed, after all
//! inputs were answered.
use super::CliResult;
use checkers_egdb::probe::Tablebase;
use checkers_egdb::Position;
use std::io::{BufRead, Write};
use std::path::PathBuf;

/// Arguments of `egdb probe`.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory.
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// One JSON object per line instead of tab-separated text.
    #[arg(long)]
    pub json: bool,
    /// Print probe statistics (probes, cache hits, blocks decoded) to stderr at the end.
    #[arg(long)]
    pub stats: bool,
    /// Positions in PDN FEN, e.g. `W:WK19,K23:BK28,12`; read from stdin when none are given.
    pub fens: Vec<String>,
}

/// Run `egdb probe`.
pub fn run(args: Args) -> CliResult {
    let tb = Tablebase::open(&args.dir)?;
    let inputs: Box<dyn Iterator<Item = std::io::Result<String>>> = if args.fens.is_empty() {
        Box::new(std::io::stdin().lock().lines())
    } else {
        Box::new(args.fens.clone().into_iter().map(Ok))
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut total, mut failed) = (0u64, 0u64);
    for line in inputs {
        let line = line?;
        let input = line.trim();
        if input.is_empty() {
            continue;
        }
        total += 1;
        let result = Position::from_fen(input)
            .map_err(|e| format!("bad FEN: {e}"))
            .and_then(|p| {
                tb.probe_wld(&p)
                    .map(|v| (p.to_fen(), v))
                    .map_err(|e| e.to_string())
            });
        match (&result, args.json) {
            (Ok((fen, v)), false) => writeln!(out, "{fen}\t{v}")?,
            (Ok((fen, v)), true) => writeln!(
                out,
                "{}",
                serde_json::json!({"fen": fen, "value": v.as_str()})
            )?,
            (Err(e), false) => writeln!(out, "{input}\terror: {e}")?,
            (Err(e), true) => writeln!(out, "{}", serde_json::json!({"input": input, "error": e}))?,
        }
        if result.is_err() {
            failed += 1;
        }
        if args.fens.is_empty() {
            out.flush()?; // interactive use: answer each line at once
        }
    }
    out.flush()?;
    if args.stats {
        let s = tb.stats();
        eprintln!(
            "probes {} cache_hits {} cache_misses {} blocks_decoded {} slices_opened {}",
            s.probes, s.cache_hits, s.cache_misses, s.blocks_decoded, s.slices_opened
        );
    }
    if failed > 0 {
        return Err(format!("{failed} of {total} positions could not be probed").into());
    }
    Ok(())
}
