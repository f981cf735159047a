//! Measure the exchange of a unit split over R ranks (issue 31, docs/mpi.md "Inside one
//! slice"): solves the unit of SLICE whole and split over RANKS in-process ranks
//! (`driver::run_local`, the same update lists `egdb build --mpi` sends), checks that the
//! values are identical, and prints per ply the predecessor updates and bytes sent between
//! ranks (summed over the ranks), then the totals against the model of docs/mpi.md (every
//! in-unit move carries at most one update; (R-1)/R of them cross ranks).
//!
//! With `EGDB_SPLIT_DTC=1` the distance pass (`--dtc`) runs too: its distances are checked
//! against the unsplit pass's, and its bytes per ply (king-move updates) and the bytes of its
//! request and answer exchange (the partner's values) are printed.
//!
//! `cargo run --release --example split_exchange -- DIR SLICE [RANKS] [ALIGN]`
//! (DIR holds the unit's dependencies, e.g. from `egdb build --pieces 5 --dir DIR`; RANKS
//! default 3; ALIGN the range alignment, default the file's block of 65,520 positions.)
use checkers_egdb::driver::{
    run_local, solve_unit, solve_unit_split, DecodedTables, UnitOptions, BLOCK_ALIGN,
};
use checkers_egdb::planning::build_order;
use checkers_egdb::{NoProgress, Slice};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: split_exchange DIR SLICE [RANKS] [ALIGN]");
        std::process::exit(2);
    }
    let dir = std::path::PathBuf::from(&args[0]);
    let s: Slice = args[1].parse().unwrap_or_else(|e| {
        eprintln!("split_exchange: error: {}: {e}", args[1]);
        std::process::exit(1)
    });
    let ranks: usize = args.get(2).and_then(|x| x.parse().ok()).unwrap_or(3);
    let align: u64 = args
        .get(3)
        .and_then(|x| x.parse().ok())
        .unwrap_or(BLOCK_ALIGN);
    let unit = build_order(s.material.pieces())
        .into_iter()
        .find(|u| u.slices.contains(&s))
        .expect("every slice has a unit");
    let dtc = std::env::var_os("EGDB_SPLIT_DTC").is_some_and(|v| v == "1");
    let uo = UnitOptions {
        wld_done: false,
        dtc,
        codec: checkers_egdb::format::CODEC_2BIT_ZSTD,
    };
    let positions: u64 = unit.sizes.iter().sum();
    let mut deps = DecodedTables::new(&dir);
    deps.begin_unit(&unit, 0);
    let t0 = Instant::now();
    let whole = solve_unit(&unit, &deps, &uo, &NoProgress).unwrap_or_else(|e| {
        eprintln!("split_exchange: error: {e}");
        std::process::exit(1)
    });
    let t_whole = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let out = run_local(ranks, |ex| {
        solve_unit_split(&unit, &deps, &uo, ex, align, &NoProgress).expect("split solve")
    });
    let t_split = t1.elapsed().as_secs_f64();
    let split = out[0].0.as_ref().expect("rank 0 gathers");
    for (a, b) in split.wld.iter().zip(&whole.wld) {
        assert!(
            a.values == b.values && a.captures == b.captures,
            "{}: split values differ",
            a.slice
        );
    }
    for (a, b) in split.dtc.iter().zip(&whole.dtc) {
        assert!(a.dtc == b.dtc, "{}: split distances differ", a.slice);
    }
    let names: Vec<String> = unit.slices.iter().map(|x| x.to_string()).collect();
    println!(
        "unit {} ({positions} positions) over {ranks} ranks, ranges aligned to {align}: values identical; whole {t_whole:.2} s, split (in-process) {t_split:.2} s",
        names.join(",")
    );
    println!("ply\tupdates\tbytes\tbytes_per_update");
    let plies = out[0].1.bytes_per_ply.len();
    let (mut tu, mut tb) = (0u64, 0u64);
    for k in 0..plies {
        let u: u64 = out.iter().map(|o| o.1.updates_per_ply[k]).sum();
        let b: u64 = out.iter().map(|o| o.1.bytes_per_ply[k]).sum();
        tu += u;
        tb += b;
        if u > 0 {
            println!("{k}\t{u}\t{b}\t{:.2}", b as f64 / u as f64);
        }
    }
    let busiest = (0..plies)
        .map(|k| out.iter().map(|o| o.1.bytes_per_ply[k]).sum::<u64>())
        .max()
        .unwrap_or(0);
    let gather: u64 = out.iter().map(|o| o.1.gather_bytes).sum();
    println!(
        "total\t{tu}\t{tb}\t{:.2}\t({:.3} updates and {:.3} bytes per position of the unit; busiest ply {busiest} bytes = {:.1}% of the total; gathered on rank 0: {gather} bytes)",
        tb as f64 / tu.max(1) as f64,
        tu as f64 / positions as f64,
        tb as f64 / positions as f64,
        100.0 * busiest as f64 / tb.max(1) as f64
    );
    if dtc {
        println!("distance pass (distances identical)\nply\tupdates_bytes");
        let plies = out[0].1.dtc_bytes_per_ply.len();
        let mut tb = 0u64;
        for k in 0..plies {
            let b: u64 = out.iter().map(|o| o.1.dtc_bytes_per_ply[k]).sum();
            tb += b;
            if b > 0 {
                println!("{k}\t{b}");
            }
        }
        let req: u64 = out.iter().map(|o| o.1.dtc_request_bytes).sum();
        let upd: u64 = out.iter().map(|o| o.1.dtc_updates_sent).sum();
        println!(
            "total\t{tb}\t({upd} king-move updates, {:.2} bytes each; {:.3} bytes per position of the unit; requests and answers for the partner's values: {req} bytes, {:.3} per position)",
            tb as f64 / upd.max(1) as f64,
            tb as f64 / positions as f64,
            req as f64 / positions as f64
        );
    }
}
