//! Property tests over random legal positions: FEN round trip, colour-flip symmetry of move
//! generation, legality after every move, agreement of the two move engines (the generator's
//! split of the quiet moves too), and parsers that never panic.
use std::collections::BTreeSet;

use checkers_egdb::{format_move, parse_move, perft, perft_by_moves, Color, Move, Position};
use proptest::prelude::*;

/// Random legal position: each square empty (most often) or holding a black/white man/king;
/// men on their own crowning row become kings; pieces beyond 12 a side are dropped.
fn position() -> impl Strategy<Value = Position> {
    let cell = prop_oneof![
        10 => Just(0u8),
        2 => Just(1u8), // black man
        1 => Just(2u8), // black king
        2 => Just(3u8), // white man
        1 => Just(4u8), // white king
    ];
    (prop::collection::vec(cell, 32), any::<bool>()).prop_map(|(cells, white_to_move)| {
        let (mut black, mut white, mut kings) = (0u32, 0u32, 0u32);
        let (mut nb, mut nw) = (0, 0);
        for (i, &c) in cells.iter().enumerate() {
            let bit = 1u32 << i;
            let sq = i + 1;
            match c {
                1 | 2 if nb < 12 => {
                    nb += 1;
                    black |= bit;
                    if c == 2 || sq >= 29 {
                        kings |= bit;
                    }
                }
                3 | 4 if nw < 12 => {
                    nw += 1;
                    white |= bit;
                    if c == 4 || sq <= 4 {
                        kings |= bit;
                    }
                }
                _ => {}
            }
        }
        let side = if white_to_move {
            Color::White
        } else {
            Color::Black
        };
        Position::new(black, white, kings, side).expect("strategy builds legal positions")
    })
}

fn rot_sq(s: u8) -> u8 {
    33 - s
}

/// A move as comparable data: (from, to, captured, path).
fn key(m: &Move) -> (u8, u8, u32, Vec<u8>) {
    (m.from, m.to, m.captured, m.path().to_vec())
}
fn key_flipped(m: &Move) -> (u8, u8, u32, Vec<u8>) {
    (
        rot_sq(m.from),
        rot_sq(m.to),
        m.captured.reverse_bits(),
        m.path().iter().map(|&s| rot_sq(s)).collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn fen_round_trip(p in position()) {
        let s = p.to_fen();
        prop_assert_eq!(Position::from_fen(&s), Ok(p));
        prop_assert_eq!(Position::from_fen(&format!("[FEN \"{}\"]", s.to_lowercase())), Ok(p));
    }

    #[test]
    fn flip_commutes_with_move_generation(p in position()) {
        let mut a: Vec<_> = p.flip().moves().iter().map(key).collect();
        let mut b: Vec<_> = p.moves().iter().map(key_flipped).collect();
        a.sort();
        b.sort();
        prop_assert_eq!(a, b);
        let succ_flip: BTreeSet<String> = p.flip().successors().iter().map(|q| q.to_fen()).collect();
        let flip_succ: BTreeSet<String> = p.successors().iter().map(|q| q.flip().to_fen()).collect();
        prop_assert_eq!(succ_flip, flip_succ);
    }

    #[test]
    fn every_move_keeps_the_position_legal(p in position()) {
        for m in p.moves() {
            let q = p.apply(&m);
            prop_assert!(q.validate().is_ok(), "{} after {}: {:?}", p, m, q.validate());
            prop_assert_eq!(q.side, p.side.opponent());
            // Mover's piece count unchanged, the opponent loses exactly the captured pieces.
            prop_assert_eq!(q.pieces(p.side).count_ones(), p.pieces(p.side).count_ones());
            prop_assert_eq!(
                q.pieces(p.side.opponent()).count_ones(),
                p.pieces(p.side.opponent()).count_ones() - m.captured.count_ones()
            );
        }
    }

    #[test]
    fn fast_engine_agrees_with_move_lists(p in position()) {
        for d in 1..=3 {
            prop_assert_eq!(perft(&p, d, false), perft_by_moves(&p, d, false), "depth {}", d);
            prop_assert_eq!(perft(&p, d, true), perft_by_moves(&p, d, true), "unique depth {}", d);
        }
        let mut fast: Vec<String> = Vec::new();
        p.for_each_successor(|q| fast.push(q.to_fen()));
        let mut slow: Vec<String> = p.unique_moves().iter().map(|m| p.apply(m).to_fen()).collect();
        fast.sort();
        slow.sort();
        prop_assert_eq!(&fast, &slow);
        let mut succ: Vec<String> = p.successors().iter().map(|q| q.to_fen()).collect();
        succ.sort();
        prop_assert_eq!(succ, slow);
        prop_assert_eq!(p.count_moves(), p.moves().len() as u64);
        prop_assert_eq!(p.count_unique_moves(), p.unique_moves().len() as u64);
    }

    #[test]
    fn every_move_parses_back(p in position()) {
        for m in p.moves() {
            let s = format_move(&m);
            let back = parse_move(&p, &s);
            prop_assert_eq!(back, Ok(m), "{} in {}", s, p);
        }
    }

    #[test]
    fn fen_parser_never_panics(s in any::<String>()) {
        let _ = Position::from_fen(&s);
    }

    #[test]
    fn fen_parser_never_panics_on_fen_like_text(s in "[BWKbwk0-9:,. \\-\\[\\]\"FEN]{0,40}") {
        if let Ok(p) = Position::from_fen(&s) {
            prop_assert!(p.validate().is_ok());
            prop_assert_eq!(Position::from_fen(&p.to_fen()), Ok(p));
        }
    }

    #[test]
    fn move_parser_never_panics(p in position(), s in "[0-9xX\\- ]{0,16}") {
        if let Ok(m) = parse_move(&p, &s) {
            prop_assert!(p.moves().contains(&m));
        }
    }
}

// Positions without a capture for the side to move are about a third of the random ones:
// more cases, and rejections allowed for the others.
proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1000,
        max_global_rejects: 100_000,
        ..ProptestConfig::default()
    })]

    /// The generator's split of the quiet moves (`Retro::count_quiet_moves`,
    /// `Retro::for_each_quiet_successor`) against the move-list engine: for a random subset
    /// `from` of the squares, the count and the positions after the simple moves that start
    /// on `from`.
    #[test]
    fn quiet_moves_from_a_subset_agree_with_move_lists(p in position(), from in any::<u32>()) {
        use checkers_egdb::rules::{English, Retro};
        prop_assume!(!p.has_capture());
        let on = |sq: u8| from & (1u32 << (sq - 1)) != 0;
        let mut slow: Vec<String> = p
            .moves()
            .iter()
            .filter(|m| on(m.from))
            .map(|m| p.apply(m).to_fen())
            .collect();
        prop_assert_eq!(English.count_quiet_moves(&p, from), slow.len() as u32);
        let mut fast: Vec<String> = Vec::new();
        English.for_each_quiet_successor(&p, from, |q| fast.push(q.to_fen()));
        slow.sort();
        fast.sort();
        prop_assert_eq!(fast, slow);
    }
}
