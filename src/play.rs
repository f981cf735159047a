//! Perfect play from the tables: every legal move scored by a distance metric
//! ([`scored_moves`]), the best one ([`best_move`]) and the whole perfect line ([`line()`]).
//!
//! Two metrics ([`Metric`], values in [`Dtc`]'s variants, plies, side to move's view):
//!
//! - [`Metric::Dtc`], distance to conversion (issue 9): a *conversion* is a capture or any man
//!   move (crowning included); the winner converts as soon as possible, the loser as late as
//!   possible. Following the best moves always ends a won game: between conversions the
//!   distance falls by one every ply, and conversions (captures and man moves) can never be
//!   undone, so there are finitely many. Needs the `.dtc`
//!   files of `egdb build --dtc`.
//! - [`Metric::Dtw`], depth to win (issue 33): the winner ends the game (the loser to move with
//!   no legal move) as fast as possible, the loser as late as possible; every move counts. A
//!   line by DTW from a position of depth `n` has exactly `n` plies. Needs the `.dtw` files of
//!   `egdb build --dtw`.
//!
//! ```no_run
//! use checkers_egdb::{best_move, line, Metric, Position, Tablebase};
//! let tb = Tablebase::open("egdb").unwrap(); // built with `egdb build --dtc --dtw`
//! let p = Position::from_fen("B:WK32:BK23,K19").unwrap();
//! let m = best_move(&tb, &p, Metric::Dtw).unwrap().unwrap();
//! println!("{} {}", checkers_egdb::format_move(&m.mv), m.value); // ... win 29
//! let l = line(&tb, &p, Metric::Dtw, 200).unwrap();
//! println!("{} moves, ended by {:?}", l.moves.len(), l.end);
//! ```

use crate::board::Position;
use crate::movegen::Move;
use crate::probe::{Dtc, ProbeError, Tablebase};
use crate::rules::{Rules, Variant};
use std::cmp::Ordering;
use std::collections::HashSet;

/// The distance metric of perfect play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Metric {
    /// Distance to conversion ([`Tablebase::probe_dtc`], `.dtc` files).
    Dtc,
    /// Depth to win ([`Tablebase::probe_dtw`], `.dtw` files).
    Dtw,
}

impl Metric {
    /// `dtc` or `dtw`.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Dtc => "dtc",
            Metric::Dtw => "dtw",
        }
    }

    /// The value of `p` by this metric: [`Tablebase::probe_dtc`] or [`Tablebase::probe_dtw`].
    ///
    /// # Errors
    /// As the probe ([`ProbeError::MissingDtc`] / [`ProbeError::MissingDtw`] when the slice's
    /// distance file is absent).
    pub fn probe<R: Rules>(self, tb: &Tablebase<R>, p: &Position) -> Result<Dtc, ProbeError> {
        match self {
            Metric::Dtc => tb.probe_dtc(p),
            Metric::Dtw => tb.probe_dtw(p),
        }
    }

    /// The metric to use by default for `p`: [`Metric::Dtw`] when the depth-to-win file of
    /// `p`'s slice is there ([`Tablebase::has_dtw`]), else [`Metric::Dtc`].
    ///
    /// # Errors
    /// As [`Tablebase::has_dtw`] (a damaged file, an invalid position, too many pieces).
    pub fn default_for<R: Rules>(tb: &Tablebase<R>, p: &Position) -> Result<Metric, ProbeError> {
        Ok(if tb.has_dtw(p)? {
            Metric::Dtw
        } else {
            Metric::Dtc
        })
    }
}

impl std::fmt::Display for Metric {
    /// `dtc` or `dtw`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a [`Metric`] from text other than `dtc` or `dtw`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown metric {0:?} (expected dtc or dtw)")]
pub struct ParseMetricError(pub String);

impl std::str::FromStr for Metric {
    type Err = ParseMetricError;
    /// `dtc` or `dtw` (case-insensitive).
    fn from_str(s: &str) -> Result<Metric, ParseMetricError> {
        match s.to_ascii_lowercase().as_str() {
            "dtc" => Ok(Metric::Dtc),
            "dtw" => Ok(Metric::Dtw),
            _ => Err(ParseMetricError(s.to_string())),
        }
    }
}

/// One legal move with its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoredMove {
    /// The move (capture paths with the same result are listed once).
    pub mv: Move,
    /// The position after the move (the opponent to move).
    pub after: Position,
    /// The move's value by the metric from the MOVER's view, counted from the position
    /// before the move. By DTW: 1 + the depth of `after` with win and loss swapped (a move to
    /// a position lost in 4 plies for the opponent is `Win(5)`), for every move. By DTC the
    /// same for a move that is not a conversion; a conversion (capture or man move) is
    /// `Win(1)` / `Loss(1)` by the metric's definition, whatever distance the new slice
    /// starts with (see `after_value`). `Draw` if `after` is drawn.
    pub value: Dtc,
    /// The value and distance of `after` from the OPPONENT's view (the side to move there),
    /// as the metric's probe ([`Tablebase::probe_dtc`] / [`Tablebase::probe_dtw`]) gives it.
    /// For a DTC conversion this is where the count starts again.
    pub after_value: Dtc,
    /// Whether the move is a conversion (a capture or a man move).
    pub conversion: bool,
}

/// How good a value is for the mover: wins by smallest distance, then draws, then losses by
/// largest distance. Smaller is better.
fn badness(v: Dtc) -> (u8, i64) {
    match v {
        Dtc::Win(n) => (0, i64::from(n)),
        Dtc::Draw => (1, 0),
        Dtc::Loss(n) => (2, -i64::from(n)),
    }
}

/// The canonical order of moves with equal values: by the from square, then the landing
/// squares in order (numbers 1-32), as PDN writes them.
fn canonical(a: &Move, b: &Move) -> Ordering {
    (a.from, a.path()).cmp(&(b.from, b.path()))
}

/// The legal moves of `p` under the rules `R` of a tablebase, one per resulting position
/// ([`Variant::unique_moves`] of the variant whose rules id is `R::ID`: English and giveaway
/// the English generator, the others their path generator with flying kings, majority and
/// precedence rules).
///
/// # Errors
/// [`ProbeError::Table`] ([`crate::format::TableError::Invalid`]) for rules this crate has no
/// move generator of (a rules id no [`Variant`] has).
pub fn legal_moves<R: Rules>(p: &Position) -> Result<Vec<Move>, ProbeError> {
    match Variant::of::<R>() {
        Some(v) => Ok(v.unique_moves(p)),
        None => Err(ProbeError::Table(crate::table::TableError::Invalid(
            format!("rules id {} ({}) has no move generator", R::ID, R::NAME),
        ))),
    }
}

/// Every legal move of `p` under the tablebase's rules ([`legal_moves`]) with its value by
/// `metric`, best first: wins by smallest distance, then draws, then losses by largest
/// distance; moves of equal value in canonical order (from square, then landing squares,
/// numerically). Capture paths with the same from square, landing square, captured pieces
/// and crowning are listed once (the first path). Empty when the side to move has no legal
/// move (its value is then the rules' terminal rule, [`Rules::no_move_value`]: a loss, a win
/// in giveaway).
///
/// # Errors
/// As [`Metric::probe`] of the positions after the moves (e.g. [`ProbeError::MissingDtc`] /
/// [`ProbeError::MissingDtw`], too many pieces, an invalid position), and as
/// [`legal_moves`].
pub fn scored_moves<R: Rules>(
    tb: &Tablebase<R>,
    p: &Position,
    metric: Metric,
) -> Result<Vec<ScoredMove>, ProbeError> {
    let rules = tb.rules();
    rules.validate(p)?;
    let mut out = Vec::new();
    for mv in legal_moves::<R>(p)? {
        let after = p.apply(&mv);
        let after_value = metric.probe(tb, &after)?;
        let conversion = rules.is_conversion(p, &after);
        // By DTW every move counts one ply: no conversion resets the count.
        let resets = conversion && metric == Metric::Dtc;
        let value = match (after_value, resets) {
            (Dtc::Draw, _) => Dtc::Draw,
            (Dtc::Loss(_), true) => Dtc::Win(1),
            (Dtc::Win(_), true) => Dtc::Loss(1),
            // Saturating: a distance near `u32::MAX` is refused by the readers, never a panic.
            (Dtc::Loss(n), false) => Dtc::Win(n.saturating_add(1)),
            (Dtc::Win(n), false) => Dtc::Loss(n.saturating_add(1)),
        };
        out.push(ScoredMove {
            mv,
            after,
            value,
            after_value,
            conversion,
        });
    }
    out.sort_by(|a, b| {
        badness(a.value)
            .cmp(&badness(b.value))
            .then_with(|| canonical(&a.mv, &b.mv))
    });
    Ok(out)
}

/// The first of [`scored_moves`]: a move of perfect play by `metric` (`None` when the side
/// to move has no legal move). Its `value` equals [`Metric::probe`] of `p`.
///
/// # Errors
/// As [`scored_moves`].
pub fn best_move<R: Rules>(
    tb: &Tablebase<R>,
    p: &Position,
    metric: Metric,
) -> Result<Option<ScoredMove>, ProbeError> {
    Ok(scored_moves(tb, p, metric)?.into_iter().next())
}

/// Why a [`Line`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum LineEnd {
    /// The side to move at the end has no legal move: the game is over, decided by the rules'
    /// terminal rule ([`Rules::no_move_value`]): that side has lost (English, Russian,
    /// Brazilian, Italian, ...; every won line ends so), or in giveaway it has won (every won
    /// giveaway line ends with the winner to move and no move).
    NoMoves,
    /// The last move reached a position met before in the line (drawn lines end so).
    Repetition,
    /// The line reached the ply limit.
    MaxPlies,
}

/// A line of perfect play: best moves ([`best_move`]) for both sides from `start`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The metric the moves were chosen by.
    pub metric: Metric,
    /// The starting position.
    pub start: Position,
    /// The moves in order; each `after` is the next position.
    pub moves: Vec<ScoredMove>,
    /// Why the line stopped.
    pub end: LineEnd,
}

/// Perfect play by `metric` from `p` to the end of the game under the tablebase's rules, at
/// most `max_plies` moves: both sides play [`best_move`]. A won (or lost) start ends with a
/// side to move that has no legal move ([`LineEnd::NoMoves`]): the loser, or in giveaway the
/// winner (no move wins there); by [`Metric::Dtw`] after exactly the start's depth in plies
/// (the fastest win against the longest defence); a drawn one plays drawing moves until a position repeats
/// ([`LineEnd::Repetition`], the repeating move included) or the limit
/// ([`LineEnd::MaxPlies`]).
///
/// # Errors
/// As [`scored_moves`].
pub fn line<R: Rules>(
    tb: &Tablebase<R>,
    p: &Position,
    metric: Metric,
    max_plies: u32,
) -> Result<Line, ProbeError> {
    let mut seen = HashSet::new();
    let mut pos = *p;
    seen.insert(pos);
    let mut moves = Vec::new();
    let end = loop {
        if !tb.rules().has_move(&pos) {
            break LineEnd::NoMoves;
        }
        if moves.len() as u32 >= max_plies {
            break LineEnd::MaxPlies;
        }
        let Some(m) = best_move(tb, &pos, metric)? else {
            break LineEnd::NoMoves;
        };
        pos = m.after;
        moves.push(m);
        if !seen.insert(pos) {
            break LineEnd::Repetition;
        }
    };
    Ok(Line {
        metric,
        start: *p,
        moves,
        end,
    })
}
