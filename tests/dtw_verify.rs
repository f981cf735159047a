//! `egdb verify` on depth-to-win files (issue 33): every stored DTW re-derived from its
//! successors with the independent move generator, the header's `longest` against the largest
//! re-derived depth. Files are forged through the real writer (`table::dtw::write_dtw`), so
//! every checksum is valid and only the verification of the values can find the change. The
//! depths forged against are published facts (2K v K: B:WK14:BK1,K2 won in 33, issue 33 /
//! ../shared/reference.md) or the definition (a capture that takes the last piece wins in 1).

use checkers_egdb::format::SliceIndex;
use checkers_egdb::format::RULES_ENGLISH;
use checkers_egdb::format::{dtw_path, open_dtw, write_dtw};
use checkers_egdb::{build, BuildOptions};
use checkers_egdb::{verify_dir, verify_dir_opts, VerifyError, VerifyOptions};
use checkers_egdb::{Position, Slice};
use std::path::Path;

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap()
}

fn build3(dir: &Path) {
    let mut o = BuildOptions::new(dir, 3);
    o.dtc = true;
    o.dtw = true;
    build(&o).unwrap();
}

/// Rewrite the `.dtw` file of `p`'s slice with `f` applied to (depths, header), checksums
/// recomputed by the writer; returns the index of `p` and its original depth.
fn forge(
    dir: &Path,
    p: &Position,
    f: impl FnOnce(&mut Vec<u32>, &mut checkers_egdb::format::TableMeta, usize),
) -> (Slice, usize, u32) {
    let n = p.normalized();
    let s = Slice::of(&n);
    let i = SliceIndex::new(s).rank(&n) as usize;
    let path = dtw_path(dir, &s);
    let file = open_dtw(&path, RULES_ENGLISH).unwrap();
    let mut meta = file.meta().clone();
    let mut d = file.decode_all().unwrap();
    drop(file);
    let was = d[i];
    f(&mut d, &mut meta, i);
    let mask = bitvec::bitvec![u64, bitvec::order::Lsb0; 0; d.len()];
    write_dtw(&path, &meta, &d, &mask, &Default::default()).unwrap();
    (s, i, was)
}

fn verify_cli(dir: &Path) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(["verify", "--quiet", "--dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn verify_rederives_every_depth_and_finds_forged_ones() {
    let dir = tempfile::tempdir().unwrap();
    build3(dir.path());
    let files = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".dtw")
        })
        .count() as u64;
    let rep = verify_dir(dir.path(), &|_, _, _| {}).unwrap();
    assert!(files > 50);
    assert_eq!(rep.dtw_slices, files);
    assert_eq!(rep.dtw_positions, rep.positions);
    let (ok, out, e) = verify_cli(dir.path());
    assert!(ok, "{e}");
    assert!(
        out.contains(&format!(
            "ok: {files} depth-to-win files, {} positions: every depth to win re-derived",
            rep.positions
        )),
        "{out}"
    );

    // A won position's depth changed (33 -> 35, still odd: a win).
    let p = pos("B:WK14:BK1,K2");
    let (s, i, was) = forge(dir.path(), &p, |d, _, i| d[i] = 35);
    assert_eq!(was, 33, "the published depth of B:WK14:BK1,K2");
    let e = verify_dir(dir.path(), &|_, _, _| {}).unwrap_err();
    let at = format!("slice {s}, index {i} ");
    assert!(
        e.failures().iter().any(|f| matches!(
            f,
            VerifyError::DtwMismatch {
                stored: 35,
                derived: 33,
                ..
            }
        ) && f.to_string().contains(&at)),
        "{e}"
    );
    assert!(
        e.failures()
            .iter()
            .all(|f| matches!(f, VerifyError::DtwMismatch { .. })),
        "{e}"
    );
    let (ok, _, err) = verify_cli(dir.path());
    assert!(
        !ok && err.contains("stored depth to win 35, successors give 33"),
        "{err}"
    );
    forge(dir.path(), &p, |d, _, i| d[i] = 33);
    verify_dir(dir.path(), &|_, _, _| {}).unwrap();

    // A capture position (stored in .dtw files): White takes Black's last piece, a win in 1.
    let c = pos("W:WK29:BK25");
    let (_, _, was) = forge(dir.path(), &c, |d, _, i| d[i] = 3);
    assert_eq!(was, 1);
    let e = verify_dir(dir.path(), &|_, _, _| {}).unwrap_err();
    assert!(
        e.failures().iter().any(|f| matches!(
            f,
            VerifyError::DtwMismatch {
                stored: 3,
                derived: 1,
                ..
            }
        )),
        "{e}"
    );
    forge(dir.path(), &c, |d, _, i| d[i] = 1);

    // The header's longest forged (the depths right).
    forge(dir.path(), &p, |_, m, _| m.longest += 2);
    let e = verify_dir(dir.path(), &|_, _, _| {}).unwrap_err();
    assert!(
        matches!(&e, VerifyError::DtwFile { slice, why } if *slice == s
            && why.contains("longest depth is 35, the largest re-derived depth 33")),
        "{e}"
    );
    forge(dir.path(), &p, |_, m, _| m.longest -= 2);
    verify_dir(dir.path(), &|_, _, _| {}).unwrap();

    // A deleted .dtw file: missing, even with --partial below the largest piece count.
    let kk = Slice::of(&pos("B:WK13:BK1").normalized());
    let path = dtw_path(dir.path(), &kk);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let e = verify_dir_opts(
        dir.path(),
        &VerifyOptions {
            partial: true,
            ..VerifyOptions::default()
        },
        &|_, _, _| {},
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("depth-to-win file is missing"),
        "{e}"
    );
    std::fs::write(&path, &bytes).unwrap();
    // A .dtw file without its value file.
    let egdb = checkers_egdb::format::table_path(dir.path(), &kk);
    let wld = std::fs::read(&egdb).unwrap();
    std::fs::remove_file(&egdb).unwrap();
    let e = verify_dir_opts(
        dir.path(),
        &VerifyOptions {
            partial: true,
            ..VerifyOptions::default()
        },
        &|_, _, _| {},
    )
    .unwrap_err();
    assert!(
        e.failures().iter().any(|f| f
            .to_string()
            .contains("depth-to-win file without its value file")),
        "{e}"
    );
    std::fs::write(&egdb, &wld).unwrap();
    verify_dir(dir.path(), &|_, _, _| {}).unwrap();
}

/// A depth changed in a slice another slice's depths read (K v K, reached by 2K v K captures
/// and by crowning from man positions): the K v K slice itself fails; after its repair the
/// directory verifies again.
#[test]
fn verify_finds_a_forged_depth_in_a_dependency() {
    let dir = tempfile::tempdir().unwrap();
    build3(dir.path());
    let p = pos("B:WK13:BK1"); // the longest K v K win, 11 plies (published)
    let (s, _, was) = forge(dir.path(), &p, |d, _, i| d[i] = 13);
    assert_eq!(was, 11);
    let e = verify_dir(dir.path(), &|_, _, _| {}).unwrap_err();
    assert!(e.failures().iter().any(|f| f.slice() == Some(s)), "{e}");
}
