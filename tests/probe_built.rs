//! Probing tables made by `egdb build` (the real builder): at most 3 pieces against the naive
//! solver; published values; and (ignored by default, ~1 minute on 2 cores) every position with
//! at most 4 pieces against a one-ply minimax over the probed successors.

mod probe_common;

use checkers_egdb::rules::{English, Rules};
use checkers_egdb::{Position, Tablebase, Wld};
use probe_common::*;
use rayon::prelude::*;
use std::path::Path;
use std::process::Command;

fn build(dir: &Path, pieces: u32) {
    let out = Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(["build", "--quiet", "--pieces", &pieces.to_string(), "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Value by one ply of minimax over probed successors (no move = loss).
fn one_ply(tb: &Tablebase, p: &Position) -> Wld {
    let succ = p.successors();
    if succ.is_empty() {
        assert!(!English.has_quiet_move(p));
        return Wld::Loss;
    }
    succ.iter()
        .map(|s| tb.probe_wld(s).unwrap().negate())
        .max()
        .unwrap()
}

#[test]
fn built_tables_up_to_3_pieces_match_naive_solver() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), 3);
    let tb = Tablebase::open(d.path()).unwrap();
    let naive = naive_values(3);
    let bad: Vec<String> = naive
        .par_iter()
        .filter(|(p, v)| tb.probe_wld(p) != Ok(**v))
        .map(|(p, v)| format!("{} want {v} got {:?}", p.to_fen(), tb.probe_wld(p)))
        .collect();
    assert!(
        bad.is_empty(),
        "{} mismatches, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

#[test]
#[ignore = "builds 4-piece tables and probes 14 million positions; run with --ignored"]
fn built_tables_up_to_4_pieces_are_minimax_consistent() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), 4);
    let tb = Tablebase::open(d.path()).unwrap();
    for (f, want) in [
        ("W:WK19,K23:BK28,12", Wld::Win),
        ("B:WK19,K23:BK28,12", Wld::Draw),
        ("W:WK32:BK26", Wld::Win),
        ("B:WK32:BK26", Wld::Draw),
        ("W:W5:BK2", Wld::Win),
        ("W:WK29:BK25", Wld::Win),
        ("B:WK29:BK25", Wld::Win),
        ("W:WK4:BK12", Wld::Loss),
    ] {
        assert_eq!(
            tb.probe_wld(&Position::from_fen(f).unwrap()),
            Ok(want),
            "{f}"
        );
    }
    let all = all_positions(4);
    let bad = all
        .par_iter()
        .filter(|p| tb.probe_wld(p).unwrap() != one_ply(&tb, p))
        .count();
    assert_eq!(bad, 0);
}
