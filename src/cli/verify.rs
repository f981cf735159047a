//! `egdb verify`: checksums, then every value re-derived from its successors. See docs/cli.md.
use super::CliResult;
use checkers_egdb::{verify_dir_opts, VerifyError, VerifyOptions};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Arguments of `egdb verify`.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory.
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress output.
    #[arg(long)]
    pub quiet: bool,
    /// Allow slices of the largest piece count to be absent when no slice present reads them
    /// (a build in progress, `build --slice S --with-deps`, `prove --build`): verify those
    /// present.
    #[arg(long)]
    pub partial: bool,
    /// Journal file: each slice verified is recorded there as it finishes; a later run with
    /// the same journal skips the slices recorded (while every table file is unchanged) and
    /// resumes. Checksums of all files are checked every run.
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Memory budget for decoded tables, like `512M` or `16G` (K, M, G, T; powers of 1024).
    /// Slices are released after their last reader; above the budget dependencies are read
    /// from the compressed files through a block cache (slower, same outcome). Default: half
    /// the physical memory.
    #[arg(long, value_name = "SIZE", value_parser = checkers_egdb::planning::parse_size)]
    pub memory: Option<u64>,
    /// The game the tables must be of (english, russian, brazilian, italian, giveaway, pool,
    /// spanish, czech); default: the rules in the files' headers (a directory holds one
    /// variant). Values are re-derived with that variant's slow move generator.
    #[arg(long)]
    pub rules: Option<String>,
    /// Verify only the slices of these piece counts, like `8` or `5-8`: the others are
    /// checked for presence, header and checksum and read as dependencies, not re-derived
    /// (for a piece count added to tables verified before, e.g. whose files match a
    /// published manifest). Default: every slice.
    #[arg(long, value_name = "N|LOW-HIGH", value_parser = parse_pieces)]
    pub pieces: Option<std::ops::RangeInclusive<u32>>,
}

/// `--pieces`: `N` or `LOW-HIGH`, piece counts 1 to 32.
fn parse_pieces(s: &str) -> Result<std::ops::RangeInclusive<u32>, String> {
    let num = |t: &str| -> Result<u32, String> {
        match t.trim().parse::<u32>() {
            Ok(n) if (1..=32).contains(&n) => Ok(n),
            _ => Err(format!(
                "`{t}` is not a piece count (1 to 32); give N or LOW-HIGH, like 8 or 5-8"
            )),
        }
    };
    let (lo, hi) = match s.split_once('-') {
        Some((a, b)) => (num(a)?, num(b)?),
        None => (num(s)?, num(s)?),
    };
    if lo > hi {
        return Err(format!(
            "{s}: the low piece count is above the high one (like 5-8)"
        ));
    }
    Ok(lo..=hi)
}

/// Run `egdb verify`; exits non-zero naming every bad file (slice and position).
pub fn run(args: Args) -> CliResult {
    super::init_threads(args.threads)?;
    let bar = indicatif::ProgressBar::new(0);
    if args.quiet || !std::io::stderr().is_terminal() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg:>10} [{bar:30}] {percent:>3}% {per_sec}")
            .expect("static template")
            .progress_chars("=> "),
    );
    let rules = match &args.rules {
        Some(r) => Some(r.parse::<checkers_egdb::rules::Variant>()?),
        None => None,
    };
    let (notices, notes) = std::sync::mpsc::channel::<String>();
    let opts = VerifyOptions {
        notices: Some(notices),
        rules,
        partial: args.partial,
        pieces: args.pieces.clone(),
        journal: args.journal.clone(),
        memory: Some(
            args.memory
                .unwrap_or_else(checkers_egdb::planning::default_budget),
        ),
    };
    let rep = verify_dir_opts(&args.dir, &opts, &|s, k, n| {
        if bar.length() != Some(n) || bar.message() != s.to_string() {
            bar.set_length(n);
            bar.set_position(0);
            bar.set_message(s.to_string());
        }
        bar.inc(k);
    });
    bar.finish_and_clear();
    // Printed whatever the outcome (a failed run has no report to carry them); every notice
    // was sent before `verify_dir_opts` returned.
    for note in notes.try_iter() {
        eprintln!("egdb: {note}");
    }
    let rep = match rep {
        Ok(r) => r,
        Err(e @ VerifyError::Several(_)) => {
            // One line per bad file: first those at fault themselves, then those whose
            // failure may only be a consequence of another's (`failed_dependency`); then the
            // error line.
            let (readers, bad): (Vec<_>, Vec<_>) = e
                .failures()
                .into_iter()
                .partition(|f| f.failed_dependency().is_some());
            for f in &bad {
                eprintln!("egdb: bad table: {}", super::one_line(&f.to_string()));
            }
            for f in &readers {
                eprintln!("egdb: not verified: {}", super::one_line(&f.to_string()));
            }
            let mut msg = format!(
                "{} failed verification",
                count(bad.len() as u64, "table file")
            );
            if !readers.is_empty() {
                msg += &format!(
                    "; {} more read a failed, damaged or missing table file and could not be verified",
                    readers.len()
                );
            }
            if readers.is_empty() {
                msg += " (listed above)";
            } else {
                msg += " (listed above; verify again once the first are right)";
            }
            return Err(msg.into());
        }
        Err(e) => return Err(e.into()),
    };
    if rep.dtc_slices > 0 || rep.dtc_absent > 0 {
        println!(
            "ok: {}, {} positions: every distance re-derived{}",
            count(rep.dtc_slices, "distance file"),
            rep.dtc_positions,
            match (rep.dtc_absent, rep.dtc_unchecked) {
                (0, _) => String::new(),
                (a, 0) => format!(
                    "; {} of the largest piece count absent (--partial)",
                    count(a, "distance file")
                ),
                (a, u) => format!(
                    "; {} of the largest piece count absent, {u} more left unchecked as their partner's is absent (--partial)",
                    count(a, "distance file")
                ),
            }
        );
    }
    if rep.dtw_slices > 0 || rep.dtw_absent > 0 {
        println!(
            "ok: {}, {} positions: every depth to win re-derived{}",
            count(rep.dtw_slices, "depth-to-win file"),
            rep.dtw_positions,
            match (rep.dtw_absent, rep.dtw_unchecked) {
                (0, _) => String::new(),
                (a, u) => format!(
                    "; {} of the largest piece count absent, {u} more left unchecked as their partner's is absent (--partial)",
                    count(a, "depth-to-win file")
                ),
            }
        );
    }
    if rep.slices == 0 && rep.dtc_slices == 0 && rep.dtw_slices == 0 && rep.earlier_slices > 0 {
        println!(
            "ok: nothing left to verify: every file{} was verified by an earlier run (checksums checked again in {:.2} s)",
            if rep.unselected_slices > 0 {
                " of the piece counts selected"
            } else {
                ""
            },
            rep.seconds
        );
    } else if rep.slices == 0 && rep.dtc_slices > 0 {
        // Only distance files were left (their values were verified by an earlier run).
        println!(
            "ok: the values of every file were verified by an earlier run; distances re-derived in {:.2} s ({:.0} positions/s)",
            rep.seconds,
            (rep.dtc_positions + rep.dtw_positions) as f64 / rep.seconds.max(1e-9)
        );
    } else if rep.slices == 0 && rep.dtw_slices > 0 {
        // Only depth-to-win files were left.
        println!(
            "ok: the values of every file were verified by an earlier run; depths to win re-derived in {:.2} s ({:.0} positions/s)",
            rep.seconds,
            rep.dtw_positions as f64 / rep.seconds.max(1e-9)
        );
    } else {
        println!(
            "ok: {}, {} positions verified in {:.2} s ({:.0} positions/s){}",
            count(rep.slices, "slice"),
            rep.positions,
            rep.seconds,
            rep.positions as f64 / rep.seconds.max(1e-9),
            match (rep.absent, rep.being_written) {
                (0, 0) => String::new(),
                (a, 0) => format!(
                    "; {} of the largest piece count absent (--partial)",
                    count(a, "slice")
                ),
                (a, w) => format!(
                    "; {} of the largest piece count absent, {} of a unit being written (its partner absent) left for a later run (--partial)",
                    count(a, "slice"),
                    count(w, "slice")
                ),
            }
        );
    }
    let st = &rep.store;
    println!(
        "dependencies: budget {}: peak {} decoded, {} slices loaded, {} released, {} evicted, {} lookups through the block cache",
        opts.memory.map_or("unbounded".into(), checkers_egdb::planning::format_size),
        checkers_egdb::planning::format_size(st.peak_resident_bytes),
        st.slices_loaded,
        st.slices_released,
        st.slices_evicted,
        st.spilled_lookups
    );
    if rep.unselected_slices > 0 {
        let r = args.pieces.clone().unwrap_or(0..=0);
        println!(
            "not verified: {}, {} positions of other piece counts than {} (--pieces): checksums checked, values read as dependencies",
            count(rep.unselected_slices, "slice"),
            rep.unselected_positions,
            if r.start() == r.end() {
                r.start().to_string()
            } else {
                format!("{}-{}", r.start(), r.end())
            }
        );
    }
    if rep.earlier_slices > 0 {
        println!(
            "ok: {} files, {} positions verified by earlier runs (journal {})",
            rep.earlier_slices,
            rep.earlier_positions,
            args.journal
                .as_deref()
                .unwrap_or(std::path::Path::new(""))
                .display()
        );
    }
    // The rules the tables were verified under (those of their headers, or --rules, which
    // the verification has checked against them).
    println!(
        "rules: {}",
        checkers_egdb::resolve_rules(&args.dir, opts.rules)?
    );
    Ok(())
}

/// `n` and `noun`, plural unless `n` is 1 ("1 slice", "2 slices").
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_are_plural_unless_one() {
        assert_eq!(super::count(0, "slice"), "0 slices");
        assert_eq!(super::count(1, "distance file"), "1 distance file");
        assert_eq!(super::count(2, "table file"), "2 table files");
    }
}
