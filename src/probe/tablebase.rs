//! [`Tablebase`]: a directory of table files opened for probing (lazy opening, slot table,
//! shared block cache, statistics).

use super::cache::{block_key, BlockCache, DTC_PAGE_BYTES, FRAME_COST};
use super::error::{ProbeError, SharedIoError};
use super::memo::ThreatMemo;
use super::resolve::{best_successor, resolve_with, threat_search, RawSource};
use super::slots::{slot_of, SlotTable, MAX_PIECES, N_SLOTS};
use crate::board::{Position, Wld};
use crate::index::{Divider, SliceIndex};
use crate::rules::{English, Rules};
use crate::slice::Slice;
use crate::table::{Access, Block, FilePool, TableFile, ValueCodec, Wld2Bit};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

struct Loaded {
    file: TableFile,
    index: SliceIndex,
    /// Divides an index by the block size.
    block_div: Divider,
    /// The slice's slot number ([`slot_of`]), the cache key's prefix.
    slot: usize,
    uniform: Option<Wld>,
    /// Codec 4: threat positions store no value ([`RawSource::threats_dont_care`]).
    threats_dc: bool,
    /// The slice's distance file as the one-lookup path of [`Tablebase::probe_dtc`] needs
    /// it, set on its first successful open: its block divider and cache key prefix, `None`
    /// when the file stores no blocks (uniform). Kept here to spare the warm probe the walk
    /// to the distance slot.
    dtc_fast: OnceLock<Option<(Divider, u64)>>,
}

/// An opened distance file.
struct DtcLoaded {
    file: crate::table::DtcFile,
    block_div: Divider,
    slot: usize,
}

/// What tells one file under a path from another: device, inode, length and modification
/// time (a material file packed again is a new file, renamed over the old one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
}

impl FileId {
    fn of(md: &std::fs::Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId {
            dev: md.dev(),
            ino: md.ino(),
            len: md.len(),
            mtime_ns: i128::from(md.mtime()) * 1_000_000_000 + i128::from(md.mtime_nsec()),
        }
    }
}

/// A slice's distance file (`.dtc` or `.dtw`): opened once (or its error, kept), or known
/// missing as of a directory listing ([`Tablebase::rescan`] makes it looked for again).
#[derive(Default)]
struct DtcSlot {
    loaded: OnceLock<Result<Box<DtcLoaded>, ProbeError>>,
    /// The scan generation (plus one) at which the file was last found missing; 0: never.
    missing_at: AtomicU64,
}

/// Distance to conversion of a position, from the side to move's view, in plies (issue 9's
/// metric: a conversion is a capture or any man move; the winner converts as soon as possible,
/// the loser as late as possible).
///
/// - `Win(n)`: the side to move wins and, with best play, the next conversion happens on the
///   `n`-th ply from now (`n >= 1`; a position where the side to move must capture is
///   `Win(1)` or `Loss(1)`).
/// - `Loss(n)`: the side to move loses; `Loss(0)` means it has no legal move (the game is
///   over); otherwise, with best play on both sides (the loser delaying as long as it can),
///   the next conversion happens on the `n`-th ply from now.
/// - Under rules where a side without a move wins (giveaway, [`Rules::no_move_value`]), that
///   position is `Win(0)` instead ([`Dtc::no_move`]).
/// - `Draw`: no distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Dtc {
    /// Won for the side to move, conversion in this many plies.
    Win(u32),
    /// Lost for the side to move, conversion in this many plies (0: no legal move).
    Loss(u32),
    /// Drawn.
    Draw,
}

impl Dtc {
    /// The win/loss/draw value.
    pub fn wld(self) -> Wld {
        match self {
            Dtc::Win(_) => Wld::Win,
            Dtc::Loss(_) => Wld::Loss,
            Dtc::Draw => Wld::Draw,
        }
    }
    /// The distance in plies (`None` for a draw).
    pub fn plies(self) -> Option<u32> {
        match self {
            Dtc::Win(n) | Dtc::Loss(n) => Some(n),
            Dtc::Draw => None,
        }
    }
    /// The value of a position whose side to move has no legal move under `rules`: the
    /// terminal rule [`Rules::no_move_value`] at distance 0 (`Loss(0)` in English, `Win(0)`
    /// in giveaway).
    pub fn no_move<R: Rules>(rules: R) -> Dtc {
        match rules.no_move_value() {
            Wld::Win => Dtc::Win(0),
            Wld::Loss => Dtc::Loss(0),
            Wld::Draw => Dtc::Draw,
        }
    }
    /// The same outcome seen from the other side (win and loss swap, the distance stays).
    pub fn negate(self) -> Dtc {
        match self {
            Dtc::Win(n) => Dtc::Loss(n),
            Dtc::Loss(n) => Dtc::Win(n),
            Dtc::Draw => Dtc::Draw,
        }
    }
}

impl std::fmt::Display for Dtc {
    /// `win 5`, `loss 0`, `draw`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dtc::Win(n) => write!(f, "win {n}"),
            Dtc::Loss(n) => write!(f, "loss {n}"),
            Dtc::Draw => write!(f, "draw"),
        }
    }
}

/// Key bit of the signed-distance blocks in the distance cache (the raw distance blocks
/// have it clear; [`block_key`] never sets it).
const SIGNED_KEY: u64 = 1 << 63;
/// Signed-distance byte of a position the signed block cannot answer.
const SIGNED_ESCAPE: u8 = 255;

/// Signed-distance byte of a position with value `v` (`None`: no value, for a don't-care
/// symbol) and stored distance byte `d` (`dtc::ESCAPE` for a long one): 0 draw, `2d + 1` a
/// win in `d` (`d <= 126`), `2d` a loss in `d` (`1 <= d <= 127`), else [`SIGNED_ESCAPE`].
#[inline]
fn signed_encode(v: Option<Wld>, d: u32) -> u8 {
    match v {
        Some(Wld::Draw) => 0,
        Some(Wld::Win) if d <= 126 => (2 * d + 1) as u8,
        Some(Wld::Loss) if (1..=127).contains(&d) => (2 * d) as u8,
        _ => SIGNED_ESCAPE,
    }
}

/// Inverse of [`signed_encode`] (`None` for the escape).
#[inline(always)]
fn signed_decode(b: u8) -> Option<Dtc> {
    match b {
        0 => Some(Dtc::Draw),
        SIGNED_ESCAPE => None,
        _ if b & 1 == 1 => Some(Dtc::Win(u32::from(b >> 1))),
        _ => Some(Dtc::Loss(u32::from(b >> 1))),
    }
}

struct Slot {
    present: AtomicBool,
    state: OnceLock<Result<Box<Loaded>, ProbeError>>,
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            present: AtomicBool::new(false),
            state: OnceLock::new(),
        }
    }
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
    memo_hits: AtomicU64,
    threat_searches: AtomicU64,
    failed: AtomicU64,
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
    /// Block decodes that failed (a damaged block; it is then remembered as damaged and not
    /// decoded again, so each damaged block counts once unless an I/O error repeats).
    pub blocks_failed: u64,
    /// Cache pages currently filled (a block is cached as pages of 824 base-3 packed bytes, 16
    /// for a default 65,520-position block).
    pub cached_blocks: u64,
    /// Bytes currently counted against the cache budget.
    pub cached_bytes: u64,
    /// Slices opened (successfully or not) so far.
    pub slices_opened: u64,
    /// Threat positions of codec-4 slices resolved by search (no value stored; docs/format.md).
    pub threat_searches: u64,
    /// Threat positions of codec-4 slices answered from the table of values found by earlier
    /// searches (no search).
    pub threat_memo_hits: u64,
    /// Value files holding an open descriptor now (positioned reads; at most
    /// [`TablebaseBuilder::max_open_files`]; memory-mapped files hold none).
    pub open_files: u64,
    /// Value files opened again after being closed to keep the open files within
    /// [`TablebaseBuilder::max_open_files`].
    pub files_reopened: u64,
}

/// Settings for opening a [`Tablebase`]; see [`Tablebase::builder`].
#[derive(Clone, Debug)]
pub struct TablebaseBuilder<R: Rules = English> {
    rules: R,
    dir: PathBuf,
    cache_bytes: usize,
    access: Access,
    verify_on_open: bool,
    allow_empty: bool,
    max_open_files: usize,
    huge_pages: bool,
}

impl<R: Rules> TablebaseBuilder<R> {
    /// Probe under other rules than English (files must carry that rules id).
    pub fn rules<R2: Rules>(self, rules: R2) -> TablebaseBuilder<R2> {
        TablebaseBuilder {
            rules,
            dir: self.dir,
            cache_bytes: self.cache_bytes,
            access: self.access,
            verify_on_open: self.verify_on_open,
            allow_empty: self.allow_empty,
            max_open_files: self.max_open_files,
            huge_pages: self.huge_pages,
        }
    }
    /// The table directory the tablebase will be opened from.
    pub fn directory(&self) -> &Path {
        &self.dir
    }
    /// Budget of the shared cache of decompressed blocks, in bytes (default 64 MiB; 0 disables
    /// caching). The distance caches (of `probe_dtc` and of `probe_dtw`) each get the same
    /// budget, in frames of 16 KiB pages (the WLD cache: 824-byte pages), so a budget under
    /// about 16 KiB caches no distance block (probes stay exact, each decodes). Tables of codec 4 also get a table of the values that searches found for
    /// their threat positions, of one eighth of this budget (8 bytes per position
    /// remembered; allocated on the first such search; none when the budget is 0).
    pub fn cache_bytes(mut self, bytes: usize) -> Self {
        self.cache_bytes = bytes;
        self
    }
    /// Positioned reads (default: [`Access::Pread`]; a file changed or shortened while open
    /// makes its slice's probes fail with [`crate::table::Fault::Changed`]) or memory-mapped
    /// files ([`Access::Mmap`]: one system call less per block decoded, but a file shortened
    /// while mapped kills the process with SIGBUS). The block cache keeps file reads off the
    /// warm path either way.
    pub fn access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }
    /// Most value files kept open at once (default
    /// [`crate::table::DEFAULT_MAX_OPEN_FILES`], 256; at least 1). With positioned reads the
    /// least recently read file is closed when another must be opened, and opened again on its
    /// next block read, after a check that it is still the file validated at first use
    /// (device, inode, length, modification time, header; a replaced file gives
    /// [`crate::table::Fault::Changed`], never a value). Memory-mapped files ([`Access::Mmap`],
    /// and the distance files, always mapped) keep no descriptor open. A probe answered from
    /// the block cache never touches the open files.
    pub fn max_open_files(mut self, n: usize) -> Self {
        self.max_open_files = n.max(1);
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
    /// Ask the kernel to back the block caches with transparent huge pages (Linux
    /// `madvise(MADV_HUGEPAGE)`, a hint, ignored where unsupported; default on, `false`
    /// turns it off). A warm probe of a large cache reads a random cache line, with 4 KiB
    /// pages most often a TLB miss: with huge pages warm `probe_dtc` at 5 pieces took ~35%
    /// less time (docs/format.md, "Probe cache"). Memory is then committed 2 MiB at a time;
    /// the caches fill their frames from the start of their regions, so each cache that is
    /// used holds at most 2 MiB more resident than the pages it filled.
    pub fn huge_pages(mut self, yes: bool) -> Self {
        self.huge_pages = yes;
        self
    }
    /// Open the tablebase: list the directory (files are opened lazily on first use).
    ///
    /// # Errors
    /// [`ProbeError::Io`] if the directory cannot be listed, [`ProbeError::NoTables`] if it
    /// holds no `*.egdb` file (unless [`TablebaseBuilder::allow_empty`]).
    pub fn open(self) -> Result<Tablebase<R>, ProbeError> {
        let tb = Tablebase {
            rules: self.rules,
            slots: SlotTable::new(),
            max_pieces: AtomicU32::new(0),
            // SAFETY: an all-zero `AtomicPtr` is a valid value (the null pointer).
            fast: unsafe { Box::<[AtomicPtr<Loaded>]>::new_zeroed_slice(N_SLOTS).assume_init() },
            cache: BlockCache::new(self.cache_bytes),
            dtc_cache: BlockCache::new(self.cache_bytes),
            memo: ThreatMemo::new(self.cache_bytes / 64),
            bad_blocks: Default::default(),
            dtc_slots: SlotTable::new(),
            dtw_slots: SlotTable::new(),
            dtw_cache: BlockCache::new(self.cache_bytes),
            counters: Striped::new(),
            opened: AtomicU64::new(0),
            slices_present: AtomicU64::new(0),
            scans: AtomicU64::new(0),
            dir: self.dir,
            access: self.access,
            verify_on_open: self.verify_on_open,
            files: FilePool::new(self.max_open_files),
            packs: Default::default(),
        };
        if self.huge_pages {
            tb.cache.huge_pages();
            tb.dtc_cache.huge_pages();
            tb.dtw_cache.huge_pages();
        }
        let n = tb.rescan()?;
        if n == 0 && !self.allow_empty {
            return Err(ProbeError::NoTables { dir: tb.dir });
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
pub struct Tablebase<R: Rules = English> {
    rules: R,
    dir: PathBuf,
    access: Access,
    verify_on_open: bool,
    /// The open descriptors of the value files read with positioned reads (bounded, LRU).
    files: Arc<FilePool>,
    slots: SlotTable<Slot>,
    max_pieces: AtomicU32,
    /// Slot ([`slot_of`]) -> its loaded table once opened successfully (null
    /// before). Points into the `Box<Loaded>` owned by the slot's `OnceLock`, which is never
    /// replaced while the tablebase lives: the lock-free path of every probe.
    fast: Box<[AtomicPtr<Loaded>]>,
    cache: BlockCache,
    counters: Striped,
    opened: AtomicU64,
    slices_present: AtomicU64,
    /// Directory listings so far ([`Tablebase::rescan`]): a distance file found missing is
    /// looked for again after the next one.
    scans: AtomicU64,
    /// Distance files, opened on first use (one per slice, like the WLD slots).
    dtc_slots: SlotTable<DtcSlot>,
    /// Decoded distance blocks (same cache design as the WLD blocks, its own budget).
    dtc_cache: BlockCache<DTC_PAGE_BYTES>,
    /// Depth-to-win files (`.dtw`, issue 33), opened on first use.
    dtw_slots: SlotTable<DtcSlot>,
    /// Decoded depth-to-win blocks (its own cache: keys are per slice and block).
    dtw_cache: BlockCache<DTC_PAGE_BYTES>,
    /// Values found by search for threat positions of codec-4 slices.
    memo: ThreatMemo,
    /// Blocks (cache keys) found damaged ([`crate::table::TableError::Corrupt`]), with the
    /// error: asked again, they fail at once instead of being read and decoded again (a
    /// codec-5 decode takes milliseconds).
    bad_blocks: std::sync::Mutex<std::collections::HashMap<u64, ProbeError>>,
    /// Indexes of the material files (`egdb pack`) read so far, by path, with the identity
    /// of the file read ([`FileId`]): each is read once, not once per slice opened, and again
    /// when the file under the path changed (packed again while this handle lives: its
    /// members' offsets moved); [`Tablebase::rescan`] forgets them.
    packs: std::sync::Mutex<
        std::collections::HashMap<PathBuf, (FileId, Arc<crate::table::pack::PackIndex>)>,
    >,
}

impl<R: Rules> std::fmt::Debug for Tablebase<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tablebase")
            .field("rules", &R::NAME)
            .field("dir", &self.dir)
            .field("max_pieces", &self.max_pieces())
            .finish()
    }
}

impl Tablebase {
    /// Open the English tables in `dir` with default settings (64 MiB cache, positioned
    /// reads).
    ///
    /// # Errors
    /// See [`TablebaseBuilder::open`].
    pub fn open(dir: impl AsRef<Path>) -> Result<Tablebase, ProbeError> {
        Tablebase::builder(dir).open()
    }

    /// Settings for opening the tables in `dir`.
    pub fn builder(dir: impl AsRef<Path>) -> TablebaseBuilder {
        TablebaseBuilder {
            rules: English,
            dir: dir.as_ref().to_path_buf(),
            cache_bytes: 64 << 20,
            access: Access::Pread,
            verify_on_open: false,
            allow_empty: false,
            max_open_files: crate::table::DEFAULT_MAX_OPEN_FILES,
            huge_pages: true,
        }
    }
}

impl<R: Rules> Tablebase<R> {
    /// The rules the tables are probed under.
    pub fn rules(&self) -> R {
        self.rules
    }

    /// The table directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Largest piece count of any table file found.
    pub fn max_pieces(&self) -> u32 {
        self.max_pieces.load(Ordering::Relaxed)
    }

    /// Whether the file of the stored (Black-to-move) slice `s` was found (by the open or a
    /// later [`Tablebase::rescan`]); a present file may still fail to open.
    pub fn has_slice(&self, s: &Slice) -> bool {
        self.slots
            .get(s, false)
            .is_some_and(|slot| slot.present.load(Ordering::Acquire))
    }

    /// Whether the tables hold `p`'s slice: the file of [`Slice::of`] its Black-to-move form
    /// ([`Position::normalized`]) was found. A directory may hold only some slices of its
    /// largest piece count (a build in progress, or `egdb build --slice`).
    pub fn covers(&self, p: &Position) -> bool {
        self.has_slice(&Slice::of(&p.normalized()))
    }

    /// Number of slice files found so far.
    pub fn slice_count(&self) -> u64 {
        self.slices_present.load(Ordering::Relaxed)
    }

    /// List the directory again and make newly written files available (files already known
    /// keep their state: a slice opened before is not reopened; distance files found missing
    /// before are looked for again). Returns the number of slice files known after the scan.
    ///
    /// # Errors
    /// [`ProbeError::Io`] if the directory cannot be listed.
    pub fn rescan(&self) -> Result<u64, ProbeError> {
        let io = |e: std::io::Error| ProbeError::Io {
            dir: self.dir.clone(),
            source: SharedIoError(Arc::new(e)),
        };
        // Slice files and the members of material files (`egdb pack`); a damaged material
        // file's slices stay unknown here and its error comes with the first probe that needs
        // one of them (the slice file is then looked for, then the material file again).
        self.packs.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.scans.fetch_add(1, Ordering::AcqRel);
        let listed =
            crate::table::pack::list(&self.dir, crate::table::FileKind::Wld).map_err(io)?;
        for entry in listed {
            let s = match entry {
                crate::table::pack::Listed::Slice(s, _) => s,
                crate::table::pack::Listed::BadPack(m, ..) => {
                    for s in Slice::all_of(m) {
                        if let Some(slot) = self.slots.get(&s, true) {
                            if !slot.present.swap(true, Ordering::AcqRel) {
                                self.slices_present.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    continue;
                }
            };
            if s.material.pieces() > MAX_PIECES {
                continue;
            }
            if let Some(slot) = self.slots.get(&s, true) {
                if !slot.present.swap(true, Ordering::AcqRel) {
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
        if let Some(id) = slot_of(s) {
            let p = self.fast[id].load(Ordering::Acquire);
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
        let missing = || ProbeError::MissingSlice { slice: *s };
        let slot = self.slots.get(s, false).ok_or_else(missing)?;
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

    /// Where slice `s`'s file of `kind` is: its own file, or its member of the material file
    /// (whose index is read once, kept in `packs`); `None` when neither holds it.
    fn source_of(
        &self,
        s: &Slice,
        kind: crate::table::FileKind,
    ) -> Result<Option<crate::table::pack::Source>, ProbeError> {
        use crate::table::pack::{pack_path, read_index, slice_path, Source};
        let own = slice_path(&self.dir, s, kind);
        if own.is_file() {
            return Ok(Some(Source::file(own)));
        }
        let pack = pack_path(&self.dir, &s.material, kind);
        // The file under the path now (a stat per slice opened, not per probe).
        let Ok(md) = std::fs::metadata(&pack) else {
            return Ok(None);
        };
        let id = FileId::of(&md);
        let cached = self
            .packs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&pack)
            .filter(|(had, _)| *had == id)
            .map(|(_, i)| i.clone());
        let index = match cached {
            Some(i) => i,
            None => {
                // Read after the stat: a file replaced in between has another identity, so
                // the next slice opened reads its index again.
                let i = Arc::new(read_index(&pack)?);
                self.packs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(pack.clone(), (id, i.clone()));
                i
            }
        };
        Ok(index.member(s).map(|m| Source {
            path: pack,
            range: Some((m.offset, m.len)),
        }))
    }

    fn open_slice(&self, s: &Slice) -> Result<Box<Loaded>, ProbeError> {
        // Its own file, or its member of the material file (`egdb pack`).
        let src = self
            .source_of(s, crate::table::FileKind::Wld)?
            .ok_or(ProbeError::MissingSlice { slice: *s })?;
        // `open_source` makes sure the file holds slice `s`, the header check that it holds
        // every position of its slice and was built under these rules.
        let pool = (self.access == Access::Pread).then_some(&self.files);
        let file = TableFile::open_source(&src, s, self.access, R::ID, pool)?;
        if self.verify_on_open {
            file.verify_checksum()?;
        }
        Ok(Box::new(Loaded {
            block_div: Divider::new(file.block_positions() as u64),
            uniform: file.uniform(),
            slot: slot_of(s).unwrap_or(0),
            threats_dc: file.threats_dont_care(),
            dtc_fast: OnceLock::new(),
            file,
            index: SliceIndex::new(*s),
        }))
    }

    /// Stored value of a quiet Black-to-move position (through the cache).
    #[inline]
    fn lookup(&self, p: &Position, cached_only: bool) -> Result<Wld, ProbeError> {
        let t = self.loaded(&Slice::of(p), cached_only)?;
        self.read_loaded(t, p, cached_only)
    }

    /// [`RawSource::raw_quiet`] through the cache: one slot lookup; `threat` is called only
    /// for a codec-4 slice.
    #[inline]
    fn lookup_quiet(
        &self,
        p: &Position,
        cached_only: bool,
        threat: &dyn Fn() -> bool,
    ) -> Result<Option<Wld>, ProbeError> {
        let t = self.loaded(&Slice::of(p), cached_only)?;
        if t.threats_dc {
            // Only threat positions (the side not to move has a capture) may be unstored: the
            // others are read at once, without touching the memo.
            let flipped = Position {
                side: p.side.opponent(),
                ..*p
            };
            if !self.rules.has_capture(&flipped) {
                return self.read_loaded(t, p, cached_only).map(Some);
            }
            // A threat position searched before is answered from the memo, without the
            // threat test or the search.
            let index = t.index.rank(p);
            if let Some(v) = self.memo.get(t.slot, index) {
                self.counters
                    .mine()
                    .memo_hits
                    .fetch_add(1, Ordering::Relaxed);
                return Ok(Some(v));
            }
            if threat() {
                self.counters
                    .mine()
                    .threat_searches
                    .fetch_add(1, Ordering::Relaxed);
                return Ok(None);
            }
            return self.value_at(t, index, cached_only).map(Some);
        }
        self.read_loaded(t, p, cached_only).map(Some)
    }

    /// Remember the value a search found for the threat position `p` of a codec-4 slice.
    fn remember_threat(&self, p: &Position, value: Wld) {
        if let Ok(t) = self.loaded(&Slice::of(p), true) {
            if t.threats_dc {
                self.memo.put(t.slot, t.index.rank(p), value);
            }
        }
    }

    /// Stored value of the quiet Black-to-move position `p` of the loaded slice `t`.
    #[inline]
    fn read_loaded(&self, t: &Loaded, p: &Position, cached_only: bool) -> Result<Wld, ProbeError> {
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
        if let Some(b) = self.cache.byte(key, offset / Wld2Bit::PER_BYTE) {
            c.hits.fetch_add(1, Ordering::Relaxed);
            let symbol = Wld2Bit::symbol_in_byte(b, offset % Wld2Bit::PER_BYTE);
            return Ok(Wld2Bit::value(symbol).unwrap_or(Wld::Draw));
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
        if cached_only {
            // A block stored as a constant needs no I/O.
            return match t.file.block_constant(block)? {
                Some(w) => Ok(w),
                None => Err(ProbeError::NotInCache),
            };
        }
        if let Some(e) = self
            .bad_blocks
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned())
        {
            return Err(e);
        }
        // Codec 6 decodes the one cache page that holds the position (a segment of the block).
        let page = t
            .file
            .pages_decode_alone()
            .then_some(offset / crate::table::cm6::SEGMENT);
        let decoded = match page {
            Some(pg) => t.file.decode_page(block, pg),
            None => t.file.decode_block(block),
        };
        let decoded = decoded.map_err(|e| {
            self.counters.mine().failed.fetch_add(1, Ordering::Relaxed);
            // Damage is remembered; an I/O error (perhaps passing) is tried again next time.
            let damaged = matches!(e, crate::table::TableError::Corrupt { .. });
            let e = ProbeError::from(e);
            if damaged {
                if let Ok(mut m) = self.bad_blocks.lock() {
                    m.insert(key, e.clone());
                }
            }
            e
        });
        match decoded? {
            Block::Const(w) => Ok(w),
            Block::Packed(p) => {
                self.counters.mine().decoded.fetch_add(1, Ordering::Relaxed);
                let v = match page {
                    Some(pg) => {
                        let v =
                            Wld2Bit::memory_symbol(&p, offset - pg * crate::table::cm6::SEGMENT);
                        self.cache.insert_page(key, pg, &p);
                        v
                    }
                    None => {
                        self.cache.insert(key, &p);
                        Wld2Bit::memory_symbol(&p, offset)
                    }
                };
                Ok(Wld2Bit::value(v).unwrap_or(Wld::Draw))
            }
        }
    }

    fn check(&self, p: &Position) -> Result<(), ProbeError> {
        self.counters.mine().probes.fetch_add(1, Ordering::Relaxed);
        self.rules.validate(p)?;
        let pieces = p.piece_count();
        let max = self.max_pieces();
        if pieces > max {
            return Err(ProbeError::TooManyPieces { pieces, max });
        }
        Ok(())
    }

    /// Exact value for the side to move of any position with at most
    /// [`Tablebase::max_pieces`] pieces; captures are resolved by search (see `resolve_with`).
    ///
    /// # Errors
    /// [`ProbeError::TooManyPieces`], [`ProbeError::InvalidPosition`],
    /// [`ProbeError::MissingSlice`] (naming the slice, even one needed only while resolving
    /// captures), [`ProbeError::Table`] (a damaged or unreadable file).
    pub fn probe_wld(&self, p: &Position) -> Result<Wld, ProbeError> {
        self.check(p)?;
        resolve_with(self.rules, self, p)
    }

    /// Value of a quiet position (the side to move has no capture): one table lookup, no search
    /// (except for a threat position of a codec-4 slice, which stores no value there,
    /// [`crate::probe::resolve::is_dont_care`]: a search of at most two plies, as
    /// [`Tablebase::probe_wld`]).
    ///
    /// # Errors
    /// [`ProbeError::CapturePosition`] if the side to move has a capture, else as
    /// [`Tablebase::probe_wld`].
    pub fn probe_wld_raw(&self, p: &Position) -> Result<Wld, ProbeError> {
        self.check(p)?;
        if self.rules.has_capture(p) {
            return Err(ProbeError::CapturePosition);
        }
        if !self.rules.has_quiet_move(p) {
            return Ok(self.rules.no_move_value());
        }
        let n = p.normalized();
        match self.lookup_quiet(&n, false, &|| threat_search(self.rules, p))? {
            Some(v) => Ok(v),
            None => {
                let v = best_successor(self.rules, self, p)?;
                self.remember_threat(&n, v);
                Ok(v)
            }
        }
    }

    /// [`Tablebase::probe_wld`] that never reads a file or decompresses a block (the
    /// "conditional" lookup of engines): [`ProbeError::NotInCache`] when a needed block or
    /// slice is not loaded yet.
    ///
    /// # Errors
    /// [`ProbeError::NotInCache`], else as [`Tablebase::probe_wld`].
    pub fn probe_wld_cached(&self, p: &Position) -> Result<Wld, ProbeError> {
        self.check(p)?;
        resolve_with(self.rules, &CachedOnly(self), p)
    }

    /// [`Tablebase::probe_wld`] of many positions, in parallel (rayon); results in input order.
    pub fn probe_many(&self, positions: &[Position]) -> Vec<Result<Wld, ProbeError>> {
        positions.par_iter().map(|p| self.probe_wld(p)).collect()
    }

    /// Distance to conversion ([`Dtc`], plies, side to move's view) of any position with at
    /// most [`Tablebase::max_pieces`] pieces. The value comes from the WLD tables (captures
    /// resolved by search, as [`Tablebase::probe_wld`]); a draw is [`Dtc::Draw`], a position
    /// whose side to move must capture has distance 1, one without a legal move `Loss(0)`;
    /// otherwise the distance is read from the slice's distance file (`<slice>.dtc`, built by
    /// `egdb build --dtc`) through its own block cache.
    ///
    /// # Errors
    /// As [`Tablebase::probe_wld`]; [`ProbeError::MissingDtc`] when the slice has no distance
    /// file; [`ProbeError::Table`] for a damaged one.
    pub fn probe_dtc(&self, p: &Position) -> Result<Dtc, ProbeError> {
        self.check(p)?;
        if self.rules.has_capture(p) {
            // Every move converts: distance 1 (the value by capture resolution).
            return Ok(match resolve_with(self.rules, self, p)? {
                Wld::Win => Dtc::Win(1),
                Wld::Loss => Dtc::Loss(1),
                Wld::Draw => Dtc::Draw,
            });
        }
        if !self.rules.has_quiet_move(p) {
            return Ok(Dtc::no_move(self.rules));
        }
        // A quiet position: the same slice and index in the WLD and the distance file.
        let n = p.normalized();
        let s = Slice::of(&n);
        let t = self.loaded(&s, false)?;
        let index = t.index.rank(&n);
        // The one-lookup path: the signed-distance block (value and distance in one byte) of
        // the position's distance block. Everything it cannot answer (codec-4 slices, uniform
        // files, a missing or damaged file, long distances) takes the two-lookup path below,
        // which also reports the errors.
        if !t.threats_dc && t.uniform.is_none() {
            let fast = match t.dtc_fast.get() {
                Some(f) => *f,
                None => match self.dtc_loaded(&s) {
                    Ok(dl) => *t.dtc_fast.get_or_init(|| {
                        dl.file
                            .uniform()
                            .is_none()
                            .then(|| (dl.block_div, block_key(dl.slot, 0) | SIGNED_KEY))
                    }),
                    Err(_) => None,
                },
            };
            if let Some((div, base)) = fast {
                let (block, offset) = div.divrem(index);
                let offset = offset as usize;
                let key = base | (block << 8);
                let b = match self.dtc_cache.byte(key, offset) {
                    Some(b) => Some(b),
                    None => self.fill_signed(t, &s, block, key, offset),
                };
                if let Some(d) = b.and_then(signed_decode) {
                    return Ok(d);
                }
            }
        }
        let v = if t.threats_dc {
            // A threat position of a codec-4 slice: no stored value, a search of at most two
            // plies (or its value remembered from an earlier one).
            match self.lookup_quiet(&n, false, &|| threat_search(self.rules, p))? {
                Some(v) => v,
                None => {
                    let v = best_successor(self.rules, self, p)?;
                    self.remember_threat(&n, v);
                    v
                }
            }
        } else {
            self.value_at(t, index, false)?
        };
        if v == Wld::Draw {
            return Ok(Dtc::Draw);
        }
        let d = self.dtc_at(self.dtc_loaded(&s)?, index)?;
        Ok(if v == Wld::Win {
            Dtc::Win(d)
        } else {
            Dtc::Loss(d)
        })
    }

    /// Depth to win (issue 33; [`Dtc`] variants, plies, side to move's view) of any position
    /// with at most [`Tablebase::max_pieces`] pieces: `Win(n)`: the side to move wins and, the
    /// winner playing fastest and the loser slowest, the game ends on the `n`-th ply from now
    /// with the loser unable to move (`n` odd); `Loss(n)`: it loses, `Loss(0)` when it has no
    /// legal move (`n` even); `Draw`. The value comes from the WLD tables (captures resolved
    /// by search, as [`Tablebase::probe_wld`]), the depth from the slice's `<slice>.dtw`
    /// (built by `egdb build --dtw`; capture positions are stored too) through its own block
    /// cache. Every move counts, captures and man moves included (`crate::table::dtw`).
    ///
    /// # Errors
    /// As [`Tablebase::probe_wld`]; [`ProbeError::MissingDtw`] when the slice has no
    /// depth-to-win file; [`ProbeError::Table`] for a damaged one.
    pub fn probe_dtw(&self, p: &Position) -> Result<Dtc, ProbeError> {
        self.check(p)?;
        let n = p.normalized();
        if n.black == 0 || !self.rules.has_move(p) {
            return Ok(Dtc::no_move(self.rules));
        }
        let v = self.probe_wld(p)?;
        if v == Wld::Draw {
            return Ok(Dtc::Draw);
        }
        let s = Slice::of(&n);
        let t = self.loaded(&s, false)?;
        let index = t.index.rank(&n);
        let dl = self.distance_loaded(&s, true)?;
        let d = self.distance_at(dl, index, &self.dtw_cache)?;
        // A win ends on the winner's move (odd plies), a loss on the opponent's (even): a depth
        // of the other parity is a file that does not belong to these values.
        if (v == Wld::Win) != (d % 2 == 1) {
            return Err(crate::table::TableError::corrupt(
                dl.file.path(),
                crate::table::Fault::BlockDecode {
                    block: dl.block_div.divrem(index).0,
                    why: format!("depth {d} at index {index}, whose value is {v:?}"),
                },
            )
            .into());
        }
        Ok(if v == Wld::Win {
            Dtc::Win(d)
        } else {
            Dtc::Loss(d)
        })
    }

    /// Whether the depth-to-win file (`<slice>.dtw`) of `p`'s slice is there and opens (it is
    /// opened, and kept, for [`Tablebase::probe_dtw`]).
    ///
    /// # Errors
    /// An invalid position, too many pieces; a damaged `.dtw` file, or one whose win and loss
    /// counts are not its value file's ([`ProbeError::Table`]); the value file's error when
    /// the `.dtw` file is there but the value file is missing or does not open (a distance
    /// file is only kept once checked against its value file).
    pub fn has_dtw(&self, p: &Position) -> Result<bool, ProbeError> {
        self.check(p)?;
        match self.distance_loaded(&Slice::of(&p.normalized()), true) {
            Ok(_) => Ok(true),
            Err(ProbeError::MissingDtw { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The depth stored for `p` in its slice's depth-to-win file (`<slice>.dtw`), plies,
    /// without deciding the value: for a won or lost position its DTW, for a drawn one the
    /// writer's filler (meaningless). `p` is normalized (colours flipped when White is to
    /// move) to find the entry. For `egdb verify`, which decides the values itself and
    /// re-derives every stored depth from the successors' stored depths; everyone else wants
    /// [`Tablebase::probe_dtw`].
    ///
    /// # Errors
    /// As [`Tablebase::probe_dtw`] for the slice and its files.
    pub fn stored_dtw(&self, p: &Position) -> Result<u32, ProbeError> {
        self.check(p)?;
        let n = p.normalized();
        let s = Slice::of(&n);
        let t = self.loaded(&s, false)?;
        let index = t.index.rank(&n);
        self.distance_at(self.distance_loaded(&s, true)?, index, &self.dtw_cache)
    }

    /// Build and cache the signed-distance block of distance block `block` of slice `s` (the
    /// slice of `t`, a WLD file with stored blocks, no codec-4 don't-cares) and return
    /// the byte at `offset`. `None` (nothing cached) when a block of either file does not
    /// decode or the block is too large to cache: the caller then takes the two-lookup path,
    /// which reports the error where it concerns the position asked.
    #[cold]
    #[inline(never)]
    fn fill_signed(
        &self,
        t: &Loaded,
        s: &Slice,
        block: u64,
        key: u64,
        offset: usize,
    ) -> Option<u8> {
        let dl = self.dtc_loaded(s).ok()?;
        debug_assert_eq!(key, block_key(dl.slot, block) | SIGNED_KEY);
        let n = dl.file.positions_in_block(block);
        if !BlockCache::<DTC_PAGE_BYTES>::fits(n) {
            return None;
        }
        let dist = dl.file.decode_block(block).ok()?;
        self.counters.mine().decoded.fetch_add(1, Ordering::Relaxed);
        let start = block * u64::from(dl.file.block_positions());
        let end = start + n as u64;
        let wb = t.file.block_positions() as u64;
        let mut out = vec![SIGNED_ESCAPE; n];
        let mut g = start;
        while g < end {
            let b = g / wb;
            let b_start = b * wb;
            let b_end = (b_start + wb).min(end);
            let wld = self.wld_block(t, b)?;
            for (i, o) in out[(g - start) as usize..(b_end - start) as usize]
                .iter_mut()
                .enumerate()
            {
                let gi = g + i as u64;
                let v = match &wld {
                    Block::Const(w) => Some(*w),
                    Block::Packed(p) => {
                        Wld2Bit::value(Wld2Bit::memory_symbol(p, (gi - b_start) as usize))
                    }
                };
                let j = (gi - start) as usize;
                let d = match &dist {
                    crate::table::DtcBlock::Const(d) => *d,
                    crate::table::DtcBlock::Data(m) => u32::from(m[j]),
                };
                *o = signed_encode(v, d);
            }
            g = b_end;
        }
        self.dtc_cache.insert(key, &out);
        Some(out[offset])
    }

    /// The memory form of WLD block `b` of `t` (decoded, and cached as the value probes
    /// would), or `None` if it does not decode (remembered when damaged, as `value_miss`).
    fn wld_block(&self, t: &Loaded, b: u64) -> Option<Block> {
        let key = block_key(t.slot, b);
        if self.bad_blocks.lock().ok()?.contains_key(&key) {
            return None;
        }
        match t.file.decode_block(b) {
            Ok(Block::Packed(p)) => {
                self.counters.mine().decoded.fetch_add(1, Ordering::Relaxed);
                self.cache.insert(key, &p);
                Some(Block::Packed(p))
            }
            Ok(c) => Some(c),
            Err(e) => {
                self.counters.mine().failed.fetch_add(1, Ordering::Relaxed);
                if matches!(e, crate::table::TableError::Corrupt { .. }) {
                    if let Ok(mut m) = self.bad_blocks.lock() {
                        m.insert(key, ProbeError::from(e));
                    }
                }
                None
            }
        }
    }

    fn dtc_loaded(&self, s: &Slice) -> Result<&DtcLoaded, ProbeError> {
        self.distance_loaded(s, false)
    }

    /// The distance file of `s`: `.dtc` (`dtw` false) or `.dtw`.
    fn distance_loaded(&self, s: &Slice, dtw: bool) -> Result<&DtcLoaded, ProbeError> {
        let missing = || {
            if dtw {
                ProbeError::MissingDtw { slice: *s }
            } else {
                ProbeError::MissingDtc { slice: *s }
            }
        };
        let slots = if dtw {
            &self.dtw_slots
        } else {
            &self.dtc_slots
        };
        let slot = slots.get(s, true).ok_or_else(missing)?;
        if let Some(r) = slot.loaded.get() {
            return r.as_deref().map_err(Clone::clone);
        }
        // A file found missing is not looked for again until the next rescan (a stat per
        // probe otherwise), but it is not kept missing for good: a distance file built later
        // is found after `rescan`.
        let scan = self.scans.load(Ordering::Acquire) + 1;
        if slot.missing_at.load(Ordering::Acquire) == scan {
            return Err(missing());
        }
        let kind = if dtw {
            crate::table::FileKind::Dtw
        } else {
            crate::table::FileKind::Dtc
        };
        // Its own file, or its member of the material file (`egdb pack`).
        let src = match self.source_of(s, kind) {
            Ok(Some(src)) => src,
            Ok(None) => {
                slot.missing_at.store(scan, Ordering::Release);
                return Err(missing());
            }
            // A damaged material file: kept, like a damaged file.
            Err(e) => {
                return slot
                    .loaded
                    .get_or_init(|| Err(e))
                    .as_deref()
                    .map_err(Clone::clone)
            }
        };
        // A distance file carries its value file's win and loss counts: one of another build
        // (a copy, a rebuilt value file) is refused, not read as distances. So the value file
        // is opened first, and a distance file is never kept unchecked: while the value file
        // is missing or does not open, its error is the answer (and the distance file is
        // looked at again on the next call, after a `rescan` has found the value file).
        let t = self.loaded(s, false)?;
        let r = slot.loaded.get_or_init(|| {
            let file = crate::table::DtcFile::open_source(&src, Some(s), R::ID, kind)?;
            if self.verify_on_open {
                file.verify_checksum()?;
            }
            {
                let (dm, m) = (file.meta(), t.file.meta());
                if (dm.wins, dm.losses) != (m.wins, m.losses) {
                    return Err(crate::table::TableError::corrupt(
                        file.path(),
                        crate::table::Fault::BadHeader(format!(
                            "{} wins, {} losses; the value file of {s} says {}, {}",
                            dm.wins, dm.losses, m.wins, m.losses
                        )),
                    )
                    .into());
                }
            }
            Ok(Box::new(DtcLoaded {
                block_div: Divider::new(u64::from(file.block_positions())),
                slot: slot_of(s).unwrap_or(0),
                file,
            }))
        });
        r.as_deref().map_err(Clone::clone)
    }

    fn dtc_at(&self, t: &DtcLoaded, index: u64) -> Result<u32, ProbeError> {
        self.distance_at(t, index, &self.dtc_cache)
    }

    fn distance_at(
        &self,
        t: &DtcLoaded,
        index: u64,
        cache: &BlockCache<DTC_PAGE_BYTES>,
    ) -> Result<u32, ProbeError> {
        if let Some(u) = t.file.uniform() {
            return Ok(u);
        }
        let (block, offset) = t.block_div.divrem(index);
        let offset = offset as usize;
        let key = block_key(t.slot, block);
        if let Some(b) = cache.byte(key, offset) {
            if b != crate::table::dtc::ESCAPE {
                return Ok(u32::from(b));
            }
        }
        // Miss, or an escaped (long) distance: decode the block.
        let n = t.file.positions_in_block(block);
        match t.file.decode_block(block)? {
            crate::table::DtcBlock::Const(d) => Ok(d),
            crate::table::DtcBlock::Data(m) => {
                self.counters.mine().decoded.fetch_add(1, Ordering::Relaxed);
                let d = crate::table::dtc::dtc_in_block(&m, n, offset);
                cache.insert(key, &m);
                Ok(d)
            }
        }
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
            blocks_failed: c.sum(|c| &c.failed),
            cached_blocks: occupied,
            cached_bytes: occupied * FRAME_COST as u64,
            slices_opened: self.opened.load(Ordering::Relaxed),
            threat_searches: c.sum(|c| &c.threat_searches),
            threat_memo_hits: c.sum(|c| &c.memo_hits),
            open_files: self.files.open_files() as u64,
            files_reopened: self.files.reopens(),
        }
    }
}

impl<R: Rules> RawSource for Tablebase<R> {
    fn raw(&self, slice: &Slice, index: u64) -> Result<Wld, ProbeError> {
        let t = self.loaded(slice, false)?;
        if index >= t.file.meta().positions {
            return Err(ProbeError::IndexOutOfRange {
                slice: *slice,
                index,
            });
        }
        self.value_at(t, index, false)
    }
    #[inline]
    fn raw_position(&self, p: &Position) -> Result<Wld, ProbeError> {
        self.lookup(p, false)
    }
    fn threats_dont_care(&self, slice: &Slice) -> Result<bool, ProbeError> {
        Ok(self.loaded(slice, false)?.threats_dc)
    }
    #[inline]
    fn raw_quiet(
        &self,
        p: &Position,
        threat: &dyn Fn() -> bool,
    ) -> Result<Option<Wld>, ProbeError> {
        self.lookup_quiet(p, false, threat)
    }
    fn threat_resolved(&self, p: &Position, value: Wld) {
        self.remember_threat(p, value);
    }
}

struct CachedOnly<'a, R: Rules>(&'a Tablebase<R>);

impl<R: Rules> RawSource for CachedOnly<'_, R> {
    fn raw(&self, slice: &Slice, index: u64) -> Result<Wld, ProbeError> {
        let t = self.0.loaded(slice, true)?;
        if index >= t.file.meta().positions {
            return Err(ProbeError::IndexOutOfRange {
                slice: *slice,
                index,
            });
        }
        self.0.value_at(t, index, true)
    }
    fn raw_position(&self, p: &Position) -> Result<Wld, ProbeError> {
        self.0.lookup(p, true)
    }
    fn threats_dont_care(&self, slice: &Slice) -> Result<bool, ProbeError> {
        Ok(self.0.loaded(slice, true)?.threats_dc)
    }
    fn raw_quiet(
        &self,
        p: &Position,
        threat: &dyn Fn() -> bool,
    ) -> Result<Option<Wld>, ProbeError> {
        self.0.lookup_quiet(p, true, threat)
    }
    fn threat_resolved(&self, p: &Position, value: Wld) {
        self.0.remember_threat(p, value);
    }
}
