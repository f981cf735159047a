//! Don't-care experiments (issue 11, "smaller"): re-encode built WLD tables with wider
//! don't-care sets and other fillings, and print whole-file bytes and positions per byte per
//! piece count (exact file sizes: every configuration goes through the library's
//! `write_table_with`, level 15, 65,520-position blocks unless told).
//!
//! Usage:
//!   cargo run --release --example dc_experiment -- DIR MIN_PIECES MAX_PIECES CFG...
//! CFG = `<set>-<fill>[-L<level>][-B<block>]`:
//! - set `c`: capture positions only (side to move has a capture; today's writer);
//!   `t`: also "threat" positions (side to move has no capture, the side not to move has one)
//!   whose quiet successors are not threat positions themselves (the codec-4 rule, one-ply
//!   resolvable); `2`: also threat positions whose threat successors are all of that kind
//!   (two-ply resolvable); `a`: every threat position (upper bound, KingsRow's "either side");
//! - `-Dm<bytes>` / `-Dp<bytes>`: 2-bit packing compressed with a zstd dictionary of at most
//!   that many bytes, trained per material (`m`) or per piece count (`p`) on the blocks of the
//!   files measured (up to 100 times its size of them), its bytes counted once per group; the
//!   line also gives the same packing without a dictionary;
//! - fill `maj`: block majority (the library's writer); `prev`: the previous known value in
//!   the block (the next one at the block start); `pn`: the neighbours' value where the
//!   previous and next known values agree, else the block majority.
use checkers_egdb::format::{SliceIndex, TableFile, WriteOptions, DONT_CARE};
use checkers_egdb::rules::{English, Rules};
use checkers_egdb::Position;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

#[path = "common/scratch.rs"]
mod scratch;
use scratch::encoded_len;

#[derive(Clone, Debug)]
struct Cfg {
    name: String,
    set: char,
    fill: String,
    level: i32,
    block: u32,
    /// 2: the library's 2-bit packing; 1: one byte per value; 3: two bit planes (draw?,
    /// win?) per block.
    pack: u8,
    /// Dictionary size in bytes (0: none) and scope (`m` material, `p` piece count).
    dict: usize,
    dict_scope: char,
}

fn parse(s: &str) -> Cfg {
    let mut it = s.split('-');
    let set = it.next().unwrap().chars().next().unwrap();
    let fill = it.next().unwrap_or("maj").to_string();
    let mut c = Cfg {
        name: s.to_string(),
        set,
        fill,
        level: 15,
        block: 65_520,
        pack: 2,
        dict: 0,
        dict_scope: 'm',
    };
    for x in it {
        if let Some(l) = x.strip_prefix('L') {
            c.level = l.parse().unwrap();
        } else if let Some(b) = x.strip_prefix('B') {
            c.block = b.parse().unwrap();
        } else if let Some(b) = x.strip_prefix('P') {
            c.pack = b.parse().unwrap();
        } else if let Some(d) = x.strip_prefix('D') {
            c.dict_scope = d.chars().next().unwrap();
            c.dict = d[1..].parse().unwrap();
        }
    }
    c
}

/// 0 stored, 1 capture, 2 threat (one-ply resolvable), 3 threat with a threat successor.
fn class(p: &Position) -> u8 {
    if English.has_capture(p) {
        return 1;
    }
    let flip = Position {
        side: p.side.opponent(),
        ..*p
    };
    if !English.has_capture(&flip) {
        return 0;
    }
    let mut deep = false;
    English.for_each_successor(p, |c| {
        if !deep && !English.has_capture(&c) {
            let cf = Position {
                side: c.side.opponent(),
                ..c
            };
            if English.has_capture(&cf) {
                deep = true;
            }
        }
    });
    if !deep {
        2
    } else if dc_level(p, 2) {
        4
    } else {
        3
    }
}

fn threat(p: &Position) -> bool {
    let flip = Position {
        side: p.side.opponent(),
        ..*p
    };
    English.has_capture(&flip) && !English.has_capture(p) && English.has_quiet_move(p)
}

/// Threat position whose threat successors are all `dc_level(.., k - 1)` (k = 1: none).
fn dc_level(p: &Position, k: u32) -> bool {
    if !threat(p) {
        return false;
    }
    let mut ok = true;
    English.for_each_successor(p, |c| {
        if ok && threat(&c) {
            ok = k > 1 && dc_level(&c, k - 1);
        }
    });
    ok
}

fn fill(v: &mut [u8], how: &str, block: usize) {
    for b in v.chunks_mut(block) {
        match how {
            "maj" => {}
            "prev" => {
                let first = b.iter().copied().find(|&x| x != DONT_CARE).unwrap_or(1);
                let mut last = first;
                for x in b.iter_mut() {
                    if *x == DONT_CARE {
                        *x = last;
                    } else {
                        last = *x;
                    }
                }
            }
            "pn" | "pn2" => {
                let two = how == "pn2";
                let mj = {
                    let mut n = [0u64; 4];
                    b.iter().for_each(|&x| n[x as usize] += 1);
                    (0..3u8)
                        .max_by_key(|&i| (n[i as usize], std::cmp::Reverse(i)))
                        .unwrap()
                };
                let n = b.len();
                let mut next = vec![DONT_CARE; n];
                let mut nx = DONT_CARE;
                for i in (0..n).rev() {
                    if b[i] != DONT_CARE {
                        nx = b[i];
                    }
                    next[i] = nx;
                }
                let mut prev = DONT_CARE;
                for i in 0..n {
                    if b[i] == DONT_CARE {
                        if prev == next[i] && prev != DONT_CARE {
                            b[i] = prev;
                        } else if two {
                            // One change at most: the neighbour equal to the majority, else
                            // the previous one (the only one at a block edge).
                            b[i] = if prev == DONT_CARE {
                                next[i]
                            } else if next[i] == DONT_CARE || next[i] != mj {
                                prev
                            } else {
                                next[i]
                            };
                        }
                    } else {
                        prev = b[i];
                    }
                }
                // the rest: majority (the writer).
            }
            _ => panic!("fill {how}"),
        }
    }
}

fn maj_fill(b: &mut [u8]) {
    let mut n = [0u64; 4];
    b.iter().for_each(|&x| n[x as usize] += 1);
    let m = (0..3u8)
        .max_by_key(|&i| (n[i as usize], std::cmp::Reverse(i)))
        .unwrap();
    let m = if n[3] == b.len() as u64 { 1 } else { m };
    b.iter_mut()
        .filter(|x| **x == DONT_CARE)
        .for_each(|x| *x = m);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let min: u32 = args[2].parse().unwrap();
    let max: u32 = args[3].parse().unwrap();
    let cfgs: Vec<Cfg> = args[4..].iter().map(|s| parse(s)).collect();
    let mut paths = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "egdb") {
            let t = TableFile::open(&p).unwrap();
            let k = t.meta().slice.material.pieces();
            if (min..=max).contains(&k) {
                paths.push((t.meta().positions, p));
            }
        }
    }
    // SAMPLE=k: every k-th file in name order (a quick estimate).
    paths.sort_by(|a, b| a.1.cmp(&b.1));
    let k: usize = std::env::var("SAMPLE").map_or(1, |s| s.parse().unwrap());
    let mut paths: Vec<_> = paths.into_iter().step_by(k).collect();
    // Largest first, for balance.
    paths.sort_by(|a, b| b.cmp(a));
    // pieces -> (files, positions, old bytes, class counts, bytes per cfg)
    type Row = (u64, u64, u64, [u64; 5], Vec<u64>);
    let acc: Mutex<BTreeMap<u32, Row>> = Mutex::new(BTreeMap::new());
    // Dictionary configurations: (cfg, group key, pieces, fixed bytes, packed blocks).
    type Blocks = (usize, String, u32, u64, Vec<Vec<u8>>);
    let dict_blocks: Mutex<Vec<Blocks>> = Mutex::new(Vec::new());
    let t0 = Instant::now();
    paths.par_iter().for_each(|(_, path)| {
        let t = TableFile::open(path).unwrap();
        let m = t.meta().clone();
        let ix = SliceIndex::new(m.slice);
        let vals = t.decode_all().unwrap();
        let cls: Vec<u8> = (0..m.positions)
            .into_par_iter()
            .map(|i| class(&ix.unrank(i).unwrap()))
            .collect();
        let mut counts = [0u64; 5];
        cls.iter().for_each(|&c| counts[c as usize] += 1);
        let sizes: Vec<u64> = cfgs
            .iter()
            .enumerate()
            .map(|(ci, c)| {
                let mut v = vals.clone();
                for (x, &k) in v.iter_mut().zip(&cls) {
                    let dc = match c.set {
                        'c' => k == 1,
                        't' => k == 1 || k == 2,
                        'a' => k != 0,
                        '2' => k == 1 || k == 2 || k == 4,
                        _ => panic!("set {}", c.set),
                    };
                    if dc {
                        *x = DONT_CARE;
                    }
                }
                fill(&mut v, &c.fill, c.block as usize);
                let o = WriteOptions {
                    block_positions: c.block,
                    level: c.level,
                    ..WriteOptions::default()
                };
                if c.dict > 0 {
                    let mut blocks = Vec::new();
                    for b in v.chunks_mut(c.block as usize) {
                        maj_fill(b);
                        if b.iter().all(|&x| x == b[0]) {
                            continue;
                        }
                        let mut p = vec![0u8; b.len().div_ceil(4)];
                        for (i, &x) in b.iter().enumerate() {
                            p[i / 4] |= x << (2 * (i % 4));
                        }
                        blocks.push(p);
                    }
                    let blocks_n = v.len().div_ceil(c.block as usize) as u64;
                    let key = if c.dict_scope == 'm' {
                        m.slice.material.to_string()
                    } else {
                        m.slice.material.pieces().to_string()
                    };
                    let fixed = if blocks.is_empty() {
                        72
                    } else {
                        72 + 8 * blocks_n
                    };
                    dict_blocks.lock().unwrap().push((
                        ci,
                        key,
                        m.slice.material.pieces(),
                        fixed,
                        blocks,
                    ));
                    return 0; // counted after the loop
                }
                if c.pack == 2 {
                    return encoded_len(&m, &v, &o);
                }
                // Other packings: 72 fixed bytes, 8 per block, compressed non-constant blocks.
                let mut total = 72u64;
                for b in v.chunks_mut(c.block as usize) {
                    maj_fill(b);
                    total += 8;
                    if b.iter().all(|&x| x == b[0]) {
                        continue;
                    }
                    let packed: Vec<u8> = if c.pack == 1 {
                        b.to_vec()
                    } else {
                        let mut p = vec![0u8; 2 * b.len().div_ceil(8)];
                        let h = p.len() / 2;
                        for (i, &x) in b.iter().enumerate() {
                            p[i / 8] |= u8::from(x == 1) << (i % 8);
                            p[h + i / 8] |= u8::from(x == 2) << (i % 8);
                        }
                        p
                    };
                    total += zstd::bulk::compress(&packed, c.level).unwrap().len() as u64;
                }
                if total == 72 + 8 * v.len().div_ceil(c.block as usize) as u64 {
                    total = 72; // uniform (approximately)
                }
                total
            })
            .collect();
        let mut a = acc.lock().unwrap();
        let e = a
            .entry(m.slice.material.pieces())
            .or_insert_with(|| (0, 0, 0, [0; 5], vec![0; cfgs.len()]));
        e.0 += 1;
        e.1 += m.positions;
        e.2 += t.file_bytes();
        for (a, c) in e.3.iter_mut().zip(counts) {
            *a += c;
        }
        for (k, s) in sizes.iter().enumerate() {
            e.4[k] += s;
        }
    });
    let mut a = acc.into_inner().unwrap();
    // Dictionary configurations: train per group, compress every block with and without.
    let mut groups: BTreeMap<(usize, String), Vec<Blocks>> = BTreeMap::new();
    for b in dict_blocks.into_inner().unwrap() {
        groups.entry((b.0, b.1.clone())).or_default().push(b);
    }
    let mut plain: BTreeMap<(usize, u32), u64> = BTreeMap::new();
    let mut dict_bytes: BTreeMap<(usize, u32), u64> = BTreeMap::new();
    for ((ci, _key), files) in &groups {
        let c = &cfgs[*ci];
        let all: Vec<&Vec<u8>> = files.iter().flat_map(|f| f.4.iter()).collect();
        let pieces = files[0].2;
        let fixed: u64 = files.iter().map(|f| f.3).sum();
        let nodict: u64 = all
            .par_iter()
            .map(|b| zstd::bulk::compress(b, c.level).unwrap().len() as u64)
            .sum();
        // Training sample: evenly spread blocks, up to 100x the dictionary size.
        let budget = 100 * c.dict;
        let total: usize = all.iter().map(|b| b.len()).sum();
        let step = total.div_ceil(budget.max(1)).max(1);
        let sample: Vec<&Vec<u8>> = all.iter().step_by(step).copied().collect();
        let with = if sample.len() < 8 {
            None
        } else {
            let data: Vec<u8> = sample.iter().flat_map(|b| b.iter().copied()).collect();
            let sizes: Vec<usize> = sample.iter().map(|b| b.len()).collect();
            zstd::dict::from_continuous(&data, &sizes, c.dict).ok()
        };
        let (dsz, withd) = match &with {
            Some(d) => {
                let sum: u64 = all
                    .par_iter()
                    .map_init(
                        || zstd::bulk::Compressor::with_dictionary(c.level, d).unwrap(),
                        |z, b| z.compress(b).unwrap().len() as u64,
                    )
                    .sum();
                (d.len() as u64, sum)
            }
            None => (0, nodict),
        };
        *plain.entry((*ci, pieces)).or_default() += fixed + nodict;
        *dict_bytes.entry((*ci, pieces)).or_default() += fixed + withd + dsz;
        let e = a.get_mut(&pieces).unwrap();
        e.4[*ci] += fixed + withd + dsz;
    }
    for ((ci, k), b) in &plain {
        let n = a[k].1;
        println!(
            "  ({} without its dictionary: {b} bytes, {:.1} pos/byte; with: {:.1} pos/byte)",
            cfgs[*ci].name,
            n as f64 / *b as f64,
            n as f64 / dict_bytes[&(*ci, *k)] as f64
        );
    }
    println!("{:.0}s", t0.elapsed().as_secs_f64());
    let mut tot = (0u64, 0u64, vec![0u64; cfgs.len()]);
    for (k, (f, n, old, cnt, sz)) in &a {
        println!(
            "{k} pieces: {f} files, {n} positions; capture {:.1}%, threat 1-ply {:.1}%, threat deeper {:.1}% (of which 2-ply {:.1}%)",
            100.0 * cnt[1] as f64 / *n as f64,
            100.0 * cnt[2] as f64 / *n as f64,
            100.0 * (cnt[3] + cnt[4]) as f64 / *n as f64,
            100.0 * cnt[4] as f64 / *n as f64
        );
        println!(
            "  as stored: {old} bytes, {:.1} pos/byte",
            *n as f64 / *old as f64
        );
        for (c, s) in cfgs.iter().zip(sz) {
            println!(
                "  {:<16} {s} bytes, {:.1} pos/byte",
                c.name,
                *n as f64 / *s as f64
            );
        }
        tot.0 += n;
        tot.1 += old;
        for (i, s) in sz.iter().enumerate() {
            tot.2[i] += s;
        }
    }
    println!(
        "all {min}-{max}: {} positions; as stored {} bytes, {:.1} pos/byte",
        tot.0,
        tot.1,
        tot.0 as f64 / tot.1 as f64
    );
    for (c, s) in cfgs.iter().zip(&tot.2) {
        println!(
            "  {:<16} {s} bytes, {:.1} pos/byte",
            c.name,
            tot.0 as f64 / *s as f64
        );
    }
}
