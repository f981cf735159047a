//! Depth-to-win benchmarks (not a timed test). Usage:
//!   cargo run --release --example bench_dtw -- DIR [N_POSITIONS [FEN]]
//! DIR holds tables built with `egdb build --dtw` (and `--dtc`). Reports: positions per byte
//! of the depth-to-win files per piece count (and of the `.dtc` and WLD files beside them);
//! warm single-thread ns per `probe_dtw`, `probe_dtc` and `probe_wld` on the same N random
//! positions (median over batches of 64, both sides to move, every position probed once
//! before timing; `probe_dtc` only when every slice has its `.dtc` file); the lengths of
//! `play::line` by DTW (and by DTC where the `.dtc` files are there) from FEN, by default the
//! longest DTW win of the largest piece count present (`stats::longest_dtw`, a scan of every
//! `.dtw` file: give the FEN from `egdb stats --dtw` to skip it). Env CACHE_MB: the probe
//! cache (default 1,024 MiB; the timing is warm only if the blocks of the N positions fit).
use checkers_egdb::format::SliceIndex;
use checkers_egdb::format::{dtc_path, slice_of_file_name, DtcFile, RULES_ENGLISH};
use checkers_egdb::format::{dtw_path, open_dtw};
use checkers_egdb::Position;
use checkers_egdb::Tablebase;
use checkers_egdb::{line, Metric};
use std::collections::BTreeMap;
use std::time::Instant;

#[path = "common/bench.rs"]
mod bench;
use bench::{median_ns, Rng};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(args.get(1).expect("usage: bench_dtw DIR [N]"));
    let n: usize = args.get(2).map_or(100_000, |s| s.parse().unwrap());
    let start_fen: Option<String> = args.get(3).cloned();
    // The probe cache in MiB (env CACHE_MB, default 1,024): "warm" needs every block the N
    // positions touch to fit (a decoded distance block is up to 64 KiB).
    let cache_mb: usize = std::env::var("CACHE_MB").map_or(1024, |s| s.parse().unwrap());
    let mut all_dtc = true;
    let mut slices = Vec::new();
    let mut total = 0u64;
    // piece count -> (positions, dtw bytes, dtc bytes, wld bytes)
    let mut sizes: BTreeMap<u32, (u64, u64, u64, u64)> = BTreeMap::new();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    for name in names {
        if let Some(s) = slice_of_file_name(&name) {
            let ix = SliceIndex::new(s);
            let w = open_dtw(&dtw_path(&dir, &s), RULES_ENGLISH).expect("a .dtw file");
            let c = DtcFile::open(&dtc_path(&dir, &s), RULES_ENGLISH)
                .map(|f| f.file_bytes())
                .unwrap_or(0);
            all_dtc &= c > 0;
            let x = sizes.entry(s.material.pieces()).or_default();
            x.0 += ix.size();
            x.1 += w.file_bytes();
            x.2 += c;
            x.3 += std::fs::metadata(dir.join(&name)).unwrap().len();
            total += ix.size();
            slices.push((total, ix));
        }
    }
    for (k, (p, w, c, v)) in &sizes {
        let per = |b: &u64| *p as f64 / (*b).max(1) as f64;
        let dtc = if *c == 0 {
            "-".to_string()
        } else {
            format!("{c} bytes ({:.2})", per(c))
        };
        println!(
            "{k} pieces: {p} positions; DTW {w} bytes ({:.2} positions/byte), DTC {dtc}, WLD {v} bytes ({:.1})",
            per(w),
            per(v)
        );
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let ps: Vec<Position> = (0..n)
        .map(|k| {
            let r = rng.next() % total;
            let (_, ix) = slices.iter().find(|(end, _)| r < *end).unwrap();
            let p = ix.unrank(rng.next() % ix.size()).unwrap();
            if k % 2 == 0 {
                p
            } else {
                p.flip()
            }
        })
        .collect();
    let tb = Tablebase::builder(&dir)
        .cache_bytes(cache_mb << 20)
        .open()
        .unwrap();
    for p in &ps {
        tb.probe_dtw(p).unwrap();
        if all_dtc {
            tb.probe_dtc(p).unwrap();
        }
    }
    let dtw = median_ns(&ps, 5, |p| tb.probe_dtw(p).unwrap());
    let dtc = if all_dtc {
        format!("{:.0} ns", median_ns(&ps, 5, |p| tb.probe_dtc(p).unwrap()))
    } else {
        "- (not every slice has its .dtc file)".to_string()
    };
    let wld = median_ns(&ps, 5, |p| tb.probe_wld(p).unwrap());
    println!(
        "warm probe_dtw {dtw:.0} ns, probe_dtc {dtc}, probe_wld {wld:.0} ns (median per probe; {n} positions, 1 thread)"
    );

    let max_pieces = sizes.keys().max().copied().unwrap_or(0);
    let (fen, what) = match start_fen {
        Some(f) => (f, "the given position".to_string()),
        None => {
            let rows = checkers_egdb::longest_dtw(&dir).unwrap();
            let best = rows
                .iter()
                .filter(|r| u32::from(r.bm + r.bk + r.wm + r.wk) == max_pieces)
                .filter_map(|r| r.longest_win.clone())
                .max_by_key(|(d, _)| *d)
                .unwrap();
            (best.1, format!("the longest {max_pieces}-piece DTW win"))
        }
    };
    let p = Position::from_fen(&fen).unwrap();
    let metrics: &[Metric] = if all_dtc {
        &[Metric::Dtw, Metric::Dtc]
    } else {
        &[Metric::Dtw]
    };
    for &metric in metrics {
        let t = Instant::now();
        let l = line(&tb, &p, metric, 10_000).unwrap();
        let dtc = if all_dtc {
            tb.probe_dtc(&p).unwrap().to_string()
        } else {
            "-".to_string()
        };
        println!(
            "line by {metric} from {what} {fen} (DTW {}, DTC {dtc}): {} plies, {:?}, {:.1} ms",
            tb.probe_dtw(&p).unwrap(),
            l.moves.len(),
            l.end,
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}
