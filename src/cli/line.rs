//! `egdb line FEN [--metric dtw|dtc] [--max-plies N] [--json]`: the perfect line from a position
//! (both sides play the best move of the distance tables by the metric) to the end of the game.
use super::moves::value_cols;
use super::CliResult;
use checkers_egdb::format_move;
use checkers_egdb::rules::Variant;
use checkers_egdb::Position;
use checkers_egdb::{AnyTablebase, LineEnd, Metric};
use std::path::PathBuf;

/// Arguments of `egdb line`.
#[derive(clap::Args)]
pub struct Args {
    /// Position in PDN FEN, e.g. `B:WK32:BK23,K19`.
    pub fen: String,
    /// The metric both sides play by: `dtw` (depth to win: the fastest win against the
    /// longest defence, to the end of the game; needs the `.dtw` files of `egdb build --dtw`)
    /// or `dtc` (distance to conversion; the `.dtc` files of `egdb build --dtc`). Default:
    /// `dtw` where the position's `.dtw` file is present, else `dtc`.
    #[arg(long, value_parser = parse_metric)]
    pub metric: Option<Metric>,
    /// Stop after this many plies (a drawn line otherwise stops at the first repetition).
    #[arg(long, default_value_t = 1000)]
    pub max_plies: u32,
    /// One JSON object: start, metric, value, moves (move, value and distance of the position
    /// after it for the side to move there, FEN) and the reason the line ended.
    #[arg(long)]
    pub json: bool,
    /// Table directory (with the `.dtw` or `.dtc` files).
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// The game (english, russian, brazilian, italian, giveaway, pool, spanish, czech): moves
    /// and the end of the game follow its rules (in giveaway the side left without a move
    /// wins). Default: the rules in the table files' headers; given and not those, refused
    /// naming both.
    #[arg(long)]
    pub rules: Option<String>,
}

/// clap's parser of `--metric`: `dtw` or `dtc`.
pub fn parse_metric(s: &str) -> Result<Metric, String> {
    s.parse()
        .map_err(|e: checkers_egdb::ParseMetricError| e.to_string())
}

fn end_text(e: LineEnd, v: Variant) -> &'static str {
    match e {
        LineEnd::NoMoves if v.no_move_value() == checkers_egdb::Wld::Win => {
            "no legal move: the side to move has won"
        }
        LineEnd::NoMoves => "no legal move: the side to move has lost",
        LineEnd::Repetition => "repetition",
        LineEnd::MaxPlies => "ply limit reached",
    }
}

/// Run `egdb line`: `metric<TAB>dtw|dtc`, the start position with its value and distance,
/// then one line per ply
/// `N. MOVE<TAB>VALUE D<TAB>FEN` giving the position after the move (value and distance by the
/// metric for its side to move), then the reason the line ended.
pub fn run(args: Args) -> CliResult {
    let pos = Position::from_fen(&args.fen)?;
    let rules = args
        .rules
        .as_deref()
        .map(str::parse::<Variant>)
        .transpose()?;
    let tb = AnyTablebase::open(&args.dir, rules)?;
    tb.validate(&pos)?;
    let metric = match args.metric {
        Some(m) => m,
        None => tb.default_metric(&pos)?,
    };
    if metric == Metric::Dtw {
        super::dtw_english_only(tb.variant())?;
    }
    let start = tb.probe_metric(&pos, metric)?;
    let l = tb.line(&pos, metric, args.max_plies)?;
    let key = metric.as_str();
    if args.json {
        let moves: Vec<_> = l
            .moves
            .iter()
            .map(|m| {
                let mut o = serde_json::json!({
                    "move": format_move(&m.mv),
                    "conversion": m.conversion,
                    "after": m.after.to_fen(),
                    "value": m.after_value.wld().as_str(),
                });
                o[key] = m.after_value.plies().into();
                o
            })
            .collect();
        let end = match l.end {
            LineEnd::NoMoves => "no_moves",
            LineEnd::Repetition => "repetition",
            LineEnd::MaxPlies => "max_plies",
        };
        let mut o = serde_json::json!({
            "start": pos.to_fen(),
            "rules": tb.variant().name(),
            "metric": key,
            "value": start.wld().as_str(),
            "moves": moves,
            "end": end,
        });
        o[key] = start.plies().into();
        println!("{o}");
        return Ok(());
    }
    let (v, d) = value_cols(start);
    let mut s = format!("metric\t{key}\nstart\t{v} {d}\t{}\n", pos.to_fen());
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
    s.push_str(&format!("end\t{}\n", end_text(l.end, tb.variant())));
    print!("{s}");
    Ok(())
}
