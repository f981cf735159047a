//! `egdb info --manifest` (issue 30 item 3): the SHA-256 of every table file, in the format of
//! `sha256sum`, so that tables built elsewhere can be checked against published ones.
use sha2::{Digest, Sha256};
use std::process::Command;

const EGDB: &str = env!("CARGO_BIN_EXE_egdb");

#[test]
fn manifest_lists_every_table_file_with_its_sha256() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t3");
    let d = dir.to_str().unwrap();
    let run = |args: &[&str]| {
        Command::new(EGDB)
            .args(args)
            .env_remove("EGDB_DIR")
            .output()
            .unwrap()
    };
    assert!(
        run(&["build", "--pieces", "3", "--dtc", "--quiet", "--dir", d])
            .status
            .success()
    );
    // Not a table: left out.
    std::fs::write(dir.join("notes.txt"), "x").unwrap();
    let out = run(&["info", "--manifest", "--dir", d]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut expected: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".egdb") || n.ends_with(".dtc"))
        .collect();
    expected.sort();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), expected.len());
    assert!(
        expected.len() > 100,
        "3 pieces: values and distances of every slice"
    );
    for (line, name) in lines.iter().zip(&expected) {
        let (sum, file) = line.split_once("  ").unwrap();
        assert_eq!(file, name);
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let want: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(sum, want, "{name}");
    }
    // An empty directory is an error.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = run(&["info", "--manifest", "--dir", empty.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no table files"));
}
