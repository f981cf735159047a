//! The block cache: set-associative, lock-free reads.
//!
//! Decoded blocks are cut into pages of `PB` packed bytes (PAGE_BYTES for the WLD cache,
//! DTC_PAGE_BYTES for the distance caches); each page lives in a frame of a
//! fixed region allocated once (zeroed, so the OS commits it only as frames are filled). A page
//! with key K may only sit in one of the WAYS ways of set `set_of(K)`; a way gets its frame
//! on its first fill, frames being handed out in order, so the filled frames lie together at
//! the start of the region (few pages, and page-table entries, for a partly filled cache;
//! the frame index sits in the set's cache line beside the keys). A reader scans the
//! set's keys and reads the word it needs under a per-frame sequence lock (seqlock: even =
//! stable, odd = being written), so a hit takes no lock and writes nothing shared (except,
//! once per eviction sweep, the frame's "referenced" bit). Writers (after decoding, with no
//! lock held during decode or I/O) take a striped mutex of the set, pick a victim by CLOCK
//! within the set and rewrite the frame. Frame memory is never freed while the cache lives,
//! so a reader racing with a writer reads stale words at worst, which the sequence check
//! rejects (the probe then takes the miss path).

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

/// Packed bytes per cache page (multiple of 8). The cache holds blocks as
/// [`crate::table::TableFile::decode_block`] returns them, in the codec's memory form (base-3
/// packed, 5 values per byte, for the WLD codec: format 2 stores 2 bits per value and repacks
/// on decode): a default 65,520-position block is 13,104 bytes = 16
/// pages of 824 (the last one 744 full).
pub(crate) const PAGE_BYTES: usize = 824;
// Codec 6 decodes one page at a time: its segments are pages.
const _: () = assert!(crate::table::cm6::SEGMENT == PAGE_BYTES * 5);
/// Most pages per block that the cache holds (larger blocks are decoded but not cached).
const MAX_PAGES: usize = 256;
/// Bytes per page of the distance caches (signed-distance and distance blocks, one byte a
/// position). Larger than [`PAGE_BYTES`] so that a large budget has few sets: their keys
/// (64 bytes a set of [`WAYS`] frames, 1 MiB per GiB of budget) stay in the processor's
/// caches, and a warm probe's only likely miss is the page word itself.
pub(crate) const DTC_PAGE_BYTES: usize = 16_384;
/// Frames per set.
const WAYS: usize = 4;
/// Bytes counted against the budget per frame: the page plus its share of the set metadata.
pub(crate) const FRAME_COST: usize = PAGE_BYTES + 64 / WAYS;
const N_LOCKS: usize = 64;

#[repr(C, align(64))]
struct Set {
    /// Key of the page in each way; 0 = empty.
    keys: [AtomicU64; WAYS],
    /// Sequence number of each way (odd while the frame is being rewritten).
    seqs: [AtomicU32; WAYS],
    /// Frame of each way: bits 0-30 its index + 1 in the data region (0: none yet; given
    /// out in fill order when the way is first filled and kept for good, so that the filled
    /// frames lie together at the start of the region), bit 31 ([`REF`]) set when the way
    /// was read since the CLOCK hand last passed it.
    frames: [AtomicU32; WAYS],
}

/// Referenced bit of [`Set::frames`].
const REF: u32 = 1 << 31;

/// `PB`: bytes per page (a multiple of 8; [`PAGE_BYTES`] unless the cache holds blocks of
/// another form, see [`DTC_PAGE_BYTES`]).
pub(crate) struct BlockCache<const PB: usize = PAGE_BYTES> {
    /// `n_sets` 64-byte-aligned sets inside `set_words` (see [`BlockCache::new`]).
    sets_ptr: *const Set,
    n_sets: usize,
    #[allow(dead_code)] // owns the memory behind `sets_ptr`
    set_words: Box<[AtomicU64]>,
    /// `n_sets * WAYS * PAGE_WORDS` words of page data.
    data: Box<[AtomicU64]>,
    /// Ways in use per set (WAYS, or fewer for a budget below one set).
    ways: usize,
    /// CLOCK hand of each set (next way to consider for eviction); under the set's lock.
    hands: Box<[AtomicU32]>,
    /// Frames given out so far (`Set::frames`).
    next_frame: AtomicU32,
    locks: Box<[Mutex<()>]>,
    /// Frames holding a page (updated under the set locks).
    pub(crate) occupied: AtomicU64,
}

// SAFETY: `sets_ptr` only aliases `set_words`, owned by the cache and never moved or freed
// before it; all state shared between threads is atomic or behind the set mutexes.
unsafe impl<const PB: usize> Send for BlockCache<PB> {}
// SAFETY: as for `Send`: every access through `&self` goes to atomics or mutex-guarded state.
unsafe impl<const PB: usize> Sync for BlockCache<PB> {}

/// Largest cache budget honoured: half the physical memory (Linux `MemTotal`), or 1 GiB where
/// that is unknown. A larger budget is reduced to this, so an oversized request can never make
/// the up-front (lazily committed) allocation fail and abort the process.
pub fn max_cache_bytes() -> usize {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
        line.split_whitespace().nth(1)?.parse::<usize>().ok()
    });
    total.map_or(1 << 30, |kib| kib.saturating_mul(1024) / 2)
}

impl<const PB: usize> BlockCache<PB> {
    /// Page words.
    const PAGE_WORDS: usize = PB / 8;
    /// Bytes counted against the budget per frame.
    const FRAME_COST: usize = PB + 64 / WAYS;

    pub(crate) fn new(budget: usize) -> BlockCache<PB> {
        const { assert!(PB.is_multiple_of(8) && PB > 0) };
        let budget = budget.min(max_cache_bytes());
        // Frame indices + 1 fit in 31 bits.
        let frames = (budget / Self::FRAME_COST).min((REF - 2) as usize);
        let (n_sets, ways) = if frames >= WAYS {
            (frames / WAYS, WAYS)
        } else {
            (usize::from(frames > 0), frames)
        };
        // Zeroed allocations: all-zero atomics are valid, and large zeroed allocations are
        // committed by the OS page by page as frames are first written.
        // The sets are carved out of a zeroed u64 allocation (8-byte alignment keeps it a
        // lazily committed calloc, unlike a 64-byte-aligned zeroed allocation, which the
        // allocator fills eagerly) and aligned to 64 bytes by hand.
        const SET_WORDS: usize = std::mem::size_of::<Set>() / 8;
        // SAFETY: an all-zero `AtomicU64` is a valid value (it is a `u64` 0).
        let set_words =
            unsafe { Box::<[AtomicU64]>::new_zeroed_slice(n_sets * SET_WORDS + 8).assume_init() };
        let base = set_words.as_ptr() as usize;
        let sets_ptr = (base.next_multiple_of(64)) as *const Set;
        // SAFETY: as above, zeroed atomics are valid.
        let data = unsafe {
            Box::<[AtomicU64]>::new_zeroed_slice(n_sets * WAYS * Self::PAGE_WORDS).assume_init()
        };
        BlockCache {
            sets_ptr,
            n_sets,
            set_words,
            data,
            ways,
            hands: (0..n_sets).map(|_| AtomicU32::new(0)).collect(),
            next_frame: AtomicU32::new(0),
            locks: (0..N_LOCKS).map(|_| Mutex::new(())).collect(),
            occupied: AtomicU64::new(0),
        }
    }

    /// Back the cache's pages with transparent huge pages ([`crate::hint::advise_huge`]): fewer TLB
    /// misses on the random reads of a large cache. The kernel then commits memory 2 MiB at a
    /// time; frames are filled from the start of the region, so that rounds the resident
    /// part up to the next 2 MiB, not to the budget.
    pub(crate) fn huge_pages(&self) {
        crate::hint::advise_huge(&self.data);
    }

    /// Whether a block of `len` memory-form bytes can be cached ([`BlockCache::insert`] keeps
    /// nothing larger).
    #[inline(always)]
    pub(crate) fn fits(len: usize) -> bool {
        len <= MAX_PAGES * PB
    }

    #[inline(always)]
    fn sets(&self) -> &[Set] {
        // SAFETY: `sets_ptr` points to `n_sets` zeroed (valid: all atomics) 64-byte-aligned
        // `Set`s inside `set_words`, whose heap block lives and stays put as long as `self`.
        unsafe { std::slice::from_raw_parts(self.sets_ptr, self.n_sets) }
    }

    #[inline(always)]
    fn set_of(&self, key: u64) -> usize {
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h as u128 * self.n_sets as u128) >> 64) as usize
    }

    #[inline(always)]
    fn frame(&self, index: u32) -> &[AtomicU64] {
        let f = index as usize * Self::PAGE_WORDS;
        &self.data[f..f + Self::PAGE_WORDS]
    }

    /// Packed byte `byte` of the cached block `key` (a key from [`block_key`]), or `None` if
    /// the page holding it is not cached (or is being rewritten at this moment). No lock.
    #[inline]
    pub(crate) fn byte(&self, key: u64, byte: usize) -> Option<u8> {
        if self.n_sets == 0 {
            return None;
        }
        // The page number has the 8 low bits of the key (`block_key`): a page past them would
        // read the page of another block. No page there is ever inserted (`insert_page`).
        let page = byte / PB;
        if page >= MAX_PAGES {
            return None;
        }
        let key = key | page as u64;
        let inpage = byte % PB;
        let si = self.set_of(key);
        let set = &self.sets()[si];
        for w in 0..self.ways {
            if set.keys[w].load(Ordering::Relaxed) != key {
                continue;
            }
            let s1 = set.seqs[w].load(Ordering::Acquire);
            if s1 & 1 != 0 || set.keys[w].load(Ordering::Relaxed) != key {
                return None;
            }
            // Set (never changed afterwards) before the key was first published.
            let fw = set.frames[w].load(Ordering::Relaxed);
            let index = (fw & !REF).checked_sub(1)?;
            let word = self.frame(index)[inpage / 8].load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if set.seqs[w].load(Ordering::Relaxed) != s1 {
                return None;
            }
            if fw & REF == 0 {
                set.frames[w].fetch_or(REF, Ordering::Relaxed);
            }
            return Some((word >> (8 * (inpage % 8))) as u8);
        }
        None
    }

    /// Cache the packed bytes of block `key` (every page of it). Takes the set locks, never
    /// while decoding.
    pub(crate) fn insert(&self, key: u64, packed: &[u8]) {
        if self.n_sets == 0 || !Self::fits(packed.len()) {
            return;
        }
        for (page, chunk) in packed.chunks(PB).enumerate() {
            self.insert_page(key, page, chunk);
        }
    }

    /// Insert page `page` (at most `PB` bytes: bytes `page * PB ..` of the
    /// block's memory form) of the block with key `key` alone (a codec that decodes one page
    /// at a time, `TableFile::decode_page`).
    pub(crate) fn insert_page(&self, key: u64, page: usize, chunk: &[u8]) {
        if self.n_sets == 0 || page >= MAX_PAGES || chunk.len() > PB {
            return;
        }
        {
            let key = key | page as u64;
            let si = self.set_of(key);
            let set = &self.sets()[si];
            let _g = self.locks[si % N_LOCKS]
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if (0..self.ways).any(|w| set.keys[w].load(Ordering::Relaxed) == key) {
                return;
            }
            let victim = match (0..self.ways).find(|&w| set.keys[w].load(Ordering::Relaxed) == 0) {
                Some(w) => {
                    self.occupied.fetch_add(1, Ordering::Relaxed);
                    w
                }
                None => {
                    // CLOCK: clear the referenced bit of used ways, evict the first unused one
                    // (one full turn clears every bit; readers may set bits again meanwhile, so
                    // after two turns the way under the hand is taken as it is).
                    let mut h = self.hands[si].load(Ordering::Relaxed) as usize % self.ways;
                    for _ in 0..2 * self.ways {
                        if set.frames[h].load(Ordering::Relaxed) & REF != 0 {
                            set.frames[h].fetch_and(!REF, Ordering::Relaxed);
                            h = (h + 1) % self.ways;
                        } else {
                            break;
                        }
                    }
                    self.hands[si].store(((h + 1) % self.ways) as u32, Ordering::Relaxed);
                    h
                }
            };
            let s = set.seqs[victim].load(Ordering::Relaxed);
            set.seqs[victim].store(s.wrapping_add(1) | 1, Ordering::Relaxed);
            fence(Ordering::Release);
            set.keys[victim].store(key, Ordering::Relaxed);
            let mut fw = set.frames[victim].load(Ordering::Relaxed);
            if fw & !REF == 0 {
                // The way's first fill: the next free frame (there is one: the region has a
                // frame for every way).
                let index = self.next_frame.fetch_add(1, Ordering::Relaxed);
                fw = set.frames[victim].fetch_or(index + 1, Ordering::Relaxed) | (index + 1);
            }
            let frame = self.frame((fw & !REF) - 1);
            for (i, word) in chunk.chunks(8).enumerate() {
                let mut b = [0u8; 8];
                b[..word.len()].copy_from_slice(word);
                frame[i].store(u64::from_le_bytes(b), Ordering::Relaxed);
            }
            set.frames[victim].fetch_and(!REF, Ordering::Relaxed);
            set.seqs[victim].store((s | 1).wrapping_add(1), Ordering::Release);
        }
    }
}

/// Cache key of block `block` of the slice in slot `slot` (page number in the low 8 bits:
/// at most [`MAX_PAGES`] pages of a block are cached).
#[inline(always)]
pub(crate) fn block_key(slot: usize, block: u64) -> u64 {
    debug_assert!(block < 1 << 36, "block {block} overflows the cache key");
    ((slot as u64 + 1) << 44) | (block << 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block of more than 256 pages (codec 6/7 files written with blocks of more than
    /// 1,054,720 positions, distance files with more than 4,194,304) is cached page by page up
    /// to page 255 only. Its later pages were looked up with the page number spilling into the
    /// block number of the key: page 256 + k of block 0 read page k of block 1, another
    /// position's value. The contract: a byte is read only from the page of its own block.
    #[test]
    fn a_page_past_the_cached_ones_never_reads_another_blocks_page() {
        fn check<const PB: usize>() {
            let c = BlockCache::<PB>::new(4 << 20);
            let (b0, b1) = (block_key(7, 0), block_key(7, 1));
            for k in [0usize, 3, 255] {
                c.insert_page(b1, k, &vec![0xA5; PB]);
                assert_eq!(c.byte(b1, k * PB + 5), Some(0xA5), "page {k} of block 1");
                let past = (MAX_PAGES + k) * PB + 5;
                assert_eq!(c.byte(b0, past), None, "page {} of block 0", MAX_PAGES + k);
                assert_eq!(c.byte(b1, past), None, "page {} of block 1", MAX_PAGES + k);
            }
            // Pages past the limit are not inserted either.
            c.insert_page(b0, MAX_PAGES, &vec![0x5A; PB]);
            assert_eq!(c.byte(b0, MAX_PAGES * PB), None);
            assert_eq!(c.byte(b1, 0), Some(0xA5));
        }
        check::<PAGE_BYTES>();
        check::<DTC_PAGE_BYTES>();
    }
}
