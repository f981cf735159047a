//! Czech draughts: flying kings, men move and capture forward only, crowning ends the move,
//! a capture by a king must be chosen when there is one (otherwise any capture), jumped
//! pieces removed when the move ends, a side without a move loses. White moves first: it is
//! this crate's Black.
//!
//! Only the slow path generator plays it so far ([`Czech`] = [`Paths`] of [`ID`]).

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
