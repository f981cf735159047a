//! Values of the threat positions a codec-4 slice stores no value for, once a search has
//! found them: a bounded, lock-free table, so that probing such a position again costs one
//! table read instead of the search (docs/format.md, codec 4).
//!
//! Each entry is one `u64`: the position's key `slot << 40 | index` ([`super::slots`] slot
//! number, index in its slice) shifted left by two, and the value in the low two bits (1
//! loss, 2 draw, 3 win; 0 is an empty entry). The key is the whole position, so an entry
//! is either the exact value of the position asked for or no answer: entries of other
//! positions that hash to the same place are told apart by their key, never read as values.
//! An entry is written with one atomic store and read with one atomic load, so a reader
//! sees a whole entry, old or new. A key may sit in any of the [`WAYS`] entries of its
//! bucket; a new key takes an empty entry of the bucket, else replaces one chosen by the key.

use crate::board::Wld;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Bits of the index in a key (slices of up to 2^40 positions are remembered; larger ones,
/// none at 12 pieces or fewer, are searched every time).
const INDEX_BITS: u32 = 40;
/// Bits of the slot in a key (62 key bits in all).
const SLOT_BITS: u32 = 22;
/// Entries per bucket (32 bytes).
const WAYS: usize = 4;

/// The table of resolved threat positions; allocated on the first value remembered (a
/// tablebase of codec-2 files never allocates it).
#[derive(Debug)]
pub(crate) struct ThreatMemo {
    /// Number of entries, a power of two (0: remember nothing).
    len: usize,
    entries: OnceLock<Box<[AtomicU64]>>,
}

impl ThreatMemo {
    /// A table of `len` entries rounded down to a power of two (8 bytes each); fewer than
    /// [`WAYS`] disables it.
    pub(crate) fn new(len: usize) -> ThreatMemo {
        let len = if len < WAYS {
            0
        } else {
            1 << (usize::BITS - 1 - len.leading_zeros())
        };
        ThreatMemo {
            len,
            entries: OnceLock::new(),
        }
    }

    /// Entries the table holds (0 when disabled).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn key(slot: usize, index: u64) -> Option<u64> {
        (slot < 1 << SLOT_BITS && index < 1 << INDEX_BITS)
            .then_some((slot as u64) << INDEX_BITS | index)
    }

    /// The first entry of `key`'s bucket and the way a new key replaces when it is full.
    fn place(&self, key: u64) -> (usize, usize) {
        // A multiplicative hash (the golden ratio constant): high bits choose the bucket,
        // the next two the way to replace.
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let bits = (self.len / WAYS).trailing_zeros(); // log2 of the bucket count, < 62
        let b = if bits == 0 {
            0
        } else {
            (h >> (u64::BITS - bits)) as usize
        };
        let way = (h >> (u64::BITS - bits - 2)) as usize % WAYS;
        (b * WAYS, way)
    }

    /// The remembered value of position `index` of the slice in `slot`, if any.
    #[inline]
    pub(crate) fn get(&self, slot: usize, index: u64) -> Option<Wld> {
        if self.len == 0 {
            return None;
        }
        let key = Self::key(slot, index)?;
        let (first, _) = self.place(key);
        let bucket = &self.entries.get()?[first..first + WAYS];
        let e = bucket
            .iter()
            .map(|x| x.load(Ordering::Relaxed))
            .find(|&e| e >> 2 == key && e != 0)?;
        match e & 3 {
            1 => Some(Wld::Loss),
            2 => Some(Wld::Draw),
            3 => Some(Wld::Win),
            _ => None,
        }
    }

    /// Remember `value` for position `index` of the slice in `slot`.
    pub(crate) fn put(&self, slot: usize, index: u64, value: Wld) {
        if self.len == 0 {
            return;
        }
        let Some(key) = Self::key(slot, index) else {
            return;
        };
        // SAFETY: an all-zero `AtomicU64` is a valid value (0, an empty entry). Zeroed
        // memory from the allocator is not touched until used, so the table's resident
        // memory grows with the entries written, not with its length.
        let entries = self.entries.get_or_init(|| unsafe {
            Box::<[AtomicU64]>::new_zeroed_slice(self.len).assume_init()
        });
        let code = match value {
            Wld::Loss => 1,
            Wld::Draw => 2,
            Wld::Win => 3,
        };
        let (first, way) = self.place(key);
        let bucket = &entries[first..first + WAYS];
        // The key's own entry, else an empty one, else the way the key chooses. Two threads
        // may pick the same empty entry; one value then replaces the other, both exact.
        let target = bucket
            .iter()
            .position(|x| x.load(Ordering::Relaxed) >> 2 == key)
            .or_else(|| bucket.iter().position(|x| x.load(Ordering::Relaxed) == 0))
            .unwrap_or(way);
        bucket[target].store(key << 2 | code, Ordering::Relaxed);
    }

    /// Entries in use (a scan of the table).
    #[cfg(test)]
    pub(crate) fn filled(&self) -> u64 {
        self.entries.get().map_or(0, |e| {
            e.iter().filter(|x| x.load(Ordering::Relaxed) != 0).count() as u64
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_given_back_only_for_its_own_position() {
        let m = ThreatMemo::new(1000);
        assert_eq!(m.len(), 512);
        assert_eq!(m.get(7, 12345), None);
        m.put(7, 12345, Wld::Draw);
        assert_eq!(m.get(7, 12345), Some(Wld::Draw));
        assert_eq!(m.get(7, 12346), None);
        assert_eq!(m.get(8, 12345), None);
        // Positions of the same bucket: the first WAYS are all kept, each with its value;
        // the next one replaces one of them, and the others still answer right or nothing.
        let bucket = m.place(ThreatMemo::key(7, 12345).unwrap()).0;
        let same: Vec<u64> = (0..10_000_000u64)
            .filter(|&i| i != 12345 && m.place(ThreatMemo::key(7, i).unwrap()).0 == bucket)
            .take(WAYS)
            .collect();
        assert_eq!(same.len(), WAYS);
        let value = |i: u64| [Wld::Loss, Wld::Draw, Wld::Win][(i % 3) as usize];
        for &i in &same[..WAYS - 1] {
            assert_eq!(m.get(7, i), None);
            m.put(7, i, value(i));
        }
        assert_eq!(m.get(7, 12345), Some(Wld::Draw));
        for &i in &same[..WAYS - 1] {
            assert_eq!(m.get(7, i), Some(value(i)));
        }
        assert_eq!(m.filled(), WAYS as u64);
        m.put(7, same[WAYS - 1], Wld::Win);
        assert_eq!(m.get(7, same[WAYS - 1]), Some(Wld::Win));
        assert_eq!(m.filled(), WAYS as u64);
        let mut kept = 0;
        for (i, want) in same[..WAYS - 1]
            .iter()
            .map(|&i| (i, value(i)))
            .chain([(12345, Wld::Draw)])
        {
            if let Some(v) = m.get(7, i) {
                assert_eq!(v, want);
                kept += 1;
            }
        }
        assert_eq!(kept, WAYS - 1, "one replaced");
        // A new value for a remembered position replaces its own entry.
        m.put(7, same[WAYS - 1], Wld::Loss);
        assert_eq!(m.get(7, same[WAYS - 1]), Some(Wld::Loss));
        assert_eq!(m.filled(), WAYS as u64);
    }

    #[test]
    fn keys_out_of_range_and_a_disabled_table_remember_nothing() {
        let m = ThreatMemo::new(64);
        m.put(1 << SLOT_BITS, 0, Wld::Win);
        m.put(0, 1 << INDEX_BITS, Wld::Win);
        assert_eq!(m.get(1 << SLOT_BITS, 0), None);
        assert_eq!(m.get(0, 1 << INDEX_BITS), None);
        assert_eq!(m.filled(), 0);
        for n in [0, WAYS - 1] {
            let off = ThreatMemo::new(n);
            off.put(1, 1, Wld::Win);
            assert_eq!(off.get(1, 1), None);
            assert_eq!(off.len(), 0);
        }
        // One bucket only.
        let one = ThreatMemo::new(WAYS);
        for i in 0..10 {
            one.put(3, i, Wld::Win);
            assert_eq!(one.get(3, i), Some(Wld::Win));
        }
        assert_eq!(one.filled(), WAYS as u64);
    }
}
