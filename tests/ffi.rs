//! Compiles tests/c/egdb_test.c with `cc` against include/egdb.h and the static library, and
//! runs it on tables of at most 2 pieces written from the naive solver.

mod probe_common;

use checkers_egdb::table::table_path;
use checkers_egdb::{Material, Slice};
use probe_common::*;
use std::path::PathBuf;
use std::process::Command;

/// The static library built alongside this test (target/<profile>/deps or its parent).
fn staticlib() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let deps = exe.parent()?;
    [
        deps.join("libcheckers_egdb.a"),
        deps.parent()?.join("libcheckers_egdb.a"),
    ]
    .into_iter()
    .filter(|p| p.exists())
    .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
}

#[test]
fn c_program_probes_through_the_abi() {
    let Some(lib) = staticlib() else {
        panic!("libcheckers_egdb.a not found next to the test executable");
    };
    let d = tempfile::tempdir().unwrap();
    let values = naive_values(2);
    write_naive_tables(d.path(), 2, &values);
    let nokvk = d.path().join("nokvk");
    std::fs::create_dir(&nokvk).unwrap();
    for m in Material::all_with_pieces(1)
        .into_iter()
        .chain(Material::all_with_pieces(2))
    {
        for s in Slice::all_of(m) {
            if s.to_string() != "0101-nn" {
                std::fs::copy(table_path(d.path(), &s), table_path(&nokvk, &s)).unwrap();
            }
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let exe = d.path().join("egdb_test");
    let out = Command::new("cc")
        .arg("-std=c99")
        .arg("-Wall")
        .arg("-Werror")
        .arg("-I")
        .arg(root.join("include"))
        .arg(root.join("tests/c/egdb_test.c"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .output()
        .expect("cc runs");
    assert!(
        out.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).arg(d.path()).output().unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "C test failed:\n{text}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(text.contains("0 failures"), "{text}");
}

/// The distance calls (`egdb_lookup_dtc`, `egdb_best_move`) from C, on tables of at most 3
/// pieces built with `--dtc`.
#[test]
fn c_program_probes_distances_through_the_abi() {
    let Some(lib) = staticlib() else {
        panic!("libcheckers_egdb.a not found next to the test executable");
    };
    let d = tempfile::tempdir().unwrap();
    let mut o = checkers_egdb::generate::BuildOptions::new(d.path(), 3);
    o.dtc = true;
    checkers_egdb::generate::build(&o).unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let exe = d.path().join("egdb_dtc_test");
    let out = Command::new("cc")
        .arg("-std=c99")
        .arg("-Wall")
        .arg("-Werror")
        .arg("-I")
        .arg(root.join("include"))
        .arg(root.join("tests/c/egdb_dtc_test.c"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .output()
        .expect("cc runs");
    assert!(
        out.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).arg(d.path()).output().unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "C test failed:\n{text}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(text.contains("0 failures"), "{text}");
}
