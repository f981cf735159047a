//! English checkers (WCDF / American): the definitions of the game and the fast engine.
//!
//! Rules: men move and capture one square diagonally forward; kings move and capture one
//! square in all four diagonal directions (no flying kings). Captures are compulsory, any
//! capture may be chosen (no majority rule), a capture must be continued while the capturing
//! piece can jump again, no piece is jumped twice, and a man that reaches its crowning row is
//! crowned and its move ends there, even in the middle of a capture. A side with no legal move
//! (or no pieces) loses. Black moves first; Black men move toward square 32 and crown on
//! 29-32, White men toward square 1 and crown on 1-4.
//!
//! Directions are numbered as in [`crate::board::shift`]: 0 = up A, 1 = up B (toward square
//! 32), 2 = down A, 3 = down B (toward square 1).

use super::{Retro, Rules};
use crate::board::{Bitboard, Color, Position, Wld};

/// Rules id of English checkers in table file headers.
pub const ID: u32 = 1;
/// The crowning rows (Black's: squares 29-32, White's: squares 1-4), the board's far rows,
/// defined with the board ([`crate::board`] sits below the rules).
pub use crate::board::{BLACK_CROWN_ROW, WHITE_CROWN_ROW};
/// Directions a king moves and captures in (bit d = direction d): all four.
pub const KING_DIRECTIONS: u8 = 0b1111;

/// Directions (bit d = direction d of [`crate::board::shift`]) a man of `side` moves and
/// captures in: Black up (0, 1), White down (2, 3).
#[inline(always)]
pub const fn man_directions(side: Color) -> u8 {
    match side {
        Color::Black => 0b0011,
        Color::White => 0b1100,
    }
}

/// The crowning row of `side`'s men.
#[inline(always)]
pub const fn crown_row(side: Color) -> Bitboard {
    match side {
        Color::Black => BLACK_CROWN_ROW,
        Color::White => WHITE_CROWN_ROW,
    }
}

/// English checkers through the fast bitboard engine. See the module docs for the rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct English;

impl Rules for English {
    const ID: u32 = ID;
    const NAME: &'static str = "english";

    #[inline(always)]
    fn crown_row(&self, side: Color) -> Bitboard {
        crown_row(side)
    }

    #[inline(always)]
    fn has_capture(&self, p: &Position) -> bool {
        match p.side {
            Color::Black => fast::capturers::<fast::B>(p.black, p.white, p.kings) != 0,
            Color::White => fast::capturers::<fast::W>(p.white, p.black, p.kings) != 0,
        }
    }

    #[inline(always)]
    fn has_quiet_move(&self, p: &Position) -> bool {
        match p.side {
            Color::Black => fast::has_quiet::<fast::B>(p.black, p.white, p.kings),
            Color::White => fast::has_quiet::<fast::W>(p.white, p.black, p.kings),
        }
    }

    #[inline(always)]
    fn no_move_value(&self) -> Wld {
        Wld::Loss
    }

    #[inline(always)]
    fn for_each_successor(&self, p: &Position, f: impl FnMut(Position)) {
        p.for_each_successor(f)
    }
}

impl Retro for English {
    #[inline(always)]
    fn for_each_quiet_unmove(&self, after: &Position, mut f: impl FnMut(Bitboard, Bitboard, bool)) {
        let empty = after.empty();
        match after.side.opponent() {
            Color::Black => fast::quiet_unmoves::<fast::B>(after.black, after.kings, empty, &mut f),
            Color::White => fast::quiet_unmoves::<fast::W>(after.white, after.kings, empty, &mut f),
        }
    }

    #[inline(always)]
    fn count_quiet_moves(&self, p: &Position, from: Bitboard) -> u32 {
        match p.side {
            Color::Black => fast::count_quiet::<fast::B>(p.black, p.white, p.kings, from),
            Color::White => fast::count_quiet::<fast::W>(p.white, p.black, p.kings, from),
        }
    }

    #[inline(always)]
    fn for_each_quiet_successor(&self, p: &Position, from: Bitboard, mut f: impl FnMut(Position)) {
        match p.side {
            Color::Black => fast::simple_children_from::<fast::B>(
                p.black,
                p.white,
                p.kings,
                from,
                &mut |me, opp, k| f(after_move(Color::Black, me, opp, k)),
            ),
            Color::White => fast::simple_children_from::<fast::W>(
                p.white,
                p.black,
                p.kings,
                from,
                &mut |me, opp, k| f(after_move(Color::White, me, opp, k)),
            ),
        }
    }
}

/// Count leaf nodes of the game tree `depth` plies deep (perft), single-threaded, with the
/// fast bitboard engine below (no [`crate::Move`] values are built; the last ply is bulk-counted).
///
/// `unique = false` counts capture paths (the published convention of Fierz and Bik; start
/// position depth 11 = 85,242,128); `unique = true` merges moves with the same from, to and
/// captured set (they lead to the same position). `depth = 0` gives 1.
pub fn perft(pos: &Position, depth: u32, unique: bool) -> u64 {
    match (pos.side, unique) {
        (Color::Black, false) => {
            fast::perft::<fast::B, false>(pos.black, pos.white, pos.kings, depth)
        }
        (Color::White, false) => {
            fast::perft::<fast::W, false>(pos.white, pos.black, pos.kings, depth)
        }
        (Color::Black, true) => {
            fast::perft::<fast::B, true>(pos.black, pos.white, pos.kings, depth)
        }
        (Color::White, true) => {
            fast::perft::<fast::W, true>(pos.white, pos.black, pos.kings, depth)
        }
    }
}

/// The position after a move of `mover`, whose pieces are then `me`, the opponent's `opp` and
/// the kings of both `kings` (bitboards, bit i = square i+1): the opponent to move.
#[inline(always)]
fn after_move(mover: Color, me: Bitboard, opp: Bitboard, kings: Bitboard) -> Position {
    let (black, white) = match mover {
        Color::Black => (me, opp),
        Color::White => (opp, me),
    };
    Position {
        black,
        white,
        kings,
        side: mover.opponent(),
    }
}

impl Position {
    /// Call `f` with the position after each de-duplicated legal move (the opponent to move),
    /// without building [`crate::Move`] values or allocating except when a position has more than 32
    /// distinct captures. Visits the same set as applying each of [`Position::unique_moves`],
    /// possibly in another order.
    pub fn for_each_successor(&self, mut f: impl FnMut(Position)) {
        match self.side {
            Color::Black => fast::successors::<fast::B>(
                self.black,
                self.white,
                self.kings,
                &mut |me, opp, k| f(after_move(Color::Black, me, opp, k)),
            ),
            Color::White => fast::successors::<fast::W>(
                self.white,
                self.black,
                self.kings,
                &mut |me, opp, k| f(after_move(Color::White, me, opp, k)),
            ),
        }
    }

    /// Successor positions of every de-duplicated legal move (the opponent is then to move),
    /// through the fast engine of [`Position::for_each_successor`] (same set as applying each of
    /// [`Position::unique_moves`]; order: captures by capturing square, else simple moves by
    /// direction then target square).
    pub fn successors(&self) -> Vec<Position> {
        let mut v = Vec::with_capacity(16);
        self.for_each_successor(|q| v.push(q));
        v
    }
}

/// Bitboard engine specialised by colour at compile time. Positions are `(me, opp, kings)`
/// from the side to move's view; children are returned with `me` still the mover's pieces.
mod fast {
    use super::{BLACK_CROWN_ROW, WHITE_CROWN_ROW};
    use crate::board::{down_a, down_b, up_a, up_b, Bitboard};

    /// Colour-specific directions.
    pub(super) trait Side {
        type Other: Side;
        const CROWN: Bitboard;
        fn fa(b: Bitboard) -> Bitboard;
        fn fb(b: Bitboard) -> Bitboard;
        fn ba(b: Bitboard) -> Bitboard;
        fn bb(b: Bitboard) -> Bitboard;
    }
    /// Black to move: forward is toward square 32.
    pub(super) struct B;
    /// White to move: forward is toward square 1.
    pub(super) struct W;
    impl Side for B {
        type Other = W;
        const CROWN: Bitboard = BLACK_CROWN_ROW;
        #[inline(always)]
        fn fa(b: Bitboard) -> Bitboard {
            up_a(b)
        }
        #[inline(always)]
        fn fb(b: Bitboard) -> Bitboard {
            up_b(b)
        }
        #[inline(always)]
        fn ba(b: Bitboard) -> Bitboard {
            down_a(b)
        }
        #[inline(always)]
        fn bb(b: Bitboard) -> Bitboard {
            down_b(b)
        }
    }
    impl Side for W {
        type Other = B;
        const CROWN: Bitboard = WHITE_CROWN_ROW;
        #[inline(always)]
        fn fa(b: Bitboard) -> Bitboard {
            down_a(b)
        }
        #[inline(always)]
        fn fb(b: Bitboard) -> Bitboard {
            down_b(b)
        }
        #[inline(always)]
        fn ba(b: Bitboard) -> Bitboard {
            up_a(b)
        }
        #[inline(always)]
        fn bb(b: Bitboard) -> Bitboard {
            up_b(b)
        }
    }

    /// Pieces of the mover that can capture.
    #[inline(always)]
    pub(super) fn capturers<S: Side>(me: Bitboard, opp: Bitboard, kings: Bitboard) -> Bitboard {
        let empty = !(me | opp);
        let mut out = (S::ba(S::ba(empty) & opp) | S::bb(S::bb(empty) & opp)) & me;
        let k = me & kings;
        if k != 0 {
            out |= (S::fa(S::fa(empty) & opp) | S::fb(S::fb(empty) & opp)) & k;
        }
        out
    }

    /// Number of simple moves (valid when there is no capture).
    #[inline(always)]
    fn count_simple<S: Side>(me: Bitboard, opp: Bitboard, kings: Bitboard) -> u64 {
        let empty = !(me | opp);
        let mut n = (S::fa(me) & empty).count_ones() + (S::fb(me) & empty).count_ones();
        let k = me & kings;
        if k != 0 {
            n += (S::ba(k) & empty).count_ones() + (S::bb(k) & empty).count_ones();
        }
        n as u64
    }

    /// Continue a capture from `at` (one bit). `left`: enemy pieces not yet jumped; `empty`:
    /// empty squares with the start square counted empty. Calls `emit(to, captured, crowned)`
    /// once per completed path. Must only be called where at least one jump exists when
    /// `captured == 0`.
    #[inline]
    fn jumps<S: Side, F: FnMut(Bitboard, Bitboard, bool)>(
        at: Bitboard,
        left: Bitboard,
        empty: Bitboard,
        king: bool,
        captured: Bitboard,
        emit: &mut F,
    ) {
        let mut any = false;
        macro_rules! dir {
            ($sh:path) => {{
                let m = $sh(at) & left;
                if m != 0 {
                    let t = $sh(m) & empty;
                    if t != 0 {
                        any = true;
                        let cap = captured | m;
                        if !king && t & S::CROWN != 0 {
                            emit(t, cap, true);
                        } else {
                            jumps::<S, F>(t, left & !m, empty, king, cap, emit);
                        }
                    }
                }
            }};
        }
        dir!(S::fa);
        dir!(S::fb);
        if king {
            dir!(S::ba);
            dir!(S::bb);
        }
        if !any {
            emit(at, captured, false);
        }
    }

    /// Number of capture paths continuing from `at` (one bit); as [`jumps`] without building
    /// results. Returns 1 when no jump continues.
    #[inline]
    fn count_jumps<S: Side>(at: Bitboard, left: Bitboard, empty: Bitboard, king: bool) -> u64 {
        let mut n = 0u64;
        macro_rules! dir {
            ($sh:path) => {{
                let m = $sh(at) & left;
                if m != 0 {
                    let t = $sh(m) & empty;
                    if t != 0 {
                        n += if !king && t & S::CROWN != 0 {
                            1
                        } else {
                            count_jumps::<S>(t, left & !m, empty, king)
                        };
                    }
                }
            }};
        }
        dir!(S::fa);
        dir!(S::fb);
        if king {
            dir!(S::ba);
            dir!(S::bb);
        }
        n.max(1)
    }

    /// Number of capture paths of the mover (`caps` = its capturers).
    ///
    /// Men are counted a whole direction at a time: a man only ever moves forward, so the
    /// pieces it has jumped and its start square lie behind it and cannot matter again; a
    /// first landing square that allows no further jump (or crowns) is one path, counted by
    /// popcount, and only the others are followed. Kings are followed one by one.
    #[inline]
    fn count_captures<S: Side>(
        me: Bitboard,
        opp: Bitboard,
        kings: Bitboard,
        caps: Bitboard,
    ) -> u64 {
        let empty = !(me | opp);
        let men = me & !kings;
        // Squares from which a man could jump again (not on the crowning row, where it stops).
        let cont = (S::ba(S::ba(empty) & opp) | S::bb(S::bb(empty) & opp)) & !S::CROWN;
        let la = S::fa(S::fa(men) & opp) & empty;
        let lb = S::fb(S::fb(men) & opp) & empty;
        let mut n = ((la & !cont).count_ones() + (lb & !cont).count_ones()) as u64;
        for l in [la & cont, lb & cont] {
            let mut c = l;
            while c != 0 {
                let t = c & c.wrapping_neg();
                c &= c - 1;
                n += count_jumps::<S>(t, opp, empty, false);
            }
        }
        let mut c = caps & kings;
        while c != 0 {
            let f = c & c.wrapping_neg();
            c &= c - 1;
            n += count_jumps::<S>(f, opp, empty | f, true);
        }
        n
    }

    /// Every capture path: `emit(from, to, captured, crowned)`.
    #[inline(always)]
    fn captures<S: Side>(
        me: Bitboard,
        opp: Bitboard,
        kings: Bitboard,
        caps: Bitboard,
        emit: &mut impl FnMut(Bitboard, Bitboard, Bitboard, bool),
    ) {
        let empty = !(me | opp);
        let mut c = caps;
        while c != 0 {
            let f = c & c.wrapping_neg();
            c &= c - 1;
            let king = kings & f != 0;
            jumps::<S, _>(f, opp, empty | f, king, 0, &mut |t, cap, cr| {
                emit(f, t, cap, cr)
            });
        }
    }

    /// Child after a move from `f` to `t` capturing `cap`: returns `(me, opp, kings)` with
    /// `me` the mover's pieces.
    #[inline(always)]
    fn child(
        me: Bitboard,
        opp: Bitboard,
        kings: Bitboard,
        f: Bitboard,
        t: Bitboard,
        cap: Bitboard,
        crowned: bool,
    ) -> (Bitboard, Bitboard, Bitboard) {
        let me2 = (me & !f) | t;
        let mut k2 = kings & !cap;
        if kings & f != 0 {
            k2 = (k2 & !f) | t;
        } else if crowned {
            k2 |= t;
        }
        (me2, opp & !cap, k2)
    }

    /// Every simple move's child `(me, opp, kings)` (valid when there is no capture).
    #[inline(always)]
    fn simple_children<S: Side>(
        me: Bitboard,
        opp: Bitboard,
        kings: Bitboard,
        emit: &mut impl FnMut(Bitboard, Bitboard, Bitboard),
    ) {
        simple_children_from::<S>(me, opp, kings, !0, emit)
    }

    /// The number of simple moves of the pieces of `me` on the squares of `from` (valid when
    /// there is no capture): one per empty square each can step to.
    #[inline(always)]
    pub(super) fn count_quiet<S: Side>(
        me: Bitboard,
        opp: Bitboard,
        kings: Bitboard,
        from: Bitboard,
    ) -> u32 {
        let empty = !(me | opp);
        let m = me & from;
        let k = m & kings;
        (S::fa(m) & empty).count_ones()
            + (S::fb(m) & empty).count_ones()
            + (S::ba(k) & empty).count_ones()
            + (S::bb(k) & empty).count_ones()
    }

    /// [`simple_children`] of the pieces of `me` on the squares of `from` only.
    #[inline(always)]
    pub(super) fn simple_children_from<S: Side>(
        me: Bitboard,
        opp: Bitboard,
        kings: Bitboard,
        from: Bitboard,
        emit: &mut impl FnMut(Bitboard, Bitboard, Bitboard),
    ) {
        let empty = !(me | opp);
        macro_rules! dir {
            ($movers:expr, $fw:path, $bw:path, $men:expr) => {{
                let mut ts = $fw($movers) & empty;
                while ts != 0 {
                    let t = ts & ts.wrapping_neg();
                    ts &= ts - 1;
                    let f = $bw(t);
                    let k2 = if kings & f != 0 {
                        kings ^ f ^ t
                    } else if $men && t & S::CROWN != 0 {
                        kings | t
                    } else {
                        kings
                    };
                    emit(me ^ f ^ t, opp, k2);
                }
            }};
        }
        let movers = me & from;
        dir!(movers, S::fa, S::ba, true);
        dir!(movers, S::fb, S::bb, true);
        let k = movers & kings;
        if k != 0 {
            dir!(k, S::ba, S::fa, false);
            dir!(k, S::bb, S::fb, false);
        }
    }

    /// Leaf count of the subtree `depth` plies deep; `UNIQUE` merges equal capture results.
    pub(super) fn perft<S: Side, const UNIQUE: bool>(
        me: Bitboard,
        opp: Bitboard,
        kings: Bitboard,
        depth: u32,
    ) -> u64 {
        if depth == 0 {
            return 1;
        }
        let caps = capturers::<S>(me, opp, kings);
        if caps != 0 {
            if UNIQUE {
                let mut n = 0u64;
                unique_captures::<S>(me, opp, kings, caps, &mut |m, o, k| {
                    n += if depth == 1 {
                        1
                    } else {
                        perft::<S::Other, UNIQUE>(o, m, k, depth - 1)
                    }
                });
                return n;
            }
            let mut n = 0u64;
            if depth == 1 {
                n = count_captures::<S>(me, opp, kings, caps);
            } else {
                captures::<S>(me, opp, kings, caps, &mut |f, t, cap, cr| {
                    let (m, o, k) = child(me, opp, kings, f, t, cap, cr);
                    n += perft::<S::Other, UNIQUE>(o, m, k, depth - 1);
                });
            }
            return n;
        }
        if depth == 1 {
            return count_simple::<S>(me, opp, kings);
        }
        let mut n = 0u64;
        if depth == 2 {
            simple_children::<S>(me, opp, kings, &mut |m, o, k| {
                n += leaf::<S::Other, UNIQUE>(o, m, k)
            });
        } else {
            simple_children::<S>(me, opp, kings, &mut |m, o, k| {
                n += perft::<S::Other, UNIQUE>(o, m, k, depth - 1)
            });
        }
        n
    }

    /// Number of legal moves (bulk count at the last ply).
    #[inline(always)]
    fn leaf<S: Side, const UNIQUE: bool>(me: Bitboard, opp: Bitboard, kings: Bitboard) -> u64 {
        let caps = capturers::<S>(me, opp, kings);
        if caps == 0 {
            count_simple::<S>(me, opp, kings)
        } else if UNIQUE {
            perft::<S, UNIQUE>(me, opp, kings, 1)
        } else {
            count_captures::<S>(me, opp, kings, caps)
        }
    }

    /// Every de-duplicated successor as `(me, opp, kings)` with `me` the mover's pieces.
    pub(super) fn successors<S: Side>(
        me: Bitboard,
        opp: Bitboard,
        kings: Bitboard,
        emit: &mut impl FnMut(Bitboard, Bitboard, Bitboard),
    ) {
        let caps = capturers::<S>(me, opp, kings);
        if caps == 0 {
            simple_children::<S>(me, opp, kings, emit);
            return;
        }
        unique_captures::<S>(me, opp, kings, caps, emit);
    }

    /// Distinct capture children `(me, opp, kings)` (`caps` = the capturers, non-zero).
    #[inline]
    fn unique_captures<S: Side>(
        me: Bitboard,
        opp: Bitboard,
        kings: Bitboard,
        caps: Bitboard,
        emit: &mut impl FnMut(Bitboard, Bitboard, Bitboard),
    ) {
        let mut arr = [(0u32, 0u32, 0u32); 32];
        let mut n = 0usize;
        let mut spill: Vec<(Bitboard, Bitboard, Bitboard)> = Vec::new();
        captures::<S>(me, opp, kings, caps, &mut |f, t, cap, cr| {
            let c = child(me, opp, kings, f, t, cap, cr);
            if arr[..n].contains(&c) || spill.contains(&c) {
                return;
            }
            if n < arr.len() {
                arr[n] = c;
                n += 1;
            } else {
                spill.push(c);
            }
        });
        for &(m, o, k) in arr[..n].iter().chain(spill.iter()) {
            emit(m, o, k);
        }
    }

    /// Whether the mover has a non-capturing move (men forward, kings any direction, onto an
    /// empty square).
    #[inline(always)]
    pub(super) fn has_quiet<S: Side>(me: Bitboard, opp: Bitboard, kings: Bitboard) -> bool {
        let empty = !(me | opp);
        let k = me & kings;
        ((S::fa(me) | S::fb(me) | S::ba(k) | S::bb(k)) & empty) != 0
    }

    /// Quiet, non-crowning un-moves of the side `S` that just moved: `emit(from, to, true)` for
    /// a king now on `to` that came from the empty square `from` (any direction),
    /// `emit(from, to, false)` for a man now on `to` that came from the empty square `from`
    /// behind it. `mover`: the pieces of the side that just moved; `empty`: empty squares.
    #[inline(always)]
    pub(super) fn quiet_unmoves<S: Side>(
        mover: Bitboard,
        kings: Bitboard,
        empty: Bitboard,
        emit: &mut impl FnMut(Bitboard, Bitboard, bool),
    ) {
        let mk = mover & kings;
        let mut ks = mk;
        while ks != 0 {
            let t = ks & ks.wrapping_neg();
            ks &= ks - 1;
            for from in [S::fa(t), S::fb(t), S::ba(t), S::bb(t)] {
                if from & empty != 0 {
                    emit(from, t, true);
                }
            }
        }
        let mut ms = mover & !kings;
        while ms != 0 {
            let t = ms & ms.wrapping_neg();
            ms &= ms - 1;
            for from in [S::ba(t), S::bb(t)] {
                if from & empty != 0 {
                    emit(from, t, false);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::shift;

    #[test]
    fn engine_directions_match_the_definitions() {
        // The fast engine's colour-specific shifts are the directions of `man_directions`.
        use fast::Side;
        for sq in 0..32 {
            let b = 1u32 << sq;
            assert_eq!(fast::B::fa(b) | fast::B::fb(b), shift(b, 0) | shift(b, 1));
            assert_eq!(fast::W::fa(b) | fast::W::fb(b), shift(b, 2) | shift(b, 3));
            assert_eq!(fast::B::CROWN, crown_row(Color::Black));
            assert_eq!(fast::W::CROWN, crown_row(Color::White));
        }
        assert_eq!(
            man_directions(Color::Black) | man_directions(Color::White),
            KING_DIRECTIONS
        );
    }

    /// The position before un-moving `(from, to)` in `after` (the piece on `to` goes back to
    /// `from`; the side that just moved is to move again).
    fn unmoved(after: &Position, from: Bitboard, to: Bitboard) -> Position {
        let mover = after.side.opponent();
        let mut q = *after;
        match mover {
            Color::Black => q.black = (q.black & !to) | from,
            Color::White => q.white = (q.white & !to) | from,
        }
        if q.kings & to != 0 {
            q.kings = (q.kings & !to) | from;
        }
        q.side = mover;
        q
    }

    /// Un-moves of the fast engine against the slow path generator (the oracle): every quiet,
    /// non-crowning move of the oracle is found backwards, and every un-move leads to a legal
    /// position that has that move.
    #[test]
    fn unmoves_invert_the_oracle_quiet_moves() {
        use crate::movegen::Oracle;
        let mut seeds: Vec<Position> = [
            "B:W21-32:B1-12",
            "W:WK19,K23:BK28,12",
            "B:W18,24,K27:B12,K22",
            "W:W14,K2,K30:B3,K10,K20,26",
            "B:WK1,K3,K5:BK28,K30,K32",
        ]
        .iter()
        .map(|f| Position::from_fen(f).unwrap())
        .collect();
        let mut frontier = seeds.clone();
        for _ in 0..3 {
            let mut next = Vec::new();
            for p in &frontier {
                Oracle.for_each_successor(p, |q| next.push(q));
            }
            next.truncate(400);
            seeds.extend(next.iter().copied());
            frontier = next;
        }
        let mut checked = 0;
        for p in &seeds {
            if Oracle.has_capture(p) {
                continue;
            }
            for m in p.unique_moves() {
                if m.crowns {
                    continue;
                }
                let after = p.apply(&m);
                let mut found = false;
                English.for_each_quiet_unmove(&after, |from, to, is_king| {
                    let q = unmoved(&after, from, to);
                    assert_eq!(is_king, q.kings & from != 0);
                    assert!(q.validate().is_ok(), "{}", q.to_fen());
                    // The oracle has the move back to `after` from q (when q must not capture).
                    if !Oracle.has_capture(&q) {
                        let mut ok = false;
                        Oracle.for_each_successor(&q, |r| ok |= r == after);
                        assert!(ok, "{} -> {}", q.to_fen(), after.to_fen());
                    }
                    found |= q == *p;
                });
                assert!(found, "{} then {:?}", p.to_fen(), m);
                checked += 1;
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn conversions_are_captures_and_man_moves() {
        let conv = |fen: &str, mv: &str| {
            let p = Position::from_fen(fen).unwrap();
            let m = crate::notation::parse_move(&p, mv).unwrap();
            English.is_conversion(&p, &p.apply(&m))
        };
        assert!(conv("B:W21-32:B1-12", "9-13")); // man move
        assert!(!conv("W:WK19,K23:BK28,12", "19-15")); // king move
        assert!(conv("W:WK29:BK25", "29x22")); // capture
        assert!(conv("W:W5:BK2", "5-1")); // crowning man move
    }
}
