//! `egdb moves FEN`: the legal moves of a position, one per line in PDN notation; with
//! `--values`, each with the value, distance to conversion and depth to win of its result
//! (where the files are present), best first. Moves follow the rules of `--rules NAME`
//! (with `--values` by default the rules in the table files' headers; without, English).
use super::CliResult;
use checkers_egdb::format_move;
use checkers_egdb::rules::Variant;
use checkers_egdb::Position;
use checkers_egdb::{AnyTablebase, Metric, ScoredMove};
use checkers_egdb::{Dtc, ProbeError};
use std::path::PathBuf;

/// Arguments of `egdb moves`.
#[derive(clap::Args)]
pub struct Args {
    /// Position in PDN FEN, e.g. `W:W18,24,K27:B12,K22`.
    pub fen: String,
    /// Merge capture paths with the same from, to and captured set (keep the first path).
    #[arg(long)]
    pub unique: bool,
    /// Score every move from the tables (needs the `.dtc` files of `egdb build --dtc` or the
    /// `.dtw` files of `egdb build --dtw`), best first:
    /// `MOVE<TAB>VALUE<TAB>DTC<TAB>AFTER<TAB>AFTER_VALUE AFTER_DTC`: the move's value and
    /// distance for the mover (a conversion counts 1), the resulting position's FEN, and its
    /// value and distance for the opponent (`-` for a draw, or without `.dtc` files); where the
    /// `.dtw` files are present, one more column `DTW AFTER_DTW`: the move's depth to win for
    /// the mover (1 + the depth after it) and the depth after it for the opponent. Capture
    /// paths with the same result are listed once.
    #[arg(long)]
    pub values: bool,
    /// The metric the moves are ordered by (with `--values`): `dtw` or `dtc`. Default: `dtw`
    /// where the `.dtw` files are present, else `dtc`.
    #[arg(long, requires = "values", value_parser = super::line::parse_metric)]
    pub metric: Option<Metric>,
    /// One JSON object per move (with `--values`).
    #[arg(long, requires = "values")]
    pub json: bool,
    /// Table directory (with `--values`).
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// The game whose moves are listed (english, russian, brazilian, italian, giveaway, pool,
    /// spanish, czech): flying kings, backward captures of men, majority and precedence
    /// rules, crowning during a capture as the variant has them. Default: with `--values` the
    /// rules in the table files' headers (given and not those, refused naming both);
    /// without, english.
    #[arg(long)]
    pub rules: Option<String>,
}

/// `win`, `loss` or `draw` and the distance (`-` for a draw).
pub fn value_cols(d: Dtc) -> (String, String) {
    (
        d.wld().as_str().to_string(),
        d.plies().map_or("-".into(), |n| n.to_string()),
    )
}

/// The moves scored by `metric`, `None` when the metric's files are absent for them.
fn scored_or_absent(
    tb: &AnyTablebase,
    pos: &Position,
    metric: Metric,
) -> Result<Option<Vec<ScoredMove>>, ProbeError> {
    match tb.scored_moves(pos, metric) {
        Ok(v) => Ok(Some(v)),
        Err(ProbeError::MissingDtc { .. } | ProbeError::MissingDtw { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `egdb moves --values`: every move scored by both metrics where their files are present,
/// in the order of `metric` (default DTW where present).
fn run_values(args: &Args, pos: &Position, rules: Option<Variant>) -> CliResult {
    let tb = AnyTablebase::open(&args.dir, rules)?;
    tb.validate(pos)?;
    let dtc = scored_or_absent(&tb, pos, Metric::Dtc)?;
    // Present: the position's own .dtw file is there (a drawn position needs none to probe).
    // Asked for by name: every move's DTW, each file needed must be there (a drawn position
    // whose moves all draw needs none, and gets its `-` column all the same).
    let dtw = if args.metric == Some(Metric::Dtw) {
        super::dtw_english_only(tb.variant())?;
        Some(tb.scored_moves(pos, Metric::Dtw)?)
    } else if tb.has_dtw(pos)? {
        scored_or_absent(&tb, pos, Metric::Dtw)?
    } else {
        None
    };
    let metric = args.metric.unwrap_or(if dtw.is_some() {
        Metric::Dtw
    } else {
        Metric::Dtc
    });
    // The order: the chosen metric's, whose files must be there (its probe's error says
    // which file to build).
    let order = match (metric, &dtc, &dtw) {
        (Metric::Dtc, Some(v), _) | (Metric::Dtw, _, Some(v)) => v.clone(),
        _ => tb.scored_moves(pos, metric)?,
    };
    let find = |v: &Option<Vec<ScoredMove>>, m: &ScoredMove| -> Option<ScoredMove> {
        v.as_ref()?.iter().find(|x| x.mv == m.mv).cloned()
    };
    let mut s = String::new();
    for m in &order {
        let c = find(&dtc, m);
        let w = find(&dtw, m);
        let v = m.value.wld().as_str();
        let av = m.after_value.wld().as_str();
        let dist = |x: &Option<ScoredMove>, after: bool| {
            x.as_ref().and_then(|x| {
                if after {
                    x.after_value.plies()
                } else {
                    x.value.plies()
                }
            })
        };
        let col = |d: Option<u32>| d.map_or("-".to_string(), |n| n.to_string());
        if args.json {
            let mut o = serde_json::json!({
                "move": format_move(&m.mv),
                "value": v,
                "conversion": m.conversion,
                "after": m.after.to_fen(),
                "after_value": av,
            });
            if dtc.is_some() {
                o["dtc"] = dist(&c, false).into();
                o["after_dtc"] = dist(&c, true).into();
            }
            if dtw.is_some() {
                o["dtw"] = dist(&w, false).into();
                o["after_dtw"] = dist(&w, true).into();
            }
            s.push_str(&o.to_string());
        } else {
            s.push_str(&format!(
                "{}\t{v}\t{}\t{}\t{av} {}",
                format_move(&m.mv),
                col(dist(&c, false)),
                m.after.to_fen(),
                col(dist(&c, true)),
            ));
            if dtw.is_some() {
                s.push_str(&format!(
                    "\t{} {}",
                    col(dist(&w, false)),
                    col(dist(&w, true))
                ));
            }
        }
        s.push('\n');
    }
    print!("{s}");
    Ok(())
}

/// Run `egdb moves`: print every legal move under the rules (capture paths separately unless
/// `--unique`), one per line; nothing when the side to move has no move (the game is over:
/// it has lost, or won in giveaway).
pub fn run(args: Args) -> CliResult {
    let pos = Position::from_fen(&args.fen)?;
    let rules = args
        .rules
        .as_deref()
        .map(str::parse::<Variant>)
        .transpose()?;
    if args.values {
        return run_values(&args, &pos, rules);
    }
    let v = rules.unwrap_or_default();
    v.validate(&pos)?;
    let moves = if args.unique {
        v.unique_moves(&pos)
    } else {
        v.moves(&pos)
    };
    let mut s = String::new();
    for m in &moves {
        s.push_str(&format_move(m));
        s.push('\n');
    }
    print!("{s}");
    Ok(())
}
