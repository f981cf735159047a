//! The prover: settles positions with more pieces than the tables hold, by proof-number search
//! with the tables as exact leaves, and writes certificates that `crate::proofcheck` re-checks.
//!
//! A position's value for the side to move is decided as two yes/no questions (as Chinook did):
//! *Win* (a draw counts as failure) and *NotLose* (a draw counts as success). Win proven: win;
//! NotLose disproven: loss; Win disproven and NotLose proven: draw; anything else: unknown
//! (reported with the proof and disproof numbers, never guessed). With one thread the two
//! questions are searched one after the other (win first). With `T` threads
//! ([`ProveOptions::threads`]) of 2 or more, [`ProveOptions::schedule`] chooses
//! ([`Schedule`]): the goals at the same time, win on `T - T / 2` threads and not-lose on
//! `T / 2`, each goal's threads sharing its transposition table
//! ([`search::Dfpn::set_threads`]), and a goal finished without settling the other lends its
//! threads to the other's running search (`search::Reserve`); or the goals in turn, each on
//! all `T` threads. A goal whose result settles the other (win proven: not-lose proven;
//! not-lose disproven: win disproven) stops it ([`GoalReport::implied`]): in turn, a win
//! proven skips the not-lose search; together, the other goal stops at once, so its node
//! count (and what its table keeps for later roots) depends on timing.
//! A settled value is the same whatever the thread count and schedule (every shared fact is
//! path-independent); with 2 threads or more, which positions settle within a time or node
//! limit, node counts and certificates may differ from run to run.
//!
//! Rooms: [`search`] (generic df-pn, repetitions), [`tt`] (transposition table), [`cert`]
//! (strategy extraction and the certificate writer). The checker is `crate::proofcheck`.
//!
//! ```no_run
//! use checkers_egdb::{prove, Position, ProveOptions, Tablebase};
//! let tb = Tablebase::open("egdb").unwrap();
//! let p = Position::from_fen("B:W30,K31,K32:BK20,21,K22,K23").unwrap();
//! let r = prove(&tb, &p, &ProveOptions::default()).unwrap();
//! println!("{:?} in {} nodes", r.value, r.nodes);
//! ```

pub mod cert;
pub mod layer;
pub mod search;
pub mod state;
pub mod tt;

#[cfg(test)]
mod ghi_tests;

use crate::board::{Color, Position, Wld};
use crate::movegen::Move;
use crate::probe::{ProbeError, Tablebase};
use crate::proofcheck::TableSet;
use crate::rules::{English, Rules, Variant};
pub use cert::Proof;
use layer::Layer;
use search::{Budget, Dfpn, Eval, Game, Goal, Outcome, Stop};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tt::SharedTable as Table;

/// Settings of [`prove`] and [`Prover`].
#[derive(Clone, Debug)]
pub struct ProveOptions {
    /// Most node expansions per goal and position (`None`: unlimited): the goal's search (all
    /// its threads, those lent by the other goal included), its certificate extraction and a
    /// repeated search on emptied tables together.
    pub nodes: Option<u64>,
    /// Wall-time limit of one position (`None`: unlimited), counted from the start of
    /// [`Prover::prove`] (or the instant given to [`Prover::prove_from`]): one deadline for the
    /// searches, the layer retrograde, the certificates and a repeated search. Work cut short
    /// by it leaves the position unknown with [`Limit::Time`] in [`ProveReport::limits`].
    pub time: Option<Duration>,
    /// Memory for the transposition tables, in bytes, shared by the two goals (each goal's
    /// cache of path-dependent results included).
    pub tt_bytes: usize,
    /// Threads in all: 1: the goals one after the other (the first with at most half the
    /// time), on one thread; `T` of 2 or more: as [`ProveOptions::schedule`] says (see the
    /// module docs).
    pub threads: usize,
    /// How the goals share the threads when there are 2 or more ([`Schedule`]).
    pub schedule: Schedule,
    /// Extract certificates ([`ProveReport::proofs`]) for settled positions.
    pub certificate: bool,
    /// Most positions of a layer retrograde (`layer`) tried on a position the search leaves
    /// unknown (0: never): the position's layer and, breadth first, the layers its man moves
    /// lead to (`layer::Layer::build`). Where a layer may follow, the search gets half of
    /// [`ProveOptions::time`] and the layer the rest; a layer that does not settle the
    /// position gives what is left of the time back to the search. Capped further so that the layer's estimated memory
    /// (`layer::BYTES_PER_POSITION` each) stays within [`ProveOptions::memory`].
    pub layer_positions: usize,
    /// Memory budget of the layer retrograde in bytes (`None`: half the physical memory,
    /// `layer::default_budget`). A layer that would need more is not built (the position
    /// stays unknown with [`Limit::Memory`]).
    pub memory: Option<u64>,
    /// Save the search state of the position to this file (docs/cli.md, `--state`) every
    /// [`ProveOptions::state_interval`] and at the end, and resume from it when it exists (it
    /// must be of the same position and tables). `None`: no state.
    pub state: Option<PathBuf>,
    /// Time between two saves of the state (with [`ProveOptions::state`]).
    pub state_interval: Duration,
    /// Stop a goal when the other's result implies its own (a win proven: not-lose proven; a
    /// not-lose disproven: win disproven; see [`GoalReport::implied`]; with one thread, where
    /// win is searched first, only a win proven stops not-lose). `false`: each goal runs to
    /// its own answer or its budget (the prover before this option; for comparisons).
    pub stop_implied: bool,
}

impl Default for ProveOptions {
    /// No node limit, 60 s, 256 MiB of tables, 2 threads, no certificate, layers of up to
    /// 8,000,000 positions, no state file, implied goals stopped.
    fn default() -> Self {
        ProveOptions {
            nodes: None,
            time: Some(Duration::from_secs(60)),
            tt_bytes: 256 << 20,
            threads: 2,
            certificate: false,
            layer_positions: 8_000_000,
            memory: None,
            state: None,
            state_interval: Duration::from_secs(60),
            stop_implied: true,
            schedule: Schedule::default(),
        }
    }
}

/// How the two goals (win, not-lose) share [`ProveOptions::threads`] `T` of 2 or more (with
/// one thread: one after the other, win first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// The goals at the same time, the win goal with `T - T / 2` threads and the not-lose goal
    /// with `T / 2` sharing its table; when one goal is finished (settled, or out of its node
    /// budget) and its result does not settle the other, its threads join the other goal's
    /// running search as helpers on that goal's table (`search::Reserve`).
    #[default]
    Together,
    /// The goals one after the other (win first, with at most half the time; a win proven
    /// skips not-lose), each searched by all `T` threads sharing its table.
    InTurn,
}

/// Node expansions of each goal's weak phase (weak proof-number sums, before the switch to
/// sums; `search::Dfpn::solve_two_phase`) per second of [`ProveOptions::time`], when a time
/// limit is set. The phase ends at this node count, at an eighth of the goal's node budget or
/// of its time ([`search::WEAK_SHARE`]), whichever comes first. A node count makes the switch
/// the same whatever the thread count and the load: with the time share alone, one thread (win
/// first, at most half the time) switched a goal at half the time of two threads (both goals
/// at once), so the runs searched different trees (issue 37). 50,000 a second is about a
/// sixteenth of one thread's node rate on a 2-core AMD EPYC machine (0.9-1.0 M nodes per CPU
/// second), so on such a machine the node count ends the phase before the time share does.
/// It was 200,000 with half the budget and time: most 8-piece positions settle with fewer
/// nodes in sums (issue 37; CHANGELOG), and sums that saturate on long king manoeuvres give
/// the rest of the budget back to weak sums ([`search::SATURATED`]).
pub const WEAK_PHASE_NODES_PER_SECOND: u64 = 50_000;

/// Estimated peak bytes per position of a layer retrograde ([`ProveOptions::layer_positions`]
/// times this must fit [`ProveOptions::memory`]).
pub const LAYER_BYTES_PER_POSITION: u64 = layer::BYTES_PER_POSITION;

/// A limit that stopped the work on a position before it was settled (see
/// [`ProveReport::limits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Limit {
    /// The time limit ([`ProveOptions::time`]).
    Time,
    /// The node limit ([`ProveOptions::nodes`]).
    Nodes,
    /// The search reached its depth limit (4,000 plies below the root).
    Depth,
    /// The layer retrograde would hold more positions than [`ProveOptions::layer_positions`].
    Layer,
    /// The layer retrograde would need more memory than [`ProveOptions::memory`].
    Memory,
}

impl Limit {
    /// `time`, `nodes`, `depth`, `layer` or `memory` (the CLI spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Time => "time",
            Limit::Nodes => "nodes",
            Limit::Depth => "depth",
            Limit::Layer => "layer",
            Limit::Memory => "memory",
        }
    }

    fn of(s: Stop) -> Option<Limit> {
        match s {
            Stop::Time => Some(Limit::Time),
            Stop::Nodes => Some(Limit::Nodes),
            Stop::Depth => Some(Limit::Depth),
            // The other goal failed (its error is reported).
            Stop::Cancelled => None,
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
    /// The outcome follows from the other goal's (a win proven proves *NotLose*; *NotLose*
    /// disproven, a loss, disproves *Win*): this goal's search was stopped when the other
    /// settled (or not started), and `nodes` are what it spent until then.
    pub implied: bool,
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
    /// or no layer was tried; see `layer`).
    pub layer: usize,
    /// For an unknown position: the limits that stopped the work on it, in the order of
    /// [`Limit`] (empty when settled).
    pub limits: Vec<Limit>,
    /// The value the searches found when its certificate (requested with
    /// [`ProveOptions::certificate`]) could not be completed within the limits: the position
    /// is then reported unknown ([`ProveReport::value`] `None`), as every value given comes
    /// with its certificate.
    pub uncertified: Option<Wld>,
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
    /// A state file ([`ProveOptions::state`]) was refused or could not be written.
    #[error("{0}")]
    State(String),
    /// The position has more pieces than the builder handles ([`units_to_cover`]).
    #[error("{fen} has {pieces} pieces; the builder handles at most {max}")]
    TooManyPieces {
        /// The position, in FEN.
        fen: String,
        /// Its piece count.
        pieces: u32,
        /// [`crate::generate::MAX_BUILD_PIECES`].
        max: u32,
    },
}

/// Checkers (of the rules `R` of the tables: English by default, any [`Variant`]'s fast
/// engine) as a [`Game`] for the search: tables up to `max_pieces` are exact leaves.
#[derive(Debug)]
pub struct Checkers<'t, R: Rules = English> {
    tb: &'t Tablebase<R>,
    max_pieces: u32,
    variant: Variant,
}

impl<R: Rules> Clone for Checkers<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R: Rules> Copy for Checkers<'_, R> {}

impl<'t, R: Rules> Checkers<'t, R> {
    /// Use the tables of `tb`, up to its [`Tablebase::max_pieces`].
    ///
    /// # Panics
    /// Rules `R` whose id ([`Rules::ID`]) no [`Variant`] has (every [`Rules`] implementation
    /// of this crate has one; a tablebase of other rules cannot be opened).
    pub fn new(tb: &'t Tablebase<R>) -> Self {
        Checkers {
            tb,
            max_pieces: tb.max_pieces(),
            variant: Variant::of::<R>().expect("the rules of a known variant"),
        }
    }

    /// The variant whose rules the game follows (that of the tables).
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Every legal move of `p` with its full path ([`Variant::moves`]: the variant's path
    /// generator), for principal variations and certificates.
    pub fn moves(&self, p: &Position) -> Vec<Move> {
        self.variant.moves(p)
    }

    /// Whether the side to move of `p` has a legal move (the tables' fast engine).
    pub fn has_move(&self, p: &Position) -> bool {
        self.tb.rules().has_move(p)
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

impl<R: Rules> Game for Checkers<'_, R> {
    type Pos = Position;
    type Error = ProbeError;

    fn mover(&self, p: &Position) -> Color {
        p.side
    }

    fn successors(&self, p: &Position, out: &mut Vec<Position>) {
        out.clear();
        self.tb.rules().for_each_successor(p, |q| out.push(q));
    }

    fn evaluate(&self, p: &Position, or_node: bool, goal: Goal) -> Result<Eval, ProbeError> {
        if self.covers(p) {
            return Ok(Eval::Exact(self.tb.probe_wld(p)?));
        }
        let mut n = 0u32;
        self.tb.rules().for_each_successor(p, |_| n += 1);
        if n == 0 {
            // The terminal rule of the tables' rules (a loss in English, a win in giveaway).
            return Ok(Eval::Exact(self.tb.rules().no_move_value()));
        }
        // Initial numbers: the side to move's mobility counts against the side that must
        // refute every move; pieces above the tables make both harder; material favours the
        // side ahead, graded by how far ahead (issue 37: 0.84x the nodes of a factor 2 for
        // any lead, see CHANGELOG).
        let excess = p.piece_count().saturating_sub(self.max_pieces).max(1);
        let prover = if or_node { p.side } else { p.side.opponent() };
        let mut adv = material(p, prover) - material(p, prover.opponent());
        if self.tb.rules().no_move_value() == Wld::Win {
            // Giveaway: the side with less material is the one ahead.
            adv = -adv;
        }
        let (mut pn, mut dn) = if or_node { (excess, n) } else { (n, excess) };
        // The goal is harder to prove (win: unless ahead; not-lose: when behind) and to
        // disprove (win: when ahead; not-lose: unless behind) by a factor that grows with the
        // material difference `a` in half-men.
        let a = adv.unsigned_abs();
        match goal {
            Goal::Win if adv <= 0 => pn *= 2 + a,
            Goal::Win => dn *= 1 + a / 2,
            Goal::NotLose if adv >= 0 => dn *= 2 + a,
            Goal::NotLose => pn *= 1 + a / 2,
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
pub struct Prover<'t, R: Rules = English> {
    game: Checkers<'t, R>,
    opts: ProveOptions,
    win_tt: Option<Table<Position>>,
    nl_tt: Option<Table<Position>>,
}

/// Saves the two goals' tables (win, not-lose) to the state file.
type SaveFn<'a> = dyn Fn(&Table<Position>, &Table<Position>) -> Result<(), ProveError> + 'a;

/// Most plies of a principal variation beyond the tables.
const MAX_PV: usize = 80;

/// Most plies of its continuation inside the tables (the distance tables' perfect line).
const MAX_TABLE_LINE: u32 = 300;

impl<'t, R: Rules> Prover<'t, R> {
    /// A prover over `tb` with `opts` (allocates the transposition tables). The game is the
    /// one of the tables' rules `R` (their moves, terminal rule and tables as leaves).
    ///
    /// # Panics
    /// Rules `R` whose id ([`Rules::ID`]) no [`Variant`] has (every [`Rules`] implementation of
    /// this crate has one; a tablebase of other rules cannot be opened).
    pub fn new(tb: &'t Tablebase<R>, opts: &ProveOptions) -> Self {
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

    /// The tables in use (every file with at most `Checkers::max_pieces` pieces), as named in
    /// certificate headers.
    ///
    /// # Errors
    /// [`ProveError::Certificate`] if the table directory cannot be read.
    pub fn table_set(&self) -> Result<TableSet, ProveError> {
        crate::proofcheck::table_set(self.game.tb.dir(), self.game.max_pieces)
            .map_err(|e| ProveError::Certificate(e.to_string()))
    }

    /// Settle `pos` (see the module docs), its time counted from now: [`Prover::prove_from`]
    /// with `Instant::now()`.
    ///
    /// # Errors
    /// As [`Prover::prove_from`].
    pub fn prove(&mut self, pos: &Position) -> Result<ProveReport, ProveError> {
        self.prove_from(pos, Instant::now())
    }

    /// Settle `pos` (see the module docs), its time limit ([`ProveOptions::time`]) counted
    /// from `start` (e.g. when the command started, so that loading counts too). The
    /// transposition tables keep what earlier roots proved; when certificates are requested
    /// and a position settled with their help has a strategy that cannot be rebuilt within the
    /// limits, it is searched once more on emptied tables (within what is left of the same
    /// deadline and node budget), so the result is a certificate or unknown.
    ///
    /// # Errors
    /// [`ProveError::InvalidPosition`], [`ProveError::Probe`] (a table needed is missing or
    /// damaged), [`ProveError::Certificate`] (a certificate failed for another reason than a
    /// limit; never expected), [`ProveError::Inconsistent`].
    pub fn prove_from(
        &mut self,
        pos: &Position,
        start: Instant,
    ) -> Result<ProveReport, ProveError> {
        self.game
            .tb
            .rules()
            .validate(pos)
            .map_err(|e| ProveError::InvalidPosition(e.to_string()))?;
        let game = self.game;
        let (wt, nt) = (
            self.win_tt.take().expect("table"),
            self.nl_tt.take().expect("table"),
        );
        // With a state file: the tables hold this position's saved state only.
        let saved = match &self.opts.state {
            Some(path) => {
                let tables = self.table_set()?;
                let loaded =
                    state::load(path, pos, &tables).map_err(|e| ProveError::State(e.to_string()));
                let loaded = match loaded {
                    Ok(l) => l,
                    Err(e) => {
                        self.win_tt = Some(wt);
                        self.nl_tt = Some(nt);
                        return Err(e);
                    }
                };
                wt.clear();
                nt.clear();
                if let Some(st) = loaded {
                    for e in st.win {
                        wt.put(game.hash(&e.pos), e);
                    }
                    for e in st.not_lose {
                        nt.put(game.hash(&e.pos), e);
                    }
                }
                Some((path.clone(), tables))
            }
            None => None,
        };
        let save_fn = |w: &Table<Position>, n: &Table<Position>| -> Result<(), ProveError> {
            let (path, tables) = saved.as_ref().expect("state");
            state::save(path, pos, tables, w, n).map_err(|e| ProveError::State(e.to_string()))
        };
        let save: Option<&SaveFn<'_>> = saved.as_ref().map(|_| &save_fn as _);
        let earlier = !wt.is_empty() || !nt.is_empty();
        // This root's entries push out the earlier roots' first.
        wt.new_generation();
        nt.new_generation();
        let mut win = self.searcher(Goal::Win, wt);
        let mut nl = self.searcher(Goal::NotLose, nt);
        let mut result = self.run(&mut win, &mut nl, pos, start, [0, 0], save);
        let (mut wt, mut nt) = (win.into_table(), nl.into_table());
        if let (true, Ok(r)) = (earlier, &result) {
            if r.uncertified.is_some() && !r.limits.contains(&Limit::Time) {
                // Settled with the help of earlier roots' facts, but its strategy could not be
                // rebuilt within the node budget: once more on empty tables, where the search
                // itself builds everything the certificate needs (or the position stays
                // unknown), with what is left of the budget.
                let spent = [r.win.nodes, r.not_lose.nodes];
                wt.clear();
                nt.clear();
                let mut win = self.searcher(Goal::Win, wt);
                let mut nl = self.searcher(Goal::NotLose, nt);
                result = self.run(&mut win, &mut nl, pos, start, spent, save);
                (wt, nt) = (win.into_table(), nl.into_table());
            }
        }
        // The state at the end (settled or stopped by a limit).
        let saved_end = match (&result, save) {
            (Ok(_), Some(f)) => f(&wt, &nt),
            _ => Ok(()),
        };
        self.win_tt = Some(wt);
        self.nl_tt = Some(nt);
        saved_end?;
        result
    }

    /// A searcher of `goal` with the table `tt` and its own threads ([`Prover::goal_threads`]).
    fn searcher(&self, goal: Goal, tt: Table<Position>) -> Dfpn<'_, Checkers<'t, R>> {
        let mut d = Dfpn::with_table(&self.game, goal, tt);
        d.set_threads(self.goal_threads(goal));
        d.set_weak_phase_nodes(self.weak_phase_nodes());
        d
    }

    /// Most nodes of each goal's weak phase: [`WEAK_PHASE_NODES_PER_SECOND`] per second of
    /// [`ProveOptions::time`] (`None` without a time limit: the phase is then half the node
    /// budget, as always).
    fn weak_phase_nodes(&self) -> Option<u64> {
        self.opts
            .time
            .map(|t| (t.as_secs_f64() * WEAK_PHASE_NODES_PER_SECOND as f64) as u64)
    }

    /// Whether the two goals are searched at the same time ([`Schedule::Together`] with 2
    /// threads or more).
    fn together(&self) -> bool {
        self.opts.threads >= 2 && self.opts.schedule == Schedule::Together
    }

    /// The threads of `goal`'s own search ([`Schedule`]); at least one.
    fn goal_threads(&self, goal: Goal) -> usize {
        let t = self.opts.threads.max(1);
        match (self.together(), goal) {
            (false, _) => t,
            (true, Goal::Win) => t - t / 2,
            (true, Goal::NotLose) => t / 2,
        }
    }

    /// The limit that cut work short: the deadline if it passed, else the node limit if
    /// there is one (`None`: no limit explains it).
    fn cut_by(&self, deadline: Option<Instant>) -> Option<Limit> {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Limit::Time)
        } else {
            self.opts.nodes.map(|_| Limit::Nodes)
        }
    }

    /// Search, layer retrograde and certificates of `pos`; `spent` nodes of each goal (win,
    /// not-lose) were used on it before (by an earlier run on other tables).
    fn run(
        &self,
        win: &mut Dfpn<'_, Checkers<'t, R>>,
        nl: &mut Dfpn<'_, Checkers<'t, R>>,
        pos: &Position,
        start: Instant,
        spent: [u64; 2],
        save: Option<&SaveFn<'_>>,
    ) -> Result<ProveReport, ProveError> {
        let cancel = Arc::new(AtomicBool::new(false));
        let deadline = self.opts.time.map(|t| start + t);
        // Where the layer retrograde may follow, the search gets a share of the time
        // ([`SEARCH_SHARE`]) and the layer the rest; not with a state file (long searches).
        let full_deadline = deadline;
        let layer_may_run =
            self.opts.layer_positions > 0 && save.is_none() && !self.game.covers(pos);
        let deadline = match self.opts.time {
            Some(t) if layer_may_run => Some(start + t.mul_f64(SEARCH_SHARE)),
            _ => deadline,
        };
        let (w0, n0) = (win.stats().nodes, nl.stats().nodes);
        let left = |g: usize| self.opts.nodes.map(|n| n.saturating_sub(spent[g]));
        let budget = |deadline, g: usize| Budget {
            nodes: left(g),
            deadline,
            cancel: Some(cancel.clone()),
        };
        let mut limits: Vec<Limit> = Vec::new();
        // A goal whose result settles the other's too (win proven: not-lose proven; not-lose
        // disproven: win disproven) stops the other at once (see `implies`). Otherwise each
        // goal runs to its answer or its budget. An error stops the other goal.
        // Each goal: weak sums for the first eighth of its budget and at most
        // `WEAK_PHASE_NODES_PER_SECOND` nodes per second of the time limit, then (if still
        // unknown) sums for the rest, back to weak sums if they saturate
        // (`Dfpn::solve_two_phase`).
        // Goals searched together: each lends its threads to the other, from when it is
        // finished without settling the other (`search::Reserve`).
        let reserves = self.lend_threads(win, nl);
        let run_goal = |d: &mut Dfpn<'_, Checkers<'t, R>>, b: Budget, g: usize| {
            let r = d
                .solve_two_phase(*pos, pos.side, &[], &b)
                .map(|s| (s.outcome, d.stopped()));
            after_goal(&r, g, self.opts.stop_implied, &cancel, reserves.as_ref());
            r
        };
        let (rw, rn) = if let Some(save) = save {
            let [rw, rn] =
                self.search_chunked(win, nl, pos, deadline, [left(0), left(1)], &cancel, save)?;
            (Ok(rw), Ok(rn))
        } else if self.together() {
            on_two_search_stacks(
                || run_goal(win, budget(deadline, 0), 0),
                || run_goal(nl, budget(deadline, 1), 1),
            )
        } else {
            // One after the other on a thread with a large stack; the first goal at most half
            // the time left. A win proven: not-lose is not searched.
            let half = halfway(deadline);
            on_search_stack(|| {
                let rw = run_goal(win, budget(half, 0), 0);
                let rn = match &rw {
                    Ok((Outcome::Proven, _)) if self.opts.stop_implied => {
                        Ok((Outcome::Unknown { pn: 1, dn: 1 }, Some(Stop::Cancelled)))
                    }
                    _ => run_goal(nl, budget(deadline, 1), 1),
                };
                (rw, rn)
            })
        };
        // The lent threads stay with their goal's certificates and later roots.
        win.set_reserve(None);
        nl.set_reserve(None);
        let ((mut ow, sw), (mut on, sn)) = (rw?, rn?);
        limits.extend(sw.and_then(Limit::of));
        limits.extend(sn.and_then(Limit::of));
        // The goal stopped by the other's result takes the outcome that result implies.
        let (mut implied, mut value);
        (ow, on, implied, value) = combine(pos, ow, on)?;
        // The rest of the time: the layer retrograde and the certificates.
        let deadline = full_deadline;
        // What the search leaves unknown, the layer retrograde may settle (see `layer`): the
        // position's layer and, within the size limit, the layers its man moves lead to
        // (`Layer::build`).
        let mut solved_layer = None;
        if value.is_none() && self.opts.layer_positions > 0 && !self.game.covers(pos) {
            // At most what the memory budget holds, and only within the deadline: a layer cut
            // short by either leaves the position unknown.
            let memory = self.opts.memory.unwrap_or_else(layer::default_budget);
            let limit = layer::max_positions(self.opts.layer_positions, memory);
            let models = |l: &Layer| {
                let ms = l.solve(pos.side, deadline)?;
                let mo = l.solve(pos.side.opponent(), deadline)?;
                Some((ms, mo))
            };
            let built = if limit == 0 {
                None
            } else {
                Layer::build(self.game.tb, pos, limit, true, deadline)?
            };
            let truncated = built.as_ref().is_some_and(Layer::truncated);
            let solved = built.and_then(|l| models(&l).map(|m| (l, m)));
            if solved.is_none() {
                limits.push(if deadline.is_some_and(|d| Instant::now() >= d) {
                    Limit::Time
                } else if limit < self.opts.layer_positions {
                    Limit::Memory
                } else {
                    Limit::Layer
                });
            }
            if let Some((l, (ms, mo))) = solved {
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
                } else if truncated {
                    limits.push(if limit < self.opts.layer_positions {
                        Limit::Memory
                    } else {
                        Limit::Layer
                    });
                }
            }
        }
        // A layer that did not settle the position gives the rest of the time back to the
        // search (issue 37): the goals that the search's share of the time stopped unsettled
        // go on from what their tables hold, with sums, until the deadline.
        if value.is_none() && layer_may_run && solved_layer.is_none() {
            let again = [
                matches!(ow, Outcome::Unknown { .. }) && sw == Some(Stop::Time),
                matches!(on, Outcome::Unknown { .. }) && sn == Some(Stop::Time),
            ];
            if again.contains(&true) && deadline.is_some_and(|d| Instant::now() < d) {
                let nodes = [
                    left(0).map(|n| n.saturating_sub(win.stats().nodes - w0)),
                    left(1).map(|n| n.saturating_sub(nl.stats().nodes - n0)),
                ];
                let [rw, rn] = self.resume_search(win, nl, pos, deadline, nodes, again)?;
                if let Some((o, s)) = rw {
                    ow = o;
                    limits.extend(s.and_then(Limit::of));
                }
                if let Some((o, s)) = rn {
                    on = o;
                    limits.extend(s.and_then(Limit::of));
                }
                (ow, on, implied, value) = combine(pos, ow, on)?;
            }
        }
        let pv = match (value, &solved_layer) {
            (Some(v), None) => self.pv(win, nl, pos, v)?,
            _ => Vec::new(),
        };
        let mut proofs = Vec::new();
        let mut uncertified = None;
        if self.opts.certificate {
            if let Some(v) = value {
                let budgets = [
                    left(0).map(|n| n.saturating_sub(win.stats().nodes - w0)),
                    left(1).map(|n| n.saturating_sub(nl.stats().nodes - n0)),
                ];
                let got = match &solved_layer {
                    None => self.certificates(win, nl, pos, v, deadline, budgets)?,
                    Some((l, ms, mo)) => {
                        self.layer_certificates(win, nl, pos, v, l, ms, mo, deadline, budgets)?
                    }
                };
                match got {
                    Some(p) => proofs = p,
                    None => {
                        // Cut short by a limit: unknown, as every value given is certified.
                        let Some(limit) = self.cut_by(deadline) else {
                            return Err(ProveError::Certificate(format!(
                                "{}: the strategy could not be completed",
                                pos.to_fen()
                            )));
                        };
                        limits.push(limit);
                        uncertified = value.take();
                    }
                }
            }
        }
        if value.is_some() {
            limits.clear();
        }
        limits.sort();
        limits.dedup();
        let seconds = start.elapsed().as_secs_f64();
        let win_report = GoalReport {
            outcome: ow,
            nodes: spent[0] + win.stats().nodes - w0,
            implied: implied[0],
        };
        let nl_report = GoalReport {
            outcome: on,
            nodes: spent[1] + nl.stats().nodes - n0,
            implied: implied[1],
        };
        Ok(ProveReport {
            position: *pos,
            value,
            win: win_report,
            not_lose: nl_report,
            nodes: win_report.nodes + nl_report.nodes,
            seconds,
            pv: if value.is_some() { pv } else { Vec::new() },
            proofs,
            layer: solved_layer.as_ref().map_or(0, |(l, _, _)| l.len()),
            limits,
            uncertified,
        })
    }

    /// With the goals searched together, each goal's thread reserve, handed to the other goal's
    /// search (a goal that finishes without settling the other releases its reserve, and its
    /// threads join the other's search); `None` with one thread.
    fn lend_threads(
        &self,
        win: &mut Dfpn<'_, Checkers<'t, R>>,
        nl: &mut Dfpn<'_, Checkers<'t, R>>,
    ) -> Option<[Arc<search::Reserve>; 2]> {
        if !self.together() {
            return None;
        }
        let rw = search::Reserve::new(self.goal_threads(Goal::Win));
        let rn = search::Reserve::new(self.goal_threads(Goal::NotLose));
        win.set_reserve(Some(rn.clone()));
        nl.set_reserve(Some(rw.clone()));
        Some([rw, rn])
    }

    /// The searches of the goals `again` (win, not-lose) once more, after a layer retrograde
    /// that did not settle `pos`, until `deadline` and within `nodes` each: with sums
    /// ([`Dfpn::solve_for`]), from what their tables hold (the search's share of the time
    /// ended in the sums phase, whose numbers they keep). Goals searched together: a goal not
    /// searched again lends its threads to the other at once, a goal finished lends them as in
    /// [`Prover::run`]; with one thread, win first with at most half the time. A goal whose
    /// result implies the other's stops it. Returns each searched goal's outcome and the limit
    /// that stopped it (`None` for a goal not searched).
    #[allow(clippy::type_complexity)]
    fn resume_search(
        &self,
        win: &mut Dfpn<'_, Checkers<'t, R>>,
        nl: &mut Dfpn<'_, Checkers<'t, R>>,
        pos: &Position,
        deadline: Option<Instant>,
        nodes: [Option<u64>; 2],
        again: [bool; 2],
    ) -> Result<[Option<(Outcome, Option<Stop>)>; 2], ProveError> {
        let cancel = Arc::new(AtomicBool::new(false));
        let budget = |deadline, g: usize| Budget {
            nodes: nodes[g],
            deadline,
            cancel: Some(cancel.clone()),
        };
        let reserves = self.lend_threads(win, nl);
        for (g, rs) in reserves.iter().flatten().enumerate() {
            if !again[g] {
                rs.release();
            }
        }
        let run_goal = |d: &mut Dfpn<'_, Checkers<'t, R>>, b: Budget, g: usize| {
            if !again[g] {
                return Ok(None);
            }
            d.set_weak(false);
            let r = d
                .solve_for(*pos, pos.side, &[], &b)
                .map(|s| (s.outcome, d.stopped()));
            after_goal(&r, g, self.opts.stop_implied, &cancel, reserves.as_ref());
            r.map(Some)
        };
        let (rw, rn) = if self.together() {
            on_two_search_stacks(
                || run_goal(win, budget(deadline, 0), 0),
                || run_goal(nl, budget(deadline, 1), 1),
            )
        } else {
            let first = if again[1] {
                halfway(deadline)
            } else {
                deadline
            };
            on_search_stack(|| {
                let rw = run_goal(win, budget(first, 0), 0);
                let rn = match &rw {
                    Ok(Some((o, _))) if self.opts.stop_implied && implies(0, *o) => Ok(None),
                    _ => run_goal(nl, budget(deadline, 1), 1),
                };
                (rw, rn)
            })
        };
        win.set_reserve(None);
        nl.set_reserve(None);
        Ok([rw?, rn?])
    }

    /// The two goals' searches as in [`Prover::run`] (weak sums for the first eighth of the
    /// nodes and time and at most [`WEAK_PHASE_NODES_PER_SECOND`] nodes per second of the
    /// time limit, then sums, back to weak sums if they saturate), cut into chunks of [`ProveOptions::state_interval`] after
    /// each of which the tables are saved with `save` (both searches paused). A goal whose
    /// result implies the other's ([`implies`]) stops it: at once with threads, else (the
    /// goals taking turns within a chunk) before its next turn. Returns each goal's outcome
    /// and the limit that stopped it (a goal stopped by the other's result: its outcome so
    /// far and [`Stop::Cancelled`]).
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn search_chunked(
        &self,
        win: &mut Dfpn<'_, Checkers<'t, R>>,
        nl: &mut Dfpn<'_, Checkers<'t, R>>,
        pos: &Position,
        deadline: Option<Instant>,
        left: [Option<u64>; 2],
        cancel: &Arc<AtomicBool>,
        save: &SaveFn<'_>,
    ) -> Result<[(Outcome, Option<Stop>); 2], ProveError> {
        let now = Instant::now();
        let weak_time =
            deadline.map(|d| now + d.saturating_duration_since(now) / search::WEAK_SHARE);
        // Per goal: its sums saturated (weak sums for the rest, as `Dfpn::solve_two_phase`).
        let fell_back = [AtomicBool::new(false), AtomicBool::new(false)];
        let base = [win.stats().nodes, nl.stats().nodes];
        let parallel = self.together();
        let stop_implied = self.opts.stop_implied;
        let interval = if parallel {
            self.opts.state_interval
        } else {
            // The two goals take turns within one interval.
            self.opts.state_interval / 2
        };
        // One chunk of goal `g`: `Some` when the goal is finished (settled, out of budget, or
        // stopped by the other).
        let step = |d: &mut Dfpn<'_, Checkers<'t, R>>,
                    g: usize|
         -> Result<Option<(Outcome, Option<Stop>)>, ProbeError> {
            let chunk_end = Instant::now() + interval;
            let used = d.stats().nodes - base[g];
            let weak_end = match (
                left[g].map(|n| n / search::WEAK_SHARE as u64),
                d.weak_phase_nodes(),
            ) {
                (Some(h), Some(w)) => Some(h.min(w)),
                (h, w) => h.or(w),
            };
            let first =
                weak_time.is_none_or(|h| Instant::now() < h) && weak_end.is_none_or(|n| used < n);
            let back = fell_back[g].load(Ordering::Relaxed);
            let weak = first || back;
            let (nodes, dl) = if first && !back {
                (weak_end.map(|n| n - used), weak_time)
            } else {
                (left[g].map(|n| n.saturating_sub(used)), deadline)
            };
            let budget = Budget {
                nodes,
                deadline: Some(dl.map_or(chunk_end, |d| d.min(chunk_end))),
                cancel: Some(cancel.clone()),
            };
            d.set_weak(weak);
            d.set_stop_saturated(!weak);
            let r = d.solve_for(*pos, pos.side, &[], &budget);
            d.set_weak(false);
            d.set_stop_saturated(false);
            if !weak && d.saturated() {
                fell_back[g].store(true, Ordering::Relaxed);
            }
            let s = match r {
                Ok(s) => s,
                Err(e) => {
                    cancel.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            };
            if !matches!(s.outcome, Outcome::Unknown { .. }) {
                if stop_implied && implies(g, s.outcome) {
                    cancel.store(true, Ordering::Relaxed);
                }
                return Ok(Some((s.outcome, None)));
            }
            let used = d.stats().nodes - base[g];
            Ok(if deadline.is_some_and(|t| Instant::now() >= t) {
                Some((s.outcome, Some(Stop::Time)))
            } else if left[g].is_some_and(|n| used >= n) {
                Some((s.outcome, Some(Stop::Nodes)))
            } else if matches!(d.stopped(), Some(Stop::Depth | Stop::Cancelled)) {
                Some((s.outcome, d.stopped()))
            } else {
                // The end of a chunk or of the weak phase: go on.
                None
            })
        };
        // A goal stopped by the other's result before its turn: its numbers so far.
        let stopped = |d: &Dfpn<'_, Checkers<'t, R>>| {
            let k = d.known(pos, pos.side);
            let o = match k.result {
                Some(true) => Outcome::Proven,
                Some(false) => Outcome::Disproven,
                None => Outcome::Unknown { pn: 1, dn: 1 },
            };
            (o, Some(Stop::Cancelled))
        };
        let mut res: [Option<(Outcome, Option<Stop>)>; 2] = [None, None];
        loop {
            let (dw, dn) = (res[0].is_some(), res[1].is_some());
            let (rw, rn) = if parallel {
                let go = |d: &mut Dfpn<'_, Checkers<'t, R>>, g: usize, done: bool| {
                    if done {
                        Ok(None)
                    } else {
                        step(d, g)
                    }
                };
                on_two_search_stacks(|| go(win, 0, dw), || go(nl, 1, dn))
            } else {
                on_search_stack(|| {
                    let rw = if dw { Ok(None) } else { step(win, 0) };
                    // Win proven: not-lose is not searched any further.
                    let skip = matches!(&rw, Ok(Some((o, _))) if stop_implied && implies(0, *o));
                    let rn = if dn || skip || rw.is_err() {
                        Ok(None)
                    } else {
                        step(nl, 1)
                    };
                    (rw, rn)
                })
            };
            if let Some(r) = rw? {
                res[0] = Some(r);
            }
            if let Some(r) = rn? {
                res[1] = Some(r);
            }
            // A finished goal's threads join the other's next chunks (`search::Reserve`).
            if res[0].is_some() {
                if let Some(r) = nl.reserve() {
                    r.release();
                }
            }
            if res[1].is_some() {
                if let Some(r) = win.reserve() {
                    r.release();
                }
            }
            // The goal the other's result implies is finished too.
            if stop_implied && res[0].is_some_and(|(o, _)| implies(0, o)) && res[1].is_none() {
                res[1] = Some(stopped(nl));
            }
            if stop_implied && res[1].is_some_and(|(o, _)| implies(1, o)) && res[0].is_none() {
                res[0] = Some(stopped(win));
            }
            if let [Some(a), Some(b)] = res {
                return Ok([a, b]);
            }
            save(win.table(), nl.table())?;
        }
    }

    /// The certificates of a position the layer retrograde settled: each claim from the layer
    /// model that establishes it, else from the search that did (`budgets`: nodes left to the
    /// win and not-lose searchers). `None` when cut short by a limit.
    #[allow(clippy::too_many_arguments)]
    fn layer_certificates(
        &self,
        win: &mut Dfpn<'_, Checkers<'t, R>>,
        nl: &mut Dfpn<'_, Checkers<'t, R>>,
        pos: &Position,
        value: Wld,
        l: &Layer,
        ms: &layer::Model,
        mo: &layer::Model,
        deadline: Option<Instant>,
        budgets: [Option<u64>; 2],
    ) -> Result<Option<Vec<Proof>>, ProveError> {
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
            if let Some(p) = l.proof(tb, m, claimant, goal, deadline)? {
                out.push(p);
                continue;
            }
            // The search settled this half: extract it from the search.
            let from_win = match value {
                Wld::Win => true,
                Wld::Loss => false,
                Wld::Draw => claimant != s,
            };
            let p = if from_win {
                self.search_proof(win, pos, proven, deadline, budgets[0])?
            } else {
                self.search_proof(nl, pos, proven, deadline, budgets[1])?
            };
            match p {
                Some(p) => out.push(p),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// The certificate of the claim `d` established at `pos` (`proven` or disproven), its
    /// sub-searches within `nodes` in all; `None` when cut short by a limit.
    fn search_proof(
        &self,
        d: &mut Dfpn<'_, Checkers<'t, R>>,
        pos: &Position,
        proven: bool,
        deadline: Option<Instant>,
        nodes: Option<u64>,
    ) -> Result<Option<Proof>, ProveError> {
        let budget = Budget {
            nodes,
            deadline,
            cancel: None,
        };
        let s = on_search_stack(|| cert::extract(d, *pos, pos.side, proven, &budget, deadline))?;
        let Some(s) = s else { return Ok(None) };
        let game = self.game;
        cert::proof_of(&s, game.variant(), |p| game.covers(p))
            .map(Some)
            .map_err(|e| ProveError::Inconsistent(e.to_string()))
    }

    /// Extract the certificates of a settled position (in parallel for a draw), the
    /// sub-searches of each searcher within its node budget (`budgets`: win, not-lose); `None`
    /// when cut short by a limit.
    fn certificates(
        &self,
        win: &mut Dfpn<'_, Checkers<'t, R>>,
        nl: &mut Dfpn<'_, Checkers<'t, R>>,
        pos: &Position,
        value: Wld,
        deadline: Option<Instant>,
        budgets: [Option<u64>; 2],
    ) -> Result<Option<Vec<Proof>>, ProveError> {
        let game = self.game;
        let prover = pos.side;
        let one = |d: &mut Dfpn<'_, Checkers<'t, R>>,
                   proven: bool,
                   nodes: Option<u64>|
         -> Result<Option<Proof>, ProveError> {
            let budget = Budget {
                nodes,
                deadline,
                cancel: None,
            };
            let Some(s) = cert::extract(d, *pos, prover, proven, &budget, deadline)? else {
                return Ok(None);
            };
            cert::proof_of(&s, game.variant(), |p| game.covers(p))
                .map(Some)
                .map_err(|e| ProveError::Inconsistent(e.to_string()))
        };
        let go = |d: &mut Dfpn<'_, Checkers<'t, R>>, proven: bool, nodes: Option<u64>| {
            on_search_stack(|| one(d, proven, nodes))
        };
        match value {
            Wld::Win => Ok(go(win, true, budgets[0])?.map(|p| vec![p])),
            Wld::Loss => Ok(go(nl, false, budgets[1])?.map(|p| vec![p])),
            Wld::Draw => {
                // Both sides' NotLose, in parallel.
                let (a, b) = on_two_search_stacks(
                    || one(nl, true, budgets[1]),
                    || one(win, false, budgets[0]),
                );
                Ok(a?.zip(b?).map(|(a, b)| vec![a, b]))
            }
        }
    }

    /// Value of `c` for its side to move as far as the tables and the search know it.
    fn known_value(
        &self,
        win: &Dfpn<'_, Checkers<'t, R>>,
        nl: &Dfpn<'_, Checkers<'t, R>>,
        prover: Color,
        c: &Position,
    ) -> Result<(Option<Wld>, u32), ProveError> {
        if self.game.covers(c) {
            return Ok((Some(self.game.tb.probe_wld(c)?), 0));
        }
        if !self.game.has_move(c) {
            // The terminal rule (a loss in English, a win in giveaway).
            return Ok((Some(self.game.tb.rules().no_move_value()), 0));
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
        win: &Dfpn<'_, Checkers<'t, R>>,
        nl: &Dfpn<'_, Checkers<'t, R>>,
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
            for m in self.game.moves(&cur) {
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
            match crate::play::line(self.game.tb, &cur, crate::play::Metric::Dtc, MAX_TABLE_LINE) {
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

/// Share of `--time` the search gets where the layer retrograde may follow it (the rest is
/// the layer's): a draw the search cannot settle (the Fourth Position) is settled by the
/// nested layers in seconds, while the search would spend all the time on it. A layer that
/// does not settle the position gives what is left back to the search
/// ([`Prover::resume_search`]): at 8 pieces on the 6-piece tables the nested layer of a
/// position the search leaves unknown is usually truncated at `--layer` positions after a
/// second or two and settles nothing, and the rest of the time used to go unspent (issue 37).
const SEARCH_SHARE: f64 = 0.5;

/// Stack size of search threads (the search recurses once per ply of the current path).
const STACK: usize = 256 << 20;

/// Runs `f` on a new thread with the search stack ([`STACK`]) and returns its result.
///
/// # Panics
/// If the thread cannot be spawned, or `f` panics (the panic goes on in the caller).
fn on_search_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(s, f)
            .expect("spawn a prover thread")
            .join()
            .expect("prover thread")
    })
}

/// Runs `a` and `b` on two new threads with the search stack ([`STACK`]), side by side, and
/// returns both results.
///
/// # Panics
/// As [`on_search_stack`].
fn on_two_search_stacks<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    std::thread::scope(|s| {
        let ha = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(s, a)
            .expect("spawn a prover thread");
        let hb = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(s, b)
            .expect("spawn a prover thread");
        (
            ha.join().expect("prover thread"),
            hb.join().expect("prover thread"),
        )
    })
}

/// After goal `g`'s search (0 win, 1 not-lose) ended with `r`: an error, or an outcome that
/// settles the other goal too (with `stop_implied`), cancels the other goal's search; otherwise
/// this goal's threads join the other's search (`reserves`: the goals' thread reserves when
/// they are searched together).
fn after_goal<E>(
    r: &Result<(Outcome, Option<Stop>), E>,
    g: usize,
    stop_implied: bool,
    cancel: &AtomicBool,
    reserves: Option<&[Arc<search::Reserve>; 2]>,
) {
    if r.as_ref()
        .map_or(true, |(o, _)| stop_implied && implies(g, *o))
    {
        cancel.store(true, Ordering::Relaxed);
    } else if let Some(rs) = reserves {
        rs[g].release();
    }
}

/// The instant halfway from now to `deadline` (`None`: no deadline).
fn halfway(deadline: Option<Instant>) -> Option<Instant> {
    deadline.map(|d| {
        let now = Instant::now();
        now + d.saturating_duration_since(now) / 2
    })
}

/// The two goals' outcomes (win, not-lose) completed by what one implies for the other (a win
/// proven is a not-lose proven, a not-lose disproven a win disproven; `implied` marks the goal
/// so completed), and the value they settle (`None`: unknown).
///
/// # Errors
/// [`ProveError::Inconsistent`] when a win is proven and not-lose disproven (a bug).
#[allow(clippy::type_complexity)]
fn combine(
    pos: &Position,
    mut ow: Outcome,
    mut on: Outcome,
) -> Result<(Outcome, Outcome, [bool; 2], Option<Wld>), ProveError> {
    let inconsistent = || {
        ProveError::Inconsistent(format!(
            "{}: win proven and not-lose disproven",
            pos.to_fen()
        ))
    };
    let mut implied = [false, false];
    if ow == Outcome::Proven && on != Outcome::Proven {
        if on == Outcome::Disproven {
            return Err(inconsistent());
        }
        on = Outcome::Proven;
        implied[1] = true;
    } else if on == Outcome::Disproven && ow != Outcome::Disproven {
        ow = Outcome::Disproven;
        implied[0] = true;
    }
    let value = match (ow, on) {
        (Outcome::Proven, Outcome::Disproven) => return Err(inconsistent()),
        (Outcome::Proven, _) => Some(Wld::Win),
        (_, Outcome::Disproven) => Some(Wld::Loss),
        (Outcome::Disproven, Outcome::Proven) => Some(Wld::Draw),
        _ => None,
    };
    Ok((ow, on, implied, value))
}

/// Whether the outcome `o` of goal `g` (0: win, 1: not-lose) settles the other goal: a win
/// proven is a not-lose proven, a not-lose disproven (a loss) a win disproven.
fn implies(g: usize, o: Outcome) -> bool {
    matches!((g, o), (0, Outcome::Proven) | (1, Outcome::Disproven))
}

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
/// [`ProveError::TooManyPieces`] when `pos` has more pieces than the builder handles
/// ([`crate::generate::MAX_BUILD_PIECES`]).
pub fn units_to_cover(
    dir: &std::path::Path,
    pos: &Position,
) -> Result<Vec<crate::plan::Unit>, ProveError> {
    let s = crate::slice::Slice::of(&pos.normalized());
    let n = s.material.pieces();
    if n > crate::generate::MAX_BUILD_PIECES {
        return Err(ProveError::TooManyPieces {
            fen: pos.to_fen(),
            pieces: n,
            max: crate::generate::MAX_BUILD_PIECES,
        });
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
pub fn prove<R: Rules>(
    tb: &Tablebase<R>,
    pos: &Position,
    opts: &ProveOptions,
) -> Result<ProveReport, ProveError> {
    Prover::new(tb, opts).prove(pos)
}
