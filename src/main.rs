//! `egdb`: command-line front end of checkers-egdb. See docs/cli.md.
//!
//! Errors are one `egdb: error: ...` line on stderr. Exit status: 0 success, 1 runtime failure
//! (bad FEN or depth, missing table, I/O), 2 bad command line (clap's error, cut to one line).
mod cli;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};
use std::io::Write;

/// Endgame databases for English checkers and the other 8x8 draughts: build, probe, verify and analyse.
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
    /// Print the perfect line from a position (needs the distance files of build --dtc).
    Line(cli::line::Args),
    /// Per-material statistics of the built tables.
    Stats(cli::stats::Args),
    /// Verify table files: checksums, then every value against its successors.
    Verify(cli::verify::Args),
    /// List the slices present in a table directory.
    Info(cli::info::Args),
    /// Write a table directory again in another value codec (a copy for the distance files).
    Convert(cli::convert::Args),
    /// Gather a table directory's files into one file per material and metric (in place).
    Pack(cli::pack::Args),
    /// Write a packed table directory's slice files back, byte for byte (in place).
    Unpack(cli::pack::Args),
    /// Settle positions beyond the tables by proof-number search (optionally with certificates).
    Prove(cli::prove::Args),
    /// Verify a certificate written by `egdb prove --cert`.
    CheckProof(cli::check_proof::Args),
    /// Serve the endgame explorer (a JSON API and one page) over HTTP.
    Serve(cli::serve::Args),
    /// Read PDN games and mark the moves that change the tables' value.
    Annotate(cli::annotate::Args),
}

fn main() {
    // Die quietly on a closed pipe (`egdb stats | head`) like other Unix tools, instead of
    // panicking in println!.
    // SAFETY: setting a signal disposition to SIG_DFL before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // println! panics when standard output cannot be written (a full disk, /dev/full): report
    // that as one error line and exit status 1 instead of a panic trace.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to") {
            // If even stderr fails there is nobody to tell.
            let _ = writeln!(std::io::stderr(), "egdb: error: cannot write output: {msg}");
            std::process::exit(1);
        }
        default_hook(info);
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match e.kind() {
            // --help and --version: clap prints them on stdout and exits 0.
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
            _ => {
                eprintln!("egdb: error: {}", cli::one_line(&usage_error_line(&e)));
                std::process::exit(2);
            }
        },
    };
    let result = match cli.command {
        Command::Perft(a) => cli::perft::run(a),
        Command::Moves(a) => cli::moves::run(a),
        Command::Show(a) => cli::show::run(a),
        Command::Count(a) => cli::count::run(a),
        Command::Plan(a) => cli::plan::run(a),
        Command::Build(a) => cli::build::run(a),
        Command::Probe(a) => cli::probe::run(a),
        Command::Line(a) => cli::line::run(a),
        Command::Stats(a) => cli::stats::run(a),
        Command::Verify(a) => cli::verify::run(a),
        Command::Info(a) => cli::info::run(a),
        Command::Convert(a) => cli::convert::run(a),
        Command::Pack(a) => cli::pack::run_pack(a),
        Command::Unpack(a) => cli::pack::run_unpack(a),
        Command::Prove(a) => cli::prove::run(a),
        Command::CheckProof(a) => cli::check_proof::run(a),
        Command::Serve(a) => cli::serve::run(a),
        Command::Annotate(a) => cli::annotate::run(a),
    };
    if let Err(e) = result {
        // A path or an input echoed in the message may hold a newline: escape it, one line.
        eprintln!("egdb: error: {}", cli::one_line(&e.to_string()));
        std::process::exit(1);
    }
}

/// A clap error as one line, without clap's `error: ` prefix, usage block and tips, followed by
/// where to read more: e.g. `unexpected argument '--x' found (see egdb probe --help)`.
fn usage_error_line(e: &clap::Error) -> String {
    let cmd = Cli::command();
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|n| n != "help")
        .collect();
    // The subcommand the user named, if any, for the pointer to its help.
    let sub = std::env::args_os()
        .nth(1)
        .and_then(|a| a.into_string().ok())
        .filter(|a| names.contains(a));
    let see = match &sub {
        Some(s) => format!("see egdb {s} --help"),
        None => "see egdb --help".to_string(),
    };
    // `EGDB_DIR=` (set but empty) reads to clap as `--dir` with no value; say what happened.
    let dir_given = std::env::args_os().any(|a| a.to_string_lossy().starts_with("--dir"));
    if e.kind() == ErrorKind::InvalidValue
        && e.to_string().contains("'--dir")
        && !dir_given
        && std::env::var_os("EGDB_DIR").is_some_and(|v| v.is_empty())
    {
        return format!(
            "EGDB_DIR is set but empty: set it to the table directory or unset it ({see})"
        );
    }
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        return match sub {
            Some(_) => format!("missing arguments ({see})"),
            None => format!(
                "no command given: expected one of {} ({see})",
                names.join(", ")
            ),
        };
    }
    let text = e.render().to_string();
    let mut lines = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("bad command line");
    let mut msg = first
        .strip_prefix("error: ")
        .unwrap_or(first)
        .trim()
        .to_string();
    // "the following required arguments were not provided:" lists them on indented lines.
    if msg.ends_with(':') {
        let items: Vec<&str> = lines
            .take_while(|l| l.starts_with(' ') || l.starts_with('\t'))
            .map(str::trim)
            .collect();
        if !items.is_empty() {
            msg = format!("{msg} {}", items.join(", "));
        }
    }
    format!("{msg} ({see})")
}
