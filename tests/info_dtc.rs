//! `egdb info` opens every distance file (`.dtc`): an empty one, or a `.egdb` file copied
//! under a `.dtc` name, is a bad table (`egdb: bad table: ...` on stderr, exit 1), not a good
//! distance file: the `dtc_files` column counts only good files and `dtc_missing` counts the
//! slices with a value file and no good distance file.

use std::path::Path;
use std::process::{Command, Output};

const EGDB: &str = env!("CARGO_BIN_EXE_egdb");

fn info(dir: &Path) -> Output {
    Command::new(EGDB)
        .args(["info", "--dir"])
        .arg(dir)
        .output()
        .unwrap()
}

/// The rows of the distance table: pieces -> (dtc_files, dtc_missing).
fn dtc_rows(stdout: &str) -> Vec<(u32, usize, usize)> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("pieces\tdtc_files\tdtc_missing"))
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn info_reports_bad_distance_files() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let out = Command::new(EGDB)
        .args(["build", "--quiet", "--pieces", "2", "--dtc", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let good = info(dir);
    assert!(good.status.success());
    let before = dtc_rows(&String::from_utf8_lossy(&good.stdout));
    assert_eq!(before.len(), 2, "{before:?}");
    assert!(before.iter().all(|r| r.2 == 0 && r.1 > 0), "{before:?}");

    // Two 2-piece distance files: one truncated to 0 bytes, one replaced by a copy of a
    // (1-piece) value file.
    std::fs::File::create(dir.join("0011-n0.dtc")).unwrap();
    std::fs::copy(dir.join("0001-nn.egdb"), dir.join("0002-nn.dtc")).unwrap();

    let bad = info(dir);
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("egdb: bad table:"))
        .collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines.iter().any(|l| l.contains("0011-n0.dtc")), "{stderr}");
    assert!(lines.iter().any(|l| l.contains("0002-nn.dtc")), "{stderr}");
    assert!(
        stderr.contains("egdb: error: 2 table files could not be read"),
        "{stderr}"
    );
    let after = dtc_rows(&String::from_utf8_lossy(&bad.stdout));
    // The 1-piece row is unchanged; the 2-piece row has two good files fewer, two missing.
    let expect = vec![before[0], (2, before[1].1 - 2, 2)];
    assert_eq!(after, expect);
}
