//! Issue 14: hardening. A table file changed under a running prober, over-long and blank
//! inputs, empty boards, C ABI handle misuse, concurrent builds, every error one line.
//! Expected values come from the naive solver of `probe_common` (independent of the builder and
//! the probe code) or from the statement of what the user must see.

mod probe_common;

use checkers_egdb::format::SliceIndex;
use checkers_egdb::format::{
    write_table_with, Fault, TableError, TableFile, TableMeta, WriteOptions, DONT_CARE,
    FORMAT_VERSION, HEADER_LEN,
};
use checkers_egdb::{Access, Material, Position, ProbeError, Slice, Tablebase, Wld};
use probe_common::*;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn egdb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
}

/// The largest `*.egdb` file of `dir`.
fn largest_table(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egdb"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap()
}

/// Truncate `path` in place to length 0 (what `cp` does first when it copies over it).
fn shorten(path: &Path) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(0).unwrap();
}

/// Rewrite the largest slice file of the tables of at most `pieces` pieces in `dir` with
/// 20-position blocks (many blocks, a file of several pages), so that one position's block can
/// be cached while another's must still be read from the file. Returns its path and slice.
fn rewrite_largest_with_small_blocks(
    dir: &Path,
    pieces: u32,
    values: &HashMap<Position, Wld>,
) -> (PathBuf, Slice) {
    let victim = largest_table(dir);
    let name = victim.file_stem().unwrap().to_str().unwrap().to_string();
    let s = (1..=pieces)
        .flat_map(Material::all_with_pieces)
        .flat_map(Slice::all_of)
        .find(|s| s.to_string() == name)
        .unwrap();
    let ix = SliceIndex::new(s);
    let mut vals = Vec::new();
    let mut n = [0u64; 3];
    for i in 0..ix.size() {
        let p = ix.unrank(i).unwrap();
        let v = values[&p];
        n[v as usize] += 1;
        vals.push(if p.has_capture() { DONT_CARE } else { v as u8 });
    }
    let meta = TableMeta {
        slice: s,
        positions: ix.size(),
        wins: n[2],
        losses: n[0],
        draws: n[1],
        longest: 0,
    };
    let opts = WriteOptions {
        block_positions: 20,
        ..WriteOptions::default()
    };
    write_table_with(&victim, &meta, &vals, &opts).unwrap();
    (victim, s)
}

/// Item 1: a file shortened while a `Tablebase` (default settings) has it open must not kill
/// the process (SIGBUS with memory-mapped reads); the slice's probes report the change and no
/// probe gives a wrong value.
#[test]
fn file_shortened_under_open_tablebase_is_an_error_not_sigbus() {
    let d = tempfile::tempdir().unwrap();
    let values = naive_values(2);
    write_naive_tables(d.path(), 2, &values);
    let (victim, _) = rewrite_largest_with_small_blocks(d.path(), 2, &values);
    // No cache: every probe reads its block from the file.
    let tb = Tablebase::builder(d.path()).cache_bytes(0).open().unwrap();
    for (p, v) in &values {
        assert_eq!(tb.probe_wld(p), Ok(*v), "{}", p.to_fen());
    }
    shorten(&victim);
    let mut changed = 0;
    for (p, v) in &values {
        match tb.probe_wld(p) {
            Ok(w) => assert_eq!(w, *v, "{}", p.to_fen()),
            Err(ProbeError::Table(TableError::Corrupt {
                path,
                what: Fault::Changed { .. },
            })) => {
                assert_eq!(path, victim);
                changed += 1;
            }
            Err(e) => panic!("{}: unexpected error {e}", p.to_fen()),
        }
    }
    assert!(changed > 0, "no probe noticed the shortened file");
}

/// Item 1, end to end: `egdb probe` reading stdin keeps answering after a table file it has
/// open was shortened: an error line for a position whose block is gone, exit status 1, no
/// signal.
#[test]
fn egdb_probe_survives_a_file_shortened_under_it() {
    let d = tempfile::tempdir().unwrap();
    let values = naive_values(2);
    write_naive_tables(d.path(), 2, &values);
    let (victim, s) = rewrite_largest_with_small_blocks(d.path(), 2, &values);
    let ix = SliceIndex::new(s);
    let t = TableFile::open_with(&victim, Access::Pread).unwrap();
    // A quiet position in a data block (not a constant one) at the start and one at the end.
    let in_data_block = |i: &u64| {
        !ix.unrank(*i).unwrap().has_capture() && t.block_constant(*i / 20).unwrap().is_none()
    };
    let first = (0..ix.size()).find(in_data_block).unwrap();
    let last = (0..ix.size()).rev().find(in_data_block).unwrap();
    assert!(last / 20 > first / 20 + 1);
    let (p1, p2) = (ix.unrank(first).unwrap(), ix.unrank(last).unwrap());
    let mut child = egdb()
        .args(["probe", "--dir"])
        .arg(d.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    writeln!(stdin, "{}", p1.to_fen()).unwrap();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim_end(), format!("{}\t{}", p1.to_fen(), values[&p1]));
    shorten(&victim);
    line.clear();
    writeln!(stdin, "{}", p2.to_fen()).unwrap();
    stdout.read_line(&mut line).unwrap();
    assert!(
        line.starts_with(&format!("{}\terror: ", p2.to_fen()))
            && line.contains("file changed since it was opened"),
        "{line}"
    );
    // Still answering: the cached block of the first position.
    line.clear();
    writeln!(stdin, "{}", p1.to_fen()).unwrap();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim_end(), format!("{}\t{}", p1.to_fen(), values[&p1]));
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

/// Run `egdb probe` on the tables in `dir` with `args`, feeding `stdin`; (status, stdout,
/// stderr).
fn probe_with_stdin(dir: &Path, args: &[&str], stdin: &[u8]) -> (Option<i32>, String, String) {
    let mut a = vec!["probe", "--dir", dir.to_str().unwrap()];
    a.extend_from_slice(args);
    egdb_with_stdin(&a, stdin)
}

/// Run `egdb ARGS`, feeding `stdin`; (status, stdout, stderr).
fn egdb_with_stdin(args: &[&str], stdin: &[u8]) -> (Option<i32>, String, String) {
    let mut child = egdb()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut w = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = w.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Tables of at most 2 pieces from the naive solver, in a fresh directory.
fn tables2() -> (tempfile::TempDir, HashMap<Position, Wld>) {
    let d = tempfile::tempdir().unwrap();
    let values = naive_values(2);
    write_naive_tables(d.path(), 2, &values);
    (d, values)
}

/// Item 2: an over-long stdin line (here 8 MB) is answered with one short error line and the
/// next line is still probed.
#[test]
fn probe_caps_stdin_line_length() {
    let (d, values) = tables2();
    let mut input = vec![b'x'; 8 << 20];
    input.extend_from_slice(b"\nW:WK32:BK26\n");
    let (code, out, _) = probe_with_stdin(d.path(), &[], &input);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{}", &out[..out.len().min(300)]);
    assert!(
        lines[0].len() < 200 && lines[0].contains("error: line 1 is longer than 4096 bytes"),
        "{}",
        &lines[0][..lines[0].len().min(300)]
    );
    let v = values[&Position::from_fen("W:WK32:BK26").unwrap()];
    assert_eq!(lines[1], format!("W:WK32:BK26\t{v}"));
    assert_eq!(code, Some(1));
}

/// `egdb prove` reads stdin as `egdb probe` does: an over-long line (8 MB) and a line that is
/// not UTF-8 each get one short error line, the next lines are still answered; a blank
/// argument gets its error line.
#[test]
fn prove_bounds_stdin_lines_and_answers_every_input() {
    let (d, values) = tables2();
    let mut input = vec![b'x'; 8 << 20];
    input.extend_from_slice(b"\n\xff\xfe\nW:WK32:BK26\n");
    let dir = d.path().to_str().unwrap();
    let run = |args: &[&str], stdin: &[u8]| {
        let mut a = vec!["prove", "--tt-mb", "16", "--nodes", "1000", "--dir", dir];
        a.extend_from_slice(args);
        let (code, out, _) = egdb_with_stdin(&a, stdin);
        (code, out)
    };
    let v = values[&Position::from_fen("W:WK32:BK26").unwrap()];
    let (code, out) = run(&[], &input);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{}", &out[..out.len().min(300)]);
    assert!(
        lines[0].len() < 200 && lines[0].contains("error: line 1 is longer than 4096 bytes"),
        "{}",
        &lines[0][..lines[0].len().min(300)]
    );
    assert!(
        lines[1].contains("error: line 2 is not valid UTF-8"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with(&format!("W:WK32:BK26\t{v}")),
        "{}",
        lines[2]
    );
    assert_eq!(code, Some(1));
    let (code, out) = run(&["", "W:WK32:BK26"], b"");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].contains("error: bad FEN: empty FEN"), "{out}");
    assert!(lines[1].starts_with(&format!("W:WK32:BK26\t{v}")), "{out}");
    assert_eq!(code, Some(1));
}

/// Item 4: every FEN argument gets its line, a blank one an error line.
#[test]
fn probe_answers_blank_arguments() {
    let (d, values) = tables2();
    let (code, out, err) = probe_with_stdin(d.path(), &["", "W:WK32:BK26", "  "], b"");
    let v = values[&Position::from_fen("W:WK32:BK26").unwrap()];
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "\terror: bad FEN: empty FEN".to_string(),
            format!("W:WK32:BK26\t{v}"),
            "\terror: bad FEN: empty FEN".to_string(),
        ]
    );
    assert_eq!(code, Some(1));
    assert_eq!(err, "egdb: error: 2 of 3 positions could not be probed\n");
}

/// Item 5: a board with no pieces at all is an invalid position (FEN, `Position::new`, probe),
/// while a board where only one side has no pieces stays valid (that side, to move, has lost:
/// the rules of the game).
#[test]
fn board_with_no_pieces_is_rejected() {
    use checkers_egdb::{Color, PositionError};
    for fen in ["W:W:B", "B:W:B", "[FEN \"B:B:W\"]"] {
        let e = Position::from_fen(fen).unwrap_err().to_string();
        assert!(e.contains("the board has no pieces"), "{fen}: {e}");
    }
    assert_eq!(
        Position::new(0, 0, 0, Color::White),
        Err(PositionError::NoPieces)
    );
    let one_side = Position::from_fen("B:W32:B").unwrap();
    let (d, _) = tables2();
    let tb = Tablebase::open(d.path()).unwrap();
    assert_eq!(tb.probe_wld(&one_side), Ok(Wld::Loss));
    let empty = Position {
        black: 0,
        white: 0,
        kings: 0,
        side: Color::Black,
    };
    assert_eq!(
        tb.probe_wld(&empty),
        Err(ProbeError::InvalidPosition(PositionError::NoPieces))
    );
    let (code, out, _) = probe_with_stdin(d.path(), &["W:W:B", "B:W32:B"], b"");
    assert_eq!(
        out,
        "W:W:B\terror: bad FEN: the board has no pieces\nB:W32:B\tloss\n"
    );
    assert_eq!(code, Some(1));
}

/// Item 3: `egdb build --slice NAME --pieces N` with a slice of more than N pieces is refused
/// (it used to build the larger slice anyway); without --pieces, --slice builds its slice.
#[test]
fn build_slice_above_pieces_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        egdb()
            .args(["build", "--quiet", "--dir"])
            .arg(d.path())
            .args(args)
            .output()
            .unwrap()
    };
    assert!(run(&["--pieces", "2"]).status.success());
    let out = run(&["--slice", "0201-nn", "--pieces", "2"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "egdb: error: slice 0201-nn has 3 pieces, more than --pieces 2\n"
    );
    assert!(!d.path().join("0201-nn.egdb").exists());
    // Honoured when it fits, and --slice alone still builds a slice of any size.
    assert!(run(&["--slice", "0201-nn", "--pieces", "3"])
        .status
        .success());
    assert!(d.path().join("0201-nn.egdb").exists());
    assert!(run(&["--slice", "0300-nn"]).status.success());
    assert!(d.path().join("0003-nn.egdb").exists());
}

/// Damage two of the files of a 2-piece table directory: one cut short, one with a flipped
/// byte near its end. Returns their paths.
fn damage_two(dir: &Path) -> (PathBuf, PathBuf) {
    let a = dir.join("0101-nn.egdb");
    let b = dir.join("0002-nn.egdb");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&a)
        .unwrap()
        .set_len(20)
        .unwrap();
    let mut bytes = std::fs::read(&b).unwrap();
    let n = bytes.len();
    bytes[n - 9] ^= 0x55;
    std::fs::write(&b, bytes).unwrap();
    (a, b)
}

/// Item 9: `egdb info` and `egdb verify` report every bad file in one run, then fail.
#[test]
fn info_and_verify_report_every_bad_file() {
    let (d, _) = tables2();
    let (a, b) = damage_two(d.path());
    let info = egdb()
        .args(["info", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&info.stderr);
    assert_eq!(info.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines.iter().any(|l| l.contains(&a.display().to_string())),
        "{err}"
    );
    assert!(
        lines.iter().any(|l| l.contains(&b.display().to_string())),
        "{err}"
    );
    assert_eq!(
        lines[2],
        "egdb: error: 2 table files could not be read (listed above)"
    );
    let verify = egdb()
        .args(["verify", "--quiet", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&verify.stderr);
    assert_eq!(verify.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines.iter().any(|l| l.contains(&a.display().to_string())),
        "{err}"
    );
    assert!(
        lines.iter().any(|l| l.contains(&b.display().to_string())),
        "{err}"
    );
    assert_eq!(
        lines[2],
        "egdb: error: 2 table files failed verification (listed above)"
    );
}

/// Item 6: every error is one true line: escaped newlines, the same wording for a missing
/// directory everywhere, stdout and stdin named, a file cut in its block index "truncated", an
/// old format "rebuild", an empty EGDB_DIR explained, ignored files mentioned, a UTF-8 BOM
/// accepted.
#[test]
fn every_error_is_one_true_line() {
    let (d, values) = tables2();
    let run = |args: &[&str], env: Option<(&str, &str)>, dir: Option<&Path>| {
        let mut c = egdb();
        c.args(args).env_remove("EGDB_DIR");
        if let Some(dir) = dir {
            c.arg("--dir").arg(dir);
        }
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    // A path with a newline: one line, the newline escaped.
    let nl = d.path().join("no\nsuch");
    for cmd in ["info", "stats", "verify", "probe"] {
        let (code, err) = run(&[cmd], None, Some(&nl));
        assert_eq!(code, Some(1), "{cmd}: {err}");
        assert_eq!(err.lines().count(), 1, "{cmd}: {err}");
        assert!(
            err.starts_with("egdb: error: cannot read the table directory ")
                && err.contains("no\\nsuch")
                && err.trim_end().ends_with("(set --dir or EGDB_DIR)"),
            "{cmd}: {err}"
        );
    }
    // An empty EGDB_DIR does not talk about a --dir flag nobody gave.
    let (code, err) = run(&["probe", "W:WK32:BK26"], Some(("EGDB_DIR", "")), None);
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with("egdb: error: EGDB_DIR is set but empty"),
        "{err}"
    );
    // stdout that cannot be written is named.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = egdb()
        .args(["probe", "--dir"])
        .arg(d.path())
        .arg("W:WK32:BK26")
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "egdb: error: cannot write to stdout: No space left on device (os error 28)\n"
    );
    // A UTF-8 byte-order mark before the first line is accepted.
    let v = values[&Position::from_fen("W:WK32:BK26").unwrap()];
    let (code, out, _) = probe_with_stdin(d.path(), &[], b"\xEF\xBB\xBFW:WK32:BK26\n");
    assert_eq!(out, format!("W:WK32:BK26\t{v}\n"));
    assert_eq!(code, Some(0));
    // info mentions a file it ignored.
    std::fs::write(d.path().join("notes.txt"), "x").unwrap();
    let (code, err) = run(&["info"], None, Some(d.path()));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        err,
        "egdb: note: ignored notes.txt: not a table file name (like 2101-3n.egdb)\n"
    );
    // A file cut inside its block index says "truncated"; an old version says "rebuild".
    let (victim, _) = rewrite_largest_with_small_blocks(d.path(), 2, &values);
    let bytes = std::fs::read(&victim).unwrap();
    let cut = d.path().join("cut");
    std::fs::create_dir(&cut).unwrap();
    let cut_file = cut.join(victim.file_name().unwrap());
    std::fs::write(&cut_file, &bytes[..HEADER_LEN + 12]).unwrap();
    let e = TableFile::open(&cut_file).unwrap_err();
    assert!(
        matches!(
            e,
            TableError::Corrupt {
                what: Fault::Truncated { .. },
                ..
            }
        ),
        "{e}"
    );
    let mut old = bytes.clone();
    old[8] = (FORMAT_VERSION - 1) as u8;
    std::fs::write(&cut_file, &old).unwrap();
    let e = TableFile::open(&cut_file).unwrap_err().to_string();
    assert!(e.ends_with("rebuild the tables with egdb build"), "{e}");
}

/// Item 8: a second build on a directory another build holds refuses with one clear line
/// (here the other build is simulated by holding its `flock` on the lock file); once the lock
/// is released the build runs.
#[test]
fn second_build_on_a_directory_refuses() {
    use std::os::fd::AsRawFd;
    let d = tempfile::tempdir().unwrap();
    let lock = std::fs::File::create(d.path().join(".egdb-build.lock")).unwrap();
    // SAFETY: flock on an open descriptor we own.
    let r = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(r, 0);
    let build = || {
        egdb()
            .args(["build", "--quiet", "--pieces", "2", "--dir"])
            .arg(d.path())
            .output()
            .unwrap()
    };
    let out = build();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "egdb: error: another egdb build is running on {} (it holds {}); wait for it to finish\n",
            d.path().display(),
            d.path().join(".egdb-build.lock").display()
        )
    );
    assert!(!d.path().join("0101-nn.egdb").exists());
    drop(lock);
    let out = build();
    assert!(out.status.success(), "{out:?}");
    assert!(d.path().join("0101-nn.egdb").exists());
    // The lock was released at exit: a second run (nothing to do) gets it again.
    assert!(build().status.success());
}

/// Item 10: the build summary's "of which" parts add up to the wall time (writing, which runs
/// alongside on its own thread, is reported apart).
#[test]
fn build_summary_parts_add_up() {
    let d = tempfile::tempdir().unwrap();
    let out = egdb()
        .args(["build", "--pieces", "3", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let num_after = |line: &str, key: &str| -> f64 {
        let at = line.find(key).unwrap_or_else(|| panic!("{key} in {line}")) + key.len();
        line[at..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let time = text.lines().find(|l| l.starts_with("time ")).unwrap();
    let wall = num_after(time, "time");
    let parts = text
        .lines()
        .find(|l| l.contains("of which"))
        .unwrap_or_else(|| panic!("{text}"));
    let of_which = &parts[parts.find("of which").unwrap()..];
    let solving = num_after(of_which, "solving");
    let other = num_after(of_which, "other");
    assert!(
        (solving + other - wall).abs() < 0.015,
        "{solving} + {other} != {wall}: {text}"
    );
    let initial = num_after(of_which, "initial pass");
    let propagation = num_after(of_which, "propagation");
    assert!((initial + propagation - solving).abs() < 0.015, "{text}");
    // Nothing else is listed as a part of the wall time.
    assert!(!of_which.contains("writing"), "{text}");
}
