//! Dense perfect index of every slice: a bijection between the legal Black-to-move positions
//! of a [`Slice`] and `0..size`.
//!
//! # Layout (see also docs/index.md)
//! `index = men_index * king_count + king_index`, i.e. kings vary fastest.
//!
//! - **Kings.** `king_count = C(F, bk) * C(F - bk, wk)` with `F = 32 - bm - wm` free squares.
//!   Black kings are ranked (colex) among the squares the men leave free, white kings among the
//!   squares left free by the men and the black kings: `king_index = rBK * C(F - bk, wk) + rWK`.
//! - **Men, no overlap** (a side has no men, or every black man is below every white man's row
//!   range, i.e. `lw > rb` where `rb` = Black's leading rank and `lw = 7 - white_rank` is the
//!   board row of White's most advanced man): `men_index = rB * nW + rW`, where
//!   `rB = colex(black men) - C(4 rb, bm)` (the configurations with at least one man on row
//!   `rb`) and `rW` is the same for White in White's own frame (square `s -> 33 - s`).
//! - **Men, overlap** (`lw <= rb`, both sides have men): black configurations are grouped by
//!   `(x, y)`, `y` = black men on row `lw`, `x` = black men on rows `lw+1..=rb`. For a group the
//!   white men have `f(x, y) = C(4(8-lw) - x - y, wm) - C(4(7-lw) - x, wm)` placements: they are
//!   ranked (colex, White's frame) among the squares of rows `lw..=7` that the black men leave
//!   free, minus the placements with no man on row `lw`. Within a group Black's rank is the
//!   mixed-radix number `(rM * nL + rL) * nA + rA` of the zone ranks: zone A = rows `0..lw`
//!   (`a = bm - x - y` men, any), zone L = row `lw` (`y` men), zone M = rows `lw+1..=rb`
//!   (`x` men, at least one on row `rb` when `rb > lw`). Then
//!   `men_index = group_offset(x, y) + rB_in_group * f(x, y) + rW`. Groups are ordered by `x`
//!   ascending, then `y` ascending; empty groups take no indices.
//!
//! Colex rank of a set of squares `p_0 < p_1 < ... < p_{k-1}` (bit indices) is
//! `sum C(p_i, i + 1)`.
use crate::board::{rotate, Bitboard, Color, Position};
use crate::slice::Slice;

/// Why an index cannot be turned into a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// The index is not below the slice size.
    #[error("index {index} is out of range for slice {slice} (size {size})")]
    OutOfRange {
        /// Slice name.
        slice: String,
        /// The index asked for.
        index: u64,
        /// The slice size.
        size: u64,
    },
}

/// Binomial coefficients `BINOM[k][n] = C(n, k)` for `0 <= n, k <= 32` (0 when `k > n`).
/// Indexed k-major so that the unranking scan over `n` reads contiguous memory.
pub const BINOM: [[u64; 33]; 33] = build_binom();

const fn build_binom() -> [[u64; 33]; 33] {
    let mut t = [[0u64; 33]; 33];
    let mut n = 0;
    while n <= 32 {
        t[0][n] = 1;
        let mut k = 1;
        while k <= n {
            t[k][n] = t[k - 1][n - 1] + if k < n { t[k][n - 1] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    t
}

/// `C(n, k)` for `n, k <= 32` (0 when `k > n`), from [`BINOM`].
#[inline(always)]
pub const fn binom(n: u32, k: u32) -> u64 {
    BINOM[k as usize][n as usize]
}

/// `C(n, k)` for any `n, k` that fit the table, 0 for negative `n` (a count of free squares
/// that went below zero).
#[inline(always)]
fn binom_i(n: i32, k: u32) -> u64 {
    if n < 0 {
        0
    } else {
        binom(n as u32, k)
    }
}

/// Colex rank of the set bits of `s`: `sum C(p_i, i+1)` over its bits `p_0 < p_1 < ...`.
#[inline(always)]
pub fn colex_rank(mut s: u32) -> u64 {
    let mut r = 0;
    let mut i = 1usize;
    while s != 0 {
        let p = s.trailing_zeros() as usize;
        r += BINOM[i][p];
        s &= s - 1;
        i += 1;
    }
    r
}

/// Colex rank of `s` after deleting the squares of `occ` (disjoint from `s`) and closing the
/// gaps, i.e. `colex_rank(pext(s, !occ))`: one `pext` where the CPU has fast BMI2
/// ([`crate::bmi2`]), otherwise one popcount per set bit of `s`.
#[inline(always)]
fn colex_rank_skip(s: u32, occ: u32) -> u64 {
    if crate::bmi2::fast() {
        // SAFETY: `fast()` is true.
        colex_rank(unsafe { crate::bmi2::pext_insn(s, !occ) })
    } else {
        colex_rank_skip_portable(s, occ)
    }
}

/// [`colex_rank_skip`] without BMI2.
#[inline(always)]
fn colex_rank_skip_portable(mut s: u32, occ: u32) -> u64 {
    let mut r = 0;
    let mut i = 1usize;
    while s != 0 {
        let p = s.trailing_zeros();
        let q = p - (occ & ((1u32 << p) - 1)).count_ones();
        r += BINOM[i][q as usize];
        s &= s - 1;
        i += 1;
    }
    r
}

/// The next larger integer with the same number of set bits (colex successor of a subset;
/// Gosper's rule, HAKMEM item 175). `c` must be non-zero and have a successor below 2^32.
#[inline(always)]
fn next_combination(c: u32) -> u32 {
    let t = c | (c - 1);
    let tz = c.trailing_zeros();
    (t.wrapping_add(1)) | (((!t & t.wrapping_add(1)).wrapping_sub(1)) >> (tz + 1))
}

/// `BINOM32[k][n] = C(n, k)` for `n < 32` as `u32` (every such value is below 2^31), for
/// the vectorised search in [`colex_unrank`].
const BINOM32: [[u32; 32]; 33] = {
    let mut t = [[0u32; 32]; 33];
    let mut k = 0;
    while k <= 32 {
        let mut n = 0;
        while n < 32 {
            t[k][n] = BINOM[k][n] as u32;
            n += 1;
        }
        k += 1;
    }
    t
};

/// The `k`-subset of `0..n` with colex rank `r` (`r < C(n, k)`, `n <= 32`), as a bitboard.
///
/// Each element, from the highest down, is the largest `p` with `C(p, i) <= r`, found by
/// counting the entries `<= r` of a row of binomials (32 independent compares, which the
/// compiler vectorises; no data-dependent branches).
#[inline(always)]
pub fn colex_unrank(r: u64, k: u32, n: u32) -> u32 {
    debug_assert!(r < binom(n, k) || (n == 0 && k == 0));
    let _ = n;
    let mut r = r as u32;
    let mut s = 0u32;
    let mut i = k as usize;
    while i > 0 {
        let row = &BINOM32[i];
        // row is non-decreasing with row[0] = 0, so the count of entries <= r is p + 1.
        let mut c = 0u32;
        for &v in row.iter() {
            c += (v <= r) as u32;
        }
        let p = (c - 1) as usize;
        s |= 1 << p;
        r -= row[p];
        i -= 1;
    }
    s
}

/// Division by a run-time invariant `u64` divisor with one multiply-high, two shifts and two
/// adds (Granlund and Montgomery, "Division by invariant integers using multiplication",
/// PLDI 1994, figure 4.1), exact for every numerator and divisor `>= 1`.
#[derive(Clone, Copy, Debug)]
pub struct Divider {
    d: u64,
    m: u64,
    sh1: u32,
    sh2: u32,
}

impl Divider {
    /// A divider for `d`; `d = 0` gives a divider that must not be used (returns garbage).
    pub const fn new(d: u64) -> Divider {
        if d == 0 {
            return Divider {
                d: 0,
                m: 0,
                sh1: 0,
                sh2: 0,
            };
        }
        // l = ceil(log2 d)
        let l = if d == 1 {
            0
        } else {
            64 - (d - 1).leading_zeros()
        };
        let m = (((1u128 << 64) * ((1u128 << l) - d as u128)) / d as u128 + 1) as u64;
        Divider {
            d,
            m,
            sh1: if l > 0 { 1 } else { 0 },
            sh2: if l > 0 { l - 1 } else { 0 },
        }
    }
    /// `(n / d, n % d)`.
    #[inline(always)]
    pub const fn divrem(&self, n: u64) -> (u64, u64) {
        let t = ((self.m as u128 * n as u128) >> 64) as u64;
        let q = (t + ((n - t) >> self.sh1)) >> self.sh2;
        (q, n - q * self.d)
    }
}

/// Spread the bits of `c` over the squares not in `occ` (inverse of the compression used by
/// [`colex_rank_skip`]), i.e. `pdep(c, !occ)` ([`crate::bmi2`]).
#[inline(always)]
fn expand(c: u32, occ: u32) -> u32 {
    crate::bmi2::pdep(c, !occ)
}

/// [`expand`] for one fixed `occ` applied to many sets (the white kings of
/// [`SliceIndex::visit`], stepped under fixed men and black kings): without fast BMI2 the free
/// squares are listed once, then each set is spread with one table load per set bit instead
/// of one step per occupied square; with it, one `pdep`.
#[derive(Clone, Copy)]
struct Spread {
    /// The free squares in order, `squares[j]` the bit index of the `j`-th (portable path).
    squares: [u8; 32],
    /// The free squares as a mask (BMI2 path).
    free: u32,
    bmi2: bool,
}

impl Spread {
    /// The spreader over the squares not in `occ`.
    #[inline(always)]
    fn new(occ: u32) -> Spread {
        let bmi2 = crate::bmi2::fast();
        let mut squares = [0u8; 32];
        if !bmi2 {
            let mut free = !occ;
            let mut j = 0;
            while free != 0 {
                squares[j] = free.trailing_zeros() as u8;
                free &= free - 1;
                j += 1;
            }
        }
        Spread {
            squares,
            free: !occ,
            bmi2,
        }
    }

    /// `expand(c, occ)`.
    #[inline(always)]
    fn apply(&self, mut c: u32) -> u32 {
        if self.bmi2 {
            // SAFETY: `bmi2` is `fast()`, which was true.
            return unsafe { crate::bmi2::pdep_insn(c, self.free) };
        }
        let mut out = 0;
        while c != 0 {
            out |= 1 << self.squares[c.trailing_zeros() as usize];
            c &= c - 1;
        }
        out
    }
}

/// One `(x, y)` group of the overlap layout (see the module docs).
#[derive(Clone, Copy, Debug)]
struct Group {
    /// First men index of the group.
    offset: u64,
    /// White placements per black configuration, `f(x, y)`.
    f: u64,
    /// Configurations of zone A (rows `0..lw`): `C(4 lw, a)`.
    n_a: u64,
    /// Configurations of zone L (row `lw`): `C(4, y)`.
    n_l: u64,
    /// Colex rank subtracted in zone M (configurations without a man on row `rb`).
    m_base: u64,
    /// Colex rank subtracted for White (placements without a man on row `lw`).
    w_base: u64,
    /// Dividers for `f`, `n_a`, `n_l` (unranking).
    f_div: Divider,
    n_a_div: Divider,
    n_l_div: Divider,
    /// Black men in zone A / zone L / zone M.
    a: u8,
    y: u8,
    x: u8,
}

/// Maximum number of `(x, y)` groups: `x <= 12`, `y <= 4`.
const MAX_GROUPS: usize = 13 * 5;

/// Precomputed ranking tables of one slice. Cheap to clone (a few KB, no heap); build once per
/// slice and reuse. `Send + Sync`.
#[derive(Clone, Debug)]
pub struct SliceIndex {
    slice: Slice,
    size: u64,
    men_size: u64,
    /// `C(F, bk) * C(F - bk, wk)`, `F = 32 - men`.
    king_count: u64,
    /// `C(F - bk, wk)`.
    wk_count: u64,
    bm: u32,
    wm: u32,
    bk: u32,
    wk: u32,
    /// Free squares for the black kings (`32 - bm - wm`).
    free: u32,
    overlap: bool,
    /// Board row of White's most advanced man (`7 - white_rank`), 8 without white men.
    lw: u32,
    /// Black's leading rank (row), 0 without black men.
    rb: u32,
    /// White's leading rank (White's frame), 0 without white men.
    rw: u32,
    // --- no overlap ---
    /// Colex rank subtracted for Black (`C(4 rb, bm)`, 0 without men).
    b_base: u64,
    /// Black configurations (1 without men).
    n_b: u64,
    /// Colex rank subtracted for White (`C(4 rw, wm)`, 0 without men).
    w_base: u64,
    /// White configurations (1 without men).
    n_w: u64,
    // --- overlap ---
    /// Groups indexed by `x * 5 + y`.
    groups: [Group; MAX_GROUPS],
    /// Offsets of the non-empty groups in index order, for unranking.
    order_offsets: [u64; MAX_GROUPS],
    /// Group ids (`x * 5 + y`) matching `order_offsets`.
    order_ids: [u8; MAX_GROUPS],
    n_groups: usize,
    king_div: Divider,
    wk_div: Divider,
    n_w_div: Divider,
}

const EMPTY_GROUP: Group = Group {
    offset: 0,
    f: 0,
    n_a: 0,
    n_l: 0,
    m_base: 0,
    w_base: 0,
    f_div: Divider::new(0),
    n_a_div: Divider::new(0),
    n_l_div: Divider::new(0),
    a: 0,
    y: 0,
    x: 0,
};

impl SliceIndex {
    /// Index tables of `slice` (which must satisfy [`Slice::is_valid`]). The size is computed by
    /// formula (no enumeration); a slice of an impossible material (more than 32 pieces, too many
    /// men for their rows) gets size 0.
    ///
    /// # Panics
    /// If the slice is not valid, or its size does not fit in a `u64` (no slice with at most
    /// 24 pieces comes close: see `count::max_slice_size` tests).
    pub fn new(slice: Slice) -> SliceIndex {
        assert!(slice.is_valid(), "invalid slice {slice}");
        let m = slice.material;
        let (bm, bk, wm, wk) = (m.bm as u32, m.bk as u32, m.wm as u32, m.wk as u32);
        let men = bm + wm;
        let free = 32u32.saturating_sub(men);
        let king_count = if men + bk + wk > 32 {
            0
        } else {
            binom(free, bk) as u128 * binom(free - bk, wk) as u128
        };
        let wk_count = if men + bk + wk > 32 {
            0
        } else {
            binom(free - bk, wk)
        };
        let rb = slice.black_rank.map_or(0, |r| r as u32);
        let rw = slice.white_rank.map_or(0, |r| r as u32);
        let lw = slice.white_rank.map_or(8, |r| 7 - r as u32);
        let overlap = bm > 0 && wm > 0 && lw <= rb;
        let mut ix = SliceIndex {
            slice,
            size: 0,
            men_size: 0,
            king_count: 0,
            wk_count,
            bm,
            wm,
            bk,
            wk,
            free,
            overlap,
            lw,
            rb,
            rw,
            b_base: 0,
            n_b: 1,
            w_base: 0,
            n_w: 1,
            groups: [EMPTY_GROUP; MAX_GROUPS],
            order_offsets: [0; MAX_GROUPS],
            order_ids: [0; MAX_GROUPS],
            n_groups: 0,
            king_div: Divider::new(0),
            wk_div: Divider::new(wk_count),
            n_w_div: Divider::new(0),
        };
        let men_size: u128 = if !overlap {
            if bm > 0 {
                ix.b_base = binom(4 * rb, bm);
                ix.n_b = binom(4 * (rb + 1), bm) - ix.b_base;
            }
            if wm > 0 {
                ix.w_base = binom(4 * rw, wm);
                ix.n_w = binom(4 * (rw + 1), wm) - ix.w_base;
            }
            ix.n_b as u128 * ix.n_w as u128
        } else {
            let d = rb - lw;
            let mut off: u128 = 0;
            for x in 0..=bm.min(4 * d) {
                for y in 0..=(bm - x).min(4) {
                    let a = bm - x - y;
                    if a > 4 * lw {
                        continue;
                    }
                    let (n_m, m_base) = if d == 0 {
                        if x != 0 || y == 0 {
                            continue;
                        }
                        (1, 0)
                    } else {
                        if x == 0 {
                            continue;
                        }
                        let base = binom(4 * (d - 1), x);
                        (binom(4 * d, x) - base, base)
                    };
                    let w_base = binom_i(4 * (7 - lw) as i32 - x as i32, wm);
                    let f = binom_i(4 * (8 - lw) as i32 - (x + y) as i32, wm) - w_base;
                    let n_a = binom(4 * lw, a);
                    let n_l = binom(4, y);
                    let id = (x * 5 + y) as usize;
                    ix.groups[id] = Group {
                        offset: off as u64,
                        f,
                        n_a,
                        n_l,
                        m_base,
                        w_base,
                        f_div: Divider::new(f),
                        n_a_div: Divider::new(n_a),
                        n_l_div: Divider::new(n_l),
                        a: a as u8,
                        y: y as u8,
                        x: x as u8,
                    };
                    let count = n_a as u128 * n_l as u128 * n_m as u128 * f as u128;
                    if count > 0 {
                        ix.order_offsets[ix.n_groups] = off as u64;
                        ix.order_ids[ix.n_groups] = id as u8;
                        ix.n_groups += 1;
                    }
                    off += count;
                }
            }
            off
        };
        let size = men_size * king_count;
        assert!(
            size <= u64::MAX as u128,
            "slice {slice} has {size} positions, more than fit in u64"
        );
        ix.men_size = men_size as u64;
        ix.king_count = king_count as u64;
        ix.king_div = Divider::new(king_count as u64);
        ix.n_w_div = Divider::new(ix.n_w);
        ix.size = size as u64;
        ix
    }
    /// The slice.
    pub fn slice(&self) -> Slice {
        self.slice
    }
    /// Number of legal positions in the slice (exact, no holes).
    pub fn size(&self) -> u64 {
        self.size
    }
    /// Number of men configurations (both colours); `size() = men_size() * king_count()`.
    pub fn men_size(&self) -> u64 {
        self.men_size
    }
    /// Number of king placements per men configuration: `C(F, bk) * C(F - bk, wk)` with
    /// `F = 32 - men`. Consecutive indices `m * king_count() .. (m+1) * king_count()` share
    /// the same men.
    pub fn king_count(&self) -> u64 {
        self.king_count
    }

    /// Index of `p`, which must belong to this slice (`Slice::of(p) == self.slice()`); the side
    /// to move is ignored. Result is in `0..size()`. Checked only with debug assertions; a
    /// position of another slice gives a meaningless result.
    #[inline]
    pub fn rank(&self, p: &Position) -> u64 {
        debug_assert_eq!(Slice::of(p), self.slice, "position of another slice");
        let bmen = p.black & !p.kings;
        let wmen = p.white & !p.kings;
        let bkings = p.black & p.kings;
        let wkings = p.white & p.kings;
        let men = self.rank_men(bmen, wmen);
        let occ = bmen | wmen;
        let rbk = colex_rank_skip(bkings, occ);
        let rwk = colex_rank_skip(wkings, occ | bkings);
        men * self.king_count + rbk * self.wk_count + rwk
    }

    /// The part of [`SliceIndex::rank`] that depends on the men only: `rank(p) =
    /// men_base(black men, white men) + king_offset(black kings, white kings, men)`. Lets a
    /// caller that ranks many positions with the same men (king moves) do this part once.
    /// Men bitboards as in [`Position::men`].
    #[inline]
    pub fn men_base(&self, black_men: Bitboard, white_men: Bitboard) -> u64 {
        self.rank_men(black_men, white_men) * self.king_count
    }

    /// The king part of [`SliceIndex::rank`] (see [`SliceIndex::men_base`]); `men` is the
    /// bitboard of all men.
    #[inline]
    pub fn king_offset(&self, black_kings: Bitboard, white_kings: Bitboard, men: Bitboard) -> u64 {
        let rbk = colex_rank_skip(black_kings, men);
        let rwk = colex_rank_skip(white_kings, men | black_kings);
        rbk * self.wk_count + rwk
    }

    /// The white kings' part of [`SliceIndex::king_offset`]: their colex rank among the
    /// squares not in `occupied` (all men and the black kings).
    #[inline]
    pub fn white_king_rank(&self, white_kings: Bitboard, occupied: Bitboard) -> u64 {
        colex_rank_skip(white_kings, occupied)
    }

    /// [`SliceIndex::king_offset`] with the white kings' part already known
    /// (`white_rank = white_king_rank(white_kings, men | black_kings)`).
    ///
    /// A black king's step from `a` to `b` changes that part only when a white king stands
    /// strictly between `a` and `b` (only then does the number of occupied squares below it
    /// change), so a predecessor generator ranks the white kings once per position.
    #[inline]
    pub fn king_offset_with(&self, black_kings: Bitboard, men: Bitboard, white_rank: u64) -> u64 {
        colex_rank_skip(black_kings, men) * self.wk_count + white_rank
    }

    #[inline(always)]
    fn rank_men(&self, bmen: Bitboard, wmen: Bitboard) -> u64 {
        let wr = rotate(wmen);
        if !self.overlap {
            let rb = colex_rank(bmen) - self.b_base;
            let rw = colex_rank(wr) - self.w_base;
            rb * self.n_w + rw
        } else {
            let lw = self.lw;
            let zl = (bmen >> (4 * lw)) & 0xF;
            let zm = bmen >> (4 * lw + 4);
            let za = bmen & ((1u32 << (4 * lw)) - 1);
            let y = zl.count_ones();
            let x = zm.count_ones();
            let g = &self.groups[(x * 5 + y) as usize];
            let r_a = colex_rank(za);
            let r_l = colex_rank(zl);
            let r_m = colex_rank(zm) - g.m_base;
            let r_b = (r_m * g.n_l + r_l) * g.n_a + r_a;
            // Black men seen in White's frame; only those in White's rows (lw..=7) matter.
            let br = rotate(bmen) & ((1u64 << (4 * (8 - lw))) - 1) as u32;
            let r_w = colex_rank_skip(wr, br) - g.w_base;
            g.offset + r_b * g.f + r_w
        }
    }

    /// The position (Black to move) with index `index`.
    ///
    /// # Errors
    /// `IndexError::OutOfRange` if `index >= size()`.
    #[inline]
    pub fn unrank(&self, index: u64) -> Result<Position, IndexError> {
        if index >= self.size {
            return Err(self.out_of_range(index));
        }
        let (men, k) = self.king_div.divrem(index);
        let (bmen, wmen) = self.unrank_men(men);
        let (rbk, rwk) = self.wk_div.divrem(k);
        let occ = bmen | wmen;
        let bkings = expand(colex_unrank(rbk, self.bk, self.free), occ);
        let wkings = expand(
            colex_unrank(rwk, self.wk, self.free - self.bk),
            occ | bkings,
        );
        Ok(Position {
            black: bmen | bkings,
            white: wmen | wkings,
            kings: bkings | wkings,
            side: Color::Black,
        })
    }

    /// Call `f(index, position)` for every index in `start..end` (clamped to `size()`), in
    /// increasing order; the same positions as [`SliceIndex::unrank`] gives, but much cheaper per
    /// position: the men are unranked once per men configuration and the kings are stepped
    /// through their colex order (next subset of the same size, Gosper's rule) over the free
    /// squares.
    pub fn visit(&self, start: u64, end: u64, mut f: impl FnMut(u64, Position)) {
        let end = end.min(self.size);
        if start >= end {
            return;
        }
        let (mut men, mut k) = self.king_div.divrem(start);
        let mut i = start;
        let mut mc = self.men_at(men);
        let first_b = (1u32 << self.bk) - 1;
        let first_w = (1u32 << self.wk) - 1;
        loop {
            let (bmen, wmen) = (mc.black, mc.white);
            let occ = bmen | wmen;
            // Compressed combinations (over the free squares, in colex order); a men
            // configuration after the first starts at the first king placement.
            let (mut cb, mut cw, rwk) = if k == 0 {
                (first_b, first_w, 0)
            } else {
                let (rbk, rwk) = self.wk_div.divrem(k);
                (
                    colex_unrank(rbk, self.bk, self.free),
                    colex_unrank(rwk, self.wk, self.free - self.bk),
                    rwk,
                )
            };
            let mut bkings = expand(cb, occ);
            // The white kings are spread over the squares left by the men and black kings
            // (listed again when the black kings step; not needed without white kings).
            let spread = |bkings: u32| Spread::new(if self.wk > 0 { occ | bkings } else { !0 });
            let mut wfree = spread(bkings);
            let mut j = k;
            let mut jw = rwk;
            loop {
                let wkings = wfree.apply(cw);
                f(
                    i,
                    Position {
                        black: bmen | bkings,
                        white: wmen | wkings,
                        kings: bkings | wkings,
                        side: Color::Black,
                    },
                );
                i += 1;
                j += 1;
                if i >= end || j >= self.king_count {
                    break;
                }
                jw += 1;
                if jw < self.wk_count {
                    cw = next_combination(cw);
                } else {
                    jw = 0;
                    cw = first_w;
                    cb = next_combination(cb);
                    bkings = expand(cb, occ);
                    wfree = spread(bkings);
                }
            }
            if i >= end {
                break;
            }
            men += 1;
            k = 0;
            self.next_men(&mut mc, men);
        }
    }

    /// The positions `start..end` (clamped to `size()`) as *runs*, in increasing index order:
    /// consecutive indices that share the men and differ only in the kings of one colour
    /// ([`KingRun`]): the white kings in a slice with white kings (the black kings fixed in
    /// the run), else the black kings. Calls `f` once per run; a run holds at most
    /// `C(free - bk, wk)` positions, or `C(free, bk)` without white kings (1 without kings).
    /// The positions are exactly [`SliceIndex::visit`]'s (the codec 6 / 7 class walk,
    /// `table::walk`, hoists the work that depends on the fixed pieces out of the run).
    pub(crate) fn visit_runs(&self, start: u64, end: u64, mut f: impl FnMut(&KingRun)) {
        let end = end.min(self.size);
        if start >= end {
            return;
        }
        let (mut men, mut k) = self.king_div.divrem(start);
        let mut i = start;
        let mut mc = self.men_at(men);
        let first_b = (1u32 << self.bk) - 1;
        let first_w = (1u32 << self.wk) - 1;
        let black_varies = self.wk == 0 && self.bk > 0;
        loop {
            let occ = mc.black | mc.white;
            if black_varies {
                // One run: the black kings of this men configuration from index `k` on.
                let count = (self.king_count - k).min(end - i);
                f(&KingRun {
                    black_men: mc.black,
                    white_men: mc.white,
                    black_kings: 0,
                    black_varies: true,
                    kings: self.bk,
                    cw: colex_unrank(k, self.bk, self.free),
                    count: count as usize,
                    spread: Spread::new(occ),
                });
                i += count;
            } else {
                let (mut cb, mut cw, mut jw) = if k == 0 {
                    (first_b, first_w, 0)
                } else {
                    let (rbk, rwk) = self.wk_div.divrem(k);
                    (
                        colex_unrank(rbk, self.bk, self.free),
                        colex_unrank(rwk, self.wk, self.free - self.bk),
                        rwk,
                    )
                };
                let mut j = k;
                loop {
                    let bkings = expand(cb, occ);
                    let count = (self.wk_count - jw).min(end - i);
                    f(&KingRun {
                        black_men: mc.black,
                        white_men: mc.white,
                        black_kings: bkings,
                        black_varies: false,
                        kings: self.wk,
                        cw,
                        count: count as usize,
                        spread: Spread::new(if self.wk > 0 { occ | bkings } else { !0 }),
                    });
                    i += count;
                    j += count;
                    if i >= end || j >= self.king_count {
                        break;
                    }
                    jw = 0;
                    cw = first_w;
                    cb = next_combination(cb);
                }
            }
            if i >= end {
                break;
            }
            men += 1;
            k = 0;
            self.next_men(&mut mc, men);
        }
    }

    #[cold]
    #[inline(never)]
    fn out_of_range(&self, index: u64) -> IndexError {
        IndexError::OutOfRange {
            slice: self.slice.to_string(),
            index,
            size: self.size,
        }
    }

    #[inline(always)]
    fn unrank_men(&self, men: u64) -> (Bitboard, Bitboard) {
        let m = self.men_at(men);
        (m.black, m.white)
    }

    /// The men of men index `men`, with what [`SliceIndex::next_men`] needs to step to the
    /// following index.
    #[inline(always)]
    fn men_at(&self, men: u64) -> MenCursor {
        if !self.overlap {
            let (rb, rw) = self.n_w_div.divrem(men);
            let cb = colex_unrank(rb + self.b_base, self.bm, 4 * (self.rb + 1));
            let cw = colex_unrank(rw + self.w_base, self.wm, 4 * (self.rw + 1));
            MenCursor {
                black: cb,
                white: rotate(cw),
                cw,
                w_left: self.n_w - 1 - rw,
                black_free: 0,
            }
        } else {
            let n = self.n_groups;
            let j = self.order_offsets[..n].partition_point(|&o| o <= men) - 1;
            let g = &self.groups[self.order_ids[j] as usize];
            let rem = men - g.offset;
            let (r_b, r_w) = g.f_div.divrem(rem);
            let (t, r_a) = g.n_a_div.divrem(r_b);
            let (r_m, r_l) = g.n_l_div.divrem(t);
            let lw = self.lw;
            let (x, y) = (g.x as u32, g.y as u32);
            let za = colex_unrank(r_a, g.a as u32, 4 * lw);
            let zl = colex_unrank(r_l, y, 4);
            let zm = colex_unrank(r_m + g.m_base, x, 4 * (self.rb - lw));
            let bmen = za | (zl << (4 * lw)) | ((zm as u64) << (4 * lw + 4)) as u32;
            let br = rotate(bmen) & ((1u64 << (4 * (8 - lw))) - 1) as u32;
            let cw = colex_unrank(r_w + g.w_base, self.wm, 4 * (8 - lw) - x - y);
            MenCursor {
                black: bmen,
                white: rotate(expand(cw, br)),
                cw,
                w_left: g.f - 1 - r_w,
                black_free: !br,
            }
        }
    }

    /// Step `m`, the men of index `men - 1`, to index `men` (below [`SliceIndex::men_size`]).
    /// In both layouts White's rank varies fastest, and consecutive white ranks are
    /// consecutive colex sets (Gosper's rule); when White's run ends, the no-overlap layout
    /// steps Black the same way and the overlap layout unranks afresh.
    #[inline(always)]
    fn next_men(&self, m: &mut MenCursor, men: u64) {
        if m.w_left > 0 {
            m.w_left -= 1;
            m.cw = next_combination(m.cw);
            m.white = if self.overlap {
                rotate(expand(m.cw, !m.black_free))
            } else {
                rotate(m.cw)
            };
        } else if !self.overlap {
            // White's run starts again at its first set; Black (which has men, else there
            // would be no next index) takes its next set.
            let cw = colex_unrank(self.w_base, self.wm, 4 * (self.rw + 1));
            m.black = next_combination(m.black);
            m.cw = cw;
            m.white = rotate(cw);
            m.w_left = self.n_w - 1;
        } else {
            *m = self.men_at(men);
        }
    }
}

/// A run of [`SliceIndex::visit_runs`]: `count` consecutive positions (Black to move) with
/// the same men and the same kings but those of one colour (the *varying* kings: White's if
/// the slice has white kings, else Black's); the varying kings of the `j`-th position (`j` in
/// `0..count`) are [`KingRun::kings_of`] the `j`-th colex set from `cw` on ([`KingRun::next`]).
#[derive(Clone, Copy)]
pub(crate) struct KingRun {
    /// Black's men.
    pub black_men: Bitboard,
    /// White's men.
    pub white_men: Bitboard,
    /// Black's kings when they do not vary (the white kings do); 0 when they vary.
    pub black_kings: Bitboard,
    /// Whether the varying kings are Black's (a slice without white kings and with black
    /// kings), else White's (possibly none: a slice without kings, runs of one position).
    pub black_varies: bool,
    /// Number of varying kings (bits of `cw`).
    pub kings: u32,
    /// The first position's varying kings, as a set over the squares free of the other
    /// pieces (bit `i`: the `i`-th such square); 0 without varying kings.
    pub cw: u32,
    /// Positions in the run (at least 1).
    pub count: usize,
    spread: Spread,
}

impl KingRun {
    /// The varying kings (a bitboard) of the compressed set `cw`.
    #[inline(always)]
    pub fn kings_of(&self, cw: u32) -> Bitboard {
        self.spread.apply(cw)
    }

    /// The compressed set after `cw` (the next position's; `cw` must have a bit set, i.e.
    /// the run has varying kings).
    #[inline(always)]
    pub fn next(cw: u32) -> u32 {
        next_combination(cw)
    }

    /// The squares free of the other pieces (those the varying kings spread over; every
    /// square in a run without varying kings).
    #[inline(always)]
    pub fn king_squares(&self) -> Bitboard {
        self.spread.free
    }
}

/// The men of one men index during [`SliceIndex::visit`], and the state to step to the next.
#[derive(Clone, Copy)]
struct MenCursor {
    black: Bitboard,
    white: Bitboard,
    /// White's set in its compressed colex frame (White's frame; in the overlap layout, over
    /// the squares the black men leave free in White's rows).
    cw: u32,
    /// White steps left before White's run of the current black set ends.
    w_left: u64,
    /// Overlap layout: the squares of White's rows (White's frame) free of black men.
    black_free: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slice::Material;

    /// `ix.visit(a, b)` yields exactly the indices `a..min(b, size)` in order, each with
    /// `unrank`'s position; returns how many.
    fn visit_window_matches_unrank(ix: &SliceIndex, a: u64, b: u64) -> u64 {
        let mut want = a;
        ix.visit(a, b, |i, p| {
            assert_eq!(i, want);
            assert_eq!(p, ix.unrank(i).unwrap(), "{} {i}", ix.slice());
            want += 1;
        });
        assert_eq!(want, b.min(ix.size()).max(a), "{}", ix.slice());
        want - a
    }

    #[test]
    fn visit_matches_unrank() {
        use crate::slice::Slice;
        for m in Material::all_with_pieces(4)
            .into_iter()
            .chain(Material::all_with_pieces(3))
        {
            for sl in Slice::all_of(m) {
                let ix = SliceIndex::new(sl);
                let n = ix.size();
                for (a, b) in [(0, n), (n / 3, n / 2 + 7), (n.saturating_sub(5), n + 10)] {
                    visit_window_matches_unrank(&ix, a, b);
                }
            }
        }
    }

    /// As `visit_matches_unrank`, in windows of the slices of 5 pieces and of the 6-piece
    /// materials with at most one king, where the men change every few positions and
    /// `visit` steps them (White's run, then Black's, or a fresh unrank in the overlap
    /// layout).
    #[test]
    fn visit_matches_unrank_in_windows_of_larger_slices() {
        use crate::slice::Slice;
        let six = Material::all_with_pieces(6)
            .into_iter()
            .filter(|m| m.bk + m.wk <= 1);
        let mut checked = 0u64;
        for m in Material::all_with_pieces(5).into_iter().chain(six) {
            for sl in Slice::all_of(m) {
                let ix = SliceIndex::new(sl);
                let n = ix.size();
                for a in [0, n / 7, n / 2 + 3, n.saturating_sub(1500)] {
                    checked += visit_window_matches_unrank(&ix, a, a + 1500);
                }
            }
        }
        assert!(checked > 1_000_000, "{checked}");
    }

    /// As `visit_matches_unrank`, in three windows of every slice of 7 and 8 pieces (the
    /// tables built and verified here; `egdb verify` walks with `visit` as the builder's
    /// initial pass does, and checks every position against `rank`), and `rank` gives each
    /// position's index back.
    #[test]
    fn visit_matches_unrank_and_rank_in_windows_of_every_7_and_8_piece_slice() {
        use crate::slice::Slice;
        let mut checked = 0u64;
        for m in Material::all_with_pieces(7)
            .into_iter()
            .chain(Material::all_with_pieces(8))
        {
            for sl in Slice::all_of(m) {
                let ix = SliceIndex::new(sl);
                let n = ix.size();
                for a in [0, n / 2 + 11, n.saturating_sub(200)] {
                    checked += visit_window_matches_unrank(&ix, a, a + 200);
                    ix.visit(a, a + 200, |i, p| assert_eq!(ix.rank(&p), i, "{sl} {i}"));
                }
            }
        }
        assert!(checked > 1_000_000, "{checked}");
    }

    /// `ix.visit_runs(a, b)` gives, run by run, exactly `unrank`'s positions of the indices
    /// `a..min(b, size)` in order; returns how many.
    fn runs_window_match_unrank(ix: &SliceIndex, a: u64, b: u64) -> u64 {
        let mut i = a;
        ix.visit_runs(a, b, |r| {
            assert!(r.count >= 1);
            assert_eq!(r.cw.count_ones(), r.kings);
            let mut cw = r.cw;
            for j in 0..r.count {
                let k = r.kings_of(cw);
                let (bk, wk) = if r.black_varies {
                    assert_eq!(r.black_kings, 0);
                    (k, 0)
                } else {
                    (r.black_kings, k)
                };
                let p = Position {
                    black: r.black_men | bk,
                    white: r.white_men | wk,
                    kings: bk | wk,
                    side: Color::Black,
                };
                assert_eq!(p, ix.unrank(i).unwrap(), "{} {i}", ix.slice());
                assert_eq!(k & !r.king_squares(), 0);
                i += 1;
                if j + 1 < r.count {
                    cw = KingRun::next(cw);
                }
            }
        });
        assert_eq!(i, b.min(ix.size()).max(a), "{}", ix.slice());
        i - a
    }

    #[test]
    fn visit_runs_match_unrank() {
        use crate::slice::Slice;
        let mut checked = 0u64;
        for m in (1..=4).flat_map(Material::all_with_pieces) {
            for sl in Slice::all_of(m) {
                let ix = SliceIndex::new(sl);
                let n = ix.size();
                for (a, b) in [(0, n), (n / 3, n / 2 + 7), (n.saturating_sub(5), n + 10)] {
                    checked += runs_window_match_unrank(&ix, a, b);
                }
            }
        }
        for m in Material::all_with_pieces(5).into_iter().step_by(3) {
            for sl in Slice::all_of(m) {
                let ix = SliceIndex::new(sl);
                let n = ix.size();
                for a in [0, n / 7, n / 2 + 3, n.saturating_sub(1500)] {
                    checked += runs_window_match_unrank(&ix, a, a + 1500);
                }
            }
        }
        assert!(checked > 1_000_000, "{checked}");
    }

    #[test]
    fn binomials() {
        assert_eq!(binom(32, 16), 601_080_390);
        assert_eq!(binom(28, 12), 30_421_755);
        assert_eq!(binom(4, 5), 0);
        assert_eq!(binom(0, 0), 1);
    }

    /// The compress/expand helpers (the BMI2 path where this CPU has it, and the portable
    /// loops) against bit-by-bit definitions of `pext` and `pdep`.
    #[test]
    fn skip_and_expand_match_pext_and_pdep() {
        use crate::bmi2::tests::{pdep_ref as pdep, pext_ref as pext};
        let mut next = crate::bmi2::tests::xorshift();
        for _ in 0..20_000 {
            // Sparse sets, like pieces on a board.
            let occ = next() & next() & next();
            let s = next() & next() & next() & !occ;
            let c = next() & next();
            let want = colex_rank(pext(s, !occ));
            assert_eq!(colex_rank_skip(s, occ), want);
            assert_eq!(colex_rank_skip_portable(s, occ), want);
            assert_eq!(expand(c, occ), pdep(c, !occ));
            assert_eq!(crate::bmi2::pdep_portable(c, !occ), pdep(c, !occ));
            // A spreader takes sets of at most as many squares as are free.
            let cf = c & 1u32
                .checked_shl(32 - occ.count_ones())
                .map_or(!0, |b| b - 1);
            assert_eq!(Spread::new(occ).apply(cf), pdep(cf, !occ));
        }
    }

    /// `king_offset_with` and a white-king rank computed before a black king's step agree with
    /// `king_offset` whenever no white king stands strictly between the step's squares.
    #[test]
    fn king_offset_with_a_kept_white_rank() {
        let s: Slice = "0202-nn".parse().unwrap();
        let ix = SliceIndex::new(s);
        let mut checked = 0;
        for i in (0..ix.size()).step_by(7) {
            let p = ix.unrank(i).unwrap();
            let (bk, wk) = (p.black & p.kings, p.white & p.kings);
            let rw = ix.white_king_rank(wk, bk);
            let mut ks = bk;
            while ks != 0 {
                let to = ks & ks.wrapping_neg();
                ks &= ks - 1;
                for from in (0..32)
                    .map(|b| 1u32 << b)
                    .filter(|f| f & (p.black | p.white) == 0)
                {
                    let (lo, hi) = (from.min(to), from.max(to));
                    if wk & (hi - 1) & !((lo << 1) - 1) != 0 {
                        continue;
                    }
                    let bk2 = bk ^ to ^ from;
                    assert_eq!(ix.king_offset_with(bk2, 0, rw), ix.king_offset(bk2, wk, 0));
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    #[test]
    fn colex_round_trip() {
        for n in 0..=10u32 {
            for k in 0..=n {
                for r in 0..binom(n, k) {
                    let s = colex_unrank(r, k, n);
                    assert_eq!(s.count_ones(), k);
                    assert!(n == 32 || s >> n == 0);
                    assert_eq!(colex_rank(s), r);
                }
            }
        }
    }

    #[test]
    fn divider_is_exact() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let z = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z ^ (z >> 27)
        };
        let mut ds: Vec<u64> = (1..300).collect();
        ds.extend((0..64).flat_map(|b| {
            [
                1u64 << b,
                (1u64 << b) + 1,
                (1u64 << b).wrapping_sub(1).max(1),
            ]
        }));
        ds.extend([u64::MAX, u64::MAX - 1, binom(32, 16), 3 * binom(29, 5)]);
        for _ in 0..2000 {
            ds.push(next() >> (next() % 64));
        }
        for &d in ds.iter().filter(|&&d| d > 0) {
            let div = Divider::new(d);
            for n in [
                0,
                1,
                d - 1,
                d,
                d.wrapping_add(1),
                u64::MAX,
                u64::MAX - 1,
                next(),
                next() >> 20,
                next() >> 40,
            ] {
                assert_eq!(div.divrem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }

    #[test]
    fn out_of_range() {
        let s: Slice = "0101-nn".parse().unwrap();
        let ix = SliceIndex::new(s);
        assert_eq!(ix.size(), 32 * 31);
        assert!(ix.unrank(ix.size()).is_err());
        assert!(ix.unrank(ix.size() - 1).is_ok());
        let _ = Material::new(0, 1, 0, 1);
    }
}
