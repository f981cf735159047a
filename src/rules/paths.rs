//! The slow path generator of the 8x8 draughts family: every legal move with its full path
//! under any of the variants described by a [`Game`] (English, Russian, Brazilian, Pool,
//! Italian, Spanish, Czech, giveaway), written for clarity, not speed, and separately from
//! every fast engine (it shares only the board geometry, `NEIGHBOUR`). It is the
//! independent oracle of the variants: their perft counts (`egdb perft --rules NAME`) and,
//! through [`Paths`] (a [`Rules`] implementation), their verification.
//!
//! # Orientation (all variants)
//! Positions use this crate's board (docs/architecture.md, "Variants"): squares 1-32, the side
//! that moves first is [`Color::Black`] on squares 1-12, moving toward square 32 and crowning on
//! 29-32; the other side is [`Color::White`] on 21-32, crowning on 1-4. In Russian, Brazilian,
//! Pool, Italian, Spanish and Czech draughts the side that moves first is called White: it is
//! our Black. The Italian and Spanish boards are the mirror image of ours (a playable square in
//! each player's right-hand corner); [`crate::rules::italian::from_italian_square`] is the one
//! mapping of their square numbers onto ours. Every rule here is symmetric under that mirror,
//! so move counts do not depend on it.
//!
//! # The rules, as parameters
//! - Men move one square diagonally forward; kings one square in any direction
//!   ([`KingRange::Short`]) or any number of empty squares along a diagonal
//!   ([`KingRange::Flying`]).
//! - Captures are compulsory and, once begun, continue while the capturing piece can jump
//!   again. A man jumps an adjacent enemy piece to the empty square beyond, forward only or
//!   also backward ([`Game::men_capture_backward`]); in Italian a man may not jump a king
//!   ([`Game::men_capture_kings`]). A short king jumps like a man in all four directions; a
//!   flying king jumps an enemy piece at any distance along a diagonal (only empty squares
//!   between) and lands on any empty square beyond it, but, where some of those landing
//!   squares allow the capture to continue, only on one of those.
//! - A piece is jumped at most once, and jumped pieces stay on the board until the move ends:
//!   they cannot be jumped again and block the way (the "Turkish strike"); the capturing
//!   piece's start square counts as empty.
//! - A man reaching its crowning row ([`Crowning`]): is crowned and its move ends there
//!   (English, Italian, Spanish, Czech); is crowned at once and goes on capturing as a king
//!   (Russian); or is crowned only if its move ends there, going on capturing as a man
//!   otherwise (Brazilian, Pool).
//! - Which capture may be chosen ([`CaptureChoice`]): any, the most pieces, or the Italian,
//!   Spanish or Czech rules of precedence.
//! - A side with no legal move (or no pieces) loses, except in giveaway, where it wins
//!   ([`Game::no_move`]).

use super::Rules;
use crate::board::{Bitboard, Color, Position, Wld, NEIGHBOUR};

/// How far a king moves and captures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KingRange {
    /// One square (English, Italian, giveaway).
    Short,
    /// Any number of empty squares along a diagonal (Russian, Brazilian, Pool, Spanish, Czech).
    Flying,
}

/// What happens to a man that reaches its crowning row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Crowning {
    /// Crowned, and its move ends there even in the middle of a capture (English, Italian).
    EndsMove,
    /// Crowned at once; a capture goes on with the piece as a king (Russian).
    ContinuesAsKing,
    /// Crowned only if its move ends on the crowning row; a capture passing through it goes on
    /// with the piece as a man (Brazilian and international rules, Pool).
    AtEndOnly,
}

/// Which of the possible captures the side to move may choose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CaptureChoice {
    /// Any capture (English, Russian, Pool, giveaway).
    Free,
    /// A capture taking the most pieces, kings and men counted alike (Brazilian).
    MostPieces,
    /// Italian precedence, each rule applied among the captures left by the ones before:
    /// the most pieces; then a capture by a king; then the most kings taken; then the kings
    /// taken first (compared jump by jump).
    Italian,
    /// Spanish precedence: the most pieces, then the most kings taken.
    Spanish,
    /// Czech precedence: a capture by a king if there is one, else any capture.
    Czech,
}

/// The rules of one variant, as the path generator reads them (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Game {
    /// The rules id written in table headers ([`Rules::ID`]).
    pub id: u32,
    /// Lower-case name, as `--rules` takes it.
    pub name: &'static str,
    /// How far kings move and capture.
    pub kings: KingRange,
    /// Whether men capture backward as well as forward.
    pub men_capture_backward: bool,
    /// Whether men may capture kings (false in Italian).
    pub men_capture_kings: bool,
    /// A man reaching its crowning row.
    pub crowning: Crowning,
    /// Which capture may be chosen.
    pub choice: CaptureChoice,
    /// The value for the side to move of a position without a legal move (the terminal rule).
    pub no_move: Wld,
}

/// A legal move with its full path. Squares are numbers 1-32 of this crate's board.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PathMove {
    /// Square the piece starts on.
    pub from: u8,
    /// Landing squares in order (a quiet move: its one target); the last is where the piece
    /// ends.
    pub path: Vec<u8>,
    /// Squares of the captured pieces, in the order they are jumped (empty for a quiet move).
    pub captured: Vec<u8>,
    /// Whether the moving piece was a king when the move began.
    pub king: bool,
    /// Whether a man is crowned by this move.
    pub crowns: bool,
}

impl PathMove {
    /// Square the piece ends on.
    pub fn to(&self) -> u8 {
        *self
            .path
            .last()
            .expect("a move has at least one landing square")
    }
    /// The captured pieces as a bitboard (bit i = square i+1).
    pub fn captured_set(&self) -> Bitboard {
        self.captured.iter().fold(0, |b, &s| b | 1 << (s - 1))
    }
    /// Whether two moves have the same effect (same from, to, captured pieces and crowning):
    /// they lead to the same position.
    pub fn same_effect(&self, other: &PathMove) -> bool {
        self.from == other.from
            && self.to() == other.to()
            && self.captured_set() == other.captured_set()
            && self.crowns == other.crowns
    }
}

/// Whether bit index `i` (square i+1) is on the crowning row of `side`'s men.
#[inline]
fn on_crown_row(side: Color, i: u8) -> bool {
    match side {
        Color::Black => i >= 28,
        Color::White => i < 4,
    }
}

/// The directions (indices of [`NEIGHBOUR`]) in which a man of `side` moves: toward square
/// 32 (0, 1) for Black, toward square 1 (2, 3) for White.
#[inline]
fn forward(side: Color) -> [usize; 2] {
    match side {
        Color::Black => [0, 1],
        Color::White => [2, 3],
    }
}

/// The square one step from bit index `i` in direction `d`, if on the board.
#[inline]
fn step(d: usize, i: u8) -> Option<u8> {
    let n = NEIGHBOUR[d][i as usize];
    (n != 0xFF).then_some(n)
}

/// The squares along the diagonal from bit index `i` in direction `d`, `i` excluded, as a
/// bitboard: `RAY[d][i]` (built from [`NEIGHBOUR`]). Along directions 0 and 1 (toward square
/// 32) bit indices increase, along 2 and 3 they decrease, so the square of a set along a ray
/// nearest to its origin is [`nearest`].
const RAY: [[Bitboard; 32]; 4] = build_rays();

const fn build_rays() -> [[Bitboard; 32]; 4] {
    let mut t = [[0; 32]; 4];
    let mut d = 0;
    while d < 4 {
        let mut i = 0;
        while i < 32 {
            let mut s = NEIGHBOUR[d][i];
            while s != 0xFF {
                t[d][i] |= 1 << s;
                s = NEIGHBOUR[d][s as usize];
            }
            i += 1;
        }
        d += 1;
    }
    t
}

/// The square (bit index) of `set` (not empty, a subset of a ray in direction `d`) nearest
/// to the ray's origin: the lowest bit toward square 32 (directions 0, 1), the highest toward
/// square 1 (2, 3).
#[inline]
fn nearest(d: usize, set: Bitboard) -> u8 {
    debug_assert!(set != 0);
    if d < 2 {
        set.trailing_zeros() as u8
    } else {
        31 - set.leading_zeros() as u8
    }
}

/// The bit indices of `set`, in increasing order.
#[inline]
fn bits(mut set: Bitboard) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        (set != 0).then(|| {
            let i = set.trailing_zeros() as u8;
            set &= set - 1;
            i
        })
    })
}

/// A capture in progress: the fixed facts of the position.
struct Capture<'a> {
    game: &'a Game,
    side: Color,
    from: u8,
    /// Opponent pieces.
    enemy: Bitboard,
    /// Opponent kings.
    enemy_kings: Bitboard,
    /// Occupied squares, the capturing piece's start square excluded (jumped pieces stay).
    occupied: Bitboard,
    start_king: bool,
}

/// The jumps made so far by a capture in progress: the jumped pieces in order and the square
/// landed on after each (bit indices), on the stack (a piece is jumped at most once, so at
/// most 32 jumps).
struct Trail {
    order: [u8; 32],
    path: [u8; 32],
    len: usize,
    /// The jumped pieces as a bitboard.
    jumped: Bitboard,
}

impl Trail {
    fn new() -> Self {
        Trail {
            order: [0; 32],
            path: [0; 32],
            len: 0,
            jumped: 0,
        }
    }
    fn push(&mut self, victim: u8, landing: u8) {
        self.order[self.len] = victim;
        self.path[self.len] = landing;
        self.len += 1;
        self.jumped |= 1 << victim;
    }
    fn pop(&mut self) {
        self.len -= 1;
        self.jumped &= !(1 << self.order[self.len]);
    }
    fn order(&self) -> &[u8] {
        &self.order[..self.len]
    }
    fn path(&self) -> &[u8] {
        &self.path[..self.len]
    }
}

/// How a capture ranks under the rules of choice ([`choose`]): fields in the Italian order of
/// precedence, so that the derived order is the Italian one (larger is preferred).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Rank {
    /// Pieces taken.
    pieces: usize,
    /// Whether the capturing piece is a king.
    by_king: bool,
    /// Kings taken.
    kings: u32,
    /// Which of the pieces taken are kings, in jump order: bit 31 - k set when the k-th piece
    /// jumped is a king (so kings taken earlier rank higher).
    kings_first: u32,
}

impl Rank {
    /// The rank of a capture by a king or not (`by_king`) jumping the bit indices `order`
    /// in order, the opponent's kings on `enemy_kings`.
    fn of(by_king: bool, order: &[u8], enemy_kings: Bitboard) -> Rank {
        let mut kings = 0;
        let mut kings_first = 0u32;
        for (k, &i) in order.iter().enumerate() {
            if enemy_kings & (1 << i) != 0 {
                kings += 1;
                kings_first |= 1 << (31 - k);
            }
        }
        Rank {
            pieces: order.len(),
            by_king,
            kings,
            kings_first,
        }
    }
}

impl Capture<'_> {
    /// The victim (bit index) of a jump from `at` in direction `d` by a piece that is a king
    /// or not, `jumped` already taken, if there is one: the first occupied square along `d`
    /// (a short piece looks only at the next square), an enemy piece not jumped yet (and not
    /// a king where a man may not take one), with an empty square just beyond it.
    #[inline]
    fn victim(&self, at: u8, d: usize, king: bool, jumped: Bitboard) -> Option<u8> {
        let flying = king && self.game.kings == KingRange::Flying;
        let victim = if flying {
            let blockers = RAY[d][at as usize] & self.occupied;
            if blockers == 0 {
                return None;
            }
            nearest(d, blockers)
        } else {
            step(d, at)?
        };
        let vb = 1u32 << victim;
        if self.enemy & vb == 0 || jumped & vb != 0 {
            return None;
        }
        if !king && !self.game.men_capture_kings && self.enemy_kings & vb != 0 {
            return None;
        }
        let beyond = step(d, victim)?;
        (self.occupied & (1 << beyond) == 0).then_some(victim)
    }

    /// The directions in which a piece that is a king or not jumps.
    #[inline]
    fn directions(&self, king: bool) -> &'static [usize] {
        if king || self.game.men_capture_backward {
            &[0, 1, 2, 3]
        } else {
            match self.side {
                Color::Black => &[0, 1],
                Color::White => &[2, 3],
            }
        }
    }

    /// Calls `f(victim, landings)` for every jump from bit index `at` by a piece that is a king
    /// or not, in direction order (bit indices; the landing squares in order along the
    /// diagonal, at least one: every empty square beyond the victim up to the next occupied
    /// one for a flying king, the one just beyond otherwise), until `f` returns true. Returns
    /// whether some call returned true. The landings live on the stack: at most 6 squares lie
    /// beyond a victim.
    fn each_jump(
        &self,
        at: u8,
        king: bool,
        jumped: Bitboard,
        mut f: impl FnMut(u8, &[u8]) -> bool,
    ) -> bool {
        let flying = king && self.game.kings == KingRange::Flying;
        for &d in self.directions(king) {
            let Some(victim) = self.victim(at, d, king, jumped) else {
                continue;
            };
            let mut landings = [0u8; 8];
            let mut n = 0;
            if flying {
                // The empty squares beyond the victim, up to the next occupied one.
                let beyond = RAY[d][victim as usize];
                let stop = beyond & self.occupied;
                let mut free = beyond;
                if stop != 0 {
                    let s = nearest(d, stop);
                    free &= !(1 << s | RAY[d][s as usize]);
                }
                while free != 0 {
                    let x = nearest(d, free);
                    landings[n] = x;
                    n += 1;
                    free &= !(1 << x);
                }
            } else {
                landings[0] = step(d, victim).expect("victim() checked the landing square");
                n = 1;
            }
            if f(victim, &landings[..n]) {
                return true;
            }
        }
        false
    }

    /// Whether a piece on bit index `at` (a king or not) has a jump, `jumped` already taken.
    #[inline]
    fn has_jump(&self, at: u8, king: bool, jumped: Bitboard) -> bool {
        self.directions(king)
            .iter()
            .any(|&d| self.victim(at, d, king, jumped).is_some())
    }

    /// Whether a piece that has just landed on `at` becomes (or stays) a king for the rest of
    /// the capture.
    #[inline]
    fn king_after(&self, at: u8, king: bool) -> bool {
        king || (self.game.crowning == Crowning::ContinuesAsKing && on_crown_row(self.side, at))
    }

    /// Continue the capture from `at` (the piece a king or not), having made the jumps of
    /// `trail`; calls `done(self, to, crowns, trail)` for each completed capture (`to`: the
    /// bit index it ends on; `crowns`: whether a man is crowned), in the order found.
    fn extend<F: FnMut(&Self, u8, bool, &Trail)>(
        &self,
        at: u8,
        king: bool,
        trail: &mut Trail,
        done: &mut F,
    ) {
        let mut any = false;
        let jumped = trail.jumped;
        self.each_jump(at, king, jumped, |victim, landings| {
            any = true;
            let jumped = jumped | 1 << victim;
            // A flying king must land where the capture goes on, if it can anywhere.
            let goes_on =
                |t: u8| !self.stops(t, king) && self.has_jump(t, self.king_after(t, king), jumped);
            let going_on = landings
                .iter()
                .filter(|&&t| goes_on(t))
                .fold(0u32, |b, &t| b | 1 << t);
            for &t in landings {
                if going_on != 0 && going_on & (1 << t) == 0 {
                    continue;
                }
                trail.push(victim, t);
                if self.stops(t, king) {
                    done(self, t, self.crowns(t, true), trail);
                } else if going_on == 0 {
                    // No jump from t (goes_on said so): the capture ends there, as extending
                    // from t would find.
                    let king = self.king_after(t, king);
                    done(self, t, self.crowns(t, king), trail);
                } else {
                    self.extend(t, self.king_after(t, king), trail, done);
                }
                trail.pop();
            }
            false
        });
        if !any && trail.len > 0 {
            done(self, at, self.crowns(at, king), trail);
        }
    }

    /// Whether a piece landing on `t` ends its move there: a man crowned under
    /// [`Crowning::EndsMove`].
    #[inline]
    fn stops(&self, t: u8, king: bool) -> bool {
        !king && self.game.crowning == Crowning::EndsMove && on_crown_row(self.side, t)
    }

    /// Whether a capture ending on `at` with the piece then a king or not (`king`) crowns a
    /// man.
    #[inline]
    fn crowns(&self, at: u8, king: bool) -> bool {
        !self.start_king
            && match self.game.crowning {
                Crowning::EndsMove | Crowning::ContinuesAsKing => king,
                Crowning::AtEndOnly => on_crown_row(self.side, at),
            }
    }

    /// Calls `done` (as [`Capture::extend`]) for every capture by this piece.
    fn each_capture<F: FnMut(&Self, u8, bool, &Trail)>(&self, done: &mut F) {
        self.extend(self.from, self.start_king, &mut Trail::new(), done);
    }

    /// The rank of the completed capture `trail` under the rules of choice.
    fn rank(&self, trail: &Trail) -> Rank {
        Rank::of(self.start_king, trail.order(), self.enemy_kings)
    }
}

/// Every capture of the side to move with its full path, before any rule of choice.
fn all_captures(game: &Game, p: &Position) -> Vec<PathMove> {
    let mut out = Vec::new();
    for c in captures_from(game, p) {
        c.each_capture(&mut |c: &Capture, _, crowns, trail: &Trail| {
            out.push(PathMove {
                from: c.from + 1,
                path: trail.path().iter().map(|&i| i + 1).collect(),
                captured: trail.order().iter().map(|&i| i + 1).collect(),
                king: c.start_king,
                crowns,
            })
        });
    }
    out
}

/// The capture facts of `p` for each piece of the side to move (in square order), whether or
/// not that piece can capture.
#[inline]
fn captures_from<'a>(game: &'a Game, p: &Position) -> impl Iterator<Item = Capture<'a>> {
    let side = p.side;
    let mine = p.pieces(side);
    let enemy = p.pieces(side.opponent());
    let kings = p.kings;
    bits(mine).map(move |from| Capture {
        game,
        side,
        from,
        enemy,
        enemy_kings: enemy & kings,
        occupied: (mine | enemy) & !(1 << from),
        start_king: kings & (1 << from) != 0,
    })
}

/// The rank of the capture `m` of `p` under the rules of choice.
fn rank_of(p: &Position, m: &PathMove) -> Rank {
    let order: Vec<u8> = m.captured.iter().map(|&s| s - 1).collect();
    Rank::of(m.king, &order, p.pieces(p.side.opponent()) & p.kings)
}

/// Keep the captures of `caps` that the variant's rule of choice allows (`rank`: how each
/// ranks), in order.
fn choose<T>(game: &Game, caps: &mut Vec<T>, rank: impl Fn(&T) -> Rank) {
    match game.choice {
        CaptureChoice::Free => {}
        CaptureChoice::MostPieces => {
            let best = caps.iter().map(|m| rank(m).pieces).max().unwrap_or(0);
            caps.retain(|m| rank(m).pieces == best);
        }
        CaptureChoice::Spanish => {
            let key = |m: &T| {
                let r = rank(m);
                (r.pieces, r.kings)
            };
            let best = caps.iter().map(key).max().unwrap_or((0, 0));
            caps.retain(|m| key(m) == best);
        }
        CaptureChoice::Italian => {
            let best = caps.iter().map(&rank).max();
            caps.retain(|m| Some(rank(m)) == best);
        }
        CaptureChoice::Czech => {
            if caps.iter().any(|m| rank(m).by_king) {
                caps.retain(|m| rank(m).by_king);
            }
        }
    }
}

/// Calls `f(from, to, king, crowns)` (bit indices; `king`: the piece is a king; `crowns`: a
/// man reaching its crowning row) for every quiet (non-capturing) move of the side to move,
/// whether or not it has a capture, in the order [`quiet_moves`] lists them, until `f`
/// returns true. Returns whether some call returned true.
#[inline]
fn each_quiet(game: &Game, p: &Position, mut f: impl FnMut(u8, u8, bool, bool) -> bool) -> bool {
    let side = p.side;
    let occupied = p.black | p.white;
    for from in bits(p.pieces(side)) {
        let king = p.kings & (1 << from) != 0;
        let all = [0, 1, 2, 3];
        let dirs: &[usize] = if king { &all } else { &forward(side) };
        for &d in dirs {
            let mut t = step(d, from);
            while let Some(x) = t {
                if occupied & (1 << x) != 0 {
                    break;
                }
                if f(from, x, king, !king && on_crown_row(side, x)) {
                    return true;
                }
                if !(king && game.kings == KingRange::Flying) {
                    break;
                }
                t = step(d, x);
            }
        }
    }
    false
}

/// Every quiet (non-capturing) move of the side to move, whether or not it has a capture.
fn quiet_moves(game: &Game, p: &Position) -> Vec<PathMove> {
    let mut out = Vec::new();
    each_quiet(game, p, |from, x, king, crowns| {
        out.push(PathMove {
            from: from + 1,
            path: vec![x + 1],
            captured: Vec::new(),
            king,
            crowns,
        });
        false
    });
    out
}

/// Whether the side to move has a capture: some piece has a first jump (every first jump
/// begins at least one complete capture, since [`Capture::extend`] completes a capture
/// wherever no further jump is found).
#[inline]
fn any_capture(game: &Game, p: &Position) -> bool {
    captures_from(game, p).any(|c| c.has_jump(c.from, c.start_king, 0))
}

/// Every legal move of the side to move of `p` under `game`: capture sequences listed
/// separately even when two take the same pieces to the same square (perft's count), one per
/// sequence of jumped pieces. Sequences that jump the same pieces in the same order from the
/// same square to the same square are one capture whatever the flying king's intermediate
/// landing squares (the first path found is kept): the convention of the published perft
/// counts of the flying-king variants (with short-range pieces the order of the jumped pieces
/// fixes the path, so this is the English convention too).
pub fn moves(game: &Game, p: &Position) -> Vec<PathMove> {
    let caps = all_captures(game, p);
    if caps.is_empty() {
        return quiet_moves(game, p);
    }
    legal_captures(game, p, caps)
}

/// The captures of `caps` (every capture of `p`, [`all_captures`]) that the rule of choice
/// allows, one per sequence of jumped pieces (as [`moves`] lists them).
fn legal_captures(game: &Game, p: &Position, mut caps: Vec<PathMove>) -> Vec<PathMove> {
    choose(game, &mut caps, |m| rank_of(p, m));
    let mut out: Vec<PathMove> = Vec::new();
    for m in caps {
        if !out
            .iter()
            .any(|o| o.from == m.from && o.to() == m.to() && o.captured == m.captured)
        {
            out.push(m);
        }
    }
    out
}

/// The legal moves with moves of the same effect ([`PathMove::same_effect`]) kept once (the
/// first path found): one move per distinct successor position.
pub fn unique_moves(game: &Game, p: &Position) -> Vec<PathMove> {
    let mut out: Vec<PathMove> = Vec::new();
    for m in moves(game, p) {
        if !out.iter().any(|o| o.same_effect(&m)) {
            out.push(m);
        }
    }
    out
}

/// The position after move `m` of the side to move of `p` (assumed legal): the captured
/// pieces removed, the piece moved (and crowned when `m.crowns`), the opponent to move.
pub fn apply(p: &Position, m: &PathMove) -> Position {
    apply_parts(p, m.from - 1, m.to() - 1, m.captured_set(), m.crowns)
}

/// [`apply`] from the move's parts: bit indices `from` and `to`, the captured pieces `cap`,
/// whether a man is crowned.
#[inline]
fn apply_parts(p: &Position, from: u8, to: u8, cap: Bitboard, crowns: bool) -> Position {
    let from = 1u32 << from;
    let to = 1u32 << to;
    let mut q = *p;
    match p.side {
        Color::Black => {
            q.black = (q.black & !from) | to;
            q.white &= !cap;
        }
        Color::White => {
            q.white = (q.white & !from) | to;
            q.black &= !cap;
        }
    }
    let was_king = p.kings & from != 0;
    q.kings &= !(from | cap);
    if was_king || crowns {
        q.kings |= to;
    }
    q.side = p.side.opponent();
    q
}

/// Leaf count of the move tree `depth` plies deep from `p` under `game` (perft): capture paths
/// counted separately, or, with `unique`, moves of the same effect counted once. `depth` 0
/// gives 1. Parallel (rayon) over the moves of the first two plies.
pub fn perft(game: &Game, p: &Position, depth: u32, unique: bool) -> u64 {
    use rayon::prelude::*;
    let list = |q: &Position| {
        if unique {
            unique_moves(game, q)
        } else {
            moves(game, q)
        }
    };
    fn serial(game: &Game, p: &Position, depth: u32, unique: bool) -> u64 {
        if depth == 0 {
            return 1;
        }
        let ms = if unique {
            unique_moves(game, p)
        } else {
            moves(game, p)
        };
        if depth == 1 {
            return ms.len() as u64;
        }
        ms.iter()
            .map(|m| serial(game, &apply(p, m), depth - 1, unique))
            .sum()
    }
    if depth <= 3 {
        return serial(game, p, depth, unique);
    }
    let mut frontier: Vec<Position> = list(p).iter().map(|m| apply(p, m)).collect();
    let next: Vec<Position> = frontier
        .iter()
        .flat_map(|q| list(q).into_iter().map(move |m| apply(q, &m)))
        .collect();
    frontier = next;
    frontier
        .par_iter()
        .map(|q| serial(game, q, depth - 2, unique))
        .sum()
}

/// The path generator as a [`Rules`] implementation for the variant whose rules id is `ID`
/// ([`game_of`]): the independent oracle of that variant (successors are
/// [`unique_moves`] applied with [`apply`]). Slow: for verification, perft and tests, not for
/// building tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Paths<const ID: u32>;

/// The [`Game`] of rules id `id`: every variant this crate knows (see
/// [`crate::rules::Variant`]).
///
/// # Panics
/// An id no variant has (a programming error: ids come from [`crate::rules::Variant`]).
pub const fn game_of(id: u32) -> Game {
    match id {
        super::english::ID => ENGLISH,
        super::giveaway::ID => super::giveaway::GAME,
        super::russian::ID => super::russian::GAME,
        super::brazilian::ID => super::brazilian::GAME,
        super::pool::ID => super::pool::GAME,
        super::italian::ID => super::italian::GAME,
        super::spanish::ID => super::spanish::GAME,
        super::czech::ID => super::czech::GAME,
        _ => panic!("unknown rules id"),
    }
}

/// English checkers as the path generator reads it (module docs of `rules::english`):
/// short kings, men capture forward only, crowning ends the move, any capture may be chosen,
/// no move loses. Its paths are checked against the published English perft counts and
/// against `movegen::Oracle`, the English oracle written earlier and separately.
pub const ENGLISH: Game = Game {
    id: super::english::ID,
    name: "english",
    kings: KingRange::Short,
    men_capture_backward: false,
    men_capture_kings: true,
    crowning: Crowning::EndsMove,
    choice: CaptureChoice::Free,
    no_move: Wld::Loss,
};

impl<const ID: u32> Paths<ID> {
    /// The rules this oracle plays by.
    pub const GAME: Game = game_of(ID);
}

impl<const ID: u32> Rules for Paths<ID> {
    const ID: u32 = ID;
    const NAME: &'static str = Self::GAME.name;

    fn crown_row(&self, side: Color) -> Bitboard {
        match side {
            Color::Black => 0xF000_0000,
            Color::White => 0x0000_000F,
        }
    }
    fn has_capture(&self, p: &Position) -> bool {
        any_capture(&Self::GAME, p)
    }
    fn has_quiet_move(&self, p: &Position) -> bool {
        each_quiet(&Self::GAME, p, |_, _, _, _| true)
    }
    fn no_move_value(&self) -> Wld {
        Self::GAME.no_move
    }
    fn for_each_successor(&self, p: &Position, mut f: impl FnMut(Position)) {
        // What unique_moves gives, without building the move lists: the quiet moves are
        // distinct (one per from and to square), so none is a repeat of another; the captures
        // are gathered as their effects (from, to, pieces taken, crowning) with their ranks,
        // in the order all_captures lists them, into a buffer of this thread's pool.
        let game = &Self::GAME;
        if !any_capture(game, p) {
            each_quiet(game, p, |from, to, _, crowns| {
                f(apply_parts(p, from, to, 0, crowns));
                false
            });
            return;
        }
        let mut caps = Scratch::take();
        for c in captures_from(game, p) {
            c.each_capture(&mut |c: &Capture, to, crowns, trail: &Trail| {
                caps.0.push(Effect {
                    from: c.from,
                    to,
                    taken: trail.jumped,
                    crowns,
                    rank: c.rank(trail),
                })
            });
        }
        choose(game, &mut caps.0, |e| e.rank);
        // One successor per effect, the first capture of each (as unique_moves keeps them).
        for (k, e) in caps.0.iter().enumerate() {
            if !caps.0[..k].iter().any(|o| o.same_effect(e)) {
                f(apply_parts(p, e.from, e.to, e.taken, e.crowns));
            }
        }
    }
}

/// What a capture does (the move's effect, which decides the successor position) and how it
/// ranks under the rules of choice.
#[derive(Clone, Copy, Debug)]
struct Effect {
    /// Bit index of the square the piece starts on.
    from: u8,
    /// Bit index of the square it ends on.
    to: u8,
    /// The pieces taken.
    taken: Bitboard,
    /// Whether a man is crowned.
    crowns: bool,
    rank: Rank,
}

impl Effect {
    /// Whether two captures lead to the same position ([`PathMove::same_effect`]).
    fn same_effect(&self, other: &Effect) -> bool {
        self.from == other.from
            && self.to == other.to
            && self.taken == other.taken
            && self.crowns == other.crowns
    }
}

thread_local! {
    /// Capture buffers of this thread, reused from position to position (no allocation per
    /// position once warm). A pool rather than one buffer: the successor callback may itself
    /// ask for successors (a search), each level taking its own buffer.
    static POOL: std::cell::RefCell<Vec<Vec<Effect>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A capture buffer taken from this thread's [`POOL`] (empty), returned to it on drop.
struct Scratch(Vec<Effect>);

impl Scratch {
    fn take() -> Scratch {
        let mut v = POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        v.clear();
        Scratch(v)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let v = std::mem::take(&mut self.0);
        POOL.with(|p| p.borrow_mut().push(v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trait's answers (built without the move lists where they can be) against their
    /// definitions from the move lists: `has_capture` is "[`all_captures`] is not empty",
    /// `has_quiet_move` "[`quiet_moves`] is not empty", and the successors are [`apply`] of
    /// each of [`unique_moves`], in that order; on random positions of 2 to 14 pieces in
    /// every game.
    fn agree<const ID: u32>() {
        let game = &Paths::<ID>::GAME;
        let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ u64::from(ID);
        let mut next = || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        let (mut captures, mut blocked) = (0, 0);
        for n in 0..4000u64 {
            let pieces = 2 + n % 13;
            let mut p = Position {
                black: 0,
                white: 0,
                kings: 0,
                side: if next() & 1 == 0 {
                    Color::Black
                } else {
                    Color::White
                },
            };
            while u64::from((p.black | p.white).count_ones()) < pieces {
                let b = 1u32 << (next() % 32);
                if (p.black | p.white) & b != 0 {
                    continue;
                }
                let r = next();
                if r & 1 == 0 {
                    p.black |= b;
                } else {
                    p.white |= b;
                }
                // Men never stand on their own crowning row.
                let crown = if r & 1 == 0 { 0xF000_0000 } else { 0xF };
                if r & 2 != 0 || b & crown != 0 {
                    p.kings |= b;
                }
            }
            let want_capture = !all_captures(game, &p).is_empty();
            let want_quiet = !quiet_moves(game, &p).is_empty();
            assert_eq!(Paths::<ID>.has_capture(&p), want_capture, "{}", p.to_fen());
            assert_eq!(Paths::<ID>.has_quiet_move(&p), want_quiet, "{}", p.to_fen());
            let want: Vec<Position> = unique_moves(game, &p)
                .iter()
                .map(|m| apply(&p, m))
                .collect();
            let mut got = Vec::new();
            Paths::<ID>.for_each_successor(&p, |q| got.push(q));
            assert_eq!(got, want, "{}", p.to_fen());
            captures += usize::from(want_capture);
            blocked += usize::from(!want_capture && !want_quiet);
        }
        // The sample holds positions of each kind.
        assert!(captures > 100 && blocked > 0, "{captures} {blocked}");
    }

    #[test]
    fn trait_answers_match_the_move_lists_in_every_game() {
        agree::<{ super::super::english::ID }>();
        agree::<{ super::super::giveaway::ID }>();
        agree::<{ super::super::russian::ID }>();
        agree::<{ super::super::brazilian::ID }>();
        agree::<{ super::super::pool::ID }>();
        agree::<{ super::super::italian::ID }>();
        agree::<{ super::super::spanish::ID }>();
        agree::<{ super::super::czech::ID }>();
    }
}
