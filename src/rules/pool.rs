//! Pool checkers (American pool): as Russian draughts (flying kings, men capture backward,
//! any capture may be chosen, jumped pieces removed when the move ends), except that a man
//! is crowned only if its move ends on the crowning row: a capture passing through it goes on
//! with the piece as a man. A side without a move loses; the side that moves first is this
//! crate's Black.
//!
//! Two implementations: [`Pool`] = [`Paths`] of [`ID`], the slow path generator (the
//! independent oracle of `verify` and the tests), and [`PoolFast`] = [`crate::rules::engine::Fast`]
//! of [`ID`], the retrograde engine the tables are built with (`egdb build --rules pool`).

use super::paths::{CaptureChoice, Crowning, Game, KingRange, Paths};
use crate::board::Wld;

/// Rules id of pool checkers in table file headers.
pub const ID: u32 = 6;

/// The rules of pool checkers for the path generator.
pub const GAME: Game = Game {
    id: ID,
    name: "pool",
    kings: KingRange::Flying,
    men_capture_backward: true,
    men_capture_kings: true,
    crowning: Crowning::AtEndOnly,
    choice: CaptureChoice::Free,
    no_move: Wld::Loss,
};

/// Pool checkers through the slow path generator (the oracle; [`crate::rules::Rules`]).
pub type Pool = Paths<ID>;

/// The retrograde engine of this variant (quiet moves and un-moves, the capture test;
/// captures from the path generator): what its tables are built and probed with.
pub type PoolFast = super::engine::Fast<ID>;
