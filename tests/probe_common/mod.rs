//! Shared helpers for the probe tests: a naive solver for tiny materials (fixpoint iteration
//! over forward moves, independent of the retrograde builder and of the probe code) and a
//! writer of its results as table files.
#![allow(dead_code)]

use checkers_egdb::format::{table_path, write_table, SliceIndex, TableMeta, DONT_CARE};
use checkers_egdb::{Color, Material, Position, Slice, Wld};
use std::collections::HashMap;
use std::path::Path;

/// Every legal position with 1..=`n` pieces, both sides to move, enumerated by brute force
/// (square by square, every piece kind, kept when `Position::validate` accepts it) so that it
/// does not depend on the slice index under test.
pub fn all_positions(n: u32) -> Vec<Position> {
    fn rec(start: u32, left: u32, p: Position, out: &mut Vec<Position>) {
        if p.piece_count() > 0 {
            out.push(p);
            out.push(Position {
                side: Color::White,
                ..p
            });
        }
        if left == 0 {
            return;
        }
        for s in start..32 {
            let b = 1u32 << s;
            for (black, king) in [(true, false), (true, true), (false, false), (false, true)] {
                let mut q = p;
                if black {
                    q.black |= b;
                } else {
                    q.white |= b;
                }
                if king {
                    q.kings |= b;
                }
                if q.validate().is_ok() {
                    rec(s + 1, left - 1, q, out);
                }
            }
        }
    }
    let mut v = Vec::new();
    let empty = Position {
        black: 0,
        white: 0,
        kings: 0,
        side: Color::Black,
    };
    rec(0, n, empty, &mut v);
    v
}

/// Naive game values of every position with at most `n` pieces (both sides to move), by
/// repeated forward sweeps: no move = loss; some successor lost = win; all successors won =
/// loss; what never resolves is a draw.
pub fn naive_values(n: u32) -> HashMap<Position, Wld> {
    let all = all_positions(n);
    let succ: Vec<Vec<Position>> = all.iter().map(|p| p.successors()).collect();
    let mut val: HashMap<Position, Wld> = HashMap::with_capacity(all.len());
    loop {
        let mut changed = false;
        for (p, ss) in all.iter().zip(&succ) {
            if val.contains_key(p) {
                continue;
            }
            let v = if ss.is_empty() {
                Some(Wld::Loss)
            } else if ss.iter().any(|s| val.get(s) == Some(&Wld::Loss)) {
                Some(Wld::Win)
            } else if ss.iter().all(|s| val.get(s) == Some(&Wld::Win)) {
                Some(Wld::Loss)
            } else {
                None
            };
            if let Some(v) = v {
                val.insert(*p, v);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for p in all {
        val.entry(p).or_insert(Wld::Draw);
    }
    val
}

/// Write the table of every slice with at most `n` pieces into `dir` from `values`
/// (capture positions stored as don't-care). Returns the number of files.
pub fn write_naive_tables(dir: &Path, n: u32, values: &HashMap<Position, Wld>) -> usize {
    let mut files = 0;
    for k in 1..=n {
        for m in Material::all_with_pieces(k) {
            for s in Slice::all_of(m) {
                write_slice(dir, &s, values);
                files += 1;
            }
        }
    }
    files
}

/// Write one slice's table from `values`.
pub fn write_slice(dir: &Path, s: &Slice, values: &HashMap<Position, Wld>) {
    let ix = SliceIndex::new(*s);
    let mut vals = Vec::with_capacity(ix.size() as usize);
    let mut n = [0u64; 3];
    for i in 0..ix.size() {
        let p = ix.unrank(i).unwrap();
        let v = values[&p];
        n[v as usize] += 1;
        vals.push(if p.has_capture() { DONT_CARE } else { v as u8 });
    }
    let meta = TableMeta {
        slice: *s,
        positions: ix.size(),
        wins: n[2],
        losses: n[0],
        draws: n[1],
        longest: 0,
    };
    write_table(&table_path(dir, s), &meta, &vals).unwrap();
}

/// The successor lists of an oracle reversed (compressed rows): the positions with a move to
/// position `j` are `list[start[j]..start[j + 1]]` (once per move path). The oracles use it
/// only to choose which positions to look at again in their next round: those with a move to
/// a position decided in the round before (a position none of whose successors changed would
/// compute the same thing again). Every value is still computed from the successors.
pub struct Predecessors {
    start: Vec<usize>,
    list: Vec<u32>,
}

impl Predecessors {
    /// Reverse `lists` (`lists[i]`: the moves of position `i`; `to` gives a move's successor).
    pub fn of<T>(lists: &[Vec<T>], to: impl Fn(&T) -> u32) -> Predecessors {
        let mut start = vec![0usize; lists.len() + 1];
        for l in lists {
            for x in l {
                start[to(x) as usize + 1] += 1;
            }
        }
        for j in 0..lists.len() {
            start[j + 1] += start[j];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; start[lists.len()]];
        for (i, l) in lists.iter().enumerate() {
            for x in l {
                let j = to(x) as usize;
                list[fill[j]] = i as u32;
                fill[j] += 1;
            }
        }
        Predecessors { start, list }
    }

    /// The positions to look at in the next round: the predecessors of `decided` for which
    /// `open` holds, each once, in ascending order.
    pub fn next_round(
        &self,
        decided: impl Iterator<Item = u32>,
        open: impl Fn(u32) -> bool,
    ) -> Vec<u32> {
        let mut v: Vec<u32> = decided
            .flat_map(|j| &self.list[self.start[j as usize]..self.start[j as usize + 1]])
            .copied()
            .filter(|&i| open(i))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}
