//! Rule-book tests of the flying-king variants (Russian, Brazilian, Spanish, Czech): each
//! position's legal moves are derived here BY HAND from the rule books' text, never taken
//! from what the program prints, and then compared with the program's moves.
//!
//! Rules tested, with their sources:
//!
//! - Russian (Russian draughts federation's code, "Kodeks" 2004, section 1.5, as cited by
//!   R. Halbersma's dctl, `include/dctl/core/rules/russian.hpp`: long-ranged king 1.4.5,
//!   backward jumps of men 1.5.3, crowning in passing 1.5.15): a king that jumps a piece may
//!   land on any empty square beyond it, but when from some of those squares the capture can
//!   go on, it must land on one of those (the landing obligation: a capture, once begun,
//!   must be carried through to the end).
//! - Russian and Brazilian (the same code; the FMJD international rules, whose captures the
//!   Brazilian game plays on 8x8, dctl `international.hpp`): the jumped pieces are removed
//!   only when the whole move is over, so a piece already jumped cannot be jumped again and
//!   blocks the king's line (the "Turkish strike" rule). Brazilian also makes the capture
//!   of the most pieces compulsory.
//! - Spanish (the Iberian classic-draughts rules as dctl `spanish.hpp` cites them,
//!   fpdamas.pt: quantity, then contents precedence): the capture taking the most pieces is
//!   compulsory; among those of equal number, the one taking the most kings.
//! - Czech (Czech draughts federation rules, art. 4.14, dctl `czech.hpp`, "modality
//!   precedence"): when both a king and a man can capture, a capture by a king is compulsory
//!   (whatever the number of pieces); among the king's captures the choice is free.
//!
//! # Board
//! This crate's board (src/rules/paths.rs, "Orientation"; docs/cli.md, `perft`): squares
//! 1-32, row r = (s-1)/4 holds 4r+1..4r+4; the side that moves first in these variants
//! (called White there) is our **Black**, starting on 1-12 and moving toward 32 (crowning on
//! 29-32); our White moves toward 1. The Spanish (and Italian) boards are the mirror image
//! of ours; their square numbers map onto ours only through
//! `checkers_egdb::rules::italian::from_italian_square` (the one documented mapping),
//! used in [`spanish_numbering_is_the_same_position`].
//!
//! Diagrams: `b`/`w` men, `B`/`W` kings, numbers empty dark squares, `.` light squares.
//! Row 0 on top; Black's men move down.
//!
//! ```text
//!  .  1  .  2  .  3  .  4    1-4
//!  5  .  6  .  7  .  8  .    5-8
//!  .  9  . 10  . 11  . 12    9-12
//! 13  . 14  . 15  . 16  .    13-16
//!  . 17  . 18  . 19  . 20    17-20
//! 21  . 22  . 23  . 24  .    21-24
//!  . 25  . 26  . 27  . 28    25-28
//! 29  . 30  . 31  . 32  .    29-32
//! ```
//!
//! Every expected list is checked three ways: the path generator's moves (`rules::paths::moves`
//! with `Variant::game()`, what `egdb moves --rules NAME` lists) as (from, to, captured squares
//! in jump order); the fast engine's successor positions (`with_engine!`, what the tables are
//! built with) against positions made by hand from the expected moves; and the same position
//! turned 180 degrees with the colours swapped (White to move; square s becomes 33-s).

use checkers_egdb::rules::italian::from_italian_square;
use checkers_egdb::rules::paths;
use checkers_egdb::rules::{Rules, Variant};
use checkers_egdb::{with_engine, Color, Position};

/// One expected move: from, to, the captured squares in the order they are jumped.
type Mv = (u8, u8, &'static [u8]);

fn bit(s: u8) -> u32 {
    1 << (s - 1)
}

/// The position after `m`, made by hand: the piece goes from `from` to `to`, the captured
/// pieces leave, a king stays a king, a man ending on its far row is crowned, the other side
/// moves.
fn after(p: &Position, (from, to, cap): (u8, u8, &[u8])) -> Position {
    let gone = cap.iter().fold(0, |b, &s| b | bit(s));
    let (f, t) = (bit(from), bit(to));
    let mut q = *p;
    let far = match p.side {
        Color::Black => {
            q.black = (q.black & !f) | t;
            q.white &= !gone;
            0xF000_0000u32
        }
        Color::White => {
            q.white = (q.white & !f) | t;
            q.black &= !gone;
            0x0000_000F
        }
    };
    let king = p.kings & f != 0 || far & t != 0;
    q.kings &= !(f | gone);
    if king {
        q.kings |= t;
    }
    q.side = p.side.opponent();
    q
}

/// The position turned 180 degrees with the colours swapped (square s -> 33-s).
fn turned(p: &Position) -> Position {
    Position {
        black: p.white.reverse_bits(),
        white: p.black.reverse_bits(),
        kings: p.kings.reverse_bits(),
        side: p.side.opponent(),
    }
}

fn sorted(mut v: Vec<Position>) -> Vec<Position> {
    v.sort_by_key(|q| (q.black, q.white, q.kings, q.side as u8));
    v.dedup();
    v
}

fn path_moves(v: Variant, p: &Position) -> Vec<(u8, u8, Vec<u8>)> {
    let mut got: Vec<(u8, u8, Vec<u8>)> = paths::moves(&v.game(), p)
        .iter()
        .map(|m| (m.from, m.to(), m.captured.clone()))
        .collect();
    got.sort();
    got
}

/// `fen` (our board, Black to move) has exactly the legal moves `expected` under `v`.
fn check(v: Variant, fen: &str, expected: &[Mv]) {
    let p = v.parse_fen(fen).unwrap();
    let mut want: Vec<(u8, u8, Vec<u8>)> = expected
        .iter()
        .map(|&(f, t, c)| (f, t, c.to_vec()))
        .collect();
    want.sort();
    assert_eq!(path_moves(v, &p), want, "{v} {fen}: path generator");

    // Successor positions of the fast engine (the tables' engine).
    let want_after = sorted(expected.iter().map(|&m| after(&p, m)).collect());
    let mut fast = Vec::new();
    with_engine!(v, r => r.for_each_successor(&p, |q| fast.push(q)));
    assert_eq!(
        sorted(fast),
        want_after,
        "{v} {fen}: fast engine successors"
    );

    // The same position seen from the other side: White to move, squares 33-s.
    let q = turned(&p);
    let mut want_turned: Vec<(u8, u8, Vec<u8>)> = want
        .iter()
        .map(|(f, t, c)| (33 - f, 33 - t, c.iter().map(|s| 33 - s).collect()))
        .collect();
    want_turned.sort();
    assert_eq!(
        path_moves(v, &q),
        want_turned,
        "{v} {fen} turned: path generator"
    );
}

/// Russian, landing obligation. Black (Russian White) king on 29; White men on 25, 14, 16.
///
/// ```text
///  .  1  .  2  .  3  .  4
///  5  .  6  .  7  .  8  .
///  .  9  . 10  . 11  . 12
/// 13  .  w  . 15  .  w  .
///  . 17  . 18  . 19  . 20
/// 21  . 22  . 23  . 24  .
///  .  w  . 26  . 27  . 28
///  B  . 30  . 31  . 32  .
/// ```
///
/// The king's only line is 29-25-22-18-15-11-8-4: it jumps 25 and could land on 22, 18, 15,
/// 11, 8 or 4. From 18 it can go on (18-14-9: jump 14, land 9 or 5); from 11 too (11-16-20:
/// jump 16, land 20); from 22 (lines 17-13, 26-31), 15 (10-6-1, 19-24-28), 8 (3, 12) and 4
/// nothing is to be taken. So it must land on 18 or 11. After 14 the king lands on 9 or 5
/// (nothing more from either: 9 sees 6-2, 13, 5; 5 sees 1); after 16 only on 20 (24-27-31
/// empty). Landing on 22, 15, 8 or 4 with one piece taken is illegal.
#[test]
fn russian_king_must_land_where_the_capture_goes_on() {
    check(
        Variant::Russian,
        "B:W14,16,25:BK29",
        &[(29, 9, &[25, 14]), (29, 5, &[25, 14]), (29, 20, &[25, 16])],
    );
}

/// The Turkish strike: Black king on 10; White men on 15, 27, 26 and 11.
///
/// ```text
///  .  1  .  2  .  3  .  4
///  5  .  6  .  7  .  8  .
///  .  9  .  B  .  w  . 12
/// 13  . 14  .  w  . 16  .
///  . 17  . 18  . 19  . 20
/// 21  . 22  . 23  . 24  .
///  . 25  .  w  .  w  . 28
/// 29  . 30  . 31  . 32  .
/// ```
///
/// The king's only first jump is 15 (line 10-15-19-24-28; lines 7-3, 6-1, 14-17-21 are
/// empty). Beyond 15: from 19 it can go on (19-23-26-30: jump 26), from 24 too (24-27-31:
/// jump 27), from 28 not (only 32). So it lands on 19 or 24.
/// - 19: jump 26, land 30 (the edge); from 30 the line 25-21 is empty: 10x..x30 takes 15, 26.
/// - 24: jump 27, land 31; from 31 jump 26 (line 31-26-22-17-13), land 22, 17 or 13. From 22
///   the line 22-18-15-11-8 would reach the man on 11 with 8 empty behind it, but 15, jumped
///   already, is still on the board until the move ends: it blocks the line and cannot be
///   jumped again. Nothing else is to be taken from 22 (17-13, 25-29), 17 (14-10-7-3, 10 being
///   the king's start square, now empty; 13; 21) or 13 (9-6-2), so the capture ends on any of
///   the three, taking 15, 27, 26. (Were jumped pieces removed at once, the king would have
///   to land on 22 and go on to take 11, ending on 8 or 4.)
///
/// Russian: free choice between the captures: all four. Brazilian: the most pieces: the
/// three captures of three.
#[test]
fn turkish_strike_jumped_piece_blocks_the_line() {
    let three: [Mv; 3] = [
        (10, 22, &[15, 27, 26]),
        (10, 17, &[15, 27, 26]),
        (10, 13, &[15, 27, 26]),
    ];
    let mut russian = three.to_vec();
    russian.push((10, 30, &[15, 26]));
    check(Variant::Russian, "B:W11,15,26,27:BK10", &russian);
    check(Variant::Brazilian, "B:W11,15,26,27:BK10", &three);
}

/// Spanish, equal number: the most kings. Black king on 15; a White man on 10, a White king
/// on 19.
///
/// ```text
///  .  1  .  2  .  3  .  4
///  5  .  6  .  7  .  8  .
///  .  9  .  w  . 11  . 12
/// 13  . 14  .  B  . 16  .
///  . 17  . 18  .  W  . 20
/// 21  . 22  . 23  . 24  .
///  . 25  . 26  . 27  . 28
/// 29  . 30  . 31  . 32  .
/// ```
///
/// The king can take the man (line 15-10-6-1: land 6 or 1) or the king (15-19-24-28: land 24
/// or 28); one piece each, and no capture goes on (the only other piece lies behind the one
/// just jumped, which blocks). Equal in number, the capture of the king is compulsory:
/// 15x24 and 15x28. (Russian, free choice, would also allow 15x6 and 15x1.)
#[test]
fn spanish_equal_number_takes_the_king() {
    check(
        Variant::Spanish,
        "B:W10,K19:BK15",
        &[(15, 24, &[19]), (15, 28, &[19])],
    );
    check(
        Variant::Russian,
        "B:W10,K19:BK15",
        &[
            (15, 24, &[19]),
            (15, 28, &[19]),
            (15, 6, &[10]),
            (15, 1, &[10]),
        ],
    );
}

/// Spanish, the number comes first: Black king on 15; White men on 10 and 9, a White king on
/// 19.
///
/// ```text
///  .  1  .  2  .  3  .  4
///  5  .  6  .  7  .  8  .
///  .  w  .  w  . 11  . 12
/// 13  . 14  .  B  . 16  .
///  . 17  . 18  .  W  . 20
/// 21  . 22  . 23  . 24  .
///  . 25  . 26  . 27  . 28
/// 29  . 30  . 31  . 32  .
/// ```
///
/// 15 jumps 10 and must land on 6 (from 6 the line 6-9-13 takes 9; from 1 only 5 is seen),
/// then jumps 9 to 13 (nothing more from 13: 17-22-26-31): two men. Or 15 takes the king on
/// 19 (land 24 or 28): one piece. Two men before one king: only 15x6x13.
#[test]
fn spanish_more_pieces_before_more_kings() {
    check(Variant::Spanish, "B:W9,10,K19:BK15", &[(15, 13, &[10, 9])]);
}

/// The Spanish board is the mirror image of ours: the position of
/// [`spanish_equal_number_takes_the_king`] written in Spanish numbering (White, who moves
/// first, has a king on 19; Black a man on 22 and a king on 15; White takes the king on 15
/// landing on 12 or 8), mapped with `from_italian_square`, is our `B:W10,K19:BK15` with the
/// moves 15x24 and 15x28.
#[test]
fn spanish_numbering_is_the_same_position() {
    let m = |s: u8| from_italian_square(s).unwrap();
    // Spanish White (first to move) = our Black.
    let p = Position {
        black: bit(m(19)),
        white: bit(m(22)) | bit(m(15)),
        kings: bit(m(19)) | bit(m(15)),
        side: Color::Black,
    };
    assert_eq!(p, Variant::Spanish.parse_fen("B:W10,K19:BK15").unwrap());
    let want: Vec<(u8, u8, Vec<u8>)> = {
        let mut v = vec![(m(19), m(12), vec![m(15)]), (m(19), m(8), vec![m(15)])];
        v.sort();
        v
    };
    assert_eq!(path_moves(Variant::Spanish, &p), want);
}

/// Czech: a capture by a king comes first. Black man on 1, Black king on 29; White men on 6
/// and 15.
///
/// ```text
///  .  b  .  2  .  3  .  4
///  5  .  w  .  7  .  8  .
///  .  9  . 10  . 11  . 12
/// 13  . 14  .  w  . 16  .
///  . 17  . 18  . 19  . 20
/// 21  . 22  . 23  . 24  .
///  . 25  . 26  . 27  . 28
///  B  . 30  . 31  . 32  .
/// ```
///
/// The man (men capture forward only, toward 32) takes 6 landing on 10, then 15 landing on
/// 19: 1x10x19, two pieces (nothing more from 19: 23, 24 empty). The king's line
/// 29-25-22-18-15-11-8-4 reaches 15: it lands on 11, 8 or 4 and nothing more can be taken
/// (11: 7-2, 16-20; 8: 3, 12), one piece. Czech: the king must capture, though the man would
/// take more: 29x11, 29x8, 29x4. Spanish (the most pieces): only 1x10x19.
#[test]
fn czech_king_capture_before_man_capture() {
    check(
        Variant::Czech,
        "B:W6,15:B1,K29",
        &[(29, 11, &[15]), (29, 8, &[15]), (29, 4, &[15])],
    );
    check(Variant::Spanish, "B:W6,15:B1,K29", &[(1, 19, &[6, 15])]);
}
