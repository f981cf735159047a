//! The dependency store: whole slices decoded into memory, 2 bits per position, for the
//! generator (values of slices built earlier) and the verifier. Shares the slot scheme of the
//! probe library ([`crate::probe::slots`]) and the WLD codec's packing
//! ([`crate::table::Wld2Bit`]).

use crate::board::{Position, Wld};
use crate::index::SliceIndex;
use crate::probe::slots::{SlotTable, MAX_PIECES};
use crate::probe::{ProbeError, RawSource};
use crate::rules::{English, Rules};
use crate::slice::Slice;
use crate::table::{table_path, TableFile, ValueCodec, Wld2Bit};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Dependency values: whole slices decoded into memory from their files on first use
/// (checksum verified), or handed over by the generator as soon as they are solved; packed
/// 2 bits per position ([`Wld2Bit`]'s stored form), shared by all threads.
///
/// Lookups go through a direct slot table keyed by (material, leading ranks), so the hot path
/// is two array loads and no hashing or locking.
pub struct DecodedTables {
    dir: PathBuf,
    rules: u32,
    slots: SlotTable<OnceLock<Decoded>>,
    /// Serialises the (slow) loading of a slice so it is decoded once.
    loading: Mutex<()>,
}

struct Decoded {
    index: SliceIndex,
    /// [`Wld2Bit`] stored form: 2 bits per position (0 loss, 1 draw, 2 win).
    packed: Vec<u8>,
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
        }
    }

    /// The slot of `slice` (created empty on first use).
    #[inline]
    fn cell(&self, slice: &Slice) -> Result<&OnceLock<Decoded>, ProbeError> {
        self.slots
            .get(slice, true)
            .ok_or(ProbeError::TooManyPieces {
                pieces: slice.material.pieces(),
                max: MAX_PIECES,
            })
    }

    #[inline]
    fn get(&self, slice: &Slice) -> Result<&Decoded, ProbeError> {
        let cell = self.cell(slice)?;
        if let Some(d) = cell.get() {
            return Ok(d);
        }
        self.load(slice, cell)
    }

    /// Make the values of a slice just solved available without reading its file (which may
    /// still be being written). `values`: one symbol per position, 0 loss, 1 draw, 2 win
    /// (capture positions may hold their true value or anything: they are never looked up,
    /// probes resolve them by search). A slice already present is left as it is.
    ///
    /// # Errors
    /// [`ProbeError::TooManyPieces`] for a slice beyond the slot table.
    pub fn insert(&self, slice: &Slice, values: &[u8]) -> Result<(), ProbeError> {
        self.cell(slice)?.get_or_init(|| Decoded {
            index: SliceIndex::new(*slice),
            packed: Wld2Bit::pack(values),
        });
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
        let values = file.decode_all()?;
        Ok(cell.get_or_init(|| Decoded {
            index: SliceIndex::new(*slice),
            packed: Wld2Bit::pack(&values),
        }))
    }
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

impl RawSource for DecodedTables {
    fn raw(&self, slice: &Slice, index: u64) -> Result<Wld, ProbeError> {
        let d = self.get(slice)?;
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
        let d = self.get(&s)?;
        d.value(&s, d.index.rank(p))
    }
}
