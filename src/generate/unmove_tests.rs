//! The retrograde solver's un-move generator (`solve::for_each_predecessor`) must be the exact
//! inverse of the forward quiet moves the solver counts inside a unit: for a successor `Q` (a
//! Black-to-move position of slice `Qs`) it must list every position `P` of the partner slice
//! `Ps = Qs.partner()` (Black to move, stored normalised) whose side to move has a quiet move
//! that stays in the unit and leads to `Q` (colour-flipped back to Black to move), each exactly
//! once. Positions with a capture may be listed too (the solver ignores them: their state is
//! final), so they are dropped before the comparison.
//!
//! The forward side is computed independently of the code under test, with the slow path
//! generator of [`crate::movegen`] (the oracle of `egdb verify`): `P.moves()` applied with
//! `Position::apply`, and "stays in the unit" decided from the resulting position itself: no
//! crowning, and its normalised form lies in `Ps.partner()` ([`Slice::of`]); in the distance
//! pass (`kings_only`) only king moves stay.
//!
//! Slices of at most 4 pieces are checked exhaustively (multisets of (Q, P) edges compared
//! equal); larger slices by sampling both ends (every forward edge of a sampled P found once
//! backward, and every backward predecessor of a sampled Q found forward, without repeats).
use crate::board::{Color, Position};
use crate::generate::solve::{for_each_predecessor, UnitPolicy};
use crate::index::SliceIndex;
use crate::movegen::Oracle;
use crate::plan::build_order;
use crate::rules::{English, Rules};
use crate::slice::{Material, Slice};
use rayon::prelude::*;

/// The forward quiet moves of `p` (Black to move, no capture) that stay in the unit, by the
/// slow generator: each successor normalised to Black to move, in the slice `succ`.
fn forward_staying(p: &Position, succ: Slice, kings_only: bool, out: &mut Vec<Position>) {
    debug_assert_eq!(p.side, Color::Black);
    out.clear();
    for m in p.moves() {
        assert!(!m.is_capture(), "capture move in a quiet position");
        let king = p.kings & (1u32 << (m.from - 1)) != 0;
        if m.crowns || (kings_only && !king) {
            continue;
        }
        let n = p.apply(&m).flip();
        assert_eq!(n.side, Color::Black);
        if Slice::of(&n) == succ {
            out.push(n);
        }
    }
}

/// The predecessors of `q` (Black to move, in `ps.partner()`) the code under test lists, as
/// indexes of `ps`, capture positions dropped; sorted. Checks every index is in range.
fn backward(
    q: &Position,
    pix: &SliceIndex,
    ps: Slice,
    policy: UnitPolicy,
    raw: &mut Vec<u64>,
    dropped: &mut u64,
) -> Vec<u64> {
    raw.clear();
    for_each_predecessor(English, q, pix, policy, |k| raw.push(k));
    let mut v = Vec::with_capacity(raw.len());
    for &k in raw.iter() {
        let p = pix.unrank(k).unwrap_or_else(|_| {
            panic!(
                "predecessor index {k} out of range of {ps} (size {}) for Q = {}",
                pix.size(),
                q.to_fen()
            )
        });
        if Oracle.has_capture(&p) {
            *dropped += 1;
        } else {
            v.push(k);
        }
    }
    v.sort_unstable();
    v
}

#[derive(Default, Debug, Clone, Copy)]
struct Counts {
    preds: u64,
    succs: u64,
    edges: u64,
    dropped: u64,
}

impl std::ops::Add for Counts {
    type Output = Counts;
    fn add(self, o: Counts) -> Counts {
        Counts {
            preds: self.preds + o.preds,
            succs: self.succs + o.succs,
            edges: self.edges + o.edges,
            dropped: self.dropped + o.dropped,
        }
    }
}

/// Exhaustive check of the un-moves from slice `qs` into `ps = qs.partner()`.
fn check_full(qs: Slice, kings_only: bool) -> Counts {
    let policy = UnitPolicy {
        rank: qs.partner().black_rank,
        kings_only,
    };
    check_full_with(qs, kings_only, policy)
}

/// [`check_full`] with the policy handed to the code under test given separately (a wrong one
/// shows that the check catches a difference).
fn check_full_with(qs: Slice, kings_only: bool, policy: UnitPolicy) -> Counts {
    let ps = qs.partner();
    let pix = SliceIndex::new(ps);
    let qix = SliceIndex::new(qs);
    let mut c = Counts::default();
    // Forward: every (Q, P) edge.
    let mut fwd: Vec<(u64, u64)> = Vec::new();
    let mut succ = Vec::new();
    pix.visit(0, pix.size(), |i, p| {
        if Oracle.has_capture(&p) {
            return;
        }
        c.preds += 1;
        forward_staying(&p, qs, kings_only, &mut succ);
        fwd.extend(succ.iter().map(|n| (qix.rank(n), i)));
    });
    fwd.sort_unstable();
    // Backward: every Q's listed predecessors.
    let mut bwd: Vec<(u64, u64)> = Vec::with_capacity(fwd.len());
    let mut raw = Vec::new();
    qix.visit(0, qix.size(), |j, q| {
        c.succs += 1;
        let v = backward(&q, &pix, ps, policy, &mut raw, &mut c.dropped);
        bwd.extend(v.into_iter().map(|k| (j, k)));
    });
    if fwd != bwd {
        report_difference(qs, kings_only, &qix, &pix, &fwd, &bwd);
    }
    c.edges = fwd.len() as u64;
    c
}

#[cold]
fn report_difference(
    qs: Slice,
    kings_only: bool,
    qix: &SliceIndex,
    pix: &SliceIndex,
    fwd: &[(u64, u64)],
    bwd: &[(u64, u64)],
) -> ! {
    // Multiset differences of two sorted lists.
    let (mut a, mut b) = (0, 0);
    let (mut only_fwd, mut only_bwd) = (Vec::new(), Vec::new());
    while a < fwd.len() || b < bwd.len() {
        match (fwd.get(a), bwd.get(b)) {
            (Some(x), Some(y)) if x == y => {
                a += 1;
                b += 1;
            }
            (Some(x), Some(y)) if x < y => {
                only_fwd.push(*x);
                a += 1;
            }
            (Some(x), None) => {
                only_fwd.push(*x);
                a += 1;
            }
            (_, Some(y)) => {
                only_bwd.push(*y);
                b += 1;
            }
            (None, None) => unreachable!(),
        }
    }
    let fen = |(j, k): (u64, u64)| {
        format!(
            "Q {} <- P {}",
            qix.unrank(j).unwrap().to_fen(),
            pix.unrank(k).unwrap().to_fen()
        )
    };
    let show = |v: &[(u64, u64)]| {
        v.iter()
            .take(8)
            .map(|&e| fen(e))
            .collect::<Vec<_>>()
            .join("\n  ")
    };
    panic!(
        "un-moves of {qs} (kings_only {kings_only}) are not the inverse of the forward moves: \
         {} forward edges missing backward:\n  {}\n{} backward edges not forward:\n  {}",
        only_fwd.len(),
        show(&only_fwd),
        only_bwd.len(),
        show(&only_bwd)
    );
}

/// Sampled check of slice `qs` against `ps = qs.partner()`: `n` random P (every forward edge
/// P -> Q is listed backward from Q exactly once) and `n` random Q (every listed
/// predecessor has a forward move to Q, and none is listed twice).
fn check_sampled(qs: Slice, n: u64, seed: u64, kings_only: bool) -> Counts {
    let ps = qs.partner();
    let pix = SliceIndex::new(ps);
    let qix = SliceIndex::new(qs);
    let policy = UnitPolicy {
        rank: ps.black_rank,
        kings_only,
    };
    let mut rng = SplitMix(seed ^ (pix.size().wrapping_mul(0x9e37_79b9)));
    let mut c = Counts::default();
    let (mut succ, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let i = rng.below(pix.size());
        let p = pix.unrank(i).unwrap();
        if Oracle.has_capture(&p) {
            continue;
        }
        c.preds += 1;
        forward_staying(&p, qs, kings_only, &mut succ);
        for q in succ.clone() {
            c.edges += 1;
            let v = backward(&q, &pix, ps, policy, &mut raw, &mut c.dropped);
            let times = v.iter().filter(|&&k| k == i).count();
            assert_eq!(
                times,
                1,
                "{qs} (kings_only {kings_only}): P {} -> Q {} is listed {times} times backward",
                p.to_fen(),
                q.to_fen()
            );
        }
    }
    for _ in 0..n {
        let j = rng.below(qix.size());
        let q = qix.unrank(j).unwrap();
        c.succs += 1;
        let v = backward(&q, &pix, ps, policy, &mut raw, &mut c.dropped);
        for w in v.windows(2) {
            assert_ne!(
                w[0],
                w[1],
                "{qs}: Q {} lists P {} twice",
                q.to_fen(),
                pix.unrank(w[0]).unwrap().to_fen()
            );
        }
        for &k in &v {
            let p = pix.unrank(k).unwrap();
            forward_staying(&p, qs, kings_only, &mut succ);
            assert!(
                succ.contains(&q),
                "{qs} (kings_only {kings_only}): Q {} lists P {}, which has no staying quiet \
                 move to it",
                q.to_fen(),
                p.to_fen()
            );
        }
    }
    c
}

/// A small fixed-seed generator (splitmix64), so the samples are reproducible.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
}

/// Every slice of at most `pieces` pieces (both slices of each unit).
fn slices_up_to(pieces: u32) -> Vec<Slice> {
    build_order(pieces)
        .into_iter()
        .flat_map(|u| u.slices)
        .collect()
}

/// Some slices of `m` with positions: the first, middle and last in build order.
fn some_slices(m: Material) -> Vec<Slice> {
    let all: Vec<Slice> = Slice::all_of(m)
        .into_iter()
        .filter(|s| SliceIndex::new(*s).size() > 0)
        .collect();
    let mut v = vec![all[0], all[all.len() / 2], all[all.len() - 1]];
    v.dedup();
    v
}

/// Materials of 5 and 6 pieces with men of both colours, kings on one side or both.
fn sample_materials() -> Vec<Material> {
    [
        (2, 0, 2, 1),
        (1, 1, 2, 1),
        (3, 0, 1, 1),
        (2, 1, 2, 1),
        (3, 0, 3, 0),
        (1, 2, 1, 2),
        (3, 1, 2, 0),
    ]
    .into_iter()
    .map(|(bm, bk, wm, wk)| Material::new(bm, bk, wm, wk).unwrap())
    .collect()
}

fn report(what: &str, c: Counts, t: std::time::Instant) {
    eprintln!(
        "{what}: {} predecessor positions (no capture), {} successor positions, {} edges, \
         {} capture predecessors dropped, {:.2} s",
        c.preds,
        c.succs,
        c.edges,
        c.dropped,
        t.elapsed().as_secs_f64()
    );
}

#[test]
fn unmoves_invert_forward_quiet_moves_up_to_4_pieces() {
    let t = std::time::Instant::now();
    let slices = slices_up_to(4);
    let c = slices
        .par_iter()
        .map(|&s| check_full(s, false))
        .reduce(Counts::default, |a, b| a + b);
    assert!(c.edges > 1_000_000, "{c:?}");
    report(&format!("{} slices of <= 4 pieces", slices.len()), c, t);
}

#[test]
fn unmoves_invert_forward_king_moves_in_the_distance_pass() {
    let t = std::time::Instant::now();
    // Every slice of at most 3 pieces and those of a few 4-piece materials with men and kings.
    let mut slices = slices_up_to(3);
    for (bm, bk, wm, wk) in [(1, 1, 1, 1), (2, 0, 1, 1), (1, 1, 2, 0), (1, 2, 1, 0)] {
        let m = Material::new(bm, bk, wm, wk).unwrap();
        slices.extend(Slice::all_of(m).into_iter().flat_map(|s| [s, s.partner()]));
    }
    slices.sort();
    slices.dedup();
    slices.retain(|s| SliceIndex::new(*s).size() > 0);
    let c = slices
        .par_iter()
        .map(|&s| check_full(s, true))
        .reduce(Counts::default, |a, b| a + b);
    assert!(c.edges > 10_000, "{c:?}");
    report(&format!("{} slices, kings only", slices.len()), c, t);
}

#[test]
fn unmoves_invert_forward_quiet_moves_sampled_5_and_6_pieces() {
    let t = std::time::Instant::now();
    let slices: Vec<Slice> = sample_materials()
        .into_iter()
        .flat_map(some_slices)
        .flat_map(|s| [s, s.partner()])
        .collect();
    let c = slices
        .par_iter()
        .enumerate()
        .map(|(x, &s)| {
            check_sampled(s, 2000, 0x5eed + x as u64, false)
                + check_sampled(s, 500, 0xd15 + x as u64, true)
        })
        .reduce(Counts::default, |a, b| a + b);
    assert!(c.edges > 10_000, "{c:?}");
    report(
        &format!("{} slices of 5-6 pieces, sampled", slices.len()),
        c,
        t,
    );
}

/// The check itself sees a difference: the un-moves of the distance pass (king moves only)
/// compared with every forward quiet move of a slice with men.
#[test]
#[should_panic(expected = "not the inverse")]
fn the_check_catches_un_moves_that_miss_man_moves() {
    // Q: White to move with two white men; P (its partner) has Black's two men, one of which
    // can move without advancing the leading rank.
    for qs in Slice::all_of(Material::new(1, 1, 2, 0).unwrap()) {
        let policy = UnitPolicy {
            rank: qs.partner().black_rank,
            kings_only: true,
        };
        check_full_with(qs, false, policy);
    }
}

/// Larger samples: every slice of 5 and 6 pieces with men of both colours.
#[test]
#[ignore = "about 30 s on 2 busy cores: every 5- and 6-piece slice with men of both colours"]
fn unmoves_invert_forward_quiet_moves_sampled_all_5_and_6_piece_slices() {
    let t = std::time::Instant::now();
    let slices: Vec<Slice> = (5..=6)
        .flat_map(Material::all_with_pieces)
        .filter(|m| m.bm > 0 && m.wm > 0)
        .flat_map(Slice::all_of)
        .filter(|s| SliceIndex::new(*s).size() > 0)
        .collect();
    let c = slices
        .par_iter()
        .enumerate()
        .map(|(x, &s)| {
            check_sampled(s, 3000, 0xb16 + x as u64, false)
                + check_sampled(s, 300, 0xc0de + x as u64, true)
        })
        .reduce(Counts::default, |a, b| a + b);
    report(
        &format!("{} slices of 5-6 pieces, sampled", slices.len()),
        c,
        t,
    );
}
