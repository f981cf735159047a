//! `egdb check-proof FILE [--dir DIR]`: verify a prover certificate independently.
//!
//! The checker (`checkers_egdb::certificate`) shares no code with the search: it walks every
//! proof with the path move generator and values leaves with table probes. On success it prints
//! one line per root, in file order: `FEN<TAB>VALUE<TAB>proofs=N records=R positions=P`, where
//! VALUE is `win`, `loss` or `draw` for the side to move when the proofs settle it, else
//! `notloss` or `notwin` (a single not-lose proof); exit status 0. A rejected certificate gives
//! one `egdb: error: ...` line naming the fault and exit status 1.
use super::CliResult;
use checkers_egdb::certificate::check_file;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `egdb check-proof`.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory (must hold the tables named in the certificate header).
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Certificate file written by `egdb prove --cert`.
    pub file: PathBuf,
}

/// Run `egdb check-proof`.
pub fn run(args: Args) -> CliResult {
    let report = check_file(&args.file, &args.dir)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    // One pass over the proofs (`roots`), not one per root: a certificate of many roots is
    // printed in time linear in its size.
    for r in report.roots() {
        let text = match r.value {
            Some(v) => v.as_str(),
            // Only a not-lose proof: by the side to move or by the opponent.
            None if r.notlose_by_side => "notloss",
            None => "notwin",
        };
        writeln!(
            out,
            "{}\t{text}\tproofs={} records={} positions={}",
            r.root.to_fen(),
            r.proofs,
            r.records,
            r.positions
        )?;
    }
    out.flush()?;
    Ok(())
}
