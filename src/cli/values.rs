//! The one adapter between the front ends (`egdb serve`, `egdb annotate`) and the tables'
//! values. With distance files (`egdb build --dtc`) it answers from
//! `Tablebase::probe_dtc` and `checkers_egdb::{scored_moves, line}`; where a distance
//! file is missing (a directory built without `--dtc`) it falls back to win/loss/draw
//! (`Tablebase::probe_wld`), distances absent (`plies: None`, shown as `-`). Where the
//! depth-to-win files are there (`egdb build --dtw`) every value also carries its DTW, moves
//! are ordered by it and lines are the fastest wins (`checkers_egdb::Metric::Dtw`).
use checkers_egdb::rules::Rules;
use checkers_egdb::{Dtc, ProbeError, Tablebase};
use checkers_egdb::{Move, Position, Wld};
use std::cmp::Ordering;

/// A position's value for the side to move, with its distance to conversion when known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eval {
    /// Win, loss or draw for the side to move.
    pub wld: Wld,
    /// Plies to conversion (DTC) for a win or a loss; `None` for draws and whenever only WLD
    /// tables are available.
    pub plies: Option<u32>,
    /// Depth to win in plies (DTW) for a win or a loss; `None` for draws and without `.dtw`
    /// files.
    pub dtw: Option<u32>,
}

impl Eval {
    /// The value seen from the other side (win <-> loss; the distance stays).
    pub fn negate(self) -> Eval {
        Eval {
            wld: self.wld.negate(),
            plies: self.plies,
            dtw: self.dtw,
        }
    }
    /// A sort key, larger is better for the side to move: wins before draws before losses,
    /// shorter wins first, longer losses first; unknown distances sort after known ones.
    fn key(self) -> (u8, i64) {
        match (self.wld, self.plies) {
            (Wld::Win, Some(n)) => (2, -(n as i64)),
            (Wld::Win, None) => (2, i64::MIN),
            (Wld::Draw, _) => (1, 0),
            (Wld::Loss, Some(n)) => (0, n as i64),
            (Wld::Loss, None) => (0, i64::MIN),
        }
    }
    /// Compare two values for the side to move (`Greater` = better).
    pub fn cmp_for_mover(self, other: Eval) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl From<Dtc> for Eval {
    fn from(d: Dtc) -> Eval {
        Eval {
            wld: d.wld(),
            plies: d.plies(),
            dtw: None,
        }
    }
}

/// The depth to win of `p` where its `.dtw` file is there.
///
/// # Errors
/// As [`Tablebase::probe_dtw`], except a missing file (`None`).
fn dtw_of<R: Rules>(tb: &Tablebase<R>, p: &Position) -> Result<Option<Dtc>, ProbeError> {
    match tb.probe_dtw(p) {
        Ok(d) => Ok(Some(d)),
        Err(ProbeError::MissingDtw { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Value of `p` for the side to move, with its DTC and DTW when the distance files are there.
///
/// # Errors
/// As [`Tablebase::probe_dtc`] and [`Tablebase::probe_dtw`], except a missing distance file
/// (then that distance is absent; win/loss/draw alone without either).
pub fn eval<R: Rules>(tb: &Tablebase<R>, p: &Position) -> Result<Eval, ProbeError> {
    let mut e = match tb.probe_dtc(p) {
        Ok(d) => d.into(),
        Err(ProbeError::MissingDtc { .. }) => eval_wld(tb, p)?,
        Err(e) => return Err(e),
    };
    e.dtw = dtw_of(tb, p)?.and_then(Dtc::plies);
    Ok(e)
}

/// Value of `p` from win/loss/draw alone (no distance).
fn eval_wld<R: Rules>(tb: &Tablebase<R>, p: &Position) -> Result<Eval, ProbeError> {
    Ok(Eval {
        wld: tb.probe_wld(p)?,
        plies: None,
        dtw: None,
    })
}

impl From<checkers_egdb::ScoredMove> for ScoredMove {
    fn from(m: checkers_egdb::ScoredMove) -> ScoredMove {
        ScoredMove {
            mv: m.mv,
            after: m.after,
            value: m.value.into(),
            after_value: m.after_value.into(),
        }
    }
}

/// One legal move with the values around it.
#[derive(Clone, Debug)]
pub struct ScoredMove {
    /// The move.
    pub mv: Move,
    /// The position after it.
    pub after: Position,
    /// Its value for the mover (the negation of `after_value`, one ply longer when known).
    pub value: Eval,
    /// The value of `after` for the opponent, who is to move there (the play API's shape;
    /// the front ends show `value`).
    #[allow(dead_code)]
    pub after_value: Eval,
}

/// Every legal move of `p`, best first for the side to move (`checkers_egdb::play`'s order and
/// distances: by DTW where the `.dtw` files are there, each move 1 + the DTW after it; else
/// by DTC, a conversion 1 ply, another move 1 + the DTC after it), each with both distances
/// where known. Without distance files: capture paths with the same effect once, by value
/// only, ties in move-generation order. Empty when the side to move has no move.
///
/// # Errors
/// As [`eval`], for any position after a move.
pub fn scored_moves<R: Rules>(
    tb: &Tablebase<R>,
    p: &Position,
) -> Result<Vec<ScoredMove>, ProbeError> {
    let mut by_dtc = match checkers_egdb::scored_moves(tb, p, checkers_egdb::Metric::Dtc) {
        Ok(v) => v.into_iter().map(ScoredMove::from).collect(),
        Err(ProbeError::MissingDtc { .. }) => scored_moves_wld(tb, p)?,
        Err(e) => return Err(e),
    };
    let by_dtw = match checkers_egdb::scored_moves(tb, p, checkers_egdb::Metric::Dtw) {
        Ok(v) => v,
        Err(ProbeError::MissingDtw { .. }) => return Ok(by_dtc),
        Err(e) => return Err(e),
    };
    // The DTW order, each move with its DTC (where known) and DTW.
    let mut out = Vec::with_capacity(by_dtw.len());
    for w in by_dtw {
        let Some(k) = by_dtc.iter().position(|c| c.mv == w.mv) else {
            continue;
        };
        let mut m = by_dtc.swap_remove(k);
        m.value.dtw = w.value.plies();
        m.after_value.dtw = w.after_value.plies();
        out.push(m);
    }
    Ok(out)
}

/// [`scored_moves`] from win/loss/draw alone.
fn scored_moves_wld<R: Rules>(
    tb: &Tablebase<R>,
    p: &Position,
) -> Result<Vec<ScoredMove>, ProbeError> {
    let mut out = Vec::new();
    for mv in checkers_egdb::legal_moves::<R>(p)? {
        let after = p.apply(&mv);
        let after_value = eval_wld(tb, &after)?;
        let value = Eval {
            wld: after_value.wld.negate(),
            plies: after_value.plies.map(|n| n + 1),
            dtw: None,
        };
        out.push(ScoredMove {
            mv,
            after,
            value,
            after_value,
        });
    }
    out.sort_by(|a, b| b.value.cmp_for_mover(a.value));
    Ok(out)
}

/// Why a [`Line`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineEnd {
    /// The side to move has no legal move (it has lost).
    NoMoves,
    /// The next position was already on the line.
    Repetition,
    /// The line reached the requested length.
    MaxPlies,
}

impl LineEnd {
    /// `no_moves`, `repetition` or `max_plies`.
    pub fn as_str(self) -> &'static str {
        match self {
            LineEnd::NoMoves => "no_moves",
            LineEnd::Repetition => "repetition",
            LineEnd::MaxPlies => "max_plies",
        }
    }
}

/// A line of best moves from `start`.
#[derive(Clone, Debug)]
pub struct Line {
    /// The metric the moves were chosen by.
    pub metric: checkers_egdb::Metric,
    /// The first position.
    pub start: Position,
    /// The moves played, each the first of [`scored_moves`].
    pub moves: Vec<ScoredMove>,
    /// Why it stopped.
    pub end: LineEnd,
}

/// Play the best move by `metric` (default: DTW where the position's `.dtw` file is there,
/// the fastest line, else DTC) from `p` until the side to move has no move, a position
/// repeats, or `max_plies` moves were played: `checkers_egdb::line` (a won line ends
/// with the loser to move and no move). Each move carries the distance of its metric (`plies`
/// for DTC, `dtw` for DTW).
///
/// # Errors
/// As `checkers_egdb::line`: a missing distance file is an error
/// ([`ProbeError::MissingDtc`] / [`ProbeError::MissingDtw`]), since a line by win/loss/draw
/// alone need not make progress.
pub fn line<R: Rules>(
    tb: &Tablebase<R>,
    p: &Position,
    max_plies: usize,
    metric: Option<checkers_egdb::Metric>,
) -> Result<Line, ProbeError> {
    let metric = match metric {
        Some(m) => m,
        None => checkers_egdb::Metric::default_for(tb, p)?,
    };
    let as_dtw = |mut e: Eval| {
        if metric == checkers_egdb::Metric::Dtw {
            e.dtw = e.plies.take();
        }
        e
    };
    match checkers_egdb::line(tb, p, metric, u32::try_from(max_plies).unwrap_or(u32::MAX)) {
        Ok(l) => Ok(Line {
            metric,
            start: l.start,
            moves: l
                .moves
                .into_iter()
                .map(|m| {
                    let mut m = ScoredMove::from(m);
                    m.value = as_dtw(m.value);
                    m.after_value = as_dtw(m.after_value);
                    m
                })
                .collect(),
            end: match l.end {
                checkers_egdb::LineEnd::NoMoves => LineEnd::NoMoves,
                checkers_egdb::LineEnd::Repetition => LineEnd::Repetition,
                checkers_egdb::LineEnd::MaxPlies => LineEnd::MaxPlies,
            },
        }),
        // Without distances "best" need not make progress: a won line could end in a
        // repetition, which is no perfect line. Say what is missing instead.
        Err(e) => Err(e),
    }
}
