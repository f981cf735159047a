//! Certificates: turning a finished search into the claimant's strategy ([`extract`], generic
//! over the [`Game`]) and writing checkers strategies as certificate files
//! ([`certificate_text`], [`write_certificate`]; format in `docs/certificate.md`).
//!
//! The claimant is the side whose goal is established: the prover for a proof, the opponent for
//! a disproof (a disproof of *Win* is the opponent's *NotLose*, a disproof of *NotLose* the
//! opponent's *Win*). The strategy names one successor for every claimant position reached from
//! the root when the claimant follows it and the opponent plays anything, up to leaves (exact
//! values). A *Win* strategy must be acyclic; a *NotLose* strategy may cycle (endless play is a
//! draw).
//!
//! Extraction walks the strategy depth first. At a claimant position it takes a successor the
//! search's table already knows to satisfy the goal, or asks the search again; at an opponent
//! position every successor must satisfy the goal. *Win* walks carry a height bound taken from
//! the proof heights the search stores, decreasing by one per ply, so the strategy is acyclic
//! by construction; *NotLose* walks pass the walk as history to sub-searches, as their proofs
//! may rely on repetitions. The result is checked independently (`crate::proofcheck`).

use super::search::{Budget, Dfpn, Eval, Game, Goal, Known, Outcome};
use crate::board::{Color, Position};
use crate::movegen::Move;
use crate::notation::format_move;
use crate::proofcheck::TableSet;
use crate::rules::Variant;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A strategy for the claimant: the chosen successor of each claimant position.
#[derive(Clone, Debug)]
pub struct Strategy<P> {
    /// The root.
    pub root: P,
    /// The side whose goal the strategy establishes.
    pub claimant: Color,
    /// The claimant's goal.
    pub goal: Goal,
    /// Claimant position -> chosen successor (may contain positions the final strategy does
    /// not reach).
    pub choice: HashMap<P, P>,
}

/// The claimant and their goal for a search of `goal` on behalf of `prover` that ended
/// `proven` (true) or disproven (false).
pub fn claim(prover: Color, goal: Goal, proven: bool) -> (Color, Goal) {
    match (goal, proven) {
        (g, true) => (prover, g),
        (Goal::Win, false) => (prover.opponent(), Goal::NotLose),
        (Goal::NotLose, false) => (prover.opponent(), Goal::Win),
    }
}

/// Extract the claimant's strategy after `d` has proven (`proven`) or disproven its goal for
/// `prover` at `root`. The sub-searches together expand at most `budget.nodes` nodes (counted
/// in `d`'s statistics), each stops at `budget.deadline` or on `budget.cancel`; `deadline`
/// bounds the whole extraction. `Ok(None)` when the strategy could not be completed within
/// the limits (the caller tells which from the clock and `d`'s node count).
///
/// *Win* strategies are walked with a height bound that drops by one per ply (starting from
/// the proof height the search recorded, doubled on failure), so they are acyclic by
/// construction. *NotLose* strategies are walked depth first with the walk as the history of
/// every sub-search (their proofs may rely on returning to a position of the walk).
///
/// # Errors
/// Whatever [`Game::evaluate`] fails with.
pub fn extract<G: Game>(
    d: &mut Dfpn<'_, G>,
    root: G::Pos,
    prover: Color,
    proven: bool,
    budget: &Budget,
    deadline: Option<Instant>,
) -> Result<Option<Strategy<G::Pos>>, G::Error> {
    let (claimant, goal) = claim(prover, d.goal(), proven);
    let mut ex = Ex {
        start_nodes: d.stats().nodes,
        d,
        prover,
        want: proven,
        claimant,
        goal,
        stack: Vec::new(),
        on_stack: HashSet::new(),
        done: HashMap::new(),
        choice: HashMap::new(),
        budget: budget.clone(),
        deadline,
        hard_fail: false,
        visits: 0,
    };
    let ok = match goal {
        Goal::NotLose => ex.visit_draw(root)?,
        Goal::Win => {
            let mut h = match ex.d.known(&root, prover) {
                Known {
                    result: Some(k),
                    dist,
                    ..
                } if k == proven => dist,
                _ => ex.d.solve_two_phase(root, prover, &[], budget)?.dist,
            };
            let mut ok = false;
            for _ in 0..6 {
                if ex.visit_win(root, h)? {
                    ok = true;
                    break;
                }
                if ex.hard_fail {
                    break;
                }
                h = h.saturating_mul(2).saturating_add(8);
            }
            ok
        }
    };
    Ok(ok.then_some(Strategy {
        root,
        claimant,
        goal,
        choice: ex.choice,
    }))
}

struct Ex<'a, 'g, G: Game> {
    d: &'a mut Dfpn<'g, G>,
    prover: Color,
    /// The search result to follow: proven (true) or disproven (false) for `prover`.
    want: bool,
    claimant: Color,
    goal: Goal,
    stack: Vec<G::Pos>,
    on_stack: HashSet<G::Pos>,
    /// Finished positions; for Win walks with the height their strategy was verified within.
    done: HashMap<G::Pos, u32>,
    choice: HashMap<G::Pos, G::Pos>,
    /// `d`'s node count when the extraction started.
    start_nodes: u64,
    /// Limits of the sub-searches; `nodes` is their total.
    budget: Budget,
    deadline: Option<Instant>,
    /// Set when the deadline passed: stop trying alternatives.
    hard_fail: bool,
    visits: u64,
}

impl<G: Game> Ex<'_, '_, G> {
    /// The exact value of `p` for the claimant, if `p` is a leaf: whether it satisfies the goal.
    fn leaf(&self, p: &G::Pos) -> Result<Option<bool>, G::Error> {
        let game = self.d.game();
        let or = game.mover(p) == self.prover;
        Ok(match game.evaluate(p, or, self.d.goal())? {
            Eval::Exact(v) => {
                let v = if game.mover(p) == self.claimant {
                    v
                } else {
                    v.negate()
                };
                Some(self.goal.satisfied_by(v))
            }
            Eval::Open { .. } => None,
        })
    }

    /// Whether the claimant's goal holds at `c` and the proof height known for it: from the
    /// table, else by a search with `history`.
    fn holds(&mut self, c: &G::Pos, history_walk: bool) -> Result<Option<u32>, G::Error> {
        let k = self.d.known(c, self.prover);
        if let Some(r) = k.result {
            return Ok((r == self.want).then_some(k.dist));
        }
        let history: &[G::Pos] = if history_walk { &self.stack } else { &[] };
        let budget = match self.budget.nodes {
            Some(n) => {
                let used = self.d.stats().nodes - self.start_nodes;
                if used >= n {
                    // The extraction's node budget is spent: stop the walk.
                    self.hard_fail = true;
                    return Ok(None);
                }
                Budget {
                    nodes: Some(n - used),
                    ..self.budget.clone()
                }
            }
            None => self.budget.clone(),
        };
        let s = self.d.solve_two_phase(*c, self.prover, history, &budget)?;
        Ok(match s.outcome {
            Outcome::Proven => self.want.then_some(s.dist),
            Outcome::Disproven => (!self.want).then_some(s.dist),
            // Not settled within the sub-search budget: not usable here (the caller tries
            // another successor where it can). Only the overall deadline stops the walk.
            Outcome::Unknown { .. } => {
                if self.deadline.is_some_and(|t| Instant::now() >= t) {
                    self.hard_fail = true;
                }
                None
            }
        })
    }

    fn tick(&mut self) -> bool {
        self.visits += 1;
        if self.visits & 63 == 0 && self.deadline.is_some_and(|t| Instant::now() >= t) {
            self.hard_fail = true;
        }
        self.hard_fail
    }

    /// Win walk: verify that the claimant wins from `p` within `h` plies, recording choices.
    fn visit_win(&mut self, p: G::Pos, h: u32) -> Result<bool, G::Error> {
        if self.done.get(&p).is_some_and(|&v| v <= h) {
            return Ok(true);
        }
        if let Some(ok) = self.leaf(&p)? {
            return Ok(ok);
        }
        if h == 0 || self.tick() {
            return Ok(false);
        }
        let game = self.d.game();
        let mut succ = Vec::new();
        game.successors(&p, &mut succ);
        if succ.is_empty() {
            return Ok(game.mover(&p) != self.claimant);
        }
        // A position on the walk cannot be used again below itself: the strategy names one
        // move per position, so returning to it would be a cycle.
        self.on_stack.insert(p);
        let r = self.expand_win(p, h, &succ);
        self.on_stack.remove(&p);
        let Some(verified) = r? else {
            return Ok(false);
        };
        let v = self.done.entry(p).or_insert(verified);
        *v = (*v).min(verified);
        Ok(true)
    }

    /// The claimant or opponent step of [`Ex::visit_win`]: the verified height, or `None`.
    fn expand_win(&mut self, p: G::Pos, h: u32, succ: &[G::Pos]) -> Result<Option<u32>, G::Error> {
        let game = self.d.game();
        Ok(Some(if game.mover(&p) == self.claimant {
            // A winning leaf first, then successors by known proof height.
            let mut cands: Vec<(u32, G::Pos)> = Vec::new();
            for c in succ {
                match self.leaf(c)? {
                    Some(true) => {
                        self.choice.insert(p, *c);
                        return Ok(Some(1));
                    }
                    Some(false) => continue,
                    None => {}
                }
                if self.on_stack.contains(c) {
                    continue;
                }
                if let Some(&v) = self.done.get(c) {
                    cands.push((v, *c));
                    continue;
                }
                let k = self.d.known(c, self.prover);
                match k.result {
                    Some(r) if r == self.want => cands.push((k.dist, *c)),
                    Some(_) => {}
                    None => cands.push((u32::MAX, *c)),
                }
            }
            cands.sort_by_key(|&(v, _)| v);
            let mut found = None;
            for (v, c) in cands {
                if v == u32::MAX {
                    match self.holds(&c, false)? {
                        Some(dist) if dist < h => {}
                        _ => {
                            if self.hard_fail {
                                return Ok(None);
                            }
                            continue;
                        }
                    }
                } else if v >= h {
                    continue;
                }
                if self.visit_win(c, h - 1)? {
                    found = Some(c);
                    break;
                }
                if self.hard_fail {
                    return Ok(None);
                }
            }
            let Some(c) = found else { return Ok(None) };
            let verified = 1 + self.done.get(&c).copied().unwrap_or(0);
            // `p` may have been finished with a lower height meanwhile (reached again below
            // itself): keep that choice, as the one found here leads back to `p`.
            if self.done.get(&p).is_none_or(|&v| verified < v) {
                self.choice.insert(p, c);
            }
            verified
        } else {
            let mut worst = 0;
            for c in succ {
                match self.leaf(c)? {
                    Some(true) => continue,
                    Some(false) => return Ok(None),
                    None => {}
                }
                if self.on_stack.contains(c) {
                    return Ok(None);
                }
                if self.done.get(c).is_none_or(|&v| v >= h)
                    && (self.holds(c, false)?.is_none() || !self.visit_win(*c, h - 1)?)
                {
                    return Ok(None);
                }
                worst = worst.max(self.done.get(c).copied().unwrap_or(0));
            }
            1 + worst
        }))
    }

    /// NotLose walk (cycles allowed): depth first, the walk being the history of sub-searches.
    /// No backtracking: positions finished below may rely on positions of the walk.
    fn visit_draw(&mut self, p: G::Pos) -> Result<bool, G::Error> {
        if self.done.contains_key(&p) || self.on_stack.contains(&p) {
            return Ok(true);
        }
        if let Some(ok) = self.leaf(&p)? {
            return Ok(ok);
        }
        if self.tick() {
            return Ok(false);
        }
        let game = self.d.game();
        let mut succ = Vec::new();
        game.successors(&p, &mut succ);
        if succ.is_empty() {
            return Ok(game.mover(&p) != self.claimant);
        }
        self.stack.push(p);
        self.on_stack.insert(p);
        let ok = if game.mover(&p) == self.claimant {
            self.claimant_draw(p, &succ)?
        } else {
            let mut ok = true;
            for c in &succ {
                if self.on_stack.contains(c) || self.done.contains_key(c) {
                    continue;
                }
                match self.leaf(c)? {
                    Some(true) => continue,
                    Some(false) => {
                        ok = false;
                        break;
                    }
                    None => {}
                }
                if self.holds(c, true)?.is_none() || !self.visit_draw(*c)? {
                    ok = false;
                    break;
                }
            }
            ok
        };
        self.stack.pop();
        self.on_stack.remove(&p);
        if ok {
            self.done.insert(p, 0);
        }
        Ok(ok)
    }

    fn claimant_draw(&mut self, p: G::Pos, succ: &[G::Pos]) -> Result<bool, G::Error> {
        // Cheapest first: a return into the walk, a finished position, a leaf that satisfies
        // the goal.
        for c in succ {
            if self.on_stack.contains(c) || self.done.contains_key(c) || self.leaf(c)? == Some(true)
            {
                self.choice.insert(p, *c);
                return Ok(true);
            }
        }
        let mut cands: Vec<(u8, u32, G::Pos)> = Vec::new();
        for c in succ {
            if self.leaf(c)?.is_some() {
                continue;
            }
            let k = self.d.known(c, self.prover);
            match k.result {
                Some(r) if r == self.want => cands.push((0, k.work, *c)),
                Some(_) => {}
                None => cands.push((1, k.work, *c)),
            }
        }
        cands.sort_by_key(|&(k, w, _)| (k, w));
        for (_, _, c) in cands {
            if self.holds(&c, true)?.is_none() {
                if self.hard_fail {
                    return Ok(false);
                }
                continue;
            }
            if self.visit_draw(c)? {
                self.choice.insert(p, c);
                return Ok(true);
            }
            return Ok(false);
        }
        Ok(false)
    }
}

/// One checkers proof: the claimant's move in every claimant position the strategy reaches
/// beyond the tables, in breadth-first order from the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    /// The rules of the game proven (those of the tables; the moves are this variant's,
    /// [`Variant::moves`]).
    pub rules: Variant,
    /// The root position.
    pub root: Position,
    /// The side whose goal is proven.
    pub claimant: Color,
    /// The claimant's goal.
    pub goal: Goal,
    /// (claimant position, chosen move).
    pub records: Vec<(Position, Move)>,
}

impl Proof {
    /// The same proof where the positions `covered` now by the tables are leaves: after tables
    /// were added to the directory (`egdb prove --build`), the records below a newly covered
    /// position are no longer reached, and a certificate must hold exactly the records reached.
    ///
    /// # Errors
    /// As `proof_of` (never expected for a proof that was complete).
    pub fn pruned(&self, covered: impl Fn(&Position) -> bool) -> Result<Proof, CertError> {
        let strategy = Strategy {
            root: self.root,
            claimant: self.claimant,
            goal: self.goal,
            choice: self.records.iter().map(|(p, m)| (*p, p.apply(m))).collect(),
        };
        proof_of(&strategy, self.rules, covered)
    }
}

/// Turn a checkers strategy of the game `rules` into a [`Proof`]: walk it from the root
/// breadth first (claimant positions follow their choice, opponent positions every move, the
/// moves of [`Variant::moves`]), stopping at leaves (positions `covered` by the tables, or
/// without a legal move), and record the move of every claimant position met.
///
/// # Errors
/// [`CertError::NoChoice`] if a claimant position reached has no choice,
/// [`CertError::IllegalChoice`] if its choice is not a legal successor (an extraction bug;
/// never expected).
pub fn proof_of(
    strategy: &Strategy<Position>,
    rules: Variant,
    covered: impl Fn(&Position) -> bool,
) -> Result<Proof, CertError> {
    let mut seen = HashSet::new();
    let mut queue = VecDeque::new();
    let mut records = Vec::new();
    seen.insert(strategy.root);
    queue.push_back(strategy.root);
    while let Some(p) = queue.pop_front() {
        if covered(&p) {
            continue;
        }
        let moves = rules.moves(&p);
        if moves.is_empty() {
            continue;
        }
        if p.side == strategy.claimant {
            let c = strategy.choice.get(&p).ok_or(CertError::NoChoice(p))?;
            let m = moves
                .iter()
                .find(|m| p.apply(m) == *c)
                .ok_or(CertError::IllegalChoice(p))?;
            records.push((p, *m));
            if seen.insert(*c) {
                queue.push_back(*c);
            }
        } else {
            for m in &moves {
                let c = p.apply(m);
                if seen.insert(c) {
                    queue.push_back(c);
                }
            }
        }
    }
    Ok(Proof {
        rules,
        root: strategy.root,
        claimant: strategy.claimant,
        goal: strategy.goal,
        records,
    })
}

/// `black` or `white`.
pub fn color_word(c: Color) -> &'static str {
    match c {
        Color::Black => "black",
        Color::White => "white",
    }
}

/// The certificate text (format version 2, `docs/certificate.md`) of `proofs` made with the
/// tables `tables`: header (its `rules` line names the variant of the first proof,
/// [`Proof::rules`]; English when there is none: the proofs of one certificate are of one
/// variant, and the checker refuses a proof whose moves are not that variant's), the proofs,
/// and the trailer `proofs N` (N = `proofs.len()`) by which the checker detects a truncated
/// file.
pub fn certificate_text(tables: &TableSet, proofs: &[Proof]) -> String {
    let mut s = String::new();
    s.push_str("egdb-proof 2\n");
    let rules = proofs.first().map_or(Variant::English, |p| p.rules);
    s.push_str(&format!("rules {}\n", rules.name()));
    s.push_str(&format!(
        "tables {} {} {:016x}\n",
        tables.max_pieces, tables.files, tables.digest
    ));
    for p in proofs {
        s.push_str(&format!(
            "proof {} {} {} {}\n",
            p.root.to_fen(),
            color_word(p.claimant),
            p.goal.as_str(),
            p.records.len()
        ));
        for (q, m) in &p.records {
            s.push_str(&q.to_fen());
            s.push(' ');
            s.push_str(&format_move(m));
            s.push('\n');
        }
        s.push_str("end\n");
    }
    s.push_str(&format!("proofs {}\n", proofs.len()));
    s
}

/// Why a certificate cannot be made or written.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// A claimant position reached by the strategy has no chosen move (an extraction bug;
    /// never expected).
    #[error("no move chosen at {}", .0.to_fen())]
    NoChoice(Position),
    /// The chosen successor of a claimant position is not one of its legal successors (an
    /// extraction bug; never expected).
    #[error("chosen successor of {} is not legal", .0.to_fen())]
    IllegalChoice(Position),
    /// The certificate's path is not a place a regular file can be written: a directory, a
    /// device such as `/dev/null`, a FIFO.
    #[error("{}: {source}", path.display())]
    NotAFile {
        /// The path asked for.
        path: PathBuf,
        /// The reason ([`std::io::ErrorKind::InvalidInput`]).
        source: std::io::Error,
    },
    /// The certificate's directory cannot be written (missing, read-only).
    #[error("{}: cannot write there: {source}", path.display())]
    Unwritable {
        /// The path asked for.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Writing the certificate failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path written.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Check, before any work, that [`write_atomic`] can write `path`
/// (`crate::atomic::check_writable`). Nothing is written to `path`.
///
/// # Errors
/// [`CertError::NotAFile`] ("is a directory", "not a regular file": a device such as
/// `/dev/null`, a FIFO) or [`CertError::Unwritable`] ("cannot write there: ...": a missing or
/// read-only directory), naming `path`.
pub fn check_writable(path: &Path) -> Result<(), CertError> {
    crate::atomic::check_writable(path).map_err(|source| {
        let path = path.to_path_buf();
        if source.kind() == std::io::ErrorKind::InvalidInput {
            CertError::NotAFile { path, source }
        } else {
            CertError::Unwritable { path, source }
        }
    })
}

/// Write `text` to `path` atomically ([`crate::atomic::replace`]: temporary file in the same
/// directory, fsync, rename).
///
/// # Errors
/// [`CertError::Io`]: the I/O error, with the path.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), CertError> {
    crate::atomic::replace(path, text.as_bytes())
        .map(|_| ())
        .map_err(|source| CertError::Io {
            path: path.to_path_buf(),
            source,
        })
}

/// Write the certificate of `proofs` for the tables `tables` to `path` (atomically).
///
/// # Errors
/// [`CertError::Io`]: the I/O error, with the path.
pub fn write_certificate(
    path: &Path,
    tables: &TableSet,
    proofs: &[Proof],
) -> Result<(), CertError> {
    write_atomic(path, &certificate_text(tables, proofs))
}
