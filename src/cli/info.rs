//! `egdb info` (not yet implemented).
use super::CliResult;

/// Arguments of `egdb info`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `egdb info`.
pub fn run(_args: Args) -> CliResult {
    Err("egdb info is not implemented yet".into())
}
