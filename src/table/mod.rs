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
//! probe decompresses one block; decoded blocks are handed out in the codec's memory form
//! (base 3, five per byte, for [`Wld2Bit`]). A block whose values are all equal stores no bytes, and a slice
//! whose values are all equal stores no blocks at all.
//!
//! Integrity: the header and block offset table carry an xxh64 checksum checked by
//! [`TableFile::open`]; every block carries a 32-bit xxh64 checksum checked whenever it is
//! decoded; the file ends with an xxh64 of everything before it, checked by
//! [`TableFile::verify_checksum`]. A damaged file gives a [`TableError::Corrupt`], never a value.

//! Rooms: [`header`] (the one [`Header`] type, parsed and written in one place), [`codec`]
//! (the [`ValueCodec`] trait and the WLD codec [`Wld2Bit`]), [`write`](mod@write) (encoder and atomic
//! writer), [`read`] ([`TableFile`]), [`error`] ([`TableError`], [`Fault`]).

pub mod cm;
pub mod cm6;
pub mod cm7;
pub mod codec;
pub mod dtc;
pub mod dtw;
pub mod error;
pub mod fdpool;
pub mod header;
pub mod pack;
pub mod read;
mod walk;
pub mod write;
#[cfg(test)]
mod write_compat_tests;

pub use cm::CODEC_CM_THREATS;
pub use cm6::CODEC_CM_FILLED;
pub use cm7::CODEC_CM_BOOK;
pub use codec::{ValueCodec, Wld2Bit, CODEC_2BIT_THREATS, CODEC_2BIT_ZSTD, DONT_CARE};
pub use dtc::{dtc_path, slice_of_dtc_file_name, DtcBlock, DtcFile, CODEC_DTC_BYTE};
pub use error::{Fault, TableError};
pub use fdpool::{FilePool, DEFAULT_MAX_OPEN_FILES};
pub use header::{FileKind, TableMeta, FORMAT_VERSION, HEADER_LEN, HEADER_SUMMED, RULES_ENGLISH};
pub use read::{dir_rules, Access, Block, TableFile, ANY_RULES};
pub use write::{write_table, write_table_masked, write_table_with, WriteOptions};

use crate::slice::Slice;
use std::path::{Path, PathBuf};

/// File name extension of table files (without the dot).
pub const EXTENSION: &str = "egdb";
/// Marker for "no constant" in a block entry's constant.
pub(crate) const NO_CONST: u32 = u32::MAX;

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

/// Runs `f` with this thread's zstd decompression context (made on first use, then kept):
/// a context costs a few hundred KiB to set up, more than the decoding of one small block
/// (before the distance files shared it, `ZSTD_createDCtx` was 13% of the CPU of probes with a
/// 64 KiB cache, `perf record`, 2026-12-06). Used by the value and the distance block readers.
///
/// # Errors
/// The context cannot be made, or `f`'s error.
pub(crate) fn with_decompressor<T>(
    f: impl FnOnce(&mut zstd::bulk::Decompressor<'static>) -> std::io::Result<T>,
) -> std::io::Result<T> {
    thread_local! {
        static DCTX: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    DCTX.with(|d| {
        let mut d = d.borrow_mut();
        if d.is_none() {
            *d = Some(zstd::bulk::Decompressor::new()?);
        }
        f(d.as_mut().expect("made above"))
    })
}

#[cfg(test)]
mod tests {
    use super::codec::{pack_2bit, pack_base3, packed_value, repack_2bit_to_base3};
    use super::write::{encode_table, encode_with_width, fill_majority, fill_neighbours};
    use super::*;
    use crate::board::Wld;

    #[test]
    fn neighbour_filling_continues_agreeing_runs_only() {
        const D: u8 = DONT_CARE;
        let mut v = [D, D, 2, D, 2, 0, D, D, 1, 1, D, 0, D];
        fill_neighbours(&mut v);
        // Edge runs take their one neighbour; runs between equal values take it; a run between
        // different values is left for the majority filling.
        assert_eq!(v, [2, 2, 2, 2, 2, 0, D, D, 1, 1, D, 0, 0]);
        let mut all = [D; 5];
        fill_neighbours(&mut all);
        assert_eq!(all, [D; 5]);
    }

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
        let v = pseudo_values(1003, 5);
        let mut f = v.clone();
        fill_majority(&mut f);
        let mut n = [0usize; 3];
        v.iter()
            .filter(|&&x| x != DONT_CARE)
            .for_each(|&x| n[x as usize] += 1);
        let most = (0..3)
            .max_by_key(|&i| (n[i], std::cmp::Reverse(i)))
            .unwrap() as u8;
        for (a, b) in v.iter().zip(&f) {
            assert!(*b <= 2);
            if *a != DONT_CARE {
                assert_eq!(a, b);
            } else {
                assert_eq!(*b, most);
            }
        }
        let mut all = vec![DONT_CARE; 7];
        fill_majority(&mut all);
        assert_eq!(all, vec![1; 7]);
    }

    #[test]
    fn rules_id_is_checked_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let s = slice("0101-nn");
        let vals = pseudo_values(992, 2);
        let meta = meta_for(s, &vals);
        let path = table_path(dir.path(), &s);
        let opts = WriteOptions {
            rules: 7,
            codec: CODEC_2BIT_ZSTD,
            ..Default::default()
        };
        // Codec 4 decides its don't cares by English rules: refused for other rules.
        let c4 = WriteOptions {
            codec: CODEC_2BIT_THREATS,
            ..opts
        };
        assert!(write_table_with(&path, &meta, &vals, &c4)
            .is_err_and(|e| e.is_misuse() && e.to_string().contains("English")));
        write_table_with(&path, &meta, &vals, &opts).unwrap();
        let e = TableFile::open(&path).unwrap_err();
        assert!(
            matches!(
                e,
                TableError::Corrupt {
                    what: Fault::Rules {
                        found: 7,
                        expected: RULES_ENGLISH
                    },
                    ..
                }
            ),
            "{e}"
        );
        let t = TableFile::open_rules(&path, Access::Pread, 7).unwrap();
        assert_eq!(t.rules(), 7);
        assert_eq!(t.meta(), &meta);
    }

    #[test]
    fn masked_writer_equals_dont_care_values() {
        use bitvec::prelude::{BitVec, Lsb0};
        let dir = tempfile::tempdir().unwrap();
        let s = slice("2110-34");
        let vals = pseudo_values(crate::index::SliceIndex::new(s).size() as usize, 11);
        let meta = meta_for(s, &vals);
        let opts = WriteOptions {
            block_positions: 1000,
            ..Default::default()
        };
        // The same don't-cares as a mask over arbitrary true values.
        let mask: BitVec<u64, Lsb0> = vals.iter().map(|&v| v == DONT_CARE).collect();
        let truth: Vec<u8> = vals
            .iter()
            .enumerate()
            .map(|(i, &v)| if v == DONT_CARE { (i % 3) as u8 } else { v })
            .collect();
        let a = dir.path().join("a.egdb");
        let b = dir.path().join("b.egdb");
        write_table_with(&a, &meta, &vals, &opts).unwrap();
        write_table_masked(&b, &meta, &truth, &mask, &opts).unwrap();
        assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
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
        let ix = crate::index::SliceIndex::new(s);
        for (access, codec) in [
            (Access::Mmap, CODEC_2BIT_ZSTD),
            (Access::Pread, CODEC_2BIT_ZSTD),
            (Access::Pread, CODEC_2BIT_THREATS),
        ] {
            let opts = WriteOptions {
                block_positions: 1000,
                codec,
                ..Default::default()
            };
            // Codec 4 stores no value where the probe never reads one.
            let stored = |i: usize| {
                codec == CODEC_2BIT_ZSTD
                    || !crate::rules::search::is_dont_care(
                        crate::rules::English,
                        &ix.unrank(i as u64).unwrap(),
                    )
            };
            let n = write_table_with(&path, &meta, &vals, &opts).unwrap();
            let t = TableFile::open_with(&path, access).unwrap();
            assert_eq!(t.file_bytes(), n);
            assert_eq!(t.meta(), &meta);
            t.verify_checksum().unwrap();
            let all = t.decode_all().unwrap();
            assert_eq!(t.decode_all_serial().unwrap(), all);
            assert_eq!(t.codec(), codec);
            for (i, (&a, &b)) in vals.iter().zip(&all).enumerate() {
                if a != DONT_CARE && stored(i) {
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
    fn reencode_equals_the_whole_slice_writer_and_ranges_decode() {
        use super::write::{reencode, reencode_in};
        let dir = tempfile::tempdir().unwrap();
        let s = slice("2110-34");
        let vals = pseudo_values(crate::index::SliceIndex::new(s).size() as usize, 21);
        let meta = meta_for(s, &vals);
        let path = dir.path().join("src.egdb");
        let src_opts = WriteOptions {
            block_positions: 200,
            ..Default::default()
        };
        write_table_with(&path, &meta, &vals, &src_opts).unwrap();
        let t = TableFile::open(&path).unwrap();
        let stored = t.decode_all().unwrap();
        // Ranges across block boundaries, empty, whole; out of range refused.
        let n = stored.len() as u64;
        for (a, b) in [
            (0, n),
            (0, 0),
            (199, 201),
            (150, 1234),
            (n - 1, n),
            (400, 400),
        ] {
            assert_eq!(
                t.decode_range(a, b).unwrap(),
                stored[a as usize..b as usize],
                "{a}..{b}"
            );
        }
        assert!(t.decode_range(5, 4).is_err() && t.decode_range(0, n + 1).is_err());
        // Other block sizes (smaller, larger, not a multiple of the source's) and codecs:
        // the bytes of the whole-slice writer given the stored values.
        for (bp, codec) in [
            (1000, CODEC_2BIT_ZSTD),
            (60, CODEC_2BIT_ZSTD),
            (200, CODEC_2BIT_THREATS),
            (65_520, CODEC_CM_THREATS),
            (1020, CODEC_CM_FILLED),
        ] {
            let opts = WriteOptions {
                block_positions: bp,
                codec,
                ..Default::default()
            };
            let want = encode_table(&meta, &stored, &opts).unwrap();
            assert_eq!(reencode(&t, &opts).unwrap(), want, "{bp} {codec}");
            // A few blocks at a time (ranges that cut the source's blocks).
            for chunk in [1, 700, 5000] {
                assert_eq!(
                    reencode_in(&t, &opts, chunk).unwrap(),
                    want,
                    "{bp} {codec} {chunk}"
                );
            }
        }
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
