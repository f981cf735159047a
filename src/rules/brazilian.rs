//! Brazilian draughts: the international (FMJD) rules on this crate's 8x8 board. Flying kings,
//! men capture backward as well as forward, the capture taking the most pieces is compulsory
//! (kings and men count alike), a man is crowned only if its move ends on the crowning row
//! (passing through it during a capture does not crown), jumped pieces are removed only when
//! the move ends, a side without a move loses. White moves first: it is this crate's Black
//! ([`crate::rules::paths`], "Orientation").
//!
//! Two implementations: [`Brazilian`] = [`Paths`] of [`ID`], the slow path generator (the
//! independent oracle of `verify` and the tests), and [`BrazilianFast`] = [`crate::rules::engine::Fast`]
//! of [`ID`], the retrograde engine the tables are built with (`egdb build --rules brazilian`).

use super::paths::{CaptureChoice, Crowning, Game, KingRange, Paths};
use crate::board::Wld;

/// Rules id of Brazilian draughts in table file headers.
pub const ID: u32 = 3;

/// The rules of Brazilian draughts for the path generator.
pub const GAME: Game = Game {
    id: ID,
    name: "brazilian",
    kings: KingRange::Flying,
    men_capture_backward: true,
    men_capture_kings: true,
    crowning: Crowning::AtEndOnly,
    choice: CaptureChoice::MostPieces,
    no_move: Wld::Loss,
};

/// Brazilian draughts through the slow path generator (the oracle; [`crate::rules::Rules`]).
pub type Brazilian = Paths<ID>;

/// The retrograde engine of this variant (quiet moves and un-moves, the capture test;
/// captures from the path generator): what its tables are built and probed with.
pub type BrazilianFast = super::engine::Fast<ID>;
