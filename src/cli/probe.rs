//! `egdb probe` (not yet implemented).
use super::CliResult;

/// Arguments of `egdb probe`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `egdb probe`.
pub fn run(_args: Args) -> CliResult {
    Err("egdb probe is not implemented yet".into())
}
