//! The slot scheme: one slot per possible slice of at most [`MAX_PIECES`] pieces, found
//! without hashing or locks. Shared by [`super::Tablebase`] and the generator's dependency
//! store ([`crate::store::DecodedTables`]).
//!
//! A slice's slot number is `material_id * 64 + rank_slot`: a dense id of its material
//! (computed at compile time) and its two leading ranks (8 x 8, 7 standing for "no men").

use crate::slice::{Material, Slice};
use std::sync::OnceLock;

/// Most pieces a slot can address.
pub const MAX_PIECES: u32 = 12;

/// `MATERIAL_IDS[((bm * 13 + bk) * 13 + wm) * 13 + wk]` = dense id of the material, or
/// `u16::MAX` above [`MAX_PIECES`] pieces (computed at compile time).
static MATERIAL_IDS: [u16; 13 * 13 * 13 * 13] = {
    let mut v = [u16::MAX; 13 * 13 * 13 * 13];
    let mut n = 0u16;
    let mut k = 0;
    while k < v.len() {
        let (bm, bk, wm, wk) = (k / 2197, k / 169 % 13, k / 13 % 13, k % 13);
        if bm + bk + wm + wk <= MAX_PIECES as usize {
            v[k] = n;
            n += 1;
        }
        k += 1;
    }
    v
};

/// Number of materials with at most [`MAX_PIECES`] pieces: C(MAX_PIECES + 4, 4).
pub const N_MATERIALS: usize = 1820;
/// Rank slots per material.
pub const RANK_SLOTS: usize = 64;
/// Number of slots.
pub const N_SLOTS: usize = N_MATERIALS * RANK_SLOTS;

/// Dense id of a material with at most [`MAX_PIECES`] pieces, or `None`.
#[inline(always)]
pub fn material_id(m: &Material) -> Option<usize> {
    if m.bm > 12 || m.bk > 12 || m.wm > 12 || m.wk > 12 {
        return None;
    }
    let k = ((m.bm as usize * 13 + m.bk as usize) * 13 + m.wm as usize) * 13 + m.wk as usize;
    let id = MATERIAL_IDS[k];
    (id != u16::MAX).then_some(id as usize)
}

/// Slot of the leading ranks of `s` within its material (0..64).
#[inline(always)]
pub fn rank_slot(s: &Slice) -> usize {
    s.black_rank.map_or(7, |r| r as usize) * 8 + s.white_rank.map_or(7, |r| r as usize)
}

/// Slot number of `s` (`< N_SLOTS`), or `None` above [`MAX_PIECES`] pieces.
#[inline(always)]
pub fn slot_of(s: &Slice) -> Option<usize> {
    material_id(&s.material).map(|id| id * RANK_SLOTS + rank_slot(s))
}

/// One `T` per slice, allocated a material (64 slots) at a time on first use.
pub struct SlotTable<T> {
    materials: Box<[OnceLock<Box<[T]>>]>,
}

impl<T: Default> SlotTable<T> {
    /// An empty table.
    pub fn new() -> Self {
        SlotTable {
            materials: (0..N_MATERIALS).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The slot of `s`; `create`: allocate its material's row if needed (else `None` when the
    /// row does not exist yet). `None` above [`MAX_PIECES`] pieces.
    #[inline]
    pub fn get(&self, s: &Slice, create: bool) -> Option<&T> {
        let id = material_id(&s.material)?;
        let cell = &self.materials[id];
        let row = if create {
            cell.get_or_init(|| (0..RANK_SLOTS).map(|_| T::default()).collect())
        } else {
            cell.get()?
        };
        Some(&row[rank_slot(s)])
    }
}

impl<T: Default> Default for SlotTable<T> {
    fn default() -> Self {
        Self::new()
    }
}
