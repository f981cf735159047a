//! Concurrency of the probe cache: many threads probing through a cache far too small for the
//! tables (so that pages are evicted and rewritten all the time, racing with readers) must give
//! exactly the answers of a single-threaded reference (the naive solver).

mod probe_common;

use checkers_egdb::format::{
    table_path, write_table_with, SliceIndex, TableMeta, WriteOptions, DONT_CARE,
};
use checkers_egdb::{Material, Position, ProbeError, Slice, Tablebase, Wld};
use probe_common::*;
use std::collections::HashMap;
use std::path::Path;

/// Every table of at most 3 pieces, written with small blocks (500 positions) so that slices
/// have many blocks.
fn write_small_block_tables(dir: &Path, values: &HashMap<Position, Wld>) {
    let opts = WriteOptions {
        block_positions: 500,
        ..Default::default()
    };
    for k in 1..=3 {
        for m in Material::all_with_pieces(k) {
            for s in Slice::all_of(m) {
                let ix = SliceIndex::new(s);
                let mut n = [0u64; 3];
                let vals: Vec<u8> = (0..ix.size())
                    .map(|i| {
                        let p = ix.unrank(i).unwrap();
                        let v = values[&p];
                        n[v as usize] += 1;
                        if p.has_capture() {
                            DONT_CARE
                        } else {
                            v as u8
                        }
                    })
                    .collect();
                let meta = TableMeta {
                    slice: s,
                    positions: ix.size(),
                    wins: n[2],
                    losses: n[0],
                    draws: n[1],
                    longest: 0,
                };
                write_table_with(&table_path(dir, &s), &meta, &vals, &opts).unwrap();
            }
        }
    }
}

#[test]
fn many_threads_tiny_cache_agree_with_reference() {
    let values = naive_values(3);
    let d = tempfile::tempdir().unwrap();
    write_small_block_tables(d.path(), &values);
    let mut positions: Vec<(Position, Wld)> = values.iter().map(|(p, v)| (*p, *v)).collect();
    positions.sort_by_key(|(p, _)| (p.black, p.white, p.kings, p.side as u8));
    // Budgets from "no cache" through "a few frames" (fewer than one set) to a few sets.
    for budget in [0usize, 2_000, 10_000, 40_000] {
        let tb = Tablebase::builder(d.path())
            .cache_bytes(budget)
            .open()
            .unwrap();
        std::thread::scope(|s| {
            for t in 0..16usize {
                let tb = &tb;
                let positions = &positions;
                s.spawn(move || {
                    // Each thread walks the positions from its own start, with its own stride,
                    // so that threads hit different blocks at the same time.
                    let n = positions.len();
                    let stride = [1usize, 7, 13, 31][t % 4];
                    for k in 0..n {
                        let (p, want) = positions[(t * n / 16 + k * stride) % n];
                        assert_eq!(
                            tb.probe_wld(&p),
                            Ok(want),
                            "{} (budget {budget})",
                            p.to_fen()
                        );
                        match tb.probe_wld_cached(&p) {
                            Ok(v) => assert_eq!(v, want, "{} cached", p.to_fen()),
                            Err(e) => assert_eq!(e, ProbeError::NotInCache),
                        }
                    }
                });
            }
        });
        let st = tb.stats();
        assert!(st.cached_bytes <= budget as u64, "{st:?} budget {budget}");
        if budget >= 10_000 {
            assert!(
                st.cache_hits > 0 && st.blocks_decoded > st.cached_blocks,
                "{st:?}"
            );
        } else if budget == 0 {
            assert_eq!(st.cache_hits, 0, "{st:?}");
        }
    }
}
