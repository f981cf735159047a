//! Memory sizes and the build's memory model: parsing `--memory` sizes, the default budget
//! (a share of physical memory) and the prediction behind `egdb plan --memory`.
//!
//! # The model
//! While a unit is solved the builder holds, per the retrograde solver
//! ([`crate::generate::solve`]), one byte of state per position of the unit and, while the
//! result is collected, one byte of values per position next to it
//! ([`UNIT_BYTES_PER_POSITION`] = 2), plus the dependency store
//! ([`crate::store::DecodedTables`]): slices of earlier units decoded at 2 bits per position.
//! Under a budget `M` the store may hold at most `M - unit bytes` of decoded slices while that
//! unit is solved; the rest of the unit's dependencies are read through a block cache of
//! [`spill_cache_bytes`]`(M)`. A slice is released once no remaining unit of the plan reads it.
//! [`predict`] replays this policy over a plan without building anything.

use crate::index::SliceIndex;
use crate::plan::Unit;
use crate::slice::Slice;
use std::collections::{HashMap, HashSet};

/// Bytes per position of the unit being solved: the solver's `State` byte, and the value byte
/// that `collect` produces while the state is still alive. The writer's backlog is counted
/// apart (`writer_backlog_bytes`).
pub const UNIT_BYTES_PER_POSITION: u64 = 2;

/// Bytes per position of a unit solved with its distance pass (`--dtc`): the WLD solve keeps
/// each position's resolution ply (2 bytes) besides its state and values, and the distance
/// pass holds its own state and plies (3 bytes), the WLD values it checks against and the
/// distances it returns (2 bytes and a bit). Measured: peak RSS of `egdb build --pieces 6
/// --slice 2202-6n --threads 2` (the unit 2202-6n + 0222-n6, 33.5 M positions) 100.5 MB
/// without `--dtc` and 267.3 MB with it (2026-12-05), 5.0 bytes per position more than
/// [`UNIT_BYTES_PER_POSITION`].
pub const DTC_UNIT_BYTES_PER_POSITION: u64 = 7;

/// Bytes per position charged to the unit being solved: [`DTC_UNIT_BYTES_PER_POSITION`] with
/// its distance pass (`dtc`), else [`UNIT_BYTES_PER_POSITION`].
pub fn unit_bytes_per_position(dtc: bool) -> u64 {
    if dtc {
        DTC_UNIT_BYTES_PER_POSITION
    } else {
        UNIT_BYTES_PER_POSITION
    }
}

/// Bytes the writer may still hold while a unit is solved: the solved values of the previous
/// unit of the build (`previous_positions`, both slices), 1 byte per position plus the capture
/// mask (1 bit per position), and with `dtc` its distances too (2 bytes and a bit per
/// position: `solve::DtcSlice`), waiting to be compressed and written. The builder starts a
/// unit only once every unit before the previous one is written, so this bounds the backlog;
/// it is part of the memory a unit is charged with
/// ([`crate::store::DecodedTables::begin_unit`], [`predict`]). (The distances were left out
/// before 2026-12-06, found by a code review: a `--dtc` build's peak was predicted too low by
/// about 2.1 bytes per position of the previous unit.)
pub fn writer_backlog_bytes(previous_positions: u64, dtc: bool) -> u64 {
    let values = previous_positions + previous_positions.div_ceil(8);
    if dtc {
        values + 2 * previous_positions + previous_positions.div_ceil(8)
    } else {
        values
    }
}

/// Bytes of a slice of `positions` positions decoded in the dependency store (2 bits per
/// position, rounded up to whole bytes).
pub fn decoded_bytes(positions: u64) -> u64 {
    positions.div_ceil(4)
}

/// What is wrong with a memory size that [`parse_size`] refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SizeProblem {
    /// Nothing but white space.
    #[error("empty")]
    Empty,
    /// A leading minus sign.
    #[error("a size cannot be negative")]
    Negative,
    /// The text does not start with a digit or a decimal point (`M`, `G5`).
    #[error("it does not start with a number")]
    NoNumber,
    /// The unit after the number is none of `K`, `M`, `G`, `T` (with `B`/`iB`) or `B`.
    #[error("unknown unit")]
    UnknownUnit,
    /// The number is malformed (`1.2.3`, `.`).
    #[error("not a number")]
    NotANumber,
    /// The size exceeds `u64::MAX` bytes.
    #[error("too large")]
    TooLarge,
    /// Zero bytes (`0`, `0G`, `0.0001K`): no budget can hold.
    #[error("zero bytes")]
    Zero,
}

/// A memory size [`parse_size`] cannot read: the text given and what is wrong with it. Its
/// message is one line naming both, with examples of valid sizes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid memory size {input:?}: {problem}; a size is a positive number of bytes with an \
     optional unit, like 512M, 16G, 1.5GiB or 1000000"
)]
pub struct SizeError {
    /// The text given, as given (untrimmed).
    pub input: String,
    /// What is wrong with it.
    pub problem: SizeProblem,
}

/// Parse a memory size: a number (decimal, optionally with a fraction) followed by an optional
/// binary unit `K`, `M`, `G` or `T` (powers of 1024, case-insensitive, an optional trailing
/// `B` or `iB`, e.g. `512M`, `16G`, `1.5GiB`, `64k`); a bare number is bytes.
///
/// # Errors
/// [`SizeError`] (naming the input) when it is empty, not a number, negative, has an unknown
/// unit, is zero bytes, or exceeds `u64::MAX` bytes.
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    let bad = |problem: SizeProblem| SizeError {
        input: s.to_string(),
        problem,
    };
    if t.is_empty() {
        return Err(bad(SizeProblem::Empty));
    }
    if t.starts_with('-') {
        return Err(bad(SizeProblem::Negative));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(bad(SizeProblem::NoNumber));
    }
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(bad(SizeProblem::UnknownUnit)),
    };
    let value = if let Some((int, frac)) = num.split_once('.') {
        if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
            return Err(bad(SizeProblem::NotANumber));
        }
        let int: u64 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| bad(SizeProblem::TooLarge))?
        };
        // The fraction is applied exactly in integers: frac digits / 10^len of the multiplier.
        let digits = &frac[..frac.len().min(9)];
        let den = 10u64.pow(digits.len() as u32);
        let f: u64 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| bad(SizeProblem::NotANumber))?
        };
        int.checked_mul(mult)
            .and_then(|v| v.checked_add((f as u128 * mult as u128 / den as u128) as u64))
            .ok_or_else(|| bad(SizeProblem::TooLarge))?
    } else {
        let n: u64 = num.parse().map_err(|_| bad(SizeProblem::TooLarge))?;
        n.checked_mul(mult)
            .ok_or_else(|| bad(SizeProblem::TooLarge))?
    };
    if value == 0 {
        return Err(bad(SizeProblem::Zero));
    }
    Ok(value)
}

/// `bytes` in a short human form with binary units (`512.0 MiB`, `20.0 GiB`).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Physical memory in bytes (Linux `MemTotal` of `/proc/meminfo`), if known.
pub fn physical_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The default build budget: half the physical memory, or 4 GiB where that is unknown.
pub fn default_budget() -> u64 {
    physical_memory().map_or(4 << 30, |b| b / 2)
}

/// Block cache of the dependency store under a budget of `budget` bytes: an eighth of the
/// budget, between 1 MiB and 256 MiB (counted inside the budget).
pub fn spill_cache_bytes(budget: u64) -> u64 {
    (budget / 8).clamp(1 << 20, 256 << 20)
}

/// The smallest budget `B` whose room for a unit, `B - spill_cache_bytes(B)`, holds `need`
/// bytes (the block cache is counted inside the budget, so a budget must exceed the unit's own
/// memory by at least 1 MiB).
pub fn budget_holding(need: u64) -> u64 {
    // `B - spill_cache_bytes(B)` never decreases as B grows (the cache grows by at most one
    // byte per eight), and `need + 256 MiB` always holds `need`: a binary search between.
    let (mut lo, mut hi) = (need, need.saturating_add(256 << 20));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if mid - spill_cache_bytes(mid).min(mid) >= need {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The memory one unit of a build holds whatever the budget, in bytes: its solver state and
/// values ([`unit_bytes_per_position`]`(dtc)` per position of both slices) and the writer's
/// backlog of the unit solved before it (`previous_positions`: its values, 1 byte and 1 bit per
/// position, and with `dtc` its distances). Its
/// dependencies are not counted: those that do not fit next to it are read through the block
/// cache. [`minimum_budget`] adds the cache.
pub fn unit_solve_bytes(positions: u64, previous_positions: u64, dtc: bool) -> u64 {
    positions
        .saturating_mul(unit_bytes_per_position(dtc))
        .saturating_add(writer_backlog_bytes(previous_positions, dtc))
}

/// The smallest `--memory` budget that a build solving `units` (whole, one after another, in
/// this order) keeps to: the largest [`unit_solve_bytes`] of a unit (with the backlog of the
/// unit before it in `units`) plus the block cache ([`budget_holding`]). Returns the index in
/// `units` of the unit that needs it and the budget in bytes; `None` when `units` is empty.
/// A smaller budget is refused by `egdb build` before anything is solved (the solver state
/// cannot be spilled, so such a build would exceed its budget).
pub fn minimum_budget(units: &[&Unit], dtc: bool) -> Option<(usize, u64)> {
    let mut previous = 0u64;
    let mut best: Option<(usize, u64)> = None;
    for (i, u) in units.iter().enumerate() {
        let n: u64 = u.sizes.iter().sum();
        let b = budget_holding(unit_solve_bytes(n, previous, dtc));
        previous = n;
        if best.is_none_or(|(_, m)| b > m) {
            best = Some((i, b));
        }
    }
    best
}

/// Bytes of every slice unit `u` reads decoded in the dependency store (2 bits per position):
/// its same-piece-count dependencies ([`Unit::deps`]) and every non-empty slice of its capture
/// materials ([`Unit::capture_materials`]). What its dependencies need so that no lookup goes
/// through the block cache (docs/mpi.md, "Dependencies through the block cache").
pub fn unit_reads_decoded_bytes(u: &Unit) -> u64 {
    unit_reads(u)
        .iter()
        .map(|s| decoded_bytes(SliceIndex::new(*s).size()))
        .sum()
}

/// Every slice a unit reads (stored, Black to move, non-empty): its same-piece-count
/// dependencies ([`Unit::deps`], first) then every slice of its capture materials, in a fixed
/// order. This is the order in which the store admits slices under a budget.
pub fn unit_reads(u: &Unit) -> Vec<Slice> {
    let mut v = u.deps.clone();
    for m in &u.capture_materials {
        for s in Slice::all_of(*m) {
            if SliceIndex::new(s).size() > 0 {
                v.push(s);
            }
        }
    }
    v
}

/// For each slice read by `units`, the position (in `units`) of the last unit reading it.
pub fn last_reads(units: &[&Unit]) -> HashMap<Slice, usize> {
    let mut last = HashMap::new();
    for (i, u) in units.iter().enumerate() {
        for s in unit_reads(u) {
            last.insert(s, i);
        }
    }
    last
}

/// The outcome of [`admit`].
#[derive(Clone, Debug, Default)]
pub struct Admission {
    /// Slices held decoded while the unit is solved.
    pub admitted: HashSet<Slice>,
    /// Decoded bytes of `admitted`.
    pub bytes: u64,
    /// Decoded bytes of the reads left to the block cache.
    pub spilled: u64,
}

/// Which of a unit's `reads` the store holds decoded within `room` bytes: those already
/// resident first, then the others, each in `reads` order, while they fit (greedy).
pub fn admit(
    reads: &[Slice],
    room: u64,
    is_resident: impl Fn(&Slice) -> bool,
    size_of: impl Fn(&Slice) -> u64,
) -> Admission {
    let mut a = Admission::default();
    let (first, then): (Vec<&Slice>, Vec<&Slice>) = reads.iter().partition(|s| is_resident(s));
    for s in first.into_iter().chain(then) {
        if a.admitted.contains(s) {
            continue;
        }
        let sz = size_of(s);
        if a.bytes + sz <= room {
            a.admitted.insert(*s);
            a.bytes += sz;
        } else {
            a.spilled += sz;
        }
    }
    a
}

/// Resident slices to evict before a unit so that the resident set fits in `room`: none when
/// `resident_bytes` plus the admitted slices not yet resident fit; else slices that are not
/// admitted, those the unit does not read first, each group in slice order, until it fits.
pub fn evictions(
    resident: &[Slice],
    reads: &[Slice],
    admitted: &HashSet<Slice>,
    resident_bytes: u64,
    admitted_bytes: u64,
    room: u64,
    size_of: impl Fn(&Slice) -> u64,
) -> Vec<Slice> {
    let admitted_resident: u64 = resident
        .iter()
        .filter(|s| admitted.contains(s))
        .map(&size_of)
        .sum();
    let mut total = resident_bytes + (admitted_bytes - admitted_resident.min(admitted_bytes));
    let read: HashSet<&Slice> = reads.iter().collect();
    let mut cand: Vec<(bool, Slice)> = resident
        .iter()
        .filter(|s| !admitted.contains(s))
        .map(|s| (read.contains(s), *s))
        .collect();
    cand.sort();
    let mut out = Vec::new();
    for (_, s) in cand {
        if total <= room {
            break;
        }
        total -= size_of(&s).min(total);
        out.push(s);
    }
    out
}

/// Predicted memory and disk of one unit (step) of a build, see [`predict`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepPrediction {
    /// The unit's id in the plan.
    pub unit: usize,
    /// Positions of the unit (both slices).
    pub positions: u64,
    /// The unit's own memory: [`UNIT_BYTES_PER_POSITION`] per position (as given to
    /// [`predict_for`]).
    pub unit_bytes: u64,
    /// The writer's backlog while the unit is solved (`writer_backlog_bytes` of the
    /// previous unit).
    pub writer_bytes: u64,
    /// Decoded dependencies resident while the unit is solved (2 bits per position).
    pub resident_bytes: u64,
    /// Slices resident while the unit is solved.
    pub resident_slices: usize,
    /// Bytes of the unit's reads that do not fit and go through the block cache (decoded
    /// size; they are read from the compressed files instead).
    pub spilled_bytes: u64,
    /// Bytes decoded from files for this step (reads not resident at its start: first reads,
    /// and re-reads of slices evicted earlier under a budget).
    pub loaded_bytes: u64,
    /// Block cache counted when something is spilled (`spill_cache_bytes`), else 0.
    pub cache_bytes: u64,
    /// `unit_bytes + writer_bytes + resident_bytes + cache_bytes`.
    pub peak_bytes: u64,
    /// Estimated bytes written for the unit's files (positions / `positions_per_byte`).
    pub disk_bytes: u64,
}

/// Replay the store's policy over `units` (in build order) under `budget` bytes (`None`:
/// unbounded) and predict each step's memory and disk. `positions_per_byte`: the compression
/// ratio assumed for the disk estimate (e.g. 65, measured at 6 pieces).
///
/// Policy replayed (that of [`crate::store::DecodedTables`] driven by the generator):
/// 1. Before unit `u`, every slice whose last reader is done has been released.
/// 2. The unit's reads are admitted (`admit`) within `room = budget - unit bytes - writer
///    backlog - cache` (all of them without a budget); the others are served through the
///    block cache.
/// 3. Resident slices not admitted are evicted while the total exceeds `room` (`evictions`;
///    they are reloaded when needed again).
/// 4. The unit's own slices become resident after it is solved (freshly solved values are
///    always kept; they are evicted by step 2 later).
///
/// The model counts whole capture materials (every slice of a material a capture can reach),
/// as the store's release policy does, so it over-estimates the slices really touched.
pub fn predict(
    units: &[&Unit],
    budget: Option<u64>,
    positions_per_byte: f64,
) -> Vec<StepPrediction> {
    predict_for(units, budget, positions_per_byte, false)
}

/// [`predict`] for a build with its distance passes (`dtc`, `egdb build --dtc`) or without:
/// the unit being solved is charged [`unit_bytes_per_position`] bytes per position (2, or 7
/// with `dtc`) and the writer's backlog (the previous unit's values, and distances with `dtc`).
pub fn predict_for(
    units: &[&Unit],
    budget: Option<u64>,
    positions_per_byte: f64,
    dtc: bool,
) -> Vec<StepPrediction> {
    let unit_bytes_per_position = unit_bytes_per_position(dtc);
    let last = last_reads(units);
    let mut resident: HashMap<Slice, u64> = HashMap::new();
    let mut resident_bytes = 0u64;
    let mut out = Vec::with_capacity(units.len());
    let size_of = |s: &Slice| decoded_bytes(SliceIndex::new(*s).size());
    let mut previous = 0u64;
    for (i, u) in units.iter().enumerate() {
        let positions: u64 = u.sizes.iter().sum();
        let unit_bytes = positions * unit_bytes_per_position;
        let writer_bytes = writer_backlog_bytes(previous, dtc);
        previous = positions;
        let reads = unit_reads(u);
        let mut spilled = 0u64;
        let mut cache = 0u64;
        let mut loaded = 0u64;
        if let Some(b) = budget {
            let room = b
                .saturating_sub(unit_bytes + writer_bytes)
                .saturating_sub(spill_cache_bytes(b));
            let adm = admit(&reads, room, |s| resident.contains_key(s), size_of);
            let keep: Vec<Slice> = resident.keys().copied().collect();
            for s in evictions(
                &keep,
                &reads,
                &adm.admitted,
                resident_bytes,
                adm.bytes,
                room,
                |s| resident.get(s).copied().unwrap_or(0),
            ) {
                resident_bytes -= resident.remove(&s).unwrap_or(0);
            }
            for s in &adm.admitted {
                if !resident.contains_key(s) {
                    let sz = size_of(s);
                    resident.insert(*s, sz);
                    resident_bytes += sz;
                    loaded += sz;
                }
            }
            spilled = adm.spilled;
            if spilled > 0 {
                cache = spill_cache_bytes(b);
            }
        } else {
            for s in &reads {
                if !resident.contains_key(s) {
                    let sz = size_of(s);
                    resident.insert(*s, sz);
                    resident_bytes += sz;
                    loaded += sz;
                }
            }
        }
        out.push(StepPrediction {
            unit: u.id,
            positions,
            unit_bytes,
            writer_bytes,
            resident_bytes,
            resident_slices: resident.len(),
            spilled_bytes: spilled,
            loaded_bytes: loaded,
            cache_bytes: cache,
            peak_bytes: unit_bytes + writer_bytes + resident_bytes + cache,
            disk_bytes: (positions as f64 / positions_per_byte.max(1e-9)).ceil() as u64,
        });
        // Release what no later unit reads; keep the unit's own slices if a later one does.
        resident.retain(|s, _| last.get(s).is_some_and(|&j| j > i));
        for (s, &n) in u.slices.iter().zip(&u.sizes) {
            if last.get(s).is_some_and(|&j| j > i) {
                resident.insert(*s, decoded_bytes(n));
            }
        }
        resident_bytes = resident.values().sum();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest budget holding a unit's own bytes next to the block cache (an eighth of the
    /// budget, 1 MiB to 256 MiB), worked out by hand at each of the cache's three regimes.
    #[test]
    fn budget_holding_adds_the_block_cache() {
        // 8 MiB: the cache is its 1 MiB minimum; 8 MiB - 1 byte would leave 7 MiB - 1.
        assert_eq!(budget_holding(7 << 20), 8 << 20);
        // An eighth: B - floor(B / 8) = 1792 MiB first at B = 2 GiB - 1.
        assert_eq!(budget_holding(1792 << 20), (2 << 30) - 1);
        assert_eq!(
            budget_holding(1792 << 20) - 1 - ((2 << 30) - 2) / 8,
            (1792 << 20) - 1
        );
        // The cache's 256 MiB maximum.
        assert_eq!(budget_holding(10 << 30), (10 << 30) + (256 << 20));
    }

    /// A unit is charged the values of the unit before it (the writer's backlog), so the order
    /// of the units matters: the largest 4-piece unit before a small one, and after it.
    #[test]
    fn minimum_budget_charges_the_previous_units_values() {
        let all = crate::plan::build_order(4);
        let n = |u: &Unit| u.sizes.iter().sum::<u64>();
        let big = all.iter().max_by_key(|u| n(u)).unwrap();
        let small = all.iter().min_by_key(|u| n(u)).unwrap();
        let (b, s) = (n(big), n(small));
        assert!(b > 100_000 && s < 100, "{b} {s}");
        // Big first: it needs 2 bytes a position; the small one after it holds big's values
        // (1 byte and 1 bit a position) and its own 2 bytes a position: less.
        assert_eq!(
            minimum_budget(&[big, small], false),
            Some((0, budget_holding(2 * b)))
        );
        // Small first: big holds its own state and small's values.
        assert_eq!(
            minimum_budget(&[small, big], false),
            Some((1, budget_holding(2 * b + s + s.div_ceil(8))))
        );
        // With distances: 7 bytes a position, and the backlog's distances (3 bytes and 2 bits).
        assert_eq!(
            minimum_budget(&[small, big], true),
            Some((1, budget_holding(7 * b + 3 * s + 2 * s.div_ceil(8))))
        );
        assert_eq!(minimum_budget(&[], false), None);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("16G"), Ok(16 << 30));
        assert_eq!(parse_size("16g"), Ok(16 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert_eq!(parse_size("2T"), Ok(2 << 40));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("1000B"), Ok(1000));
        assert_eq!(parse_size(" 32 MB "), Ok(32 << 20));
        assert_eq!(parse_size("0.5K"), Ok(512));
        assert_eq!(parse_size(".5K"), Ok(512));
    }

    #[test]
    fn bad_sizes_are_one_line_errors() {
        for s in [
            "",
            " ",
            "M",
            "-1G",
            "12Q",
            "1.2.3G",
            "abc",
            "1e9",
            "99999999999999999999",
            "17179869184T",
            ".",
            "1..5M",
            "G5",
            "5 G G",
        ] {
            let e = parse_size(s).expect_err(s).to_string();
            assert!(!e.contains('\n'), "{e}");
            assert!(e.contains("invalid memory size"), "{e}");
        }
    }

    #[test]
    fn bad_sizes_name_their_problem() {
        use SizeProblem::*;
        for (s, want) in [
            (" ", Empty),
            ("-1G", Negative),
            ("G5", NoNumber),
            ("12Q", UnknownUnit),
            ("5 G G", UnknownUnit),
            ("1.2.3G", NotANumber),
            (".", NotANumber),
            ("99999999999999999999", TooLarge),
            ("17179869184T", TooLarge),
            ("0", Zero),
            ("0G", Zero),
            ("0.0000000001K", Zero),
        ] {
            let e = parse_size(s).expect_err(s);
            assert_eq!((e.input.as_str(), e.problem), (s, want));
        }
        assert_eq!(
            parse_size("12Q").unwrap_err().to_string(),
            "invalid memory size \"12Q\": unknown unit; a size is a positive number of bytes \
             with an optional unit, like 512M, 16G, 1.5GiB or 1000000"
        );
    }

    #[test]
    fn formats() {
        assert_eq!(format_size(100), "100 B");
        assert_eq!(format_size(512 << 20), "512.0 MiB");
        assert_eq!(format_size(20 << 30), "20.0 GiB");
    }

    #[test]
    fn default_budget_is_a_share_of_ram() {
        let d = default_budget();
        assert!(d > 0);
        if let Some(p) = physical_memory() {
            assert!(d <= p);
        }
    }

    /// Without a budget the predicted resident set of step `i` is, by brute force over the
    /// plan, the slices read at step `i` plus those read or produced before `i` that some step
    /// `>= i` still reads; under a budget it never exceeds the room left by the unit and cache.
    /// With `--dtc` the writer also holds the previous unit's distances: `solve::DtcSlice`
    /// keeps a `u16` and a don't-care bit per position beside the value byte and capture bit
    /// of `SolvedSlice` (found by a code review: the distances were not counted).
    #[test]
    fn the_writer_backlog_of_a_dtc_build_counts_the_distances() {
        let plan = crate::plan::build_order(4);
        let units: Vec<&Unit> = plan.iter().collect();
        let with = predict_for(&units, None, 65.0, true);
        for i in 1..units.len() {
            let prev: u64 = units[i - 1].sizes.iter().sum();
            let value = prev + prev.div_ceil(8);
            let distance = 2 * prev + prev.div_ceil(8);
            assert_eq!(with[i].writer_bytes, value + distance, "step {i}");
            assert_eq!(with[i].unit_bytes, 7 * units[i].sizes.iter().sum::<u64>());
        }
    }

    #[test]
    fn prediction_releases_and_respects_budget() {
        let plan = crate::plan::build_order(4);
        let units: Vec<&Unit> = plan.iter().collect();
        let free = predict(&units, None, 65.0);
        assert_eq!(free.len(), units.len());
        let reads: Vec<HashSet<Slice>> = units
            .iter()
            .map(|u| unit_reads(u).into_iter().collect())
            .collect();
        for i in 0..units.len() {
            let mut want: HashSet<Slice> = reads[i].clone();
            for k in 0..i {
                for s in reads[k].iter().chain(&units[k].slices) {
                    if (i..units.len()).any(|j| reads[j].contains(s)) {
                        want.insert(*s);
                    }
                }
            }
            let bytes: u64 = want
                .iter()
                .map(|s| decoded_bytes(SliceIndex::new(*s).size()))
                .sum();
            assert_eq!(free[i].resident_slices, want.len(), "step {i}");
            assert_eq!(free[i].resident_bytes, bytes, "step {i}");
            // The writer holds the previous unit's values and capture mask at most.
            let prev: u64 = if i == 0 {
                0
            } else {
                units[i - 1].sizes.iter().sum()
            };
            assert_eq!(free[i].writer_bytes, prev + prev.div_ceil(8), "step {i}");
            assert_eq!(
                free[i].peak_bytes,
                free[i].unit_bytes + free[i].writer_bytes + bytes
            );
        }
        for budget in [0u64, 64 << 10, 2 << 20] {
            let tight = predict(&units, Some(budget), 65.0);
            let mut spilled = 0;
            for (f, t) in free.iter().zip(&tight) {
                let room = budget
                    .saturating_sub(t.unit_bytes + t.writer_bytes)
                    .saturating_sub(spill_cache_bytes(budget));
                assert!(t.resident_bytes <= room, "{t:?}");
                assert_eq!(f.unit_bytes, t.unit_bytes);
                spilled += t.spilled_bytes;
            }
            // Below the cache's own minimum (1 MiB) nothing fits: everything is spilled.
            assert_eq!(spilled > 0, budget < 1 << 20, "{budget}");
        }
    }
}
