//! The prover's transposition table: a bounded, bucketed hash table of proof and disproof
//! numbers keyed exactly by (position, OR-node flag).
//!
//! One table serves one goal ([`super::search::Goal`]). The searchers of that goal share it as a
//! [`SharedTable`]: the table cut into shards by hash, each shard a [`Table`] behind a mutex, so
//! that the threads of a parallel search (`search.rs`) read and store concurrently. Entries hold
//! the exact key (no hash-only matches), so a stored result can only be reused for the very
//! position it was computed for. The search stores solved results only when they do not depend
//! on the path (see `search.rs`), so every solved entry is a fact about the game and may be
//! reused for any later root.
//!
//! Layout: a slot is 32 bytes, the exact key packed into 100 bits ([`Key::pack`]: a checkers
//! position is its three bitboards and the side to move, 97 bits) next to the OR flag, the
//! weak-sums flag and the generation, then the four numbers. A bucket of [`WAYS`] slots is one
//! 128-byte-aligned pair of cache lines, so a look-up costs at most two adjacent line fills
//! (the 44-byte slots before spanned three or four), and [`SharedTable::prefetch`] lets the
//! search start the fills of all of a node's children before it reads any of them. The table
//! places a key by its own hash of the packed key (so that it can place every entry again when
//! it grows); the callers' hash arguments are not needed.
//!
//! Memory: the table starts small and doubles, up to the size it was created with, whenever a
//! new key finds its bucket full. A doubling splits every bucket in two (multiply-shift on the
//! hash), so nothing is replaced before the table is fully grown, and from then on it holds
//! exactly what a table allocated at full size would. A short search thus costs
//! little memory and no time to clear a large table (a 1 GiB table took 2 s to allocate).
//!
//! Replacement: each key hashes to a bucket of [`WAYS`] slots. A key already present is updated
//! in place (a solved entry is never overwritten by an unsolved one, and one solved again with
//! the same result keeps the shorter proof height). Otherwise an empty slot is taken, or else
//! the slot whose entry is least valuable: entries of earlier roots (generations) before the
//! current search's, unsolved before solved, then the smallest subtree (`work`, nodes expanded
//! below the entry when it was stored).

use std::marker::PhantomData;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Infinity for proof and disproof numbers (a solved node has one number 0, the other `INF`).
pub const INF: u32 = u32::MAX;

/// Slots per bucket.
pub const WAYS: usize = 4;

/// Bits of a packed key ([`Key::pack`]).
pub const KEY_BITS: u32 = 100;

/// A position as a key of the table: packed exactly (injectively) into the low [`KEY_BITS`]
/// bits of a `u128`, and unpacked again.
pub trait Key: Copy + Eq {
    /// The packed key (bits from [`KEY_BITS`] on are 0; distinct keys pack differently).
    fn pack(&self) -> u128;
    /// The key packed as `k` by [`Key::pack`].
    fn unpack(k: u128) -> Self;
}

impl Key for crate::board::Position {
    fn pack(&self) -> u128 {
        self.black as u128
            | (self.white as u128) << 32
            | (self.kings as u128) << 64
            | (u128::from(self.side == crate::board::Color::White)) << 96
    }

    fn unpack(k: u128) -> Self {
        crate::board::Position {
            black: k as u32,
            white: (k >> 32) as u32,
            kings: (k >> 64) as u32,
            side: if (k >> 96) & 1 == 1 {
                crate::board::Color::White
            } else {
                crate::board::Color::Black
            },
        }
    }
}

impl Key for u32 {
    fn pack(&self) -> u128 {
        *self as u128
    }

    fn unpack(k: u128) -> Self {
        k as u32
    }
}

impl Key for usize {
    fn pack(&self) -> u128 {
        *self as u128
    }

    fn unpack(k: u128) -> Self {
        k as usize
    }
}

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

/// Buckets of a new table (it grows from there; see the module docs): 64, so that a
/// [`SharedTable`] of 1,024 shards starts at 8 MiB.
const START_BUCKETS: usize = 1 << 6;

/// Bits of the high word of a slot's key: the packed key's bits from 64 on.
const HIGH_KEY: u64 = (1 << (KEY_BITS - 64)) - 1;
/// The OR flag (high word).
const OR_BIT: u64 = 1 << 36;
/// The weak-sums flag (high word).
const WEAK_BIT: u64 = 1 << 37;
/// Set in a filled slot (high word).
const FILLED_BIT: u64 = 1 << 38;
/// The identity of a slot's entry in its high word: key bits, OR flag, filled.
const ID_MASK: u64 = HIGH_KEY | OR_BIT | FILLED_BIT;
/// The generation's place in the high word (its low 24 bits are kept; only equality with the
/// current generation is asked, to order replacement).
const GEN_SHIFT: u32 = 40;

/// One slot: the packed key (low word: key bits 0-63; high word: key bits 64-99, the OR flag,
/// the weak flag, the filled flag and the generation that stored it, see
/// [`Table::new_generation`]), then the numbers. All zero when empty.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct Slot {
    lo: u64,
    hi: u64,
    pn: u32,
    dn: u32,
    work: u32,
    dist: u32,
}

/// A bucket: [`WAYS`] slots in one aligned pair of cache lines.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(128))]
struct Bucket([Slot; WAYS]);

/// The low word and the identity bits of the high word ([`ID_MASK`]) of (`pos`, `or`).
fn ident<P: Key>(pos: &P, or: bool) -> (u64, u64) {
    let k = pos.pack();
    assert!(k >> KEY_BITS == 0, "a key wider than KEY_BITS bits");
    let hi = (k >> 64) as u64 | if or { OR_BIT } else { 0 } | FILLED_BIT;
    (k as u64, hi)
}

/// The table's hash of a key ([`ident`]): shard from its low bits, bucket from its high bits.
fn key_hash(lo: u64, id: u64) -> u64 {
    fn mix(mut x: u64) -> u64 {
        x ^= x >> 30;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^= x >> 27;
        x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }
    mix(lo ^ mix(id ^ 0x9e37_79b9_7f4a_7c15))
}

impl Slot {
    fn new<P>(lo: u64, id: u64, e: &Entry<P>, generation: u32) -> Slot {
        let weak = if e.weak { WEAK_BIT } else { 0 };
        Slot {
            lo,
            hi: id | weak | u64::from(generation & 0xff_ffff) << GEN_SHIFT,
            pn: e.pn,
            dn: e.dn,
            work: e.work,
            dist: e.dist,
        }
    }

    fn filled(&self) -> bool {
        self.hi & FILLED_BIT != 0
    }

    fn matches(&self, lo: u64, id: u64) -> bool {
        self.lo == lo && self.hi & ID_MASK == id
    }

    fn solved(&self) -> bool {
        self.pn == 0 || self.dn == 0
    }

    fn current(&self, generation: u32) -> bool {
        (self.hi >> GEN_SHIFT) as u32 == generation & 0xff_ffff
    }

    fn hash(&self) -> u64 {
        key_hash(self.lo, self.hi & ID_MASK)
    }

    fn entry<P: Key>(&self) -> Entry<P> {
        Entry {
            pos: P::unpack(u128::from(self.lo) | u128::from(self.hi & HIGH_KEY) << 64),
            or_node: self.hi & OR_BIT != 0,
            pn: self.pn,
            dn: self.dn,
            work: self.work,
            dist: self.dist,
            weak: self.hi & WEAK_BIT != 0,
        }
    }
}

/// Bounded transposition table; see the module docs.
#[derive(Debug)]
pub struct Table<P> {
    slots: Vec<Bucket>,
    buckets: usize,
    /// Buckets the table may grow to.
    max_buckets: usize,
    /// Filled slots.
    filled: usize,
    /// Current generation (one per root searched).
    generation: u32,
    /// Entries stored into an empty slot or over another key (statistics).
    pub replaced: u64,
    _key: PhantomData<fn() -> P>,
}

impl<P: Key> Table<P> {
    /// A table of at most `n` entries (rounded up to whole buckets, at least one).
    pub fn with_entries(n: usize) -> Table<P> {
        let max_buckets = n.div_ceil(WAYS).max(1);
        let buckets = max_buckets.min(START_BUCKETS);
        Table {
            slots: vec![Bucket::default(); buckets],
            buckets,
            max_buckets,
            filled: 0,
            generation: 0,
            replaced: 0,
            _key: PhantomData,
        }
    }

    /// Most entries the table may hold (slots once fully grown).
    pub fn capacity(&self) -> usize {
        self.max_buckets * WAYS
    }

    /// Slots allocated now.
    #[cfg(test)]
    pub fn allocated(&self) -> usize {
        self.slots.len() * WAYS
    }

    /// Filled slots.
    pub fn len(&self) -> usize {
        self.filled
    }

    /// Every stored entry, in slot order.
    pub fn entries(&self) -> impl Iterator<Item = Entry<P>> + '_ {
        self.slots
            .iter()
            .flat_map(|b| b.0.iter())
            .filter(|s| s.filled())
            .map(Slot::entry)
    }

    /// Forget everything.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|b| *b = Bucket::default());
        self.filled = 0;
    }

    /// The bucket of a key whose table hash is `h` (multiply-shift of its high 32 bits onto the
    /// bucket count).
    fn bucket(&self, h: u64) -> usize {
        (((h >> 32) * self.buckets as u64) >> 32) as usize
    }

    /// The entry of (`pos`, `or_node`). `_hash` (the caller's hash of the position) is not
    /// needed: the table places keys by its own hash (see the module docs).
    #[cfg(test)]
    pub fn get(&self, _hash: u64, pos: &P, or_node: bool) -> Option<Entry<P>> {
        let (lo, id) = ident(pos, or_node);
        self.find(key_hash(lo, id), lo, id)
    }

    fn find(&self, h: u64, lo: u64, id: u64) -> Option<Entry<P>> {
        self.slots[self.bucket(h)]
            .0
            .iter()
            .find(|s| s.matches(lo, id))
            .map(Slot::entry)
    }

    /// Double the bucket count (at most to the maximum) and place every entry again (a doubling
    /// splits each bucket in two, so every entry finds a slot).
    fn grow(&mut self) {
        let buckets = (self.buckets * 2).min(self.max_buckets);
        let old = std::mem::replace(&mut self.slots, vec![Bucket::default(); buckets]);
        self.buckets = buckets;
        self.filled = 0;
        for s in old.iter().flat_map(|b| b.0.iter()).filter(|s| s.filled()) {
            self.place(s.hash(), *s);
        }
    }

    /// Store `e` following the replacement rule of the module docs (`_hash`: see
    /// [`Table::get`]).
    #[cfg(test)]
    pub fn put(&mut self, _hash: u64, e: Entry<P>) {
        let (lo, id) = ident(&e.pos, e.or_node);
        self.store(key_hash(lo, id), lo, id, &e);
    }

    fn store(&mut self, h: u64, lo: u64, id: u64, e: &Entry<P>) {
        let generation = self.generation;
        let b = self.bucket(h);
        if let Some(s) = self.slots[b].0.iter_mut().find(|s| s.matches(lo, id)) {
            if !s.solved() || e.solved() {
                // The same result found again (another thread of a parallel search solved the
                // node too): the shorter of the two proof heights. A parent's height was taken
                // from a child's at some moment, and the certificate walk relies on every
                // child's height staying at most that (otherwise the walk found no child
                // within the parent's height and went into sub-searches, which once ate the
                // whole node budget of a position solved in 100,000 nodes).
                let dist = if s.solved() && (s.pn == 0) == (e.pn == 0) {
                    s.dist.min(e.dist)
                } else {
                    e.dist
                };
                *s = Slot::new(lo, id, &Entry { dist, ..*e }, generation);
            }
            return;
        }
        // As many doublings as it takes to free a slot of the key's bucket (one may not: the
        // bucket's entries may all go to the key's half).
        while self.buckets < self.max_buckets
            && self.slots[self.bucket(h)].0.iter().all(Slot::filled)
        {
            self.grow();
        }
        self.place(h, Slot::new(lo, id, e, generation));
    }

    /// Start a new generation (call before searching another root): when a bucket is full,
    /// entries of earlier generations are replaced before the current search's own, so that
    /// facts kept from earlier roots never push out the proof being built.
    pub fn new_generation(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    /// Store a slot whose key (table hash `h`) is known to be absent: an empty slot of its
    /// bucket, else over the least valuable entry.
    fn place(&mut self, h: u64, slot: Slot) {
        let current = self.generation;
        let b = self.bucket(h);
        let slots = &mut self.slots[b].0;
        let victim = (0..WAYS)
            .min_by_key(|&i| {
                let s = &slots[i];
                if s.filled() {
                    (
                        1 + 2 * u8::from(s.current(current)) + u8::from(s.solved()),
                        s.work,
                    )
                } else {
                    (0u8, 0u32)
                }
            })
            .unwrap_or(0);
        if !slots[victim].filled() {
            self.filled += 1;
        }
        slots[victim] = slot;
        self.replaced += 1;
    }
}

/// Fewest slots per shard of a [`SharedTable`] (smaller tables have fewer shards, down to one).
/// Issue 37: 4,096 slots and up to [`MAX_SHARDS`] = 1,024 shards (65,536 and 64 before): a
/// look-up takes its shard's lock, whose cache line comes back from the other core whenever
/// that core took the same lock since; with 64 shards that was almost every look-up (59% of
/// a 2-thread search's look-up samples on taking the lock), with 1,024 seldom. Wall speed-up
/// from 1 to 2 threads on the idle machine 1.84x and 1.70x against 1.41x and 1.33x with 64
/// (docs/cli.md, "egdb prove").
const MIN_SHARD_SLOTS: usize = 1 << 12;

/// Most shards of a [`SharedTable`].
const MAX_SHARDS: usize = 1024;

/// One shard of a [`SharedTable`]: the table behind its lock, alone in its pair of cache lines,
/// and in another pair where its buckets are now (for [`SharedTable::prefetch`], which takes no
/// lock: a stale address only prefetches a useless line). The lock is written by every
/// look-up of every thread, the address only when the shard grows, so that a prefetch reads
/// the address from its own core's cache instead of waiting for the lock's line to come back
/// from the core that took the lock last.
#[derive(Debug)]
#[repr(C, align(128))]
struct Shard<P> {
    table: Lines<std::sync::Mutex<Table<P>>>,
    base: AtomicPtr<Bucket>,
    buckets: AtomicUsize,
}

/// A value alone in its pair of cache lines.
#[derive(Debug)]
#[repr(align(128))]
struct Lines<T>(T);

impl<P: Key> Shard<P> {
    fn new(t: Table<P>) -> Shard<P> {
        let base = AtomicPtr::new(t.slots.as_ptr().cast_mut());
        let buckets = AtomicUsize::new(t.buckets);
        Shard {
            table: Lines(std::sync::Mutex::new(t)),
            base,
            buckets,
        }
    }

    /// The table (locked; a poisoned lock is taken over: a panicking searcher leaves whole
    /// entries only).
    fn lock(&self) -> std::sync::MutexGuard<'_, Table<P>> {
        self.table.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Hint the processor to fetch the cache lines of the bucket at `p` (no effect on any value;
/// `p` need not point to live memory).
#[inline]
fn prefetch_bucket(p: *const Bucket) {
    let p = p.cast::<u8>();
    prefetch_line(p);
    prefetch_line(p.wrapping_add(64));
}

/// Start fetching the cache line of `p` (a hint: nothing happens on other architectures).
#[inline(always)]
fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch never faults and reads nothing the program sees; any address is
        // allowed.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A [`Table`] shared by the threads of one goal's search: shards chosen by the low bits of the
/// hash (the bucket inside a shard comes from the high bits), each behind its own mutex. The
/// replacement rule and the growth on demand are those of [`Table`], per shard.
#[derive(Debug)]
pub struct SharedTable<P> {
    shards: Box<[Shard<P>]>,
}

impl<P: Key> SharedTable<P> {
    /// A table using about `bytes` bytes (at least one bucket).
    pub fn with_bytes(bytes: usize) -> SharedTable<P> {
        let per = std::mem::size_of::<Slot>();
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
                .map(|_| Shard::new(Table::with_entries(per)))
                .collect(),
        }
    }

    /// The shard of a key whose table hash is `h`.
    fn shard(&self, h: u64) -> &Shard<P> {
        &self.shards[(h as usize) & (self.shards.len() - 1)]
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
        self.shards.iter().map(|s| f(&mut s.lock())).collect()
    }

    /// Every stored entry (shard by shard, in slot order).
    pub fn entries(&self) -> Vec<Entry<P>> {
        let mut out = Vec::new();
        for s in self.shards.iter() {
            out.extend(s.lock().entries());
        }
        out
    }

    /// Forget everything.
    pub fn clear(&self) {
        self.each(|t| t.clear());
    }

    /// Start fetching the bucket of (`pos`, `or_node`) into the cache, for a [`SharedTable::get`]
    /// soon after (takes no lock, changes nothing).
    pub fn prefetch(&self, pos: &P, or_node: bool) {
        let (lo, id) = ident(pos, or_node);
        let h = key_hash(lo, id);
        let s = self.shard(h);
        let base = s.base.load(Ordering::Relaxed);
        let buckets = s.buckets.load(Ordering::Relaxed) as u64;
        prefetch_bucket(base.wrapping_add((((h >> 32) * buckets) >> 32) as usize));
    }

    /// A copy of the entry of (`pos`, `or_node`) (`_hash`: see [`Table::get`]).
    pub fn get(&self, _hash: u64, pos: &P, or_node: bool) -> Option<Entry<P>> {
        let (lo, id) = ident(pos, or_node);
        let h = key_hash(lo, id);
        self.shard(h).lock().find(h, lo, id)
    }

    /// Store `e` as [`Table::put`] does.
    pub fn put(&self, _hash: u64, e: Entry<P>) {
        let (lo, id) = ident(&e.pos, e.or_node);
        let h = key_hash(lo, id);
        let s = self.shard(h);
        let mut t = s.lock();
        t.store(h, lo, id, &e);
        let base = t.slots.as_ptr().cast_mut();
        if s.base.load(Ordering::Relaxed) != base {
            // Grown: where the buckets are now, for prefetches.
            s.base.store(base, Ordering::Relaxed);
            s.buckets.store(t.buckets, Ordering::Relaxed);
        }
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
        // Solved again with the same result: the shorter proof height stays, whichever order
        // (5 was unsolved: its first proof's height is taken as it is).
        let with_dist = |dist| Entry {
            dist,
            ..e(5, 0, INF, 1)
        };
        t.put(0, with_dist(9));
        t.put(0, with_dist(12));
        assert_eq!(t.get(0, &5, true).unwrap().dist, 9);
        t.put(0, with_dist(4));
        assert_eq!(t.get(0, &5, true).unwrap().dist, 4);
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
