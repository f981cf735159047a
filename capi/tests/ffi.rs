//! Compiles tests/c/egdb_test.c and tests/c/egdb_dtc_test.c with `cc` against include/egdb.h
//! and the static library `libegdb.a`, and runs them on tables of at most 2 (3) pieces; calls
//! the ABI from Rust for the handle checks.

#[path = "../../tests/probe_common/mod.rs"]
mod probe_common;

use checkers_egdb::format::table_path;
use checkers_egdb::{Material, Slice};
use probe_common::*;
use std::path::PathBuf;
use std::process::Command;

/// The static library built alongside this test (target/<profile>/deps or its parent).
fn staticlib() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let deps = exe.parent()?;
    [deps.join("libegdb.a"), deps.parent()?.join("libegdb.a")]
        .into_iter()
        .filter(|p| p.exists())
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
}

#[test]
fn c_program_probes_through_the_abi() {
    let Some(lib) = staticlib() else {
        panic!("libegdb.a not found next to the test executable");
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

/// Issue 14, item 7: a double close and a use after close are answered EGDB_INVALID with a
/// message, never a crash; `egdb_rescan` makes files written after `egdb_open` visible.
#[test]
fn handle_double_close_use_after_close_and_rescan() {
    use egdb::*;
    use std::ffi::CString;
    let d = tempfile::tempdir().unwrap();
    let values = naive_values(2);
    // Open with the 1-piece tables only, then add the 2-piece ones.
    for s in Material::all_with_pieces(1)
        .into_iter()
        .flat_map(Slice::all_of)
    {
        write_slice(d.path(), &s, &values);
    }
    let dir = CString::new(d.path().to_str().unwrap()).unwrap();
    let fen = CString::new("W:WK32:BK26").unwrap();
    let last_error = || {
        let mut buf = [0 as std::ffi::c_char; 200];
        // SAFETY: `buf` is writable for its length.
        unsafe { egdb_last_error(buf.as_mut_ptr(), buf.len()) };
        // SAFETY: egdb_last_error NUL-terminates.
        unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    // SAFETY: valid strings; the handle comes from egdb_open.
    unsafe {
        let h = egdb_open(dir.as_ptr(), 1, std::ptr::null_mut(), 0);
        assert!(!h.is_null());
        assert_eq!(egdb_max_pieces(h), 1);
        assert_eq!(egdb_lookup_fen(h, fen.as_ptr(), 0), EGDB_UNKNOWN);
        for m in Material::all_with_pieces(2) {
            for s in Slice::all_of(m) {
                write_slice(d.path(), &s, &values);
            }
        }
        let n = egdb_rescan(h);
        assert!(n > 2, "{n}");
        assert_eq!(egdb_max_pieces(h), 2);
        let want = match values[&checkers_egdb::Position::from_fen("W:WK32:BK26").unwrap()] {
            checkers_egdb::Wld::Win => EGDB_WIN,
            checkers_egdb::Wld::Loss => EGDB_LOSS,
            checkers_egdb::Wld::Draw => EGDB_DRAW,
        };
        assert_eq!(egdb_lookup_fen(h, fen.as_ptr(), 0), want);
        egdb_close(h);
        assert_eq!(egdb_lookup_fen(h, fen.as_ptr(), 0), EGDB_INVALID);
        assert_eq!(last_error(), "handle is closed");
        assert_eq!(egdb_lookup(h, 1, 2, 3, 0, 0), EGDB_INVALID);
        assert_eq!(egdb_rescan(h), EGDB_INVALID);
        let mut st = EgdbStats::default();
        assert_eq!(egdb_get_stats(h, &mut st), EGDB_INVALID);
        assert_eq!(egdb_max_pieces(h), 0);
        egdb_close(h); // double close: no crash
        assert_eq!(last_error(), "handle is closed");
    }
}

/// The distance calls (`egdb_lookup_dtc`, `egdb_best_move`) from C, on tables of at most 3
/// pieces built with `--dtc`.
#[test]
fn c_program_probes_distances_through_the_abi() {
    let Some(lib) = staticlib() else {
        panic!("libegdb.a not found next to the test executable");
    };
    let d = tempfile::tempdir().unwrap();
    let mut o = checkers_egdb::BuildOptions::new(d.path(), 3);
    o.dtc = true;
    checkers_egdb::build(&o).unwrap();
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

/// Variant handles (issue 34): `egdb_open` stays English and refuses giveaway tables naming
/// both rules; `egdb_open_rules` with NULL takes the headers' rules (`egdb_rules` names
/// them), refuses other names; lookups and the best move follow giveaway's terminal rule (a
/// side without a move, or without pieces, wins), and one king against one king is never
/// drawn there (issue 34's facts).
#[test]
fn variant_handles_follow_the_rules_in_the_headers() {
    use egdb::*;
    use std::ffi::{CStr, CString};
    let d = tempfile::tempdir().unwrap();
    let mut o = checkers_egdb::BuildOptions::new(d.path(), 2);
    o.rules = checkers_egdb::rules::Variant::Giveaway;
    o.dtc = true;
    checkers_egdb::build(&o).unwrap();
    let dir = CString::new(d.path().to_str().unwrap()).unwrap();
    let mut err = [0 as std::ffi::c_char; 300];
    // SAFETY: valid NUL-terminated strings, `err` writable for its length, handles from
    // egdb_open_rules.
    unsafe {
        let h = egdb_open(dir.as_ptr(), 1, err.as_mut_ptr(), err.len());
        assert!(h.is_null());
        let msg = CStr::from_ptr(err.as_ptr()).to_string_lossy().into_owned();
        assert!(msg.contains("giveaway") && msg.contains("english"), "{msg}");
        for bad in ["russian", "checkers"] {
            let r = CString::new(bad).unwrap();
            let h = egdb_open_rules(dir.as_ptr(), 1, r.as_ptr(), err.as_mut_ptr(), err.len());
            assert!(h.is_null(), "{bad}");
        }
        let h = egdb_open_rules(
            dir.as_ptr(),
            1,
            std::ptr::null(),
            err.as_mut_ptr(),
            err.len(),
        );
        assert!(!h.is_null());
        assert_eq!(CStr::from_ptr(egdb_rules(h)).to_str().unwrap(), "giveaway");
        let named = CString::new("giveaway").unwrap();
        let h2 = egdb_open_rules(dir.as_ptr(), 1, named.as_ptr(), err.as_mut_ptr(), err.len());
        assert!(!h2.is_null());
        egdb_close(h2);
        // White to move without pieces: White has won.
        let fen = CString::new("W:W:BK14").unwrap();
        assert_eq!(egdb_lookup_fen(h, fen.as_ptr(), 0), EGDB_WIN);
        // All-integer struct: zero is a valid value.
        let mut m: EgdbMove = std::mem::zeroed();
        m.from = 99;
        assert_eq!(egdb_best_move(h, 1 << 13, 0, 1 << 13, 1, &mut m), EGDB_WIN);
        assert_eq!(m.from, 0);
        // King v king: never a draw, whoever moves.
        for b in 0..32 {
            for w in 0..32 {
                if b == w {
                    continue;
                }
                for color in [0, 1] {
                    let v = egdb_lookup(h, 1 << b, 1 << w, (1 << b) | (1 << w), color, 0);
                    assert!(v == EGDB_WIN || v == EGDB_LOSS, "{b} {w} {color}: {v}");
                }
            }
        }
        egdb_close(h);
        assert!(egdb_rules(h).is_null());
    }
}
