//! Distance-to-conversion benchmarks (not a timed test; `scripts/bench_dtc.sh` builds the
//! tables and runs it). Usage:
//!   cargo run --release --example bench_dtc -- DIR [N_POSITIONS] [huge|nohuge]
//! (`huge`/`nohuge`: open with [`Tablebase`]'s `huge_pages(true)`/`(false)`; neither: the
//! builder's default, on).
//! DIR holds tables built with `egdb build --dtc`. Reports: positions per byte of the distance
//! files (all, and per piece count); warm single-thread ns per `probe_dtc` and per `probe_wld`
//! on the same N random positions (median over batches of 64, both sides to move); the time of
//! `play::line` on the longest win of the largest piece count present (cold: fresh handle, and
//! warm).
use checkers_egdb::format::{dtc_path, slice_of_file_name, DtcFile, SliceIndex, RULES_ENGLISH};
use checkers_egdb::{line, Position, Tablebase};
use std::collections::BTreeMap;
use std::time::Instant;

#[path = "common/bench.rs"]
mod bench;
use bench::{median_ns, Rng};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let n: usize = args.get(2).map_or(100_000, |s| s.parse().unwrap());
    let mut slices = Vec::new();
    let mut total = 0u64;
    // piece count -> (positions, dtc bytes, wld bytes)
    let mut sizes: BTreeMap<u32, (u64, u64, u64)> = BTreeMap::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        if let Some(s) = slice_of_file_name(&name) {
            let ix = SliceIndex::new(s);
            let f = DtcFile::open(&dtc_path(&dir, &s), RULES_ENGLISH).expect("a .dtc file");
            let x = sizes.entry(s.material.pieces()).or_default();
            x.0 += ix.size();
            x.1 += f.file_bytes();
            x.2 += e.metadata().unwrap().len();
            total += ix.size();
            slices.push((total, ix));
        }
    }
    let (mut p_all, mut b_all) = (0, 0);
    for (k, (p, b, w)) in &sizes {
        p_all += p;
        b_all += b;
        println!(
            "{k} pieces: {p} positions, {b} DTC bytes ({:.1} positions/byte), WLD {w} bytes ({:.1})",
            *p as f64 / *b as f64,
            *p as f64 / *w as f64
        );
    }
    println!(
        "all: {p_all} positions, {b_all} DTC bytes ({:.1} positions/byte)",
        p_all as f64 / b_all as f64
    );

    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let ps: Vec<Position> = (0..n)
        .map(|k| {
            let r = rng.next() % total;
            let (end, ix) = slices.iter().find(|(end, _)| r < *end).unwrap();
            let i = rng.next() % ix.size();
            let _ = end;
            let p = ix.unrank(i).unwrap();
            if k % 2 == 0 {
                p
            } else {
                p.flip()
            }
        })
        .collect();
    let huge = match args.get(3).map(String::as_str) {
        Some("huge") => Some(true),
        Some("nohuge") => Some(false),
        _ => None,
    };
    let mut builder = Tablebase::builder(&dir).cache_bytes(1 << 30);
    if let Some(h) = huge {
        builder = builder.huge_pages(h);
    }
    let tb = builder.open().unwrap();
    for p in &ps {
        tb.probe_dtc(p).unwrap();
    }
    let dtc = median_ns(&ps, 5, |p| tb.probe_dtc(p).unwrap());
    let wld = median_ns(&ps, 5, |p| tb.probe_wld(p).unwrap());
    println!(
        "warm probe_dtc: {dtc:.0} ns median per probe; probe_wld on the same positions {wld:.0} ns ({n} positions, 1 thread{})",
        match huge {
            Some(true) => ", huge pages",
            Some(false) => ", no huge pages",
            None => "",
        }
    );

    let rows = checkers_egdb::longest_dtc(&dir).unwrap();
    let max_pieces = sizes.keys().max().copied().unwrap_or(0);
    let best = rows
        .iter()
        .filter(|r| u32::from(r.bm + r.bk + r.wm + r.wk) == max_pieces)
        .filter_map(|r| r.longest_win.clone())
        .max_by_key(|(d, _)| *d)
        .unwrap();
    let p = Position::from_fen(&best.1).unwrap();
    let tb2 = Tablebase::open(&dir).unwrap();
    let t = Instant::now();
    let l = line(&tb2, &p, checkers_egdb::Metric::Dtc, 10_000).unwrap();
    let cold = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let l2 = line(&tb2, &p, checkers_egdb::Metric::Dtc, 10_000).unwrap();
    let warm = t.elapsed().as_secs_f64();
    assert_eq!(l, l2);
    println!(
        "line on the longest {max_pieces}-piece win {} (DTC {}): {} plies, {:?}; cold {:.1} ms, warm {:.2} ms",
        best.1,
        best.0,
        l.moves.len(),
        l.end,
        cold * 1e3,
        warm * 1e3
    );
}
