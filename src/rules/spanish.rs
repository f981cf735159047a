//! Spanish draughts: flying kings, men move and capture forward only, crowning ends the move,
//! the capture taking the most pieces is compulsory and among those the one taking the most
//! kings, jumped pieces removed when the move ends, a side without a move loses. The board is
//! the mirror image of ours and White moves first (it is this crate's Black); square numbers
//! map as Italian ones do ([`crate::rules::italian::from_italian_square`]).
//!
//! Two implementations: [`Spanish`] = [`Paths`] of [`ID`], the slow path generator (the
//! independent oracle of `verify` and the tests), and [`SpanishFast`] = [`crate::rules::engine::Fast`]
//! of [`ID`], the retrograde engine the tables are built with (`egdb build --rules spanish`).

use super::paths::{CaptureChoice, Crowning, Game, KingRange, Paths};
use crate::board::Wld;

/// Rules id of Spanish draughts in table file headers.
pub const ID: u32 = 7;

/// The rules of Spanish draughts for the path generator.
pub const GAME: Game = Game {
    id: ID,
    name: "spanish",
    kings: KingRange::Flying,
    men_capture_backward: false,
    men_capture_kings: true,
    crowning: Crowning::EndsMove,
    choice: CaptureChoice::Spanish,
    no_move: Wld::Loss,
};

/// Spanish draughts through the slow path generator (the oracle; [`crate::rules::Rules`]).
pub type Spanish = Paths<ID>;

/// The retrograde engine of this variant (quiet moves and un-moves, the capture test;
/// captures from the path generator): what its tables are built and probed with.
pub type SpanishFast = super::engine::Fast<ID>;
