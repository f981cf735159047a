//! The retrograde engine of the 8x8 variants other than English and giveaway: [`Fast`], one
//! generic [`Retro`] implementation parameterised by a variant's [`Game`] (its rules id).
//!
//! What the retrograde solver needs of a variant splits in two:
//! - the *quiet* moves (no capture) and their un-moves, which stay inside a slice or lead to
//!   the next one by a man's step: written here, square by square over
//!   `board::NEIGHBOUR`. Men step one square diagonally forward (every variant, with
//!   crowning on arrival at the far row); short kings ([`KingRange::Short`], Italian) step one
//!   square in any direction; flying kings ([`KingRange::Flying`], Russian, Brazilian, Pool,
//!   Spanish, Czech) slide any number of empty squares along a diagonal, and so un-slide:
//!   a king on square `t` can have come from every square of each diagonal through `t` up to
//!   (not including) the first occupied square;
//! - *captures*, which always leave the slice (a piece disappears: a conversion). Whether the
//!   side to move has one ([`Rules::has_capture`]) is decided here (a capture exists exactly
//!   when some first jump exists, whatever the rules of choice and crowning): a man jumps an
//!   adjacent enemy piece (forward, or also backward where [`Game::men_capture_backward`];
//!   not a king where men may not capture kings, Italian) onto the empty square beyond; a
//!   short king the same in all four directions; a flying king an enemy piece at any
//!   distance along a diagonal (empty squares between) onto the empty square just beyond.
//!   The capture *successors*, with every rule of choice, crowning and the Turkish strike,
//!   come from the slow path generator ([`crate::rules::paths::unique_moves`]): captures are
//!   looked up in other slices, never un-made, so the solver needs them only forward and only
//!   at capture positions.
//!
//! The independent check of tables built with this engine is the forward fixpoint of the
//! tests (`tests/variants_solve.rs`), over [`crate::rules::paths::Paths`] alone: it shares the
//! capture successors with this engine, but not the quiet moves, the un-moves, the capture
//! test, the slices or the index.

use super::paths::{apply, game_of, unique_moves, Game, KingRange};
use super::{Retro, Rules};
use crate::board::{Bitboard, Color, Position, Wld, NEIGHBOUR};

/// Directions (of [`crate::board::shift`]) in which a man of `side` moves: Black toward
/// square 32 (0, 1), White toward square 1 (2, 3).
const fn forward(side: Color) -> [usize; 2] {
    match side {
        Color::Black => [0, 1],
        Color::White => [2, 3],
    }
}

/// The square (bit index) one step from bit index `i` in direction `d`, if on the board.
#[inline(always)]
fn step(d: usize, i: u32) -> Option<u32> {
    let n = NEIGHBOUR[d][i as usize];
    (n != 0xFF).then_some(u32::from(n))
}

/// The engine of the variant with rules id `ID` (see the module docs): Italian and the
/// flying-king variants. English and giveaway have their bitboard engine
/// ([`crate::rules::English`], [`crate::rules::Giveaway`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fast<const ID: u32>;

impl<const ID: u32> Fast<ID> {
    /// The variant's rules.
    pub const GAME: Game = game_of(ID);

    /// Whether kings fly.
    #[inline(always)]
    fn flying() -> bool {
        matches!(Self::GAME.kings, KingRange::Flying)
    }

    /// Call `f(from, to)` (bit indices) for each quiet move of a piece of the side to move of
    /// `p` standing on a square of `from_set`; `f` returns false to stop. Returns false if
    /// stopped.
    fn quiet_moves(p: &Position, from_set: Bitboard, mut f: impl FnMut(u32, u32) -> bool) -> bool {
        let side = p.side;
        let occupied = p.black | p.white;
        let mut mine = p.pieces(side) & from_set;
        while mine != 0 {
            let from = mine.trailing_zeros();
            mine &= mine - 1;
            let king = p.kings & (1 << from) != 0;
            if king {
                for d in 0..4 {
                    let mut t = step(d, from);
                    while let Some(x) = t {
                        if occupied & (1 << x) != 0 {
                            break;
                        }
                        if !f(from, x) {
                            return false;
                        }
                        if !Self::flying() {
                            break;
                        }
                        t = step(d, x);
                    }
                }
            } else {
                for d in forward(side) {
                    if let Some(x) = step(d, from) {
                        if occupied & (1 << x) == 0 && !f(from, x) {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }

    /// The position after the quiet move `from` -> `to` (bit indices) of the side to move of
    /// `p`: a man arriving on its crowning row is crowned; the opponent to move.
    fn after_quiet(p: &Position, from: u32, to: u32) -> Position {
        let (f, t) = (1u32 << from, 1u32 << to);
        let mut q = *p;
        match p.side {
            Color::Black => q.black = (q.black & !f) | t,
            Color::White => q.white = (q.white & !f) | t,
        }
        let crown = match p.side {
            Color::Black => crate::board::BLACK_CROWN_ROW,
            Color::White => crate::board::WHITE_CROWN_ROW,
        };
        if p.kings & f != 0 || crown & t != 0 {
            q.kings = (q.kings & !f) | t;
        }
        q.side = p.side.opponent();
        q
    }
}

impl<const ID: u32> Rules for Fast<ID> {
    const ID: u32 = ID;
    const NAME: &'static str = Self::GAME.name;

    fn crown_row(&self, side: Color) -> Bitboard {
        match side {
            Color::Black => crate::board::BLACK_CROWN_ROW,
            Color::White => crate::board::WHITE_CROWN_ROW,
        }
    }

    fn has_capture(&self, p: &Position) -> bool {
        let g = Self::GAME;
        let side = p.side;
        let enemy = p.pieces(side.opponent());
        let occupied = p.black | p.white;
        let mut mine = p.pieces(side);
        while mine != 0 {
            let from = mine.trailing_zeros();
            mine &= mine - 1;
            let king = p.kings & (1 << from) != 0;
            let all = [0, 1, 2, 3];
            let fw = forward(side);
            let dirs: &[usize] = if king || g.men_capture_backward {
                &all
            } else {
                &fw
            };
            // Enemy pieces this piece may jump.
            let prey = if king || g.men_capture_kings {
                enemy
            } else {
                enemy & !p.kings
            };
            for &d in dirs {
                let mut t = step(d, from);
                if king && Self::flying() {
                    while let Some(x) = t {
                        if occupied & (1 << x) != 0 {
                            break;
                        }
                        t = step(d, x);
                    }
                }
                let Some(x) = t else { continue };
                if prey & (1 << x) == 0 {
                    continue;
                }
                if let Some(y) = step(d, x) {
                    if occupied & (1 << y) == 0 {
                        return true;
                    }
                }
            }
        }
        false
    }

    fn has_quiet_move(&self, p: &Position) -> bool {
        !Self::quiet_moves(p, !0, |_, _| false)
    }

    fn no_move_value(&self) -> Wld {
        Self::GAME.no_move
    }

    fn for_each_successor(&self, p: &Position, mut f: impl FnMut(Position)) {
        if self.has_capture(p) {
            for m in unique_moves(&Self::GAME, p) {
                f(apply(p, &m));
            }
        } else {
            Self::quiet_moves(p, !0, |from, to| {
                f(Self::after_quiet(p, from, to));
                true
            });
        }
    }
}

impl<const ID: u32> Retro for Fast<ID> {
    fn for_each_quiet_unmove(&self, after: &Position, mut f: impl FnMut(Bitboard, Bitboard, bool)) {
        let mover = after.side.opponent();
        let empty = after.empty();
        let mut pieces = after.pieces(mover);
        while pieces != 0 {
            let to = pieces.trailing_zeros();
            pieces &= pieces - 1;
            if after.kings & (1 << to) != 0 {
                for d in 0..4 {
                    let mut t = step(d, to);
                    while let Some(x) = t {
                        if empty & (1 << x) == 0 {
                            break;
                        }
                        f(1 << x, 1 << to, true);
                        if !Self::flying() {
                            break;
                        }
                        t = step(d, x);
                    }
                }
            } else {
                // A man came from one step behind (toward its own back rank).
                let back = match mover {
                    Color::Black => [2, 3],
                    Color::White => [0, 1],
                };
                for d in back {
                    if let Some(x) = step(d, to) {
                        if empty & (1 << x) != 0 {
                            f(1 << x, 1 << to, false);
                        }
                    }
                }
            }
        }
    }

    fn count_quiet_moves(&self, p: &Position, from: Bitboard) -> u32 {
        let mut n = 0;
        Self::quiet_moves(p, from, |_, _| {
            n += 1;
            true
        });
        n
    }

    fn for_each_quiet_successor(&self, p: &Position, from: Bitboard, mut f: impl FnMut(Position)) {
        Self::quiet_moves(p, from, |a, b| {
            f(Self::after_quiet(p, a, b));
            true
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::paths::Paths;
    use crate::rules::{brazilian, czech, italian, pool, russian, spanish};

    /// Every position reached in a few plies from a handful of starts: the engine's capture
    /// test, quiet moves and successor set agree with the path generator's.
    fn agrees<const ID: u32>() {
        let fast = Fast::<ID>;
        let slow = Paths::<ID>;
        let starts = [
            "B:W21-32:B1-12",
            "W:WK30,K26,18:BK3,K7,14",
            "B:WK32,23:BK1,10,K14",
            "W:W9,K22:B5,K27,19",
        ];
        let mut seen = std::collections::HashSet::new();
        let mut frontier: Vec<Position> = starts
            .iter()
            .map(|f| Position::from_fen(f).unwrap())
            .collect();
        for _ in 0..5 {
            let mut next = Vec::new();
            for p in frontier {
                if !seen.insert(p) {
                    continue;
                }
                assert_eq!(fast.has_capture(&p), slow.has_capture(&p), "{}", p.to_fen());
                assert_eq!(
                    fast.has_quiet_move(&p),
                    slow.has_quiet_move(&p),
                    "{}",
                    p.to_fen()
                );
                let mut a = Vec::new();
                fast.for_each_successor(&p, |q| a.push(q));
                let mut b = Vec::new();
                slow.for_each_successor(&p, |q| b.push(q));
                a.sort_by_key(|q| (q.black, q.white, q.kings));
                b.sort_by_key(|q| (q.black, q.white, q.kings));
                assert_eq!(a, b, "{}", p.to_fen());
                next.extend(b);
            }
            frontier = next;
        }
        assert!(seen.len() > 500, "{}", seen.len());
    }

    #[test]
    fn the_engine_agrees_with_the_path_generator() {
        agrees::<{ italian::ID }>();
        agrees::<{ russian::ID }>();
        agrees::<{ brazilian::ID }>();
        agrees::<{ pool::ID }>();
        agrees::<{ spanish::ID }>();
        agrees::<{ czech::ID }>();
    }
}
