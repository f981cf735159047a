//! Issue 36 item 7: `egdb verify` re-derives the header statistic `longest` of every value
//! file (the longest resolution ply, shown by `egdb stats` and `/api/stats`) and of every
//! distance file (the longest distance to conversion), so a header forged with recomputed
//! checksums is reported, never shown as a fact.
mod forge;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const EGDB: &str = env!("CARGO_BIN_EXE_egdb");

/// The 4-piece tables with distances (`egdb build --pieces 4 --dtc`), once per test binary.
fn t4() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t4");
        let out = egdb(&[
            "build",
            "--pieces",
            "4",
            "--dtc",
            "--quiet",
            "--dir",
            s(&dir),
        ]);
        assert!(out.status.success(), "{}", text(&out));
        (tmp, dir)
    })
    .1
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn egdb(args: &[&str]) -> Output {
    egdb_env(args, &[])
}

fn egdb_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(EGDB)
        .args(args)
        .env_remove("EGDB_DIR")
        .env_remove("EGDB_VERIFY_LONGEST")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A copy of the 4-piece tables to damage.
fn copy_t4(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(t4()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Rewrite the `longest` field (u32 at byte 48) of the table file at `path` and recompute the
/// header checksum (bytes 0..56 and the offset table) and the whole-file checksum, as a crafted
/// file would have them (layout: docs/format.md).
fn forge_longest(path: &Path, longest: u32) {
    let mut b = std::fs::read(path).unwrap();
    b[48..52].copy_from_slice(&longest.to_le_bytes());
    forge::rechecksum(&mut b);
    std::fs::write(path, b).unwrap();
}

#[test]
fn genuine_tables_verify_and_king_v_king_is_the_published_11() {
    // The builder's headers and the verifier's re-derivation (forward moves of the path
    // generator, level by level) agree on every slice of at most 4 pieces...
    let out = egdb(&["verify", "--quiet", "--dir", s(t4())]);
    assert!(out.status.success(), "{}", text(&out));
    // ...and the header of king v king holds the published longest win, 11 plies
    // (shared/reference.md), for both sides to move.
    let out = egdb(&["stats", "--dir", s(t4())]);
    let stats = String::from_utf8_lossy(&out.stdout).to_string();
    for side in ["B", "W"] {
        let line = stats
            .lines()
            .find(|l| l.starts_with(&format!("0 1 0 1 {side} ")))
            .unwrap_or_else(|| panic!("no king v king line:\n{stats}"));
        assert!(line.ends_with(" 11"), "{line}");
    }
}

#[test]
fn a_forged_value_header_longest_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    copy_t4(&dir);
    // Two kings v one king (unit 0201-nn with 0102-nn): its resolution plies run to 33.
    forge_longest(&dir.join("0201-nn.egdb"), 999);
    // The checksums hold: stats shows the forged figure...
    let out = egdb(&["stats", "--dir", s(&dir)]);
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.starts_with("0 2 0 1 ") && l.ends_with(" 999")),
        "{}",
        text(&out)
    );
    // ...and verify reports it, naming the slice and both figures.
    let out = egdb(&["verify", "--quiet", "--dir", s(&dir)]);
    assert!(!out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("0201-nn") && err.contains("longest") && err.contains("999"),
        "{err}"
    );
    assert_eq!(err.matches("longest").count(), 1, "{err}");
}

/// Not only absurd figures: the true value minus one (read from the genuine header). Checked
/// every way the verifier finds the positions to examine at each level of the resolution
/// plies: those reached back by one move from the positions resolved at the level before
/// (`pred`, the default), a list of the open positions (an index and a watched successor
/// each: `list`), a scan of the arrays (`scan`), or the list when it fits in two bytes per
/// position of the unit, else the scan (`auto`); each, forced by `EGDB_VERIFY_LONGEST`,
/// derives the builder's figure for every slice of at most 4 pieces and reports the forged
/// one.
#[test]
fn a_forged_value_header_longest_one_below_the_truth_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    copy_t4(&dir);
    let path = dir.join("0202-nn.egdb");
    let b = std::fs::read(&path).unwrap();
    let longest = u32::from_le_bytes(b[48..52].try_into().unwrap());
    assert!(longest > 1, "2 kings v 2 kings resolve over many plies");
    forge_longest(&path, longest - 1);
    for way in ["", "pred", "list", "scan", "auto"] {
        let env = [("EGDB_VERIFY_LONGEST", way)];
        if !way.is_empty() {
            let out = egdb_env(&["verify", "--quiet", "--dir", s(t4())], &env);
            assert!(out.status.success(), "{way}: {}", text(&out));
        }
        let out = egdb_env(&["verify", "--quiet", "--dir", s(&dir)], &env);
        assert!(!out.status.success(), "{way}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("0202-nn")
                && err.contains(&format!(
                    "header says {}, the values give {longest}",
                    longest - 1
                )),
            "{way}: {err}"
        );
    }
}

#[test]
fn a_forged_distance_header_longest_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    copy_t4(&dir);
    forge_longest(&dir.join("0101-nn.dtc"), 12);
    let out = egdb(&["verify", "--quiet", "--dir", s(&dir)]);
    assert!(!out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    // King v king: the longest distance to conversion is the published 11 plies.
    assert!(
        err.contains("0101-nn")
            && err.contains("longest distance is 12, the verified distances give 11"),
        "{err}"
    );
}
