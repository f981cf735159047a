//! Codec 6 experiment (issue 32): bytes and segment decode time of codec 6
//! (`format::cm6`) on built codec-2 (or 4/5) tables, and the training of its prior.
//!
//! Usage: `SAMPLE=k [SEG=positions] [WEIGHT=bits] cargo run --release --example cm6_experiment -- DIR PIECES [PRIOR_OUT]`
//!
//! Every k-th WLD file of `PIECES` pieces in `DIR` (by name order) is decoded, each block coded
//! with `cm6::encode_block_with` under the compiled-in prior (`FLAT=1`: every probability
//! 1/2), and the whole files' bytes are counted as the writer would lay them out (64-byte
//! header, 8-byte checksum, 8 bytes per block entry, constant blocks no data, a uniform slice
//! 72 bytes). Prints positions per byte and the mean time to decode one segment (one thread).
//! With `PRIOR_OUT`, writes the prior trained on the bits seen (per context and decision:
//! `(zeros + 1) / (zeros + ones + 2)` in 12 bits, clamped as the model clamps) as a Rust array
//! literal, the form of `src/table/cm6_prior.in`.
use checkers_egdb::format::{cm6, SliceIndex, TableFile};
use rayon::prelude::*;
use std::sync::Mutex;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let pieces: u32 = args[2].parse().unwrap();
    let k: usize = std::env::var("SAMPLE").map_or(1, |s| s.parse().unwrap());
    let flat = std::env::var("FLAT").is_ok();
    let prior = if flat {
        [[2048u16, 2048]; cm6::CONTEXTS]
    } else {
        cm6::PRIOR
    };
    let env = |k: &str, d: usize| std::env::var(k).map_or(d, |s| s.parse().unwrap());
    let params = cm6::Params {
        segment: env("SEG", cm6::SEGMENT),
        weight: env("WEIGHT", usize::from(cm6::PRIOR_WEIGHT)) as u16,
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension().is_some_and(|x| x == "egdb")).then_some(p)
        })
        .filter(|p| {
            let t = TableFile::open(p).unwrap();
            t.meta().slice.material.pieces() == pieces
        })
        .collect();
    files.sort();
    let files: Vec<_> = files.into_iter().step_by(k).collect();
    let counts = Mutex::new(vec![[[0u64; 2]; 2]; cm6::CONTEXTS]);
    let totals = Mutex::new((0u64, 0u64, 0u64, 0f64, 0u64)); // positions, bytes, old bytes, decode s, segments
    let t0 = Instant::now();
    files.par_iter().for_each(|path| {
        let t = TableFile::open(path).unwrap();
        let meta = t.meta().clone();
        let ix = SliceIndex::new(meta.slice);
        let vals = t.decode_all().unwrap();
        let bp = 65_520usize;
        let mut cn = vec![[[0u64; 2]; 2]; cm6::CONTEXTS];
        let mut data = 0u64;
        let mut nblocks = 0u64;
        let mut consts = 0u64;
        let mut dsecs = 0f64;
        let mut nseg = 0u64;
        let mut first_const = None;
        let mut all_const = true;
        for (b, chunk) in vals.chunks(bp).enumerate() {
            nblocks += 1;
            let start = (b * bp) as u64;
            match cm6::encode_block_with(&ix, start, chunk, &prior, params, Some(&mut cn)).unwrap()
            {
                cm6::Coded::Const(c) => {
                    consts += 1;
                    match first_const {
                        None => first_const = Some(c),
                        Some(x) if x != c => all_const = false,
                        _ => {}
                    }
                }
                cm6::Coded::Bytes(d) => {
                    all_const = false;
                    data += d.len() as u64;
                    if !flat {
                        let r = cm6::segment_ranges_with(chunk.len(), &d, params.segment).unwrap();
                        let t1 = Instant::now();
                        for (s, &(a, e)) in r.iter().enumerate() {
                            std::hint::black_box(
                                cm6::decode_segment_with(
                                    &ix,
                                    start,
                                    chunk.len(),
                                    s,
                                    &d[a..e],
                                    &prior,
                                    params,
                                )
                                .unwrap(),
                            );
                        }
                        dsecs += t1.elapsed().as_secs_f64();
                        nseg += r.len() as u64;
                    }
                }
            }
        }
        let _ = consts;
        let bytes = if all_const {
            72
        } else {
            72 + 8 * nblocks + data
        };
        let mut c = counts.lock().unwrap();
        for (a, b) in c.iter_mut().zip(cn.iter()) {
            for d in 0..2 {
                a[d][0] += b[d][0];
                a[d][1] += b[d][1];
            }
        }
        let mut tt = totals.lock().unwrap();
        tt.0 += meta.positions;
        tt.1 += bytes;
        tt.2 += t.file_bytes();
        tt.3 += dsecs;
        tt.4 += nseg;
    });
    let tt = totals.lock().unwrap();
    println!(
        "{} files, {} positions: codec 6 {} bytes = {:.1} positions/byte; as stored {} bytes = {:.1}; segment decode mean {:.1} us over {} segments; {:.0} s",
        files.len(),
        tt.0,
        tt.1,
        tt.0 as f64 / tt.1 as f64,
        tt.2,
        tt.0 as f64 / tt.2 as f64,
        tt.3 * 1e6 / tt.4.max(1) as f64,
        tt.4,
        t0.elapsed().as_secs_f64()
    );
    if let Some(out) = args.get(3) {
        let c = counts.lock().unwrap();
        let mut s = String::from("[");
        for (i, ctx) in c.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let p = |d: [u64; 2]| {
                let q = (d[0] as f64 + 1.0) / (d[0] as f64 + d[1] as f64 + 2.0);
                ((q * 4096.0).round() as u32).clamp(31, 4065)
            };
            s.push_str(&format!("[{}, {}]", p(ctx[0]), p(ctx[1])));
        }
        s.push_str("]\n");
        std::fs::write(out, s).unwrap();
    }
}
