//! A slow, simple depth-to-win (DTW) oracle for tiny materials, written apart from the builder
//! (issue 33): no slices, no index, no un-moves, no tables, no bucket queue. It enumerates every
//! position by brute force (`probe_common::all_positions`), takes successors from the path move
//! generator (`Position::moves` + `apply`), computes the game values by a forward fixpoint, and
//! then the DTW of every won or lost position by forward iteration straight from the definition:
//!
//! * win: DTW = min of 1 + DTW(p') over the moves to positions p' lost for the opponent;
//! * loss: DTW = 0 with no legal move, else max of 1 + DTW(p') over all moves;
//! * draw: none. Every move counts (captures and man moves too).
//!
//! Iteration t assigns a position exactly when its definition can be evaluated from the depths
//! assigned before: a loss once every successor has a depth, a win at the first iteration one of
//! its lost successors has one (depths assigned at iteration t are exactly t, by induction).
#![allow(dead_code)]

use super::probe_common::{all_positions, Predecessors};
use checkers_egdb::{Position, Wld};
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

/// Value and DTW (plies; `None` for draws) of every position with at most `n` pieces.
pub struct DtwOracle {
    /// Every position, in enumeration order.
    pub positions: Vec<Position>,
    /// Position -> index into `positions`.
    pub id: HashMap<Position, u32>,
    /// Game value of each position (side to move's view).
    pub value: Vec<Wld>,
    /// DTW in plies of each position (`None` for a draw).
    pub dtw: Vec<Option<u32>>,
    /// Successor indices of each position (one per move path).
    pub succ: Vec<Vec<u32>>,
}

impl DtwOracle {
    /// Value and DTW of `p`.
    pub fn get(&self, p: &Position) -> (Wld, Option<u32>) {
        let i = self.id[p] as usize;
        (self.value[i], self.dtw[i])
    }
}

/// Solve every position with at most `n` pieces.
pub fn solve(n: u32) -> DtwOracle {
    let positions = all_positions(n);
    let id: HashMap<Position, u32> = positions
        .iter()
        .enumerate()
        .map(|(i, p)| (*p, i as u32))
        .collect();
    let succ: Vec<Vec<u32>> = positions
        .par_iter()
        .map(|p| p.moves().iter().map(|m| id[&p.apply(m)]).collect())
        .collect();
    // Values: forward fixpoint. Every round evaluates from the values of the round before;
    // after the first, only the predecessors of what the last round decided (the successor
    // lists reversed choose what to look at again, never a value).
    let preds = Predecessors::of(&succ, |&j| j);
    let mut value: Vec<Option<Wld>> = vec![None; positions.len()];
    let mut todo: Vec<u32> = (0..positions.len() as u32).collect();
    loop {
        let found: Vec<(u32, Wld)> = todo
            .par_iter()
            .filter_map(|&i| {
                if value[i as usize].is_some() {
                    return None;
                }
                let s = &succ[i as usize];
                let v = if s.iter().any(|&j| value[j as usize] == Some(Wld::Loss)) {
                    Wld::Win
                } else if s.iter().all(|&j| value[j as usize] == Some(Wld::Win)) {
                    Wld::Loss // no move at all included
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
    // DTW by forward iteration: iteration 0 looks at every position, iteration t > 0 only at
    // the predecessors of the positions assigned at iteration t - 1 (whatever gets its depth
    // at t has a successor of depth t - 1).
    let mut dtw: Vec<Option<u32>> = vec![None; positions.len()];
    let mut t = 0u32;
    let mut todo: Vec<u32> = (0..positions.len() as u32).collect();
    loop {
        let found: Vec<(usize, u32)> = todo
            .par_iter()
            .filter_map(|&i| {
                let i = i as usize;
                if dtw[i].is_some() {
                    return None;
                }
                let s = &succ[i];
                let d = match value[i] {
                    Wld::Draw => return None,
                    Wld::Win => s
                        .iter()
                        .filter(|&&j| value[j as usize] == Wld::Loss)
                        .filter_map(|&j| dtw[j as usize])
                        .min()
                        .map(|x| x + 1)?,
                    Wld::Loss => {
                        let ds: Option<Vec<u32>> = s.iter().map(|&j| dtw[j as usize]).collect();
                        ds?.iter().max().map_or(0, |x| x + 1)
                    }
                };
                Some((i, d))
            })
            .collect();
        if found.is_empty() {
            break;
        }
        for &(i, d) in &found {
            assert_eq!(d, t, "oracle: depths found at iteration t are t");
            dtw[i] = Some(d);
        }
        todo = preds.next_round(found.iter().map(|f| f.0 as u32), |i| {
            dtw[i as usize].is_none() && value[i as usize] != Wld::Draw
        });
        t += 1;
    }
    for (i, v) in value.iter().enumerate() {
        assert_eq!(
            dtw[i].is_some(),
            *v != Wld::Draw,
            "oracle: every win and loss gets a DTW, draws none ({})",
            positions[i].to_fen()
        );
    }
    DtwOracle {
        positions,
        id,
        value,
        dtw,
        succ,
    }
}
