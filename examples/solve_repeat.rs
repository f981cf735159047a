//! Experiment: solve the same units again and again (win/loss/draw pass, then the distance
//! pass from it) and compare every run with the first, to catch a solver result that depends
//! on thread scheduling. Run it with more threads than cores (`RAYON_NUM_THREADS=32`) and
//! under other load, so that workers are preempted at arbitrary points. Usage:
//!   cargo run --release --example solve_repeat -- DIR ROUNDS SLICE...
//! DIR holds the tables the units read (their dependencies); each SLICE names a unit (either
//! of its slices). Per round and unit it prints the positions whose value, WLD resolution ply
//! or distance differ from round 0, and any distance-pass error (an inconsistency between
//! the two passes: the builder's recheck note, or its error). Exit status 1 if anything
//! differed.
use checkers_egdb::driver::{solve_unit, DecodedTables, UnitOptions};
use checkers_egdb::planning::build_order;
use checkers_egdb::{NoProgress, Slice};
use std::path::Path;
use std::time::Instant;

/// (values, WLD plies, distances) of every slice of a unit.
type Run = Vec<(Vec<u8>, Vec<u16>, Vec<u16>)>;

fn solve(unit: &checkers_egdb::Unit, deps: &DecodedTables) -> Result<Run, String> {
    let uo = UnitOptions {
        wld_done: false,
        dtc: true,
        codec: checkers_egdb::format::CODEC_2BIT_ZSTD,
    };
    let solved = solve_unit(unit, deps, &uo, &NoProgress).map_err(|e| e.to_string())?;
    if let Some(note) = solved.summary.rechecked.first() {
        // The distance pass disagreed with the values once (the builder solved again).
        return Err(note.clone());
    }
    Ok(solved
        .wld
        .into_iter()
        .zip(solved.dtc)
        .map(|(s, d)| (s.values, s.resolution_plies.unwrap_or_default(), d.dtc))
        .collect())
}

fn differ<T: PartialEq>(a: &[T], b: &[T]) -> (usize, Option<usize>) {
    let n = a.iter().zip(b).filter(|(x, y)| x != y).count();
    (n, a.iter().zip(b).position(|(x, y)| x != y))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: solve_repeat DIR ROUNDS SLICE...");
        std::process::exit(2);
    }
    let dir = Path::new(&args[1]);
    let rounds: usize = args[2].parse().expect("ROUNDS");
    let targets: Vec<Slice> = args[3..]
        .iter()
        .map(|s| s.parse().expect("SLICE"))
        .collect();
    let deps = DecodedTables::new(dir);
    let mut bad = false;
    for t in targets {
        let unit = build_order(t.material.pieces())
            .into_iter()
            .find(|u| u.slices.contains(&t))
            .expect("a slice of the build order");
        let n: u64 = unit.sizes.iter().sum();
        let mut first: Option<Run> = None;
        for r in 0..rounds {
            let t0 = Instant::now();
            let run = match solve(&unit, &deps) {
                Ok(x) => x,
                Err(e) => {
                    println!("{t} round {r}: ERROR {e}");
                    bad = true;
                    continue;
                }
            };
            let secs = t0.elapsed().as_secs_f64();
            let Some(f) = &first else {
                println!("{t} round 0: {n} positions, {secs:.2} s");
                first = Some(run);
                continue;
            };
            for (x, (a, b)) in f.iter().zip(&run).enumerate() {
                let v = differ(&a.0, &b.0);
                let p = differ(&a.1, &b.1);
                let d = differ(&a.2, &b.2);
                if v.0 + p.0 + d.0 > 0 {
                    bad = true;
                    println!(
                        "{t} round {r} slice {x}: {} values (first {:?}), {} plies (first {:?}), {} distances (first {:?}) differ",
                        v.0, v.1, p.0, p.1, d.0, d.1
                    );
                }
            }
            println!("{t} round {r}: {secs:.2} s");
        }
    }
    std::process::exit(i32::from(bad));
}
