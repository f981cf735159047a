//! Perfect play under the variants' rules (issue 34): `play::{scored_moves, line}` through
//! tablebases of Russian, Brazilian, Italian and giveaway tables, and `egdb moves` /
//! `egdb line` / `egdb moves --values` with `--rules`.
//!
//! What the values are checked against, decided outside the code under test:
//! - a forward solver written here (no slices, no index, no un-moves, no files): every
//!   position of at most 3 pieces, its successors from the variant's slow path generator
//!   (`rules::paths::moves` + `apply`), values by a forward fixpoint from the terminal rule (no
//!   move: a loss, a win in giveaway) and the distance to conversion level by level from its
//!   definition. Each scored move's value and distance, the best move, and every step of a
//!   perfect line are compared with it;
//! - rule-book facts: a Russian man crowned during a capture goes on capturing as a king
//!   (`22x31x20`), a Brazilian or English one stops (`22x31`); Brazilian majority capture
//!   (`14x23x32` only, where Russian may also take one piece with `14x21`); an Italian man may
//!   not capture a king; in giveaway a side without a move (or without pieces) wins, so a
//!   won giveaway line ends with the winner to move and no move.

#[path = "probe_common/mod.rs"]
mod probe_common;

use checkers_egdb::rules::paths::{apply, moves, Game};
use checkers_egdb::rules::{Rules, Variant};
use checkers_egdb::{build, line, scored_moves, BuildOptions, Dtc, LineEnd, Metric};
use checkers_egdb::{AnyTablebase, Position, Tablebase, Wld};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// Value and distance to conversion of every position of `all` under `game`, solved forward
/// (see the module docs).
fn forward(game: &Game, all: &[Position]) -> HashMap<Position, Dtc> {
    let id: HashMap<Position, usize> = all.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    // (successor index, conversion: a capture or a man's move)
    let succ: Vec<Vec<(usize, bool)>> = all
        .par_iter()
        .map(|p| {
            moves(game, p)
                .iter()
                .map(|m| {
                    let man = p.kings & (1 << (m.from - 1)) == 0;
                    (id[&apply(p, m)], man || !m.captured.is_empty())
                })
                .collect()
        })
        .collect();
    let mut value: Vec<Option<Wld>> = succ
        .iter()
        .map(|s| s.is_empty().then_some(game.no_move))
        .collect();
    loop {
        let mut changed = false;
        for i in 0..all.len() {
            if value[i].is_some() {
                continue;
            }
            let s = &succ[i];
            if s.iter().any(|&(j, _)| value[j] == Some(Wld::Loss)) {
                value[i] = Some(Wld::Win);
                changed = true;
            } else if s.iter().all(|&(j, _)| value[j] == Some(Wld::Win)) {
                value[i] = Some(Wld::Loss);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let value: Vec<Wld> = value.into_iter().map(|v| v.unwrap_or(Wld::Draw)).collect();
    // DTC: a win the fastest move to a lost position, a loss the slowest move; a conversion
    // counts 1, another move 1 + the distance after it; no move 0.
    let mut dtc: Vec<Option<u32>> = succ.iter().map(|s| s.is_empty().then_some(0)).collect();
    let mut k = 1u32;
    loop {
        let d = |(j, conv): (usize, bool), dtc: &[Option<u32>]| -> Option<u32> {
            if conv {
                Some(1)
            } else {
                dtc[j].filter(|&v| v < k).map(|v| v + 1)
            }
        };
        let found: Vec<usize> = (0..all.len())
            .filter(|&i| {
                dtc[i].is_none()
                    && match value[i] {
                        Wld::Win => succ[i]
                            .iter()
                            .filter(|&&(j, _)| value[j] == Wld::Loss)
                            .any(|&e| d(e, &dtc) == Some(k)),
                        Wld::Loss => {
                            let ds: Option<Vec<u32>> =
                                succ[i].iter().map(|&e| d(e, &dtc)).collect();
                            ds.is_some_and(|ds| ds.into_iter().max() == Some(k))
                        }
                        Wld::Draw => false,
                    }
            })
            .collect();
        if found.is_empty() && k >= 2 {
            break;
        }
        for i in found {
            dtc[i] = Some(k);
        }
        k += 1;
    }
    all.iter()
        .enumerate()
        .map(|(i, p)| {
            let v = match (value[i], dtc[i]) {
                (Wld::Win, Some(n)) => Dtc::Win(n),
                (Wld::Loss, Some(n)) => Dtc::Loss(n),
                (Wld::Draw, None) => Dtc::Draw,
                other => panic!("forward solver: {} {other:?}", p.to_fen()),
            };
            (*p, v)
        })
        .collect()
}

/// Tables of `variant` of at most `n` pieces with distance files, in a fresh directory.
fn tables(variant: Variant, n: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut o = BuildOptions::new(dir.path(), n);
    o.rules = variant;
    o.dtc = true;
    build(&o).unwrap();
    dir
}

/// Whether the side to move of `p` has a legal move under `game` (the path generator).
fn has_move(game: &Game, p: &Position) -> bool {
    !moves(game, p).is_empty()
}

/// `scored_moves` and `line` of the variant's tablebase against the forward solver, on a
/// sample of the positions of at most 3 pieces.
fn play_matches_forward<R: Rules>(variant: Variant, rules: R) {
    let dir = tables(variant, 3);
    let tb = Tablebase::builder(dir.path()).rules(rules).open().unwrap();
    let game = variant.game();
    let all = probe_common::all_positions(3);
    let fw = forward(&game, &all);
    let bad: Vec<String> = all
        .par_iter()
        .enumerate()
        .filter(|(i, _)| i % 17 == 0)
        .filter_map(|(_, p)| {
            let ms = scored_moves(&tb, p, Metric::Dtc).unwrap();
            // Every move: the position after it as the solver has it, and the move's value.
            if ms.len() != {
                let mut set: Vec<Position> = moves(&game, p).iter().map(|m| apply(p, m)).collect();
                set.sort_by_key(|q| (q.black, q.white, q.kings));
                set.dedup();
                set.len()
            } {
                return Some(format!("{} {variant}: {} moves", p.to_fen(), ms.len()));
            }
            for m in &ms {
                let want_after = fw[&m.after];
                let want = match (want_after, m.conversion) {
                    (Dtc::Draw, _) => Dtc::Draw,
                    (Dtc::Loss(_), true) => Dtc::Win(1),
                    (Dtc::Win(_), true) => Dtc::Loss(1),
                    (Dtc::Loss(n), false) => Dtc::Win(n + 1),
                    (Dtc::Win(n), false) => Dtc::Loss(n + 1),
                };
                if m.after_value != want_after || m.value != want {
                    return Some(format!(
                        "{} {variant}: move {} {:?}/{:?}, solver {want:?}/{want_after:?}",
                        p.to_fen(),
                        m.mv,
                        m.value,
                        m.after_value
                    ));
                }
            }
            // The best move has the position's own value; none: the terminal rule.
            let own = ms.first().map_or(
                if game.no_move == Wld::Win {
                    Dtc::Win(0)
                } else {
                    Dtc::Loss(0)
                },
                |m| m.value,
            );
            (own != fw[p])
                .then(|| format!("{} {variant}: best {own:?}, solver {:?}", p.to_fen(), fw[p]))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{} differences, first {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );

    // Perfect lines from decided positions: each step's value as the solver has it, the end a
    // side to move without a move, the winner the start's.
    let mut lines = 0;
    for p in all.iter().step_by(211) {
        let start = fw[p];
        if start == Dtc::Draw {
            continue;
        }
        lines += 1;
        let l = line(&tb, p, Metric::Dtc, 500).unwrap();
        assert_eq!(l.end, LineEnd::NoMoves, "{} {variant}", p.to_fen());
        let last = l.moves.last().map_or(*p, |m| m.after);
        assert!(!has_move(&game, &last), "{} {variant}", p.to_fen());
        for m in &l.moves {
            assert_eq!(m.after_value, fw[&m.after], "{} {variant}", p.to_fen());
        }
        // The side to move at the end has the terminal rule's value; the start's winner wins.
        let start_winner = if start.wld() == Wld::Win {
            p.side
        } else {
            p.side.opponent()
        };
        let end_winner = if game.no_move == Wld::Win {
            last.side
        } else {
            last.side.opponent()
        };
        assert_eq!(start_winner, end_winner, "{} {variant}", p.to_fen());
        // Within a slice the distance falls by one each ply: the first conversion comes
        // exactly at the start's DTC.
        let first_conv = l
            .moves
            .iter()
            .position(|m| m.conversion)
            .map(|i| i as u32 + 1);
        assert_eq!(
            first_conv.or(Some(l.moves.len() as u32)),
            start.plies(),
            "{} {variant}",
            p.to_fen()
        );
    }
    assert!(lines > 10, "{variant}: only {lines} lines");
}

#[test]
fn russian_play_matches_forward_solver() {
    play_matches_forward(
        Variant::Russian,
        checkers_egdb::rules::engine::Fast::<{ checkers_egdb::rules::russian::ID }>,
    );
}

#[test]
fn brazilian_play_matches_forward_solver() {
    play_matches_forward(
        Variant::Brazilian,
        checkers_egdb::rules::engine::Fast::<{ checkers_egdb::rules::brazilian::ID }>,
    );
}

#[test]
fn italian_play_matches_forward_solver() {
    play_matches_forward(
        Variant::Italian,
        checkers_egdb::rules::engine::Fast::<{ checkers_egdb::rules::italian::ID }>,
    );
}

#[test]
fn giveaway_play_matches_forward_solver() {
    play_matches_forward(Variant::Giveaway, checkers_egdb::rules::Giveaway);
}

fn egdb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(args)
        .output()
        .unwrap()
}

fn out(args: &[&str]) -> String {
    let o = egdb(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn lines_of(s: &str) -> Vec<&str> {
    s.lines().collect()
}

/// Rule-book facts of the variants' moves through `egdb moves --rules` (no tables needed).
#[test]
fn moves_follow_the_rule_books() {
    // A man reaching the crowning row during a capture: Russian crowns it at once and it goes
    // on capturing as a (flying) king; English crowning ends the move; Brazilian crowns only
    // where the move ends, and as a man it has nothing more to take.
    let crown = "B:W24,26:B22";
    assert_eq!(
        lines_of(&out(&["moves", "--rules", "russian", crown])),
        ["22x31x20"]
    );
    assert_eq!(
        lines_of(&out(&["moves", "--rules", "english", crown])),
        ["22x31"]
    );
    assert_eq!(
        lines_of(&out(&["moves", "--rules", "brazilian", crown])),
        ["22x31"]
    );
    assert_eq!(lines_of(&out(&["moves", crown])), ["22x31"]); // default english
                                                              // Majority capture: Brazilian must take two pieces; Russian (free choice) and English may
                                                              // take one.
    let major = "B:W17,18,27:B14";
    assert_eq!(
        lines_of(&out(&["moves", "--rules", "brazilian", major])),
        ["14x23x32"]
    );
    assert_eq!(
        lines_of(&out(&["moves", "--rules", "russian", major])),
        ["14x21", "14x23x32"]
    );
    assert_eq!(
        lines_of(&out(&["moves", "--rules", "english", major])),
        ["14x21", "14x23x32"]
    );
    // An Italian man may not capture a king: only its quiet move is left.
    assert_eq!(
        lines_of(&out(&["moves", "--rules", "italian", "B:WK18:B14"])),
        ["14-17"]
    );
    assert_eq!(
        lines_of(&out(&["moves", "--rules", "english", "B:WK18:B14"])),
        ["14x23"]
    );
    // A flying king moves along the whole diagonal (1 to 28 on the long diagonal here; 5 is
    // the only square of its other diagonal); an English king one square.
    let fly = out(&["moves", "--rules", "russian", "B:WK32:BK1"]);
    assert_eq!(
        lines_of(&fly),
        ["1-5", "1-6", "1-10", "1-15", "1-19", "1-24", "1-28"]
    );
    assert_eq!(lines_of(&out(&["moves", "B:WK32:BK1"])), ["1-5", "1-6"]);
    let e = egdb(&["moves", "--rules", "checkers", crown]);
    assert!(!e.status.success());
    assert!(String::from_utf8_lossy(&e.stderr).contains("unknown rules"));
}

/// `egdb moves --values` and `egdb line` on variant tables: the directory's rules by
/// default, a mismatch refused, the values those of the rule books and the terminal rule.
#[test]
fn moves_values_and_line_under_the_directory_rules() {
    let ru = tables(Variant::Russian, 3);
    let ga = tables(Variant::Giveaway, 3);
    let (ru, ga) = (ru.path().to_str().unwrap(), ga.path().to_str().unwrap());

    // Russian: the crowning capture takes White's last two pieces, a win in one conversion.
    let v = out(&["moves", "--values", "--json", "--dir", ru, "B:W24,26:B22"]);
    let j: serde_json::Value = serde_json::from_str(v.trim()).unwrap();
    assert_eq!(j["move"], "22x31x20");
    assert_eq!(j["value"], "win");
    assert_eq!(j["dtc"], 1);
    assert_eq!(j["after"], "W:W:BK20");
    // Same with the rules named; other rules refused naming both.
    let named = out(&[
        "moves",
        "--values",
        "--json",
        "--rules",
        "russian",
        "--dir",
        ru,
        "B:W24,26:B22",
    ]);
    assert_eq!(named, v);
    let e = egdb(&[
        "moves",
        "--values",
        "--rules",
        "english",
        "--dir",
        ru,
        "B:W24,26:B22",
    ]);
    assert!(!e.status.success());
    let msg = String::from_utf8_lossy(&e.stderr);
    assert!(msg.contains("russian") && msg.contains("english"), "{msg}");
    let e = egdb(&["line", "--rules", "brazilian", "--dir", ru, "B:WK32:BK1"]);
    assert!(!e.status.success());

    // Giveaway: White without pieces, to move, has won; one king against one king is never
    // drawn, and the won line ends with the winner to move and no move.
    assert_eq!(
        out(&["probe", "--dir", ga, "W:W:BK14"]).trim(),
        "W:W:BK14\twin"
    );
    let j: serde_json::Value =
        serde_json::from_str(out(&["line", "--json", "--dir", ga, "B:WK32:BK1"]).trim()).unwrap();
    assert_eq!(j["rules"], "giveaway");
    assert_ne!(j["value"], "draw");
    assert_eq!(j["end"], "no_moves");
    let moves = j["moves"].as_array().unwrap();
    let last = moves.last().unwrap();
    assert_eq!(last["value"], "win", "{j}");
    assert_eq!(last["dtc"], 0);
    // The winner at the end is the side the start's value says.
    let last_fen = last["after"].as_str().unwrap();
    let start_side = 'B';
    let end_side = last_fen.chars().next().unwrap();
    let start_wins = j["value"] == "win";
    assert_eq!(start_wins, end_side == start_side, "{j}");
    let text = out(&["line", "--dir", ga, "B:WK32:BK1"]);
    assert!(
        text.ends_with("end\tno legal move: the side to move has won\n"),
        "{text}"
    );
    // The library agrees with the command line.
    let tb = AnyTablebase::open(Path::new(ga), None).unwrap();
    assert_eq!(tb.variant(), Variant::Giveaway);
    let p = Position::from_fen("B:WK32:BK1").unwrap();
    let l = tb.line(&p, Metric::Dtc, 1000).unwrap();
    assert_eq!(l.moves.len(), moves.len());
    assert!(AnyTablebase::open(Path::new(ga), Some(Variant::Russian)).is_err());
}
