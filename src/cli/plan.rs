//! `egdb plan` (not yet implemented).
use super::CliResult;

/// Arguments of `egdb plan`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `egdb plan`.
pub fn run(_args: Args) -> CliResult {
    Err("egdb plan is not implemented yet".into())
}
