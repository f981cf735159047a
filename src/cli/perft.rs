//! `egdb perft` (not yet implemented).
use super::CliResult;

/// Arguments of `egdb perft`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `egdb perft`.
pub fn run(_args: Args) -> CliResult {
    Err("egdb perft is not implemented yet".into())
}
