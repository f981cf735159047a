//! Seeded random positions, shared by the prover tests (`tests/prove.rs`; the search's unit
//! tests in src/prove/ghi_tests.rs copy the generator)
//! and the prover benchmark (`examples/prove_random.rs`, which includes this file by path), so
//! that a seed names the same sample everywhere.
#![allow(dead_code)] // each includer uses part of it

use checkers_egdb::{Color, Position};

/// xorshift64* (Marsaglia 2003, Vigna 2016), 64-bit state (never 0).
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0; the modulo bias is irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random legal position with `n` pieces (2..=24), both sides present, either side to move:
/// squares, colours and man/king drawn uniformly, redrawn until `Position::validate` accepts it.
pub fn random_position(rng: &mut Rng, n: u32) -> Position {
    loop {
        let mut p = Position {
            black: 0,
            white: 0,
            kings: 0,
            side: if rng.below(2) == 0 {
                Color::Black
            } else {
                Color::White
            },
        };
        let mut placed = 0;
        while placed < n {
            let b = 1u32 << rng.below(32);
            if p.occupied() & b != 0 {
                continue;
            }
            if rng.below(2) == 0 {
                p.black |= b;
            } else {
                p.white |= b;
            }
            if rng.below(2) == 0 {
                p.kings |= b;
            }
            placed += 1;
        }
        if p.black != 0 && p.white != 0 && p.validate().is_ok() {
            return p;
        }
    }
}
