//! `egdb`: command-line front end of checkers-egdb. See docs/cli.md.
mod cli;

use clap::{Parser, Subcommand};

/// Endgame databases for English checkers: build, probe, verify and analyse.
#[derive(Parser)]
#[command(name = "egdb", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count leaf nodes of the move tree (perft), one line per depth: `depth<TAB>nodes`.
    Perft(cli::perft::Args),
    /// List the legal moves of a position.
    Moves(cli::moves::Args),
    /// Draw a position on the terminal.
    Show(cli::show::Args),
    /// Count positions by piece count (and by slice).
    Count(cli::count::Args),
    /// Print the build order of slices and their dependencies.
    Plan(cli::plan::Args),
    /// Build win/loss/draw tables by retrograde analysis.
    Build(cli::build::Args),
    /// Probe positions in the built tables.
    Probe(cli::probe::Args),
    /// Per-material statistics of the built tables.
    Stats(cli::stats::Args),
    /// Verify table files: checksums, then every value against its successors.
    Verify(cli::verify::Args),
    /// List the slices present in a table directory.
    Info(cli::info::Args),
}

fn main() {
    // Die quietly on a closed pipe (`egdb stats | head`) like other Unix tools, instead of
    // panicking in println!.
    // SAFETY: setting a signal disposition to SIG_DFL before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(a) => cli::perft::run(a),
        Command::Moves(a) => cli::moves::run(a),
        Command::Show(a) => cli::show::run(a),
        Command::Count(a) => cli::count::run(a),
        Command::Plan(a) => cli::plan::run(a),
        Command::Build(a) => cli::build::run(a),
        Command::Probe(a) => cli::probe::run(a),
        Command::Stats(a) => cli::stats::run(a),
        Command::Verify(a) => cli::verify::run(a),
        Command::Info(a) => cli::info::run(a),
    };
    if let Err(e) = result {
        eprintln!("egdb: error: {e}");
        std::process::exit(1);
    }
}
