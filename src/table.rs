//! Table file format: writer (atomic, deterministic), reader (memory-mapped or positioned reads),
//! checksums and the value codec. The byte layout is specified in `docs/format.md`.
//!
//! One file per [`Slice`], named `<slice name>.egdb` (see [`table_path`]). A file stores one
//! value per Black-to-move position of the slice, in [`crate::index::SliceIndex`] order:
//! 0 = loss, 1 = draw, 2 = win for Black (the side to move). Positions where the side to move
//! must capture are "don't care" when writing (value 3): probes resolve them by search, so the
//! writer stores whatever value compresses best there.
//!
//! Values are packed base 3 (five per byte), cut into blocks of a fixed number of positions
//! ([`WriteOptions::block_positions`]) and each block is compressed on its own with zstd, so one
//! probe decompresses one block. A block whose values are all equal stores no bytes, and a slice
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
pub const FORMAT_VERSION: u32 = 1;
/// Rules id of English (American) checkers, the only rules supported.
pub const RULES_ENGLISH: u32 = 1;
/// Codec id: values packed base 3 (5 per byte), blocks compressed with zstd one by one.
pub const CODEC_BASE3_ZSTD: u32 = 1;
/// Size in bytes of the fixed header at the start of a file.
pub const HEADER_LEN: usize = 128;
/// Size in bytes of one entry of the block offset table (u64 end offset + u32 checksum + u32
/// constant value).
pub const BLOCK_ENTRY_LEN: usize = 16;
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
pub fn slice_of_file_name(name: &str) -> Option<Slice> {
    let stem = name.strip_suffix(".egdb")?;
    stem.parse().ok()
}

// ---------------------------------------------------------------------------------------------
// Codec: base-3 packing.

/// `DIGITS[b][k]` = k-th base-3 digit (value of position `5*i+k`) of packed byte `b`
/// (only bytes 0..=242 occur in valid data; larger bytes decode to 3 and are rejected).
static DIGITS: [[u8; 5]; 256] = build_digits();

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
}

/// Writer settings. [`WriteOptions::default`] is what `egdb build` uses.
#[derive(Clone, Copy, Debug)]
pub struct WriteOptions {
    /// Positions per block (a multiple of 5, at least 5).
    pub block_positions: u32,
    /// zstd compression level (1..=22).
    pub level: i32,
    /// Don't-care filling strategy.
    pub fill: Fill,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            block_positions: 16_384 - 16_384 % 5,
            level: 19,
            fill: Fill::Majority,
        }
    }
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
            let mut n = [0u64; 4];
            vals.iter().for_each(|&v| n[v as usize] += 1);
            let m = (0..3).max_by_key(|&i| (n[i], std::cmp::Reverse(i))).unwrap() as u8;
            vals.iter_mut()
                .filter(|v| **v == DONT_CARE)
                .for_each(|v| *v = m);
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
    if values.len() as u64 != meta.positions {
        return Err(TableError::Invalid(format!(
            "{} values for {} positions of slice {}",
            values.len(),
            meta.positions,
            meta.slice
        )));
    }
    if meta.wins + meta.losses + meta.draws != meta.positions {
        return Err(TableError::Invalid(format!(
            "wins {} + losses {} + draws {} != positions {} (slice {})",
            meta.wins, meta.losses, meta.draws, meta.positions, meta.slice
        )));
    }
    if !meta.slice.is_valid() {
        return Err(TableError::Invalid(format!("invalid slice {:?}", meta.slice)));
    }
    if opts.block_positions < 5 || opts.block_positions % 5 != 0 {
        return Err(TableError::Invalid(format!(
            "block size {} is not a positive multiple of 5",
            opts.block_positions
        )));
    }
    if !(1..=22).contains(&opts.level) {
        return Err(TableError::Invalid(format!("zstd level {}", opts.level)));
    }
    if let Some(i) = values.iter().position(|&v| v > DONT_CARE) {
        return Err(TableError::Invalid(format!("value {} at index {i}", values[i])));
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
            let packed = pack_base3(&v);
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
    let data_len: usize = blocks.iter().map(|b| b.data.len()).sum();
    let table_len = n_blocks * BLOCK_ENTRY_LEN;
    let file_len = HEADER_LEN + table_len + data_len + 8;
    let mut out = Vec::with_capacity(file_len);
    out.extend_from_slice(&MAGIC);
    let put32 = |o: &mut Vec<u8>, x: u32| o.extend_from_slice(&x.to_le_bytes());
    let put64 = |o: &mut Vec<u8>, x: u64| o.extend_from_slice(&x.to_le_bytes());
    put32(&mut out, FORMAT_VERSION); // 8
    put32(&mut out, HEADER_LEN as u32); // 12
    put32(&mut out, RULES_ENGLISH); // 16
    put32(&mut out, CODEC_BASE3_ZSTD); // 20
    let m = meta.slice.material;
    out.extend_from_slice(&[m.bm, m.bk, m.wm, m.wk]); // 24
    let r = |x: Option<u8>| x.unwrap_or(0xFF);
    out.extend_from_slice(&[r(meta.slice.black_rank), r(meta.slice.white_rank), 0, 0]); // 28
    put64(&mut out, meta.positions); // 32
    put64(&mut out, meta.wins); // 40
    put64(&mut out, meta.losses); // 48
    put64(&mut out, meta.draws); // 56
    put32(&mut out, meta.longest); // 64
    put32(&mut out, opts.block_positions); // 68
    put64(&mut out, n_blocks as u64); // 72
    put32(&mut out, uniform); // 80
    put32(&mut out, opts.level as u32); // 84
    put64(&mut out, data_len as u64); // 88
    put64(&mut out, file_len as u64); // 96
    out.resize(120, 0); // 104..120 reserved, zero
    debug_assert_eq!(out.len(), 120);
    put64(&mut out, 0); // 120: header checksum, filled below
    let mut end = 0u64;
    for b in &blocks {
        end += b.data.len() as u64;
        put64(&mut out, end);
        let check = if b.data.is_empty() {
            0
        } else {
            xxh64(&b.data, 0) as u32
        };
        put32(&mut out, check);
        put32(&mut out, b.constant);
    }
    let mut h = Xxh64::new(0);
    h.update(&out[..120]);
    h.update(&out[HEADER_LEN..]);
    let hc = h.digest();
    out[120..128].copy_from_slice(&hc.to_le_bytes());
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
            return Err(self.fault(Fault::Truncated { len, expected: min }));
        }
        let h = self.read_at(0, HEADER_LEN)?.into_owned();
        if h[0..8] != MAGIC {
            return Err(self.fault(Fault::BadMagic));
        }
        let bad = |s: String| Fault::BadHeader(s);
        let version = rd32(&h, 8);
        if version != FORMAT_VERSION {
            return Err(self.fault(Fault::Version(version)));
        }
        if rd32(&h, 12) as usize != HEADER_LEN {
            return Err(self.fault(bad(format!("header length {}", rd32(&h, 12)))));
        }
        let rules = rd32(&h, 16);
        if rules != RULES_ENGLISH {
            return Err(self.fault(Fault::Rules(rules)));
        }
        let codec = rd32(&h, 20);
        if codec != CODEC_BASE3_ZSTD {
            return Err(self.fault(Fault::Codec(codec)));
        }
        let n_blocks = rd64(&h, 72);
        let file_len = rd64(&h, 96);
        let table_len = n_blocks.checked_mul(BLOCK_ENTRY_LEN as u64);
        let table_len = match table_len {
            Some(t) if t <= len => t,
            _ => {
                return Err(self.fault(bad(format!("block count {n_blocks}"))));
            }
        };
        if file_len > len {
            return Err(self.fault(Fault::Truncated {
                len,
                expected: file_len,
            }));
        }
        // Header checksum over header[0..120] + offset table.
        let table = self.read_at(HEADER_LEN as u64, table_len as usize)?.into_owned();
        let mut hh = Xxh64::new(0);
        hh.update(&h[..120]);
        hh.update(&table);
        if hh.digest() != rd64(&h, 120) {
            return Err(self.fault(Fault::HeaderChecksum));
        }
        if file_len < len {
            return Err(self.fault(Fault::TrailingBytes {
                len,
                expected: file_len,
            }));
        }
        // From here on the header is what the writer wrote; check its consistency anyway.
        let material = Material::new(h[24], h[25], h[26], h[27])
            .ok_or_else(|| self.fault(bad("material".into())))?;
        let rank = |x: u8| if x == 0xFF { None } else { Some(x) };
        let slice = Slice {
            material,
            black_rank: rank(h[28]),
            white_rank: rank(h[29]),
        };
        if !slice.is_valid() {
            return Err(self.fault(bad("slice ranks".into())));
        }
        let positions = rd64(&h, 32);
        let (wins, losses, draws) = (rd64(&h, 40), rd64(&h, 48), rd64(&h, 56));
        if wins.checked_add(losses).and_then(|x| x.checked_add(draws)) != Some(positions) {
            return Err(self.fault(bad("W/L/D counts do not add up".into())));
        }
        let block_positions = rd32(&h, 68);
        if block_positions < 5 || block_positions % 5 != 0 {
            return Err(self.fault(bad(format!("block size {block_positions}"))));
        }
        let uniform_raw = rd32(&h, 80);
        let uniform = if uniform_raw == NO_CONST {
            let need = positions.div_ceil(block_positions as u64);
            if n_blocks != need {
                return Err(self.fault(bad(format!(
                    "{n_blocks} blocks for {positions} positions of {block_positions}"
                ))));
            }
            None
        } else {
            let w = Wld::from_u8(uniform_raw as u8)
                .filter(|_| uniform_raw <= 2)
                .ok_or_else(|| self.fault(bad(format!("uniform value {uniform_raw}"))))?;
            if n_blocks != 0 {
                return Err(self.fault(bad("uniform slice with blocks".into())));
            }
            Some(w)
        };
        let data_len = rd64(&h, 88);
        let data_start = HEADER_LEN as u64 + table_len;
        if data_start.checked_add(data_len).and_then(|x| x.checked_add(8)) != Some(file_len) {
            return Err(self.fault(bad("lengths do not add up".into())));
        }
        let mut prev = 0u64;
        for b in 0..n_blocks as usize {
            let e = &table[b * BLOCK_ENTRY_LEN..(b + 1) * BLOCK_ENTRY_LEN];
            let end = rd64(e, 0);
            let c = rd32(e, 12);
            if end < prev || end > data_len || (end == prev) != (c != NO_CONST) || (c != NO_CONST && c > 2)
            {
                return Err(self.fault(bad(format!("offset table entry {b}"))));
            }
            prev = end;
        }
        if prev != data_len {
            return Err(self.fault(bad("offset table does not cover the data".into())));
        }
        self.meta = TableMeta {
            slice,
            positions,
            wins,
            losses,
            draws,
            longest: rd32(&h, 64),
        };
        self.block_positions = block_positions;
        self.n_blocks = n_blocks;
        self.uniform = uniform;
        self.level = rd32(&h, 84);
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

    fn entry(&self, b: u64) -> (u64, u64, u32, u32) {
        let table: &[u8] = match &self.backing {
            Backing::Mmap(m) => &m[HEADER_LEN..self.data_start as usize],
            Backing::Pread(_, t) => t,
        };
        let e = &table[b as usize * BLOCK_ENTRY_LEN..(b as usize + 1) * BLOCK_ENTRY_LEN];
        let start = if b == 0 {
            0
        } else {
            rd64(table, (b as usize - 1) * BLOCK_ENTRY_LEN)
        };
        (start, rd64(e, 0), rd32(e, 8), rd32(e, 12))
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
            return Err(TableError::Invalid(format!("block {b} of {}", self.n_blocks)));
        }
        let (_, _, _, c) = self.entry(b);
        Ok((c != NO_CONST).then(|| Wld::from_u8(c as u8).unwrap_or(Wld::Draw)))
    }

    /// Decode block `b` (`b < block_count()`): checks its checksum, decompresses it and checks
    /// the size and that every packed byte is a valid base-3 group.
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
            return Ok(Block::Const(Wld::from_u8(constant as u8).unwrap_or(Wld::Draw)));
        }
        let data = self.read_at(self.data_start + start, (end - start) as usize)?;
        if xxh64(&data, 0) as u32 != check {
            return Err(self.fault(Fault::BlockChecksum(b)));
        }
        let n = self.positions_in_block(b) as usize;
        let want = n.div_ceil(5);
        let mut out = vec![0u8; want];
        thread_local! {
            static DCTX: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
        }
        let got = DCTX.with(|d| {
            let mut d = d.borrow_mut();
            if d.is_none() {
                *d = Some(zstd::bulk::Decompressor::new()?);
            }
            d.as_mut().unwrap().decompress_to_buffer(&data[..], &mut out[..])
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
        if let Some(i) = out.iter().position(|&x| x > 242) {
            return Err(self.fault(Fault::BlockDecode {
                block: b,
                why: format!("byte {i} is not a base-3 group"),
            }));
        }
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
        for fill in [Fill::Previous, Fill::Majority, Fill::PreviousByte, Fill::Constant(2)] {
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
    fn write_read_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let s = slice("2110-34");
        let vals = pseudo_values(50_001, 9);
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
        let vals = pseudo_values(20_000, 3);
        let meta = meta_for(s, &vals);
        let a = encode_table(&meta, &vals, &WriteOptions::default()).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let b = pool.install(|| encode_table(&meta, &vals, &WriteOptions::default()).unwrap());
        assert_eq!(a, b);
    }

    #[test]
    fn uniform_slice_has_no_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let s = slice("0101-nn");
        let vals: Vec<u8> = (0..500).map(|i| if i % 3 == 0 { 3 } else { 0 }).collect();
        let meta = meta_for(s, &vals);
        let path = table_path(dir.path(), &s);
        let n = write_table(&path, &meta, &vals).unwrap();
        assert_eq!(n, (HEADER_LEN + 8) as u64);
        let t = TableFile::open(&path).unwrap();
        assert_eq!(t.uniform(), Some(Wld::Loss));
        assert_eq!(t.get(499).unwrap(), Wld::Loss);
        assert_eq!(t.decode_all().unwrap(), vec![0; 500]);
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
