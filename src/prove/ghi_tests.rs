//! The prover's search on small abstract games with cycles, against retrograde ground truth
//! computed here (independently of the search): the graph-history interaction problem.
//!
//! Each game is a directed graph whose nodes have a side to move (edges join opposite sides);
//! a node without successors is lost for its side to move, "table" nodes carry a fixed value,
//! endless play is a draw. Every node is proven as a root for both goals, with a tiny
//! transposition table (forced replacement) and with a roomy one; every settled answer must
//! equal the ground truth, and every extracted strategy must pass a strategy check written here.
use super::cert::extract;
use super::search::{Budget, Dfpn, Eval, Game, Goal, Outcome, Reserve, Stop};
use super::tt::SharedTable as Table;
use crate::board::{Color, Wld};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

struct Graph {
    side: Vec<Color>,
    succ: Vec<Vec<usize>>,
    table: Vec<Option<Wld>>,
    /// Initial (pn, dn) of open nodes, from the prover's view (default (1, 1)).
    init: Vec<(u32, u32)>,
}

impl Game for Graph {
    type Pos = usize;
    type Error = std::convert::Infallible;
    fn mover(&self, p: &usize) -> Color {
        self.side[*p]
    }
    fn successors(&self, p: &usize, out: &mut Vec<usize>) {
        out.clear();
        out.extend_from_slice(&self.succ[*p]);
    }
    fn evaluate(&self, p: &usize, _or: bool, _goal: Goal) -> Result<Eval, Self::Error> {
        Ok(match self.table[*p] {
            Some(v) => Eval::Exact(v),
            None if self.succ[*p].is_empty() => Eval::Exact(Wld::Loss),
            None => {
                let (pn, dn) = self.init[*p];
                Eval::Open { pn, dn }
            }
        })
    }
    fn irreversible(&self, _: &usize, _: &usize) -> bool {
        false
    }
    fn hash(&self, p: &usize) -> u64 {
        (*p as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

/// Retrograde ground truth: value for the side to move of every node.
fn truth(g: &Graph) -> Vec<Wld> {
    let n = g.side.len();
    let mut val: Vec<Option<Wld>> = (0..n)
        .map(|i| match g.table[i] {
            Some(v) => Some(v),
            None if g.succ[i].is_empty() => Some(Wld::Loss),
            None => None,
        })
        .collect();
    loop {
        let mut changed = false;
        for i in 0..n {
            if val[i].is_some() {
                continue;
            }
            let ss = &g.succ[i];
            if ss.iter().any(|&s| val[s] == Some(Wld::Loss)) {
                val[i] = Some(Wld::Win);
                changed = true;
            } else if ss.iter().all(|&s| val[s] == Some(Wld::Win)) {
                val[i] = Some(Wld::Loss);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    val.into_iter().map(|v| v.unwrap_or(Wld::Draw)).collect()
}

/// Check a strategy on the graph: every node reached (claimant follows `choice`, opponent
/// anything) is a leaf satisfying the goal or has a choice; no cycle for Win.
fn strategy_ok(
    g: &Graph,
    root: usize,
    claimant: Color,
    goal: Goal,
    choice: &HashMap<usize, usize>,
) -> Result<(), String> {
    let t = truth(g);
    let mut state = HashMap::new();
    fn walk(
        g: &Graph,
        t: &[Wld],
        p: usize,
        claimant: Color,
        goal: Goal,
        choice: &HashMap<usize, usize>,
        state: &mut HashMap<usize, u8>,
    ) -> Result<(), String> {
        match state.get(&p) {
            Some(2) => return Ok(()),
            Some(_) if goal == Goal::Win => return Err(format!("cycle at {p}")),
            Some(_) => return Ok(()),
            None => {}
        }
        if g.table[p].is_some() || g.succ[p].is_empty() {
            let v = if g.side[p] == claimant {
                t[p]
            } else {
                t[p].negate()
            };
            let ok = match goal {
                Goal::Win => v == Wld::Win,
                Goal::NotLose => v != Wld::Loss,
            };
            state.insert(p, 2);
            return if ok {
                Ok(())
            } else {
                Err(format!("bad leaf {p}"))
            };
        }
        state.insert(p, 1);
        if g.side[p] == claimant {
            let c = *choice.get(&p).ok_or(format!("no choice at {p}"))?;
            if !g.succ[p].contains(&c) {
                return Err(format!("illegal choice at {p}"));
            }
            walk(g, t, c, claimant, goal, choice, state)?;
        } else {
            for &c in &g.succ[p] {
                walk(g, t, c, claimant, goal, choice, state)?;
            }
        }
        state.insert(p, 2);
        Ok(())
    }
    walk(g, &t, root, claimant, goal, choice, &mut state)
}

/// Prove every node for both goals; return (settled, total) and panic on any wrong answer.
fn check_graph(g: &Graph, tt_entries: usize, weak: bool, label: &str) -> (usize, usize) {
    check_roots(g, 0..g.side.len(), tt_entries, weak, 1, label)
}

/// Prove `roots` for both goals with `threads` search threads; return (settled, total) and
/// panic on any wrong answer or failed strategy.
fn check_roots(
    g: &Graph,
    roots: impl Iterator<Item = usize>,
    tt_entries: usize,
    weak: bool,
    threads: usize,
    label: &str,
) -> (usize, usize) {
    let t = truth(g);
    let budget = Budget {
        nodes: Some(200_000),
        ..Budget::default()
    };
    let mut win = Dfpn::with_table(g, Goal::Win, Table::with_entries(tt_entries));
    let mut nl = Dfpn::with_table(g, Goal::NotLose, Table::with_entries(tt_entries));
    win.set_weak(weak);
    nl.set_weak(weak);
    win.set_threads(threads);
    nl.set_threads(threads);
    let (mut settled, mut total) = (0, 0);
    for root in roots {
        let v = t[root];
        total += 2;
        let ow = win.solve(root, &budget).unwrap();
        let on = nl.solve(root, &budget).unwrap();
        let expect_w = v == Wld::Win;
        let expect_n = v != Wld::Loss;
        for (goal, o, expect) in [(Goal::Win, ow, expect_w), (Goal::NotLose, on, expect_n)] {
            match o {
                Outcome::Proven => {
                    assert!(expect, "{label}: root {root} {goal:?} proven, truth {v}")
                }
                Outcome::Disproven => {
                    assert!(
                        !expect,
                        "{label}: root {root} {goal:?} disproven, truth {v}"
                    )
                }
                Outcome::Unknown { .. } => continue,
            }
            settled += 1;
            let d = if goal == Goal::Win { &mut win } else { &mut nl };
            let proven = o == Outcome::Proven;
            let s = extract(d, root, g.side[root], proven, &budget, None).unwrap();
            let s = s.unwrap_or_else(|| panic!("{label}: root {root} {goal:?}: no strategy"));
            strategy_ok(g, root, s.claimant, s.goal, &s.choice)
                .unwrap_or_else(|e| panic!("{label}: root {root} {goal:?}: strategy: {e}"));
        }
    }
    (settled, total)
}

/// xorshift64* (Marsaglia 2003, Vigna 2016), 64-bit state (never 0): the generator of
/// tests/random_positions (the same numbers for the same seed).
struct Rng(u64);

impl Rng {
    /// The next 64 random bits.
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0; the modulo bias is irrelevant here).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_graph(rng: &mut Rng, n: usize) -> Graph {
    let side: Vec<Color> = (0..n)
        .map(|i| {
            if i % 2 == 0 {
                Color::Black
            } else {
                Color::White
            }
        })
        .collect();
    let mut succ = vec![Vec::new(); n];
    let mut table = vec![None; n];
    for i in 0..n {
        let r = rng.below(100);
        if r < 8 {
            continue; // no move: lost
        }
        if r < 20 {
            table[i] = Some([Wld::Loss, Wld::Draw, Wld::Win][rng.below(3) as usize]);
            continue;
        }
        let k = 1 + rng.below(3) as usize;
        for _ in 0..k {
            // A successor of the other side (odd distance), often nearby: many short cycles.
            let j = loop {
                let j = if rng.below(3) == 0 {
                    rng.below(n as u64) as usize
                } else {
                    (i + n - 3 + rng.below(7) as usize) % n
                };
                if side[j] != side[i] {
                    break j;
                }
            };
            if !succ[i].contains(&j) {
                succ[i].push(j);
            }
        }
    }
    Graph {
        init: vec![(1, 1); n],
        side,
        succ,
        table,
    }
}

/// The hand-built case: a naive table would poison the root. Black (B) is the prover.
/// S(B) -> P, V.  P(W) -> U, J.  U(B) -> E, F.  E(W) -> D.  D(B) -> X.  X(W) -> U.
/// F(W) -> G.  G(B) -> H.  H(W): no move.  J(B) -> K.  K(W) -> J.  V(W) -> D.
/// Searching P first (the initial numbers make V look expensive) reaches D with U on the path: the only line D-X-U repeats U, a draw there,
/// so a naive table would record "D does not win" (and E, X "not lost"). U is then proven
/// through F-G-H and P disproven through the J-K cycle. From V, D is reached without U on the
/// path and wins (D-X-U, then U-F-G-H), so S wins; a poisoned entry for D would make the prover
/// call S not won. Ground truth by retrograde agrees: S is a win.
#[test]
fn hand_built_path_dependent_draw_does_not_poison_the_table() {
    const S: usize = 0;
    const P: usize = 1;
    const U: usize = 2;
    const E: usize = 3;
    const D: usize = 4;
    const F: usize = 5;
    const G: usize = 6;
    const H: usize = 7;
    const J: usize = 8;
    const K: usize = 9;
    const V: usize = 10;
    const X: usize = 11;
    let (b, w) = (Color::Black, Color::White);
    let side = vec![b, w, b, w, b, w, b, w, b, w, w, w];
    let mut succ = vec![Vec::new(); 12];
    succ[S] = vec![P, V];
    succ[P] = vec![U, J];
    succ[U] = vec![E, F];
    succ[E] = vec![D];
    succ[D] = vec![X];
    succ[X] = vec![U];
    succ[F] = vec![G];
    succ[G] = vec![H];
    succ[J] = vec![K];
    succ[K] = vec![J];
    succ[V] = vec![D];
    // Initial numbers that make the search take P before V, U before J and E before F (the
    // order in which a naive table goes wrong): V looks expensive to prove, J to disprove, F
    // more expensive than E.
    let mut init = vec![(1, 1); 12];
    init[V] = (1000, 1);
    init[F] = (10, 1);
    init[J] = (1, 1000);
    let g = Graph {
        side,
        succ,
        table: vec![None; 12],
        init,
    };
    let t = truth(&g);
    assert_eq!(t[S], Wld::Win);
    assert_eq!(t[P], Wld::Draw);
    assert_eq!(t[D], Wld::Win);
    for entries in [4, 64, 1 << 12] {
        let mut win = Dfpn::with_table(&g, Goal::Win, Table::with_entries(entries));
        assert_eq!(
            win.solve(S, &Budget::default()).unwrap(),
            Outcome::Proven,
            "{entries} entries"
        );
        // The path-dependent "D does not win" was not stored: D is proven from scratch.
        assert_ne!(win.known(&D, Color::Black).result, Some(false));
        assert!(win.stats().path_dependent > 0);
    }
    for weak in [false, true] {
        let (settled, total) = check_graph(&g, 4, weak, "hand-built");
        assert_eq!(settled, total);
        for threads in [2, 4] {
            let label = format!("hand-built, {threads} threads");
            let (settled, total) = check_roots(&g, 0..12, 4, weak, threads, &label);
            assert_eq!(settled, total, "{label}");
        }
    }
    for threads in [2, 4] {
        let mut win = Dfpn::with_table(&g, Goal::Win, Table::with_entries(64));
        win.set_threads(threads);
        assert_eq!(
            win.solve(S, &Budget::default()).unwrap(),
            Outcome::Proven,
            "{threads} threads"
        );
        assert_ne!(win.known(&D, Color::Black).result, Some(false));
    }
}

/// Parallel searches (2 and 4 threads sharing one table) on random cyclic graphs large enough
/// that the threads meet in the same subtrees, with a tiny table (one bucket: every store
/// replaces another thread's entries) and a roomy one: every settled answer equals the
/// retrograde truth and every strategy extracted from the shared table passes the check.
#[test]
fn parallel_searches_on_random_graphs_match_retrograde() {
    let mut rng = Rng(0x7a7a_1234_0000_0001);
    let (mut settled, mut total) = (0, 0);
    for i in 0..24 {
        let n = 200 + rng.below(1800) as usize;
        let g = random_graph(&mut rng, n);
        let roots: Vec<usize> = (0..12).map(|_| rng.below(n as u64) as usize).collect();
        for entries in [4, 1 << 14] {
            for weak in [false, true] {
                for threads in [2, 4] {
                    let label = format!(
                        "graph {i} ({n} nodes, {entries} entries, weak {weak}, {threads} threads)"
                    );
                    let (s, t) =
                        check_roots(&g, roots.iter().copied(), entries, weak, threads, &label);
                    settled += s;
                    total += t;
                }
            }
        }
    }
    assert!(
        settled * 100 >= total * 90,
        "settled {settled} of {total} goal searches"
    );
}

#[test]
fn random_graphs_with_cycles_match_retrograde() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let (mut settled, mut total) = (0, 0);
    for i in 0..1500 {
        let n = 6 + rng.below(40) as usize;
        let g = random_graph(&mut rng, n);
        // Tiny table (one bucket) to force replacement, then a roomy one; sums and weak sums.
        for entries in [4, 1 << 12] {
            for weak in [false, true] {
                let label = format!("graph {i} ({n} nodes, {entries} entries, weak {weak})");
                let (s, t) = check_graph(&g, entries, weak, &label);
                settled += s;
                total += t;
            }
        }
    }
    // Unknowns are allowed (never a wrong answer), but nearly everything settles on graphs
    // this small.
    assert!(
        settled * 100 >= total * 95,
        "settled {settled} of {total} goal searches"
    );
}

/// A graph whose searches release a [`Reserve`] after a given number of expansions (calls of
/// `successors`), so that the reserve threads join a search already running.
struct Joining<'a> {
    g: &'a Graph,
    calls: AtomicUsize,
    at: AtomicUsize,
    reserve: Mutex<Option<Arc<Reserve>>>,
}

impl Game for Joining<'_> {
    type Pos = usize;
    type Error = std::convert::Infallible;
    fn mover(&self, p: &usize) -> Color {
        self.g.mover(p)
    }
    fn successors(&self, p: &usize, out: &mut Vec<usize>) {
        if self.calls.fetch_add(1, Ordering::Relaxed) == self.at.load(Ordering::Relaxed) {
            if let Some(r) = self.reserve.lock().unwrap().as_ref() {
                r.release();
            }
        }
        self.g.successors(p, out)
    }
    fn evaluate(&self, p: &usize, or: bool, goal: Goal) -> Result<Eval, Self::Error> {
        self.g.evaluate(p, or, goal)
    }
    fn irreversible(&self, a: &usize, b: &usize) -> bool {
        self.g.irreversible(a, b)
    }
    fn hash(&self, p: &usize) -> u64 {
        self.g.hash(p)
    }
}

/// Threads lent by another search ([`Reserve`], the prover's goals searched together) that
/// join a running search: random cyclic graphs, searchers of 1 and 2 threads of their own
/// with a reserve of 1 or 2 threads released after 0 to 40 expansions of each root's search
/// (a fresh reserve per root, so every search is joined while it runs), tiny and roomy tables,
/// sums and weak sums: every settled answer equals the retrograde truth (so the
/// path-dependent results of the joined threads never reached the shared table), every
/// strategy extracted passes the check, and a node budget holds for all the threads together.
#[test]
fn reserve_threads_joining_a_running_search_match_retrograde() {
    let mut rng = Rng(0x7a7a_1234_0000_0037);
    let (mut settled, mut total) = (0, 0);
    for i in 0..16 {
        let n = 200 + rng.below(1800) as usize;
        let g = random_graph(&mut rng, n);
        let t = truth(&g);
        let roots: Vec<usize> = (0..10).map(|_| rng.below(n as u64) as usize).collect();
        for entries in [4, 1 << 14] {
            for (own, lent) in [(1, 1), (1, 2), (2, 1)] {
                let weak = rng.below(2) == 1;
                let label =
                    format!("graph {i} ({n} nodes, {entries} entries, weak {weak}, {own}+{lent})");
                let j = Joining {
                    g: &g,
                    calls: AtomicUsize::new(0),
                    at: AtomicUsize::new(usize::MAX),
                    reserve: Mutex::new(None),
                };
                let mut win = Dfpn::with_table(&j, Goal::Win, Table::with_entries(entries));
                let mut nl = Dfpn::with_table(&j, Goal::NotLose, Table::with_entries(entries));
                for (d, goal) in [(&mut win, Goal::Win), (&mut nl, Goal::NotLose)] {
                    d.set_weak(weak);
                    d.set_threads(own);
                    for &root in &roots {
                        let r = Reserve::new(lent);
                        *j.reserve.lock().unwrap() = Some(r.clone());
                        j.calls.store(0, Ordering::Relaxed);
                        j.at.store(rng.below(41) as usize, Ordering::Relaxed);
                        d.set_reserve(Some(r));
                        let before = d.stats().nodes;
                        let budget = Budget {
                            nodes: Some(200_000),
                            ..Budget::default()
                        };
                        let o = d.solve(root, &budget).unwrap();
                        assert!(d.stats().nodes - before <= 200_000, "{label}");
                        d.set_reserve(None);
                        let v = t[root];
                        let expect = goal.satisfied_by(v);
                        total += 1;
                        let proven = match o {
                            Outcome::Proven => true,
                            Outcome::Disproven => false,
                            Outcome::Unknown { .. } => continue,
                        };
                        assert_eq!(proven, expect, "{label}: root {root} {goal:?}, truth {v}");
                        settled += 1;
                        let s = extract(d, root, g.side[root], proven, &budget, None).unwrap();
                        let s = s.unwrap_or_else(|| panic!("{label}: root {root}: no strategy"));
                        strategy_ok(&g, root, s.claimant, s.goal, &s.choice).unwrap_or_else(|e| {
                            panic!("{label}: root {root} {goal:?}: strategy: {e}")
                        });
                    }
                }
            }
        }
    }
    assert!(
        settled * 100 >= total * 90,
        "settled {settled} of {total} goal searches"
    );
}

/// A node budget counts the lent threads with the searcher's own: a root that needs more
/// expansions than the budget (12) stops within it (the team's count takes one node per
/// expansion before it starts), with the reserve released at the first expansion and at the
/// fifth; every root settled within it has its retrograde value.
#[test]
fn a_node_budget_counts_the_lent_threads() {
    let mut rng = Rng(0x00b0_d9e7_0037);
    let mut stopped = 0;
    for _ in 0..12 {
        let n = 3000;
        let g = random_graph(&mut rng, n);
        let t = truth(&g);
        let j = Joining {
            g: &g,
            calls: AtomicUsize::new(0),
            at: AtomicUsize::new(usize::MAX),
            reserve: Mutex::new(None),
        };
        for at in [0, 4] {
            for (root, &truth) in t.iter().enumerate() {
                let mut d = Dfpn::with_table(&j, Goal::NotLose, Table::with_entries(1 << 12));
                let r = Reserve::new(1);
                *j.reserve.lock().unwrap() = Some(r.clone());
                j.calls.store(0, Ordering::Relaxed);
                j.at.store(at, Ordering::Relaxed);
                d.set_reserve(Some(r));
                let budget = Budget {
                    nodes: Some(12),
                    ..Budget::default()
                };
                match d.solve(root, &budget).unwrap() {
                    Outcome::Unknown { .. } => {
                        assert!(d.stats().nodes <= 12, "{}", d.stats().nodes);
                        assert_eq!(d.stopped(), Some(Stop::Nodes));
                        stopped += 1;
                    }
                    o => assert_eq!(o == Outcome::Proven, Goal::NotLose.satisfied_by(truth)),
                }
                if stopped >= 20 {
                    return;
                }
            }
        }
    }
    panic!("only {stopped} searches reached the node budget");
}
