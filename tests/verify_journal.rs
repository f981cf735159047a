//! `egdb verify --journal FILE`: an interrupted verification resumes where it stopped, and a
//! journal never vouches for a file that changed since it was written.
//!
//! The tables are built by `egdb build`; the values the tests expect are the verifier's own
//! re-derivation (the oracle of `movegen`), run whole with no journal as the reference.

mod forge;

use checkers_egdb::format::{write_table_with, TableFile, WriteOptions, DONT_CARE};
use std::path::Path;
use std::process::{Command, Output};

fn egdb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
}

fn build(dir: &Path, pieces: &str) {
    let o = egdb()
        .args(["build", "--quiet", "--dtc", "--pieces", pieces, "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn verify(dir: &Path, journal: Option<&Path>) -> Output {
    let mut c = egdb();
    c.args(["verify", "--quiet", "--dir"]).arg(dir);
    if let Some(j) = journal {
        c.arg("--journal").arg(j);
    }
    c.output().unwrap()
}

/// `(slices, positions)` of the line "ok: N slices, P positions verified ..." and of
/// "ok: N files, P positions verified by earlier runs" (0, 0 when absent).
fn counts(o: &Output) -> ((u64, u64), (u64, u64)) {
    let out = String::from_utf8_lossy(&o.stdout);
    let grab = |l: &str| {
        let w: Vec<&str> = l.split_whitespace().collect();
        (w[1].parse().unwrap(), w[3].parse().unwrap())
    };
    let now = match out
        .lines()
        .find(|l| l.starts_with("ok: ") && l.contains(" slices, "))
    {
        Some(l) => grab(l),
        None => {
            assert!(
                out.lines()
                    .any(|l| l.starts_with("ok: nothing left to verify")
                        || l.starts_with(
                            "ok: the values of every file were verified by an earlier run"
                        )),
                "an ok line: {out}"
            );
            (0, 0)
        }
    };
    let earlier = out
        .lines()
        .find(|l| l.contains("verified by earlier runs"))
        .map_or((0, 0), grab);
    (now, earlier)
}

fn table_count(dir: &Path, ext: &str) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == ext)
        })
        .count() as u64
}

#[test]
fn an_interrupted_verification_resumes_and_counts_every_position_once() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "3");
    let slices = table_count(d.path(), "egdb");
    let dtcs = table_count(d.path(), "dtc");
    assert!(slices > 10 && dtcs == slices, "{slices} {dtcs}");
    // The reference: one run without a journal.
    let whole = verify(d.path(), None);
    assert!(
        whole.status.success(),
        "{}",
        String::from_utf8_lossy(&whole.stderr)
    );
    let ((s0, p0), _) = counts(&whole);
    assert_eq!(s0, slices);

    let jd = tempfile::tempdir().unwrap();
    let j = jd.path().join("journal-resume.txt");
    let j = j.as_path();
    let first = verify(d.path(), Some(j));
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(counts(&first), ((s0, p0), (0, 0)));
    let text = std::fs::read_to_string(j).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "egdb-verify-journal 2");
    let file_lines = lines.iter().filter(|l| l.starts_with("file ")).count() as u64;
    let wld_lines = lines.iter().filter(|l| l.starts_with("wld ")).count() as u64;
    let dtc_lines = lines.iter().filter(|l| l.starts_with("dtc ")).count() as u64;
    assert_eq!((file_lines, wld_lines, dtc_lines), (slices, slices, dtcs));

    // Everything recorded: a second run only checks checksums.
    let again = verify(d.path(), Some(j));
    assert!(again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stdout).starts_with("ok: nothing left to verify"),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
    let ((s, p), (es, ep)) = counts(&again);
    assert_eq!((s, p), (0, 0));
    assert_eq!(es, slices + dtcs);
    assert!(ep > p0, "WLD and distance positions: {ep} vs {p0}");

    // A run killed after k slices, in the middle of writing a record: the journal keeps the
    // header, the file records, k slice records and a torn line.
    // The verifier interleaves the two kinds (a unit's values, then its distances): count
    // the value records kept and the positions of the distance records kept.
    let k = 5;
    let mut cut: Vec<&str> = Vec::new();
    let (mut seen, mut kept_wld, mut kept_dtc_positions) = (0, 0u64, 0u64);
    for l in &lines {
        if l.starts_with("wld ") || l.starts_with("dtc ") {
            if seen == k {
                break;
            }
            seen += 1;
            if l.starts_with("wld ") {
                kept_wld += 1;
            } else {
                kept_dtc_positions += l.rsplit(' ').next().unwrap().parse::<u64>().unwrap();
            }
        }
        cut.push(l);
    }
    assert!(kept_wld > 0 && kept_dtc_positions > 0, "both kinds kept");
    let torn = format!("{}\nwld 01", cut.join("\n"));
    std::fs::write(j, torn).unwrap();
    let resumed = verify(d.path(), Some(j));
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let ((s, p), (es, ep)) = counts(&resumed);
    assert_eq!(es, k as u64);
    assert_eq!(
        s,
        slices - kept_wld,
        "the slices not recorded are verified now"
    );
    assert_eq!(
        p + ep - kept_dtc_positions,
        p0,
        "every position counted once"
    );
    // The torn line is gone, the journal is whole again.
    let text = std::fs::read_to_string(j).unwrap();
    assert!(!text.contains("wld 01\n") && text.ends_with('\n'));
    assert_eq!(
        text.lines().filter(|l| l.starts_with("wld ")).count() as u64,
        slices
    );
}

#[test]
fn a_changed_table_restarts_the_journal_and_its_wrong_value_is_found() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "3");
    let jd = tempfile::tempdir().unwrap();
    let j = jd.path().join("journal-changed.txt");
    let j = j.as_path();
    assert!(verify(d.path(), Some(j)).status.success());
    // Flip one stored value of a quiet position in the largest file (a valid file with a
    // valid checksum, but a wrong value), as a rebuild with a bug would leave it.
    let victim = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egdb"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let t = TableFile::open(&victim).unwrap();
    let meta = t.meta().clone();
    let mut vals = t.decode_all().unwrap();
    drop(t);
    let i = vals.iter().position(|&v| v != DONT_CARE).unwrap();
    vals[i] = if vals[i] == 2 { 0 } else { 2 };
    write_table_with(&victim, &meta, &vals, &WriteOptions::default()).unwrap();
    let o = verify(d.path(), Some(j));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("index {i} (")), "{err}");
    assert!(err.contains("successors give"), "{err}");
    // The journal was started afresh (the slice changed), so nothing was skipped, and the
    // bad slice is not recorded as verified.
    let text = std::fs::read_to_string(j).unwrap();
    let name = meta.slice.to_string();
    assert!(!text.contains(&format!("wld {name} ")), "{text}");
}

#[test]
fn a_file_that_is_not_a_journal_is_refused_and_kept() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "2");
    let jd = tempfile::tempdir().unwrap();
    let j = jd.path().join("not-a-journal.txt");
    std::fs::write(&j, "my notes\nkeep me\n").unwrap();
    let o = verify(d.path(), Some(&j));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("not a journal written by egdb verify"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&j).unwrap(), "my notes\nkeep me\n");
}

#[test]
fn a_file_without_a_newline_is_refused_and_kept_and_a_users_tmp_file_is_untouched() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "2");
    let jd = tempfile::tempdir().unwrap();
    // Bytes but no complete line: not a torn journal (a journal is created whole).
    let j = jd.path().join("notes.txt");
    std::fs::write(&j, "my notes, no newline").unwrap();
    let o = verify(d.path(), Some(&j));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("not a journal written by egdb verify"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&j).unwrap(), "my notes, no newline");
    // A new journal `run.log` beside the user's own `run.tmp`: that file stays as it was.
    let j = jd.path().join("run.log");
    let mine = jd.path().join("run.tmp");
    std::fs::write(&mine, "mine\n").unwrap();
    let o = verify(d.path(), Some(&j));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine\n");
    assert!(std::fs::read_to_string(&j)
        .unwrap()
        .starts_with("egdb-verify-journal 2\n"));
    // No temporary file is left beside the journal.
    let left: Vec<_> = std::fs::read_dir(jd.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_journal_path_that_is_not_a_regular_file_is_refused_and_a_link_is_kept() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "2");
    let jd = tempfile::tempdir().unwrap();
    // A FIFO (as `/dev/null`): refused at once (reading it would block; the atomic rewrite
    // would replace it by a file), left as it was.
    let fifo = jd.path().join("fifo");
    if std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let o = verify(d.path(), Some(&fifo));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(0), "{err}");
        assert!(err.contains("not a regular file"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
    }
    // A link to a journal: the journal it names is used and the link stays a link.
    let real = jd.path().join("real.journal");
    let link = jd.path().join("link.journal");
    std::fs::write(&real, "").unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = verify(d.path(), Some(&link));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .starts_with("egdb-verify-journal 2\n"));
    let o = verify(d.path(), Some(&link));
    let ((now, _), (earlier, _)) = counts(&o);
    assert_eq!(now, 0, "{}", String::from_utf8_lossy(&o.stdout));
    assert!(earlier > 0);
}

#[test]
fn a_distance_file_without_its_value_file_or_a_directory_named_like_a_table_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "3");
    // The last unit of 3 pieces (no other unit reads it) without its value files and with
    // one distance file kept: --partial allows the unit to be absent, but the orphan
    // distance file is still reported.
    let victim = "1020-00";
    for f in ["1020-00.egdb", "2010-00.egdb", "2010-00.dtc"] {
        std::fs::remove_file(d.path().join(f)).unwrap();
    }
    let o = egdb()
        .args(["verify", "--quiet", "--partial", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(victim) && err.contains("without its value file"),
        "{err}"
    );
    // The orphan removed too: the partial directory verifies.
    std::fs::remove_file(d.path().join(format!("{victim}.dtc"))).unwrap();
    let o = egdb()
        .args(["verify", "--quiet", "--partial", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A directory where a table file belongs is named as such, not as a missing slice.
    let bad = d.path().join(format!("{victim}.egdb"));
    std::fs::create_dir(&bad).unwrap();
    let o = verify(d.path(), None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    assert!(bad.is_dir(), "kept");
}

/// Values verified by an earlier run, distance files added since: the run re-derives the
/// distances and says so; it does not claim that nothing was left to verify.
#[test]
fn distance_files_added_after_their_values_were_verified_are_verified_and_reported() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "3");
    let slices = table_count(d.path(), "egdb");
    let dtcs = table_count(d.path(), "dtc");
    assert!(dtcs > 0);
    // The distance files moved out of the way for the first run.
    let aside = tempfile::tempdir().unwrap();
    let moved: Vec<std::path::PathBuf> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "dtc"))
        .collect();
    for p in &moved {
        std::fs::rename(p, aside.path().join(p.file_name().unwrap())).unwrap();
    }
    let jd = tempfile::tempdir().unwrap();
    let j = jd.path().join("journal-dtc-later.txt");
    let first = verify(d.path(), Some(&j));
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(counts(&first).0 .0, slices);
    for p in &moved {
        std::fs::rename(aside.path().join(p.file_name().unwrap()), p).unwrap();
    }

    let second = verify(d.path(), Some(&j));
    let out = String::from_utf8_lossy(&second.stdout);
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("ok: {dtcs} distance files, "))),
        "{out}"
    );
    assert!(!out.contains("nothing left to verify"), "{out}");
    assert!(
        out.contains(
            "ok: the values of every file were verified by an earlier run; distances re-derived in"
        ),
        "{out}"
    );
    assert_eq!(counts(&second), ((0, 0), (slices, counts(&first).0 .1)));

    // Now everything is recorded.
    let third = verify(d.path(), Some(&j));
    let out = String::from_utf8_lossy(&third.stdout);
    assert!(out.starts_with("ok: nothing left to verify"), "{out}");
    assert_eq!(counts(&third).1 .0, slices + dtcs);
}

/// A `build --dtc` in progress: `--partial` verifies the distance files present and counts
/// the absent ones of the largest piece count (a slice whose partner has none yet is left
/// unchecked); without `--partial`, or at a smaller piece count, a missing one is an error.
#[test]
fn partial_allows_distance_files_of_the_largest_piece_count_to_be_absent() {
    use checkers_egdb::Slice;
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "3");
    let dtcs = table_count(d.path(), "dtc");
    let slice_of = |p: &std::path::Path| -> Slice {
        p.file_stem().unwrap().to_str().unwrap().parse().unwrap()
    };
    let mut three: Vec<Slice> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "dtc"))
        .map(|p| slice_of(&p))
        .filter(|s| s.material.pieces() == 3)
        .collect();
    three.sort();
    // Whole units absent: every slice of one material and its partners.
    let m = three[three.len() / 2].material;
    let mut gone: Vec<Slice> = three
        .iter()
        .filter(|s| s.material == m || s.partner().material == m)
        .copied()
        .collect();
    gone.sort();
    gone.dedup();
    // And one slice of another unit without its partner's file.
    let half = *three
        .iter()
        .find(|s| !gone.contains(s) && s.partner() != **s)
        .unwrap();
    let dtc = |s: &Slice| d.path().join(format!("{s}.dtc"));
    for s in gone.iter().chain([&half]) {
        std::fs::remove_file(dtc(s)).unwrap();
    }
    let absent = gone.len() as u64 + 1;

    let o = verify(d.path(), None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("the distance file is missing"), "{err}");

    let partial = || {
        egdb()
            .args(["verify", "--quiet", "--partial", "--dir"])
            .arg(d.path())
            .output()
            .unwrap()
    };
    let o = partial();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Verified: all but the absent files and the partner of `half`.
    let expect = format!("ok: {} distance files, ", dtcs - absent - 1);
    assert!(out.starts_with(&expect), "{expect}: {out}");
    assert!(
        out.lines().next().unwrap().ends_with(&format!(
            "; {absent} distance files of the largest piece count absent, 1 more left unchecked as their partner's is absent (--partial)"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("ok: {} slices, ", table_count(d.path(), "egdb"))),
        "{out}"
    );

    // A missing distance file of fewer pieces is an error even with --partial.
    let two = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "dtc") && slice_of(p).material.pieces() == 2)
        .unwrap();
    std::fs::remove_file(&two).unwrap();
    let o = partial();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&slice_of(&two).to_string()) && err.contains("the distance file is missing"),
        "{err}"
    );
}

#[test]
fn deleted_distance_files_drop_only_the_distance_records_and_a_wrong_directory_keeps_the_old_journal(
) {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "3");
    let jd = tempfile::tempdir().unwrap();
    let j = jd.path().join("journal.txt");
    assert!(verify(d.path(), Some(&j)).status.success());
    let recorded = std::fs::read_to_string(&j).unwrap();
    let wld_records = recorded.lines().filter(|l| l.starts_with("wld ")).count();
    assert_eq!(wld_records as u64, table_count(d.path(), "egdb"));

    // Without the distance files the value records still hold: nothing is verified again.
    for e in std::fs::read_dir(d.path()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "dtc") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let o = verify(d.path(), Some(&j));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("verify journal kept its value records and dropped its distance records"),
        "{err}"
    );
    let text = std::fs::read_to_string(&j).unwrap();
    assert_eq!(
        text.lines().filter(|l| l.starts_with("wld ")).count(),
        wld_records
    );
    assert!(
        !text.contains("dtcfile ") && !text.contains("\ndtc "),
        "{text}"
    );

    // A run on another directory (here one of fewer pieces) starts afresh, and the earlier
    // journal is kept beside it, whole.
    let before = std::fs::read_to_string(&j).unwrap();
    let other = tempfile::tempdir().unwrap();
    build(other.path(), "2");
    let o = verify(other.path(), Some(&j));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("verify journal started afresh"), "{err}");
    let old = jd.path().join("journal.txt.old");
    assert!(err.contains(&old.display().to_string()), "{err}");
    assert_eq!(std::fs::read_to_string(&old).unwrap(), before);
}

/// A malformed line is quoted cut to 80 characters (it used to be echoed whole, however long),
/// and so is a long field.
#[test]
fn a_long_malformed_line_is_quoted_cut_short() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "2");
    let jd = tempfile::tempdir().unwrap();
    let j = jd.path().join("long.journal");
    for line in [
        "x".repeat(10_000),
        format!("file {} 00", "9".repeat(10_000)),
    ] {
        std::fs::write(&j, format!("egdb-verify-journal 2\n{line}\n")).unwrap();
        let o = verify(d.path(), Some(&j));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(0), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("line 2: "), "{err}");
        assert!(err.contains("\"..."), "{err}");
        assert!(err.len() < 400, "{} bytes: {err}", err.len());
    }
}

/// A huge file that is not a journal is refused from its first line, without reading the rest
/// (a 1 TiB sparse file: reading it whole failed with an allocation error, or took hours).
#[test]
fn a_huge_file_that_is_not_a_journal_is_refused_from_its_first_line() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "2");
    let jd = tempfile::tempdir().unwrap();
    let j = jd.path().join("huge.txt");
    std::fs::write(&j, "my notes\n").unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&j).unwrap();
    if f.set_len(1 << 40).is_err() {
        eprintln!("skipped: this filesystem has no 1 TiB sparse files");
        return;
    }
    drop(f);
    let o = verify(d.path(), Some(&j));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("line 1: expected \"egdb-verify-journal 2\", found \"my notes\"")
            && err.contains("not a journal written by egdb verify"),
        "{err}"
    );
    assert_eq!(
        std::fs::metadata(&j).unwrap().len(),
        1 << 40,
        "left as it was"
    );
}

/// A journal path that is a symbolic link to nothing is refused and stays a link (it used to
/// be replaced by a regular file).
#[test]
fn a_dangling_link_as_journal_is_refused_and_kept() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "2");
    let jd = tempfile::tempdir().unwrap();
    let link = jd.path().join("j.journal");
    let to = jd.path().join("gone/j.journal");
    std::os::unix::fs::symlink(&to, &link).unwrap();
    let o = verify(d.path(), Some(&link));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("journal path is a dangling symbolic link")
            && err.contains(&to.display().to_string()),
        "{err}"
    );
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!to.exists());
    // A link to a file that does not exist yet, in a directory that does: refused the same
    // way (the journal would replace the link).
    std::fs::create_dir(jd.path().join("gone")).unwrap();
    let o = verify(d.path(), Some(&link));
    assert_ne!(o.status.code(), Some(0));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

/// Depth-to-win files are recorded in the journal like distance files: a second run skips
/// them (nothing left to verify), and a changed `.dtw` file drops every depth-to-win record
/// (a slice's depths read those of earlier units) while the value and distance records stay;
/// the depths are then re-derived again, all of them.
#[test]
fn depth_to_win_files_are_journaled_and_a_changed_one_drops_only_the_depth_records() {
    let d = tempfile::tempdir().unwrap();
    let o = egdb()
        .args([
            "build", "--quiet", "--dtc", "--dtw", "--pieces", "3", "--dir",
        ])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let slices = table_count(d.path(), "egdb");
    let dtws = table_count(d.path(), "dtw");
    assert!(dtws == slices && slices > 10, "{slices} {dtws}");
    let jd = tempfile::tempdir().unwrap();
    let j = jd.path().join("journal-dtw.txt");
    let first = verify(d.path(), Some(&j));
    assert!(first.status.success(), "{first:?}");
    let out = String::from_utf8_lossy(&first.stdout).into_owned();
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("ok: {dtws} depth-to-win files, "))),
        "{out}"
    );
    let text = std::fs::read_to_string(&j).unwrap();
    let count = |tag: &str| text.lines().filter(|l| l.starts_with(tag)).count() as u64;
    assert_eq!((count("dtwfile "), count("dtw ")), (dtws, dtws), "{text}");

    // A second run: every file, depth-to-win ones included, was verified before.
    let again = verify(d.path(), Some(&j));
    assert!(again.status.success(), "{again:?}");
    let out = String::from_utf8_lossy(&again.stdout).into_owned();
    assert!(out.starts_with("ok: nothing left to verify"), "{out}");
    assert!(!out.contains("depth-to-win files, "), "{out}");
    assert_eq!(counts(&again).1 .0, 3 * slices, "{out}");

    // The `.dtw` files deleted (a user rebuilding them): the journal drops only its
    // depth-to-win records and the run has nothing left to verify.
    for e in std::fs::read_dir(d.path()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "dtw") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let gone = verify(d.path(), Some(&j));
    assert!(gone.status.success(), "{gone:?}");
    let err = String::from_utf8_lossy(&gone.stderr).into_owned();
    assert!(
        err.contains("kept its value and distance records and dropped its depth-to-win records"),
        "{err}"
    );
    let text = std::fs::read_to_string(&j).unwrap();
    let count = |tag: &str| text.lines().filter(|l| l.starts_with(tag)).count() as u64;
    assert_eq!(
        (
            count("wld "),
            count("dtc "),
            count("dtwfile "),
            count("dtw ")
        ),
        (slices, slices, 0, 0),
        "{text}"
    );

    // Built again: the depths are re-derived, every one, the values and distances not.
    let o = egdb()
        .args(["build", "--quiet", "--dtw", "--pieces", "3", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let last = verify(d.path(), Some(&j));
    assert!(last.status.success(), "{last:?}");
    let out = String::from_utf8_lossy(&last.stdout).into_owned();
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("ok: {dtws} depth-to-win files, "))),
        "{out}"
    );
    assert!(
        out.contains("ok: the values of every file were verified by an earlier run; depths to win re-derived in"),
        "{out}"
    );
}

/// A journal another `egdb verify` has open (its lock file `FILE.lock` locked, here by this
/// test) is refused with one line naming it, and left as it was.
#[test]
fn a_journal_in_use_by_another_verify_is_refused_and_kept() {
    use std::os::fd::AsRawFd;
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "2");
    let jd = tempfile::tempdir().unwrap();
    let j = jd.path().join("v.journal");
    let o = verify(d.path(), Some(&j));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let before = std::fs::read(&j).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(jd.path().join("v.journal.lock"))
        .unwrap();
    // SAFETY: flock on a descriptor owned by `lock`, open for the call.
    let locked = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(locked, 0);
    let o = verify(d.path(), Some(&j));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("in use by another egdb verify"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read(&j).unwrap(), before);
    drop(lock);
    let o = verify(d.path(), Some(&j));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A journal of an earlier `egdb verify` (version 1, written before every unit's resolution
/// plies were re-derived: its `wld` records were made without that check) is started afresh,
/// never resumed: otherwise a slice it recorded would skip the check for good. Here the
/// header `longest` of 2 kings v 2 kings is forged (checksums recomputed) and the version-1
/// journal vouches for the forged file: the run reports the forged figure.
#[test]
fn a_version_1_journal_is_started_afresh_not_resumed() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "4");
    let jd = tempfile::tempdir().unwrap();
    let j = jd.path().join("journal.txt");
    let o = verify(d.path(), Some(&j));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The forged file, and the journal rewritten as a version-1 journal vouching for it.
    let path = d.path().join("0202-nn.egdb");
    let mut b = std::fs::read(&path).unwrap();
    let longest = u32::from_le_bytes(b[48..52].try_into().unwrap());
    b[48..52].copy_from_slice(&(longest - 1).to_le_bytes());
    forge::rechecksum(&mut b);
    std::fs::write(&path, &b).unwrap();
    let sum = u64::from_le_bytes(b[b.len() - 8..].try_into().unwrap());
    let text = std::fs::read_to_string(&j).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert_eq!(lines[0], "egdb-verify-journal 2");
    lines[0] = "egdb-verify-journal 1".to_string();
    let rec = lines
        .iter_mut()
        .find(|l| l.starts_with("file 0202-nn "))
        .expect("a file record of 0202-nn");
    *rec = format!("file 0202-nn {sum:016x}");
    assert!(lines.iter().any(|l| l.starts_with("wld 0202-nn ")));
    let v1 = lines.join("\n") + "\n";
    std::fs::write(&j, &v1).unwrap();
    // Read as the version-2 journal it would have been, it would skip 0202-nn: the same
    // records under the current first line pass.
    let v2 = tempfile::tempdir().unwrap();
    let j2 = v2.path().join("journal.txt");
    std::fs::write(&j2, v1.replacen("journal 1", "journal 2", 1)).unwrap();
    let o = verify(d.path(), Some(&j2));
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
    // The version-1 journal: started afresh (kept beside), the forged figure reported, and
    // the restart said though the run fails (it was said only on success before).
    let o = verify(d.path(), Some(&j));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("egdb: verify journal started afresh") && err.contains("version 1"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "header says {}, the values give {longest}",
            longest - 1
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(jd.path().join("journal.txt.old")).unwrap(),
        v1
    );
    assert!(std::fs::read_to_string(&j)
        .unwrap()
        .starts_with("egdb-verify-journal 2\n"));
    // On genuine tables a version-1 journal is started afresh too, and the run says so.
    let fresh = tempfile::tempdir().unwrap();
    build(fresh.path(), "2");
    let j1 = fresh.path().join("j1.txt");
    let o = verify(fresh.path(), Some(&j1));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v1 = std::fs::read_to_string(&j1)
        .unwrap()
        .replacen("journal 2", "journal 1", 1);
    std::fs::write(&j1, &v1).unwrap();
    let o = verify(fresh.path(), Some(&j1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("verify journal started afresh") && err.contains("version 1"),
        "{err}"
    );
    let ((slices, _), (earlier, _)) = counts(&o);
    assert!(slices > 0 && earlier == 0, "{slices} {earlier}");
}

/// The value files (`.egdb`) of `dir` whose slice has `pieces` pieces (the file name's four
/// digits add up to the piece count: `0201-nn.egdb` has 3).
fn value_files(dir: &Path, pieces: u32) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.ends_with(".egdb")
                && name[..4]
                    .chars()
                    .map(|c| c.to_digit(10).unwrap())
                    .sum::<u32>()
                    == pieces
        })
        .collect()
}

/// How many value files of `pieces` pieces `dir` holds, and their positions (headers).
fn files_of(dir: &Path, pieces: u32) -> (u64, u64) {
    let files = value_files(dir, pieces);
    let positions = files
        .iter()
        .map(|p| TableFile::open(p).unwrap().meta().positions)
        .sum();
    (files.len() as u64, positions)
}

fn verify_args(dir: &Path, args: &[&str]) -> Output {
    egdb()
        .args(["verify", "--quiet", "--dir"])
        .arg(dir)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn pieces_verifies_only_those_piece_counts_and_still_checks_every_checksum() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "3");
    let (n3, p3) = files_of(d.path(), 3);
    let (n1, p1) = files_of(d.path(), 1);
    let (n2, p2) = files_of(d.path(), 2);
    assert!(n1 > 0 && n2 > 0 && n3 > 0);
    // Journal: the slices of 1-2 pieces, then a run without --pieces does the 3-piece ones.
    let jd = tempfile::tempdir().unwrap();
    let j = jd.path().join("journal-pieces.txt");
    let js = j.to_str().unwrap();
    let o = verify_args(d.path(), &["--pieces", "1-2", "--journal", js]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(counts(&o).0, (n1 + n2, p1 + p2), "{out}");
    assert!(
        out.contains(&format!(
            "not verified: {n3} slices, {p3} positions of other piece counts than 1-2 (--pieces)"
        )),
        "{out}"
    );
    let text = std::fs::read_to_string(&j).unwrap();
    assert_eq!(
        text.lines().filter(|l| l.starts_with("wld ")).count() as u64,
        n1 + n2,
        "{text}"
    );
    let o = verify(d.path(), Some(&j));
    assert!(o.status.success());
    // Only the values: the distance files of 1-2 pieces were not verified by --pieces 1-2
    // either, so they count in the second run ("now" counts value slices only).
    assert_eq!(counts(&o).0, (n3, p3));
    assert!(counts(&o).1 .0 >= n1 + n2);
    // Everything recorded: a run of 1-2 pieces has nothing left, and says of what.
    let o = verify_args(d.path(), &["--pieces", "1-2", "--journal", js]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.starts_with(
            "ok: nothing left to verify: every file of the piece counts selected was verified by an earlier run"
        ),
        "{out}"
    );

    // A wrong value (valid checksums) in the largest 3-piece file: found with --pieces 3,
    // not looked at with --pieces 1-2.
    let victim = value_files(d.path(), 3)
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let t = TableFile::open(&victim).unwrap();
    let meta = t.meta().clone();
    assert_eq!(meta.slice.material.pieces(), 3);
    let mut vals = t.decode_all().unwrap();
    drop(t);
    let i = vals.iter().position(|&v| v != DONT_CARE).unwrap();
    vals[i] = if vals[i] == 2 { 0 } else { 2 };
    write_table_with(&victim, &meta, &vals, &WriteOptions::default()).unwrap();
    let o = verify_args(d.path(), &["--pieces", "1-2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = verify_args(d.path(), &["--pieces", "3"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("index {i} (")), "{err}");

    // A damaged file of a piece count not selected is still reported (its checksum).
    let two = value_files(d.path(), 2)
        .into_iter()
        .find(|p| std::fs::metadata(p).unwrap().len() > 80)
        .unwrap();
    let mut b = std::fs::read(&two).unwrap();
    let mid = b.len() / 2;
    b[mid] ^= 0x40;
    std::fs::write(&two, &b).unwrap();
    let o = verify_args(d.path(), &["--pieces", "3"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let name = two.file_name().unwrap().to_string_lossy().into_owned();
    assert!(err.contains(&name[..7]), "{err}");

    // Piece counts the directory does not hold, and malformed ones.
    let o = verify_args(d.path(), &["--pieces", "5-9"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("no table files of 5-9 pieces in"), "{err}");
    assert!(err.contains("(it holds 1-3)"), "{err}");
    for bad in ["3-2", "0", "33", "x", "2-"] {
        let o = verify_args(d.path(), &["--pieces", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("--pieces"),
            "{bad}"
        );
    }
}

/// `--partial` on a directory a build is writing: the unit being written has one slice file
/// and not yet its partner's. That slice is left for a later run (said so, never recorded),
/// the rest verified; once the partner is there, a run with the same journal verifies just
/// those two. The unit is the plan's last at 3 pieces (read by no other unit).
#[test]
fn partial_leaves_a_unit_being_written_for_a_later_run() {
    let d = tempfile::tempdir().unwrap();
    build(d.path(), "3");
    let plan = egdb().args(["plan", "--pieces", "3"]).output().unwrap();
    let plan = String::from_utf8_lossy(&plan.stdout).into_owned();
    let last = plan.lines().last().unwrap().split('\t').nth(1).unwrap();
    let (first, second) = last.split_once(',').unwrap();
    let hold = tempfile::tempdir().unwrap();
    for ext in ["egdb", "dtc"] {
        let name = format!("{second}.{ext}");
        std::fs::rename(d.path().join(&name), hold.path().join(&name)).unwrap();
    }
    let jd = tempfile::tempdir().unwrap();
    let j = jd.path().join("journal-partial.txt");
    let js = j.to_str().unwrap();
    let o = verify_args(d.path(), &["--partial", "--journal", js]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("1 slice of a unit being written (its partner absent) left for a later run"),
        "{out}"
    );
    let all = table_count(d.path(), "egdb");
    assert_eq!(counts(&o).0 .0, all - 1, "{out}");
    let text = std::fs::read_to_string(&j).unwrap();
    assert!(!text.contains(&format!("wld {first} ")), "{text}");
    // Without --partial the directory is incomplete.
    let o = verify_args(d.path(), &[]);
    assert_eq!(o.status.code(), Some(1));
    // The partner written: the same journal resumes with just the two slices.
    for ext in ["egdb", "dtc"] {
        let name = format!("{second}.{ext}");
        std::fs::rename(hold.path().join(&name), d.path().join(&name)).unwrap();
    }
    let o = verify_args(d.path(), &["--partial", "--journal", js]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{out}");
    assert_eq!(counts(&o).0 .0, 2, "{out}");
    assert!(!out.contains("being written"), "{out}");
}
