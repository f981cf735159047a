//! Italian draughts: the capture rules of the Italian federation's rule book (FID,
//! "Regolamento tecnico", articles 5-6), each as a position whose legal moves are written
//! here by hand from the rule book's text, never produced by the code under test:
//!
//! - a capture is compulsory; men capture forward only, and a man may not capture a king;
//! - among several captures, the one taking the most pieces (men and kings count alike);
//! - equal in number: the capture made by a king (rather than by a man);
//! - equal again: the capture taking the most kings;
//! - equal again: the capture in which the king (the first of the kings) is met first;
//! - equal in everything: free choice.
//!
//! Each position is checked against both implementations of the rules: the slow path
//! generator (`rules::paths::moves` with the Italian [`Game`], which `Variant::moves` and
//! `egdb moves --rules italian` list, and `rules::italian::Italian`, the oracle of `verify`)
//! and the fast engine the tables are built with (`rules::italian::ItalianFast`: its capture
//! test and its successor positions). The expected successor positions are made from the
//! hand-written moves by [`after`], a few lines of bit arithmetic written here.
//!
//! # Board
//! Positions are written on this crate's board (docs/architecture.md, "Variants";
//! `rules::italian`, "Orientation"): our Black is Italian White, the side that moves first,
//! starting on our 1-12 and moving toward 32; our White is Italian Black. An Italian square
//! `s` is our square `4(7-r) + k + 1` with `r = (s-1)/4`, `k = (s-1)%4` (the Italian diagram
//! flipped top to bottom); [`italian_numbering_is_the_same_position`] writes one case in
//! Italian numbering and checks that it is the same position. Diagram of our numbering (row 0
//! at the top, Black's men move down):
//!
//! ```text
//!     1   2   3   4
//!   5   6   7   8
//!     9  10  11  12
//!  13  14  15  16
//!    17  18  19  20
//!  21  22  23  24
//!    25  26  27  28
//!  29  30  31  32
//! ```

use checkers_egdb::rules::italian::{
    self, from_italian, from_italian_square, Italian, ItalianFast,
};
use checkers_egdb::rules::paths::{self, Game};
use checkers_egdb::rules::{Rules, Variant};
use checkers_egdb::{format_move, Color, Position};

/// One expected legal move: its text (`from-to` or `from x landing x ...`) and the squares
/// of the pieces it captures, in the order they are jumped (empty for a quiet move).
type Expected = (&'static str, &'static [u8]);

fn bit(s: u8) -> u32 {
    1 << (s - 1)
}

/// The position after the move `text` capturing `captured`, made by hand: the piece moves
/// from the first square to the last, the captured pieces leave the board, a king stays a
/// king and a man reaching its far row is crowned; the other side is to move.
fn after(p: &Position, text: &str, captured: &[u8]) -> Position {
    let squares: Vec<u8> = text.split(['-', 'x']).map(|s| s.parse().unwrap()).collect();
    let (from, to) = (bit(squares[0]), bit(*squares.last().unwrap()));
    let gone = captured.iter().fold(0, |b, &s| b | bit(s));
    let mut q = *p;
    let crown_row = match p.side {
        Color::Black => 0xF000_0000u32,
        Color::White => 0x0000_000F,
    };
    match p.side {
        Color::Black => {
            q.black = (q.black & !from) | to;
            q.white &= !gone;
        }
        Color::White => {
            q.white = (q.white & !from) | to;
            q.black &= !gone;
        }
    }
    let king = p.kings & from != 0 || crown_row & to != 0;
    q.kings &= !(from | gone);
    if king {
        q.kings |= to;
    }
    q.side = p.side.opponent();
    q
}

fn sorted(mut v: Vec<Position>) -> Vec<Position> {
    v.sort_by_key(|q| (q.black, q.white, q.kings, q.side as u8));
    v.dedup();
    v
}

/// `fen` (our board) has exactly the legal moves `expected` under the Italian rules, by the
/// path generator (texts and capture order), by `Variant::moves`, and by the fast engine and
/// the oracle (capture test and successor positions).
fn check(fen: &str, expected: &[Expected]) {
    let p = Variant::Italian.parse_fen(fen).unwrap();
    let game: Game = italian::GAME;
    let mut want: Vec<(String, Vec<u8>)> = expected
        .iter()
        .map(|(m, c)| (m.to_string(), c.to_vec()))
        .collect();
    want.sort();

    // The path generator: every move with its path and the order of the captured pieces.
    let mut got: Vec<(String, Vec<u8>)> = paths::moves(&game, &p)
        .iter()
        .map(|m| {
            let text = if m.captured.is_empty() {
                format!("{}-{}", m.from, m.to())
            } else {
                let mut s = m.from.to_string();
                for t in &m.path {
                    s.push_str(&format!("x{t}"));
                }
                s
            };
            (text, m.captured.clone())
        })
        .collect();
    got.sort();
    assert_eq!(got, want, "{fen}: path generator");

    // Variant::moves (what `egdb moves --rules italian` and the explorer list).
    let mut texts: Vec<String> = Variant::Italian.moves(&p).iter().map(format_move).collect();
    texts.sort();
    let want_texts: Vec<String> = want.iter().map(|(m, _)| m.clone()).collect();
    assert_eq!(texts, want_texts, "{fen}: Variant::moves");

    // Successor positions, by the fast engine and by the oracle.
    let want_after = sorted(expected.iter().map(|(m, c)| after(&p, m, c)).collect());
    let captures = expected.iter().any(|(_, c)| !c.is_empty());
    let mut fast = Vec::new();
    ItalianFast::default().for_each_successor(&p, |q| fast.push(q));
    assert_eq!(sorted(fast), want_after, "{fen}: fast engine successors");
    assert_eq!(
        ItalianFast::default().has_capture(&p),
        captures,
        "{fen}: fast engine capture test"
    );
    let mut slow = Vec::new();
    Italian::default().for_each_successor(&p, |q| slow.push(q));
    assert_eq!(sorted(slow), want_after, "{fen}: oracle successors");
    assert_eq!(
        Italian::default().has_capture(&p),
        captures,
        "{fen}: oracle"
    );
}

/// Most pieces first, before the capture by a king: Black men on 9 and 11, a king on 29;
/// 9 takes 14 and 23 (9x18x27: two pieces), 11 takes 16 (11x20), the king 25 (29x22): one
/// each. Only the capture of two is legal. (English, with free choice, would allow all three.)
#[test]
fn the_most_pieces() {
    check("B:W14,16,23,25:B9,11,K29", &[("9x18x27", &[14, 23])]);
}

/// Equal in number: the king must capture. The man on 9 takes 14 (9x18), the king on 12
/// takes 16 (12x19): one piece each; only the king's capture is legal.
#[test]
fn equal_number_capture_with_the_king() {
    check("B:W14,16:B9,K12", &[("12x19", &[16])]);
}

/// Two pieces each: the man on 9 takes 14 and 23 (9x18x27); the king on 12 takes 16 and then
/// 23 (12x19x26) or 24 (12x19x28). The king's captures are the legal ones, and between them
/// (two men each, no king) the choice is free.
#[test]
fn equal_number_capture_with_the_king_then_free_choice() {
    check(
        "B:W14,16,23,24:B9,K12",
        &[("12x19x26", &[16, 23]), ("12x19x28", &[16, 24])],
    );
}

/// The king on 18 can take the man on 14 (18x9) or the king on 23 (18x27): one piece each,
/// both by a king; it must take the king.
#[test]
fn the_most_kings_one_piece() {
    check("B:W14,K23:BK18", &[("18x27", &[23])]);
}

/// The king on 18: 18x9x2 takes the man on 14 and the king on 6; 18x27x20 takes the men on 23
/// and 24. Two pieces each: the one taking a king.
#[test]
fn the_most_kings_two_pieces() {
    check("B:WK6,14,23,24:BK18", &[("18x9x2", &[14, 6])]);
}

/// The number of pieces comes before their quality: 18x9x2 takes two men (14 and 6), 18x27
/// one king (23); the two men must be taken.
#[test]
fn more_pieces_before_more_kings() {
    check("B:W6,14,K23:BK18", &[("18x9x2", &[14, 6])]);
}

/// The king met first: 18x9x2 takes the man on 14, then the king on 6; 18x27x20 takes the
/// king on 23, then the man on 24. Two pieces and one king each; the capture meeting the king
/// first is the legal one.
#[test]
fn the_king_met_first() {
    check("B:WK6,14,K23,24:BK18", &[("18x27x20", &[23, 24])]);
}

/// The most kings before the king met first: the king on 3 can take 7 (king), 14, 22 (men)
/// by 3x10x17x26, meeting a king at once, or 8 (man), 16, 24 (kings) by 3x12x19x28. Three
/// pieces each; the second takes two kings and is the only legal one.
#[test]
fn the_most_kings_before_the_king_met_first() {
    check("B:WK7,8,14,K16,22,K24:BK3", &[("3x12x19x28", &[8, 16, 24])]);
}

/// Kings met first, compared jump by jump (the reading of "where the king is met first" when
/// both captures meet a king at their first jump): the king on 30 takes king 25, man 17,
/// king 9 (30x21x14x5) or king 26, king 19, man 11 (30x23x16x7). Three pieces, two kings
/// each, a king first in both; the second meets its second king sooner and is the legal one.
#[test]
fn kings_met_first_compared_jump_by_jump() {
    check(
        "B:WK9,11,17,K19,K25,K26:BK30",
        &[("30x23x16x7", &[26, 19, 11])],
    );
}

/// Equal in everything: free choice. The king on 18 takes the man on 14 (18x9) or the man on
/// 23 (18x27).
#[test]
fn equal_in_everything_free_choice() {
    check("B:W14,23:BK18", &[("18x27", &[23]), ("18x9", &[14])]);
}

/// A man may not capture a king. The Black man on 18 has the White king on 22 beside it and
/// 25 empty beyond: no capture; its one move is 18-23 (22 is taken).
#[test]
fn a_man_may_not_capture_a_king() {
    check("B:WK22:B18", &[("18-23", &[])]);
}

/// A man's capture stops before a king: the man on 9 takes 14 and lands on 18, where the
/// White king on 23 (27 empty beyond) may not be taken: 9x18 ends there.
#[test]
fn a_mans_capture_stops_before_a_king() {
    check("B:W14,K23:B9", &[("9x18", &[14])]);
}

/// The same for White's men (Italian Black): the White man on 23 may take the Black man on
/// 19 (23x16) but not the Black king on 18 (14 empty beyond it).
#[test]
fn a_white_man_may_not_capture_a_black_king() {
    check("W:W23:B19,K18", &[("23x16", &[19])]);
    check("W:W23:BK18", &[("23-19", &[])]);
}

/// Men capture forward only: the Black man on 18 with a White man behind it on 14 (9 empty)
/// has no capture; it moves 18-22 or 18-23.
#[test]
fn men_capture_forward_only() {
    check("B:W14:B18", &[("18-22", &[]), ("18-23", &[])]);
}

/// A king may capture a king, and a king captures backward: the Black king on 18 takes the
/// White king on 14 (18x9), backward for Black.
#[test]
fn a_king_captures_a_king_backward() {
    check("B:WK14:BK18", &[("18x9", &[14])]);
}

/// One case written in Italian numbering, as a rule book's diagram would give it:
/// [`the_king_met_first`] is White (our Black) king on Italian 14, Black men on 18 and 12,
/// kings on 26 and 11 (Italian), White to move; the legal move is Italian 14x7x16 (ours
/// 18x27x20).
#[test]
fn italian_numbering_is_the_same_position() {
    let set = |l: &[u8]| l.iter().fold(0u32, |b, &s| b | bit(s));
    let p = from_italian(set(&[14]), set(&[18, 12, 26, 11]), set(&[14, 26, 11]), true);
    assert_eq!(p, Position::from_fen("B:WK6,14,K23,24:BK18").unwrap());
    let ms = Variant::Italian.moves(&p);
    assert_eq!(ms.len(), 1);
    let it = |s: u8| from_italian_square(s).unwrap();
    assert_eq!(
        (
            it(ms[0].from),
            ms[0].path().iter().map(|&s| it(s)).collect::<Vec<_>>()
        ),
        (14, vec![7, 16])
    );
}
