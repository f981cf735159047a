//! `egdb perft [--rules NAME] [--fen FEN] [--unique] [--threads N] DEPTH`: leaf counts of the
//! move tree.
use super::CliResult;
use checkers_egdb::rules::{paths, Variant};
use checkers_egdb::{perft_parallel, Position};

/// Arguments of `egdb perft`.
#[derive(clap::Args)]
pub struct Args {
    /// Maximum depth in plies (1-30); one line `depth<TAB>nodes` is printed per depth 1..=DEPTH.
    // A string parsed by `run`, so that a bad value gives one `egdb: error:` line naming it.
    #[arg(allow_hyphen_values = true)]
    pub depth: String,
    /// Start position in PDN FEN (default: the initial position `B:W21-32:B1-12`).
    #[arg(long)]
    pub fen: Option<String>,
    /// Merge capture paths with the same from, to and captured set (the database's move count).
    #[arg(long)]
    pub unique: bool,
    /// Print only the line for DEPTH (skip the shallower depths), e.g. for timing.
    #[arg(long)]
    pub only: bool,
    /// Worker threads, 1-1024 (default: all cores, or RAYON_NUM_THREADS).
    #[arg(long)]
    pub threads: Option<usize>,
    /// The rules: english (default), russian, brazilian, italian, giveaway, pool, spanish,
    /// czech. English and giveaway (the same moves) count with the fast engine, the others
    /// with the slow path generator (`rules::paths`). Positions are on this crate's board
    /// whatever the variant (the side that moves first is Black on 1-12).
    #[arg(long, default_value = "english")]
    pub rules: String,
}

/// Run `egdb perft`: print `depth<TAB>nodes` for every depth 1..=DEPTH.
///
/// # Errors
/// A depth that is not an integer 1-30, a bad FEN, `--threads 0`, unknown `--rules`.
pub fn run(args: Args) -> CliResult {
    let depth: u32 = match args.depth.trim().parse() {
        Ok(d) if (1..=30).contains(&d) => d,
        _ => return Err(format!("bad depth {:?}: expected an integer 1-30", args.depth).into()),
    };
    let variant: Variant = args.rules.parse()?;
    let pos = match &args.fen {
        Some(f) => Position::from_fen(f)?,
        None => Position::START,
    };
    super::init_threads(args.threads)?;
    use std::io::Write;
    let stdout = std::io::stdout();
    let first = if args.only { depth } else { 1 };
    for d in first..=depth {
        let n = match variant {
            // Giveaway has English moves: only the end of the game differs.
            Variant::English | Variant::Giveaway => perft_parallel(&pos, d, args.unique),
            v => paths::perft(&v.game(), &pos, d, args.unique),
        };
        let mut out = stdout.lock();
        writeln!(out, "{d}\t{n}")?;
        out.flush()?;
    }
    Ok(())
}
