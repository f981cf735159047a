//! Czech draughts: flying kings, men move and capture forward only, crowning ends the move,
//! a capture by a king must be chosen when there is one (otherwise any capture), jumped
//! pieces removed when the move ends, a side without a move loses. White moves first: it is
//! this crate's Black.
//!
//! Two implementations: [`Czech`] = [`Paths`] of [`ID`], the slow path generator (the
//! independent oracle of `verify` and the tests), and [`CzechFast`] = [`crate::rules::engine::Fast`]
//! of [`ID`], the retrograde engine the tables are built with (`egdb build --rules czech`).

use super::paths::{CaptureChoice, Crowning, Game, KingRange, Paths};
use crate::board::Wld;

/// Rules id of Czech draughts in table file headers.
pub const ID: u32 = 8;

/// The rules of Czech draughts for the path generator.
pub const GAME: Game = Game {
    id: ID,
    name: "czech",
    kings: KingRange::Flying,
    men_capture_backward: false,
    men_capture_kings: true,
    crowning: Crowning::EndsMove,
    choice: CaptureChoice::Czech,
    no_move: Wld::Loss,
};

/// Czech draughts through the slow path generator (the oracle; [`crate::rules::Rules`]).
pub type Czech = Paths<ID>;

/// The retrograde engine of this variant (quiet moves and un-moves, the capture test;
/// captures from the path generator): what its tables are built and probed with.
pub type CzechFast = super::engine::Fast<ID>;
