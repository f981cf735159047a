//! Retrograde analysis of one unit: a slice together with its colour-mirror partner.
//!
//! A *unit* is a slice `S` (Black-to-move positions) and `S.partner()` (the White-to-move
//! positions of the same boards, stored colour-flipped as Black to move). Quiet moves that stay
//! in the unit ([`UnitPolicy`]) connect the two; every other move (capture, crowning,
//! leading-man advance) leads to a slice built earlier, whose value is looked up.
//!
//! Algorithm (level-synchronous retrograde analysis, in the style of Thompson 1986 and
//! Schaeffer et al. 2003), in three named steps:
//! 1. [`initial_pass`], in parallel over each array: a position whose side to move must
//!    capture gets its value from the capture successors (looked up, captures resolved by
//!    search) and is resolved at ply 1; a position with no move takes the terminal value
//!    ([`crate::rules::Rules::no_move_value`]: lost in English) at ply 0; a quiet
//!    position wins at ply 1 if a move leaving the unit reaches a position lost for the
//!    opponent; otherwise it keeps a counter of its in-unit moves, and a flag if a move leaving
//!    the unit reaches a draw (then it can no longer lose).
//! 2. [`propagate_ply`], once per ply k: every position resolved at ply k generates its
//!    predecessors by un-moving ([`Retro::for_each_quiet_unmove`], filtered by the same
//!    [`UnitPolicy`]); a loss makes each unresolved predecessor a win at ply k+1; a win
//!    decrements each unresolved predecessor's counter, and a counter reaching zero (without
//!    the draw flag) makes a loss at ply k+1. Updates are lock-free atomics, so the result does
//!    not depend on the thread count.
//! 3. [`collect`]: positions still unresolved are draws; values, capture mask, counts and
//!    (optionally) the resolution ply of every position are handed to the caller.
//!
//! Memory: one byte of state per position of the unit (plus two bytes per position when the
//! resolution plies are recorded, [`SolveOptions::record_plies`]).

use crate::board::{Color, Position, Wld};
use crate::index::SliceIndex;
use crate::rules::Retro;
use crate::slice::{black_leading_rank, Slice};
use bitvec::prelude::{BitSlice, BitVec, Lsb0};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU8, Ordering};

/// Solver state of one position, one byte (stored as an [`AtomicU8`]).
///
/// - `0..=127`: unresolved; the number of in-unit moves not yet known to lose for the mover.
/// - `128..=239`: unresolved and cannot lose (a move leaving the unit reaches a draw):
///   `128 +` that counter.
/// - [`State::WIN`], [`State::LOSS`], [`State::DRAW`] and their capture twins
///   ([`State::CAP_WIN`] ...): final values (capture = the side to move must capture).
/// - tagged: resolved at a ply of parity p and not yet propagated (`WIN_T + p`, `LOSS_T + p`,
///   `CAP_WIN_T + p`, `CAP_LOSS_T + p`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct State(u8);

impl State {
    const NO_LOSS: u8 = 128;
    /// Won, propagated.
    pub const WIN: State = State(240);
    /// Lost, propagated.
    pub const LOSS: State = State(241);
    /// Drawn (a position with a draw flag whose counter ran out).
    pub const DRAW: State = State(242);
    /// Capture position, won.
    pub const CAP_WIN: State = State(243);
    /// Capture position, lost.
    pub const CAP_LOSS: State = State(244);
    /// Capture position, drawn.
    pub const CAP_DRAW: State = State(245);
    const WIN_T: u8 = 246;
    const LOSS_T: u8 = 248;
    const CAP_WIN_T: u8 = 250;
    const CAP_LOSS_T: u8 = 252;

    /// Unresolved with `count` in-unit moves (at most 111) and the "cannot lose" flag.
    #[inline(always)]
    const fn unresolved(count: u8, no_loss: bool) -> State {
        State(if no_loss {
            Self::NO_LOSS + count
        } else {
            count
        })
    }

    /// Resolved at a ply of parity `parity` (0 or 1), not yet propagated.
    #[inline(always)]
    const fn tagged(value: Wld, capture: bool, parity: u8) -> State {
        let base = match (value, capture) {
            (Wld::Win, false) => Self::WIN_T,
            (Wld::Loss, false) => Self::LOSS_T,
            (Wld::Win, true) => Self::CAP_WIN_T,
            (Wld::Loss, true) => Self::CAP_LOSS_T,
            (Wld::Draw, false) => return Self::DRAW,
            (Wld::Draw, true) => return Self::CAP_DRAW,
        };
        State(base + parity)
    }

    /// Whether the position is still unresolved.
    #[inline(always)]
    const fn is_unresolved(self) -> bool {
        self.0 < Self::WIN.0
    }

    /// Ply parity of a tagged state, `None` for other states.
    #[inline(always)]
    fn tag_parity(self) -> Option<usize> {
        (self.0 >= Self::WIN_T).then(|| ((self.0 - Self::WIN_T) & 1) as usize)
    }

    /// Whether the state is tagged with parity `parity` (0 or 1): [`State::take_tag`] is
    /// `Some`. Two comparisons, for the propagation's scan of a chunk (the tags are the eight
    /// values from `WIN_T`, an even number, and their parity is the ply's).
    #[inline(always)]
    fn has_tag(byte: u8, parity: u8) -> bool {
        (byte.wrapping_sub(Self::WIN_T) < 8) & (byte & 1 == parity)
    }

    /// For a state tagged with parity `parity`: (is a win, the propagated state).
    #[inline(always)]
    fn take_tag(self, parity: u8) -> Option<(bool, State)> {
        match self.0 {
            v if v == Self::WIN_T + parity => Some((true, Self::WIN)),
            v if v == Self::CAP_WIN_T + parity => Some((true, Self::CAP_WIN)),
            v if v == Self::LOSS_T + parity => Some((false, Self::LOSS)),
            v if v == Self::CAP_LOSS_T + parity => Some((false, Self::CAP_LOSS)),
            _ => None,
        }
    }

    /// Final value and whether the side to move must capture; unresolved states are draws.
    #[inline(always)]
    pub const fn outcome(self) -> (Wld, bool) {
        match self {
            Self::WIN => (Wld::Win, false),
            Self::LOSS => (Wld::Loss, false),
            Self::CAP_WIN => (Wld::Win, true),
            Self::CAP_LOSS => (Wld::Loss, true),
            Self::CAP_DRAW => (Wld::Draw, true),
            _ => (Wld::Draw, false),
        }
    }

    /// Make an unresolved position a win at the ply of parity `tag`; true if it changed.
    #[inline]
    fn mark_win(cell: &AtomicU8, tag: u8) -> bool {
        cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
            State(v).is_unresolved().then_some(Self::WIN_T + tag)
        })
        .is_ok()
    }

    /// One more move of an unresolved position is refuted; true if that made it a loss
    /// (tagged with `tag`).
    #[inline]
    fn count_down(cell: &AtomicU8, tag: u8) -> bool {
        cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
            if v < Self::NO_LOSS {
                Some(if v <= 1 { Self::LOSS_T + tag } else { v - 1 })
            } else if v < Self::WIN.0 {
                Some(if v <= Self::NO_LOSS + 1 {
                    Self::DRAW.0
                } else {
                    v - 1
                })
            } else {
                None
            }
        })
        .is_ok_and(|old| old <= 1)
    }
}

/// The one rule of what stays in a unit: a quiet move of Black (in the unit's Black-to-move
/// frame) stays in the unit when it does not crown and keeps Black's leading rank; every other
/// move (a capture, a crowning, a leading-man advance) leaves it for a slice built earlier.
/// Used by the initial pass (successors) and the predecessor generator (un-moves).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitPolicy {
    /// Black's leading rank in the unit.
    pub rank: Option<u8>,
    /// Distance-to-conversion pass ([`solve_dtc_unit`]): only king moves stay in the unit;
    /// every man move is a conversion, an exit whose value is known.
    pub kings_only: bool,
}

impl UnitPolicy {
    /// Whether a quiet move whose mover (Black) has the men `men_after` afterwards, and which
    /// crowned or not, stays in the unit.
    #[inline(always)]
    pub fn stays(&self, men_after: crate::board::Bitboard, crowned: bool) -> bool {
        !self.kings_only && !crowned && black_leading_rank(men_after) == self.rank
    }
}

/// Result for one array (one slice) of a unit.
#[derive(Clone, Debug)]
pub struct SolvedSlice {
    /// The slice.
    pub slice: Slice,
    /// One byte per position in index order: the true value for the side to move (0 loss,
    /// 1 draw, 2 win), capture positions included.
    pub values: Vec<u8>,
    /// Bit i set: the side to move must capture in position i (the file stores "don't care"
    /// there; probes resolve such positions by search).
    pub captures: BitVec<u64, Lsb0>,
    /// Resolution ply of every position (as [`SolvedSlice::longest`] counts them; draws and
    /// capture draws `u16::MAX`, larger plies saturate at `u16::MAX - 1`), when
    /// [`SolveOptions::record_plies`] was set.
    pub resolution_plies: Option<Vec<u16>>,
    /// Wins, losses and draws over all positions (capture positions with their true value).
    pub wins: u64,
    /// See `wins`.
    pub losses: u64,
    /// See `wins`.
    pub draws: u64,
    /// Largest number of plies to resolution (distance to leaving the slice: capture,
    /// crowning or leading-man advance) over won and lost positions.
    pub longest: u32,
    /// Seconds spent in the initial pass of the unit (shared by both slices of a unit).
    pub initial_seconds: f64,
    /// Seconds spent propagating (shared by both slices of a unit).
    pub propagate_seconds: f64,
    /// Plies propagated in the unit.
    pub plies: u32,
}

impl SolvedSlice {
    /// The values as a table file stores them: [`SolvedSlice::values`] with
    /// [`crate::table::DONT_CARE`] at capture positions.
    pub fn file_values(&self) -> Vec<u8> {
        let mut v = self.values.clone();
        for i in self.captures.iter_ones() {
            v[i] = crate::table::DONT_CARE;
        }
        v
    }
}

/// Progress callback: called with the number of positions just finished by the initial pass.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// Options of [`solve_unit_opts`].
#[derive(Clone, Copy, Debug, Default)]
pub struct SolveOptions {
    /// Keep the resolution ply of every position ([`SolvedSlice::resolution_plies`]); costs
    /// two bytes per position of the unit.
    pub record_plies: bool,
}

/// One array of a unit under solution.
pub struct Side {
    slice: Slice,
    index: SliceIndex,
    /// First index of the slice held here: `state[j]` is position `lo + j`. 0 unless the unit
    /// is split over ranks ([`super::split`]), where each rank holds one range of each slice.
    pub(super) lo: u64,
    state: Vec<AtomicU8>,
    /// `dirty[t][c]`: chunk `c` (of `CHUNK` positions) may hold positions tagged with ply
    /// parity `t`, so the propagation scans only those chunks.
    dirty: [Vec<AtomicBool>; 2],
    longest: AtomicU32,
    plies: Option<Vec<AtomicU16>>,
    /// Distance-to-conversion pass: only king moves stay in the unit.
    kings_only: bool,
}

impl Side {
    fn new(slice: Slice, opts: &SolveOptions) -> Side {
        let n = SliceIndex::new(slice).size();
        Side::range(slice, opts, 0..n)
    }

    /// The positions `range` of `slice` only (a rank's share of a split unit).
    pub(super) fn range(slice: Slice, opts: &SolveOptions, range: std::ops::Range<u64>) -> Side {
        let index = SliceIndex::new(slice);
        debug_assert!(range.end <= index.size());
        let n = (range.end - range.start) as usize;
        let mut state = Vec::with_capacity(n);
        state.resize_with(n, || AtomicU8::new(0));
        let chunks = n.div_ceil(CHUNK);
        let flags = || (0..chunks).map(|_| AtomicBool::new(false)).collect();
        Side {
            slice,
            index,
            lo: range.start,
            state,
            dirty: [flags(), flags()],
            longest: AtomicU32::new(0),
            plies: opts.record_plies.then(|| {
                let mut v = Vec::with_capacity(n);
                v.resize_with(n, || AtomicU16::new(u16::MAX));
                v
            }),
            kings_only: false,
        }
    }
}

impl Side {
    /// This side for the distance-to-conversion pass: only king moves stay in the unit.
    pub(super) fn kings_only(mut self) -> Side {
        self.kings_only = true;
        self
    }

    /// Apply one predecessor update to position `lo + j`: its successor is a win
    /// (`succ_is_win`: one more move refuted) or a loss (the position wins), resolved
    /// positions being left alone; a position this resolves is tagged with `tag` (the next
    /// ply's parity) and its chunk marked for the next ply's scan.
    #[inline]
    pub(super) fn apply(&self, j: usize, succ_is_win: bool, tag: u8) {
        let cell = &self.state[j];
        let tagged = if succ_is_win {
            State::count_down(cell, tag)
        } else {
            State::mark_win(cell, tag)
        };
        if tagged {
            self.dirty[tag as usize][j / CHUNK].store(true, Ordering::Relaxed);
        }
    }

    /// The longest ply resolved here so far.
    /// The chunks of [`CHUNK`] positions the propagation walks this array in (the last one
    /// shorter).
    pub(super) fn chunks(&self) -> usize {
        self.state.len().div_ceil(CHUNK)
    }

    /// Positions of this array (its range of the slice).
    pub(super) fn held(&self) -> u64 {
        self.state.len() as u64
    }

    pub(super) fn longest(&self) -> u32 {
        self.longest.load(Ordering::Relaxed)
    }

    /// Set the longest ply (the maximum over the ranks of a split unit).
    pub(super) fn set_longest(&self, ply: u32) {
        self.longest.store(ply, Ordering::Relaxed);
    }

    /// Panic (an internal error) if a position held here was resolved but never propagated.
    pub(super) fn check_propagated(&self, plies: u32) {
        if let Some(i) = self
            .state
            .par_iter()
            .position_first(|c| c.load(Ordering::Relaxed) >= State::WIN_T)
        {
            unpropagated(self.slice, self.lo as usize + i, plies);
        }
    }
}

/// Positions per work unit of the parallel passes (and per dirty flag).
const CHUNK: usize = 1 << 12;

/// [`solve_unit`] with options (e.g. recording every position's resolution ply).
///
/// # Errors
/// As [`solve_unit`].
pub fn solve_unit_opts<R: Retro, E: Send>(
    rules: R,
    s: Slice,
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
    progress: Progress<'_>,
    opts: &SolveOptions,
) -> Result<Vec<SolvedSlice>, E> {
    let p = s.partner();
    let sides: Vec<Side> = if p == s {
        vec![Side::new(s, opts)]
    } else {
        vec![Side::new(s, opts), Side::new(p, opts)]
    };
    let other = |x: usize| if sides.len() == 1 { 0 } else { 1 - x };

    let t0 = std::time::Instant::now();
    both_sides(&sides, |x| {
        initial_pass(rules, &sides[x], &sides[other(x)], lookup, progress)
    })?;
    let t1 = std::time::Instant::now();
    let ply = propagate_all(rules, &sides);
    let t2 = std::time::Instant::now();
    let times = ((t1 - t0).as_secs_f64(), (t2 - t1).as_secs_f64());
    Ok(sides
        .into_iter()
        .map(|side| collect(side, times, ply))
        .collect())
}

/// Run `f(0)` and `f(1)` side by side (one array of a unit each; `f(0)` alone for a unit that
/// is its own partner) and return the error of side 0 first, so the result does not depend on
/// the scheduling. Both arrays in one parallel region keep the two cores busy on small units
/// and small plies, where one array alone has too little work to split.
pub(super) fn both_sides<E: Send>(
    sides: &[Side],
    f: impl Fn(usize) -> Result<(), E> + Sync,
) -> Result<(), E> {
    if sides.len() == 1 {
        return f(0);
    }
    let (a, b) = rayon::join(|| f(0), || f(1));
    a.and(b)
}

/// Step 2 for the whole unit: propagate ply after ply until a ply resolves nothing; returns
/// the number of plies. Within a ply the two arrays are propagated side by side
/// ([`both_sides`]): each reads the positions of its own array tagged at this ply and only
/// changes unresolved positions of the other (tagging them for the next ply), so the two
/// never touch the same state, and the updates commute (see [`propagate_ply`]).
fn propagate_all<R: Retro>(rules: R, sides: &[Side]) -> u32 {
    let other = |x: usize| if sides.len() == 1 { 0 } else { 1 - x };
    let mut ply: u32 = 0;
    loop {
        let found = [AtomicBool::new(false), AtomicBool::new(false)];
        let _ = both_sides::<()>(sides, |x| {
            let f = propagate_ply(rules, &sides[x], &sides[other(x)], ply);
            found[x].store(f, Ordering::Relaxed);
            Ok(())
        });
        let any = found.iter().any(|f| f.load(Ordering::Relaxed));
        // Ply 0 may be empty while the initial pass left ply-1 positions to propagate; after
        // that an empty ply means nothing new was created.
        if !any && ply >= 1 {
            break;
        }
        ply += 1;
    }
    // Every resolved position was propagated: one left tagged would be read as a draw, and
    // so would the positions it should have resolved.
    for side in sides {
        side.check_propagated(ply);
    }
    ply
}

/// A position resolved but never propagated: an internal error of the solver, never a
/// property of the input. Stops the build rather than write wrong draws.
#[cold]
#[inline(never)]
fn unpropagated(slice: Slice, index: usize, plies: u32) -> ! {
    panic!(
        "internal error: position {index} of slice {slice} was resolved but never propagated \
         ({plies} plies); please report this"
    )
}

/// Step 1: the initial state of every position of `side`; `target` is the array its in-unit
/// successors fall into.
///
/// # Errors
/// The error of the lowest-indexed position whose lookup failed.
pub fn initial_pass<R: Retro, E: Send>(
    rules: R,
    side: &Side,
    target: &Side,
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
    progress: Progress<'_>,
) -> Result<(), E> {
    // Black's leading rank seen from the partner's frame.
    let policy = UnitPolicy {
        rank: target.slice.white_rank,
        kings_only: false,
    };
    initial_pass_by(side, progress, |_, pos| {
        initial_state(rules, pos, policy, lookup)
    })
}

/// The parallel loop of an initial pass: `state(i, pos)` gives the initial state of position
/// `i` of `side`. Keeps the error of the lowest-indexed failing position.
fn initial_pass_by<E: Send>(
    side: &Side,
    progress: Progress<'_>,
    state: impl Fn(u64, &Position) -> Result<State, E> + Sync,
) -> Result<(), E> {
    let first_err: std::sync::Mutex<Option<(usize, E)>> = std::sync::Mutex::new(None);
    side.state
        .par_chunks(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let base = side.lo + (c * CHUNK) as u64;
            let mut err = None;
            side.index.visit(base, base + chunk.len() as u64, |i, pos| {
                if err.is_some() {
                    return;
                }
                match state(i, &pos) {
                    Ok(v) => {
                        if let Some(t) = v.tag_parity() {
                            side.dirty[t][c].store(true, Ordering::Relaxed);
                        }
                        chunk[(i - base) as usize].store(v.0, Ordering::Relaxed)
                    }
                    Err(e) => err = Some((i as usize, e)),
                }
            });
            if let Some((i, e)) = err {
                let mut g = first_err.lock().unwrap_or_else(|p| p.into_inner());
                // Keep the error of the lowest position for determinism.
                if g.as_ref().is_none_or(|(k, _)| i < *k) {
                    *g = Some((i, e));
                }
                return;
            }
            progress(chunk.len() as u64);
        });
    match first_err.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// Step 2: propagate the positions of `side` resolved at `ply` to their predecessors in
/// `preds` (tagging those resolved at `ply + 1`). Returns whether any position was resolved at
/// `ply`.
pub fn propagate_ply<R: Retro>(rules: R, side: &Side, preds: &Side, ply: u32) -> bool {
    let (found, remote) = propagate_ply_split(rules, side, preds, ply, 0..side.chunks());
    debug_assert!(
        remote.is_empty(),
        "a whole array has no remote predecessors"
    );
    found
}

/// [`propagate_ply`] over the range of `side` held here, for a unit split over ranks: the
/// updates of predecessors outside the range of `preds` held here are not applied but
/// returned, each as `index << 1 | successor is a win` (index in the whole slice of
/// `preds`), in no particular order; [`super::split`] sends them to the ranks holding them.
/// Only the chunks `chunks` of `side` ([`Side::chunks`]; a range past the end is cut) are
/// propagated, so that a split ply can run in rounds of bounded exchange buffers; every
/// chunk must be propagated exactly once per ply.
/// Returns (whether any position of those chunks was resolved at `ply`, those updates).
pub(super) fn propagate_ply_split<R: Retro>(
    rules: R,
    side: &Side,
    preds: &Side,
    ply: u32,
    chunks: std::ops::Range<usize>,
) -> (bool, Vec<u64>) {
    let cur = (ply & 1) as u8;
    let next = cur ^ 1;
    let policy = UnitPolicy {
        rank: preds.slice.black_rank,
        kings_only: preds.kings_only,
    };
    let stamp = ply.min(u16::MAX as u32 - 1) as u16;
    let (found, remote) = side
        .state
        .par_chunks(CHUNK)
        .enumerate()
        .skip(chunks.start)
        .take(chunks.end.saturating_sub(chunks.start))
        .map(|(c, chunk)| {
            if !side.dirty[cur as usize][c].swap(false, Ordering::Relaxed) {
                return (false, Vec::new());
            }
            // Predecessor updates are batched: each index is prefetched when found and applied
            // when the batch is full, so the cache misses of the random accesses overlap
            // instead of stalling one after another.
            let mut batch = UpdateBatch::new(preds, next);
            let base = side.lo + (c * CHUNK) as u64;
            let process = |batch: &mut UpdateBatch,
                           i: u64,
                           cell: &AtomicU8,
                           black: u32,
                           white: u32,
                           kings: u32,
                           is_win: bool,
                           fin: State| {
                // The position's bitboards come as scalars (in registers): a `Position` is
                // passed by reference, and loading its fields, just stored by the caller one by
                // one, as one vector for the colour flip stalled on store forwarding (a third
                // of this closure's samples in `perf annotate`).
                let q = Position {
                    black,
                    white,
                    kings,
                    side: Color::Black,
                };
                for_each_predecessor(rules, &q, &preds.index, policy, |k| batch.push(k, is_win));
                cell.store(fin.0, Ordering::Relaxed);
                if let Some(pl) = &side.plies {
                    pl[(i - side.lo) as usize].store(stamp, Ordering::Relaxed);
                }
            };
            let tagged = |cell: &AtomicU8| State(cell.load(Ordering::Relaxed)).take_tag(cur);
            let n_tagged = chunk
                .iter()
                .filter(|c| State::has_tag(c.load(Ordering::Relaxed), cur))
                .count();
            if n_tagged * 8 >= chunk.len() {
                // Dense: walk the chunk in index order (cheap per position).
                side.index.visit(base, base + chunk.len() as u64, |i, q| {
                    let cell = &chunk[(i - base) as usize];
                    if let Some((is_win, fin)) = tagged(cell) {
                        process(&mut batch, i, cell, q.black, q.white, q.kings, is_win, fin);
                    }
                });
            } else {
                for (j, cell) in chunk.iter().enumerate() {
                    if !State::has_tag(cell.load(Ordering::Relaxed), cur) {
                        continue;
                    }
                    if let Some((is_win, fin)) = tagged(cell) {
                        let i = base + j as u64;
                        let q = side.index.unrank(i).expect("index below size unranks");
                        process(&mut batch, i, cell, q.black, q.white, q.kings, is_win, fin);
                    }
                }
            }
            batch.flush();
            (n_tagged > 0, batch.remote)
        })
        .reduce(
            || (false, Vec::new()),
            |mut a, mut b| {
                if a.1.len() < b.1.len() {
                    std::mem::swap(&mut a.1, &mut b.1);
                }
                a.1.append(&mut b.1);
                (a.0 || b.0, a.1)
            },
        );
    if found {
        side.longest.fetch_max(ply, Ordering::Relaxed);
    }
    (found, remote)
}

/// Step 3: final values, capture mask, counts and resolution plies of one array.
/// `times`: (initial pass, propagation) seconds of the unit; `plies`: plies propagated.
///
/// Runs in parallel (values, 64-position words of the capture mask, counts per chunk): it sits
/// between units, where a serial pass would leave a core idle.
pub fn collect(side: Side, times: (f64, f64), plies: u32) -> SolvedSlice {
    let n = side.state.len();
    let outcome = |c: &AtomicU8| State(c.load(Ordering::Relaxed)).outcome();
    let values: Vec<u8> = side.state.par_iter().map(|c| outcome(c).0 as u8).collect();
    let words: Vec<u64> = side
        .state
        .par_chunks(64)
        .map(|ch| {
            ch.iter()
                .enumerate()
                .fold(0u64, |w, (j, c)| w | (u64::from(outcome(c).1) << j))
        })
        .collect();
    let mut captures: BitVec<u64, Lsb0> = BitVec::from_vec(words);
    captures.truncate(n);
    let (w, l, d) = values
        .par_chunks(CHUNK)
        .map(|ch| {
            ch.iter().fold((0u64, 0u64, 0u64), |(w, l, d), &v| {
                (
                    w + u64::from(v == Wld::Win as u8),
                    l + u64::from(v == Wld::Loss as u8),
                    d + u64::from(v == Wld::Draw as u8),
                )
            })
        })
        .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    SolvedSlice {
        slice: side.slice,
        values,
        captures,
        resolution_plies: side
            .plies
            .map(|v| v.into_iter().map(AtomicU16::into_inner).collect()),
        wins: w,
        losses: l,
        draws: d,
        longest: side.longest.into_inner(),
        initial_seconds: times.0,
        propagate_seconds: times.1,
        plies,
    }
}

/// Distance to conversion of a position with no DTC (a draw) in [`DtcSlice::dtc`].
pub const DTC_NONE: u16 = u16::MAX;

/// The win/loss/draw solution of one slice of a unit, as the distance-to-conversion pass
/// ([`solve_dtc_unit`]) takes it: from the WLD pass just run ([`SolvedSlice`]) or from the
/// slice's file.
#[derive(Clone, Copy, Debug)]
pub struct WldInput<'a> {
    /// True value of every position in index order (0 loss, 1 draw, 2 win for the side to
    /// move; capture positions included).
    pub values: &'a [u8],
    /// Bit i set: the side to move must capture in position i.
    pub captures: &'a BitSlice<u64, Lsb0>,
    /// WLD resolution plies ([`SolvedSlice::resolution_plies`]) when known: positions resolved
    /// at ply 0 or 1 have that DTC, so the pass skips their move generation.
    pub plies: Option<&'a [u16]>,
}

impl<'a> WldInput<'a> {
    /// The input view of a [`SolvedSlice`].
    pub fn of(sv: &'a SolvedSlice) -> WldInput<'a> {
        WldInput {
            values: &sv.values,
            captures: &sv.captures,
            plies: sv.resolution_plies.as_deref(),
        }
    }
}

/// Distance to conversion (DTC) of every position of one slice (issue 9's metric): plies to
/// the next conversion (a capture or a man move) under perfect play, the winner converting as
/// soon as possible and the loser as late as possible.
#[derive(Clone, Debug)]
pub struct DtcSlice {
    /// The slice.
    pub slice: Slice,
    /// DTC in plies of every position in index order; [`DTC_NONE`] for draws. Capture
    /// positions hold 1 (every move converts).
    pub dtc: Vec<u16>,
    /// Won positions (capture positions included).
    pub wins: u64,
    /// Lost positions (capture positions included).
    pub losses: u64,
    /// Largest DTC over the won and lost positions.
    pub longest: u32,
    /// Bit i set: position i is a draw or a capture position (its distance is not stored:
    /// "don't care" in the file).
    pub dont_care: BitVec<u64, Lsb0>,
    /// Index of a won position with the largest DTC among wins, and that DTC.
    pub longest_win: Option<(u64, u32)>,
    /// Index of a lost position with the largest DTC among losses, and that DTC.
    pub longest_loss: Option<(u64, u32)>,
    /// Wall seconds of the unit's DTC pass (shared by both slices of a unit).
    pub seconds: f64,
}

/// Why a distance-to-conversion pass failed.
#[derive(Debug)]
pub enum DtcError<E> {
    /// A lookup of a position outside the unit failed.
    Lookup(E),
    /// The values of the king-moves-only solve differ from the WLD input (a bug or a
    /// damaged input): the first differing position.
    Inconsistent {
        /// The slice.
        slice: Slice,
        /// Index of the position in the slice.
        index: u64,
        /// Value in the WLD input.
        wld: Wld,
        /// Value found by the distance pass.
        dtc_pass: Wld,
    },
    /// A distance does not fit the in-memory form (65,534 plies or more).
    TooLong {
        /// The slice.
        slice: Slice,
    },
}

/// Distance to conversion of the unit of slice `s` (`s` and `s.partner()`), given its
/// win/loss/draw solution `wld` (one entry per slice, `s` first, as [`solve_unit`] returns
/// them).
///
/// This is the retrograde solver run a second time with the king-moves-only policy: between
/// conversions only king moves happen, and they stay in the unit; every man move and every
/// capture is a conversion, an exit whose value is known (in-unit man moves from `wld`, moves
/// leaving the unit from `lookup`, which answers as for [`solve_unit`]). The resolution ply of
/// each position in that solve is its DTC: a win at ply 1 converts into a lost position, a
/// loss resolves one ply after its last refuted king move, exactly the min/max of the
/// definition. Draws, capture positions and the conversions of lost positions are taken from
/// `wld` (see `dtc_initial_state`); the values the king-move propagation finds are checked
/// against `wld` ([`DtcError::Inconsistent`]).
///
/// # Errors
/// [`DtcError::Lookup`] (the first failed lookup), [`DtcError::Inconsistent`],
/// [`DtcError::TooLong`].
pub fn solve_dtc_unit<R: Retro, E: Send>(
    rules: R,
    s: Slice,
    wld: &[WldInput<'_>],
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
) -> Result<Vec<DtcSlice>, DtcError<E>> {
    let t0 = std::time::Instant::now();
    let p = s.partner();
    let opts = SolveOptions { record_plies: true };
    let mk = |x: Slice| Side::new(x, &opts).kings_only();
    let sides: Vec<Side> = if p == s {
        vec![mk(s)]
    } else {
        vec![mk(s), mk(p)]
    };
    assert_eq!(
        wld.len(),
        sides.len(),
        "one WLD input per slice of the unit"
    );
    for (x, side) in sides.iter().enumerate() {
        assert_eq!(wld[x].values.len(), side.state.len(), "WLD input size");
    }
    let other = |x: usize| if sides.len() == 1 { 0 } else { 1 - x };
    both_sides(&sides, |x| {
        let y = other(x);
        let theirs = wld[y].values;
        dtc_initial_pass(rules, &sides[x], &sides[y], wld[x], lookup, |k| {
            Wld::from_u8(theirs[k as usize]).unwrap_or(Wld::Draw)
        })
    })
    .map_err(DtcError::Lookup)?;
    let ply = propagate_all(rules, &sides);
    let seconds = t0.elapsed().as_secs_f64();
    sides
        .into_iter()
        .enumerate()
        .map(|(x, side)| dtc_finish(side, wld[x].values, ply, seconds))
        .collect()
}

/// Whether the initial state of the distance pass reads the partner slice's WLD values for
/// position `j` of `own` (its in-unit man moves' targets): a won position that is not a
/// capture position and was not resolved at ply 0 or 1 by the WLD pass.
#[inline]
fn reads_partner(own: WldInput<'_>, j: usize) -> bool {
    own.values[j] == Wld::Win as u8 && !own.captures[j] && own.plies.is_none_or(|pl| pl[j] > 1)
}

/// The initial pass of the distance pass for the positions of `side` (its range, for a split
/// unit), whose WLD solution is `own` (the same range); `target` is the partner array and
/// `theirs(k)` the WLD value of position `k` of the partner slice (a target of an in-unit man
/// move, any index).
///
/// # Errors
/// The error of the lowest-indexed position whose lookup failed.
pub(super) fn dtc_initial_pass<R: Retro, E: Send>(
    rules: R,
    side: &Side,
    target: &Side,
    own: WldInput<'_>,
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
    theirs: impl Fn(u64) -> Wld + Sync,
) -> Result<(), E> {
    // In-unit man moves keep Black's leading rank (seen from the partner's frame).
    let policy = UnitPolicy {
        rank: target.slice.white_rank,
        kings_only: false,
    };
    initial_pass_by(side, &|_| {}, |i, pos| {
        let j = (i - side.lo) as usize;
        dtc_initial_state(rules, pos, j, own, &theirs, target, policy, lookup)
    })
}

/// The indices, outside the range of `target` held here, of the positions of the partner
/// slice whose WLD values [`dtc_initial_pass`] will read for the positions of `side` (the
/// targets of the in-unit man moves of the positions [`reads_partner`] selects), each as
/// `index << 1`, in no particular order and possibly repeated. Empty for a whole unit.
pub(super) fn dtc_remote_targets<R: Retro>(
    rules: R,
    side: &Side,
    target: &Side,
    own: WldInput<'_>,
) -> Vec<u64> {
    let policy = UnitPolicy {
        rank: target.slice.white_rank,
        kings_only: false,
    };
    let held = target.lo..target.lo + target.state.len() as u64;
    side.state
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let base = side.lo + (c * CHUNK) as u64;
            let mut out = Vec::new();
            side.index.visit(base, base + chunk.len() as u64, |i, pos| {
                if !reads_partner(own, (i - side.lo) as usize) {
                    return;
                }
                let men = pos.men(Color::Black);
                let kings = pos.kings_of(Color::Black).count_ones();
                rules.for_each_successor(&pos, |s| {
                    if s.men(Color::Black) == men {
                        return;
                    }
                    let crowned = s.kings_of(Color::Black).count_ones() != kings;
                    if policy.stays(s.men(Color::Black), crowned) {
                        let k = target.index.rank(&s.flip());
                        if !held.contains(&k) {
                            out.push(k << 1);
                        }
                    }
                });
            });
            out
        })
        .reduce(Vec::new, |mut a, mut b| {
            if a.len() < b.len() {
                std::mem::swap(&mut a, &mut b);
            }
            a.append(&mut b);
            a
        })
}

/// The distances of one array after the distance pass's propagation (`plies` plies, the
/// pass took `seconds`): its values checked against the WLD values `wld` of the same
/// positions (the range held here, for a split unit: indices in errors and in
/// [`DtcSlice::longest_win`] are the slice's), then the distances, don't cares and longest
/// distances of the positions held.
///
/// # Errors
/// [`DtcError::Inconsistent`] (the first differing position), [`DtcError::TooLong`].
pub(super) fn dtc_finish<E>(
    side: Side,
    wld: &[u8],
    plies: u32,
    seconds: f64,
) -> Result<DtcSlice, DtcError<E>> {
    let lo = side.lo;
    let sv = collect(side, (0.0, 0.0), plies);
    if let Some(i) = (0..sv.values.len()).find(|&i| sv.values[i] != wld[i]) {
        return Err(DtcError::Inconsistent {
            slice: sv.slice,
            index: lo + i as u64,
            wld: Wld::from_u8(wld[i]).unwrap_or(Wld::Draw),
            dtc_pass: Wld::from_u8(sv.values[i]).unwrap_or(Wld::Draw),
        });
    }
    let dtc = sv.resolution_plies.unwrap_or_default();
    let dont_care: BitVec<u64, Lsb0> = (0..dtc.len())
        .map(|i| sv.captures[i] || sv.values[i] == Wld::Draw as u8)
        .collect();
    let mut longest_win: Option<(u64, u32)> = None;
    let mut longest_loss: Option<(u64, u32)> = None;
    for (i, (&d, &v)) in dtc.iter().zip(&sv.values).enumerate() {
        if d == DTC_NONE {
            continue;
        }
        if d == DTC_NONE - 1 {
            return Err(DtcError::TooLong { slice: sv.slice });
        }
        let best = if v == Wld::Win as u8 {
            &mut longest_win
        } else {
            &mut longest_loss
        };
        if best.is_none_or(|(_, b)| u32::from(d) > b) {
            *best = Some((lo + i as u64, u32::from(d)));
        }
    }
    let longest = longest_win
        .map_or(0, |x| x.1)
        .max(longest_loss.map_or(0, |x| x.1));
    Ok(DtcSlice {
        slice: sv.slice,
        dtc,
        wins: sv.wins,
        losses: sv.losses,
        longest,
        dont_care,
        longest_win,
        longest_loss,
        seconds,
    })
}

/// Initial state of Black-to-move position `pos` (index `i` of `own`; `theirs` gives the WLD
/// values of the partner slice by index) in the distance pass: draws and
/// capture positions are final; a position with no move has the terminal value
/// ([`crate::rules::Rules::no_move_value`]) at ply 0; a conversion
/// reaching a position lost for the opponent wins at ply 1; otherwise a counter of the king
/// moves. Conversions are looked up only where they can matter given the WLD value (never for
/// a loss; for a win, moves leaving the unit only when the WLD plies are unknown), so the pass
/// trusts the WLD input there; the king-move propagation is still checked against it.
#[allow(clippy::too_many_arguments)]
#[inline]
fn dtc_initial_state<R: Retro, E>(
    rules: R,
    pos: &Position,
    i: usize,
    own: WldInput<'_>,
    theirs: &impl Fn(u64) -> Wld,
    target: &Side,
    policy: UnitPolicy,
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
) -> Result<State, E> {
    let v = Wld::from_u8(own.values[i]).unwrap_or(Wld::Draw);
    if own.captures[i] {
        return Ok(State::tagged(v, true, 1));
    }
    if v == Wld::Draw {
        return Ok(State::DRAW);
    }
    if let Some(pl) = own.plies {
        // Resolved at ply 0 (no move) or 1 (all moves leave the unit, or one reaches an
        // immediate loss): the same distance.
        match pl[i] {
            0 => return Ok(State::tagged(v, false, 0)),
            1 => return Ok(State::tagged(v, false, 1)),
            _ => {}
        }
    }
    let men = pos.men(Color::Black);
    let kings = pos.kings_of(Color::Black).count_ones();
    // What a conversion can contribute is known from the WLD value: in a lost position every
    // move reaches a win for the opponent (no lookup needed); in a won one only a conversion
    // reaching a loss matters, and a move leaving the unit cannot reach one when the WLD pass
    // resolved the position later than ply 1 (it would have won at ply 1).
    let exits_matter = v == Wld::Win && own.plies.is_none();
    let mut moves = 0u32;
    let mut count = 0u8;
    let mut no_loss = false;
    let mut win = false;
    let mut err = None;
    rules.for_each_successor(pos, |s| {
        moves += 1;
        if win || err.is_some() {
            return;
        }
        if s.men(Color::Black) == men {
            // A king move (captures do not occur here: not a capture position).
            count += 1;
            return;
        }
        if v == Wld::Loss {
            return;
        }
        let crowned = s.kings_of(Color::Black).count_ones() != kings;
        let value = if policy.stays(s.men(Color::Black), crowned) {
            // A man move inside the unit: its value from the WLD solution.
            Ok(theirs(target.index.rank(&s.flip())))
        } else if exits_matter {
            lookup(&s)
        } else {
            return;
        };
        match value {
            Ok(Wld::Loss) => win = true,
            Ok(Wld::Draw) => no_loss = true,
            Ok(Wld::Win) => {}
            Err(e) => err = Some(e),
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    if win {
        return Ok(State::tagged(Wld::Win, false, 1));
    }
    if moves == 0 {
        // The terminal rule (a loss in English, a win in giveaway), resolved at ply 0.
        return Ok(State::tagged(rules.no_move_value(), false, 0));
    }
    Ok(match (count, no_loss) {
        (0, false) => State::tagged(Wld::Loss, false, 1),
        (0, true) => State::DRAW,
        (c, nl) => State::unresolved(c, nl),
    })
}

/// Initial state of Black-to-move position `pos`; `policy` says which quiet moves stay in the
/// unit.
#[inline]
fn initial_state<R: Retro, E>(
    rules: R,
    pos: &Position,
    policy: UnitPolicy,
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
) -> Result<State, E> {
    debug_assert_eq!(pos.side, Color::Black);
    if rules.has_capture(pos) {
        // Captures lead to fewer pieces; the value is exact now: the best over the capture
        // successors, each looked up (`lookup` resolves their own captures).
        return Ok(State::tagged(best_capture(rules, pos, lookup)?, true, 1));
    }
    // Quiet moves by kings and by men behind Black's leading row never crown and keep the
    // leading rank, so they stay in the unit (`UnitPolicy::stays`): counted without being
    // generated. Only the moves of the men on the leading row may leave the unit; they are
    // generated and tested. (Profile of `build --pieces 6`: the initial pass's move
    // generation was a tenth of the build.)
    debug_assert!(
        !policy.kings_only,
        "the WLD pass keeps every quiet move in the unit"
    );
    let men = pos.men(Color::Black);
    debug_assert_eq!(policy.rank, black_leading_rank(men));
    let lead = black_leading_rank(men).map_or(0, |r| men & crate::board::row_mask(r));
    let staying = rules.count_quiet_moves(pos, pos.black & !lead);
    let kings = pos.kings_of(Color::Black).count_ones();
    let mut moves = staying;
    let mut count = staying as u8;
    let mut no_loss = false;
    let mut win = false;
    let mut err = None;
    rules.for_each_quiet_successor(pos, lead, |s| {
        moves += 1;
        if win || err.is_some() {
            return;
        }
        let crowned = s.kings_of(Color::Black).count_ones() != kings;
        if policy.stays(s.men(Color::Black), crowned) {
            count += 1;
            return;
        }
        match lookup(&s) {
            Ok(Wld::Loss) => win = true,
            Ok(Wld::Draw) => no_loss = true,
            Ok(Wld::Win) => {}
            Err(e) => err = Some(e),
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    if win {
        return Ok(State::tagged(Wld::Win, false, 1));
    }
    if moves == 0 {
        // The terminal rule (a loss in English, a win in giveaway), resolved at ply 0.
        return Ok(State::tagged(rules.no_move_value(), false, 0));
    }
    Ok(match (count, no_loss) {
        (0, false) => State::tagged(Wld::Loss, false, 1),
        (0, true) => State::DRAW,
        (c, nl) => State::unresolved(c, nl),
    })
}

/// The value for the side to move of `pos`, which must capture: the best over its capture
/// successors ([`Retro::for_each_successor`] yields only captures here), each looked up
/// (`lookup` resolves their own captures), stopping at the first win; errors as
/// [`crate::probe::resolve()`] treats them (`probe::resolve::best_of_successors`).
#[inline]
fn best_capture<R: Retro, E>(
    rules: R,
    pos: &Position,
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
) -> Result<Wld, E> {
    crate::probe::resolve::best_of_successors(rules, pos, lookup)
}

/// Call `f(index)` for every predecessor, in the slice of index `preds`, of Black-to-move
/// position `q`
/// (the positions of `preds` with a quiet move that stays in the unit, per `policy`, and
/// leads to `q`). Capture positions among them are included; their state is final, so the
/// callers' updates skip them. (Filtering them out here with a capture test costs more than
/// it saves: measured with callgrind, +5.6% instructions on `build --slice 2102-6n`.)
#[inline]
pub(super) fn for_each_predecessor<R: Retro>(
    rules: R,
    q: &Position,
    preds: &SliceIndex,
    policy: UnitPolicy,
    mut f: impl FnMut(u64),
) {
    // In q's frame White just moved; un-move in the flipped frame where Black just moved.
    let r = q.flip();
    let black_men = r.men(Color::Black);
    let white_men = r.men(Color::White);
    let black_kings = r.kings_of(Color::Black);
    let white_kings = r.kings_of(Color::White);
    let men = black_men | white_men;
    // King un-moves keep the men (so they always stay in the unit): rank the men once, and
    // the white kings once (a black king's step changes their rank only when it passes over
    // one of them; profile of a 6-piece unit: ranking king un-moves was 14% of the build).
    let (base, white_rank) = if black_kings != 0 {
        (
            preds.men_base(black_men, white_men),
            preds.white_king_rank(white_kings, men | black_kings),
        )
    } else {
        (0, 0)
    };
    rules.for_each_quiet_unmove(&r, |from, to, is_king| {
        if is_king {
            let bk = black_kings ^ to ^ from;
            // Squares strictly between the two ends of the step.
            let (lo, hi) = (from.min(to), from.max(to));
            let between = (hi - 1) & !((lo << 1) - 1);
            f(base
                + if white_kings & between == 0 {
                    preds.king_offset_with(bk, men, white_rank)
                } else {
                    preds.king_offset(bk, white_kings, men)
                });
        } else {
            if policy.kings_only || !policy.stays((black_men ^ to) | from, false) {
                return;
            }
            let p = Position {
                black: (r.black ^ to) | from,
                white: r.white,
                kings: r.kings,
                side: Color::Black,
            };
            f(preds.rank(&p));
        }
    });
}

/// Pending predecessor updates of one worker (see [`propagate_ply`]).
struct UpdateBatch<'a> {
    side: &'a Side,
    tag: u8,
    len: usize,
    /// (index in the range held here, successor is a win).
    items: [(u64, bool); BATCH],
    /// Updates of positions outside the range held here (split units):
    /// `index << 1 | successor is a win`.
    remote: Vec<u64>,
}

const BATCH: usize = 64;

impl<'a> UpdateBatch<'a> {
    fn new(side: &'a Side, tag: u8) -> Self {
        UpdateBatch {
            side,
            tag,
            len: 0,
            items: [(0, false); BATCH],
            remote: Vec::new(),
        }
    }

    /// Queue "the successor of position `k` is a win (true) / loss (false) for its mover".
    #[inline]
    fn push(&mut self, k: u64, succ_is_win: bool) {
        let j = k.wrapping_sub(self.side.lo);
        if j >= self.side.state.len() as u64 {
            self.remote.push(k << 1 | u64::from(succ_is_win));
            return;
        }
        let k = j;
        crate::hint::prefetch(&self.side.state[k as usize]);
        if self.len == BATCH {
            self.flush();
        }
        self.items[self.len] = (k, succ_is_win);
        self.len += 1;
    }

    fn flush(&mut self) {
        for &(k, is_win) in &self.items[..self.len] {
            self.side.apply(k as usize, is_win, self.tag);
        }
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_encoding_round_trips() {
        for (v, cap) in [
            (Wld::Win, false),
            (Wld::Loss, false),
            (Wld::Win, true),
            (Wld::Loss, true),
        ] {
            for parity in 0..2u8 {
                let s = State::tagged(v, cap, parity);
                assert_eq!(s.tag_parity(), Some(parity as usize));
                let (is_win, fin) = s.take_tag(parity).unwrap();
                assert_eq!(is_win, v == Wld::Win);
                assert_eq!(fin.outcome(), (v, cap));
                assert!(s.take_tag(parity ^ 1).is_none());
            }
        }
        assert_eq!(
            State::tagged(Wld::Draw, true, 1).outcome(),
            (Wld::Draw, true)
        );
        assert!(State::unresolved(111, true).is_unresolved());
        assert_eq!(State::unresolved(5, false).outcome(), (Wld::Draw, false));
    }

    #[test]
    fn has_tag_is_take_tag_is_some() {
        for b in 0..=255u8 {
            for parity in 0..2 {
                assert_eq!(
                    State::has_tag(b, parity),
                    State(b).take_tag(parity).is_some(),
                    "{b} {parity}"
                );
            }
        }
    }

    #[test]
    fn counters_and_flags() {
        let c = AtomicU8::new(State::unresolved(2, false).0);
        assert!(!State::count_down(&c, 0));
        assert!(State::count_down(&c, 1));
        assert_eq!(
            State(c.load(Ordering::Relaxed)).take_tag(1).unwrap().1,
            State::LOSS
        );
        let c = AtomicU8::new(State::unresolved(1, true).0);
        assert!(!State::count_down(&c, 0));
        assert_eq!(State(c.load(Ordering::Relaxed)), State::DRAW);
        let c = AtomicU8::new(State::unresolved(3, true).0);
        assert!(State::mark_win(&c, 0));
        assert!(!State::mark_win(&c, 0));
    }

    /// King against king (0101-nn, its own partner): values and resolution plies of the
    /// solver against a naive forward fixpoint over the slow path generator.
    #[test]
    fn resolution_plies_match_a_naive_forward_iteration() {
        let s: Slice = "0101-nn".parse().unwrap();
        let ix = SliceIndex::new(s);
        let n = ix.size() as usize;
        // Outside the unit only captures occur: the capturer takes the last enemy piece, so
        // the side to move after it has no piece and has lost.
        let lookup = |p: &Position| -> Result<Wld, ()> {
            assert_eq!(p.piece_count(), 1, "only captures leave K v K");
            assert_eq!(p.black | p.white, p.kings_of(p.side.opponent()), "{p:?}");
            Ok(Wld::Loss)
        };
        let opts = SolveOptions { record_plies: true };
        let solved = solve_unit_opts(crate::rules::English, s, &lookup, &|_| {}, &opts).unwrap();
        assert_eq!(solved.len(), 1);
        let sv = &solved[0];
        let plies = sv.resolution_plies.as_ref().unwrap();

        // Naive: (value, ply) per index, by rounds.
        let pos: Vec<Position> = (0..n as u64).map(|i| ix.unrank(i).unwrap()).collect();
        let succ: Vec<Vec<usize>> = pos
            .iter()
            .map(|p| {
                if p.has_capture() {
                    // Leaves the slice (resolved below without successors).
                    return Vec::new();
                }
                p.unique_moves()
                    .iter()
                    .map(|m| ix.rank(&p.apply(m).normalized()) as usize)
                    .collect()
            })
            .collect();
        let mut res: Vec<Option<(Wld, u32)>> = vec![None; n];
        for i in 0..n {
            if pos[i].has_capture() {
                res[i] = Some((Wld::Win, 1));
            } else if succ[i].is_empty() {
                res[i] = Some((Wld::Loss, 0));
            }
        }
        for k in 1..200u32 {
            let prev = res.clone();
            for i in 0..n {
                if prev[i].is_some() {
                    continue;
                }
                let vals: Vec<Option<(Wld, u32)>> = succ[i].iter().map(|&j| prev[j]).collect();
                if vals.contains(&Some((Wld::Loss, k - 1))) {
                    res[i] = Some((Wld::Win, k));
                } else if vals.iter().all(|v| matches!(v, Some((Wld::Win, _))))
                    && vals.iter().any(|v| *v == Some((Wld::Win, k - 1)))
                {
                    res[i] = Some((Wld::Loss, k));
                }
            }
        }
        let mut longest = 0;
        for i in 0..n {
            let (v, ply) = res[i].map_or((Wld::Draw, u16::MAX), |(v, k)| (v, k as u16));
            assert_eq!(sv.values[i], v as u8, "{}", pos[i].to_fen());
            assert_eq!(plies[i], ply, "{}", pos[i].to_fen());
            assert_eq!(sv.captures[i], pos[i].has_capture());
            if ply != u16::MAX {
                longest = longest.max(u32::from(ply));
            }
        }
        assert_eq!(sv.longest, longest);
        // The published K v K figures (reference.md): 230 wins, 108 losses, 654 draws, 72 of
        // the wins immediate captures, longest win 11 plies.
        assert_eq!((sv.wins, sv.losses, sv.draws), (230, 108, 654));
        assert_eq!(sv.captures.count_ones(), 72);
        assert_eq!(sv.longest, 11);
        // The file form marks capture positions as don't care.
        let fv = sv.file_values();
        for i in sv.captures.iter_ones() {
            assert_eq!(fv[i], crate::table::DONT_CARE);
        }
    }
}
