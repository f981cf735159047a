//! A slow, simple distance-to-conversion (DTC) oracle for tiny materials, written apart from the
//! builder: no slices, no index, no un-moves, no tables. It enumerates every position by brute
//! force (`probe_common::all_positions`), takes successors from the path move generator
//! (`Position::moves` + `apply`), and computes first the game values (forward fixpoint) and then
//! the DTC of every won or lost position level by level, straight from the definition:
//!
//! * conversion = any capture or any move of a man (crowning included);
//! * d(m) = 1 for a conversion, else 1 + DTC(position after m);
//! * win: DTC = min d(m) over the moves whose result is lost for the opponent;
//! * loss: DTC = 0 with no legal move, else max d(m) over all moves;
//! * draw: no DTC.
#![allow(dead_code)]

use super::probe_common::{all_positions, Predecessors};
use checkers_egdb::{Position, Wld};
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

/// Value and DTC (plies; `None` for draws) of every position with at most `n` pieces, both sides
/// to move.
pub struct Oracle {
    /// Every position, in enumeration order.
    pub positions: Vec<Position>,
    /// Position -> index into `positions`.
    pub id: HashMap<Position, u32>,
    /// Game value of each position (side to move's view).
    pub value: Vec<Wld>,
    /// DTC in plies of each position (`None` for a draw).
    pub dtc: Vec<Option<u32>>,
}

impl Oracle {
    /// Value and DTC of `p` (which must have at most `n` pieces).
    pub fn get(&self, p: &Position) -> (Wld, Option<u32>) {
        let i = self.id[p] as usize;
        (self.value[i], self.dtc[i])
    }
}

/// One move's result: successor index and whether the move is a conversion.
#[derive(Clone, Copy)]
struct Edge {
    to: u32,
    conversion: bool,
}

/// Solve every position with at most `n` pieces (n = 4: 14 million positions, ~1 GB, tens of
/// seconds on 2 cores).
pub fn solve(n: u32) -> Oracle {
    let positions = all_positions(n);
    let id: HashMap<Position, u32> = positions
        .iter()
        .enumerate()
        .map(|(i, p)| (*p, i as u32))
        .collect();
    // Successor lists (paths that reach the same position are kept: they do not change min/max).
    let edges: Vec<Vec<Edge>> = positions
        .par_iter()
        .map(|p| {
            p.moves()
                .iter()
                .map(|m| {
                    let is_man = p.kings & (1u32 << (m.from - 1)) == 0;
                    Edge {
                        to: id[&p.apply(m)],
                        conversion: m.is_capture() || is_man,
                    }
                })
                .collect()
        })
        .collect();

    // Game values: forward fixpoint. Every round evaluates from the values of the round
    // before; after the first, only the predecessors of what the last round decided.
    let preds = Predecessors::of(&edges, |x| x.to);
    let mut value: Vec<Option<Wld>> = vec![None; positions.len()];
    let mut todo: Vec<u32> = (0..positions.len() as u32).collect();
    loop {
        let found: Vec<(u32, Wld)> = todo
            .par_iter()
            .filter_map(|&i| {
                if value[i as usize].is_some() {
                    return None;
                }
                let e = &edges[i as usize];
                let v = if e.is_empty() {
                    Wld::Loss
                } else if e.iter().any(|x| value[x.to as usize] == Some(Wld::Loss)) {
                    Wld::Win
                } else if e.iter().all(|x| value[x.to as usize] == Some(Wld::Win)) {
                    Wld::Loss
                } else {
                    return None;
                };
                Some((i, v))
            })
            .collect();
        if found.is_empty() {
            break;
        }
        for &(i, v) in &found {
            value[i as usize] = Some(v);
        }
        todo = preds.next_round(found.iter().map(|f| f.0), |i| value[i as usize].is_none());
    }
    let value: Vec<Wld> = value.into_iter().map(|v| v.unwrap_or(Wld::Draw)).collect();

    // DTC, level by level: at level k assign exactly the positions whose DTC is k, using only
    // the DTCs assigned at earlier levels. Level 1 looks at every position; level k > 1 only
    // at the predecessors of the positions assigned at level k - 1 (a win of DTC k has a
    // lost successor of DTC k - 1; a loss of DTC k > 1 a successor of DTC k - 1).
    let mut dtc: Vec<Option<u32>> = vec![None; positions.len()];
    for (i, e) in edges.iter().enumerate() {
        if e.is_empty() {
            dtc[i] = Some(0);
        }
    }
    let mut k = 1u32;
    let mut todo: Vec<u32> = (0..positions.len() as u32).collect();
    loop {
        let d = |x: &Edge, dtc: &[Option<u32>]| -> Option<u32> {
            if x.conversion {
                Some(1)
            } else {
                dtc[x.to as usize].filter(|&v| v < k).map(|v| v + 1)
            }
        };
        let found: Vec<(usize, u32)> = todo
            .par_iter()
            .filter_map(|&i| {
                let i = i as usize;
                if dtc[i].is_some() {
                    return None;
                }
                let e = &edges[i];
                match value[i] {
                    Wld::Win => e
                        .iter()
                        .filter(|x| value[x.to as usize] == Wld::Loss)
                        .any(|x| d(x, &dtc) == Some(k))
                        .then_some((i, k)),
                    Wld::Loss => {
                        let ds: Option<Vec<u32>> = e.iter().map(|x| d(x, &dtc)).collect();
                        let ds = ds?;
                        let m = *ds.iter().max().expect("a loss with moves");
                        assert_eq!(m, k, "a loss resolvable earlier was missed");
                        Some((i, k))
                    }
                    Wld::Draw => None,
                }
            })
            .collect();
        if found.is_empty() && k >= 2 {
            break;
        }
        for &(i, v) in &found {
            dtc[i] = Some(v);
        }
        todo = preds.next_round(found.iter().map(|f| f.0 as u32), |i| {
            dtc[i as usize].is_none() && value[i as usize] != Wld::Draw
        });
        k += 1;
    }
    for (i, v) in value.iter().enumerate() {
        assert_eq!(
            dtc[i].is_some(),
            *v != Wld::Draw,
            "oracle: every win and loss gets a DTC, draws none ({})",
            positions[i].to_fen()
        );
    }
    Oracle {
        positions,
        id,
        value,
        dtc,
    }
}
