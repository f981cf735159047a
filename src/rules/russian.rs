//! Russian draughts (shashki) on this crate's board: flying kings, men capture backward as
//! well as forward, any capture may be chosen (no majority rule), a man reaching the crowning
//! row during a capture is crowned at once and goes on capturing as a king, jumped pieces are
//! removed only when the move ends (the "Turkish strike"), a side without a move loses.
//! White moves first in Russian notation: it is this crate's Black
//! ([`crate::rules::paths`], "Orientation").
//!
//! Only the slow path generator plays it so far ([`Russian`] = [`Paths`] of [`ID`]); the fast
//! engine and the flying-king un-moves the table builder needs are future work (issue 34).

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
