//! One module per `egdb` subcommand. Each has `Args` (clap derive) and `run(Args) -> CliResult`.
pub mod build;
pub mod count;
pub mod info;
pub mod moves;
pub mod perft;
pub mod plan;
pub mod probe;
pub mod show;
pub mod stats;
pub mod verify;

/// Result of a subcommand; the error is printed as one `egdb: error: ...` line, exit status 1.
pub type CliResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Default table directory (overridden by `--dir` or the `EGDB_DIR` environment variable).
pub const DEFAULT_DIR: &str = "egdb";

/// Configure the global rayon pool (`--threads`); `None` keeps rayon's default (all cores).
pub fn init_threads(threads: Option<usize>) -> CliResult {
    if let Some(n) = threads {
        if n == 0 {
            return Err("--threads must be at least 1".into());
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| format!("cannot start {n} threads: {e}"))?;
    }
    Ok(())
}
