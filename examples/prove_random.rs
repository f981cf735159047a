//! Benchmark and self-consistency check of the prover: prove random positions with N pieces on
//! the tables of a directory holding fewer pieces, optionally compare every settled value with
//! a directory that holds the N-piece tables (or some of their slices: positions of the others
//! are not compared), and report the settled fraction, time per
//! position (median, 95th percentile) and peak RSS.
//!
//! ```text
//! cargo run --release --example prove_random -- --tables DIR [--truth DIR] [--pieces 6]
//!     [--count 200] [--seed 1] [--nodes N] [--time S] [--tt-mb 256] [--threads 2] [--check] [--verbose]
//!     [--layer POSITIONS] [--no-stop-implied] [--covered]
//! ```
//! `--covered` (with `--truth`): draw only positions whose slice the truth directory holds
//! (a build in progress: every position drawn is then compared; positions of missing slices are
//! drawn and thrown away, at most 10,000,000 tries a position).
//! `--no-stop-implied`: each goal runs to its own answer (`ProveOptions::stop_implied` false,
//! the prover before issue 37's implied-goal stop), for before/after comparisons.
//! `--check` also extracts every certificate and verifies it with the independent checker.
//! `--verbose` prints one line per position on stderr (FEN, value, seconds, nodes).
//! Exit status 1 on any mismatch or rejected certificate.
use checkers_egdb::{certificate as cert, ProveOptions, Prover, Tablebase, Wld};
use std::time::Duration;

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

#[path = "../tests/random_positions/mod.rs"]
mod random_positions;
use random_positions::{random_position, Rng};

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tables: String = arg(&args, "--tables").expect("--tables DIR");
    let truth: Option<String> = arg(&args, "--truth");
    let pieces: u32 = arg(&args, "--pieces").unwrap_or(6);
    let count: usize = arg(&args, "--count").unwrap_or(200);
    let seed: u64 = arg(&args, "--seed").unwrap_or(1);
    let check = args.iter().any(|a| a == "--check");
    let opts = ProveOptions {
        nodes: arg(&args, "--nodes"),
        time: Some(Duration::from_secs_f64(
            arg(&args, "--time").unwrap_or(10.0),
        )),
        tt_bytes: arg::<usize>(&args, "--tt-mb").unwrap_or(256) << 20,
        threads: arg(&args, "--threads").unwrap_or(2),
        certificate: check,
        layer_positions: arg(&args, "--layer").unwrap_or(2_000_000),
        memory: None,
        stop_implied: !args.iter().any(|a| a == "--no-stop-implied"),
        ..ProveOptions::default()
    };
    let tb = Tablebase::open(&tables).expect("open --tables");
    let truth = truth.map(|d| Tablebase::open(d).expect("open --truth"));
    let mut prover = Prover::new(&tb, &opts);
    let set = prover.table_set().expect("table set");
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let (mut settled, mut mismatches, mut bad_certs) = (0usize, 0usize, 0usize);
    let mut compared = 0usize;
    let mut times = Vec::new();
    let mut nodes = Vec::new();
    let mut by_value = [0usize; 3];
    let verbose = args.iter().any(|a| a == "--verbose");
    let covered_only = args.iter().any(|a| a == "--covered");
    assert!(
        !covered_only || truth.is_some(),
        "--covered needs --truth DIR"
    );
    let t0 = std::time::Instant::now();
    for _ in 0..count {
        let mut p = random_position(&mut rng, pieces);
        if covered_only {
            let t = truth.as_ref().expect("--truth");
            let mut tries = 1u64;
            while !t.covers(&p) {
                assert!(
                    tries < 10_000_000,
                    "--covered: no slice of the truth directory hit in 10,000,000 random positions"
                );
                p = random_position(&mut rng, pieces);
                tries += 1;
            }
        }
        let r = match prover.prove(&p) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{}\terror: {e}", p.to_fen());
                bad_certs += 1;
                continue;
            }
        };
        times.push(r.seconds);
        // Unsettled positions count as infinitely many nodes for the quantiles.
        nodes.push(if r.value.is_some() { r.nodes } else { u64::MAX });
        if verbose {
            let v = r.value.map_or("unknown".to_string(), |v| v.to_string());
            eprintln!("{}\t{v}\t{:.3}s\t{} nodes", p.to_fen(), r.seconds, r.nodes);
        }
        if let Some(v) = r.value {
            settled += 1;
            by_value[v as usize] += 1;
            // A truth directory may hold only some slices (a build in progress).
            if let Some(t) = truth.as_ref().filter(|t| t.covers(&p)) {
                compared += 1;
                let want = t.probe_wld(&p).expect("truth probe");
                if want != v {
                    mismatches += 1;
                    eprintln!("MISMATCH {}: prover {v}, tables {want}", p.to_fen());
                }
            }
            if check {
                let text = cert::certificate_text(&set, &r.proofs);
                match checkers_egdb::certificate::check_certificate(&text, tb.dir()) {
                    Ok(rep) => {
                        if rep.values() != vec![(p, Some(v))] {
                            bad_certs += 1;
                            eprintln!("CERT VALUE {}: {:?}", p.to_fen(), rep.values());
                        }
                    }
                    Err(e) => {
                        bad_certs += 1;
                        eprintln!("CERT REJECTED {}: {e}", p.to_fen());
                    }
                }
            }
        }
    }
    times.sort_by(f64::total_cmp);
    let q = |f: f64| {
        times
            .get(((times.len() as f64 - 1.0) * f) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    println!(
        "pieces {pieces} on tables <= {}: {count} positions, settled {settled} ({:.1}%: {} win, {} draw, {} loss), compared with --truth {compared}, mismatches {mismatches}, rejected certificates/errors {bad_certs}",
        tb.max_pieces(),
        100.0 * settled as f64 / count.max(1) as f64,
        by_value[Wld::Win as usize],
        by_value[Wld::Draw as usize],
        by_value[Wld::Loss as usize],
    );
    println!(
        "time per position: median {:.4} s, p95 {:.4} s, max {:.4} s; total {:.1} s; peak RSS {:.0} MB",
        q(0.5),
        q(0.95),
        q(1.0),
        t0.elapsed().as_secs_f64(),
        peak_rss_mb()
    );
    nodes.sort_unstable();
    let qn = |f: f64| {
        let v = nodes
            .get(((nodes.len() as f64 - 1.0) * f) as usize)
            .copied()
            .unwrap_or(0);
        if v == u64::MAX {
            "unsettled".to_string()
        } else {
            v.to_string()
        }
    };
    println!(
        "nodes per position (both goals; unsettled count as infinite): median {}, p95 {}",
        qn(0.5),
        qn(0.95)
    );
    if mismatches > 0 || bad_certs > 0 {
        std::process::exit(1);
    }
}
