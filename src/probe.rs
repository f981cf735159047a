//! Probing the tables: [`Tablebase`] (lazy opening, shared block cache, statistics) and
//! [`resolve`], the capture-resolving search every probe goes through.
//!
//! Tables store only quiet (no capture for the side to move) Black-to-move positions
//! meaningfully; [`resolve`] turns any position into such lookups: a side with no legal move
//! loses, a side that must capture gets the best value over its de-duplicated capture
//! successors (recursively, as the opponent may have to capture too), and a White-to-move
//! position is looked up as its colour flip ([`Position::normalized`]).
//!
//! ```no_run
//! use checkers_egdb::probe::Tablebase;
//! use checkers_egdb::Position;
//! let tb = Tablebase::builder("egdb").cache_bytes(64 << 20).open().unwrap();
//! let p = Position::from_fen("W:WK19,K23:BK28,12").unwrap();
//! println!("{}", tb.probe_wld(&p).unwrap()); // win
//! ```

use crate::board::{down_a, down_b, up_a, up_b, Color, Position, Wld};
use crate::index::{Divider, SliceIndex};
use crate::slice::{Material, Slice};
use crate::table::{packed_value, slice_of_file_name, Access, Block, TableError, TableFile};
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Most pieces a [`Tablebase`] can address (the slot table covers materials up to this count).
pub const MAX_PIECES: u32 = 12;

/// Why a probe gave no value. `Clone + Eq` so that a failure remembered by a lazily opened
/// slice is reported identically to every thread.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// The position has more pieces than the tables in the directory cover.
    #[error("position has {pieces} pieces; the tables cover at most {max}")]
    TooManyPieces {
        /// Pieces on the board.
        pieces: u32,
        /// Largest piece count of any table present.
        max: u32,
    },
    /// A slice needed for the answer (perhaps only during capture resolution) has no file.
    #[error("missing table for slice {slice}")]
    MissingSlice {
        /// Slice name, e.g. `0101-nn`.
        slice: String,
    },
    /// A table file is damaged, truncated, or holds another slice than its name says.
    #[error("corrupt table {file}: {what}")]
    Corrupt {
        /// The file.
        file: String,
        /// Which check failed.
        what: String,
    },
    /// The operating system refused to open or read a file or directory.
    #[error("I/O error on {file}: {message}")]
    Io {
        /// The file or directory.
        file: String,
        /// The OS error text.
        message: String,
    },
    /// A cache-only probe needed a block (or a slice) that is not loaded yet.
    #[error("value not in cache")]
    NotInCache,
    /// [`Tablebase::probe_wld_raw`] was given a position where the side to move must capture.
    #[error("the side to move has a capture; use probe_wld to resolve it")]
    CapturePosition,
    /// The position breaks a board invariant (see [`Position::validate`]).
    #[error("invalid position: {0}")]
    InvalidPosition(String),
    /// The directory holds no table files.
    #[error("no table files (*.egdb) in {dir}")]
    NoTables {
        /// The directory.
        dir: String,
    },
}

impl ProbeError {
    /// Convert a [`TableError`] about `path` into a probe error (corruption and wrong slices
    /// become [`ProbeError::Corrupt`], OS errors [`ProbeError::Io`]).
    pub fn from_table(path: &Path, e: TableError) -> ProbeError {
        let file = path.display().to_string();
        match e {
            TableError::Io { source, op, .. } => ProbeError::Io {
                file,
                message: format!("{op}: {source}"),
            },
            TableError::Corrupt { what, .. } => ProbeError::Corrupt {
                file,
                what: what.to_string(),
            },
            TableError::WrongSlice {
                expected, found, ..
            } => ProbeError::Corrupt {
                file,
                what: format!("holds slice {found}, expected {expected}"),
            },
            TableError::Invalid(s) => ProbeError::Corrupt { file, what: s },
        }
    }
}

/// A source of stored values: the value for Black (to move) of a quiet position of a slice.
/// Implemented by [`Tablebase`]; the builder implements it over tables it holds in memory.
pub trait RawSource: Sync {
    /// Stored value of position `index` of `slice` (a quiet Black-to-move position).
    ///
    /// # Errors
    /// Whatever the source fails with, e.g. [`ProbeError::MissingSlice`].
    fn raw(&self, slice: &Slice, index: u64) -> Result<Wld, ProbeError>;

    /// Stored value of the quiet Black-to-move position `p`. The default computes the slice
    /// and its index (with a per-thread cache of [`SliceIndex`]) and calls [`RawSource::raw`].
    ///
    /// # Errors
    /// As [`RawSource::raw`].
    fn raw_position(&self, p: &Position) -> Result<Wld, ProbeError> {
        let s = Slice::of(p);
        let index = with_index(&s, |ix| ix.rank(p));
        self.raw(&s, index)
    }
}

/// Run `f` with the (per-thread cached) [`SliceIndex`] of `s`.
pub fn with_index<R>(s: &Slice, f: impl FnOnce(&SliceIndex) -> R) -> R {
    thread_local! {
        static INDEXES: RefCell<HashMap<Slice, Arc<SliceIndex>>> = RefCell::new(HashMap::new());
    }
    let ix = INDEXES.with(|m| {
        let mut m = m.borrow_mut();
        if let Some(ix) = m.get(s) {
            return ix.clone();
        }
        if m.len() > 4096 {
            m.clear();
        }
        let ix = Arc::new(SliceIndex::new(*s));
        m.insert(*s, ix.clone());
        ix
    });
    f(&ix)
}

/// Whether the side to move has a non-capturing move (men forward, kings any direction, onto
/// an empty square). Together with [`Position::has_capture`] this decides "has a legal move".
#[inline]
pub fn has_quiet_move(p: &Position) -> bool {
    let me = p.pieces(p.side);
    let kings = me & p.kings;
    let empty = p.empty();
    let (fwd, back) = match p.side {
        Color::Black => (up_a(me) | up_b(me), down_a(kings) | down_b(kings)),
        Color::White => (down_a(me) | down_b(me), up_a(kings) | up_b(kings)),
    };
    (fwd | back) & empty != 0
}

/// Exact value for the side to move of any position, looking quiet positions up in `src`.
///
/// - No legal move (or no pieces): [`Wld::Loss`], no table needed.
/// - The side to move must capture: the best of `negate(resolve(successor))` over the
///   de-duplicated capture successors, stopping at the first win. A successor whose lookup
///   fails does not hide a win found among the others; otherwise its error is returned (the
///   first one met), so a missing table is never read as a draw.
/// - Otherwise: `src.raw_position(&p.normalized())`.
///
/// # Errors
/// Whatever `src` returns for a needed lookup.
pub fn resolve<S: RawSource + ?Sized>(src: &S, pos: &Position) -> Result<Wld, ProbeError> {
    if pos.has_capture() {
        let mut best = Wld::Loss;
        let mut err = None;
        // Successors without allocating; once a win is found the rest are skipped.
        pos.for_each_successor(|succ| {
            if best == Wld::Win {
                return;
            }
            match resolve(src, &succ) {
                Ok(v) => best = best.max(v.negate()),
                Err(e) => {
                    if err.is_none() {
                        err = Some(e);
                    }
                }
            }
        });
        if best == Wld::Win {
            return Ok(Wld::Win);
        }
        return match err {
            Some(e) => Err(e),
            None => Ok(best),
        };
    }
    if !has_quiet_move(pos) {
        return Ok(Wld::Loss);
    }
    src.raw_position(&pos.normalized())
}

// ---------------------------------------------------------------------------------------------
// Slots: one per possible slice, found without locks.

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

/// Dense id of a material with at most [`MAX_PIECES`] pieces, or `None`.
#[inline(always)]
fn material_id(m: &Material) -> Option<usize> {
    if m.bm > 12 || m.bk > 12 || m.wm > 12 || m.wk > 12 {
        return None;
    }
    let k = ((m.bm as usize * 13 + m.bk as usize) * 13 + m.wm as usize) * 13 + m.wk as usize;
    let id = MATERIAL_IDS[k];
    (id != u16::MAX).then_some(id as usize)
}

/// Number of materials with at most [`MAX_PIECES`] pieces: C(MAX_PIECES + 4, 4).
const N_MATERIALS: usize = 1820;

#[inline]
fn rank_slot(s: &Slice) -> usize {
    s.black_rank.map_or(7, |r| r as usize) * 8 + s.white_rank.map_or(7, |r| r as usize)
}

struct Loaded {
    file: TableFile,
    index: SliceIndex,
    /// Divides an index by the block size.
    block_div: Divider,
    /// The slice's slot number (`material_id * 64 + rank_slot`), the cache key's prefix.
    slot: usize,
    uniform: Option<Wld>,
}

struct Slot {
    present: AtomicBool,
    state: OnceLock<Result<Box<Loaded>, ProbeError>>,
}

struct MaterialSlots {
    slots: [Slot; 64],
}

// ---------------------------------------------------------------------------------------------
// Block cache: set-associative, lock-free reads.
//
// Decoded blocks are cut into pages of PAGE_BYTES packed bytes; each page lives in a frame of a
// fixed region allocated once (zeroed, so the OS commits it only as frames are filled). A page
// with key K may only sit in one of the WAYS frames of set `set_of(K)`. A reader scans the
// set's keys and reads the word it needs under a per-frame sequence lock (seqlock: even =
// stable, odd = being written), so a hit takes no lock and writes nothing shared (except,
// once per eviction sweep, the frame's "referenced" bit). Writers (after decoding, with no
// lock held during decode or I/O) take a striped mutex of the set, pick a victim by CLOCK
// within the set and rewrite the frame. Frame memory is never freed while the cache lives,
// so a reader racing with a writer reads stale words at worst, which the sequence check
// rejects (the probe then takes the miss path).

/// Packed bytes per cache page (multiple of 8). The cache holds blocks as [`TableFile::decode_block`]
/// returns them, base-3 packed (5 values per byte) whatever the file's codec (format 2 stores 2
/// bits per value and repacks on decode): a default 65,520-position block is 13,104 bytes = 16
/// pages of 824 (the last one 744 full).
const PAGE_BYTES: usize = 824;
const PAGE_WORDS: usize = PAGE_BYTES / 8;
/// Most pages per block that the cache holds (larger blocks are decoded but not cached).
const MAX_PAGES: usize = 256;
/// Frames per set.
const WAYS: usize = 4;
/// Bytes counted against the budget per frame: the page plus its share of the set metadata.
const FRAME_COST: usize = PAGE_BYTES + 64 / WAYS;
const N_LOCKS: usize = 64;

#[repr(C, align(64))]
struct Set {
    /// Key of the page in each way; 0 = empty.
    keys: [AtomicU64; WAYS],
    /// Sequence number of each way (odd while the frame is being rewritten).
    seqs: [AtomicU32; WAYS],
    /// Bit w: way w was read since the CLOCK hand last passed it.
    refs: AtomicU32,
    /// CLOCK hand (next way to consider for eviction); written under the set's lock.
    hand: AtomicU32,
}

struct BlockCache {
    /// `n_sets` 64-byte-aligned sets inside `set_words` (see [`BlockCache::new`]).
    sets_ptr: *const Set,
    n_sets: usize,
    #[allow(dead_code)] // owns the memory behind `sets_ptr`
    set_words: Box<[AtomicU64]>,
    /// `n_sets * WAYS * PAGE_WORDS` words of page data.
    data: Box<[AtomicU64]>,
    /// Ways in use per set (WAYS, or fewer for a budget below one set).
    ways: usize,
    locks: Box<[Mutex<()>]>,
    /// Frames holding a page (updated under the set locks).
    occupied: AtomicU64,
}

// SAFETY: `sets_ptr` only aliases `set_words`, owned by the cache; all shared state is atomic.
unsafe impl Send for BlockCache {}
unsafe impl Sync for BlockCache {}

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

impl BlockCache {
    fn new(budget: usize) -> BlockCache {
        let budget = budget.min(max_cache_bytes());
        let frames = budget / FRAME_COST;
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
        let set_words =
            unsafe { Box::<[AtomicU64]>::new_zeroed_slice(n_sets * SET_WORDS + 8).assume_init() };
        let base = set_words.as_ptr() as usize;
        let sets_ptr = (base.next_multiple_of(64)) as *const Set;
        let data = unsafe {
            Box::<[AtomicU64]>::new_zeroed_slice(n_sets * WAYS * PAGE_WORDS).assume_init()
        };
        BlockCache {
            sets_ptr,
            n_sets,
            set_words,
            data,
            ways,
            locks: (0..N_LOCKS).map(|_| Mutex::new(())).collect(),
            occupied: AtomicU64::new(0),
        }
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
    fn frame(&self, set: usize, way: usize) -> &[AtomicU64] {
        let f = (set * WAYS + way) * PAGE_WORDS;
        &self.data[f..f + PAGE_WORDS]
    }

    /// Packed byte `byte` of the cached block `key` (a key from [`block_key`]), or `None` if
    /// the page holding it is not cached (or is being rewritten at this moment). No lock.
    #[inline]
    fn byte(&self, key: u64, byte: usize) -> Option<u8> {
        if self.n_sets == 0 {
            return None;
        }
        let key = key | (byte / PAGE_BYTES) as u64;
        let inpage = byte % PAGE_BYTES;
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
            let word = self.frame(si, w)[inpage / 8].load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if set.seqs[w].load(Ordering::Relaxed) != s1 {
                return None;
            }
            let bit = 1u32 << w;
            if set.refs.load(Ordering::Relaxed) & bit == 0 {
                set.refs.fetch_or(bit, Ordering::Relaxed);
            }
            return Some((word >> (8 * (inpage % 8))) as u8);
        }
        None
    }

    /// Cache the packed bytes of block `key` (every page of it). Takes the set locks, never
    /// while decoding.
    fn insert(&self, key: u64, packed: &[u8]) {
        if self.n_sets == 0 || packed.len() > MAX_PAGES * PAGE_BYTES {
            return;
        }
        for (page, chunk) in packed.chunks(PAGE_BYTES).enumerate() {
            let key = key | page as u64;
            let si = self.set_of(key);
            let set = &self.sets()[si];
            let _g = self.locks[si % N_LOCKS]
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if (0..self.ways).any(|w| set.keys[w].load(Ordering::Relaxed) == key) {
                continue;
            }
            let victim = match (0..self.ways).find(|&w| set.keys[w].load(Ordering::Relaxed) == 0) {
                Some(w) => {
                    self.occupied.fetch_add(1, Ordering::Relaxed);
                    w
                }
                None => {
                    // CLOCK: clear the referenced bit of used ways, evict the first unused one
                    // (at most one full turn clears every bit).
                    let mut h = set.hand.load(Ordering::Relaxed) as usize % self.ways;
                    loop {
                        let bit = 1u32 << h;
                        if set.refs.load(Ordering::Relaxed) & bit != 0 {
                            set.refs.fetch_and(!bit, Ordering::Relaxed);
                            h = (h + 1) % self.ways;
                        } else {
                            break;
                        }
                    }
                    set.hand
                        .store(((h + 1) % self.ways) as u32, Ordering::Relaxed);
                    h
                }
            };
            let s = set.seqs[victim].load(Ordering::Relaxed);
            set.seqs[victim].store(s.wrapping_add(1) | 1, Ordering::Relaxed);
            fence(Ordering::Release);
            set.keys[victim].store(key, Ordering::Relaxed);
            let frame = self.frame(si, victim);
            for (i, word) in chunk.chunks(8).enumerate() {
                let mut b = [0u8; 8];
                b[..word.len()].copy_from_slice(word);
                frame[i].store(u64::from_le_bytes(b), Ordering::Relaxed);
            }
            set.refs.fetch_and(!(1u32 << victim), Ordering::Relaxed);
            set.seqs[victim].store((s | 1).wrapping_add(1), Ordering::Release);
        }
    }
}

/// Cache key of block `block` of the slice in slot `slot` (page number in the low 8 bits).
#[inline(always)]
fn block_key(slot: usize, block: u64) -> u64 {
    ((slot as u64 + 1) << 44) | (block << 8)
}

/// Counters striped over cache-line-sized cells, one per thread (threads beyond the stripe
/// count share), so that counting costs no shared cache line.
struct Striped {
    cells: Box<[Counters]>,
}
#[repr(align(128))]
#[derive(Default)]
struct Counters {
    probes: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
    decoded: AtomicU64,
}
const N_STRIPES: usize = 32;

impl Striped {
    fn new() -> Striped {
        Striped {
            cells: (0..N_STRIPES).map(|_| Counters::default()).collect(),
        }
    }
    #[inline(always)]
    fn mine(&self) -> &Counters {
        thread_local! { static STRIPE: usize = {
            static NEXT: AtomicU64 = AtomicU64::new(0);
            (NEXT.fetch_add(1, Ordering::Relaxed) % N_STRIPES as u64) as usize
        }}
        &self.cells[STRIPE.with(|s| *s)]
    }
    fn sum(&self, f: impl Fn(&Counters) -> &AtomicU64) -> u64 {
        self.cells
            .iter()
            .map(|c| f(c).load(Ordering::Relaxed))
            .sum()
    }
}

/// Counters of a [`Tablebase`] since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ProbeStats {
    /// Calls of the public probe functions (`probe_wld`, `probe_wld_raw`, `probe_wld_cached`,
    /// each position of `probe_many`).
    pub probes: u64,
    /// Table lookups answered from the block cache.
    pub cache_hits: u64,
    /// Table lookups that missed the cache (including cache-only probes answered
    /// [`ProbeError::NotInCache`]).
    pub cache_misses: u64,
    /// Blocks decompressed.
    pub blocks_decoded: u64,
    /// Cache pages currently filled (a block is cached as pages of 824 base-3 packed bytes, 16
    /// for a default 65,520-position block).
    pub cached_blocks: u64,
    /// Bytes currently counted against the cache budget.
    pub cached_bytes: u64,
    /// Slices opened (successfully or not) so far.
    pub slices_opened: u64,
}

// ---------------------------------------------------------------------------------------------
// Tablebase.

/// Settings for opening a [`Tablebase`]; see [`Tablebase::builder`].
#[derive(Clone, Debug)]
pub struct TablebaseBuilder {
    dir: PathBuf,
    cache_bytes: usize,
    access: Access,
    verify_on_open: bool,
    allow_empty: bool,
}

impl TablebaseBuilder {
    /// Budget of the shared cache of decompressed blocks, in bytes (default 64 MiB; 0 disables
    /// caching).
    pub fn cache_bytes(mut self, bytes: usize) -> Self {
        self.cache_bytes = bytes;
        self
    }
    /// Memory-mapped files (default) or positioned reads.
    pub fn access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }
    /// Check each file's whole-file checksum when its slice is first used (reads the whole
    /// file once; default off: per-block checksums still guard every decoded block).
    pub fn verify_on_open(mut self, yes: bool) -> Self {
        self.verify_on_open = yes;
        self
    }
    /// Accept a directory with no table files (for a builder that writes them later and calls
    /// [`Tablebase::rescan`]); default off: such a directory gives [`ProbeError::NoTables`].
    pub fn allow_empty(mut self, yes: bool) -> Self {
        self.allow_empty = yes;
        self
    }
    /// Open the tablebase: list the directory (files are opened lazily on first use).
    ///
    /// # Errors
    /// [`ProbeError::Io`] if the directory cannot be listed, [`ProbeError::NoTables`] if it
    /// holds no `*.egdb` file (unless [`TablebaseBuilder::allow_empty`]).
    pub fn open(self) -> Result<Tablebase, ProbeError> {
        let tb = Tablebase {
            materials: (0..N_MATERIALS).map(|_| OnceLock::new()).collect(),
            max_pieces: AtomicU32::new(0),
            fast: unsafe {
                Box::<[AtomicPtr<Loaded>]>::new_zeroed_slice(N_MATERIALS * 64).assume_init()
            },
            cache: BlockCache::new(self.cache_bytes),
            counters: Striped::new(),
            opened: AtomicU64::new(0),
            slices_present: AtomicU64::new(0),
            dir: self.dir,
            access: self.access,
            verify_on_open: self.verify_on_open,
        };
        let n = tb.rescan()?;
        if n == 0 && !self.allow_empty {
            return Err(ProbeError::NoTables {
                dir: tb.dir.display().to_string(),
            });
        }
        Ok(tb)
    }
}

/// A directory of table files opened for probing. `Send + Sync`: share one per process
/// (e.g. in an `Arc`); every method takes `&self`.
///
/// Files are found when the tablebase is opened (and by [`Tablebase::rescan`]) and opened,
/// mapped and validated on the first probe that needs them. That first open runs once even when
/// many threads need it at the same moment; its result, success or error, is remembered and
/// given to every later probe. Decompressed blocks are kept in a bounded cache shared by all
/// threads (sharded; no lock is held while a block is read or decompressed).
pub struct Tablebase {
    dir: PathBuf,
    access: Access,
    verify_on_open: bool,
    materials: Box<[OnceLock<Box<MaterialSlots>>]>,
    max_pieces: AtomicU32,
    /// Slot `material_id * 64 + rank_slot` -> its loaded table once opened successfully (null
    /// before). Points into the `Box<Loaded>` owned by the slot's `OnceLock`, which is never
    /// replaced while the tablebase lives: the lock-free path of every probe.
    fast: Box<[AtomicPtr<Loaded>]>,
    cache: BlockCache,
    counters: Striped,
    opened: AtomicU64,
    slices_present: AtomicU64,
}

impl std::fmt::Debug for Tablebase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tablebase")
            .field("dir", &self.dir)
            .field("max_pieces", &self.max_pieces())
            .finish()
    }
}

impl Tablebase {
    /// Open the tables in `dir` with default settings (64 MiB cache, memory-mapped files).
    ///
    /// # Errors
    /// See [`TablebaseBuilder::open`].
    pub fn open(dir: impl AsRef<Path>) -> Result<Tablebase, ProbeError> {
        Tablebase::builder(dir).open()
    }

    /// Settings for opening the tables in `dir`.
    pub fn builder(dir: impl AsRef<Path>) -> TablebaseBuilder {
        TablebaseBuilder {
            dir: dir.as_ref().to_path_buf(),
            cache_bytes: 64 << 20,
            access: Access::Mmap,
            verify_on_open: false,
            allow_empty: false,
        }
    }

    /// The table directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Largest piece count of any table file found.
    pub fn max_pieces(&self) -> u32 {
        self.max_pieces.load(Ordering::Relaxed)
    }

    /// Number of slice files found so far.
    pub fn slice_count(&self) -> u64 {
        self.slices_present.load(Ordering::Relaxed)
    }

    fn slots_of(&self, m: &Material, create: bool) -> Option<&MaterialSlots> {
        let id = material_id(m)?;
        let cell = &self.materials[id];
        if create {
            Some(cell.get_or_init(|| {
                Box::new(MaterialSlots {
                    slots: std::array::from_fn(|_| Slot {
                        present: AtomicBool::new(false),
                        state: OnceLock::new(),
                    }),
                })
            }))
        } else {
            cell.get().map(|b| &**b)
        }
    }

    /// List the directory again and make newly written files available (files already known
    /// keep their state: a slice opened before is not reopened). Returns the number of slice
    /// files known after the scan.
    ///
    /// # Errors
    /// [`ProbeError::Io`] if the directory cannot be listed.
    pub fn rescan(&self) -> Result<u64, ProbeError> {
        let io = |e: std::io::Error| ProbeError::Io {
            file: self.dir.display().to_string(),
            message: e.to_string(),
        };
        for entry in std::fs::read_dir(&self.dir).map_err(io)? {
            let entry = entry.map_err(io)?;
            let name = entry.file_name();
            let Some(s) = name.to_str().and_then(slice_of_file_name) else {
                continue;
            };
            if s.material.pieces() > MAX_PIECES {
                continue;
            }
            if let Some(ms) = self.slots_of(&s.material, true) {
                if !ms.slots[rank_slot(&s)].present.swap(true, Ordering::AcqRel) {
                    self.slices_present.fetch_add(1, Ordering::Relaxed);
                    self.max_pieces
                        .fetch_max(s.material.pieces(), Ordering::AcqRel);
                }
            }
        }
        Ok(self.slice_count())
    }

    /// The loaded table of slice `s`, opening it on first use (once, whatever the threads).
    #[inline(always)]
    fn loaded(&self, s: &Slice, cached_only: bool) -> Result<&Loaded, ProbeError> {
        if let Some(id) = material_id(&s.material) {
            let p = self.fast[id * 64 + rank_slot(s)].load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: `fast` only holds pointers to boxes owned by slot `OnceLock`s of
                // `self`, which are set once and dropped with `self`.
                return Ok(unsafe { &*p });
            }
        }
        self.loaded_slow(s, cached_only)
    }

    #[cold]
    fn loaded_slow(&self, s: &Slice, cached_only: bool) -> Result<&Loaded, ProbeError> {
        let missing = || ProbeError::MissingSlice {
            slice: s.to_string(),
        };
        let ms = self.slots_of(&s.material, false).ok_or_else(missing)?;
        let slot = &ms.slots[rank_slot(s)];
        if slot.state.get().is_none() {
            if !slot.present.load(Ordering::Acquire) {
                return Err(missing());
            }
            if cached_only {
                return Err(ProbeError::NotInCache);
            }
        }
        let r = slot.state.get_or_init(|| {
            self.opened.fetch_add(1, Ordering::Relaxed);
            self.open_slice(s)
        });
        let t = r.as_deref().map_err(Clone::clone)?;
        self.fast[t.slot].store(t as *const Loaded as *mut Loaded, Ordering::Release);
        Ok(t)
    }

    fn open_slice(&self, s: &Slice) -> Result<Box<Loaded>, ProbeError> {
        let path = crate::table::table_path(&self.dir, s);
        let te = |e| ProbeError::from_table(&path, e);
        let file = TableFile::open_with(&path, self.access).map_err(te)?;
        if file.meta().slice != *s {
            return Err(ProbeError::Corrupt {
                file: path.display().to_string(),
                what: format!("holds slice {}, expected {s}", file.meta().slice),
            });
        }
        let index = SliceIndex::new(*s);
        if file.meta().positions != index.size() {
            return Err(ProbeError::Corrupt {
                file: path.display().to_string(),
                what: format!(
                    "{} positions, slice {s} has {}",
                    file.meta().positions,
                    index.size()
                ),
            });
        }
        if self.verify_on_open {
            file.verify_checksum().map_err(te)?;
        }
        Ok(Box::new(Loaded {
            block_div: Divider::new(file.block_positions() as u64),
            uniform: file.uniform(),
            slot: material_id(&s.material).unwrap_or(0) * 64 + rank_slot(s),
            file,
            index,
        }))
    }

    /// Stored value of a quiet Black-to-move position (through the cache).
    #[inline]
    fn lookup(&self, p: &Position, cached_only: bool) -> Result<Wld, ProbeError> {
        let s = Slice::of(p);
        let t = self.loaded(&s, cached_only)?;
        if let Some(u) = t.uniform {
            return Ok(u);
        }
        let index = t.index.rank(p);
        self.value_at(t, index, cached_only)
    }

    #[inline]
    fn value_at(&self, t: &Loaded, index: u64, cached_only: bool) -> Result<Wld, ProbeError> {
        if let Some(u) = t.uniform {
            return Ok(u);
        }
        let (block, offset) = t.block_div.divrem(index);
        let offset = offset as usize;
        let key = block_key(t.slot, block);
        let c = self.counters.mine();
        if let Some(b) = self.cache.byte(key, offset / 5) {
            c.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(
                Wld::from_u8(crate::table::DIGITS[b as usize][offset % 5]).unwrap_or(Wld::Draw)
            );
        }
        c.misses.fetch_add(1, Ordering::Relaxed);
        self.value_miss(t, block, offset, key, cached_only)
    }

    #[cold]
    #[inline(never)]
    fn value_miss(
        &self,
        t: &Loaded,
        block: u64,
        offset: usize,
        key: u64,
        cached_only: bool,
    ) -> Result<Wld, ProbeError> {
        let te = |e| ProbeError::from_table(t.file.path(), e);
        if cached_only {
            // A block stored as a constant needs no I/O.
            return match t.file.block_constant(block).map_err(te)? {
                Some(w) => Ok(w),
                None => Err(ProbeError::NotInCache),
            };
        }
        match t.file.decode_block(block).map_err(te)? {
            Block::Const(w) => Ok(w),
            Block::Packed(p) => {
                self.counters.mine().decoded.fetch_add(1, Ordering::Relaxed);
                let v = packed_value(&p, offset);
                self.cache.insert(key, &p);
                Ok(Wld::from_u8(v).unwrap_or(Wld::Draw))
            }
        }
    }

    fn check(&self, p: &Position) -> Result<(), ProbeError> {
        self.counters.mine().probes.fetch_add(1, Ordering::Relaxed);
        p.validate()
            .map_err(|e| ProbeError::InvalidPosition(e.to_string()))?;
        let pieces = p.piece_count();
        let max = self.max_pieces();
        if pieces > max {
            return Err(ProbeError::TooManyPieces { pieces, max });
        }
        Ok(())
    }

    /// Exact value for the side to move of any position with at most
    /// [`Tablebase::max_pieces`] pieces; captures are resolved by search (see [`resolve`]).
    ///
    /// # Errors
    /// [`ProbeError::TooManyPieces`], [`ProbeError::InvalidPosition`],
    /// [`ProbeError::MissingSlice`] (naming the slice, even one needed only while resolving
    /// captures), [`ProbeError::Corrupt`], [`ProbeError::Io`].
    pub fn probe_wld(&self, p: &Position) -> Result<Wld, ProbeError> {
        self.check(p)?;
        resolve(self, p)
    }

    /// Value of a quiet position (the side to move has no capture): one table lookup, no search.
    ///
    /// # Errors
    /// [`ProbeError::CapturePosition`] if the side to move has a capture, else as
    /// [`Tablebase::probe_wld`].
    pub fn probe_wld_raw(&self, p: &Position) -> Result<Wld, ProbeError> {
        self.check(p)?;
        if p.has_capture() {
            return Err(ProbeError::CapturePosition);
        }
        if !has_quiet_move(p) {
            return Ok(Wld::Loss);
        }
        self.lookup(&p.normalized(), false)
    }

    /// [`Tablebase::probe_wld`] that never reads a file or decompresses a block (the
    /// "conditional" lookup of engines): [`ProbeError::NotInCache`] when a needed block or
    /// slice is not loaded yet.
    ///
    /// # Errors
    /// [`ProbeError::NotInCache`], else as [`Tablebase::probe_wld`].
    pub fn probe_wld_cached(&self, p: &Position) -> Result<Wld, ProbeError> {
        self.check(p)?;
        resolve(&CachedOnly(self), p)
    }

    /// [`Tablebase::probe_wld`] of many positions, in parallel (rayon); results in input order.
    pub fn probe_many(&self, positions: &[Position]) -> Vec<Result<Wld, ProbeError>> {
        positions.par_iter().map(|p| self.probe_wld(p)).collect()
    }

    /// Counters since opening.
    pub fn stats(&self) -> ProbeStats {
        let c = &self.counters;
        let occupied = self.cache.occupied.load(Ordering::Relaxed);
        ProbeStats {
            probes: c.sum(|c| &c.probes),
            cache_hits: c.sum(|c| &c.hits),
            cache_misses: c.sum(|c| &c.misses),
            blocks_decoded: c.sum(|c| &c.decoded),
            cached_blocks: occupied,
            cached_bytes: occupied * FRAME_COST as u64,
            slices_opened: self.opened.load(Ordering::Relaxed),
        }
    }
}

impl RawSource for Tablebase {
    fn raw(&self, slice: &Slice, index: u64) -> Result<Wld, ProbeError> {
        let t = self.loaded(slice, false)?;
        if index >= t.file.meta().positions {
            return Err(ProbeError::Corrupt {
                file: t.file.path().display().to_string(),
                what: format!("index {index} out of range"),
            });
        }
        self.value_at(t, index, false)
    }
    #[inline]
    fn raw_position(&self, p: &Position) -> Result<Wld, ProbeError> {
        self.lookup(p, false)
    }
}

struct CachedOnly<'a>(&'a Tablebase);

impl RawSource for CachedOnly<'_> {
    fn raw(&self, slice: &Slice, index: u64) -> Result<Wld, ProbeError> {
        let t = self.0.loaded(slice, true)?;
        self.0.value_at(t, index, true)
    }
    fn raw_position(&self, p: &Position) -> Result<Wld, ProbeError> {
        self.0.lookup(p, true)
    }
}
