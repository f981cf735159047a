//! The retrograde solver against an independent naive solver: every position with at most 3
//! pieces (both sides to move), enumerated by brute force without the index, is solved by plain
//! forward value iteration to a fixpoint; the builder's solver (run unit by unit in memory) must
//! give the same value for every one.
use checkers_egdb::build::{build_order, solve::solve_unit};
use checkers_egdb::probe::{resolve, ProbeError, RawSource};
use checkers_egdb::{Color, Position, Slice, SliceIndex, Wld};
use std::collections::HashMap;
use std::sync::RwLock;

/// In-memory store of solved slices.
#[derive(Default)]
struct Mem(RwLock<HashMap<Slice, Vec<u8>>>);

impl RawSource for Mem {
    fn raw(&self, slice: &Slice, index: u64) -> Result<Wld, ProbeError> {
        let g = self.0.read().unwrap();
        let v = g.get(slice).ok_or(ProbeError::MissingSlice {
            slice: slice.to_string(),
        })?;
        Ok(Wld::from_u8(v[index as usize]).expect("quiet positions hold 0..=2"))
    }
}

/// All legal positions with 1..=max pieces, both sides to move, by brute force.
fn all_positions(max: usize) -> Vec<Position> {
    let mut out = Vec::new();
    // piece kinds: 0 black man, 1 black king, 2 white man, 3 white king
    fn rec(start: u32, left: usize, p: Position, out: &mut Vec<Position>) {
        if p.piece_count() > 0 {
            for side in [Color::Black, Color::White] {
                out.push(Position { side, ..p });
            }
        }
        if left == 0 {
            return;
        }
        for s in start..32 {
            let b = 1u32 << s;
            for kind in 0..4 {
                let mut q = p;
                match kind {
                    0 => q.black |= b,
                    1 => {
                        q.black |= b;
                        q.kings |= b
                    }
                    2 => q.white |= b,
                    _ => {
                        q.white |= b;
                        q.kings |= b
                    }
                }
                if q.validate().is_ok() {
                    rec(s + 1, left - 1, q, out);
                }
            }
        }
    }
    rec(
        0,
        max,
        Position {
            black: 0,
            white: 0,
            kings: 0,
            side: Color::Black,
        },
        &mut out,
    );
    out
}

fn naive_values(max: usize) -> HashMap<Position, Wld> {
    let all = all_positions(max);
    let succ: HashMap<Position, Vec<Position>> = all.iter().map(|p| (*p, p.successors())).collect();
    let mut val: HashMap<Position, Wld> = HashMap::new();
    loop {
        let mut changed = false;
        for p in &all {
            if val.contains_key(p) {
                continue;
            }
            let s = &succ[p];
            let v = if s.iter().any(|q| val.get(q) == Some(&Wld::Loss)) {
                Some(Wld::Win)
            } else if s.iter().all(|q| val.get(q) == Some(&Wld::Win)) {
                Some(Wld::Loss) // includes "no move"
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
    for p in &all {
        val.entry(*p).or_insert(Wld::Draw);
    }
    val
}

#[test]
fn retrograde_matches_naive_fixpoint_up_to_3_pieces() {
    let naive = naive_values(3);
    let mem = Mem::default();
    for unit in build_order(3) {
        let lookup = |p: &Position| resolve(&mem, p);
        let solved = solve_unit(unit.slices[0], &lookup, &|_| {}).unwrap();
        for sv in solved {
            mem.0.write().unwrap().insert(sv.slice, sv.values.clone());
        }
    }
    let mut checked = 0;
    for (p, want) in &naive {
        let got = resolve(&mem, p).unwrap();
        assert_eq!(got, *want, "{}", p.to_fen());
        checked += 1;
    }
    // 1..3 pieces, both sides to move: 2 * (120 + 6972 + 261224).
    assert_eq!(checked, 2 * (120 + 6972 + 261_224));
    // Each stored slice has the exact size of its index.
    for (s, v) in mem.0.read().unwrap().iter() {
        assert_eq!(v.len() as u64, SliceIndex::new(*s).size());
    }
}
