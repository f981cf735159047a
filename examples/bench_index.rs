//! Rank/unrank speed of the dense slice index on a large 7-piece slice.
//!
//! Run: `cargo run --release --example bench_index [SLICE]` (or `scripts/bench_index.sh`).
//! Without SLICE the largest 7-piece slice (by size) is used. Prints ns per call for
//! unrank and rank over pseudo-random indices, and for rank over consecutive indices.
use checkers_egdb::format::SliceIndex;
use checkers_egdb::{Material, Slice};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let slice: Slice = match std::env::args().nth(1) {
        Some(s) => s.parse().expect("slice name, e.g. 3121-34"),
        None => Material::all_with_pieces(7)
            .into_iter()
            .flat_map(Slice::all_of)
            .max_by_key(|&s| SliceIndex::new(s).size())
            .unwrap(),
    };
    let ix = SliceIndex::new(slice);
    let size = ix.size();
    const N: usize = 4_000_000;
    // Pseudo-random indices (splitmix64).
    let mut x = 0x1234_5678_9abc_def0u64;
    let idx: Vec<u64> = (0..N)
        .map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) % size
        })
        .collect();
    // Pre-fault the output buffer so page faults are not timed.
    let mut pos = vec![ix.unrank(0).unwrap(); N];
    let t = Instant::now();
    for (o, &i) in pos.iter_mut().zip(&idx) {
        *o = ix.unrank(black_box(i)).unwrap();
    }
    let unrank_ns = t.elapsed().as_nanos() as f64 / N as f64;
    let t = Instant::now();
    let mut acc = 0u64;
    for p in &pos {
        acc = acc.wrapping_add(ix.rank(black_box(p)));
    }
    let rank_ns = t.elapsed().as_nanos() as f64 / N as f64;
    let want: u64 = idx.iter().fold(0u64, |a, &i| a.wrapping_add(i));
    assert_eq!(acc, want, "round trip failed");
    // Consecutive indices (the builder's enumeration order).
    let start = size / 3;
    let n = (N as u64).min(size - start);
    let t = Instant::now();
    let mut acc2 = 0u64;
    for i in start..start + n {
        let p = ix.unrank(i).unwrap();
        acc2 = acc2.wrapping_add(ix.rank(black_box(&p)));
    }
    let seq_ns = t.elapsed().as_nanos() as f64 / n as f64;
    black_box(acc2);
    println!("slice\t{slice}\tsize\t{size}");
    println!("unrank_random_ns\t{unrank_ns:.1}");
    println!("rank_random_ns\t{rank_ns:.1}");
    println!("unrank_plus_rank_sequential_ns\t{seq_ns:.1}");
}
