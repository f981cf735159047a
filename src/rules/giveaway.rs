//! Giveaway (suicide) checkers: English checkers' moves (module docs of
//! `rules::english`) with the terminal rule reversed: the side that has no legal
//! move, including having no pieces, **wins**.
//!
//! Two implementations, as for English: [`Giveaway`], the fast engine (the English bitboard
//! successors and un-moves, which do not depend on who wins at the end, with
//! [`Rules::no_move_value`] = [`Wld::Win`]): it builds and probes the tables; and
//! [`GiveawayPaths`], the slow path generator of [`crate::rules::paths`] (written separately
//! from the English engine): the independent oracle `egdb verify --rules giveaway` and the
//! tests use.

use super::paths::{CaptureChoice, Crowning, Game, KingRange, Paths};
use super::{English, Retro, Rules};
use crate::board::{Bitboard, Color, Position, Wld};

/// Rules id of giveaway checkers in table file headers.
pub const ID: u32 = 5;

/// The rules of giveaway checkers for the path generator: English moves, no move wins.
pub const GAME: Game = Game {
    id: ID,
    name: "giveaway",
    kings: KingRange::Short,
    men_capture_backward: false,
    men_capture_kings: true,
    crowning: Crowning::EndsMove,
    choice: CaptureChoice::Free,
    no_move: Wld::Win,
};

/// Giveaway checkers through the slow path generator: the independent oracle.
pub type GiveawayPaths = Paths<ID>;

/// Giveaway checkers through the fast English engine (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Giveaway;

impl Rules for Giveaway {
    const ID: u32 = ID;
    const NAME: &'static str = "giveaway";

    #[inline(always)]
    fn crown_row(&self, side: Color) -> Bitboard {
        English.crown_row(side)
    }
    #[inline(always)]
    fn has_capture(&self, p: &Position) -> bool {
        English.has_capture(p)
    }
    #[inline(always)]
    fn has_quiet_move(&self, p: &Position) -> bool {
        English.has_quiet_move(p)
    }
    #[inline(always)]
    fn no_move_value(&self) -> Wld {
        Wld::Win
    }
    #[inline(always)]
    fn for_each_successor(&self, p: &Position, f: impl FnMut(Position)) {
        English.for_each_successor(p, f)
    }
}

impl Retro for Giveaway {
    #[inline(always)]
    fn for_each_quiet_unmove(&self, after: &Position, f: impl FnMut(Bitboard, Bitboard, bool)) {
        English.for_each_quiet_unmove(after, f)
    }
    #[inline(always)]
    fn count_quiet_moves(&self, p: &Position, from: Bitboard) -> u32 {
        English.count_quiet_moves(p, from)
    }
    #[inline(always)]
    fn for_each_quiet_successor(&self, p: &Position, from: Bitboard, f: impl FnMut(Position)) {
        English.for_each_quiet_successor(p, from, f)
    }
}
