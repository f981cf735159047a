//! Depth-first proof-number search (df-pn, Nagai 2002) with the 1+epsilon threshold trick
//! (Pawlewicz and Lew 2006), generic over a [`Game`] so that it can be tested on small abstract
//! games with cycles as well as run on checkers.
//!
//! # Goals and values
//! The prover is the side to move at the root (its colour is `root_side`). A search answers one
//! yes/no question, a [`Goal`]: *Win* (the prover wins; a draw counts as failure) or *NotLose*
//! (the prover draws or wins). Nodes where the prover is to move are OR nodes, the others AND
//! nodes. Leaves: a position the game values exactly ([`Eval::Exact`]: no legal move, or a table
//! value), and a position repeated on the current path, which is a draw.
//!
//! # Repetitions (the graph-history interaction)
//! A result that follows from a repetition holds only while the repeated position is on the
//! path. Every solved result carries its *dependencies*: the positions above the node whose
//! repetition its proof tree uses (a repetition leaf depends on the repeated position; a node
//! decided by one child takes that child's dependencies, choosing a child with the fewest; a node
//! decided by all children takes their union; the node itself is then removed, since a proof
//! that returns to the node is valid from any path: a drawing strategy may cycle through its own
//! root, and a winning strategy never needs to come back to the same position).
//! - A result without dependencies is a fact about the position and goes to the transposition
//!   table, reusable from any path and any later root.
//! - A result with dependencies is *path-dependent*. It is kept, with its dependency list, in a
//!   separate bounded cache and reused only where every dependency is on the current path after
//!   the last irreversible move (then every repetition leaf of its proof tree is a repetition
//!   again, so the same proof tree holds). It is never stored in the transposition table.
//!
//! Wins never rely on repetitions: a repetition is a draw, which never satisfies *Win*; it
//! disproves *Win* and proves *NotLose*.
//!
//! Positions can only repeat between two irreversible moves ([`Game::irreversible`]: in checkers
//! a capture or a man move), so the repetition check scans the path back to the last one.
//!
//! # Resources
//! Work is counted in node expansions; a [`Budget`] bounds nodes, wall time and allows another
//! thread to cancel. When it runs out the search returns [`Outcome::Unknown`] with the root's
//! proof and disproof numbers.

use super::tt::{Entry, Key, SharedTable, INF};
use crate::board::{Color, Wld};
use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// A fast hasher for the prover's own maps (the search's path and path-dependent results, the
/// layer retrograde's index): a multiply-rotate over the words of the key, mixed at the end
/// (the keys are positions; no input is adversarial). Deterministic (no random seed).
#[derive(Clone, Copy, Default)]
pub(super) struct FastHasher(u64);

impl FastHasher {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(26) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl std::hash::Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..b.len()].copy_from_slice(b);
            self.add(u64::from_le_bytes(w));
        }
    }
    fn write_u8(&mut self, x: u8) {
        self.add(x.into());
    }
    fn write_u16(&mut self, x: u16) {
        self.add(x.into());
    }
    fn write_u32(&mut self, x: u32) {
        self.add(x.into());
    }
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    fn finish(&self) -> u64 {
        let x = self.0 ^ (self.0 >> 29);
        x.wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (x >> 32)
    }
}

/// A map of the prover's with [`FastHasher`].
pub(super) type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;

/// Most dependencies a path-dependent result may have to be cached.
const MAX_DEPS: usize = 16;

/// The yes/no question a search answers for the prover (the side to move at the root).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Goal {
    /// The prover wins (a draw counts as failure).
    Win,
    /// The prover does not lose (a draw counts as success).
    NotLose,
}

impl Goal {
    /// `win` or `notlose` (the certificate and CLI spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            Goal::Win => "win",
            Goal::NotLose => "notlose",
        }
    }

    /// Whether a value for the prover satisfies the goal.
    pub fn satisfied_by(self, v: Wld) -> bool {
        match self {
            Goal::Win => v == Wld::Win,
            Goal::NotLose => v != Wld::Loss,
        }
    }
}

/// What the game knows about a position without searching it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eval {
    /// The exact value for the side to move (no legal move: the terminal rule, a loss in
    /// English; a table value).
    Exact(Wld),
    /// Unknown: initial proof and disproof numbers (each at least 1, below [`INF`]).
    Open {
        /// Initial proof number.
        pn: u32,
        /// Initial disproof number.
        dn: u32,
    },
}

/// A two-player game graph for the prover. Draws are positions from which neither side can
/// force a win, infinite play included. A game is shared by the threads of a parallel search
/// ([`Dfpn::set_threads`]), hence `Sync`.
pub trait Game: Sync {
    /// A position, side to move included.
    type Pos: Copy + Eq + Hash + Debug + Send + Sync + Key;
    /// Errors of [`Game::evaluate`] (e.g. a missing table).
    type Error: Send;
    /// The side to move.
    fn mover(&self, p: &Self::Pos) -> Color;
    /// Successor positions (distinct), appended to `out` (cleared first).
    fn successors(&self, p: &Self::Pos, out: &mut Vec<Self::Pos>);
    /// Exact value if known without search, else initial numbers for `goal` at an OR node
    /// (`or_node`: the prover is to move) or an AND node.
    ///
    /// # Errors
    /// Whatever the game's value source fails with.
    fn evaluate(&self, p: &Self::Pos, or_node: bool, goal: Goal) -> Result<Eval, Self::Error>;
    /// Whether the move `from` -> `to` can never be undone (no later position can equal one
    /// before it). `false` is always safe.
    fn irreversible(&self, from: &Self::Pos, to: &Self::Pos) -> bool;
    /// A well-mixed 64-bit hash of the position.
    fn hash(&self, p: &Self::Pos) -> u64;
}

/// Result of one search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The goal holds for the prover.
    Proven,
    /// The goal fails for the prover.
    Disproven,
    /// The budget ran out; the root's proof and disproof numbers at that moment.
    Unknown {
        /// Proof number.
        pn: u32,
        /// Disproof number.
        dn: u32,
    },
}

impl Outcome {
    fn of(pn: u32, dn: u32) -> Outcome {
        if pn == 0 {
            Outcome::Proven
        } else if dn == 0 {
            Outcome::Disproven
        } else {
            Outcome::Unknown { pn, dn }
        }
    }
}

/// Limits of one search call.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    /// Most node expansions (`None`: unlimited).
    pub nodes: Option<u64>,
    /// Stop at this instant.
    pub deadline: Option<Instant>,
    /// Stop when another thread sets this flag.
    pub cancel: Option<Arc<AtomicBool>>,
}

/// Why a search stopped before settling its root (see [`Dfpn::stopped`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stop {
    /// The node limit of the [`Budget`] was reached.
    Nodes,
    /// The deadline of the [`Budget`] passed.
    Time,
    /// Another thread set the cancel flag.
    Cancelled,
    /// The path reached the depth limit ([`Dfpn::set_max_depth`]).
    Depth,
}

/// What a searcher's table knows about a position (see [`Dfpn::known`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Known {
    /// `Some(true)` proven, `Some(false)` disproven (path-independent facts), `None` unknown.
    pub result: Option<bool>,
    /// Nodes expanded below the entry when stored (0 if none).
    pub work: u32,
    /// Proof height of a solved entry.
    pub dist: u32,
}

/// Result of [`Dfpn::solve_for`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Solved {
    /// Proven, disproven or unknown.
    pub outcome: Outcome,
    /// The result relies on a repetition of a history position (it holds on this path only).
    pub path_dependent: bool,
    /// Proof height of a solved result (plies).
    pub dist: u32,
}

/// Search statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Node expansions since the searcher was created.
    pub nodes: u64,
    /// Deepest path index reached.
    pub max_depth: usize,
    /// Solved results that depended on the path (kept out of the transposition table).
    pub path_dependent: u64,
    /// Path-dependent results reused because their dependencies were on the path again.
    pub dep_hits: u64,
}

struct Child<P> {
    pos: P,
    pn: u32,
    dn: u32,
    /// Dependencies of a solved child (see the module docs); empty if path-independent.
    deps: Vec<P>,
    /// Proof height when solved.
    dist: u32,
    /// Reached by an irreversible move (cannot be a repetition; ends the repetition scan).
    irr: bool,
    /// [`Game::hash`] of `pos`.
    hash: u64,
    /// The prover is to move at `pos`.
    or: bool,
    /// Threads of the team in `pos` at this thread's last look (parallel search only).
    busy: u16,
    /// Exits of the team's threads from `pos` counted at this thread's last look, taken before
    /// the numbers were read (parallel search only; see [`Team::busy`]).
    exits: u16,
    /// To be read again from the shared table (parallel search only).
    reread: bool,
}

/// Slots of the table of threads in a node ([`Team::busy`]), per lane.
const BUSY_SLOTS: usize = 1 << 16;

/// Most threads of a parallel search for which each thread counts its own presence in the
/// nodes in a lane of its own ([`Team::busy`]); with more, all share one lane.
const MAX_LANES: usize = 4;

/// Nodes of a team's node budget a thread takes at a time ([`Team::nodes`]).
const NODE_CHUNK: u64 = 32;

/// A value alone in its pair of cache lines (a counter other threads write does not slow the
/// reads of its neighbours).
#[repr(align(128))]
struct Padded<T>(T);

/// What the threads of one parallel search share besides the transposition table.
struct Team {
    /// Threads now inside each node (indexed by the low bits of the node's hash; a collision
    /// only misleads the choice of a child, never a result). A thread choosing a child treats
    /// the numbers of a child another thread is in as larger (virtual proof numbers, Kaneko
    /// 2010), so that the threads spread over the tree.
    ///
    /// `lanes` lanes of [`BUSY_SLOTS`] counts: with one lane every thread adds and subtracts
    /// in it (atomic read-modify-writes); with several (at most [`MAX_LANES`] threads) thread
    /// `i` counts itself in lane `i` alone, with plain loads and stores (no locked instruction,
    /// and no cache line written by two threads: side by side in one line, the lanes were
    /// slower), and a node's count is the sum of the lanes.
    /// Counts wrap (u16): a thread's entries and exits pair up.
    ///
    /// Each slot holds two counts: the threads now in the node (low 16 bits) and the exits
    /// from it (high 16 bits, wrapping), which tell a thread whether a node's entry in the
    /// table may have changed since it read it (a node's entry is written only just before a
    /// thread leaves it).
    busy: Arc<[AtomicU32]>,
    /// Lanes of `busy`.
    lanes: usize,
    /// Nodes of the budget taken by the threads, in chunks of at most [`NODE_CHUNK`] (each
    /// expansion uses one node its thread took; see [`Dfpn::expand`]).
    nodes: Padded<AtomicU64>,
    /// Most expansions of all threads together.
    node_limit: u64,
    /// Set when a thread settled the root or failed: the others stop.
    done: AtomicBool,
    /// Threads now searching (the searcher's own, plus [`Reserve`] threads that joined). With
    /// one, the searcher does not read its children's numbers again from the table (no other
    /// thread changes them).
    active: AtomicUsize,
    /// Set (under the [`Reserve`]'s lock) when the first thread's search of the root ended:
    /// reserve threads that have not joined yet do not.
    finished: AtomicBool,
}

/// Threads another search lends to a searcher ([`Dfpn::set_reserve`]): they wait, blocked,
/// until [`Reserve::release`] (e.g. when the other goal of the prover is finished), then join
/// the searcher's running search as helper threads on its shared table (and every later
/// search of the searcher starts with them), exactly as threads of [`Dfpn::set_threads`] do.
#[derive(Debug)]
pub struct Reserve {
    threads: usize,
    released: Mutex<bool>,
    cv: Condvar,
}

impl Reserve {
    /// A reserve of `threads` threads, not released.
    pub fn new(threads: usize) -> Arc<Reserve> {
        Arc::new(Reserve {
            threads,
            released: Mutex::new(false),
            cv: Condvar::new(),
        })
    }

    /// Let the reserve threads join (the running search at once, and every later one).
    pub fn release(&self) {
        *self.lock() = true;
        self.cv.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, bool> {
        self.released.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Marks a team's search finished when dropped (see [`Team::finished`]), under its reserve's
/// lock so that a lent thread waiting sees it or is woken.
struct Finish<'a> {
    team: &'a Team,
    reserve: Option<&'a Reserve>,
}

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        match self.reserve {
            Some(r) => {
                let guard = r.lock();
                self.team.finished.store(true, Ordering::Relaxed);
                drop(guard);
                r.cv.notify_all();
            }
            None => self.team.finished.store(true, Ordering::Relaxed),
        }
    }
}

impl Team {
    /// The threads in the node of hash `hash` and the team's exits from it (wrapping; see
    /// [`Team::busy`]).
    fn busy(&self, hash: u64) -> (u16, u16) {
        let h = (hash as usize) & (BUSY_SLOTS - 1);
        (0..self.lanes).fold((0u16, 0u16), |(n, x), l| {
            // Acquire: the entry written before the exit was counted is visible after it.
            let v = self.busy[l * BUSY_SLOTS + h].load(Ordering::Acquire);
            (n.wrapping_add(v as u16), x.wrapping_add((v >> 16) as u16))
        })
    }

    /// Count thread `lane` in (`enter`) or out of the node of hash `hash`.
    fn mark(&self, lane: usize, hash: u64, enter: bool) {
        let h = (hash as usize) & (BUSY_SLOTS - 1);
        // Enter: one more thread in. Exit: one fewer, one more exit (the low count is at
        // least 1 here, so the carry of adding 0xffff is exactly the exit).
        let add = if enter { 1 } else { 0xffff };
        if self.lanes == 1 {
            self.busy[h].fetch_add(add, Ordering::Release);
        } else {
            // Lane `lane` is written by its thread alone.
            let a = &self.busy[lane * BUSY_SLOTS + h];
            let v = a.load(Ordering::Relaxed);
            a.store(v.wrapping_add(add), Ordering::Release);
        }
    }
}

/// A df-pn searcher for one goal, owning its transposition table. Reuse it for many roots: the
/// table keeps only path-independent solved results (facts about the game) and heuristic
/// numbers, so reuse is sound.
///
/// # Threads
/// With [`Dfpn::set_threads`] above 1, every search runs that many threads on the same root,
/// sharing the transposition table ([`SharedTable`]) and a count of the threads in each node
/// (virtual proof numbers: a child another thread is searching looks harder, so threads spread
/// over the tree; before each choice of a child, a node takes its children's numbers again from
/// the shared table, so the threads profit from each other's work). Each thread keeps its own
/// path and its own cache of path-dependent results: a result that depends on the path is
/// only ever reused on the path of the thread that found it (see the module docs), and only
/// path-independent facts are shared. The first thread to settle the root stops the others.
/// A settled value is therefore the same at every thread count (only which positions settle
/// within a node or time limit, the node counts and the proof trees found may differ).
pub struct Dfpn<'g, G: Game> {
    game: &'g G,
    goal: Goal,
    root_side: Color,
    tt: Arc<SharedTable<G::Pos>>,
    /// Current path: position and the path index of the last position reached by an
    /// irreversible move at or before it (0 if none): earlier positions cannot recur.
    path: Vec<(G::Pos, usize)>,
    /// Path position -> its path index (positions on a path are distinct: a repetition is a
    /// leaf and never pushed).
    on_path: FastMap<G::Pos, usize>,
    /// Path index of the root of the current search.
    root_depth: usize,
    /// Path-dependent solved results: (position, OR flag) -> (pn, dn, dist, dependencies).
    dep_cache: FastMap<(G::Pos, bool), DepEntry<G::Pos>>,
    /// Most entries of `dep_cache` (it is emptied when full).
    dep_cap: usize,
    stats: SearchStats,
    node_limit: u64,
    deadline: Option<Instant>,
    cancel: Option<Arc<AtomicBool>>,
    aborted: bool,
    /// Why the last search stopped unsettled (the first limit found reached).
    stop: Option<Stop>,
    /// Plies below the root beyond which nothing is expanded (reaching one ends the search as
    /// unknown).
    max_depth: usize,
    succ_buf: Vec<Vec<G::Pos>>,
    /// Weak proof-number sums instead of sums (see [`Dfpn::set_weak`]).
    weak: bool,
    /// Most nodes of the weak phase of [`Dfpn::solve_two_phase`] (see
    /// [`Dfpn::set_weak_phase_nodes`]).
    weak_phase_nodes: Option<u64>,
    /// Threads of a search (see [`Dfpn::set_threads`]).
    threads: usize,
    /// Thread and exit counts per node, kept between searches (thread counts all zero
    /// outside one).
    busy: Option<Arc<[AtomicU32]>>,
    /// The parallel search this searcher is a thread of.
    team: Option<Arc<Team>>,
    /// This thread's lane of [`Team::busy`] (0 outside a parallel search).
    lane: usize,
    /// Nodes of the team's node budget this thread has taken and not used yet.
    claimed: u64,
    /// Threads lent by another search (see [`Dfpn::set_reserve`]).
    reserve: Option<Arc<Reserve>>,
    /// With sums: stop the search when the root's proof or disproof number reaches
    /// [`SATURATED`] (see [`Dfpn::solve_two_phase`]).
    stop_saturated: bool,
    /// The last search stopped because its root's numbers reached [`SATURATED`].
    saturated: bool,
}

/// Root proof or disproof number at which a search with sums (not weak sums) is given up as
/// saturated when [`Dfpn::solve_two_phase`] runs it: on the long king manoeuvres full of
/// transpositions and cycles where sums blow up (Lasker's First Position with Black to move:
/// 9e7 after 20,000 nodes, the saturation mark `INF - 1` after 100,000), weak sums take over.
/// Numbers of hard 8-piece positions stay below 1e6 in millions of nodes.
pub const SATURATED: u32 = 1 << 26;

/// The weak phase of [`Dfpn::solve_two_phase`] is at most this share (1 / `WEAK_SHARE`) of
/// the node budget and of the time.
pub const WEAK_SHARE: u32 = 8;

/// Most plies below the root the search expands (protects the stack of the recursion).
pub const MAX_DEPTH: usize = 4000;

/// Stack size of a helper thread of a parallel search (the search recurses once per ply of
/// the current path; reserved, not committed).
const HELPER_STACK: usize = 256 << 20;

impl<'g, G: Game> Dfpn<'g, G> {
    /// A searcher for `goal` with the given table.
    pub fn with_table(game: &'g G, goal: Goal, tt: SharedTable<G::Pos>) -> Self {
        // Worst case (16 dependencies) about 330 bytes per cached entry, about 41 bytes per table
        // slot (a slot is 40 bytes): the cache stays about as large as the table at most.
        let dep_cap = (tt.capacity() / 8).max(16);
        Dfpn {
            game,
            goal,
            root_side: Color::Black,
            tt: Arc::new(tt),
            path: Vec::new(),
            on_path: FastMap::default(),
            root_depth: 0,
            dep_cache: FastMap::default(),
            dep_cap,
            stats: SearchStats::default(),
            node_limit: u64::MAX,
            deadline: None,
            cancel: None,
            aborted: false,
            stop: None,
            max_depth: MAX_DEPTH,
            succ_buf: Vec::new(),
            weak: false,
            weak_phase_nodes: None,
            threads: 1,
            busy: None,
            team: None,
            lane: 0,
            claimed: 0,
            reserve: None,
            stop_saturated: false,
            saturated: false,
        }
    }

    /// Search with `threads` threads (at least 1; see the type's docs). Node counts
    /// ([`Dfpn::stats`]) and node budgets are of all threads together.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// Threads lent by another search (`None`: none): they join this searcher's searches as
    /// helper threads (as with [`Dfpn::set_threads`]) once [`Reserve::release`] is called,
    /// including a search already running. Node budgets count them with the searcher's own.
    pub fn set_reserve(&mut self, reserve: Option<Arc<Reserve>>) {
        self.reserve = reserve;
    }

    /// The reserve of [`Dfpn::set_reserve`].
    pub fn reserve(&self) -> Option<&Arc<Reserve>> {
        self.reserve.as_ref()
    }

    /// Use weak proof-number sums (max + open children - 1) instead of sums for the numbers of
    /// nodes decided by all children. Sums guide better on most positions but can blow up to
    /// saturation on long king manoeuvres with many transpositions and cycles, where weak sums
    /// still converge; the prover runs sums first and weak sums on what stays unknown.
    /// Unsolved numbers stored in the other mode are ignored (they do not compare).
    pub fn set_weak(&mut self, weak: bool) {
        self.weak = weak;
    }

    /// Most node expansions of the weak phase of [`Dfpn::solve_two_phase`] (`None`: only its
    /// half of the budget). A node count, unlike a share of the wall time, is the same at every
    /// thread count and load, so the switch to sums comes at the same point of the search
    /// (with one thread or with several on the goal).
    pub fn set_weak_phase_nodes(&mut self, nodes: Option<u64>) {
        self.weak_phase_nodes = nodes;
    }

    /// The setting of [`Dfpn::set_weak_phase_nodes`].
    pub fn weak_phase_nodes(&self) -> Option<u64> {
        self.weak_phase_nodes
    }

    /// Give back the transposition table (to keep it for another searcher).
    pub fn into_table(self) -> SharedTable<G::Pos> {
        // Helper threads hold the table only during a search.
        Arc::try_unwrap(self.tt).unwrap_or_else(|_| unreachable!("no search is running"))
    }

    /// The goal this searcher answers.
    pub fn goal(&self) -> Goal {
        self.goal
    }

    /// The game.
    pub fn game(&self) -> &'g G {
        self.game
    }

    /// Counters.
    pub fn stats(&self) -> SearchStats {
        self.stats
    }

    /// Why the last call of [`Dfpn::solve_for`] (or [`Dfpn::solve_two_phase`]) stopped before
    /// settling its root: the limit reached, `None` when it settled the root.
    pub fn stopped(&self) -> Option<Stop> {
        self.stop
    }

    /// The transposition table.
    pub fn table(&self) -> &SharedTable<G::Pos> {
        &self.tt
    }

    /// What the table knows of `p` for a prover of colour `prover`.
    pub fn known(&self, p: &G::Pos, prover: Color) -> Known {
        let or = self.game.mover(p) == prover;
        match self.tt.get(self.game.hash(p), p, or) {
            Some(e) => Known {
                result: if e.pn == 0 {
                    Some(true)
                } else if e.dn == 0 {
                    Some(false)
                } else {
                    None
                },
                work: e.work,
                dist: e.dist,
            },
            None => Known::default(),
        }
    }

    /// Answer the goal for the side to move at `root` (the prover), with no history.
    ///
    /// # Errors
    /// Whatever [`Game::evaluate`] fails with.
    #[cfg(test)]
    pub fn solve(&mut self, root: G::Pos, budget: &Budget) -> Result<Outcome, G::Error> {
        let prover = self.game.mover(&root);
        self.solve_for(root, prover, &[], budget).map(|s| s.outcome)
    }

    /// Answer the goal for `prover` at `root`, reached after the positions `history` (oldest
    /// first; the last one is root's parent). Repetitions of history positions count as draws
    /// (only the history since its last irreversible move matters).
    ///
    /// # Errors
    /// Whatever [`Game::evaluate`] fails with.
    pub fn solve_for(
        &mut self,
        root: G::Pos,
        prover: Color,
        history: &[G::Pos],
        budget: &Budget,
    ) -> Result<Solved, G::Error> {
        self.root_side = prover;
        self.node_limit = budget
            .nodes
            .map_or(u64::MAX, |n| self.stats.nodes.saturating_add(n));
        self.deadline = budget.deadline;
        self.cancel = budget.cancel.clone();
        self.aborted = false;
        self.stop = None;
        self.saturated = false;
        // Keep the history from its last irreversible move on (earlier positions cannot recur).
        let mut from = 0;
        for i in 1..history.len() {
            if self.game.irreversible(&history[i - 1], &history[i]) {
                from = i;
            }
        }
        if let Some(last) = history.last() {
            if self.game.irreversible(last, &root) {
                from = history.len();
            }
        }
        self.path.clear();
        self.on_path.clear();
        for h in &history[from..] {
            self.on_path.insert(*h, self.path.len());
            self.path.push((*h, 0));
        }
        let depth = self.path.len();
        self.root_depth = depth;
        let out = |outcome, path_dependent, dist| Solved {
            outcome,
            path_dependent,
            dist,
        };
        // A root repeating its history is a draw on this path.
        if let Some(&d) = self.on_path.get(&root) {
            let (pn, dn) = self.draw_numbers();
            self.on_path.clear();
            return Ok(out(Outcome::of(pn, dn), d < depth, 0));
        }
        let or = self.game.mover(&root) == prover;
        let (pn0, dn0) = match self.game.evaluate(&root, or, self.goal)? {
            Eval::Exact(v) => {
                let (pn, dn) = self.exact_numbers(&root, v);
                self.on_path.clear();
                return Ok(out(Outcome::of(pn, dn), false, 0));
            }
            Eval::Open { pn, dn } => (pn.clamp(1, INF - 1), dn.clamp(1, INF - 1)),
        };
        let known = self.tt.get(self.game.hash(&root), &root, or);
        if let Some(e) = known.filter(|e| e.solved()) {
            // Settled before (a fact from the table): no node needed.
            self.on_path.clear();
            return Ok(out(Outcome::of(e.pn, e.dn), false, e.dist));
        }
        // A budget spent before the first expansion (no nodes left, the deadline past): the
        // root's current numbers, nothing expanded.
        self.check_limits();
        if self.aborted {
            self.on_path.clear();
            let (pn, dn) = known.map_or((pn0, dn0), |e| (e.pn, e.dn));
            return Ok(out(Outcome::Unknown { pn, dn }, false, 0));
        }
        self.on_path.insert(root, depth);
        self.path.push((root, 0));
        let r = if self.threads > 1 || self.reserve.is_some() {
            self.root_parallel(depth, budget)
        } else {
            self.root_loop(depth)
        };
        self.path.clear();
        self.on_path.clear();
        let (pn, dn, deps, dist) = r?;
        if pn == 0 || dn == 0 {
            // Settled, whatever limit was reached on the way.
            self.stop = None;
        } else {
            self.saturated = self.gives_up(pn, dn);
        }
        Ok(out(Outcome::of(pn, dn), !deps.is_empty(), dist))
    }

    /// Search the root (the last path entry, at path index `depth`) until it is settled or a
    /// limit is reached.
    #[allow(clippy::type_complexity)]
    fn root_loop(&mut self, depth: usize) -> Result<(u32, u32, Vec<G::Pos>, u32), G::Error> {
        loop {
            let r = self.mid(depth, INF, INF);
            match r {
                Ok((pn, dn, _, _))
                    if pn != 0 && dn != 0 && !self.aborted && !self.gives_up(pn, dn) =>
                {
                    continue
                }
                r => break r,
            }
        }
    }

    /// [`Dfpn::root_loop`] run by [`Dfpn::set_threads`] threads sharing the table: this one
    /// and helpers with copies of its path (the history and the root), each with an empty
    /// cache of path-dependent results. A settled result of any thread is the result (they
    /// cannot differ: see the type's docs); else this thread's numbers. Node counts of the
    /// helpers are added to this searcher's.
    #[allow(clippy::type_complexity)]
    fn root_parallel(
        &mut self,
        depth: usize,
        budget: &Budget,
    ) -> Result<(u32, u32, Vec<G::Pos>, u32), G::Error> {
        let reserve = self.reserve.clone();
        let lent = reserve.as_ref().map_or(0, |r| r.threads);
        let threads = self.threads + lent;
        let lanes = if threads <= MAX_LANES { threads } else { 1 };
        if self
            .busy
            .as_ref()
            .is_none_or(|b| b.len() != lanes * BUSY_SLOTS)
        {
            self.busy = Some((0..lanes * BUSY_SLOTS).map(|_| AtomicU32::new(0)).collect());
        }
        let busy = self.busy.clone().expect("just set");
        let team = Arc::new(Team {
            busy,
            lanes,
            nodes: Padded(AtomicU64::new(0)),
            node_limit: budget.nodes.unwrap_or(u64::MAX),
            done: AtomicBool::new(false),
            active: AtomicUsize::new(self.threads),
            finished: AtomicBool::new(false),
        });
        let node_limit = self.node_limit;
        self.node_limit = u64::MAX;
        self.team = Some(team.clone());
        self.lane = 0;
        self.claimed = 0;
        let helpers: Vec<(Dfpn<'g, G>, bool)> = (1..threads)
            .map(|i| {
                (
                    Dfpn {
                        game: self.game,
                        goal: self.goal,
                        root_side: self.root_side,
                        tt: self.tt.clone(),
                        path: self.path.clone(),
                        on_path: self.on_path.clone(),
                        root_depth: self.root_depth,
                        dep_cache: FastMap::default(),
                        dep_cap: self.dep_cap,
                        stats: SearchStats::default(),
                        node_limit: u64::MAX,
                        deadline: self.deadline,
                        cancel: self.cancel.clone(),
                        aborted: false,
                        stop: None,
                        max_depth: self.max_depth,
                        succ_buf: Vec::new(),
                        weak: self.weak,
                        weak_phase_nodes: self.weak_phase_nodes,
                        threads: 1,
                        busy: None,
                        team: Some(team.clone()),
                        lane: if lanes == 1 { 0 } else { i },
                        claimed: 0,
                        reserve: None,
                        stop_saturated: self.stop_saturated,
                        saturated: false,
                    },
                    i >= self.threads,
                )
            })
            .collect();
        let settled = |r: &Result<(u32, u32, Vec<G::Pos>, u32), G::Error>| match r {
            Ok((pn, dn, _, _)) => *pn == 0 || *dn == 0,
            Err(_) => true,
        };
        let (mine, theirs) = std::thread::scope(|s| {
            let handles: Vec<_> = helpers
                .into_iter()
                .map(|(mut h, lent)| {
                    let reserve = reserve.clone();
                    std::thread::Builder::new()
                        .stack_size(HELPER_STACK)
                        .spawn_scoped(s, move || {
                            let t = h.team.clone().expect("team");
                            if lent {
                                // Wait for the release, unless the search ends first.
                                let r = reserve.as_ref().expect("reserve");
                                let mut released = r.lock();
                                while !*released && !t.finished.load(Ordering::Relaxed) {
                                    released =
                                        r.cv.wait(released).unwrap_or_else(|e| e.into_inner());
                                }
                                if !*released || t.finished.load(Ordering::Relaxed) {
                                    return (Ok((1, 1, Vec::new(), 0)), h.stats, None);
                                }
                                t.active.fetch_add(1, Ordering::Relaxed);
                            }
                            let r = h.root_loop(depth);
                            if settled(&r) {
                                h.team
                                    .as_ref()
                                    .expect("team")
                                    .done
                                    .store(true, Ordering::Relaxed);
                            }
                            (r, h.stats, h.stop)
                        })
                        .expect("spawn a search thread")
                })
                .collect();
            // Ends the wait of lent threads that have not joined, also if this thread panics
            // (the scope waits for every thread before it unwinds).
            let finish = Finish {
                team: &team,
                reserve: reserve.as_deref(),
            };
            let r = self.root_loop(depth);
            if settled(&r) || matches!(r, Ok((pn, dn, _, _)) if self.gives_up(pn, dn)) {
                // Settled, or given up as saturated: the helpers stop.
                team.done.store(true, Ordering::Relaxed);
            }
            drop(finish);
            let theirs: Vec<_> = handles
                .into_iter()
                .map(|h| h.join().expect("search thread"))
                .collect();
            (r, theirs)
        });
        self.team = None;
        self.claimed = 0;
        self.node_limit = node_limit;
        let mut result = mine;
        for (r, stats, stop) in theirs {
            self.stats.nodes += stats.nodes;
            self.stats.max_depth = self.stats.max_depth.max(stats.max_depth);
            self.stats.path_dependent += stats.path_dependent;
            self.stats.dep_hits += stats.dep_hits;
            if settled(&result) {
                continue;
            }
            if settled(&r) {
                result = r;
            } else if self.stop.is_none() {
                // A limit only a helper reached (the depth limit): the search is unsettled.
                self.stop = stop;
            }
        }
        if !settled(&result) && self.stop.is_none() {
            // Stopped by a limit the team's count reached first in another thread.
            self.check_limits();
        }
        result
    }

    /// [`Dfpn::solve_for`] in phases: weak sums for at most an eighth ([`WEAK_SHARE`]) of the
    /// budget (nodes and time) and at most [`Dfpn::set_weak_phase_nodes`] nodes, then, if still
    /// unknown, sums for the rest (see [`Dfpn::set_weak`]); sums whose root numbers saturate
    /// ([`SATURATED`]) give the rest back to weak sums. The mode is left as sums.
    ///
    /// # Errors
    /// Whatever [`Game::evaluate`] fails with.
    pub fn solve_two_phase(
        &mut self,
        root: G::Pos,
        prover: Color,
        history: &[G::Pos],
        budget: &Budget,
    ) -> Result<Solved, G::Error> {
        let now = Instant::now();
        let share = budget.nodes.map(|n| n / WEAK_SHARE as u64);
        let first = Budget {
            nodes: match (share, self.weak_phase_nodes) {
                (Some(h), Some(w)) => Some(h.min(w)),
                (h, w) => h.or(w),
            },
            deadline: budget
                .deadline
                .map(|t| now + t.saturating_duration_since(now) / WEAK_SHARE),
            cancel: budget.cancel.clone(),
        };
        let before = self.stats.nodes;
        let rest = |d: &Self| Budget {
            nodes: budget
                .nodes
                .map(|n| n.saturating_sub(d.stats.nodes - before)),
            ..budget.clone()
        };
        let unknown = |r: &Result<Solved, G::Error>| {
            matches!(
                r,
                Ok(Solved {
                    outcome: Outcome::Unknown { .. },
                    ..
                })
            )
        };
        self.set_weak(true);
        let r = self.solve_for(root, prover, history, &first);
        self.set_weak(false);
        if !unknown(&r) {
            return r;
        }
        self.stop_saturated = true;
        let r = self.solve_for(root, prover, history, &rest(self));
        self.stop_saturated = false;
        if !unknown(&r) || !self.saturated {
            return r;
        }
        // Sums saturated: weak sums for the rest.
        self.set_weak(true);
        let r = self.solve_for(root, prover, history, &rest(self));
        self.set_weak(false);
        r
    }

    /// Whether the last search stopped because its root's numbers saturated (see
    /// [`SATURATED`]; only searches of [`Dfpn::solve_two_phase`]'s sums phase, or with
    /// [`Dfpn::set_stop_saturated`], stop so).
    pub fn saturated(&self) -> bool {
        self.saturated
    }

    /// Stop searches with sums when the root's numbers saturate ([`SATURATED`]; see
    /// [`Dfpn::saturated`]).
    pub fn set_stop_saturated(&mut self, on: bool) {
        self.stop_saturated = on;
    }

    /// Whether a search with sums gives up with the root's numbers `pn`, `dn` (see
    /// [`SATURATED`]).
    fn gives_up(&self, pn: u32, dn: u32) -> bool {
        self.stop_saturated && !self.weak && pn != 0 && dn != 0 && pn.max(dn) >= SATURATED
    }

    /// Proof and disproof numbers of a draw for the prover.
    fn draw_numbers(&self) -> (u32, u32) {
        if self.goal.satisfied_by(Wld::Draw) {
            (0, INF)
        } else {
            (INF, 0)
        }
    }

    /// Proof and disproof numbers of a position whose exact value for its side to move is `v`.
    fn exact_numbers(&self, p: &G::Pos, v: Wld) -> (u32, u32) {
        let for_prover = if self.game.mover(p) == self.root_side {
            v
        } else {
            v.negate()
        };
        if self.goal.satisfied_by(for_prover) {
            (0, INF)
        } else {
            (INF, 0)
        }
    }

    /// Path index of an earlier occurrence of `p` on the path, if `p` is reached from the top
    /// of the path by a reversible move (positions before the last irreversible move cannot
    /// recur).
    fn repetition_of(&self, p: &G::Pos) -> Option<usize> {
        let floor = self.path.last().map_or(0, |e| e.1);
        self.on_path.get(p).copied().filter(|&i| i >= floor)
    }

    fn check_limits(&mut self) {
        let mut team_nodes = false;
        if let Some(t) = &self.team {
            // The team's budget is spent when every node is taken and this thread has used
            // those it took.
            team_nodes = self.claimed == 0 && t.nodes.0.load(Ordering::Relaxed) >= t.node_limit;
            if t.done.load(Ordering::Relaxed) && !team_nodes {
                // Another thread settled the root (or failed): no limit of this search.
                self.aborted = true;
                return;
            }
        }
        let stop = if self.stats.nodes >= self.node_limit || team_nodes {
            Some(Stop::Nodes)
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Stop::Time)
        } else if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            Some(Stop::Cancelled)
        } else {
            None
        };
        if let Some(s) = stop {
            self.aborted = true;
            self.stop.get_or_insert(s);
        }
    }

    /// Expand the node at path index `depth` (the last path entry) until it is solved, one of
    /// its numbers reaches its threshold, or the budget runs out. Returns (pn, dn, dependencies,
    /// dist).
    #[allow(clippy::type_complexity)]
    fn mid(
        &mut self,
        depth: usize,
        th_pn: u32,
        th_dn: u32,
    ) -> Result<(u32, u32, Vec<G::Pos>, u32), G::Error> {
        let pos = self.path[depth].0;
        let hash = self.game.hash(&pos);
        let or = self.game.mover(&pos) == self.root_side;
        if let Some(e) = self.tt.get(hash, &pos, or) {
            if e.solved() {
                return Ok((e.pn, e.dn, Vec::new(), e.dist));
            }
        }
        // (The team is borrowed, not cloned: an `Arc` clone per node is a locked write of the
        // team's cache line, which every thread reads.)
        let Some(team) = &self.team else {
            return self.expand(depth, pos, hash, or, th_pn, th_dn);
        };
        team.mark(self.lane, hash, true);
        let r = self.expand(depth, pos, hash, or, th_pn, th_dn);
        if let Some(team) = &self.team {
            team.mark(self.lane, hash, false);
        }
        r
    }

    /// The numbers a thread chooses a child by: its own, made larger when other threads are
    /// in the child (a solved child's stay): by the number times the threads with `strong`,
    /// by one per thread without.
    fn virtual_number(&self, c: &Child<G::Pos>, x: u32, strong: bool) -> u32 {
        if self.team.is_none() || x == 0 || x >= INF - 1 {
            return x;
        }
        let b = c.busy as u64;
        let v = x as u64 + if strong { b * (x as u64).max(2) } else { b };
        v.min(INF as u64 - 2) as u32
    }

    /// [`Dfpn::mid`] of a node not solved in the table.
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn expand(
        &mut self,
        depth: usize,
        pos: G::Pos,
        hash: u64,
        or: bool,
        th_pn: u32,
        th_dn: u32,
    ) -> Result<(u32, u32, Vec<G::Pos>, u32), G::Error> {
        let mut last = self.stats.nodes + 1 >= self.node_limit;
        if let Some(t) = self.team.as_ref().filter(|t| t.node_limit != u64::MAX) {
            // Each expansion uses one of the team's nodes this thread took, a chunk at a time:
            // the limit holds exactly. (Without a node limit the count is not kept: it would
            // be read by no one. One node at a time, its cache line went back and forth
            // between the threads at every expansion.)
            if self.claimed == 0 {
                let n = t.nodes.0.fetch_add(NODE_CHUNK, Ordering::Relaxed);
                if n >= t.node_limit {
                    self.aborted = true;
                    self.stop.get_or_insert(Stop::Nodes);
                    return Ok((1, 1, Vec::new(), 0));
                }
                self.claimed = NODE_CHUNK.min(t.node_limit - n);
            }
            self.claimed -= 1;
            last |= self.claimed == 0 && t.nodes.0.load(Ordering::Relaxed) >= t.node_limit;
        }
        self.stats.nodes += 1;
        self.stats.max_depth = self.stats.max_depth.max(depth);
        if self.stats.nodes & 63 == 0 || last {
            self.check_limits();
        }
        if depth - self.root_depth >= self.max_depth {
            // Too deep to expand: give up this search (reported as unknown).
            self.aborted = true;
            self.stop.get_or_insert(Stop::Depth);
            return Ok((1, 1, Vec::new(), 0));
        }
        let start_nodes = self.stats.nodes;

        // Generate and evaluate the children (one-ply look-ahead into the leaves).
        let mut succ = self.succ_buf.pop().unwrap_or_default();
        self.game.successors(&pos, &mut succ);
        // Start the table look-ups of all the children before the first (their buckets are
        // fetched from memory together, not one after the other).
        for c in &succ {
            self.tt.prefetch(c, self.game.mover(c) == self.root_side);
        }
        let mut ch: Vec<Child<G::Pos>> = Vec::with_capacity(succ.len());
        for &c in &succ {
            let irr = self.game.irreversible(&pos, &c);
            if !irr && self.repetition_of(&c).is_some() {
                let (pn, dn) = self.draw_numbers();
                ch.push(Child {
                    pos: c,
                    pn,
                    dn,
                    deps: vec![c],
                    dist: 0,
                    irr,
                    hash: 0,
                    or: false,
                    busy: 0,
                    exits: 0,
                    reread: false,
                });
                continue;
            }
            let c_or = self.game.mover(&c) == self.root_side;
            let c_hash = self.game.hash(&c);
            // The threads in the child and the team's exits from it, looked at before its
            // entry is read (the first look of the loop below).
            let (busy, exits) = self.team.as_ref().map_or((0, 0), |t| t.busy(c_hash));
            let weak = self.weak;
            let tt_entry = self
                .tt
                .get(c_hash, &c, c_or)
                .filter(|e| e.solved() || e.weak == weak);
            if !tt_entry.is_some_and(|e| e.solved()) && !irr {
                // A path-dependent result whose dependencies are all on the path again.
                if let Some(e) = self.dep_cache.get(&(c, c_or)) {
                    if e.deps.iter().all(|d| self.repetition_of(d).is_some()) {
                        ch.push(Child {
                            pos: c,
                            pn: e.pn,
                            dn: e.dn,
                            deps: e.deps.clone(),
                            dist: e.dist,
                            irr,
                            hash: c_hash,
                            or: c_or,
                            busy: 0,
                            exits: 0,
                            reread: false,
                        });
                        self.stats.dep_hits += 1;
                        continue;
                    }
                }
            }
            let (pn, dn, dist) = match tt_entry {
                Some(e) => (e.pn, e.dn, e.dist),
                None => match self.game.evaluate(&c, c_or, self.goal)? {
                    Eval::Exact(v) => {
                        let (pn, dn) = self.exact_numbers(&c, v);
                        (pn, dn, 0)
                    }
                    Eval::Open { pn, dn } => (pn.clamp(1, INF - 1), dn.clamp(1, INF - 1), 0),
                },
            };
            ch.push(Child {
                pos: c,
                pn,
                dn,
                deps: Vec::new(),
                dist,
                irr,
                hash: c_hash,
                or: c_or,
                busy,
                exits,
                reread: false,
            });
        }
        succ.clear();
        self.succ_buf.push(succ);

        let (mut pn, mut dn);
        // The loop's first round takes the threads and exits looked at above.
        let mut first = true;
        let mut nums: Vec<(u32, u32)> = Vec::with_capacity(ch.len());
        // The child this thread searched last: its numbers are the ones its search returned
        // (virtual, see below), not the table's (real), so that a child left at once because
        // other threads fill it is not chosen again at once.
        let mut fresh = usize::MAX;
        let shared = |t: &Option<Arc<Team>>| {
            t.as_ref()
                .is_some_and(|t| t.active.load(Ordering::Relaxed) > 1)
        };
        // Some open child had another thread in it at the last look (else the virtual numbers
        // are the real ones).
        let mut any_busy = ch.iter().any(|c| c.busy > 0 && c.pn != 0 && c.dn != 0);
        loop {
            if shared(&self.team) && !first {
                // Other threads' progress. The threads in each child and the exits from it,
                // looked at once per round (the choice below goes by the threads). A node's
                // entry in the table is written only when a thread leaves it, so the children
                // read again from the table are those the team's threads left since this
                // thread read them (the exits were counted before the read; the child this
                // thread searched last keeps the numbers its search returned). A solved entry
                // there is a path-independent fact; solved children of this path, which may
                // depend on it, are kept. (Reading every child again at every round doubled
                // the table reads per node. Issue 37: an earlier rule read again only the
                // children another thread was in at this or the last look, and missed what a
                // thread did in a child it entered and left between two looks, e.g. a sibling
                // proven through a transposition: searches went on with stale numbers.)
                let team = self.team.as_ref().expect("shared");
                any_busy = false;
                for (i, c) in ch.iter_mut().enumerate() {
                    if c.pn == 0 || c.dn == 0 {
                        c.reread = false;
                        continue;
                    }
                    let (now, exits) = team.busy(c.hash);
                    c.reread = i != fresh && exits != c.exits;
                    c.exits = exits;
                    c.busy = now;
                    any_busy |= now > 0;
                    if c.reread {
                        self.tt.prefetch(&c.pos, c.or);
                    }
                }
                let weak = self.weak;
                for c in ch.iter_mut().filter(|c| c.reread) {
                    if let Some(e) = self.tt.get(c.hash, &c.pos, c.or) {
                        if e.solved() || e.weak == weak {
                            (c.pn, c.dn, c.dist) = (e.pn, e.dn, e.dist);
                            c.deps.clear();
                        }
                    }
                }
            }
            first = false;
            // The children's numbers this thread goes by: in a parallel search the number a
            // child is chosen by (pn at an OR node, dn at an AND node) is virtual (larger while
            // other threads are in the child), and so are the node's numbers computed from
            // them: a node whose children are all busy looks harder to its parent, which then
            // sends the thread elsewhere (with real numbers it would re-enter the node and
            // leave it at once, again and again). Solved numbers (0, INF) are never changed,
            // so the node is solved exactly when it is with real numbers.
            // Where the node looks likely to be decided by all its children (an OR node
            // heading for a disproof, an AND node for a proof), the work of a thread sent to
            // another child than its partners' is needed anyway: the busy children's numbers
            // grow fully. Elsewhere one child will do and the others' work is speculative:
            // they grow by one per thread only (ties broken, the threads otherwise following
            // each other down to where they should part).
            let strong = any_busy && shared(&self.team) && {
                nums.clear();
                nums.extend(ch.iter().map(|c| (c.pn, c.dn)));
                let (rpn, rdn) = numbers(&nums, or, self.weak);
                if or {
                    rdn <= rpn
                } else {
                    rpn <= rdn
                }
            };
            nums.clear();
            nums.extend(ch.iter().map(|c| {
                if or {
                    (self.virtual_number(c, c.pn, strong), c.dn)
                } else {
                    (c.pn, self.virtual_number(c, c.dn, strong))
                }
            }));
            (pn, dn) = numbers(&nums, or, self.weak);
            if pn == 0
                || dn == 0
                || pn >= th_pn
                || dn >= th_dn
                || self.aborted
                || (depth == self.root_depth && self.gives_up(pn, dn))
            {
                break;
            }
            // Most promising child and the second-best number (1+epsilon thresholds).
            let key = |i: usize| if or { nums[i].0 } else { nums[i].1 };
            let mut best = 0;
            let mut second = INF;
            for i in 1..ch.len() {
                if key(i) < key(best) {
                    second = key(best);
                    best = i;
                } else {
                    second = second.min(key(i));
                }
            }
            let eps = |x: u32| -> u64 {
                if x >= INF - 1 {
                    INF as u64
                } else {
                    x as u64 + (x as u64 / 4).max(1)
                }
            };
            let b = &ch[best];
            // The node's other number reaches its threshold when the child's has grown by the
            // node's margin (sums), or when it exceeds the largest child's by it (weak sums).
            let base = |f: &dyn Fn(&(u32, u32)) -> u32, node: u32| -> u64 {
                if self.weak {
                    nums.iter()
                        .map(|c| f(c) as u64)
                        .max()
                        .unwrap_or(0)
                        .min(node as u64)
                } else {
                    f(&nums[best]) as u64
                }
            };
            let (c_th_pn, c_th_dn) = if or {
                (
                    eps(second).min(th_pn as u64),
                    th_dn as u64 - dn as u64 + base(&|c| c.1, dn),
                )
            } else {
                (
                    th_pn as u64 - pn as u64 + base(&|c| c.0, pn),
                    eps(second).min(th_dn as u64),
                )
            };
            let cap = |x: u64| x.min(INF as u64) as u32;
            let floor = if b.irr { depth + 1 } else { self.path[depth].1 };
            let c = b.pos;
            self.path.push((c, floor));
            let shadowed = self.on_path.insert(c, depth + 1);
            let r = self.mid(depth + 1, cap(c_th_pn), cap(c_th_dn));
            match shadowed {
                // Only for a game whose `irreversible` lets a position recur.
                Some(i) => self.on_path.insert(c, i),
                None => self.on_path.remove(&c),
            };
            self.path.pop();
            let (cpn, cdn, cdeps, cdist) = r?;
            fresh = best;
            let b = &mut ch[best];
            b.pn = cpn;
            b.dn = cdn;
            b.deps = cdeps;
            b.dist = cdist;
        }

        // The dependencies of a solved result and its proof height.
        let mut deps: Vec<G::Pos> = Vec::new();
        let mut dist = 0;
        if pn == 0 || dn == 0 {
            // A node decided by one child (an OR node proven, an AND node disproven): the
            // best-founded such child (fewest dependencies), then the shortest. Otherwise all
            // children decide.
            let one_child = (or && pn == 0) || (!or && dn == 0);
            if one_child {
                if let Some(c) = ch
                    .iter()
                    .filter(|c| if or { c.pn == 0 } else { c.dn == 0 })
                    .min_by_key(|c| (c.deps.len(), c.dist))
                {
                    deps = c.deps.clone();
                    dist = c.dist;
                }
            } else {
                for c in &ch {
                    for d in &c.deps {
                        if !deps.contains(d) {
                            deps.push(*d);
                        }
                    }
                    dist = dist.max(c.dist);
                }
            }
            dist = dist.saturating_add(1);
            // A return to the node itself holds from any path.
            deps.retain(|d| *d != pos);
        }
        let work = (self.stats.nodes - start_nodes).min(u32::MAX as u64) as u32;
        // The table gets the node's real numbers (from its children's, not made larger for
        // the other threads in them), so that what other threads read of it does not depend
        // on where this thread's partners were; the parent gets the virtual ones.
        let (tpn, tdn) = if pn != 0 && dn != 0 && any_busy && shared(&self.team) {
            nums.clear();
            nums.extend(ch.iter().map(|c| (c.pn, c.dn)));
            numbers(&nums, or, self.weak)
        } else {
            (pn, dn)
        };
        if deps.is_empty() {
            self.tt.put(
                hash,
                Entry {
                    pos,
                    or_node: or,
                    pn: tpn,
                    dn: tdn,
                    work,
                    dist,
                    weak: self.weak,
                },
            );
        } else {
            self.stats.path_dependent += 1;
            if deps.len() <= MAX_DEPS {
                if self.dep_cache.len() >= self.dep_cap {
                    self.dep_cache.clear();
                }
                self.dep_cache.insert(
                    (pos, or),
                    DepEntry {
                        pn,
                        dn,
                        dist,
                        deps: deps.clone(),
                    },
                );
            }
        }
        Ok((pn, dn, deps, dist))
    }
}

/// A cached path-dependent result.
#[derive(Clone, Debug)]
struct DepEntry<P> {
    pn: u32,
    dn: u32,
    dist: u32,
    deps: Vec<P>,
}

/// The node's (pn, dn) from its children's: OR = (min pn, sum dn), AND = (sum pn, min dn). With
/// `weak`, the sums are weak proof-number sums (Ueda et al. 2008): the largest number plus the
/// count of the other children still open, which does not blow up on the transpositions and
/// cycles of king endings. Values saturate below [`INF`], which only a solved node reaches. A
/// node without children is lost for its side to move (the game gives such nodes as exact
/// leaves; this covers a root).
fn numbers(ch: &[(u32, u32)], or: bool, weak: bool) -> (u32, u32) {
    let sum = |f: &dyn Fn(&(u32, u32)) -> u32| -> u32 {
        let (mut sum, mut max, mut live) = (0u64, 0u64, 0u64);
        for c in ch {
            let v = f(c) as u64;
            if v > 0 {
                sum += v;
                max = max.max(v);
                live += 1;
            }
        }
        let v = if !weak || live == 0 {
            sum
        } else {
            max + live - 1
        };
        v.min(INF as u64 - 1) as u32
    };
    if or {
        let pn = ch.iter().map(|c| c.0).min().unwrap_or(INF);
        let dn = if pn == 0 { INF } else { sum(&|c| c.1) };
        (pn, dn)
    } else {
        let dn = ch.iter().map(|c| c.1).min().unwrap_or(INF);
        let pn = if dn == 0 { INF } else { sum(&|c| c.0) };
        (pn, dn)
    }
}
