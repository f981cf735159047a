//! `egdb moves FEN`: the legal moves of a position, one per line in PDN notation; with
//! `--values`, each with the value and distance to conversion of its result, best first.
use super::CliResult;
use checkers_egdb::{format_move, scored_moves, Dtc, Position, Tablebase};
use std::path::PathBuf;

/// Arguments of `egdb moves`.
#[derive(clap::Args)]
pub struct Args {
    /// Position in PDN FEN, e.g. `W:W18,24,K27:B12,K22`.
    pub fen: String,
    /// Merge capture paths with the same from, to and captured set (keep the first path).
    #[arg(long)]
    pub unique: bool,
    /// Score every move from the tables (needs the `.dtc` files of `egdb build --dtc`), best
    /// first: `MOVE<TAB>VALUE<TAB>DTC<TAB>AFTER<TAB>AFTER_VALUE AFTER_DTC`: the move's value and
    /// distance for the mover (a conversion counts 1), the resulting position's FEN, and its
    /// value and distance for the opponent (`-` for a draw). Capture paths with the same result are listed once.
    #[arg(long)]
    pub values: bool,
    /// One JSON object per move (with `--values`).
    #[arg(long, requires = "values")]
    pub json: bool,
    /// Table directory (with `--values`).
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
}

/// `win`, `loss` or `draw` and the distance (`-` for a draw).
pub fn value_cols(d: Dtc) -> (String, String) {
    (
        d.wld().as_str().to_string(),
        d.plies().map_or("-".into(), |n| n.to_string()),
    )
}

/// Run `egdb moves`: print every legal move (capture paths separately unless `--unique`), one
/// per line; nothing when the side to move has no move (it has lost).
pub fn run(args: Args) -> CliResult {
    let pos = Position::from_fen(&args.fen)?;
    if args.values {
        let tb = Tablebase::open(&args.dir)?;
        let mut s = String::new();
        for m in scored_moves(&tb, &pos)? {
            let (v, d) = value_cols(m.value);
            let (av, ad) = value_cols(m.after_value);
            if args.json {
                s.push_str(
                    &serde_json::json!({
                        "move": format_move(&m.mv),
                        "value": v,
                        "dtc": m.value.plies(),
                        "conversion": m.conversion,
                        "after": m.after.to_fen(),
                        "after_value": av,
                        "after_dtc": m.after_value.plies(),
                    })
                    .to_string(),
                );
            } else {
                s.push_str(&format!(
                    "{}\t{v}\t{d}\t{}\t{av} {ad}",
                    format_move(&m.mv),
                    m.after.to_fen()
                ));
            }
            s.push('\n');
        }
        print!("{s}");
        return Ok(());
    }
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
