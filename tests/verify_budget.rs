//! `egdb verify --memory SIZE`: the verifier goes by the build's units, releases each slice
//! after its last reader and, under a budget, reads the rest from the compressed files. The
//! outcome must not depend on the budget: the same files verified, the same positions counted,
//! and a wrong value still found when every dependency comes through the block cache.
//!
//! The tables are built by `egdb build`; the expected counts are those of an unbounded run and
//! of the files' own headers, the expected failure is a value changed by the test.

use checkers_egdb::format::{
    write_table_with, TableFile, WriteOptions, CODEC_2BIT_THREATS, CODEC_2BIT_ZSTD, DONT_CARE,
};
use checkers_egdb::{verify_dir_opts, Slice, VerifyError, VerifyOptions, VerifyReport};
use std::path::Path;
use std::process::Command;

fn build(dir: &Path, pieces: &str) {
    let o = Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(["build", "--quiet", "--dtc", "--pieces", pieces, "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn verify(dir: &Path, memory: Option<u64>) -> Result<VerifyReport, VerifyError> {
    let opts = VerifyOptions {
        memory,
        ..VerifyOptions::default()
    };
    verify_dir_opts(dir, &opts, &|_, _, _| {})
}

/// The largest WLD file of `dir`.
fn largest_table(dir: &Path) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egdb"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap()
}

/// Flip a bit in the middle of the block data of the WLD file `path` and make its whole-file
/// checksum right again (a writer bug or tampering): only the block's own checksum is wrong.
fn damage_a_block(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    // docs/format.md: offset width at byte 19, block count at 52, the offset table from 64
    // (N entries of W + 4 bytes), then the block data, then the xxh64 of all before it.
    let w = bytes[19] as usize;
    let n = u32::from_le_bytes(bytes[52..56].try_into().unwrap()) as usize;
    let data = 64 + n * (w + 4);
    let end = bytes.len() - 8;
    assert!(end > data, "{} stores block data", path.display());
    bytes[(data + end) / 2] ^= 0x10;
    let sum = xxhash_rust::xxh64::xxh64(&bytes[..end], 0);
    bytes[end..].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(path, &bytes).unwrap();
}

/// Sum over the WLD files of their header's position count.
fn header_positions(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egdb"))
        .map(|p| TableFile::open(&p).unwrap().meta().positions)
        .sum()
}

#[test]
fn the_outcome_does_not_depend_on_the_budget_and_slices_are_released() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "4");
    let total = header_positions(d.path());
    let free = verify(d.path(), None).unwrap();
    assert_eq!(free.positions, total);
    assert_eq!(free.dtc_positions, total);
    let files = std::fs::read_dir(d.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "egdb")
        })
        .count() as u64;
    assert_eq!((free.slices, free.dtc_slices), (files, files));
    // Unbounded, every slice is still released after its last reader: the peak is well below
    // all the tables decoded at once (2 bits per position).
    let all_decoded = total / 4;
    assert!(free.store.slices_released > 0);
    assert!(
        free.store.peak_resident_bytes < all_decoded / 2,
        "peak {} of {all_decoded}",
        free.store.peak_resident_bytes
    );
    assert_eq!(free.store.spilled_lookups, 0);
    // 1 MiB: the block cache takes it all, every lookup goes through the compressed files.
    // 1.5 MiB: some slices decoded, the others through the cache.
    for budget in [1u64 << 20, 3 << 19] {
        let tight = verify(d.path(), Some(budget)).unwrap();
        assert_eq!(
            (
                tight.slices,
                tight.positions,
                tight.dtc_slices,
                tight.dtc_positions
            ),
            (
                free.slices,
                free.positions,
                free.dtc_slices,
                free.dtc_positions
            ),
            "budget {budget}"
        );
        assert!(tight.store.spilled_lookups > 0, "budget {budget}");
        assert!(
            tight.store.peak_resident_bytes <= budget,
            "budget {budget}: peak {}",
            tight.store.peak_resident_bytes
        );
    }
}

#[test]
fn a_wrong_value_is_found_when_every_dependency_is_spilled() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "3");
    // The largest WLD file: one stored value of a quiet position flipped, checksum valid.
    let victim = largest_table(d.path());
    let t = TableFile::open(&victim).unwrap();
    let meta = t.meta().clone();
    let mut vals = t.decode_all().unwrap();
    drop(t);
    let i = vals.iter().position(|&v| v != DONT_CARE).unwrap();
    vals[i] = if vals[i] == 2 { 0 } else { 2 };
    write_table_with(&victim, &meta, &vals, &WriteOptions::default()).unwrap();
    let e = verify(d.path(), Some(1 << 20)).unwrap_err();
    let text = e.to_string();
    assert!(text.contains(&meta.slice.to_string()), "{text}");
    assert!(text.contains(&format!("index {i} (")), "{text}");
    // The command line takes the same budget and fails the same way.
    let o = Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(["verify", "--quiet", "--memory", "1M", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("index {i} (")), "{err}");
}

/// A block whose own checksum is wrong in a file whose whole-file checksum was made right
/// again (a writer bug or tampering) is found the same way under every budget: the verifier
/// decodes every block once, not only those its lookups reach through the block cache.
#[test]
fn a_corrupt_block_is_found_the_same_way_under_every_budget() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "3");
    let victim = largest_table(d.path());
    damage_a_block(&victim);
    let name = victim.file_name().unwrap().to_string_lossy().to_string();
    let mut seen = Vec::new();
    for budget in [Some(0), Some(1 << 20), None] {
        let e = verify(d.path(), budget).unwrap_err().to_string();
        assert!(
            e.contains(&name) && e.contains("block") && e.contains("checksum mismatch"),
            "{budget:?}: {e}"
        );
        seen.push(e);
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
}

/// A table with wrong values is reported as bad; the files that read it (good themselves, but
/// their values no longer match what the wrong table says) are reported apart, as reading a
/// failed slice, and the counts say which is which.
#[test]
fn files_that_read_a_failed_file_are_told_apart_from_it() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "4");
    // The largest 3-piece WLD file (the digits of a slice name add up to its piece count):
    // every win made a loss and every loss a win, checksums valid.
    let victim = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egdb"))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name[..4].bytes().map(|b| u32::from(b - b'0')).sum::<u32>() == 3
        })
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let t = TableFile::open(&victim).unwrap();
    let meta = t.meta().clone();
    let mut vals = t.decode_all().unwrap();
    drop(t);
    for v in vals.iter_mut().filter(|v| **v != DONT_CARE && **v != 1) {
        *v = 2 - *v;
    }
    write_table_with(&victim, &meta, &vals, &WriteOptions::default()).unwrap();
    let unit: Vec<Slice> = vec![meta.slice, meta.slice.partner()];

    let e = verify(d.path(), None).unwrap_err();
    let failures = e.failures();
    let (readers, bad): (Vec<&VerifyError>, Vec<&VerifyError>) = failures
        .iter()
        .partition(|f| f.failed_dependency().is_some());
    // The victim fails, and nothing outside its unit fails on its own.
    assert!(bad.iter().any(|f| f.slice() == Some(meta.slice)), "{e}");
    assert!(
        bad.iter().all(|f| unit.contains(&f.slice().unwrap())),
        "{:#?}",
        bad.iter().map(|f| f.to_string()).collect::<Vec<_>>()
    );
    assert!(
        !readers.is_empty(),
        "some 4-piece file reads {}: {e}",
        meta.slice
    );
    for r in &readers {
        let VerifyError::ReadsFailed { failed, source, .. } = r else {
            panic!("{r}");
        };
        // It names a slice that failed before it (perhaps itself through a chain).
        assert!(!unit.contains(&r.slice().unwrap()), "{r}");
        let at = |s: Slice| failures.iter().position(|f| f.slice() == Some(s));
        assert!(
            at(*failed).unwrap() < at(r.slice().unwrap()).unwrap(),
            "{r}"
        );
        assert!(
            matches!(
                **source,
                VerifyError::Mismatch { .. } | VerifyError::Counts { .. }
            ),
            "{r}"
        );
    }

    let o = Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(["verify", "--quiet", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    let n_bad = lines
        .iter()
        .filter(|l| l.starts_with("egdb: bad table: "))
        .count();
    let n_read = lines
        .iter()
        .filter(|l| l.starts_with("egdb: not verified: "))
        .count();
    assert_eq!((n_bad, n_read), (bad.len(), readers.len()), "{err}");
    assert!(lines[0].starts_with("egdb: bad table: "), "{err}");
    assert!(
        err.contains(&format!(
            "{} table files failed verification; {} more read a failed",
            bad.len(),
            readers.len()
        )),
        "{err}"
    );
}

/// Two independent faults: a wrong value in a 3-piece file, and one in a 4-piece file at a
/// position whose moves never reach the 3-piece file (though other positions of its unit
/// do). The second is its own fault and is listed as bad, not as a consequence of the first.
#[test]
fn a_file_with_its_own_fault_is_not_blamed_on_a_failed_file_it_reads_elsewhere() {
    use checkers_egdb::format::SliceIndex;
    use checkers_egdb::Position;
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "4");
    let change = |name: &str, pick: &dyn Fn(&Slice, u64, &[u8]) -> bool| -> u64 {
        let path = d.path().join(name);
        let t = TableFile::open(&path).unwrap();
        let meta = t.meta().clone();
        let mut vals = t.decode_all().unwrap();
        drop(t);
        let i = (0..vals.len())
            .find(|&i| vals[i] != DONT_CARE && pick(&meta.slice, i as u64, &vals))
            .unwrap();
        vals[i] = if vals[i] == 2 { 0 } else { 2 };
        write_table_with(&path, &meta, &vals, &WriteOptions::default()).unwrap();
        i as u64
    };
    // 0102-nn: its first stored value.
    change("0102-nn.egdb", &|_, _, _| true);
    // 1111-00: a position whose moves are all quiet, keep 4 pieces and lead to positions
    // without a capture (so its derivation reads no table of 3 pieces). 1111-00's unit
    // reads 0102-nn elsewhere (a capture that crowns).
    let own = change("1111-00.egdb", &|s, i, _| {
        let p: Position = SliceIndex::new(*s).unrank(i).unwrap();
        let moves = p.unique_moves();
        !moves.is_empty()
            && moves.iter().all(|m| {
                let q = p.apply(m);
                q.piece_count() == 4 && !q.has_capture()
            })
    });
    let e = verify(d.path(), None).unwrap_err();
    let failures = e.failures();
    let own_line = failures
        .iter()
        .find(|f| f.slice() == Some("1111-00".parse().unwrap()))
        .unwrap_or_else(|| panic!("1111-00 is reported: {e}"));
    assert!(
        matches!(own_line, VerifyError::Mismatch { index, .. } if *index == own),
        "its own fault, not blamed on 0102-nn: {own_line}"
    );
    assert!(own_line.failed_dependency().is_none(), "{own_line}");
}

/// Which stored entries `verify` holds to the derived value, decided here by the path
/// generator (`unique_moves`, independent of the fast engine and of the codecs): in a codec-2
/// file (the default) a capture position's entry is don't care, so any value written there is
/// accepted; a threat position (no capture and a quiet move for the side to move, a capture
/// for the side not to move) stores its true value in codec 2, so a changed one is reported
/// at its index. (`verify` reads each entry first and classes only the positions whose entry
/// differs: a fault in that order would show here.)
#[test]
fn a_capture_position_may_store_anything_but_a_threat_position_of_codec_2_may_not() {
    use checkers_egdb::format::SliceIndex;
    use checkers_egdb::Position;
    let base = tempfile::tempdir().unwrap();
    build(base.path(), "4");
    let copy = |to: &Path| {
        for e in std::fs::read_dir(base.path()).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    };
    let captures = |p: &Position| {
        p.unique_moves()
            .iter()
            .any(|m| p.apply(m).piece_count() < p.piece_count())
    };
    let threat = |p: &Position| {
        let moves = p.unique_moves();
        let flipped = Position {
            side: p.side.opponent(),
            ..*p
        };
        !moves.is_empty() && !captures(p) && captures(&flipped)
    };
    // Change the stored value of the first position of the largest WLD file that `pick`
    // accepts to another real value; its index.
    let change = |dir: &Path, pick: &dyn Fn(&Position) -> bool, codec: u32| -> (Slice, u64) {
        let path = largest_table(dir);
        let t = TableFile::open(&path).unwrap();
        let meta = t.meta().clone();
        let mut vals = t.decode_all().unwrap();
        drop(t);
        let index = SliceIndex::new(meta.slice);
        let i = (0..vals.len())
            .find(|&i| pick(&index.unrank(i as u64).unwrap()))
            .unwrap();
        vals[i] = if vals[i] == 2 { 0 } else { 2 };
        let opts = WriteOptions {
            codec,
            ..WriteOptions::default()
        };
        write_table_with(&path, &meta, &vals, &opts).unwrap();
        (meta.slice, i as u64)
    };

    let a = tempfile::tempdir().unwrap();
    copy(a.path());
    change(a.path(), &captures, CODEC_2BIT_ZSTD);
    let report = verify(a.path(), None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.positions, header_positions(a.path()));

    let b = tempfile::tempdir().unwrap();
    copy(b.path());
    let (slice, i) = change(b.path(), &threat, CODEC_2BIT_ZSTD);
    let e = verify(b.path(), None).unwrap_err();
    assert!(
        e.failures().iter().any(
            |f| matches!(f, VerifyError::Mismatch { slice: s, index, .. } if *s == slice && *index == i)
        ),
        "{e}"
    );

    // Codec 4 stores no value at a threat position that resolves within two plies of quiet
    // moves (docs/format.md): every successor that is a threat position resolves within one
    // ply less, none may at one ply. A threat position that does not resolve so stores its
    // value, and a changed one is reported.
    fn resolves(p: &Position, depth: u32, threat: &dyn Fn(&Position) -> bool) -> bool {
        p.unique_moves().iter().all(|m| {
            let s = p.apply(m);
            !threat(&s) || (depth > 1 && resolves(&s, depth - 1, threat))
        })
    }
    let c = tempfile::tempdir().unwrap();
    copy(c.path());
    let (slice, i) = change(
        c.path(),
        &|p| threat(p) && !resolves(p, 2, &threat),
        CODEC_2BIT_THREATS,
    );
    let e = verify(c.path(), None).unwrap_err();
    assert!(
        e.failures().iter().any(
            |f| matches!(f, VerifyError::Mismatch { slice: s, index, .. } if *s == slice && *index == i)
        ),
        "{e}"
    );
}
