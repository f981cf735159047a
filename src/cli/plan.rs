//! `egdb plan`: build order of slice units and their dependencies; with `--memory`, the
//! predicted memory and disk of every step (see [`checkers_egdb::planning::predict`]).
use super::CliResult;
use checkers_egdb::planning::{build_order, format_size, parse_size, predict, StepPrediction};
use checkers_egdb::Unit;

/// Arguments of `egdb plan`.
#[derive(clap::Args)]
pub struct Args {
    /// Plan every slice with 1..=N pieces (1-10).
    #[arg(long)]
    pieces: u32,
    /// Predict each step's memory and disk under this budget (e.g. 512M, 20G; `unbounded` for
    /// no budget), as `egdb build --memory` would run it.
    #[arg(long, value_name = "SIZE", value_parser = parse_budget)]
    memory: Option<Budget>,
    /// Positions per byte assumed for the disk estimate of --memory (default 65: measured at 6
    /// pieces; 0.1 to 100000).
    #[arg(long, value_name = "X", requires = "memory")]
    positions_per_byte: Option<f64>,
    /// Print JSON: `{"max_pieces": N, "units": [{"id", "slices", "sizes", "pieces", "deps",
    /// "dep_units", "capture_materials"}, ...]}`; with `--memory` every unit also has
    /// `"predicted": {"unit_bytes", "writer_bytes", "resident_bytes", "resident_slices", "spilled_bytes",
    /// "loaded_bytes", "cache_bytes", "peak_bytes", "disk_bytes"}` and the object a `"summary"`.
    #[arg(long)]
    json: bool,
}

/// `--positions-per-byte` when not given: the figure measured at 6 pieces.
const DEFAULT_POSITIONS_PER_BYTE: f64 = 65.0;
/// The smallest `--positions-per-byte` accepted (10 bytes a position: more than any file takes).
const MIN_POSITIONS_PER_BYTE: f64 = 0.1;
/// The largest `--positions-per-byte` accepted (far above any table's compression).
const MAX_POSITIONS_PER_BYTE: f64 = 100_000.0;

/// A `--memory` value of `egdb plan`.
#[derive(Clone, Copy, Debug)]
struct Budget(Option<u64>);

fn parse_budget(s: &str) -> Result<Budget, String> {
    if s.eq_ignore_ascii_case("unbounded") {
        return Ok(Budget(None));
    }
    parse_size(s)
        .map(|b| Budget(Some(b)))
        .map_err(|e| e.to_string())
}

/// Totals of a prediction.
struct Summary {
    peak: u64,
    peak_unit: usize,
    positions: u64,
    disk: u64,
    max_resident: u64,
    steps_spilling: usize,
    spilled: u64,
    largest_unit: u64,
    loaded: u64,
}

fn summarise(p: &[StepPrediction]) -> Summary {
    let top = p
        .iter()
        .max_by_key(|s| (s.peak_bytes, std::cmp::Reverse(s.unit)));
    Summary {
        peak: top.map_or(0, |s| s.peak_bytes),
        peak_unit: top.map_or(0, |s| s.unit),
        positions: p.iter().map(|s| s.positions).sum(),
        disk: p.iter().map(|s| s.disk_bytes).sum(),
        max_resident: p.iter().map(|s| s.resident_bytes).max().unwrap_or(0),
        steps_spilling: p.iter().filter(|s| s.spilled_bytes > 0).count(),
        spilled: p.iter().map(|s| s.spilled_bytes).sum(),
        largest_unit: p.iter().map(|s| s.unit_bytes).max().unwrap_or(0),
        loaded: p.iter().map(|s| s.loaded_bytes).sum(),
    }
}

/// Run `egdb plan`. Text form, one line per unit in build order:
/// `id<TAB>slices (comma-separated)<TAB>positions per slice<TAB>dep_units<TAB>deps<TAB>capture materials`
/// (lists comma-separated, `-` when empty). With `--memory`, one line per unit
/// `id<TAB>slices<TAB>positions<TAB>unit bytes<TAB>resident bytes<TAB>resident slices<TAB>spilled bytes<TAB>loaded bytes<TAB>cache bytes<TAB>peak bytes<TAB>disk bytes`
/// after a `#` header, then a `# summary: ...` line.
pub fn run(args: Args) -> CliResult {
    if !(1..=10).contains(&args.pieces) {
        return Err(format!("--pieces must be between 1 and 10 (got {})", args.pieces).into());
    }
    let ppb = args
        .positions_per_byte
        .unwrap_or(DEFAULT_POSITIONS_PER_BYTE);
    // NaN fails both comparisons.
    if !(MIN_POSITIONS_PER_BYTE..=MAX_POSITIONS_PER_BYTE).contains(&ppb) {
        return Err(format!(
            "--positions-per-byte must be a number from {MIN_POSITIONS_PER_BYTE} to \
             {MAX_POSITIONS_PER_BYTE} (table files hold about 60 to 150 positions per byte), \
             got {:?}",
            args.positions_per_byte.unwrap_or(ppb)
        )
        .into());
    }
    let units = build_order(args.pieces);
    let refs: Vec<&Unit> = units.iter().collect();
    let pred = args.memory.map(|b| predict(&refs, b.0, ppb));
    let join = |v: Vec<String>| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(",")
        }
    };
    let budget_text = |b: &Budget| b.0.map_or("unbounded".to_string(), format_size);
    if args.json {
        let mut list = Vec::with_capacity(units.len());
        for (i, u) in units.iter().enumerate() {
            let mut v = u.to_json();
            if let Some(p) = pred.as_ref().map(|p| &p[i]) {
                v["predicted"] = serde_json::json!({
                    "unit_bytes": p.unit_bytes,
                    "writer_bytes": p.writer_bytes,
                    "resident_bytes": p.resident_bytes,
                    "resident_slices": p.resident_slices,
                    "spilled_bytes": p.spilled_bytes,
                    "loaded_bytes": p.loaded_bytes,
                    "cache_bytes": p.cache_bytes,
                    "peak_bytes": p.peak_bytes,
                    "disk_bytes": p.disk_bytes,
                });
            }
            list.push(v);
        }
        let mut v = serde_json::json!({
            "max_pieces": args.pieces,
            "units": list,
        });
        if let (Some(p), Some(b)) = (&pred, &args.memory) {
            let s = summarise(p);
            v["summary"] = serde_json::json!({
                "budget_bytes": b.0,
                "peak_bytes": s.peak,
                "peak_unit": s.peak_unit,
                "positions": s.positions,
                "disk_bytes": s.disk,
                "max_resident_bytes": s.max_resident,
                "largest_unit_bytes": s.largest_unit,
                "steps_spilling": s.steps_spilling,
                "spilled_bytes": s.spilled,
                "loaded_bytes": s.loaded,
                "positions_per_byte": ppb,
            });
        }
        println!("{v}");
        return Ok(());
    }
    let mut out = String::new();
    if let (Some(p), Some(b)) = (&pred, &args.memory) {
        out.push_str("# id\tslices\tpositions\tunit_bytes\twriter_bytes\tresident_bytes\tresident_slices\tspilled_bytes\tloaded_bytes\tcache_bytes\tpeak_bytes\tdisk_bytes\n");
        for (u, s) in units.iter().zip(p) {
            out.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                u.id,
                join(u.slices.iter().map(|s| s.to_string()).collect()),
                s.positions,
                s.unit_bytes,
                s.writer_bytes,
                s.resident_bytes,
                s.resident_slices,
                s.spilled_bytes,
                s.loaded_bytes,
                s.cache_bytes,
                s.peak_bytes,
                s.disk_bytes
            ));
        }
        let s = summarise(p);
        let peak_names = join(
            units[s.peak_unit]
                .slices
                .iter()
                .map(|s| s.to_string())
                .collect(),
        );
        out.push_str(&format!(
            "# summary: budget {}, peak {} at unit {} ({}), largest unit {}, most decoded dependencies {}, {} steps spill {} to the block cache, {} decoded from files, {} positions, disk {} at {} positions/byte\n",
            budget_text(b),
            format_size(s.peak),
            s.peak_unit,
            peak_names,
            format_size(s.largest_unit),
            format_size(s.max_resident),
            s.steps_spilling,
            format_size(s.spilled),
            format_size(s.loaded),
            s.positions,
            format_size(s.disk),
            ppb
        ));
        print!("{out}");
        return Ok(());
    }
    for u in &units {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            u.id,
            join(u.slices.iter().map(|s| s.to_string()).collect()),
            u.sizes[0],
            join(u.dep_units.iter().map(|d| d.to_string()).collect()),
            join(u.deps.iter().map(|s| s.to_string()).collect()),
            join(u.capture_materials.iter().map(|m| m.to_string()).collect()),
        ));
    }
    print!("{out}");
    Ok(())
}
