//! `egdb build` (not yet implemented).
use super::CliResult;

/// Arguments of `egdb build`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `egdb build`.
pub fn run(_args: Args) -> CliResult {
    Err("egdb build is not implemented yet".into())
}
