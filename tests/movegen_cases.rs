//! Move-generation cases from the reference facts (section 4, "Faults other projects hit"):
//! each position with its exact move set.
use std::collections::BTreeSet;

use checkers_egdb::{format_move, Color, Position};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn move_set(p: &Position) -> BTreeSet<String> {
    p.moves().iter().map(format_move).collect()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Exact move sets (capture paths listed separately).
const CASES: &[(&str, &[&str])] = &[
    // Second jump lands on the crowning row.
    ("W:W17:B7,14", &["17x10x3"]),
    // A man crowned by a jump stops there (no 10x3x12).
    ("W:W10:B7,8", &["10x3"]),
    // Kings are short-range: no flying moves or captures.
    ("W:WK1:B10", &["1-5", "1-6"]),
    // Captures are compulsory for kings too and must be completed.
    ("W:W30,K22:B11,18", &["22x15x8"]),
    ("B:W14,22:B1,9", &["9x18x25"]),
    // No jump onto an occupied square or over own pieces.
    ("W:W18,22:B13,17", &["18-14", "18-15"]),
    // Crowns on 32 at the end of a triple jump.
    ("B:W11,12,13,19,22,27,28,30:B2,3,6,7,10", &["7x16x23x32"]),
    // The king takes all four men either way round; the start square counts as empty.
    ("W:WK6:B9,10,17,18", &["6x13x22x15x6", "6x15x22x13x6"]),
    // White has no legal move (and so loses).
    ("W:W29:B22,25", &[]),
    // Start position.
    (
        "B:W21-32:B1-12",
        &["9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"],
    ),
];

#[test]
fn reference_move_sets() {
    for &(fen, want) in CASES {
        let p = pos(fen);
        assert_eq!(move_set(&p), set(want), "{fen}");
        assert_eq!(p.moves().len(), want.len(), "{fen}: no duplicates");
        assert_eq!(p.count_moves(), want.len() as u64, "{fen}: count_moves");
        assert_eq!(
            checkers_egdb::perft(&p, 1, false),
            want.len() as u64,
            "{fen}: perft 1"
        );
    }
}

#[test]
fn crowning_moves_are_flagged() {
    let p = pos("B:W11,12,13,19,22,27,28,30:B2,3,6,7,10");
    let m = p.moves()[0];
    assert!(m.crowns);
    let q = p.apply(&m);
    assert_eq!(q.to_fen(), "W:W12,13,22,28,30:B2,3,6,10,K32");
    let p = pos("W:W10:B7,8");
    let q = p.apply(&p.moves()[0]);
    assert_eq!(q.to_fen(), "B:WK3:B8");
}

#[test]
fn capture_leaves_white_without_pieces() {
    let p = pos("B:W14,22:B1,9");
    let q = p.apply(&p.moves()[0]);
    assert_eq!(q.to_fen(), "W:W:B1,25");
    assert_eq!(q.side, Color::White);
    assert!(q.moves().is_empty());
    assert!(q.successors().is_empty());
}

#[test]
fn king_ring_paths_merge_into_one_successor() {
    let p = pos("W:WK6:B9,10,17,18");
    assert_eq!(p.moves().len(), 2);
    assert_eq!(p.unique_moves().len(), 1);
    assert_eq!(p.count_unique_moves(), 1);
    let succ = p.successors();
    assert_eq!(succ.len(), 1);
    assert_eq!(succ[0].to_fen(), "B:WK6:B");
    let mut fast = Vec::new();
    p.for_each_successor(|q| fast.push(q));
    assert_eq!(fast, succ);
    assert_eq!(checkers_egdb::perft(&p, 1, true), 1);
    assert_eq!(checkers_egdb::perft(&p, 1, false), 2);
}

#[test]
fn no_move_position_has_no_successors() {
    let p = pos("W:W29:B22,25");
    assert!(p.successors().is_empty());
    let mut n = 0;
    p.for_each_successor(|_| n += 1);
    assert_eq!(n, 0);
    // Black to move with no pieces also has no move.
    assert!(pos("B:W32:B").moves().is_empty());
}
