//! The prover's transposition table: a bounded, bucketed hash table of proof and disproof
//! numbers keyed exactly by (position, OR-node flag).
//!
//! One table serves one goal ([`super::search::Goal`]). The searchers of that goal share it as a
//! [`SharedTable`]: the table cut into shards by hash, each shard a [`Table`] behind a mutex, so
//! that the threads of a parallel search (`search.rs`) read and store concurrently. Entries hold the exact key (no hash-only matches), so a stored result can only be reused for
//! the very position it was computed for. The search stores solved results only when they do not
//! depend on the path (see `search.rs`), so every solved entry is a fact about the game and may be
//! reused for any later root.
//!
//! Memory: the table starts small and doubles, up to the size it was created with, whenever a
//! new key finds its bucket full. A doubling splits every bucket in two (multiply-shift on the
//! hash), so nothing is replaced before the table is fully grown, and from then on it holds
//! exactly what a table allocated at full size would. A short search thus costs
//! little memory and no time to clear a large table (a 1 GiB table took 2 s to allocate).
//!
//! Replacement: each key hashes to a bucket of [`WAYS`] slots. A key already present is updated
//! in place (a solved entry is never overwritten by an unsolved one). Otherwise an empty slot is
//! taken, or else the slot whose entry is least valuable: entries of earlier roots (generations)
//! before the current search's, unsolved before solved, then the smallest subtree (`work`,
//! nodes expanded below the entry when it was stored).

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

/// Buckets of a new table (it grows from there; see the module docs).
const START_BUCKETS: usize = 1 << 10;

/// A filled slot: the high 32 bits of the key's hash (to place it again when the table grows),
/// the generation that stored it (see [`Table::new_generation`]) and the entry.
type Slot<P> = Option<(u32, u32, Entry<P>)>;

/// Bounded transposition table; see the module docs.
#[derive(Debug)]
pub struct Table<P> {
    slots: Vec<Slot<P>>,
    buckets: usize,
    /// Buckets the table may grow to.
    max_buckets: usize,
    /// Filled slots.
    filled: usize,
    /// Current generation (one per root searched).
    generation: u32,
    /// Entries stored into an empty slot or over another key (statistics).
    pub replaced: u64,
}

impl<P: Copy + Eq> Table<P> {
    /// A table of at most `n` entries (rounded up to whole buckets, at least one).
    pub fn with_entries(n: usize) -> Table<P> {
        let max_buckets = n.div_ceil(WAYS).max(1);
        let buckets = max_buckets.min(START_BUCKETS);
        Table {
            slots: vec![None; buckets * WAYS],
            buckets,
            max_buckets,
            filled: 0,
            generation: 0,
            replaced: 0,
        }
    }

    /// Most entries the table may hold (slots once fully grown).
    pub fn capacity(&self) -> usize {
        self.max_buckets * WAYS
    }

    /// Slots allocated now.
    #[cfg(test)]
    pub fn allocated(&self) -> usize {
        self.slots.len()
    }

    /// Filled slots.
    pub fn len(&self) -> usize {
        self.filled
    }

    /// Every stored entry, in slot order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry<P>> {
        self.slots.iter().flatten().map(|(_, _, e)| e)
    }

    /// Forget everything.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
        self.filled = 0;
    }

    /// Slots of the bucket of a key whose hash has these high 32 bits (multiply-shift onto the
    /// bucket count).
    fn bucket(&self, high: u32) -> std::ops::Range<usize> {
        let b = ((high as u64 * self.buckets as u64) >> 32) as usize;
        b * WAYS..(b + 1) * WAYS
    }

    /// The entry of (`pos`, `or_node`), whose hash is `hash`.
    pub fn get(&self, hash: u64, pos: &P, or_node: bool) -> Option<&Entry<P>> {
        self.slots[self.bucket((hash >> 32) as u32)]
            .iter()
            .flatten()
            .map(|(_, _, e)| e)
            .find(|e| e.pos == *pos && e.or_node == or_node)
    }

    /// Double the bucket count (at most to the maximum) and place every entry again (a doubling
    /// splits each bucket in two, so every entry finds a slot).
    fn grow(&mut self) {
        let buckets = (self.buckets * 2).min(self.max_buckets);
        let old = std::mem::replace(&mut self.slots, vec![None; buckets * WAYS]);
        self.buckets = buckets;
        self.filled = 0;
        for (high, generation, e) in old.into_iter().flatten() {
            self.place(high, generation, e);
        }
    }

    /// Store `e` (whose key hashes to `hash`) following the replacement rule of the module docs.
    pub fn put(&mut self, hash: u64, e: Entry<P>) {
        let high = (hash >> 32) as u32;
        let range = self.bucket(high);
        let generation = self.generation;
        if let Some((_, g, s)) = self.slots[range]
            .iter_mut()
            .flatten()
            .find(|(_, _, s)| s.pos == e.pos && s.or_node == e.or_node)
        {
            if !s.solved() || e.solved() {
                *s = e;
                *g = generation;
            }
            return;
        }
        // As many doublings as it takes to free a slot of the key's bucket (one may not: the
        // bucket's entries may all go to the key's half).
        while self.buckets < self.max_buckets
            && self.slots[self.bucket(high)].iter().all(Option::is_some)
        {
            self.grow();
        }
        self.place(high, generation, e);
    }

    /// Start a new generation (call before searching another root): when a bucket is full,
    /// entries of earlier generations are replaced before the current search's own, so that
    /// facts kept from earlier roots never push out the proof being built.
    pub fn new_generation(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    /// Store a key known to be absent: an empty slot of its bucket, else over the least
    /// valuable entry.
    fn place(&mut self, high: u32, generation: u32, e: Entry<P>) {
        let current = self.generation;
        let range = self.bucket(high);
        let slots = &mut self.slots[range];
        let victim = (0..WAYS)
            .min_by_key(|&i| match &slots[i] {
                None => (0u8, 0u32),
                Some((_, g, s)) => (
                    1 + 2 * u8::from(*g == current) + u8::from(s.solved()),
                    s.work,
                ),
            })
            .unwrap_or(0);
        if slots[victim].is_none() {
            self.filled += 1;
        }
        slots[victim] = Some((high, generation, e));
        self.replaced += 1;
    }
}

/// Fewest slots per shard of a [`SharedTable`] (smaller tables have fewer shards, down to one).
const MIN_SHARD_SLOTS: usize = 1 << 16;

/// Most shards of a [`SharedTable`].
const MAX_SHARDS: usize = 64;

/// A [`Table`] shared by the threads of one goal's search: shards chosen by the low bits of the
/// hash (the bucket inside a shard comes from the high bits), each behind its own mutex. The
/// replacement rule and the growth on demand are those of [`Table`], per shard.
#[derive(Debug)]
pub struct SharedTable<P> {
    shards: Box<[std::sync::Mutex<Table<P>>]>,
}

impl<P: Copy + Eq> SharedTable<P> {
    /// A table using about `bytes` bytes (at least one bucket).
    pub fn with_bytes(bytes: usize) -> SharedTable<P> {
        let per = std::mem::size_of::<Slot<P>>().max(1);
        SharedTable::with_entries(bytes / per)
    }

    /// A table of at most `n` entries in all (each shard rounded up to whole buckets).
    pub fn with_entries(n: usize) -> SharedTable<P> {
        let shards = (n / MIN_SHARD_SLOTS)
            .clamp(1, MAX_SHARDS)
            .next_power_of_two();
        let shards = if shards > MAX_SHARDS {
            shards / 2
        } else {
            shards
        };
        let per = n.div_ceil(shards);
        SharedTable {
            shards: (0..shards)
                .map(|_| std::sync::Mutex::new(Table::with_entries(per)))
                .collect(),
        }
    }

    /// The shard of a key whose hash is `hash` (locked; a poisoned lock is taken over: a
    /// panicking searcher leaves whole entries only).
    fn shard(&self, hash: u64) -> std::sync::MutexGuard<'_, Table<P>> {
        let i = (hash as usize) & (self.shards.len() - 1);
        self.shards[i].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Most entries the table may hold.
    pub fn capacity(&self) -> usize {
        self.each(|t| t.capacity()).into_iter().sum()
    }

    /// Filled slots.
    pub fn len(&self) -> usize {
        self.each(|t| t.len()).into_iter().sum()
    }

    /// Whether no slot is filled.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn each<T>(&self, f: impl Fn(&mut Table<P>) -> T) -> Vec<T> {
        self.shards
            .iter()
            .map(|s| f(&mut s.lock().unwrap_or_else(|e| e.into_inner())))
            .collect()
    }

    /// Every stored entry (shard by shard, in slot order).
    pub fn entries(&self) -> Vec<Entry<P>> {
        let mut out = Vec::new();
        for s in self.shards.iter() {
            out.extend(
                s.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .entries()
                    .copied(),
            );
        }
        out
    }

    /// Forget everything.
    pub fn clear(&self) {
        self.each(|t| t.clear());
    }

    /// A copy of the entry of (`pos`, `or_node`), whose hash is `hash`.
    pub fn get(&self, hash: u64, pos: &P, or_node: bool) -> Option<Entry<P>> {
        self.shard(hash).get(hash, pos, or_node).copied()
    }

    /// Store `e` (its key hashes to `hash`) as [`Table::put`] does.
    pub fn put(&self, hash: u64, e: Entry<P>) {
        self.shard(hash).put(hash, e);
    }

    /// Start a new generation in every shard ([`Table::new_generation`]).
    pub fn new_generation(&self) {
        self.each(|t| t.new_generation());
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
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn earlier_generations_go_first() {
        let mut t = Table::<u32>::with_entries(WAYS);
        for k in 0..WAYS as u32 {
            t.put(0, e(k, 0, INF, 1000)); // solved, large: valuable
        }
        t.new_generation();
        t.put(0, e(10, 3, 3, 1)); // unsolved, small, but of the current root
        t.put(0, e(11, 3, 3, 1));
        assert!(t.get(0, &10, true).is_some() && t.get(0, &11, true).is_some());
        // Two of the earlier root's entries made room.
        let old = (0..WAYS as u32)
            .filter(|&k| t.get(0, &k, true).is_some())
            .count();
        assert_eq!(old, WAYS - 2);
    }

    fn mix(mut x: u64) -> u64 {
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    #[test]
    fn grows_on_demand_and_loses_nothing_below_its_maximum() {
        let mut t = Table::<u32>::with_entries(1 << 22);
        assert_eq!(t.capacity(), 1 << 22);
        assert!(t.allocated() <= START_BUCKETS * WAYS);
        let n = 50_000u32;
        for k in 0..n {
            t.put(mix(k as u64), e(k, 3, 3, k));
        }
        // Every key is still there (the table grew instead of replacing), and the table holds
        // far less than its maximum.
        for k in 0..n {
            assert_eq!(t.get(mix(k as u64), &k, true).map(|x| x.work), Some(k));
        }
        assert_eq!(t.len(), n as usize);
        assert!(t.allocated() <= (1 << 21), "{}", t.allocated());
    }

    #[test]
    fn shared_table_keeps_what_threads_store() {
        let t = SharedTable::<u32>::with_entries(1 << 20);
        assert!(t.shards.len() > 1 && t.capacity() >= 1 << 20);
        let n = 20_000u32;
        std::thread::scope(|s| {
            for part in 0..4u32 {
                let t = &t;
                s.spawn(move || {
                    for k in (part..n).step_by(4) {
                        t.put(mix(k as u64), e(k, 3, 3, k));
                    }
                });
            }
        });
        for k in 0..n {
            assert_eq!(t.get(mix(k as u64), &k, true).map(|x| x.work), Some(k));
        }
        assert_eq!(t.len(), n as usize);
        assert_eq!(t.entries().len(), n as usize);
        // A tiny table is one shard (replacement as in a single table).
        let small = SharedTable::<u32>::with_entries(WAYS);
        assert_eq!((small.shards.len(), small.capacity()), (1, WAYS));
        t.clear();
        assert!(t.is_empty());
    }
}
