//! `egdb moves` (not yet implemented).
use super::CliResult;

/// Arguments of `egdb moves`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `egdb moves`.
pub fn run(_args: Args) -> CliResult {
    Err("egdb moves is not implemented yet".into())
}
