//! Probe benchmarks (not a timed test). Usage:
//!   cargo run --release --example bench_probe -- DIR [N_POSITIONS]
//! Reports: warm single-thread median ns per quiet probe (Black and White to move separately),
//! 2-thread throughput, cold first-probe latency, and resident memory of the open handle.
use checkers_egdb::probe::Tablebase;
use checkers_egdb::table::{slice_of_file_name, TableFile};
use checkers_egdb::{Color, Position, SliceIndex};
use std::time::Instant;

fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|x| x.parse().ok())
        .unwrap_or(0)
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Median over batches of the mean ns per probe.
fn time_probes(tb: &Tablebase, ps: &[Position]) -> f64 {
    let batch = 1000.min(ps.len());
    let mut per = Vec::new();
    for _round in 0..5 {
        for chunk in ps.chunks(batch) {
            let t = Instant::now();
            for p in chunk {
                std::hint::black_box(tb.probe_wld(std::hint::black_box(p)).unwrap());
            }
            per.push(t.elapsed().as_nanos() as f64 / chunk.len() as f64);
        }
    }
    median(per)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let n: usize = args.get(2).map_or(100_000, |s| s.parse().unwrap());
    // Slices weighted by size.
    let mut slices = Vec::new();
    let mut total = 0u64;
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if let Some(s) = slice_of_file_name(&name) {
            let ix = SliceIndex::new(s);
            total += ix.size();
            slices.push((total, ix));
        }
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
    for p in black.iter().take(20) {
        let tb = Tablebase::open(&dir).unwrap();
        let t = Instant::now();
        tb.probe_wld(p).unwrap();
        cold.push(t.elapsed().as_nanos() as f64 / 1000.0);
    }
    println!("cold first probe (open + map + decode one block): median {:.1} us", median(cold));

    let rss0 = rss_kib();
    let tb = Tablebase::builder(&dir).cache_bytes(1 << 30).open().unwrap();
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
    let b = time_probes(&tb, &black);
    let w = time_probes(&tb, &white);
    println!("warm single thread: Black to move {b:.0} ns median, White to move {w:.0} ns, ratio {:.2}", w.max(b) / w.min(b));
    // Cache-only probes.
    let t = Instant::now();
    for p in &black {
        std::hint::black_box(tb.probe_wld_cached(p).unwrap());
    }
    println!("warm probe_wld_cached: {:.0} ns mean", t.elapsed().as_nanos() as f64 / n as f64);
    // Two threads.
    let t = Instant::now();
    std::thread::scope(|s| {
        for ps in [&black, &white] {
            let tb = &tb;
            s.spawn(move || {
                for _ in 0..3 {
                    for p in ps.iter() {
                        std::hint::black_box(tb.probe_wld(p).unwrap());
                    }
                }
            });
        }
    });
    let el = t.elapsed().as_nanos() as f64;
    println!("2 threads: {:.0} ns per probe per thread ({:.1} M probes/s total)", el / (3.0 * n as f64), 6.0 * n as f64 / el * 1000.0);
    // A probe with a cold cache but mapped files (block decode cost).
    let tb2 = Tablebase::builder(&dir).cache_bytes(0).open().unwrap();
    tb2.probe_wld(&black[0]).unwrap();
    let t = Instant::now();
    for p in black.iter().take(2000) {
        std::hint::black_box(tb2.probe_wld(p).unwrap());
    }
    println!("no cache (block decode every probe, files open): {:.1} us mean", t.elapsed().as_nanos() as f64 / 2000.0 / 1000.0);
    let _ = TableFile::open;
}
