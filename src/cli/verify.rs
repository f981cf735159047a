//! `egdb verify` (not yet implemented).
use super::CliResult;

/// Arguments of `egdb verify`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `egdb verify`.
pub fn run(_args: Args) -> CliResult {
    Err("egdb verify is not implemented yet".into())
}
