//! `egdb line FEN [--max-plies N] [--json]`: the perfect line from a position (both sides
//! play the best move of the distance tables) to the end of the game.
use super::moves::value_cols;
use super::CliResult;
use checkers_egdb::{format_move, line, LineEnd, Position, Tablebase};
use std::path::PathBuf;

/// Arguments of `egdb line`.
#[derive(clap::Args)]
pub struct Args {
    /// Position in PDN FEN, e.g. `B:WK32:BK23,K19`.
    pub fen: String,
    /// Stop after this many plies (a drawn line otherwise stops at the first repetition).
    #[arg(long, default_value_t = 1000)]
    pub max_plies: u32,
    /// One JSON object: start, value, moves (move, value and distance of the position after
    /// it for the side to move there, FEN) and the reason the line ended.
    #[arg(long)]
    pub json: bool,
    /// Table directory (with the `.dtc` files of `egdb build --dtc`).
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
}

fn end_text(e: LineEnd) -> &'static str {
    match e {
        LineEnd::NoMoves => "no legal move: the side to move has lost",
        LineEnd::Repetition => "repetition",
        LineEnd::MaxPlies => "ply limit reached",
    }
}

/// Run `egdb line`: the start position with its value and distance, then one line per ply
/// `N. MOVE<TAB>VALUE DTC<TAB>FEN` giving the position after the move (value and distance for
/// its side to move), then the reason the line ended.
pub fn run(args: Args) -> CliResult {
    let pos = Position::from_fen(&args.fen)?;
    let tb = Tablebase::open(&args.dir)?;
    let start = tb.probe_dtc(&pos)?;
    let l = line(&tb, &pos, args.max_plies)?;
    if args.json {
        let moves: Vec<_> = l
            .moves
            .iter()
            .map(|m| {
                serde_json::json!({
                    "move": format_move(&m.mv),
                    "conversion": m.conversion,
                    "after": m.after.to_fen(),
                    "value": m.after_value.wld().as_str(),
                    "dtc": m.after_value.plies(),
                })
            })
            .collect();
        let end = match l.end {
            LineEnd::NoMoves => "no_moves",
            LineEnd::Repetition => "repetition",
            LineEnd::MaxPlies => "max_plies",
        };
        println!(
            "{}",
            serde_json::json!({
                "start": pos.to_fen(),
                "value": start.wld().as_str(),
                "dtc": start.plies(),
                "moves": moves,
                "end": end,
            })
        );
        return Ok(());
    }
    let (v, d) = value_cols(start);
    let mut s = format!("start\t{v} {d}\t{}\n", pos.to_fen());
    for (i, m) in l.moves.iter().enumerate() {
        let (v, d) = value_cols(m.after_value);
        s.push_str(&format!(
            "{}. {}{}\t{v} {d}\t{}\n",
            i + 1,
            format_move(&m.mv),
            if m.conversion { " *" } else { "" },
            m.after.to_fen()
        ));
    }
    s.push_str(&format!("end\t{}\n", end_text(l.end)));
    print!("{s}");
    Ok(())
}
