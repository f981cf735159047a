//! `egdb stats` (not yet implemented).
use super::CliResult;

/// Arguments of `egdb stats`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `egdb stats`.
pub fn run(_args: Args) -> CliResult {
    Err("egdb stats is not implemented yet".into())
}
