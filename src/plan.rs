//! Build order (a DAG, given as a topological order) of all slices with at most N pieces.
//!
//! # Units
//! Tables store Black to move only. The White-to-move positions of a slice `S` are stored as
//! the Black-to-move positions of `S.partner()`, and non-capture moves connect the two, so a
//! slice is solved together with its partner: a [`Unit`] is `{S, S.partner()}` (one slice when
//! `S` is its own partner). Slices of size 0 are skipped.
//!
//! # Dependencies of a unit
//! Listed as *stored* slices (Black to move), i.e. what the builder probes. For each slice `S`
//! of the unit (a move of Black from `S`, whose result is White to move and so is stored in the
//! partner of the board's slice):
//! - **leading-man advance**: a black man on row `rb` stepping to row `rb + 1 <= 6` gives board
//!   slice `(m, rb + 1, rw)`, stored as its partner;
//! - **crowning** (non-capture, only when `rb = 6`): material `(bm-1, bk+1, wm, wk)` with any
//!   black leading rank of the remaining men (or none), White's rank unchanged;
//! - **captures**: every material `(bm, bk, wm-a, wk-b)` and `(bm-1, bk+1, wm-a, wk-b)` with
//!   `a + b >= 1`, as whole stored materials ([`Unit::capture_materials`], flipped to Black to
//!   move); every slice of such a material is a dependency. Captures always lower the piece
//!   count, so these units come earlier automatically.
//!
//! # Order
//! By piece count ascending, then total men ascending (crowning leads to fewer men), then
//! material pair (the pair `{m, m.flip()}` is named by its smaller member, pairs in
//! [`Material::all_with_pieces`] order), then within the pair by [`Slice::all_of`] order of
//! the smaller material (higher leading ranks first).
use crate::index::SliceIndex;
use crate::slice::{Material, Slice};
use std::collections::{BTreeSet, HashMap};

/// A slice together with its partner: solved as one retrograde-analysis job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// Position of the unit in the build order (0-based).
    pub id: usize,
    /// The slice of the smaller material of the pair, then its partner if distinct (1 or 2).
    pub slices: Vec<Slice>,
    /// Size (positions) of each slice of `slices`, same order.
    pub sizes: Vec<u64>,
    /// Piece count.
    pub pieces: u32,
    /// Stored slices with the same piece count that the unit reads (leading-man advances and
    /// crowning), sorted, excluding the unit's own slices, size-0 slices left out.
    pub deps: Vec<Slice>,
    /// Units (ids) holding `deps`, sorted, each smaller than `id`.
    pub dep_units: Vec<usize>,
    /// Stored materials (Black to move) reachable by a capture, sorted: every slice of each is
    /// a dependency. All have fewer pieces.
    pub capture_materials: Vec<Material>,
}

fn canonical(m: Material) -> Material {
    m.min(m.flip())
}

/// Slices (stored, Black to move) reached by Black's non-capture leading-man advances and
/// crownings from Black-to-move positions of `s` (results are White to move, so they are
/// stored as partners). May include `s.partner()` itself, never slices of other piece counts.
fn advance_deps(s: Slice, out: &mut BTreeSet<Slice>) {
    let m = s.material;
    if let Some(rb) = s.black_rank {
        if rb < 6 {
            let t = Slice {
                black_rank: Some(rb + 1),
                ..s
            };
            out.insert(t.partner());
        } else {
            // Crowning: a man of row 6 becomes a king.
            let m2 = Material {
                bm: m.bm - 1,
                bk: m.bk + 1,
                ..m
            };
            for t in Slice::all_of(m2) {
                if t.white_rank == s.white_rank && t.black_rank.is_none_or(|r| r <= 6) {
                    out.insert(t.partner());
                }
            }
        }
    }
}

/// Stored materials reachable by a capture of Black from material `m` (Black to move).
pub(crate) fn capture_materials(m: Material, out: &mut BTreeSet<Material>) {
    for a in 0..=m.wm {
        for b in 0..=m.wk {
            if a + b == 0 {
                continue;
            }
            let after = Material {
                wm: m.wm - a,
                wk: m.wk - b,
                ..m
            };
            out.insert(after.flip());
            if m.bm > 0 {
                let crowned = Material {
                    bm: m.bm - 1,
                    bk: m.bk + 1,
                    ..after
                };
                out.insert(crowned.flip());
            }
        }
    }
}

/// The build order of every non-empty slice with 1 to `max_pieces` pieces, as units (slice +
/// partner) with their dependencies; `units[i].id == i`, and every dependency of a unit lies
/// in an earlier unit (a topological order of the dependency DAG).
pub fn build_order(max_pieces: u32) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::new();
    let mut unit_of: HashMap<Slice, usize> = HashMap::new();
    for n in 1..=max_pieces {
        for m in Material::all_with_pieces(n) {
            if canonical(m) != m {
                continue;
            }
            for s in Slice::all_of(m) {
                if unit_of.contains_key(&s) {
                    continue;
                }
                let size = SliceIndex::new(s).size();
                if size == 0 {
                    continue;
                }
                let p = s.partner();
                let slices = if p == s { vec![s] } else { vec![s, p] };
                let id = units.len();
                let mut deps = BTreeSet::new();
                let mut caps = BTreeSet::new();
                for &t in &slices {
                    advance_deps(t, &mut deps);
                    capture_materials(t.material, &mut caps);
                }
                let deps: Vec<Slice> = deps
                    .into_iter()
                    .filter(|d| !slices.contains(d) && SliceIndex::new(*d).size() > 0)
                    .collect();
                let mut dep_units: Vec<usize> = deps
                    .iter()
                    .map(|d| {
                        *unit_of
                            .get(d)
                            .unwrap_or_else(|| panic!("{s}: dependency {d} not yet planned"))
                    })
                    .collect();
                dep_units.sort_unstable();
                dep_units.dedup();
                for &t in &slices {
                    unit_of.insert(t, id);
                }
                units.push(Unit {
                    id,
                    sizes: vec![size; slices.len()],
                    slices,
                    pieces: n,
                    deps,
                    dep_units,
                    capture_materials: caps.into_iter().filter(|c| c.pieces() > 0).collect(),
                });
            }
        }
    }
    units
}

/// The unit of `units` (a [`build_order`]) holding slice `s`, and every unit of the same piece
/// count it reads, directly or through others (leading-man advances and crownings), in build
/// order: what `egdb build --slice S --with-deps` builds on top of the tables with fewer pieces.
/// Empty when no unit holds `s` (a slice without positions).
pub fn closure<'u>(units: &'u [Unit], s: &Slice) -> Vec<&'u Unit> {
    let Some(top) = units.iter().find(|u| u.slices.contains(s)) else {
        return Vec::new();
    };
    let mut need = BTreeSet::from([top.id]);
    let mut stack = vec![top.id];
    while let Some(i) = stack.pop() {
        for &d in &units[i].dep_units {
            if need.insert(d) {
                stack.push(d);
            }
        }
    }
    need.into_iter().map(|i| &units[i]).collect()
}

impl Unit {
    /// Machine-readable form: `{"id", "slices": [names], "sizes", "pieces", "deps": [names],
    /// "dep_units", "capture_materials": [names]}` (names as in docs/index.md). Needs the
    /// `cli` feature (serde_json).
    #[cfg(feature = "cli")]
    pub fn to_json(&self) -> serde_json::Value {
        let names = |v: &[Slice]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        serde_json::json!({
            "id": self.id,
            "slices": names(&self.slices),
            "sizes": self.sizes,
            "pieces": self.pieces,
            "deps": names(&self.deps),
            "dep_units": self.dep_units,
            "capture_materials": self.capture_materials.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
        })
    }
}
