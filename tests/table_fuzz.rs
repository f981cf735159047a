//! Fuzzing the table reader and block decoder with proptest: arbitrary bytes and mutated valid
//! files must give errors or values, never a panic; a mutated file that still passes the
//! whole-file checksum must decode to the original values.

use checkers_egdb::table::{encode_table, Access, TableFile, TableMeta, WriteOptions};
use checkers_egdb::Slice;
use proptest::prelude::*;
use std::sync::OnceLock;

fn sample() -> &'static (Vec<u8>, Vec<u8>) {
    static S: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    S.get_or_init(|| {
        let vals: Vec<u8> = (0..992u32)
            .map(|i| ((i * i / 7 + i / 13) % 3) as u8)
            .collect();
        let mut n = [0u64; 3];
        vals.iter().for_each(|&v| n[v as usize] += 1);
        let meta = TableMeta {
            slice: "0101-nn".parse::<Slice>().unwrap(), // 992 positions
            positions: vals.len() as u64,
            wins: n[2],
            losses: n[0],
            draws: n[1],
            longest: 3,
        };
        let opts = WriteOptions {
            block_positions: 100,
            ..Default::default()
        };
        (encode_table(&meta, &vals, &opts).unwrap(), vals)
    })
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

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

    #[test]
    fn mutated_files_never_panic_or_lie(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let (good, vals) = sample();
        let mut b = good.clone();
        for (i, x) in flips {
            let k = i.index(b.len());
            b[k] ^= x;
        }
        if let Some(c) = cut {
            b.truncate(c.index(b.len()));
        }
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
