//! `egdb count` (not yet implemented).
use super::CliResult;

/// Arguments of `egdb count`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `egdb count`.
pub fn run(_args: Args) -> CliResult {
    Err("egdb count is not implemented yet".into())
}
