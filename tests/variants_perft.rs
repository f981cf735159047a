//! Perft of the 8x8 draughts variants from the initial position through the slow path
//! generator (`rules::paths`), against published counts. Depths to 9 here, and 10 for Spanish
//! and Czech (their first depths where the counts part from Italian's and English's: at 8
//! Spanish equals Italian and Czech equals English, so only these rows test their capture
//! rules: Spanish "most pieces, then most kings", Czech "a king's capture first"); deeper ones:
//! scripts/perft_variants.sh.
//!
//! Sources (numbers read, no code taken), as collected in the tests of Rein Halbersma's dctl
//! library (test/src/algo/traversal/initial/board_08x08.cpp):
//! - Russian, Brazilian, Pool: the "Standard validation generator moves" thread of the
//!   shashki.com forum (http://shashki.com/PNphpBB2-viewtopic-t-627-start-126.html, -78,
//!   -57);
//! - Italian, Spanish, Czech: R. Halbersma, "Perft for all recognized draughts variants",
//!   FMJD forum, 2010 (http://damforum.nl/bb3/viewtopic.php?f=53&t=2822);
//! - English (and so giveaway, which has the same moves): M. Fierz and A. Bik
//!   (/work/shared/reference.md, section 1), also in that thread.
//!
//! Each row: (depth, capture paths counted apart, moves of the same effect merged).

use checkers_egdb::rules::paths::{perft, Game};
use checkers_egdb::rules::Variant;
use checkers_egdb::Position;

fn check(v: Variant, rows: &[(u32, u64, u64)]) {
    let g: Game = v.game();
    for &(d, paths, unique) in rows {
        assert_eq!(
            perft(&g, &Position::START, d, false),
            paths,
            "{v} depth {d}"
        );
        assert_eq!(
            perft(&g, &Position::START, d, true),
            unique,
            "{v} depth {d} unique"
        );
    }
}

const COMMON: [(u32, u64, u64); 4] = [(1, 7, 7), (2, 49, 49), (3, 302, 302), (4, 1469, 1469)];

#[test]
fn russian() {
    check(Variant::Russian, &COMMON);
    check(
        Variant::Russian,
        &[
            (5, 7482, 7482),
            (6, 37986, 37986),
            (7, 190146, 190146),
            (8, 929_905, 929_899),
            (9, 4_570_667, 4_570_586),
        ],
    );
}

#[test]
fn brazilian() {
    check(Variant::Brazilian, &COMMON);
    check(
        Variant::Brazilian,
        &[
            (5, 7473, 7473),
            (6, 37628, 37628),
            (7, 187302, 187302),
            (8, 907_836, 907_830),
            (9, 4_431_847, 4_431_766),
        ],
    );
}

#[test]
fn pool() {
    check(Variant::Pool, &COMMON);
    check(
        Variant::Pool,
        &[
            (5, 7482, 7482),
            (6, 37986, 37986),
            (7, 190146, 190146),
            (8, 929_902, 929_896),
            (9, 4_570_615, 4_570_534),
        ],
    );
}

#[test]
fn italian() {
    check(Variant::Italian, &COMMON);
    check(
        Variant::Italian,
        &[
            (5, 7361, 7361),
            (6, 36473, 36473),
            (7, 177532, 177532),
            (8, 828_783, 828_783),
            (9, 3_860_875, 3_860_875),
        ],
    );
}

#[test]
fn spanish() {
    check(Variant::Spanish, &COMMON);
    check(
        Variant::Spanish,
        &[
            (5, 7361, 7361),
            (6, 36473, 36473),
            (7, 177532, 177532),
            (8, 828_783, 828_783),
            (9, 3_860_866, 3_860_866),
            (10, 17_743_464, 17_743_464),
        ],
    );
}

#[test]
fn czech() {
    check(Variant::Czech, &COMMON);
    check(
        Variant::Czech,
        &[
            (5, 7361, 7361),
            (6, 36768, 36768),
            (7, 179740, 179740),
            (8, 845_931, 845_931),
            (9, 3_963_671, 3_963_671),
            (10, 18_368_918, 18_368_918),
        ],
    );
}

#[test]
fn english_and_giveaway_paths() {
    for v in [Variant::English, Variant::Giveaway] {
        check(v, &COMMON);
        check(
            v,
            &[
                (5, 7361, 7361),
                (6, 36768, 36768),
                (7, 179740, 179740),
                (8, 845_931, 845_931),
            ],
        );
    }
}
