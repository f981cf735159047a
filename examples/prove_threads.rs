//! Speed-up of the prover from one thread to more: random positions with N pieces proven on the
//! tables of a directory holding fewer pieces, first once with one thread (warm-up: it pages in
//! the tables and picks the positions that take at least `--min-seconds` and settle within
//! `--time`), then each picked position again with every thread count of `--threads` (fresh
//! prover each time, so no table entries are carried over). Per position and in total: wall
//! time, CPU time of the process (all threads), node expansions (of each goal), node rate; the
//! values must be the same at every thread count (exit status 1 otherwise). A thread count is
//! the prover's threads in all (`ProveOptions::threads`).
//!
//! ```text
//! cargo run --release --example prove_threads -- --tables DIR [--pieces 8] [--count 40]
//!     [--seed 1] [--min-seconds 1] [--time 20] [--threads 1,2,2i] [--tt-mb 256] [--want 12]
//!     [--positions FILE] [--nodes N]
//! ```
//! `--nodes N`: a node budget per goal; with `--time 0` (no time limit) the weak-sums phase
//! of each goal (half its budget) is then a node count, not half a wall time, so the runs of
//! every thread count search the same phases (with a time limit alone, one thread gives the
//! first goal half the time and its weak phase a quarter, together each goal's weak phase is
//! half the time: node counts then differ by the phase switch, not by the threads).
//! A thread count `T` runs the goals together (`Schedule::Together`), `Ti` in turn
//! (`Schedule::InTurn`). `--positions FILE`: these positions (a FEN first on each line)
//! instead of random ones, each taken whatever its warm-up time. The summary compares every
//! run with the first of `--threads` (1 by default): per class of value (win, loss, draw) and
//! over all, the geometric mean of the wall-time ratios, the ratio of the wall-time sums, and
//! a CPU estimate of the speed-up on idle cores, `T * cpu(first) / cpu(run)` (the threads of
//! both schedules are all busy until the root is settled: a finished goal's threads join the
//! other, and a lent thread waits blocked).
//! On a loaded machine the wall-time speed-up measures the share of the cores the process got;
//! the CPU time and the nodes say how much work the threads did (see CHANGELOG, issue 37).
use checkers_egdb::{Position, ProveOptions, Prover, Schedule, Tablebase, Wld};
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
    /// Nodes of the win and not-lose goals.
    goals: [u64; 2],
}

fn run(tb: &Tablebase, p: &Position, opts: &ProveOptions, threads: usize, s: Schedule) -> Run {
    let o = ProveOptions {
        threads,
        schedule: s,
        ..opts.clone()
    };
    let (t0, c0) = (Instant::now(), cpu_seconds());
    let r = Prover::new(tb, &o).prove(p).expect("prove");
    Run {
        value: r.value,
        wall: t0.elapsed().as_secs_f64(),
        cpu: cpu_seconds() - c0,
        nodes: r.nodes,
        goals: [r.win.nodes, r.not_lose.nodes],
    }
}

fn geomean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tables: String = arg(&args, "--tables").expect("--tables DIR");
    let pieces: u32 = arg(&args, "--pieces").unwrap_or(8);
    let count: usize = arg(&args, "--count").unwrap_or(40);
    let want: usize = arg(&args, "--want").unwrap_or(12);
    let seed: u64 = arg(&args, "--seed").unwrap_or(1);
    let min_s: f64 = arg(&args, "--min-seconds").unwrap_or(1.0);
    let configs: Vec<(usize, Schedule, String)> = arg::<String>(&args, "--threads")
        .unwrap_or_else(|| "1,2,2i".into())
        .split(',')
        .map(|t| {
            let (n, s) = match t.strip_suffix('i') {
                Some(n) => (n, Schedule::InTurn),
                None => (t, Schedule::Together),
            };
            (n.parse().expect("--threads T,Ti,..."), s, t.to_string())
        })
        .collect();
    let opts = ProveOptions {
        // A node budget makes each goal's switch from weak sums to sums (at half its budget,
        // `Dfpn::solve_two_phase`) a node count instead of a wall time, the same at every
        // thread count and load; `--time 0`: no time limit.
        nodes: arg::<u64>(&args, "--nodes"),
        time: Some(arg(&args, "--time").unwrap_or(20.0))
            .filter(|t| *t > 0.0)
            .map(Duration::from_secs_f64),
        tt_bytes: arg::<usize>(&args, "--tt-mb").unwrap_or(256) << 20,
        certificate: false,
        layer_positions: 0,
        ..ProveOptions::default()
    };
    let tb = Tablebase::open(&tables).expect("open --tables");
    let mut rng = Rng(seed.max(1));
    let given: Option<Vec<Position>> = arg::<String>(&args, "--positions").map(|f| {
        std::fs::read_to_string(&f)
            .expect("read --positions")
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(|fen| Position::from_fen(fen).expect("a FEN"))
            .collect()
    });
    // Per picked position: its value and one run per configuration.
    let mut rows: Vec<(Wld, Vec<Run>)> = Vec::new();
    let mut bad = 0;
    let n = given.as_ref().map_or(count, Vec::len);
    for k in 0..n {
        if rows.len() >= want {
            break;
        }
        let p = match &given {
            Some(g) => g[k],
            None => random_position(&mut rng, pieces),
        };
        let warm = run(&tb, &p, &opts, 1, Schedule::Together);
        let Some(value) = warm.value else { continue };
        if given.is_none() && warm.wall < min_s {
            continue;
        }
        let mut line = format!("{} {:?}", p.to_fen(), value);
        let mut runs = Vec::new();
        for (t, s, label) in &configs {
            let r = run(&tb, &p, &opts, *t, *s);
            if r.value.is_some() && r.value != Some(value) {
                bad += 1;
                eprintln!("MISMATCH {}: {label} threads {:?}", p.to_fen(), r.value);
            }
            line += &format!(
                " | t={label} wall={:.2} cpu={:.2} nodes={} (win {} notlose {}) rate={:.0}/s{}",
                r.wall,
                r.cpu,
                r.nodes,
                r.goals[0],
                r.goals[1],
                r.nodes as f64 / r.wall,
                if r.value.is_none() { " UNKNOWN" } else { "" }
            );
            runs.push(r);
        }
        println!("{line}");
        rows.push((value, runs));
    }
    println!(
        "{} positions of at least {min_s} s with one thread (warm-up run)",
        rows.len()
    );
    for (i, (t, _, label)) in configs.iter().enumerate() {
        let (w, c, n) = rows.iter().fold((0.0, 0.0, 0u64), |a, (_, r)| {
            (a.0 + r[i].wall, a.1 + r[i].cpu, a.2 + r[i].nodes)
        });
        println!(
            "threads {label}: wall {w:.2} s, cpu {c:.2} s, nodes {n}, {:.0} nodes/s wall, {:.0} nodes/cpu-s",
            n as f64 / w,
            n as f64 / c
        );
        if i == 0 {
            continue;
        }
        let classes = [
            ("win", Some(Wld::Win)),
            ("loss", Some(Wld::Loss)),
            ("draw", Some(Wld::Draw)),
            ("all", None),
        ];
        for (name, class) in classes {
            let sel: Vec<&Vec<Run>> = rows
                .iter()
                .filter(|(v, _)| class.is_none_or(|c| c == *v))
                .map(|(_, r)| r)
                .collect();
            if sel.is_empty() {
                continue;
            }
            let wall: Vec<f64> = sel.iter().map(|r| r[0].wall / r[i].wall).collect();
            let cpu: Vec<f64> = sel
                .iter()
                .map(|r| *t as f64 * r[0].cpu / r[i].cpu)
                .collect();
            let sum = |j: usize| sel.iter().map(|r| r[j].wall).sum::<f64>();
            println!(
                "  {name} ({}): speed-up {} vs {label}: wall geomean {:.2}x, wall sums {:.2}x, cpu estimate geomean {:.2}x",
                sel.len(),
                configs[0].2,
                geomean(&wall),
                sum(0) / sum(i),
                geomean(&cpu)
            );
        }
    }
    if bad > 0 {
        std::process::exit(1);
    }
}
