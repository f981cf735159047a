//! The prover: settles positions with more pieces than the tables hold, by proof-number search
//! with the tables as exact leaves, and writes certificates that `crate::proofcheck` re-checks.
//!
//! A position's value for the side to move is decided as two yes/no questions (as Chinook did):
//! *Win* (a draw counts as failure) and *NotLose* (a draw counts as success). Win proven: win;
//! NotLose disproven: loss; Win disproven and NotLose proven: draw; anything else: unknown
//! (reported with the proof and disproof numbers, never guessed). The two questions are searched
//! in parallel (one thread each); neither stops the other, so with a node limit (and no time
//! limit reached) the results are the same whatever the thread count.
//!
//! Rooms: [`search`] (generic df-pn, repetitions), [`tt`] (transposition table), [`cert`]
//! (strategy extraction and the certificate writer). The checker is `crate::proofcheck`.
//!
//! ```no_run
//! use checkers_egdb::probe::Tablebase;
//! use checkers_egdb::prove::{prove, ProveOptions};
//! use checkers_egdb::Position;
//! let tb = Tablebase::open("egdb").unwrap();
//! let p = Position::from_fen("B:W30,K31,K32:BK20,21,K22,K23").unwrap();
//! let r = prove(&tb, &p, &ProveOptions::default()).unwrap();
//! println!("{:?} in {} nodes", r.value, r.nodes);
//! ```

pub mod cert;
pub mod layer;
pub mod search;
pub mod tt;

use crate::board::{Color, Position, Wld};
use crate::movegen::Move;
use crate::probe::{ProbeError, Tablebase};
use crate::proofcheck::TableSet;
use crate::rules::Rules;
pub use cert::Proof;
use layer::Layer;
use search::{Budget, Dfpn, Eval, Game, Goal, Outcome};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tt::Table;

/// Settings of [`prove`] and [`Prover`].
#[derive(Clone, Debug)]
pub struct ProveOptions {
    /// Most node expansions per goal search (`None`: unlimited).
    pub nodes: Option<u64>,
    /// Wall-time limit of one position (`None`: unlimited), counted from the start of
    /// [`Prover::prove`]: one deadline for the searches, the layer retrograde, the principal
    /// variation's certificates and a repeated search. A layer retrograde cut short leaves the
    /// position unknown; a certificate cut short is [`ProveError::Certificate`].
    pub time: Option<Duration>,
    /// Memory for the transposition tables, in bytes, shared by the two goals (each goal's
    /// cache of path-dependent results included).
    pub tt_bytes: usize,
    /// 1: the goals one after the other (each with half the time); 2 or more: in parallel.
    pub threads: usize,
    /// Extract certificates ([`ProveReport::proofs`]) for settled positions.
    pub certificate: bool,
    /// Most positions of a layer retrograde ([`layer`]) tried on a position the search leaves
    /// unknown (0: never). Capped further so that the layer's estimated memory
    /// ([`layer::BYTES_PER_POSITION`] each) stays within half the physical memory.
    pub layer_positions: usize,
}

impl Default for ProveOptions {
    /// No node limit, 60 s, 256 MiB of tables, 2 threads, no certificate, layers of up to
    /// 2,000,000 positions.
    fn default() -> Self {
        ProveOptions {
            nodes: None,
            time: Some(Duration::from_secs(60)),
            tt_bytes: 256 << 20,
            threads: 2,
            certificate: false,
            layer_positions: 2_000_000,
        }
    }
}

/// Result of one goal's search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoalReport {
    /// Proven, disproven, or unknown with the root's numbers.
    pub outcome: Outcome,
    /// Node expansions spent on this goal.
    pub nodes: u64,
}

/// What [`prove`] found about one position.
#[derive(Clone, Debug)]
pub struct ProveReport {
    /// The position.
    pub position: Position,
    /// Its value for the side to move, `None` when unknown.
    pub value: Option<Wld>,
    /// The *Win* search (for the side to move).
    pub win: GoalReport,
    /// The *NotLose* search.
    pub not_lose: GoalReport,
    /// Node expansions in all.
    pub nodes: u64,
    /// Wall time of the search, in seconds.
    pub seconds: f64,
    /// A principal variation from the root: as far as the search's tables know it (at most 80
    /// plies) up to the first position the endgame tables cover, then, if the distance tables
    /// (`.dtc`) are there, their perfect line from that position (at most 300 plies; a drawn
    /// line stops at its first repetition).
    pub pv: Vec<Move>,
    /// Certificates (with [`ProveOptions::certificate`] and a settled value): one for a win or a
    /// loss, two for a draw (each side's *NotLose*).
    pub proofs: Vec<Proof>,
    /// Positions of the layer retrograde that settled the position (0: the search settled it
    /// or no layer was tried; see [`layer`]).
    pub layer: usize,
}

/// Why [`prove`] failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProveError {
    /// The position breaks a board invariant.
    #[error("invalid position: {0}")]
    InvalidPosition(String),
    /// A table probe failed (missing or corrupt table).
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// The two searches contradict each other (a bug; never expected).
    #[error("internal error: {0}")]
    Inconsistent(String),
    /// A certificate could not be completed within the limits.
    #[error("certificate: {0}")]
    Certificate(String),
}

/// Checkers as a [`Game`] for the search: tables up to `max_pieces` are exact leaves.
#[derive(Clone, Copy, Debug)]
pub struct Checkers<'t> {
    tb: &'t Tablebase,
    max_pieces: u32,
}

impl<'t> Checkers<'t> {
    /// Use the tables of `tb`, up to its [`Tablebase::max_pieces`].
    pub fn new(tb: &'t Tablebase) -> Self {
        Checkers {
            tb,
            max_pieces: tb.max_pieces(),
        }
    }

    /// Largest piece count valued by the tables.
    pub fn max_pieces(&self) -> u32 {
        self.max_pieces
    }

    /// Whether the tables value `p` exactly: its slice's file is present
    /// ([`Tablebase::covers`]). Every position with fewer pieces than the largest table is
    /// covered in a complete directory; of the largest piece count only the slices built.
    pub fn covers(&self, p: &Position) -> bool {
        p.piece_count() <= self.max_pieces && self.tb.covers(p)
    }
}

/// Men of both sides (a man move or a capture changes them or the piece count for good).
fn men(p: &Position) -> (u32, u32) {
    (p.black & !p.kings, p.white & !p.kings)
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Material in half-men: a man 2, a king 3.
fn material(p: &Position, c: Color) -> i32 {
    let men = (p.men(c)).count_ones() as i32;
    let kings = p.kings_of(c).count_ones() as i32;
    2 * men + 3 * kings
}

impl Game for Checkers<'_> {
    type Pos = Position;
    type Error = ProbeError;

    fn mover(&self, p: &Position) -> Color {
        p.side
    }

    fn successors(&self, p: &Position, out: &mut Vec<Position>) {
        out.clear();
        p.for_each_successor(|q| out.push(q));
    }

    fn evaluate(&self, p: &Position, or_node: bool, goal: Goal) -> Result<Eval, ProbeError> {
        if self.covers(p) {
            return Ok(Eval::Exact(self.tb.probe_wld(p)?));
        }
        let mut n = 0u32;
        p.for_each_successor(|_| n += 1);
        if n == 0 {
            // The terminal rule of the tables' rules (a loss in English).
            return Ok(Eval::Exact(self.tb.rules().no_move_value()));
        }
        // Initial numbers: the side to move's mobility counts against the side that must
        // refute every move; pieces above the tables make both harder; material favours the
        // side ahead.
        let excess = p.piece_count().saturating_sub(self.max_pieces).max(1);
        let prover = if or_node { p.side } else { p.side.opponent() };
        let adv = material(p, prover) - material(p, prover.opponent());
        let (mut pn, mut dn) = if or_node { (excess, n) } else { (n, excess) };
        match goal {
            Goal::Win if adv <= 0 => pn *= 2,
            Goal::NotLose if adv >= 0 => dn *= 2,
            _ => {}
        }
        Ok(Eval::Open { pn, dn })
    }

    fn irreversible(&self, from: &Position, to: &Position) -> bool {
        from.piece_count() != to.piece_count() || men(from) != men(to)
    }

    fn hash(&self, p: &Position) -> u64 {
        mix(p.black as u64 | (p.white as u64) << 32)
            ^ mix((p.kings as u64) << 1 | p.side as u64 | 0x5555_0000_0000_0000)
    }
}

/// A prover bound to a tablebase, keeping its transposition tables between positions (they
/// hold only path-independent facts, so reuse is sound and saves work).
pub struct Prover<'t> {
    game: Checkers<'t>,
    opts: ProveOptions,
    win_tt: Option<Table<Position>>,
    nl_tt: Option<Table<Position>>,
}

/// Most plies of a principal variation beyond the tables.
const MAX_PV: usize = 80;

/// Most plies of its continuation inside the tables (the distance tables' perfect line).
const MAX_TABLE_LINE: u32 = 300;

impl<'t> Prover<'t> {
    /// A prover over `tb` with `opts` (allocates the transposition tables).
    pub fn new(tb: &'t Tablebase, opts: &ProveOptions) -> Self {
        // Per goal: half for the table, half for the cache of path-dependent results (at most
        // about the table's size).
        let half = (opts.tt_bytes / 4).max(4096);
        Prover {
            game: Checkers::new(tb),
            opts: opts.clone(),
            win_tt: Some(Table::with_bytes(half)),
            nl_tt: Some(Table::with_bytes(half)),
        }
    }

    /// The tables in use (every file with at most [`Checkers::max_pieces`] pieces), as named in
    /// certificate headers.
    ///
    /// # Errors
    /// [`ProveError::Certificate`] if the table directory cannot be read.
    pub fn table_set(&self) -> Result<TableSet, ProveError> {
        crate::proofcheck::table_set(self.game.tb.dir(), self.game.max_pieces)
            .map_err(|e| ProveError::Certificate(e.to_string()))
    }

    /// Settle `pos` (see the module docs). The transposition tables keep what earlier roots
    /// proved; when certificates are requested and a position settled with their help has a
    /// strategy that cannot be rebuilt within the limits, it is searched once more on emptied
    /// tables (within what is left of the same deadline), so the result is a certificate or
    /// unknown.
    ///
    /// # Errors
    /// [`ProveError::InvalidPosition`], [`ProveError::Probe`] (a table needed is missing or
    /// damaged), [`ProveError::Certificate`] (a requested certificate could not be completed
    /// within the limits), [`ProveError::Inconsistent`].
    pub fn prove(&mut self, pos: &Position) -> Result<ProveReport, ProveError> {
        pos.validate()
            .map_err(|e| ProveError::InvalidPosition(e.to_string()))?;
        let start = Instant::now();
        let game = self.game;
        let (mut wt, mut nt) = (
            self.win_tt.take().expect("table"),
            self.nl_tt.take().expect("table"),
        );
        let earlier = !wt.is_empty() || !nt.is_empty();
        // This root's entries push out the earlier roots' first.
        wt.new_generation();
        nt.new_generation();
        let mut win = Dfpn::with_table(&game, Goal::Win, wt);
        let mut nl = Dfpn::with_table(&game, Goal::NotLose, nt);
        let mut result = self.run(&mut win, &mut nl, pos, start);
        let (mut wt, mut nt) = (win.into_table(), nl.into_table());
        if earlier && matches!(result, Err(ProveError::Certificate(_))) {
            // Settled with the help of earlier roots' facts, but its strategy could not be
            // rebuilt within the limits: once more on empty tables, where the search itself
            // builds everything the certificate needs (or the position stays unknown).
            wt.clear();
            nt.clear();
            let mut win = Dfpn::with_table(&game, Goal::Win, wt);
            let mut nl = Dfpn::with_table(&game, Goal::NotLose, nt);
            result = self.run(&mut win, &mut nl, pos, start);
            if let Ok(r) = &mut result {
                r.seconds = start.elapsed().as_secs_f64();
            }
            (wt, nt) = (win.into_table(), nl.into_table());
        }
        self.win_tt = Some(wt);
        self.nl_tt = Some(nt);
        result
    }

    fn run(
        &self,
        win: &mut Dfpn<'_, Checkers<'t>>,
        nl: &mut Dfpn<'_, Checkers<'t>>,
        pos: &Position,
        start: Instant,
    ) -> Result<ProveReport, ProveError> {
        let cancel = Arc::new(AtomicBool::new(false));
        let deadline = self.opts.time.map(|t| start + t);
        let (w0, n0) = (win.stats().nodes, nl.stats().nodes);
        let budget = |deadline| Budget {
            nodes: self.opts.nodes,
            deadline,
            cancel: Some(cancel.clone()),
        };
        // The goals never stop each other: each runs to its answer or its budget, so the
        // results (and the tables kept for the next position) do not depend on timing or on
        // the thread count, only on the limits. An error stops the other goal.
        // Each goal: weak sums for the first half of its budget, then (if still unknown) sums
        // for the rest (see `Dfpn::set_weak`).
        let run_goal = |d: &mut Dfpn<'_, Checkers<'t>>, b: Budget| {
            let r = d
                .solve_two_phase(*pos, pos.side, &[], &b)
                .map(|s| s.outcome);
            if r.is_err() {
                cancel.store(true, Ordering::Relaxed);
            }
            r
        };
        let (rw, rn) = if self.opts.threads >= 2 {
            std::thread::scope(|s| {
                let h = std::thread::Builder::new()
                    .stack_size(STACK)
                    .spawn_scoped(s, || run_goal(win, budget(deadline)))
                    .expect("spawn a search thread");
                let h2 = std::thread::Builder::new()
                    .stack_size(STACK)
                    .spawn_scoped(s, || run_goal(nl, budget(deadline)))
                    .expect("spawn a search thread");
                (
                    h.join().expect("search thread"),
                    h2.join().expect("search thread"),
                )
            })
        } else {
            // One after the other on a thread with a large stack; each goal half the time.
            let half = self.opts.time.map(|t| start + t / 2);
            std::thread::scope(|s| {
                std::thread::Builder::new()
                    .stack_size(STACK)
                    .spawn_scoped(s, || {
                        let rw = run_goal(win, budget(half));
                        let rn = run_goal(nl, budget(deadline));
                        (rw, rn)
                    })
                    .expect("spawn a search thread")
                    .join()
                    .expect("search thread")
            })
        };
        let (mut ow, mut on) = (rw?, rn?);
        let mut value = match (ow, on) {
            (Outcome::Proven, Outcome::Disproven) => {
                return Err(ProveError::Inconsistent(format!(
                    "{}: win proven and not-lose disproven",
                    pos.to_fen()
                )))
            }
            (Outcome::Proven, _) => Some(Wld::Win),
            (_, Outcome::Disproven) => Some(Wld::Loss),
            (Outcome::Disproven, Outcome::Proven) => Some(Wld::Draw),
            _ => None,
        };
        // What the search leaves unknown, the layer retrograde may settle (see `layer`).
        let mut solved_layer = None;
        if value.is_none() && self.opts.layer_positions > 0 && !self.game.covers(pos) {
            // At most what half the memory holds, and only within the deadline: a layer cut
            // short by either leaves the position unknown.
            let limit = layer::max_positions(self.opts.layer_positions, layer::default_budget());
            let models = |l: &Layer| {
                let ms = l.solve(pos.side, deadline)?;
                let mo = l.solve(pos.side.opponent(), deadline)?;
                Some((ms, mo))
            };
            let built = Layer::build(self.game.tb, pos, limit, deadline)?;
            if let Some((l, (ms, mo))) = built.and_then(|l| models(&l).map(|m| (l, m))) {
                let (lo_l, hi_l) = (l.root_value(&ms), l.root_value(&mo));
                let lo_s = match (ow, on) {
                    (Outcome::Proven, _) => Wld::Win,
                    (_, Outcome::Proven) => Wld::Draw,
                    _ => Wld::Loss,
                };
                let hi_s = match (ow, on) {
                    (_, Outcome::Disproven) => Wld::Loss,
                    (Outcome::Disproven, _) => Wld::Draw,
                    _ => Wld::Win,
                };
                let (lo, hi) = (lo_s.max(lo_l), hi_s.min(hi_l));
                if lo > hi {
                    return Err(ProveError::Inconsistent(format!(
                        "{}: the search and the layer retrograde disagree",
                        pos.to_fen()
                    )));
                }
                if lo == hi {
                    value = Some(lo);
                    ow = if lo == Wld::Win {
                        Outcome::Proven
                    } else {
                        Outcome::Disproven
                    };
                    on = if lo == Wld::Loss {
                        Outcome::Disproven
                    } else {
                        Outcome::Proven
                    };
                    solved_layer = Some((l, ms, mo));
                }
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        let win_report = GoalReport {
            outcome: ow,
            nodes: win.stats().nodes - w0,
        };
        let nl_report = GoalReport {
            outcome: on,
            nodes: nl.stats().nodes - n0,
        };
        let pv = match (value, &solved_layer) {
            (Some(v), None) => self.pv(win, nl, pos, v)?,
            _ => Vec::new(),
        };
        let mut proofs = Vec::new();
        if self.opts.certificate {
            if let Some(v) = value {
                proofs = match &solved_layer {
                    None => self.certificates(win, nl, pos, v, deadline)?,
                    Some((l, ms, mo)) => {
                        self.layer_certificates(win, nl, pos, v, l, ms, mo, deadline)?
                    }
                };
            }
        }
        Ok(ProveReport {
            position: *pos,
            value,
            win: win_report,
            not_lose: nl_report,
            nodes: win_report.nodes + nl_report.nodes,
            seconds,
            pv,
            proofs,
            layer: solved_layer.as_ref().map_or(0, |(l, _, _)| l.len()),
        })
    }

    /// The certificates of a position the layer retrograde settled: each claim from the layer
    /// model that establishes it, else from the search that did.
    #[allow(clippy::too_many_arguments)]
    fn layer_certificates(
        &self,
        win: &mut Dfpn<'_, Checkers<'t>>,
        nl: &mut Dfpn<'_, Checkers<'t>>,
        pos: &Position,
        value: Wld,
        l: &Layer,
        ms: &layer::Model,
        mo: &layer::Model,
        deadline: Option<Instant>,
    ) -> Result<Vec<Proof>, ProveError> {
        let (s, o) = (pos.side, pos.side.opponent());
        let tb = self.game.tb;
        // (claimant, goal, layer model, search and its result to follow).
        let claims: Vec<(Color, Goal, &layer::Model, bool)> = match value {
            Wld::Win => vec![(s, Goal::Win, ms, true)],
            Wld::Loss => vec![(o, Goal::Win, mo, false)],
            Wld::Draw => vec![(s, Goal::NotLose, ms, true), (o, Goal::NotLose, mo, false)],
        };
        let mut out = Vec::new();
        for (claimant, goal, m, proven) in claims {
            if let Some(p) = l.proof(tb, m, claimant, goal)? {
                out.push(p);
                continue;
            }
            // The search settled this half: extract it from the search.
            let from_win = match value {
                Wld::Win => true,
                Wld::Loss => false,
                Wld::Draw => claimant != s,
            };
            out.push(if from_win {
                self.search_proof(win, pos, proven, deadline)?
            } else {
                self.search_proof(nl, pos, proven, deadline)?
            });
        }
        Ok(out)
    }

    /// The certificate of the claim `d` established at `pos` (`proven` or disproven).
    fn search_proof(
        &self,
        d: &mut Dfpn<'_, Checkers<'t>>,
        pos: &Position,
        proven: bool,
        deadline: Option<Instant>,
    ) -> Result<Proof, ProveError> {
        let budget = Budget {
            nodes: self.opts.nodes,
            deadline,
            cancel: None,
        };
        let s = std::thread::scope(|sc| {
            std::thread::Builder::new()
                .stack_size(STACK)
                .spawn_scoped(sc, || {
                    cert::extract(d, *pos, pos.side, proven, &budget, deadline)
                })
                .expect("spawn a certificate thread")
                .join()
                .expect("certificate thread")
        })?;
        let s = s.ok_or_else(|| {
            ProveError::Certificate(format!(
                "{}: the strategy could not be completed within the limits",
                pos.to_fen()
            ))
        })?;
        let game = self.game;
        cert::proof_of(&s, |p| game.covers(p)).map_err(ProveError::Inconsistent)
    }

    /// Extract the certificates of a settled position (in parallel for a draw).
    fn certificates(
        &self,
        win: &mut Dfpn<'_, Checkers<'t>>,
        nl: &mut Dfpn<'_, Checkers<'t>>,
        pos: &Position,
        value: Wld,
        deadline: Option<Instant>,
    ) -> Result<Vec<Proof>, ProveError> {
        let budget = Budget {
            nodes: self.opts.nodes,
            deadline,
            cancel: None,
        };
        let game = self.game;
        let prover = pos.side;
        let one = |d: &mut Dfpn<'_, Checkers<'t>>, proven: bool| -> Result<Proof, ProveError> {
            let s = cert::extract(d, *pos, prover, proven, &budget, deadline)?;
            let s = s.ok_or_else(|| {
                ProveError::Certificate(format!(
                    "{}: the strategy could not be completed within the limits",
                    pos.to_fen()
                ))
            })?;
            cert::proof_of(&s, |p| game.covers(p)).map_err(ProveError::Inconsistent)
        };
        let go = |d: &mut Dfpn<'_, Checkers<'t>>, proven: bool| {
            std::thread::scope(|s| {
                std::thread::Builder::new()
                    .stack_size(STACK)
                    .spawn_scoped(s, || one(d, proven))
                    .expect("spawn a certificate thread")
                    .join()
                    .expect("certificate thread")
            })
        };
        match value {
            Wld::Win => Ok(vec![go(win, true)?]),
            Wld::Loss => Ok(vec![go(nl, false)?]),
            Wld::Draw => {
                // Both sides' NotLose, in parallel.
                let (a, b) = std::thread::scope(|s| {
                    let a = std::thread::Builder::new()
                        .stack_size(STACK)
                        .spawn_scoped(s, || one(nl, true))
                        .expect("spawn a certificate thread");
                    let b = std::thread::Builder::new()
                        .stack_size(STACK)
                        .spawn_scoped(s, || one(win, false))
                        .expect("spawn a certificate thread");
                    (
                        a.join().expect("certificate thread"),
                        b.join().expect("certificate thread"),
                    )
                });
                Ok(vec![a?, b?])
            }
        }
    }

    /// Value of `c` for its side to move as far as the tables and the search know it.
    fn known_value(
        &self,
        win: &Dfpn<'_, Checkers<'t>>,
        nl: &Dfpn<'_, Checkers<'t>>,
        prover: Color,
        c: &Position,
    ) -> Result<(Option<Wld>, u32), ProveError> {
        if self.game.covers(c) {
            return Ok((Some(self.game.tb.probe_wld(c)?), 0));
        }
        if c.moves().is_empty() {
            return Ok((Some(Wld::Loss), 0));
        }
        let (w, n) = (win.known(c, prover), nl.known(c, prover));
        let (ww, nw) = (w.work, n.work);
        let for_prover = match (w.result, n.result) {
            (Some(true), _) => Some(Wld::Win),
            (_, Some(false)) => Some(Wld::Loss),
            (Some(false), Some(true)) => Some(Wld::Draw),
            _ => None,
        };
        let v = for_prover.map(|v| if c.side == prover { v } else { v.negate() });
        Ok((v, ww.max(nw)))
    }

    /// A principal variation: the side to move keeps the value, the winner taking the move with
    /// the smallest stored subtree and the loser (or a drawing side) the largest.
    fn pv(
        &self,
        win: &Dfpn<'_, Checkers<'t>>,
        nl: &Dfpn<'_, Checkers<'t>>,
        root: &Position,
        value: Wld,
    ) -> Result<Vec<Move>, ProveError> {
        let prover = root.side;
        let mut line = Vec::new();
        let mut seen = HashSet::new();
        let (mut cur, mut v) = (*root, value);
        while line.len() < MAX_PV && !self.game.covers(&cur) {
            seen.insert(cur);
            let mut best: Option<(i64, Move, Position)> = None;
            for m in cur.moves() {
                let c = cur.apply(&m);
                if seen.contains(&c) {
                    continue;
                }
                let (cv, work) = self.known_value(win, nl, prover, &c)?;
                if cv != Some(v.negate()) {
                    continue;
                }
                let score = if v == Wld::Win {
                    -(work as i64)
                } else {
                    work as i64
                };
                if best.as_ref().is_none_or(|b| score > b.0) {
                    best = Some((score, m, c));
                }
            }
            let Some((_, m, c)) = best else { break };
            line.push(m);
            cur = c;
            v = v.negate();
        }
        // Inside the tables: the perfect line of the distance tables, where they exist.
        if self.game.covers(&cur) {
            match crate::play::line(self.game.tb, &cur, MAX_TABLE_LINE) {
                Ok(l) => line.extend(l.moves.into_iter().map(|m| m.mv)),
                // No distance files, or (in a directory holding only some slices) a slice the
                // line needs is absent: the principal variation stops at the tables.
                Err(ProbeError::MissingDtc { .. } | ProbeError::MissingSlice { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(line)
    }
}

/// Stack size of search threads (the search recurses once per ply of the current path).
const STACK: usize = 256 << 20;

/// The units (slice and partner) the builder must add to the directory `dir` so that the tables
/// cover `pos` exactly: the unit of its slice and every unit of the same piece count it reads
/// ([`crate::plan::closure`]), without those already complete, in build order. Their sizes
/// (positions) are in [`crate::plan::Unit::sizes`]; empty when `pos` is covered already.
///
/// Building them (`egdb build --slice S --with-deps`, or [`crate::generate::build`] with
/// [`crate::generate::BuildOptions::with_deps`]) needs every table with fewer pieces that they
/// read by a capture; [`crate::generate::first_missing_dependency`] names one that is absent.
///
/// # Errors
/// A message when `pos` has more pieces than the builder handles
/// ([`crate::generate::MAX_BUILD_PIECES`]).
pub fn units_to_cover(
    dir: &std::path::Path,
    pos: &Position,
) -> Result<Vec<crate::plan::Unit>, String> {
    let s = crate::slice::Slice::of(&pos.normalized());
    let n = s.material.pieces();
    if n > crate::generate::MAX_BUILD_PIECES {
        return Err(format!(
            "{} has {n} pieces; the builder handles at most {}",
            pos.to_fen(),
            crate::generate::MAX_BUILD_PIECES
        ));
    }
    let all = crate::plan::build_order(n);
    Ok(crate::plan::closure(&all, &s)
        .into_iter()
        .filter(|u| !crate::generate::unit_complete(dir, u))
        .cloned()
        .collect())
}

/// Settle one position with a fresh [`Prover`] (see the module docs).
///
/// # Errors
/// As [`Prover::prove`].
pub fn prove(
    tb: &Tablebase,
    pos: &Position,
    opts: &ProveOptions,
) -> Result<ProveReport, ProveError> {
    Prover::new(tb, opts).prove(pos)
}
