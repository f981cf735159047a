//! Position counts against OEIS A055213 (values copied from the published table; Schaeffer et
//! al., Science 2007, Table 1) and the build plan's topological order.
mod facts;
use checkers_egdb::format::SliceIndex;
use checkers_egdb::planning::build_order;
use checkers_egdb::planning::{
    positions_by_slices, positions_formula, positions_of_material, slices_with_pieces,
};
use checkers_egdb::{Material, Slice};
use facts::A055213;
use std::collections::{HashMap, HashSet};

#[test]
fn formula_matches_a055213_1_to_24() {
    for n in 1..=24u32 {
        assert_eq!(positions_formula(n), A055213[n as usize - 1], "n = {n}");
    }
    let total: u128 = (1..=24).map(positions_formula).sum();
    assert_eq!(total, 500_995_484_682_338_672_639);
    assert_eq!(
        (1..=8).map(positions_formula).sum::<u128>(),
        443_748_401_247
    );
}

#[test]
fn slice_sums_match_a055213_1_to_10() {
    for n in 1..=10u32 {
        assert_eq!(positions_by_slices(n), A055213[n as usize - 1], "n = {n}");
    }
    let total: u128 = (1..=10).map(positions_by_slices).sum();
    assert_eq!(total, 39_271_258_813_439);
}

/// The index's slice sizes past the piece counts anyone builds: 11 to 24 pieces (12 men a side,
/// men of both sides on the same rows, the largest slices near 5e18 positions, which the index
/// asserts fit in `u64`) still add up to the published counts, so the overlap layout of the
/// index is exact wherever it can be used.
#[test]
fn slice_sums_match_a055213_11_to_24() {
    for n in 11..=24u32 {
        assert_eq!(positions_by_slices(n), A055213[n as usize - 1], "n = {n}");
    }
}

#[test]
fn king_sub_counts() {
    // K v K, 2K v K, 2K v 2K, 3K v 2K (reference counts).
    for (name, want) in [
        ("0101", 992u64),
        ("0201", 14_880),
        ("0202", 215_760),
        ("0302", 2_013_760),
    ] {
        let m: Material = name.parse().unwrap();
        assert_eq!(positions_of_material(m), want as u128, "{name}");
        let by_slices: u64 = Slice::all_of(m)
            .into_iter()
            .map(|s| SliceIndex::new(s).size())
            .sum();
        assert_eq!(by_slices, want, "{name}");
    }
}

#[test]
fn per_material_formula_matches_slices_up_to_8() {
    for n in 1..=8 {
        for m in Material::all_with_pieces(n) {
            let s: u64 = Slice::all_of(m)
                .into_iter()
                .map(|s| SliceIndex::new(s).size())
                .sum();
            assert_eq!(s as u128, positions_of_material(m), "{m}");
        }
    }
}

#[test]
fn plan_is_topological_and_complete() {
    let units = build_order(6);
    let mut done: HashSet<Slice> = HashSet::new();
    let mut done_by_material: HashMap<Material, usize> = HashMap::new();
    for (i, u) in units.iter().enumerate() {
        assert_eq!(u.id, i);
        assert!(u.slices.len() == 1 || u.slices.len() == 2);
        assert_eq!(u.slices[0].partner(), *u.slices.last().unwrap());
        for d in &u.deps {
            assert!(
                done.contains(d),
                "unit {i} ({}) depends on {d}, not built yet",
                u.slices[0]
            );
        }
        for &j in &u.dep_units {
            assert!(j < i);
        }
        for m in &u.capture_materials {
            assert!(m.pieces() < u.pieces);
            // Every non-empty slice of the captured material is already built.
            let want = Slice::all_of(*m)
                .into_iter()
                .filter(|s| SliceIndex::new(*s).size() > 0)
                .count();
            assert_eq!(
                done_by_material.get(m).copied().unwrap_or(0),
                want,
                "unit {i}: {m}"
            );
        }
        for s in &u.slices {
            assert!(done.insert(*s), "{s} planned twice");
            *done_by_material.entry(s.material).or_default() += 1;
        }
    }
    // Every non-empty slice appears exactly once.
    for n in 1..=6 {
        for s in slices_with_pieces(n) {
            assert_eq!(done.contains(&s), SliceIndex::new(s).size() > 0, "{s}");
        }
    }
}

#[test]
fn plan_dependencies_examples() {
    let units = build_order(3);
    let find = |name: &str| {
        let s: Slice = name.parse().unwrap();
        units
            .iter()
            .find(|u| u.slices.contains(&s))
            .unwrap()
            .clone()
    };
    // Black man on row 2 vs white king: advancing gives board slice 1001-3n, stored as 0110-n3.
    let u = find("1001-2n");
    assert!(u.deps.contains(&"0110-n3".parse().unwrap()));
    // Black man on row 6 crowns: 0101 material, stored flipped (same material).
    let u = find("1001-6n");
    assert!(u.deps.contains(&"0101-nn".parse().unwrap()));
    // Captures from 1001 (black man takes the king) lead to 1000 / 0100 (stored 0010 / 0001).
    assert!(u.capture_materials.contains(&"0010".parse().unwrap()));
    assert!(u.capture_materials.contains(&"0001".parse().unwrap()));
}
