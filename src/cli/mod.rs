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
