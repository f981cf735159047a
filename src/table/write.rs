//! The writer: fills don't-care positions, packs and compresses blocks in parallel, lays out
//! header, offset table, data and checksums, and writes the file atomically.

use super::codec::{
    ValueCodec, Wld2Bit, Wld2BitThreats, CODEC_2BIT_THREATS, CODEC_2BIT_ZSTD, DONT_CARE,
};
use super::error::TableError;
use super::header::{Header, TableMeta, FORMAT_VERSION, HEADER_LEN, HEADER_SUMMED, RULES_ENGLISH};
use super::NO_CONST;
use bitvec::prelude::{BitSlice, Lsb0};
use rayon::prelude::*;
use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh64::{xxh64, Xxh64};

/// Default positions per block: 65,520 (a multiple of 20 just under 2^16; 16,380 stored 2-bit
/// bytes, 13,104 base-3 bytes once decoded).
pub const DEFAULT_BLOCK_POSITIONS: u32 = 65_520;

/// Writer settings. [`WriteOptions::default`] is what `egdb build` uses (with `codec` from
/// `--codec`). (Other don't-care fillings than the block majority, and other packings, are
/// experiments in `examples/table_experiment.rs`.)
#[derive(Clone, Copy, Debug)]
pub struct WriteOptions {
    /// Positions per block (a positive multiple of 20).
    pub block_positions: u32,
    /// zstd compression level (1..=22).
    pub level: i32,
    /// Rules id written in the header (default English, [`RULES_ENGLISH`]).
    pub rules: u32,
    /// Value codec: [`CODEC_2BIT_ZSTD`] (default: captures are don't care, block majority
    /// filling) or [`CODEC_2BIT_THREATS`] (opt-in, `egdb build --codec 4`: captures, threat
    /// positions and positions without a move are don't care, [`crate::rules::search::is_dont_care`],
    /// filled from their neighbours; English rules only; about 1.5x smaller files, warm probes
    /// about 1.7x slower in its slices).
    pub codec: u32,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            block_positions: DEFAULT_BLOCK_POSITIONS,
            level: 15,
            rules: RULES_ENGLISH,
            codec: CODEC_2BIT_ZSTD,
        }
    }
}

/// Most common known value (0..=2) of `vals` (ties to the smaller value).
fn majority(vals: &[u8]) -> u8 {
    let mut n = [0u64; 4];
    vals.iter().for_each(|&v| n[v as usize] += 1);
    (0..3)
        .max_by_key(|&i| (n[i], std::cmp::Reverse(i)))
        .unwrap_or(1) as u8
}

/// Replace the don't-care values (3) of one block by the block's most common known value (a
/// block of don't-cares only becomes draws); values must be 0..=3.
pub(crate) fn fill_majority(vals: &mut [u8]) {
    if vals.iter().all(|&v| v == DONT_CARE) {
        vals.iter_mut().for_each(|v| *v = 1);
        return;
    }
    let m = majority(vals);
    vals.iter_mut()
        .filter(|v| **v == DONT_CARE)
        .for_each(|v| *v = m);
}

/// Fill the don't-care runs (3) of one block whose known neighbours agree with that value
/// (a run between two equal values, or at the block's edge next to one known value), so the
/// run of values goes on; other runs are left for [`fill_majority`].
pub(crate) fn fill_neighbours(vals: &mut [u8]) {
    let n = vals.len();
    let mut i = 0;
    while i < n {
        if vals[i] != DONT_CARE {
            i += 1;
            continue;
        }
        let start = i;
        while i < n && vals[i] == DONT_CARE {
            i += 1;
        }
        let before = (start > 0).then(|| vals[start - 1]);
        let after = (i < n).then(|| vals[i]);
        let fill = match (before, after) {
            (Some(a), Some(b)) if a == b => Some(a),
            (Some(a), None) | (None, Some(a)) => Some(a),
            _ => None,
        };
        if let Some(f) = fill {
            vals[start..i].iter_mut().for_each(|v| *v = f);
        }
    }
}

/// Write a slice's table to `path` with the default [`WriteOptions`]; returns the bytes written.
///
/// `values` holds one byte per position in index order: 0 loss, 1 draw, 2 win (for Black, to
/// move), 3 don't care. `values.len()` must equal `meta.positions` and
/// `meta.wins + meta.losses + meta.draws == meta.positions`.
///
/// The write is atomic: a temporary file in the same directory is written, fsynced and renamed,
/// then the directory is fsynced. The bytes depend only on the inputs (no timestamps, zstd is
/// deterministic), whatever the thread count.
///
/// # Errors
/// [`TableError::Invalid`] for inconsistent inputs, [`TableError::Io`] for file system errors.
pub fn write_table(path: &Path, meta: &TableMeta, values: &[u8]) -> Result<u64, TableError> {
    write_table_with(path, meta, values, &WriteOptions::default())
}

/// [`write_table`] with explicit options.
///
/// # Errors
/// As [`write_table`]; also [`TableError::Invalid`] for a bad block size or level.
pub fn write_table_with(
    path: &Path,
    meta: &TableMeta,
    values: &[u8],
    opts: &WriteOptions,
) -> Result<u64, TableError> {
    let bytes = encode_table(meta, values, opts)?;
    write_atomic(path, &bytes)
}

/// A new temporary file for `path` (`.NAME.tmp.PID.N` beside it, created empty, never an
/// existing file: [`crate::atomic::create_temp`]). Returns (directory, temporary path, the
/// file open for writing).
///
/// # Errors
/// [`TableError::Invalid`] when `path` has no file name; [`TableError::Io`] if the file cannot
/// be created (or 1,000 names in a row exist).
pub(crate) fn create_temp(path: &Path) -> Result<(PathBuf, PathBuf, File), TableError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if path.file_name().is_none() {
        return Err(TableError::Invalid(format!(
            "{} has no file name",
            path.display()
        )));
    }
    let (tmp, f) =
        crate::atomic::create_temp(path).map_err(|e| TableError::io(path, "create", e))?;
    Ok((dir, tmp, f))
}

/// Write `bytes` to `path` atomically: temporary file in the same directory, fsync, rename,
/// directory fsync (best effort). Returns the bytes written.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<u64, TableError> {
    let (dir, tmp, f) = create_temp(path)?;
    let result = (|| {
        let mut f = f;
        f.write_all(bytes)
            .map_err(|e| TableError::io(&tmp, "write", e))?;
        f.sync_all().map_err(|e| TableError::io(&tmp, "fsync", e))?;
        drop(f);
        std::fs::rename(&tmp, path).map_err(|e| TableError::io(path, "rename", e))?;
        if let Ok(d) = File::open(&dir) {
            // Directory fsync is best effort (not supported everywhere).
            let _ = d.sync_all();
        }
        Ok(bytes.len() as u64)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Encode a table into the bytes of a file (what [`write_table_with`] writes).
///
/// # Errors
/// [`TableError::Invalid`] for inconsistent inputs (see [`write_table`]).
pub fn encode_table(
    meta: &TableMeta,
    values: &[u8],
    opts: &WriteOptions,
) -> Result<Vec<u8>, TableError> {
    encode_any(meta, values, None, opts, 4)
}

/// [`encode`] for the codec of `opts`.
fn encode_any(
    meta: &TableMeta,
    values: &[u8],
    dont_care: Option<&BitSlice<u64, Lsb0>>,
    opts: &WriteOptions,
    min_width: usize,
) -> Result<Vec<u8>, TableError> {
    match opts.codec {
        CODEC_2BIT_ZSTD => encode::<Wld2Bit>(meta, values, dont_care, opts, min_width),
        CODEC_2BIT_THREATS => encode::<Wld2BitThreats>(meta, values, dont_care, opts, min_width),
        // Codec 5: codec 4's symbols and don't cares, context-model coded.
        super::cm::CODEC_CM_THREATS => {
            encode::<Wld2BitThreats>(meta, values, dont_care, opts, min_width)
        }
        // Codec 6: the same, coded in segments that decode without move generation.
        super::cm6::CODEC_CM_FILLED | super::cm7::CODEC_CM_BOOK => {
            encode::<Wld2BitThreats>(meta, values, dont_care, opts, min_width)
        }
        c => Err(TableError::Invalid(format!("unknown value codec {c}"))),
    }
}

/// Positions decoded and encoded at a time by [`reencode`] (rounded to whole blocks of the
/// output): 4 Mi values, 4 MiB in memory, enough blocks for every thread.
const REENCODE_CHUNK: u64 = 1 << 22;

/// The bytes of `src`'s slice written with `opts` (codec, block size, level, rules): the file
/// [`write_table_with`] would write from `src`'s stored values, made a range of
/// [`REENCODE_CHUNK`] positions at a time (the memory does not grow with the slice; the
/// output's blocks are encoded each on its own, so they equal a whole-slice encoding's). The
/// header keeps `src`'s counts and longest resolution. Where `src` stores a filler (a
/// don't-care position of its codec), that filler is the input: the target codec must leave
/// at least those positions don't care, which the caller decides (codec 2 to 4, 5 or 6; any
/// of 4, 5, 6 to another).
///
/// # Errors
/// Block errors of `src` ([`TableError::Corrupt`] naming its path); [`TableError::Invalid`]
/// for bad options.
pub(crate) fn reencode(
    src: &super::read::TableFile,
    opts: &WriteOptions,
) -> Result<Vec<u8>, TableError> {
    reencode_in(src, opts, REENCODE_CHUNK)
}

/// [`reencode`] about `chunk` positions at a time (whole output blocks, at least one).
pub(crate) fn reencode_in(
    src: &super::read::TableFile,
    opts: &WriteOptions,
    chunk: u64,
) -> Result<Vec<u8>, TableError> {
    check_options(opts)?;
    let meta = src.meta();
    check_meta(meta)?;
    let bp = u64::from(opts.block_positions);
    let chunk = (chunk / bp).max(1) * bp;
    let mut blocks: Vec<EncodedBlock> = Vec::new();
    let mut from = 0u64;
    while from < meta.positions {
        let to = (from + chunk).min(meta.positions);
        let values = src.decode_range(from, to)?;
        blocks.extend(encode_blocks(meta.slice, from, &values, None, opts)?);
        from = to;
    }
    assemble(meta, &blocks, opts, 4)
}

/// [`write_table`] of values with a separate don't-care mask: position `i` is written as
/// "don't care" where `dont_care[i]` is set, whatever `values[i]` holds (the generator keeps
/// the true values of capture positions and marks them in the mask). The bytes equal those of
/// [`write_table_with`] given [`DONT_CARE`] at the masked positions.
///
/// # Errors
/// As [`write_table_with`]; also [`TableError::Invalid`] if the mask length differs.
pub fn write_table_masked(
    path: &Path,
    meta: &TableMeta,
    values: &[u8],
    dont_care: &BitSlice<u64, Lsb0>,
    opts: &WriteOptions,
) -> Result<u64, TableError> {
    let bytes = encode_any(meta, values, Some(dont_care), opts, 4)?;
    write_atomic(path, &bytes)
}

/// [`write_table_masked`]'s bytes (with or without a mask), with end offsets at least
/// `min_width` (4 or 8) bytes wide, not written (tests).
#[cfg(test)]
pub(crate) fn encode_masked_for_tests(
    meta: &TableMeta,
    values: &[u8],
    dont_care: Option<&BitSlice<u64, Lsb0>>,
    opts: &WriteOptions,
    min_width: usize,
) -> Result<Vec<u8>, TableError> {
    encode_any(meta, values, dont_care, opts, min_width)
}

/// [`encode_table`] with end offsets at least `min_width` (4 or 8) bytes wide (tests use 8).
#[cfg(test)]
pub(crate) fn encode_with_width(
    meta: &TableMeta,
    values: &[u8],
    opts: &WriteOptions,
    min_width: usize,
) -> Result<Vec<u8>, TableError> {
    encode_any(meta, values, None, opts, min_width)
}

/// One block encoded by [`encode_blocks`]: its stored bytes (empty for a constant block) and
/// its constant value ([`NO_CONST`] when it stores bytes).
#[derive(Clone, Debug)]
pub(crate) struct EncodedBlock {
    /// The block's stored bytes (zstd or context-model coded); empty for a constant block.
    pub data: Vec<u8>,
    /// The value of every position of a constant block (0..=2), else [`NO_CONST`].
    pub constant: u32,
}

impl EncodedBlock {
    /// The offset table's check word of the block: the constant of a constant block, else the
    /// low 32 bits of the xxh64 of its bytes.
    pub(crate) fn check(&self) -> u32 {
        if self.data.is_empty() {
            self.constant
        } else {
            xxh64(&self.data, 0) as u32
        }
    }
}

/// What the layout of a file needs of one block: its stored length (bytes), its check word
/// ([`EncodedBlock::check`]) and its constant ([`NO_CONST`] when it stores bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockInfo {
    /// Stored bytes.
    pub len: u64,
    /// Check word of the offset table.
    pub check: u32,
    /// The constant of a constant block, else [`NO_CONST`].
    pub constant: u32,
}

impl From<&EncodedBlock> for BlockInfo {
    fn from(b: &EncodedBlock) -> BlockInfo {
        BlockInfo {
            len: b.data.len() as u64,
            check: b.check(),
            constant: b.constant,
        }
    }
}

/// Check the writer settings `opts` ([`TableError::Invalid`] for a bad block size, level,
/// rules id or codec).
fn check_options(opts: &WriteOptions) -> Result<(), TableError> {
    if opts.block_positions < 20 || !opts.block_positions.is_multiple_of(20) {
        return Err(TableError::Invalid(format!(
            "block size {} is not a positive multiple of 20",
            opts.block_positions
        )));
    }
    if !(1..=22).contains(&opts.level) {
        return Err(TableError::Invalid(format!("zstd level {}", opts.level)));
    }
    if opts.rules > u32::from(u8::MAX) {
        return Err(TableError::Invalid(format!("rules id {}", opts.rules)));
    }
    let threats = matches!(
        opts.codec,
        CODEC_2BIT_THREATS
            | super::cm::CODEC_CM_THREATS
            | super::cm6::CODEC_CM_FILLED
            | super::cm7::CODEC_CM_BOOK
    );
    if threats && opts.rules != RULES_ENGLISH {
        return Err(TableError::Invalid(format!(
            "codec {} needs English rules (rules id {})",
            opts.codec, opts.rules
        )));
    }
    Ok(())
}

/// Encode the blocks of `values`, the values of slice `slice` from index `first` on (`first`
/// a multiple of `opts.block_positions`; `values` ends at a block boundary or at the slice's
/// end), with the don't-care mask `dont_care` (as long as `values`) of
/// [`write_table_masked`]: block `k` of the result is block `first / block_positions + k` of
/// the file. Each block is encoded on its own (in parallel), so the blocks of a range are
/// those the whole slice's encoding has there: a slice may be encoded in ranges (by the ranks
/// of a split unit) and laid out with [`layout`].
///
/// # Errors
/// [`TableError::Invalid`]: bad options, a misaligned `first`, a value out of range, a mask of
/// another length, an unknown codec.
pub(crate) fn encode_blocks(
    slice: crate::slice::Slice,
    first: u64,
    values: &[u8],
    dont_care: Option<&BitSlice<u64, Lsb0>>,
    opts: &WriteOptions,
) -> Result<Vec<EncodedBlock>, TableError> {
    check_options(opts)?;
    if !values.is_empty() && !first.is_multiple_of(u64::from(opts.block_positions)) {
        return Err(TableError::Invalid(format!(
            "blocks of slice {slice} encoded from index {first}, not a block boundary"
        )));
    }
    match opts.codec {
        CODEC_2BIT_ZSTD => encode_blocks_with::<Wld2Bit>(slice, first, values, dont_care, opts),
        // Codecs 5 and 6: codec 4's symbols and don't cares, context-model coded (codec 6 in
        // segments that decode without move generation).
        CODEC_2BIT_THREATS
        | super::cm::CODEC_CM_THREATS
        | super::cm6::CODEC_CM_FILLED
        | super::cm7::CODEC_CM_BOOK => {
            encode_blocks_with::<Wld2BitThreats>(slice, first, values, dont_care, opts)
        }
        c => Err(TableError::Invalid(format!("unknown value codec {c}"))),
    }
}

/// [`encode_blocks`] for codec `C`.
fn encode_blocks_with<C: ValueCodec>(
    slice: crate::slice::Slice,
    first: u64,
    values: &[u8],
    dont_care: Option<&BitSlice<u64, Lsb0>>,
    opts: &WriteOptions,
) -> Result<Vec<EncodedBlock>, TableError> {
    if let Some(m) = dont_care {
        if m.len() != values.len() {
            return Err(TableError::Invalid(format!(
                "don't-care mask of {} bits for {} values",
                m.len(),
                values.len()
            )));
        }
    }
    let ok = |v: u8| v <= C::MAX_SYMBOL || Some(v) == C::DONT_CARE;
    if let Some(i) = values.iter().position(|&v| !ok(v)) {
        return Err(TableError::Invalid(format!(
            "value {} at index {}",
            values[i],
            first + i as u64
        )));
    }
    let threats = C::ID == CODEC_2BIT_THREATS;
    let cm = opts.codec == super::cm::CODEC_CM_THREATS;
    let cm6 = opts.codec == super::cm6::CODEC_CM_FILLED;
    let cm7 = opts.codec == super::cm7::CODEC_CM_BOOK;
    let index = threats.then(|| crate::index::SliceIndex::new(slice));
    let bp = opts.block_positions as usize;
    let first = first as usize;

    // Fill and encode blocks in parallel (deterministic: each block on its own).
    thread_local! {
        static CCTX: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
    }
    values
        .par_chunks(bp)
        .enumerate()
        .map(|(b, chunk)| {
            let mut v = chunk.to_vec();
            if let Some(m) = dont_care {
                let dc = C::DONT_CARE.unwrap_or(0);
                for i in m[b * bp..b * bp + chunk.len()].iter_ones() {
                    v[i] = dc;
                }
            }
            let start = first + b * bp;
            if cm6 || cm7 {
                let ix = index.as_ref().expect("codecs 6 and 7 have an index");
                let coded = if cm7 {
                    super::cm7::encode_block(ix, start as u64, &v)
                } else {
                    super::cm6::encode_block(ix, start as u64, &v)
                };
                return match coded {
                    Ok(super::cm6::Coded::Const(c)) => Ok(EncodedBlock {
                        data: Vec::new(),
                        constant: u32::from(c),
                    }),
                    Ok(super::cm6::Coded::Bytes(data)) => Ok(EncodedBlock {
                        data,
                        constant: NO_CONST,
                    }),
                    Err(i) => Err(TableError::Invalid(format!(
                        "no value at index {i} of slice {slice}, which codec {} stores",
                        opts.codec
                    ))),
                };
            }
            if cm {
                let ix = index.as_ref().expect("codec 5 has an index");
                return match super::cm::encode_block(ix, start as u64, &v) {
                    Ok(super::cm::Coded::Const(c)) => Ok(EncodedBlock {
                        data: Vec::new(),
                        constant: u32::from(c),
                    }),
                    Ok(super::cm::Coded::Bytes(data)) => Ok(EncodedBlock {
                        data,
                        constant: NO_CONST,
                    }),
                    Err(i) => Err(TableError::Invalid(format!(
                        "no value at index {i} of slice {slice}, which codec 5 stores"
                    ))),
                };
            }
            if let Some(ix) = &index {
                // Codec 4: every position the probe never reads is don't care (decided from
                // the position alone, so the probe knows without a flag), and don't-care runs
                // continue their neighbours' value where they agree.
                let dc = C::DONT_CARE.unwrap_or(0);
                for (k, x) in v.iter_mut().enumerate() {
                    if *x != dc {
                        let p = ix.unrank((start + k) as u64).expect("index below size");
                        if crate::rules::search::is_dont_care(crate::rules::English, &p) {
                            *x = dc;
                        }
                    }
                }
                fill_neighbours(&mut v);
            }
            fill_majority(&mut v);
            if v.iter().all(|&x| x == v[0]) {
                return Ok(EncodedBlock {
                    data: Vec::new(),
                    constant: v[0] as u32,
                });
            }
            let packed = C::pack(&v);
            let data = CCTX.with(|c| {
                let mut c = c.borrow_mut();
                if c.as_ref().is_none_or(|(l, _)| *l != opts.level) {
                    let mut comp = zstd::bulk::Compressor::new(opts.level)?;
                    comp.include_checksum(false)?;
                    comp.include_contentsize(true)?;
                    comp.include_dictid(false)?;
                    *c = Some((opts.level, comp));
                }
                c.as_mut().unwrap().1.compress(&packed)
            });
            let data = data.map_err(|e| TableError::Invalid(format!("zstd: {e}")))?;
            Ok(EncodedBlock {
                data,
                constant: NO_CONST,
            })
        })
        .collect()
}

/// The header's own consistency: a valid slice, its position count, and wins + losses + draws
/// equal to it.
///
/// # Errors
/// [`TableError::Invalid`] naming what does not hold.
fn check_meta(meta: &TableMeta) -> Result<(), TableError> {
    if !meta.slice.is_valid() {
        return Err(TableError::Invalid(format!(
            "invalid slice {:?}",
            meta.slice
        )));
    }
    let size = crate::index::SliceIndex::new(meta.slice).size();
    if meta.positions != size {
        return Err(TableError::Invalid(format!(
            "{} positions given, but slice {} has {size}",
            meta.positions, meta.slice
        )));
    }
    if meta.wins + meta.losses + meta.draws != meta.positions {
        return Err(TableError::Invalid(format!(
            "wins {} + losses {} + draws {} != positions {} (slice {})",
            meta.wins, meta.losses, meta.draws, meta.positions, meta.slice
        )));
    }
    Ok(())
}

/// The head of a table file (header, with its checksum, and offset table) for the slice and
/// counts of `meta` and the blocks `blocks` (every block of the slice, in order), and whether
/// the blocks' bytes follow it: a file is its head, then the bytes of every block in order
/// (none when the slice is uniform: every block constant with one value), then the xxh64 of
/// all that (8 bytes, little-endian). End offsets take `min_width` (4 or 8) bytes while the
/// data is under 4 GiB, else 8.
///
/// # Errors
/// [`TableError::Invalid`]: counts that do not add up, positions that are not the slice's,
/// a block count that does not match them, an invalid slice, bad options.
pub(crate) fn layout(
    meta: &TableMeta,
    blocks: &[BlockInfo],
    opts: &WriteOptions,
    min_width: usize,
) -> Result<(Vec<u8>, bool), TableError> {
    check_options(opts)?;
    check_meta(meta)?;
    let want = meta.positions.div_ceil(u64::from(opts.block_positions));
    if blocks.len() as u64 != want {
        return Err(TableError::Invalid(format!(
            "{} blocks for the {} positions of slice {} ({want} expected)",
            blocks.len(),
            meta.positions,
            meta.slice
        )));
    }
    let cm = opts.codec == super::cm::CODEC_CM_THREATS;
    let cm6 = opts.codec == super::cm6::CODEC_CM_FILLED;
    let codec_id = if cm {
        super::cm::CODEC_CM_THREATS
    } else if cm6 {
        super::cm6::CODEC_CM_FILLED
    } else if opts.codec == super::cm7::CODEC_CM_BOOK {
        super::cm7::CODEC_CM_BOOK
    } else if opts.codec == CODEC_2BIT_THREATS {
        CODEC_2BIT_THREATS
    } else {
        CODEC_2BIT_ZSTD
    };
    // A slice whose values are all equal stores no blocks.
    let (blocks, uniform): (&[BlockInfo], u32) = if !blocks.is_empty()
        && blocks
            .iter()
            .all(|b| b.constant != NO_CONST && b.constant == blocks[0].constant)
    {
        (&[], blocks[0].constant)
    } else if blocks.is_empty() {
        (&[], 1) // an empty slice; any value
    } else {
        (blocks, NO_CONST)
    };

    let n_blocks = blocks.len();
    if n_blocks > u32::MAX as usize {
        return Err(TableError::Invalid(format!("{n_blocks} blocks")));
    }
    let data_len: u64 = blocks.iter().map(|b| b.len).sum();
    // End offsets take 4 bytes while the data is under 4 GiB, else 8.
    let width: usize = if data_len <= u32::MAX as u64 {
        min_width
    } else {
        8
    };
    let table_len = n_blocks * (width + 4);
    let mut out = Vec::with_capacity(HEADER_LEN + table_len);
    let header = Header {
        kind: super::header::FileKind::Wld,
        version: FORMAT_VERSION as u8,
        rules: opts.rules as u8,
        codec: codec_id as u8,
        level: opts.level as u8,
        slice: meta.slice,
        uniform: (uniform != NO_CONST).then_some(uniform as u8),
        width: width as u8,
        block_positions: opts.block_positions,
        positions: meta.positions,
        wins: meta.wins,
        losses: meta.losses,
        longest: meta.longest,
        blocks: n_blocks as u32,
    };
    out.extend_from_slice(&header.to_bytes());
    out.extend_from_slice(&0u64.to_le_bytes()); // 56: header checksum, filled below
    let mut end = 0u64;
    for b in blocks {
        end += b.len;
        out.extend_from_slice(&end.to_le_bytes()[..width]);
        out.extend_from_slice(&b.check.to_le_bytes());
    }
    let mut h = Xxh64::new(0);
    h.update(&out[..HEADER_SUMMED]);
    h.update(&out[HEADER_LEN..]);
    let hc = h.digest();
    out[HEADER_SUMMED..HEADER_LEN].copy_from_slice(&hc.to_le_bytes());
    Ok((out, n_blocks > 0))
}

/// The encoder behind every writer function, for codec `C`: [`encode_blocks`], then
/// [`layout`], the blocks' bytes and the file checksum.
fn encode<C: ValueCodec>(
    meta: &TableMeta,
    values: &[u8],
    dont_care: Option<&BitSlice<u64, Lsb0>>,
    opts: &WriteOptions,
    min_width: usize,
) -> Result<Vec<u8>, TableError> {
    if values.len() as u64 != meta.positions {
        return Err(TableError::Invalid(format!(
            "{} values for {} positions of slice {}",
            values.len(),
            meta.positions,
            meta.slice
        )));
    }
    check_meta(meta)?;
    check_options(opts)?;
    let blocks = encode_blocks_with::<C>(meta.slice, 0, values, dont_care, opts)?;
    assemble(meta, &blocks, opts, min_width)
}

/// The bytes of a whole value file from its encoded blocks: the head and offset table
/// ([`layout`], offsets at least `min_width` bytes wide), the blocks' bytes (none for a
/// uniform slice), then the file checksum.
fn assemble(
    meta: &TableMeta,
    blocks: &[EncodedBlock],
    opts: &WriteOptions,
    min_width: usize,
) -> Result<Vec<u8>, TableError> {
    let infos: Vec<BlockInfo> = blocks.iter().map(BlockInfo::from).collect();
    let (mut out, with_data) = layout(meta, &infos, opts, min_width)?;
    if with_data {
        for b in blocks {
            out.extend_from_slice(&b.data);
        }
    }
    let fc = xxh64(&out, 0);
    out.extend_from_slice(&fc.to_le_bytes());
    Ok(out)
}

#[cfg(test)]
mod temp_tests {
    use super::*;

    /// A temporary name in use is never opened (found by a code review: `File::create`
    /// truncated another writer's temporary file of the same name, e.g. a process with the
    /// same id in another container writing the same directory). The files already there
    /// under the next names keep their bytes, and the table is written whole.
    #[test]
    fn temporary_names_in_use_are_skipped_not_truncated() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("0101-nn.egdb");
        let next = crate::atomic::TEMP_COUNTER.load(std::sync::atomic::Ordering::Relaxed);
        let theirs: Vec<PathBuf> = (next..next + 40)
            .map(|n| {
                d.path()
                    .join(format!(".0101-nn.egdb.tmp.{}.{n}", std::process::id()))
            })
            .collect();
        for t in &theirs {
            std::fs::write(t, b"another writer's").unwrap();
        }
        let bytes = b"the table's bytes".repeat(100);
        assert_eq!(write_atomic(&path, &bytes).unwrap(), bytes.len() as u64);
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        for t in &theirs {
            assert_eq!(
                std::fs::read(t).unwrap(),
                b"another writer's",
                "{}",
                t.display()
            );
        }
    }
}
