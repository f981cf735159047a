//! Estimate the data a slice-split (distributed) propagation would exchange (docs/mpi.md):
//! for each slice named, sample positions uniformly by index and count the in-unit moves
//! (non-capture moves that neither crown nor change a leading rank: the edges along which
//! the propagation sends updates; each is also one unmove from the other side).
//!
//! `cargo run --release --example mpi_exchange -- 3232-66 2332-66 [SAMPLES]`
use checkers_egdb::format::SliceIndex;
use checkers_egdb::Slice;

fn main() {
    let mut names: Vec<String> = std::env::args().skip(1).collect();
    let samples: u64 = match names.last().and_then(|s| s.parse().ok()) {
        Some(n) => {
            names.pop();
            n
        }
        None => 200_000,
    };
    println!("slice\tpositions\tsampled\tcapture_share\tin_unit_moves_per_position");
    for name in names {
        let s: Slice = match name.parse() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("mpi_exchange: error: {name}: {e}");
                std::process::exit(1);
            }
        };
        let idx = SliceIndex::new(s);
        let size = idx.size();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let (mut captures, mut edges) = (0u64, 0u64);
        for _ in 0..samples {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = (((x >> 11) as u128 * size as u128) >> 53) as u64;
            let p = idx.unrank(i).expect("index in range");
            if p.has_capture() {
                captures += 1;
                continue;
            }
            for m in p.moves() {
                if !m.crowns && Slice::of(&p.apply(&m)) == s {
                    edges += 1;
                }
            }
        }
        println!(
            "{s}\t{size}\t{samples}\t{:.3}\t{:.2}",
            captures as f64 / samples as f64,
            edges as f64 / samples as f64
        );
    }
}
