//! A unit solved split over R ranks (`driver::solve_unit_split`, issue 31) gives exactly the
//! unsplit solver's values, and its files are byte-identical to a single-process build's:
//! every unit of up to 4 pieces, over 2, 3 and 5 in-process ranks (`driver::run_local`, no
//! MPI), with small ranges (64 positions, so most predecessor updates cross ranks) and with the
//! build's block-aligned ranges. The reference is the plain `build` (checked against published
//! counts in tests/build_tables.rs) and the unsplit `driver::solve_unit`.

use checkers_egdb::driver::{
    run_local, solve_unit, solve_unit_split, write_unit, DecodedTables, UnitOptions, BLOCK_ALIGN,
};
use checkers_egdb::format::{table_path, CODEC_2BIT_ZSTD};
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
            // The files written from the split solve are the plain build's, byte for byte.
            write_unit(out.path(), &split, CODEC_2BIT_ZSTD).unwrap();
            for s in &u.slices {
                let want = std::fs::read(table_path(built.path(), s)).unwrap();
                let got = std::fs::read(table_path(out.path(), s)).unwrap();
                assert!(want == got, "{s} over {ranks} ranks aligned to {align}");
            }
        }
        units += 1;
    }
    assert_eq!(units, build_order(PIECES).len());
    assert!(crossed > 1_000_000, "only {crossed} updates crossed ranks");
}

/// A distance pass is not split: one clear error, before any exchange.
#[test]
fn a_distance_pass_is_refused_for_a_split_unit() {
    let built = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(built.path(), 2)).unwrap();
    let u = build_order(2).pop().unwrap();
    let uo = UnitOptions {
        wld_done: false,
        dtc: true,
        codec: CODEC_2BIT_ZSTD,
    };
    let r = run_local(2, |ex| {
        let deps = DecodedTables::new(built.path());
        solve_unit_split(&u, &deps, &uo, ex, 64, &NoProgress)
            .err()
            .map(|e| e.to_string())
    });
    for e in r {
        let e = e.expect("refused");
        assert!(
            e.contains("distance passes of split units are not implemented"),
            "{e}"
        );
    }
}
