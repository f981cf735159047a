//! `egdb build` resuming on a directory that already holds tables: a resume asking for another
//! value codec than an interrupted unit's file is refused before anything is written; damaged
//! files are named before they are written again; the summary says
//! what was built and what was already complete, value and distance files apart; a complete
//! directory that cannot be written is reported complete; a failed build removes the
//! directories it created.

use checkers_egdb::driver::LOCK_FILE;
use checkers_egdb::format::{dtc_path, table_path, SliceIndex, TableFile};
use checkers_egdb::planning::build_order;
use checkers_egdb::{Slice, Unit};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

const EGDB: &str = env!("CARGO_BIN_EXE_egdb");

fn egdb(args: &[&str], dir: &Path) -> Output {
    Command::new(EGDB)
        .args(args)
        .arg("--dir")
        .arg(dir)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn build_ok(args: &[&str], dir: &Path) -> String {
    let mut a = vec!["build"];
    a.extend_from_slice(args);
    let o = egdb(&a, dir);
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every file of `dir` (the lock file and temporaries too), by name, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

/// The slices with a file of extension `ext` in `dir`.
fn slices_with(dir: &Path, ext: &str) -> Vec<Slice> {
    let mut v: Vec<Slice> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == ext)
                .then(|| p.file_stem()?.to_str()?.parse().ok())
                .flatten()
        })
        .collect();
    v.sort();
    v
}

fn codec_of(dir: &Path, s: &Slice) -> u32 {
    TableFile::open(&table_path(dir, s)).unwrap().codec()
}

/// Units of exactly `pieces` pieces with two slices, both with positions.
fn pair_units(pieces: u32) -> Vec<Unit> {
    build_order(pieces)
        .into_iter()
        .filter(|u| u.pieces == pieces && u.slices.len() == 2 && u.sizes.iter().all(|&n| n > 0))
        .collect()
}

#[test]
fn a_resume_keeps_the_codec_of_an_interrupted_unit_and_complete_units_of_any_codec() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("t");
    build_ok(&["--pieces", "3", "--quiet"], &dir);
    // A unit interrupted with one of its two files written.
    let u = pair_units(3).pop().unwrap();
    std::fs::remove_file(table_path(&dir, &u.slices[1])).unwrap();
    let before = snapshot(&dir);
    let out = egdb(&["build", "--pieces", "3", "--codec", "4"], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("written with codec 2") && err.contains("asks for codec 4"),
        "{err}"
    );
    assert!(err.contains(&format!("{}.egdb", u.slices[0])), "{err}");
    assert_eq!(snapshot(&dir), before, "nothing written");
    // The codec on disk (the default) resumes: the partner is written again, in codec 2.
    build_ok(&["--pieces", "3", "--quiet"], &dir);
    assert_eq!(codec_of(&dir, &u.slices[1]), 2);
    // A complete directory with another codec: nothing to rewrite, so nothing is refused and
    // nothing is written (a re-run of a finished build, or --dtc on its value files).
    let before = snapshot(&dir);
    let out = egdb(&["build", "--pieces", "3", "--codec", "5"], &dir);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("0 built"), "{}", text(&out));
    assert_eq!(snapshot(&dir), before, "nothing written");
    // A codec-4 directory resumed without --codec continues in codec 4 (its files with the
    // most pieces), both for an interrupted unit and for the units of a larger piece count.
    let d4 = d.path().join("t4");
    build_ok(&["--pieces", "3", "--codec", "4", "--quiet"], &d4);
    let u4 = pair_units(3).pop().unwrap();
    std::fs::remove_file(table_path(&d4, &u4.slices[1])).unwrap();
    build_ok(&["--pieces", "4", "--quiet"], &d4);
    assert!(slices_with(&d4, "egdb")
        .iter()
        .all(|s| codec_of(&d4, s) == 4));
    // Asked explicitly for another codec, such an interrupted unit is refused, naming both.
    std::fs::remove_file(table_path(&d4, &u4.slices[1])).unwrap();
    let before = snapshot(&d4);
    let out = egdb(&["build", "--pieces", "4", "--codec", "2"], &d4);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        err.contains("written with codec 4")
            && err.contains("asks for codec 2")
            && err.contains("--codec 4"),
        "{err}"
    );
    assert_eq!(snapshot(&d4), before, "nothing written");
    // The tables with fewer pieces a --slice build reads are not its files: any codec.
    let first4 = build_order(4).into_iter().find(|u| u.pieces == 4).unwrap();
    let s = first4.slices[0].to_string();
    build_ok(&["--slice", &s, "--codec", "4", "--quiet"], &dir);
    assert_eq!(codec_of(&dir, &first4.slices[0]), 4);
}

/// The summary line starting with `key`.
fn line<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("no {key} line in\n{out}"))
}

fn positions(slices: &[Slice]) -> u64 {
    slices.iter().map(|s| SliceIndex::new(*s).size()).sum()
}

fn bytes(paths: impl IntoIterator<Item = std::path::PathBuf>) -> u64 {
    paths
        .into_iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

/// `{positions / bytes:.1}`, 0.0 for no bytes (as the summary prints it).
fn per_byte(positions: u64, bytes: u64) -> String {
    if bytes == 0 {
        "0.0".into()
    } else {
        format!("{:.1}", positions as f64 / bytes as f64)
    }
}

#[test]
fn the_summary_counts_value_and_distance_files_apart() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("t");
    build_ok(&["--pieces", "3", "--quiet"], &dir);
    let all = slices_with(&dir, "egdb");
    let n = all.len();
    // Distances only: every value file is already complete, every distance file built.
    let out = build_ok(&["--pieces", "3", "--dtc"], &dir);
    assert_eq!(
        line(&out, "slices "),
        format!("slices        0 built, {n} already complete")
    );
    assert_eq!(line(&out, "positions "), "positions     0");
    assert_eq!(line(&out, "bytes "), "bytes         0 (0.0 positions/byte)");
    let dtc_bytes = bytes(all.iter().map(|s| dtc_path(&dir, s)));
    let want = format!(
        "distances     {n} built, 0 already complete, {dtc_bytes} bytes ({} positions/byte), pass ",
        per_byte(positions(&all), dtc_bytes)
    );
    assert!(
        line(&out, "distances ").starts_with(&want),
        "{out}\nwant {want}"
    );
    // The distance passes solved positions: a rate above 0.
    let rate: f64 = line(&out, "time ")
        .split(['(', ' '])
        .filter(|w| !w.is_empty())
        .nth(3)
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(rate > 0.0, "{out}");

    // Mixed: unit a lost its value files (both its files are built again), unit b its
    // distance files (only those are built).
    let units = pair_units(3);
    let (a, b) = (&units[units.len() - 1], &units[units.len() - 2]);
    for s in &a.slices {
        std::fs::remove_file(table_path(&dir, s)).unwrap();
    }
    for s in &b.slices {
        std::fs::remove_file(dtc_path(&dir, s)).unwrap();
    }
    let out = build_ok(&["--pieces", "3", "--dtc"], &dir);
    assert_eq!(
        line(&out, "slices "),
        format!("slices        2 built, {} already complete", n - 2)
    );
    let pa = positions(&a.slices);
    assert_eq!(line(&out, "positions "), format!("positions     {pa}"));
    let va = bytes(a.slices.iter().map(|s| table_path(&dir, s)));
    assert_eq!(
        line(&out, "bytes "),
        format!("bytes         {va} ({} positions/byte)", per_byte(pa, va))
    );
    let both: Vec<Slice> = a.slices.iter().chain(&b.slices).copied().collect();
    let db = bytes(both.iter().map(|s| dtc_path(&dir, s)));
    let want = format!(
        "distances     4 built, {} already complete, {db} bytes ({} positions/byte), pass ",
        n - 4,
        per_byte(positions(&both), db)
    );
    assert!(
        line(&out, "distances ").starts_with(&want),
        "{out}\nwant {want}"
    );

    // Nothing left: everything already complete, value and distance files.
    let out = build_ok(&["--pieces", "3", "--dtc"], &dir);
    assert_eq!(
        line(&out, "slices "),
        format!("slices        0 built, {n} already complete")
    );
    let want = format!("distances     0 built, {n} already complete, 0 bytes (0.0 positions/byte)");
    assert!(line(&out, "distances ").starts_with(&want), "{out}");
}

/// Puts the permissions back (so that the temporary directory can be removed) however the
/// test ends.
struct Writable<'a>(&'a Path);

impl Drop for Writable<'_> {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(self.0, std::fs::Permissions::from_mode(0o755));
    }
}

#[test]
fn a_complete_directory_that_cannot_be_written_is_reported_complete() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("t");
    build_ok(&["--pieces", "3", "--quiet"], &dir);
    let n = slices_with(&dir, "egdb").len();
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
    // Root ignores permissions: the builds below then run as `nobody`, who may read the files
    // (and run the binary) but not write the directory.
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    // The binary under target/ may sit in a directory `nobody` cannot enter (a checkout in
    // root's home or in a private `mktemp -d`): a copy beside the tables, which `nobody` may
    // reach, is run instead.
    let exe = d.path().join("egdb");
    std::fs::copy(EGDB, &exe).unwrap();
    mode(&exe, 0o755).unwrap();
    let run = |args: &[&str]| -> Output {
        let mut c = Command::new(&exe);
        c.args(args).arg("--dir").arg(&dir);
        if root {
            c.uid(65534).gid(65534);
        }
        c.output().unwrap()
    };
    mode(d.path(), 0o755).unwrap();
    for e in std::fs::read_dir(&dir).unwrap() {
        mode(&e.unwrap().path(), 0o644).unwrap();
    }
    if root {
        // The temporary directory itself may be out of `nobody`'s reach (TMPDIR private or
        // mounted noexec): then the check cannot be made and is skipped, with the reason.
        let o = Command::new(&exe)
            .args(["count", "--pieces", "1"])
            .uid(65534)
            .gid(65534)
            .output();
        match o {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                eprintln!(
                    "skipped: running as root and user nobody cannot run {} ({})",
                    exe.display(),
                    text(&o)
                );
                return;
            }
            Err(e) => {
                eprintln!(
                    "skipped: running as root and user nobody cannot run {}: {e}",
                    exe.display()
                );
                return;
            }
        }
    }
    let _restore = Writable(&dir);
    mode(&dir, 0o555).unwrap();
    let complete = format!("slices        0 built, {n} already complete");
    let out = run(&["build", "--pieces", "3"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&complete),
        "{}",
        text(&out)
    );
    // Without a lock file (it cannot be created): the build runs unlocked.
    mode(&dir, 0o755).unwrap();
    std::fs::remove_file(dir.join(LOCK_FILE)).unwrap();
    mode(&dir, 0o555).unwrap();
    let out = run(&["build", "--pieces", "3", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!dir.join(LOCK_FILE).exists());
    // A unit missing: one clear error line, before anything is solved.
    mode(&dir, 0o755).unwrap();
    let u = pair_units(3).pop().unwrap();
    std::fs::remove_file(table_path(&dir, &u.slices[1])).unwrap();
    mode(&dir, 0o555).unwrap();
    let out = run(&["build", "--pieces", "3", "--verbose"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("egdb: error: cannot build in ") && err.contains("not writable"),
        "{err}"
    );
    assert!(err.contains(&u.slices[1].to_string()), "{err}");
}

#[test]
fn a_failed_build_removes_the_directories_it_created() {
    let d = tempfile::tempdir().unwrap();
    // No tables: the slice's dependencies are missing, the build fails before solving.
    let args = ["build", "--slice", "2001-6n", "--pieces", "3"];
    let out = egdb(&args, &d.path().join("a/b/c"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(!d.path().join("a").exists(), "a/b/c left behind");
    // A parent that existed stays, with what it holds; only the new ones go.
    let keep = d.path().join("keep");
    std::fs::create_dir(&keep).unwrap();
    std::fs::write(keep.join("notes.txt"), b"mine").unwrap();
    let out = egdb(&args, &keep.join("x/y"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(!keep.join("x").exists());
    assert_eq!(std::fs::read(keep.join("notes.txt")).unwrap(), b"mine");
}

/// Damaged files (a flipped byte, another slice's file under this name, an empty file) are
/// named on stderr, even with --quiet, and written again: the directory ends byte-identical
/// to a fresh build. Whole files are not named.
#[test]
fn damaged_files_are_named_and_written_again() {
    let d = tempfile::tempdir().unwrap();
    let (fresh, dir) = (d.path().join("fresh"), d.path().join("t"));
    build_ok(&["--pieces", "3", "--dtc", "--quiet"], &fresh);
    build_ok(&["--pieces", "3", "--dtc", "--quiet"], &dir);
    let units = pair_units(3);
    let (a, b, c) = (units[0].slices[0], units[1].slices[0], units[2].slices[1]);
    // A flipped byte in the middle of a value file.
    let pa = table_path(&dir, &a);
    let mut bytes = std::fs::read(&pa).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    std::fs::write(&pa, bytes).unwrap();
    // Another slice's value file under b's name; an empty distance file for c.
    std::fs::copy(table_path(&dir, &c), table_path(&dir, &b)).unwrap();
    std::fs::write(dtc_path(&dir, &c), b"").unwrap();
    let out = egdb(&["build", "--pieces", "3", "--dtc", "--quiet"], &dir);
    assert!(out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let notes: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("egdb: note: ") && l.contains(" is written again: "))
        .collect();
    assert_eq!(notes.len(), 3, "{err}");
    for p in [pa, table_path(&dir, &b), dtc_path(&dir, &c)] {
        let name = p.display().to_string();
        assert!(notes.iter().any(|l| l.contains(&name)), "{name}: {err}");
    }
    assert!(
        notes
            .iter()
            .any(|l| l.contains(&format!("holds slice {c}"))),
        "{err}"
    );
    let files = |dir: &Path| {
        let mut m = snapshot(dir);
        m.remove(LOCK_FILE);
        m
    };
    assert_eq!(files(&dir), files(&fresh));
}

/// Without --codec a build continues in the codec of its complete units; stray files (the
/// lone file of an interrupted unit, here of another codec) have no say and are refused,
/// named, with the way out; interrupted units of two other codecs are all named; a directory
/// under a table file's name is refused before anything is solved.
#[test]
fn stray_files_do_not_choose_the_codec_and_every_conflict_is_named() {
    let d = tempfile::tempdir().unwrap();
    let (two, five, dir) = (d.path().join("2"), d.path().join("5"), d.path().join("t"));
    build_ok(&["--pieces", "3", "--quiet"], &two);
    build_ok(&["--pieces", "3", "--codec", "5", "--quiet"], &five);
    build_ok(&["--pieces", "3", "--codec", "5", "--quiet"], &dir);
    let units = pair_units(3);
    let (u, v) = (&units[0], &units[1]);
    // Unit u interrupted: its first file gone, its second one from the codec-2 build.
    std::fs::remove_file(table_path(&dir, &u.slices[0])).unwrap();
    std::fs::copy(
        table_path(&two, &u.slices[1]),
        table_path(&dir, &u.slices[1]),
    )
    .unwrap();
    let before = snapshot(&dir);
    let out = egdb(&["build", "--pieces", "3"], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let b = table_path(&dir, &u.slices[1]).display().to_string();
    assert!(
        err.contains(&format!("{b} was written with codec 2"))
            && err.contains("asks for codec 5")
            && err.contains("--codec 2")
            && err.contains("delete it"),
        "{err}"
    );
    assert_eq!(snapshot(&dir), before, "nothing written");
    // A second interrupted unit, its lone file in codec 4: both named, no --codec offered.
    std::fs::remove_file(table_path(&dir, &v.slices[0])).unwrap();
    let four = d.path().join("4");
    build_ok(&["--pieces", "3", "--codec", "4", "--quiet"], &four);
    std::fs::copy(
        table_path(&four, &v.slices[1]),
        table_path(&dir, &v.slices[1]),
    )
    .unwrap();
    let out = egdb(&["build", "--pieces", "3"], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let c = table_path(&dir, &v.slices[1]).display().to_string();
    assert!(
        err.contains(&format!("{b} (codec 2)"))
            && err.contains(&format!("{c} (codec 4)"))
            && err.contains("delete them"),
        "{err}"
    );
    // Deleted, the units are built again in the directory's codec: as the codec-5 build.
    std::fs::remove_file(&b).unwrap();
    std::fs::remove_file(&c).unwrap();
    let out = build_ok(&["--pieces", "3"], &dir);
    assert!(
        out.lines().any(|l| l.starts_with("codec         5")),
        "{out}"
    );
    let files = |dir: &Path| {
        let mut m = snapshot(dir);
        m.remove(LOCK_FILE);
        m
    };
    assert_eq!(files(&dir), files(&five));
    // A directory where a file of a unit to build belongs.
    std::fs::remove_file(table_path(&dir, &u.slices[0])).unwrap();
    std::fs::create_dir(table_path(&dir, &u.slices[0])).unwrap();
    let before = snapshot_names(&dir);
    let out = egdb(&["build", "--pieces", "3"], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        err.contains("is a directory named like a table file"),
        "{err}"
    );
    assert_eq!(snapshot_names(&dir), before, "nothing written");
}

/// The names in `dir` (a directory among them, unlike [`snapshot`]).
fn snapshot_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A unit whose value files were written but not all of its distance files (a build killed
/// between the two, as the 6-piece Brazilian build of 2026-12-04 was) gets only its distance
/// pass on resume, from the value files. That pass read the files' values under English
/// rules (captures, their resolution and the terminal rule) whatever the tables' rules, so in
/// every other variant it disagreed with the values and the build stopped ("distance pass of
/// 0101-nn: position 120 is draw without distances, loss in the WLD solution"). The distance
/// files written on resume must be byte-identical to those of the uninterrupted build.
#[test]
fn distance_files_rebuilt_from_value_files_match_in_every_variant() {
    for rules in ["english", "russian", "brazilian", "italian", "giveaway"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(rules);
        build_ok(
            &["--rules", rules, "--dtc", "--pieces", "3", "--quiet"],
            &dir,
        );
        let whole = snapshot(&dir);
        // Remove every other distance file: some units lose one slice's file, some both.
        let mut removed = 0;
        for (k, name) in whole.keys().filter(|n| n.ends_with(".dtc")).enumerate() {
            if k % 2 == 0 {
                std::fs::remove_file(dir.join(name)).unwrap();
                removed += 1;
            }
        }
        assert!(
            removed > 10,
            "{rules}: only {removed} distance files removed"
        );
        build_ok(
            &["--rules", rules, "--dtc", "--pieces", "3", "--quiet"],
            &dir,
        );
        let again = snapshot(&dir);
        assert_eq!(
            whole.keys().collect::<Vec<_>>(),
            again.keys().collect::<Vec<_>>(),
            "{rules}: the same files"
        );
        for (name, bytes) in &whole {
            assert!(
                again[name] == *bytes,
                "{rules}: {name} differs after the resume"
            );
        }
    }
}

/// A full disk (issue 30, "a full disk stops with one line naming the file and loses nothing
/// finished"): `egdb build --pieces 4` into a tmpfs of 50 pages (each file takes at least a page
/// there, so about 50 of the 1,029 files fit) stops with exit status 1 and one line naming the
/// slice it could not write and the system's reason; the files left are each byte-identical to a
/// build's on a large disk (no partial file, no temporary file), and resuming them on a large
/// disk gives the whole build's bytes. The tmpfs is mounted in a private user and mount
/// namespace (`unshare -r -m`), so the test needs no privilege; where the kernel or a sandbox
/// refuses such a mount it says so and checks nothing.
#[test]
fn a_build_on_a_full_disk_stops_with_one_line_and_resumes_to_identical_files() {
    let page: u64 = Command::new("getconf")
        .arg("PAGESIZE")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(4096);
    let probe = tempfile::tempdir().unwrap();
    if !Command::new("unshare")
        .args([
            "-r",
            "-m",
            "sh",
            "-c",
            "mount -t tmpfs -o size=1m tmpfs \"$1\"",
            "sh",
        ])
        .arg(probe.path())
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("skipped: this kernel or sandbox refuses a tmpfs in a private mount namespace (unshare -r -m)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("reference");
    build_ok(&["--pieces", "4", "--quiet"], &reference);
    let small = tmp.path().join("small");
    let out = tmp.path().join("out");
    let kept = out.join("files");
    std::fs::create_dir_all(&small).unwrap();
    std::fs::create_dir_all(&kept).unwrap();
    // Inside the namespace: mount, build, keep the status, the error and every file left
    // (temporary ones included) before the namespace and its tmpfs go away.
    let script = r#"mount -t tmpfs -o size="$4" tmpfs "$1" || exit 99
"$2" build --pieces 4 --quiet --dir "$1/t" 2>"$3/stderr"
echo $? >"$3/status"
cp -a "$1/t/." "$3/files/""#;
    let o = Command::new("unshare")
        .args(["-r", "-m", "sh", "-c", script, "sh"])
        .arg(&small)
        .arg(EGDB)
        .arg(&out)
        .arg((50 * page).to_string())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let status = std::fs::read_to_string(out.join("status")).unwrap();
    let stderr = std::fs::read_to_string(out.join("stderr")).unwrap();
    assert_eq!(status.trim(), "1", "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("egdb: error: cannot write ")
            && stderr.contains("No space left on device"),
        "{stderr}"
    );
    let left = snapshot(&kept);
    let whole = snapshot(&reference);
    assert!(
        left.len() > 10 && left.len() < whole.len(),
        "{} files left of {}",
        left.len(),
        whole.len()
    );
    for (name, bytes) in &left {
        assert!(
            whole.get(name) == Some(bytes),
            "{name}: left on the full disk but not a finished file"
        );
    }
    // The line names the slice whose file could not be written: one of the build's, not left.
    let named = stderr["egdb: error: cannot write ".len()..]
        .split(':')
        .next()
        .unwrap();
    let file = format!("{named}.egdb");
    assert!(
        whole.contains_key(&file) && !left.contains_key(&file),
        "{named} in {stderr}"
    );
    // Resumed on a large disk: the whole build's bytes.
    build_ok(&["--pieces", "4", "--quiet"], &kept);
    assert_eq!(snapshot(&kept), whole);
}
