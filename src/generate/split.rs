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
//!    `index << 1 | successor is a win`), and [`Exchange::all_to_all`] moves them; each
//!    rank applies what it receives with the same rules. A ply runs in rounds: a rank
//!    exchanges once it holds [`ROUND_UPDATES`] updates for others (or has propagated all of
//!    its range), and every rank takes part in as many rounds as the busiest one needs, so
//!    the buffers stay about a byte per position held ([`exchange_round_bytes`]) whatever
//!    the unit. The updates of a ply commute (a
//!    position refuted by one move and won by another cannot be both: its counter still
//!    counts the winning move), so the order in which ranks apply them does not matter and
//!    the values are those of the unsplit solver. An [`Exchange::all_max`] of "resolved
//!    anything at this ply" ends the loop when no rank resolved anything (past ply 0).
//! 3. **Writing** ([`write_split`]): every rank encodes its own blocks of each file and writes
//!    them at its offset of the temporary file rank 0 lays out (header and offset table from
//!    the prefix sums of the blocks' lengths); rank 0 checks every block read back, appends the
//!    file checksum and renames the file into place. The bytes are a single-process build's.
//!    ([`gather`] instead assembles the unit's values on rank 0, one byte per position, for
//!    tests and comparisons with the unsplit solver.)
//!
//! The transport is the [`Exchange`] trait: [`run_local`] runs R partitions on R threads of
//! one process (tests, and the comparison with the unsplit solver); `egdb build --mpi`
//! implements it over MPI (`MPI_Alltoallv`, `MPI_Allreduce`).
//!
//! **Distance passes** (`--dtc`, [`dtc_split_local`]) are split the same way: the solve keeps
//! the resolution plies of its ranges (two more bytes per position held), then the
//! king-moves-only solve of [`solve::solve_dtc_unit`] runs over the same ranges. Its initial
//! state reads the partner slice's WLD value at the target of each in-unit man move of a won
//! position (any index), so it starts with one request exchange (each rank sends the owners
//! the sorted, deduplicated, delta-coded list of the targets outside its own range) and one
//! answer exchange (a byte per target, in the order asked); the propagation is the WLD
//! solve's, king moves only; each rank checks its range's values against its WLD values. A
//! unit whose value files exist gets its distance pass alone, each rank reading its range's
//! values through the store. The distance files are written as the value files are
//! ([`write_dtc_split`]: every rank encodes the blocks of its block-aligned range, rank 0
//! lays out the head, every rank writes its bytes at its offset), so they are the
//! single-process writer's bytes and no rank holds more than its range of a slice
//! ([`gather_dtc`] assembles a slice's distances on rank 0 for tests and comparisons). Per
//! rank: the solver state and the plies of its range (3 bytes per position held), its range's
//! WLD values (the value files' solution, 1 byte and a bit), the request lists (at most 8
//! bytes per in-unit man move of its won positions, fewer after deduplication).

use super::solve::{self, DtcError, DtcSlice, Side, SolveOptions, SolvedSlice, WldInput};
use super::BuildSummary;
use crate::board::{Position, Wld};
use crate::index::SliceIndex;
use crate::rules::Retro;
use crate::slice::Slice;
use crate::table::dtc::{distance_layout, dtc_path, encode_distance_blocks};
use crate::table::write::{create_temp, encode_blocks, layout, BlockInfo, EncodedBlock};
use crate::table::{table_path, FileKind, TableError, TableMeta, WriteOptions};
use bitvec::prelude::{BitSlice, BitVec, Lsb0};
use rayon::prelude::*;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Barrier, Mutex};
use std::time::Instant;
use xxhash_rust::xxh64::{xxh64, Xxh64};

/// The alignment of the ranges of a split unit in a build: the table file's block (65,520
/// positions), so each rank's range is whole blocks of the file.
pub const BLOCK_ALIGN: u64 = crate::table::write::DEFAULT_BLOCK_POSITIONS as u64;

/// The most predecessor updates for other ranks one rank gathers before a round of a split
/// ply's exchange: 2^24 (128 MiB as `u64`). A rank holding `n` positions of the unit gathers
/// [`round_updates`]`(n)`: `n / 32`, at least 4,096, at most this; a ply runs in as many
/// rounds as its busiest rank needs.
pub const ROUND_UPDATES: usize = 1 << 24;

/// Chunks of each array propagated between two checks of a round's updates, at most (256
/// chunks of 4,096 positions; fewer for smaller caps: the first group of a round about a cap's
/// worth at 4 remote updates a position, the next ones sized from the round's rate so far).
const ROUND_GROUP: usize = 1 << 8;

/// The cap of [`round_updates`] without a test's override.
fn round_rule(n: u64) -> usize {
    (n / 32).clamp(4096, ROUND_UPDATES as u64) as usize
}

/// Updates a rank holding `n` positions of a split unit gathers before a round of a ply's
/// exchange: `n / 32` within `[4096, ROUND_UPDATES]` (or what a test set,
/// [`set_round_updates_for_tests`]).
pub fn round_updates(n: u64) -> usize {
    match ROUND_CAP.load(std::sync::atomic::Ordering::Relaxed) {
        0 => round_rule(n),
        t => t,
    }
}

/// The memory one round of a split ply's exchange needs on a rank holding `n` positions of the
/// unit, beside its share of the state: the round's updates ([`round_updates`], up to twice that
/// with the last group of chunks, assuming at most 4 remote updates a position) at 8 bytes
/// each, their coded copies (measured 1.1 bytes per update, docs/mpi.md; 4 allowed) and what
/// it receives (as much again): 32 bytes per update of the cap, about a byte per position
/// held (128 KiB at least, 512 MiB at most). Charged by [`super::driver::split_unit`] and
/// `egdb plan --ranks`.
pub fn exchange_round_bytes(n: u64) -> u64 {
    32 * round_rule(n) as u64
}

/// 0: the rule of [`round_updates`]; else a test's cap.
static ROUND_CAP: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Tests only: the updates a rank gathers before a round of a split ply's exchange (0 restores
/// [`round_updates`]'s rule), so that small units run their plies in many rounds. The values
/// and files do not depend on it, nor does [`exchange_round_bytes`]. Process-wide.
#[doc(hidden)]
pub fn set_round_updates_for_tests(n: usize) {
    ROUND_CAP.store(n, std::sync::atomic::Ordering::Relaxed);
}

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
    /// Bytes sent to rank 0 for the gathering (values of this rank's ranges, when gathered).
    pub gather_bytes: u64,
    /// Bytes sent to other ranks while writing the files of a split unit: values moved to
    /// the block-aligned ranges (none when the solve's ranges are block-aligned, as in a
    /// build) and the block lists sent to rank 0.
    pub write_bytes: u64,
    /// Plies of the distance pass (`--dtc`).
    pub dtc_plies: u32,
    /// Bytes this rank sent to other ranks at each ply of the distance pass.
    pub dtc_bytes_per_ply: Vec<u64>,
    /// Updates this rank sent to other ranks in the distance pass's propagation.
    pub dtc_updates_sent: u64,
    /// Bytes this rank sent to other ranks for the distance pass's initial state (its
    /// requests for partner values and its answers to the others' requests).
    pub dtc_request_bytes: u64,
    /// Exchange rounds of the propagations (WLD and distance pass together): one per ply,
    /// more where a ply's updates for other ranks passed [`round_updates`] on some rank.
    pub rounds: u64,
}

/// Why a split solve failed.
#[derive(Debug)]
pub enum SplitError<E> {
    /// This rank failed: a lookup of the solve (the first failing position of its range), a
    /// step of writing ([`write_split`]).
    Own(E),
    /// Another rank failed (the lowest such rank): every rank stops.
    Peer(usize),
}

/// A unit solved split over ranks, as one rank holds it after [`solve_split_local`]: this
/// rank's range of each slice, solved, and what the unit's files need of the whole (the
/// longest resolution, the plies).
#[derive(Debug)]
pub struct SplitSolved {
    /// The unit's slices (the one solved first, then its partner if it has one).
    pub slices: Vec<Slice>,
    /// The ranges of each slice over the ranks.
    pub parts: Vec<Partition>,
    /// This rank's range of each slice, solved: values, captures and counts of the range only
    /// (`longest` and `plies` are the unit's).
    pub local: Vec<SolvedSlice>,
    /// The longest resolution of each slice over all the ranks.
    pub longest: Vec<u32>,
    /// Plies propagated.
    pub plies: u32,
    /// Seconds of the initial pass and of the propagation.
    pub times: (f64, f64),
}

/// Solve the unit of slice `s` split over the ranks of `ex`, each holding its range of both
/// slices ([`Partition::new`] with `align`), and return on rank 0 the unit's
/// [`SolvedSlice`]s gathered (`s` first, as [`solve::solve_unit_opts`] returns them,
/// identical to them); `None` on the other ranks; and this rank's figures. (A build does not
/// gather: it writes the files from every rank's range, [`write_split`].)
///
/// # Errors
/// [`SplitError::Own`] on the rank whose lookup failed, [`SplitError::Peer`] on the others
/// (every rank returns).
#[cfg(test)]
pub fn solve_unit_split<R: Retro, E: Send>(
    rules: R,
    s: Slice,
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
    progress: solve::Progress<'_>,
    ex: &dyn Exchange,
    align: u64,
) -> Result<(Option<Vec<SolvedSlice>>, SplitStats), SplitError<E>> {
    let (solved, mut stats) = solve_split_local(rules, s, lookup, progress, ex, align, false)?;
    let out = gather(solved, ex, &mut stats);
    Ok((out, stats))
}

/// Solve the unit of slice `s` split over the ranks of `ex` (every rank calls this with the
/// same unit), each holding its range of both slices ([`Partition::new`] with `align`): the
/// initial pass and the propagation of the module's description. With `record_plies`, the
/// resolution plies of the range are kept (for the distance pass, [`dtc_split_local`]).
/// Returns this rank's part ([`SplitSolved`]) and figures.
///
/// # Errors
/// [`SplitError::Own`] on the rank whose lookup failed, [`SplitError::Peer`] on the others
/// (every rank returns).
pub fn solve_split_local<R: Retro, E: Send>(
    rules: R,
    s: Slice,
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
    progress: solve::Progress<'_>,
    ex: &dyn Exchange,
    align: u64,
    record_plies: bool,
) -> Result<(SplitSolved, SplitStats), SplitError<E>> {
    let (me, ranks) = (ex.rank(), ex.ranks());
    let (slices, parts) = unit_parts(s, ranks, align);
    let opts = SolveOptions { record_plies };
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
    agree(ex, init)?;
    let t1 = Instant::now();
    let (ply, per_ply, rounds) = propagate_split(rules, &sides, &parts, ex);
    stats.rounds += rounds;
    stats.updates_sent += per_ply.iter().map(|x| x.1).sum::<u64>();
    stats.bytes_per_ply = per_ply.iter().map(|x| x.0).collect();
    stats.updates_per_ply = per_ply.iter().map(|x| x.1).collect();
    let longest: Vec<u64> = sides.iter().map(|x| u64::from(x.longest())).collect();
    let longest = ex.all_max(&longest);
    for (side, l) in sides.iter().zip(&longest) {
        side.set_longest(*l as u32);
    }
    stats.plies = ply;
    let t2 = Instant::now();
    let times = ((t1 - t0).as_secs_f64(), (t2 - t1).as_secs_f64());

    let local: Vec<SolvedSlice> = sides
        .into_iter()
        .map(|side| solve::collect(side, times, ply))
        .collect();
    let longest = longest.iter().map(|&l| l as u32).collect();
    Ok((
        SplitSolved {
            slices,
            parts,
            local,
            longest,
            plies: ply,
            times,
        },
        stats,
    ))
}

/// The slices of the unit of `s` (`s` first, then its partner if it has one) and their
/// ranges over `ranks` ranks aligned to `align` positions.
pub(crate) fn unit_parts(s: Slice, ranks: usize, align: u64) -> (Vec<Slice>, Vec<Partition>) {
    let p = s.partner();
    let slices: Vec<Slice> = if p == s { vec![s] } else { vec![s, p] };
    let parts = slices
        .iter()
        .map(|x| Partition::new(SliceIndex::new(*x).size(), ranks, align))
        .collect();
    (slices, parts)
}

/// The propagation of a split unit (the WLD solve's or the distance pass's: the sides'
/// policy decides which moves stay in the unit), one bulk-synchronous step per ply until no
/// rank resolved anything at a ply (past ply 0). Collective. Returns the plies and, per ply,
/// the bytes and the updates this rank sent to other ranks, and the exchange rounds.
fn propagate_split<R: Retro>(
    rules: R,
    sides: &[Side],
    parts: &[Partition],
    ex: &dyn Exchange,
) -> (u32, Vec<(u64, u64)>, u64) {
    let (me, ranks) = (ex.rank(), ex.ranks());
    let other = |x: usize| if sides.len() == 1 { 0 } else { 1 - x };
    let chunks = sides.iter().map(Side::chunks).max().unwrap_or(0);
    let mut rounds = 0u64;
    let held: u64 = sides.iter().map(Side::held).sum();
    let cap = round_updates(held);
    // Chunks of the first group of a round: about a cap's worth at 4 remote updates a position;
    // later groups are sized from the updates the round's groups gave so far, so that one
    // group does not run far past the cap in units with many predecessors a position.
    let first_step = (cap / (2 * 4096 * 4)).clamp(1, ROUND_GROUP);
    let mut per_ply = Vec::new();
    let mut ply: u32 = 0;
    loop {
        let next = ((ply & 1) ^ 1) as u8;
        // The ply in rounds: each rank propagates groups of chunks (chunk c of both arrays
        // together) until it holds `cap` updates for other ranks or has none left, then every
        // rank exchanges and applies, until no rank has chunks left. Applying a round's
        // updates before the next round's chunks are propagated is what the unsplit solver
        // does too (it applies as it goes): they tag positions for the next ply only.
        let (mut found, mut sent, mut updates, mut at) = (false, 0u64, 0u64, 0usize);
        let any = loop {
            let mut remote: Vec<Vec<u64>> = vec![Vec::new(); sides.len()];
            let (mut step, mut held, mut walked) = (first_step, 0usize, 0usize);
            while at < chunks && held < cap {
                let group = at..(at + step).min(chunks);
                let (a, b) = if sides.len() == 1 {
                    (
                        solve::propagate_ply_split(rules, &sides[0], &sides[0], ply, group.clone()),
                        (false, Vec::new()),
                    )
                } else {
                    rayon::join(
                        || {
                            solve::propagate_ply_split(
                                rules,
                                &sides[0],
                                &sides[1],
                                ply,
                                group.clone(),
                            )
                        },
                        || {
                            solve::propagate_ply_split(
                                rules,
                                &sides[1],
                                &sides[0],
                                ply,
                                group.clone(),
                            )
                        },
                    )
                };
                found |= a.0 || b.0;
                // Remote updates by target array: side x's predecessors are in side other(x).
                remote[other(0)].extend(a.1);
                if sides.len() == 2 {
                    remote[other(1)].extend(b.1);
                }
                walked += group.len();
                at = group.end;
                held = remote.iter().map(Vec::len).sum::<usize>();
                // The chunks that would fill the rest of the cap at this round's rate so far.
                let per_chunk = held.div_ceil(walked).max(1);
                step = ((cap.saturating_sub(held)).div_ceil(per_chunk)).clamp(1, ROUND_GROUP);
            }
            let send = encode_updates(&mut remote, parts, ranks);
            sent += bytes_to_others(&send, me);
            updates += remote.iter().map(|v| v.len() as u64).sum::<u64>();
            drop(remote);
            let received = ex.all_to_all(send);
            received.par_iter().for_each(|msg| {
                decode_updates(msg, sides.len(), |y, j, is_win| {
                    sides[y].apply(j as usize, is_win, next);
                });
            });
            drop(received);
            rounds += 1;
            let m = ex.all_max(&[u64::from(at < chunks), u64::from(found)]);
            if m[0] == 0 {
                break m[1] != 0;
            }
        };
        per_ply.push((sent, updates));
        if !any && ply >= 1 {
            break;
        }
        ply += 1;
    }
    for side in sides {
        side.check_propagated(ply);
    }
    (ply, per_ply, rounds)
}

/// The distance pass (`--dtc`) of a unit split over the ranks of `ex`: the slices `slices`
/// with their ranges `parts` (as [`unit_parts`] gives them), `wld` this rank's range of each
/// slice's WLD solution (with the resolution plies when the WLD pass just ran, without when
/// read from the files). Collective. As the unsplit pass ([`solve::solve_dtc_unit`]), with
/// the partner slice's values read by a request and an answer exchange:
///
/// 1. **Requests**: each rank lists the targets of the in-unit man moves of its won
///    positions (those the initial state reads) that lie outside its range of the partner
///    slice, sorted, deduplicated and delta-coded as the propagation's update lists, and one
///    [`Exchange::all_to_all`] sends them to their owners; a second one brings back their
///    values, one byte per target, in the order asked.
/// 2. **Initial pass**: local, reading the partner's values from its own range or the answers.
/// 3. **Propagation**: king moves only, ply by ply over the same exchange as the WLD solve.
/// 4. **Check and distances**: each rank checks its range's values against its WLD values and
///    returns its range's distances ([`DtcSlice`] of the range: indices of `longest_win` and
///    `longest_loss` are the slice's; [`gather_dtc`] assembles a slice on rank 0).
///
/// Adds the exchange figures to `stats`.
///
/// # Errors
/// [`SplitError::Own`] on a rank whose lookup failed, whose values disagree with its WLD
/// values or whose distance is too long (the lowest such rank's error), [`SplitError::Peer`]
/// on the others.
pub fn dtc_split_local<R: Retro, E: Send>(
    rules: R,
    slices: &[Slice],
    parts: &[Partition],
    wld: &[WldInput<'_>],
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
    ex: &dyn Exchange,
    stats: &mut SplitStats,
) -> Result<Vec<DtcSlice>, SplitError<DtcError<E>>> {
    let (me, ranks) = (ex.rank(), ex.ranks());
    let t0 = Instant::now();
    let opts = SolveOptions { record_plies: true };
    let sides: Vec<Side> = slices
        .iter()
        .zip(parts)
        .map(|(x, part)| Side::range(*x, &opts, part.range(me)).kings_only())
        .collect();
    assert_eq!(
        wld.len(),
        sides.len(),
        "one WLD input per slice of the unit"
    );
    let other = |x: usize| if sides.len() == 1 { 0 } else { 1 - x };

    // 1. Requests, by target array, and their answers (the values of `asked[y]`, in order).
    let mut asked: Vec<Vec<u64>> = vec![Vec::new(); sides.len()];
    for x in 0..sides.len() {
        let y = other(x);
        let found = solve::dtc_remote_targets(rules, &sides[x], &sides[y], wld[x]);
        asked[y].extend(found);
    }
    for v in &mut asked {
        v.par_sort_unstable();
        v.dedup();
    }
    let send = encode_updates(&mut asked, parts, ranks);
    stats.dtc_request_bytes += bytes_to_others(&send, me);
    let requests = ex.all_to_all(send);
    let answers: Vec<Vec<u8>> = requests
        .iter()
        .map(|msg| {
            let mut out = Vec::new();
            decode_updates(msg, sides.len(), |y, j, _| {
                out.push(wld[y].values[j as usize]);
            });
            out
        })
        .collect();
    drop(requests);
    stats.dtc_request_bytes += bytes_to_others(&answers, me);
    let got = ex.all_to_all(answers);
    let mut vals: Vec<Vec<u8>> = asked.iter().map(|v| Vec::with_capacity(v.len())).collect();
    for (r, msg) in got.iter().enumerate() {
        let mut at = 0;
        for (y, v) in asked.iter().enumerate() {
            let range = parts[y].range(r);
            let n = v.partition_point(|&u| u >> 1 < range.end)
                - v.partition_point(|&u| u >> 1 < range.start);
            vals[y].extend_from_slice(&msg[at..at + n]);
            at += n;
        }
    }
    drop(got);

    // 2. The initial pass.
    let init = solve::both_sides(&sides, |x| {
        let y = other(x);
        let (held, theirs, ask, val) = (parts[y].range(me), wld[y].values, &asked[y], &vals[y]);
        solve::dtc_initial_pass(rules, &sides[x], &sides[y], wld[x], lookup, |k| {
            let v = if held.contains(&k) {
                theirs[(k - held.start) as usize]
            } else {
                match ask.binary_search(&(k << 1)) {
                    Ok(a) => val[a],
                    Err(_) => not_asked(slices[y], k),
                }
            };
            Wld::from_u8(v).unwrap_or(Wld::Draw)
        })
    });
    drop((asked, vals));
    agree(ex, init.map_err(DtcError::Lookup))?;

    // 3. The propagation, 4. the check and the distances.
    let (ply, per_ply, rounds) = propagate_split(rules, &sides, parts, ex);
    stats.rounds += rounds;
    stats.dtc_plies = ply;
    stats.dtc_bytes_per_ply = per_ply.iter().map(|x| x.0).collect();
    stats.dtc_updates_sent += per_ply.iter().map(|x| x.1).sum::<u64>();
    let seconds = t0.elapsed().as_secs_f64();
    let out: Result<Vec<DtcSlice>, DtcError<E>> = sides
        .into_iter()
        .enumerate()
        .map(|(x, side)| solve::dtc_finish(side, wld[x].values, ply, seconds))
        .collect();
    agree(ex, out)
}

/// The bytes of the messages `send` that go to ranks other than `me`.
fn bytes_to_others<T>(send: &[Vec<T>], me: usize) -> u64 {
    send.iter()
        .enumerate()
        .filter(|(r, _)| *r != me)
        .map(|(_, m)| m.len() as u64)
        .sum()
}

/// The distance pass read a partner value it did not ask for: an internal error (the
/// requests and the initial state enumerate the same moves), never a property of the input.
#[cold]
#[inline(never)]
fn not_asked(slice: Slice, index: u64) -> ! {
    panic!(
        "internal error: the distance pass of a split unit read position {index} of slice \
         {slice}, which it did not request; please report this"
    )
}

/// Gather the distances of one slice of a split unit on rank 0 (each rank's [`DtcSlice`] of
/// its range, from [`dtc_split_local`]; two bytes and a bit per position) and return there
/// the slice's [`DtcSlice`] as the unsplit pass returns it (counts summed, the longest
/// distances the first of the largest); `None` on the other ranks. Collective. Adds the
/// bytes sent to [`SplitStats::gather_bytes`].
pub fn gather_dtc(d: DtcSlice, ex: &dyn Exchange, stats: &mut SplitStats) -> Option<DtcSlice> {
    let (me, ranks) = (ex.rank(), ex.ranks());
    let best = |b: Option<(u64, u32)>| b.map_or([0, 0, 0], |(i, x)| [1, i, u64::from(x)]);
    let head = [d.wins, d.losses]
        .into_iter()
        .chain(best(d.longest_win))
        .chain(best(d.longest_loss))
        .chain([d.dtc.len() as u64]);
    let mut msg: Vec<u8> = head.flat_map(u64::to_le_bytes).collect();
    msg.extend(d.dtc.iter().flat_map(|x| x.to_le_bytes()));
    msg.extend(d.dont_care.chunks(8).map(|c| {
        c.iter()
            .by_vals()
            .enumerate()
            .fold(0u8, |b, (k, v)| b | (u8::from(v) << k))
    }));
    let (slice, seconds) = (d.slice, d.seconds);
    drop(d);
    stats.gather_bytes += if me == 0 { 0 } else { msg.len() as u64 };
    let mut send = vec![Vec::new(); ranks];
    send[0] = msg;
    let got = ex.all_to_all(send);
    if me != 0 {
        return None;
    }
    const HEAD: usize = 9 * 8;
    let total: usize = got.iter().map(|m| words(&m[..HEAD])[8] as usize).sum();
    let mut out = DtcSlice {
        slice,
        dtc: Vec::with_capacity(total),
        wins: 0,
        losses: 0,
        longest: 0,
        dont_care: BitVec::with_capacity(total),
        longest_win: None,
        longest_loss: None,
        seconds,
    };
    // The ranks' ranges ascend: the first rank with the largest distance has its first index.
    for m in &got {
        let w = words(&m[..HEAD]);
        out.wins += w[0];
        out.losses += w[1];
        for (best, k) in [(&mut out.longest_win, 2), (&mut out.longest_loss, 5)] {
            if w[k] == 1 && best.is_none_or(|(_, b)| w[k + 2] > u64::from(b)) {
                *best = Some((w[k + 1], w[k + 2] as u32));
            }
        }
        let n = w[8] as usize;
        let body = &m[HEAD..];
        out.dtc.extend(
            body[..2 * n]
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]])),
        );
        out.dont_care.extend(
            body[2 * n..]
                .iter()
                .flat_map(|b| (0..8).map(move |k| b >> k & 1 != 0))
                .take(n),
        );
    }
    out.longest = out
        .longest_win
        .map_or(0, |x| x.1)
        .max(out.longest_loss.map_or(0, |x| x.1));
    Some(out)
}

/// Gather a split unit's values on rank 0 (one byte per position: the value, plus 128 for a
/// capture position) and return there the unit's [`SolvedSlice`]s as the unsplit solver
/// returns them; `None` on the other ranks. Collective. Adds the bytes sent to
/// [`SplitStats::gather_bytes`].
pub fn gather(
    solved: SplitSolved,
    ex: &dyn Exchange,
    stats: &mut SplitStats,
) -> Option<Vec<SolvedSlice>> {
    let (me, ranks) = (ex.rank(), ex.ranks());
    let SplitSolved {
        slices,
        parts,
        local,
        longest,
        plies,
        times,
    } = solved;
    let mut msg = Vec::with_capacity(local.iter().map(|x| x.values.len()).sum());
    for sv in &local {
        msg.extend(
            sv.values
                .iter()
                .zip(sv.captures.iter().by_vals())
                .map(|(&v, c)| v | (u8::from(c) << 7)),
        );
    }
    stats.gather_bytes += if me == 0 { 0 } else { msg.len() as u64 };
    let mut send = vec![Vec::new(); ranks];
    send[0] = msg;
    drop(local);
    let received = ex.all_to_all(send);
    if me != 0 {
        return None;
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
        out.push(assemble(*slice, &bytes, longest[x], times, plies));
    }
    Some(out)
}

/// Every rank learns whether a step failed on some rank (the lowest such rank): `r` on this
/// rank. Collective.
pub(crate) fn agree<T, E>(ex: &dyn Exchange, r: Result<T, E>) -> Result<T, SplitError<E>> {
    let (me, ranks) = (ex.rank(), ex.ranks());
    let flag = if r.is_err() { (ranks - me) as u64 } else { 0 };
    let failed = ex.all_max(&[flag])[0];
    match r {
        Err(e) => Err(SplitError::Own(e)),
        Ok(_) if failed != 0 => Err(SplitError::Peer(ranks - failed as usize)),
        Ok(t) => Ok(t),
    }
}

/// Little-endian u64 words of a message.
fn words(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

/// The records of this rank's range of `to` from the ranks' ranges of `from`: each rank
/// sends every other rank the part of its range that falls in the other's, `put(k, out)`
/// appending the record of the `k`-th position of this rank's range of `from` (the same
/// number of bytes for every position). Collective. Returns the records, in index order,
/// and the bytes sent to other ranks.
fn move_to_ranges(
    put: impl Fn(usize, &mut Vec<u8>),
    from: &Partition,
    to: &Partition,
    ex: &dyn Exchange,
) -> (Vec<u8>, u64) {
    let (me, ranks) = (ex.rank(), ex.ranks());
    let have = from.range(me);
    let send: Vec<Vec<u8>> = (0..ranks)
        .map(|r| {
            let want = to.range(r);
            let (a, b) = (have.start.max(want.start), have.end.min(want.end));
            let mut m = Vec::new();
            for i in a..b {
                put((i - have.start) as usize, &mut m);
            }
            m
        })
        .collect();
    let sent = bytes_to_others(&send, me);
    // The pieces arrive by sender; the senders' ranges ascend, so they join in index order.
    (ex.all_to_all(send).concat(), sent)
}

/// The values and capture flags of this rank's range of `to` from the ranks' ranges of
/// `from` (`values`, `captures`: this rank's range of `from`; one byte per position moved:
/// the value, plus 128 for a capture position). Collective. Returns the values, the flags
/// and the bytes sent to other ranks.
fn redistribute(
    values: &[u8],
    captures: &BitSlice<u64, Lsb0>,
    from: &Partition,
    to: &Partition,
    ex: &dyn Exchange,
) -> (Vec<u8>, BitVec<u64, Lsb0>, u64) {
    let put = |k: usize, m: &mut Vec<u8>| m.push(values[k] | (u8::from(captures[k]) << 7));
    let (bytes, sent) = move_to_ranges(put, from, to, ex);
    debug_assert_eq!(
        bytes.len() as u64,
        to.range(ex.rank()).end - to.range(ex.rank()).start
    );
    let v = bytes.par_iter().map(|b| b & 0x7f).collect();
    let c = bytes.iter().map(|b| b & 0x80 != 0).collect();
    (v, c, sent)
}

/// [`redistribute`] for distances and their don't-care bits (three bytes per position
/// moved: the distance, little-endian, then the bit).
fn redistribute_distances(
    dtc: &[u16],
    dont_care: &BitSlice<u64, Lsb0>,
    from: &Partition,
    to: &Partition,
    ex: &dyn Exchange,
) -> (Vec<u16>, BitVec<u64, Lsb0>, u64) {
    let put = |k: usize, m: &mut Vec<u8>| {
        m.extend(dtc[k].to_le_bytes());
        m.push(u8::from(dont_care[k]));
    };
    let (bytes, sent) = move_to_ranges(put, from, to, ex);
    let d = bytes
        .chunks_exact(3)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let c = bytes.chunks_exact(3).map(|c| c[2] != 0).collect();
    (d, c, sent)
}

/// Write the files of a unit solved split ([`solve_split_local`]) into `dir` with the writer
/// settings `wopts`, every rank encoding its own blocks (docs/mpi.md, "Writing a split
/// unit"). Collective: every rank calls it with its part. For each slice:
///
/// 1. Each rank holds the values of its block-aligned range of the slice
///    ([`Partition::new`] with the file's block): its own solved range when the solve's
///    ranges are block-aligned (a build), else moved there from the ranks that solved them.
/// 2. Each rank encodes its blocks (each block is encoded on its own, so they are the blocks
///    of a single-process write) and sends rank 0 their lengths and check words and its
///    counts; rank 0 lays out the header and offset table (the prefix sums of the lengths),
///    creates the temporary file with them and sends every rank the offset of its data.
/// 3. Each rank writes its blocks' bytes at its offset and flushes them (`fsync`).
/// 4. Rank 0 reads the file back, checks every block against the check word its encoder
///    computed (a rank whose writes it does not see is caught here, never written into a
///    file with a valid checksum), appends the file checksum, flushes it and renames the file
///    into place.
///
/// The bytes equal those of a single-process build ([`crate::table::write_table_masked`]).
/// Returns on rank 0 the counts, bytes and write time; `None` on the other ranks. Adds the
/// bytes this rank sent to other ranks to [`SplitStats::write_bytes`].
///
/// # Errors
/// [`SplitError::Own`] on the rank that failed (encoding, a file operation, the temporary file
/// not visible on this rank, a block read back different), [`SplitError::Peer`] on the others.
pub(crate) fn write_split(
    dir: &Path,
    solved: SplitSolved,
    ex: &dyn Exchange,
    wopts: &WriteOptions,
    stats: &mut SplitStats,
) -> Result<Option<BuildSummary>, SplitError<TableError>> {
    let (me, ranks) = (ex.rank(), ex.ranks());
    let t0 = Instant::now();
    let mut sum = BuildSummary::default();
    let bp = u64::from(wopts.block_positions);
    let SplitSolved {
        slices,
        parts,
        local,
        longest,
        ..
    } = solved;
    for (x, sv) in local.into_iter().enumerate() {
        let slice = slices[x];
        let part = &parts[x];
        let n = part.bounds[ranks];
        let enc = Partition::new(n, ranks, bp);
        let mine = enc.range(me);
        let (values, captures) = if *part == enc {
            (sv.values, sv.captures)
        } else {
            let (v, c, sent) = redistribute(&sv.values, &sv.captures, part, &enc, ex);
            stats.write_bytes += sent;
            (v, c)
        };
        let count = |w: Wld| values.par_iter().filter(|&&v| v == w as u8).count() as u64;
        let counts = [count(Wld::Win), count(Wld::Loss), count(Wld::Draw)];
        let encoded = encode_blocks(slice, mine.start, &values, Some(&captures), wopts);
        drop((values, captures));
        let blocks = agree(ex, encoded)?;

        let path = table_path(dir, &slice);
        let head = FileHead {
            kind: FileKind::Wld,
            slice,
            positions: n,
            longest: longest[x],
            counts,
        };
        if let Some(p) = write_blocks_collectively(&path, &head, blocks, ex, wopts, stats)? {
            sum.add(&BuildSummary {
                slices_built: 1,
                positions: n,
                wins: p.meta.wins,
                losses: p.meta.losses,
                draws: p.meta.draws,
                bytes: p.file_len,
                ..Default::default()
            });
        }
    }
    sum.write_seconds = t0.elapsed().as_secs_f64();
    Ok((me == 0).then_some(sum))
}
/// Write the distance file of one slice of a unit whose distance pass ran split
/// ([`dtc_split_local`]: `d` is this rank's range of the slice, `part` the ranges) into
/// `dir` with the writer settings `wopts`, every rank encoding its own blocks as
/// [`write_split`] does for the value files: the distances are moved to block-aligned
/// ranges if the pass's ranges are not (in a build they are), each rank encodes its blocks
/// ([`encode_distance_blocks`]: the blocks of a single-process write), rank 0 lays out the
/// head from the lengths, counts and the slice's longest distance (an all-max over the
/// ranks), every rank writes its bytes at its offset, rank 0 checks them and renames the
/// file into place. No rank holds more than its range of the slice's distances. The bytes
/// equal those of [`crate::table::dtc::write_dtc`] for the gathered slice. Collective.
/// Returns on rank 0 the bytes and write time (`bytes`, `dtc_bytes`, `dtc_positions`,
/// `write_seconds`), `None` on the other ranks; adds the bytes sent to other ranks to
/// [`SplitStats::write_bytes`].
///
/// # Errors
/// As [`write_split`].
pub(crate) fn write_dtc_split(
    dir: &Path,
    d: DtcSlice,
    part: &Partition,
    ex: &dyn Exchange,
    wopts: &WriteOptions,
    stats: &mut SplitStats,
) -> Result<Option<BuildSummary>, SplitError<TableError>> {
    let (me, ranks) = (ex.rank(), ex.ranks());
    let t0 = Instant::now();
    let slice = d.slice;
    let n = part.bounds[ranks];
    let longest = ex.all_max(&[u64::from(d.longest)])[0];
    let held = d.dtc.len() as u64;
    let counts = [d.wins, d.losses, held.saturating_sub(d.wins + d.losses)];
    let enc = Partition::new(n, ranks, u64::from(wopts.block_positions));
    let (dtc, dont_care) = if *part == enc {
        (d.dtc, d.dont_care)
    } else {
        let (v, c, sent) = redistribute_distances(&d.dtc, &d.dont_care, part, &enc, ex);
        stats.write_bytes += sent;
        (v, c)
    };
    let encoded = encode_distance_blocks(&dtc, &dont_care, wopts);
    drop((dtc, dont_care));
    let blocks = agree(ex, encoded)?;
    let head = FileHead {
        kind: FileKind::Dtc,
        slice,
        positions: n,
        longest: u32::try_from(longest).unwrap_or(u32::MAX),
        counts,
    };
    let path = dtc_path(dir, &slice);
    let planned = write_blocks_collectively(&path, &head, blocks, ex, wopts, stats)?;
    Ok((me == 0).then(|| {
        let bytes = planned.map_or(0, |p| p.file_len);
        BuildSummary {
            bytes,
            dtc_bytes: bytes,
            dtc_positions: n,
            write_seconds: t0.elapsed().as_secs_f64(),
            ..Default::default()
        }
    }))
}

/// What the head of one file of a split unit needs besides its blocks
/// ([`write_blocks_collectively`]).
struct FileHead {
    /// [`FileKind::Wld`] (a value file, laid out by [`layout`]) or a distance file
    /// ([`distance_layout`]).
    kind: FileKind,
    /// The file's slice.
    slice: Slice,
    /// The slice's positions.
    positions: u64,
    /// The slice's longest resolution (value files) or longest distance (distance files).
    longest: u32,
    /// This rank's share of the slice's wins, losses and draws.
    counts: [u64; 3],
}

/// Steps 2 to 4 of [`write_split`] for the file at `path`, each rank holding `blocks`, the
/// encoded blocks of its block-aligned range of the slice: their lengths and check words and
/// the rank's counts go to rank 0, which lays out the head ([`plan_file`]), creates the
/// temporary file and sends every rank its offset; every rank writes its blocks' bytes
/// there; rank 0 checks every block read back, appends the file checksum and renames the
/// file into place. Collective. Returns on rank 0 what it wrote, `None` on the others.
fn write_blocks_collectively(
    path: &Path,
    head: &FileHead,
    blocks: Vec<EncodedBlock>,
    ex: &dyn Exchange,
    wopts: &WriteOptions,
    stats: &mut SplitStats,
) -> Result<Option<Planned>, SplitError<TableError>> {
    let (me, ranks) = (ex.rank(), ex.ranks());
    // Lengths, check words and counts to rank 0.
    let mut msg: Vec<u64> = head.counts.to_vec();
    msg.push(blocks.len() as u64);
    for b in &blocks {
        let i = BlockInfo::from(b);
        msg.extend([i.len, u64::from(i.check), u64::from(i.constant)]);
    }
    let mut send = vec![Vec::new(); ranks];
    send[0] = msg.iter().flat_map(|w| w.to_le_bytes()).collect();
    if me != 0 {
        stats.write_bytes += send[0].len() as u64;
    }
    let got = ex.all_to_all(send);

    // Rank 0: the head, the temporary file, every rank's offset.
    let mut planned: Option<Planned> = None;
    let mut reply: Vec<Vec<u8>> = vec![Vec::new(); ranks];
    let mut failure = None;
    if me == 0 {
        match plan_file(path, head, &got, wopts) {
            Ok(p) => {
                let name = p.tmp.file_name().unwrap_or_default().to_string_lossy();
                for (r, m) in reply.iter_mut().enumerate() {
                    m.extend(0u64.to_le_bytes());
                    m.extend(p.offsets[r].to_le_bytes());
                    m.extend(name.as_bytes());
                }
                planned = Some(p);
            }
            Err(e) => {
                for m in reply.iter_mut() {
                    m.extend(1u64.to_le_bytes());
                }
                failure = Some(e);
            }
        }
    }
    let got = ex.all_to_all(reply).swap_remove(0);
    if let Some(e) = failure {
        return Err(SplitError::Own(e));
    }
    let w = words(&got[..got.len().min(16)]);
    if w.first() != Some(&0) {
        return Err(SplitError::Peer(0));
    }
    let offset = w.get(1).copied().unwrap_or(0);
    let name = String::from_utf8_lossy(&got[16.min(got.len())..]).into_owned();

    // Every rank: its blocks' bytes at its offset.
    let dir = path.parent().unwrap_or(Path::new("."));
    let wrote = write_blocks(&dir.join(&name), offset, &blocks);
    drop(blocks);
    if let Err(e) = agree(ex, wrote) {
        if let Some(p) = &planned {
            let _ = std::fs::remove_file(&p.tmp);
        }
        return Err(e);
    }

    // Rank 0: check every block, append the checksum, rename into place.
    if let Some(p) = &planned {
        let r = finish_file(p, path);
        if r.is_err() {
            let _ = std::fs::remove_file(&p.tmp);
        }
        r.map_err(SplitError::Own)?;
    }
    Ok(planned)
}

/// What rank 0 decided for one file of a split unit ([`plan_file`]).
struct Planned {
    /// The temporary file, created with the head.
    tmp: PathBuf,
    /// Header and offset table.
    head: Vec<u8>,
    /// Every block of the file (none for a uniform slice).
    infos: Vec<BlockInfo>,
    /// Where each rank's blocks start in the file.
    offsets: Vec<u64>,
    /// The file's length, checksum included.
    file_len: u64,
    /// Counts and longest resolution of the slice.
    meta: TableMeta,
}

/// Rank 0: from every rank's message (counts, then per block its length, check word and
/// constant), lay out the file of `slice` ([`layout`]), create its temporary file next to
/// `path` with the head written and the full length, and the offset of every rank's blocks.
fn plan_file(
    path: &Path,
    fh: &FileHead,
    msgs: &[Vec<u8>],
    wopts: &WriteOptions,
) -> Result<Planned, TableError> {
    let (slice, positions, longest) = (fh.slice, fh.positions, fh.longest);
    let bad = |r: usize| TableError::Invalid(format!("malformed block list from rank {r}"));
    let (mut wins, mut losses, mut draws) = (0, 0, 0);
    let mut infos = Vec::new();
    let mut lens = Vec::with_capacity(msgs.len());
    for (r, m) in msgs.iter().enumerate() {
        let w = words(m);
        let (head, rest) = w.split_at_checked(4).ok_or_else(|| bad(r))?;
        if rest.len() as u64 != head[3] * 3 {
            return Err(bad(r));
        }
        wins += head[0];
        losses += head[1];
        draws += head[2];
        let mut len = 0;
        for b in rest.chunks_exact(3) {
            let info = BlockInfo {
                len: b[0],
                check: u32::try_from(b[1]).map_err(|_| bad(r))?,
                constant: u32::try_from(b[2]).map_err(|_| bad(r))?,
            };
            len += info.len;
            infos.push(info);
        }
        lens.push(len);
    }
    let meta = TableMeta {
        slice,
        positions,
        wins,
        losses,
        draws,
        longest,
    };
    let (head, with_data) = match fh.kind {
        FileKind::Wld => layout(&meta, &infos, wopts, 4)?,
        kind => distance_layout(kind, &meta, &infos, wopts)?,
    };
    if !with_data {
        // Uniform: every block constant, no bytes stored (and none sent: all lengths are 0).
        infos.clear();
    }
    let mut offsets = Vec::with_capacity(lens.len());
    let mut at = head.len() as u64;
    for l in &lens {
        offsets.push(at);
        at += l;
    }
    let file_len = at + 8;
    let (_, tmp, f) = create_temp(path)?;
    let created = (|| {
        let mut f = f;
        f.write_all(&head)
            .map_err(|e| TableError::io(&tmp, "write", e))?;
        f.set_len(file_len)
            .map_err(|e| TableError::io(&tmp, "extend", e))?;
        Ok(())
    })();
    if let Err(e) = created {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(Planned {
        tmp,
        head,
        infos,
        offsets,
        file_len,
        meta,
    })
}

/// Every rank: write the bytes of `blocks`, one after the other, at `offset` of the
/// temporary file `tmp` rank 0 created, and flush them (`fsync`). Nothing to write: nothing
/// done. A file that is not there is a table directory not shared by the ranks.
fn write_blocks(tmp: &Path, offset: u64, blocks: &[EncodedBlock]) -> Result<(), TableError> {
    if blocks.iter().all(|b| b.data.is_empty()) {
        return Ok(());
    }
    let f = match std::fs::OpenOptions::new().write(true).open(tmp) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(TableError::Invalid(format!(
                "{}: the temporary file rank 0 created is not there on this rank: the table \
                 directory must be on a filesystem every rank shares (docs/mpi.md)",
                tmp.display()
            )))
        }
        Err(e) => return Err(TableError::io(tmp, "open", e)),
    };
    let mut w = std::io::BufWriter::with_capacity(1 << 22, f);
    w.seek(SeekFrom::Start(offset))
        .map_err(|e| TableError::io(tmp, "seek", e))?;
    for b in blocks {
        w.write_all(&b.data)
            .map_err(|e| TableError::io(tmp, "write", e))?;
    }
    let f = w
        .into_inner()
        .map_err(|e| TableError::io(tmp, "write", e.into_error()))?;
    f.sync_all().map_err(|e| TableError::io(tmp, "fsync", e))
}

/// Rank 0: read the temporary file back, check its head and every block against the check
/// words the encoders computed, append the file checksum, flush it and rename it to `path`
/// (then flush the directory, best effort).
fn finish_file(p: &Planned, path: &Path) -> Result<(), TableError> {
    let tmp = &p.tmp;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(tmp)
        .map_err(|e| TableError::io(tmp, "open", e))?;
    let mut r = std::io::BufReader::with_capacity(1 << 22, &f);
    let mut h = Xxh64::new(0);
    let mut buf = vec![0u8; p.head.len()];
    r.read_exact(&mut buf)
        .map_err(|e| TableError::io(tmp, "read", e))?;
    if buf != p.head {
        return Err(TableError::Invalid(format!(
            "{}: its header reads back different from what rank 0 wrote",
            tmp.display()
        )));
    }
    h.update(&buf);
    for (k, b) in p.infos.iter().enumerate() {
        buf.resize(b.len as usize, 0);
        r.read_exact(&mut buf)
            .map_err(|e| TableError::io(tmp, "read", e))?;
        let check = if buf.is_empty() {
            b.constant
        } else {
            xxh64(&buf, 0) as u32
        };
        if check != b.check {
            return Err(TableError::Invalid(format!(
                "{}: block {k} reads back different from what its rank wrote (a table \
                 directory not shared by every rank, or a filesystem that does not show one \
                 node's writes to another after fsync)",
                tmp.display()
            )));
        }
        h.update(&buf);
    }
    drop(r);
    let sum = h.digest().to_le_bytes();
    (&f).seek(SeekFrom::Start(p.file_len - 8))
        .and_then(|_| (&f).write_all(&sum))
        .map_err(|e| TableError::io(tmp, "write", e))?;
    f.sync_all().map_err(|e| TableError::io(tmp, "fsync", e))?;
    drop(f);
    std::fs::rename(tmp, path).map_err(|e| TableError::io(path, "rename", e))?;
    if let Some(d) = path.parent().and_then(|d| File::open(d).ok()) {
        let _ = d.sync_all();
    }
    Ok(())
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
        assert!(out
            .iter()
            .any(|o| o.as_ref().is_err_and(|e| matches!(e, SplitError::Own(_)))));
    }
}
