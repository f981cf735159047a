//! The game: one trait, [`Rules`], that the solver, the capture resolution of probes, the
//! tablebase and the verifier are written against, and its one implementation today,
//! [`English`] (English / American checkers: 8x8, men move forward, short-range kings,
//! captures compulsory without a majority rule, crowning ends a move).
//!
//! Two kinds of code implement the rules, on purpose:
//! - the fast engine of this module ([`English`], in `english.rs`): bitboard successors
//!   specialised by colour, quiet un-moves for the retrograde solver ([`Retro`]), used by the
//!   generator and by probes;
//! - the slow path generator of `crate::movegen` (`crate::movegen::Oracle`): every move
//!   with its full path, written separately and simply; `egdb verify`, perft cross-checks and
//!   the tests use it as the independent oracle the fast engine is checked against.
//!
//! Both read the definitions of the English game (move directions of men and kings, crown
//! rows, the rules id) from `english`, so those are written once.
//!
//! The other 8x8 variants ([`Variant`]: Russian, Brazilian, Italian, giveaway, Pool, Spanish,
//! Czech) are described once each (`russian.rs`, ...) as parameters of the slow path generator
//! of [`paths`], their independent oracle; their tables are built with a fast engine:
//! [`Giveaway`] (the English one with the terminal rule reversed) and [`engine::Fast`] (the
//! others: quiet moves and un-moves, flying kings included, and the capture test; capture
//! successors from [`paths`]). Adding a variant: see "Adding a variant" in
//! docs/architecture.md.

pub mod brazilian;
pub mod czech;
pub mod engine;
pub(crate) mod english;
pub mod giveaway;
pub mod italian;
pub mod paths;
pub mod pool;
pub mod russian;
pub(crate) mod search;
pub mod spanish;
pub mod variant;

pub use english::English;
pub use giveaway::Giveaway;
pub use variant::Variant;

use crate::board::{Bitboard, Color, Position, Wld};

/// A rules variant: what the solver, probes and the verifier need to know about the game.
///
/// Implementations are zero-sized `Copy` values passed by value (`English`); every method is
/// statically dispatched, so a generic caller costs nothing over a hard-wired one. Positions
/// are [`Position`] values (bitboards, bit i = square i+1, any side to move).
pub trait Rules: Copy + Send + Sync + std::fmt::Debug + 'static {
    /// Rules id written in byte 9 of every table header (docs/format.md) and checked when a
    /// file is opened: 1 = English. Each variant has its own id (at most 255).
    const ID: u32;
    /// Human-readable name (e.g. `"english"`).
    const NAME: &'static str;

    /// The squares where a man of `side` is crowned.
    fn crown_row(&self, side: Color) -> Bitboard;

    /// Whether the side to move has a capture (and so must capture).
    fn has_capture(&self, p: &Position) -> bool;

    /// Whether the side to move has a non-capturing move. With [`Rules::has_capture`] this
    /// decides "has a legal move"; a side without one has the value [`Rules::no_move_value`].
    fn has_quiet_move(&self, p: &Position) -> bool;

    /// The terminal rule: the value, for the side to move, of a position in which it has no
    /// legal move (having no pieces included). [`Wld::Loss`] in English checkers and in
    /// Russian, Brazilian and Italian draughts; [`Wld::Win`] in giveaway (suicide) checkers.
    /// Never [`Wld::Draw`]. Every solver, probe, verifier and prover takes the value of such
    /// a position from here, at distance 0 (no move is left to play).
    fn no_move_value(&self) -> Wld;

    /// Whether `p` is a position of this game: the board invariants of
    /// [`Position::validate`] with this game's crowning rows ([`Rules::crown_row`]): no
    /// overlapping colours, no king flag on an empty square, no man on its own crowning row,
    /// at most 12 pieces a side, at least one piece. The same checks in every variant of this
    /// crate (in each, a man that ends a move on its crowning row is crowned; one only passing
    /// it during a Brazilian or Pool capture does not stay there), so every variant's tables,
    /// probes and front ends accept the same positions; docs/architecture.md, "Variants".
    ///
    /// # Errors
    /// [`crate::PositionError`] naming the first fault.
    fn validate(&self, p: &Position) -> Result<(), crate::board::PositionError> {
        p.validate_crown_rows(self.crown_row(Color::Black), self.crown_row(Color::White))
    }

    /// Whether the side to move has any legal move.
    #[inline]
    fn has_move(&self, p: &Position) -> bool {
        self.has_capture(p) || self.has_quiet_move(p)
    }

    /// Call `f` with the position after each legal move of `p`, moves with the same result
    /// counted once (the opponent is then to move). Order is unspecified.
    fn for_each_successor(&self, p: &Position, f: impl FnMut(Position));

    /// Whether the move from `before` to `after` is a *conversion*: a capture or a man move
    /// (the moves that can never be undone, after which distance-to-conversion counts anew).
    #[inline]
    fn is_conversion(&self, before: &Position, after: &Position) -> bool {
        before.piece_count() != after.piece_count()
            || before.men(before.side) != after.men(before.side)
    }
}

/// Retrograde rules: the un-moves the solver propagates along. Implemented by the fast engine
/// only; the verifier never uses it.
pub trait Retro: Rules {
    /// Quiet (non-capturing), non-crowning un-moves of the side that just moved in `after`
    /// (that is `after.side.opponent()`): `f(from, to, is_king)` for each piece now on square
    /// `to` that can have come from the empty square `from` (`is_king`: the piece is a king,
    /// which keeps the men of the position unchanged). `from` and `to` are one-bit bitboards.
    /// The caller decides which of them stay in its unit (see the generator's "leaves the unit"
    /// policy, `generate::solve::UnitPolicy`).
    fn for_each_quiet_unmove(&self, after: &Position, f: impl FnMut(Bitboard, Bitboard, bool));

    /// The number of quiet (non-capturing) moves of the side to move in `p` made by its
    /// pieces standing on the squares of `from` (a bitboard, bit i = square i+1). Meaningful
    /// only when the side to move has no capture (then these moves are legal). Counted without
    /// generating them: the generator's initial pass counts the moves that stay in a unit this
    /// way ([`Retro::for_each_quiet_successor`] gives the others).
    fn count_quiet_moves(&self, p: &Position, from: Bitboard) -> u32;

    /// Call `f` with the position after each quiet move of the side to move in `p` made by a
    /// piece on a square of `from` (the opponent is then to move; a man reaching its crowning
    /// row is crowned). As [`Retro::count_quiet_moves`], only when the side to move has no
    /// capture. Order unspecified.
    fn for_each_quiet_successor(&self, p: &Position, from: Bitboard, f: impl FnMut(Position));
}
