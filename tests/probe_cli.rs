//! `egdb probe` end to end on tables of at most 2 pieces written from the naive solver.

mod probe_common;

use probe_common::*;
use std::io::Write;
use std::process::{Command, Stdio};

fn egdb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
}

#[test]
fn probe_args_stdin_json_and_errors() {
    let d = tempfile::tempdir().unwrap();
    write_naive_tables(d.path(), 2, &naive_values(2));
    let out = egdb()
        .args(["probe", "--dir"])
        .arg(d.path())
        .args([
            "w:wk32:bk26",
            "B:WK32:BK26",
            "W:WK33:B1",
            "W:WK29:BK25",
            "W:WK19,K23:BK28,12",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert_eq!(lines[0], "W:WK32:BK26\twin");
    assert_eq!(lines[1], "B:WK32:BK26\tdraw");
    assert!(
        lines[2].starts_with("W:WK33:B1\terror: bad FEN"),
        "{}",
        lines[2]
    );
    assert_eq!(lines[3], "W:WK29:BK25\twin");
    assert!(
        lines[4].contains("error: position has 4 pieces"),
        "{}",
        lines[4]
    );
    assert!(!out.status.success());

    // stdin, JSON, EGDB_DIR.
    let mut child = egdb()
        .args(["probe", "--json"])
        .env("EGDB_DIR", d.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"W:WK4:BK12\n\n B:W32:B \n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["fen"], "W:WK4:BK12");
    assert_eq!(v[0]["value"], "loss");
    assert_eq!(v[1]["value"], "loss");
}

#[test]
fn probe_empty_dir_fails_cleanly() {
    let d = tempfile::tempdir().unwrap();
    let out = egdb()
        .args(["probe", "--dir"])
        .arg(d.path())
        .arg("W:WK32:BK26")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no table files"), "{err}");
}

/// Runs `egdb probe` on the given stdin bytes; returns (stdout lines, exit code).
fn probe_stdin(dir: &std::path::Path, input: &[u8]) -> (Vec<String>, Option<i32>, String) {
    let mut child = egdb()
        .args(["probe", "--dir"])
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    (
        text.lines().map(String::from).collect(),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn probe_stdin_non_utf8_line_is_answered_in_place() {
    let d = tempfile::tempdir().unwrap();
    write_naive_tables(d.path(), 2, &naive_values(2));
    let (lines, code, err) =
        probe_stdin(d.path(), b"W:WK32:BK26\nW:WK\xff32:BK26\n\nB:WK32:BK26\n");
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0], "W:WK32:BK26\twin");
    // The bad line: shown lossily, one TAB, the message names line 2 (blank lines count).
    assert_eq!(lines[1].matches('\t').count(), 1, "{}", lines[1]);
    let (input, msg) = lines[1].split_once('\t').unwrap();
    assert_eq!(input, "W:WK\u{FFFD}32:BK26");
    assert!(msg.starts_with("error: "), "{msg}");
    assert!(msg.contains("line 2") && msg.contains("UTF-8"), "{msg}");
    // Later lines are still answered; the failure shows in the exit status at the end.
    assert_eq!(lines[2], "B:WK32:BK26\tdraw");
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("stream did not contain valid UTF-8"), "{err}");
    assert!(err.contains("1 of 3"), "{err}");
}

#[test]
fn probe_echoes_control_characters_escaped() {
    let d = tempfile::tempdir().unwrap();
    write_naive_tables(d.path(), 2, &naive_values(2));
    // A TAB inside the input (not at its ends, which are trimmed), an escape character, a
    // backslash: each error line must still have exactly one TAB, the separator.
    let (lines, code, _) = probe_stdin(
        d.path(),
        b"W:WK32\t;BK26\nW:WK32:\x1bBK26\nW:WK32:B\\K26\r\nW:WK4:BK12\n",
    );
    assert_eq!(code, Some(1));
    assert_eq!(lines.len(), 4, "{lines:?}");
    for l in &lines {
        assert_eq!(l.matches('\t').count(), 1, "{l:?}");
        assert!(!l.chars().any(|c| c.is_control() && c != '\t'), "{l:?}");
    }
    assert!(
        lines[0].starts_with("W:WK32\\t;BK26\terror: bad FEN"),
        "{:?}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("W:WK32:\\u{1b}BK26\terror: bad FEN"),
        "{:?}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("W:WK32:B\\\\K26\terror: bad FEN"),
        "{:?}",
        lines[2]
    );
    assert_eq!(lines[3], "W:WK4:BK12\tloss");
    // Same for FENs given as arguments.
    let out = egdb()
        .args(["probe", "--dir"])
        .arg(d.path())
        .arg("W:W5\t;B1\n")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("W:W5\\t;B1\terror: "), "{text:?}");
    assert_eq!(text.lines().count(), 1, "{text:?}");
    // JSON keeps the raw text (JSON escaping already makes it unambiguous).
    let mut child = egdb()
        .args(["probe", "--json", "--dir"])
        .arg(d.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"W:W5\t;B1\n\xfe\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["input"], "W:W5\t;B1");
    assert_eq!(v[1]["input"], "\u{FFFD}");
    assert!(v[1]["error"].as_str().unwrap().contains("line 2"));
}
