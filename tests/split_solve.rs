//! A unit solved split over R ranks (`driver::solve_unit_split`, issue 31) gives exactly the
//! unsplit solver's values, and its files, written with every rank encoding its own blocks
//! (`driver::build_unit_split`), are byte-identical to a single-process build's: every unit of
//! up to 4 pieces, over 2, 3 and 5 in-process ranks (`driver::run_local`, no MPI), with small
//! ranges (64 positions, so most predecessor updates cross ranks and the values move to the
//! block-aligned ranges before encoding) and with the build's block-aligned ranges; codecs 2
//! and 4. The reference is the plain `build` (checked against published counts in
//! tests/build_tables.rs) and the unsplit `driver::solve_unit`.

use checkers_egdb::driver::{
    build_unit_split, run_local, solve_unit, solve_unit_split, write_unit, DecodedTables,
    UnitOptions, BLOCK_ALIGN,
};
use checkers_egdb::format::{table_path, CODEC_2BIT_THREATS, CODEC_2BIT_ZSTD};
use checkers_egdb::planning::build_order;
use checkers_egdb::{build, BuildOptions, NoProgress};

const PIECES: u32 = 4;

#[test]
fn every_unit_of_up_to_4_pieces_split_equals_unsplit_and_writes_the_same_bytes() {
    let built = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(built.path(), PIECES)).unwrap();
    let out = tempfile::tempdir().unwrap();
    let uo = UnitOptions {
        wld_done: false,
        dtc: false,
        codec: CODEC_2BIT_ZSTD,
    };
    let mut crossed = 0u64;
    let mut units = 0;
    for u in build_order(PIECES) {
        // Each rank reads the dependencies through its own store, as MPI ranks do.
        let mut whole_deps = DecodedTables::new(built.path());
        whole_deps.begin_unit(&u, 0);
        let whole = solve_unit(&u, &whole_deps, &uo, &NoProgress).unwrap();
        for (ranks, align) in [(2, 64), (3, 64), (5, 64), (3, BLOCK_ALIGN)] {
            let results = run_local(ranks, |ex| {
                let mut deps = DecodedTables::new(built.path());
                deps.begin_unit(&u, 0);
                solve_unit_split(&u, &deps, &uo, ex, align, &NoProgress).unwrap()
            });
            crossed += results.iter().map(|r| r.1.updates_sent).sum::<u64>();
            assert!(
                results[1..].iter().all(|r| r.0.is_none()),
                "only rank 0 gathers"
            );
            let split = results
                .into_iter()
                .next()
                .unwrap()
                .0
                .expect("rank 0 gathers");
            assert_eq!(split.wld.len(), whole.wld.len());
            for (a, b) in split.wld.iter().zip(&whole.wld) {
                let what = format!("{} over {ranks} ranks aligned to {align}", a.slice);
                assert_eq!(a.slice, b.slice);
                assert!(a.values == b.values, "values of {what}");
                assert!(a.captures == b.captures, "captures of {what}");
                assert_eq!(
                    (a.wins, a.losses, a.draws),
                    (b.wins, b.losses, b.draws),
                    "{what}"
                );
                assert_eq!((a.longest, a.plies), (b.longest, b.plies), "{what}");
            }
            // The files written from the gathered values are the plain build's, byte for byte.
            write_unit(out.path(), &split, CODEC_2BIT_ZSTD).unwrap();
            for s in &u.slices {
                let want = std::fs::read(table_path(built.path(), s)).unwrap();
                let got = std::fs::read(table_path(out.path(), s)).unwrap();
                assert!(want == got, "{s} over {ranks} ranks aligned to {align}");
            }
            // And so are those every rank writes its blocks of.
            let each = tempfile::tempdir().unwrap();
            let results = run_local(ranks, |ex| {
                let mut deps = DecodedTables::new(built.path());
                deps.begin_unit(&u, 0);
                build_unit_split(&u, &deps, &uo, ex, align, each.path(), &NoProgress).unwrap()
            });
            assert!(results[1..].iter().all(|r| r.0.is_none()));
            let sum = results[0].0.as_ref().expect("rank 0 reports");
            assert_eq!(sum.slices_built, u.slices.len() as u64);
            assert_eq!(sum.positions, u.sizes.iter().sum::<u64>());
            let wins: u64 = whole.wld.iter().map(|x| x.wins).sum();
            assert_eq!(sum.wins, wins);
            for s in &u.slices {
                let want = std::fs::read(table_path(built.path(), s)).unwrap();
                let got = std::fs::read(table_path(each.path(), s)).unwrap();
                assert!(
                    want == got,
                    "{s} over {ranks} ranks aligned to {align}, written by every rank"
                );
            }
            assert_eq!(
                std::fs::read_dir(each.path()).unwrap().count(),
                u.slices.len(),
                "temporary files left"
            );
        }
        units += 1;
    }
    assert_eq!(units, build_order(PIECES).len());
    assert!(crossed > 1_000_000, "only {crossed} updates crossed ranks");
}

/// Codec 4 (its don't cares are decided per position from the index: each rank's blocks must
/// start at the right index), written by every rank: the single-process bytes.
#[test]
fn split_units_written_by_every_rank_in_codec_4_are_the_single_process_bytes() {
    let t = tempfile::tempdir().unwrap();
    let built = t.path().to_path_buf();
    let mut opts = BuildOptions::new(&built, PIECES);
    opts.codec = CODEC_2BIT_THREATS;
    build(&opts).unwrap();
    let uo = UnitOptions {
        wld_done: false,
        dtc: false,
        codec: CODEC_2BIT_THREATS,
    };
    let mut multi_block = 0;
    for u in build_order(PIECES) {
        if u.sizes.iter().sum::<u64>() > BLOCK_ALIGN {
            multi_block += 1;
        }
        for (ranks, align) in [(3, 64), (2, BLOCK_ALIGN)] {
            let out = tempfile::tempdir().unwrap();
            run_local(ranks, |ex| {
                let mut deps = DecodedTables::new(&built);
                deps.begin_unit(&u, 0);
                build_unit_split(&u, &deps, &uo, ex, align, out.path(), &NoProgress).unwrap()
            });
            for s in &u.slices {
                let want = std::fs::read(table_path(&built, s)).unwrap();
                let got = std::fs::read(table_path(out.path(), s)).unwrap();
                assert!(want == got, "{s} over {ranks} ranks aligned to {align}");
            }
        }
    }
    assert!(multi_block > 0, "no unit of more than one block");
}

/// A rank whose table directory is not the one rank 0 writes (here: another, empty directory
/// given to rank 1) cannot write its blocks: every rank stops with an error (rank 1 naming the
/// cause, rank 0 naming rank 1), and rank 0's directory is left without the file or its
/// temporary file. (A rank whose blocks of a slice are all constant writes nothing: the units
/// are tried from the largest down until rank 1 has bytes to write.)
#[test]
fn a_rank_not_sharing_the_directory_stops_the_split_write() {
    let built = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(built.path(), PIECES)).unwrap();
    let uo = UnitOptions {
        wld_done: false,
        dtc: false,
        codec: CODEC_2BIT_ZSTD,
    };
    let mut units = build_order(PIECES);
    units.sort_by_key(|u| std::cmp::Reverse(u.sizes.iter().sum::<u64>()));
    let mut stopped = false;
    for u in units.iter().take(8) {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let results = run_local(2, |ex| {
            let mut deps = DecodedTables::new(built.path());
            deps.begin_unit(u, 0);
            let dir = if ex.rank() == 0 { a.path() } else { b.path() };
            build_unit_split(u, &deps, &uo, ex, BLOCK_ALIGN, dir, &NoProgress)
                .err()
                .map(|e| e.to_string())
        });
        assert_eq!(std::fs::read_dir(b.path()).unwrap().count(), 0);
        let Some(e1) = &results[1] else {
            // Rank 1 had nothing to write: rank 0's files are whole and right.
            assert!(results[0].is_none(), "{:?}", results[0]);
            for s in &u.slices {
                let want = std::fs::read(table_path(built.path(), s)).unwrap();
                let got = std::fs::read(table_path(a.path(), s)).unwrap();
                assert!(want == got, "{s}");
            }
            continue;
        };
        assert!(
            e1.contains("not there on this rank") && e1.contains("shares"),
            "{e1}"
        );
        let e0 = results[0].as_ref().expect("rank 0 fails");
        assert!(e0.contains("rank 1 failed"), "{e0}");
        // Slices written before the failing one may be in place (whole); no temporary file.
        for f in std::fs::read_dir(a.path()).unwrap() {
            let name = f.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!name.contains(".tmp."), "{name} left");
        }
        stopped = true;
        break;
    }
    assert!(stopped, "rank 1 never had blocks to write");
}
