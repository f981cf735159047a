//! `egdb moves FEN`: the legal moves of a position, one per line in PDN notation.
use super::CliResult;
use checkers_egdb::notation::format_move;
use checkers_egdb::Position;

/// Arguments of `egdb moves`.
#[derive(clap::Args)]
pub struct Args {
    /// Position in PDN FEN, e.g. `W:W18,24,K27:B12,K22`.
    pub fen: String,
    /// Merge capture paths with the same from, to and captured set (keep the first path).
    #[arg(long)]
    pub unique: bool,
}

/// Run `egdb moves`: print every legal move (capture paths separately unless `--unique`), one
/// per line; nothing when the side to move has no move (it has lost).
pub fn run(args: Args) -> CliResult {
    let pos = Position::from_fen(&args.fen)?;
    let moves = if args.unique {
        pos.unique_moves()
    } else {
        pos.moves()
    };
    let mut s = String::new();
    for m in &moves {
        s.push_str(&format_move(m));
        s.push('\n');
    }
    print!("{s}");
    Ok(())
}
