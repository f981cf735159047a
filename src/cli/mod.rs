//! One module per `egdb` subcommand. Each has `Args` (clap derive) and `run(Args) -> CliResult`.
pub mod annotate;
pub mod build;
pub mod build_mpi;
pub mod check_proof;
pub mod convert;
pub mod count;
pub mod info;
pub mod line;
pub mod moves;
pub mod pack;
pub mod perft;
pub mod plan;
pub mod probe;
pub mod prove;
pub mod serve;
pub mod show;
pub mod stats;
pub mod svg;
pub mod values;
pub mod verify;

/// Result of a subcommand; the error is printed as one `egdb: error: ...` line, exit status 1.
pub type CliResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Write `bytes` to `path` atomically: a temporary file beside it, fsync, rename.
///
/// # Errors
/// Any I/O error, naming the path.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> CliResult {
    checkers_egdb::replace_file(path, bytes)
        .map(|_| ())
        .map_err(|e| format!("cannot write {}: {e}", path.display()).into())
}

/// `s` with control characters (a newline in a path, ...) escaped as in Rust's
/// `escape_debug` (`\n`, `\t`, `\u{1b}`), so that a message is always one line.
pub fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Refuse depth to win on tables of a variant: `egdb build --dtw` builds `.dtw` files for
/// English only, so "missing ... build it with --dtw" would send the user to a build that
/// refuses.
pub fn dtw_english_only(variant: checkers_egdb::rules::Variant) -> CliResult {
    if variant == checkers_egdb::rules::Variant::English {
        return Ok(());
    }
    Err(format!(
        "depth to win (DTW) is built for English tables only (egdb build --dtw); these are \
         {variant} tables: use distance to conversion (--metric dtc, egdb build --dtc)"
    )
    .into())
}

/// Default table directory (overridden by `--dir` or the `EGDB_DIR` environment variable).
pub const DEFAULT_DIR: &str = "egdb";

/// Most worker threads `--threads` (or `RAYON_NUM_THREADS`) may ask for: far beyond any useful
/// count, low enough that a typo cannot make the process spawn threads for minutes.
pub const MAX_THREADS: usize = 1024;

/// Configure the global rayon pool (`--threads`); `None` keeps rayon's default (all cores, or
/// `RAYON_NUM_THREADS`).
///
/// # Errors
/// A count of 0 or above [`MAX_THREADS`] (from `--threads` or `RAYON_NUM_THREADS`), or a pool
/// that cannot start.
pub fn init_threads(threads: Option<usize>) -> CliResult {
    check_threads(threads, std::env::var("RAYON_NUM_THREADS").ok().as_deref())?;
    if let Some(n) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| format!("cannot start {n} threads: {e}"))?;
    }
    Ok(())
}

/// The checks of [`init_threads`], given `--threads` and the value of `RAYON_NUM_THREADS`.
fn check_threads(threads: Option<usize>, env: Option<&str>) -> CliResult {
    match threads {
        Some(0) => Err("--threads must be at least 1".into()),
        Some(n) if n > MAX_THREADS => {
            Err(format!("--threads {n} is too many: at most {MAX_THREADS} are allowed").into())
        }
        Some(_) => Ok(()),
        // rayon treats 0 or an unparsable value as "all cores"; only an excessive count hangs.
        None => match env.and_then(|v| v.trim().parse::<u64>().ok()) {
            Some(n) if n > MAX_THREADS as u64 => Err(format!(
                "RAYON_NUM_THREADS={n} is too many: at most {MAX_THREADS} threads are allowed"
            )
            .into()),
            _ => Ok(()),
        },
    }
}

/// The variant a command runs under: `--rules NAME` when given, else the rules in the
/// headers of the tables in `dir` (English when there are none or it cannot be read: the
/// command then reports that itself).
///
/// # Errors
/// An unknown name; a directory holding two variants' tables, or tables of another variant
/// than `rules` names.
pub fn variant_of(
    rules: Option<&str>,
    dir: &std::path::Path,
) -> Result<checkers_egdb::rules::Variant, Box<dyn std::error::Error + Send + Sync>> {
    use checkers_egdb::rules::Variant;
    let asked = rules.map(|r| r.parse::<Variant>()).transpose()?;
    // A directory of another variant's tables is named as such, not as a damaged file.
    Ok(checkers_egdb::resolve_rules(dir, asked)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_count_limits() {
        assert!(check_threads(None, None).is_ok());
        assert!(check_threads(Some(1), None).is_ok());
        assert!(check_threads(Some(MAX_THREADS), None).is_ok());
        assert!(check_threads(Some(0), None).is_err());
        let e = check_threads(Some(MAX_THREADS + 1), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 1024"), "{e}");
        assert!(check_threads(None, Some("4")).is_ok());
        assert!(check_threads(None, Some("0")).is_ok());
        assert!(check_threads(None, Some("abc")).is_ok());
        assert!(check_threads(None, Some("99999")).is_err());
        // An explicit --threads wins over the environment, as in rayon.
        assert!(check_threads(Some(2), Some("99999")).is_ok());
    }
}
