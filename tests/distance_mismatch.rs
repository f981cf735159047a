//! A distance file (`.dtc`, `.dtw`) that does not belong to the value files beside it is
//! refused by the probe, never read as distances: its header's win and loss counts must be the
//! value file's (every build writes them so; `egdb verify` checks the same), and a depth to win
//! must have the parity of the value (a win ends on the winner's move: odd plies; a loss on
//! the other side's: even). The files are crafted as a copy from another build or a damaged
//! writer would leave them: fields changed and every checksum recomputed.

mod forge;

use checkers_egdb::format::{dtc_path, dtw_path};
use checkers_egdb::{build, BuildOptions, Dtc, Position, ProbeError, Slice, Tablebase};
use std::path::Path;

fn rd64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// The file's checksums recomputed (`forge::rechecksum`), written to `path`.
fn resum(path: &Path, b: &mut [u8]) {
    forge::rechecksum(b);
    std::fs::write(path, b).unwrap();
}

/// Rewrite the distance file at `path` with one win more (one fewer when every position is
/// already decided), its checksums recomputed; returns the new win count.
fn with_other_counts(path: &Path, b: &mut [u8]) -> u64 {
    let (pos, wins, losses) = (rd64(b, 24), rd64(b, 32), rd64(b, 40));
    let w = if wins + losses < pos {
        wins + 1
    } else {
        wins - 1
    };
    b[32..40].copy_from_slice(&w.to_le_bytes());
    resum(path, b);
    w
}

/// The tables of at most 3 pieces with depth-to-win files, in a new directory.
fn tables_to_3_with_dtw() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut o = BuildOptions::new(dir.path(), 3);
    o.dtw = true;
    build(&o).unwrap();
    dir
}

/// A won or lost position of `s` with Black to move and no capture (probed directly).
fn decided_position(tb: &Tablebase, s: Slice) -> Position {
    let ix = checkers_egdb::format::SliceIndex::new(s);
    (0..ix.size())
        .filter_map(|i| ix.unrank(i).ok())
        .find(|p| {
            !matches!(tb.probe_dtw(p), Ok(Dtc::Draw) | Err(_))
                && tb.probe_dtc(p).is_ok_and(|d| d != Dtc::Draw)
        })
        .expect("a decided position")
}

#[test]
fn distance_files_of_other_values_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = BuildOptions::new(dir.path(), 3);
    o.dtc = true;
    o.dtw = true;
    build(&o).unwrap();
    // 2 kings against a king (the published 2K v K: wins and losses, no capture everywhere).
    let s: Slice = "0201-nn".parse().unwrap();
    let p = {
        let tb = Tablebase::open(dir.path()).unwrap();
        decided_position(&tb, s)
    };
    for (path, dtw) in [
        (dtc_path(dir.path(), &s), false),
        (dtw_path(dir.path(), &s), true),
    ] {
        let good = std::fs::read(&path).unwrap();
        let mut b = good.clone();
        let w = with_other_counts(&path, &mut b);
        let tb = Tablebase::open(dir.path()).unwrap();
        let r = if dtw {
            tb.probe_dtw(&p)
        } else {
            tb.probe_dtc(&p)
        };
        match r {
            Err(ProbeError::Table(e)) => {
                assert!(
                    e.to_string().contains("the value file of 0201-nn says"),
                    "{e}"
                )
            }
            other => panic!("{} with {w} wins read as {other:?}", path.display()),
        }
        std::fs::write(&path, &good).unwrap();
        let tb = Tablebase::open(dir.path()).unwrap();
        let r = if dtw {
            tb.probe_dtw(&p)
        } else {
            tb.probe_dtc(&p)
        };
        assert!(r.is_ok(), "{r:?}");
    }
}

/// A `.dtw` file whose every depth is one more than the value file allows (a uniform file: the
/// depth is the header's uniform byte): refused at the first probe.
#[test]
fn a_depth_of_the_wrong_parity_is_refused() {
    let dir = tables_to_3_with_dtw();
    let tb = Tablebase::open(dir.path()).unwrap();
    // A uniform depth-to-win file of a slice with a decided position that has a move (one
    // without a move is a loss in 0 plies without reading the file).
    let mut found = None;
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "dtw") {
            continue;
        }
        let b = std::fs::read(&path).unwrap();
        if b[18] == 0xFF {
            continue;
        }
        let s: Slice = path.file_stem().unwrap().to_str().unwrap().parse().unwrap();
        let ix = checkers_egdb::format::SliceIndex::new(s);
        if let Some(p) = (0..ix.size())
            .filter_map(|i| ix.unrank(i).ok())
            .find(|p| matches!(tb.probe_dtw(p), Ok(Dtc::Win(_) | Dtc::Loss(1..))))
        {
            found = Some((path, b, p));
            break;
        }
    }
    drop(tb);
    let (path, mut b, p) = found.expect("a uniform .dtw file of a decided slice");
    b[18] += 1;
    resum(&path, &mut b);
    let tb = Tablebase::open(dir.path()).unwrap();
    match tb.probe_dtw(&p) {
        Err(ProbeError::Table(e)) => assert!(e.to_string().contains("depth"), "{e}"),
        other => panic!("{} with depth {} read as {other:?}", path.display(), b[18]),
    }
}

/// A distance file first asked for while its value file is missing (`has_dtw` then answers the
/// value file's error) is checked against the value file once a rescan finds it: a `.dtw` of
/// other counts is refused then too, not kept from the first look unchecked.
#[test]
fn a_distance_file_seen_before_its_value_file_is_still_checked() {
    let dir = tables_to_3_with_dtw();
    let s: Slice = "0201-nn".parse().unwrap();
    let p = {
        let tb = Tablebase::open(dir.path()).unwrap();
        decided_position(&tb, s)
    };
    // The depth file of other counts (one more win), checksums valid.
    let path = dtw_path(dir.path(), &s);
    let mut b = std::fs::read(&path).unwrap();
    let w = with_other_counts(&path, &mut b);
    // The value file moved away while the directory is opened and the depth file looked at.
    let value = checkers_egdb::format::table_path(dir.path(), &s);
    let aside = dir.path().join("aside.bin");
    std::fs::rename(&value, &aside).unwrap();
    let tb = Tablebase::open(dir.path()).unwrap();
    match tb.has_dtw(&p) {
        Err(ProbeError::MissingSlice { .. }) => {}
        other => panic!("has_dtw without the value file: {other:?}"),
    }
    std::fs::rename(&aside, &value).unwrap();
    tb.rescan().unwrap();
    match tb.probe_dtw(&p) {
        Err(ProbeError::Table(e)) => {
            assert!(
                e.to_string().contains("the value file of 0201-nn says"),
                "{e}"
            )
        }
        other => panic!("a .dtw of {w} wins read as {other:?}"),
    }
}
