//! Codec 7 (codec 6 with a codebook of priors and constant / near-constant segments,
//! docs/format.md) against codec 2 and the independent oracle: tables built by `egdb build
//! --codec 7` store codec 2's value at every position the readers take, every position with
//! at most 4 pieces (both sides to move) probes to codec 2's reading (captures resolved by a
//! search over the slow move generator, no move = loss, else the stored value of the codec-2
//! files, implemented here), every position with at most 3 pieces to the naive oracle's
//! value (`probe_common::naive_values`, forward sweeps over the slow move generator), `egdb
//! verify` passes, `egdb convert` writes the same files from codec 2 and round-trips through
//! the other codecs, and a directory mixing codecs 2, 6 and 7 probes alike. Damaged blocks
//! are refused, never read as values.

mod probe_common;

use checkers_egdb::format::{
    is_dont_care, SliceIndex, TableFile, CODEC_2BIT_ZSTD, CODEC_CM_BOOK, CODEC_CM_FILLED,
};
use checkers_egdb::{Position, Slice, Tablebase, Wld};
use probe_common::{all_positions, naive_values};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

fn egdb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = egdb(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `egdb build --pieces PIECES --dir DIR [--codec CODEC]`.
fn build(dir: &Path, pieces: u32, codec: Option<&str>) {
    let p = pieces.to_string();
    let d = dir.to_str().unwrap();
    let mut args = vec!["build", "--quiet", "--pieces", &p, "--dir", d];
    if let Some(c) = codec {
        args.extend(["--codec", c]);
    }
    ok(&args);
}

/// Every table file of `dir`: slice -> (codec, bytes, decoded values).
fn load(dir: &Path) -> HashMap<Slice, (u32, u64, Vec<u8>)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egdb"))
        .map(|p| {
            let t = TableFile::open(&p).unwrap();
            t.verify_checksum().unwrap();
            (
                t.meta().slice,
                (t.codec(), t.file_bytes(), t.decode_all().unwrap()),
            )
        })
        .collect()
}

/// The bytes of every `.egdb` file of `dir`, by name.
fn egdb_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egdb"))
        .map(|p| {
            (
                p.file_name().unwrap().to_str().unwrap().to_string(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

/// Codec 2's reading of `p`: captures by search, no move = loss, else the stored value of the
/// Black-to-move form.
fn old_value(old: &HashMap<Slice, (u32, u64, Vec<u8>)>, p: &Position) -> Wld {
    let succ: Vec<Position> = p.unique_moves().iter().map(|m| p.apply(m)).collect();
    if succ.is_empty() {
        return Wld::Loss;
    }
    if p.has_capture() {
        return succ
            .iter()
            .map(|s| old_value(old, s).negate())
            .max()
            .unwrap();
    }
    let n = p.normalized();
    let s = Slice::of(&n);
    let i = SliceIndex::new(s).rank(&n);
    Wld::from_u8(old[&s].2[i as usize]).unwrap()
}

/// Positions of at most 4 pieces (every `step`-th) whose probe in `tb` differs from codec 2's
/// reading of `old`.
fn differing(
    tb: &Tablebase,
    old: &HashMap<Slice, (u32, u64, Vec<u8>)>,
    all: &[Position],
    step: usize,
) -> Vec<String> {
    all.par_iter()
        .step_by(step)
        .filter_map(|p| {
            let want = old_value(old, p);
            let got = tb.probe_wld(p);
            let raw_ok = p.has_capture() || tb.probe_wld_raw(p) == Ok(want);
            (got != Ok(want) || !raw_ok).then(|| format!("{} want {want} got {got:?}", p.to_fen()))
        })
        .collect()
}

#[test]
fn codec7_tables_store_codec2s_values_probe_like_codec2_and_the_oracle_and_verify() {
    let d = tempfile::tempdir().unwrap();
    let (new_dir, old_dir) = (d.path().join("cm7"), d.path().join("old"));
    build(&old_dir, 4, None);
    // Up to 3 pieces in codec 7, then 4 pieces on them (the dependency store decodes
    // codec-7 files).
    build(&new_dir, 3, Some("7"));
    build(&new_dir, 4, Some("7"));
    let new = load(&new_dir);
    let old = load(&old_dir);
    assert_eq!(new.len(), old.len());
    assert!(new.values().all(|t| t.0 == CODEC_CM_BOOK));
    let (nb, ob): (u64, u64) = (
        new.values().map(|t| t.1).sum(),
        old.values().map(|t| t.1).sum(),
    );
    assert!(nb < ob, "codec 7 takes {nb} bytes, codec 2 {ob}");

    // Every position the readers take (not don't care) holds codec 2's value.
    let mut dont_care = 0u64;
    for (s, t) in &new {
        let ix = SliceIndex::new(*s);
        let want = &old[s].2;
        ix.visit(0, ix.size(), |i, p| {
            if is_dont_care(checkers_egdb::rules::English, &p) {
                dont_care += 1;
            } else {
                assert_eq!(t.2[i as usize], want[i as usize], "{s} index {i}");
            }
        });
    }
    assert!(dont_care > 100_000, "{dont_care}");

    // The probe against codec 2's reading: every position with the default cache; samples
    // with a small cache (pages evicted and decoded again) and none (a segment decoded per
    // lookup).
    let all = all_positions(4);
    let tb = Tablebase::open(&new_dir).unwrap();
    let bad = differing(&tb, &old, &all, 1);
    assert!(
        bad.is_empty(),
        "{} positions differ, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    assert!(tb.stats().threat_searches > 0);
    for (cache, step) in [(64usize << 10, 7), (0, 41)] {
        let tb = Tablebase::builder(&new_dir)
            .cache_bytes(cache)
            .open()
            .unwrap();
        let bad = all
            .par_iter()
            .step_by(step)
            .filter(|p| tb.probe_wld(p) != Ok(old_value(&old, p)))
            .count();
        assert_eq!(bad, 0, "cache {cache}");
    }

    // The independent oracle (no table code at all), every position of at most 3 pieces.
    let naive = naive_values(3);
    let bad: Vec<String> = naive
        .par_iter()
        .filter_map(|(p, &w)| {
            let g = tb.probe_wld(p);
            (g != Ok(w)).then(|| format!("{} oracle {w} got {g:?}", p.to_fen()))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{} positions differ from the oracle, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );

    // `egdb verify` re-derives every value over the codec-7 files.
    ok(&["verify", "--quiet", "--dir", new_dir.to_str().unwrap()]);

    // `egdb info` names the codec.
    let info = ok(&["info", "--dir", new_dir.to_str().unwrap()]);
    assert!(
        info.lines()
            .any(|l| l.starts_with('4') && l.ends_with("\t7")),
        "{info}"
    );

    // `egdb convert` from codec 2 writes the files `egdb build --codec 7` writes, byte for
    // byte (with the check against codec 2's reading); 7 -> 6 -> 7 and 7 -> 4 -> 7 come back
    // to them; 7 -> 2 is refused.
    let c7 = d.path().join("c7");
    let out = ok(&[
        "convert",
        "--dir",
        old_dir.to_str().unwrap(),
        "--out",
        c7.to_str().unwrap(),
        "--codec",
        "7",
        "--check",
        "300",
    ]);
    assert!(
        out.contains("against the codec-2 reading: 0 differ"),
        "{out}"
    );
    let built = egdb_files(&new_dir);
    assert_eq!(egdb_files(&c7), built);
    for via in ["6", "4"] {
        let mid = d.path().join(format!("via{via}"));
        let back = d.path().join(format!("back{via}"));
        for (from, to, codec) in [(&c7, &mid, via), (&mid, &back, "7")] {
            ok(&[
                "convert",
                "--dir",
                from.to_str().unwrap(),
                "--out",
                to.to_str().unwrap(),
                "--codec",
                codec,
            ]);
        }
        assert_eq!(egdb_files(&back), built, "7 -> {via} -> 7");
    }
    let refused = egdb(&[
        "convert",
        "--dir",
        c7.to_str().unwrap(),
        "--out",
        d.path().join("to2").to_str().unwrap(),
        "--codec",
        "2",
    ]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("from codec 7 to codec 2"));

    // A directory mixing codecs 2, 6 and 7 (files taken from each build, by slice) probes like
    // codec 2 and verifies.
    let c6 = d.path().join("c6");
    ok(&[
        "convert",
        "--dir",
        old_dir.to_str().unwrap(),
        "--out",
        c6.to_str().unwrap(),
        "--codec",
        "6",
    ]);
    let mix = d.path().join("mix");
    std::fs::create_dir(&mix).unwrap();
    for (k, name) in built.keys().enumerate() {
        let from = [&old_dir, &c6, &new_dir][k % 3];
        std::fs::copy(from.join(name), mix.join(name)).unwrap();
    }
    let codecs: std::collections::BTreeSet<u32> = load(&mix).values().map(|t| t.0).collect();
    assert_eq!(
        codecs.into_iter().collect::<Vec<_>>(),
        vec![CODEC_2BIT_ZSTD, CODEC_CM_FILLED, CODEC_CM_BOOK]
    );
    let tb = Tablebase::open(&mix).unwrap();
    let bad = differing(&tb, &old, &all, 3);
    assert!(
        bad.is_empty(),
        "mixed: {} differ, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    ok(&["verify", "--quiet", "--dir", mix.to_str().unwrap()]);
}

/// A codec-7 file with one byte of a block changed: the block checksum refuses it (never a
/// value); with the checksums recomputed (a crafted file), a damaged segment table is
/// `BlockDecode`, never a panic, and damaged coded bytes decode to some values (the checksum
/// is what protects them) without a panic.
#[test]
fn damaged_codec7_blocks_are_refused() {
    use checkers_egdb::format::{Fault, TableError};
    use xxhash_rust::xxh64::xxh64;
    let d = tempfile::tempdir().unwrap();
    build(&d.path().join("t"), 4, Some("7"));
    // A file with several coded blocks.
    let name = "1102-1n.egdb";
    let path = d.path().join("t").join(name);
    let good = std::fs::read(&path).unwrap();
    let t = TableFile::open(&path).unwrap();
    let coded: Vec<u64> = (0..t.block_count())
        .filter(|&b| t.block_constant(b).unwrap().is_none())
        .collect();
    assert!(!coded.is_empty(), "{name}: no coded block");
    let values = t.decode_all().unwrap();
    drop(t);
    let (width, n_blocks) = (
        good[19] as usize,
        u32::from_le_bytes(good[52..56].try_into().unwrap()) as usize,
    );
    let table_start = 64;
    let data_start = table_start + n_blocks * (width + 4);
    let end_of = |b: usize| -> usize {
        let at = table_start + b * (width + 4);
        let mut x = [0u8; 8];
        x[..width].copy_from_slice(&good[at..at + width]);
        data_start + u64::from_le_bytes(x) as usize
    };
    let b = coded[0] as usize;
    let (a, e) = (if b == 0 { data_start } else { end_of(b - 1) }, end_of(b));
    let file = d.path().join("bad.egdb");
    let (mut panics, mut faults) = (0, 0);
    for i in a..e {
        for x in [0x01u8, 0x80, 0xFF] {
            let mut bad = good.clone();
            bad[i] ^= x;
            // As stored: the block checksum refuses the block.
            std::fs::write(&file, &bad).unwrap();
            let t = TableFile::open(&file).unwrap();
            match t.decode_block(b as u64) {
                Err(TableError::Corrupt {
                    what: Fault::BlockChecksum(_),
                    ..
                }) => {}
                other => panic!("byte {i} ^ {x}: {other:?}"),
            }
            drop(t);
            // Crafted: block, header and file checksums recomputed.
            let sum = xxh64(&bad[a..e], 0) as u32;
            let at = table_start + b * (width + 4) + width;
            bad[at..at + 4].copy_from_slice(&sum.to_le_bytes());
            let mut h = xxhash_rust::xxh64::Xxh64::new(0);
            h.update(&bad[..56]);
            h.update(&bad[64..data_start]);
            let hc = h.digest();
            bad[56..64].copy_from_slice(&hc.to_le_bytes());
            let l = bad.len() - 8;
            let fc = xxh64(&bad[..l], 0);
            bad[l..].copy_from_slice(&fc.to_le_bytes());
            std::fs::write(&file, &bad).unwrap();
            let t = TableFile::open(&file).unwrap();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let whole = t.decode_block(b as u64);
                let pages = t.positions_in_block(b as u64).div_ceil(4_120) as usize;
                for p in 0..pages {
                    let _ = t.decode_page(b as u64, p);
                }
                whole
            }));
            match r {
                Err(_) => panics += 1,
                Ok(Err(TableError::Corrupt {
                    what: Fault::BlockDecode { .. },
                    ..
                })) => faults += 1,
                Ok(Ok(_)) => {}
                Ok(Err(other)) => panic!("byte {i} ^ {x}: {other:?}"),
            }
        }
    }
    assert_eq!(panics, 0);
    // Some flips land in the segment table and are found there.
    assert!(faults > 0);
    // The undamaged file still decodes to its values.
    std::fs::write(&file, &good).unwrap();
    assert_eq!(
        TableFile::open(&file).unwrap().decode_all().unwrap(),
        values
    );
}

/// Codec 7 is English's: a build of another variant with it is refused with a clear line, and
/// nothing is written.
#[test]
fn codec7_is_refused_for_other_rules() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("it");
    let out = egdb(&[
        "build",
        "--quiet",
        "--pieces",
        "2",
        "--rules",
        "italian",
        "--codec",
        "7",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--codec 7") && err.contains("English tables only"),
        "{err}"
    );
    assert!(!dir.exists() || std::fs::read_dir(&dir).unwrap().next().is_none());
}
