//! `egdb plan`: build order of slice units and their dependencies; with `--memory`, the
//! predicted memory and disk of every step (see [`checkers_egdb::planning::predict`]).
use super::CliResult;
use checkers_egdb::planning::{
    build_order, format_size, parse_size, predict_for, unit_bytes_per_position,
    unit_reads_decoded_bytes, StepPrediction,
};
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
    /// With --memory (per rank): the plan of `egdb build --mpi` on this many ranks: which
    /// units are split over the ranks (their solver state over --memory, or their dependencies
    /// decoded fitting only next to a share of it), whether each one's dependencies fit decoded,
    /// the solver state per rank, the predecessor updates exchanged (model of docs/mpi.md), and
    /// the critical path.
    #[arg(long, value_name = "R", requires = "memory", conflicts_with = "json")]
    ranks: Option<u32>,
    /// With --memory: plan a build with `--dtc` (each unit's distance pass too): the unit
    /// being solved is charged 7 bytes per position instead of 2 (the distance pass's state,
    /// plies and distances, measured), in the prediction and in the split decision of --ranks.
    #[arg(long, requires = "memory")]
    dtc: bool,
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
/// after a `#` header, then a `# summary: ...` line and a `# smallest budget egdb build
/// accepts: ...` line.
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
    if let Some(r) = args.ranks {
        if !(1..=1_000_000).contains(&r) {
            return Err(format!("--ranks must be between 1 and 1000000, got {r}").into());
        }
        let budget = args.memory.and_then(|b| b.0);
        print!("{}", cluster_plan(&units, r as u64, budget, args.dtc));
        return Ok(());
    }
    let refs: Vec<&Unit> = units.iter().collect();
    let pred = args.memory.map(|b| predict_for(&refs, b.0, ppb, args.dtc));
    // The smallest budget `egdb build` accepts for this plan (it refuses less up front).
    let least = checkers_egdb::planning::minimum_budget(&refs, args.dtc).map_or(0, |(_, b)| b);
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
                "minimum_budget_bytes": least,
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
        out.push_str(&format!(
            "# smallest budget egdb build accepts: {} ({least} bytes){}\n",
            format_size(least),
            if b.0.is_some_and(|b| b < least) {
                "; this budget is too small, egdb build refuses it"
            } else {
                ""
            }
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

/// In-unit moves per position assumed for the exchange estimate: the measured range at 9-10
/// pieces is 2.24-4.59 (docs/mpi.md, `examples/mpi_exchange.rs`), most slices near 2.5.
const MOVES_PER_POSITION: f64 = 2.5;
/// Bytes per predecessor update sent between ranks (delta-coded varints): measured on the
/// split units of `build --mpi --pieces 5` (docs/mpi.md, "Split units: measurements").
const BYTES_PER_UPDATE: f64 = 1.1;
use checkers_egdb::driver::exchange_round_bytes;

/// The text of `egdb plan --ranks R --memory SIZE`: one line per split unit, then a summary
/// (see [`Args::ranks`]). A unit is split, over all `ranks` ranks, when its solver state
/// (`unit_bytes_per_position(dtc)` per position) exceeds the budget per rank, as
/// `driver::split_unit` decides in `egdb build --mpi` (with `--dtc` when `dtc`).
fn cluster_plan(units: &[Unit], ranks: u64, budget: Option<u64>, dtc: bool) -> String {
    let per_position = unit_bytes_per_position(dtc);
    use std::collections::HashMap;
    let size = |u: &Unit| u.sizes.iter().sum::<u64>();
    // The build's own decision (`egdb build --mpi` under this --memory).
    let mut opts = checkers_egdb::BuildOptions::new(".", 1);
    opts.memory = budget;
    opts.dtc = dtc;
    let split = |u: &Unit| checkers_egdb::driver::split_unit(u, &opts, ranks as usize);
    // Units holding each material (captures read every slice of a material).
    let mut of_material: HashMap<_, Vec<usize>> = HashMap::new();
    for (k, u) in units.iter().enumerate() {
        for s in &u.slices {
            of_material.entry(s.material).or_default().push(k);
        }
    }
    let at: HashMap<usize, usize> = units.iter().enumerate().map(|(k, u)| (u.id, k)).collect();
    // The dependencies a unit reads, decoded (2 bits per position, as the build's store holds
    // them).
    let deps_decoded = unit_reads_decoded_bytes;
    // The memory a rank has left for decoded dependencies next to its share of the unit.
    let room = |u: &Unit| {
        let state = if split(u) {
            size(u).div_ceil(ranks) * per_position + exchange_round_bytes(size(u).div_ceil(ranks))
        } else {
            size(u) * per_position
        };
        budget.map_or(u64::MAX, |m| m.saturating_sub(state))
    };
    // Critical path (positions, a split unit counting 1/R of its own): units are in build
    // order, so every dependency comes first.
    let mut chain = vec![0f64; units.len()];
    let mut chain_whole = vec![0f64; units.len()];
    for (k, u) in units.iter().enumerate() {
        let deps = u.dep_units.iter().filter_map(|d| at.get(d).copied()).chain(
            u.capture_materials
                .iter()
                .flat_map(|m| of_material.get(m).into_iter().flatten().copied()),
        );
        let (mut a, mut b) = (0f64, 0f64);
        for d in deps {
            a = a.max(chain[d]);
            b = b.max(chain_whole[d]);
        }
        let n = size(u) as f64;
        chain[k] = a + if split(u) { n / ranks as f64 } else { n };
        chain_whole[k] = b + n;
    }
    let total: u64 = units.iter().map(size).sum();
    let mut out = format!(
        "# {} ranks, memory per rank {}: a unit whose solver state ({per_position} bytes per position) exceeds it is split over all the ranks\n# id\tslices\tpositions\tranks\tstate_per_rank\texchanged_bytes\tdeps_decoded\tdeps_fit\n",
        ranks,
        budget.map_or("unbounded".into(), format_size)
    );
    let (mut n_split, mut pos_split, mut exchanged, mut worst_rank) = (0usize, 0u64, 0f64, 0u64);
    let mut largest_split = 0u64;
    for u in units.iter().filter(|u| split(u)) {
        let n = size(u);
        // A rank's share of the state and one round of the ply exchange's buffers.
        let per_rank = n.div_ceil(ranks) * per_position + exchange_round_bytes(n.div_ceil(ranks));
        let x =
            n as f64 * MOVES_PER_POSITION * (ranks - 1) as f64 / ranks as f64 * BYTES_PER_UPDATE;
        n_split += 1;
        pos_split += n;
        exchanged += x;
        worst_rank = worst_rank.max(per_rank);
        largest_split = largest_split.max(u.sizes.iter().copied().max().unwrap_or(0));
        out.push_str(&format!(
            "{}\t{}\t{n}\t{ranks}\t{}\t{}\t{}\t{}\n",
            u.id,
            u.slices
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(","),
            format_size(per_rank),
            format_size(x as u64),
            format_size(deps_decoded(u)),
            if deps_decoded(u) <= room(u) {
                "yes"
            } else {
                "no"
            }
        ));
    }
    let largest_whole = units
        .iter()
        .filter(|u| !split(u))
        .map(|u| size(u) * per_position)
        .max()
        .unwrap_or(0);
    let spilling: Vec<&Unit> = units.iter().filter(|u| deps_decoded(u) > room(u)).collect();
    let most = units.iter().map(deps_decoded).max().unwrap_or(0);
    out.push_str(&format!(
        "# dependencies: at most {} decoded for one unit; {} units ({} split) do not fit them decoded next to their solver state and read them through the block cache, {}\n",
        format_size(most),
        spilling.len(),
        spilling.iter().filter(|u| split(u)).count(),
        if spilling.is_empty() {
            "none"
        } else {
            "which is much slower when the cache holds a small part of them (initial pass 20x slower with a fifth, docs/mpi.md): give those ranks more memory"
        }
    ));
    let cp = chain.iter().copied().fold(0f64, f64::max);
    let cp_whole = chain_whole.iter().copied().fold(0f64, f64::max);
    let bound = (total as f64 / ranks as f64).max(cp);
    out.push_str(&format!(
        "# summary: {n_split} of {} units split over {ranks} ranks ({pos_split} of {total} positions); solver state per rank at most {} (split units; rank 0 also holds the block list of the file it lays out, 24 bytes per block of 65,520 positions: {} for the largest split slice) and {} (largest whole unit); about {} of predecessor updates exchanged in all ({MOVES_PER_POSITION} in-unit moves per position, (R-1)/R of them across ranks, {BYTES_PER_UPDATE} bytes each); critical path {:.3e} positions ({:.3e} with every unit whole); work per rank {:.3e} positions; speed-up bound {:.1} (total / max(work per rank, critical path))\n",
        units.len(),
        format_size(worst_rank),
        format_size(largest_split.div_ceil(65_520) * 24),
        format_size(largest_whole),
        format_size(exchanged as u64),
        cp,
        cp_whole,
        total as f64 / ranks as f64,
        total as f64 / bound.max(1.0)
    ));
    out
}
