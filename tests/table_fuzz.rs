//! Fuzzing the table reader and block decoder with proptest: arbitrary bytes and mutated valid
//! files must give errors or values, never a panic; a mutated file that still passes the
//! whole-file checksum must decode to the original values.

mod forge;

use checkers_egdb::format::{
    write_table_with, Fault, TableError, TableFile, TableMeta, WriteOptions, CODEC_CM_FILLED,
    CODEC_CM_THREATS, HEADER_LEN,
};
use checkers_egdb::{Access, Slice};
use proptest::prelude::*;
use std::sync::OnceLock;

/// The header of the sample's values: slice 0101-nn (992 positions) and their counts.
fn sample_meta(vals: &[u8]) -> TableMeta {
    let mut n = [0u64; 3];
    vals.iter().for_each(|&v| n[v as usize] += 1);
    TableMeta {
        slice: "0101-nn".parse::<Slice>().unwrap(),
        positions: vals.len() as u64,
        wins: n[2],
        losses: n[0],
        draws: n[1],
        longest: 3,
    }
}

fn sample() -> &'static (Vec<u8>, Vec<u8>) {
    static S: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    S.get_or_init(|| {
        let vals: Vec<u8> = (0..992u32)
            .map(|i| ((i * i / 7 + i / 13) % 3) as u8)
            .collect();
        let opts = WriteOptions {
            block_positions: 100,
            ..Default::default()
        };
        let meta = sample_meta(&vals);
        (encoded(&meta, &vals, &opts), vals)
    })
}

/// The sample's values written with codec 5 (context-model coded, docs/format.md), and the
/// values that file decodes to (don't-care positions hold the decoder's filler).
fn sample5() -> &'static (Vec<u8>, Vec<u8>) {
    static S: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    S.get_or_init(|| {
        let (_, vals) = sample();
        let meta = sample_meta(vals);
        let opts = WriteOptions {
            block_positions: 100,
            codec: CODEC_CM_THREATS,
            ..Default::default()
        };
        let bytes = encoded(&meta, vals, &opts);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s5.egdb");
        std::fs::write(&path, &bytes).unwrap();
        let t = TableFile::open(&path).unwrap();
        assert_eq!(t.codec(), CODEC_CM_THREATS);
        assert!(t.block_count() > 2, "coded blocks to damage");
        let decoded = t.decode_all().unwrap();
        (bytes, decoded)
    })
}

/// The sample's values written with codec 6 (context-model coded in segments, docs/format.md),
/// and the values that file decodes to (don't-care positions hold the decoder's filler).
fn sample6() -> &'static (Vec<u8>, Vec<u8>) {
    static S: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    S.get_or_init(|| {
        let (_, vals) = sample();
        let meta = sample_meta(vals);
        let opts = WriteOptions {
            block_positions: 100,
            codec: CODEC_CM_FILLED,
            ..Default::default()
        };
        let bytes = encoded(&meta, vals, &opts);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s6.egdb");
        std::fs::write(&path, &bytes).unwrap();
        let t = TableFile::open(&path).unwrap();
        assert_eq!(t.codec(), CODEC_CM_FILLED);
        assert!(t.block_count() > 2, "coded blocks to damage");
        let decoded = t.decode_all().unwrap();
        (bytes, decoded)
    })
}

/// `good` with the bytes at `flips` xored and, with `cut`, truncated there.
fn mutate(
    good: &[u8],
    flips: Vec<(prop::sample::Index, u8)>,
    cut: Option<prop::sample::Index>,
) -> Vec<u8> {
    let mut b = good.to_vec();
    for (i, x) in flips {
        let k = i.index(b.len());
        b[k] ^= x;
    }
    if let Some(c) = cut {
        b.truncate(c.index(b.len()));
    }
    b
}

fn exercise(bytes: &[u8], original: Option<&[u8]>) {
    let dir = tempfile::tempdir().unwrap();
    // Not a slice name, so the name check does not interfere.
    let path = dir.path().join("fuzz.egdb");
    std::fs::write(&path, bytes).unwrap();
    for access in [Access::Mmap, Access::Pread] {
        let Ok(t) = TableFile::open_with(&path, access) else {
            continue;
        };
        let n = t.meta().positions;
        for i in [0, n / 2, n.saturating_sub(1), n] {
            let _ = t.get(i);
        }
        let all = t.decode_all();
        if t.verify_checksum().is_ok() {
            if let (Some(o), Ok(a)) = (original, &all) {
                assert_eq!(a.as_slice(), o);
            }
        }
    }
}

/// `bytes` with the header checksum (over header bytes 0..56 and the offset table) and the
/// whole-file checksum recomputed, as a crafted file would have them. `table_len`: bytes of the
/// offset table as laid out in the original file.
fn resum(mut bytes: Vec<u8>, table_len: usize) -> Vec<u8> {
    forge::rechecksum_with_table(&mut bytes, table_len);
    bytes
}

/// Offset table length of the sample file (block count at 52, width at 19).
fn sample_table_len() -> usize {
    let b = &sample().0;
    let blocks = u32::from_le_bytes(b[52..56].try_into().unwrap()) as usize;
    blocks * (b[19] as usize + 4)
}

fn open_bytes(bytes: &[u8]) -> Vec<Result<TableFile, TableError>> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crafted.egdb");
    std::fs::write(&path, bytes).unwrap();
    [Access::Mmap, Access::Pread]
        .into_iter()
        .map(|a| TableFile::open_with(&path, a))
        .collect()
}

#[test]
fn crafted_headers_with_valid_checksums_are_refused() {
    let (good, _) = sample();
    let tl = sample_table_len();
    // The recomputation itself leaves a good file good.
    assert!(open_bytes(&resum(good.clone(), tl))
        .iter()
        .all(|r| r.is_ok()));
    // (byte offset, new value, what the reader must say)
    let cases: &[(usize, u8, &str)] = &[
        (12, 250, "material"), // 250 black men: u8 sums would wrap to a small count
        (13, 250, "material"),
        (14, 13, "material"),
        (15, 255, "material"),
        (16, 9, "slice ranks"),
        (19, 7, "offset width"),
        (9, 2, "rules"),
        (10, 1, "codec"),
        (18, 9, "uniform"),
    ];
    for &(at, v, what) in cases {
        let mut b = good.clone();
        b[at] = v;
        for r in open_bytes(&resum(b, tl)) {
            match r {
                Err(TableError::Corrupt { what: f, .. }) => {
                    let ok = match what {
                        "rules" => matches!(
                            f,
                            Fault::Rules {
                                found: 2,
                                expected: 1
                            }
                        ),
                        "codec" => matches!(f, Fault::Codec(1)),
                        _ => matches!(&f, Fault::BadHeader(s) if s.contains(what)),
                    };
                    assert!(ok, "byte {at} = {v}: {f}");
                }
                other => panic!("byte {at} = {v}: expected a corrupt-header error, got {other:?}"),
            }
        }
    }
    // 255 black men and 2 black kings: 257 pieces, 1 in wrapping u8 arithmetic.
    let mut b = good.clone();
    b[12] = 255;
    b[13] = 2;
    for r in open_bytes(&resum(b, tl)) {
        assert!(
            matches!(&r, Err(TableError::Corrupt { what: Fault::BadHeader(s), .. }) if s.contains("material")),
            "{r:?}"
        );
    }
    // Counts that overflow when added, or exceed the positions: an error, never a wrapped count.
    for (at, x) in [
        (32usize, u64::MAX),
        (40, u64::MAX),
        (32, 993),
        (24, u64::MAX),
    ] {
        let mut b = good.clone();
        b[at..at + 8].copy_from_slice(&x.to_le_bytes());
        for r in open_bytes(&resum(b, tl)) {
            assert!(
                matches!(
                    r,
                    Err(TableError::Corrupt {
                        what: Fault::BadHeader(_),
                        ..
                    })
                ),
                "field {at} = {x}: {r:?}"
            );
        }
    }
    // A block count so large that the offset table would overflow the file length.
    let mut b = good.clone();
    b[52..56].copy_from_slice(&u32::MAX.to_le_bytes());
    for r in open_bytes(&resum(b, tl)) {
        assert!(r.is_err(), "{r:?}");
    }
}

/// A file relabelled with another codec (both checksums recomputed): zstd data read by the
/// context-model decoder and the reverse give errors or values, never a panic.
#[test]
fn a_codec_byte_changed_between_zstd_and_context_model_never_panics() {
    for (sample, to) in [
        (sample(), [5u8, 6]),
        (sample5(), [2, 6]),
        (sample6(), [2, 5]),
    ] {
        for c in to {
            let mut b = sample.0.clone();
            b[10] = c;
            let tl = {
                let blocks = u32::from_le_bytes(b[52..56].try_into().unwrap()) as usize;
                blocks * (b[19] as usize + 4)
            };
            exercise(&resum(b, tl), None);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Codec 5: flipped bytes and cuts give errors, or the original values when the file
    /// checksum still holds; never a panic.
    #[test]
    fn mutated_codec5_files_never_panic_or_lie(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let (good, vals) = sample5();
        exercise(&mutate(good, flips, cut), Some(vals));
    }

    /// Codec 6: the same.
    #[test]
    fn mutated_codec6_files_never_panic_or_lie(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let (good, vals) = sample6();
        exercise(&mutate(good, flips, cut), Some(vals));
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        exercise(&bytes, None);
    }

    #[test]
    fn random_header_on_valid_magic(tail in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut b = sample().0[..8].to_vec();
        b.extend_from_slice(&tail);
        exercise(&b, None);
    }

    /// Arbitrary header fields with both checksums recomputed: errors or values, never a
    /// panic, and nothing accepted that contradicts the original values.
    #[test]
    fn crafted_headers_never_panic(
        fields in proptest::collection::vec((8usize..56, any::<u8>()), 1..6),
    ) {
        let (good, vals) = sample();
        let mut b = good.clone();
        for (at, v) in fields {
            b[at] = v;
        }
        let b = resum(b, sample_table_len());
        exercise(&b, None);
        for t in open_bytes(&b).into_iter().flatten() {
            // Whatever header was accepted, values come out of the original blocks or errors.
            if t.meta().slice == "0101-nn".parse().unwrap() {
                if let Ok(all) = t.decode_all() {
                    prop_assert_eq!(all.len(), vals.len());
                }
            }
        }
    }

    #[test]
    fn mutated_files_never_panic_or_lie(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let (good, vals) = sample();
        let b = mutate(good, flips, cut);
        exercise(&b, Some(vals));
        // Every single flip is detected by open, a block check or the file checksum.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.egdb");
        std::fs::write(&path, &b).unwrap();
        if let Ok(t) = TableFile::open(&path) {
            prop_assert!(t.verify_checksum().is_err() || b == *good);
        }
    }
}

/// A damaged codec-5 block whose checksums were made right again (a crafted file): every
/// probe reaching it gets the decode error, and the block is decoded once, not once per
/// lookup (a codec-5 decode takes milliseconds; found by a tester, where 2,000 probes took
/// 8.6 s).
#[test]
fn a_damaged_codec5_block_is_decoded_once_and_every_probe_of_it_fails() {
    use checkers_egdb::format::SliceIndex;
    use checkers_egdb::{ProbeError, Tablebase};
    use xxhash_rust::xxh64::xxh64;
    let good = &sample5().0;
    let blocks = u32::from_le_bytes(good[52..56].try_into().unwrap()) as usize;
    assert_eq!(good[19], 4, "4-byte offsets");
    let data_start = HEADER_LEN + blocks * 8;
    let end = |b: usize| -> usize {
        u32::from_le_bytes(
            good[HEADER_LEN + 8 * b..HEADER_LEN + 8 * b + 4]
                .try_into()
                .unwrap(),
        ) as usize
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("0101-nn.egdb");
    // The first coded block (nonempty data) with a flipped byte that no longer decodes,
    // its block checksum and both file checksums recomputed.
    let mut found = None;
    'search: for b in 0..blocks {
        let start = if b == 0 { 0 } else { end(b - 1) };
        for k in start..end(b) {
            let mut bytes = good.clone();
            bytes[data_start + k] ^= 0x10;
            let check = xxh64(&bytes[data_start + start..data_start + end(b)], 0) as u32;
            let at = HEADER_LEN + 8 * b + 4;
            bytes[at..at + 4].copy_from_slice(&check.to_le_bytes());
            let bytes = resum(bytes, blocks * 8);
            std::fs::write(&path, &bytes).unwrap();
            let t = TableFile::open(&path).unwrap();
            t.verify_checksum().unwrap();
            if t.decode_block(b as u64).is_err() {
                found = Some(b);
                break 'search;
            }
        }
    }
    let bad = found.expect("a flip that does not decode");
    let tb = Tablebase::builder(dir.path()).open().unwrap();
    let ix = SliceIndex::new("0101-nn".parse().unwrap());
    let (mut failed, mut fine) = (0, 0);
    let bp = 100u64; // sample5's block size
    for i in 0..ix.size() {
        let p = ix.unrank(i).unwrap();
        if p.has_capture() || i / bp != bad as u64 {
            continue;
        }
        match tb.probe_wld(&p) {
            Err(ProbeError::Table(TableError::Corrupt { .. })) => failed += 1,
            Ok(_) => fine += 1, // a don't-care position searched, reading other blocks
            Err(e) => panic!("{e}"),
        }
    }
    assert!(failed > 3, "{failed} probes failed, {fine} answered");
    let st = tb.stats();
    assert_eq!(st.blocks_failed, 1, "{st:?}");
}

/// Codec 6: every flipped byte of the block data makes the decode of its block (and of each
/// of its pages) a `Corrupt` error, never a value; every truncation is refused on open.
#[test]
fn codec6_flipped_data_bytes_and_truncations_are_refused() {
    let good = &sample6().0;
    let blocks = u32::from_le_bytes(good[52..56].try_into().unwrap()) as usize;
    assert_eq!(good[19], 4, "4-byte offsets");
    let data_start = HEADER_LEN + blocks * 8;
    let end = |b: usize| -> usize {
        u32::from_le_bytes(
            good[HEADER_LEN + 8 * b..HEADER_LEN + 8 * b + 4]
                .try_into()
                .unwrap(),
        ) as usize
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.egdb");
    let mut coded = 0;
    for b in 0..blocks {
        let start = if b == 0 { 0 } else { end(b - 1) };
        for k in start..end(b) {
            coded += 1;
            for x in [0x01u8, 0x80, 0xFF] {
                let mut bytes = good.clone();
                bytes[data_start + k] ^= x;
                std::fs::write(&path, &bytes).unwrap();
                for access in [Access::Mmap, Access::Pread] {
                    let t = TableFile::open_with(&path, access).unwrap();
                    let corrupt = |r: Result<_, TableError>| {
                        matches!(
                            r,
                            Err(TableError::Corrupt {
                                what: Fault::BlockChecksum(_),
                                ..
                            })
                        )
                    };
                    assert!(corrupt(t.decode_block(b as u64)), "block {b} byte {k}");
                    assert!(corrupt(t.decode_page(b as u64, 0)), "block {b} byte {k}");
                    assert!(t.get((b * 100) as u64).is_err());
                    assert!(t.verify_checksum().is_err());
                }
            }
        }
    }
    assert!(coded > 20, "{coded} coded bytes");
    for cut in 0..good.len() {
        std::fs::write(&path, &good[..cut]).unwrap();
        assert!(TableFile::open(&path).is_err(), "cut at {cut}");
    }
}

/// The bytes of the table file the writer makes of `values` with `opts` (written to a
/// temporary directory and read back).
fn encoded(meta: &TableMeta, values: &[u8], opts: &WriteOptions) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.egdb");
    write_table_with(&path, meta, values, opts).unwrap();
    std::fs::read(&path).unwrap()
}

/// A distance file of the sample's slice (distances `i % 40`, blocks of 100 positions) written
/// into `dir`: its path and bytes.
fn dtc_sample(dir: &std::path::Path) -> (std::path::PathBuf, Vec<u8>) {
    let (_, vals) = sample();
    let meta = sample_meta(vals);
    let dist: Vec<u32> = (0..vals.len() as u32).map(|i| i % 40).collect();
    let mask = bitvec::bitvec![u64, bitvec::order::Lsb0; 0; dist.len()];
    let path = dir.join("0101-nn.dtc");
    let opts = WriteOptions {
        block_positions: 100,
        ..Default::default()
    };
    checkers_egdb::format::write_dtc(&path, &meta, &dist, &mask, &opts).unwrap();
    let file = std::fs::read(&path).unwrap();
    (path, file)
}

/// `file` (4-byte offsets) laid out again with 8-byte offsets, the last block's end set to
/// `last_end`, both checksums recomputed: a crafted file whose offset table passes every
/// check but the file length it implies.
fn widened_with_last_end(file: &[u8], last_end: u64) -> Vec<u8> {
    let blocks = u32::from_le_bytes(file[52..56].try_into().unwrap()) as usize;
    assert_eq!(file[19], 4, "4-byte offsets");
    let mut b = file[..HEADER_LEN].to_vec();
    b[19] = 8;
    for i in 0..blocks {
        let e = &file[HEADER_LEN + 8 * i..HEADER_LEN + 8 * i + 8];
        let end = if i + 1 == blocks {
            last_end
        } else {
            u64::from(u32::from_le_bytes(e[..4].try_into().unwrap()))
        };
        b.extend_from_slice(&end.to_le_bytes());
        b.extend_from_slice(&e[4..8]);
    }
    b.extend_from_slice(&file[HEADER_LEN + 8 * blocks..]);
    resum(b, blocks * 12)
}

/// A last offset near `u64::MAX` (found by a code review): header + table + data + checksum
/// overflowed u64 when the reader computed the file's length (a panic with overflow checks,
/// as in the test profile). Refused as a bad offset table, value files and distance files,
/// both access modes.
#[test]
fn an_offset_table_ending_near_the_u64_limit_is_refused() {
    use checkers_egdb::format::{DtcFile, RULES_ENGLISH};
    let is_bad_table = |r: &Result<(), TableError>| matches!(r, Err(TableError::Corrupt { what: Fault::BadHeader(s), .. }) if s.contains("offset table"));
    let (good, _) = sample();
    // The layout change alone keeps the file good.
    let real_end = {
        let blocks = u32::from_le_bytes(good[52..56].try_into().unwrap()) as usize;
        let e = HEADER_LEN + 8 * (blocks - 1);
        u64::from(u32::from_le_bytes(good[e..e + 4].try_into().unwrap()))
    };
    assert!(open_bytes(&widened_with_last_end(good, real_end))
        .iter()
        .all(|r| r.is_ok()));
    for end in [u64::MAX, u64::MAX - 3] {
        for r in open_bytes(&widened_with_last_end(good, end)) {
            let r = r.map(|_| ());
            assert!(is_bad_table(&r), "value file, last end {end}: {r:?}");
        }
    }
    // A distance file of the same slice.
    let dir = tempfile::tempdir().unwrap();
    let (path, file) = dtc_sample(dir.path());
    let blocks = u32::from_le_bytes(file[52..56].try_into().unwrap()) as usize;
    assert!(blocks > 1);
    let e = HEADER_LEN + 8 * (blocks - 1);
    let real_end = u64::from(u32::from_le_bytes(file[e..e + 4].try_into().unwrap()));
    std::fs::write(&path, widened_with_last_end(&file, real_end)).unwrap();
    assert!(DtcFile::open(&path, RULES_ENGLISH).is_ok());
    for end in [u64::MAX, u64::MAX - 3] {
        std::fs::write(&path, widened_with_last_end(&file, end)).unwrap();
        let r = DtcFile::open(&path, RULES_ENGLISH).map(|_| ());
        assert!(is_bad_table(&r), "distance file, last end {end}: {r:?}");
    }
}

/// A distance file rewritten in place after it was opened (same length, another offset
/// table): distance files are memory-mapped and their offsets read from the map at each
/// decode, so the new offsets must be checked there too (found by a code review: an end past
/// the map, or before its start, sliced out of bounds, a panic). Now an error, never a panic.
#[test]
fn a_distance_file_rewritten_in_place_gives_errors_not_a_panic() {
    use checkers_egdb::format::{DtcFile, RULES_ENGLISH};
    use std::io::{Seek, SeekFrom, Write};
    let dir = tempfile::tempdir().unwrap();
    let (path, file) = dtc_sample(dir.path());
    assert_eq!(file[19], 4, "4-byte offsets");
    let blocks = u32::from_le_bytes(file[52..56].try_into().unwrap()) as u64;
    let f = DtcFile::open(&path, RULES_ENGLISH).unwrap();
    assert!(f.decode_block(1).is_ok());
    // Block 1's end (entry 1) far past the file, then block 1's start (entry 0) past its end.
    for (entry, value) in [(1u64, u32::MAX), (0, u32::MAX - 1)] {
        let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        w.seek(SeekFrom::Start(HEADER_LEN as u64 + 8 * entry))
            .unwrap();
        w.write_all(&value.to_le_bytes()).unwrap();
        drop(w);
        for b in 0..blocks {
            let _ = f.decode_block(b);
        }
        assert!(f.decode_block(1).is_err(), "entry {entry} = {value}");
    }
}
