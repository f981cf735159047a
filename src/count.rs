//! Position counts: by closed formula (OEIS A055213, any piece count 1-24) and by summing the
//! sizes of the dense slice indexes ([`SliceIndex::size`], computed by formula too).
//!
//! Counting model (Schaeffer et al., Science 2007; OEIS A055213): side to move not included
//! (equivalently, Black-to-move positions, what a colour-normalised database stores), at most
//! 12 pieces a side, one side may have none, no man on its own crowning row. Black men choose
//! from squares 1-28 and White men from 5-32; of these, 1-4 are Black-only, 29-32 White-only
//! and 5-28 (24 squares) shared. Kings then fill any free square.
use crate::index::{binom, SliceIndex};
use crate::slice::{Material, Slice};

/// Number of positions (Black to move) of one material, by formula. 0 if the material does
/// not fit on the board.
pub fn positions_of_material(m: Material) -> u128 {
    let (bm, bk, wm, wk) = (m.bm as u32, m.bk as u32, m.wm as u32, m.wk as u32);
    if bm + bk + wm + wk > 32 {
        return 0;
    }
    let mut men: u128 = 0;
    // i black men on 1-4, j white men on 29-32, the rest share 5-28.
    for i in 0..=bm.min(4) {
        for j in 0..=wm.min(4) {
            let (bs, ws) = (bm - i, wm - j);
            if bs + ws > 24 {
                continue;
            }
            men += binom(4, i) as u128
                * binom(4, j) as u128
                * binom(24, bs) as u128
                * binom(24 - bs, ws) as u128;
        }
    }
    let free = 32 - bm - wm;
    men * binom(free, bk) as u128 * binom(free - bk, wk) as u128
}

/// Number of positions with exactly `n` pieces (0-32), by formula: the sum of
/// [`positions_of_material`] over all materials with at most 12 pieces a side. Equals
/// A055213(n) for n = 1..=24 (0 above 24).
pub fn positions_formula(n: u32) -> u128 {
    Material::all_with_pieces(n)
        .into_iter()
        .map(positions_of_material)
        .sum()
}

/// Every slice with exactly `n` pieces, materials in [`Material::all_with_pieces`] order and
/// slices in [`Slice::all_of`] order (including slices of size 0).
pub fn slices_with_pieces(n: u32) -> Vec<Slice> {
    Material::all_with_pieces(n)
        .into_iter()
        .flat_map(Slice::all_of)
        .collect()
}

/// Number of positions with exactly `n` pieces, as the sum of the slice sizes
/// ([`SliceIndex::size`]). Intended for n <= 10 (it builds one index per slice; sizes are
/// formulas, so this is fast).
///
/// # Panics
/// If a slice size does not fit in `u64` (see [`SliceIndex::new`]).
pub fn positions_by_slices(n: u32) -> u128 {
    slices_with_pieces(n)
        .into_iter()
        .map(|s| SliceIndex::new(s).size() as u128)
        .sum()
}
