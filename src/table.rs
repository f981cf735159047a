//! Table file format: writer (atomic, deterministic), reader (memory-mapped or positioned reads),
//! checksums and the value codec. The byte layout is specified in `docs/format.md`.
//!
//! One file per [`Slice`], named `<slice name>.egdb` (see [`table_path`]). A file stores one
//! value per Black-to-move position of the slice, in [`crate::index::SliceIndex`] order:
//! 0 = loss, 1 = draw, 2 = win for Black (the side to move). Positions where the side to move
//! must capture are "don't care" when writing (value 3): probes resolve them by search, so the
//! writer stores whatever value compresses best there.
//!
//! Values are cut into blocks of a fixed number of positions ([`WriteOptions::block_positions`],
//! default 65,520), packed 2 bits each and each block is compressed on its own with zstd, so one
//! probe decompresses one block; decoded blocks are handed out repacked base 3 (five per byte). A block whose values are all equal stores no bytes, and a slice
//! whose values are all equal stores no blocks at all.
//!
//! Integrity: the header and block offset table carry an xxh64 checksum checked by
//! [`TableFile::open`]; every block carries a 32-bit xxh64 checksum checked whenever it is
//! decoded; the file ends with an xxh64 of everything before it, checked by
//! [`TableFile::verify_checksum`]. A damaged file gives a [`TableError::Corrupt`], never a value.

use crate::board::Wld;
use crate::slice::{Material, Slice};
use rayon::prelude::*;
use std::cell::RefCell;
use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use xxhash_rust::xxh64::{xxh64, Xxh64};

/// File magic, the first 8 bytes of every table file.
pub const MAGIC: [u8; 8] = *b"EGDBWLD\0";
/// Format version written by this code (and the only one it reads).
pub const FORMAT_VERSION: u32 = 2;
/// Rules id of English (American) checkers, the only rules supported.
pub const RULES_ENGLISH: u32 = 1;
/// Codec id: values packed 2 bits each (4 per byte), blocks compressed with zstd one by one.
/// (Codec 1, base-3 packing, belonged to format version 1 and is no longer read.)
pub const CODEC_2BIT_ZSTD: u32 = 2;
/// Size in bytes of the fixed header at the start of a file (checksum included).
pub const HEADER_LEN: usize = 64;
/// Bytes of the header covered by the header checksum (the checksum follows them).
const HEADER_SUMMED: usize = 56;
/// File name extension of table files (without the dot).
pub const EXTENSION: &str = "egdb";
/// Value of the `values` input to [`write_table`] marking a "don't care" position.
pub const DONT_CARE: u8 = 3;
/// Marker for "no constant" in the header's uniform-value field and a block entry's constant.
const NO_CONST: u32 = u32::MAX;

/// Summary of one slice's table: what [`write_table`] is given and [`TableFile::meta`] returns.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TableMeta {
    /// The slice (material and leading ranks) the file holds.
    #[serde(serialize_with = "ser_display")]
    pub slice: Slice,
    /// Number of positions (Black to move) = `SliceIndex::new(slice).size()`.
    pub positions: u64,
    /// Positions won for the side to move (Black), counting every position, capture positions
    /// with their true value.
    pub wins: u64,
    /// Positions lost for the side to move.
    pub losses: u64,
    /// Drawn positions.
    pub draws: u64,
    /// Longest distance to conversion in plies (max over the slice's positions).
    pub longest: u32,
}

fn ser_display<S: serde::Serializer, T: fmt::Display>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// What is wrong with a damaged or foreign table file (the `what` of [`TableError::Corrupt`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// The file is shorter than its header says (or than a header).
    #[error("file is truncated: {len} bytes, expected {expected}")]
    Truncated {
        /// Actual length in bytes.
        len: u64,
        /// Length the header promises (or the minimum length).
        expected: u64,
    },
    /// The file is longer than its header says.
    #[error("file has {len} bytes, header says {expected}")]
    TrailingBytes {
        /// Actual length in bytes.
        len: u64,
        /// Length the header promises.
        expected: u64,
    },
    /// The first 8 bytes are not the table magic.
    #[error("bad magic (not an egdb table file)")]
    BadMagic,
    /// A format version this code does not read.
    #[error("unsupported format version {0} (this build reads {FORMAT_VERSION})")]
    Version(u32),
    /// Rules other than English checkers.
    #[error("unsupported rules id {0}")]
    Rules(u32),
    /// Unknown value codec.
    #[error("unsupported codec id {0}")]
    Codec(u32),
    /// The header or block offset table does not match its checksum.
    #[error("header checksum mismatch")]
    HeaderChecksum,
    /// A header field is inconsistent (the text names which).
    #[error("bad header: {0}")]
    BadHeader(String),
    /// The whole-file checksum at the end of the file does not match.
    #[error("whole-file checksum mismatch")]
    FileChecksum,
    /// A block's data does not match its checksum.
    #[error("block {0} checksum mismatch")]
    BlockChecksum(u64),
    /// A block's data did not decompress to the expected size and content.
    #[error("block {block} does not decode: {why}")]
    BlockDecode {
        /// Block number.
        block: u64,
        /// What the decoder said.
        why: String,
    },
}

/// Errors reading or writing table files.
#[derive(Clone, Debug, thiserror::Error)]
pub enum TableError {
    /// The operating system refused an operation on `path`.
    #[error("{path}: {op}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done (`open`, `read`, `write`, `rename`, ...).
        op: &'static str,
        /// The OS error.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The file is damaged or not a table file.
    #[error("{path}: corrupt table file: {what}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Which check failed.
        what: Fault,
    },
    /// The file holds another slice than its name (or the caller) says.
    #[error("{path}: file holds slice {found}, expected {expected}")]
    WrongSlice {
        /// The file.
        path: PathBuf,
        /// The slice the name or caller asked for.
        expected: String,
        /// The slice in the header.
        found: String,
    },
    /// Bad arguments to the writer or reader (the text says which).
    #[error("invalid table request: {0}")]
    Invalid(String),
}

impl TableError {
    fn io(path: &Path, op: &'static str, e: std::io::Error) -> TableError {
        TableError::Io {
            path: path.to_path_buf(),
            op,
            source: Arc::new(e),
        }
    }
    fn corrupt(path: &Path, what: Fault) -> TableError {
        TableError::Corrupt {
            path: path.to_path_buf(),
            what,
        }
    }
}

/// `dir/<slice name>.egdb`, e.g. `egdb/2101-3n.egdb`.
pub fn table_path(dir: &Path, slice: &Slice) -> PathBuf {
    dir.join(format!("{slice}.{EXTENSION}"))
}

/// The slice a file name `<slice name>.egdb` stands for, or `None` for any other name.
/// Only the canonical (lower-case) spelling counts, so one slice never has two files.
pub fn slice_of_file_name(name: &str) -> Option<Slice> {
    let stem = name.strip_suffix(".egdb")?;
    let s: Slice = stem.parse().ok()?;
    (s.to_string() == stem).then_some(s)
}

// ---------------------------------------------------------------------------------------------
// Codec: base-3 packing.

/// `DIGITS[b][k]` = k-th base-3 digit (value of position `5*i+k`) of packed byte `b`
/// (only bytes 0..=242 occur in valid data; larger bytes decode to 3 and are rejected).
pub(crate) static DIGITS: [[u8; 5]; 256] = build_digits();

const fn build_digits() -> [[u8; 5]; 256] {
    let mut t = [[3u8; 5]; 256];
    let mut b = 0;
    while b < 243 {
        let mut x = b;
        let mut k = 0;
        while k < 5 {
            t[b][k] = (x % 3) as u8;
            x /= 3;
            k += 1;
        }
        b += 1;
    }
    t
}

/// Pack values 0..=2, five per byte: byte = v0 + 3 v1 + 9 v2 + 27 v3 + 81 v4 (a short last
/// group is padded with zeros).
pub fn pack_base3(values: &[u8]) -> Vec<u8> {
    values
        .chunks(5)
        .map(|c| {
            let mut b = 0u8;
            for &v in c.iter().rev() {
                b = b * 3 + v;
            }
            b
        })
        .collect()
}

/// Value (0..=2) of position `i` of a packed block (`i < 5 * packed.len()`).
#[inline(always)]
pub fn packed_value(packed: &[u8], i: usize) -> u8 {
    DIGITS[packed[i / 5] as usize][i % 5]
}

/// Pack values 0..=3 two bits each, four per byte: byte = v0 | v1 << 2 | v2 << 4 | v3 << 6 (a
/// short last group is padded with zeros). The stored form of codec 2.
pub fn pack_2bit(values: &[u8]) -> Vec<u8> {
    values
        .chunks(4)
        .map(|c| c.iter().rev().fold(0u8, |b, &v| (b << 2) | v))
        .collect()
}

/// `B3_OF_10BITS[x]`: the base-3 byte of the five 2-bit values in the low 10 bits of `x`, or
/// 0xFF when one of them is 3 (not a value).
static B3_OF_10BITS: [u8; 1024] = {
    let mut t = [0u8; 1024];
    let mut x = 0;
    while x < 1024 {
        let mut b = 0u32;
        let mut k = 5;
        let mut bad = false;
        while k > 0 {
            k -= 1;
            let v = (x >> (2 * k)) & 3;
            if v == 3 {
                bad = true;
            }
            b = b * 3 + v as u32;
        }
        t[x] = if bad { 0xFF } else { b as u8 };
        x += 1;
    }
    t
};

/// Convert a 2-bit packed block of `n` values (`ceil(n/4)` bytes) to base-3 packed bytes
/// (`ceil(n/5)`, what [`packed_value`] reads). `Err(i)` names a byte holding a 3 or a nonzero
/// padding digit.
pub fn repack_2bit_to_base3(two: &[u8], n: usize) -> Result<Vec<u8>, usize> {
    debug_assert_eq!(two.len(), n.div_ceil(4));
    let mut out = Vec::with_capacity(n.div_ceil(5));
    let full = n / 20;
    let mut bad = false;
    for g in 0..full {
        // 20 values = 5 bytes of 2 bits = 4 bytes of base 3.
        let s = &two[5 * g..5 * g + 5];
        let x = u64::from(s[0])
            | u64::from(s[1]) << 8
            | u64::from(s[2]) << 16
            | u64::from(s[3]) << 24
            | u64::from(s[4]) << 32;
        let q = [
            B3_OF_10BITS[(x & 1023) as usize],
            B3_OF_10BITS[((x >> 10) & 1023) as usize],
            B3_OF_10BITS[((x >> 20) & 1023) as usize],
            B3_OF_10BITS[((x >> 30) & 1023) as usize],
        ];
        bad |= q.contains(&0xFF);
        out.extend_from_slice(&q);
    }
    if bad {
        let g = (0..full)
            .find(|&g| {
                two[5 * g..5 * g + 5]
                    .iter()
                    .any(|&b| (0..4).any(|k| (b >> (2 * k)) & 3 == 3))
            })
            .unwrap_or(0);
        return Err(5 * g);
    }
    // Tail: fewer than 20 values.
    let start = 20 * full;
    let mut tail = Vec::with_capacity(n - start);
    for i in start..two.len() * 4 {
        let v = (two[i / 4] >> (2 * (i % 4))) & 3;
        if v == 3 || (i >= n && v != 0) {
            return Err(i / 4);
        }
        if i < n {
            tail.push(v);
        }
    }
    out.extend_from_slice(&pack_base3(&tail));
    Ok(out)
}

/// How the writer fills don't-care values before packing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// Repeat the previous value (the first known value of the block at its start): extends runs.
    Previous,
    /// The most common known value of the block.
    Majority,
    /// Within each packed byte, copy the previous byte's digits where they fit, else the
    /// previous value: makes whole bytes repeat.
    PreviousByte,
    /// Always this value (0..=2); for experiments.
    Constant(u8),
    /// Copy the (filled) value `P` positions back, `P` in 1..=64 chosen per block as the lag at
    /// which known values agree most often; the first `P` positions take the block majority.
    Period,
}

/// Default positions per block: 65,520 (a multiple of 20 just under 2^16; 16,380 stored 2-bit
/// bytes, 13,104 base-3 bytes once decoded).
pub const DEFAULT_BLOCK_POSITIONS: u32 = 65_520;

/// Writer settings. [`WriteOptions::default`] is what `egdb build` uses.
#[derive(Clone, Copy, Debug)]
pub struct WriteOptions {
    /// Positions per block (a positive multiple of 20).
    pub block_positions: u32,
    /// zstd compression level (1..=22).
    pub level: i32,
    /// Don't-care filling strategy.
    pub fill: Fill,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            block_positions: DEFAULT_BLOCK_POSITIONS,
            level: 15,
            fill: Fill::Majority,
        }
    }
}

/// Most common known value (0..=2) of `vals` (ties to the smaller value).
fn majority(vals: &[u8]) -> u8 {
    let mut n = [0u64; 4];
    vals.iter().for_each(|&v| n[v as usize] += 1);
    (0..3)
        .max_by_key(|&i| (n[i], std::cmp::Reverse(i)))
        .unwrap() as u8
}

/// Lag `p` in 1..=64 maximizing the number of known pairs `vals[i] == vals[i - p]` (ties to the
/// smaller lag).
fn best_lag(vals: &[u8]) -> usize {
    let mut best = (0u64, 1usize);
    for p in 1..=64.min(vals.len().saturating_sub(1)).max(1) {
        let agree = vals
            .iter()
            .zip(&vals[p.min(vals.len())..])
            .filter(|(&a, &b)| a == b && a != DONT_CARE)
            .count() as u64;
        if agree > best.0 {
            best = (agree, p);
        }
    }
    best.1
}

/// Replace don't-care values (3) of one block in place, per `fill`; values must be 0..=3.
pub fn fill_dont_care(vals: &mut [u8], fill: Fill) {
    let first_known = vals.iter().copied().find(|&v| v != DONT_CARE);
    let Some(first) = first_known else {
        vals.iter_mut().for_each(|v| *v = 1);
        return;
    };
    match fill {
        Fill::Constant(c) => vals
            .iter_mut()
            .filter(|v| **v == DONT_CARE)
            .for_each(|v| *v = c.min(2)),
        Fill::Majority => {
            let m = majority(vals);
            vals.iter_mut()
                .filter(|v| **v == DONT_CARE)
                .for_each(|v| *v = m);
        }
        Fill::Period => {
            let m = majority(vals);
            let p = best_lag(vals);
            for i in 0..vals.len() {
                if vals[i] == DONT_CARE {
                    vals[i] = if i >= p { vals[i - p] } else { m };
                }
            }
        }
        Fill::Previous => {
            let mut prev = first;
            for v in vals.iter_mut() {
                if *v == DONT_CARE {
                    *v = prev;
                } else {
                    prev = *v;
                }
            }
        }
        Fill::PreviousByte => {
            let mut prev = first;
            let mut prev_group: [u8; 5] = [first; 5];
            for group in vals.chunks_mut(5) {
                // Does the group fit the previous group's digits (ignoring don't-cares)?
                let fits = group
                    .iter()
                    .zip(prev_group.iter())
                    .all(|(&v, &p)| v == DONT_CARE || v == p);
                for (k, v) in group.iter_mut().enumerate() {
                    if *v == DONT_CARE {
                        *v = if fits { prev_group[k] } else { prev };
                    }
                    prev = *v;
                }
                prev_group[..group.len()].copy_from_slice(group);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Writer.

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
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| TableError::Invalid(format!("{} has no file name", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.tmp.{}.{}",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = File::create(&tmp).map_err(|e| TableError::io(&tmp, "create", e))?;
        f.write_all(&bytes)
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
    encode_with_width(meta, values, opts, 4)
}

/// [`encode_table`] with end offsets at least `min_width` (4 or 8) bytes wide (tests use 8).
fn encode_with_width(
    meta: &TableMeta,
    values: &[u8],
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
    if !meta.slice.is_valid() {
        return Err(TableError::Invalid(format!(
            "invalid slice {:?}",
            meta.slice
        )));
    }
    if opts.block_positions < 20 || opts.block_positions % 20 != 0 {
        return Err(TableError::Invalid(format!(
            "block size {} is not a positive multiple of 20",
            opts.block_positions
        )));
    }
    if !(1..=22).contains(&opts.level) {
        return Err(TableError::Invalid(format!("zstd level {}", opts.level)));
    }
    if let Some(i) = values.iter().position(|&v| v > DONT_CARE) {
        return Err(TableError::Invalid(format!(
            "value {} at index {i}",
            values[i]
        )));
    }
    let bp = opts.block_positions as usize;

    // Fill and encode blocks in parallel (deterministic: each block on its own).
    struct Enc {
        data: Vec<u8>,
        constant: u32,
    }
    thread_local! {
        static CCTX: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
    }
    let blocks: Result<Vec<Enc>, TableError> = values
        .par_chunks(bp)
        .map(|chunk| {
            let mut v = chunk.to_vec();
            fill_dont_care(&mut v, opts.fill);
            if v.iter().all(|&x| x == v[0]) {
                return Ok(Enc {
                    data: Vec::new(),
                    constant: v[0] as u32,
                });
            }
            let packed = pack_2bit(&v);
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
            Ok(Enc {
                data,
                constant: NO_CONST,
            })
        })
        .collect();
    let mut blocks = blocks?;
    // A slice whose values are all equal stores no blocks.
    let uniform = if !blocks.is_empty()
        && blocks
            .iter()
            .all(|b| b.constant != NO_CONST && b.constant == blocks[0].constant)
    {
        let u = blocks[0].constant;
        blocks.clear();
        u
    } else if blocks.is_empty() {
        1 // an empty slice; any value
    } else {
        NO_CONST
    };

    let n_blocks = blocks.len();
    if n_blocks > u32::MAX as usize {
        return Err(TableError::Invalid(format!("{n_blocks} blocks")));
    }
    let data_len: usize = blocks.iter().map(|b| b.data.len()).sum();
    // End offsets take 4 bytes while the data is under 4 GiB, else 8.
    let width: usize = if data_len as u64 <= u32::MAX as u64 {
        min_width
    } else {
        8
    };
    let table_len = n_blocks * (width + 4);
    let file_len = HEADER_LEN + table_len + data_len + 8;
    let mut out = Vec::with_capacity(file_len);
    out.extend_from_slice(&MAGIC);
    let m = meta.slice.material;
    let r = |x: Option<u8>| x.unwrap_or(0xFF);
    out.extend_from_slice(&[
        FORMAT_VERSION as u8,
        RULES_ENGLISH as u8,
        CODEC_2BIT_ZSTD as u8,
        opts.level as u8,
        m.bm,
        m.bk,
        m.wm,
        m.wk,
        r(meta.slice.black_rank),
        r(meta.slice.white_rank),
        if uniform == NO_CONST {
            0xFF
        } else {
            uniform as u8
        },
        width as u8,
    ]); // 8..20
    let put32 = |o: &mut Vec<u8>, x: u32| o.extend_from_slice(&x.to_le_bytes());
    let put64 = |o: &mut Vec<u8>, x: u64| o.extend_from_slice(&x.to_le_bytes());
    put32(&mut out, opts.block_positions); // 20
    put64(&mut out, meta.positions); // 24
    put64(&mut out, meta.wins); // 32
    put64(&mut out, meta.losses); // 40
    put32(&mut out, meta.longest); // 48
    put32(&mut out, n_blocks as u32); // 52
    debug_assert_eq!(out.len(), HEADER_SUMMED);
    put64(&mut out, 0); // 56: header checksum, filled below
    let mut end = 0u64;
    for b in &blocks {
        end += b.data.len() as u64;
        out.extend_from_slice(&end.to_le_bytes()[..width]);
        let check = if b.data.is_empty() {
            b.constant
        } else {
            xxh64(&b.data, 0) as u32
        };
        put32(&mut out, check);
    }
    let mut h = Xxh64::new(0);
    h.update(&out[..HEADER_SUMMED]);
    h.update(&out[HEADER_LEN..]);
    let hc = h.digest();
    out[HEADER_SUMMED..HEADER_LEN].copy_from_slice(&hc.to_le_bytes());
    for b in &blocks {
        out.extend_from_slice(&b.data);
    }
    let fc = xxh64(&out, 0);
    put64(&mut out, fc);
    debug_assert_eq!(out.len(), file_len);
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Reader.

/// How a [`TableFile`] reaches its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Access {
    /// Memory-map the file (memmap2): no system call per block.
    #[default]
    Mmap,
    /// Read the header at open and each block with a positioned read (`pread`) when decoded.
    Pread,
}

enum Backing {
    Mmap(memmap2::Mmap),
    /// File handle plus the header and offset table read at open.
    Pread(File, Vec<u8>),
}

/// One block's content as stored: either all one value or packed base-3 bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// Every position of the block has this value.
    Const(Wld),
    /// `ceil(block positions / 5)` base-3 packed bytes; read with [`packed_value`].
    Packed(Vec<u8>),
}

/// An open, validated table file. `Send + Sync`; all reads take `&self`.
pub struct TableFile {
    path: PathBuf,
    meta: TableMeta,
    backing: Backing,
    block_positions: u32,
    n_blocks: u64,
    uniform: Option<Wld>,
    level: u32,
    /// Bytes of a block end offset in the offset table (4 or 8).
    width: usize,
    data_start: u64,
    file_len: u64,
}

impl fmt::Debug for TableFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableFile")
            .field("path", &self.path)
            .field("meta", &self.meta)
            .field("block_positions", &self.block_positions)
            .field("n_blocks", &self.n_blocks)
            .finish()
    }
}

fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn rd64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}
/// Little-endian unsigned integer of `w` (4 or 8) bytes at `at`.
fn rd_uint(b: &[u8], at: usize, w: usize) -> u64 {
    if w == 4 {
        u64::from(rd32(b, at))
    } else {
        rd64(b, at)
    }
}

impl TableFile {
    /// Open and memory-map a table file, validating magic, version, rules, codec, header
    /// consistency, the header + offset table checksum and the file length. Cheap: block data
    /// is not read. If the file name is a slice name (`2101-3n.egdb`) the header must hold that
    /// slice.
    ///
    /// # Errors
    /// [`TableError::Io`], [`TableError::Corrupt`] (which check), [`TableError::WrongSlice`].
    pub fn open(path: &Path) -> Result<TableFile, TableError> {
        Self::open_with(path, Access::Mmap)
    }

    /// [`TableFile::open`] with a choice of memory map or positioned reads.
    ///
    /// # Errors
    /// As [`TableFile::open`].
    pub fn open_with(path: &Path, access: Access) -> Result<TableFile, TableError> {
        // Check first: opening a FIFO would block, a directory cannot be mapped.
        let md = std::fs::metadata(path).map_err(|e| TableError::io(path, "stat", e))?;
        if !md.is_file() {
            return Err(TableError::Invalid(format!(
                "{} is not a regular file",
                path.display()
            )));
        }
        let file = File::open(path).map_err(|e| TableError::io(path, "open", e))?;
        let len = file
            .metadata()
            .map_err(|e| TableError::io(path, "stat", e))?
            .len();
        let backing = match access {
            Access::Mmap => {
                if len == 0 {
                    return Err(TableError::corrupt(
                        path,
                        Fault::Truncated {
                            len,
                            expected: HEADER_LEN as u64 + 8,
                        },
                    ));
                }
                // SAFETY: table files are written once (atomically renamed into place) and never
                // modified in place; a file changed under us can give wrong bytes, which the
                // block checksums catch, but no memory unsafety in this code (only reads).
                let map = unsafe { memmap2::Mmap::map(&file) }
                    .map_err(|e| TableError::io(path, "mmap", e))?;
                Backing::Mmap(map)
            }
            Access::Pread => Backing::Pread(file, Vec::new()),
        };
        let mut t = TableFile {
            path: path.to_path_buf(),
            meta: TableMeta {
                slice: Slice {
                    material: Material {
                        bm: 0,
                        bk: 0,
                        wm: 0,
                        wk: 0,
                    },
                    black_rank: None,
                    white_rank: None,
                },
                positions: 0,
                wins: 0,
                losses: 0,
                draws: 0,
                longest: 0,
            },
            backing,
            block_positions: 0,
            n_blocks: 0,
            uniform: None,
            level: 0,
            width: 4,
            data_start: 0,
            file_len: len,
        };
        t.load_header(len)?;
        if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            if let Some(expected) = slice_of_file_name(name) {
                if expected != t.meta.slice {
                    return Err(TableError::WrongSlice {
                        path: path.to_path_buf(),
                        expected: expected.to_string(),
                        found: t.meta.slice.to_string(),
                    });
                }
            }
        }
        Ok(t)
    }

    fn read_at(&self, off: u64, len: usize) -> Result<std::borrow::Cow<'_, [u8]>, TableError> {
        match &self.backing {
            Backing::Mmap(m) => {
                let end = off.checked_add(len as u64).filter(|&e| e <= m.len() as u64);
                match end {
                    Some(e) => Ok(std::borrow::Cow::Borrowed(&m[off as usize..e as usize])),
                    None => Err(self.fault(Fault::Truncated {
                        len: m.len() as u64,
                        expected: off + len as u64,
                    })),
                }
            }
            Backing::Pread(f, _) => {
                use std::os::unix::fs::FileExt;
                let mut buf = vec![0u8; len];
                f.read_exact_at(&mut buf, off).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::UnexpectedEof {
                        self.fault(Fault::Truncated {
                            len: self.file_len,
                            expected: off + len as u64,
                        })
                    } else {
                        TableError::io(&self.path, "read", e)
                    }
                })?;
                Ok(std::borrow::Cow::Owned(buf))
            }
        }
    }

    fn fault(&self, what: Fault) -> TableError {
        TableError::corrupt(&self.path, what)
    }

    fn load_header(&mut self, len: u64) -> Result<(), TableError> {
        let min = HEADER_LEN as u64 + 8;
        if len < min {
            // Say "unsupported version" for an old or foreign file rather than "truncated".
            if len >= 12 {
                let h = self.read_at(0, 12)?;
                if h[0..8] == MAGIC && h[8] != FORMAT_VERSION as u8 {
                    return Err(self.fault(Fault::Version(rd32(&h, 8))));
                }
            }
            return Err(self.fault(Fault::Truncated { len, expected: min }));
        }
        let h = self.read_at(0, HEADER_LEN)?.into_owned();
        if h[0..8] != MAGIC {
            return Err(self.fault(Fault::BadMagic));
        }
        let bad = |s: String| Fault::BadHeader(s);
        if h[8] != FORMAT_VERSION as u8 {
            // Version 1 stored a u32 here.
            let v = if h[8] == 1 {
                rd32(&h, 8)
            } else {
                u32::from(h[8])
            };
            return Err(self.fault(Fault::Version(v)));
        }
        if u32::from(h[9]) != RULES_ENGLISH {
            return Err(self.fault(Fault::Rules(u32::from(h[9]))));
        }
        if u32::from(h[10]) != CODEC_2BIT_ZSTD {
            return Err(self.fault(Fault::Codec(u32::from(h[10]))));
        }
        let width = h[19];
        if width != 4 && width != 8 {
            return Err(self.fault(bad(format!("offset width {width}"))));
        }
        let n_blocks = u64::from(rd32(&h, 52));
        let entry_len = width as u64 + 4;
        let table_len = n_blocks * entry_len;
        if table_len > len - min {
            return Err(self.fault(bad(format!("block count {n_blocks}"))));
        }
        // Header checksum over header[0..56] + offset table.
        let table = self
            .read_at(HEADER_LEN as u64, table_len as usize)?
            .into_owned();
        let mut hh = Xxh64::new(0);
        hh.update(&h[..HEADER_SUMMED]);
        hh.update(&table);
        if hh.digest() != rd64(&h, HEADER_SUMMED) {
            return Err(self.fault(Fault::HeaderChecksum));
        }
        // From here on the header is what the writer wrote; check its consistency anyway.
        let material = Material::new(h[12], h[13], h[14], h[15])
            .ok_or_else(|| self.fault(bad("material".into())))?;
        let rank = |x: u8| if x == 0xFF { None } else { Some(x) };
        let slice = Slice {
            material,
            black_rank: rank(h[16]),
            white_rank: rank(h[17]),
        };
        if !slice.is_valid() {
            return Err(self.fault(bad("slice ranks".into())));
        }
        let positions = rd64(&h, 24);
        let size = crate::index::SliceIndex::new(slice).size();
        if positions != size {
            return Err(self.fault(bad(format!(
                "{positions} positions, but slice {slice} has {size}"
            ))));
        }
        let (wins, losses) = (rd64(&h, 32), rd64(&h, 40));
        let draws = match wins.checked_add(losses) {
            Some(x) if x <= positions => positions - x,
            _ => return Err(self.fault(bad("W/L counts exceed the positions".into()))),
        };
        let block_positions = rd32(&h, 20);
        if block_positions < 20 || block_positions % 20 != 0 {
            return Err(self.fault(bad(format!("block size {block_positions}"))));
        }
        let uniform_raw = h[18];
        let uniform = if uniform_raw == 0xFF {
            let need = positions.div_ceil(block_positions as u64);
            if n_blocks != need {
                return Err(self.fault(bad(format!(
                    "{n_blocks} blocks for {positions} positions of {block_positions}"
                ))));
            }
            None
        } else {
            let w = Wld::from_u8(uniform_raw)
                .filter(|_| uniform_raw <= 2)
                .ok_or_else(|| self.fault(bad(format!("uniform value {uniform_raw}"))))?;
            if n_blocks != 0 {
                return Err(self.fault(bad("uniform slice with blocks".into())));
            }
            Some(w)
        };
        let w = width as usize;
        let el = entry_len as usize;
        let mut prev = 0u64;
        for b in 0..n_blocks as usize {
            let e = &table[b * el..(b + 1) * el];
            let end = rd_uint(e, 0, w);
            let c = rd32(e, w);
            if end < prev || (end == prev && c > 2) {
                return Err(self.fault(bad(format!("offset table entry {b}"))));
            }
            prev = end;
        }
        let data_len = prev;
        let data_start = HEADER_LEN as u64 + table_len;
        let file_len = data_start + data_len + 8;
        if file_len > len {
            return Err(self.fault(Fault::Truncated {
                len,
                expected: file_len,
            }));
        }
        if file_len < len {
            return Err(self.fault(Fault::TrailingBytes {
                len,
                expected: file_len,
            }));
        }
        self.meta = TableMeta {
            slice,
            positions,
            wins,
            losses,
            draws,
            longest: rd32(&h, 48),
        };
        self.block_positions = block_positions;
        self.n_blocks = n_blocks;
        self.uniform = uniform;
        self.level = u32::from(h[11]);
        self.width = w;
        self.data_start = data_start;
        self.file_len = file_len;
        if let Backing::Pread(_, t) = &mut self.backing {
            *t = table;
        }
        Ok(())
    }

    /// The slice summary from the header.
    pub fn meta(&self) -> &TableMeta {
        &self.meta
    }
    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Positions per block.
    pub fn block_positions(&self) -> u32 {
        self.block_positions
    }
    /// Number of stored blocks (0 for a uniform slice).
    pub fn block_count(&self) -> u64 {
        self.n_blocks
    }
    /// The single value of a slice that stores no blocks.
    pub fn uniform(&self) -> Option<Wld> {
        self.uniform
    }
    /// The zstd level recorded by the writer (informational).
    pub fn level(&self) -> u32 {
        self.level
    }
    /// Size of the file in bytes.
    pub fn file_bytes(&self) -> u64 {
        self.file_len
    }

    /// Block `b`'s data range (relative to the data start), checksum, and constant value
    /// (`NO_CONST` for a block with data).
    fn entry(&self, b: u64) -> (u64, u64, u32, u32) {
        let table: &[u8] = match &self.backing {
            Backing::Mmap(m) => &m[HEADER_LEN..self.data_start as usize],
            Backing::Pread(_, t) => t,
        };
        let (w, el) = (self.width, self.width + 4);
        let b = b as usize;
        let end = rd_uint(table, b * el, w);
        let check = rd32(table, b * el + w);
        let start = if b == 0 {
            0
        } else {
            rd_uint(table, (b - 1) * el, w)
        };
        if start == end {
            (start, end, 0, check)
        } else {
            (start, end, check, NO_CONST)
        }
    }

    /// Number of positions in block `b` (the last block may be short).
    pub fn positions_in_block(&self, b: u64) -> u64 {
        let bp = self.block_positions as u64;
        (self.meta.positions - b * bp).min(bp)
    }

    /// The value of block `b` if it is stored as a constant (no I/O: the offset table is in
    /// memory), `None` if it holds data.
    ///
    /// # Errors
    /// [`TableError::Invalid`] for `b` out of range.
    pub fn block_constant(&self, b: u64) -> Result<Option<Wld>, TableError> {
        if let Some(u) = self.uniform {
            return Ok(Some(u));
        }
        if b >= self.n_blocks {
            return Err(TableError::Invalid(format!(
                "block {b} of {}",
                self.n_blocks
            )));
        }
        let (_, _, _, c) = self.entry(b);
        Ok((c != NO_CONST).then(|| Wld::from_u8(c as u8).unwrap_or(Wld::Draw)))
    }

    /// Decode block `b` (`b < block_count()`): checks its checksum, decompresses it, checks the
    /// size and every 2-bit digit, and returns the values repacked base 3 (five per byte).
    ///
    /// # Errors
    /// [`TableError::Invalid`] for `b` out of range; [`TableError::Corrupt`] with
    /// [`Fault::BlockChecksum`] or [`Fault::BlockDecode`]; [`TableError::Io`] (pread).
    pub fn decode_block(&self, b: u64) -> Result<Block, TableError> {
        if b >= self.n_blocks {
            return Err(TableError::Invalid(format!(
                "block {b} of {} in {}",
                self.n_blocks,
                self.path.display()
            )));
        }
        let (start, end, check, constant) = self.entry(b);
        if constant != NO_CONST {
            return Ok(Block::Const(
                Wld::from_u8(constant as u8).unwrap_or(Wld::Draw),
            ));
        }
        let data = self.read_at(self.data_start + start, (end - start) as usize)?;
        if xxh64(&data, 0) as u32 != check {
            return Err(self.fault(Fault::BlockChecksum(b)));
        }
        let n = self.positions_in_block(b) as usize;
        let want = n.div_ceil(4);
        let mut out = vec![0u8; want];
        thread_local! {
            static DCTX: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
        }
        let got = DCTX.with(|d| {
            let mut d = d.borrow_mut();
            if d.is_none() {
                *d = Some(zstd::bulk::Decompressor::new()?);
            }
            d.as_mut()
                .unwrap()
                .decompress_to_buffer(&data[..], &mut out[..])
        });
        match got {
            Ok(k) if k == want => {}
            Ok(k) => {
                return Err(self.fault(Fault::BlockDecode {
                    block: b,
                    why: format!("{k} bytes, expected {want}"),
                }))
            }
            Err(e) => {
                return Err(self.fault(Fault::BlockDecode {
                    block: b,
                    why: e.to_string(),
                }))
            }
        }
        let out = repack_2bit_to_base3(&out, n).map_err(|i| {
            self.fault(Fault::BlockDecode {
                block: b,
                why: format!("byte {i} holds a digit 3 or nonzero padding"),
            })
        })?;
        Ok(Block::Packed(out))
    }

    /// Stored value of position `index` (decodes one block; no cache). Don't-care positions
    /// return the filler the writer chose.
    ///
    /// # Errors
    /// [`TableError::Invalid`] if `index >= positions`; block errors of
    /// [`TableFile::decode_block`].
    pub fn get(&self, index: u64) -> Result<Wld, TableError> {
        if index >= self.meta.positions {
            return Err(TableError::Invalid(format!(
                "index {index} out of range for slice {} ({} positions)",
                self.meta.slice, self.meta.positions
            )));
        }
        if let Some(u) = self.uniform {
            return Ok(u);
        }
        let bp = self.block_positions as u64;
        match self.decode_block(index / bp)? {
            Block::Const(w) => Ok(w),
            Block::Packed(p) => Ok(Wld::from_u8(packed_value(&p, (index % bp) as usize)).unwrap()),
        }
    }

    /// Every stored value, one byte 0..=2 per position in index order.
    ///
    /// # Errors
    /// Block errors of [`TableFile::decode_block`].
    pub fn decode_all(&self) -> Result<Vec<u8>, TableError> {
        let n = self.meta.positions as usize;
        if let Some(u) = self.uniform {
            return Ok(vec![u as u8; n]);
        }
        let bp = self.block_positions as usize;
        let parts: Result<Vec<Vec<u8>>, TableError> = (0..self.n_blocks)
            .into_par_iter()
            .map(|b| {
                let k = self.positions_in_block(b) as usize;
                Ok(match self.decode_block(b)? {
                    Block::Const(w) => vec![w as u8; k],
                    Block::Packed(p) => (0..k).map(|i| packed_value(&p, i)).collect(),
                })
            })
            .collect();
        let mut out = Vec::with_capacity(n);
        for p in parts? {
            out.extend_from_slice(&p);
        }
        debug_assert_eq!(out.len(), n);
        let _ = bp;
        Ok(out)
    }

    /// Check the whole-file xxh64 checksum (reads every byte).
    ///
    /// # Errors
    /// [`TableError::Corrupt`] with [`Fault::FileChecksum`]; [`TableError::Io`] (pread).
    pub fn verify_checksum(&self) -> Result<(), TableError> {
        let body = self.file_len - 8;
        let (digest, stored) = match &self.backing {
            Backing::Mmap(m) => (xxh64(&m[..body as usize], 0), rd64(m, body as usize)),
            Backing::Pread(..) => {
                let mut h = Xxh64::new(0);
                let mut off = 0u64;
                const CHUNK: u64 = 1 << 20;
                while off < body {
                    let k = CHUNK.min(body - off);
                    h.update(&self.read_at(off, k as usize)?);
                    off += k;
                }
                let s = self.read_at(body, 8)?;
                (h.digest(), rd64(&s, 0))
            }
        };
        if digest != stored {
            return Err(self.fault(Fault::FileChecksum));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(name: &str) -> Slice {
        name.parse().unwrap()
    }

    fn meta_for(s: Slice, vals: &[u8]) -> TableMeta {
        let mut n = [0u64; 4];
        vals.iter().for_each(|&v| n[v as usize] += 1);
        // Don't-cares count as draws for the meta in these tests.
        TableMeta {
            slice: s,
            positions: vals.len() as u64,
            wins: n[2],
            losses: n[0],
            draws: n[1] + n[3],
            longest: 7,
        }
    }

    fn pseudo_values(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 97 < 40 {
                    1
                } else {
                    (x % 4) as u8
                }
            })
            .collect()
    }

    #[test]
    fn packing_round_trips() {
        let v: Vec<u8> = (0..23).map(|i| (i * 7 % 3) as u8).collect();
        let p = pack_base3(&v);
        assert_eq!(p.len(), 5);
        for (i, &x) in v.iter().enumerate() {
            assert_eq!(packed_value(&p, i), x);
        }
        assert_eq!(pack_base3(&[2, 2, 2, 2, 2]), vec![242]);
    }

    #[test]
    fn fill_keeps_known_values() {
        for fill in [
            Fill::Previous,
            Fill::Majority,
            Fill::PreviousByte,
            Fill::Constant(2),
            Fill::Period,
        ] {
            let v = pseudo_values(1003, 5);
            let mut f = v.clone();
            fill_dont_care(&mut f, fill);
            for (a, b) in v.iter().zip(&f) {
                assert!(*b <= 2);
                if *a != DONT_CARE {
                    assert_eq!(a, b);
                }
            }
        }
    }

    #[test]
    fn repack_2bit_matches_base3() {
        for n in [1usize, 3, 4, 5, 19, 20, 21, 39, 40, 41, 99, 1000, 65_520] {
            let v: Vec<u8> = (0..n).map(|i| ((i * i + i / 7) % 3) as u8).collect();
            let two = pack_2bit(&v);
            assert_eq!(two.len(), n.div_ceil(4));
            assert_eq!(
                repack_2bit_to_base3(&two, n).unwrap(),
                pack_base3(&v),
                "n = {n}"
            );
            // A digit 3 anywhere, or nonzero padding, is rejected.
            for k in [0, n / 2, n - 1] {
                let mut bad = two.clone();
                bad[k / 4] |= 3 << (2 * (k % 4));
                assert!(repack_2bit_to_base3(&bad, n).is_err(), "n = {n}, k = {k}");
            }
            if n % 4 != 0 {
                let mut bad = two.clone();
                *bad.last_mut().unwrap() |= 1 << 6;
                assert!(repack_2bit_to_base3(&bad, n).is_err(), "padding, n = {n}");
            }
        }
    }

    #[test]
    fn wide_offsets_and_old_versions() {
        let dir = tempfile::tempdir().unwrap();
        let s = slice("2110-34");
        let vals = pseudo_values(crate::index::SliceIndex::new(s).size() as usize, 4);
        let meta = meta_for(s, &vals);
        let opts = WriteOptions {
            block_positions: 200,
            ..Default::default()
        };
        let path = dir.path().join("w.egdb");
        let wide = encode_with_width(&meta, &vals, &opts, 8).unwrap();
        let narrow = encode_table(&meta, &vals, &opts).unwrap();
        assert_eq!(wide.len() - narrow.len(), 4 * vals.len().div_ceil(200));
        std::fs::write(&path, &wide).unwrap();
        for access in [Access::Mmap, Access::Pread] {
            let t = TableFile::open_with(&path, access).unwrap();
            t.verify_checksum().unwrap();
            std::fs::write(dir.path().join("n.egdb"), &narrow).unwrap();
            let n = TableFile::open_with(&dir.path().join("n.egdb"), access).unwrap();
            assert_eq!(t.decode_all().unwrap(), n.decode_all().unwrap());
        }
        // A format 1 file (u32 version 1 at byte 8) is refused as an unsupported version.
        let mut old = narrow.clone();
        old[8..12].copy_from_slice(&1u32.to_le_bytes());
        old.resize(200, 0);
        std::fs::write(&path, &old).unwrap();
        let e = TableFile::open(&path).unwrap_err();
        assert!(
            matches!(
                e,
                TableError::Corrupt {
                    what: Fault::Version(1),
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string().contains("unsupported format version 1"),
            "{e}"
        );
    }

    #[test]
    fn write_read_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let s = slice("2110-34");
        let vals = pseudo_values(crate::index::SliceIndex::new(s).size() as usize, 9);
        let meta = meta_for(s, &vals);
        let path = table_path(dir.path(), &s);
        assert!(path.ends_with("2110-34.egdb"));
        for access in [Access::Mmap, Access::Pread] {
            let opts = WriteOptions {
                block_positions: 1000,
                ..Default::default()
            };
            let n = write_table_with(&path, &meta, &vals, &opts).unwrap();
            let t = TableFile::open_with(&path, access).unwrap();
            assert_eq!(t.file_bytes(), n);
            assert_eq!(t.meta(), &meta);
            t.verify_checksum().unwrap();
            let all = t.decode_all().unwrap();
            for (i, (&a, &b)) in vals.iter().zip(&all).enumerate() {
                if a != DONT_CARE {
                    assert_eq!(a, b, "index {i}");
                }
                if i % 997 == 0 {
                    assert_eq!(t.get(i as u64).unwrap() as u8, b);
                }
            }
            assert!(t.get(vals.len() as u64).is_err());
        }
        // Only the final file is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn deterministic_bytes() {
        let s = slice("0202-nn");
        let vals = pseudo_values(crate::index::SliceIndex::new(s).size() as usize, 3);
        let meta = meta_for(s, &vals);
        let a = encode_table(&meta, &vals, &WriteOptions::default()).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = pool.install(|| encode_table(&meta, &vals, &WriteOptions::default()).unwrap());
        assert_eq!(a, b);
    }

    #[test]
    fn uniform_slice_has_no_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let s = slice("0101-nn");
        let vals: Vec<u8> = (0..992).map(|i| if i % 3 == 0 { 3 } else { 0 }).collect();
        let meta = meta_for(s, &vals);
        let path = table_path(dir.path(), &s);
        let n = write_table(&path, &meta, &vals).unwrap();
        assert_eq!(n, (HEADER_LEN + 8) as u64);
        assert_eq!(n, 72);
        let t = TableFile::open(&path).unwrap();
        assert_eq!(t.uniform(), Some(Wld::Loss));
        assert_eq!(t.get(991).unwrap(), Wld::Loss);
        assert_eq!(t.decode_all().unwrap(), vec![0; 992]);
    }

    #[test]
    fn rejects_bad_input() {
        let s = slice("0101-nn");
        let vals = vec![0u8, 1, 2];
        let mut meta = meta_for(s, &vals);
        assert!(encode_table(&meta, &vals[..2], &WriteOptions::default()).is_err());
        meta.wins += 1;
        assert!(encode_table(&meta, &vals, &WriteOptions::default()).is_err());
        let meta = meta_for(s, &vals);
        assert!(encode_table(&meta, &[0, 1, 4], &WriteOptions::default()).is_err());
    }
}
