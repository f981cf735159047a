//! Legal move generation for English checkers.
//!
//! Rules (WCDF / English draughts): men move and capture one square diagonally forward; kings
//! move and capture one square in all four diagonal directions (no flying kings). Captures are
//! compulsory, any capture may be chosen (no majority rule), a capture must be continued while the
//! capturing piece can jump again, no piece is jumped twice, and a man that reaches its crowning
//! row is crowned and its move ends there, even in the middle of a capture. A side with no legal
//! move (or no pieces) loses.
//!
//! Two views are offered: [`Position::moves`] lists every capture *path* (what perft and
//! notation need), [`Position::successors`] the de-duplicated moves (same from, to and captured
//! set counted once), which is what the database needs.

use crate::board::{
    down_a, down_b, up_a, up_b, Bitboard, Bits, Color, Position, BLACK_CROWN_ROW, NEIGHBOUR,
    WHITE_CROWN_ROW,
};

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
}

#[inline(always)]
fn forward_shifts(side: Color) -> [fn(Bitboard) -> Bitboard; 2] {
    match side {
        Color::Black => [up_a, up_b],
        Color::White => [down_a, down_b],
    }
}
#[inline(always)]
fn backward_shifts(side: Color) -> [fn(Bitboard) -> Bitboard; 2] {
    match side {
        Color::Black => [down_a, down_b],
        Color::White => [up_a, up_b],
    }
}

/// Directions (indices into [`NEIGHBOUR`]) a man of `side` moves in.
#[inline(always)]
const fn man_dirs(side: Color) -> u8 {
    match side {
        Color::Black => 0b0011,
        Color::White => 0b1100,
    }
}

const fn crown_row(side: Color) -> Bitboard {
    match side {
        Color::Black => BLACK_CROWN_ROW,
        Color::White => WHITE_CROWN_ROW,
    }
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
        let [f0, f1] = forward_shifts(self.side);
        let [b0, b1] = backward_shifts(self.side);
        // A piece at x captures forward along f if f(x) is an enemy and f(f(x)) is empty.
        // Work backwards from the empty landing squares.
        out |= b0(b0(empty) & opp) & me;
        out |= b1(b1(empty) & opp) & me;
        if kings != 0 {
            out |= f0(f0(empty) & opp) & kings;
            out |= f1(f1(empty) & opp) & kings;
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

    /// Successor positions of every de-duplicated legal move (the opponent is then to move),
    /// through the fast engine of [`Position::for_each_successor`] (same set as applying each of
    /// [`Position::unique_moves`]; order: captures by capturing square, else simple moves by
    /// direction then target square).
    pub fn successors(&self) -> Vec<Position> {
        let mut v = Vec::with_capacity(16);
        self.for_each_successor(|q| v.push(q));
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
        let [f0, f1] = forward_shifts(self.side);
        let [b0, b1] = backward_shifts(self.side);
        let mut n = (f0(me) & empty).count_ones() + (f1(me) & empty).count_ones();
        if kings != 0 {
            n += (b0(kings) & empty).count_ones() + (b1(kings) & empty).count_ones();
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
            let targets = crate::board::shift(movers, d) & empty;
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
            let dirs = if is_king { 0b1111 } else { man_dirs(self.side) };
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

    /// Play `m` (assumed legal here; see [`crate::notation`] for checked parsing) and return the
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

/// Remove moves with the same (from, to, captured) as an earlier move, keeping order.
pub fn dedup_moves(v: &mut Vec<Move>) {
    let mut i = 0;
    while i < v.len() {
        let (f, t, c) = (v[i].from, v[i].to, v[i].captured);
        if v[..i]
            .iter()
            .any(|m| m.from == f && m.to == t && m.captured == c)
        {
            v.remove(i);
        } else {
            i += 1;
        }
    }
}

/// Count leaf nodes of the game tree `depth` plies deep (perft), single-threaded, with the
/// fast bitboard engine below (no [`Move`] values are built; the last ply is bulk-counted).
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

/// Reference perft through [`Position::generate_moves`], [`dedup_moves`] and
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

impl Position {
    /// Call `f` with the position after each de-duplicated legal move (the opponent to move),
    /// without building [`Move`] values or allocating except when a position has more than 32
    /// distinct captures. Visits the same set as applying each of [`Position::unique_moves`],
    /// possibly in another order.
    pub fn for_each_successor(&self, mut f: impl FnMut(Position)) {
        match self.side {
            Color::Black => fast::successors::<fast::B>(
                self.black,
                self.white,
                self.kings,
                &mut |me, opp, k| {
                    f(Position {
                        black: me,
                        white: opp,
                        kings: k,
                        side: Color::White,
                    })
                },
            ),
            Color::White => fast::successors::<fast::W>(
                self.white,
                self.black,
                self.kings,
                &mut |me, opp, k| {
                    f(Position {
                        black: opp,
                        white: me,
                        kings: k,
                        side: Color::Black,
                    })
                },
            ),
        }
    }
}

/// Bitboard engine specialised by colour at compile time. Positions are `(me, opp, kings)`
/// from the side to move's view; children are returned with `me` still the mover's pieces.
mod fast {
    use crate::board::{down_a, down_b, up_a, up_b, Bitboard, BLACK_CROWN_ROW, WHITE_CROWN_ROW};

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
    fn capturers<S: Side>(me: Bitboard, opp: Bitboard, kings: Bitboard) -> Bitboard {
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
        dir!(me, S::fa, S::ba, true);
        dir!(me, S::fb, S::bb, true);
        let k = me & kings;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_has_seven_moves() {
        assert_eq!(Position::START.moves().len(), 7);
        assert_eq!(perft(&Position::START, 4, false), 1469);
    }
}
