//! A split unit's plies run in rounds of bounded exchange buffers (`driver::round_updates`
//! updates for other ranks per rank and round, so that a rank's memory beside its share of the
//! unit is `driver::exchange_round_bytes` whatever the unit): with the cap set to a few dozen
//! updates, every unit of up to 4 pieces of at least 24,576 positions split over 3 in-process ranks (`driver::run_local`, no
//! MPI, ranges of 64 positions so that most updates cross ranks) runs many rounds per ply, and
//! its value and distance files are byte-identical to a single-process `build --dtc`'s (whose
//! files tests/build_tables.rs and tests/dtc_tables.rs check against published counts and an
//! independent forward search).
//!
//! Its own test binary: the cap is process-wide.

use checkers_egdb::driver::{
    build_unit_split, run_local, set_round_updates_for_tests, DecodedTables, UnitOptions,
};
use checkers_egdb::format::{dtc_path, table_path, CODEC_2BIT_ZSTD};
use checkers_egdb::planning::build_order;
use checkers_egdb::{build, BuildOptions, NoProgress};

#[test]
fn plies_exchanged_in_many_small_rounds_give_the_single_process_files() {
    let built = tempfile::tempdir().unwrap();
    let mut opts = BuildOptions::new(built.path(), 4);
    opts.dtc = true;
    build(&opts).unwrap();
    set_round_updates_for_tests(40);
    let uo = UnitOptions {
        wld_done: false,
        dtc: true,
        codec: CODEC_2BIT_ZSTD,
    };
    let (mut extra_rounds, mut units) = (0u64, 0);
    // The units whose ranges hold at least two chunks of 4,096 positions (rounds are cut
    // between chunks); every unit split in one round a ply is tests/split_solve.rs's.
    let big = |u: &checkers_egdb::Unit| u.sizes.iter().sum::<u64>() >= 3 * 2 * 4096;
    for u in build_order(4).into_iter().filter(big) {
        let out = tempfile::tempdir().unwrap();
        let results = run_local(3, |ex| {
            let mut deps = DecodedTables::new(built.path());
            deps.begin_unit(&u, 0);
            build_unit_split(&u, &deps, &uo, ex, 64, out.path(), &NoProgress).unwrap()
        });
        assert!(results[0].0.is_some(), "rank 0 reports");
        for (rank, (_, st)) in results.iter().enumerate() {
            // One round per ply (plies 0..=plies of each propagation) without the cap.
            let one_per_ply = u64::from(st.plies) + 1 + u64::from(st.dtc_plies) + 1;
            assert!(st.rounds >= one_per_ply, "rank {rank} of {}", u.slices[0]);
            if rank == 0 {
                extra_rounds += st.rounds - one_per_ply;
            }
        }
        for s in &u.slices {
            for path in [table_path, dtc_path] {
                let want = std::fs::read(path(built.path(), s)).unwrap();
                let got = std::fs::read(path(out.path(), s)).unwrap();
                assert!(
                    want == got,
                    "{} of {s} in rounds of 40 updates",
                    path(out.path(), s).display()
                );
            }
        }
        units += 1;
    }
    assert!(units >= 10, "{units} units");
    // The cap was reached: the largest 4-piece units' plies send thousands of updates.
    assert!(
        extra_rounds > 1_000,
        "only {extra_rounds} rounds past one a ply"
    );
}
