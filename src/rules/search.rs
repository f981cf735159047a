//! Rules-level searches under any [`Rules`]: the best of a position's successors (what
//! capture resolution takes), *threat* positions, and the don't-care rule of codecs 4 and 5
//! ([`is_dont_care`]: the positions whose value a table file need not store, because a reader
//! finds it by search). Below the file format (`table/` writes and encodes by these rules) and
//! the probe (`probe::resolve` reads tables by them); it looks nothing up itself.

use super::Rules;
use crate::board::{Position, Wld};

/// Whether the quiet position `pos` (the side to move has no capture and has a quiet move) is
/// a threat position that resolves within [`THREAT_DEPTH`] plies: what a codec-4 file stores
/// no value for ([`is_dont_care`]).
#[inline]
pub(crate) fn threat_search<R: Rules>(rules: R, pos: &Position) -> bool {
    let flipped = Position {
        side: pos.side.opponent(),
        ..*pos
    };
    rules.has_capture(&flipped) && threat_resolvable(rules, pos, THREAT_DEPTH)
}

/// Whether `pos` is a *threat* position: the side to move has no capture but has a quiet
/// move, and the side not to move has a capture (it would have one if it were to move).
#[inline]
pub fn is_threat<R: Rules>(rules: R, pos: &Position) -> bool {
    let flipped = Position {
        side: pos.side.opponent(),
        ..*pos
    };
    rules.has_capture(&flipped) && !rules.has_capture(pos) && rules.has_quiet_move(pos)
}

/// Plies of quiet moves the probe searches at most to resolve a threat position
/// ([`is_dont_care`]).
pub const THREAT_DEPTH: u32 = 2;

/// Whether the threat position `pos` resolves within `depth` plies of quiet moves: every
/// successor that is a threat position ([`is_threat`]) resolves within `depth - 1` (none may
/// at depth 1).
pub(crate) fn threat_resolvable<R: Rules>(rules: R, pos: &Position, depth: u32) -> bool {
    let mut ok = true;
    rules.for_each_successor(pos, |succ| {
        if ok && is_threat(rules, &succ) {
            ok = depth > 1 && threat_resolvable(rules, &succ, depth - 1);
        }
    });
    ok
}

/// Whether the value of `pos` is never read from its table by `crate::probe::resolve_with` under `rules`
/// (so a writer may store anything there): the side to move has a capture (resolved by capture
/// search), has no legal move (the terminal rule, [`crate::rules::Rules::no_move_value`]), or `pos` is a threat position (`is_threat`) that
/// resolves within `THREAT_DEPTH` plies: none of its successors is a threat position (a
/// one-ply search), or each that is resolves so within one ply less. Tables of codec 4
/// (docs/format.md) store no value at these positions; codec 2 stores the true value of the
/// threat positions and of the positions without a move, and the probe reads the threat
/// positions' values there (`crate::probe::RawSource::threats_dont_care`).
pub fn is_dont_care<R: Rules>(rules: R, pos: &Position) -> bool {
    // With no capture and a quiet move, `is_threat` is the capture of the side not to move:
    // `threat_search` (which `egdb verify` calls alone where it has the first two).
    rules.has_capture(pos) || !rules.has_quiet_move(pos) || threat_search(rules, pos)
}

/// The best value for the side to move of `pos` over its legal moves
/// ([`Rules::for_each_successor`]), given the value of each successor for its own side to move
/// (`value`, not called after a win is found): the best of the negated values. An error of
/// one successor does not hide a win found among the others; otherwise the first error met
/// is returned, so a missing table is never read as a draw. A position without a legal move
/// has the terminal value [`Rules::no_move_value`]. Shared by the probe's searches and the
/// generator's capture positions.
///
/// # Errors
/// The first error `value` returns, unless a win was found.
#[inline]
pub(crate) fn best_of_successors<R: Rules, E>(
    rules: R,
    pos: &Position,
    mut value: impl FnMut(&Position) -> Result<Wld, E>,
) -> Result<Wld, E> {
    let mut best = Wld::Loss;
    let mut any = false;
    let mut err = None;
    rules.for_each_successor(pos, |succ| {
        any = true;
        if best == Wld::Win {
            return;
        }
        match value(&succ) {
            Ok(v) => best = best.max(v.negate()),
            Err(e) => {
                if err.is_none() {
                    err = Some(e);
                }
            }
        }
    });
    if best == Wld::Win {
        return Ok(Wld::Win);
    }
    if !any {
        // No legal move: the terminal rule (a loss in English, a win in giveaway).
        return Ok(rules.no_move_value());
    }
    match err {
        Some(e) => Err(e),
        None => Ok(best),
    }
}
