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
        .args(["w:wk32:bk26", "B:WK32:BK26", "W:WK33:B1", "W:WK29:BK25", "W:WK19,K23:BK28,12"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert_eq!(lines[0], "W:WK32:BK26\twin");
    assert_eq!(lines[1], "B:WK32:BK26\tdraw");
    assert!(lines[2].starts_with("W:WK33:B1\terror: bad FEN"), "{}", lines[2]);
    assert_eq!(lines[3], "W:WK29:BK25\twin");
    assert!(lines[4].contains("error: position has 4 pieces"), "{}", lines[4]);
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
    let v: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["fen"], "W:WK4:BK12");
    assert_eq!(v[0]["value"], "loss");
    assert_eq!(v[1]["value"], "loss");
}

#[test]
fn probe_empty_dir_fails_cleanly() {
    let d = tempfile::tempdir().unwrap();
    let out = egdb().args(["probe", "--dir"]).arg(d.path()).arg("W:WK32:BK26").output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no table files"), "{err}");
}
