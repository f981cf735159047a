//! The depth-to-win (DTW) pass (issue 33): `egdb build --dtw`, one `<slice>.dtw` file per
//! slice ([`crate::table::dtw`]), computed unit by unit in build order once the unit's WLD
//! files exist.
//!
//! The metric, for a position p with value V for the side to move, in plies: V = win: the
//! minimum of 1 + DTW(p') over the moves to positions p' lost for the opponent; V = loss: 0
//! when the side to move has no legal move, else the maximum of 1 + DTW(p') over all moves;
//! draws: none. Every move counts (captures and man moves included).
//!
//! Within a unit (a slice and its colour-flipped partner) the moves that stay in the unit form
//! a graph with cycles; the moves that leave it (captures, crownings, leading-man advances)
//! reach slices whose DTW is known (built earlier). The pass generates every position's moves
//! forward, seeds each position with what its moves out of the unit give (a win: the smallest
//! 1 + DTW over the lost successors outside; a loss: the largest 1 + DTW over the successors
//! outside), and then settles positions in increasing order of depth with a bucket queue over
//! the reversed in-unit edges: a win is settled at the first (smallest) candidate depth that
//! reaches it, a loss once all its in-unit successors are settled, at the largest. Depths are
//! unique, so the files are the same whatever the thread count.

use super::{BuildError, BuildSummary, DecodedTables, Unit};
use crate::board::{Position, Wld};
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
use std::sync::Arc;
use std::time::Instant;

/// "No depth" (a draw, or not settled yet).
pub const DTW_NONE: u32 = u32::MAX;

/// The depth to win of every position of one slice.
#[derive(Clone, Debug)]
pub struct DtwSlice {
    /// The slice.
    pub slice: Slice,
    /// DTW in plies of every position in index order; [`DTW_NONE`] for draws.
    pub dtw: Vec<u32>,
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

/// Depths of slices built earlier, as the pass reads them (index, depths in index order).
pub type DtwStore = HashMap<Slice, Arc<(SliceIndex, Vec<u32>)>>;

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

/// Per position of the unit: its seed depth and its in-unit successors to wait for.
struct Forward {
    /// Win: the smallest 1 + DTW over lost successors outside the unit ([`DTW_NONE`]: none);
    /// loss: the largest 1 + DTW over successors outside (0: none).
    seed: u32,
    /// In-unit successors (unit-global indices) that count: for a win its lost successors,
    /// for a loss all.
    edges: Vec<u32>,
}

/// Solve the depth to win of every position of `unit`. `value(p)`: the exact value of any
/// Black-to-move position (the unit's own and those outside); `outside`: the depths of every
/// slice in [`dtw_reads`].
///
/// # Errors
/// [`BuildError::Dependency`] (a failed lookup), [`BuildError::Options`] (a slice outside the
/// unit without depths), [`BuildError::Inconsistent`] (a won or lost position left without a
/// depth, or a depth of the wrong parity: a bug or a damaged table).
pub fn solve_dtw_unit(
    unit: &Unit,
    value: &(dyn Fn(&Position) -> Result<Wld, ProbeError> + Sync),
    outside: &DtwStore,
) -> Result<Vec<DtwSlice>, BuildError> {
    let slices = &unit.slices;
    let ixs: Vec<SliceIndex> = slices.iter().map(|s| SliceIndex::new(*s)).collect();
    let mut offsets = vec![0u64];
    for ix in &ixs {
        offsets.push(offsets.last().copied().unwrap_or(0) + ix.size());
    }
    let total = *offsets.last().unwrap_or(&0);
    if total >= u64::from(u32::MAX) {
        return Err(BuildError::Options(format!(
            "unit {:?}: too many positions for the depth-to-win pass",
            slices
        )));
    }
    let locate = |g: u64| -> (usize, u64) {
        let k = usize::from(g >= offsets[1]);
        (k, g - offsets[k])
    };
    let dep = |building: Slice| {
        move |e: ProbeError| BuildError::Dependency {
            building,
            source: e,
        }
    };
    // Values of the unit's positions (capture positions resolved).
    let values: Vec<u8> = (0..total)
        .into_par_iter()
        .map(|g| {
            let (k, i) = locate(g);
            let p = ixs[k].unrank(i).expect("index below size unranks");
            value(&p).map(|v| v as u8).map_err(dep(slices[k]))
        })
        .collect::<Result<_, _>>()?;
    let win = Wld::Win as u8;
    let loss = Wld::Loss as u8;
    // Forward pass: seeds from the moves out of the unit, edges of the moves within it.
    let forward: Vec<Forward> = (0..total)
        .into_par_iter()
        .map(|g| -> Result<Forward, BuildError> {
            let v = values[g as usize];
            if v != win && v != loss {
                return Ok(Forward {
                    seed: DTW_NONE,
                    edges: Vec::new(),
                });
            }
            let (k, i) = locate(g);
            let p = ixs[k].unrank(i).expect("index below size unranks");
            let mut succ = Vec::with_capacity(16);
            English.for_each_successor(&p, |q| succ.push(q));
            let mut seed = if v == win { DTW_NONE } else { 0 };
            let mut edges = Vec::new();
            for q in succ {
                let n = q.normalized();
                let s = Slice::of(&n);
                if let Some(j) = slices.iter().position(|x| *x == s) {
                    let h = (offsets[j] + ixs[j].rank(&n)) as u32;
                    if v == loss || values[h as usize] == loss {
                        edges.push(h);
                    }
                    continue;
                }
                // Outside the unit: its value and depth (the side to move of q's view).
                let (qv, qd) = if n.black == 0 {
                    (Wld::Loss, 0)
                } else {
                    let qv = value(&n).map_err(dep(slices[k]))?;
                    let store = outside.get(&s).ok_or_else(|| {
                        BuildError::Options(format!(
                            "cannot build the depth-to-win file of {}: no depths of {s} (build \
                             depth-to-win files in build order: egdb build --dtw --pieces N)",
                            slices[k]
                        ))
                    })?;
                    (qv, store.1[store.0.rank(&n) as usize])
                };
                if v == win {
                    if qv == Wld::Loss {
                        seed = seed.min(qd.saturating_add(1));
                    }
                } else {
                    seed = seed.max(qd.saturating_add(1));
                }
            }
            Ok(Forward { seed, edges })
        })
        .collect::<Result<_, _>>()?;
    // Reversed in-unit edges (CSR), in index order (deterministic).
    let n = total as usize;
    let mut start = vec![0u32; n + 1];
    for f in &forward {
        for &h in &f.edges {
            start[h as usize + 1] += 1;
        }
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut preds = vec![0u32; start[n] as usize];
    for (g, f) in forward.iter().enumerate() {
        for &h in &f.edges {
            preds[fill[h as usize] as usize] = g as u32;
            fill[h as usize] += 1;
        }
    }
    drop(fill);
    // Bucket queue by depth.
    let mut dist = vec![DTW_NONE; n];
    let mut left: Vec<u32> = forward.iter().map(|f| f.edges.len() as u32).collect();
    let mut best: Vec<u32> = forward.iter().map(|f| f.seed).collect();
    drop(forward);
    let mut buckets: Vec<Vec<u32>> = Vec::new();
    let push = |buckets: &mut Vec<Vec<u32>>, d: u32, g: u32| {
        let d = d as usize;
        if buckets.len() <= d {
            buckets.resize_with(d + 1, Vec::new);
        }
        buckets[d].push(g);
    };
    for g in 0..n {
        let v = values[g];
        if (v == win && best[g] != DTW_NONE) || (v == loss && left[g] == 0) {
            push(&mut buckets, best[g], g as u32);
        }
    }
    let mut d = 0usize;
    while d < buckets.len() {
        let bucket = std::mem::take(&mut buckets[d]);
        for g in bucket {
            let g = g as usize;
            if dist[g] != DTW_NONE {
                continue;
            }
            dist[g] = d as u32;
            let next = (d as u32).saturating_add(1);
            for &r in &preds[start[g] as usize..start[g + 1] as usize] {
                let r = r as usize;
                if dist[r] != DTW_NONE {
                    continue;
                }
                if values[r] == win {
                    push(&mut buckets, next, r as u32);
                } else {
                    left[r] -= 1;
                    best[r] = best[r].max(next);
                    if left[r] == 0 {
                        push(&mut buckets, best[r], r as u32);
                    }
                }
            }
        }
        d += 1;
    }
    // Every won and lost position is settled, wins at odd depths, losses at even.
    let mut out = Vec::with_capacity(slices.len());
    for (k, s) in slices.iter().enumerate() {
        let (a, b) = (offsets[k] as usize, offsets[k + 1] as usize);
        let mut ds = DtwSlice {
            slice: *s,
            dtw: dist[a..b].to_vec(),
            wins: 0,
            losses: 0,
            longest: 0,
            longest_win: None,
            longest_loss: None,
        };
        for (i, (&x, &v)) in ds.dtw.iter().zip(&values[a..b]).enumerate() {
            let vw = Wld::from_u8(v).unwrap_or(Wld::Draw);
            let bad = match vw {
                Wld::Win => x == DTW_NONE || x % 2 == 0,
                Wld::Loss => x == DTW_NONE || x % 2 == 1,
                Wld::Draw => x != DTW_NONE,
            };
            if bad {
                return Err(BuildError::Inconsistent {
                    slice: *s,
                    index: i as u64,
                    wld: vw,
                    dtc_pass: if x == DTW_NONE {
                        Wld::Draw
                    } else if x % 2 == 1 {
                        Wld::Win
                    } else {
                        Wld::Loss
                    },
                });
            }
            let slot = match vw {
                Wld::Win => {
                    ds.wins += 1;
                    &mut ds.longest_win
                }
                Wld::Loss => {
                    ds.losses += 1;
                    &mut ds.longest_loss
                }
                Wld::Draw => continue,
            };
            if slot.is_none_or(|(_, m)| x > m) {
                *slot = Some((i as u64, x));
            }
            ds.longest = ds.longest.max(x);
        }
        out.push(ds);
    }
    Ok(out)
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
    let vals: Vec<u32> = d
        .dtw
        .iter()
        .map(|&x| if x == DTW_NONE { 0 } else { x })
        .collect();
    write_dtw(
        &dtw_path(dir, &d.slice),
        &meta,
        &vals,
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

/// Refuses, before anything is solved, a depth-to-win pass whose largest unit of `todo` needs
/// more than `memory` (default [`crate::memory::default_budget`]) at
/// [`DTW_BYTES_PER_POSITION`] per position.
///
/// # Errors
/// [`BuildError::Options`] naming the unit, its size, the memory it needs and the budget.
pub(crate) fn check_dtw_memory(todo: &[&Unit], memory: Option<u64>) -> Result<(), BuildError> {
    // The pass holds every in-unit edge of a unit in memory (about DTW_BYTES_PER_POSITION per
    // position): a unit that does not fit the budget is refused before anything is solved.
    let budget = memory.unwrap_or_else(crate::memory::default_budget);
    if let Some(u) = todo
        .iter()
        .find(|u| u.sizes.iter().sum::<u64>() * DTW_BYTES_PER_POSITION > budget)
    {
        let n: u64 = u.sizes.iter().sum();
        return Err(BuildError::Options(format!(
            "the depth-to-win pass of unit {} ({n} positions) needs about {} of memory, more \
             than the budget of {} (--memory); the pass handles units of up to {} positions \
             at this budget (nothing was written)",
            super::names(&u.slices),
            crate::memory::format_size(n * DTW_BYTES_PER_POSITION),
            crate::memory::format_size(budget),
            budget / DTW_BYTES_PER_POSITION
        )));
    }
    Ok(())
}

/// Memory of the depth-to-win pass per position of the unit solved, in bytes (an
/// estimate: the forward record with its edge list, about 8 in-unit edges of 4 bytes, the
/// counters, the bucket queue and the output).
pub const DTW_BYTES_PER_POSITION: u64 = 112;

/// The depth-to-win phase of a build: every unit of `units` (in build order) whose `.dtw`
/// files are not complete gets them, its WLD values read from the files in `dir` (which
/// must exist: the WLD phase runs first), the depths of earlier slices from their `.dtw`
/// files or from this run. Returns the counts in [`BuildSummary`]'s `dtw_*` fields.
///
/// # Errors
/// As [`solve_dtw_unit`]; [`BuildError::Options`] naming a `.dtw` file the pass reads that is
/// missing or damaged; [`BuildError::Write`]; [`BuildError::Options`] before anything is
/// solved when a unit needs more than `memory` (default [`crate::memory::default_budget`]) at
/// [`DTW_BYTES_PER_POSITION`].
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
    // The last unit of `todo` reading each slice: depths and values are dropped after it.
    let mut last: HashMap<Slice, usize> = HashMap::new();
    for (i, u) in todo.iter().enumerate() {
        for s in dtw_reads(u) {
            last.insert(s, i);
        }
    }
    let mut deps = DecodedTables::new(dir);
    let mut store: DtwStore = HashMap::new();
    for (i, u) in todo.iter().enumerate() {
        for s in dtw_reads(u) {
            if store.contains_key(&s) {
                continue;
            }
            let path = dtw_path(dir, &s);
            let vals = open_dtw(&path, crate::rules::english::ID)
                .and_then(|f| {
                    f.verify_checksum()?;
                    f.decode_all()
                })
                .map_err(|e| {
                    BuildError::Options(format!(
                        "cannot build the depth-to-win files of {}: {e} (the depths of {s} are \
                         read; build depth-to-win files in order: egdb build --dtw --pieces {})",
                        super::names(&u.slices),
                        u.pieces
                    ))
                })?;
            store.insert(s, Arc::new((SliceIndex::new(s), vals)));
        }
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
                let vals: Vec<u32> = d
                    .dtw
                    .iter()
                    .map(|&x| if x == DTW_NONE { 0 } else { x })
                    .collect();
                store.insert(d.slice, Arc::new((SliceIndex::new(d.slice), vals)));
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
