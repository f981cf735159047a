//! Compression experiments on built tables: re-encode every `*.egdb` file of a directory with
//! several block sizes, zstd levels, don't-care fillings and packings, and print the total bytes
//! and positions per byte per piece count. Usage:
//!   cargo run --release --example table_experiment -- DIR [MAX_PIECES]
//! Don't-care positions (side to move has a capture) are recomputed from the index.
use checkers_egdb::table::{encode_table, Fill, TableFile, WriteOptions, DONT_CARE};
use checkers_egdb::{Position, SliceIndex};
use rayon::prelude::*;
use std::collections::BTreeMap;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(args.get(1).expect("usage: table_experiment DIR [MAX]"));
    let max: u32 = args.get(2).map_or(99, |s| s.parse().unwrap());
    let mut tables = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "egdb") {
            let t = TableFile::open(&p).unwrap();
            if t.meta().slice.material.pieces() <= max {
                tables.push(t);
            }
        }
    }
    tables.sort_by_key(|t| t.meta().slice);
    // Values with don't-cares restored.
    let data: Vec<_> = tables
        .par_iter()
        .map(|t| {
            let ix = SliceIndex::new(t.meta().slice);
            let mut v = t.decode_all().unwrap();
            let mut dc = 0u64;
            for (i, x) in v.iter_mut().enumerate() {
                let p: Position = ix.unrank(i as u64).unwrap();
                if p.has_capture() {
                    *x = DONT_CARE;
                    dc += 1;
                }
            }
            (t.meta().clone(), v, dc, t.file_bytes())
        })
        .collect();
    let mut by_pieces: BTreeMap<u32, (u64, u64, u64)> = BTreeMap::new();
    for (m, _, dc, bytes) in &data {
        let e = by_pieces.entry(m.slice.material.pieces()).or_default();
        e.0 += m.positions;
        e.1 += dc;
        e.2 += bytes;
    }
    println!("as stored:");
    for (k, (n, dc, b)) in &by_pieces {
        println!("  {k} pieces: {n} positions, {dc} don't-care ({:.1}%), {b} bytes, {:.1} pos/byte",
            100.0 * *dc as f64 / *n as f64, *n as f64 / *b as f64);
    }
    let bp = |k: u32| k - k % 5;
    let mut configs: Vec<(String, WriteOptions)> = Vec::new();
    let d = WriteOptions::default();
    for fill in [Fill::Constant(1), Fill::Majority, Fill::Previous, Fill::PreviousByte] {
        configs.push((format!("fill {fill:?}"), WriteOptions { fill, ..d }));
    }
    for b in [4096, 8192, 32768, 65536] {
        configs.push((format!("block {}", bp(b)), WriteOptions { block_positions: bp(b), ..d }));
    }
    for b in [8192, 16384, 32768] {
        configs.push((format!("majority block {}", bp(b)), WriteOptions { block_positions: bp(b), fill: Fill::Majority, ..d }));
    }
    for level in [3, 9, 15, 22] {
        configs.push((format!("level {level}"), WriteOptions { level, ..d }));
    }
    println!("default: block {} level {} fill {:?}", d.block_positions, d.level, d.fill);
    for (name, opts) in configs {
        let t0 = std::time::Instant::now();
        let mut per: BTreeMap<u32, u64> = BTreeMap::new();
        let sizes: Vec<(u32, u64)> = data
            .par_iter()
            .map(|(m, v, _, _)| (m.slice.material.pieces(), encode_table(m, v, &opts).unwrap().len() as u64))
            .collect();
        for (k, s) in sizes {
            *per.entry(k).or_default() += s;
        }
        let line: Vec<String> = per
            .iter()
            .map(|(k, b)| format!("{k}p {b} B ({:.1} pos/B)", by_pieces[k].0 as f64 / *b as f64))
            .collect();
        println!("{name:<22} {}  [{:.1}s]", line.join(", "), t0.elapsed().as_secs_f64());
    }
    // 2-bit packing (4 values per byte) with the same blocks, fill and level, data bytes only,
    // against base-3 data bytes: what the packing alone changes.
    let (mut two, mut three) = (BTreeMap::<u32, u64>::new(), BTreeMap::<u32, u64>::new());
    for (m, v, _, _) in &data {
        let k = m.slice.material.pieces();
        for chunk in v.chunks(d.block_positions as usize) {
            let mut c = chunk.to_vec();
            checkers_egdb::table::fill_dont_care(&mut c, Fill::Majority);
            if c.iter().all(|&x| x == c[0]) {
                continue;
            }
            let p2: Vec<u8> = c.chunks(4).map(|q| q.iter().rev().fold(0u8, |a, &x| a * 4 + x)).collect();
            let p3 = checkers_egdb::table::pack_base3(&c);
            *two.entry(k).or_default() += zstd::bulk::compress(&p2, d.level).unwrap().len() as u64;
            *three.entry(k).or_default() += zstd::bulk::compress(&p3, d.level).unwrap().len() as u64;
        }
    }
    for k in two.keys() {
        println!("packing {k}p: 2-bit {} B, base-3 {} B (block data only)", two[k], three[k]);
    }
}
