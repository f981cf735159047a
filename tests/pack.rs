//! `egdb pack` / `egdb unpack` (issue 32, "fewer files"): a table directory in one file per
//! material and metric, and back.
//!
//! What packing is held to, decided outside the code under test:
//! - every position of at most 4 pieces (both sides to move, enumerated by brute force,
//!   `probe_common::all_positions`) probes to the same value, DTC and DTW in the packed
//!   directory as in the slice files it was made from (read by the unchanged slice-file path),
//!   through positioned reads with a pool of 2 descriptors (members closed and reopened), and
//!   memory-mapped;
//! - `unpack` gives back the slice files byte for byte (compared with a copy taken before);
//! - a damaged member or index is reported and never read as a value; a pack interrupted
//!   before it removed the slice files completes on a rerun; a damaged slice file stops
//!   `pack` before anything of its material is removed; build, verify and convert refuse a
//!   packed directory with a line that says how to go on.

mod probe_common;

use checkers_egdb::format::{read_index, SliceIndex};
use checkers_egdb::{
    build, pack_dir, read_dir_info, unpack_dir, Access, BuildOptions, Dtc, Slice, Tablebase,
};
use probe_common::all_positions;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

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

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for (name, bytes) in files(from) {
        std::fs::write(to.join(name), bytes).unwrap();
    }
}

/// (value, DTC, DTW) of every position; `None` for an error.
#[allow(clippy::type_complexity)]
/// Every `step`-th of `positions`, and the first position of each (slice, block of 65,520
/// positions of the value file) that those miss.
fn sample_every_block(
    positions: Vec<checkers_egdb::Position>,
    step: usize,
) -> Vec<checkers_egdb::Position> {
    let mut index: std::collections::HashMap<Slice, SliceIndex> = Default::default();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (i, p) in positions.into_iter().enumerate() {
        let q = p.normalized();
        let s = Slice::of(&q);
        let ix = index.entry(s).or_insert_with(|| SliceIndex::new(s));
        if seen.insert((s, ix.rank(&q) / 65_520)) || i % step == 0 {
            out.push(p);
        }
    }
    out
}

fn probe_all(
    tb: &Tablebase,
    all: &[checkers_egdb::Position],
) -> Vec<(Option<checkers_egdb::Wld>, Option<Dtc>, Option<Dtc>)> {
    all.par_iter()
        .map(|p| {
            (
                tb.probe_wld(p).ok(),
                tb.probe_dtc(p).ok(),
                tb.probe_dtw(p).ok(),
            )
        })
        .collect()
}

/// The value of every position, as strings (errors included).
fn probe_wld_all(tb: &Tablebase, all: &[checkers_egdb::Position]) -> Vec<String> {
    all.par_iter()
        .map(|p| format!("{:?}", tb.probe_wld(p)))
        .collect()
}

fn egdb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn packed_tables_probe_as_the_slice_files_and_unpack_byte_for_byte() {
    let d = tempfile::tempdir().unwrap();
    let loose = d.path().join("loose");
    build(&BuildOptions {
        dtc: true,
        dtw: true,
        ..BuildOptions::new(&loose, 4)
    })
    .unwrap();
    let before = files(&loose);
    let packed = d.path().join("packed");
    copy_dir(&loose, &packed);
    let mut written = 0;
    let rep = pack_dir(&packed, &mut |_| written += 1).unwrap();
    let after = files(&packed);
    // One file per material and metric; no slice file left.
    let materials: std::collections::BTreeSet<String> = before
        .keys()
        .map(|n| n.split('-').next().unwrap().to_string())
        .collect();
    assert_eq!(after.len(), 3 * materials.len());
    assert_eq!(written, after.len());
    assert!(after.keys().all(|n| !n.contains('-')), "{:?}", after.keys());
    assert_eq!(rep.kinds.len(), 3);
    let slices = before.keys().filter(|n| n.ends_with(".egdb")).count() as u64;
    for (_, n, files_before, files_after) in &rep.kinds {
        assert_eq!(*n, slices);
        assert_eq!(*files_before, slices);
        assert_eq!(*files_after, materials.len() as u64);
    }
    // Each member is its slice file, byte for byte.
    for (name, bytes) in &after {
        let ix = read_index(&packed.join(name)).unwrap();
        let ext = name.rsplit('.').next().unwrap();
        for m in &ix.members {
            let own = &before[&format!("{}.{ext}", m.slice)];
            assert_eq!(
                &bytes[m.offset as usize..(m.offset + m.len) as usize],
                &own[..]
            );
        }
    }
    // The headers read the same.
    let strip = |v: Vec<checkers_egdb::FileInfo>| {
        v.into_iter()
            .map(|f| (f.slice, f.meta, f.bytes, f.codec))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        strip(read_dir_info(&loose).unwrap()),
        strip(read_dir_info(&packed).unwrap())
    );

    // A third of the positions of at most 4 pieces, both sides to move, and at least one in
    // every block of 65,520 positions of every value file (the members are the slice files
    // byte for byte, checked above: what is under test is where each member's blocks are
    // found, through each way of reading).
    // (Positioned reads through a pool of 2 descriptors and a 64 KiB cache on a sample of
    // them: every block read reopens a member's file and checks it is the one opened.)
    let all = sample_every_block(all_positions(4), 3);
    let want = probe_all(&Tablebase::open(&loose).unwrap(), &all);
    assert!(
        want.iter()
            .all(|(v, d, w)| v.is_some() && d.is_some() && w.is_some()),
        "the reference probes"
    );
    for (access, files, every) in [
        (Access::Pread, 512, 1),
        (Access::Mmap, 512, 1),
        (Access::Pread, 2, 11),
    ] {
        let tb = Tablebase::builder(&packed)
            .access(access)
            .max_open_files(files)
            .cache_bytes(if every == 1 { 64 << 20 } else { 1 << 16 })
            .open()
            .unwrap();
        let some: Vec<_> = all.iter().step_by(every).copied().collect();
        let want: Vec<_> = want.iter().step_by(every).copied().collect();
        let got = probe_all(&tb, &some);
        let differ = want.iter().zip(&got).filter(|(a, b)| a != b).count();
        assert_eq!(
            differ, 0,
            "{access:?}, {files} files: {differ} positions differ"
        );
    }

    // The command-line readers: probe, info, stats.
    let dir = packed.to_str().unwrap();
    let out = egdb(&[
        "probe",
        "--dir",
        dir,
        "--dtc",
        "--dtw",
        "W:WK19,K23:BK28,12",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lo = egdb(&[
        "probe",
        "--dir",
        loose.to_str().unwrap(),
        "--dtc",
        "--dtw",
        "W:WK19,K23:BK28,12",
    ]);
    assert_eq!(out.stdout, lo.stdout);
    for args in [
        &["info"][..],
        &["stats"],
        &["stats", "--dtc"],
        &["stats", "--dtw"],
    ] {
        let a = |d: &str| {
            let mut v = args.to_vec();
            v.extend(["--dir", d]);
            egdb(&v)
        };
        let (p, l) = (a(dir), a(loose.to_str().unwrap()));
        assert!(
            p.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&p.stderr)
        );
        assert_eq!(p.stdout, l.stdout, "{args:?}");
        assert_eq!(p.stderr, l.stderr, "{args:?}");
    }

    // A certificate proved on the packed tables checks against either layout (the table
    // set of a member is that of the slice file it was made from).
    let cert = d.path().join("cert.txt");
    let out = egdb(&[
        "prove",
        "--dir",
        dir,
        "--time",
        "60",
        "--cert",
        cert.to_str().unwrap(),
        "B:W24,K26,K31:B14,K22",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("\tloss"));
    for d in [dir, loose.to_str().unwrap()] {
        let out = egdb(&["check-proof", "--dir", d, cert.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{d}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // Build, verify and convert refuse it, saying how to go on.
    for args in [
        vec!["build", "--pieces", "4", "--dir", dir, "--quiet"],
        vec!["verify", "--dir", dir, "--quiet"],
        vec![
            "convert",
            "--dir",
            dir,
            "--out",
            "/nonexistent/x",
            "--quiet",
        ],
    ] {
        let out = egdb(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("egdb unpack"), "{args:?}: {err}");
    }
    assert_eq!(files(&packed), after, "nothing changed by the refusals");

    // Unpack: the slice files, byte for byte; a second unpack and pack change nothing more.
    unpack_dir(&packed, &mut |_| {}).unwrap();
    assert_eq!(files(&packed), before);
    unpack_dir(&packed, &mut |_| {}).unwrap();
    assert_eq!(files(&packed), before);
    pack_dir(&packed, &mut |_| {}).unwrap();
    assert_eq!(files(&packed), after, "packing is deterministic");
    pack_dir(&packed, &mut |_| {}).unwrap();
    assert_eq!(files(&packed), after);
}

#[test]
fn damage_is_reported_never_read_and_an_interrupted_pack_completes() {
    let d = tempfile::tempdir().unwrap();
    let loose = d.path().join("loose");
    build(&BuildOptions::new(&loose, 3)).unwrap();
    let before = files(&loose);
    let packed = d.path().join("packed");
    copy_dir(&loose, &packed);
    pack_dir(&packed, &mut |_| {}).unwrap();
    let after = files(&packed);
    // The positions of material 1101 (either colour to move, either way round): those the
    // damaged material file below serves, and those of another material.
    let all: Vec<_> = all_positions(3)
        .into_iter()
        .filter(|p| {
            let m = checkers_egdb::Slice::of(&p.normalized())
                .material
                .to_string();
            m == "1101" || m == "0111"
        })
        .collect();
    assert!(all.len() > 1000);
    let want = probe_wld_all(&Tablebase::open(&loose).unwrap(), &all);

    // An interrupted pack: the material file written, a slice file not yet removed. Read
    // once; the rerun removes it and writes the same bytes.
    let name = before
        .keys()
        .find(|n| n.starts_with("1101-") && n.ends_with(".egdb"))
        .unwrap()
        .clone();
    let name = name.as_str();
    std::fs::write(packed.join(name), &before[name]).unwrap();
    assert_eq!(
        read_dir_info(&packed).unwrap().len(),
        read_dir_info(&loose).unwrap().len()
    );
    pack_dir(&packed, &mut |_| {}).unwrap();
    assert_eq!(files(&packed), after);

    // A damaged slice file stops the pack before its material loses anything.
    unpack_dir(&packed, &mut |_| {}).unwrap();
    let mut bad = before[name].clone();
    let k = bad.len() - 20;
    bad[k] ^= 0x10;
    std::fs::write(packed.join(name), &bad).unwrap();
    let e = pack_dir(&packed, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains(name), "{e}");
    assert!(packed.join(name).exists());
    assert!(!packed.join("1101.egdb").exists());
    std::fs::write(packed.join(name), &before[name]).unwrap();
    pack_dir(&packed, &mut |_| {}).unwrap();
    assert_eq!(files(&packed), after);

    // Every byte of one material file flipped in turn (its index and its members' headers,
    // blocks and checksums): every probe either gives the true value or an error, never
    // another value; and some error is seen for each flip in the index.
    let target = "1101.egdb";
    let good = after[target].clone();
    let index_len = 32 + 24 * read_index(&packed.join(target)).unwrap().members.len();
    let step = good.len() / 61;
    for i in (index_len..good.len())
        .step_by(step)
        .chain((0..index_len).step_by(5))
    {
        let mut b = good.clone();
        b[i] ^= 0x04;
        std::fs::write(packed.join(target), &b).unwrap();
        for access in [Access::Pread, Access::Mmap] {
            let Ok(tb) = Tablebase::builder(&packed)
                .access(access)
                .cache_bytes(1 << 20)
                .open()
            else {
                continue;
            };
            let got = probe_wld_all(&tb, &all);
            let mut errors = 0;
            for (w, g) in want.iter().zip(&got) {
                if g.contains("Err") {
                    errors += 1;
                } else {
                    assert_eq!(w, g, "byte {i} flipped, {access:?}: a wrong value");
                }
            }
            if i < index_len {
                assert!(
                    errors > 0,
                    "index byte {i} flipped, {access:?}: not reported"
                );
            }
        }
    }
    // Cut short, or longer.
    for b in [good[..good.len() - 1].to_vec(), [&good[..], b"x"].concat()] {
        std::fs::write(packed.join(target), &b).unwrap();
        let tb = Tablebase::open(&packed).unwrap();
        let got = probe_wld_all(&tb, &all);
        assert!(got.iter().any(|g| g.contains("Err")));
        for (w, g) in want.iter().zip(&got) {
            assert!(g.contains("Err") || w == g);
        }
        let e = pack_dir(&packed, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("1101.egdb"), "{e}");
        let e = unpack_dir(&packed, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("1101.egdb"), "{e}");
    }
}

/// A material file packed again while a handle lives (unpack, a slice added, pack): its
/// members moved, and a slice opened afterwards is read at its new offset, not through the
/// index read before (found by a code review: the stale index gave a false "corrupt" error
/// that stuck to the slice). Values against the loose slice files.
#[test]
fn a_material_file_packed_again_is_read_through_its_new_index() {
    let loose = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(loose.path(), 3)).unwrap();
    let mut of_1101: Vec<Slice> = files(loose.path())
        .keys()
        .filter(|n| n.starts_with("1101-") && n.ends_with(".egdb"))
        .map(|n| n.trim_end_matches(".egdb").parse().unwrap())
        .collect();
    of_1101.sort();
    assert!(of_1101.len() >= 3, "{of_1101:?}");
    let (a, b, x) = (of_1101[0], of_1101[1], *of_1101.last().unwrap());
    let packed = tempfile::tempdir().unwrap();
    copy_dir(loose.path(), packed.path());
    std::fs::remove_file(packed.path().join(format!("{x}.egdb"))).unwrap();
    pack_dir(packed.path(), &mut |_| {}).unwrap();

    let truth = Tablebase::open(loose.path()).unwrap();
    let tb = Tablebase::open(packed.path()).unwrap();
    let first = |s: Slice, n: u64| -> Vec<checkers_egdb::Position> {
        let ix = SliceIndex::new(s);
        (0..ix.size().min(n))
            .map(|i| ix.unrank(i).unwrap())
            .collect()
    };
    for p in first(a, 50) {
        assert_eq!(tb.probe_wld(&p), truth.probe_wld(&p), "{}", p.to_fen());
    }
    // Packed again with the missing slice: every member after the first moves.
    unpack_dir(packed.path(), &mut |_| {}).unwrap();
    std::fs::copy(
        loose.path().join(format!("{x}.egdb")),
        packed.path().join(format!("{x}.egdb")),
    )
    .unwrap();
    pack_dir(packed.path(), &mut |_| {}).unwrap();
    assert!(!packed.path().join(format!("{b}.egdb")).exists());
    let ps = first(b, 500);
    assert!(ps.len() >= 100, "{}", ps.len());
    for p in ps {
        assert_eq!(tb.probe_wld(&p), truth.probe_wld(&p), "{}", p.to_fen());
    }
}
