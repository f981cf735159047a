//! The `egdb` binary: perft/moves/show output and clean failures on bad input.
use std::process::{Command, Output};

fn egdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(args)
        .output()
        .expect("run egdb")
}

/// Bad input: exit status 1 (runtime failure), nothing on stdout, exactly one stderr line, no
/// panic.
fn assert_clean_failure(args: &[&str], must_mention: &str) {
    assert_fails_with(args, 1, must_mention);
}

/// Bad command line: exit status 2 (usage error), nothing on stdout, exactly one stderr line
/// `egdb: error: ...` (no clap usage block, no `error:` prefix of clap's own), no panic.
fn assert_usage_error(args: &[&str], must_mention: &str) {
    assert_fails_with(args, 2, must_mention);
    let err = String::from_utf8(egdb(args).stderr).unwrap();
    assert!(!err.contains("egdb: error: error:"), "{args:?}: {err}");
    assert!(!err.contains("Usage:"), "{args:?}: {err}");
}

fn assert_fails_with(args: &[&str], code: i32, must_mention: &str) {
    let out = egdb(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: {err}");
    assert!(lines[0].starts_with("egdb: error:"), "{args:?}: {err}");
    assert!(lines[0].contains(must_mention), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
}

#[test]
fn perft_prints_depth_tab_nodes() {
    let out = egdb(&["perft", "6"]);
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert_eq!(s, "1\t7\n2\t49\n3\t302\n4\t1469\n5\t7361\n6\t36768\n");
    let out = egdb(&["perft", "--only", "--threads", "1", "7"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "7\t179740\n");
    let out = egdb(&["perft", "--fen", "W:WK6:B9,10,17,18", "1"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "1\t2\n");
    let out = egdb(&["perft", "--unique", "--fen", "W:WK6:B9,10,17,18", "1"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "1\t1\n");
}

#[test]
fn moves_lists_legal_moves() {
    let out = egdb(&["moves", "W:W18,22:B13,17"]);
    assert!(out.status.success());
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    assert_eq!(lines, ["18-14", "18-15"]);
    let out = egdb(&["moves", "W:W29:B22,25"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
}

#[test]
fn show_draws_board_and_fen() {
    let out = egdb(&["show", "W:W18,24,K27:B12,K22"]);
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("FEN: W:W18,24,K27:B12,K22"), "{s}");
    assert!(s.contains("White to move"), "{s}");
    for glyph in ['\u{26C0}', '\u{26C1}', '\u{26C2}', '\u{26C3}'] {
        assert!(s.contains(glyph), "{s}");
    }
    // Top row holds squares 1-4, bottom row 29-32.
    let rows: Vec<&str> = s.lines().collect();
    assert_eq!(
        rows[0].split_whitespace().collect::<Vec<_>>(),
        ["1", "2", "3", "4"]
    );
    assert_eq!(
        rows[7].split_whitespace().collect::<Vec<_>>(),
        ["29", "30", "31", "32"]
    );
    let out = egdb(&["show", "--ascii", "B:W21-32:B1-12"]);
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.is_ascii());
    assert_eq!(
        s.lines()
            .next()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["b"; 4]
    );
    assert!(s.contains("Black to move"));
}

#[test]
fn bad_input_fails_cleanly() {
    assert_clean_failure(&["moves", "W:WK4,WK5,33:B4"], "stray character");
    assert_clean_failure(&["moves", "W:W4:BK20"], "crowning row");
    assert_clean_failure(&["show", "X:W1:B2"], "side to move");
    assert_clean_failure(&["show", ""], "empty FEN");
    assert_clean_failure(&["perft", "--fen", "B:W21-32:B1-13", "3"], "at most 12");
    assert_clean_failure(&["perft", "abc"], "bad depth");
    assert_clean_failure(&["perft", "0"], "bad depth");
    assert_clean_failure(&["perft", "-5"], "bad depth");
    assert_clean_failure(&["perft", "99999999999999999999"], "bad depth");
}

#[test]
fn bad_command_line_is_one_line_exit_2() {
    assert_usage_error(&["perft"], "<DEPTH>");
    assert_usage_error(&["perft", "3", "--threads", "abc"], "abc");
    assert_usage_error(&["perft", "3", "--threads", "abc"], "--threads");
    assert_usage_error(&["count", "--pieces", "-1"], "-1");
    assert_usage_error(&["probe", "--unknown"], "--unknown");
    assert_usage_error(&["probe", "--unknown"], "egdb probe --help");
    assert_usage_error(&["frobnicate"], "frobnicate");
    assert_usage_error(&["frobnicate"], "egdb --help");
    assert_usage_error(&[], "no command given");
    for bad in ["12Q", "", "-1G", "1.2.3M", "99999999999999999999T"] {
        let arg = format!("--memory={bad}");
        assert_usage_error(&["build", &arg], "invalid memory size");
        assert_usage_error(&["plan", "--pieces", "3", &arg], "invalid memory size");
    }
    // A negative size is named as such, with what was given and what a size looks like.
    for cmd in ["build", "verify", "prove"] {
        assert_usage_error(&[cmd, "--memory=-3"], "\"-3\": a size cannot be negative");
        assert_usage_error(&[cmd, "--memory=-3"], "like 512M, 16G");
    }
}

/// `plan --positions-per-byte` only shapes the disk estimate of `--memory`: alone it is a usage
/// error, not silently ignored; a value no table file could have (0, negative, NaN, infinite,
/// huge or tiny) is refused instead of printing a saturated disk figure.
#[test]
fn plan_positions_per_byte_needs_memory_and_a_plausible_value() {
    assert_usage_error(
        &["plan", "--pieces", "3", "--positions-per-byte", "70"],
        "--memory",
    );
    for bad in ["0", "-3", "NaN", "inf", "1e300", "1e-300", "100001", "0.05"] {
        let arg = format!("--positions-per-byte={bad}");
        assert_clean_failure(
            &["plan", "--pieces", "3", "--memory", "1G", &arg],
            "--positions-per-byte must be a number from 0.1 to 100000",
        );
    }
    // In range: the estimate follows it (the summary names it).
    let out = egdb(&[
        "plan",
        "--pieces",
        "3",
        "--memory",
        "1G",
        "--positions-per-byte",
        "100000",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let summary = text
        .lines()
        .find(|l| l.starts_with("# summary:"))
        .unwrap_or_else(|| panic!("no summary in {text}"));
    assert!(summary.ends_with("at 100000 positions/byte"), "{text}");
}

#[test]
fn help_and_version_go_to_stdout_with_status_0() {
    for args in [
        &["--help"][..],
        &["perft", "--help"],
        &["help", "probe"],
        &["--version"],
    ] {
        let out = egdb(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(!out.stdout.is_empty(), "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}");
    }
    let out = egdb(&["--version"]);
    assert!(String::from_utf8(out.stdout).unwrap().starts_with("egdb "));
    // The help text is for users: no notes about the implementation.
    let help = String::from_utf8(egdb(&["perft", "--help"]).stdout).unwrap();
    assert!(help.contains("DEPTH"), "{help}");
    assert!(!help.contains("Parsed by"), "{help}");
    assert!(!help.contains("`run`"), "{help}");
}

#[test]
fn absurd_thread_counts_are_refused_at_once() {
    let start = std::time::Instant::now();
    assert_clean_failure(&["perft", "3", "--threads", "99999"], "at most 1024");
    assert_clean_failure(&["perft", "3", "--threads", "0"], "at least 1");
    let out = Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(["perft", "3"])
        .env("RAYON_NUM_THREADS", "99999")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at most 1024"));
    assert!(start.elapsed().as_secs() < 20, "took {:?}", start.elapsed());
    // A sane count still works.
    let out = egdb(&["perft", "2", "--threads", "8"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "1\t7\n2\t49\n");
}

/// A `--slice --with-deps` build whose closure reads a missing table fails before it solves
/// anything (the old builder found it only at the unit that reads it, here after 8 units), and
/// a failed build leaves no directory it created.
#[test]
fn build_with_a_missing_table_fails_before_solving_and_leaves_no_new_directory() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("base");
    let b = base.to_str().unwrap();
    let out = egdb(&["build", "--pieces", "2", "--quiet", "--dir", b]);
    assert!(out.status.success());
    std::fs::remove_file(base.join("0020-n0.egdb")).unwrap();
    let files = |dir: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".egdb"))
            .collect();
        v.sort();
        v
    };
    let before = files(&base);
    let args = [
        "build",
        "--slice",
        "2001-6n",
        "--with-deps",
        "--pieces",
        "3",
        "--verbose",
        "--dir",
        b,
    ];
    let out = egdb(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("0020-n0"), "{err}");
    assert!(!err.lines().any(|l| l.starts_with("built")), "{err}");
    assert_eq!(files(&base), before, "nothing written");
    // A build into a directory it creates, which cannot start: no directory is left.
    let fresh = d.path().join("fresh");
    let out = egdb(&[
        "build",
        "--slice",
        "2001-6n",
        "--pieces",
        "3",
        "--dir",
        fresh.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!fresh.exists());
    // An existing empty directory stays.
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = egdb(&[
        "build",
        "--slice",
        "2001-6n",
        "--pieces",
        "3",
        "--dir",
        empty.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(empty.is_dir());
}

/// `prove --cert` to a path that cannot be written fails before any search (it used to be
/// found only after every position was proven): one error line, no value printed.
#[test]
fn prove_refuses_an_unwritable_certificate_path_before_searching() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("base");
    let b = base.to_str().unwrap();
    assert!(egdb(&["build", "--pieces", "2", "--quiet", "--dir", b])
        .status
        .success());
    let missing = d.path().join("no-such-dir").join("x.cert");
    assert_clean_failure(
        &[
            "prove",
            "--dir",
            b,
            "--cert",
            missing.to_str().unwrap(),
            "B:W30:BK1",
        ],
        "cannot write there",
    );
    assert_clean_failure(
        &[
            "prove",
            "--dir",
            b,
            "--cert",
            d.path().to_str().unwrap(),
            "B:W30:BK1",
        ],
        "is a directory",
    );
    // Nothing was left beside the certificate path.
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the tables: {left:?}");
}

/// `prove --cert` to an existing path that is not a regular file (here a FIFO; `/dev/null` is
/// the same case) is refused before searching: the atomic rename would replace it by a file.
#[test]
fn prove_refuses_a_certificate_path_that_is_not_a_regular_file() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("base");
    let b = base.to_str().unwrap();
    assert!(egdb(&["build", "--pieces", "2", "--quiet", "--dir", b])
        .status
        .success());
    let fifo = d.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo unavailable: skipped");
        return;
    }
    assert_clean_failure(
        &[
            "prove",
            "--dir",
            b,
            "--cert",
            fifo.to_str().unwrap(),
            "B:W30:BK1",
        ],
        "not a regular file",
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

/// A table read only through the capture positions of a table of fewer pieces (a 4-piece
/// capture lands in a 3-piece table whose capture positions, not stored, resolve into a
/// 2-piece one) is a dependency too: missing, it is reported before the first unit is solved
/// (it used to be found only after `0202-nn` was built, at `0211-n6`).
#[test]
fn build_reports_a_table_missing_two_captures_down_before_solving() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("base");
    let b = base.to_str().unwrap();
    assert!(egdb(&["build", "--pieces", "3", "--quiet", "--dir", b])
        .status
        .success());
    // 1 black man against 1 white king: read by no 4-piece unit directly, only through
    // 3-piece capture positions (e.g. 1101 -> 1001 once Black's king is taken).
    let mut removed = 0;
    for e in std::fs::read_dir(&base).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().starts_with("1001-") {
            std::fs::remove_file(e.path()).unwrap();
            removed += 1;
        }
    }
    assert!(removed > 0);
    let count = || std::fs::read_dir(&base).unwrap().count();
    let before = count();
    let out = egdb(&[
        "build",
        "--slice",
        "2020-00",
        "--with-deps",
        "--pieces",
        "4",
        "--verbose",
        "--dir",
        b,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("it depends on is missing"), "{err}");
    assert!(err.contains("1001-"), "{err}");
    assert!(!err.lines().any(|l| l.starts_with("built")), "{err}");
    assert_eq!(count(), before, "nothing written");
}
