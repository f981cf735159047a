//! Compression experiments on built tables: re-encode the values of every `*.egdb` file of a
//! directory under several packings, block sizes, don't-care fillings and zstd settings, and
//! print bytes and positions per byte per piece count, compression throughput and block decode
//! times. Block-level settings count whole files as FIXED bytes (72 in format 2: 64 header + 8
//! file checksum; 136 in format 1) + ENTRY bytes per block (8 in format 2, 16 in format 1) +
//! compressed blocks.
//! Usage:
//!   cargo run --release --example table_experiment -- DIR [MAX_PIECES] [quick]
//! Don't-care positions (side to move has a capture) are recomputed from the index.
//!
//! The don't-care fillings other than the block majority (which the library's writer uses) and
//! the base-3 packing of format 1 live here, as experiments, not in the library's API.
use checkers_egdb::format::{write_table_with, SliceIndex, TableFile, WriteOptions, DONT_CARE};
use checkers_egdb::Position;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::time::Instant;

#[path = "common/scratch.rs"]
mod scratch;
use scratch::scratch_path;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Pack {
    /// Five values per byte.
    B3,
    /// Four values per byte.
    B2,
}

#[derive(Clone, Copy, Debug)]
struct Cfg {
    pack: Pack,
    block: usize,
    fill: Fill,
    level: i32,
}

fn pack(v: &[u8], p: Pack) -> Vec<u8> {
    match p {
        Pack::B3 => pack_base3(v),
        Pack::B2 => v
            .chunks(4)
            .map(|q| q.iter().rev().fold(0u8, |a, &x| a * 4 + x))
            .collect(),
    }
}

/// Compressed bytes of one block (0 for a constant block) and the packed length.
fn enc_block(vals: &[u8], c: &Cfg) -> (Vec<u8>, usize) {
    let mut v = vals.to_vec();
    fill_dont_care(&mut v, c.fill);
    if v.iter().all(|&x| x == v[0]) {
        return (Vec::new(), 0);
    }
    let p = pack(&v, c.pack);
    (zstd::bulk::compress(&p, c.level).unwrap(), p.len())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(
        args.get(1)
            .expect("usage: table_experiment DIR [MAX] [quick]"),
    );
    let max: u32 = args.get(2).map_or(99, |s| s.parse().unwrap());
    let quick = args.get(3).is_some_and(|s| s == "quick");
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
    let mut by_pieces: BTreeMap<u32, (u64, u64, u64, u64)> = BTreeMap::new();
    for (m, _, dc, bytes) in &data {
        let e = by_pieces.entry(m.slice.material.pieces()).or_default();
        e.0 += m.positions;
        e.1 += dc;
        e.2 += bytes;
        e.3 += 1;
    }
    println!("as stored:");
    for (k, (n, dc, b, f)) in &by_pieces {
        println!(
            "  {k} pieces: {f} files, {n} positions, {dc} don't-care ({:.1}%), {b} bytes, {:.1} pos/byte",
            100.0 * *dc as f64 / *n as f64,
            *n as f64 / *b as f64
        );
    }
    // Whole-file sizes with the current writer defaults (what `egdb build` writes).
    let d = WriteOptions::default();
    let t0 = Instant::now();
    let mut per: BTreeMap<u32, u64> = BTreeMap::new();
    let files: Vec<(u32, u64, std::path::PathBuf)> = data
        .par_iter()
        .map(|(m, v, _, _)| {
            let path = scratch_path();
            let n = write_table_with(&path, m, v, &d).unwrap();
            (m.slice.material.pieces(), n, path)
        })
        .collect();
    let enc_secs = t0.elapsed().as_secs_f64();
    for (k, n, _) in &files {
        *per.entry(*k).or_default() += n;
    }
    let line: Vec<String> = per
        .iter()
        .map(|(k, b)| {
            format!(
                "{k}p {b} B ({:.1} pos/B)",
                by_pieces[k].0 as f64 / *b as f64
            )
        })
        .collect();
    let n_all: u64 = by_pieces.values().map(|e| e.0).sum();
    let threads = rayon::current_num_threads();
    println!(
        "writer default {d:?}: {}  [{enc_secs:.1}s, {:.1} M positions/s per thread]",
        line.join(", "),
        n_all as f64 / enc_secs / 1e6 / threads as f64
    );
    // Block decode time (one thread): decode every stored block of the re-encoded files.
    let (mut nb, mut total, mut worst) = (0u64, 0f64, 0f64);
    for (_, _, path) in &files {
        let t = TableFile::open(path).unwrap();
        for b in 0..t.block_count() {
            if t.block_constant(b).unwrap().is_some() {
                continue;
            }
            let t1 = Instant::now();
            std::hint::black_box(t.decode_block(b).unwrap());
            let s = t1.elapsed().as_secs_f64();
            nb += 1;
            total += s;
            worst = worst.max(s);
        }
    }
    println!(
        "block decode (checksum + zstd + repack to base 3): {nb} blocks, mean {:.1} us, max {:.1} us",
        1e6 * total / nb.max(1) as f64,
        1e6 * worst
    );
    if quick {
        return;
    }

    // Block-level configurations: size = data + 16 per non-uniform file's block + 136 per file.
    let mut cfgs: Vec<(String, Cfg, u64, u64)> = Vec::new();
    let c = |pack, block, fill, level| Cfg {
        pack,
        block,
        fill,
        level,
    };
    // Format 1 as it was, then one change at a time, then format 2 variants.
    cfgs.push((
        "v1: base3 16K Majority L19".into(),
        c(Pack::B3, 16_380, Fill::Majority, 19),
        136,
        16,
    ));
    cfgs.push((
        "v1 + 2bit".into(),
        c(Pack::B2, 16_380, Fill::Majority, 19),
        136,
        16,
    ));
    cfgs.push((
        "v1 + 64K".into(),
        c(Pack::B3, 65_520, Fill::Majority, 19),
        136,
        16,
    ));
    cfgs.push((
        "v1 + small header".into(),
        c(Pack::B3, 16_380, Fill::Majority, 19),
        72,
        8,
    ));
    for (pk, nm) in [(Pack::B3, "base3"), (Pack::B2, "2bit")] {
        for b in [16_380usize, 32_760, 65_520, 131_040] {
            for fill in [
                Fill::Majority,
                Fill::Previous,
                Fill::PreviousByte,
                Fill::Period,
            ] {
                if fill != Fill::Majority && b != 65_520 {
                    continue;
                }
                cfgs.push((
                    format!("v2: {nm} {}K {fill:?} L19", b.div_ceil(1024)),
                    c(pk, b, fill, 19),
                    72,
                    8,
                ));
            }
        }
    }
    for level in [9, 15, 22] {
        cfgs.push((
            format!("v2: 2bit 64K Majority L{level}"),
            c(Pack::B2, 65_520, Fill::Majority, level),
            72,
            8,
        ));
    }
    println!(
        "block-level settings (fixed + entry bytes per file/block as noted); {threads} threads"
    );
    for (name, c, fixed, entry) in cfgs {
        let t0 = Instant::now();
        let per: Vec<(u32, u64, u64)> = data
            .par_iter()
            .map(|(m, v, _, _)| {
                let k = m.slice.material.pieces();
                let blocks: Vec<(Vec<u8>, usize)> =
                    v.chunks(c.block).map(|ch| enc_block(ch, &c)).collect();
                let uniform = blocks.iter().all(|b| b.1 == 0) && {
                    let mut f = v.clone();
                    fill_dont_care(&mut f, Fill::Majority);
                    f.iter().all(|&x| x == f[0])
                };
                let nb = if uniform { 0 } else { blocks.len() as u64 };
                let packed: u64 = blocks.iter().map(|b| b.1 as u64).sum();
                (
                    k,
                    fixed + entry * nb + blocks.iter().map(|b| b.0.len() as u64).sum::<u64>(),
                    packed,
                )
            })
            .collect();
        let secs = t0.elapsed().as_secs_f64();
        let mut tot: BTreeMap<u32, u64> = BTreeMap::new();
        let mut packed = 0u64;
        for (k, s, p) in per {
            *tot.entry(k).or_default() += s;
            packed += p;
        }
        let line: Vec<String> = tot
            .iter()
            .map(|(k, b)| format!("{k}p {b} ({:.1})", by_pieces[k].0 as f64 / *b as f64))
            .collect();
        println!(
            "{name:<34} {}  [{secs:.1}s, {:.2} MB/s packed per thread]",
            line.join(", "),
            packed as f64 / secs / 1e6 / threads as f64
        );
    }
}

/// Pack values 0..=2, five per byte: byte = v0 + 3 v1 + 9 v2 + 27 v3 + 81 v4 (format 1).
fn pack_base3(values: &[u8]) -> Vec<u8> {
    values
        .chunks(5)
        .map(|c| c.iter().rev().fold(0u8, |b, &v| b * 3 + v))
        .collect()
}

/// How the writer fills don't-care values before packing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fill {
    /// Repeat the previous value (the first known value of the block at its start): extends runs.
    Previous,
    /// The most common known value of the block.
    Majority,
    /// Within each packed byte, copy the previous byte's digits where they fit, else the
    /// previous value: makes whole bytes repeat.
    PreviousByte,
    /// Always this value (0..=2).
    #[allow(dead_code)]
    Constant(u8),
    /// Copy the (filled) value `P` positions back, `P` in 1..=64 chosen per block as the lag at
    /// which known values agree most often; the first `P` positions take the block majority.
    Period,
}

/// Most common known value (0..=2) of `vals` (ties to the smaller value).
fn majority(vals: &[u8]) -> u8 {
    let mut n = [0u64; 4];
    vals.iter().for_each(|&v| n[v as usize] += 1);
    (0..3)
        .max_by_key(|&i| (n[i], std::cmp::Reverse(i)))
        .unwrap() as u8
}

/// Lag `p` in 1..=64 maximizing the number of known pairs `vals[i] == vals[i - p]` (ties to the
/// smaller lag).
fn best_lag(vals: &[u8]) -> usize {
    let mut best = (0u64, 1usize);
    for p in 1..=64.min(vals.len().saturating_sub(1)).max(1) {
        let agree = vals
            .iter()
            .zip(&vals[p.min(vals.len())..])
            .filter(|(&a, &b)| a == b && a != DONT_CARE)
            .count() as u64;
        if agree > best.0 {
            best = (agree, p);
        }
    }
    best.1
}

/// Replace don't-care values (3) of one block in place, per `fill`; values must be 0..=3.
fn fill_dont_care(vals: &mut [u8], fill: Fill) {
    let first_known = vals.iter().copied().find(|&v| v != DONT_CARE);
    let Some(first) = first_known else {
        vals.iter_mut().for_each(|v| *v = 1);
        return;
    };
    match fill {
        Fill::Constant(c) => vals
            .iter_mut()
            .filter(|v| **v == DONT_CARE)
            .for_each(|v| *v = c.min(2)),
        Fill::Majority => {
            let m = majority(vals);
            vals.iter_mut()
                .filter(|v| **v == DONT_CARE)
                .for_each(|v| *v = m);
        }
        Fill::Period => {
            let m = majority(vals);
            let p = best_lag(vals);
            for i in 0..vals.len() {
                if vals[i] == DONT_CARE {
                    vals[i] = if i >= p { vals[i - p] } else { m };
                }
            }
        }
        Fill::Previous => {
            let mut prev = first;
            for v in vals.iter_mut() {
                if *v == DONT_CARE {
                    *v = prev;
                } else {
                    prev = *v;
                }
            }
        }
        Fill::PreviousByte => {
            let mut prev = first;
            let mut prev_group: [u8; 5] = [first; 5];
            for group in vals.chunks_mut(5) {
                // Does the group fit the previous group's digits (ignoring don't-cares)?
                let fits = group
                    .iter()
                    .zip(prev_group.iter())
                    .all(|(&v, &p)| v == DONT_CARE || v == p);
                for (k, v) in group.iter_mut().enumerate() {
                    if *v == DONT_CARE {
                        *v = if fits { prev_group[k] } else { prev };
                    }
                    prev = *v;
                }
                prev_group[..group.len()].copy_from_slice(group);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_values(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 97 < 40 {
                    1
                } else {
                    (x % 4) as u8
                }
            })
            .collect()
    }

    #[test]
    fn fill_keeps_known_values() {
        for fill in [
            Fill::Previous,
            Fill::Majority,
            Fill::PreviousByte,
            Fill::Constant(2),
            Fill::Period,
        ] {
            let v = pseudo_values(1003, 5);
            let mut f = v.clone();
            fill_dont_care(&mut f, fill);
            for (a, b) in v.iter().zip(&f) {
                assert!(*b <= 2);
                if *a != DONT_CARE {
                    assert_eq!(a, b);
                }
            }
        }
    }

    #[test]
    fn base3_packing() {
        assert_eq!(pack_base3(&[2, 2, 2, 2, 2]), vec![242]);
        assert_eq!(pack_base3(&[1, 0, 0, 0, 0, 2]), vec![1, 2]);
    }
}
