//! The dependency store: whole slices decoded into memory, 2 bits per position, for the
//! generator (values of slices built earlier) and the verifier. Shares the slot scheme of the
//! probe library ([`crate::probe::slots`]) and the WLD codec's packing
//! ([`crate::table::Wld2Bit`]).

use crate::board::{Position, Wld};
use crate::index::SliceIndex;
use crate::memory::{admit, decoded_bytes, evictions, spill_cache_bytes, unit_reads};
use crate::plan::Unit;
use crate::probe::slots::{SlotTable, MAX_PIECES};
use crate::probe::Tablebase;
use crate::probe::{ProbeError, RawSource};
use crate::rules::{English, Rules};
use crate::slice::Slice;
use crate::table::{table_path, TableFile, ValueCodec, Wld2Bit};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

/// Dependency values: whole slices decoded into memory from their files on first use
/// (checksum verified), or handed over by the generator as soon as they are solved; packed
/// 2 bits per position (`Wld2Bit`'s stored form), shared by all threads.
///
/// Lookups go through a direct slot table keyed by (material, leading ranks), so the hot path
/// is two array loads and no hashing or locking.
///
/// # Releasing and the budget
/// A store made by [`DecodedTables::with_budget`] is driven by the generator between units
/// (methods taking `&mut self`, so no lookup runs meanwhile): [`DecodedTables::release`] drops a
/// slice that no remaining unit reads, and [`DecodedTables::begin_unit`] decides which of the
/// unit's reads (`crate::memory::unit_reads`) may be decoded within the budget
/// (`crate::memory::admit`), evicting other slices if needed
/// (`crate::memory::evictions`). A read that is not admitted is served from its compressed
/// file through a block cache (a [`Tablebase`] of `spill_cache_bytes`). Values are the same
/// whichever way a slice is served, so the build's output does not depend on the budget.
/// Freshly solved slices ([`DecodedTables::insert`]) are evicted only once their file exists.
pub struct DecodedTables {
    dir: PathBuf,
    rules: u32,
    slots: SlotTable<Cell>,
    /// Serialises the (slow) loading of a slice so it is decoded once.
    loading: Mutex<()>,
    /// Budget for decoded slices and the block cache (`None`: unbounded, nothing spilled).
    budget: Option<u64>,
    /// Resident slices and their decoded bytes (updated on the cold paths only).
    resident: Mutex<BTreeMap<Slice, u64>>,
    /// Slices whose `admitted` flag is set for the current unit.
    admitted: Vec<Slice>,
    /// Slices outside the unit's reads met by a lookup during the current unit (flag set to
    /// admitted or spilled on the cold path).
    met: Mutex<Vec<Slice>>,
    /// Bytes of decoded slices allowed during the current unit (under a budget).
    room: AtomicU64,
    /// The spill source, opened on first use, under the store's rules.
    spill: OnceLock<Box<dyn SpillSource>>,
    /// Slices released at least once, and those of them decoded again afterwards (read
    /// after their last listed reader, through chains of captures): [`DecodedTables::release_done`]
    /// keeps the latter from then on, so a slice is not decoded again for every later unit.
    released_once: Mutex<std::collections::HashSet<Slice>>,
    sticky: Mutex<std::collections::HashSet<Slice>>,
    /// Slices handed over by [`DecodedTables::insert`] whose new file is not known to be
    /// written yet ([`DecodedTables::written`]): never dropped, since their file may still be
    /// missing or, when a damaged file is being rewritten, the old damaged one.
    unwritten: Mutex<std::collections::HashSet<Slice>>,
    counters: Counters,
    /// This store's generation for the lookup memo ([`LOOKUP_MEMO`]): unique among all
    /// stores of the process, and renewed whenever a decoded slice is dropped (`&mut self`).
    generation: u64,
}

/// Source of [`DecodedTables::generation`] values (0 is never handed out: an empty memo entry).
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

fn next_generation() -> u64 {
    NEXT_GENERATION.fetch_add(1, Ordering::Relaxed)
}

/// One entry of the lookup memo: for the men of a Black-to-move position and its numbers of
/// kings (which together fix the slice), the slice's decoded values and the men's part of
/// the index.
#[derive(Clone, Copy)]
struct MemoEntry {
    /// Black men in the low 32 bits, white men in the high 32.
    men: u64,
    /// Black kings * 256 + white kings.
    kings: u32,
    /// Generation of the store the entry belongs to (0: empty).
    generation: u64,
    /// The slice's values: live while the store's generation is `generation`.
    decoded: *const Decoded,
    /// [`SliceIndex::men_base`] of the men.
    men_base: u64,
}

const MEMO_ENTRIES: usize = 32;

thread_local! {
    /// Per-thread memo of [`DecodedTables::lookup`]'s exact path, direct-mapped by men and
    /// king counts. Consecutive positions of a unit share their men (kings vary fastest in the
    /// index), so their exits and capture successors repeat the same few men configurations:
    /// a hit skips the slice computation, the slot lookup and the men's rank.
    static LOOKUP_MEMO: [std::cell::Cell<MemoEntry>; MEMO_ENTRIES] = const {
        [const {
            std::cell::Cell::new(MemoEntry {
                men: 0,
                kings: 0,
                generation: 0,
                decoded: std::ptr::null(),
                men_base: 0,
            })
        }; MEMO_ENTRIES]
    };
}

#[derive(Default)]
struct Counters {
    loaded: AtomicU64,
    released: AtomicU64,
    evicted: AtomicU64,
    spilled_lookups: AtomicU64,
    peak_resident: AtomicU64,
}

/// Counters of a [`DecodedTables`] (for reports and tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Slices decoded from their files.
    pub slices_loaded: u64,
    /// Slices released because no remaining unit reads them.
    pub slices_released: u64,
    /// Slices evicted to stay within the budget.
    pub slices_evicted: u64,
    /// Lookups served from the compressed files through the block cache.
    pub spilled_lookups: u64,
    /// Most decoded bytes held at once (2 bits per position).
    pub peak_resident_bytes: u64,
    /// Decoded bytes held now.
    pub resident_bytes: u64,
}

const UNDECIDED: u8 = 0;
const ADMITTED: u8 = 1;
const SPILLED: u8 = 2;

#[derive(Default)]
struct Cell {
    data: OnceLock<Decoded>,
    /// Under a budget, for the current unit: [`UNDECIDED`], [`ADMITTED`] (may be decoded) or
    /// [`SPILLED`] (served through the block cache).
    admitted: AtomicU8,
}

struct Decoded {
    index: SliceIndex,
    /// [`Wld2Bit`] stored form: 2 bits per position (0 loss, 1 draw, 2 win).
    packed: Vec<u8>,
    /// Decoded from a codec-4 file: threat positions hold no value
    /// ([`RawSource::threats_dont_care`]).
    threats_dc: bool,
    /// Handed over by the generator ([`DecodedTables::insert`]): every position, capture
    /// positions and positions without a move included, holds its true value, so
    /// [`DecodedTables::lookup`] reads any position directly.
    exact: bool,
}

impl DecodedTables {
    /// A store reading English tables from `dir`.
    pub fn new(dir: &Path) -> DecodedTables {
        Self::with_rules(dir, English)
    }

    /// A store reading tables of `rules` from `dir` (files of other rules are refused).
    pub fn with_rules<R: Rules>(dir: &Path, _rules: R) -> DecodedTables {
        DecodedTables {
            dir: dir.to_path_buf(),
            rules: R::ID,
            slots: SlotTable::new(),
            loading: Mutex::new(()),
            budget: None,
            resident: Mutex::new(BTreeMap::new()),
            admitted: Vec::new(),
            met: Mutex::new(Vec::new()),
            room: AtomicU64::new(0),
            spill: OnceLock::new(),
            released_once: Mutex::new(Default::default()),
            sticky: Mutex::new(Default::default()),
            unwritten: Mutex::new(Default::default()),
            counters: Counters::default(),
            generation: next_generation(),
        }
    }

    /// This store reading the tables of `variant` instead (files of other rules are refused).
    pub fn for_variant(self, variant: crate::rules::Variant) -> DecodedTables {
        DecodedTables {
            rules: variant.id(),
            ..self
        }
    }

    /// The variant whose tables this store reads (English for an id no variant has, which
    /// [`DecodedTables::for_variant`] and [`DecodedTables::with_rules`] never give).
    pub fn variant(&self) -> crate::rules::Variant {
        crate::rules::Variant::from_id(self.rules).unwrap_or_default()
    }

    /// An English store for the generator holding at most `budget` bytes (`None`: unbounded)
    /// of decoded slices plus its block cache; see the type's docs. A budget needs
    /// [`DecodedTables::begin_unit`] before each unit: until then nothing is admitted and every
    /// lookup goes through the block cache.
    pub fn with_budget(dir: &Path, budget: Option<u64>) -> DecodedTables {
        DecodedTables {
            budget,
            ..Self::new(dir)
        }
    }

    /// The budget given to [`DecodedTables::with_budget`].
    pub fn budget(&self) -> Option<u64> {
        self.budget
    }

    /// Counters since the store was made.
    pub fn stats(&self) -> StoreStats {
        let c = &self.counters;
        StoreStats {
            slices_loaded: c.loaded.load(Ordering::Relaxed),
            slices_released: c.released.load(Ordering::Relaxed),
            slices_evicted: c.evicted.load(Ordering::Relaxed),
            spilled_lookups: c.spilled_lookups.load(Ordering::Relaxed),
            peak_resident_bytes: c.peak_resident.load(Ordering::Relaxed),
            resident_bytes: self.resident_bytes(),
        }
    }

    fn resident_map(&self) -> std::sync::MutexGuard<'_, BTreeMap<Slice, u64>> {
        self.resident.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn resident_bytes(&self) -> u64 {
        self.resident_map().values().sum()
    }

    /// Record `slice` as resident (`bytes` decoded).
    fn note_resident(&self, slice: &Slice, bytes: u64) {
        let mut r = self.resident_map();
        r.insert(*slice, bytes);
        let total: u64 = r.values().sum();
        self.counters
            .peak_resident
            .fetch_max(total, Ordering::Relaxed);
    }

    /// Whether the decoded values of `slice` may be dropped: its file exists and is the one
    /// its values were written to (not a slice handed over and still in the writer's queue,
    /// whose path may hold nothing or a damaged file being replaced).
    fn droppable(&self, slice: &Slice) -> bool {
        !self
            .unwritten
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(slice)
            && table_path(&self.dir, slice).exists()
    }

    /// The files of `slices` (handed over by [`DecodedTables::insert`]) are written: their
    /// values may be dropped from now on and read again from the files.
    pub fn written(&self, slices: &[Slice]) {
        let mut u = self.unwritten.lock().unwrap_or_else(|p| p.into_inner());
        for s in slices {
            u.remove(s);
        }
    }

    /// Drop the decoded values of `slice` (a later lookup decodes its file again, or spills).
    /// Returns whether it was resident.
    fn drop_slice(&mut self, slice: &Slice) -> bool {
        // Every memo entry of this store may point at the values dropped here.
        self.generation = next_generation();
        let Some(cell) = self.slots.get_mut(slice) else {
            return false;
        };
        let was = cell.data.take().is_some();
        self.resident
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .remove(slice);
        was
    }

    /// Release every resident slice that no unit after position `done` of the build reads:
    /// `last` maps a slice to the position of its last reader
    /// (`crate::memory::last_reads`). Slices absent from it (reached only through chains of
    /// captures, which any later unit may reach again) are kept; under a budget they are the
    /// first evicted ([`DecodedTables::begin_unit`]). A slice whose file does not exist yet
    /// (still in the writer's queue), or handed over and not yet [`DecodedTables::written`],
    /// is kept until a later call.
    /// A slice decoded again after being released (read past its last listed reader, through
    /// chains of captures) is kept from then on, like the unlisted ones.
    pub fn release_done(&mut self, done: usize, last: &std::collections::HashMap<Slice, usize>) {
        let sticky = std::mem::take(self.sticky.get_mut().unwrap_or_else(|p| p.into_inner()));
        let candidates: Vec<Slice> = self
            .resident_map()
            .keys()
            .filter(|s| !sticky.contains(s) && last.get(s).is_some_and(|&j| j <= done))
            .copied()
            .collect();
        *self.sticky.get_mut().unwrap_or_else(|p| p.into_inner()) = sticky;
        for s in candidates {
            if self.droppable(&s) {
                self.release(&s);
            }
        }
    }

    /// Release `slice`: no remaining unit reads it. Its memory is freed at once (it is read
    /// again from its file if a lookup still asks for it).
    pub fn release(&mut self, slice: &Slice) {
        if self.drop_slice(slice) {
            self.counters.released.fetch_add(1, Ordering::Relaxed);
            self.released_once
                .get_mut()
                .unwrap_or_else(|p| p.into_inner())
                .insert(*slice);
        }
    }

    /// Prepare the lookups of `unit` under the budget (nothing to do without one): the
    /// unit's reads that fit in `budget - unit_bytes` (the caller's estimate of the unit's own
    /// memory, e.g. [`crate::memory::UNIT_BYTES_PER_POSITION`] per position) are admitted,
    /// already resident ones first (`crate::memory::admit`); other resident slices are
    /// evicted while the total does not fit (`crate::memory::evictions`), except freshly
    /// solved slices whose new file is not written yet.
    pub fn begin_unit(&mut self, unit: &Unit, unit_bytes: u64) {
        let Some(budget) = self.budget else {
            return;
        };
        let met = std::mem::take(self.met.get_mut().unwrap_or_else(|p| p.into_inner()));
        for s in std::mem::take(&mut self.admitted).into_iter().chain(met) {
            if let Some(c) = self.slots.get(&s, false) {
                c.admitted.store(UNDECIDED, Ordering::Relaxed);
            }
        }
        let room = budget
            .saturating_sub(unit_bytes)
            .saturating_sub(spill_cache_bytes(budget));
        let reads = unit_reads(unit);
        let resident: BTreeMap<Slice, u64> = self.resident_map().clone();
        let size_of = |s: &Slice| decoded_bytes(SliceIndex::new(*s).size());
        let adm = admit(&reads, room, |s| resident.contains_key(s), size_of);
        let keys: Vec<Slice> = resident.keys().copied().collect();
        let total: u64 = resident.values().sum();
        let evict = evictions(&keys, &reads, &adm.admitted, total, adm.bytes, room, |s| {
            resident.get(s).copied().unwrap_or(0)
        });
        for s in evict {
            // A slice solved in this run may still be in the writer's queue: keep it until its
            // file exists.
            if self.droppable(&s) && self.drop_slice(&s) {
                self.counters.evicted.fetch_add(1, Ordering::Relaxed);
            }
        }
        let mut admitted: Vec<Slice> = adm.admitted.into_iter().collect();
        admitted.sort();
        for s in &admitted {
            if let Ok(c) = self.cell(s) {
                c.admitted.store(ADMITTED, Ordering::Relaxed);
            }
        }
        self.admitted = admitted;
        self.room.store(room, Ordering::Relaxed);
    }

    /// A slice outside the current unit's reads (reached through a chain of captures): admit
    /// it if it fits in the unit's room, else spill it; decided once per unit.
    #[cold]
    #[inline(never)]
    fn admit_met(&self, slice: &Slice, cell: &Cell) -> bool {
        let _g = self.loading.lock().unwrap_or_else(|p| p.into_inner());
        match cell.admitted.load(Ordering::Relaxed) {
            ADMITTED => return true,
            SPILLED => return false,
            _ => {}
        }
        let size = decoded_bytes(SliceIndex::new(*slice).size());
        let fits = self.resident_bytes() + size <= self.room.load(Ordering::Relaxed);
        cell.admitted
            .store(if fits { ADMITTED } else { SPILLED }, Ordering::Relaxed);
        self.met
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(*slice);
        fits
    }

    /// The spill source (a [`Tablebase`] over the same directory, typed by the store's rules:
    /// it refuses files of other rules, as the store does), opened on first use.
    fn spill(&self) -> Result<&dyn SpillSource, ProbeError> {
        if let Some(t) = self.spill.get() {
            return Ok(t.as_ref());
        }
        let _g = self.loading.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = self.spill.get() {
            return Ok(t.as_ref());
        }
        let cache = spill_cache_bytes(self.budget.unwrap_or(0)) as usize;
        let tb: Box<dyn SpillSource> = crate::with_engine!(self.variant(), r => {
            Box::new(
                Tablebase::builder(&self.dir)
                    .rules(r)
                    .cache_bytes(cache)
                    .verify_on_open(true)
                    .allow_empty(true)
                    .open()?,
            )
        });
        Ok(self.spill.get_or_init(|| tb).as_ref())
    }

    /// A lookup `look` (of a quiet Black-to-move position) through the spill source (the
    /// directory is listed again once if the file was written after the source was opened).
    #[cold]
    #[inline(never)]
    fn spilled<T>(
        &self,
        look: impl Fn(&dyn SpillSource) -> Result<T, ProbeError>,
    ) -> Result<T, ProbeError> {
        self.counters
            .spilled_lookups
            .fetch_add(1, Ordering::Relaxed);
        let tb = self.spill()?;
        match look(tb) {
            Err(ProbeError::MissingSlice { .. }) => {
                tb.rescan()?;
                look(tb)
            }
            r => r,
        }
    }

    /// The slot of `slice` (created empty on first use).
    #[inline]
    fn cell(&self, slice: &Slice) -> Result<&Cell, ProbeError> {
        self.slots
            .get(slice, true)
            .ok_or(ProbeError::TooManyPieces {
                pieces: slice.material.pieces(),
                max: MAX_PIECES,
            })
    }

    /// The decoded slice, loading it if allowed; `None`: serve it through the spill source.
    #[inline]
    fn get(&self, slice: &Slice) -> Result<Option<&Decoded>, ProbeError> {
        let cell = self.cell(slice)?;
        if let Some(d) = cell.data.get() {
            return Ok(Some(d));
        }
        if self.budget.is_some() {
            match cell.admitted.load(Ordering::Relaxed) {
                ADMITTED => {}
                SPILLED => return Ok(None),
                _ => {
                    if !self.admit_met(slice, cell) {
                        return Ok(None);
                    }
                }
            }
        }
        self.load(slice, &cell.data).map(Some)
    }

    /// Make the values of a slice just solved available without reading its file (which may
    /// still be being written). `values`: one symbol per position, 0 loss, 1 draw, 2 win, the
    /// true value for the side to move at *every* position, capture positions and positions
    /// without a move included (as `crate::generate::solve::SolvedSlice::values` holds
    /// them): [`DecodedTables::lookup`] reads them without a capture search. A slice already
    /// present is left as it is. The slice stays resident until [`DecodedTables::written`]
    /// says its file is written.
    ///
    /// # Errors
    /// [`ProbeError::TooManyPieces`] for a slice beyond the slot table.
    pub fn insert(&self, slice: &Slice, values: &[u8]) -> Result<(), ProbeError> {
        let mut fresh = false;
        let d = self.cell(slice)?.data.get_or_init(|| {
            fresh = true;
            Decoded {
                index: SliceIndex::new(*slice),
                packed: Wld2Bit::pack(values),
                // The solver's values: true at every position.
                threats_dc: false,
                exact: true,
            }
        });
        if fresh {
            self.unwritten
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(*slice);
            self.note_resident(slice, d.packed.len() as u64);
        }
        Ok(())
    }

    #[cold]
    fn load<'a>(
        &self,
        slice: &Slice,
        cell: &'a OnceLock<Decoded>,
    ) -> Result<&'a Decoded, ProbeError> {
        let _g = self.loading.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = cell.get() {
            return Ok(d);
        }
        let path = table_path(&self.dir, slice);
        if !path.exists() {
            return Err(ProbeError::MissingSlice { slice: *slice });
        }
        // The name check of `open_rules` makes sure the file holds `slice`.
        let file = TableFile::open_rules(&path, crate::table::Access::Mmap, self.rules)?;
        file.verify_checksum()?;
        // Serial: this thread holds `loading` and may be a rayon worker; a parallel decode
        // would let it run other queued tasks meanwhile, and one of them needing a load would
        // wait for this lock forever (seen as a hang of `examples/solve_repeat` with 32 threads).
        let values = file.decode_all_serial()?;
        let d = cell.get_or_init(|| Decoded {
            index: SliceIndex::new(*slice),
            packed: Wld2Bit::pack(&values),
            threats_dc: file.threats_dont_care(),
            // A file stores don't cares at capture positions (and codec 4/5 at threat
            // positions): those are resolved by search.
            exact: false,
        });
        drop(values);
        self.counters.loaded.fetch_add(1, Ordering::Relaxed);
        if self
            .released_once
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(slice)
        {
            self.sticky
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(*slice);
        }
        self.note_resident(slice, d.packed.len() as u64);
        Ok(d)
    }
}

impl DecodedTables {
    /// The exact value for the side to move of any position `p` (either side to move), as
    /// `crate::probe::resolve()` gives it, for the generator's lookups of the slices a unit
    /// leaves to.
    ///
    /// Where `p`'s slice (after [`Position::normalized`]) holds the generator's own values
    /// ([`DecodedTables::insert`]: the true value at every position), the value is read at
    /// `p`'s index directly: no capture test, no capture search, no test for a move. Where it
    /// is a slice decoded from a codec-2 file (English), which stores don't cares only at
    /// capture positions, a capture test decides: a capture position is searched as
    /// `crate::probe::resolve()` searches it, any other is read directly (no test for a move:
    /// a position without one stores its true value, a loss). Otherwise (a codec-4, 5 or 6
    /// file, another variant's file, a slice not yet decoded) it is `crate::probe::resolve()`
    /// over this store. All give the same value, so the output of a build does not depend on
    /// which slices were handed over.
    /// (Profile of a 6-piece unit, issue 11: the lookups of exits and of capture positions,
    /// each a capture test, a move test and, for captures, a search, were a quarter of the
    /// build.)
    ///
    /// # Errors
    /// As `crate::probe::resolve()`: a missing or corrupt dependency, a slice beyond the slot
    /// table.
    ///
    /// A per-thread memo remembers, for the last men configurations looked up (with their
    /// numbers of kings, which fix the slice), the slice's values and the men's part of the
    /// index, so a repeated configuration costs only the kings' rank. An entry is used only
    /// while its store has the generation it was made under: a store's generation is unique in
    /// the process and renewed whenever it drops decoded values (`&mut self`, so never during
    /// a lookup). Measured (issue 11): `egdb build --pieces 5` at 0.94x of the user CPU.
    #[inline]
    pub fn lookup(&self, p: &Position) -> Result<Wld, ProbeError> {
        // The fields are read one by one into registers: the caller has just stored them one
        // by one, and the colour flip, vectorised by the compiler, loaded them as one vector,
        // which stalls on store forwarding (two fifths of this function's samples in
        // `perf annotate` of `egdb build --pieces 5`).
        let r = Position {
            black: in_register(p.black),
            white: in_register(p.white),
            kings: in_register(p.kings),
            side: p.side,
        };
        let q = r.normalized();
        let (bm, wm) = (q.black & !q.kings, q.white & !q.kings);
        let (bk, wk) = (q.black & q.kings, q.white & q.kings);
        let men = bm as u64 | (wm as u64) << 32;
        let kings = bk.count_ones() << 8 | wk.count_ones();
        let h = ((men ^ (kings as u64) << 40).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 59) as usize;
        let e = LOOKUP_MEMO.with(|m| m[h % MEMO_ENTRIES].get());
        if e.generation == self.generation && e.men == men && e.kings == kings {
            // SAFETY: the entry was made by this store (generations are unique per store)
            // from a `&Decoded` of its slot table, and no decoded slice of the store has been
            // dropped since (dropping renews the generation), so the pointer is live; the
            // values are never changed in place.
            let d = unsafe { &*e.decoded };
            if !d.exact && English.has_capture(&r) {
                return crate::probe::resolve::best_successor(English, self, &r);
            }
            return d.value(
                &d.index.slice(),
                e.men_base + d.index.king_offset(bk, wk, bm | wm),
            );
        }
        let s = Slice::of(&q);
        if let Some(d) = self.slots.get(&s, false).and_then(|c| c.data.get()) {
            // A slice decoded from a codec-2 file (English) stores the true value at every
            // position without a capture, positions without a move included (a loss, the
            // solver's own value there; only captures are don't care, docs/format.md): such
            // a position is read directly, as `probe::resolve` would read it after its test
            // for a move, which it does not need. A capture position is searched as
            // `probe::resolve` searches it. (Profile of the 8-piece unit 0116-n3, all of whose
            // dependencies come from files: `raw_quiet`, `lookup` and `resolve_with` were a
            // fifth of the build.)
            let direct = d.exact || (!d.threats_dc && self.rules == English::ID);
            if direct {
                if !d.exact && English.has_capture(&r) {
                    return crate::probe::resolve::best_successor(English, self, &r);
                }
                let men_base = d.index.men_base(bm, wm);
                LOOKUP_MEMO.with(|m| {
                    m[h % MEMO_ENTRIES].set(MemoEntry {
                        men,
                        kings,
                        generation: self.generation,
                        decoded: d,
                        men_base,
                    })
                });
                return d.value(&s, men_base + d.index.king_offset(bk, wk, bm | wm));
            }
        }
        if self.rules == English::ID {
            return crate::probe::resolve(self, p);
        }
        self.resolve_by_rules(p)
    }

    /// [`crate::probe::resolve_with`] over this store under the fast engine of the rules of
    /// its id ([`crate::rules::Variant`]), English aside.
    #[cold]
    fn resolve_by_rules(&self, p: &Position) -> Result<Wld, ProbeError> {
        match crate::rules::Variant::from_id(self.rules) {
            Some(v) => crate::with_engine!(v, r => crate::probe::resolve_with(r, self, p)),
            None => crate::probe::resolve(self, p),
        }
    }
}

/// What the store reads spilled slices through: a [`Tablebase`] of the store's rules (any
/// variant's, chosen at run time).
trait SpillSource: RawSource + Send + Sync {
    /// [`Tablebase::rescan`].
    fn rescan(&self) -> Result<u64, ProbeError>;
}

impl<R: Rules> SpillSource for Tablebase<R> {
    fn rescan(&self) -> Result<u64, ProbeError> {
        Tablebase::rescan(self)
    }
}

/// `x`, made opaque to the optimiser in a general register (no instruction is emitted): a
/// field read through it is loaded on its own, not merged into a vector load.
#[inline(always)]
fn in_register(x: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut x = x;
        // SAFETY: an empty template: no instruction, no memory, flags or stack touched.
        unsafe {
            std::arch::asm!("/* {x:e} */", x = inout(reg) x, options(pure, nomem, nostack, preserves_flags))
        };
        x
    }
    #[cfg(not(target_arch = "x86_64"))]
    x
}

impl Decoded {
    #[inline(always)]
    fn value(&self, slice: &Slice, index: u64) -> Result<Wld, ProbeError> {
        Wld2Bit::value(Wld2Bit::stored_symbol(&self.packed, index as usize)).ok_or(
            ProbeError::IndexOutOfRange {
                slice: *slice,
                index,
            },
        )
    }
}

/// The stored values of one resident slice, read by index with no test for a move
/// ([`DecodedTables::exact_quiet`]).
pub(crate) struct QuietValues<'a> {
    /// The slice's index.
    pub(crate) index: &'a SliceIndex,
    d: &'a Decoded,
}

impl QuietValues<'_> {
    /// The stored value (for the side to move) of position `index` of the slice; an error for
    /// an index past its end or a slot holding no value, never a guessed value.
    #[inline(always)]
    pub(crate) fn value(&self, index: u64) -> Result<Wld, ProbeError> {
        self.d.value(&self.index.slice(), index)
    }
}

impl DecodedTables {
    /// Direct reads of `slice` where its decoded values hold the true value at every position
    /// without a capture, positions without a move included (a codec-2 file, or values handed
    /// over by the generator); `None` where threat positions may be don't care (codecs 4-7)
    /// or the slice is not resident (spilled under the budget): then read through
    /// [`RawSource::raw_quiet`]. For the verifier, which compares the stored value of every
    /// such position with the one it derives, so a value read this way is checked where it
    /// is stored.
    ///
    /// # Errors
    /// As [`RawSource::raw`] (a missing or corrupt file).
    pub(crate) fn exact_quiet(&self, slice: &Slice) -> Result<Option<QuietValues<'_>>, ProbeError> {
        Ok(self
            .get(slice)?
            .filter(|d| !d.threats_dc)
            .map(|d| QuietValues { index: &d.index, d }))
    }
}

impl RawSource for DecodedTables {
    fn raw(&self, slice: &Slice, index: u64) -> Result<Wld, ProbeError> {
        let Some(d) = self.get(slice)? else {
            return self.spilled(|tb| tb.raw(slice, index));
        };
        if index >= d.index.size() {
            return Err(ProbeError::IndexOutOfRange {
                slice: *slice,
                index,
            });
        }
        d.value(slice, index)
    }

    #[inline]
    fn raw_position(&self, p: &Position) -> Result<Wld, ProbeError> {
        let s = Slice::of(p);
        let Some(d) = self.get(&s)? else {
            return self.spilled(|tb| tb.raw_position(p));
        };
        d.value(&s, d.index.rank(p))
    }

    fn threats_dont_care(&self, slice: &Slice) -> Result<bool, ProbeError> {
        match self.get(slice)? {
            Some(d) => Ok(d.threats_dc),
            None => self.spilled(|tb| tb.threats_dont_care(slice)),
        }
    }

    #[inline]
    fn raw_quiet(
        &self,
        p: &Position,
        threat: &dyn Fn() -> bool,
    ) -> Result<Option<Wld>, ProbeError> {
        let s = Slice::of(p);
        let Some(d) = self.get(&s)? else {
            return self.spilled(|tb| tb.raw_quiet(p, threat));
        };
        if d.threats_dc && threat() {
            return Ok(None);
        }
        d.value(&s, d.index.rank(p)).map(Some)
    }
}
