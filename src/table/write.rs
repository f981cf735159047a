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
use std::sync::atomic::{AtomicU64, Ordering};
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

/// Write `bytes` to `path` atomically: temporary file in the same directory, fsync, rename,
/// directory fsync (best effort). Returns the bytes written.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<u64, TableError> {
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
        super::cm6::CODEC_CM_FILLED => {
            encode::<Wld2BitThreats>(meta, values, dont_care, opts, min_width)
        }
        c => Err(TableError::Invalid(format!("unknown value codec {c}"))),
    }
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

/// The encoder behind every writer function, for codec `C`.
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
    if opts.block_positions < 20 || !opts.block_positions.is_multiple_of(20) {
        return Err(TableError::Invalid(format!(
            "block size {} is not a positive multiple of 20",
            opts.block_positions
        )));
    }
    if !(1..=22).contains(&opts.level) {
        return Err(TableError::Invalid(format!("zstd level {}", opts.level)));
    }
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
            "value {} at index {i}",
            values[i]
        )));
    }
    if opts.rules > u32::from(u8::MAX) {
        return Err(TableError::Invalid(format!("rules id {}", opts.rules)));
    }
    let threats = C::ID == CODEC_2BIT_THREATS;
    let cm = opts.codec == super::cm::CODEC_CM_THREATS;
    let cm6 = opts.codec == super::cm6::CODEC_CM_FILLED;
    if threats && opts.rules != RULES_ENGLISH {
        return Err(TableError::Invalid(format!(
            "codec {} needs English rules (rules id {})",
            C::ID,
            opts.rules
        )));
    }
    let index = threats.then(|| crate::index::SliceIndex::new(meta.slice));
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
        .enumerate()
        .map(|(b, chunk)| {
            let mut v = chunk.to_vec();
            if let Some(m) = dont_care {
                let dc = C::DONT_CARE.unwrap_or(0);
                for i in m[b * bp..b * bp + chunk.len()].iter_ones() {
                    v[i] = dc;
                }
            }
            if cm6 {
                let ix = index.as_ref().expect("codec 6 has an index");
                let start = (b * bp) as u64;
                return match super::cm6::encode_block(ix, start, &v) {
                    Ok(super::cm6::Coded::Const(c)) => Ok(Enc {
                        data: Vec::new(),
                        constant: u32::from(c),
                    }),
                    Ok(super::cm6::Coded::Bytes(data)) => Ok(Enc {
                        data,
                        constant: NO_CONST,
                    }),
                    Err(i) => Err(TableError::Invalid(format!(
                        "no value at index {i} of slice {}, which codec 6 stores",
                        meta.slice
                    ))),
                };
            }
            if cm {
                let ix = index.as_ref().expect("codec 5 has an index");
                let start = (b * bp) as u64;
                return match super::cm::encode_block(ix, start, &v) {
                    Ok(super::cm::Coded::Const(c)) => Ok(Enc {
                        data: Vec::new(),
                        constant: u32::from(c),
                    }),
                    Ok(super::cm::Coded::Bytes(data)) => Ok(Enc {
                        data,
                        constant: NO_CONST,
                    }),
                    Err(i) => Err(TableError::Invalid(format!(
                        "no value at index {i} of slice {}, which codec 5 stores",
                        meta.slice
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
                        let p = ix.unrank((b * bp + k) as u64).expect("index below size");
                        if crate::rules::search::is_dont_care(crate::rules::English, &p) {
                            *x = dc;
                        }
                    }
                }
                fill_neighbours(&mut v);
            }
            fill_majority(&mut v);
            if v.iter().all(|&x| x == v[0]) {
                return Ok(Enc {
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
    let header = Header {
        kind: super::header::FileKind::Wld,
        version: FORMAT_VERSION as u8,
        rules: opts.rules as u8,
        codec: if cm {
            super::cm::CODEC_CM_THREATS as u8
        } else if cm6 {
            super::cm6::CODEC_CM_FILLED as u8
        } else {
            C::ID as u8
        },
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
    let put32 = |o: &mut Vec<u8>, x: u32| o.extend_from_slice(&x.to_le_bytes());
    let put64 = |o: &mut Vec<u8>, x: u64| o.extend_from_slice(&x.to_le_bytes());
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
