//! Probe benchmarks (not a timed test; `scripts/bench_probe.sh` builds tables and runs it).
//! Usage:
//!   cargo run --release --example bench_probe -- DIR [N_POSITIONS] [pread|mmap]
//! (the last argument chooses how every handle reads its files; default pread, as
//! `Tablebase::builder`).
//! N random quiet positions of each side to move are drawn from the slices of DIR (weighted by
//! slice size). Reports: cold first-probe latency; memory of an open handle and after warming;
//! warm single-thread ns per `probe_wld` (median and p99 over batches of 64 probes, Black and
//! White to move separately, and their ratio); warm `probe_wld_cached` the same way; 2 threads
//! probing at once (median and p99 per thread); probes with no cache (a block decode each).
//! The cold and no-cache figures are also given in CPU time of the probing thread (the
//! machine may be loaded: CPU time counts only this thread's work). The slices are taken in
//! name order, so directories of the same slices in other codecs probe the same positions.
use checkers_egdb::format::{SliceIndex, TableFile};
use checkers_egdb::{Access, Color, Position, Tablebase, Wld};
use std::time::Instant;

#[path = "common/bench.rs"]
mod bench;
use bench::Rng;

fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|x| x.parse().ok())
        .unwrap_or(0)
}

/// Median and 99th percentile of `v`.
fn quantiles(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[v.len() / 2], v[(v.len() * 99 / 100).min(v.len() - 1)])
}

fn median(v: Vec<f64>) -> f64 {
    quantiles(v).0
}

/// CPU time of the calling thread, in microseconds.
fn thread_cpu_us() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3
}

/// Positions per timed batch: small enough for a meaningful p99, large enough that the timer
/// (about 20-30 ns a read) costs under 1 ns per probe.
const BATCH: usize = 64;

/// Mean ns per probe of each batch of `BATCH` probes, over `rounds` passes over `ps`.
#[inline(never)]
fn time_batches(ps: &[Position], rounds: usize, f: impl Fn(&Position) -> Wld) -> Vec<f64> {
    let mut per = Vec::with_capacity(rounds * ps.len() / BATCH + 1);
    for _round in 0..rounds {
        for chunk in ps.chunks(BATCH) {
            let t = Instant::now();
            for p in chunk {
                std::hint::black_box(f(std::hint::black_box(p)));
            }
            per.push(t.elapsed().as_nanos() as f64 / chunk.len() as f64);
        }
    }
    per
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let n: usize = args.get(2).map_or(100_000, |s| s.parse().unwrap());
    let access = match args.get(3).map(String::as_str) {
        None | Some("pread") => Access::Pread,
        Some("mmap") => Access::Mmap,
        Some(x) => panic!("access {x}: expected pread or mmap"),
    };
    println!("file access: {access:?}");
    // Slices weighted by size.
    let mut slices = Vec::new();
    let mut total = 0u64;
    // Slice files and the slices of material files (`egdb pack`), in file-name order (the
    // order earlier versions of this benchmark used, so the same positions are drawn).
    let mut names: Vec<(String, checkers_egdb::Slice)> = checkers_egdb::scan_dir(&dir)
        .unwrap()
        .into_iter()
        .map(|(s, _)| (s.to_string(), s))
        .collect();
    names.sort();
    for (_, s) in names {
        let ix = SliceIndex::new(s);
        total += ix.size();
        slices.push((total, ix));
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut gen = |side: Color| loop {
        let r = rng.next() % total;
        let k = slices.partition_point(|(c, _)| *c <= r);
        let ix = &slices[k].1;
        let p = ix.unrank(rng.next() % ix.size()).unwrap();
        let p = if side == Color::White { p.flip() } else { p };
        if !p.has_capture() {
            break p;
        }
    };
    let black: Vec<Position> = (0..n).map(|_| gen(Color::Black)).collect();
    let white: Vec<Position> = (0..n).map(|_| gen(Color::White)).collect();

    // Cold first probe: fresh handle, one probe of a position whose slice is not open.
    let mut cold = Vec::new();
    let mut cold_cpu = Vec::new();
    for p in black.iter().take(20) {
        let tb = Tablebase::builder(&dir).access(access).open().unwrap();
        let c = thread_cpu_us();
        let t = Instant::now();
        tb.probe_wld(p).unwrap();
        cold.push(t.elapsed().as_nanos() as f64 / 1000.0);
        cold_cpu.push(thread_cpu_us() - c);
    }
    println!(
        "cold first probe (open + map + decode one block): median {:.1} us (CPU {:.1} us)",
        median(cold),
        median(cold_cpu)
    );

    let rss0 = rss_kib();
    let tb = Tablebase::builder(&dir)
        .access(access)
        .cache_bytes(1 << 30)
        .open()
        .unwrap();
    let rss1 = rss_kib();
    for p in black.iter().chain(&white) {
        tb.probe_wld(p).unwrap();
    }
    let rss2 = rss_kib();
    let st = tb.stats();
    println!(
        "memory: open handle {} KiB; after warming {} positions: {} KiB RSS more ({} blocks, {} KiB cached; mapped pages touched count too)",
        rss1 - rss0, 2 * n, rss2 - rss1, st.cached_blocks, st.cached_bytes / 1024
    );
    let probe = |p: &Position| tb.probe_wld(p).unwrap();
    let (b, b99) = quantiles(time_batches(&black, 5, probe));
    let (w, w99) = quantiles(time_batches(&white, 5, probe));
    println!(
        "warm single thread probe_wld (ns per probe, batches of {BATCH}): Black to move median {b:.0} p99 {b99:.0}; White to move median {w:.0} p99 {w99:.0}; W/B ratio {:.2}",
        w / b
    );
    // Cache-only probes, measured the same way. With a working set larger than what the
    // set-associative cache keeps, some answer NotInCache (counted, answered as a draw here).
    let misses = std::sync::atomic::AtomicU64::new(0);
    let cached = |p: &Position| {
        tb.probe_wld_cached(p).unwrap_or_else(|_| {
            misses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Wld::Draw
        })
    };
    let (c, c99) = quantiles(time_batches(&black, 5, cached));
    let (b2, _) = quantiles(time_batches(&black, 5, probe));
    println!(
        "warm single thread probe_wld_cached, Black to move: median {c:.0} p99 {c99:.0} ns (probe_wld again, same run: {b2:.0}); {} of {} answered NotInCache",
        misses.load(std::sync::atomic::Ordering::Relaxed),
        5 * black.len()
    );
    // Two threads, each its own positions (Black to move / White to move).
    let res: Vec<Vec<f64>> = std::thread::scope(|s| {
        let hs: Vec<_> = [&black, &white]
            .into_iter()
            .map(|ps| s.spawn(move || time_batches(ps, 3, probe)))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let all: Vec<f64> = res.into_iter().flatten().collect();
    let (m2, p2) = quantiles(all);
    println!(
        "2 threads probe_wld: median {m2:.0} p99 {p2:.0} ns per probe per thread ({:.1} M probes/s total at the median; this machine has {} cores, shared)",
        2.0 * 1000.0 / m2,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    // A probe with a cold cache but mapped files (block decode cost).
    let tb2 = Tablebase::builder(&dir)
        .access(access)
        .cache_bytes(0)
        .open()
        .unwrap();
    tb2.probe_wld(&black[0]).unwrap();
    let c = thread_cpu_us();
    let t = Instant::now();
    for p in black.iter().take(2000) {
        std::hint::black_box(tb2.probe_wld(p).unwrap());
    }
    println!(
        "no cache (block decode every probe, files open): {:.1} us mean (CPU {:.1} us)",
        t.elapsed().as_nanos() as f64 / 2000.0 / 1000.0,
        (thread_cpu_us() - c) / 2000.0
    );
    let _ = TableFile::open;
}
