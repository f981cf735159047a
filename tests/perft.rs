//! Perft from the start position against the published table (M. Fierz, A. Bik; see
//! docs/reference facts copied here). Capture paths are counted separately unless `unique`.
use checkers_egdb::{perft, perft_by_moves, perft_parallel, Position};

/// Published perft of `B:W21-32:B1-12`, depths 1-13 (index 0 = depth 1).
const PUBLISHED: [u64; 13] = [
    7,
    49,
    302,
    1_469,
    7_361,
    36_768,
    179_740,
    845_931,
    3_963_680,
    18_391_564,
    85_242_128,
    388_623_673,
    1_766_623_630,
];
/// With duplicate captures merged: depths 12 and 13 (1-11 equal the table above).
const UNIQUE_12: u64 = 388_617_999;
const UNIQUE_13: u64 = 1_766_564_893;

#[test]
fn perft_1_to_11_matches_published_table() {
    for d in 1..=11u32 {
        assert_eq!(
            perft(&Position::START, d, false),
            PUBLISHED[d as usize - 1],
            "depth {d}"
        );
    }
}

#[test]
fn parallel_perft_matches_published_table() {
    for d in [1u32, 5, 6, 9, 11] {
        assert_eq!(
            perft_parallel(&Position::START, d, false),
            PUBLISHED[d as usize - 1],
            "depth {d}"
        );
    }
}

#[test]
fn unique_perft_equals_paths_up_to_depth_11() {
    // No duplicate capture exists before depth 12 (reference facts, section 1).
    for d in [1u32, 4, 8, 10, 11] {
        assert_eq!(
            perft_parallel(&Position::START, d, true),
            PUBLISHED[d as usize - 1],
            "depth {d}"
        );
    }
}

#[test]
fn move_list_perft_matches_published_table() {
    // The slower reference implementation over Move lists, to depth 9.
    for d in 1..=9u32 {
        assert_eq!(
            perft_by_moves(&Position::START, d, false),
            PUBLISHED[d as usize - 1],
            "depth {d}"
        );
    }
    assert_eq!(perft_by_moves(&Position::START, 9, true), PUBLISHED[8]);
}

#[test]
fn depth_zero_is_one() {
    assert_eq!(perft(&Position::START, 0, false), 1);
    assert_eq!(perft_parallel(&Position::START, 0, true), 1);
}

#[test]
#[ignore = "deep perft (seconds to minutes); run with --ignored or scripts/perft_deep.sh"]
fn perft_12_paths_and_unique() {
    assert_eq!(perft_parallel(&Position::START, 12, false), PUBLISHED[11]);
    assert_eq!(perft_parallel(&Position::START, 12, true), UNIQUE_12);
}

#[test]
#[ignore = "deep perft (seconds to minutes); run with --ignored or scripts/perft_deep.sh"]
fn perft_13_paths_and_unique() {
    assert_eq!(perft_parallel(&Position::START, 13, false), PUBLISHED[12]);
    assert_eq!(perft_parallel(&Position::START, 13, true), UNIQUE_13);
}
