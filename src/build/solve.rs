//! Retrograde analysis of one slice together with its colour-mirror partner.
//!
//! A *unit* is a slice `S` (Black-to-move positions) and `S.partner()` (the White-to-move
//! positions of the same boards, stored colour-flipped as Black to move). Non-capture moves that
//! neither crown nor advance a leading man connect the two; every other move (capture, crowning,
//! leading-man advance) leads to a slice built earlier, whose value is looked up.
//!
//! Algorithm (level-synchronous retrograde analysis, in the style of Thompson 1986 and
//! Schaeffer et al. 2003):
//! 1. Initial pass, in parallel over each array: a position whose side to move must capture
//!    gets its value from the capture successors (looked up, captures resolved by search) and is
//!    resolved at ply 1; a position with no move is lost at ply 0; a quiet position wins at ply 1
//!    if a conversion move (crowning, leading-man advance) reaches a position lost for the
//!    opponent; otherwise it keeps a counter of its in-unit moves, and a flag if a conversion
//!    move reaches a draw (then it can no longer lose).
//! 2. Propagation: at ply k every position resolved at ply k generates its predecessors by
//!    un-moving (non-capture moves only); a loss makes each unresolved predecessor a win at
//!    ply k+1; a win decrements each unresolved predecessor's counter, and a counter reaching
//!    zero (without the draw flag) makes a loss at ply k+1. Updates are lock-free atomics, so the
//!    result does not depend on the thread count.
//! 3. Positions still unresolved are draws.
//!
//! Memory: one byte of state per position of the unit.

use crate::board::{down_a, down_b, Bits, Color, Position, Wld, NEIGHBOUR};
use crate::index::SliceIndex;
use crate::slice::{black_leading_rank, Slice};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};

// State byte encoding.
// 0..=127: unresolved, value = number of in-unit moves not yet known to lose for the mover.
// 128..=239: unresolved and cannot lose (a conversion reaches a draw), 128 + counter.
const NO_LOSS: u8 = 128;
const WIN: u8 = 240;
const LOSS: u8 = 241;
const DRAW: u8 = 242;
const CAP_WIN: u8 = 243;
const CAP_LOSS: u8 = 244;
const CAP_DRAW: u8 = 245;
/// Resolved at a ply of parity p, not yet propagated: WIN_T + p, LOSS_T + p, CAP_WIN_T + p ...
const WIN_T: u8 = 246;
const LOSS_T: u8 = 248;
const CAP_WIN_T: u8 = 250;
const CAP_LOSS_T: u8 = 252;

/// Result for one array (one slice) of a unit.
#[derive(Clone, Debug)]
pub struct SolvedSlice {
    /// The slice.
    pub slice: Slice,
    /// One byte per position: 0 loss, 1 draw, 2 win, 3 side to move has a capture ("don't
    /// care" in the file; its true value is counted in `wins`/`losses`/`draws`).
    pub values: Vec<u8>,
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

/// Progress callback: called with the number of positions just finished by the initial pass.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

struct Side {
    slice: Slice,
    index: SliceIndex,
    state: Vec<AtomicU8>,
    /// `dirty[t][c]`: chunk `c` (of `CHUNK` positions) may hold positions tagged with ply
    /// parity `t`, so the propagation scans only those chunks.
    dirty: [Vec<AtomicBool>; 2],
    longest: AtomicU32,
}

/// Positions per work unit of the parallel passes (and per dirty flag).
const CHUNK: usize = 1 << 12;

/// Solve slice `s` together with `s.partner()`.
///
/// `lookup` returns the exact value, for the side to move, of any position outside the unit
/// (either side to move; captures must be resolved by the callee); it is called only for
/// successors after a capture, a crowning or a leading-man advance.
///
/// Returns one [`SolvedSlice`] if `s` is its own partner, else two (`s` first).
///
/// # Errors
/// The first error `lookup` returns (e.g. a missing or corrupt dependency).
pub fn solve_unit<E: Send>(
    s: Slice,
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
    progress: Progress<'_>,
) -> Result<Vec<SolvedSlice>, E> {
    let p = s.partner();
    let mk = |slice: Slice| {
        let index = SliceIndex::new(slice);
        let n = index.size() as usize;
        let mut state = Vec::with_capacity(n);
        state.resize_with(n, || AtomicU8::new(0));
        let chunks = n.div_ceil(CHUNK);
        let flags = || (0..chunks).map(|_| AtomicBool::new(false)).collect();
        Side {
            slice,
            index,
            state,
            dirty: [flags(), flags()],
            longest: AtomicU32::new(0),
        }
    };
    let sides: Vec<Side> = if p == s {
        vec![mk(s)]
    } else {
        vec![mk(s), mk(p)]
    };
    let other = |x: usize| if sides.len() == 1 { 0 } else { 1 - x };

    let t0 = std::time::Instant::now();
    // 1. Initial pass.
    for (x, side) in sides.iter().enumerate() {
        let target = &sides[other(x)];
        let first_err: std::sync::Mutex<Option<(usize, E)>> = std::sync::Mutex::new(None);
        side.state
            .par_chunks(CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                let base = (c * CHUNK) as u64;
                let mut err = None;
                side.index.visit(base, base + chunk.len() as u64, |i, pos| {
                    if err.is_some() {
                        return;
                    }
                    match initial_state(&pos, target.slice, lookup) {
                        Ok(v) => {
                            if let Some(t) = tag_parity(v) {
                                side.dirty[t][c].store(true, Ordering::Relaxed);
                            }
                            chunk[(i - base) as usize].store(v, Ordering::Relaxed)
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
        if let Some((_, e)) = first_err.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
    }

    let t1 = std::time::Instant::now();
    // 2. Propagation, one ply at a time.
    let mut ply: u32 = 0;
    loop {
        let cur = (ply & 1) as u8;
        let next = cur ^ 1;
        let mut any = false;
        for (x, side) in sides.iter().enumerate() {
            let preds = &sides[other(x)];
            let found = side
                .state
                .par_chunks(CHUNK)
                .enumerate()
                .map(|(c, chunk)| {
                    if !side.dirty[cur as usize][c].swap(false, Ordering::Relaxed) {
                        return false;
                    }
                    let tagged = |v: u8| -> Option<(bool, u8)> {
                        match v {
                            _ if v == WIN_T + cur => Some((true, WIN)),
                            _ if v == CAP_WIN_T + cur => Some((true, CAP_WIN)),
                            _ if v == LOSS_T + cur => Some((false, LOSS)),
                            _ if v == CAP_LOSS_T + cur => Some((false, CAP_LOSS)),
                            _ => None,
                        }
                    };
                    // Predecessor updates are batched: each index is prefetched when found
                    // and applied when the batch is full, so the cache misses of the random
                    // accesses overlap instead of stalling one after another.
                    let mut batch = UpdateBatch::new(preds, next);
                    let mut process = |cell: &AtomicU8, q: &Position, is_win: bool, fin: u8| {
                        for_each_predecessor(q, preds, |k| batch.push(k, is_win));
                        cell.store(fin, Ordering::Relaxed);
                    };
                    let n_tagged = chunk
                        .iter()
                        .filter(|c| tagged(c.load(Ordering::Relaxed)).is_some())
                        .count();
                    let base = (c * CHUNK) as u64;
                    if n_tagged * 8 >= chunk.len() {
                        // Dense: walk the chunk in index order (cheap per position).
                        side.index.visit(base, base + chunk.len() as u64, |i, q| {
                            let cell = &chunk[(i - base) as usize];
                            if let Some((is_win, fin)) = tagged(cell.load(Ordering::Relaxed)) {
                                process(cell, &q, is_win, fin);
                            }
                        });
                    } else {
                        for (j, cell) in chunk.iter().enumerate() {
                            if let Some((is_win, fin)) = tagged(cell.load(Ordering::Relaxed)) {
                                let q = side
                                    .index
                                    .unrank(base + j as u64)
                                    .expect("index below size unranks");
                                process(cell, &q, is_win, fin);
                            }
                        }
                    }
                    drop(process);
                    batch.flush();
                    n_tagged > 0
                })
                .reduce(|| false, |a, b| a || b);
            if found {
                side.longest.fetch_max(ply, Ordering::Relaxed);
                any = true;
            }
        }
        // Ply 0 may be empty while the initial pass left ply-1 positions to propagate; after
        // that an empty ply means nothing new was created.
        if !any && ply >= 1 {
            break;
        }
        ply += 1;
    }

    let t2 = std::time::Instant::now();
    let (initial_seconds, propagate_seconds) = ((t1 - t0).as_secs_f64(), (t2 - t1).as_secs_f64());
    // 3. Collect.
    Ok(sides
        .into_iter()
        .map(|side| {
            let (mut w, mut l, mut d) = (0u64, 0u64, 0u64);
            let values: Vec<u8> = side
                .state
                .into_iter()
                .map(|c| {
                    let (val, out) = match c.into_inner() {
                        WIN => (&mut w, 2),
                        LOSS => (&mut l, 0),
                        CAP_WIN => (&mut w, 3),
                        CAP_LOSS => (&mut l, 3),
                        CAP_DRAW => (&mut d, 3),
                        _ => (&mut d, 1),
                    };
                    *val += 1;
                    out
                })
                .collect();
            SolvedSlice {
                slice: side.slice,
                values,
                wins: w,
                losses: l,
                draws: d,
                longest: side.longest.into_inner(),
                initial_seconds,
                propagate_seconds,
                plies: ply,
            }
        })
        .collect())
}

/// Initial state byte of Black-to-move position `pos`; `target` is the slice of the in-unit
/// successors (the partner, as Black-to-move boards).
fn initial_state<E>(
    pos: &Position,
    target: Slice,
    lookup: &(dyn Fn(&Position) -> Result<Wld, E> + Sync),
) -> Result<u8, E> {
    debug_assert_eq!(pos.side, Color::Black);
    if pos.has_capture() {
        // Captures lead to fewer pieces; the value is exact now.
        let v = lookup(pos)?;
        return Ok(match v {
            Wld::Win => CAP_WIN_T + 1,
            Wld::Loss => CAP_LOSS_T + 1,
            Wld::Draw => CAP_DRAW,
        });
    }
    let rank = target.white_rank; // Black's leading rank seen from the partner's frame.
    let kings = pos.kings_of(Color::Black).count_ones();
    let mut moves = 0u32;
    let mut count = 0u8;
    let mut no_loss = false;
    let mut win = false;
    let mut err = None;
    pos.for_each_successor(|s| {
        moves += 1;
        if win || err.is_some() {
            return;
        }
        // A quiet move stays in the unit unless it crowns or advances the leading man.
        let in_unit = s.kings_of(Color::Black).count_ones() == kings
            && black_leading_rank(s.men(Color::Black)) == rank;
        if in_unit {
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
        return Ok(WIN_T + 1);
    }
    if moves == 0 {
        return Ok(LOSS_T);
    }
    Ok(match (count, no_loss) {
        (0, false) => LOSS_T + 1,
        (0, true) => DRAW,
        (c, false) => c,
        (c, true) => NO_LOSS + c,
    })
}

/// Call `f(index)` for every predecessor, in `preds`' slice, of Black-to-move position `q`
/// (the predecessors are the positions of `preds` with a non-capture, non-crowning move that
/// keeps the leading rank and leads to `q`). Capture positions among them are included; their
/// state is final, so the callers' updates skip them.
fn for_each_predecessor(q: &Position, preds: &Side, mut f: impl FnMut(u64)) {
    // In q's frame White just moved; un-move in the flipped frame where Black just moved.
    let r = q.flip();
    let empty = r.empty();
    let black_men = r.men(Color::Black);
    let black_kings = r.kings_of(Color::Black);
    let want_rank = preds.slice.black_rank;
    if black_kings != 0 {
        // King un-moves keep the men: rank the men once.
        let men = r.men(Color::Black) | r.men(Color::White);
        let base = preds.index.men_base(black_men, r.men(Color::White));
        let white_kings = r.kings_of(Color::White);
        for t in Bits(black_kings) {
            for d in 0..4 {
                let f_sq = NEIGHBOUR[d][t as usize];
                if f_sq == 0xFF || empty & (1 << f_sq) == 0 {
                    continue;
                }
                let bk = black_kings ^ (1 << t) ^ (1 << f_sq);
                f(base + preds.index.king_offset(bk, white_kings, men));
            }
        }
    }
    for t in Bits(black_men) {
        let tb = 1u32 << t;
        for from in [down_a(tb), down_b(tb)] {
            if from & empty == 0 {
                continue;
            }
            let men = (black_men ^ tb) | from;
            if black_leading_rank(men) != want_rank {
                continue;
            }
            let p = Position {
                black: (r.black ^ tb) | from,
                white: r.white,
                kings: r.kings,
                side: Color::Black,
            };
            f(preds.index.rank(&p));
        }
    }
}

/// Pending predecessor updates of one worker (see the propagation loop).
struct UpdateBatch<'a> {
    side: &'a Side,
    tag: u8,
    len: usize,
    items: [(u64, bool); BATCH],
}

const BATCH: usize = 64;

impl<'a> UpdateBatch<'a> {
    fn new(side: &'a Side, tag: u8) -> Self {
        UpdateBatch {
            side,
            tag,
            len: 0,
            items: [(0, false); BATCH],
        }
    }

    /// Queue "the successor of position `k` is a win (true) / loss (false) for its mover".
    #[inline]
    fn push(&mut self, k: u64, succ_is_win: bool) {
        prefetch(&self.side.state[k as usize]);
        if self.len == BATCH {
            self.flush();
        }
        self.items[self.len] = (k, succ_is_win);
        self.len += 1;
    }

    fn flush(&mut self) {
        for &(k, is_win) in &self.items[..self.len] {
            let cell = &self.side.state[k as usize];
            let tagged = if is_win {
                count_down(cell, self.tag)
            } else {
                mark_win(cell, self.tag)
            };
            if tagged {
                self.side.dirty[self.tag as usize][k as usize / CHUNK]
                    .store(true, Ordering::Relaxed);
            }
        }
        self.len = 0;
    }
}

#[inline(always)]
fn prefetch(p: &AtomicU8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; any address is allowed.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            p as *const AtomicU8 as *const i8,
            std::arch::x86_64::_MM_HINT_T0,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Ply parity of a tagged (resolved, not yet propagated) state, `None` for other states.
#[inline(always)]
fn tag_parity(v: u8) -> Option<usize> {
    (v >= WIN_T).then_some(((v - WIN_T) & 1) as usize)
}

/// Make an unresolved position a win at the ply of parity `tag`; true if it changed.
#[inline]
fn mark_win(cell: &AtomicU8, tag: u8) -> bool {
    cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
        (v < WIN).then_some(WIN_T + tag)
    })
    .is_ok()
}

/// One more move of an unresolved position is refuted; true if that made it a loss (tagged).
#[inline]
fn count_down(cell: &AtomicU8, tag: u8) -> bool {
    cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
        if v < NO_LOSS {
            Some(if v <= 1 { LOSS_T + tag } else { v - 1 })
        } else if v < WIN {
            Some(if v <= NO_LOSS + 1 { DRAW } else { v - 1 })
        } else {
            None
        }
    })
    .is_ok_and(|old| old < NO_LOSS && old <= 1)
}

/// Value of a state-byte array entry as written to files (used by tests).
pub fn value_of(byte: u8) -> Option<Wld> {
    Wld::from_u8(byte)
}
