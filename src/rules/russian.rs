//! Russian draughts (shashki) on this crate's board: flying kings, men capture backward as
//! well as forward, any capture may be chosen (no majority rule), a man reaching the crowning
//! row during a capture is crowned at once and goes on capturing as a king, jumped pieces are
//! removed only when the move ends (the "Turkish strike"), a side without a move loses.
//! White moves first in Russian notation: it is this crate's Black
//! ([`crate::rules::paths`], "Orientation").
//!
//! Two implementations: [`Russian`] = [`Paths`] of [`ID`], the slow path generator (the
//! independent oracle of `verify` and the tests), and [`RussianFast`] =
//! [`crate::rules::engine::Fast`] of [`ID`], the retrograde engine the tables are built with
//! (`egdb build --rules russian`; flying kings' un-moves slide back along whole diagonals).

use super::paths::{CaptureChoice, Crowning, Game, KingRange, Paths};
use crate::board::Wld;

/// Rules id of Russian draughts in table file headers.
pub const ID: u32 = 2;

/// The rules of Russian draughts for the path generator.
pub const GAME: Game = Game {
    id: ID,
    name: "russian",
    kings: KingRange::Flying,
    men_capture_backward: true,
    men_capture_kings: true,
    crowning: Crowning::ContinuesAsKing,
    choice: CaptureChoice::Free,
    no_move: Wld::Loss,
};

/// Russian draughts through the slow path generator (the oracle; [`crate::rules::Rules`]).
pub type Russian = Paths<ID>;

/// The retrograde engine of this variant (quiet moves and un-moves, the capture test;
/// captures from the path generator): what its tables are built and probed with.
pub type RussianFast = super::engine::Fast<ID>;
