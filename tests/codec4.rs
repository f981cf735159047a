//! Codec 4 (threat positions don't care, docs/format.md) against codec 2: the same tables
//! built by `egdb build` with each codec; every position with at most 4 pieces (both sides to
//! move) must probe to the value the codec-2 files give under codec 2's reading, which this
//! test implements itself: captures resolved by search over the slow move generator's
//! successors, no move = loss, otherwise the stored value (read with `TableFile::decode_all`).
//! Neither the probe's resolution code nor the codec-4 writer is used for the reference.
//! Codec 5 (codec 4's don't cares, context-model coded), codec 6 (the same don't cares,
//! context-model coded in segments decoded without move generation) and codec 7 (codec 6 with
//! a codebook of priors and constant / near-constant segments) are held to the same
//! reference; codec 7 also to the naive oracle's values (`probe_common::naive_values`, forward
//! sweeps over the slow move generator) at 3 pieces, `egdb convert` round trips, a directory
//! mixing codecs 2, 6 and 7, and damaged blocks (refused, never read as values).

mod probe_common;

use checkers_egdb::format::{
    is_dont_care, SliceIndex, TableFile, CODEC_2BIT_THREATS, CODEC_2BIT_ZSTD, CODEC_CM_BOOK,
    CODEC_CM_FILLED, CODEC_CM_THREATS,
};
use checkers_egdb::planning::build_order;
use checkers_egdb::{BuildOptions, Position, Slice, Tablebase, Unit, Wld};
use probe_common::{all_positions, naive_values};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `egdb build --pieces PIECES --dir DIR [--codec CODEC]` (no flag: the default, codec 2).
fn build(dir: &Path, pieces: u32, codec: Option<&str>) {
    build_with(dir, pieces, codec, &[]);
}

/// [`build`] with more arguments (e.g. `--dtc`).
fn build_with(dir: &Path, pieces: u32, codec: Option<&str>, more: &[&str]) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_egdb"));
    c.args(["build", "--quiet", "--pieces", &pieces.to_string(), "--dir"])
        .arg(dir)
        .args(more);
    if let Some(k) = codec {
        c.args(["--codec", k]);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Build each of `units` on its own (as `egdb build --slice`) into `dir` with `codec`, in the
/// order given (build order: each unit's dependencies exist by then).
fn build_units(dir: &Path, units: &[Unit], codec: u32) {
    for u in units {
        let mut o = BuildOptions::new(dir, u.pieces);
        o.slice = Some(u.slices[0]);
        o.codec = codec;
        checkers_egdb::build(&o).unwrap_or_else(|e| panic!("{}: {e}", u.slices[0]));
    }
}

/// Every table file of `dir`: slice -> (codec, bytes, decoded values).
fn load(dir: &Path) -> HashMap<Slice, (u32, u64, Vec<u8>)> {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egdb"))
        .collect();
    files
        .into_par_iter()
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

/// Codec 2's reading of `p`: captures by search, no move = loss, else the stored value of the
/// Black-to-move form.
fn old_value(old: &HashMap<Slice, (u32, u64, Vec<u8>)>, p: &Position) -> Wld {
    // The slow move generator (`Position::moves`), not the fast engine.
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

#[test]
fn codec4_tables_probe_like_codec2_tables_up_to_4_pieces() {
    let d = tempfile::tempdir().unwrap();
    let (new_dir, old_dir) = (d.path().join("new"), d.path().join("old"));
    build(&new_dir, 4, Some("4"));
    build(&old_dir, 4, None);
    let new = load(&new_dir);
    let old = load(&old_dir);
    assert_eq!(new.len(), old.len());
    assert!(new.values().all(|t| t.0 == CODEC_2BIT_THREATS));
    assert!(old.values().all(|t| t.0 == CODEC_2BIT_ZSTD));
    let (nb, ob): (u64, u64) = (
        new.values().map(|t| t.1).sum(),
        old.values().map(|t| t.1).sum(),
    );
    assert!(nb < ob, "codec 4 takes {nb} bytes, codec 2 {ob}");

    // The codec-4 files do leave threat positions unstored: some stored entry differs from the
    // true value (else the test below would not exercise the one-ply resolution).
    let differs = new
        .iter()
        .any(|(s, t)| t.2 != old[s].2 && SliceIndex::new(*s).size() > 0);
    assert!(differs);

    let tb = Tablebase::open(&new_dir).unwrap();
    let all = all_positions(4);
    let bad: Vec<String> = all
        .par_iter()
        .filter_map(|p| {
            let want = old_value(&old, p);
            let got = tb.probe_wld(p);
            (got != Ok(want)).then(|| format!("{} want {want} got {got:?}", p.to_fen()))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{} of {} positions differ, e.g. {:?}",
        bad.len(),
        all.len(),
        &bad[..bad.len().min(5)]
    );
    // probe_wld_raw of quiet positions agrees too (threat positions are searched).
    let bad_raw = all
        .par_iter()
        .filter(|p| !p.has_capture())
        .filter(|p| tb.probe_wld_raw(p) != Ok(old_value(&old, p)))
        .count();
    assert_eq!(bad_raw, 0);

    // Threat positions searched once are answered again from the table of remembered
    // values: with the default table (most positions kept at 4 pieces) and with a tiny one
    // (1,024 entries: most positions share their entry with others), a second pass over
    // every position gives codec 2's values (with the default table, searching much less).
    // (The tiny table on every 13th position: its lookups decode blocks over and over.)
    for (cache, step) in [(64usize << 20, 1), (64 << 10, 13)] {
        let tb = Tablebase::builder(&new_dir)
            .cache_bytes(cache)
            .open()
            .unwrap();
        let pass = || {
            all.par_iter()
                .step_by(step)
                .filter(|p| tb.probe_wld(p) != Ok(old_value(&old, p)))
                .count()
        };
        assert_eq!(pass(), 0);
        let first = tb.stats();
        assert!(first.threat_searches > 1000, "{first:?}");
        assert_eq!(pass(), 0);
        let later = tb.stats();
        let (searches, hits) = (
            later.threat_searches - first.threat_searches,
            later.threat_memo_hits - first.threat_memo_hits,
        );
        if cache == 64 << 20 {
            assert!(hits > 0, "{later:?}");
            // 2^20 entries for about 5e5 positions searched: most kept (measured: the
            // second pass searches 8% as much as the first).
            assert!(
                searches < first.threat_searches / 4,
                "most threat positions remembered: {first:?} {later:?}"
            );
        } else {
            // Collisions everywhere: how much is remembered depends on the threads' order
            // (CI saw the second pass search as much as the first); the values are what
            // this case checks, and that some were served from the table.
            assert!(searches > 0 && later.threat_memo_hits > 0, "{later:?}");
        }
    }
    // No cache: nothing remembered, every threat position searched each time (every 13th
    // position).
    let tb = Tablebase::builder(&new_dir).cache_bytes(0).open().unwrap();
    let bad = all
        .par_iter()
        .step_by(13)
        .filter(|p| tb.probe_wld(p) != Ok(old_value(&old, p)))
        .count();
    assert_eq!(bad, 0);
    assert_eq!(tb.stats().threat_memo_hits, 0);
}

/// Positions (both sides to move, at most 4 pieces) whose probe in `tb` differs from codec 2's
/// reading of `old`, as FEN with both values.
fn differing(tb: &Tablebase, old: &HashMap<Slice, (u32, u64, Vec<u8>)>) -> Vec<String> {
    differing_in(tb, old, &all_positions(4), 1)
}

/// [`differing`] over every `step`-th position of `all`.
fn differing_in(
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
fn directory_mixing_codecs_builds_probes_and_verifies_like_codec2() {
    let d = tempfile::tempdir().unwrap();
    let (mix, old_dir) = (d.path().join("mix"), d.path().join("old"));
    build(&old_dir, 4, None);
    let old = load(&old_dir);
    assert!(old.values().all(|t| t.0 == CODEC_2BIT_ZSTD));

    // Up to 3 pieces in codec 4, then the 4-piece units in codec 2, one `--slice` build each
    // (a build of every slice up to 4 pieces refuses to resume on files of another codec):
    // they read codec-4 dependencies (the dependency store decides per file).
    build(&mix, 3, Some("4"));
    let four: Vec<Unit> = build_order(4)
        .into_iter()
        .filter(|u| u.pieces == 4)
        .collect();
    build_units(&mix, &four, CODEC_2BIT_ZSTD);
    let first = load(&mix);
    assert_eq!(first.len(), old.len());
    // Every codec-2 file is value for value the pure codec-2 build's (capture entries aside,
    // which both fill the same way from the same values).
    for (s, t) in &first {
        if t.0 == CODEC_2BIT_ZSTD {
            let diff = t.2.iter().zip(&old[s].2).filter(|(a, b)| a != b).count();
            assert_eq!(
                diff, 0,
                "slice {s}: entries differing from the codec-2 build"
            );
        } else {
            assert!(s.material.pieces() <= 3, "slice {s}");
        }
    }
    // Every other 4-piece unit removed and rebuilt in codec 4, one `--slice` build each:
    // 4-piece codec-2 and codec-4 files side by side.
    let redo: Vec<Unit> = four.iter().step_by(2).cloned().collect();
    for u in &redo {
        for s in &u.slices {
            std::fs::remove_file(checkers_egdb::format::table_path(&mix, s)).unwrap();
        }
    }
    build_units(&mix, &redo, CODEC_2BIT_THREATS);
    let mixed = load(&mix);
    assert_eq!(mixed.len(), old.len());
    for codec in [CODEC_2BIT_ZSTD, CODEC_2BIT_THREATS] {
        assert!(
            mixed
                .iter()
                .any(|(s, t)| s.material.pieces() == 4 && t.0 == codec),
            "no 4-piece file of codec {codec}"
        );
    }

    let bad = differing(&Tablebase::open(&mix).unwrap(), &old);
    assert!(
        bad.is_empty(),
        "{} positions differ, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );

    // `egdb verify` (the dependency store over both codecs) accepts the mixed directory.
    let _ = verify_ok(&mix);
}

/// `egdb verify --dir DIR` succeeds; its standard output.
fn verify_ok(dir: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(["verify", "--quiet", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn build_codec_flag_refuses_other_values() {
    // Codecs that do not exist, and spellings no other integer option accepts either.
    for bad in ["3", "8", "0", " 5", "5 ", "-2", "five", ""] {
        let d = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_egdb"))
            .args([
                "build",
                "--quiet",
                "--pieces",
                "2",
                &format!("--codec={bad}"),
                "--dir",
            ])
            .arg(d.path())
            .output()
            .unwrap();
        assert!(!out.status.success(), "--codec {bad:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--codec") && err.contains("2, 4, 5, 6 or 7"),
            "{bad:?}: {err}"
        );
        assert!(std::fs::read_dir(d.path()).unwrap().next().is_none());
    }
}

#[test]
fn codec5_tables_probe_like_codec2_tables_and_verify_up_to_4_pieces() {
    let d = tempfile::tempdir().unwrap();
    let (new_dir, old_dir) = (d.path().join("cm"), d.path().join("old"));
    build(&old_dir, 4, None);
    // Up to 3 pieces in codec 5, then 4 pieces in codec 5 on them (the dependency store
    // decodes codec-5 files); a uniform slice stores no blocks under any codec.
    build(&new_dir, 3, Some("5"));
    build(&new_dir, 4, Some("5"));
    let new = load(&new_dir);
    let old = load(&old_dir);
    assert_eq!(new.len(), old.len());
    assert!(new.values().all(|t| t.0 == CODEC_CM_THREATS));
    let (nb, ob): (u64, u64) = (
        new.values().map(|t| t.1).sum(),
        old.values().map(|t| t.1).sum(),
    );
    assert!(nb < ob, "codec 5 takes {nb} bytes, codec 2 {ob}");

    let tb = Tablebase::open(&new_dir).unwrap();
    let bad = differing(&tb, &old);
    assert!(
        bad.is_empty(),
        "{} positions differ, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    assert!(tb.stats().threat_searches > 0);

    let _ = verify_ok(&new_dir);
}

/// Tables of a codec with filled don't cares (6 or 7) against codec 2's: codec 2 up to 4
/// pieces; `codec` up to 3 pieces, then 4 on them (the dependency store decodes its files).
/// Every position the readers take (not don't care) holds codec 2's value, and every position
/// of at most 4 pieces probes to codec 2's reading with the default cache, a small one (pages
/// evicted and decoded again) and none (a segment decoded per lookup; samples).
struct FilledCodec {
    tmp: tempfile::TempDir,
    new_dir: PathBuf,
    old_dir: PathBuf,
    old: HashMap<Slice, (u32, u64, Vec<u8>)>,
    all: Vec<Position>,
}

fn filled_codec_like_codec2(codec: &str, id: u32) -> FilledCodec {
    let tmp = tempfile::tempdir().unwrap();
    let (new_dir, old_dir) = (
        tmp.path().join(format!("cm{codec}")),
        tmp.path().join("old"),
    );
    build(&old_dir, 4, None);
    build(&new_dir, 3, Some(codec));
    build(&new_dir, 4, Some(codec));
    let new = load(&new_dir);
    let old = load(&old_dir);
    assert_eq!(new.len(), old.len());
    assert!(new.values().all(|t| t.0 == id));
    let (nb, ob): (u64, u64) = (
        new.values().map(|t| t.1).sum(),
        old.values().map(|t| t.1).sum(),
    );
    assert!(nb < ob, "codec {codec} takes {nb} bytes, codec 2 {ob}");

    let dont_care: u64 = new
        .par_iter()
        .map(|(s, t)| {
            let ix = SliceIndex::new(*s);
            let want = &old[s].2;
            let mut dont_care = 0u64;
            ix.visit(0, ix.size(), |i, p| {
                if is_dont_care(checkers_egdb::rules::English, &p) {
                    dont_care += 1;
                } else {
                    assert_eq!(t.2[i as usize], want[i as usize], "{s} index {i}");
                }
            });
            dont_care
        })
        .sum();
    assert!(dont_care > 100_000, "{dont_care}");

    let all = all_positions(4);
    let tb = Tablebase::open(&new_dir).unwrap();
    let bad = differing_in(&tb, &old, &all, 1);
    assert!(
        bad.is_empty(),
        "{} positions differ, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    assert!(tb.stats().threat_searches > 0);
    for (cache, step) in [(64usize << 10, 19), (0, 97)] {
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
    FilledCodec {
        tmp,
        new_dir,
        old_dir,
        old,
        all,
    }
}

#[test]
fn codec6_tables_store_codec2s_values_probe_like_codec2_and_verify_up_to_4_pieces() {
    let f = filled_codec_like_codec2("6", CODEC_CM_FILLED);
    let _ = verify_ok(&f.new_dir);
}

/// Distance files do not depend on the codec of the value files they are built on, and
/// `egdb verify` re-derives them over codec-5 value files, where a king move may lead to a
/// threat position whose value is not stored (resolved by search).
#[test]
fn distance_files_over_codec5_values_are_codec2s_and_verify() {
    let d = tempfile::tempdir().unwrap();
    let (new_dir, old_dir) = (d.path().join("cm"), d.path().join("old"));
    for (dir, codec) in [(&old_dir, "2"), (&new_dir, "5")] {
        build_with(dir, 4, Some(codec), &["--dtc"]);
    }
    let dtc_files = |dir: &Path| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "dtc"))
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                (name, std::fs::read(&p).unwrap())
            })
            .collect();
        v.sort();
        v
    };
    let (new, old) = (dtc_files(&new_dir), dtc_files(&old_dir));
    assert!(old.len() > 1000, "{}", old.len());
    assert_eq!(new.len(), old.len());
    for (a, b) in new.iter().zip(&old) {
        assert!(a == b, "{} differs from codec 2's", a.0);
    }
    let text = verify_ok(&new_dir);
    assert!(
        text.starts_with(&format!("ok: {} distance files, ", new.len())),
        "{text}"
    );
}

/// `egdb info` names each file's codec (`--slices`: last column) and each piece count's codecs
/// (last column): a codec-2 directory with half of its 3-piece files replaced by those of a
/// codec-5 build shows "2" up to 2 pieces and "2,5" at 3 pieces.
#[test]
fn info_shows_the_codec_of_each_file_and_piece_count() {
    let d = tempfile::tempdir().unwrap();
    let (two, five) = (d.path().join("two"), d.path().join("five"));
    build(&two, 3, None);
    build(&five, 3, Some("5"));
    // The 3-piece files of the codec-5 build beside the rest of the codec-2 one.
    let three: Vec<std::path::PathBuf> = std::fs::read_dir(&five)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "egdb")
                && TableFile::open(p).unwrap().meta().slice.material.pieces() == 3
        })
        .collect();
    assert!(three.len() > 100);
    // Only part of them: the piece count mixes both codecs.
    for p in &three[..three.len() / 2] {
        std::fs::copy(p, two.join(p.file_name().unwrap())).unwrap();
    }
    let info = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_egdb"))
            .arg("info")
            .args(args)
            .arg("--dir")
            .arg(&two)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let text = info(&[]);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows[0].last(), Some(&"codecs"), "{text}");
    assert_eq!(rows[1][0], "1");
    assert_eq!(rows[1].last(), Some(&"2"), "{text}");
    assert_eq!(rows[2].last(), Some(&"2"), "{text}");
    assert_eq!(rows[3][0], "3");
    assert_eq!(rows[3].last(), Some(&"2,5"), "{text}");
    let text = info(&["--slices"]);
    let copied: std::collections::HashSet<String> = three[..three.len() / 2]
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut seen = 0;
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split('\t').collect();
        if f.len() != 5 {
            break; // the per-piece table follows
        }
        let want = if copied.contains(f[0]) { "5" } else { "2" };
        assert_eq!(f[4], want, "{l}");
        seen += 1;
    }
    assert_eq!(seen, 16 + 94 + 284, "{text}");
}

/// `egdb ARGS` (its output, whatever the status).
fn egdb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(args)
        .output()
        .unwrap()
}

/// `egdb ARGS` succeeds; its standard output.
fn ok(args: &[&str]) -> String {
    let out = egdb(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
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

/// Codec 7 against codec 2's reading, the naive oracle, `verify`, `info`, `convert` (from
/// codec 2 byte for byte as `build --codec 7`, round trips through codecs 6 and 4, 7 -> 2
/// refused) and a directory mixing codecs 2, 6 and 7.
#[test]
fn codec7_tables_store_codec2s_values_probe_like_codec2_and_the_oracle_and_verify() {
    let f = filled_codec_like_codec2("7", CODEC_CM_BOOK);
    let (d, new_dir, old_dir, old, all) = (&f.tmp, &f.new_dir, &f.old_dir, &f.old, &f.all);
    let tb = Tablebase::open(new_dir).unwrap();
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
    let built = egdb_files(new_dir);
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
        let from = [old_dir, &c6, new_dir][k % 3];
        std::fs::copy(from.join(name), mix.join(name)).unwrap();
    }
    let codecs: std::collections::BTreeSet<u32> = load(&mix).values().map(|t| t.0).collect();
    assert_eq!(
        codecs.into_iter().collect::<Vec<_>>(),
        vec![CODEC_2BIT_ZSTD, CODEC_CM_FILLED, CODEC_CM_BOOK]
    );
    let tb = Tablebase::open(&mix).unwrap();
    let bad = differing_in(&tb, old, all, 3);
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
