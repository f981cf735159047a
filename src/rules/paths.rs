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
fn on_crown_row(side: Color, i: u8) -> bool {
    match side {
        Color::Black => i >= 28,
        Color::White => i < 4,
    }
}

/// The directions (indices of [`NEIGHBOUR`]) in which a man of `side` moves: toward square
/// 32 (0, 1) for Black, toward square 1 (2, 3) for White.
fn forward(side: Color) -> [usize; 2] {
    match side {
        Color::Black => [0, 1],
        Color::White => [2, 3],
    }
}

/// The square one step from bit index `i` in direction `d`, if on the board.
fn step(d: usize, i: u8) -> Option<u8> {
    let n = NEIGHBOUR[d][i as usize];
    (n != 0xFF).then_some(n)
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

impl Capture<'_> {
    /// Calls `f(victim, landings)` for every jump from bit index `at` by a piece that is a king
    /// or not, in direction order (bit indices; the landing squares in order along the
    /// diagonal, at least one), until `f` returns true. Returns whether some call returned
    /// true. The landings live on the stack: at most 6 squares lie beyond a victim.
    fn each_jump(
        &self,
        at: u8,
        king: bool,
        jumped: Bitboard,
        mut f: impl FnMut(u8, &[u8]) -> bool,
    ) -> bool {
        let all = [0, 1, 2, 3];
        let dirs: &[usize] = if king || self.game.men_capture_backward {
            &all
        } else {
            &forward(self.side)
        };
        let flying = king && self.game.kings == KingRange::Flying;
        for &d in dirs {
            // The first occupied square along d (a short piece looks only at the next one).
            let mut s = step(d, at);
            if flying {
                while let Some(x) = s {
                    if self.occupied & (1 << x) != 0 {
                        break;
                    }
                    s = step(d, x);
                }
            }
            let Some(victim) = s else { continue };
            let vb = 1u32 << victim;
            if self.enemy & vb == 0 || jumped & vb != 0 {
                continue;
            }
            if !king && !self.game.men_capture_kings && self.enemy_kings & vb != 0 {
                continue;
            }
            let mut landings = [0u8; 8];
            let mut n = 0;
            let mut t = step(d, victim);
            while let Some(x) = t {
                if self.occupied & (1 << x) != 0 {
                    break;
                }
                landings[n] = x;
                n += 1;
                if !flying {
                    break;
                }
                t = step(d, x);
            }
            if n > 0 && f(victim, &landings[..n]) {
                return true;
            }
        }
        false
    }

    /// Whether a piece on bit index `at` (a king or not) has a jump, `jumped` already taken.
    fn has_jump(&self, at: u8, king: bool, jumped: Bitboard) -> bool {
        self.each_jump(at, king, jumped, |_, _| true)
    }

    /// Whether a piece that has just landed on `at` becomes (or stays) a king for the rest of
    /// the capture.
    fn king_after(&self, at: u8, king: bool) -> bool {
        king || (self.game.crowning == Crowning::ContinuesAsKing && on_crown_row(self.side, at))
    }

    /// Continue the capture from `at` (the piece a king or not), having jumped `order` (bit
    /// indices, in order) and landed on `path`; completed moves go to `out`.
    fn extend(
        &self,
        at: u8,
        king: bool,
        order: &mut Vec<u8>,
        path: &mut Vec<u8>,
        out: &mut Vec<PathMove>,
    ) {
        let jumped = order.iter().fold(0u32, |b, &i| b | 1 << i);
        let mut any = false;
        self.each_jump(at, king, jumped, |victim, landings| {
            any = true;
            order.push(victim);
            let jumped = jumped | 1 << victim;
            // A flying king must land where the capture goes on, if it can anywhere.
            let goes_on =
                |t: u8| !self.stops(t, king) && self.has_jump(t, self.king_after(t, king), jumped);
            let some_go_on = landings.iter().any(|&t| goes_on(t));
            for &t in landings {
                if some_go_on && !goes_on(t) {
                    continue;
                }
                path.push(t + 1);
                if self.stops(t, king) {
                    self.emit(t, true, order, path, out);
                } else {
                    self.extend(t, self.king_after(t, king), order, path, out);
                }
                path.pop();
            }
            order.pop();
            false
        });
        if !any && !order.is_empty() {
            self.emit(at, king, order, path, out);
        }
    }

    /// Whether a piece landing on `t` ends its move there: a man crowned under
    /// [`Crowning::EndsMove`].
    fn stops(&self, t: u8, king: bool) -> bool {
        !king && self.game.crowning == Crowning::EndsMove && on_crown_row(self.side, t)
    }

    fn emit(&self, at: u8, king: bool, order: &[u8], path: &[u8], out: &mut Vec<PathMove>) {
        let crowns = !self.start_king
            && match self.game.crowning {
                Crowning::EndsMove | Crowning::ContinuesAsKing => king,
                Crowning::AtEndOnly => on_crown_row(self.side, at),
            };
        out.push(PathMove {
            from: self.from + 1,
            path: path.to_vec(),
            captured: order.iter().map(|&i| i + 1).collect(),
            king: self.start_king,
            crowns,
        });
    }
}

/// Every capture of the side to move with its full path, before any rule of choice.
fn all_captures(game: &Game, p: &Position) -> Vec<PathMove> {
    let mut out = Vec::new();
    for c in captures_from(game, p) {
        c.extend(
            c.from,
            c.start_king,
            &mut Vec::new(),
            &mut Vec::new(),
            &mut out,
        );
    }
    out
}

/// The capture facts of `p` for each piece of the side to move (in square order), whether or
/// not that piece can capture.
fn captures_from<'a>(game: &'a Game, p: &Position) -> impl Iterator<Item = Capture<'a>> {
    let side = p.side;
    let mine = p.pieces(side);
    let enemy = p.pieces(side.opponent());
    let kings = p.kings;
    (0..32u8)
        .filter(move |&from| mine & (1 << from) != 0)
        .map(move |from| Capture {
            game,
            side,
            from,
            enemy,
            enemy_kings: enemy & kings,
            occupied: (mine | enemy) & !(1 << from),
            start_king: kings & (1 << from) != 0,
        })
}

/// The Italian order of a capture (larger is preferred): pieces taken, taken by a king, kings
/// taken, then the kings taken first (bit 31 - k set when the k-th piece jumped is a king).
fn italian_key(p: &Position, m: &PathMove) -> (usize, bool, u32, u32) {
    let mut kings = 0;
    let mut order = 0u32;
    for (k, &s) in m.captured.iter().enumerate() {
        if p.kings & (1 << (s - 1)) != 0 {
            kings += 1;
            order |= 1 << (31 - k);
        }
    }
    (m.captured.len(), m.king, kings, order)
}

/// Keep the captures the variant's rule of choice allows.
fn choose(game: &Game, p: &Position, mut caps: Vec<PathMove>) -> Vec<PathMove> {
    let kings_taken = |m: &PathMove| {
        m.captured
            .iter()
            .filter(|&&s| p.kings & (1 << (s - 1)) != 0)
            .count()
    };
    match game.choice {
        CaptureChoice::Free => {}
        CaptureChoice::MostPieces => {
            let best = caps.iter().map(|m| m.captured.len()).max().unwrap_or(0);
            caps.retain(|m| m.captured.len() == best);
        }
        CaptureChoice::Spanish => {
            let key = |m: &PathMove| (m.captured.len(), kings_taken(m));
            let best = caps.iter().map(key).max().unwrap_or((0, 0));
            caps.retain(|m| key(m) == best);
        }
        CaptureChoice::Italian => {
            let best = caps.iter().map(|m| italian_key(p, m)).max();
            caps.retain(|m| Some(italian_key(p, m)) == best);
        }
        CaptureChoice::Czech => {
            if caps.iter().any(|m| m.king) {
                caps.retain(|m| m.king);
            }
        }
    }
    caps
}

/// Calls `f(from, to, king, crowns)` (bit indices; `king`: the piece is a king; `crowns`: a
/// man reaching its crowning row) for every quiet (non-capturing) move of the side to move,
/// whether or not it has a capture, in the order [`quiet_moves`] lists them, until `f`
/// returns true. Returns whether some call returned true.
fn each_quiet(game: &Game, p: &Position, mut f: impl FnMut(u8, u8, bool, bool) -> bool) -> bool {
    let side = p.side;
    let mine = p.pieces(side);
    let occupied = p.black | p.white;
    for from in 0..32u8 {
        if mine & (1 << from) == 0 {
            continue;
        }
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
/// begins at least one complete capture, since [`Capture::extend`] emits a capture wherever
/// no further jump is found).
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
fn legal_captures(game: &Game, p: &Position, caps: Vec<PathMove>) -> Vec<PathMove> {
    let mut out: Vec<PathMove> = Vec::new();
    for m in choose(game, p, caps) {
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
        // What unique_moves gives, without building the quiet moves: those are distinct
        // (one per from and to square), so none is a repeat of another.
        let game = &Self::GAME;
        let caps = all_captures(game, p);
        if caps.is_empty() {
            each_quiet(game, p, |from, to, _, crowns| {
                f(apply_parts(p, from, to, 0, crowns));
                false
            });
            return;
        }
        let mut seen: Vec<PathMove> = Vec::new();
        for m in legal_captures(game, p, caps) {
            if !seen.iter().any(|o| o.same_effect(&m)) {
                f(apply(p, &m));
                seen.push(m);
            }
        }
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
