//! The variants' tables end to end, against an independent forward solver.
//!
//! For giveaway, Italian, Russian, Brazilian, Pool, Spanish and Czech draughts: every table of at most `n` pieces
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
//! to a lost position, a loss the slowest move; no move: 0). Every value and distance is
//! computed from the successors; the successor lists reversed only choose which positions
//! are looked at again (those with a move to a position decided in the round before).
//!
//! Also: published or self-evident facts of each variant (giveaway: one king against one
//! king is never drawn, whoever moves; a side without pieces wins), the directory holds one
//! variant (an English tablebase refuses the files, a build of other rules into it is
//! refused), and `verify` re-derives every value and distance with the path generator.
//!
//! The default test covers every position of at most 3 pieces (both sides to move); the
//! ignored one (scripts/variants_solve4.sh: about 4 CPU-minutes and 4.7 GB for the
//! four variants) every position of at most 4 pieces.

#[path = "probe_common/mod.rs"]
mod probe_common;

use checkers_egdb::rules::engine::Fast;
use checkers_egdb::rules::paths::{apply, moves, Game};
use checkers_egdb::rules::{
    brazilian, czech, italian, pool, russian, spanish, Giveaway, Rules, Variant,
};
use checkers_egdb::{build, BuildOptions};
use checkers_egdb::{verify_dir_opts, VerifyOptions};
use checkers_egdb::{Dtc, Tablebase};
use checkers_egdb::{Position, Wld};
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

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

    // The predecessors (the successor lists reversed, CSR): they only decide which positions
    // are looked at again; every value below is computed from the successors.
    let mut pstart = vec![0usize; all.len() + 1];
    for &(j, _) in &edges {
        pstart[j as usize + 1] += 1;
    }
    for i in 0..all.len() {
        pstart[i + 1] += pstart[i];
    }
    let mut fill = pstart.clone();
    let mut preds = vec![0u32; edges.len()];
    for i in 0..all.len() {
        for &(j, _) in succ(i) {
            preds[fill[j as usize]] = i as u32;
            fill[j as usize] += 1;
        }
    }
    drop(fill);
    // The positions to look at next: the predecessors of those just decided, once each.
    let mut mark = vec![false; all.len()];
    let mut predecessors_of = |found: &[usize]| -> Vec<usize> {
        let mut next = Vec::new();
        for &j in found {
            for &i in &preds[pstart[j]..pstart[j + 1]] {
                if !mark[i as usize] {
                    mark[i as usize] = true;
                    next.push(i as usize);
                }
            }
        }
        for &i in &next {
            mark[i] = false;
        }
        next.sort_unstable();
        next
    };

    // Values: the least fixpoint of "a win has a move to a loss, a loss has only moves to
    // wins", from the terminal positions. Each round looks again only at the positions a
    // move of which reaches a position decided in the round before (the rest cannot change).
    let mut value: Vec<Option<Wld>> = (0..all.len())
        .map(|i| succ(i).is_empty().then_some(terminal))
        .collect();
    let mut todo: Vec<usize> = (0..all.len()).collect();
    while !todo.is_empty() {
        let found: Vec<(usize, Wld)> = todo
            .par_iter()
            .filter_map(|&i| {
                if value[i].is_some() {
                    return None;
                }
                let s = succ(i);
                if s.iter().any(|&(j, _)| value[j as usize] == Some(Wld::Loss)) {
                    Some((i, Wld::Win))
                } else if s.iter().all(|&(j, _)| value[j as usize] == Some(Wld::Win)) {
                    Some((i, Wld::Loss))
                } else {
                    None
                }
            })
            .collect();
        for &(i, v) in &found {
            value[i] = Some(v);
        }
        let found: Vec<usize> = found.into_iter().map(|(i, _)| i).collect();
        todo = predecessors_of(&found);
    }
    let value: Vec<Wld> = value.into_iter().map(|v| v.unwrap_or(Wld::Draw)).collect();

    // Distances, level by level: level 1 looks at every position, level k > 1 only at the
    // predecessors of the positions of level k - 1 (a position of level k > 1 has a
    // non-converting move to one of them).
    let mut dtc: Vec<Option<u32>> = (0..all.len())
        .map(|i| succ(i).is_empty().then_some(0))
        .collect();
    let mut k = 1u32;
    let mut todo: Vec<usize> = (0..all.len()).collect();
    loop {
        let d = |(j, conv): (u32, bool), dtc: &[Option<u32>]| -> Option<u32> {
            if conv {
                Some(1)
            } else {
                dtc[j as usize].filter(|&v| v < k).map(|v| v + 1)
            }
        };
        let found: Vec<usize> = todo
            .par_iter()
            .copied()
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
        for &i in &found {
            dtc[i] = Some(k);
        }
        todo = predecessors_of(&found);
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
    // `verify` is checked on the tables of at most 3 pieces; at 4 the forward solver is the
    // check (verify re-derives every position with the path generator: minutes).
    if n > 3 {
        return (dir, fw, all);
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

/// The main road (the long diagonal a1-h8, the only one of eight squares; ours 4, 8, 11, 15,
/// 18, 22, 25, 29 whichever way the board is turned), a fact of the flying-king endgame known
/// to every Russian player: three kings do not win against one king that holds the main road
/// (they win only with the main road in their hands, by Petrov's triangle). Checked on every
/// position with three white kings off the road and the black king on it, Black to move and
/// without a capture (with a capture the lone king must leave the road, and may be lost): a
/// draw, in Russian and Brazilian draughts alike (the same king moves; the rule of choice
/// does not arise with one piece to take). The 6-piece tables of both agree: of the 16,192
/// positions with the lone king on the road, the 404 not drawn all have a capture.
fn main_road_facts<R: Rules>(dir: &std::path::Path, rules: R, variant: Variant) {
    const ROAD: [u8; 8] = [4, 8, 11, 15, 18, 22, 25, 29];
    let game = variant.game();
    let tb = Tablebase::builder(dir).rules(rules).open().unwrap();
    let off: Vec<u8> = (1..=32).filter(|s| !ROAD.contains(s)).collect();
    let mut checked = 0;
    for &b in &ROAD {
        for (i, &w1) in off.iter().enumerate() {
            for (j, &w2) in off.iter().enumerate().skip(i + 1) {
                for &w3 in &off[j + 1..] {
                    let f = format!("B:WK{w1},K{w2},K{w3}:BK{b}");
                    let p = Position::from_fen(&f).unwrap();
                    if moves(&game, &p).iter().any(|m| !m.captured.is_empty()) {
                        continue;
                    }
                    checked += 1;
                    assert_eq!(tb.probe_wld(&p).unwrap(), Wld::Draw, "{variant} {f}");
                }
            }
        }
    }
    // 8 x C(24, 3) = 16,192 positions, less those where the lone king has a capture (about
    // one in six).
    assert!(checked > 12_000 && checked < 8 * 2024, "{checked}");
}

fn all_variants(n: u32) {
    let (d, fw, all) = check(Variant::Giveaway, Giveaway, n);
    giveaway_facts(d.path(), &fw, &all, n);
    check(Variant::Italian, Fast::<{ italian::ID }>, n);
    let (d, _, _) = check(Variant::Russian, Fast::<{ russian::ID }>, n);
    if n >= 4 {
        main_road_facts(d.path(), Fast::<{ russian::ID }>, Variant::Russian);
    }
    let (d, _, _) = check(Variant::Brazilian, Fast::<{ brazilian::ID }>, n);
    if n >= 4 {
        main_road_facts(d.path(), Fast::<{ brazilian::ID }>, Variant::Brazilian);
    }
    // Pool, Spanish and Czech: the only variants with flying kings and men that capture
    // forward only (Spanish, Czech) or with Pool's rules, whose tables no other test builds.
    check(Variant::Pool, Fast::<{ pool::ID }>, n);
    check(Variant::Spanish, Fast::<{ spanish::ID }>, n);
    check(Variant::Czech, Fast::<{ czech::ID }>, n);
}

#[test]
fn variant_tables_of_three_pieces_match_the_forward_solver() {
    all_variants(3);
}

#[test]
#[ignore = "every position of at most 4 pieces per variant: about 4 CPU-minutes, 4.7 GB; scripts/variants_solve4.sh runs it (`cargo test --release --test variants_solve -- --ignored`)"]
fn variant_tables_of_four_pieces_match_the_forward_solver() {
    all_variants(4);
}
