//! Distance-to-conversion (DTC) files: one per slice, `<slice name>.dtc` beside the WLD file
//! (layout in docs/format.md, "DTC files").
//!
//! Same container as the WLD files (the one [`Header`] with magic [`DTC_MAGIC`](super::header::DTC_MAGIC), offset table
//! with per-block checksums, whole-file checksum, atomic deterministic writes), with the codec
//! [`DtcByte`] (id [`CODEC_DTC_BYTE`]): one byte per position, 0..=254 the distance in plies,
//! 255 an escape whose distance (a `u32`) follows the block's bytes in an exception list, in
//! position order; each block is one zstd frame. Distances are exact plies, any size.
//!
//! Draws and capture positions are "don't care" (the WLD file says which, and a capture
//! position has DTC 1 by definition): the writer fills them with the block's most common
//! stored distance. A block whose values are all equal stores no bytes (its entry holds the
//! distance), a slice whose values are all one byte symbol stores no blocks.

use super::codec::ValueCodec;
use super::error::{Fault, TableError};
use super::header::{FileKind, Header, TableMeta, FORMAT_VERSION, HEADER_LEN, HEADER_SUMMED};
use super::pack::Source;
use super::write::{write_atomic, BlockInfo, EncodedBlock, WriteOptions};
use super::NO_CONST;
use crate::slice::Slice;
use bitvec::prelude::{BitSlice, Lsb0};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh64::{xxh64, Xxh64};

/// Codec id of distance files: one byte per position with an escape, zstd per block.
pub const CODEC_DTC_BYTE: u32 = 3;
/// The byte symbol meaning "the distance is in the block's exception list".
pub const ESCAPE: u8 = 255;
/// zstd level of distance files written by `egdb build --dtc`: a distance block is four times
/// the bytes of a WLD block before compression, and level 9 compresses it 3.5x faster than
/// level 15 for 15% more bytes (5-piece files: 24.9 against 29.4 positions per byte;
/// `examples/dtc_levels.rs`).
pub const DTC_LEVEL: i32 = 9;
/// File name extension of distance files (without the dot).
pub const DTC_EXTENSION: &str = "dtc";

/// `dir/<slice name>.dtc`, e.g. `egdb/0201-nn.dtc`.
pub fn dtc_path(dir: &Path, slice: &Slice) -> PathBuf {
    dir.join(format!("{slice}.{DTC_EXTENSION}"))
}

/// The slice a file name `<slice name>.dtc` stands for, or `None` for any other name (only
/// the canonical lower-case spelling counts, as for [`super::slice_of_file_name`]).
pub fn slice_of_dtc_file_name(name: &str) -> Option<Slice> {
    let stem = name.strip_suffix(".dtc")?;
    let s: Slice = stem.parse().ok()?;
    (s.to_string() == stem).then_some(s)
}

/// The byte code of distance files. Symbols are bytes: 0..=254 a distance, [`ESCAPE`] a
/// distance of 255 plies or more stored as a little-endian `u32` after the block's bytes
/// ([`encode_block`], [`dtc_in_block`] handle the exceptions; the trait covers the bytes).
#[derive(Clone, Copy, Debug, Default)]
#[allow(
    dead_code,
    reason = "the codec's definition; encode_block and dtc_in_block code the blocks"
)]
pub struct DtcByte;

impl ValueCodec for DtcByte {
    const ID: u32 = CODEC_DTC_BYTE;
    const MAX_SYMBOL: u8 = ESCAPE;
    const DONT_CARE: Option<u8> = None;
    const PER_BYTE: usize = 1;
    type Value = u8;

    fn pack(symbols: &[u8]) -> Vec<u8> {
        symbols.to_vec()
    }
    fn stored_len(n: usize) -> usize {
        n
    }
    fn stored_symbol(stored: &[u8], i: usize) -> u8 {
        stored[i]
    }
    fn unpack(stored: &[u8], n: usize) -> Result<Vec<u8>, usize> {
        check_block(stored, n)?;
        Ok(stored.to_vec())
    }
    fn symbol_in_byte(byte: u8, _k: usize) -> u8 {
        byte
    }
    fn value(symbol: u8) -> Option<u8> {
        Some(symbol)
    }
}

/// The stored form of a block of distances: `d.len()` bytes (`min(d, 255)`), then a
/// little-endian `u32` for each distance of 255 or more, in position order.
pub fn encode_block(d: &[u32]) -> Vec<u8> {
    let mut out: Vec<u8> = d.iter().map(|&x| x.min(u32::from(ESCAPE)) as u8).collect();
    for &x in d.iter().filter(|&&x| x >= u32::from(ESCAPE)) {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// Every distance of a stored block of `n` positions ([`encode_block`]'s form, already
/// checked: `n` bytes then 4 per escape), in one pass with the exceptions in order.
///
/// # Panics
/// If `mem` is shorter than that form (a block that did not pass the decoder's check).
pub fn decode_block_form(mem: &[u8], n: usize) -> Vec<u32> {
    let mut esc = 0;
    (0..n)
        .map(|i| {
            if mem[i] == ESCAPE {
                let at = n + 4 * esc;
                esc += 1;
                u32::from_le_bytes(mem[at..at + 4].try_into().unwrap())
            } else {
                u32::from(mem[i])
            }
        })
        .collect()
}

/// Check a decoded block of `n` positions: its length is `n` plus 4 per escape, and every
/// escaped distance is at least 255 (so each distance has one encoding). `Err(byte)` names
/// the offending byte.
fn check_block(mem: &[u8], n: usize) -> Result<(), usize> {
    if mem.len() < n {
        return Err(mem.len());
    }
    let esc = mem[..n].iter().filter(|&&b| b == ESCAPE).count();
    if mem.len() != n + 4 * esc {
        return Err(n);
    }
    for k in 0..esc {
        let at = n + 4 * k;
        let v = u32::from_le_bytes(mem[at..at + 4].try_into().unwrap_or_default());
        if v < u32::from(ESCAPE) || v == NO_CONST {
            return Err(at);
        }
    }
    Ok(())
}

/// Distance of position `i` of a decoded block of `n` positions (as [`encode_block`] wrote it).
#[inline]
pub fn dtc_in_block(mem: &[u8], n: usize, i: usize) -> u32 {
    let b = mem[i];
    if b != ESCAPE {
        return u32::from(b);
    }
    let k = mem[..i].iter().filter(|&&x| x == ESCAPE).count();
    let at = n + 4 * k;
    u32::from_le_bytes(mem[at..at + 4].try_into().unwrap_or_default())
}

/// Most common distance of the known positions of a block (ties to the smaller), 0 if none.
fn majority(d: &[u32], known: impl Fn(usize) -> bool) -> u32 {
    let mut n = std::collections::HashMap::<u32, u64>::new();
    for (i, &x) in d.iter().enumerate() {
        if known(i) {
            *n.entry(x).or_default() += 1;
        }
    }
    n.into_iter()
        .max_by_key(|&(x, c)| (c, std::cmp::Reverse(x)))
        .map_or(0, |(x, _)| x)
}

/// Encode the distance file of a slice. `dtc[i]`: the distance of position `i` in plies;
/// positions with `dont_care[i]` set (draws and capture positions) are filled by the writer.
/// `meta`: the slice's counts (wins, losses as in the WLD file) and `longest` = the largest
/// distance.
///
/// # Errors
/// [`TableError::Invalid`] for inconsistent inputs (lengths, counts, options; a distance of
/// `u32::MAX`).
pub fn encode_dtc(
    meta: &TableMeta,
    dtc: &[u32],
    dont_care: &BitSlice<u64, Lsb0>,
    opts: &WriteOptions,
) -> Result<Vec<u8>, TableError> {
    encode_distances(FileKind::Dtc, meta, dtc, dont_care, opts)
}

/// [`encode_dtc`] for a file of `kind` ([`FileKind::Dtc`] or [`FileKind::Dtw`]: the same
/// container and codec, told apart by the magic). The distances may come as any unsigned
/// type up to `u32` (the depth-to-win pass hands over its `u16` depths without a copy); the
/// bytes written depend only on the values.
///
/// # Errors
/// As [`encode_dtc`].
pub(crate) fn encode_distances<D: Copy + Into<u32> + Sync>(
    kind: FileKind,
    meta: &TableMeta,
    dtc: &[D],
    dont_care: &BitSlice<u64, Lsb0>,
    opts: &WriteOptions,
) -> Result<Vec<u8>, TableError> {
    let size = crate::index::SliceIndex::new(meta.slice).size();
    if dtc.len() as u64 != size || meta.positions != size || dont_care.len() != dtc.len() {
        return Err(TableError::Invalid(format!(
            "{} distances and {} mask bits for slice {} of {size} positions",
            dtc.len(),
            dont_care.len(),
            meta.slice
        )));
    }
    if meta.wins + meta.losses + meta.draws != meta.positions {
        return Err(TableError::Invalid(format!(
            "wins + losses + draws != positions (slice {})",
            meta.slice
        )));
    }
    check_distance_options(opts)?;
    let blocks = encode_distance_blocks(dtc, dont_care, opts)?;
    let infos: Vec<BlockInfo> = blocks.iter().map(BlockInfo::from).collect();
    let (mut out, with_data) = distance_layout(kind, meta, &infos, opts)?;
    if with_data {
        for b in &blocks {
            out.extend_from_slice(&b.data);
        }
    }
    let fc = xxh64(&out, 0);
    out.extend_from_slice(&fc.to_le_bytes());
    Ok(out)
}

/// The blocks of a run of distances that starts at a block boundary of its slice (`dtc`:
/// the distances of those positions, `dont_care` their don't-care bits; the run ends at a
/// block boundary or at the slice's end), each encoded on its own: don't cares filled with
/// the block's most common stored distance, a block of one distance stored as a constant
/// (no bytes), else the stored form ([`encode_block`]) as one zstd frame at `opts.level`.
/// The blocks are those [`encode_distances`] writes for the same positions, so ranks that
/// encode their own block-aligned ranges of a slice produce the single-process file's
/// blocks (`generate::split`).
///
/// # Errors
/// [`TableError::Invalid`]: lengths that differ, a distance of `u32::MAX`, bad options.
pub(crate) fn encode_distance_blocks<D: Copy + Into<u32> + Sync>(
    dtc: &[D],
    dont_care: &BitSlice<u64, Lsb0>,
    opts: &WriteOptions,
) -> Result<Vec<EncodedBlock>, TableError> {
    if dont_care.len() != dtc.len() {
        return Err(TableError::Invalid(format!(
            "{} distances and {} mask bits",
            dtc.len(),
            dont_care.len()
        )));
    }
    check_distance_options(opts)?;
    if dtc.par_iter().any(|&x| x.into() == NO_CONST) {
        return Err(TableError::Invalid("distance u32::MAX".into()));
    }
    let bp = opts.block_positions as usize;
    dtc.par_chunks(bp)
        .enumerate()
        .map(|(b, chunk)| {
            let m = &dont_care[b * bp..b * bp + chunk.len()];
            let mut v: Vec<u32> = chunk.iter().map(|&x| x.into()).collect();
            let fill = majority(&v, |i| !m[i]);
            for i in m.iter_ones() {
                v[i] = fill;
            }
            if v.iter().all(|&x| x == v[0]) {
                return Ok(EncodedBlock {
                    data: Vec::new(),
                    constant: v[0],
                });
            }
            let stored = encode_block(&v);
            let data = zstd::bulk::Compressor::new(opts.level)
                .and_then(|mut c| {
                    c.include_checksum(false)?;
                    c.include_contentsize(true)?;
                    c.include_dictid(false)?;
                    c.compress(&stored)
                })
                .map_err(|e| TableError::Invalid(format!("zstd: {e}")))?;
            Ok(EncodedBlock {
                data,
                constant: NO_CONST,
            })
        })
        .collect()
}

/// [`TableError::Invalid`] for writer settings a distance file cannot take (block size,
/// zstd level, rules id).
fn check_distance_options(opts: &WriteOptions) -> Result<(), TableError> {
    if opts.block_positions < 20 || !opts.block_positions.is_multiple_of(20) {
        return Err(TableError::Invalid(format!(
            "block size {} is not a positive multiple of 20",
            opts.block_positions
        )));
    }
    if !(1..=22).contains(&opts.level) || opts.rules > 255 {
        return Err(TableError::Invalid("zstd level or rules id".into()));
    }
    Ok(())
}

/// The head of a distance file of `kind` (header with its checksum, then the offset table)
/// for the slice and counts of `meta` and `blocks` (every block of the slice, in order, as
/// [`encode_distance_blocks`] gives them), and whether the blocks' bytes follow it: a file
/// is its head, the bytes of every block in order (none when the slice is uniform: every
/// block a constant of one distance below 255), then the xxh64 of all that (8 bytes,
/// little-endian). End offsets take 4 bytes while the data is under 4 GiB, else 8.
///
/// # Errors
/// [`TableError::Invalid`]: counts that do not add up, positions that are not the slice's,
/// a block count that does not match them, bad options.
pub(crate) fn distance_layout(
    kind: FileKind,
    meta: &TableMeta,
    blocks: &[BlockInfo],
    opts: &WriteOptions,
) -> Result<(Vec<u8>, bool), TableError> {
    check_distance_options(opts)?;
    let size = crate::index::SliceIndex::new(meta.slice).size();
    if meta.positions != size || meta.wins + meta.losses + meta.draws != meta.positions {
        return Err(TableError::Invalid(format!(
            "counts of slice {} do not add up to its {size} positions",
            meta.slice
        )));
    }
    let want = meta.positions.div_ceil(u64::from(opts.block_positions));
    if blocks.len() as u64 != want {
        return Err(TableError::Invalid(format!(
            "{} blocks for the {} positions of slice {} ({want} expected)",
            blocks.len(),
            meta.positions,
            meta.slice
        )));
    }
    let (blocks, uniform): (&[BlockInfo], Option<u8>) = match blocks.first() {
        Some(f)
            if f.constant < u32::from(ESCAPE)
                && blocks.iter().all(|b| b.constant == f.constant) =>
        {
            (&[], Some(f.constant as u8))
        }
        None => (&[], Some(0)),
        _ => (blocks, None),
    };
    let data_len: u64 = blocks.iter().map(|b| b.len).sum();
    let width: usize = if data_len <= u64::from(u32::MAX) {
        4
    } else {
        8
    };
    let header = Header {
        kind,
        version: FORMAT_VERSION as u8,
        rules: opts.rules as u8,
        codec: CODEC_DTC_BYTE as u8,
        level: opts.level as u8,
        slice: meta.slice,
        uniform,
        width: width as u8,
        block_positions: opts.block_positions,
        positions: meta.positions,
        wins: meta.wins,
        losses: meta.losses,
        longest: meta.longest,
        blocks: blocks.len() as u32,
    };
    let mut out = Vec::with_capacity(HEADER_LEN + blocks.len() * (width + 4));
    out.extend_from_slice(&header.to_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
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
    Ok((out, !blocks.is_empty()))
}

/// `encode_dtc` and write the bytes atomically to `path` (temporary file, fsync, rename,
/// directory fsync). Returns the bytes written.
///
/// # Errors
/// As `encode_dtc`; [`TableError::Io`].
pub fn write_dtc(
    path: &Path,
    meta: &TableMeta,
    dtc: &[u32],
    dont_care: &BitSlice<u64, Lsb0>,
    opts: &WriteOptions,
) -> Result<u64, TableError> {
    let bytes = encode_dtc(meta, dtc, dont_care, opts)?;
    write_atomic(path, &bytes)
}

/// One block of a distance file as decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DtcBlock {
    /// Every position of the block has this distance.
    Const(u32),
    /// The block's stored form, checked: read with [`dtc_in_block`].
    Data(Vec<u8>),
}

/// An open, validated distance file (memory-mapped). `Send + Sync`.
pub struct DtcFile {
    path: PathBuf,
    map: memmap2::Mmap,
    meta: TableMeta,
    block_positions: u32,
    n_blocks: u64,
    uniform: Option<u32>,
    width: usize,
    data_start: usize,
}

impl std::fmt::Debug for DtcFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DtcFile")
            .field("path", &self.path)
            .field("meta", &self.meta)
            .finish()
    }
}

fn rd_uint(b: &[u8], at: usize, w: usize) -> u64 {
    let mut x = [0u8; 8];
    x[..w].copy_from_slice(&b[at..at + w]);
    u64::from_le_bytes(x)
}

impl DtcFile {
    /// Open and validate the distance file at `path` for rules id `rules`: magic, version,
    /// rules, codec, header checksum over the header and offset table, header consistency,
    /// offset table and file length; if the name is `<slice>.dtc` the header must hold that
    /// slice. Block data is not read.
    ///
    /// # Errors
    /// [`TableError::Io`], [`TableError::NotAFile`], [`TableError::Corrupt`],
    /// [`TableError::WrongSlice`].
    pub fn open(path: &Path, rules: u32) -> Result<DtcFile, TableError> {
        Self::open_kind(path, rules, FileKind::Dtc)
    }

    /// [`DtcFile::open`] for a file of `kind`: `FileKind::Dtc` (`.dtc`) or
    /// `FileKind::Dtw` (`.dtw`, same container); the magic must be that kind's and a name
    /// `<slice>.<extension>` must match the header's slice.
    ///
    /// # Errors
    /// As [`DtcFile::open`]; [`TableError::Corrupt`] with [`Fault::BadMagic`] for a file of
    /// another kind.
    pub fn open_kind(path: &Path, rules: u32, kind: FileKind) -> Result<DtcFile, TableError> {
        Self::open_source(&Source::file(path.to_path_buf()), None, rules, kind)
    }

    /// The distance file of `kind` (`Dtc` or `Dtw`) of `slice` in `dir`, wherever it is: its own
    /// file `<slice>.dtc|dtw` or its member of the material file `<material>.dtc|dtw`
    /// ([`super::pack::locate`]); `None` when it has neither.
    ///
    /// # Errors
    /// As [`DtcFile::open_source`], and a damaged material file's index.
    pub fn find(
        dir: &Path,
        slice: &Slice,
        rules: u32,
        kind: FileKind,
    ) -> Result<Option<DtcFile>, TableError> {
        match super::pack::locate(dir, slice, kind)? {
            None => Ok(None),
            Some(src) => Self::open_source(&src, Some(slice), rules, kind).map(Some),
        }
    }

    /// [`DtcFile::open_kind`] for the file of `slice` (when given) wherever it is: a file of
    /// its own or a member of a material file ([`super::pack::locate`]); the header must hold
    /// that slice.
    ///
    /// # Errors
    /// As [`DtcFile::open_kind`]; a member extending past the end of its material file is
    /// [`Fault::Truncated`].
    pub fn open_source(
        src: &Source,
        slice: Option<&Slice>,
        rules: u32,
        kind: FileKind,
    ) -> Result<DtcFile, TableError> {
        let suffix = if kind == FileKind::Dtw {
            ".dtw"
        } else {
            ".dtc"
        };
        let path = src.path.as_path();
        let name = match (src.range, slice) {
            (Some(_), Some(s)) => PathBuf::from(src.describe(s)),
            _ => path.to_path_buf(),
        };
        let md = std::fs::metadata(path).map_err(|e| TableError::io(path, "stat", e))?;
        if !md.is_file() {
            return Err(TableError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        let file = super::read::open_file(path).map_err(|e| TableError::io(path, "open", e))?;
        // The length of the file opened, not of the path stat-ed before (a file swapped in
        // between would be mapped past its end: SIGBUS on the first read there).
        let md = file
            .metadata()
            .map_err(|e| TableError::io(path, "stat", e))?;
        if !md.is_file() {
            return Err(TableError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        let bad = |f: Fault| TableError::corrupt(&name, f);
        let (base, len) = src.span(md.len()).map_err(bad)?;
        let min = HEADER_LEN as u64 + 8;
        if len < min {
            return Err(bad(Fault::Truncated { len, expected: min }));
        }
        // SAFETY: distance files are written once (atomically renamed into place) and never
        // modified in place; a file changed under us gives wrong bytes, which the checksums
        // catch, but no memory unsafety (only reads).
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(base)
                .len(len as usize)
                .map(&file)
        }
        .map_err(|e| TableError::io(path, "mmap", e))?;
        let h = &map[..HEADER_LEN];
        let header = Header::parse(h).map_err(bad)?;
        if header.kind != kind || kind == FileKind::Wld || h[..8] != kind.magic() {
            return Err(bad(Fault::BadMagic));
        }
        if !super::read::rules_accepted(u32::from(header.rules), rules) {
            return Err(bad(Fault::Rules {
                found: u32::from(header.rules),
                expected: rules,
            }));
        }
        if u32::from(header.codec) != CODEC_DTC_BYTE {
            return Err(bad(Fault::Codec(u32::from(header.codec))));
        }
        let w = header.width as usize;
        if w != 4 && w != 8 {
            return Err(bad(Fault::BadHeader(format!("offset width {w}"))));
        }
        let n_blocks = u64::from(header.blocks);
        let table_len = n_blocks * (w as u64 + 4);
        if table_len > len - min {
            return Err(bad(Fault::BadHeader(format!("block count {n_blocks}"))));
        }
        let table = &map[HEADER_LEN..HEADER_LEN + table_len as usize];
        let mut hh = Xxh64::new(0);
        hh.update(&h[..HEADER_SUMMED]);
        hh.update(table);
        if hh.digest() != Header::stored_checksum(h) {
            return Err(bad(Fault::HeaderChecksum));
        }
        let meta = header.validate(ESCAPE - 1).map_err(bad)?;
        let mut prev = 0u64;
        for b in 0..n_blocks as usize {
            let end = rd_uint(table, b * (w + 4), w);
            if end < prev {
                return Err(bad(Fault::BadHeader(format!("offset table entry {b}"))));
            }
            prev = end;
        }
        let data_start = HEADER_LEN as u64 + table_len;
        // The last offset is any u64 in a crafted file (8-byte entries): no overflow.
        let file_len = data_start
            .checked_add(prev)
            .and_then(|x| x.checked_add(8))
            .ok_or_else(|| {
                bad(Fault::BadHeader(format!(
                    "offset table entry {}",
                    n_blocks.saturating_sub(1)
                )))
            })?;
        if file_len > len {
            return Err(bad(Fault::Truncated {
                len,
                expected: file_len,
            }));
        }
        if file_len < len {
            return Err(bad(Fault::TrailingBytes {
                len,
                expected: file_len,
            }));
        }
        let expected = match (src.range, slice) {
            (Some(_), Some(s)) => Some(*s),
            _ => path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(suffix))
                .and_then(|n| n.parse::<Slice>().ok())
                .or(slice.copied()),
        };
        if let Some(expected) = expected {
            if expected != meta.slice {
                return Err(TableError::WrongSlice {
                    path: name,
                    expected,
                    found: meta.slice,
                });
            }
        }
        Ok(DtcFile {
            path: name,
            block_positions: header.block_positions,
            n_blocks,
            uniform: header.uniform.map(u32::from),
            width: w,
            data_start: data_start as usize,
            meta,
            map,
        })
    }

    /// The slice summary (counts as in the WLD file; `longest` = largest distance).
    pub fn meta(&self) -> &TableMeta {
        &self.meta
    }
    /// Positions per block.
    pub fn block_positions(&self) -> u32 {
        self.block_positions
    }
    /// Stored blocks (0 for a uniform file).
    pub fn block_count(&self) -> u64 {
        self.n_blocks
    }
    /// The one distance of a file that stores no blocks.
    pub fn uniform(&self) -> Option<u32> {
        self.uniform
    }
    /// Size of the file in bytes.
    pub fn file_bytes(&self) -> u64 {
        self.map.len() as u64
    }
    /// Positions of block `b` (the last may be short).
    pub fn positions_in_block(&self, b: u64) -> usize {
        let bp = u64::from(self.block_positions);
        (self.meta.positions - b * bp).min(bp) as usize
    }

    /// Decode block `b`: checksum, zstd, size and exception checks.
    ///
    /// # Errors
    /// [`TableError::Invalid`] for `b` out of range; [`TableError::Corrupt`] with
    /// [`Fault::BlockChecksum`] or [`Fault::BlockDecode`].
    pub fn decode_block(&self, b: u64) -> Result<DtcBlock, TableError> {
        if let Some(u) = self.uniform {
            return Ok(DtcBlock::Const(u));
        }
        if b >= self.n_blocks {
            return Err(TableError::Invalid(format!(
                "block {b} of {} in {}",
                self.n_blocks,
                self.path.display()
            )));
        }
        let (w, el) = (self.width, self.width + 4);
        let table = &self.map[HEADER_LEN..self.data_start];
        let bi = b as usize;
        let end = rd_uint(table, bi * el, w) as usize;
        let start = if bi == 0 {
            0
        } else {
            rd_uint(table, (bi - 1) * el, w) as usize
        };
        let check = u32::from_le_bytes(table[bi * el + w..bi * el + w + 4].try_into().unwrap());
        let fault = |f: Fault| TableError::corrupt(&self.path, f);
        if start == end {
            // The writer never stores this constant (it marks "not constant" in its tables);
            // read as a distance it would be a 4-billion-ply depth.
            if check == NO_CONST {
                return Err(fault(Fault::BlockDecode {
                    block: b,
                    why: format!("constant {NO_CONST:#x} (no distance)"),
                }));
            }
            return Ok(DtcBlock::Const(check));
        }
        // The offsets are read from the map on every call: a file rewritten in place after it
        // was opened may hold any bytes there (checked at open only), so no unchecked slice.
        let data = (start <= end)
            .then(|| self.map.get(self.data_start + start..self.data_start + end))
            .flatten()
            .ok_or_else(|| fault(Fault::BlockChecksum(b)))?;
        if xxh64(data, 0) as u32 != check {
            return Err(fault(Fault::BlockChecksum(b)));
        }
        let n = self.positions_in_block(b);
        let mem = super::with_decompressor(|d| d.decompress(data, 5 * n)).map_err(|e| {
            fault(Fault::BlockDecode {
                block: b,
                why: e.to_string(),
            })
        })?;
        check_block(&mem, n).map_err(|i| {
            fault(Fault::BlockDecode {
                block: b,
                why: format!("bad size or exception at byte {i}"),
            })
        })?;
        Ok(DtcBlock::Data(mem))
    }

    /// Stored distance of position `index` (decodes one block, no cache); don't-care
    /// positions give the writer's filler.
    ///
    /// # Errors
    /// [`TableError::Invalid`] for an index out of range; as [`DtcFile::decode_block`].
    pub fn get(&self, index: u64) -> Result<u32, TableError> {
        if index >= self.meta.positions {
            return Err(TableError::Invalid(format!(
                "index {index} out of range for slice {}",
                self.meta.slice
            )));
        }
        let bp = u64::from(self.block_positions);
        let b = index / bp;
        Ok(match self.decode_block(b)? {
            DtcBlock::Const(d) => d,
            DtcBlock::Data(m) => {
                dtc_in_block(&m, self.positions_in_block(b), (index % bp) as usize)
            }
        })
    }

    /// Every stored distance in index order.
    ///
    /// # Errors
    /// As [`DtcFile::decode_block`].
    pub fn decode_all(&self) -> Result<Vec<u32>, TableError> {
        let n = self.meta.positions as usize;
        if let Some(u) = self.uniform {
            return Ok(vec![u; n]);
        }
        let parts: Result<Vec<Vec<u32>>, TableError> = (0..self.n_blocks)
            .into_par_iter()
            .map(|b| {
                let k = self.positions_in_block(b);
                Ok(match self.decode_block(b)? {
                    DtcBlock::Const(d) => vec![d; k],
                    DtcBlock::Data(m) => decode_block_form(&m, k),
                })
            })
            .collect();
        Ok(parts?.concat())
    }

    /// Every stored distance in index order in a compact form: one byte per position, the
    /// distance when below 255, else 255 and the distance in the second vector (pairs of
    /// index and distance, ascending by index). A quarter of [`DtcFile::decode_all`]'s memory
    /// when few distances reach 255 (the depth-to-win pass keeps the depths of the slices it
    /// reads this way).
    ///
    /// # Errors
    /// As [`DtcFile::decode_block`].
    pub fn decode_compact(&self) -> Result<CompactDistances, TableError> {
        let n = self.meta.positions as usize;
        let bp = self.block_positions as usize;
        let mut bytes = vec![0u8; n];
        let big: Result<Vec<Vec<(u64, u32)>>, TableError> = bytes
            .par_chunks_mut(bp.max(1))
            .enumerate()
            .map(|(b, out)| {
                let base = (b * bp) as u64;
                let mut big = Vec::new();
                let k = out.len();
                let block = match self.uniform {
                    Some(u) => DtcBlock::Const(u),
                    None => self.decode_block(b as u64)?,
                };
                match block {
                    DtcBlock::Const(d) => {
                        out.fill(d.min(u32::from(ESCAPE)) as u8);
                        if d >= u32::from(ESCAPE) {
                            big.extend((0..k as u64).map(|i| (base + i, d)));
                        }
                    }
                    DtcBlock::Data(m) => {
                        out.copy_from_slice(&m[..k]);
                        let mut esc = 0;
                        for (i, &x) in m[..k].iter().enumerate() {
                            if x == ESCAPE {
                                let at = k + 4 * esc;
                                esc += 1;
                                let d = u32::from_le_bytes(m[at..at + 4].try_into().unwrap());
                                big.push((base + i as u64, d));
                            }
                        }
                    }
                }
                Ok(big)
            })
            .collect();
        Ok((bytes, big?.concat()))
    }

    /// The file's path; for a member of a material file `<material file>[<slice>]`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Check the whole-file xxh64 checksum.
    ///
    /// # Errors
    /// [`TableError::Corrupt`] with [`Fault::FileChecksum`].
    pub fn verify_checksum(&self) -> Result<(), TableError> {
        let body = self.map.len() - 8;
        let stored = u64::from_le_bytes(self.map[body..].try_into().unwrap());
        if xxh64(&self.map[..body], 0) != stored {
            return Err(TableError::corrupt(&self.path, Fault::FileChecksum));
        }
        Ok(())
    }
}

/// Distances one byte per position (255: look in the list) and the list of (index, distance)
/// pairs at 255 or above, ascending by index ([`DtcFile::decode_compact`]).
pub type CompactDistances = (Vec<u8>, Vec<(u64, u32)>);

#[cfg(test)]
mod tests {
    use super::*;
    use bitvec::prelude::BitVec;

    #[test]
    fn block_code_width_boundaries() {
        let d: Vec<u32> = vec![0, 1, 127, 128, 254, 255, 256, 1000, 70_000, 3, 255];
        let m = encode_block(&d);
        assert_eq!(m.len(), d.len() + 4 * 5);
        assert_eq!(&m[..5], &[0, 1, 127, 128, 254]);
        assert_eq!(m[5], ESCAPE);
        check_block(&m, d.len()).unwrap();
        for (i, &x) in d.iter().enumerate() {
            assert_eq!(dtc_in_block(&m, d.len(), i), x, "{i}");
        }
        // A non-canonical escape (a small distance escaped) and a short block are refused.
        let mut bad = m.clone();
        bad[d.len()..d.len() + 4].copy_from_slice(&7u32.to_le_bytes());
        assert!(check_block(&bad, d.len()).is_err());
        assert!(check_block(&m[..m.len() - 1], d.len()).is_err());
    }

    /// A header for `n` positions of `s` (10 wins, 20 losses) and blocks of 1,000 positions.
    fn sample_meta(s: Slice, n: usize, longest: u32) -> (TableMeta, WriteOptions) {
        let meta = TableMeta {
            slice: s,
            positions: n as u64,
            wins: 10,
            losses: 20,
            draws: n as u64 - 30,
            longest,
        };
        let opts = WriteOptions {
            block_positions: 1000,
            ..Default::default()
        };
        (meta, opts)
    }

    #[test]
    fn file_round_trip_with_dont_cares_and_long_distances() {
        let dir = tempfile::tempdir().unwrap();
        let s: Slice = "0201-nn".parse().unwrap();
        let n = crate::index::SliceIndex::new(s).size() as usize;
        let d: Vec<u32> = (0..n as u32)
            .map(|i| match i % 11 {
                0 => 127,
                1 => 128,
                2 => 255,
                3 => 256,
                4 => 1000 + i,
                _ => i % 40,
            })
            .collect();
        let mask: BitVec<u64, Lsb0> = (0..n).map(|i| i % 13 == 5).collect();
        let (meta, opts) = sample_meta(s, n, 9999);
        let path = dtc_path(dir.path(), &s);
        write_dtc(&path, &meta, &d, &mask, &opts).unwrap();
        let f = DtcFile::open(&path, crate::table::RULES_ENGLISH).unwrap();
        f.verify_checksum().unwrap();
        assert_eq!(f.meta(), &meta);
        let all = f.decode_all().unwrap();
        for i in 0..n {
            if !mask[i] {
                assert_eq!(all[i], d[i], "{i}");
                if i % 101 == 0 {
                    assert_eq!(f.get(i as u64).unwrap(), d[i]);
                }
            }
        }
        // Deterministic bytes whatever the thread count.
        let a = encode_dtc(&meta, &d, &mask, &opts).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = pool.install(|| encode_dtc(&meta, &d, &mask, &opts).unwrap());
        assert_eq!(a, b);
        assert_eq!(std::fs::read(&path).unwrap(), a);
        // A flipped data bit is an error, never a value; a WLD reader refuses the file.
        let mut bytes = a.clone();
        let k = bytes.len() - 20;
        bytes[k] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let f = DtcFile::open(&path, crate::table::RULES_ENGLISH).unwrap();
        assert!(f.verify_checksum().is_err());
        assert!(f.decode_all().is_err());
        std::fs::write(&path, &a).unwrap();
        assert!(crate::table::TableFile::open(&path).is_err());
    }

    /// A constant block whose stored constant is the writer's "no constant" marker
    /// (0xFFFFFFFF), in a file whose header and file checksums were recomputed (as a crafted
    /// file would have them): refused by `decode_block`, `get` and `decode_all`, never read as
    /// a distance of 4 billion plies.
    #[test]
    fn a_constant_block_holding_the_no_constant_marker_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let s: Slice = "0201-nn".parse().unwrap();
        let n = crate::index::SliceIndex::new(s).size() as usize;
        // Block 0 (positions 0..1000) constant 5, the rest varied.
        let d: Vec<u32> = (0..n as u32)
            .map(|i| if i < 1000 { 5 } else { i % 40 })
            .collect();
        let mask: BitVec<u64, Lsb0> = (0..n).map(|_| false).collect();
        let (meta, opts) = sample_meta(s, n, 39);
        let path = dtc_path(dir.path(), &s);
        write_dtc(&path, &meta, &d, &mask, &opts).unwrap();
        let good = DtcFile::open(&path, crate::table::RULES_ENGLISH).unwrap();
        assert_eq!(good.get(0).unwrap(), 5);
        let (w, blocks) = (good.width, good.n_blocks as usize);
        drop(good);
        let mut b = std::fs::read(&path).unwrap();
        // Entry 0 of the offset table: end offset (w bytes), then the block's check word,
        // which holds the constant of a block without data.
        let end0 = u64::from_le_bytes({
            let mut x = [0u8; 8];
            x[..w].copy_from_slice(&b[HEADER_LEN..HEADER_LEN + w]);
            x
        });
        assert_eq!(end0, 0, "block 0 is stored as a constant");
        let at = HEADER_LEN + w;
        assert_eq!(b[at..at + 4], 5u32.to_le_bytes());
        b[at..at + 4].copy_from_slice(&NO_CONST.to_le_bytes());
        let mut h = Xxh64::new(0);
        h.update(&b[..HEADER_SUMMED]);
        h.update(&b[HEADER_LEN..HEADER_LEN + blocks * (w + 4)]);
        let hc = h.digest();
        b[HEADER_SUMMED..HEADER_LEN].copy_from_slice(&hc.to_le_bytes());
        let body = b.len() - 8;
        let fc = xxh64(&b[..body], 0);
        b[body..].copy_from_slice(&fc.to_le_bytes());
        std::fs::write(&path, &b).unwrap();
        let f = DtcFile::open(&path, crate::table::RULES_ENGLISH).unwrap();
        f.verify_checksum().unwrap();
        assert!(matches!(
            f.decode_block(0),
            Err(TableError::Corrupt {
                what: Fault::BlockDecode { block: 0, .. },
                ..
            })
        ));
        assert!(f.get(0).is_err());
        assert!(f.decode_all().is_err());
        assert!(f.decode_compact().is_err());
        // The other blocks still read.
        assert_eq!(f.get(1000).unwrap(), 1000 % 40);
    }
}
