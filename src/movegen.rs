//! The slow path generator: every legal move of English checkers with its full path, written
//! separately from the fast engine of [`crate::rules`] and kept simple, so that it can serve as
//! the independent oracle ([`Oracle`]) that `egdb verify`, the perft cross-checks and the
//! tests check the fast engine and the tables against. The game's definitions (move
//! directions, crown rows) come from [`crate::rules::english`]; the algorithms here are its
//! own.
//!
//! Two views are offered: [`Position::moves`] lists every capture *path* (what perft and
//! notation need), [`Position::unique_moves`] the de-duplicated moves (same from, to and
//! captured set counted once), which is what the database needs. [`perft`] (the fast engine's
//! perft) is re-exported here.

use crate::board::{shift, Bitboard, Bits, Color, Position, Wld, NEIGHBOUR};
pub use crate::rules::english::perft;
use crate::rules::english::{crown_row, man_directions, KING_DIRECTIONS};
use crate::rules::{Rules, Variant};

/// Most landing squares a capture path can have (a king capturing every enemy piece).
pub const MAX_PATH: usize = 12;

/// A legal move with its full path.
///
/// Squares are PDN numbers 1-32. For a simple move `path` holds just `to`; for a capture it
/// holds every landing square in order (the last equals `to`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    /// Square the piece starts on (1-32).
    pub from: u8,
    /// Square the piece ends on (1-32).
    pub to: u8,
    /// Captured pieces, bit i = square i+1 (0 for a simple move).
    pub captured: Bitboard,
    /// Whether a man is crowned by this move.
    pub crowns: bool,
    path: [u8; MAX_PATH],
    path_len: u8,
}

impl Move {
    /// Landing squares (1-32) after `from`, in order; the last is `to`.
    pub fn path(&self) -> &[u8] {
        &self.path[..self.path_len as usize]
    }
    /// Whether this move captures.
    #[inline(always)]
    pub fn is_capture(&self) -> bool {
        self.captured != 0
    }
    /// Build a simple (non-capturing) move; used by generators and tests.
    pub fn simple(from: u8, to: u8, crowns: bool) -> Move {
        let mut path = [0; MAX_PATH];
        path[0] = to;
        Move {
            from,
            to,
            captured: 0,
            crowns,
            path,
            path_len: 1,
        }
    }

    /// Build a move from its full path: the start square, the landing squares in order (the
    /// last is where the piece ends; one square for a quiet move), the captured pieces as a
    /// bitboard (bit i = square i+1; 0 for a quiet move) and whether a man is crowned. Used to
    /// carry the moves of the variants' path generator
    /// ([`crate::rules::Variant::unique_moves`]) in this type.
    ///
    /// # Panics
    /// `path` empty or longer than 12 squares (a move captures at most 12 pieces).
    pub fn from_path(from: u8, path: &[u8], captured: Bitboard, crowns: bool) -> Move {
        assert!(
            !path.is_empty() && path.len() <= MAX_PATH,
            "a move has 1 to {MAX_PATH} landing squares"
        );
        let mut p = [0; MAX_PATH];
        p[..path.len()].copy_from_slice(path);
        Move {
            from,
            to: path[path.len() - 1],
            captured,
            crowns,
            path: p,
            path_len: path.len() as u8,
        }
    }
}

/// The two directions (indices of [`shift`]) a man of `side` moves in, and their inverses.
#[inline(always)]
fn man_dir_pair(side: Color) -> ([usize; 2], [usize; 2]) {
    let m = man_directions(side);
    let lo = m.trailing_zeros() as usize;
    let hi = 7 - m.leading_zeros() as usize;
    ([lo, hi], [lo ^ 2, hi ^ 2])
}

/// Directions (indices into [`NEIGHBOUR`]) a man of `side` moves in.
#[inline(always)]
const fn man_dirs(side: Color) -> u8 {
    man_directions(side)
}

impl Position {
    /// Bitboard of the side to move's pieces that can capture (bit i = square i+1).
    #[inline]
    pub fn capturers(&self) -> Bitboard {
        let me = self.pieces(self.side);
        let opp = self.pieces(self.side.opponent());
        let empty = self.empty();
        let kings = me & self.kings;
        let mut out = 0;
        let ([f0, f1], [b0, b1]) = man_dir_pair(self.side);
        // A piece at x captures forward along f if f(x) is an enemy and f(f(x)) is empty.
        // Work backwards from the empty landing squares.
        out |= shift(shift(empty, b0) & opp, b0) & me;
        out |= shift(shift(empty, b1) & opp, b1) & me;
        if kings != 0 {
            out |= shift(shift(empty, f0) & opp, f0) & kings;
            out |= shift(shift(empty, f1) & opp, f1) & kings;
        }
        out
    }

    /// Whether the side to move has a capture (and so must capture).
    #[inline]
    pub fn has_capture(&self) -> bool {
        self.capturers() != 0
    }

    /// Every legal move with its full path (capture paths counted separately even when two
    /// paths take the same pieces to the same square). Appends to `out` (cleared first).
    pub fn generate_moves(&self, out: &mut Vec<Move>) {
        out.clear();
        let capturers = self.capturers();
        if capturers != 0 {
            self.gen_captures(capturers, |m| out.push(m));
        } else {
            self.gen_simple(|m| out.push(m));
        }
    }

    /// Every legal move with its full path, as a new vector. See [`Position::generate_moves`].
    pub fn moves(&self) -> Vec<Move> {
        let mut v = Vec::with_capacity(32);
        self.generate_moves(&mut v);
        v
    }

    /// De-duplicated legal moves: capture paths with the same from, to and captured set are
    /// kept once (the first path found). Simple moves are never duplicates.
    pub fn unique_moves(&self) -> Vec<Move> {
        let mut v = self.moves();
        dedup_moves(&mut v);
        v
    }

    /// Number of legal moves counting capture paths separately (perft's leaf count).
    pub fn count_moves(&self) -> u64 {
        let capturers = self.capturers();
        if capturers != 0 {
            let mut n = 0u64;
            self.gen_captures(capturers, |_| n += 1);
            n
        } else {
            self.count_simple()
        }
    }

    /// Number of de-duplicated legal moves (same from, to and captured set counted once).
    pub fn count_unique_moves(&self) -> u64 {
        let capturers = self.capturers();
        if capturers != 0 {
            let mut v = Vec::with_capacity(16);
            self.gen_captures(capturers, |m| v.push(m));
            dedup_moves(&mut v);
            v.len() as u64
        } else {
            self.count_simple()
        }
    }

    #[inline]
    fn count_simple(&self) -> u64 {
        let me = self.pieces(self.side);
        let empty = self.empty();
        let kings = me & self.kings;
        let ([f0, f1], [b0, b1]) = man_dir_pair(self.side);
        let mut n = (shift(me, f0) & empty).count_ones() + (shift(me, f1) & empty).count_ones();
        if kings != 0 {
            n += (shift(kings, b0) & empty).count_ones() + (shift(kings, b1) & empty).count_ones();
        }
        n as u64
    }

    fn gen_simple(&self, mut emit: impl FnMut(Move)) {
        let me = self.pieces(self.side);
        let empty = self.empty();
        let kings = me & self.kings;
        let crown = crown_row(self.side);
        // Directions as NEIGHBOUR indices: 0 up A, 1 up B, 2 down A, 3 down B; inverse = d ^ 2.
        for d in 0..4usize {
            let movers = if man_dirs(self.side) & (1 << d) != 0 {
                me
            } else {
                kings
            };
            if movers == 0 {
                continue;
            }
            let targets = shift(movers, d) & empty;
            for t in Bits(targets) {
                let f = NEIGHBOUR[d ^ 2][t as usize];
                let is_man = kings & (1 << f) == 0;
                emit(Move::simple(
                    f + 1,
                    t as u8 + 1,
                    is_man && crown & (1 << t) != 0,
                ));
            }
        }
    }

    fn gen_captures(&self, capturers: Bitboard, mut emit: impl FnMut(Move)) {
        let me = self.pieces(self.side);
        let opp = self.pieces(self.side.opponent());
        for f in Bits(capturers) {
            let is_king = self.kings & (1 << f) != 0;
            let dirs = if is_king {
                KING_DIRECTIONS
            } else {
                man_dirs(self.side)
            };
            let empty = !(me | opp) | (1 << f);
            let mut st = JumpState {
                from: f as u8,
                opp,
                empty,
                crown: if is_king { 0 } else { crown_row(self.side) },
                dirs,
                path: [0; MAX_PATH],
            };
            st.jump(f as usize, 0, 0, &mut emit);
        }
    }

    /// Play `m` (assumed legal here; see `crate::notation` for checked parsing) and return the
    /// new position with the opponent to move.
    #[inline]
    pub fn apply(&self, m: &Move) -> Position {
        let from = 1u32 << (m.from - 1);
        let to = 1u32 << (m.to - 1);
        let was_king = self.kings & from != 0;
        let mut p = *self;
        match self.side {
            Color::Black => {
                p.black = (p.black & !from) | to;
                p.white &= !m.captured;
            }
            Color::White => {
                p.white = (p.white & !from) | to;
                p.black &= !m.captured;
            }
        }
        p.kings &= !(from | m.captured);
        if was_king || m.crowns {
            p.kings |= to;
        }
        p.side = self.side.opponent();
        p
    }
}

/// The moves of the variants, as [`Move`] values (an inherent impl of
/// [`crate::rules::Variant`] written here: `rules` sits below `movegen`).
impl Variant {
    /// Every legal move of the side to move of `p` under this variant, with its full path, as
    /// `egdb moves` lists them: capture sequences listed separately even when two take the
    /// same pieces to the same square (perft's count). English and giveaway: the English move
    /// generator ([`Position::moves`]); the others: the variant's path generator
    /// ([`crate::rules::paths::moves`]: flying kings, backward captures of men, majority and
    /// precedence rules, crowning during a capture). Empty when the side to move has no move
    /// (the terminal rule, [`Variant::no_move_value`], decides the game).
    pub fn moves(self, p: &Position) -> Vec<Move> {
        match self {
            Variant::English | Variant::Giveaway => p.moves(),
            v => crate::rules::paths::moves(&v.game(), p)
                .iter()
                .map(to_move)
                .collect(),
        }
    }

    /// [`Variant::moves`] with moves of the same effect (same from and to squares, captured
    /// pieces and crowning: the same resulting position) listed once, the first path found:
    /// one move per successor position. English and giveaway: [`Position::unique_moves`];
    /// the others [`crate::rules::paths::unique_moves`].
    pub fn unique_moves(self, p: &Position) -> Vec<Move> {
        match self {
            Variant::English | Variant::Giveaway => p.unique_moves(),
            v => crate::rules::paths::unique_moves(&v.game(), p)
                .iter()
                .map(to_move)
                .collect(),
        }
    }
}

/// A path generator's move as a [`Move`] (the type the front ends print and apply).
fn to_move(m: &crate::rules::paths::PathMove) -> Move {
    Move::from_path(m.from, &m.path, m.captured_set(), m.crowns)
}

struct JumpState {
    from: u8,
    opp: Bitboard,
    empty: Bitboard,
    crown: Bitboard,
    dirs: u8,
    path: [u8; MAX_PATH],
}

impl JumpState {
    fn jump(&mut self, at: usize, depth: usize, captured: Bitboard, emit: &mut impl FnMut(Move)) {
        let mut any = false;
        #[allow(clippy::needless_range_loop)] // d is a direction, also tested against `dirs`
        for d in 0..4usize {
            if self.dirs & (1 << d) == 0 {
                continue;
            }
            let m = NEIGHBOUR[d][at];
            if m == 0xFF {
                continue;
            }
            let mb = 1u32 << m;
            if self.opp & mb == 0 || captured & mb != 0 {
                continue;
            }
            let t = NEIGHBOUR[d][m as usize];
            if t == 0xFF || self.empty & (1u32 << t) == 0 {
                continue;
            }
            any = true;
            let cap = captured | mb;
            if depth >= MAX_PATH {
                // Unreachable with at most 12 enemy pieces; stop rather than overflow.
                continue;
            }
            self.path[depth] = t + 1;
            if self.crown & (1u32 << t) != 0 {
                emit(self.make(t, depth + 1, cap, true));
            } else {
                self.jump(t as usize, depth + 1, cap, emit);
            }
        }
        if !any && depth > 0 {
            emit(self.make(at as u8, depth, captured, false));
        }
    }

    fn make(&self, to: u8, len: usize, captured: Bitboard, crowns: bool) -> Move {
        Move {
            from: self.from + 1,
            to: to + 1,
            captured,
            crowns,
            path: self.path,
            path_len: len as u8,
        }
    }
}

/// Whether two moves are the same for the database: same from, to and captured set (two
/// capture paths may differ only in the order of their landing squares).
#[inline(always)]
fn same_move(a: &Move, b: &Move) -> bool {
    a.from == b.from && a.to == b.to && a.captured == b.captured
}

/// Remove moves with the same (from, to, captured) as an earlier move, keeping order.
pub fn dedup_moves(v: &mut Vec<Move>) {
    let mut i = 0;
    while i < v.len() {
        if v[..i].iter().any(|m| same_move(m, &v[i])) {
            v.remove(i);
        } else {
            i += 1;
        }
    }
}

/// Reference perft through [`Position::generate_moves`], `dedup_moves` and
/// [`Position::apply`]: slower than [`perft`] but built on the path generator, so the two
/// cross-check each other. Same arguments and result as [`perft`].
pub fn perft_by_moves(pos: &Position, depth: u32, unique: bool) -> u64 {
    let mut bufs: Vec<Vec<Move>> = (0..depth.max(1)).map(|_| Vec::with_capacity(32)).collect();
    perft_rec(pos, depth, unique, &mut bufs)
}

fn perft_rec(pos: &Position, depth: u32, unique: bool, bufs: &mut [Vec<Move>]) -> u64 {
    match depth {
        0 => 1,
        1 => {
            if unique {
                pos.count_unique_moves()
            } else {
                pos.count_moves()
            }
        }
        _ => {
            let (buf, rest) = bufs.split_first_mut().expect("one buffer per ply");
            pos.generate_moves(buf);
            if unique {
                dedup_moves(buf);
            }
            let mut n = 0;
            for m in buf.iter() {
                n += perft_rec(&pos.apply(m), depth - 1, unique, rest);
            }
            n
        }
    }
}

/// Parallel perft with rayon: the tree is split at the first plies and the subtrees are
/// counted on all threads of the current rayon pool. Same result as [`perft`].
pub fn perft_parallel(pos: &Position, depth: u32, unique: bool) -> u64 {
    use rayon::prelude::*;
    if depth <= 5 {
        return perft(pos, depth, unique);
    }
    // Expand plies until there are enough independent work units (or 3 plies).
    let mut frontier = vec![*pos];
    let mut d = depth;
    while d > 4 && frontier.len() < 256 && depth - d < 3 {
        let mut next = Vec::new();
        for p in &frontier {
            let mut v = p.moves();
            if unique {
                dedup_moves(&mut v);
            }
            next.extend(v.iter().map(|m| p.apply(m)));
        }
        frontier = next;
        d -= 1;
    }
    frontier.par_iter().map(|p| perft(p, d, unique)).sum()
}

/// English checkers computed by the slow path generator of this module: the independent
/// oracle. Implements [`Rules`] (not [`crate::rules::Retro`]) so that `egdb verify` and capture
/// resolution can run on it without touching the fast engine. Successors are
/// [`Position::unique_moves`] applied with [`Position::apply`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Oracle;

impl Rules for Oracle {
    const ID: u32 = crate::rules::english::ID;
    const NAME: &'static str = "english (path generator)";

    fn crown_row(&self, side: Color) -> Bitboard {
        crown_row(side)
    }
    fn has_capture(&self, p: &Position) -> bool {
        p.capturers() != 0
    }
    fn has_quiet_move(&self, p: &Position) -> bool {
        // The count of the reference perft's leaves (checked against published counts,
        // tests/perft.rs).
        p.count_simple() != 0
    }
    fn no_move_value(&self) -> Wld {
        // English checkers: a side without a move (or without pieces) loses.
        Wld::Loss
    }
    fn for_each_successor(&self, p: &Position, mut f: impl FnMut(Position)) {
        // The successors of `unique_moves`, in its order. Simple moves are never duplicates,
        // so they go to `f` as generated, without a list (the list and its de-duplication
        // were a seventh of `egdb verify`'s time).
        let capturers = p.capturers();
        if capturers == 0 {
            p.gen_simple(|m| f(p.apply(&m)));
            return;
        }
        // The de-duplicated capture moves (as `dedup_moves` keeps them: the first of each
        // from, to and captured set), listed on the stack (a heap list per capture position
        // was 2% of `egdb verify`'s instructions in malloc and free).
        let mut v: smallvec::SmallVec<[Move; 16]> = smallvec::SmallVec::new();
        p.gen_captures(capturers, |m| {
            if !v.iter().any(|o| same_move(o, &m)) {
                v.push(m);
            }
        });
        for m in &v {
            f(p.apply(m));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_has_seven_moves() {
        assert_eq!(Position::START.moves().len(), 7);
        assert_eq!(perft(&Position::START, 4, false), 1469);
    }

    #[test]
    fn oracle_and_fast_engine_agree_on_successors() {
        use crate::rules::English;
        let mut frontier = vec![
            Position::START,
            Position::from_fen("W:WK6:B9,10,17,18").unwrap(),
        ];
        for _ in 0..4 {
            let mut next = Vec::new();
            for p in &frontier {
                let mut a = Vec::new();
                let mut b = Vec::new();
                Oracle.for_each_successor(p, |q| a.push(q));
                English.for_each_successor(p, |q| b.push(q));
                a.sort_by_key(|q| (q.black, q.white, q.kings));
                b.sort_by_key(|q| (q.black, q.white, q.kings));
                assert_eq!(a, b, "{}", p.to_fen());
                assert_eq!(Oracle.has_capture(p), English.has_capture(p));
                assert_eq!(Oracle.has_quiet_move(p), English.has_quiet_move(p));
                next.extend(a);
            }
            frontier = next;
        }
    }
}
