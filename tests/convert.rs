//! `egdb convert` (issue 32): a table directory written again in another value codec.
//!
//! The tables are built here with the library (`checkers_egdb::build`), then converted by the
//! `egdb` binary. What the conversions are held to, decided outside the converter:
//! - every position of at most 4 pieces (both sides to move, enumerated by brute force,
//!   `probe_common::all_positions`) probes to the same value in the target as in the codec-2
//!   source (the source's probe reads codec 2, whose decoder the target's codec does not
//!   share);
//! - the converted files equal, byte for byte, the files `egdb build --codec N` writes (the
//!   builder's writer from the solver's values, not from a decoded file);
//! - `egdb verify` (values re-derived from successors) passes on the target;
//! - distance files are byte-identical to the source's;
//! - a rerun after files were deleted, truncated or damaged restores identical bytes.

mod probe_common;

use checkers_egdb::format::{dir_rules, TableFile};
use checkers_egdb::{build, BuildOptions, Tablebase, Wld};
use probe_common::all_positions;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

/// `egdb ARGS`.
fn egdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(args)
        .output()
        .unwrap()
}

/// `egdb convert --quiet --dir SRC --out DST ARGS`, which must succeed; its standard output.
fn convert_ok(src: &Path, dst: &Path, args: &[&str]) -> String {
    let mut a = vec![
        "convert",
        "--quiet",
        "--dir",
        src.to_str().unwrap(),
        "--out",
        dst.to_str().unwrap(),
    ];
    a.extend_from_slice(args);
    let out = egdb(&a);
    assert!(
        out.status.success(),
        "egdb {a:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `egdb convert ...` that must fail with status `code` and one error line mentioning
/// `mention`; the error line.
fn convert_fails(args: &[&str], code: i32, mention: &str) -> String {
    let mut a = vec!["convert", "--quiet"];
    a.extend_from_slice(args);
    let out = egdb(&a);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "egdb {a:?}: {err}");
    assert!(err.contains(mention), "egdb {a:?}: {err}");
    if code == 1 {
        assert_eq!(err.lines().count(), 1, "one error line: {err}");
    }
    err
}

/// Every file of `dir` (hidden ones aside): name -> bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// The files of `dir` whose names end with `ext`.
fn with_ext(all: &BTreeMap<String, Vec<u8>>, ext: &str) -> BTreeMap<String, Vec<u8>> {
    all.iter()
        .filter(|(n, _)| n.ends_with(ext))
        .map(|(n, b)| (n.clone(), b.clone()))
        .collect()
}

/// `egdb verify --dir DIR` succeeds.
fn verify_ok(dir: &Path) {
    let out = egdb(&["verify", "--quiet", "--dir", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "verify {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The codec of every WLD file of `dir`.
fn codecs(dir: &Path) -> Vec<u32> {
    let mut c: Vec<u32> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egdb"))
        .map(|p| TableFile::open(&p).unwrap().codec())
        .collect();
    c.sort();
    c.dedup();
    c
}

#[test]
fn english_tables_convert_to_codecs_4_to_7_probe_alike_verify_and_resume() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    build(&BuildOptions {
        dtc: true,
        dtw: true,
        ..BuildOptions::new(&src, 4)
    })
    .unwrap();
    let src_files = files(&src);
    assert_eq!(codecs(&src), vec![2]);

    // Every position of at most 4 pieces, valued once by the codec-2 source.
    let all = all_positions(4);
    let want: Vec<Wld> = {
        let tb = Tablebase::open(&src).unwrap();
        all.par_iter().map(|p| tb.probe_wld(p).unwrap()).collect()
    };

    for codec in ["4", "5", "6", "7"] {
        let dst = d.path().join(format!("c{codec}"));
        let out = convert_ok(&src, &dst, &["--codec", codec, "--check", "300"]);
        assert!(
            out.contains(&format!("WLD files in codec {codec}")),
            "{out}"
        );
        assert!(
            out.contains("against the codec-2 reading: 0 differ"),
            "{out}"
        );
        assert!(
            out.contains("1029 converted, 0 copied, 0 already there"),
            "{out}"
        );
        assert!(out.contains("2058 files"), "distance files: {out}");
        assert_eq!(codecs(&dst), vec![codec.parse::<u32>().unwrap()]);
        // The source is untouched; the distance files are copies; every WLD file is there.
        assert_eq!(files(&src), src_files);
        let got = files(&dst);
        for ext in [".dtc", ".dtw"] {
            assert_eq!(with_ext(&got, ext), with_ext(&src_files, ext), "{ext}");
        }
        assert_eq!(
            with_ext(&got, ".egdb").keys().collect::<Vec<_>>(),
            with_ext(&src_files, ".egdb").keys().collect::<Vec<_>>()
        );
        assert_eq!(dir_rules(&dst).unwrap(), dir_rules(&src).unwrap());

        // Every position probes as in the source (all of them for codecs 4 and 5; every 3rd
        // for codecs 6 and 7, which the byte comparisons below cover too).
        let step = if codec == "6" || codec == "7" { 3 } else { 1 };
        let tb = Tablebase::open(&dst).unwrap();
        let bad: Vec<String> = all
            .par_iter()
            .zip(&want)
            .step_by(step)
            .filter_map(|(p, w)| {
                let g = tb.probe_wld(p);
                (g.as_ref() != Ok(w)).then(|| format!("{}: {w} in the source, {g:?}", p.to_fen()))
            })
            .collect();
        assert!(
            bad.is_empty(),
            "codec {codec}: {} positions differ, e.g. {:?}",
            bad.len(),
            &bad[..bad.len().min(5)]
        );
    }

    // The converted files are those `egdb build --codec 5` writes, byte for byte; and the
    // conversions between codecs 4, 5, 6 and 7 give the same files as from codec 2.
    let built = d.path().join("b5");
    build(&BuildOptions {
        codec: 5,
        ..BuildOptions::new(&built, 4)
    })
    .unwrap();
    let c5 = with_ext(&files(&d.path().join("c5")), ".egdb");
    assert_eq!(with_ext(&files(&built), ".egdb"), c5);
    for (from, to) in [("4", "5"), ("5", "6"), ("6", "7"), ("7", "4")] {
        let dst = d.path().join(format!("from{from}to{to}"));
        convert_ok(&d.path().join(format!("c{from}")), &dst, &["--codec", to]);
        assert_eq!(
            files(&dst),
            files(&d.path().join(format!("c{to}"))),
            "{from} -> {to}"
        );
    }

    // `egdb verify` re-derives every value, distance and depth to win of the codec-5 target.
    verify_ok(&d.path().join("c5"));

    // The same bytes and summary with 1 thread as with 2.
    let one = d.path().join("one");
    let two = d.path().join("two");
    let o1 = convert_ok(&src, &one, &["--codec", "5", "--threads", "1"]);
    let o2 = convert_ok(&src, &two, &["--codec", "5", "--threads", "2"]);
    assert_eq!(files(&one), files(&two));
    assert_eq!(files(&one), files(&d.path().join("c5")));
    assert_eq!(
        o1.replace(one.to_str().unwrap(), "DST"),
        o2.replace(two.to_str().unwrap(), "DST")
    );

    // Resume: a missing file, a truncated one, one with a byte changed (same length), a
    // truncated distance file, and a file left in another codec are written again; the rest
    // is skipped; the bytes are the first run's.
    let dst = d.path().join("c5");
    let before = files(&dst);
    std::fs::remove_file(dst.join("0211-n0.egdb")).unwrap();
    let f = dst.join("1102-1n.egdb");
    let b = std::fs::read(&f).unwrap();
    std::fs::write(&f, &b[..b.len() / 2]).unwrap();
    let f = dst.join("0220-n5.egdb");
    let mut b = std::fs::read(&f).unwrap();
    let mid = b.len() - 20;
    b[mid] ^= 0x40;
    std::fs::write(&f, &b).unwrap();
    let f = dst.join("0202-nn.dtc");
    let b = std::fs::read(&f).unwrap();
    std::fs::write(&f, &b[..b.len() - 1]).unwrap();
    std::fs::copy(d.path().join("c4/0101-nn.egdb"), dst.join("0101-nn.egdb")).unwrap();
    // A temporary file of a killed writer, long dead (no such process, an hour old).
    let stale = dst.join(".0211-n1.egdb.tmp.999999999.0");
    std::fs::write(&stale, b"partial").unwrap();
    let touched = Command::new("touch")
        .args(["-d", "1 hour ago"])
        .arg(&stale)
        .status()
        .unwrap();
    assert!(touched.success());
    let out = convert_ok(&src, &dst, &["--codec", "5"]);
    assert!(!stale.exists());
    assert!(
        out.contains("all: 1029 files, 7361090 positions")
            && out.contains("4 converted, 0 copied, 1025 already there"),
        "{out}"
    );
    assert!(out.contains("1 copied, 2057 already there"), "{out}");
    assert_eq!(files(&dst), before);
    verify_ok(&dst);
}

#[test]
fn refusals_name_the_problem_and_write_nothing() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    build(&BuildOptions {
        dtc: true,
        ..BuildOptions::new(&src, 3)
    })
    .unwrap();
    let src_files = files(&src);
    let s = src.to_str().unwrap();
    let dst = d.path().join("dst");
    let t = dst.to_str().unwrap();

    // The source itself, by any path: refused before anything is written.
    let dotted = format!("{s}/../src");
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&src, &link).unwrap();
    for same in [s, dotted.as_str(), link.to_str().unwrap()] {
        for codec in ["2", "4"] {
            convert_fails(
                &["--dir", s, "--out", same, "--codec", codec],
                1,
                "is the source directory",
            );
        }
    }
    assert_eq!(files(&src), src_files);

    // Codecs that do not exist: a usage error, nothing made.
    for bad in ["3", "8", "0", "five", ""] {
        convert_fails(
            &["--dir", s, "--out", t, &format!("--codec={bad}")],
            2,
            "2, 4, 5, 6 or 7",
        );
    }
    assert!(!dst.exists());
    convert_fails(
        &["--dir", s, "--out", t, "--check", "10000001"],
        1,
        "at most 10000000",
    );
    assert!(!dst.exists());

    // Codec 4 back to codec 2 needs a search: one clear line, nothing written.
    let c4 = d.path().join("c4");
    convert_ok(&src, &c4, &["--codec", "4"]);
    let err = convert_fails(
        &["--dir", c4.to_str().unwrap(), "--out", t, "--codec", "2"],
        1,
        "from codec 4 to codec 2",
    );
    assert!(
        err.contains("needs a search") && err.contains("egdb build"),
        "{err}"
    );
    assert!(!dst.exists());

    // A damaged header: reported by name before anything is written.
    let bad = d.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    for (n, b) in &src_files {
        std::fs::write(bad.join(n), b).unwrap();
    }
    let victim = bad.join("1101-3n.egdb");
    let mut b = std::fs::read(&victim).unwrap();
    b[20] ^= 1;
    std::fs::write(&victim, &b).unwrap();
    let bs = bad.to_str().unwrap();
    convert_fails(
        &["--dir", bs, "--out", t, "--codec", "5"],
        1,
        "1101-3n.egdb",
    );
    assert!(!dst.exists());

    // A damaged block (the header intact): reported by name, and no file of that slice is
    // written; every file that is written is whole and right.
    std::fs::write(&victim, &src_files["1101-3n.egdb"]).unwrap();
    let victim = bad.join("0102-nn.egdb");
    let mut b = std::fs::read(&victim).unwrap();
    let t_file = TableFile::open(&victim).unwrap();
    assert!(t_file.uniform().is_none() && t_file.block_count() > 0);
    let at = b.len() - 12;
    b[at] ^= 0x10;
    std::fs::write(&victim, &b).unwrap();
    for codec in ["2", "5"] {
        let out = d.path().join(format!("partial{codec}"));
        let err = convert_fails(
            &[
                "--dir",
                bs,
                "--out",
                out.to_str().unwrap(),
                "--codec",
                codec,
            ],
            1,
            "0102-nn.egdb",
        );
        assert!(
            err.contains("source file") && err.contains("corrupt"),
            "{err}"
        );
        assert!(!out.join("0102-nn.egdb").exists(), "codec {codec}");
        for (n, _) in files(&out) {
            if n.ends_with(".egdb") {
                TableFile::open(&out.join(&n))
                    .unwrap()
                    .verify_checksum()
                    .unwrap();
            }
        }
        // The source repaired, a rerun completes the target.
        std::fs::write(&victim, &src_files["0102-nn.egdb"]).unwrap();
        convert_ok(&bad, &out, &["--codec", codec]);
        std::fs::write(&victim, &b).unwrap();
        if codec == "2" {
            assert_eq!(files(&out), src_files);
        }
        verify_ok(&out);
    }

    // A source without tables, and one that is not a directory.
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    convert_fails(
        &["--dir", empty.to_str().unwrap(), "--out", t],
        1,
        "no table files",
    );
    convert_fails(
        &["--dir", victim.to_str().unwrap(), "--out", t],
        1,
        "not a directory",
    );
    assert!(!dst.exists());
}

#[test]
fn a_variants_tables_convert_to_codec_2_only_keeping_their_rules() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("italian");
    let out = egdb(&[
        "build",
        "--quiet",
        "--pieces",
        "3",
        "--dtc",
        "--rules",
        "italian",
        "--dir",
        src.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let src_files = files(&src);
    let s = src.to_str().unwrap();
    let dst = d.path().join("dst");
    let t = dst.to_str().unwrap();
    for codec in ["4", "5", "6", "7"] {
        let err = convert_fails(
            &["--dir", s, "--out", t, "--codec", codec],
            1,
            "for English tables only",
        );
        assert!(err.contains("italian"), "{err}");
        assert!(!dst.exists());
    }
    // Codec 2 (the default): every file copied, the rules kept, the check by the source's
    // probe (the variant's rules).
    let out = convert_ok(&src, &dst, &["--check", "300"]);
    assert!(out.contains("(italian tables)"), "{out}");
    assert!(
        out.contains("against the probe of the source: 0 differ"),
        "{out}"
    );
    assert_eq!(files(&dst), src_files);
    assert_eq!(dir_rules(&dst).unwrap(), dir_rules(&src).unwrap());
    verify_ok(&dst);
    // Converting into a directory of English tables is refused.
    let eng = d.path().join("english");
    build(&BuildOptions::new(&eng, 2)).unwrap();
    convert_fails(
        &["--dir", s, "--out", eng.to_str().unwrap(), "--codec", "2"],
        1,
        "holds english tables",
    );
}

/// Blocks of more than 256 cache pages: codec 6 written with 1,100,000 positions a block
/// (`ConvertOptions::block_positions`; the library accepts any multiple of 20). The probe
/// caches such a block one 4,120-position page at a time, pages 0 to 255 only; every later
/// position must still read its own block. Before the fix of `BlockCache::byte`, page 256 + k
/// of block 0 was looked up under the key of page k of block 1 and returned that position's
/// value. Checked against the codec-2 source (another decoder) at the positions of block 0
/// (every 7th) past page 255 of the largest 5-piece slice, 0203-nn (2,013,760 positions), after the
/// first pages of block 1 were cached.
#[test]
fn positions_past_page_255_of_a_large_block_read_their_own_block() {
    use checkers_egdb::format::SliceIndex;
    use checkers_egdb::{convert_dir, ConvertOptions, Slice};
    let src = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(src.path(), 4)).unwrap();
    let slice: Slice = "0203-nn".parse().unwrap();
    build(&BuildOptions {
        slice: Some(slice),
        with_deps: true,
        ..BuildOptions::new(src.path(), 5)
    })
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let dst = out.path().join("c6");
    const BLOCK: u64 = 1_100_000;
    const PAGE: u64 = 4_120;
    let mut c = ConvertOptions::new(src.path(), &dst, 6);
    c.block_positions = BLOCK as u32;
    convert_dir(&c, &|_, _| {}).unwrap();
    let reference = Tablebase::open(src.path()).unwrap();
    let tb = Tablebase::builder(&dst)
        .cache_bytes(64 << 20)
        .open()
        .unwrap();
    let ix = SliceIndex::new(slice);
    assert!(ix.size() > 2 * BLOCK - 200_000 && ix.size() < 2 * BLOCK);
    // Pages 0..11 of block 1 into the cache.
    let late = ix.size() - BLOCK;
    for k in 0..late.div_ceil(PAGE) {
        let p = ix.unrank(BLOCK + k * PAGE).unwrap();
        assert_eq!(tb.probe_wld(&p).unwrap(), reference.probe_wld(&p).unwrap());
    }
    // Every 7th position of block 0 in its pages 256 and later.
    let (mut compared, mut differ) = (0u64, Vec::new());
    for i in (256 * PAGE..BLOCK).step_by(7) {
        let p = ix.unrank(i).unwrap();
        let (got, want) = (tb.probe_wld(&p).unwrap(), reference.probe_wld(&p).unwrap());
        compared += 1;
        if got != want {
            differ.push(format!(
                "index {i} {}: {got:?}, source {want:?}",
                p.to_fen()
            ));
        }
    }
    assert_eq!(compared, (BLOCK - 256 * PAGE).div_ceil(7));
    assert!(
        differ.is_empty(),
        "{} of {compared} differ, e.g. {:?}",
        differ.len(),
        &differ[..differ.len().min(3)]
    );
}

/// A FIFO in the target named like a distance file the conversion copies (found by a code
/// review: the copy path read the target's entry to compare it, and a FIFO's open blocks
/// until a writer comes, so the run hung holding the target's lock): the file is written
/// over it, the run ends (a 60 s guard), and the target's file is the source's, byte for byte.
#[test]
fn a_fifo_named_like_a_file_to_copy_is_replaced_not_read() {
    let src = tempfile::tempdir().unwrap();
    let mut o = BuildOptions::new(src.path(), 2);
    o.dtc = true;
    build(&o).unwrap();
    let out = tempfile::tempdir().unwrap();
    let dst = out.path().join("t");
    std::fs::create_dir(&dst).unwrap();
    let name = "0101-nn.dtc";
    let fifo = std::ffi::CString::new(dst.join(name).to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path it is given, owned by this frame.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let mut child = Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(["convert", "--quiet", "--codec", "4", "--dir"])
        .arg(src.path())
        .arg("--out")
        .arg(&dst)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("egdb convert still running after 60 s (blocked on the FIFO)");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success());
    assert!(std::fs::symlink_metadata(dst.join(name)).unwrap().is_file());
    assert_eq!(
        std::fs::read(dst.join(name)).unwrap(),
        std::fs::read(src.path().join(name)).unwrap()
    );
}
