//! Codec 7's model with other contexts (issue 32, helper codec32): which neighbours in index
//! order, how fast the probabilities adapt, and what that gains at codec 7's decode cost.
//!
//! The walk, classes, filled don't cares, two binary decisions per value, 12-bit adaptive
//! probabilities, range coder, segment codes (constant, near-constant, coded with a prior id)
//! and byte accounting are `cm8_experiment`'s (codec 7's). What changes is the context of a
//! coded position: the previous coded value of the segment, then the coded values at each
//! stride of `NB` ("none" when skipped or outside the segment), then the threat flag.
//!
//! Usage: `SAMPLE=k [OFFSET=o] [SEG=n] [NB=a,b] [RCAP=20] [WEIGHT=4] [K=n] [ROUNDS=r]
//! [BOOK=file] [SAVE=file] [CONSTSEG=1] [NEARSEG=e] cm9_experiment DIR PIECES`
//!
//! - `NB`: comma list of strides: `a` codec 6's black-king step, `b` its men step, `ma`/`mb`
//!   m times those, a number that many positions back; default `a,b` (codec 6 / 7); `W` / `B`
//!   the nearest earlier position of the segment with one white (black) king moved one square
//!   (found with `SliceIndex::rank`), `X` / `Y` the same for the lowest king of each colour
//!   only (with `FASTCHECK=1` also computed by `fast_lowest`, bit arithmetic alone, and
//!   checked against `rank`);
//! - `TIMING=1`: the decode cost of `X`, `Y` (one thread): codec 6's decoder, the walk with the
//!   classes (per position, as before issue 32's run walk; and the codecs' walk by runs,
//!   `cm6::walk_classes`), and the walk with the classes and `fast_lowest`, on every 10th coded
//!   segment;
//! - `BYFILE=1`: bytes per material, largest first;
//! - `RCAP`: the bit count at which a probability's rate stops falling (codec 6: 20);
//! - the codebook (`K` priors, default 1) is trained as in `cm8_experiment` but from a flat
//!   start (every probability 1/2): `ROUNDS` (default 4) rounds of assigning each coded segment
//!   to its cheapest prior and re-estimating the priors; `K > 1` seeds k-means++ style first;
//! - prints positions per byte, the segments laid out as codec 7 lays them out (72 bytes a
//!   file and 8 a block, constant blocks no data, a uniform file 72 bytes).
use checkers_egdb::format::{cm6, is_dont_care, SliceIndex, TableFile};
use checkers_egdb::rules::{English, Rules};
use checkers_egdb::Position;
use rayon::prelude::*;
use std::sync::Mutex;
use std::time::Instant;

type Prior = Vec<[u16; 2]>;
type Counts = Vec<[[u64; 2]; 2]>;

// ---------------------------------------------------------------- codec 6's model, copied

const PROB_ONE: u32 = 4096;
const PROB_MIN: u32 = 31;

/// The model's precision (`PBITS`, default 12: codec 6) and the clamp of its probabilities
/// (`PMIN`, default 31 at 12 bits, scaled with the bits) for the size-only variant; the
/// priors stay 12-bit and are scaled up.
static PRECISION: std::sync::OnceLock<(u32, u32)> = std::sync::OnceLock::new();

#[inline]
fn precision() -> (u32, u32) {
    *PRECISION.get_or_init(|| {
        let b: u32 = std::env::var("PBITS").map_or(12, |s| s.parse().unwrap());
        let m: u32 = std::env::var("PMIN").map_or(31 << (b - 12), |s| s.parse().unwrap());
        (b, m)
    })
}
const RATE_MAX: u16 = 255;

/// The cap of a probability's bit count (`RCAP`, default 20: codec 6).
static RCAP: std::sync::OnceLock<u16> = std::sync::OnceLock::new();

#[inline]
fn rate_cap() -> u16 {
    *RCAP.get_or_init(|| std::env::var("RCAP").map_or(20, |s| s.parse().unwrap()))
}
const NONE: usize = 3;

const RATES: [u32; RATE_MAX as usize + 1] = {
    let mut r = [0u32; RATE_MAX as usize + 1];
    let mut n = 0;
    while n <= RATE_MAX as usize {
        r[n] = (65536 * 10) / (n as u32 * 10 + 14);
        n += 1;
    }
    r
};

#[derive(Clone, Copy)]
struct Prob {
    p: u16,
    n: u16,
}

impl Prob {
    #[inline]
    fn update(&mut self, bit: bool) {
        let r = i64::from(RATES[self.n as usize]);
        let p = i64::from(self.p);
        let (b, m) = precision();
        let one = 1i64 << b;
        let target = if bit { 0 } else { one };
        let q = p + (((target - p) * r) >> 16);
        self.p = q.clamp(i64::from(m), one - i64::from(m)) as u16;
        if self.n < rate_cap() {
            self.n += 1;
        }
    }
}

#[inline]
fn likeliest(pr: &[Prob; 2]) -> u8 {
    let one = 1u64 << precision().0;
    let p0 = u64::from(pr[0].p);
    let p1 = u64::from(pr[1].p);
    let draw = p0 * one;
    let loss = (one - p0) * p1;
    let win = (one - p0) * (one - p1);
    if draw >= win && draw >= loss {
        1
    } else if win >= loss {
        2
    } else {
        0
    }
}

/// Codec 6's range coder (LZMA's carry-less scheme, short flush).
struct Enc {
    low: u64,
    range: u32,
    cache: u8,
    cache_size: u64,
    out: Vec<u8>,
}

impl Enc {
    fn new() -> Enc {
        Enc {
            low: 0,
            range: u32::MAX,
            cache: 0,
            cache_size: 1,
            out: Vec::new(),
        }
    }
    fn shift_low(&mut self) {
        if self.low < 0xFF00_0000 || self.low > 0xFFFF_FFFF {
            let carry = (self.low >> 32) as u8;
            let mut c = self.cache;
            loop {
                self.out.push(c.wrapping_add(carry));
                c = 0xFF;
                self.cache_size -= 1;
                if self.cache_size == 0 {
                    break;
                }
            }
            self.cache = ((self.low >> 24) & 0xFF) as u8;
        }
        self.cache_size += 1;
        self.low = (self.low & 0x00FF_FFFF) << 8;
    }
    #[inline]
    fn bit(&mut self, prob: &mut Prob, bit: bool) {
        let bound = (self.range >> precision().0) * u32::from(prob.p);
        if !bit {
            self.range = bound;
        } else {
            self.low += u64::from(bound);
            self.range -= bound;
        }
        prob.update(bit);
        while self.range < (1 << 24) {
            self.range <<= 8;
            self.shift_low();
        }
    }
    #[inline]
    fn value(&mut self, pr: &mut [Prob; 2], v: u8) {
        self.bit(&mut pr[0], v != 1);
        if v != 1 {
            self.bit(&mut pr[1], v == 2);
        }
    }
    fn finish_short(mut self) -> Vec<u8> {
        self.low = (self.low + 0x00FF_FFFF) & !0x00FF_FFFF;
        for _ in 0..5 {
            self.shift_low();
        }
        let mut out = self.out;
        out.remove(0);
        while out.last() == Some(&0) {
            out.pop();
        }
        out
    }
}

fn binom(n: u32, k: u32) -> u64 {
    if k > n {
        return 0;
    }
    let mut r = 1u64;
    for i in 0..k {
        r = r * u64::from(n - i) / u64::from(i + 1);
    }
    r
}

/// Codec 6's strides: one black-king step, one men step.
fn strides(ix: &SliceIndex) -> (usize, usize) {
    let m = ix.slice().material;
    let free = 32u32.saturating_sub(u32::from(m.bm) + u32::from(m.wm));
    let (bk, wk) = (u32::from(m.bk), u32::from(m.wk));
    let wk_count = binom(free.saturating_sub(bk), wk);
    let king_count = ix.king_count();
    let s1 = if wk > 0 && bk > 0 {
        wk_count
    } else {
        king_count
    };
    let s2 = if king_count != s1 { king_count } else { 0 };
    (s1 as usize, s2 as usize)
}

/// Stride markers of the exact neighbours (`NB` tokens `W`, `B`).
const NB_W: usize = 1 << 40;
const NB_B: usize = 1 << 41;

/// One stride of `NB`: `(multiple of a, multiple of b, constant)`.
type Nb = (usize, usize, usize);

fn parse_nb(s: &str) -> Vec<Nb> {
    s.split(',')
        .filter(|t| !t.is_empty())
        .map(|t| {
            if let Some(m) = t.strip_suffix('a') {
                (if m.is_empty() { 1 } else { m.parse().unwrap() }, 0, 0)
            } else if t == "W" || t == "X" {
                (0, 0, NB_W)
            } else if t == "B" || t == "Y" {
                (0, 0, NB_B)
            } else if let Some(m) = t.strip_suffix('b') {
                (0, if m.is_empty() { 1 } else { m.parse().unwrap() }, 0)
            } else {
                (0, 0, t.parse().unwrap())
            }
        })
        .collect()
}

// ---------------------------------------------------------------- the data

/// Per position of a segment: 0 skipped, else `CODED | dc << 3 | f << 2 | value`.
const CODED: u8 = 0x10;
const DC: u8 = 0x08;

struct Seg {
    /// Per position: back-offset of the nearest earlier position of the segment with one
    /// white (black) king moved one square, 0 if none.
    nbw: Vec<u16>,
    nbb: Vec<u16>,
    file: usize,
    block: usize,
    /// Index of the segment in its block.
    index: usize,
    pos: Vec<u8>,
    /// The value all coded positions (don't cares excepted) hold, if one.
    constant: Option<u8>,
    /// The exceptions to the most common coded value (don't cares excepted), as (position in
    /// the segment, value), if at most 64.
    exc: Option<Vec<(u16, u8)>>,
}

/// The header codes of a segment besides "coded": `codes` reserved values of the length
/// varint (0: none; 3: constant segments; 3 + 3 * near: also segments of at most `near`
/// exceptions to their most common value).
#[derive(Clone, Copy)]
struct Hdr {
    codes: u64,
    near: usize,
}

impl Hdr {
    /// Bytes of the segment stored without the range coder, if it can be.
    fn alt(&self, s: &Seg) -> Option<u64> {
        if self.codes == 0 {
            return None;
        }
        if s.constant.is_some() {
            return Some(1);
        }
        let e = s.exc.as_ref()?;
        if e.len() > self.near {
            return None;
        }
        // The code (value, count), then per exception varint(delta * 2 + which of the two
        // other values).
        let mut b = 1;
        let mut prev = 0u64;
        for &(k, _) in e {
            b += varint_len((u64::from(k) - prev) * 2 + 1);
            prev = u64::from(k);
        }
        Some(b)
    }
}

struct FileInfo {
    path: std::path::PathBuf,
    positions: u64,
    /// Blocks (each a coded or constant block).
    nblocks: usize,
    /// Every block constant with the same value: a uniform file.
    uniform: bool,
}

/// The back-offsets of the nearest earlier positions with the lowest white (black) king moved
/// one step down, by bit arithmetic alone (what a decoder would compute): `nw` =
/// `C(F - bk, wk)` white-king placements per black-king placement. 0 where none.
fn fast_lowest(p: &Position, nw: u64) -> (u64, u64) {
    let men = (p.black | p.white) & !p.kings;
    let bk = p.black & p.kings;
    let wk = p.white & p.kings;
    let occ = p.black | p.white;
    let fw = !(men | bk);
    let fb = !men;
    let span = |f: u32, t: u32, q: u32| {
        u64::from((f & ((1u32 << q) - 1) & !((1u32 << t) - 1)).count_ones())
    };
    let mut w = 0;
    if wk != 0 {
        let q = wk.trailing_zeros();
        for t in below(q) {
            if t != u32::MAX && occ & (1 << t) == 0 {
                let off = span(fw, t, q);
                if w == 0 || off < w {
                    w = off;
                }
            }
        }
    }
    let mut b = 0;
    if bk != 0 {
        let q = bk.trailing_zeros();
        for t in below(q) {
            if t != u32::MAX && occ & (1 << t) == 0 {
                let mut off = span(fb, t, q) * nw;
                // White kings between t and q lose one free square below them.
                let mut x = wk & ((1u32 << q) - 1) & !((2u32 << t) - 1);
                while x != 0 {
                    let sq = x.trailing_zeros();
                    x &= x - 1;
                    let i = (wk & ((1u32 << sq) - 1)).count_ones();
                    let rho = u64::from((fw & ((1u32 << sq) - 1)).count_ones());
                    off += binom(rho as u32 - 1, i);
                }
                if b == 0 || off < b {
                    b = off;
                }
            }
        }
    }
    (w, b)
}

/// Whether `NB` names the exact neighbours `W` / `B` (computed at load).
fn exact_nb() -> bool {
    std::env::var("NB").is_ok_and(|s| s.contains(['W', 'B', 'X', 'Y']))
}

/// The squares (bit indices) one diagonal step below bit `sq` (toward square 1: a king moved
/// there gives a smaller index), `u32::MAX` where none: square 1 (bit 0) is on column 1 of
/// row 0, rows of four.
fn below(sq: u32) -> [u32; 2] {
    let (r, c4) = ((sq / 4) as i32, (sq % 4) as i32);
    let col = 2 * c4 + i32::from(r % 2 == 0);
    let mut v = [u32::MAX; 2];
    for (j, dc) in [1, -1].into_iter().enumerate() {
        let (r2, c2) = (r - 1, col + dc);
        if (0..8).contains(&r2) && (0..8).contains(&c2) {
            v[j] = (r2 * 4 + c2 / 2) as u32;
        }
    }
    v
}

/// The decoder's class (bitboard tests only, as codec 6's): 0 skipped, else `CODED`.
fn dclass(p: &Position) -> u8 {
    if English.has_capture(p) || !English.has_quiet_move(p) {
        return 0;
    }
    let fl = Position {
        side: p.side.opponent(),
        ..*p
    };
    CODED | (u8::from(English.has_capture(&fl)) << 2)
}

fn class(p: &Position) -> u8 {
    if English.has_capture(p) || !English.has_quiet_move(p) {
        return 0;
    }
    let fl = Position {
        side: p.side.opponent(),
        ..*p
    };
    let f = u8::from(English.has_capture(&fl));
    let dc = f == 1 && is_dont_care(English, p);
    CODED | (u8::from(dc) << 3) | (f << 2)
}

fn load(path: &std::path::Path, fi: usize, segment: usize) -> (FileInfo, Vec<Seg>) {
    let tf = TableFile::open(path).unwrap();
    let meta = tf.meta().clone();
    let ix = SliceIndex::new(meta.slice);
    let vals = tf.decode_all().unwrap();
    let bp = 65_520usize;
    let mut segs = Vec::new();
    let mut first_const: Option<u8> = None;
    let mut uniform = true;
    let mut nblocks = 0;
    for (b, chunk) in vals.chunks(bp).enumerate() {
        nblocks += 1;
        let start = (b * bp) as u64;
        let n = chunk.len();
        let mut cls: Vec<u8> = Vec::with_capacity(n);
        let mut nbw: Vec<u16> = Vec::with_capacity(n);
        let mut nbb: Vec<u16> = Vec::with_capacity(n);
        ix.visit(start, start + n as u64, |i, p| {
            let c = class(&p);
            let (mut w, mut bb) = (0u16, 0u16);
            let only_lowest = std::env::var("NB").is_ok_and(|s| s.contains('X') || s.contains('Y'));
            if c & CODED != 0 && exact_nb() {
                let k = (i - start) as usize;
                let lo = start + (k / segment * segment) as u64;
                let occ = p.black | p.white;
                let mut kings = p.kings;
                if only_lowest {
                    // The lowest king of each colour only.
                    let bk = p.kings & p.black;
                    let wk = p.kings & p.white;
                    kings = (bk & bk.wrapping_neg()) | (wk & wk.wrapping_neg());
                }
                while kings != 0 {
                    let sq = kings.trailing_zeros();
                    kings &= kings - 1;
                    for t in below(sq) {
                        if t == u32::MAX || occ & (1 << t) != 0 {
                            continue;
                        }
                        let mv = |b: u32| (b & !(1 << sq)) | (1 << t);
                        let q = if p.black & (1 << sq) != 0 {
                            Position {
                                black: mv(p.black),
                                kings: mv(p.kings),
                                ..p
                            }
                        } else {
                            Position {
                                white: mv(p.white),
                                kings: mv(p.kings),
                                ..p
                            }
                        };
                        let j = ix.rank(&q);
                        if j < i && j >= lo {
                            let off = (i - j) as u16;
                            let slot = if p.black & (1 << sq) != 0 {
                                &mut bb
                            } else {
                                &mut w
                            };
                            if *slot == 0 || off < *slot {
                                *slot = off;
                            }
                        }
                    }
                }
            }
            if only_lowest && c & CODED != 0 && std::env::var("FASTCHECK").is_ok() {
                let m = meta.slice.material;
                let free = 32 - u32::from(m.bm) - u32::from(m.wm);
                let nw = binom(free - u32::from(m.bk), u32::from(m.wk));
                let (fw, fb) = fast_lowest(&p, nw);
                let k = (i - start) as usize;
                let lo = start + (k / segment * segment) as u64;
                let keep = |off: u64| {
                    if off > 0 && i - off >= lo {
                        off as u16
                    } else {
                        0
                    }
                };
                assert_eq!((keep(fw), keep(fb)), (w, bb), "{} index {i}", p.to_fen());
            }
            nbw.push(w);
            nbb.push(bb);
            let v = chunk[(i - start) as usize];
            cls.push(if c & CODED != 0 && c & DC == 0 {
                assert!(v <= 2);
                c | v
            } else {
                c
            });
        });
        let mut first = None;
        let mut constant = true;
        for &c in &cls {
            if c & CODED != 0 && c & DC == 0 {
                let v = c & 3;
                match first {
                    None => first = Some(v),
                    Some(x) if x != v => constant = false,
                    _ => {}
                }
            }
        }
        if constant {
            let c = first.unwrap_or(1);
            match first_const {
                None => first_const = Some(c),
                Some(x) if x != c => uniform = false,
                _ => {}
            }
            continue;
        }
        uniform = false;
        for (si, s0) in (0..n).step_by(segment).enumerate() {
            let s1 = (s0 + segment).min(n);
            let pos = cls[s0..s1].to_vec();
            let mut cv = None;
            let mut cst = true;
            for &c in &pos {
                if c & CODED != 0 && c & DC == 0 {
                    match cv {
                        None => cv = Some(c & 3),
                        Some(x) if x != c & 3 => cst = false,
                        _ => {}
                    }
                }
            }
            let mut h = [0usize; 3];
            for &c in &pos {
                if c & CODED != 0 && c & DC == 0 {
                    h[usize::from(c & 3)] += 1;
                }
            }
            let major = (0..3).max_by_key(|&v| (h[v], v)).unwrap() as u8;
            let exc: Vec<(u16, u8)> = pos
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c & CODED != 0 && c & DC == 0 && c & 3 != major)
                .map(|(k, &c)| (k as u16, c & 3))
                .take(65)
                .collect();
            segs.push(Seg {
                nbw: nbw[s0..s1].to_vec(),
                nbb: nbb[s0..s1].to_vec(),
                file: fi,
                block: b,
                index: si,
                pos,
                constant: if cst { Some(cv.unwrap_or(1)) } else { None },
                exc: (exc.len() <= 64).then_some(exc),
            });
        }
    }
    (
        FileInfo {
            path: path.to_path_buf(),
            positions: meta.positions,
            nblocks,
            uniform,
        },
        segs,
    )
}

// ---------------------------------------------------------------- coding a segment

/// Code a segment from `prior` (weight `w`) with the neighbours `nb` (strides of the
/// segment's slice): the stored bytes and, with `counts`, the bits seen per context.
fn code(s: &Seg, nb: &[usize], prior: &Prior, w: u16, mut counts: Option<&mut Counts>) -> Vec<u8> {
    let n = s.pos.len();
    let mut probs: Vec<[Prob; 2]> = prior
        .iter()
        .map(|q| [Prob { p: q[0], n: w }, Prob { p: q[1], n: w }])
        .collect();
    let mut coded = vec![NONE as u8; n];
    let mut last = NONE;
    let mut e = Enc::new();
    for k in 0..n {
        let c = s.pos[k];
        if c & CODED == 0 {
            continue;
        }
        let f = usize::from((c >> 2) & 1);
        let mut ctx = last;
        for &st in nb {
            let st = match st {
                NB_W => usize::from(s.nbw[k]),
                NB_B => usize::from(s.nbb[k]),
                x => x,
            };
            let x = if st > 0 && k >= st {
                coded[k - st] as usize
            } else {
                NONE
            };
            ctx = ctx * 4 + x;
        }
        let ctx = ctx * 2 + f;
        let pr = &mut probs[ctx];
        let v = if c & DC != 0 { likeliest(pr) } else { c & 3 };
        if let Some(cn) = counts.as_deref_mut() {
            cn[ctx][0][usize::from(v != 1)] += 1;
            if v != 1 {
                cn[ctx][1][usize::from(v == 2)] += 1;
            }
        }
        e.value(pr, v);
        coded[k] = v;
        last = usize::from(v);
    }
    e.finish_short()
}

fn varint_len(mut x: u64) -> u64 {
    let mut n = 1;
    while x >= 0x80 {
        x >>= 7;
        n += 1;
    }
    n
}

fn estimate(c: &[[u64; 2]; 2], base: &[u16; 2], a: f64) -> [u16; 2] {
    let p = |d: [u64; 2], q: u16| {
        let q = f64::from(q) / 4096.0;
        let x = (d[0] as f64 + a * q + 0.4) / (d[0] as f64 + d[1] as f64 + a + 0.8);
        ((x * 4096.0).round() as u32).clamp(PROB_MIN, PROB_ONE - PROB_MIN) as u16
    };
    [p(c[0], base[0]), p(c[1], base[1])]
}

fn save(book: &[Prior], path: &str) {
    let mut s = String::new();
    for p in book {
        let w: Vec<String> = p
            .iter()
            .flat_map(|x| [x[0].to_string(), x[1].to_string()])
            .collect();
        s.push_str(&w.join(" "));
        s.push('\n');
    }
    std::fs::write(path, s).unwrap();
}

fn load_book(path: &str, nctx: usize) -> Vec<Prior> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Vec<u16> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            assert_eq!(v.len(), 2 * nctx);
            (0..nctx).map(|i| [v[2 * i], v[2 * i + 1]]).collect()
        })
        .collect()
}

/// The strides of `nb` for a segment's slice.
fn seg_strides(nb: &[Nb], st: (usize, usize)) -> Vec<usize> {
    nb.iter()
        .map(|&(a, b, c)| {
            if c >= NB_W {
                c
            } else {
                a * st.0 + b * st.1 + c
            }
        })
        .collect()
}

/// Bytes of each segment under each prior.
fn cost_matrix(segs: &[Seg], sst: &[Vec<usize>], book: &[Prior], w: u16) -> Vec<Vec<u32>> {
    segs.par_iter()
        .zip(sst)
        .map(|(s, nb)| {
            book.iter()
                .map(|p| code(s, nb, p, w, None).len() as u32)
                .collect()
        })
        .collect()
}

/// Total bytes of the files, each segment stored in its cheapest form.
fn total(files: &[FileInfo], segs: &[Seg], cm: &[Vec<u32>], hdr: Hdr) -> (u64, u64) {
    let k = cm[0].len() as u64;
    let mut fbytes = vec![0u64; files.len()];
    let mut alts = 0;
    for (s, c) in segs.iter().zip(cm) {
        let (id, &best) = c.iter().enumerate().min_by_key(|&(_, &x)| x).unwrap();
        let coded = varint_len(hdr.codes + u64::from(best) * k + id as u64) + u64::from(best);
        fbytes[s.file] += match hdr.alt(s) {
            Some(a) if a <= coded => {
                alts += 1;
                a
            }
            _ => coded,
        };
    }
    let t = files
        .iter()
        .zip(&fbytes)
        .map(|(fi, &b)| {
            if fi.uniform {
                72
            } else {
                72 + 8 * fi.nblocks as u64 + b
            }
        })
        .sum();
    (t, alts)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let pieces: u32 = args[2].parse().unwrap();
    let env = |k: &str, d: usize| std::env::var(k).map_or(d, |s| s.parse().unwrap());
    let sample = env("SAMPLE", 1);
    let offset = env("OFFSET", 0);
    let segment = env("SEG", cm6::SEGMENT);
    let w = env("WEIGHT", usize::from(cm6::PRIOR_WEIGHT)) as u16;
    let kk = env("K", 1);
    let rounds = env("ROUNDS", 4);
    let constseg = env("CONSTSEG", 1) != 0;
    let near = env("NEARSEG", 10);
    let nbs = std::env::var("NB").unwrap_or_else(|_| "a,b".into());
    let nb = parse_nb(&nbs);
    let nctx = 4usize.pow(1 + nb.len() as u32) * 2;
    let hdr = Hdr {
        codes: if constseg || near > 0 {
            3 + 3 * near as u64
        } else {
            0
        },
        near,
    };
    let t0 = Instant::now();
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension().is_some_and(|x| x == "egdb")).then_some(p)
        })
        .filter(|p| TableFile::open(p).unwrap().meta().slice.material.pieces() == pieces)
        .collect();
    paths.sort();
    let paths: Vec<_> = paths.into_iter().skip(offset).step_by(sample).collect();
    let loaded: Vec<(FileInfo, Vec<Seg>, (usize, usize))> = paths
        .par_iter()
        .enumerate()
        .map(|(i, p)| {
            let (f, s) = load(p, i, segment);
            let st = strides(&SliceIndex::new(TableFile::open(p).unwrap().meta().slice));
            (f, s, st)
        })
        .collect();
    let mut files = Vec::new();
    let mut segs = Vec::new();
    let mut sst = Vec::new();
    for (f, s, st) in loaded {
        files.push(f);
        for x in s {
            sst.push(seg_strides(&nb, st));
            segs.push(x);
        }
    }
    let positions: u64 = files.iter().map(|f| f.positions).sum();
    println!(
        "NB={nbs} ({nctx} contexts) RCAP={} SEG={segment} K={kk} WEIGHT={w}: {} files, {} positions, {} coded segments; loaded in {:.0} s",
        rate_cap(),
        files.len(),
        positions,
        segs.len(),
        t0.elapsed().as_secs_f64()
    );
    let report = |name: &str, cm: &[Vec<u32>]| {
        let (t, alts) = total(&files, &segs, cm, hdr);
        println!(
            "{name}: {t} B = {:.2} positions/byte ({alts} segments without the coder); {:.0} s",
            positions as f64 / t as f64,
            t0.elapsed().as_secs_f64()
        );
    };
    let flat: Prior = vec![[2048, 2048]; nctx];
    let mut book: Vec<Prior> = if let Ok(b) = std::env::var("BOOK") {
        load_book(&b, nctx)
    } else {
        vec![flat.clone()]
    };
    let skip = |s: &Seg| hdr.codes > 0 && s.constant.is_some();
    if std::env::var("BOOK").is_err() {
        // One prior trained first (two rounds), then the seeds of the others.
        for _ in 0..2 {
            let cn = Mutex::new(vec![[[0u64; 2]; 2]; nctx]);
            segs.par_iter().zip(&sst).for_each(|(s, nb)| {
                if skip(s) {
                    return;
                }
                let mut c: Counts = vec![[[0; 2]; 2]; nctx];
                code(s, nb, &book[0], w, Some(&mut c));
                let mut all = cn.lock().unwrap();
                for (x, y) in all.iter_mut().zip(&c) {
                    for d in 0..2 {
                        x[d][0] += y[d][0];
                        x[d][1] += y[d][1];
                    }
                }
            });
            let cn = cn.into_inner().unwrap();
            book[0] = (0..nctx).map(|c| estimate(&cn[c], &flat[c], 0.0)).collect();
        }
        let sub: Vec<usize> = (0..segs.len())
            .filter(|&i| !skip(&segs[i]))
            .step_by((segs.len() / 3000).max(1))
            .collect();
        let mut best: Vec<u32> = sub
            .par_iter()
            .map(|&i| code(&segs[i], &sst[i], &book[0], w, None).len() as u32)
            .collect();
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        while book.len() < kk {
            let total: u64 = best.iter().map(|&x| u64::from(x)).sum();
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let mut r = rng % total.max(1);
            let mut pick = 0;
            for (j, &x) in best.iter().enumerate() {
                if r < u64::from(x) {
                    pick = j;
                    break;
                }
                r -= u64::from(x);
            }
            let mut cn: Counts = vec![[[0; 2]; 2]; nctx];
            let i = sub[pick];
            code(&segs[i], &sst[i], &book[0], w, Some(&mut cn));
            let p: Prior = (0..nctx)
                .map(|c| estimate(&cn[c], &book[0][c], 4.0))
                .collect();
            let nb: Vec<u32> = sub
                .par_iter()
                .map(|&i| code(&segs[i], &sst[i], &p, w, None).len() as u32)
                .collect();
            book.push(p);
            for (b, n) in best.iter_mut().zip(nb) {
                *b = (*b).min(n);
            }
        }
        for r in 0..rounds {
            let cm = cost_matrix(&segs, &sst, &book, w);
            report(&format!("K={kk} round {r}"), &cm);
            let assign: Vec<usize> = cm
                .iter()
                .map(|c| c.iter().enumerate().min_by_key(|&(_, &x)| x).unwrap().0)
                .collect();
            let counts = Mutex::new(vec![vec![[[0u64; 2]; 2]; nctx]; book.len()]);
            segs.par_iter()
                .zip(&sst)
                .zip(&assign)
                .for_each(|((s, nb), &a)| {
                    if skip(s) {
                        return;
                    }
                    let mut cn: Counts = vec![[[0; 2]; 2]; nctx];
                    code(s, nb, &book[a], w, Some(&mut cn));
                    let mut all = counts.lock().unwrap();
                    for (x, y) in all[a].iter_mut().zip(&cn) {
                        for d in 0..2 {
                            x[d][0] += y[d][0];
                            x[d][1] += y[d][1];
                        }
                    }
                });
            let counts = counts.into_inner().unwrap();
            let mut used = vec![0usize; book.len()];
            for (&a, s) in assign.iter().zip(&segs) {
                if !skip(s) {
                    used[a] += 1;
                }
            }
            for (j, p) in book.iter_mut().enumerate() {
                if used[j] > 0 {
                    let old = p.clone();
                    *p = (0..nctx)
                        .map(|c| estimate(&counts[j][c], &old[c], 0.0))
                        .collect();
                }
            }
        }
    }
    if let Ok(out) = std::env::var("SAVE") {
        save(&book, &out);
    }
    let cm = cost_matrix(&segs, &sst, &book, w);
    report(&format!("final NB={nbs} K={}", book.len()), &cm);
    if std::env::var("TIMING").is_ok() {
        // Decode cost: codec 6's decoder (`cm6::decode_segment`) on every 10th coded segment,
        // against a walk of the same positions that computes the classes and the two
        // neighbours of `fast_lowest` (the extra work of a decoder with contexts X, Y).
        let prior6: Prior = cm6::PRIOR.to_vec();
        let picked: Vec<usize> = (0..segs.len())
            .filter(|&i| segs[i].constant.is_none())
            .step_by(10)
            .collect();
        let (mut t6, mut tw, mut tc, mut npos, mut sink) = (0f64, 0f64, 0f64, 0u64, 0u64);
        let mut tr = 0f64;
        let mut buf: Vec<u8> = Vec::new();
        for &i in &picked {
            let sg = &segs[i];
            let tf = TableFile::open(&files[sg.file].path).unwrap();
            let ix = SliceIndex::new(tf.meta().slice);
            let st = strides(&ix);
            let bytes = code(sg, &[st.0, st.1], &prior6, cm6::PRIOR_WEIGHT, None);
            let start = (sg.block * 65_520) as u64;
            let n = (tf.meta().positions - start).min(65_520) as usize;
            let m = ix.slice().material;
            let free = 32 - u32::from(m.bm) - u32::from(m.wm);
            let nw = binom(free - u32::from(m.bk), u32::from(m.wk));
            let s0 = start + (sg.index * segment) as u64;
            let s1 = s0 + sg.pos.len() as u64;
            for _ in 0..3 {
                let a = Instant::now();
                let out = cm6::decode_segment(&ix, start, n, sg.index, &bytes).unwrap();
                t6 += a.elapsed().as_secs_f64();
                sink += u64::from(out[0]);
                let a = Instant::now();
                ix.visit(s0, s1, |_, p| {
                    if dclass(&p) & CODED != 0 {
                        sink += 1;
                    }
                });
                tc += a.elapsed().as_secs_f64();
                // The codecs' walk (`table::walk`: classes by runs of king placements).
                buf.clear();
                buf.resize(sg.pos.len(), 0);
                let a = Instant::now();
                let got = cm6::walk_classes(&ix, s0, &mut buf);
                tr += a.elapsed().as_secs_f64();
                assert_eq!(got, buf.len());
                sink += buf.iter().filter(|&&c| c != 0).count() as u64;
                let a = Instant::now();
                ix.visit(s0, s1, |_, p| {
                    if dclass(&p) & CODED != 0 {
                        let (x, y) = fast_lowest(&p, nw);
                        sink = sink.wrapping_add(x ^ y);
                    }
                });
                tw += a.elapsed().as_secs_f64();
                npos += sg.pos.len() as u64;
            }
        }
        println!(
            "timing over {} segments x3: cm6::decode_segment {:.1} ns a position; walk + classes {:.1} ns (the codecs' walk by runs, cm6::walk_classes: {:.1} ns); walk + classes + fast_lowest {:.1} ns (sink {sink})",
            picked.len(),
            t6 * 1e9 / npos as f64,
            tc * 1e9 / npos as f64,
            tr * 1e9 / npos as f64,
            tw * 1e9 / npos as f64
        );
    }
    if std::env::var("BYFILE").is_ok() {
        // Bytes per material (the file name's first four digits), largest first.
        let k = cm[0].len() as u64;
        let mut fb = vec![0u64; files.len()];
        for (s, c) in segs.iter().zip(&cm) {
            let (id, &best) = c.iter().enumerate().min_by_key(|&(_, &x)| x).unwrap();
            let coded = varint_len(hdr.codes + u64::from(best) * k + id as u64) + u64::from(best);
            fb[s.file] += hdr.alt(s).map_or(coded, |a| a.min(coded));
        }
        let mut by: std::collections::BTreeMap<String, (u64, u64, usize)> = Default::default();
        for (f, fi) in files.iter().enumerate() {
            let name = fi.path.file_name().unwrap().to_string_lossy().to_string();
            let e = by.entry(name[..4].to_string()).or_default();
            e.0 += fb[f] + 72 + 8 * fi.nblocks as u64;
            e.1 += fi.positions;
            e.2 += 1;
        }
        let mut v: Vec<_> = by.into_iter().collect();
        v.sort_by_key(|x| std::cmp::Reverse(x.1 .0));
        let all: u64 = v.iter().map(|x| x.1 .0).sum();
        for (m, (b, p, n)) in v.iter().take(25) {
            println!(
                "  {m}: {n} files, {b} B ({:.1}%), {:.1} positions/byte",
                *b as f64 * 100.0 / all as f64,
                *p as f64 / *b as f64
            );
        }
    }
}
