//! The generator's dependency lookup (`DecodedTables::lookup`) reads the slices the generator
//! handed over (`DecodedTables::insert`: the true value at every position) without a capture
//! test or search. It must answer exactly as the probe's capture-resolving search
//! (`probe::resolve`) over the written files does, at every position: capture positions,
//! positions without a move, either side to move. A store of the files alone reads the
//! positions without a capture of its codec-2 slices directly too (no test for a move), and
//! must answer as that search does.
use crate::board::{Color, Position};
use crate::generate::{build, solve_unit, BuildOptions, NoProgress, UnitOptions};
use crate::index::SliceIndex;
use crate::plan::build_order;
use crate::probe::resolve;
use crate::store::DecodedTables;

#[test]
fn lookup_of_handed_over_slices_agrees_with_the_capture_search_over_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    build(&BuildOptions::new(dir, 4)).expect("build of at most 4 pieces");

    // `files`: values decoded from the files (don't cares at capture positions), read by
    // search. `handed`: every unit solved again and handed over as the builder does.
    let files = DecodedTables::new(dir);
    let handed = DecodedTables::new(dir);
    let units = build_order(4);
    for unit in &units {
        let uo = UnitOptions {
            wld_done: false,
            dtc: false,
            codec: crate::table::CODEC_2BIT_ZSTD,
        };
        let solved = solve_unit(unit, &files, &uo, &NoProgress).expect("solves");
        for sv in solved.wld {
            handed.insert(&sv.slice, &sv.values).unwrap();
        }
    }

    let (mut checked, mut captures, mut no_move) = (0u64, 0u64, 0u64);
    let mut seen = [0u64; 3];
    for unit in &units {
        for s in &unit.slices {
            let ix = SliceIndex::new(*s);
            for i in 0..ix.size() {
                let p = ix.unrank(i).unwrap();
                // The same board with White to move (an exit seen from the mover's side) and
                // its colour flip (the stored Black-to-move form of another slice).
                let white = Position {
                    side: Color::White,
                    ..p
                };
                for q in [p, white] {
                    let want = resolve(&files, &q).unwrap();
                    assert_eq!(handed.lookup(&q).unwrap(), want, "{q:?} of {s}");
                    // A store of files alone answers by search, the same.
                    assert_eq!(files.lookup(&q).unwrap(), want, "{q:?} of {s} (files)");
                    seen[want as usize] += 1;
                    checked += 1;
                    captures += u64::from(q.has_capture());
                    no_move += u64::from(q.count_moves() == 0);
                }
            }
        }
    }
    // Every kind of position was met, so the comparison covers each branch.
    assert!(captures > 100_000, "{captures} capture positions");
    assert!(no_move > 100, "{no_move} positions without a move");
    assert!(
        seen.iter().all(|&n| n > 100_000),
        "{seen:?} (loss, draw, win)"
    );
    assert!(checked > 10_000_000, "{checked}");
}

/// The lookup's per-thread memo (slice values and men rank per men configuration) never
/// outlives what it points at: after a slice is released, or its store dropped and another
/// made, a lookup answers from what the store holds now.
#[test]
fn the_lookup_memo_follows_releases_and_new_stores() {
    use crate::board::Wld;
    use crate::slice::Slice;
    let tmp = tempfile::tempdir().unwrap();
    // No files: a slice not handed over is a missing dependency.
    let s: Slice = "0101-nn".parse().unwrap();
    let ix = SliceIndex::new(s);
    // Positions without a capture (a capture would look up the slice with one king).
    let quiet: Vec<Position> = (0..ix.size())
        .map(|i| ix.unrank(i).unwrap())
        .filter(|p| !p.has_capture())
        .collect();
    assert!(quiet.len() > 500, "{}", quiet.len());
    let n = ix.size() as usize;

    let mut a = DecodedTables::new(tmp.path());
    a.insert(&s, &vec![Wld::Win as u8; n]).unwrap();
    for p in &quiet {
        assert_eq!(a.lookup(p).unwrap(), Wld::Win, "{p:?}");
    }
    a.release(&s);
    for p in &quiet {
        assert!(a.lookup(p).is_err(), "released slice still read at {p:?}");
    }
    a.insert(&s, &vec![Wld::Loss as u8; n]).unwrap();
    for p in &quiet {
        assert_eq!(a.lookup(p).unwrap(), Wld::Loss, "{p:?}");
    }
    drop(a);

    let b = DecodedTables::new(tmp.path());
    for p in &quiet {
        assert!(
            b.lookup(p).is_err(),
            "a dropped store's slice read at {p:?}"
        );
    }
    b.insert(&s, &vec![Wld::Draw as u8; n]).unwrap();
    for p in &quiet {
        assert_eq!(b.lookup(p).unwrap(), Wld::Draw, "{p:?}");
    }
}

/// A slice handed over while its old file is damaged (a build rewriting a damaged unit) is
/// never dropped before its new file is written: under a budget too small to keep it, a
/// later unit's eviction or release used to drop it because *a* file existed, and the
/// lookups then read the damaged file (a dependency error on the build's own fresh slice,
/// found by a code review). Once `written`, it may go, and is read from the file.
#[test]
fn a_handed_over_slice_is_kept_until_its_file_is_written() {
    use crate::board::Wld;
    use crate::slice::Slice;
    let tmp = tempfile::tempdir().unwrap();
    let s: Slice = "0101-nn".parse().unwrap();
    // The old file: damaged (not a table at all).
    std::fs::write(crate::table::table_path(tmp.path(), &s), b"damaged").unwrap();
    let ix = SliceIndex::new(s);
    let quiet: Vec<Position> = (0..ix.size())
        .map(|i| ix.unrank(i).unwrap())
        .filter(|p| !p.has_capture())
        .collect();
    let n = ix.size() as usize;
    // One byte of budget: nothing fits, every resident slice not kept is evicted.
    let mut a = DecodedTables::with_budget(tmp.path(), Some(1));
    a.insert(&s, &vec![Wld::Win as u8; n]).unwrap();
    let other = build_order(3)
        .into_iter()
        .find(|u| !u.slices.contains(&s))
        .unwrap();
    a.begin_unit(&other, 0);
    let last = std::collections::HashMap::from([(s, 0usize)]);
    a.release_done(0, &last);
    for p in &quiet {
        assert_eq!(a.lookup(p).unwrap(), Wld::Win, "{p:?}");
    }
    // Written (here: still the damaged file, so a read from it must fail): now it goes.
    a.written(&[s]);
    a.begin_unit(&other, 0);
    assert!(a.lookup(&quiet[0]).is_err(), "read from the damaged file");
}
