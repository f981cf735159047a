//! One unit solved by R ranks (issue 31, docs/mpi.md "Inside one slice").
//!
//! Each rank holds one contiguous index range of both slices of the unit ([`Partition`]:
//! block-aligned in a build) and only their solver state (one byte per position, so 1/R of
//! the unit's memory). The phases of [`super::solve`] run on every rank over its own range:
//!
//! 1. **Initial pass**: local (the positions' own moves and the lookups of smaller tables).
//! 2. **Propagation**, one bulk-synchronous step per ply: each rank propagates its positions
//!    resolved at this ply; updates of predecessors in its own range are applied at once,
//!    the others are sorted, cut by owner and delta-coded (varints of the differences of
//!    `index << 1 | successor is a win`), and one [`Exchange::all_to_all`] moves them; each
//!    rank applies what it receives with the same rules. The updates of a ply commute (a
//!    position refuted by one move and won by another cannot be both: its counter still
//!    counts the winning move), so the order in which ranks apply them does not matter and
//!    the values are those of the unsplit solver. An [`Exchange::all_max`] of "resolved
//!    anything at this ply" ends the loop when no rank resolved anything (past ply 0).
//! 3. **Gathering**: every rank sends its range's values (one byte per position: the value,
//!    plus 128 for a capture position) to rank 0, which assembles the unit's
//!    [`SolvedSlice`]s exactly as the unsplit solver returns them; the caller writes them with
//!    the usual writer, so the files are byte-identical to a single-process build. (This
//!    holds the unit's values, one byte per position, on rank 0 while writing; the final
//!    design has each rank encode its own blocks and write them at the offsets of a prefix
//!    sum of the compressed sizes.)
//!
//! The transport is the [`Exchange`] trait: [`run_local`] runs R partitions on R threads of
//! one process (tests, and the comparison with the unsplit solver); `egdb build --mpi`
//! implements it over MPI (`MPI_Alltoallv`, `MPI_Allreduce`).
//!
//! Distance passes (`--dtc`) are not split: the distance pass reads the partner slice's WLD
//! values at any index (in-unit man moves), which a rank holding one range does not have;
//! the driver refuses `--dtc` with split units ([`super::driver::split_refusal`]).

use super::solve::{self, Side, SolveOptions, SolvedSlice};
use crate::board::{Position, Wld};
use crate::index::SliceIndex;
use crate::rules::Retro;
use crate::slice::Slice;
use bitvec::prelude::{BitVec, Lsb0};
use rayon::prelude::*;
use std::sync::{Barrier, Mutex};
use std::time::Instant;

/// The alignment of the ranges of a split unit in a build: the table file's block (65,520
/// positions), so each rank's range is whole blocks of the file.
pub const BLOCK_ALIGN: u64 = crate::table::write::DEFAULT_BLOCK_POSITIONS as u64;

/// The collective operations a unit split over ranks needs. Every rank of the group calls
/// the same operations in the same order (they are collective: each returns once every rank
/// has called it).
pub trait Exchange {
    /// This rank, `0..ranks()`.
    fn rank(&self) -> usize;
    /// Ranks in the group.
    fn ranks(&self) -> usize;
    /// All-to-all: `send[r]` (bytes) goes to rank `r` (`send.len() == ranks()`); returns
    /// what every rank sent to this one, indexed by the sender.
    fn all_to_all(&self, send: Vec<Vec<u8>>) -> Vec<Vec<u8>>;
    /// Element-wise maximum of `x` over the ranks (every rank passes the same length).
    fn all_max(&self, x: &[u64]) -> Vec<u64>;
}

/// The index ranges of a slice of `n` positions over `ranks` ranks: rank `r` holds
/// `bounds[r]..bounds[r + 1]`; every bound but the last is a multiple of `align` (the file
/// format's block, 65,520 positions, in a build), the ranges as even as that allows (the
/// last ones may be empty when the slice has fewer blocks than ranks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// `ranks + 1` bounds, from 0 to `n`.
    pub bounds: Vec<u64>,
}

impl Partition {
    /// Cut `0..n` into `ranks` ranges aligned to `align` positions (`ranks >= 1`,
    /// `align >= 1`).
    pub fn new(n: u64, ranks: usize, align: u64) -> Partition {
        let ranks = ranks.max(1) as u64;
        let align = align.max(1);
        let per = n.div_ceil(align).div_ceil(ranks) * align;
        let bounds = (0..=ranks)
            .map(|r| if r == ranks { n } else { (r * per).min(n) })
            .collect();
        Partition { bounds }
    }

    /// The range of rank `r`.
    pub fn range(&self, r: usize) -> std::ops::Range<u64> {
        self.bounds[r]..self.bounds[r + 1]
    }
}

/// Per-rank figures of a split solve (for the report and the measurements).
#[derive(Clone, Debug, Default)]
pub struct SplitStats {
    /// Plies propagated.
    pub plies: u32,
    /// Bytes this rank sent to other ranks at each ply (delta-coded update lists).
    pub bytes_per_ply: Vec<u64>,
    /// Updates this rank sent to other ranks at each ply.
    pub updates_per_ply: Vec<u64>,
    /// Updates this rank sent to other ranks, over the whole propagation.
    pub updates_sent: u64,
    /// Bytes sent to rank 0 for the gathering (values of this rank's ranges).
    pub gather_bytes: u64,
}

/// Why a split solve failed.
#[derive(Debug)]
pub enum SplitError<E> {
    /// A lookup on this rank failed (the first failing position of its range).
    Lookup(E),
    /// A lookup failed on another rank (the lowest such rank): every rank stops.
    Peer(usize),
}

/// Solve the unit of slice `s` split over the ranks of `ex`, each holding its range of both
/// slices ([`Partition::new`] with `align`). Returns, on rank 0, the unit's
/// [`SolvedSlice`]s (`s` first, as [`solve::solve_unit_opts`] returns them, identical to
/// them); `None` on the other ranks; and this rank's figures.
///
/// # Errors
/// [`SplitError::Lookup`] on the rank whose lookup failed, [`SplitError::Peer`] on the
/// others (every rank returns).
pub fn solve_unit_split<R: Retro, E: Send>(
    rules: R,
    s: Slice,
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
    progress: solve::Progress<'_>,
    ex: &dyn Exchange,
    align: u64,
) -> Result<(Option<Vec<SolvedSlice>>, SplitStats), SplitError<E>> {
    let (me, ranks) = (ex.rank(), ex.ranks());
    let p = s.partner();
    let slices: Vec<Slice> = if p == s { vec![s] } else { vec![s, p] };
    let parts: Vec<Partition> = slices
        .iter()
        .map(|x| Partition::new(SliceIndex::new(*x).size(), ranks, align))
        .collect();
    let opts = SolveOptions::default();
    let sides: Vec<Side> = slices
        .iter()
        .zip(&parts)
        .map(|(x, part)| Side::range(*x, &opts, part.range(me)))
        .collect();
    let other = |x: usize| if sides.len() == 1 { 0 } else { 1 - x };
    let mut stats = SplitStats::default();

    let t0 = Instant::now();
    let init = solve::both_sides(&sides, |x| {
        solve::initial_pass(rules, &sides[x], &sides[other(x)], lookup, progress)
    });
    // Every rank learns whether one failed (the lowest failing rank), so none waits forever
    // in the propagation's exchanges.
    let flag = if init.is_err() {
        (ranks - me) as u64
    } else {
        0
    };
    let failed = ex.all_max(&[flag])[0];
    if let Err(e) = init {
        return Err(SplitError::Lookup(e));
    }
    if failed != 0 {
        return Err(SplitError::Peer(ranks - failed as usize));
    }
    let t1 = Instant::now();

    let mut ply: u32 = 0;
    loop {
        let next = ((ply & 1) ^ 1) as u8;
        let (a, b) = if sides.len() == 1 {
            (
                solve::propagate_ply_split(rules, &sides[0], &sides[0], ply),
                (false, Vec::new()),
            )
        } else {
            rayon::join(
                || solve::propagate_ply_split(rules, &sides[0], &sides[1], ply),
                || solve::propagate_ply_split(rules, &sides[1], &sides[0], ply),
            )
        };
        let found = a.0 || b.0;
        // Remote updates by target array: side x's predecessors are in side other(x).
        let mut remote: Vec<Vec<u64>> = vec![Vec::new(); sides.len()];
        remote[other(0)] = a.1;
        if sides.len() == 2 {
            remote[other(1)] = b.1;
        }
        let send = encode_updates(&mut remote, &parts, ranks);
        let sent: u64 = send
            .iter()
            .enumerate()
            .filter(|(r, _)| *r != me)
            .map(|(_, m)| m.len() as u64)
            .sum();
        stats.bytes_per_ply.push(sent);
        let updates = remote.iter().map(|v| v.len() as u64).sum::<u64>();
        stats.updates_per_ply.push(updates);
        stats.updates_sent += updates;
        let received = ex.all_to_all(send);
        received.par_iter().for_each(|msg| {
            decode_updates(msg, sides.len(), |y, j, is_win| {
                sides[y].apply(j as usize, is_win, next);
            });
        });
        let any = ex.all_max(&[u64::from(found)])[0] != 0;
        if !any && ply >= 1 {
            break;
        }
        ply += 1;
    }
    for side in &sides {
        side.check_propagated(ply);
    }
    let longest: Vec<u64> = sides.iter().map(|x| u64::from(x.longest())).collect();
    let longest = ex.all_max(&longest);
    for (side, l) in sides.iter().zip(&longest) {
        side.set_longest(*l as u32);
    }
    stats.plies = ply;
    let t2 = Instant::now();
    let times = ((t1 - t0).as_secs_f64(), (t2 - t1).as_secs_f64());

    // Gathering on rank 0: one byte per position (value, + 128 for a capture position).
    let local: Vec<SolvedSlice> = sides
        .into_iter()
        .map(|side| solve::collect(side, times, ply))
        .collect();
    let mut msg = Vec::with_capacity(local.iter().map(|x| x.values.len()).sum());
    for sv in &local {
        msg.extend(
            sv.values
                .iter()
                .zip(sv.captures.iter().by_vals())
                .map(|(&v, c)| v | (u8::from(c) << 7)),
        );
    }
    stats.gather_bytes = if me == 0 { 0 } else { msg.len() as u64 };
    let mut send = vec![Vec::new(); ranks];
    send[0] = msg;
    drop(local);
    let received = ex.all_to_all(send);
    if me != 0 {
        return Ok((None, stats));
    }
    let mut out = Vec::with_capacity(slices.len());
    let mut offsets = vec![0usize; ranks];
    for (x, (slice, part)) in slices.iter().zip(&parts).enumerate() {
        let n = *part.bounds.last().unwrap_or(&0) as usize;
        let mut bytes = Vec::with_capacity(n);
        for (r, msg) in received.iter().enumerate() {
            let len = (part.bounds[r + 1] - part.bounds[r]) as usize;
            bytes.extend_from_slice(&msg[offsets[r]..offsets[r] + len]);
            offsets[r] += len;
        }
        out.push(assemble(*slice, &bytes, longest[x] as u32, times, ply));
    }
    Ok((Some(out), stats))
}

/// A [`SolvedSlice`] from the gathered bytes (value, + 128 for a capture position).
fn assemble(
    slice: Slice,
    bytes: &[u8],
    longest: u32,
    times: (f64, f64),
    plies: u32,
) -> SolvedSlice {
    let values: Vec<u8> = bytes.par_iter().map(|b| b & 0x7f).collect();
    let captures: BitVec<u64, Lsb0> = bytes.iter().map(|b| b & 0x80 != 0).collect();
    let count = |w: u8| values.par_iter().filter(|&&v| v == w).count() as u64;
    SolvedSlice {
        slice,
        wins: count(Wld::Win as u8),
        losses: count(Wld::Loss as u8),
        draws: count(Wld::Draw as u8),
        values,
        captures,
        resolution_plies: None,
        longest,
        initial_seconds: times.0,
        propagate_seconds: times.1,
        plies,
    }
}

/// Append `x` as a LEB128 varint.
fn put_varint(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push((x as u8) | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

/// Read a LEB128 varint at `*at`.
fn get_varint(b: &[u8], at: &mut usize) -> u64 {
    let mut x = 0u64;
    let mut shift = 0;
    loop {
        let c = b[*at];
        *at += 1;
        x |= u64::from(c & 0x7f) << shift;
        if c < 0x80 {
            return x;
        }
        shift += 7;
    }
}

/// The messages of one ply: for each rank, for each array of the unit, the updates of the
/// positions that rank holds, as a count then the differences of the sorted
/// `(index - range start) << 1 | successor is a win` (varints). Sorts `remote` in place.
fn encode_updates(remote: &mut [Vec<u64>], parts: &[Partition], ranks: usize) -> Vec<Vec<u8>> {
    for v in remote.iter_mut() {
        v.par_sort_unstable();
    }
    (0..ranks)
        .map(|r| {
            let mut out = Vec::new();
            for (v, part) in remote.iter().zip(parts) {
                let range = part.range(r);
                let from = v.partition_point(|&u| u >> 1 < range.start);
                let to = v.partition_point(|&u| u >> 1 < range.end);
                put_varint(&mut out, (to - from) as u64);
                let mut prev = 0u64;
                for &u in &v[from..to] {
                    let w = u - (range.start << 1);
                    put_varint(&mut out, w - prev);
                    prev = w;
                }
            }
            out
        })
        .collect()
}

/// Call `f(array, index in the range held here, successor is a win)` for every update of a
/// message of [`encode_updates`].
fn decode_updates(msg: &[u8], arrays: usize, mut f: impl FnMut(usize, u64, bool)) {
    let mut at = 0;
    for y in 0..arrays {
        let n = get_varint(msg, &mut at);
        let mut w = 0u64;
        for _ in 0..n {
            w += get_varint(msg, &mut at);
            f(y, w >> 1, w & 1 != 0);
        }
    }
}

/// The in-process [`Exchange`]: R ranks as R threads of one process, meeting at a barrier.
struct LocalExchange<'a> {
    rank: usize,
    shared: &'a LocalShared,
}

struct LocalShared {
    ranks: usize,
    barrier: Barrier,
    /// `mail[from][to]`.
    mail: Mutex<Vec<Vec<Vec<u8>>>>,
    reduce: Mutex<Vec<Vec<u64>>>,
}

impl Exchange for LocalExchange<'_> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.shared.ranks
    }

    fn all_to_all(&self, send: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        assert_eq!(send.len(), self.shared.ranks, "one message per rank");
        // A poisoned lock only means another rank panicked; the data is still whole.
        let lock = || self.shared.mail.lock().unwrap_or_else(|p| p.into_inner());
        lock()[self.rank] = send;
        self.shared.barrier.wait();
        let got = {
            let mut mail = lock();
            (0..self.shared.ranks)
                .map(|from| std::mem::take(&mut mail[from][self.rank]))
                .collect()
        };
        self.shared.barrier.wait();
        got
    }

    fn all_max(&self, x: &[u64]) -> Vec<u64> {
        let lock = || self.shared.reduce.lock().unwrap_or_else(|p| p.into_inner());
        lock()[self.rank] = x.to_vec();
        self.shared.barrier.wait();
        let out = lock().iter().fold(vec![0u64; x.len()], |mut m, v| {
            for (a, b) in m.iter_mut().zip(v) {
                *a = (*a).max(*b);
            }
            m
        });
        self.shared.barrier.wait();
        out
    }
}

/// Run `f` on `ranks` ranks in this process (one thread each, joined by an in-process
/// [`Exchange`]) and return each rank's result, by rank. For tests and comparisons with the
/// unsplit solver: every rank's rayon work shares this process's pool.
///
/// # Panics
/// If `f` panics on a rank (the others may then wait forever at the next collective, as MPI
/// ranks would).
pub fn run_local<T: Send>(ranks: usize, f: impl Fn(&dyn Exchange) -> T + Sync) -> Vec<T> {
    let ranks = ranks.max(1);
    let shared = LocalShared {
        ranks,
        barrier: Barrier::new(ranks),
        mail: Mutex::new(vec![Vec::new(); ranks]),
        reduce: Mutex::new(vec![Vec::new(); ranks]),
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..ranks)
            .map(|rank| {
                let shared = &shared;
                let f = &f;
                scope.spawn(move || f(&LocalExchange { rank, shared }))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_are_aligned_and_cover() {
        for (n, r, a) in [
            (0, 3, 64),
            (1, 3, 64),
            (1000, 3, 64),
            (65_520 * 7 + 5, 3, 65_520),
        ] {
            let p = Partition::new(n, r, a);
            assert_eq!(p.bounds.len(), r + 1);
            assert_eq!((p.bounds[0], p.bounds[r]), (0, n));
            for w in p.bounds.windows(2) {
                assert!(w[0] <= w[1]);
            }
            for b in &p.bounds[..r] {
                assert!(b % a == 0 || *b == n, "{p:?}");
            }
        }
        // 7 blocks and a bit over 3 ranks: 3 + 3 + 2 blocks (the last one partial).
        let p = Partition::new(65_520 * 7 + 5, 3, 65_520);
        assert_eq!(p.bounds, vec![0, 3 * 65_520, 6 * 65_520, 7 * 65_520 + 5]);
    }

    #[test]
    fn update_lists_round_trip() {
        let parts = vec![Partition::new(1000, 3, 64), Partition::new(500, 3, 64)];
        let mut remote = vec![
            vec![
                5 << 1,
                999 << 1 | 1,
                400 << 1 | 1,
                5 << 1,
                383 << 1,
                384 << 1,
            ],
            vec![1, 499 << 1],
        ];
        let want = remote.clone();
        let msgs = encode_updates(&mut remote, &parts, 3);
        let mut got = [Vec::new(), Vec::new()];
        for (r, m) in msgs.iter().enumerate() {
            decode_updates(m, 2, |y, j, w| {
                got[y].push((j + parts[y].bounds[r]) << 1 | u64::from(w))
            });
        }
        for y in 0..2 {
            let mut a = want[y].clone();
            a.sort_unstable();
            assert_eq!(got[y], a);
        }
    }

    #[test]
    fn local_exchange_moves_messages_and_maxima() {
        let out = run_local(3, |ex| {
            let r = ex.rank() as u8;
            let got = ex.all_to_all((0..3).map(|to| vec![r, to as u8]).collect());
            let m = ex.all_max(&[u64::from(r), 10 - u64::from(r)]);
            (got, m)
        });
        for (me, (got, m)) in out.iter().enumerate() {
            for (from, msg) in got.iter().enumerate() {
                assert_eq!(msg, &vec![from as u8, me as u8]);
            }
            assert_eq!(m, &vec![2, 10]);
        }
    }

    /// King against king and the two-piece units with men: the split solve over 1, 2, 3 and
    /// 5 ranks (ranges of 64 positions, so most predecessors are remote) gives exactly the
    /// unsplit solver's values, captures, counts and longest ply. Lookups leave the unit
    /// only by capturing the last piece (a loss for the side left without pieces) or by
    /// crowning/advancing into slices whose values are computed here by the unsplit solver.
    #[test]
    fn split_solve_equals_unsplit_on_king_against_king() {
        let s: Slice = "0101-nn".parse().unwrap();
        let lookup = |p: &Position| -> Result<Wld, ()> {
            assert_eq!(p.piece_count(), 1, "only captures leave K v K");
            Ok(Wld::Loss)
        };
        let whole = solve::solve_unit_opts(
            crate::rules::English,
            s,
            &lookup,
            &|_| {},
            &SolveOptions::default(),
        )
        .unwrap();
        for ranks in [1, 2, 3, 5] {
            let out = run_local(ranks, |ex| {
                solve_unit_split(crate::rules::English, s, &lookup, &|_| {}, ex, 64).unwrap()
            });
            let got = out[0].0.as_ref().expect("rank 0 gathers");
            assert!(out[1..].iter().all(|o| o.0.is_none()));
            assert_eq!(got.len(), whole.len());
            for (g, w) in got.iter().zip(&whole) {
                assert_eq!(g.values, w.values, "{ranks} ranks");
                assert_eq!(g.captures, w.captures);
                assert_eq!((g.wins, g.losses, g.draws), (w.wins, w.losses, w.draws));
                assert_eq!((g.longest, g.plies), (w.longest, w.plies));
            }
            if ranks > 1 {
                let sent: u64 = out.iter().map(|o| o.1.updates_sent).sum();
                assert!(sent > 0, "{ranks} ranks exchanged nothing");
            }
        }
    }

    #[test]
    fn a_failed_lookup_stops_every_rank() {
        let s: Slice = "0101-nn".parse().unwrap();
        let out = run_local(3, |ex| {
            let me = ex.rank();
            let lookup = |_: &Position| -> Result<Wld, usize> {
                if me >= 1 {
                    Err(me)
                } else {
                    Ok(Wld::Loss)
                }
            };
            solve_unit_split(crate::rules::English, s, &lookup, &|_| {}, ex, 64).map(|_| ())
        });
        // Rank 0's lookups succeed; every rank stops, rank 0 naming a failed one.
        assert!(out[0]
            .as_ref()
            .is_err_and(|e| matches!(e, SplitError::Peer(1 | 2))));
        assert!(out.iter().all(Result::is_err));
        assert!(out.iter().any(|o| o
            .as_ref()
            .is_err_and(|e| matches!(e, SplitError::Lookup(_)))));
    }
}
