//! Move generation of the variants' path generator (`rules::paths`) on hand-made positions
//! whose legal moves follow from the rules' text alone, and published perft counts from
//! positions other than the start.
//!
//! Italian positions are written in Italian numbering (FID rules, art. 2.4: squares 1-32 from
//! the top left of the diagram, Black on 1-12, White moves first toward square 1) and mapped
//! onto this crate's board by `rules::italian::from_italian` / `from_italian_square`, the
//! one documented mapping.

use checkers_egdb::rules::italian::{from_italian, from_italian_square};
use checkers_egdb::rules::paths::{self, moves, Game};
use checkers_egdb::rules::Variant;
use checkers_egdb::{Color, Position};

/// A bitboard of Italian squares.
fn it_squares(list: &[u8]) -> u32 {
    list.iter().fold(0, |b, &s| b | 1 << (s - 1))
}

/// An Italian position: White men and kings, Black men and kings (Italian squares); White
/// to move unless `black_to_move`.
fn italian(wm: &[u8], wk: &[u8], bm: &[u8], bk: &[u8], black_to_move: bool) -> Position {
    let white = it_squares(wm) | it_squares(wk);
    let black = it_squares(bm) | it_squares(bk);
    let p = from_italian(
        white,
        black,
        it_squares(wk) | it_squares(bk),
        !black_to_move,
    );
    p.validate().unwrap();
    p
}

/// The legal moves as (from, landing squares), in Italian numbering, sorted.
fn italian_moves(p: &Position) -> Vec<(u8, Vec<u8>)> {
    let to_it = |s: u8| from_italian_square(s).unwrap(); // its own inverse
    let mut v: Vec<(u8, Vec<u8>)> = moves(&Variant::Italian.game(), p)
        .into_iter()
        .map(|m| (to_it(m.from), m.path.iter().map(|&s| to_it(s)).collect()))
        .collect();
    v.sort();
    v
}

fn mv(from: u8, path: &[u8]) -> (u8, Vec<u8>) {
    (from, path.to_vec())
}

#[test]
fn italian_mapping_is_a_vertical_flip_onto_our_board() {
    // Italian 1 (top-left corner, Black's back rank) is our 29; Italian 32 (bottom-right,
    // White's back rank) is our 4; rows are kept in order.
    assert_eq!(from_italian_square(1), Some(29));
    assert_eq!(from_italian_square(32), Some(4));
    assert_eq!(from_italian_square(22), Some(10));
    assert_eq!(from_italian_square(0), None);
    assert_eq!(from_italian_square(33), None);
    for s in 1..=32 {
        assert_eq!(
            from_italian_square(from_italian_square(s).unwrap()),
            Some(s)
        );
    }
    // The Italian start (Black 1-12, White 21-32, White to move) is our start position.
    let start = from_italian(
        it_squares(&(21..=32).collect::<Vec<_>>()),
        it_squares(&(1..=12).collect::<Vec<_>>()),
        0,
        true,
    );
    assert_eq!(start, Position::START);
    assert_eq!(start.side, Color::Black);
}

/// Art. 5.3 b): a man takes men only, never kings.
#[test]
fn italian_man_may_not_capture_a_king() {
    // White man 22; Black king 18 (13 behind it empty) and Black man 19 (15 empty).
    let p = italian(&[22], &[], &[19], &[18], false);
    assert_eq!(italian_moves(&p), vec![mv(22, &[15])]);
    // A man's capture stops before a king: 22x15, then the king on 11 cannot be taken.
    let p = italian(&[22], &[], &[19], &[11], false);
    assert_eq!(italian_moves(&p), vec![mv(22, &[15])]);
    // Only a king next to the man: no capture, the man moves.
    let p = italian(&[22], &[], &[], &[18], false);
    assert_eq!(italian_moves(&p), vec![mv(22, &[19])]);
}

/// Art. 6 (precedence) 1: the capture taking the most pieces.
#[test]
fn italian_most_pieces_first() {
    // 22x13 takes one (18); 22x15x6 takes two (19, 11).
    let p = italian(&[22], &[], &[18, 19, 11], &[], false);
    assert_eq!(italian_moves(&p), vec![mv(22, &[15, 6])]);
    // Two pieces by a man beat one piece by a king (31x24 takes 28).
    let p = italian(&[22], &[31], &[19, 11, 28], &[], false);
    assert_eq!(italian_moves(&p), vec![mv(22, &[15, 6])]);
}

/// Art. 6, 2: with equal numbers, the king captures rather than the man.
#[test]
fn italian_king_captures_before_man() {
    // Man 22x13 (takes 18) or king 30x23 (takes 27): one piece each.
    let p = italian(&[22], &[30], &[18, 27], &[], false);
    assert_eq!(italian_moves(&p), vec![mv(30, &[23])]);
}

/// Art. 6, 3: a king takes the most kings.
#[test]
fn italian_most_kings_taken() {
    // King 22 takes the man on 18 (to 13) or the king on 19 (to 15).
    let p = italian(&[], &[22], &[18], &[19], false);
    assert_eq!(italian_moves(&p), vec![mv(22, &[15])]);
}

/// Art. 6, 4: with equal kings, the capture that meets a king first.
#[test]
fn italian_king_met_first() {
    // 22x13x6 takes the king on 18 then the man on 10; 22x15x8 takes the man on 19 then
    // the king on 12: two pieces, one king each.
    let p = italian(&[], &[22], &[10, 19], &[18, 12], false);
    assert_eq!(italian_moves(&p), vec![mv(22, &[13, 6])]);
}

/// Everything equal: any capture may be chosen.
#[test]
fn italian_free_choice_when_equal() {
    let p = italian(&[], &[22], &[18, 19], &[], false);
    assert_eq!(italian_moves(&p), vec![mv(22, &[13]), mv(22, &[15])]);
}

/// A man crowned by a capture stops there (and a man never captures backward): Black's man
/// on 23 (moving toward Italian 32) takes 27 and lands on 30, Black's crowning row; a king
/// on 30 could go on over 26 to 21, the new king may not.
#[test]
fn italian_crowning_ends_the_capture() {
    let p = italian(&[27, 26], &[], &[23], &[], true);
    let ms = moves(&Variant::Italian.game(), &p);
    assert_eq!(ms.len(), 1);
    assert_eq!(italian_moves(&p), vec![mv(23, &[30])]);
    assert!(ms[0].crowns);
    assert_eq!(ms[0].captured.len(), 1);
}

fn perft_from(game: &Game, fen_it: (&[u8], &[u8], &[u8], &[u8], bool), counts: &[u64]) {
    let (wm, wk, bm, bk, black) = fen_it;
    let p = italian(wm, wk, bm, bk, black);
    for (d, &n) in counts.iter().enumerate() {
        assert_eq!(
            paths::perft(game, &p, d as u32 + 1, false),
            n,
            "depth {}",
            d + 1
        );
    }
}

/// Published perft counts (capture paths apart) of three Italian positions by J. Gilbert, in
/// R. Halbersma's "Perft for all recognized draughts variants" thread, FMJD forum, 2010
/// (http://damforum.nl/bb3/viewtopic.php?f=53&t=2822; as collected in the dctl library's
/// tests, test/src/algo/traversal/italian/gilbert.cpp; numbers only). They exercise every
/// rule of precedence, and the mapping of Italian squares onto ours.
#[test]
fn italian_gilbert_positions() {
    let g = Variant::Italian.game();
    // "W:W30,26,27,22,23,24,17,18,20:B14,15,16,9,11,5,6,1,3"
    perft_from(
        &g,
        (
            &[30, 26, 27, 22, 23, 24, 17, 18, 20],
            &[],
            &[14, 15, 16, 9, 11, 5, 6, 1, 3],
            &[],
            false,
        ),
        &[5, 13, 42, 107, 360, 1_099, 3_736, 12_495, 43_686, 164_177],
    );
    // "B:W30,21,22,17,20,K6:B25,28,9,5,1,3"
    perft_from(
        &g,
        (
            &[30, 21, 22, 17, 20],
            &[6],
            &[25, 28, 9, 5, 1, 3],
            &[],
            true,
        ),
        &[6, 47, 271, 1_916, 10_810, 73_137, 389_809],
    );
    // "W:WK27,K28,17,20,9,K12,8:B21,24,K19,K13,14,K11,4"
    perft_from(
        &g,
        (
            &[17, 20, 9, 8],
            &[27, 28, 12],
            &[21, 24, 14, 4],
            &[19, 13, 11],
            false,
        ),
        &[13, 112, 828, 6_756, 46_241, 368_908],
    );
}

/// The moves as (from, landing squares, captured set, crowns), on our board, sorted.
fn our_moves(v: Variant, p: &Position) -> Vec<(u8, Vec<u8>, u32, bool)> {
    let mut out: Vec<_> = moves(&v.game(), p)
        .into_iter()
        .map(|m| (m.from, m.path.clone(), m.captured_set(), m.crowns))
        .collect();
    out.sort();
    out
}

fn set(list: &[u8]) -> u32 {
    it_squares(list) // the same bit layout: bit i = square i+1
}

/// A man reaching the crowning row during a capture (our board: Black's man on 22 jumps
/// White's man on 26 and lands on 31, Black's crowning row). Russian: it is crowned at once
/// and goes on as a flying king, along 31-27-24-20 over White's man on 24 to 20. English and
/// Italian: crowned, the move ends. Brazilian and Pool: it stays a man while it can go on (it
/// cannot: a man jumps only adjacent pieces) and is crowned where the move ends.
#[test]
fn crowning_during_a_capture() {
    let p = Position::from_fen("B:W26,24:B22").unwrap();
    assert_eq!(
        our_moves(Variant::Russian, &p),
        vec![(22, vec![31, 20], set(&[26, 24]), true)]
    );
    for v in [
        Variant::English,
        Variant::Italian,
        Variant::Brazilian,
        Variant::Pool,
    ] {
        assert_eq!(
            our_moves(v, &p),
            vec![(22, vec![31], set(&[26]), true)],
            "{v}"
        );
    }
}

/// Passing through the crowning row: after 22x31 (taking 26) White's man on 27 is next to
/// 31 with 24 empty beyond. Brazilian and Pool: the man goes on backward as a man, 31x24,
/// and is not crowned (the move ends on 24). Russian: a king at once, it flies over 27 and
/// may land on 24 or 20. English: crowned on 31, the move ends.
#[test]
fn passing_through_the_crowning_row() {
    let p = Position::from_fen("B:W26,27:B22").unwrap();
    for v in [Variant::Brazilian, Variant::Pool] {
        assert_eq!(
            our_moves(v, &p),
            vec![(22, vec![31, 24], set(&[26, 27]), false)],
            "{v}"
        );
    }
    assert_eq!(
        our_moves(Variant::Russian, &p),
        vec![
            (22, vec![31, 20], set(&[26, 27]), true),
            (22, vec![31, 24], set(&[26, 27]), true),
        ]
    );
    assert_eq!(
        our_moves(Variant::English, &p),
        vec![(22, vec![31], set(&[26]), true)]
    );
}

/// The path generator under English rules and the English fast engine written earlier
/// (`rules::English`, itself checked against perft and the crate's slow oracle) give the same
/// successors over the first plies from the start and from
/// a king position, and the same has-a-capture and has-a-quiet-move answers.
#[test]
fn english_paths_agree_with_the_english_engine() {
    use checkers_egdb::rules::paths::Paths;
    use checkers_egdb::rules::English as Oracle;
    use checkers_egdb::rules::Rules;
    let paths = Paths::<1>;
    let mut frontier = vec![
        Position::START,
        Position::from_fen("W:WK6:B9,10,17,18").unwrap(),
        Position::from_fen("W:WK14,K22:BK18,K19,K26,10").unwrap(),
    ];
    for _ in 0..4 {
        let mut next = Vec::new();
        for p in &frontier {
            let mut a = Vec::new();
            let mut b = Vec::new();
            paths.for_each_successor(p, |q| a.push(q));
            Oracle.for_each_successor(p, |q| b.push(q));
            a.sort_by_key(|q| (q.black, q.white, q.kings, q.side));
            b.sort_by_key(|q| (q.black, q.white, q.kings, q.side));
            assert_eq!(a, b, "{}", p.to_fen());
            assert_eq!(paths.has_capture(p), Oracle.has_capture(p));
            assert_eq!(paths.has_quiet_move(p), Oracle.has_quiet_move(p));
            next.extend(a);
        }
        next.sort_by_key(|q| (q.black, q.white, q.kings, q.side));
        next.dedup();
        frontier = next;
    }
}
