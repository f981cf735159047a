//! Distance passes of units split over R ranks (issue 31, item 2: `--dtc` with split units):
//! the distance files written by `driver::build_unit_split` over 2 and 3 in-process ranks
//! (`driver::run_local`, no MPI) are byte-identical to a single-process `build --dtc`'s, for
//! every unit of up to 4 pieces and a few 5-piece units, with small ranges (64 positions, so
//! most in-unit man moves and king un-moves cross ranks) and with the build's block-aligned
//! ranges (range bounds inside the slices of units of more than one block); both after the
//! split WLD solve and from existing value files (a unit whose value files exist gets its
//! distance pass alone). The gathered distances of `driver::solve_unit_split` equal the
//! unsplit `driver::solve_unit`'s (values, don't cares, counts, longest distances and where
//! they are). The reference is the plain single-process build (its distance files checked by
//! tests/dtc_tables.rs against an independent forward search).

use checkers_egdb::driver::{
    build_unit_split, run_local, solve_unit, solve_unit_split, DecodedTables, Partition,
    UnitOptions, BLOCK_ALIGN,
};
use checkers_egdb::format::{dtc_path, table_path, CODEC_2BIT_ZSTD};
use checkers_egdb::planning::{build_order, closure};
use checkers_egdb::{build, BuildOptions, NoProgress, Unit};
use std::path::Path;

/// Build `u` split over `ranks` in-process ranks into `out` (distance files, and value files
/// unless `wld_done`), reading the dependencies from `built`, and check that every file
/// written equals `built`'s.
fn check_unit(u: &Unit, built: &Path, ranks: usize, align: u64, wld_done: bool) {
    let out = tempfile::tempdir().unwrap();
    let uo = UnitOptions {
        wld_done,
        dtc: true,
        codec: CODEC_2BIT_ZSTD,
    };
    let results = run_local(ranks, |ex| {
        let mut deps = DecodedTables::new(built);
        deps.begin_unit(u, 0);
        build_unit_split(u, &deps, &uo, ex, align, out.path(), &NoProgress).unwrap()
    });
    assert!(results[1..].iter().all(|r| r.0.is_none()));
    let sum = results[0].0.as_ref().expect("rank 0 reports");
    assert_eq!(sum.dtc_files, u.slices.len() as u64);
    assert_eq!(sum.dtc_positions, u.sizes.iter().sum::<u64>());
    let what = |s| format!("{s} over {ranks} ranks aligned to {align}, wld_done {wld_done}");
    for s in &u.slices {
        let want = std::fs::read(dtc_path(built, s)).unwrap();
        let got = std::fs::read(dtc_path(out.path(), s)).unwrap();
        assert!(want == got, "distance file of {}", what(s));
        if !wld_done {
            let want = std::fs::read(table_path(built, s)).unwrap();
            let got = std::fs::read(table_path(out.path(), s)).unwrap();
            assert!(want == got, "value file of {}", what(s));
        }
    }
    let files = std::fs::read_dir(out.path()).unwrap().count();
    let per_slice = if wld_done { 1 } else { 2 };
    assert_eq!(files, per_slice * u.slices.len(), "temporary files left");
}

/// Whether the ranges of `u` over `ranks` ranks aligned to `align` cut one of its slices
/// somewhere inside (a bound other than 0 and the slice's size).
fn cuts_inside(u: &Unit, ranks: usize, align: u64) -> bool {
    u.sizes.iter().any(|&n| {
        Partition::new(n, ranks, align)
            .bounds
            .iter()
            .any(|&b| b > 0 && b < n)
    })
}

#[test]
fn split_distance_passes_of_every_unit_of_up_to_4_pieces_write_the_single_process_files() {
    let built = tempfile::tempdir().unwrap();
    let mut opts = BuildOptions::new(built.path(), 4);
    opts.dtc = true;
    build(&opts).unwrap();
    let units = build_order(4);
    let mut crossed = 0u64;
    let mut block_cut = 0;
    for u in &units {
        for (ranks, align) in [(2, 64), (3, 64), (3, BLOCK_ALIGN)] {
            check_unit(u, built.path(), ranks, align, false);
            block_cut += usize::from(align == BLOCK_ALIGN && cuts_inside(u, ranks, align));
        }
        check_unit(u, built.path(), 3, 64, true);

        // The gathered distances equal the unsplit pass's, field by field.
        let uo = UnitOptions {
            wld_done: false,
            dtc: true,
            codec: CODEC_2BIT_ZSTD,
        };
        let mut deps = DecodedTables::new(built.path());
        deps.begin_unit(u, 0);
        let whole = solve_unit(u, &deps, &uo, &NoProgress).unwrap();
        let results = run_local(3, |ex| {
            let mut deps = DecodedTables::new(built.path());
            deps.begin_unit(u, 0);
            solve_unit_split(u, &deps, &uo, ex, 64, &NoProgress).unwrap()
        });
        crossed += results
            .iter()
            .map(|r| r.1.dtc_updates_sent + r.1.dtc_request_bytes)
            .sum::<u64>();
        let split = results.into_iter().next().unwrap().0.expect("rank 0");
        assert_eq!(split.dtc.len(), whole.dtc.len());
        for (a, b) in split.dtc.iter().zip(&whole.dtc) {
            assert_eq!(a.slice, b.slice);
            assert!(a.dtc == b.dtc, "distances of {}", a.slice);
            assert!(a.dont_care == b.dont_care, "don't cares of {}", a.slice);
            assert_eq!(
                (a.wins, a.losses, a.longest, a.longest_win, a.longest_loss),
                (b.wins, b.losses, b.longest, b.longest_win, b.longest_loss),
                "{}",
                a.slice
            );
        }
        for (a, b) in split.wld.iter().zip(&whole.wld) {
            assert!(a.values == b.values, "values of {}", a.slice);
        }
    }
    assert!(
        block_cut > 0,
        "no unit cut inside a slice by block-aligned ranges"
    );
    assert!(
        crossed > 100_000,
        "only {crossed} updates and bytes crossed ranks"
    );
}

/// Three 5-piece units with men on both sides (so in-unit man moves cross ranks) and more
/// than three blocks of positions (so the block-aligned ranges of 2 and 3 ranks fall inside
/// their slices), those whose dependency closures hold the fewest 5-piece units; their
/// closures built single-process with `--dtc` over all of 4 pieces.
#[test]
fn split_distance_passes_of_5_piece_units_write_the_single_process_files() {
    let all = build_order(5);
    let mut picked: Vec<(usize, &Unit)> = all
        .iter()
        .filter(|u| {
            let m = u.slices[0].material;
            u.pieces == 5 && m.bm > 0 && m.wm > 0 && u.sizes.iter().sum::<u64>() > 3 * BLOCK_ALIGN
        })
        .map(|u| {
            let fives = closure(&all, &u.slices[0])
                .iter()
                .filter(|c| c.pieces == 5)
                .count();
            (fives, u)
        })
        .collect();
    picked.sort_by_key(|p| (p.0, p.1.id));
    picked.truncate(3);
    assert_eq!(picked.len(), 3);
    for (_, u) in &picked {
        eprintln!("unit {} ({:?} positions)", u.slices[0], u.sizes);
    }
    let built = tempfile::tempdir().unwrap();
    let mut opts = BuildOptions::new(built.path(), 4);
    opts.dtc = true;
    build(&opts).unwrap();
    for (_, u) in &picked {
        let mut opts = BuildOptions::new(built.path(), 5);
        opts.dtc = true;
        opts.slice = Some(u.slices[0]);
        opts.with_deps = true;
        build(&opts).unwrap();
    }
    for (_, u) in &picked {
        for ranks in [2, 3] {
            assert!(cuts_inside(u, ranks, BLOCK_ALIGN));
            check_unit(u, built.path(), ranks, BLOCK_ALIGN, false);
        }
        check_unit(u, built.path(), 3, 4096, true);
    }
}
