//! Layer retrograde: exact values on the reversible component ("layer") of a position beyond
//! the tables, where proof-number search struggles (drawn king manoeuvres).
//!
//! A position's *layer* is every position reachable from it by reversible moves only (in
//! checkers: non-capture king moves; they keep the men and the piece count, so the layer holds
//! the king placements reachable with those men). Every other move is an *exit*: a capture or a
//! man move. An exit into a position the tables cover is valued by the capture-resolving probe,
//! an exit into a position with no legal move is a loss for its side to move, any other exit is
//! *unknown*.
//!
//! The layer is solved by retrograde analysis twice, once pessimistic for each side `S`: an
//! unknown exit counts as a loss for `S` when `S` takes it and as a win for `S`'s opponent when
//! the opponent takes it. Values only get worse for `S` that way, so the root's value for `S`
//! in the model pessimistic for `S` is a lower bound of its true value, and the value in the
//! model pessimistic for the opponent an upper bound. Positions left undecided by the
//! retrograde are draws (play can cycle forever inside the layer, and a repetition is a draw).
//!
//! A strategy read from a model is a certificate the independent checker accepts
//! (`crate::proofcheck`): the claimant never takes an unknown exit, and every opponent position
//! the strategy reaches has only exact exits (else the model would give the opponent a win
//! there). Win strategies move to a position decided at a smaller ply, so they are acyclic.
//!
//! Memory: about 60 bytes per layer position plus 8 bytes per in-layer move, more while the
//! index grows and both models are solved; [`BYTES_PER_POSITION`] is the estimate used to bound
//! the number of positions ([`max_positions`]).
//!
//! Time: building and solving check a deadline and give up (no value, never a guess) when it
//! passes.

use super::cert::Proof;
use super::search::{FastMap, Goal};
use crate::board::{Color, Position, Wld};
use crate::movegen::Move;
use crate::probe::{ProbeError, Tablebase};
use crate::rules::{Rules, Variant};
use std::collections::VecDeque;
use std::time::Instant;

/// Estimated peak bytes per layer position: the position, its index entry (with the hash
/// map's slack), the CSR arrays, the exit flags, the predecessor arrays and two solved models,
/// with about ten in-layer moves per position (8 bytes each, twice while the vector grows).
pub const BYTES_PER_POSITION: u64 = 256;

/// Positions between deadline checks of the solving loops (no table probes there).
const CHECK_EVERY: usize = 1 << 12;

/// Positions between deadline checks where every position's exits are probed (enumerating
/// the layer, walking a strategy): a probe that decodes a block of a large table can take a
/// fraction of a millisecond, so thousands of positions can take seconds.
const CHECK_PROBING: usize = 1 << 6;

fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// Most layer positions that fit `budget` bytes ([`BYTES_PER_POSITION`] each), at most `limit`.
pub fn max_positions(limit: usize, budget: u64) -> usize {
    let fit = budget / BYTES_PER_POSITION;
    limit.min(usize::try_from(fit).unwrap_or(usize::MAX))
}

/// The default memory budget of a layer: half the physical memory
/// ([`crate::memory::default_budget`]).
pub fn default_budget() -> u64 {
    crate::memory::default_budget()
}

/// Value of an exit for the side to move before it (`EXIT_NONE`: no exact exit).
const EXIT_NONE: u8 = 0;

fn code(v: Wld) -> u8 {
    v as u8 + 1
}

fn men(p: &Position) -> (u32, u32) {
    (p.black & !p.kings, p.white & !p.kings)
}

/// Whether `from` -> `to` is reversible (a non-capture king move).
fn reversible(from: &Position, to: &Position) -> bool {
    from.piece_count() == to.piece_count() && men(from) == men(to)
}

/// The layer of a root position with its in-layer moves and exit values.
pub struct Layer {
    positions: Vec<Position>,
    index: FastMap<Position, u32>,
    /// In-graph successors of position i: `succ[start[i]..end[i]]`.
    start: Vec<u32>,
    end: Vec<u32>,
    /// Whether a nested graph left positions out for its size limit (they are unknown exits).
    truncated: bool,
    succ: Vec<u32>,
    /// Best exact exit for the side to move (`EXIT_NONE` or `code(Wld)`).
    best_exit: Vec<u8>,
    /// Whether the position has an exit whose value is unknown.
    unknown_exit: Vec<bool>,
    /// Positions with no legal move at all.
    stuck: Vec<bool>,
    /// Their value for the side to move: the terminal rule of the tables' rules
    /// ([`crate::rules::Rules::no_move_value`]).
    no_move: Wld,
}

/// One solved model (pessimistic for one side): each position's value for its side to move and
/// the ply at which the retrograde decided it (0 for undecided draws).
pub struct Model {
    /// The side the unknown exits count against.
    #[allow(
        dead_code,
        reason = "describes the model (Debug); no reader in the library"
    )]
    pub pessimistic_for: Color,
    value: Vec<Wld>,
    ply: Vec<u32>,
}

impl Layer {
    /// Enumerate the layer of `root` (which the tables must not cover), valuing exits with the
    /// tables of `tb` where they cover them ([`Tablebase::covers`]). Without `nested`,
    /// `Ok(None)` when the layer has more than `limit` positions or `deadline` passes first.
    ///
    /// With `nested`, the *closure* of the root: its layer and, within `limit` positions in
    /// all, the layers its exits beyond the tables lead to (man moves, and captures to
    /// positions the tables do not cover), breadth first by the number of irreversible moves
    /// from the root (every layer reached with `k` such moves before any reached with `k + 1`
    /// only). Those exits are then in-graph moves, valued exactly by the same retrograde (the
    /// irreversible moves order the layers as a DAG; play inside a layer may cycle). Positions
    /// past `limit` are unknown exits (sound: the models stay pessimistic), and `Ok(None)`
    /// only when `deadline` passes.
    ///
    /// # Errors
    /// A table probe failed (missing or damaged table).
    pub fn build<R: Rules>(
        tb: &Tablebase<R>,
        root: &Position,
        limit: usize,
        nested: bool,
        deadline: Option<Instant>,
    ) -> Result<Option<Layer>, ProbeError> {
        let mut l = Layer {
            positions: vec![*root],
            index: FastMap::from_iter([(*root, 0)]),
            start: vec![0],
            end: vec![0],
            truncated: false,
            succ: Vec::new(),
            best_exit: vec![EXIT_NONE],
            unknown_exit: vec![false],
            stuck: vec![false],
            no_move: tb.rules().no_move_value(),
        };
        // Positions to expand: those reached by reversible moves first (the layers being
        // enumerated), those reached by irreversible ones (the next layers) once those are
        // exhausted.
        let mut q0: VecDeque<u32> = VecDeque::from([0]);
        let mut q1: VecDeque<u32> = VecDeque::new();
        let mut kids = Vec::new();
        let mut done = 0usize;
        while let Some(i) = q0.pop_front().or_else(|| q1.pop_front()) {
            let i = i as usize;
            if done.is_multiple_of(CHECK_PROBING) && past(deadline) {
                return Ok(None);
            }
            done += 1;
            let p = l.positions[i];
            kids.clear();
            tb.rules().for_each_successor(&p, |c| kids.push(c));
            let (mut best, mut unknown) = (EXIT_NONE, false);
            let s0 = l.succ.len() as u32;
            for c in &kids {
                let rev = reversible(&p, c);
                if !rev {
                    if tb.covers(c) {
                        best = best.max(code(tb.probe_wld(c)?.negate()));
                        continue;
                    } else if !tb.rules().has_move(c) {
                        // The terminal rule for the child's side to move, seen from here.
                        best = best.max(code(tb.rules().no_move_value().negate()));
                        continue;
                    } else if !nested {
                        unknown = true;
                        continue;
                    }
                }
                let j = match l.index.get(c) {
                    Some(&j) => j,
                    None if l.positions.len() >= limit => {
                        if !nested {
                            return Ok(None);
                        }
                        l.truncated = true;
                        unknown = true;
                        continue;
                    }
                    None => {
                        let next = l.positions.len() as u32;
                        l.index.insert(*c, next);
                        l.positions.push(*c);
                        l.start.push(0);
                        l.end.push(0);
                        l.best_exit.push(EXIT_NONE);
                        l.unknown_exit.push(false);
                        l.stuck.push(false);
                        if rev {
                            q0.push_back(next);
                        } else {
                            q1.push_back(next);
                        }
                        next
                    }
                };
                l.succ.push(j);
            }
            l.start[i] = s0;
            l.end[i] = l.succ.len() as u32;
            l.best_exit[i] = best;
            l.unknown_exit[i] = unknown;
            l.stuck[i] = kids.is_empty();
        }
        Ok(Some(l))
    }

    /// Whether positions were left out of a nested graph for its size limit.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Number of positions in the layer.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    fn succ_of(&self, i: usize) -> &[u32] {
        &self.succ[self.start[i] as usize..self.end[i] as usize]
    }

    /// Best exit value for the side to move at `i` in the model pessimistic for `s`.
    fn exit_value(&self, i: usize, s: Color) -> u8 {
        let mut b = self.best_exit[i];
        if self.unknown_exit[i] {
            let v = if self.positions[i].side == s {
                Wld::Loss
            } else {
                Wld::Win
            };
            b = b.max(code(v));
        }
        b
    }

    /// Solve the model pessimistic for `s` (see the module docs); `None` when `deadline`
    /// passes first.
    pub fn solve(&self, s: Color, deadline: Option<Instant>) -> Option<Model> {
        if past(deadline) {
            return None;
        }
        let n = self.positions.len();
        // Predecessors (CSR).
        let mut pstart = vec![0u32; n + 1];
        for &j in &self.succ {
            pstart[j as usize + 1] += 1;
        }
        for i in 0..n {
            pstart[i + 1] += pstart[i];
        }
        let mut fill = pstart.clone();
        let mut pred = vec![0u32; self.succ.len()];
        for i in 0..n {
            for &j in self.succ_of(i) {
                pred[fill[j as usize] as usize] = i as u32;
                fill[j as usize] += 1;
            }
        }
        let mut value = vec![Wld::Draw; n];
        let mut ply = vec![0u32; n];
        let mut decided = vec![false; n];
        let mut remaining: Vec<u32> = (0..n).map(|i| self.succ_of(i).len() as u32).collect();
        let mut level: Vec<u32> = Vec::new();
        let mut level1: Vec<u32> = Vec::new();
        if past(deadline) {
            return None;
        }
        for i in 0..n {
            let e = self.exit_value(i, s);
            if self.stuck[i] {
                decided[i] = true;
                value[i] = self.no_move;
                level.push(i as u32);
            } else if e == code(Wld::Win) {
                decided[i] = true;
                value[i] = Wld::Win;
                ply[i] = 1;
                level1.push(i as u32);
            } else if remaining[i] == 0 {
                // Only exits, none winning.
                decided[i] = true;
                if e == code(Wld::Draw) {
                    value[i] = Wld::Draw;
                } else {
                    value[i] = Wld::Loss;
                    ply[i] = 1;
                    level1.push(i as u32);
                }
            }
        }
        // Decided positions by ply, processed in increasing order; a position decided while
        // processing ply d gets ply d + 1.
        let mut levels = vec![level, level1];
        let mut d = 0usize;
        while d < levels.len() {
            let cur = std::mem::take(&mut levels[d]);
            let mut next = Vec::new();
            for (k, &j) in cur.iter().enumerate() {
                if k.is_multiple_of(CHECK_EVERY) && past(deadline) {
                    return None;
                }
                let j = j as usize;
                for &i in &pred[pstart[j] as usize..pstart[j + 1] as usize] {
                    let i = i as usize;
                    if decided[i] {
                        continue;
                    }
                    if value[j] == Wld::Loss {
                        decided[i] = true;
                        value[i] = Wld::Win;
                        ply[i] = d as u32 + 1;
                        next.push(i as u32);
                    } else {
                        remaining[i] -= 1;
                        if remaining[i] == 0 {
                            decided[i] = true;
                            if self.exit_value(i, s) == code(Wld::Draw) {
                                value[i] = Wld::Draw;
                            } else {
                                value[i] = Wld::Loss;
                                ply[i] = d as u32 + 1;
                                next.push(i as u32);
                            }
                        }
                    }
                }
            }
            if !next.is_empty() {
                if levels.len() == d + 1 {
                    levels.push(Vec::new());
                }
                levels[d + 1].extend(next);
            }
            d += 1;
        }
        Some(Model {
            pessimistic_for: s,
            value,
            ply,
        })
    }

    /// The root's value for its side to move in `m`.
    pub fn root_value(&self, m: &Model) -> Wld {
        m.value[0]
    }

    /// The value for `claimant` of exit or in-layer child `c` of position `i` in `m`, with
    /// the child's ply (`None` for an unknown exit, which the claimant never takes).
    fn child_for(&self, m: &Model, c: &Position, claimant: Color) -> Option<(Wld, u32)> {
        if let Some(&j) = self.index.get(c) {
            let v = m.value[j as usize];
            let v = if c.side == claimant { v } else { v.negate() };
            return Some((v, m.ply[j as usize]));
        }
        None
    }

    /// The claimant's strategy in `m` as a certificate proof: `None` unless the root satisfies
    /// `goal` for `claimant` in `m`, or when `deadline` passes first. Exits the claimant takes
    /// are leaves the checker values with the tables (or positions without a legal move).
    ///
    /// # Errors
    /// A table probe failed.
    pub fn proof<R: Rules>(
        &self,
        tb: &Tablebase<R>,
        m: &Model,
        claimant: Color,
        goal: Goal,
        deadline: Option<Instant>,
    ) -> Result<Option<Proof>, ProbeError> {
        let root = self.positions[0];
        let rv = if root.side == claimant {
            m.value[0]
        } else {
            m.value[0].negate()
        };
        if !goal.satisfied_by(rv) {
            return Ok(None);
        }
        let rules = Variant::of::<R>().expect("the rules of a known variant");
        let mut records: Vec<(Position, Move)> = Vec::new();
        let mut seen = vec![false; self.positions.len()];
        let mut queue = VecDeque::from([0usize]);
        seen[0] = true;
        let mut visits = 0usize;
        while let Some(i) = queue.pop_front() {
            visits += 1;
            if visits.is_multiple_of(CHECK_PROBING) && past(deadline) {
                return Ok(None);
            }
            let p = self.positions[i];
            if p.side != claimant {
                for &j in self.succ_of(i) {
                    if !std::mem::replace(&mut seen[j as usize], true) {
                        queue.push_back(j as usize);
                    }
                }
                continue;
            }
            let (v, my_ply) = (m.value[i], m.ply[i]);
            let want_win = goal == Goal::Win || v == Wld::Win;
            let moves = rules.moves(&p);
            if moves.is_empty() {
                // No legal move: a leaf the checker values by the terminal rule (a win for the
                // side to move in giveaway, reached by the opponent's move), no record.
                let tv = tb.rules().no_move_value();
                let ok = if want_win {
                    tv == Wld::Win
                } else {
                    tv != Wld::Loss
                };
                if ok {
                    continue;
                }
                return Ok(None);
            }
            let mut chosen: Option<(Move, Option<usize>)> = None;
            for mv in moves {
                let c = p.apply(&mv);
                let ok = match self.child_for(m, &c, claimant) {
                    Some((cv, cply)) => {
                        if want_win {
                            cv == Wld::Win && cply < my_ply
                        } else {
                            cv != Wld::Loss
                        }
                    }
                    None if reversible(&p, &c) => false,
                    None => {
                        // An exit: exact leaves only.
                        let cv = if tb.covers(&c) {
                            Some(tb.probe_wld(&c)?.negate())
                        } else if !tb.rules().has_move(&c) {
                            // The terminal rule for the child's side to move.
                            Some(tb.rules().no_move_value().negate())
                        } else {
                            None
                        };
                        match cv {
                            Some(cv) if want_win => cv == Wld::Win,
                            Some(cv) => cv != Wld::Loss,
                            None => false,
                        }
                    }
                };
                if ok {
                    chosen = Some((mv, self.index.get(&c).map(|&j| j as usize)));
                    break;
                }
            }
            let Some((mv, next)) = chosen else {
                // Never expected: the model says the claimant has such a move.
                return Ok(None);
            };
            records.push((p, mv));
            if let Some(j) = next {
                if !std::mem::replace(&mut seen[j], true) {
                    queue.push_back(j);
                }
            }
        }
        Ok(Some(Proof {
            rules,
            root,
            claimant,
            goal,
            records,
        }))
    }
}
