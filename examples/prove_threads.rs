//! Speed-up of the prover from one thread to more: random positions with N pieces proven on the
//! tables of a directory holding fewer pieces, first once with one thread (warm-up: it pages in
//! the tables and picks the positions that take at least `--min-seconds` and settle within
//! `--time`), then each picked position again with every thread count of `--threads` (fresh
//! prover each time, so no table entries are carried over). Per position and in total: wall
//! time, CPU time of the process (all threads), node expansions, node rate; the values must be
//! the same at every thread count (exit status 1 otherwise). A thread count is the prover's
//! threads in all (`ProveOptions::threads`): 2 runs the two goals at once, one thread each; 4
//! gives each goal's search 2 threads sharing its table.
//!
//! ```text
//! cargo run --release --example prove_threads -- --tables DIR [--pieces 8] [--count 40]
//!     [--seed 1] [--min-seconds 1] [--time 20] [--threads 2,1] [--tt-mb 256] [--want 12]
//! ```
//! On a loaded machine the wall-time speed-up measures the share of the cores the process got;
//! the CPU time and the nodes say how much work the threads did (see CHANGELOG, issue 37).
use checkers_egdb::{ProveOptions, Prover, Tablebase};
use std::time::{Duration, Instant};

#[path = "../tests/random_positions/mod.rs"]
mod random_positions;
use random_positions::{random_position, Rng};

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

/// CPU seconds of the process so far (user + system, all threads; /proc/self/stat, clock
/// ticks of 1/100 s).
fn cpu_seconds() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name (in parentheses): utime and stime are the 12th and
    // 13th of them.
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

struct Run {
    value: Option<checkers_egdb::Wld>,
    wall: f64,
    cpu: f64,
    nodes: u64,
}

fn run(tb: &Tablebase, p: &checkers_egdb::Position, opts: &ProveOptions, threads: usize) -> Run {
    let o = ProveOptions {
        threads,
        ..opts.clone()
    };
    let (t0, c0) = (Instant::now(), cpu_seconds());
    let r = Prover::new(tb, &o).prove(p).expect("prove");
    Run {
        value: r.value,
        wall: t0.elapsed().as_secs_f64(),
        cpu: cpu_seconds() - c0,
        nodes: r.nodes,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tables: String = arg(&args, "--tables").expect("--tables DIR");
    let pieces: u32 = arg(&args, "--pieces").unwrap_or(8);
    let count: usize = arg(&args, "--count").unwrap_or(40);
    let want: usize = arg(&args, "--want").unwrap_or(12);
    let seed: u64 = arg(&args, "--seed").unwrap_or(1);
    let min_s: f64 = arg(&args, "--min-seconds").unwrap_or(1.0);
    let threads: Vec<usize> = arg::<String>(&args, "--threads")
        .unwrap_or_else(|| "2,1".into())
        .split(',')
        .map(|t| t.parse().expect("--threads T,T,..."))
        .collect();
    let opts = ProveOptions {
        nodes: None,
        time: Some(Duration::from_secs_f64(
            arg(&args, "--time").unwrap_or(20.0),
        )),
        tt_bytes: arg::<usize>(&args, "--tt-mb").unwrap_or(256) << 20,
        certificate: false,
        layer_positions: 0,
        ..ProveOptions::default()
    };
    let tb = Tablebase::open(&tables).expect("open --tables");
    let mut rng = Rng(seed.max(1));
    let mut total: Vec<(f64, f64, u64)> = vec![(0.0, 0.0, 0); threads.len()];
    let (mut picked, mut bad) = (0, 0);
    for _ in 0..count {
        if picked >= want {
            break;
        }
        let p = random_position(&mut rng, pieces);
        let warm = run(&tb, &p, &opts, 1);
        if warm.value.is_none() || warm.wall < min_s {
            continue;
        }
        picked += 1;
        let mut line = format!("{} {:?}", p.to_fen(), warm.value.expect("settled"));
        for (i, &t) in threads.iter().enumerate() {
            let r = run(&tb, &p, &opts, t);
            if r.value.is_some() && r.value != warm.value {
                bad += 1;
                eprintln!("MISMATCH {}: {t} threads {:?}", p.to_fen(), r.value);
            }
            line += &format!(
                " | t={t} wall={:.2} cpu={:.2} nodes={} rate={:.0}/s{}",
                r.wall,
                r.cpu,
                r.nodes,
                r.nodes as f64 / r.wall,
                if r.value.is_none() { " UNKNOWN" } else { "" }
            );
            total[i].0 += r.wall;
            total[i].1 += r.cpu;
            total[i].2 += r.nodes;
        }
        println!("{line}");
    }
    println!("{picked} positions of at least {min_s} s with one thread (warm-up run)");
    for (i, &t) in threads.iter().enumerate() {
        let (w, c, n) = total[i];
        println!(
            "threads {t}: wall {w:.2} s, cpu {c:.2} s, nodes {n}, {:.0} nodes/s wall, {:.0} nodes/cpu-s",
            n as f64 / w,
            n as f64 / c
        );
    }
    if let (Some(a), Some(b)) = (
        threads.iter().position(|&t| t == 1),
        threads.iter().position(|&t| t == 2),
    ) {
        println!(
            "speed-up 1 -> 2 threads (sum of wall times): {:.2}x",
            total[a].0 / total[b].0
        );
    }
    if bad > 0 {
        std::process::exit(1);
    }
}
