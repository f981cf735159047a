//! Italian draughts (dama italiana) on this crate's board: short-range kings; men move and
//! capture forward only and may not capture kings; crowning ends the move; captures are
//! compulsory under the rules of precedence of the Italian federation (FID rules, articles
//! 5-6): the capture taking the most pieces; among those, one made by a king; then the one
//! taking the most kings; then the one meeting kings first. A side without a move loses.
//!
//! # Orientation: the one mapping of Italian squares onto ours
//! The Italian board is the mirror image of ours (a playable square in each player's
//! right-hand corner), White moves first, and its squares are numbered 1-32 from the top
//! left of the diagram (Black's back rank, squares 1-4) to the bottom right (White's back
//! rank, 29-32), left to right along each row. This crate keeps its own board for every
//! variant: the side that moves first is our Black on 1-12. Flipping the Italian diagram top
//! to bottom lands it exactly on ours: Italian square `s` in diagram row `r = (s-1)/4`,
//! `k = (s-1)%4`-th from the left, is our square `4(7-r) + k + 1`
//! ([`from_italian_square`]), Italian White is our Black and Italian Black our White. A
//! reflection maps the game onto itself (every rule is symmetric), so values and move counts
//! are unchanged by it. The same mapping serves Spanish draughts.
//!
//! Two implementations: [`Italian`] = [`Paths`] of [`ID`], the slow path generator (the
//! independent oracle of `verify` and the tests), and [`ItalianFast`] = [`crate::rules::engine::Fast`]
//! of [`ID`], the retrograde engine the tables are built with (`egdb build --rules italian`).

use super::paths::{CaptureChoice, Crowning, Game, KingRange, Paths};
use crate::board::{Bitboard, Color, Position, Wld};

/// Rules id of Italian draughts in table file headers.
pub const ID: u32 = 4;

/// The rules of Italian draughts for the path generator.
pub const GAME: Game = Game {
    id: ID,
    name: "italian",
    kings: KingRange::Short,
    men_capture_backward: false,
    men_capture_kings: false,
    crowning: Crowning::EndsMove,
    choice: CaptureChoice::Italian,
    no_move: Wld::Loss,
};

/// Italian draughts through the slow path generator (the oracle; [`crate::rules::Rules`]).
pub type Italian = Paths<ID>;

/// Our square (1-32) of Italian square `s` (1-32); see the module docs. `None` outside 1-32.
/// The mapping is its own inverse.
pub const fn from_italian_square(s: u8) -> Option<u8> {
    if s == 0 || s > 32 {
        return None;
    }
    let (r, k) = ((s - 1) / 4, (s - 1) % 4);
    Some(4 * (7 - r) + k + 1)
}

/// Our bitboard (bit i = our square i+1) of a set of Italian squares (bit i = Italian square
/// i+1).
pub const fn from_italian_bitboard(b: Bitboard) -> Bitboard {
    // Row r of the Italian diagram is row 7 - r of ours, in the same order within the row.
    let mut out = 0;
    let mut r = 0;
    while r < 8 {
        out |= ((b >> (4 * r)) & 0xF) << (4 * (7 - r));
        r += 1;
    }
    out
}

/// Our position of an Italian position given by its Italian squares: White's pieces
/// `white`, Black's `black`, the kings of both `kings` (bitboards of Italian squares), and
/// `white_to_move`. Italian White becomes our Black (see the module docs).
pub const fn from_italian(
    white: Bitboard,
    black: Bitboard,
    kings: Bitboard,
    white_to_move: bool,
) -> Position {
    Position {
        black: from_italian_bitboard(white),
        white: from_italian_bitboard(black),
        kings: from_italian_bitboard(kings),
        side: if white_to_move {
            Color::Black
        } else {
            Color::White
        },
    }
}

/// The retrograde engine of this variant (quiet moves and un-moves, the capture test;
/// captures from the path generator): what its tables are built and probed with.
pub type ItalianFast = super::engine::Fast<ID>;
