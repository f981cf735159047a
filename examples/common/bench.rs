//! Shared pieces of the probe benchmarks in `examples/` (included with `#[path]`; not an
//! example of its own): a small deterministic generator and batched median timing.

#![allow(dead_code)]

use checkers_egdb::Position;
use std::time::Instant;

/// Xorshift64: a deterministic stream of random numbers (seed non-zero), so that every run
/// of a benchmark probes the same positions.
pub struct Rng(pub u64);

impl Rng {
    /// The next number of the stream.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Positions timed together (one clock reading per batch).
pub const BATCH: usize = 64;

/// Median over batches of [`BATCH`] positions of the nanoseconds `f` takes per position,
/// `rounds` passes over `ps`.
pub fn median_ns<T>(ps: &[Position], rounds: usize, f: impl Fn(&Position) -> T) -> f64 {
    let mut per = Vec::new();
    for _ in 0..rounds {
        for chunk in ps.chunks(BATCH) {
            let t = Instant::now();
            for p in chunk {
                std::hint::black_box(f(std::hint::black_box(p)));
            }
            per.push(t.elapsed().as_nanos() as f64 / chunk.len() as f64);
        }
    }
    per.sort_by(|a, b| a.partial_cmp(b).unwrap());
    per[per.len() / 2]
}
