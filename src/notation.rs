//! PDN notation: FEN positions and moves for English checkers.
//!
//! # FEN
//! A position is written `<side>:<section>:<section>` where `<side>` is `B` or `W` (the side to
//! move) and each section is a colour letter followed by a comma-separated list of squares
//! (1-32); a `K` before a square marks a king, and `a-b` is the range of squares `a..=b`
//! (`K1-3` is three kings). Example: `W:W18,24,K27:B12,K22`.
//!
//! The parser ([`parse_fen`], [`Position::from_fen`], `str::parse`) accepts: the two sections in
//! either order, lower or upper case, whitespace around every token, a trailing `.`, the PDN tag
//! wrapper `[FEN "..."]`, and a section with no squares (`B:W32:B`). Every malformed input gives a
//! [`FenError`] naming the fault; no input makes it panic.
//!
//! The writer ([`Position::to_fen`], `Display`) gives the canonical form: side to move, then the
//! white section, then the black one, squares ascending, kings prefixed `K` in place, no ranges.
//!
//! # Moves
//! A simple move is printed `9-14`, a capture with its full landing path `9x18x27`
//! ([`format_move`], `Display` on [`Move`]). [`parse_move`] accepts `9-14`, the full path, the
//! short form `9x27` (or any in-order subset of the landing squares) when it names one move, and
//! reports an ambiguous or illegal move as a [`MoveParseError`] listing the candidates or the
//! legal moves.

use std::fmt;
use std::str::FromStr;

use crate::board::{Bitboard, Bits, Color, Position, PositionError};
use crate::movegen::Move;

/// Why a FEN string is not a legal position. Columns are 1-based character positions in the
/// string given to the parser.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    /// Nothing (or only whitespace, a tag wrapper or a `.`) was given.
    #[error("empty FEN")]
    Empty,
    /// The side to move is missing or is not `B`/`W`.
    #[error("bad side to move {found:?} at column {column}: expected B or W")]
    BadSideToMove {
        /// What was found instead (empty if the string ended).
        found: String,
        /// Column of the fault.
        column: usize,
    },
    /// A character that has no place where it stands.
    #[error("stray character {ch:?} at column {column}: expected {expected}")]
    StrayCharacter {
        /// The offending character.
        ch: char,
        /// Column of the character.
        column: usize,
        /// What the parser expected there.
        expected: &'static str,
    },
    /// The string ended where more was needed.
    #[error("FEN ends early: expected {expected}")]
    UnexpectedEnd {
        /// What the parser expected.
        expected: &'static str,
    },
    /// A square number outside 1-32.
    #[error("square {text} is out of range 1-32 (column {column})")]
    SquareOutOfRange {
        /// The number's value (saturated at `u32::MAX`; `text` holds what was written).
        square: u32,
        /// The number as written (digits beyond the 24th elided as `...`).
        text: String,
        /// Column where the number starts.
        column: usize,
    },
    /// A range `a-b` with `a > b`.
    #[error("empty range {from}-{to} (column {column})")]
    BadRange {
        /// First square of the range.
        from: u8,
        /// Last square of the range.
        to: u8,
        /// Column where the range starts.
        column: usize,
    },
    /// A square listed twice (in one section or in both).
    #[error("square {0} is used twice")]
    SquareUsedTwice(u8),
    /// A colour section given twice.
    #[error("the {0} section is given twice")]
    DuplicateSection(Color),
    /// A colour section is missing.
    #[error("the {0} section is missing")]
    MissingSection(Color),
    /// The pieces do not form a legal position (a man on its own crowning row, more than 12
    /// pieces a side): see [`PositionError`].
    #[error(transparent)]
    Illegal(#[from] PositionError),
}

/// Character cursor over the FEN body, skipping whitespace between tokens.
struct Cursor {
    chars: Vec<(usize, char)>,
    i: usize,
}

impl Cursor {
    fn skip_ws(&mut self) {
        while self.i < self.chars.len() && self.chars[self.i].1.is_whitespace() {
            self.i += 1;
        }
    }
    /// Next non-space character and its column, without consuming it.
    fn peek(&mut self) -> Option<(usize, char)> {
        self.skip_ws();
        self.chars.get(self.i).copied()
    }
    fn bump(&mut self) {
        self.i += 1;
    }
    /// Parse a decimal number (at least one digit) starting here.
    fn number(&mut self, expected: &'static str) -> Result<(u32, String, usize), FenError> {
        let (col, c) = self.peek().ok_or(FenError::UnexpectedEnd { expected })?;
        if !c.is_ascii_digit() {
            return Err(FenError::StrayCharacter {
                ch: c,
                column: col,
                expected,
            });
        }
        let mut v: u32 = 0;
        let mut text = String::new();
        let mut digits = 0usize;
        while let Some(&(_, c)) = self.chars.get(self.i) {
            match c.to_digit(10) {
                Some(d) if c.is_ascii_digit() => {
                    v = v.saturating_mul(10).saturating_add(d);
                    digits += 1;
                    if digits <= MAX_NUMBER_TEXT {
                        text.push(c);
                    }
                    self.i += 1;
                }
                _ => break,
            }
        }
        if digits > MAX_NUMBER_TEXT {
            text.push_str("...");
        }
        Ok((v, text, col))
    }
}

/// Digits of an out-of-range square number quoted in an error before eliding the rest.
const MAX_NUMBER_TEXT: usize = 24;

fn square((v, text, column): (u32, String, usize)) -> Result<(u8, usize), FenError> {
    if (1..=32).contains(&v) {
        Ok((v as u8, column))
    } else {
        Err(FenError::SquareOutOfRange {
            square: v,
            text,
            column,
        })
    }
}

/// Remove the `[FEN "..."]` wrapper (any case, any spacing) if present; returns the char range
/// of the body within `chars`.
fn unwrap_tag(chars: &[(usize, char)]) -> Result<(usize, usize), FenError> {
    let mut lo = 0;
    let mut hi = chars.len();
    while lo < hi && chars[lo].1.is_whitespace() {
        lo += 1;
    }
    while hi > lo && chars[hi - 1].1.is_whitespace() {
        hi -= 1;
    }
    if lo < hi && chars[lo].1 == '[' {
        // Expect FEN, then a quoted body, then ']'.
        let mut i = lo + 1;
        while i < hi && chars[i].1.is_whitespace() {
            i += 1;
        }
        let word: String = chars[i..hi.min(i + 3)].iter().map(|c| c.1).collect();
        if !word.eq_ignore_ascii_case("fen") {
            let (col, ch) = chars.get(i).copied().unwrap_or(chars[lo]);
            return Err(FenError::StrayCharacter {
                ch,
                column: col,
                expected: "FEN after '['",
            });
        }
        i += 3;
        while i < hi && chars[i].1.is_whitespace() {
            i += 1;
        }
        if i >= hi || chars[i].1 != '"' {
            return match chars.get(i).filter(|_| i < hi) {
                Some(&(col, ch)) => Err(FenError::StrayCharacter {
                    ch,
                    column: col,
                    expected: "'\"' after [FEN",
                }),
                None => Err(FenError::UnexpectedEnd {
                    expected: "'\"' after [FEN",
                }),
            };
        }
        let body_lo = i + 1;
        // The body ends at the next '"' (a FEN never contains one); then ']' and nothing else.
        let Some(body_hi) = (body_lo..hi).find(|&k| chars[k].1 == '"') else {
            return Err(FenError::UnexpectedEnd {
                expected: "closing \" of the [FEN tag",
            });
        };
        let mut j = body_hi + 1;
        while j < hi && chars[j].1.is_whitespace() {
            j += 1;
        }
        if j >= hi {
            return Err(FenError::UnexpectedEnd {
                expected: "closing ] of the [FEN tag",
            });
        }
        if chars[j].1 != ']' {
            let (column, ch) = chars[j];
            return Err(FenError::StrayCharacter {
                ch,
                column,
                expected: "']' after the closing \" of the [FEN tag",
            });
        }
        if j + 1 < hi {
            let (column, ch) = chars[j + 1..hi]
                .iter()
                .copied()
                .find(|c| !c.1.is_whitespace())
                .expect("hi is trimmed");
            return Err(FenError::StrayCharacter {
                ch,
                column,
                expected: "nothing after the [FEN \"...\"] tag",
            });
        }
        return Ok((body_lo, body_hi));
    }
    Ok((lo, hi))
}

/// Parse a PDN FEN string into a validated [`Position`].
///
/// See the [module documentation](self) for the accepted syntax.
///
/// # Errors
/// A [`FenError`] naming the first fault found: bad or missing side to move, stray characters
/// (with the character and its column), square out of range, empty range, square used twice,
/// missing or repeated section, man on its own crowning row, more than 12 pieces a side.
pub fn parse_fen(s: &str) -> Result<Position, FenError> {
    let all: Vec<(usize, char)> = s.chars().enumerate().map(|(i, c)| (i + 1, c)).collect();
    let (lo, mut hi) = unwrap_tag(&all)?;
    // Trailing '.' and spaces.
    while hi > lo && (all[hi - 1].1.is_whitespace() || all[hi - 1].1 == '.') {
        let dot = all[hi - 1].1 == '.';
        hi -= 1;
        if dot {
            while hi > lo && all[hi - 1].1.is_whitespace() {
                hi -= 1;
            }
            break;
        }
    }
    let mut cur = Cursor {
        chars: all[lo..hi].to_vec(),
        i: 0,
    };
    let (side_col, c) = cur.peek().ok_or(FenError::Empty)?;
    let side = match c.to_ascii_uppercase() {
        'B' => Color::Black,
        'W' => Color::White,
        _ => {
            let found: String = cur.chars[cur.i..]
                .iter()
                .map(|c| c.1)
                .take_while(|&c| c != ':')
                .take(20)
                .collect();
            return Err(FenError::BadSideToMove {
                found: found.trim().to_string(),
                column: side_col,
            });
        }
    };
    cur.bump();
    // The side letter must stand alone before ':'.
    match cur.peek() {
        Some((_, ':')) => {}
        Some((_, ch)) if ch.is_ascii_alphanumeric() => {
            let found: String = std::iter::once(c)
                .chain(cur.chars[cur.i..].iter().map(|c| c.1))
                .take_while(|&c| c != ':')
                .take(20)
                .collect();
            return Err(FenError::BadSideToMove {
                found: found.trim().to_string(),
                column: side_col,
            });
        }
        Some((col, ch)) => {
            return Err(FenError::StrayCharacter {
                ch,
                column: col,
                expected: "':' after the side to move",
            })
        }
        None => {
            return Err(FenError::UnexpectedEnd {
                expected: "':' after the side to move",
            })
        }
    }

    let mut pieces: [Option<(Bitboard, Bitboard)>; 2] = [None, None]; // (all, kings) per colour
    let mut used: Bitboard = 0;
    while let Some((_, ':')) = cur.peek() {
        cur.bump();
        let (col, c) = cur.peek().ok_or(FenError::UnexpectedEnd {
            expected: "a section starting with W or B",
        })?;
        let color = match c.to_ascii_uppercase() {
            'W' => Color::White,
            'B' => Color::Black,
            _ => {
                return Err(FenError::StrayCharacter {
                    ch: c,
                    column: col,
                    expected: "a section starting with W or B",
                })
            }
        };
        cur.bump();
        let slot = color as usize;
        if pieces[slot].is_some() {
            return Err(FenError::DuplicateSection(color));
        }
        let (mut all_b, mut kings_b) = (0u32, 0u32);
        // Items: empty section allowed (next is ':' or end).
        let mut first = true;
        loop {
            match cur.peek() {
                None | Some((_, ':')) if first => break,
                _ => {}
            }
            if !first {
                match cur.peek() {
                    None | Some((_, ':')) => break,
                    Some((_, ',')) => cur.bump(),
                    Some((col, ch)) => {
                        return Err(FenError::StrayCharacter {
                            ch,
                            column: col,
                            expected: "',' or ':' after a square",
                        })
                    }
                }
            }
            first = false;
            let king = matches!(cur.peek(), Some((_, 'k' | 'K')));
            if king {
                cur.bump();
            }
            let (a, acol) = square(cur.number("a square number")?)?;
            let mut b = a;
            if let Some((_, '-')) = cur.peek() {
                cur.bump();
                if matches!(cur.peek(), Some((_, 'k' | 'K'))) && king {
                    cur.bump();
                }
                b = square(cur.number("a square number after '-'")?)?.0;
                if b < a {
                    return Err(FenError::BadRange {
                        from: a,
                        to: b,
                        column: acol,
                    });
                }
            }
            for sq in a..=b {
                let bit = 1u32 << (sq - 1);
                if used & bit != 0 {
                    return Err(FenError::SquareUsedTwice(sq));
                }
                used |= bit;
                all_b |= bit;
                if king {
                    kings_b |= bit;
                }
            }
        }
        pieces[slot] = Some((all_b, kings_b));
    }
    if let Some((col, ch)) = cur.peek() {
        return Err(FenError::StrayCharacter {
            ch,
            column: col,
            expected: "':' or the end",
        });
    }
    for color in [Color::White, Color::Black] {
        if pieces[color as usize].is_none() {
            return Err(FenError::MissingSection(color));
        }
    }
    let (black, bk) = pieces[Color::Black as usize].unwrap_or((0, 0));
    let (white, wk) = pieces[Color::White as usize].unwrap_or((0, 0));
    let kings = bk | wk;
    Ok(Position::new(black, white, kings, side)?)
}

fn write_section(out: &mut String, letter: char, pieces: Bitboard, kings: Bitboard) {
    out.push(letter);
    let mut first = true;
    for i in Bits(pieces) {
        if !first {
            out.push(',');
        }
        first = false;
        if kings & (1 << i) != 0 {
            out.push('K');
        }
        out.push_str(&(i + 1).to_string());
    }
}

impl Position {
    /// Parse a PDN FEN string; see `parse_fen`.
    ///
    /// # Errors
    /// [`FenError`] naming the fault.
    pub fn from_fen(s: &str) -> Result<Position, FenError> {
        parse_fen(s)
    }

    /// Canonical PDN FEN: `<B|W>:W<squares>:B<squares>`, squares ascending, kings prefixed `K`,
    /// e.g. `W:W18,24,K27:B12,K22`. `parse_fen` reads it back to the same position.
    pub fn to_fen(&self) -> String {
        let mut s = String::with_capacity(64);
        s.push(self.side.letter());
        s.push(':');
        write_section(&mut s, 'W', self.white, self.kings);
        s.push(':');
        write_section(&mut s, 'B', self.black, self.kings);
        s
    }
}

/// Writes [`Position::to_fen`].
impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_fen())
    }
}

impl FromStr for Position {
    type Err = FenError;
    fn from_str(s: &str) -> Result<Position, FenError> {
        parse_fen(s)
    }
}

/// A move in PDN notation: `9-14` for a simple move, `9x18x27` (every landing square) for a
/// capture.
pub fn format_move(m: &Move) -> String {
    let mut s = m.from.to_string();
    if m.is_capture() {
        for sq in m.path() {
            s.push('x');
            s.push_str(&sq.to_string());
        }
    } else {
        s.push('-');
        s.push_str(&m.to.to_string());
    }
    s
}

/// Writes [`format_move`].
impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_move(self))
    }
}

/// Why a move string does not name exactly one legal move of a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveParseError {
    /// Not of the form `a-b` or `axbx...` with square numbers.
    #[error("bad move syntax {input:?}: {reason}")]
    Syntax {
        /// The input as given.
        input: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A square number outside 1-32.
    #[error("square {0} is out of range 1-32")]
    SquareOutOfRange(u32),
    /// No legal move matches. `legal` lists every legal move in notation.
    #[error("illegal move {input}; legal moves: {}", if legal.is_empty() { "none".to_string() } else { legal.join(" ") })]
    Illegal {
        /// The input as given (trimmed).
        input: String,
        /// Legal moves of the position.
        legal: Vec<String>,
    },
    /// A short capture that matches several different moves. `candidates` lists them.
    #[error("ambiguous move {input}: could be {}", candidates.join(" or "))]
    Ambiguous {
        /// The input as given (trimmed).
        input: String,
        /// Full paths of the matching moves.
        candidates: Vec<String>,
    },
}

/// Find the legal move of `pos` named by `s`.
///
/// Accepted: `a-b` (a simple move), `axb` (a capture from `a` ending on `b`), the full capture
/// path `axcx...xb`, or any in-order subset of its landing squares; `X` and spaces around the
/// separators are allowed. A full path always names its own move, even when it is also an
/// in-order subset of a longer path. Capture paths that take the same pieces to the same square (a king
/// going round a ring either way) give the same position and count as one move; the first is
/// returned.
///
/// # Errors
/// [`MoveParseError::Syntax`] or [`MoveParseError::SquareOutOfRange`] for malformed text,
/// [`MoveParseError::Illegal`] (listing the legal moves) when nothing matches,
/// [`MoveParseError::Ambiguous`] (listing the candidates) when several different moves match.
pub fn parse_move(pos: &Position, s: &str) -> Result<Move, MoveParseError> {
    let input = s.trim().to_string();
    let syntax = |reason| MoveParseError::Syntax {
        input: input.clone(),
        reason,
    };
    let is_capture = input.contains(['x', 'X']);
    let is_simple = input.contains('-');
    if is_capture && is_simple {
        return Err(syntax("mixes '-' and 'x'"));
    }
    if !is_capture && !is_simple {
        return Err(syntax("expected a-b or axb"));
    }
    let sep: &[char] = if is_capture { &['x', 'X'] } else { &['-'] };
    let mut squares = Vec::new();
    for part in input.split(sep) {
        let part = part.trim();
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(syntax("expected square numbers between the separators"));
        }
        let v = part.bytes().fold(0u32, |a, b| {
            a.saturating_mul(10).saturating_add((b - b'0') as u32)
        });
        if !(1..=32).contains(&v) {
            return Err(MoveParseError::SquareOutOfRange(v));
        }
        squares.push(v as u8);
    }
    if squares.len() < 2 {
        return Err(syntax("expected at least two squares"));
    }
    if is_simple && squares.len() != 2 {
        return Err(syntax("a simple move has exactly two squares"));
    }
    let legal = pos.moves();
    let from = squares[0];
    let to = *squares.last().expect("two squares");
    let mids = &squares[1..squares.len() - 1];
    let cands: Vec<&Move> = legal
        .iter()
        .filter(|m| m.from == from && m.to == to && m.is_capture() == is_capture)
        .filter(|m| {
            // Intermediate squares must appear in order among the landing squares before `to`.
            let path = m.path();
            let inner = &path[..path.len() - 1];
            let mut it = inner.iter();
            mids.iter().all(|q| it.any(|p| p == q))
        })
        .collect();
    // A full path names its move exactly, even when it is also a subset of a longer path.
    if let Some(m) = cands.iter().find(|m| m.path() == &squares[1..]) {
        return Ok(**m);
    }
    match cands.as_slice() {
        [] => Err(MoveParseError::Illegal {
            input,
            legal: legal.iter().map(format_move).collect(),
        }),
        [m, rest @ ..] => {
            if rest.iter().all(|r| r.captured == m.captured) {
                Ok(**m)
            } else {
                Err(MoveParseError::Ambiguous {
                    input,
                    candidates: cands.iter().map(|m| format_move(m)).collect(),
                })
            }
        }
    }
}
