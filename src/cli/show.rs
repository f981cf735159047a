//! `egdb show` (not yet implemented).
use super::CliResult;

/// Arguments of `egdb show`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `egdb show`.
pub fn run(_args: Args) -> CliResult {
    Err("egdb show is not implemented yet".into())
}
