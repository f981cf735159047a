//! The prover's transposition table: a bounded, bucketed hash table of proof and disproof
//! numbers keyed exactly by (position, OR-node flag).
//!
//! One table serves one goal ([`super::search::Goal`]) of one search thread; it is not shared.
//! Entries hold the exact key (no hash-only matches), so a stored result can only be reused for
//! the very position it was computed for. The search stores solved results only when they do not
//! depend on the path (see `search.rs`), so every solved entry is a fact about the game and may be
//! reused for any later root.
//!
//! Replacement: each key hashes to a bucket of [`WAYS`] slots. A key already present is updated
//! in place (a solved entry is never overwritten by an unsolved one). Otherwise an empty slot is
//! taken, or else the slot whose entry is least valuable: unsolved before solved, then the
//! smallest subtree (`work`, nodes expanded below the entry when it was stored).

/// Infinity for proof and disproof numbers (a solved node has one number 0, the other `INF`).
pub const INF: u32 = u32::MAX;

/// Slots per bucket.
pub const WAYS: usize = 4;

/// One stored node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<P> {
    /// The position.
    pub pos: P,
    /// Whether the prover (the root's side) is to move here.
    pub or_node: bool,
    /// Proof number (0 = proven).
    pub pn: u32,
    /// Disproof number (0 = disproven).
    pub dn: u32,
    /// Nodes expanded below this node when it was stored (saturating).
    pub work: u32,
    /// For a solved node: the height of the proof found (plies to the deciding leaves along
    /// the longest line, the deciding side taking its shortest); 0 when unsolved.
    pub dist: u32,
    /// The numbers of an unsolved entry were computed with weak sums (see `Dfpn::set_weak`).
    pub weak: bool,
}

impl<P> Entry<P> {
    /// Proven or disproven.
    pub fn solved(&self) -> bool {
        self.pn == 0 || self.dn == 0
    }
}

/// Bounded transposition table; see the module docs.
#[derive(Debug)]
pub struct Table<P> {
    slots: Vec<Option<Entry<P>>>,
    buckets: usize,
    /// Entries stored into an empty slot or over another key (statistics).
    pub replaced: u64,
}

impl<P: Copy + Eq> Table<P> {
    /// A table using about `bytes` bytes (at least one bucket).
    pub fn with_bytes(bytes: usize) -> Table<P> {
        let per = std::mem::size_of::<Option<Entry<P>>>().max(1);
        Table::with_entries(bytes / per)
    }

    /// A table of at least `n` entries (rounded up to whole buckets, at least one).
    pub fn with_entries(n: usize) -> Table<P> {
        let buckets = n.div_ceil(WAYS).max(1);
        Table {
            slots: vec![None; buckets * WAYS],
            buckets,
            replaced: 0,
        }
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Filled slots (counts every slot: O(capacity)).
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Whether no slot is filled.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forget everything.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
    }

    fn bucket(&self, hash: u64) -> std::ops::Range<usize> {
        // Multiply-shift onto the bucket count (uses the high bits of the hash).
        let b = ((hash as u128 * self.buckets as u128) >> 64) as usize;
        b * WAYS..(b + 1) * WAYS
    }

    /// The entry of (`pos`, `or_node`), whose hash is `hash`.
    pub fn get(&self, hash: u64, pos: &P, or_node: bool) -> Option<&Entry<P>> {
        self.slots[self.bucket(hash)]
            .iter()
            .flatten()
            .find(|e| e.pos == *pos && e.or_node == or_node)
    }

    /// Store `e` (whose key hashes to `hash`) following the replacement rule of the module docs.
    pub fn put(&mut self, hash: u64, e: Entry<P>) {
        let range = self.bucket(hash);
        let slots = &mut self.slots[range];
        if let Some(s) = slots
            .iter_mut()
            .flatten()
            .find(|s| s.pos == e.pos && s.or_node == e.or_node)
        {
            if !s.solved() || e.solved() {
                *s = e;
            }
            return;
        }
        let victim = (0..WAYS)
            .min_by_key(|&i| match &slots[i] {
                None => (0u8, 0u32),
                Some(s) => (1 + u8::from(s.solved()), s.work),
            })
            .unwrap_or(0);
        slots[victim] = Some(e);
        self.replaced += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(pos: u32, pn: u32, dn: u32, work: u32) -> Entry<u32> {
        Entry {
            pos,
            or_node: true,
            pn,
            dn,
            work,
            dist: 0,
            weak: false,
        }
    }

    #[test]
    fn replacement_keeps_solved_and_large() {
        let mut t = Table::<u32>::with_entries(WAYS);
        assert_eq!(t.capacity(), WAYS);
        t.put(0, e(1, 0, INF, 1)); // solved, small
        t.put(0, e(2, 3, 3, 100)); // unsolved, large
        t.put(0, e(3, 3, 3, 5)); // unsolved, small
        t.put(0, e(4, 3, 3, 50));
        t.put(0, e(5, 3, 3, 60)); // evicts 3 (smallest unsolved)
        assert!(t.get(0, &3, true).is_none());
        assert!(t.get(0, &1, true).is_some());
        assert!(t.get(0, &5, true).is_some());
        // The OR flag is part of the key.
        assert!(t.get(0, &5, false).is_none());
        // A solved entry is not overwritten by an unsolved one.
        t.put(0, e(1, 7, 7, 1000));
        assert_eq!(t.get(0, &1, true).unwrap().pn, 0);
        t.clear();
        assert!(t.is_empty());
    }
}
