//! Probe library tests on tables written from a naive solver (at most 3 pieces), published
//! values (reference §3), robustness against damaged files, and concurrency of lazy opening.

mod probe_common;

use checkers_egdb::format::{table_path, TableError, TableFile};
use checkers_egdb::{Access, Color, Material, Position, ProbeError, Slice, Tablebase, Wld};
use probe_common::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

fn fen(s: &str) -> Position {
    Position::from_fen(s).unwrap()
}

/// Naive values of all positions with at most 3 pieces (computed once per test binary).
fn naive3() -> &'static HashMap<Position, Wld> {
    static V: OnceLock<HashMap<Position, Wld>> = OnceLock::new();
    V.get_or_init(|| naive_values(3))
}

/// A directory with every table of at most 3 pieces (written once per test binary).
fn dir3() -> &'static Path {
    static D: OnceLock<tempfile::TempDir> = OnceLock::new();
    D.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        write_naive_tables(d.path(), 3, naive3());
        d
    })
    .path()
}

/// A fresh directory holding copies of the given slices' files from [`dir3`].
fn copy_of(slices: &[&str]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for s in slices {
        let s: Slice = s.parse().unwrap();
        std::fs::copy(table_path(dir3(), &s), table_path(d.path(), &s)).unwrap();
    }
    d
}

fn all_2piece_slices() -> Vec<String> {
    (1..=2)
        .flat_map(Material::all_with_pieces)
        .flat_map(Slice::all_of)
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn naive_solver_matches_published_kvk() {
    // Reference §3: K v K, White to move: 230 wins, 654 draws, 108 losses (992 positions).
    let v = naive3();
    let mut n = [0; 3];
    for (p, w) in v {
        if p.side == Color::White && Material::of(p) == Material::new(0, 1, 0, 1).unwrap() {
            n[*w as usize] += 1;
        }
    }
    assert_eq!(n, [108, 654, 230]);
}

#[test]
fn every_position_up_to_3_pieces_probes_to_naive_value() {
    let tb = Tablebase::open(dir3()).unwrap();
    assert_eq!(tb.max_pieces(), 3);
    for (p, want) in naive3() {
        assert_eq!(tb.probe_wld(p), Ok(*want), "{}", p.to_fen());
    }
    // Positional reads and a tiny cache give the same answers.
    let tb = Tablebase::builder(dir3())
        .access(Access::Pread)
        .cache_bytes(10_000)
        .open()
        .unwrap();
    for (i, (p, want)) in naive3().iter().enumerate() {
        if i % 7 == 0 {
            assert_eq!(tb.probe_wld(p), Ok(*want), "{}", p.to_fen());
        }
    }
    let st = tb.stats();
    assert!(st.blocks_decoded > 0 && st.cache_hits > 0, "{st:?}");
    assert!(st.cached_bytes <= 10_000, "{st:?}");
}

#[test]
fn published_values() {
    let tb = Tablebase::open(dir3()).unwrap();
    for (f, want) in [
        ("W:WK32:BK26", Wld::Win),
        ("B:WK32:BK26", Wld::Draw),
        ("W:W5:BK2", Wld::Win),
        ("W:WK29:BK25", Wld::Win),
        ("B:WK29:BK25", Wld::Win),
        ("W:WK4:BK12", Wld::Loss),
        ("W:W29:B22,25", Wld::Loss),
        ("B:W32:B", Wld::Loss),
    ] {
        assert_eq!(tb.probe_wld(&fen(f)), Ok(want), "{f}");
    }
}

#[test]
fn raw_and_cached_probes() {
    let tb = Tablebase::open(dir3()).unwrap();
    // 29x22 is a capture: raw probes refuse it.
    assert_eq!(
        tb.probe_wld_raw(&fen("W:WK29:BK25")),
        Err(ProbeError::CapturePosition)
    );
    let p = fen("B:WK32:BK26");
    assert_eq!(tb.probe_wld_cached(&p), Err(ProbeError::NotInCache));
    assert_eq!(tb.probe_wld_raw(&p), Ok(Wld::Draw));
    assert_eq!(tb.probe_wld_cached(&p), Ok(Wld::Draw));
    let st = tb.stats();
    assert_eq!(st.probes, 4);
    // probe_many keeps the input order.
    let ps: Vec<Position> = naive3().keys().take(2000).copied().collect();
    let got = tb.probe_many(&ps);
    for (p, g) in ps.iter().zip(got) {
        assert_eq!(g, Ok(naive3()[p]));
    }
}

#[test]
fn missing_table_is_named_even_during_capture_resolution() {
    // W:W5:BK2 — 5-1 crowns into K v K (0101-nn); without that file the answer is an error.
    let mut names = all_2piece_slices();
    names.retain(|s| s != "0101-nn");
    let d = copy_of(&names.iter().map(|s| s.as_str()).collect::<Vec<_>>());
    let tb = Tablebase::open(d.path()).unwrap();
    let want = Err(ProbeError::MissingSlice {
        slice: "0101-nn".parse().unwrap(),
    });
    assert_eq!(tb.probe_wld(&fen("W:WK32:BK26")), want);
    // Capture resolution: B:WK29... with Black king on 25 to move: W:WK29:BK25 takes 29x22
    // into a 1-piece position (0001/... slices are present), so it still resolves; a capture
    // into K v K does not.
    assert_eq!(tb.probe_wld(&fen("W:WK29:BK25")), Ok(Wld::Win));
    // 3 pieces: White king on 18 takes 18x11? use a position whose capture lands in K v K.
    // B:WK14,K32:BK10 — Black 10x19 leaves K v K with White to move.
    assert_eq!(
        tb.probe_wld(&fen("B:WK14,K32:BK10")),
        Err(ProbeError::TooManyPieces { pieces: 3, max: 2 })
    );
    let d3 = copy_of(&["0201-nn", "0102-nn"]);
    let tb3 = Tablebase::open(d3.path()).unwrap();
    assert_eq!(tb3.probe_wld(&fen("B:WK14,K32:BK10")), want);
}

#[test]
fn empty_and_missing_directories() {
    let d = tempfile::tempdir().unwrap();
    assert!(matches!(
        Tablebase::open(d.path()),
        Err(ProbeError::NoTables { .. })
    ));
    assert!(matches!(
        Tablebase::open(d.path().join("nope")),
        Err(ProbeError::Io { .. })
    ));
    let tb = Tablebase::builder(d.path())
        .allow_empty(true)
        .open()
        .unwrap();
    assert_eq!(
        tb.probe_wld(&fen("W:WK32:BK26")),
        Err(ProbeError::TooManyPieces { pieces: 2, max: 0 })
    );
    // Files written later appear after a rescan.
    let s: Slice = "0101-nn".parse().unwrap();
    std::fs::copy(table_path(dir3(), &s), table_path(d.path(), &s)).unwrap();
    assert_eq!(tb.rescan().unwrap(), 1);
    assert_eq!(tb.probe_wld(&fen("W:WK32:BK26")), Ok(Wld::Win));
}

fn corrupt_copy(slice: &str, f: impl FnOnce(&mut Vec<u8>)) -> (tempfile::TempDir, PathBuf) {
    let d = copy_of(&[slice]);
    let s: Slice = slice.parse().unwrap();
    let path = table_path(d.path(), &s);
    let mut bytes = std::fs::read(&path).unwrap();
    f(&mut bytes);
    std::fs::write(&path, &bytes).unwrap();
    (d, path)
}

/// A K v K position whose block is stored as data (not a constant block).
fn kvk_probe() -> Position {
    fen("B:WK32:BK26")
}

#[test]
fn damaged_files_give_typed_errors() {
    let s = "0101-nn";
    let good = std::fs::read(table_path(dir3(), &s.parse().unwrap())).unwrap();
    let t = TableFile::open(&table_path(dir3(), &s.parse().unwrap())).unwrap();
    assert!(t.block_count() > 0, "K v K should store data blocks");
    let table_end = 128 + 16 * t.block_count() as usize;
    let len = good.len();
    type Damage = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(&str, Damage)> = vec![
        (
            "truncated",
            Box::new(move |b: &mut Vec<u8>| b.truncate(len - 10)),
        ),
        (
            "truncated to 50",
            Box::new(|b: &mut Vec<u8>| b.truncate(50)),
        ),
        ("empty", Box::new(|b: &mut Vec<u8>| b.clear())),
        ("magic", Box::new(|b: &mut Vec<u8>| b[0] ^= 1)),
        ("header count", Box::new(|b: &mut Vec<u8>| b[40] ^= 4)),
        ("offset table", Box::new(|b: &mut Vec<u8>| b[130] ^= 1)),
        (
            "data",
            Box::new(move |b: &mut Vec<u8>| b[table_end + 5] ^= 0x10),
        ),
        ("trailing", Box::new(|b: &mut Vec<u8>| b.push(0))),
    ];
    for (what, damage) in cases {
        let (d, path) = corrupt_copy(s, |b| damage(b));
        for access in [Access::Mmap, Access::Pread] {
            let tb = Tablebase::builder(d.path()).access(access).open().unwrap();
            let r = tb.probe_wld(&kvk_probe());
            match &r {
                Err(ProbeError::Table(TableError::Corrupt { path, .. })) => {
                    assert!(path.ends_with("0101-nn.egdb"), "{what}: {r:?}")
                }
                _ => panic!("{what}: expected Corrupt, got {r:?}"),
            }
            // The whole-file checksum catches every damage too.
            if let Ok(t) = TableFile::open_with(&path, access) {
                assert!(
                    t.verify_checksum().is_err() || t.decode_all().is_err(),
                    "{what}"
                );
            }
        }
    }
}

#[test]
fn renamed_file_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let from: Slice = "0101-nn".parse().unwrap();
    let to: Slice = "0110-n6".parse().unwrap();
    std::fs::copy(table_path(dir3(), &from), table_path(d.path(), &to)).unwrap();
    let tb = Tablebase::open(d.path()).unwrap();
    let p = fen("W:W30:BK2"); // 0110-n? White man on 30: rank 7 - 7 = 0... pick by slice
    let _ = p;
    // Find a position of slice 0110-n6 (White man on row 1, i.e. squares 5-8).
    let p = fen("B:W6:BK20");
    assert_eq!(Slice::of(&p), to);
    let r = tb.probe_wld(&p);
    assert!(
        matches!(&r, Err(ProbeError::Table(TableError::WrongSlice { expected, found, .. }))
            if *expected == to && *found == from),
        "{r:?}"
    );
}

#[test]
fn sixteen_threads_first_probe_same_answer() {
    for corrupt in [false, true] {
        let (d, _) = corrupt_copy("0101-nn", |b| {
            if corrupt {
                b[140] ^= 1;
            }
        });
        let tb = Arc::new(Tablebase::open(d.path()).unwrap());
        let barrier = Arc::new(std::sync::Barrier::new(16));
        let handles: Vec<_> = (0..16)
            .map(|_| {
                let tb = tb.clone();
                let b = barrier.clone();
                std::thread::spawn(move || {
                    b.wait();
                    tb.probe_wld(&kvk_probe())
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(results.iter().all(|r| *r == results[0]), "{results:?}");
        if corrupt {
            assert!(matches!(
                results[0],
                Err(ProbeError::Table(TableError::Corrupt { .. }))
            ));
        } else {
            assert_eq!(results[0], Ok(Wld::Draw));
        }
        assert_eq!(tb.stats().slices_opened, 1);
    }
}
