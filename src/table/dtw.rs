//! Depth-to-win (DTW) files: one per slice, `<slice name>.dtw` beside the WLD file (issue 33;
//! layout in docs/format.md, "DTW files").
//!
//! The container and codec of the distance-to-conversion files ([`super::dtc`]), with magic
//! [`DTW_MAGIC`](super::header::DTW_MAGIC): one byte per position (0..=254 the depth in plies,
//! 255 an escape to a `u32` in the block's exception list), zstd per block, per-block and
//! whole-file checksums, atomic deterministic writes. Depths are exact plies, any size.
//!
//! The metric, for a position p with value V for the side to move: V = win: the minimum of
//! 1 + DTW(p') over the moves to positions p' lost for the opponent; V = loss: 0 when the side
//! to move has no legal move, else the maximum of 1 + DTW(p') over all moves; draws have none
//! (they are "don't care" in the file, filled by the writer). Every move counts, captures and
//! man moves included, and capture positions are stored like any other. A win's depth is odd,
//! a loss's even.

use super::dtc::{encode_distances, DtcFile};
use super::error::TableError;
use super::header::{FileKind, TableMeta};
use super::write::{write_atomic, WriteOptions};
use crate::slice::Slice;
use bitvec::prelude::{BitSlice, Lsb0};
use std::path::{Path, PathBuf};

/// File name extension of depth-to-win files (without the dot).
pub const DTW_EXTENSION: &str = "dtw";

/// `dir/<slice name>.dtw`, e.g. `egdb/0201-nn.dtw`.
pub fn dtw_path(dir: &Path, slice: &Slice) -> PathBuf {
    dir.join(format!("{slice}.{DTW_EXTENSION}"))
}

/// The slice a file name `<slice name>.dtw` stands for, or `None` for any other name (only
/// the canonical lower-case spelling counts).
pub fn slice_of_dtw_file_name(name: &str) -> Option<Slice> {
    let stem = name.strip_suffix(".dtw")?;
    let s: Slice = stem.parse().ok()?;
    (s.to_string() == stem).then_some(s)
}

/// Encode the depth-to-win file of a slice: `dtw[i]` the depth of position `i` in plies (any
/// unsigned type up to `u32`; the bytes depend only on the values), positions with
/// `dont_care[i]` set (draws) filled by the writer; `meta`: the slice's counts and `longest` =
/// the largest depth.
///
/// # Errors
/// As [`super::dtc::encode_dtc`].
pub fn encode_dtw<D: Copy + Into<u32> + Sync>(
    meta: &TableMeta,
    dtw: &[D],
    dont_care: &BitSlice<u64, Lsb0>,
    opts: &WriteOptions,
) -> Result<Vec<u8>, TableError> {
    encode_distances(FileKind::Dtw, meta, dtw, dont_care, opts)
}

/// `encode_dtw` and write the bytes atomically to `path`; returns the bytes written.
///
/// # Errors
/// As `encode_dtw`; [`TableError::Io`].
pub fn write_dtw<D: Copy + Into<u32> + Sync>(
    path: &Path,
    meta: &TableMeta,
    dtw: &[D],
    dont_care: &BitSlice<u64, Lsb0>,
    opts: &WriteOptions,
) -> Result<u64, TableError> {
    let bytes = encode_dtw(meta, dtw, dont_care, opts)?;
    write_atomic(path, &bytes)
}

/// Open and validate the depth-to-win file at `path` for rules id `rules` (a [`DtcFile`]
/// reading a `.dtw`: its `get`/`decode_all` give depths in plies).
///
/// # Errors
/// As [`DtcFile::open`]; a `.dtc` or WLD file is [`TableError::Corrupt`] (bad magic).
pub fn open_dtw(path: &Path, rules: u32) -> Result<DtcFile, TableError> {
    DtcFile::open_kind(path, rules, FileKind::Dtw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bitvec::prelude::BitVec;

    #[test]
    fn round_trip_and_kinds_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let s: Slice = "0201-nn".parse().unwrap();
        let n = crate::index::SliceIndex::new(s).size() as usize;
        let d: Vec<u32> = (0..n as u32).map(|i| (i * 7) % 300 + i / 1000).collect();
        let mask: BitVec<u64, Lsb0> = (0..n).map(|i| i % 5 == 0).collect();
        let meta = TableMeta {
            slice: s,
            positions: n as u64,
            wins: 3,
            losses: 4,
            draws: n as u64 - 7,
            longest: 1234,
        };
        let opts = WriteOptions {
            block_positions: 1000,
            ..Default::default()
        };
        let p = dtw_path(dir.path(), &s);
        write_dtw(&p, &meta, &d, &mask, &opts).unwrap();
        let f = open_dtw(&p, crate::table::RULES_ENGLISH).unwrap();
        f.verify_checksum().unwrap();
        let all = f.decode_all().unwrap();
        for i in (0..n).filter(|&i| !mask[i]) {
            assert_eq!(all[i], d[i]);
        }
        // A .dtw is no .dtc and no WLD file, and a .dtc is no .dtw.
        assert!(DtcFile::open(&p, crate::table::RULES_ENGLISH).is_err());
        assert!(crate::table::TableFile::open(&p).is_err());
        let q = crate::table::dtc_path(dir.path(), &s);
        crate::table::dtc::write_dtc(&q, &meta, &d, &mask, &opts).unwrap();
        assert!(open_dtw(&q, crate::table::RULES_ENGLISH).is_err());
        // Renamed to another slice's name: refused.
        let r = dtw_path(dir.path(), &"0102-nn".parse().unwrap());
        std::fs::copy(&p, &r).unwrap();
        assert!(open_dtw(&r, crate::table::RULES_ENGLISH).is_err());
    }
}
