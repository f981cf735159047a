//! The depth-to-win (DTW) pass (issue 33): `egdb build --dtw`, one `<slice>.dtw` file per
//! slice ([`crate::table::dtw`]), computed unit by unit in build order once the unit's WLD
//! files exist.
//!
//! The metric, for a position p with value V for the side to move, in plies: V = win: the
//! minimum of 1 + DTW(p') over the moves to positions p' lost for the opponent; V = loss: 0
//! when the side to move has no legal move, else the maximum of 1 + DTW(p') over all moves;
//! draws: none. Every move counts (captures and man moves included).
//!
//! Within a unit (a slice and its colour-flipped partner) the moves that stay in the unit
//! (quiet, not crowning, keeping the mover's leading rank: [`UnitPolicy`], as the WLD solver
//! decides it) form a graph with cycles; the moves that leave it (captures, crownings,
//! leading-man advances) reach slices whose DTW is known (built earlier). The pass is
//! retrograde, with three bytes per position of the unit (a state byte and a 16-bit depth):
//! 1. *Seeds* ([`seed_pass`]): every won or lost position generates its moves once. A win
//!    gets the smallest 1 + DTW over its lost successors outside the unit (none: no depth
//!    yet); a loss the largest 1 + DTW over its successors outside, and a counter of its
//!    in-unit successors. A position that must capture has every move outside: it is
//!    *scheduled* at its seed, and so is a loss whose counter is 0 (no move: depth 0).
//! 2. *Levels* d = 0, 1, 2, ... in increasing order ([`propagate_level`]): every position
//!    scheduled at d is final; its in-unit predecessors come from the quiet un-moves
//!    ([`crate::rules::Retro::for_each_quiet_unmove`], filtered by the same policy). A lost
//!    one offers each won predecessor the depth d + 1 (kept if smaller than what it has, which
//!    schedules it there: the first in-unit offer is the smallest, so a win is final at the
//!    minimum of its seed and the first offer); a won one counts down each lost predecessor
//!    and raises its depth to at least d + 1, and the last count schedules the loss at its
//!    depth, max(seed, 1 + the last successor's level). Each chunk of positions keeps the
//!    smallest level scheduled in it, so a level scans only the chunks holding it, as the WLD
//!    solver's `propagate_ply` scans its dirty chunks.
//!
//! All updates of a level offer the same depth (d + 1) and commute (atomic minimum, maximum
//! and decrement), so the depths, and the files, are the same whatever the thread count.

use super::solve::{for_each_predecessor, UnitPolicy};
use super::{BuildError, BuildSummary, DecodedTables, Unit};
use crate::board::{Color, Position, Wld};
use crate::index::SliceIndex;
use crate::probe::ProbeError;
use crate::rules::{English, Rules};
use crate::slice::Slice;
use crate::table::dtw::{dtw_path, open_dtw, write_dtw};
use crate::table::{TableMeta, WriteOptions};
use bitvec::prelude::{BitVec, Lsb0};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU16, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// "No depth" in [`DtwSlice::dtw`] (a draw).
pub const DTW_NONE: u16 = u16::MAX;

/// The largest depth a depth-to-win file's reader returns (the pass's depths are 16-bit,
/// [`DTW_NONE`] marks a draw). The pass stops the build with [`BuildError::Options`] when its
/// levels reach `DTW_MAX`, so the depths it writes are at most `DTW_MAX - 1` = 65,533 plies
/// (the longest known 8-piece win is 293 plies).
pub const DTW_MAX: u16 = u16::MAX - 1;

/// The depth to win of every position of one slice.
#[derive(Clone, Debug)]
pub struct DtwSlice {
    /// The slice.
    pub slice: Slice,
    /// DTW in plies of every position in index order; [`DTW_NONE`] for draws.
    pub dtw: Vec<u16>,
    /// Won positions.
    pub wins: u64,
    /// Lost positions.
    pub losses: u64,
    /// Largest DTW over the won and lost positions (0 when none).
    pub longest: u32,
    /// Index of a won position with the largest DTW among wins (the smallest such index),
    /// and that DTW.
    pub longest_win: Option<(u64, u32)>,
    /// Index of a lost position with the largest DTW among losses (the smallest such index),
    /// and that DTW.
    pub longest_loss: Option<(u64, u32)>,
}

/// The depths of one slice built earlier, as the pass reads them: one byte per position (the
/// depth when below 255, else 255) and the depths of 255 plies or more by index. Draws hold
/// the file's filler (never read: only won and lost successors are).
#[derive(Clone, Debug)]
pub struct Depths {
    index: SliceIndex,
    bytes: Vec<u8>,
    /// (index, depth) for the depths of 255 or more, ascending by index.
    big: Vec<(u64, u32)>,
}

impl Depths {
    /// The depths of `slice` from its `.dtw` file (checksum verified).
    ///
    /// # Errors
    /// As [`open_dtw`] and [`crate::table::dtc::DtcFile::decode_compact`].
    pub fn read(dir: &Path, slice: Slice) -> Result<Depths, crate::table::TableError> {
        let f = open_dtw(&dtw_path(dir, &slice), crate::rules::english::ID)?;
        f.verify_checksum()?;
        let (bytes, big) = f.decode_compact()?;
        Ok(Depths {
            index: SliceIndex::new(slice),
            bytes,
            big,
        })
    }

    /// The depths of a slice just solved.
    pub fn of(d: &DtwSlice) -> Depths {
        let bytes: Vec<u8> = d
            .dtw
            .par_iter()
            .map(|&x| if x == DTW_NONE { 0 } else { x.min(255) as u8 })
            .collect();
        let big: Vec<(u64, u32)> = d
            .dtw
            .iter()
            .enumerate()
            .filter(|(_, &x)| x != DTW_NONE && x >= 255)
            .map(|(i, &x)| (i as u64, u32::from(x)))
            .collect();
        Depths {
            index: SliceIndex::new(d.slice),
            bytes,
            big,
        }
    }

    /// The depth of position `i` (in index order) in plies.
    #[inline]
    pub fn get(&self, i: u64) -> u32 {
        let b = self.bytes[i as usize];
        if b < 255 {
            return u32::from(b);
        }
        match self.big.binary_search_by_key(&i, |x| x.0) {
            Ok(k) => self.big[k].1,
            Err(_) => 255,
        }
    }

    /// The depth of Black-to-move position `p` of this slice.
    #[inline]
    pub fn of_position(&self, p: &Position) -> u32 {
        self.get(self.index.rank(p))
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> u64 {
        self.bytes.len() as u64 + 12 * self.big.len() as u64
    }
}

/// Depths of slices built earlier, as the pass reads them.
pub type DtwStore = HashMap<Slice, Arc<Depths>>;

/// The depths of a [`DtwStore`] by slot number ([`crate::probe::slots::slot_of`]): the
/// lookup of the seed pass, without hashing.
struct Outside<'a> {
    /// Slot number -> 1 + position in `depths` (0: none).
    slot: Vec<u16>,
    depths: Vec<&'a Depths>,
}

impl<'a> Outside<'a> {
    fn new(store: &'a DtwStore) -> Outside<'a> {
        let mut slot = vec![0u16; crate::probe::slots::N_SLOTS];
        let mut depths = Vec::with_capacity(store.len());
        for (s, d) in store {
            if let Some(k) = crate::probe::slots::slot_of(s) {
                depths.push(&**d);
                slot[k] = depths.len() as u16;
            }
        }
        Outside { slot, depths }
    }

    #[inline]
    fn get(&self, s: &Slice) -> Option<&'a Depths> {
        let k = *self.slot.get(crate::probe::slots::slot_of(s)?)?;
        (k != 0).then(|| self.depths[k as usize - 1])
    }
}

/// Every slice the DTW pass of `unit` reads outside the unit: its same-piece-count
/// dependencies and every slice of the materials its captures reach (size-0 slices left out).
pub fn dtw_reads(unit: &Unit) -> Vec<Slice> {
    let mut v: Vec<Slice> = unit.deps.clone();
    for m in &unit.capture_materials {
        v.extend(Slice::all_of(*m));
    }
    v.sort();
    v.dedup();
    v.retain(|s| !unit.slices.contains(s) && SliceIndex::new(*s).size() > 0);
    v
}

/// Whether every depth-to-win file of `unit` exists, passes its checksum and holds its slice.
pub fn unit_dtw_complete(dir: &Path, unit: &Unit) -> bool {
    unit.slices.iter().all(|s| {
        open_dtw(&dtw_path(dir, s), crate::rules::english::ID)
            .and_then(|f| f.verify_checksum().map(|_| f))
            .is_ok_and(|f| f.meta().slice == *s)
    })
}

/// State byte of a drawn position.
const S_DRAW: u8 = 255;
/// State byte of a won position that has quiet moves (its depth: the smallest offer so far).
const S_WIN: u8 = 254;
/// State byte of a won position that must capture (every move leaves the unit).
const S_CAP_WIN: u8 = 253;
/// State byte of a lost position that must capture.
const S_CAP_LOSS: u8 = 252;
/// State bytes `0..=MAX_COUNT`: a lost position with quiet moves and that many in-unit
/// successors not yet final (0: scheduled at its depth).
const MAX_COUNT: u8 = 251;

/// Positions per chunk (per "smallest level scheduled" entry, and per parallel work item).
const CHUNK: usize = 1 << 12;

/// Whether state `st` with depth `dep` is scheduled at a level (final there once reached).
#[inline(always)]
fn scheduled(st: u8, dep: u16) -> bool {
    dep != DTW_NONE && (st == 0 || st == S_WIN || st == S_CAP_WIN || st == S_CAP_LOSS)
}

/// One array of a unit under the pass (one slice; its in-unit successors and predecessors
/// are in the partner's array).
struct DtwSide {
    slice: Slice,
    index: SliceIndex,
    /// See [`S_DRAW`] ... [`MAX_COUNT`].
    state: Vec<AtomicU8>,
    /// Wins: the smallest depth offered so far ([`DTW_NONE`]: none); losses: the largest so
    /// far (the seed to begin with); final once the level reaches it.
    depth: Vec<AtomicU16>,
    /// Per chunk: the smallest depth scheduled and not yet propagated ([`DTW_NONE`]: none).
    pending: Vec<AtomicU16>,
}

impl DtwSide {
    fn new(slice: Slice) -> DtwSide {
        let index = SliceIndex::new(slice);
        let n = index.size() as usize;
        let mut state = Vec::with_capacity(n);
        state.resize_with(n, || AtomicU8::new(S_DRAW));
        let mut depth = Vec::with_capacity(n);
        depth.resize_with(n, || AtomicU16::new(DTW_NONE));
        let pending = (0..n.div_ceil(CHUNK))
            .map(|_| AtomicU16::new(DTW_NONE))
            .collect();
        DtwSide {
            slice,
            index,
            state,
            depth,
            pending,
        }
    }
}

/// Memory of the depth-to-win pass per position of the unit solved, in bytes: the state byte
/// and the 16-bit depth of the pass, and while a slice is written its don't-care mask (an
/// eighth of a byte) and its compact copy for later units ([`Depths`], one byte); the
/// WLD values of the unit's own slices (a quarter of a byte, [`DecodedTables`]) fill the rest.
pub const DTW_BYTES_PER_POSITION: u64 = 5;

/// Bytes of the depths of slices read by a unit ([`Depths`]) per position.
pub const DTW_READ_BYTES_PER_POSITION: u64 = 1;

/// Solve the depth to win of every position of `unit`. `value(p)`: the exact value of any
/// Black-to-move position (the unit's own and those outside); `outside`: the depths of every
/// slice in [`dtw_reads`].
///
/// # Errors
/// [`BuildError::Dependency`] (a failed lookup), [`BuildError::Options`] (a slice outside the
/// unit without depths; a depth over [`DTW_MAX`]), [`BuildError::Inconsistent`] (a won or
/// lost position left without a depth, a depth of the wrong parity, or a successor count that
/// does not match the un-moves: a bug or a damaged table).
pub fn solve_dtw_unit(
    unit: &Unit,
    value: &(dyn Fn(&Position) -> Result<Wld, ProbeError> + Sync),
    outside: &DtwStore,
) -> Result<Vec<DtwSlice>, BuildError> {
    let slices = &unit.slices;
    if outside.len() >= usize::from(u16::MAX) {
        return Err(BuildError::Options(format!(
            "unit {}: too many slices read by the depth-to-win pass",
            super::names(slices)
        )));
    }
    let outside = Outside::new(outside);
    let sides: Vec<DtwSide> = slices.iter().map(|s| DtwSide::new(*s)).collect();
    let other = |x: usize| if sides.len() == 1 { 0 } else { 1 - x };
    // 1. Seeds (side 0's error first: the result does not depend on the scheduling).
    let r = both(sides.len(), |x| {
        seed_pass(&sides[x], &sides[other(x)], value, &outside)
    });
    r.0.and(r.1)?;
    // 2. Levels in increasing order.
    let fault: Mutex<Option<(usize, u64)>> = Mutex::new(None);
    let next_level = |sides: &[DtwSide]| {
        sides
            .iter()
            .map(|s| {
                s.pending
                    .par_iter()
                    .map(|p| p.load(Ordering::Relaxed))
                    .min()
                    .unwrap_or(DTW_NONE)
            })
            .min()
            .unwrap_or(DTW_NONE)
    };
    let mut d = next_level(&sides);
    while d != DTW_NONE {
        if d >= DTW_MAX {
            return Err(too_long(slices));
        }
        let _ = both(sides.len(), |x| {
            propagate_level(&sides[x], &sides[other(x)], x, d, &fault);
            Ok(())
        });
        let next = next_level(&sides);
        assert!(
            next > d,
            "internal error: depth-to-win level {d} of {slices:?} left positions at {next}"
        );
        d = next;
    }
    if let Some((x, i)) = fault.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(BuildError::Inconsistent {
            slice: slices[x],
            index: i,
            wld: Wld::Loss,
            dtc_pass: Wld::Win,
        });
    }
    // 3. Every won and lost position is final, wins at odd depths, losses at even.
    let mut out = Vec::with_capacity(sides.len());
    for side in sides {
        out.push(collect(side)?);
    }
    Ok(out)
}

/// The error of a depth beyond [`DTW_MAX`].
fn too_long(slices: &[Slice]) -> BuildError {
    BuildError::Options(format!(
        "the depth-to-win pass of unit {} reached {DTW_MAX} plies, more than its 16-bit \
         depths hold",
        super::names(slices)
    ))
}

/// Run `f(0)` and `f(1)` side by side (`f(0)` alone for a unit of one slice).
fn both<T: Send + Default>(
    n: usize,
    f: impl Fn(usize) -> Result<T, BuildError> + Sync,
) -> (Result<T, BuildError>, Result<T, BuildError>) {
    if n == 1 {
        (f(0), Ok(T::default()))
    } else {
        rayon::join(|| f(0), || f(1))
    }
}

/// Step 1 for `side`: the state and seed depth of every position (successors in the unit
/// fall into `target`), and each chunk's smallest scheduled depth.
///
/// # Errors
/// The error of the lowest-indexed failing position.
fn seed_pass(
    side: &DtwSide,
    target: &DtwSide,
    value: &(dyn Fn(&Position) -> Result<Wld, ProbeError> + Sync),
    outside: &Outside<'_>,
) -> Result<(), BuildError> {
    // In-unit moves keep Black's leading rank (seen from the partner's frame).
    let policy = UnitPolicy {
        rank: target.slice.white_rank,
        kings_only: false,
    };
    let building = side.slice;
    let first_err: Mutex<Option<(u64, BuildError)>> = Mutex::new(None);
    side.state
        .par_chunks(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let base = (c * CHUNK) as u64;
            let mut low = DTW_NONE;
            let mut err = None;
            side.index.visit(base, base + chunk.len() as u64, |i, pos| {
                if err.is_some() {
                    return;
                }
                match seed(&pos, policy, building, value, outside) {
                    Ok((st, dep)) => {
                        chunk[(i - base) as usize].store(st, Ordering::Relaxed);
                        side.depth[i as usize].store(dep, Ordering::Relaxed);
                        if scheduled(st, dep) {
                            low = low.min(dep);
                        }
                    }
                    Err(e) => err = Some((i, e)),
                }
            });
            side.pending[c].store(low, Ordering::Relaxed);
            if let Some((i, e)) = err {
                let mut g = first_err.lock().unwrap_or_else(|p| p.into_inner());
                if g.as_ref().is_none_or(|(k, _)| i < *k) {
                    *g = Some((i, e));
                }
            }
        });
    match first_err.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// State byte and seed depth of Black-to-move position `pos` (see [`seed_pass`]).
#[inline]
fn seed(
    pos: &Position,
    policy: UnitPolicy,
    building: Slice,
    value: &(dyn Fn(&Position) -> Result<Wld, ProbeError> + Sync),
    outside: &Outside<'_>,
) -> Result<(u8, u16), BuildError> {
    let dep = |e: ProbeError| BuildError::Dependency {
        building,
        source: e,
    };
    let v = value(pos).map_err(dep)?;
    if v == Wld::Draw {
        return Ok((S_DRAW, DTW_NONE));
    }
    let win = v == Wld::Win;
    let capture = English.has_capture(pos);
    let men = pos.men(Color::Black);
    let kings = pos.kings_of(Color::Black).count_ones();
    // Win: the smallest 1 + DTW over lost successors outside; loss: the largest over all.
    let mut best: u32 = if win { u32::MAX } else { 0 };
    let mut count: u32 = 0;
    let mut err = None;
    English.for_each_successor(pos, |s| {
        if err.is_some() {
            return;
        }
        if !capture {
            let stays = s.men(Color::Black) == men
                || policy.stays(
                    s.men(Color::Black),
                    s.kings_of(Color::Black).count_ones() != kings,
                );
            if stays {
                count += 1;
                return;
            }
        }
        let n = s.normalized();
        // Outside the unit: its value and depth (the side to move of n's view). A side left
        // without pieces has lost, at depth 0.
        let (lost, qd) = if n.black == 0 {
            (true, 0)
        } else {
            let ns = Slice::of(&n);
            let Some(store) = outside.get(&ns) else {
                err = Some(BuildError::Options(format!(
                    "cannot build the depth-to-win file of {building}: no depths of {ns} \
                     (build depth-to-win files in build order: egdb build --dtw --pieces N)"
                )));
                return;
            };
            // Every successor of a loss is won for the opponent: its value is not needed.
            let lost = if win {
                match value(&n) {
                    Ok(q) => q == Wld::Loss,
                    Err(e) => {
                        err = Some(dep(e));
                        return;
                    }
                }
            } else {
                true
            };
            (
                lost,
                if lost || !win {
                    store.of_position(&n)
                } else {
                    0
                },
            )
        };
        if win {
            if lost {
                best = best.min(qd.saturating_add(1));
            }
        } else {
            best = best.max(qd.saturating_add(1));
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    let depth = if best == u32::MAX {
        DTW_NONE
    } else if best > u32::from(DTW_MAX) {
        return Err(too_long(&[building]));
    } else {
        best as u16
    };
    let st = match (win, capture) {
        (true, true) => S_CAP_WIN,
        (true, false) => S_WIN,
        (false, true) => S_CAP_LOSS,
        (false, false) => {
            if count > u32::from(MAX_COUNT) {
                return Err(BuildError::Options(format!(
                    "a position of {building} has {count} moves in its unit, more than the \
                     depth-to-win pass counts"
                )));
            }
            count as u8
        }
    };
    Ok((st, depth))
}

/// Step 2 for `side` (array number `x` of the unit) at level `d`: every position scheduled at
/// `d` is final; its predecessors in `preds` get their offers (see the module docs). A count
/// that would fall below zero is recorded in `fault` (side, index).
fn propagate_level(
    side: &DtwSide,
    preds: &DtwSide,
    x: usize,
    d: u16,
    fault: &Mutex<Option<(usize, u64)>>,
) {
    let policy = UnitPolicy {
        rank: preds.slice.black_rank,
        kings_only: false,
    };
    let next = d + 1;
    let px = if std::ptr::eq(side, preds) { x } else { 1 - x };
    side.state
        .par_chunks(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            if side.pending[c].load(Ordering::Relaxed) > d {
                return;
            }
            // Offers made at this level (d + 1) to this chunk's positions lower its entry
            // again with an atomic minimum (release), whether they come before or after this
            // swap (acquire: an offer before it is seen by the scan below).
            side.pending[c].swap(DTW_NONE, Ordering::AcqRel);
            let base = c * CHUNK;
            let mut now: Vec<u32> = Vec::new();
            let mut low = DTW_NONE;
            for (j, cell) in chunk.iter().enumerate() {
                let st = cell.load(Ordering::Acquire);
                if st == S_DRAW || (st != 0 && st <= MAX_COUNT) {
                    continue;
                }
                let dep = side.depth[base + j].load(Ordering::Relaxed);
                if !scheduled(st, dep) || dep < d {
                    continue;
                }
                if dep == d {
                    now.push(j as u32);
                } else {
                    low = low.min(dep);
                }
            }
            if low != DTW_NONE {
                side.pending[c].fetch_min(low, Ordering::Relaxed);
            }
            if now.is_empty() {
                return;
            }
            let mut batch = Batch::new(preds, next);
            let mut process = |j: usize, q: &Position| {
                let st = chunk[j].load(Ordering::Relaxed);
                let q_wins = st == S_WIN || st == S_CAP_WIN;
                for_each_predecessor(English, q, &preds.index, policy, |k| {
                    batch.push(k, q_wins, fault, px)
                });
            };
            if now.len() * 8 >= chunk.len() {
                // Dense: walk the chunk in index order (cheap per position).
                let mut it = now.iter().peekable();
                side.index
                    .visit(base as u64, (base + chunk.len()) as u64, |i, q| {
                        let j = i as usize - base;
                        if it.peek().is_some_and(|&&k| k as usize == j) {
                            it.next();
                            process(j, &q);
                        }
                    });
            } else {
                for &j in &now {
                    let q = side
                        .index
                        .unrank((base + j as usize) as u64)
                        .expect("index below size unranks");
                    process(j as usize, &q);
                }
            }
            batch.flush(fault, px);
        });
}

/// Pending offers to predecessors of one worker: each index is prefetched when found and
/// updated when the batch is full, so the cache misses of the random accesses overlap.
struct Batch<'a> {
    side: &'a DtwSide,
    next: u16,
    len: usize,
    items: [(u64, bool); BATCH],
}

const BATCH: usize = 64;

impl<'a> Batch<'a> {
    fn new(side: &'a DtwSide, next: u16) -> Self {
        Batch {
            side,
            next,
            len: 0,
            items: [(0, false); BATCH],
        }
    }

    /// Queue "a successor of position `k`, final at this level, is won (true) / lost (false)
    /// for its side to move".
    #[inline]
    fn push(&mut self, k: u64, succ_wins: bool, fault: &Mutex<Option<(usize, u64)>>, x: usize) {
        crate::hint::prefetch(self.side.state.as_ptr().wrapping_add(k as usize));
        crate::hint::prefetch(self.side.depth.as_ptr().wrapping_add(k as usize));
        if self.len == BATCH {
            self.flush(fault, x);
        }
        self.items[self.len] = (k, succ_wins);
        self.len += 1;
    }

    fn flush(&mut self, fault: &Mutex<Option<(usize, u64)>>, x: usize) {
        let next = self.next;
        for &(k, succ_wins) in &self.items[..self.len] {
            let k = k as usize;
            let cell = &self.side.state[k];
            let st = cell.load(Ordering::Relaxed);
            if !succ_wins {
                // A move to a lost position: an offer to a won predecessor (capture positions
                // have no quiet move; draws and losses have no lost successor).
                if st == S_WIN && self.side.depth[k].fetch_min(next, Ordering::Relaxed) > next {
                    self.side.pending[k / CHUNK].fetch_min(next, Ordering::Release);
                }
            } else if st <= MAX_COUNT {
                // A move to a won position: one fewer successor for a lost predecessor; the
                // depth is raised before the count falls, so the last count sees it.
                let old = self.side.depth[k].fetch_max(next, Ordering::Relaxed);
                match cell.fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| {
                    (1..=MAX_COUNT).contains(&c).then(|| c - 1)
                }) {
                    Ok(1) => {
                        self.side.pending[k / CHUNK].fetch_min(old.max(next), Ordering::Release);
                    }
                    Ok(_) => {}
                    Err(_) => {
                        let mut g = fault.lock().unwrap_or_else(|p| p.into_inner());
                        if g.is_none_or(|(a, b)| (x, k as u64) < (a, b)) {
                            *g = Some((x, k as u64));
                        }
                    }
                }
            }
        }
        self.len = 0;
    }
}

/// Step 3 for one array: the depths, checked (wins odd, losses even, none left without one),
/// and the counts.
fn collect(side: DtwSide) -> Result<DtwSlice, BuildError> {
    let slice = side.slice;
    let state: Vec<u8> = side.state.into_iter().map(AtomicU8::into_inner).collect();
    let dtw: Vec<u16> = side.depth.into_iter().map(AtomicU16::into_inner).collect();
    let bad = |i: usize| {
        let (st, x) = (state[i], dtw[i]);
        let wld = match st {
            S_DRAW => Wld::Draw,
            S_WIN | S_CAP_WIN => Wld::Win,
            _ => Wld::Loss,
        };
        let ok = match wld {
            Wld::Win => x != DTW_NONE && x % 2 == 1,
            Wld::Loss => (st == 0 || st == S_CAP_LOSS) && x != DTW_NONE && x % 2 == 0,
            Wld::Draw => x == DTW_NONE,
        };
        (!ok).then(|| BuildError::Inconsistent {
            slice,
            index: i as u64,
            wld,
            dtc_pass: if x == DTW_NONE || (wld == Wld::Loss && st != 0 && st != S_CAP_LOSS) {
                Wld::Draw
            } else if x % 2 == 1 {
                Wld::Win
            } else {
                Wld::Loss
            },
        })
    };
    if let Some(i) = (0..dtw.len())
        .into_par_iter()
        .find_first(|&i| bad(i).is_some())
    {
        return Err(bad(i).expect("found above"));
    }
    let mut ds = DtwSlice {
        slice,
        dtw: Vec::new(),
        wins: 0,
        losses: 0,
        longest: 0,
        longest_win: None,
        longest_loss: None,
    };
    for (i, (&x, &st)) in dtw.iter().zip(&state).enumerate() {
        let slot = match st {
            S_DRAW => continue,
            S_WIN | S_CAP_WIN => {
                ds.wins += 1;
                &mut ds.longest_win
            }
            _ => {
                ds.losses += 1;
                &mut ds.longest_loss
            }
        };
        let x = u32::from(x);
        if slot.is_none_or(|(_, m)| x > m) {
            *slot = Some((i as u64, x));
        }
        ds.longest = ds.longest.max(x);
    }
    ds.dtw = dtw;
    Ok(ds)
}

/// Write one slice's depth-to-win file to `dir` (atomically); returns the bytes.
///
/// # Errors
/// [`BuildError::Write`].
pub fn write_dtw_solved(dir: &Path, d: &DtwSlice) -> Result<u64, BuildError> {
    let n = d.dtw.len() as u64;
    let meta = TableMeta {
        slice: d.slice,
        positions: n,
        wins: d.wins,
        losses: d.losses,
        draws: n - d.wins - d.losses,
        longest: d.longest,
    };
    let dont_care: BitVec<u64, Lsb0> = d.dtw.iter().map(|&x| x == DTW_NONE).collect();
    write_dtw(
        &dtw_path(dir, &d.slice),
        &meta,
        &d.dtw,
        &dont_care,
        &WriteOptions {
            level: crate::table::dtc::DTC_LEVEL,
            ..WriteOptions::default()
        },
    )
    .map_err(|e| BuildError::Write {
        slice: d.slice,
        source: e,
    })
}

/// Memory the depth-to-win pass of `u` needs at least, in bytes: its own positions at
/// `DTW_BYTES_PER_POSITION` and the depths it reads (`dtw_reads`) at
/// `DTW_READ_BYTES_PER_POSITION`.
pub fn dtw_unit_bytes(u: &Unit) -> u64 {
    let own: u64 = u.sizes.iter().sum();
    let reads: u64 = dtw_reads(u)
        .iter()
        .map(|s| SliceIndex::new(*s).size())
        .sum();
    own * DTW_BYTES_PER_POSITION + reads * DTW_READ_BYTES_PER_POSITION
}

/// Refuses, before anything is solved, a depth-to-win pass with a unit of `todo` that needs
/// more than `memory` (default [`crate::memory::default_budget`]) by [`dtw_unit_bytes`].
///
/// # Errors
/// [`BuildError::Options`] naming the unit, its size, the memory it needs and the budget.
pub(crate) fn check_dtw_memory(todo: &[&Unit], memory: Option<u64>) -> Result<(), BuildError> {
    let budget = memory.unwrap_or_else(crate::memory::default_budget);
    if let Some((u, need)) = todo
        .iter()
        .map(|u| (u, dtw_unit_bytes(u)))
        .find(|(_, need)| *need > budget)
    {
        let n: u64 = u.sizes.iter().sum();
        return Err(BuildError::Options(format!(
            "the depth-to-win pass of unit {} ({n} positions) needs about {} of memory ({} \
             bytes per position and one byte per position of the depths it reads), more than \
             the budget of {} (--memory) (nothing was written)",
            super::names(&u.slices),
            crate::memory::format_size(need),
            DTW_BYTES_PER_POSITION,
            crate::memory::format_size(budget),
        )));
    }
    Ok(())
}

/// The depth-to-win phase of a build: every unit of `units` (in build order) whose `.dtw`
/// files are not complete gets them, its WLD values read from the files in `dir` (which
/// must exist: the WLD phase runs first), the depths of earlier slices from their `.dtw`
/// files or from this run. Returns the counts in [`BuildSummary`]'s `dtw_*` fields.
///
/// Memory: under the budget `memory` (default [`crate::memory::default_budget`]) the unit
/// solved ([`DTW_BYTES_PER_POSITION`]), the depths kept for later units ([`Depths`], one byte
/// per position; those the unit does not read are dropped when they do not fit and read
/// again later) and the WLD values ([`DecodedTables::with_budget`], spilling to a block cache
/// what does not fit). The files do not depend on the budget.
///
/// # Errors
/// As [`solve_dtw_unit`]; [`BuildError::Options`] naming a `.dtw` file the pass reads that is
/// missing or damaged; [`BuildError::Write`]; [`BuildError::Options`] before anything is
/// solved when a unit needs more than the budget ([`dtw_unit_bytes`]).
pub fn build_dtw_units(
    dir: &Path,
    units: &[Unit],
    memory: Option<u64>,
) -> Result<BuildSummary, BuildError> {
    let t0 = Instant::now();
    let mut sum = BuildSummary::default();
    let todo: Vec<&Unit> = units
        .iter()
        .filter(|u| {
            let done = unit_dtw_complete(dir, u);
            if done {
                sum.dtw_skipped += u.slices.len() as u64;
            }
            !done
        })
        .collect();
    if todo.is_empty() {
        return Ok(sum);
    }
    check_dtw_memory(&todo, memory)?;
    let budget = memory.unwrap_or_else(crate::memory::default_budget);
    // The last unit of `todo` reading each slice: depths and values are dropped after it.
    let mut last: HashMap<Slice, usize> = HashMap::new();
    for (i, u) in todo.iter().enumerate() {
        for s in dtw_reads(u) {
            last.insert(s, i);
        }
    }
    let mut deps = DecodedTables::with_budget(dir, Some(budget));
    let mut store: DtwStore = HashMap::new();
    let store_bytes = |store: &DtwStore| store.values().map(|d| d.heap_bytes()).sum::<u64>();
    for (i, u) in todo.iter().enumerate() {
        let reads = dtw_reads(u);
        let own: u64 = u.sizes.iter().sum::<u64>() * DTW_BYTES_PER_POSITION;
        // Depths the unit does not read, dropped (in slice order) while the unit's reads do
        // not fit beside them; they are read again from their files if needed later.
        let missing: u64 = reads
            .iter()
            .filter(|s| !store.contains_key(s))
            .map(|s| SliceIndex::new(*s).size() * DTW_READ_BYTES_PER_POSITION)
            .sum();
        let mut spare: Vec<Slice> = store
            .keys()
            .filter(|s| !reads.contains(s))
            .copied()
            .collect();
        spare.sort();
        let mut held = store_bytes(&store);
        for s in spare {
            if own + held + missing <= budget / 2 {
                break;
            }
            if let Some(d) = store.remove(&s) {
                held -= d.heap_bytes();
            }
        }
        for s in &reads {
            if store.contains_key(s) {
                continue;
            }
            let d = Depths::read(dir, *s).map_err(|e| {
                BuildError::Options(format!(
                    "cannot build the depth-to-win files of {}: {e} (the depths of {s} are \
                     read; build depth-to-win files in order: egdb build --dtw --pieces {})",
                    super::names(&u.slices),
                    u.pieces
                ))
            })?;
            store.insert(*s, Arc::new(d));
        }
        deps.begin_unit(u, own + store_bytes(&store));
        let lookup = |p: &Position| deps.lookup(p);
        let solved = solve_dtw_unit(u, &lookup, &store)?;
        for d in &solved {
            let bytes = write_dtw_solved(dir, d)?;
            sum.dtw_files += 1;
            sum.dtw_bytes += bytes;
            sum.bytes += bytes;
            sum.dtw_positions += d.dtw.len() as u64;
        }
        for d in solved {
            if last.get(&d.slice).is_some_and(|&j| j > i) {
                store.insert(d.slice, Arc::new(Depths::of(&d)));
            }
        }
        let done: Vec<Slice> = store
            .keys()
            .filter(|s| last.get(s).is_none_or(|&j| j <= i))
            .copied()
            .collect();
        for s in done {
            store.remove(&s);
            deps.release(&s);
        }
        for s in &u.slices {
            if last.get(s).is_none_or(|&j| j <= i) {
                deps.release(s);
            }
        }
    }
    sum.dtw_seconds = t0.elapsed().as_secs_f64();
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::dtc::{DtcBlock, DtcFile};
    use crate::table::dtw::write_dtw;
    use crate::table::{TableError, RULES_ENGLISH};

    /// A solved slice holding `dtw` (wins: odd depths, losses: even, draws: [`DTW_NONE`]),
    /// with the counts and statistics `collect` would give it.
    fn solved(slice: Slice, dtw: Vec<u16>) -> DtwSlice {
        let mut d = DtwSlice {
            slice,
            dtw: Vec::new(),
            wins: 0,
            losses: 0,
            longest: 0,
            longest_win: None,
            longest_loss: None,
        };
        for (i, &x) in dtw.iter().enumerate() {
            if x == DTW_NONE {
                continue;
            }
            let x = u32::from(x);
            let slot = if x % 2 == 1 {
                d.wins += 1;
                &mut d.longest_win
            } else {
                d.losses += 1;
                &mut d.longest_loss
            };
            if slot.is_none_or(|(_, m)| x > m) {
                *slot = Some((i as u64, x));
            }
            d.longest = d.longest.max(x);
        }
        d.dtw = dtw;
        d
    }

    /// Every reader of the `.dtw` file of `slice` in `dir` gives `want[i]` for each position
    /// `i` that is not a draw (`draw[i]`; draws are don't care): `decode_all`,
    /// `decode_compact`, `get` (at `probes` and a sample), `Depths::read` (`get` and
    /// `of_position`).
    fn check_readers(dir: &Path, slice: Slice, want: &[u32], draw: &[bool], probes: &[u64]) {
        let n = want.len();
        let what = |i: usize, how: &str| format!("{slice} index {i} want {} ({how})", want[i]);
        let f = open_dtw(&dtw_path(dir, &slice), RULES_ENGLISH).unwrap();
        f.verify_checksum().unwrap();
        assert_eq!(f.meta().positions, n as u64);
        assert_eq!(
            f.block_positions(),
            crate::table::WriteOptions::default().block_positions
        );
        let all = f.decode_all().unwrap();
        assert_eq!(all.len(), n);
        let (bytes, big) = f.decode_compact().unwrap();
        assert_eq!(bytes.len(), n);
        assert!(
            big.windows(2).all(|w| w[0].0 < w[1].0),
            "{slice}: big unsorted"
        );
        assert_eq!(
            big.len(),
            bytes.iter().filter(|&&b| b == 255).count(),
            "{slice}: one big entry per escape byte"
        );
        for &(i, x) in &big {
            assert!(
                x >= 255 && bytes[i as usize] == 255,
                "{slice}: big ({i}, {x})"
            );
        }
        let r = Depths::read(dir, slice).unwrap();
        for i in 0..n {
            if draw[i] {
                continue;
            }
            assert_eq!(all[i], want[i], "{}", what(i, "decode_all"));
            let c = if bytes[i] < 255 {
                u32::from(bytes[i])
            } else {
                let k = big
                    .binary_search_by_key(&(i as u64), |x| x.0)
                    .unwrap_or_else(|_| panic!("{}: escape without entry", what(i, "compact")));
                big[k].1
            };
            assert_eq!(c, want[i], "{}", what(i, "decode_compact"));
            assert_eq!(r.get(i as u64), want[i], "{}", what(i, "Depths::read get"));
        }
        let sample = probes.iter().copied().chain((0..n as u64).step_by(4099));
        let index = SliceIndex::new(slice);
        for i in sample {
            if draw[i as usize] {
                continue;
            }
            let w = want[i as usize];
            assert_eq!(f.get(i).unwrap(), w, "{}", what(i as usize, "DtcFile::get"));
            let p = index.unrank(i).unwrap();
            assert_eq!(r.of_position(&p), w, "{}", what(i as usize, "of_position"));
        }
        assert!(f.get(n as u64).is_err());
    }

    /// Write `d` with the build's writer and check every reader and `Depths::of`.
    fn round_trip(d: &DtwSlice, probes: &[u64]) -> DtcFile {
        let dir = tempfile::tempdir().unwrap();
        write_dtw_solved(dir.path(), d).unwrap();
        let want: Vec<u32> = d.dtw.iter().map(|&x| u32::from(x)).collect();
        let draw: Vec<bool> = d.dtw.iter().map(|&x| x == DTW_NONE).collect();
        let f = open_dtw(&dtw_path(dir.path(), &d.slice), RULES_ENGLISH).unwrap();
        let m = f.meta();
        assert_eq!((m.wins, m.losses, m.longest), (d.wins, d.losses, d.longest));
        check_readers(dir.path(), d.slice, &want, &draw, probes);
        let o = Depths::of(d);
        for (i, &x) in want.iter().enumerate() {
            if !draw[i] {
                assert_eq!(o.get(i as u64), x, "{} index {i} (Depths::of)", d.slice);
            }
        }
        f
    }

    /// Depths of 255 plies or more (escape byte plus `big` list) survive the build's writer
    /// and every reader: scattered among small values (index 0 and the last included), at
    /// block edges, a whole constant block of 300, slices of one large depth, the largest
    /// depth the pass holds (`DTW_MAX`), the draw marker (`DTW_NONE`) never read as a depth;
    /// past 16 bits through the generic writer (`u32`), and `u32::MAX` refused.
    #[test]
    fn depths_of_255_plies_or_more_round_trip() {
        let bp = u64::from(crate::table::WriteOptions::default().block_positions);
        let s: Slice = "1121-44".parse().unwrap();
        let n = SliceIndex::new(s).size();
        assert!(n > 3 * bp, "{s}: {n} positions, want 4 blocks of {bp}");
        // Ordinary small depths, a draw every 17th position; block 2 all 300 (its draws
        // filled with 300: a constant block).
        let mut dtw: Vec<u16> = (0..n)
            .map(|i| {
                if i % 17 == 3 {
                    DTW_NONE
                } else if (2 * bp..3 * bp).contains(&i) {
                    300
                } else {
                    (i % 250) as u16
                }
            })
            .collect();
        let values: [u16; 9] = [0, 1, 253, 254, 255, 256, 300, DTW_MAX, DTW_NONE];
        let mut probes = Vec::new();
        let mut put = |i: u64, v: u16, dtw: &mut Vec<u16>| {
            dtw[i as usize] = v;
            probes.push(i);
        };
        put(0, DTW_MAX, &mut dtw);
        put(n - 1, 65_533, &mut dtw);
        put(n - 2, 255, &mut dtw);
        for (k, &v) in values.iter().enumerate() {
            let k = k as u64;
            put(1 + k, v, &mut dtw); // consecutive, block 0
            put(1_000 + 7_919 * k, v, &mut dtw); // scattered over blocks 0 and 1
            put(3 * bp + 1 + 1_009 * k, v, &mut dtw); // the short last block
        }
        for (i, v) in [(bp - 1, 256), (bp, 255), (bp + 1, DTW_MAX), (3 * bp, 300)] {
            put(i, v, &mut dtw);
        }
        let d = solved(s, dtw);
        assert!(d.wins > 0 && d.losses > 0 && d.longest == u32::from(DTW_MAX));
        let f = round_trip(&d, &probes);
        assert_eq!(f.uniform(), None);
        assert!(matches!(f.decode_block(2).unwrap(), DtcBlock::Const(300)));

        // Slices of one depth: below the escape (a uniform header), at it, and the largest
        // over several blocks (every block a constant, every position in `big`).
        for (name, v) in [("0201-nn", 254), ("0201-nn", 255), ("1121-44", DTW_MAX)] {
            let s: Slice = name.parse().unwrap();
            let n = SliceIndex::new(s).size();
            let d = solved(s, vec![v; n as usize]);
            let f = round_trip(&d, &[0, n - 1]);
            assert_eq!(f.uniform(), (v < 255).then_some(u32::from(v)), "{name} {v}");
            let (_, big) = f.decode_compact().unwrap();
            assert_eq!(big.len() as u64, if v < 255 { 0 } else { n }, "{name} {v}");
        }

        // Past the pass's 16 bits the pass stops (`too_long`) and a `u16` cannot hold it;
        // the file's writer (`write_dtw`, which `write_dtw_solved` calls) takes `u32` depths
        // up to u32::MAX - 1: the same array with 65535, 100000 and u32::MAX - 1 as depths.
        let mut want: Vec<u32> = (0..n).map(|i| (i % 250) as u32).collect();
        let draw: Vec<bool> = (0..n).map(|i| i % 17 == 3 && i > 40).collect();
        let big: [u32; 6] = [255, 65_534, 65_535, 65_536, 100_000, u32::MAX - 1];
        let mut probes = vec![0, n - 1];
        want[0] = 100_000;
        want[n as usize - 1] = u32::MAX - 1;
        for (k, &v) in big.iter().enumerate() {
            for i in [5 + k as u64, 2 * bp + 11 * k as u64, 3 * bp + 13 * k as u64] {
                want[i as usize] = v;
                probes.push(i);
            }
        }
        for i in bp..2 * bp {
            want[i as usize] = 100_000; // a constant block
        }
        let wins = (0..n as usize)
            .filter(|&i| !draw[i] && want[i] % 2 == 1)
            .count() as u64;
        let losses = (0..n as usize)
            .filter(|&i| !draw[i] && want[i].is_multiple_of(2))
            .count() as u64;
        let meta = TableMeta {
            slice: s,
            positions: n,
            wins,
            losses,
            draws: n - wins - losses,
            longest: u32::MAX - 1,
        };
        let mask: BitVec<u64, Lsb0> = draw.iter().copied().collect();
        let opts = WriteOptions {
            level: crate::table::dtc::DTC_LEVEL,
            ..WriteOptions::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dtw_path(dir.path(), &s);
        write_dtw(&path, &meta, &want, &mask, &opts).unwrap();
        check_readers(dir.path(), s, &want, &draw, &probes);
        let f = open_dtw(&path, RULES_ENGLISH).unwrap();
        assert!(matches!(
            f.decode_block(1).unwrap(),
            DtcBlock::Const(100_000)
        ));
        // u32::MAX (the writer's "no constant" marker) is refused, nothing written.
        let dir2 = tempfile::tempdir().unwrap();
        let path2 = dtw_path(dir2.path(), &s);
        want[7] = u32::MAX;
        assert!(matches!(
            write_dtw(&path2, &meta, &want, &mask, &opts),
            Err(TableError::Invalid(_))
        ));
        assert!(!path2.exists());
    }
}
