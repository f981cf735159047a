//! Board geometry and the [`Position`] type for English checkers (American checkers).
//!
//! # Conventions
//! - Squares are the standard PDN numbers 1-32. Row `r = (s-1)/4` holds squares `4r+1..=4r+4`;
//!   row 0 is Black's back rank, row 7 White's.
//! - Bitboards are `u32` with bit `i` = square `i+1`.
//! - Black men start on 1-12, move toward higher numbers and crown on 29-32; White men start on
//!   21-32, move toward lower numbers and crown on 1-4. Black moves first.
//! - Rotating the board 180 degrees maps square `s` to `33-s`, i.e. reverses the bits of a
//!   bitboard ([`Position::flip`] also swaps the colours and the side to move).
//!
//! # Geometry
//! On even rows (0, 2, 4, 6) the last square of the row (4, 12, 20, 28) is on the board edge;
//! on odd rows the first square (5, 13, 21, 29) is. A square's upward neighbours are `s+4`,
//! `s+5` (even rows) or `s+3`, `s+4` (odd rows). Every diagonal direction is expressed below as
//! a masked shift so whole bitboards move at once.

use std::fmt;

/// A `u32` bitboard: bit `i` set means square `i+1` is in the set.
pub type Bitboard = u32;

/// Squares on even rows (0, 2, 4, 6): 1-4, 9-12, 17-20, 25-28.
pub const EVEN_ROWS: Bitboard = 0x0F0F_0F0F;
/// Squares on odd rows (1, 3, 5, 7): 5-8, 13-16, 21-24, 29-32.
pub const ODD_ROWS: Bitboard = 0xF0F0_F0F0;
/// Even-row squares that are not on the right edge (all but 4, 12, 20, 28).
pub const EVEN_NOT_EDGE: Bitboard = 0x0707_0707;
/// Odd-row squares that are not on the left edge (all but 5, 13, 21, 29).
pub const ODD_NOT_EDGE: Bitboard = 0xE0E0_E0E0;
/// Black's crowning row: squares 29-32 (the row next to White's side; also in
/// [`crate::rules::english`]).
pub const BLACK_CROWN_ROW: Bitboard = 0xF000_0000;
/// White's crowning row: squares 1-4 (the row next to Black's side).
pub const WHITE_CROWN_ROW: Bitboard = 0x0000_000F;

/// Shift every square of `b` one step up (toward square 32) along diagonal A
/// (even rows `+4`, odd rows `+3`). Squares that would leave the board vanish.
#[inline(always)]
pub const fn up_a(b: Bitboard) -> Bitboard {
    ((b & EVEN_ROWS) << 4) | ((b & ODD_NOT_EDGE) << 3)
}
/// Shift one step up along diagonal B (even rows `+5`, odd rows `+4`).
#[inline(always)]
pub const fn up_b(b: Bitboard) -> Bitboard {
    ((b & EVEN_NOT_EDGE) << 5) | ((b & ODD_ROWS) << 4)
}
/// Shift one step down along diagonal A (the inverse of [`up_a`]).
#[inline(always)]
pub const fn down_a(b: Bitboard) -> Bitboard {
    ((b & ODD_ROWS) >> 4) | ((b & EVEN_NOT_EDGE) >> 3)
}
/// Shift one step down along diagonal B (the inverse of [`up_b`]).
#[inline(always)]
pub const fn down_b(b: Bitboard) -> Bitboard {
    ((b & ODD_NOT_EDGE) >> 5) | ((b & EVEN_ROWS) >> 4)
}

/// Shift a bitboard one step in direction `dir` (0 = up A, 1 = up B, 2 = down A, 3 = down B).
/// Directions 0 and 1 point toward square 32 (Black's forward), 2 and 3 toward square 1.
#[inline(always)]
pub const fn shift(b: Bitboard, dir: usize) -> Bitboard {
    match dir {
        0 => up_a(b),
        1 => up_b(b),
        2 => down_a(b),
        _ => down_b(b),
    }
}

/// Rotate a bitboard 180 degrees: square `s` goes to `33-s`.
#[inline(always)]
pub const fn rotate(b: Bitboard) -> Bitboard {
    b.reverse_bits()
}

/// The bitboard of the four squares of row `r` (0-7).
#[inline(always)]
pub const fn row_mask(r: u8) -> Bitboard {
    0xF << (4 * r as u32)
}

/// Per-square neighbour table: `NEIGHBOUR[dir][i]` is the bit index (0-31) of the square one
/// step from bit `i` in direction `dir`, or 0xFF if that leaves the board.
pub const NEIGHBOUR: [[u8; 32]; 4] = build_neighbours();

const fn build_neighbours() -> [[u8; 32]; 4] {
    let mut t = [[0xFFu8; 32]; 4];
    let mut d = 0;
    while d < 4 {
        let mut i = 0;
        while i < 32 {
            let b = shift(1u32 << i, d);
            if b != 0 {
                t[d][i] = b.trailing_zeros() as u8;
            }
            i += 1;
        }
        d += 1;
    }
    t
}

/// One of the two players.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// Moves first; men move toward square 32.
    Black,
    /// Men move toward square 1.
    White,
}

impl Color {
    /// The other colour.
    #[inline(always)]
    pub const fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }
    /// `'B'` or `'W'`, as in PDN FEN.
    pub const fn letter(self) -> char {
        match self {
            Color::Black => 'B',
            Color::White => 'W',
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Color::Black => "black",
            Color::White => "white",
        })
    }
}

/// Game-theoretic value from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Wld {
    /// The side to move loses with best play.
    Loss = 0,
    /// Neither side can force a win.
    Draw = 1,
    /// The side to move wins with best play.
    Win = 2,
}

impl Wld {
    /// The value seen from the other side (win <-> loss, draw stays).
    #[inline(always)]
    pub const fn negate(self) -> Wld {
        match self {
            Wld::Loss => Wld::Win,
            Wld::Draw => Wld::Draw,
            Wld::Win => Wld::Loss,
        }
    }
    /// Lower-case word: `win`, `loss` or `draw`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Wld::Loss => "loss",
            Wld::Draw => "draw",
            Wld::Win => "win",
        }
    }
    /// Decode 0 = loss, 1 = draw, 2 = win; `None` for anything else.
    pub const fn from_u8(v: u8) -> Option<Wld> {
        match v {
            0 => Some(Wld::Loss),
            1 => Some(Wld::Draw),
            2 => Some(Wld::Win),
            _ => None,
        }
    }
}

impl fmt::Display for Wld {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a set of bitboards is not a legal checkers position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// A square holds both a black and a white piece.
    #[error("square {0} holds both a black and a white piece")]
    Overlap(u8),
    /// The kings bitboard marks an empty square.
    #[error("square {0} is marked as a king but holds no piece")]
    KingOnEmptySquare(u8),
    /// A man stands on its own crowning row (black 29-32, white 1-4).
    #[error("{color} man on square {square} stands on its own crowning row")]
    ManOnCrowningRow {
        /// Colour of the man.
        color: Color,
        /// Square number 1-32.
        square: u8,
    },
    /// More than 12 pieces of one colour.
    #[error("{color} has {count} pieces; at most 12 are allowed")]
    TooManyPieces {
        /// The colour with too many pieces.
        color: Color,
        /// How many it has.
        count: u32,
    },
    /// The board holds no piece at all (a board where one side has none is valid: that side,
    /// to move, has lost).
    #[error("the board has no pieces")]
    NoPieces,
}

/// A position: piece placement plus side to move.
///
/// Invariants (checked by [`Position::new`]): `black & white == 0`, `kings ⊆ black | white`,
/// no man on its own crowning row, at most 12 pieces per colour, at least one piece. Fields are public for speed;
/// code that builds a `Position` by hand from untrusted data should call [`Position::validate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// Black pieces (men and kings), bit i = square i+1.
    pub black: Bitboard,
    /// White pieces (men and kings), bit i = square i+1.
    pub white: Bitboard,
    /// Kings of either colour, bit i = square i+1.
    pub kings: Bitboard,
    /// The side to move.
    pub side: Color,
}

impl Position {
    /// The initial position `B:W21-32:B1-12`: Black men on 1-12, White men on 21-32, Black to move.
    pub const START: Position = Position {
        black: 0x0000_0FFF,
        white: 0xFFF0_0000,
        kings: 0,
        side: Color::Black,
    };

    /// Build a position from bitboards (bit i = square i+1) and the side to move.
    ///
    /// # Errors
    /// [`PositionError`] naming the first fault: overlapping colours, a king flag on an empty
    /// square, a man on its own crowning row, more than 12 pieces a side, or no piece at all.
    pub fn new(
        black: Bitboard,
        white: Bitboard,
        kings: Bitboard,
        side: Color,
    ) -> Result<Position, PositionError> {
        let p = Position {
            black,
            white,
            kings,
            side,
        };
        p.validate()?;
        Ok(p)
    }

    /// Check the invariants listed on [`Position`].
    ///
    /// # Errors
    /// See [`Position::new`].
    pub fn validate(&self) -> Result<(), PositionError> {
        self.validate_crown_rows(BLACK_CROWN_ROW, WHITE_CROWN_ROW)
    }

    /// [`Position::validate`] with the crowning rows given (bitboards, bit i = square i+1):
    /// no man of Black on `black_crown`, none of White on `white_crown`; the other checks as
    /// [`Position::validate`]. What `crate::rules::Rules::validate` runs with a variant's rows.
    ///
    /// # Errors
    /// See [`Position::new`].
    pub fn validate_crown_rows(
        &self,
        black_crown: Bitboard,
        white_crown: Bitboard,
    ) -> Result<(), PositionError> {
        let both = self.black & self.white;
        if both != 0 {
            return Err(PositionError::Overlap(both.trailing_zeros() as u8 + 1));
        }
        let stray = self.kings & !(self.black | self.white);
        if stray != 0 {
            return Err(PositionError::KingOnEmptySquare(
                stray.trailing_zeros() as u8 + 1,
            ));
        }
        let bm = self.black & !self.kings & black_crown;
        if bm != 0 {
            return Err(PositionError::ManOnCrowningRow {
                color: Color::Black,
                square: bm.trailing_zeros() as u8 + 1,
            });
        }
        let wm = self.white & !self.kings & white_crown;
        if wm != 0 {
            return Err(PositionError::ManOnCrowningRow {
                color: Color::White,
                square: wm.trailing_zeros() as u8 + 1,
            });
        }
        for (color, b) in [(Color::Black, self.black), (Color::White, self.white)] {
            if b.count_ones() > 12 {
                return Err(PositionError::TooManyPieces {
                    color,
                    count: b.count_ones(),
                });
            }
        }
        if self.black | self.white == 0 {
            return Err(PositionError::NoPieces);
        }
        Ok(())
    }

    /// All pieces of `color`.
    #[inline(always)]
    pub const fn pieces(&self, color: Color) -> Bitboard {
        match color {
            Color::Black => self.black,
            Color::White => self.white,
        }
    }
    /// Men (uncrowned pieces) of `color`.
    #[inline(always)]
    pub const fn men(&self, color: Color) -> Bitboard {
        self.pieces(color) & !self.kings
    }
    /// Kings of `color`.
    #[inline(always)]
    pub const fn kings_of(&self, color: Color) -> Bitboard {
        self.pieces(color) & self.kings
    }
    /// All occupied squares.
    #[inline(always)]
    pub const fn occupied(&self) -> Bitboard {
        self.black | self.white
    }
    /// All empty squares.
    #[inline(always)]
    pub const fn empty(&self) -> Bitboard {
        !(self.black | self.white)
    }
    /// Total number of pieces on the board.
    #[inline(always)]
    pub const fn piece_count(&self) -> u32 {
        (self.black | self.white).count_ones()
    }

    /// Rotate the board 180 degrees (square s -> 33-s), swap the colours and the side to move.
    ///
    /// The result is the same game seen from the other side: its value for the side to move
    /// equals this position's value. `p.flip().flip() == p`.
    #[inline(always)]
    pub const fn flip(&self) -> Position {
        Position {
            black: rotate(self.white),
            white: rotate(self.black),
            kings: rotate(self.kings),
            side: self.side.opponent(),
        }
    }

    /// This position with Black to move: itself if Black is to move, else its [`flip`](Self::flip).
    /// This is the colour normalisation the database uses.
    #[inline(always)]
    pub const fn normalized(&self) -> Position {
        match self.side {
            Color::Black => *self,
            Color::White => self.flip(),
        }
    }
}

impl Default for Position {
    fn default() -> Self {
        Position::START
    }
}

/// Iterate over the bit indices (0-31) set in a bitboard, lowest first.
#[derive(Clone, Copy, Debug)]
pub struct Bits(pub Bitboard);

impl Iterator for Bits {
    type Item = u32;
    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        if self.0 == 0 {
            None
        } else {
            let i = self.0.trailing_zeros();
            self.0 &= self.0 - 1;
            Some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(s: u8) -> Bitboard {
        1 << (s - 1)
    }

    #[test]
    fn neighbours_match_standard_board() {
        // Black's forward neighbours, from the printed board diagram.
        let cases: &[(u8, &[u8])] = &[
            (1, &[5, 6]),
            (4, &[8]),
            (5, &[9]),
            (6, &[9, 10]),
            (8, &[11, 12]),
            (12, &[16]),
            (13, &[17]),
            (27, &[31, 32]),
            (29, &[]),
        ];
        for &(s, want) in cases {
            let got = up_a(sq(s)) | up_b(sq(s));
            let want: Bitboard = want.iter().map(|&t| sq(t)).fold(0, |a, b| a | b);
            assert_eq!(got, want, "square {s}");
            // Down shifts are the inverses.
            for t in Bits(want) {
                let back = down_a(1 << t) | down_b(1 << t);
                assert!(back & sq(s) != 0);
            }
        }
    }

    #[test]
    fn flip_maps_s_to_33_minus_s() {
        for s in 1..=32u8 {
            assert_eq!(rotate(sq(s)), sq(33 - s));
        }
        let p = Position::START;
        assert_eq!(p.flip().side, Color::White);
        assert_eq!(p.flip().flip(), p);
    }
}
