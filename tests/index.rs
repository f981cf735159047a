//! Dense slice index: exhaustive round trips for small slices, an independent brute-force
//! enumeration for at most 3 pieces, sampled round trips for 5-10 pieces, and slice sizes
//! against OEIS A055213 (values copied from the published table; Schaeffer et al. 2007).
mod facts;
use checkers_egdb::format::SliceIndex;
use checkers_egdb::{Bitboard, Color, Material, Position, Slice};
use facts::A055213;
use proptest::prelude::*;
use std::collections::HashMap;

/// Black's crowning row, squares 29-32 (bit i = square i+1; the conventions of docs/).
const BLACK_CROWN_ROW: Bitboard = 0xF000_0000;
/// White's crowning row, squares 1-4.
const WHITE_CROWN_ROW: Bitboard = 0x0000_000F;

fn slices_with(n: u32) -> Vec<Slice> {
    Material::all_with_pieces(n)
        .into_iter()
        .flat_map(Slice::all_of)
        .collect()
}

#[test]
fn exhaustive_round_trip_up_to_4_pieces() {
    for n in 1..=4u32 {
        let mut total = 0u64;
        for s in slices_with(n) {
            let ix = SliceIndex::new(s);
            total += ix.size();
            for i in 0..ix.size() {
                let p = ix.unrank(i).unwrap();
                assert_eq!(p.side, Color::Black);
                assert!(p.validate().is_ok(), "{s} {i}: {p:?}");
                assert_eq!(Slice::of(&p), s, "{s} index {i}: {p:?}");
                assert_eq!(ix.rank(&p), i, "{s} index {i}: {p:?}");
                // Side to move is ignored by rank.
                let q = Position {
                    side: Color::White,
                    ..p
                };
                assert_eq!(ix.rank(&q), i);
            }
            assert!(ix.unrank(ix.size()).is_err());
        }
        assert_eq!(total, A055213[n as usize - 1] as u64, "n = {n}");
    }
}

/// Every legal position with `n` pieces, enumerated without any index code: choose the
/// occupied squares, then a piece type for each.
fn brute_force(n: u32, out: &mut impl FnMut(Position)) {
    fn rec(start: u32, left: u32, p: Position, out: &mut impl FnMut(Position)) {
        if left == 0 {
            out(p);
            return;
        }
        for i in start..32 {
            let b: Bitboard = 1 << i;
            // black man, black king, white man, white king
            if b & BLACK_CROWN_ROW == 0 {
                rec(
                    i + 1,
                    left - 1,
                    Position {
                        black: p.black | b,
                        ..p
                    },
                    out,
                );
            }
            rec(
                i + 1,
                left - 1,
                Position {
                    black: p.black | b,
                    kings: p.kings | b,
                    ..p
                },
                out,
            );
            if b & WHITE_CROWN_ROW == 0 {
                rec(
                    i + 1,
                    left - 1,
                    Position {
                        white: p.white | b,
                        ..p
                    },
                    out,
                );
            }
            rec(
                i + 1,
                left - 1,
                Position {
                    white: p.white | b,
                    kings: p.kings | b,
                    ..p
                },
                out,
            );
        }
    }
    let empty = Position {
        black: 0,
        white: 0,
        kings: 0,
        side: Color::Black,
    };
    rec(0, n, empty, out);
}

#[test]
fn brute_force_up_to_3_pieces_maps_one_to_one() {
    for n in 1..=3u32 {
        let mut indexes: HashMap<Slice, (SliceIndex, Vec<bool>)> = HashMap::new();
        let mut count = 0u64;
        brute_force(n, &mut |p| {
            assert!(p.validate().is_ok());
            count += 1;
            let s = Slice::of(&p);
            let (ix, seen) = indexes.entry(s).or_insert_with(|| {
                let ix = SliceIndex::new(s);
                let v = vec![false; ix.size() as usize];
                (ix, v)
            });
            let i = ix.rank(&p);
            assert!(i < ix.size(), "{s}: {p:?} -> {i}");
            assert!(!seen[i as usize], "{s}: index {i} hit twice");
            seen[i as usize] = true;
            assert_eq!(ix.unrank(i).unwrap(), p);
        });
        assert_eq!(count, A055213[n as usize - 1] as u64);
        for (s, (_, seen)) in &indexes {
            assert!(seen.iter().all(|&b| b), "{s}: holes");
        }
        // Every slice with positions was reached, and the sizes add up.
        let total: u64 = slices_with(n)
            .into_iter()
            .map(|s| SliceIndex::new(s).size())
            .sum();
        assert_eq!(total, count);
        for s in slices_with(n) {
            let size = SliceIndex::new(s).size();
            assert_eq!(size > 0, indexes.contains_key(&s), "{s}");
        }
    }
}

fn nonempty_slices_5_to_10() -> Vec<(Slice, u64)> {
    (5..=10)
        .flat_map(slices_with)
        .map(|s| (s, SliceIndex::new(s).size()))
        .filter(|&(_, size)| size > 0)
        .collect()
}

/// A random legal position with 5 to 10 pieces (rejection sampling on square and piece type).
fn random_position(seed: &[u64]) -> Option<Position> {
    random_position_in(seed, 5, 10)
}

/// A random legal position with `lo..=hi` pieces (rejection sampling on square and piece
/// type; `None` when the draws did not give one, e.g. more than 12 pieces a side).
fn random_position_in(seed: &[u64], lo: u32, hi: u32) -> Option<Position> {
    let n = lo + (seed[0] % u64::from(hi - lo + 1)) as u32;
    let mut p = Position {
        black: 0,
        white: 0,
        kings: 0,
        side: Color::Black,
    };
    let mut placed = 0;
    let mut k = 1;
    while placed < n {
        let v = seed[k % seed.len()].rotate_left(k as u32 * 7)
            ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        k += 1;
        if k > 400 {
            return None;
        }
        let b: Bitboard = 1 << (v % 32);
        if p.occupied() & b != 0 {
            continue;
        }
        match (v >> 8) % 4 {
            0 if b & BLACK_CROWN_ROW == 0 => p.black |= b,
            1 => {
                p.black |= b;
                p.kings |= b
            }
            2 if b & WHITE_CROWN_ROW == 0 => p.white |= b,
            3 => {
                p.white |= b;
                p.kings |= b
            }
            _ => continue,
        }
        placed += 1;
    }
    p.validate().ok()?;
    Some(p)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn sampled_unrank_rank_5_to_10(which in any::<u64>(), at in any::<u64>()) {
        thread_local! {
            static SLICES: Vec<(Slice, u64)> = nonempty_slices_5_to_10();
        }
        let (s, size) = SLICES.with(|v| v[(which % v.len() as u64) as usize]);
        let ix = SliceIndex::new(s);
        let i = at % size;
        let p = ix.unrank(i).unwrap();
        prop_assert!(p.validate().is_ok());
        prop_assert_eq!(Slice::of(&p), s);
        prop_assert_eq!(ix.rank(&p), i);
    }

    #[test]
    fn sampled_rank_unrank_5_to_10(seed in proptest::collection::vec(any::<u64>(), 4..12)) {
        if let Some(p) = random_position(&seed) {
            let ix = SliceIndex::new(Slice::of(&p));
            let i = ix.rank(&p);
            prop_assert!(i < ix.size());
            prop_assert_eq!(ix.unrank(i).unwrap(), p);
        }
    }

    /// Past the piece counts anyone builds (11 to 24 pieces: up to 12 men a side on shared
    /// rows, slices near 5e18 positions), `unrank` then `rank` is the identity; the slices'
    /// sizes themselves are checked against A055213 in tests/count_plan.rs.
    #[test]
    fn sampled_unrank_rank_11_to_24(n in 11u32..=24, which in any::<u64>(), at in any::<u64>()) {
        thread_local! {
            static SLICES: Vec<Vec<(Slice, u64)>> = (11..=24)
                .map(|n| {
                    slices_with(n)
                        .into_iter()
                        .map(|s| (s, SliceIndex::new(s).size()))
                        .filter(|&(_, size)| size > 0)
                        .collect()
                })
                .collect();
        }
        let (s, size) = SLICES.with(|v| {
            let v = &v[(n - 11) as usize];
            v[(which % v.len() as u64) as usize]
        });
        let ix = SliceIndex::new(s);
        let i = at % size;
        let p = ix.unrank(i).unwrap();
        prop_assert!(p.validate().is_ok());
        prop_assert_eq!(p.occupied().count_ones(), n);
        prop_assert_eq!(Slice::of(&p), s);
        prop_assert_eq!(ix.rank(&p), i);
    }

    #[test]
    fn sampled_rank_unrank_11_to_24(seed in proptest::collection::vec(any::<u64>(), 4..12)) {
        if let Some(p) = random_position_in(&seed, 11, 24) {
            let ix = SliceIndex::new(Slice::of(&p));
            let i = ix.rank(&p);
            prop_assert!(i < ix.size());
            prop_assert_eq!(ix.unrank(i).unwrap(), p);
        }
    }

}
