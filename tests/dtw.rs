//! Depth-to-win tables (`egdb build --dtw`, issue 33) and `Tablebase::probe_dtw`, checked entry
//! by entry against the independent DTW oracle (tests/dtw_oracle: forward iteration over every
//! position of at most 4 pieces with the path move generator, no slices, no un-moves) and
//! against facts decided outside the code (issue 33, ../shared/reference.md): with no men on the
//! board DTW = DTC (K v K longest 11, 2K v K 33 / 34); DTW >= DTC for every won or lost
//! position; a fastest line has DTW plies and ends with the loser unable to move.

mod dtw_oracle;
mod probe_common;

use checkers_egdb::{build, BuildOptions, Dtc, Material, Position, Tablebase, Wld};
use rayon::prelude::*;
use std::path::Path;

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap()
}

fn build_all(dir: &Path, pieces: u32, dtc: bool, dtw: bool) {
    let mut o = BuildOptions::new(dir, pieces);
    o.dtc = dtc;
    o.dtw = dtw;
    build(&o).unwrap();
}

fn tables(d: &Path, ext: &str) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(ext))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn four_pieces_equal_the_oracle_and_the_facts() {
    let dir = tempfile::tempdir().unwrap();
    build_all(dir.path(), 4, true, true);
    let tb = Tablebase::open(dir.path()).unwrap();
    let o = dtw_oracle::solve(4);
    assert!(o.positions.len() > 10_000_000);
    let bad: Vec<String> = o
        .positions
        .par_iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let want = match o.value[i] {
                Wld::Win => Dtc::Win(o.dtw[i].unwrap()),
                Wld::Loss => Dtc::Loss(o.dtw[i].unwrap()),
                Wld::Draw => Dtc::Draw,
            };
            let got = tb.probe_dtw(p).unwrap();
            if got != want {
                return Some(format!("{}: tables {got}, oracle {want}", p.to_fen()));
            }
            // DTW >= DTC; equal without men.
            let c = tb.probe_dtc(p).unwrap();
            if c.wld() != got.wld() {
                return Some(format!("{}: dtc {c}, dtw {got}", p.to_fen()));
            }
            if let (Some(a), Some(b)) = (got.plies(), c.plies()) {
                // K v K: the only conversion (a capture) ends the game.
                let kk = Material::of(p) == Material::new(0, 1, 0, 1).unwrap();
                if a < b || (kk && a != b) {
                    return Some(format!("{}: dtw {a} against dtc {b}", p.to_fen()));
                }
            }
            None
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{} differences, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );

    // Published distances of kings-only endings.
    assert_eq!(tb.probe_dtw(&pos("B:WK13:BK1")).unwrap(), Dtc::Win(11));
    assert_eq!(tb.probe_dtw(&pos("B:WK14:BK1,K2")).unwrap(), Dtc::Win(33));
    assert_eq!(tb.probe_dtw(&pos("B:WK32:B")).unwrap(), Dtc::Loss(0));
    let (mut kk, mut two, mut one) = (0, 0, 0);
    for (i, p) in o.positions.iter().enumerate() {
        let m = Material::of(p);
        let d = o.dtw[i];
        if m == Material::new(0, 1, 0, 1).unwrap() && o.value[i] == Wld::Win {
            kk = kk.max(d.unwrap());
        }
        if m == Material::new(0, 2, 0, 1).unwrap() {
            match (p.side, o.value[i]) {
                (checkers_egdb::Color::Black, Wld::Win) => two = two.max(d.unwrap()),
                (checkers_egdb::Color::White, Wld::Loss) => one = one.max(d.unwrap()),
                _ => {}
            }
        }
    }
    // K v K longest 11; 2K v K 33 with the kings to move, 34 for the lone king (the
    // published figures, which DTW shares with DTC here).
    assert_eq!((kk, two, one), (11, 33, 34));

    // A fastest line from every position of a sample: DTW plies, the loser unable to move at
    // the end, the depth falling by one each ply (moves chosen from the oracle's successors).
    for (i, p) in o.positions.iter().enumerate().step_by(997) {
        let Some(mut d) = o.dtw[i] else { continue };
        let mut cur = *p;
        let mut plies = 0;
        while d > 0 {
            let next = cur
                .moves()
                .iter()
                .map(|m| cur.apply(m))
                .find(|q| tb.probe_dtw(q).unwrap().plies() == Some(d - 1))
                .expect("a successor one ply closer");
            cur = next;
            d -= 1;
            plies += 1;
        }
        assert!(
            cur.moves().is_empty(),
            "{} ends with a move left",
            p.to_fen()
        );
        assert_eq!(Some(plies), o.dtw[i]);
    }
}

#[test]
fn dtw_only_build_on_wld_files_gives_the_same_bytes_and_resumes() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    build_all(a.path(), 3, false, true);
    build_all(b.path(), 3, false, false);
    assert!(tables(b.path(), ".dtw").is_empty());
    build_all(b.path(), 3, false, true);
    let ta = tables(a.path(), ".dtw");
    assert!(ta.len() > 20);
    assert_eq!(ta, tables(b.path(), ".dtw"));
    // One thread: the same bytes.
    let c = tempfile::tempdir().unwrap();
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| build_all(c.path(), 3, false, true));
    assert_eq!(ta, tables(c.path(), ".dtw"));
    // Resume: a deleted and a damaged .dtw are rebuilt, the others kept.
    let names: Vec<&String> = ta.iter().map(|x| &x.0).collect();
    std::fs::remove_file(b.path().join(names[3])).unwrap();
    // The largest file: a slice with won and lost positions and stored blocks.
    let big = ta.iter().max_by_key(|x| x.1.len()).map(|x| &x.0).unwrap();
    assert_ne!(big, names[3]);
    let p = b.path().join(big);
    let mut bytes = std::fs::read(&p).unwrap();
    let k = bytes.len() - 9;
    bytes[k] ^= 0x10;
    std::fs::write(&p, &bytes).unwrap();
    let mut o = BuildOptions::new(b.path(), 3);
    o.dtw = true;
    let s = build(&o).unwrap();
    // Their units are rebuilt (a unit is a slice and its partner), the rest skipped.
    assert!((2..=4).contains(&s.dtw_files), "{}", s.dtw_files);
    assert_eq!((s.dtw_files + s.dtw_skipped) as usize, ta.len());
    assert_eq!(ta, tables(b.path(), ".dtw"));
    // A damaged .dtw is an error when probed, never a value.
    std::fs::write(&p, &bytes).unwrap();
    let tb = Tablebase::builder(b.path())
        .verify_on_open(true)
        .open()
        .unwrap();
    let slice: checkers_egdb::Slice = big.trim_end_matches(".dtw").parse().unwrap();
    let ix = checkers_egdb::format::SliceIndex::new(slice);
    let errs = (0..ix.size())
        .filter_map(|i| {
            let q = ix.unrank(i).unwrap();
            (tb.probe_wld(&q).unwrap() != Wld::Draw && !q.moves().is_empty())
                .then(|| tb.probe_dtw(&q).is_err())
        })
        .collect::<Vec<bool>>();
    assert!(!errs.is_empty() && errs.iter().all(|&e| e));
    // Missing files: a clear error.
    std::fs::remove_file(&p).unwrap();
    let tb = Tablebase::open(b.path()).unwrap();
    let q = ix.unrank(0).unwrap();
    if tb.probe_wld(&q).unwrap() != Wld::Draw {
        assert!(tb
            .probe_dtw(&q)
            .unwrap_err()
            .to_string()
            .contains("egdb build --dtw"));
    }
}

/// The depth-to-win pass holds a few bytes per position of a unit and one per position of the
/// depths it reads: a budget too small for a unit is refused before anything is solved or
/// written, naming the unit and the memory needed.
#[test]
fn dtw_pass_over_the_memory_budget_is_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = BuildOptions::new(dir.path(), 3);
    o.dtw = true;
    o.memory = Some(1000); // far below any 3-piece unit and the depths it reads
    let e = build(&o).expect_err("a 1000-byte budget cannot hold a depth-to-win pass");
    let msg = e.to_string();
    assert!(msg.contains("depth-to-win pass of unit"), "{msg}");
    assert!(msg.contains("--memory"), "{msg}");
    assert!(
        tables(dir.path(), ".egdb").is_empty(),
        "value files were written"
    );
    assert!(
        tables(dir.path(), ".dtw").is_empty(),
        "depth-to-win files were written"
    );
    // The same build with the default budget goes through.
    o.memory = None;
    build(&o).unwrap();
    assert!(!tables(dir.path(), ".dtw").is_empty());
}

/// Under the smallest budget the depth-to-win pass accepts (its largest unit's figure), the
/// depths read are dropped and read again and the WLD values partly served through the block
/// cache: the files are the same bytes as under the default budget.
#[test]
fn dtw_files_do_not_depend_on_the_memory_budget() {
    let a = tempfile::tempdir().unwrap();
    build_all(a.path(), 4, false, false);
    let b = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(a.path()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), b.path().join(e.file_name())).unwrap();
    }
    build_all(a.path(), 4, false, true);
    let units = checkers_egdb::planning::build_order(4);
    let need = units
        .iter()
        .map(checkers_egdb::planning::dtw_unit_bytes)
        .max()
        .unwrap();
    let mut o = BuildOptions::new(b.path(), 4);
    o.dtw = true;
    o.memory = Some(need - 1);
    let e = build(&o).expect_err("one byte below the largest unit's need");
    assert!(e.to_string().contains("depth-to-win pass of unit"), "{e}");
    assert!(tables(b.path(), ".dtw").is_empty());
    o.memory = Some(need);
    build(&o).unwrap();
    let ta = tables(a.path(), ".dtw");
    assert!(ta.len() > 300);
    assert_eq!(ta, tables(b.path(), ".dtw"));
}
