//! The readers keep one file per slice open, and a table directory holds thousands (1,029
//! value files for at most 4 pieces), more than an ordinary user's usual soft limit of 1,024
//! open files. Found when the README's test command was run by an unprivileged user: `verify`,
//! the prover and probes failed with "Too many open files". The library now raises the soft
//! limit to the hard one on the first `EMFILE` and opens again.
use std::process::Command;

const EGDB: &str = env!("CARGO_BIN_EXE_egdb");

fn sh(script: &str) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .env_remove("EGDB_DIR")
        .output()
        .unwrap()
}

#[test]
fn verify_and_probes_run_under_a_low_soft_limit_of_open_files() {
    let hard = String::from_utf8_lossy(&sh("ulimit -Hn").stdout)
        .trim()
        .to_string();
    let hard: u64 = if hard == "unlimited" {
        u64::MAX
    } else {
        hard.parse().unwrap_or(0)
    };
    if hard < 2048 {
        eprintln!("skipped: the hard limit of open files is {hard}, below the 1,029 files needed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t4");
    let d = dir.to_str().unwrap();
    let out = Command::new(EGDB)
        .args(["build", "--pieces", "4", "--quiet", "--dir", d])
        .env_remove("EGDB_DIR")
        .output()
        .unwrap();
    assert!(out.status.success());
    // A soft limit of 256 open files, far below the 1,029 slices verify reads.
    let out = sh(&format!(
        "ulimit -Sn 256 && '{EGDB}' verify --quiet --dir '{d}'"
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Probes over many slices in one process (a man each, with or without a king: 2,224
    // positions in some 150 slices), under a soft limit of 64: the Tablebase keeps each slice
    // file it opened. Before the fix 1,302 of them failed with "Too many open files".
    let mut fens = String::new();
    for b in 1..=28u32 {
        for w in 5..=32u32 {
            if b == w {
                continue;
            }
            fens.push_str(&format!("B:W{w}:B{b}\n"));
            if b != 30 && w != 30 {
                fens.push_str(&format!("B:W{w}:B{b},K30\n"));
            }
            if b != 3 && w != 3 {
                fens.push_str(&format!("B:W{w},K3:B{b}\n"));
            }
        }
    }
    let list = tmp.path().join("fens.txt");
    std::fs::write(&list, &fens).unwrap();
    let l = list.to_str().unwrap();
    let out = sh(&format!(
        "ulimit -Sn 64 && '{EGDB}' probe --dir '{d}' < '{l}'"
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(text.lines().count(), fens.lines().count());
    assert!(text.lines().all(|x| !x.contains("error")), "{text}");
}
