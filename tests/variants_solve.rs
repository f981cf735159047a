//! The variants' tables end to end, against an independent forward solver.
//!
//! For giveaway, Italian, Russian and Brazilian draughts: every table of at most `n` pieces
//! built by the library's builder (`generate::build` with `BuildOptions::rules`, WLD and
//! distance-to-conversion files, as `egdb build --rules NAME --dtc` does), then every
//! position of at most `n` pieces, either side to move, probed through a `Tablebase` of the
//! variant's rules (`probe_wld`, `probe_dtc`) and compared with the forward solver below.
//!
//! The forward solver is written here, apart from the builder: no slices, no index, no
//! un-moves, no files. It enumerates the positions by brute force
//! (`probe_common::all_positions`), takes the successors from the slow path generator of the
//! variant (`rules::paths::moves` + `apply`, with the variant's own capture rules), and
//! computes the values by a forward fixpoint (no move: the terminal rule, a win in giveaway,
//! a loss elsewhere) and then the distance to conversion level by level from its
//! definition (a capture or a man's move converts and counts 1; a win takes the fastest move
//! to a lost position, a loss the slowest move; no move: 0).
//!
//! Also: published or self-evident facts of each variant (giveaway: one king against one
//! king is never drawn, whoever moves; a side without pieces wins), the directory holds one
//! variant (an English tablebase refuses the files, a build of other rules into it is
//! refused), and `verify` re-derives every value and distance with the path generator.
//!
//! The default test covers every position of at most 3 pieces (both sides to move); the
//! ignored one (run by `.ci/run`) every position of at most 4 pieces.

#[path = "probe_common/mod.rs"]
mod probe_common;

use checkers_egdb::rules::engine::Fast;
use checkers_egdb::rules::paths::{apply, moves, Game};
use checkers_egdb::rules::{brazilian, italian, russian, Giveaway, Rules, Variant};
use checkers_egdb::{build, BuildOptions};
use checkers_egdb::{verify_dir_opts, VerifyOptions};
use checkers_egdb::{Dtc, Tablebase};
use checkers_egdb::{Position, Wld};
use rayon::prelude::*;
use std::collections::HashMap;

/// Values and distances of every position with at most `n` pieces under `game`, solved
/// forward (see the module docs). Distances: `None` for draws.
struct Forward {
    id: HashMap<Position, u32>,
    value: Vec<Wld>,
    dtc: Vec<Option<u32>>,
}

fn forward(game: &Game, all: &[Position]) -> Forward {
    let id: HashMap<Position, u32> = all
        .iter()
        .enumerate()
        .map(|(i, p)| (*p, i as u32))
        .collect();
    // Successors in one array (CSR): (index, conversion).
    let lists: Vec<Vec<(u32, bool)>> = all
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
    let mut start = Vec::with_capacity(all.len() + 1);
    let mut edges = Vec::new();
    for l in &lists {
        start.push(edges.len());
        edges.extend_from_slice(l);
    }
    start.push(edges.len());
    drop(lists);
    let succ = |i: usize| &edges[start[i]..start[i + 1]];
    let terminal = game.no_move;

    let mut value: Vec<Option<Wld>> = (0..all.len())
        .map(|i| succ(i).is_empty().then_some(terminal))
        .collect();
    loop {
        let next: Vec<Option<Wld>> = (0..all.len())
            .into_par_iter()
            .map(|i| {
                if value[i].is_some() {
                    return value[i];
                }
                let s = succ(i);
                if s.iter().any(|&(j, _)| value[j as usize] == Some(Wld::Loss)) {
                    Some(Wld::Win)
                } else if s.iter().all(|&(j, _)| value[j as usize] == Some(Wld::Win)) {
                    Some(Wld::Loss)
                } else {
                    None
                }
            })
            .collect();
        if next == value {
            break;
        }
        value = next;
    }
    let value: Vec<Wld> = value.into_iter().map(|v| v.unwrap_or(Wld::Draw)).collect();

    let mut dtc: Vec<Option<u32>> = (0..all.len())
        .map(|i| succ(i).is_empty().then_some(0))
        .collect();
    let mut k = 1u32;
    loop {
        let d = |(j, conv): (u32, bool), dtc: &[Option<u32>]| -> Option<u32> {
            if conv {
                Some(1)
            } else {
                dtc[j as usize].filter(|&v| v < k).map(|v| v + 1)
            }
        };
        let found: Vec<usize> = (0..all.len())
            .into_par_iter()
            .filter(|&i| {
                if dtc[i].is_some() {
                    return false;
                }
                let s = succ(i);
                match value[i] {
                    Wld::Win => s
                        .iter()
                        .filter(|&&(j, _)| value[j as usize] == Wld::Loss)
                        .any(|&e| d(e, &dtc) == Some(k)),
                    Wld::Loss => {
                        let ds: Option<Vec<u32>> = s.iter().map(|&e| d(e, &dtc)).collect();
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
    for (i, v) in value.iter().enumerate() {
        assert_eq!(
            dtc[i].is_some(),
            *v != Wld::Draw,
            "forward solver: {}",
            all[i].to_fen()
        );
    }
    Forward { id, value, dtc }
}

/// Build the tables of `variant` with at most `n` pieces (values and distances) in a fresh
/// directory, check every position of at most `n` pieces against the forward solver, then
/// verify the directory. Returns the directory and the forward solution.
fn check<R: Rules>(
    variant: Variant,
    rules: R,
    n: u32,
) -> (tempfile::TempDir, Forward, Vec<Position>) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = BuildOptions::new(dir.path(), n);
    opts.rules = variant;
    opts.dtc = true;
    build(&opts).unwrap();

    let all = probe_common::all_positions(n);
    let fw = forward(&variant.game(), &all);
    let tb = Tablebase::builder(dir.path()).rules(rules).open().unwrap();
    let mut counts = [0u64; 3];
    let bad: Vec<String> = all
        .par_iter()
        .filter_map(|p| {
            let i = fw.id[p] as usize;
            let want = match (fw.value[i], fw.dtc[i]) {
                (Wld::Win, Some(d)) => Dtc::Win(d),
                (Wld::Loss, Some(d)) => Dtc::Loss(d),
                _ => Dtc::Draw,
            };
            let wld = tb.probe_wld(p);
            let dtc = tb.probe_dtc(p);
            (wld.as_ref().ok() != Some(&fw.value[i]) || dtc.as_ref().ok() != Some(&want)).then(
                || {
                    format!(
                        "{} {variant}: tables {wld:?} {dtc:?}, forward {:?} {want:?}",
                        p.to_fen(),
                        fw.value[i]
                    )
                },
            )
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{} differences, first {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    for v in &fw.value {
        counts[*v as usize] += 1;
    }
    // Every kind of value occurs: the comparison is not vacuous.
    assert!(counts.iter().all(|&c| c > 0), "{variant}: {counts:?}");

    // `egdb stats --dtc`: every longest distance it names is the forward solver's distance
    // of the position it names, and the longest of all is the forward solver's longest.
    let rows = checkers_egdb::longest_dtc(dir.path()).unwrap();
    let mut top = (0, 0);
    for r in &rows {
        for (x, want) in [(&r.longest_win, Wld::Win), (&r.longest_loss, Wld::Loss)] {
            if let Some((d, f)) = x {
                let i = fw.id[&Position::from_fen(f).unwrap()] as usize;
                assert_eq!(
                    (fw.value[i], fw.dtc[i]),
                    (want, Some(*d)),
                    "{variant} stats: {f}"
                );
                if want == Wld::Win {
                    top.0 = top.0.max(*d);
                } else {
                    top.1 = top.1.max(*d);
                }
            }
        }
    }
    let longest = |w: Wld| {
        (0..all.len())
            .filter(|&i| fw.value[i] == w)
            .filter_map(|i| fw.dtc[i])
            .max()
            .unwrap()
    };
    assert_eq!(top, (longest(Wld::Win), longest(Wld::Loss)), "{variant}");

    // The directory holds this variant: an English tablebase refuses it, a build of other
    // rules into it is refused, verify (rules from the headers) re-derives everything.
    if variant != Variant::English {
        let e = Tablebase::open(dir.path())
            .unwrap()
            .probe_wld(&Position::from_fen("W:WK32:BK26").unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains(variant.name()) && e.contains("english"), "{e}");
        let mut other = BuildOptions::new(dir.path(), n);
        other.rules = Variant::English;
        let e = build(&other).unwrap_err().to_string();
        assert!(e.contains("one variant"), "{e}");
    }
    let rep = verify_dir_opts(dir.path(), &VerifyOptions::default(), &|_, _, _| {}).unwrap();
    // Every Black-to-move position is stored once (White-to-move ones are their colour
    // mirrors).
    assert_eq!(rep.positions, all.len() as u64 / 2, "{variant}");
    (dir, fw, all)
}

/// Giveaway facts. Published by M. Fierz ("Drawing tendencies in suicide checkers",
/// checker-board.blogspot.com, 18 March 2005, with the games from his suicide-checkers
/// database): "1 King vs 1 King is never a draw. Depending on who has the move, it is a win
/// or a loss"; `W:WK5,K1:BK32` is won by White to move (the game given ends with Black
/// capturing White's last king, and a side without pieces wins); `B:WK21,K1:BK18` is won by
/// Black to move (the lone king close to the two kings); `B:WK23,K22:BK11,K8` is a draw.
/// And the rule itself: a side without pieces (or moves) wins, at distance 0.
fn giveaway_facts(dir: &std::path::Path, fw: &Forward, all: &[Position], n: u32) {
    let tb = Tablebase::builder(dir).rules(Giveaway).open().unwrap();
    let mut kk = 0;
    for p in all {
        if p.piece_count() == 2 && p.kings.count_ones() == 2 && p.black != 0 && p.white != 0 {
            kk += 1;
            assert_ne!(fw.value[fw.id[p] as usize], Wld::Draw, "{}", p.to_fen());
            assert_ne!(tb.probe_wld(p).unwrap(), Wld::Draw, "{}", p.to_fen());
        }
    }
    assert_eq!(kk, 992 * 2);
    let fen = |f: &str| Position::from_fen(f).unwrap();
    assert_eq!(tb.probe_dtc(&fen("B:WK32:B")).unwrap(), Dtc::Win(0));
    assert_eq!(tb.probe_dtc(&fen("W:W:BK1")).unwrap(), Dtc::Win(0));
    assert_eq!(tb.probe_wld(&fen("W:WK5,K1:BK32")).unwrap(), Wld::Win);
    assert_eq!(tb.probe_wld(&fen("B:WK21,K1:BK18")).unwrap(), Wld::Win);
    if n >= 4 {
        assert_eq!(tb.probe_wld(&fen("B:WK23,K22:BK11,K8")).unwrap(), Wld::Draw);
    }
}

fn all_variants(n: u32) {
    let (d, fw, all) = check(Variant::Giveaway, Giveaway, n);
    giveaway_facts(d.path(), &fw, &all, n);
    check(Variant::Italian, Fast::<{ italian::ID }>, n);
    check(Variant::Russian, Fast::<{ russian::ID }>, n);
    check(Variant::Brazilian, Fast::<{ brazilian::ID }>, n);
}

#[test]
fn variant_tables_of_three_pieces_match_the_forward_solver() {
    all_variants(3);
}

#[test]
#[ignore = "every position of at most 4 pieces per variant: minutes; run with `cargo test --release --test variants_solve -- --ignored` (about 20 min on a loaded 2-core machine)"]
fn variant_tables_of_four_pieces_match_the_forward_solver() {
    all_variants(4);
}
