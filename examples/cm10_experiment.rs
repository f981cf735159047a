//! Issue 32 (helper codec8): codec 7's segments with the contexts of `cm9_experiment`
//! (previous value, `a`, `b`, `X`, `Y`, threat) and a richer model on top, measured for size
//! and coding cost: a second adaptation rate averaged in, an APM (SSE) stage on the final
//! probability, logistic mixing with a second model.
//!
//! The walk, classes, filled don't cares (the likeliest value under the final
//! probabilities), two binary decisions per value, 12-bit probabilities, range coder, segment
//! codes (constant, near-constant, coded with a prior id), codebook training (k-means from a
//! flat start) and byte accounting are `cm9_experiment`'s (codec 7's).
//!
//! Usage: `SAMPLE=k [OFFSET=o] [SEG=n] [NB=a,b,X,Y] [K=n] [ROUNDS=r] [BOOK=file [REFINE=r]]
//! [SAVE=file] [TIME=1] CFGS='cfg|cfg|...' cm10_experiment DIR PIECES`
//!
//! - `NB` decides only which exact neighbours the load computes (`X`, `Y`: the lowest king
//!   of each colour moved one square down; `W`, `B`: any king);
//! - `CFGS`: model variants, `|`-separated, each of space-separated `key=value`:
//!   `nb=a.b.X.Y` model 1's strides (as `cm9_experiment`'s `NB`, `.` for `,`);
//!   `nb2=...` a second model (previous value, those strides, threat) mixed with model 1
//!   in the logistic domain (weights per decision, threat and previous value, `wsel=0`:
//!   decision and threat only; `lr` learning rate, `w=a.b` starting weights in 64ths);
//!   `dual=c` a second probability per context whose bit count stops at `c` (the first
//!   stops at 20), the two averaged; `apm=1` an APM on (decision, threat, previous value),
//!   `apm=2+j` also the value at model 1's stride `j`; `arate` its rate shift (6),
//!   `aw` its output weight in quarters (3); `avg=1` model 2's probability averaged with
//!   model 1's instead of mixed; `cap=n` the bit count at which the rate stops falling
//!   (20), `pw=n` the prior's weight (`WEIGHT`, 4); `train=n`: `n` passes that set the
//!   APM's and the mixer's starting state to the average of their states at the end of
//!   every segment (after the codebook's training), saved with `SAVE` as `FILE.N.state`
//!   and read back with `STATE=file` (held-out runs);
//! - the codebook holds, per prior, model 1's contexts then model 2's; `BOOK` loads one
//!   (shorter priors padded with flat ones), `REFINE=r` runs `r` k-means rounds on it;
//! - `TIME=1`: the coding time per position (one thread, every 10th coded segment, best of
//!   3 passes), an estimate of a decoder's model cost (compare variants within one run).
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
    /// The update with the bit count stopping at `cap` (a second rate, `dual`).
    #[inline]
    fn update_cap(&mut self, bit: bool, cap: u16) {
        let r = i64::from(RATES[self.n as usize]);
        let p = i64::from(self.p);
        let target = if bit { 0 } else { 4096 };
        let q = p + (((target - p) * r) >> 16);
        self.p = q.clamp(i64::from(PROB_MIN), i64::from(PROB_ONE - PROB_MIN)) as u16;
        if self.n < cap {
            self.n += 1;
        }
    }
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
    /// Code `bit` with probability `p` (of a 0 bit, out of 4,096), no update.
    #[inline]
    fn code(&mut self, p: u32, bit: bool) {
        let bound = (self.range >> 12) * p;
        if !bit {
            self.range = bound;
        } else {
            self.low += u64::from(bound);
            self.range -= bound;
        }
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
    static X: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *X.get_or_init(|| {
        std::env::var("NB")
            .unwrap_or_else(|_| "a,b,X,Y".into())
            .contains(['W', 'B', 'X', 'Y'])
    })
}

/// Whether the exact neighbours are of the lowest king of each colour only (`X`, `Y`).
fn only_lowest() -> bool {
    static X: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *X.get_or_init(|| {
        std::env::var("NB")
            .unwrap_or_else(|_| "a,b,X,Y".into())
            .contains(['X', 'Y'])
    })
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
    let fastcheck = std::env::var("FASTCHECK").is_ok();
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
            let only_lowest = only_lowest();
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
            if only_lowest && c & CODED != 0 && fastcheck {
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
        for s0 in (0..n).step_by(segment) {
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
                pos,
                constant: if cst { Some(cv.unwrap_or(1)) } else { None },
                exc: (exc.len() <= 64).then_some(exc),
            });
        }
    }
    (
        FileInfo {
            positions: meta.positions,
            nblocks,
            uniform,
        },
        segs,
    )
}

// ---------------------------------------------------------------- coding a segment

/// A model variant (`CFGS`): the neighbours of model 1 (`nb`), an optional model 2 mixed with
/// it (`nb2`), a second adaptation rate averaged in (`dual`), an APM stage (`apm`).
#[derive(Clone, Debug)]
struct Cfg {
    name: String,
    /// Strides of model 1, then of model 2 (`n1` of them model 1's).
    nb: Vec<Nb>,
    n1: usize,
    /// Mixing: model 2 present.
    mix: bool,
    /// 0: one probability per context and decision; else a second one whose bit count stops
    /// at `dual`, the two averaged.
    dual: u16,
    /// 0: no APM; 1: APM context (decision, threat, previous); 2 + j: also the value at
    /// model 1's stride `j`.
    apm: usize,
    /// APM node rate (shift) and output weight (out of 4).
    arate: u32,
    aw: u32,
    /// Mixer learning rate (`w += s * err * lr >> 14`) and starting weights (out of 64).
    lr: i64,
    w0: [i64; 2],
    /// Mixer weight sets: 0 by (decision, threat), 1 by (decision, threat, previous).
    wsel: usize,
    /// Model 2 averaged with model 1 (probabilities, equal weights) instead of mixed.
    avg: bool,
    /// The bit count at which the (first) probability's rate stops falling (20: codec 7).
    cap: u16,
    /// The prior's weight in bits, if not `WEIGHT`.
    pw: Option<u16>,
    /// Passes that train the APM's and the mixer's starting state (the average of their
    /// states at the end of every segment); 0: the identity APM, weights `w0`.
    train: usize,
    /// The trained starting APM tables and mixer weights.
    apm0: Option<Vec<[u32; 33]>>,
    mw0: Option<Vec<[i64; 2]>>,
}

impl Cfg {
    fn parse(s: &str) -> Cfg {
        let mut c = Cfg {
            name: s.trim().to_string(),
            nb: parse_nb("a,b,X,Y"),
            n1: 4,
            mix: false,
            dual: 0,
            apm: 0,
            arate: 6,
            aw: 3,
            lr: 8,
            w0: [40, 24],
            wsel: 1,
            avg: false,
            cap: 20,
            pw: None,
            train: 0,
            apm0: None,
            mw0: None,
        };
        let mut nb2 = Vec::new();
        for kv in s.split_whitespace() {
            let (k, v) = kv.split_once('=').expect("key=value");
            match k {
                "nb" => {
                    c.nb = parse_nb(&v.replace('.', ","));
                    c.n1 = c.nb.len();
                }
                "nb2" => {
                    nb2 = parse_nb(&v.replace('.', ","));
                    c.mix = true;
                }
                "dual" => c.dual = v.parse().unwrap(),
                "apm" => c.apm = v.parse().unwrap(),
                "arate" => c.arate = v.parse().unwrap(),
                "aw" => c.aw = v.parse().unwrap(),
                "lr" => c.lr = v.parse().unwrap(),
                "wsel" => c.wsel = v.parse().unwrap(),
                "avg" => c.avg = v == "1",
                "cap" => c.cap = v.parse().unwrap(),
                "pw" => c.pw = Some(v.parse().unwrap()),
                "train" => c.train = v.parse().unwrap(),
                "w" => {
                    let (a, b) = v.split_once('.').unwrap();
                    c.w0 = [a.parse().unwrap(), b.parse().unwrap()];
                }
                _ => panic!("unknown key {k}"),
            }
        }
        c.nb.extend(nb2);
        c
    }
    fn nctx1(&self) -> usize {
        4usize.pow(1 + self.n1 as u32) * 2
    }
    fn nctx2(&self) -> usize {
        if self.mix {
            4usize.pow(1 + (self.nb.len() - self.n1) as u32) * 2
        } else {
            0
        }
    }
    fn nctx(&self) -> usize {
        self.nctx1() + self.nctx2()
    }
}

/// `stretch(p) = ln(p / (1 - p))` in 8 fractional bits (p of 4,096), clamped to +-2047;
/// `squash` its inverse on -2047..=2047.
struct Tables {
    stretch: Vec<i32>,
    squash: Vec<u32>,
}

static TABLES: std::sync::OnceLock<Tables> = std::sync::OnceLock::new();

fn tables() -> &'static Tables {
    TABLES.get_or_init(|| {
        let stretch = (0..4096)
            .map(|p| {
                let x = (f64::from(p).max(0.5)) / 4096.0;
                ((x / (1.0 - x)).ln() * 256.0)
                    .round()
                    .clamp(-2047.0, 2047.0) as i32
            })
            .collect();
        let squash = (0..4095)
            .map(|i| {
                let x = f64::from(i - 2047) / 256.0;
                ((4096.0 / (1.0 + (-x).exp())).round() as u32).clamp(1, 4095)
            })
            .collect();
        Tables { stretch, squash }
    })
}

#[inline]
fn stretch(p: u32) -> i32 {
    tables().stretch[p as usize]
}

#[inline]
fn squash(x: i64) -> u32 {
    tables().squash[(x.clamp(-2047, 2047) + 2047) as usize]
}

/// The state of a model variant over one segment.
struct St<'a> {
    cfg: &'a Cfg,
    probs: Vec<[Prob; 2]>,
    probs2: Vec<[Prob; 2]>,
    apm: Vec<[u32; 33]>,
    mw: Vec<[i64; 2]>,
}

/// One decision's prediction and what its update needs.
#[derive(Clone, Copy, Default)]
struct Pred {
    /// The probability of a 0 bit (of 4,096) the coder uses.
    p: u32,
    /// The mixer's output and inputs.
    pm: u32,
    s: [i32; 2],
    wi: usize,
    ai: usize,
    lo: usize,
    frac: u32,
}

impl St<'_> {
    fn new<'a>(cfg: &'a Cfg, prior: &Prior, w: u16) -> St<'a> {
        let probs: Vec<[Prob; 2]> = prior
            .iter()
            .map(|q| [Prob { p: q[0], n: w }, Prob { p: q[1], n: w }])
            .collect();
        let probs2 = if cfg.dual > 0 {
            probs.clone()
        } else {
            Vec::new()
        };
        let apm = if let Some(a) = &cfg.apm0 {
            a.clone()
        } else if cfg.apm > 0 {
            let mut t = [0u32; 33];
            for (j, x) in t.iter_mut().enumerate() {
                *x = squash((j as i64 - 16) * 128) * 16;
            }
            vec![t; if cfg.apm == 1 { 16 } else { 64 }]
        } else {
            Vec::new()
        };
        let mw = if let Some(m) = &cfg.mw0 {
            m.clone()
        } else if cfg.mix {
            vec![[cfg.w0[0] << 10, cfg.w0[1] << 10]; 64]
        } else {
            Vec::new()
        };
        St {
            cfg,
            probs,
            probs2,
            apm,
            mw,
        }
    }
    #[inline]
    fn model_p(&self, ctx: usize, d: usize) -> u32 {
        let p = u32::from(self.probs[ctx][d].p);
        if self.cfg.dual > 0 {
            (p + u32::from(self.probs2[ctx][d].p)) >> 1
        } else {
            p
        }
    }
    /// Decision `d`'s prediction in contexts `c1` (model 1), `c2` (model 2); `sel` = threat
    /// and previous value (`f + 2 * last`), `ext` the APM's extra neighbour value.
    #[inline]
    fn predict(&self, c1: usize, c2: usize, d: usize, sel: usize, ext: usize) -> Pred {
        let mut r = Pred {
            p: self.model_p(c1, d),
            ..Pred::default()
        };
        if self.cfg.mix && self.cfg.avg {
            r.p = (r.p + self.model_p(c2, d)) >> 1;
        } else if self.cfg.mix {
            let pb = self.model_p(c2, d);
            r.s = [stretch(r.p), stretch(pb)];
            r.wi = if self.cfg.wsel == 0 {
                d * 2 + (sel & 1)
            } else {
                d * 8 + sel
            };
            let w = self.mw[r.wi];
            r.p = squash((w[0] * i64::from(r.s[0]) + w[1] * i64::from(r.s[1])) >> 16);
        }
        r.pm = r.p;
        if self.cfg.apm > 0 {
            let sv = (stretch(r.p) + 2048).clamp(0, 4095) as u32;
            r.lo = (sv >> 7) as usize;
            r.frac = sv & 127;
            r.ai = d * 8 + sel + if self.cfg.apm >= 2 { 16 * ext } else { 0 };
            let t = &self.apm[r.ai];
            let a = (t[r.lo] * (128 - r.frac) + t[r.lo + 1] * r.frac) >> 11;
            r.p = (r.p * (4 - self.cfg.aw) + a * self.cfg.aw) >> 2;
        }
        r.p = r.p.clamp(PROB_MIN, PROB_ONE - PROB_MIN);
        r
    }
    #[inline]
    fn update(&mut self, c1: usize, c2: usize, d: usize, r: &Pred, bit: bool) {
        self.probs[c1][d].update_cap(bit, self.cfg.cap);
        if self.cfg.dual > 0 {
            self.probs2[c1][d].update_cap(bit, self.cfg.dual);
        }
        if self.cfg.mix {
            self.probs[c2][d].update_cap(bit, self.cfg.cap);
            if self.cfg.dual > 0 {
                self.probs2[c2][d].update_cap(bit, self.cfg.dual);
            }
            if !self.cfg.avg {
                let err = if bit { 0 } else { 4096 } - i64::from(r.pm);
                let w = &mut self.mw[r.wi];
                for (wi, &si) in w.iter_mut().zip(&r.s) {
                    *wi += (i64::from(si) * err * self.cfg.lr) >> 14;
                }
            }
        }
        if self.cfg.apm > 0 {
            let t = &mut self.apm[r.ai];
            let j = if r.frac < 64 { r.lo } else { r.lo + 1 };
            let target: i64 = if bit { 0 } else { 65535 };
            let x = i64::from(t[j]);
            t[j] = (x + ((target - x) >> self.cfg.arate)) as u32;
        }
    }
}

/// The likeliest value under the two final probabilities (`p0` of a draw, `p1` of a loss
/// given no draw).
#[inline]
fn likeliest_p(p0: u32, p1: u32) -> u8 {
    let one = 4096u64;
    let (p0, p1) = (u64::from(p0), u64::from(p1));
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

/// Code a segment from `prior` (weight `w`) under model variant `cfg` with the neighbours
/// `nb` (strides of the segment's slice, model 1's then model 2's): the stored bytes and,
/// with `counts`, the bits seen per context (model 2's after model 1's).
fn code(
    s: &Seg,
    nb: &[usize],
    prior: &Prior,
    w: u16,
    cfg: &Cfg,
    counts: Option<&mut Counts>,
) -> Vec<u8> {
    code_st(s, nb, prior, w, cfg, counts, None)
}

/// The final APM tables and mixer weights of a segment, summed over segments.
type Ends = (Vec<[u64; 33]>, Vec<[i64; 2]>, u64);

/// [`code`], adding the final APM tables and mixer weights to `ends`.
fn code_st(
    s: &Seg,
    nb: &[usize],
    prior: &Prior,
    w: u16,
    cfg: &Cfg,
    mut counts: Option<&mut Counts>,
    ends: Option<&mut Ends>,
) -> Vec<u8> {
    let n = s.pos.len();
    let mut st = St::new(cfg, prior, cfg.pw.unwrap_or(w));
    let plain = !cfg.mix && cfg.apm == 0 && cfg.dual == 0 && cfg.cap == rate_cap();
    let nctx1 = cfg.nctx1();
    let mut coded = vec![NONE as u8; n];
    let mut last = NONE;
    let mut e = Enc::new();
    let mut vals = [NONE; 8];
    for k in 0..n {
        let c = s.pos[k];
        if c & CODED == 0 {
            continue;
        }
        let f = usize::from((c >> 2) & 1);
        for (j, &stv) in nb.iter().enumerate() {
            let stv = match stv {
                NB_W => usize::from(s.nbw[k]),
                NB_B => usize::from(s.nbb[k]),
                x => x,
            };
            vals[j] = if stv > 0 && k >= stv {
                coded[k - stv] as usize
            } else {
                NONE
            };
        }
        let mut c1 = last;
        for &x in &vals[..cfg.n1] {
            c1 = c1 * 4 + x;
        }
        let c1 = c1 * 2 + f;
        let mut c2 = last;
        if cfg.mix {
            for &x in &vals[cfg.n1..nb.len()] {
                c2 = c2 * 4 + x;
            }
        }
        let c2 = nctx1 + c2 * 2 + f;
        let v = if plain {
            let pr = &mut st.probs[c1];
            let v = if c & DC != 0 { likeliest(pr) } else { c & 3 };
            e.value(pr, v);
            v
        } else {
            let sel = f + 2 * last;
            let ext = if cfg.apm >= 2 { vals[cfg.apm - 2] } else { 0 };
            let r0 = st.predict(c1, c2, 0, sel, ext);
            let r1 = st.predict(c1, c2, 1, sel, ext);
            let v = if c & DC != 0 {
                likeliest_p(r0.p, r1.p)
            } else {
                c & 3
            };
            e.code(r0.p, v != 1);
            st.update(c1, c2, 0, &r0, v != 1);
            if v != 1 {
                e.code(r1.p, v == 2);
                st.update(c1, c2, 1, &r1, v == 2);
            }
            v
        };
        if let Some(cn) = counts.as_deref_mut() {
            for cx in [c1, c2].into_iter().take(1 + usize::from(cfg.mix)) {
                cn[cx][0][usize::from(v != 1)] += 1;
                if v != 1 {
                    cn[cx][1][usize::from(v == 2)] += 1;
                }
            }
        }
        coded[k] = v;
        last = usize::from(v);
    }
    if let Some(en) = ends {
        for (x, y) in en.0.iter_mut().zip(&st.apm) {
            for (a, &b) in x.iter_mut().zip(y) {
                *a += u64::from(b);
            }
        }
        for (x, y) in en.1.iter_mut().zip(&st.mw) {
            x[0] += y[0];
            x[1] += y[1];
        }
        en.2 += 1;
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
            assert!(v.len() <= 2 * nctx && v.len().is_multiple_of(2));
            (0..nctx)
                .map(|i| {
                    if 2 * i < v.len() {
                        [v[2 * i], v[2 * i + 1]]
                    } else {
                        [2048, 2048]
                    }
                })
                .collect()
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
    let nbs = std::env::var("NB").unwrap_or_else(|_| "a,b,X,Y".into());
    let cfgs: Vec<Cfg> = std::env::var("CFGS")
        .unwrap_or_else(|_| "nb=a.b.X.Y".into())
        .split('|')
        .map(Cfg::parse)
        .collect();
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
    let mut mst = Vec::new();
    for (f, s, st) in loaded {
        files.push(f);
        for x in s {
            mst.push(st);
            segs.push(x);
        }
    }
    let positions: u64 = files.iter().map(|f| f.positions).sum();
    println!(
        "load NB={nbs} RCAP={} SEG={segment} K={kk} WEIGHT={w}: {} files, {} positions, {} coded segments; loaded in {:.0} s",
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
    let skip = |s: &Seg| hdr.codes > 0 && s.constant.is_some();
    for (ci, cfg0) in cfgs.iter().enumerate() {
        let mut cfgm = cfg0.clone();
        let nctx = cfgm.nctx();
        let sst: Vec<Vec<usize>> = mst.iter().map(|&st| seg_strides(&cfgm.nb, st)).collect();
        println!("== cfg {ci}: {} ({nctx} contexts)", cfgm.name);
        let cfg = &cfgm;
        let flat: Prior = vec![[2048, 2048]; nctx];
        let given = std::env::var("BOOK").ok();
        let mut book: Vec<Prior> = if let Some(b) = &given {
            // A saved codebook; shorter priors (model 1's only) padded with flat ones.
            load_book(b, nctx)
        } else {
            vec![flat.clone()]
        };
        let cost = |book: &[Prior], cfg: &Cfg| -> Vec<Vec<u32>> {
            segs.par_iter()
                .zip(&sst)
                .map(|(s, nb)| {
                    book.iter()
                        .map(|p| code(s, nb, p, w, cfg, None).len() as u32)
                        .collect()
                })
                .collect()
        };
        // Re-estimate each prior from the bits of the segments assigned to it.
        let reestimate = |book: &mut Vec<Prior>, assign: &[usize]| {
            let counts = Mutex::new(vec![vec![[[0u64; 2]; 2]; nctx]; book.len()]);
            segs.par_iter()
                .zip(&sst)
                .zip(assign)
                .for_each(|((s, nb), &a)| {
                    if skip(s) {
                        return;
                    }
                    let mut cn: Counts = vec![[[0; 2]; 2]; nctx];
                    code(s, nb, &book[a], w, cfg, Some(&mut cn));
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
        };
        let zero = vec![0usize; segs.len()];
        if given.is_none() {
            // One prior trained first (two rounds), then the seeds of the others.
            for _ in 0..2 {
                reestimate(&mut book, &zero);
            }
            let sub: Vec<usize> = (0..segs.len())
                .filter(|&i| !skip(&segs[i]))
                .step_by((segs.len() / 3000).max(1))
                .collect();
            let mut best: Vec<u32> = sub
                .par_iter()
                .map(|&i| code(&segs[i], &sst[i], &book[0], w, cfg, None).len() as u32)
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
                code(&segs[i], &sst[i], &book[0], w, cfg, Some(&mut cn));
                let p: Prior = (0..nctx)
                    .map(|c| estimate(&cn[c], &book[0][c], 4.0))
                    .collect();
                let nb: Vec<u32> = sub
                    .par_iter()
                    .map(|&i| code(&segs[i], &sst[i], &p, w, cfg, None).len() as u32)
                    .collect();
                book.push(p);
                for (b, n) in best.iter_mut().zip(nb) {
                    *b = (*b).min(n);
                }
            }
        }
        // k-means rounds (from the seeds, or refining a given codebook with `ROUNDS`).
        let rr = if given.is_some() {
            env("REFINE", 0)
        } else {
            rounds
        };
        for r in 0..rr {
            let cm = cost(&book, cfg);
            report(&format!("  K={} round {r}", book.len()), &cm);
            let assign: Vec<usize> = cm
                .iter()
                .map(|c| c.iter().enumerate().min_by_key(|&(_, &x)| x).unwrap().0)
                .collect();
            reestimate(&mut book, &assign);
        }
        if let Ok(out) = std::env::var("SAVE") {
            let out = if cfgs.len() > 1 {
                format!("{out}.{ci}")
            } else {
                out
            };
            save(&book, &out);
        }
        for pass in 0..cfgm.train {
            let cfg = &cfgm;
            // The APM tables and mixer weights each segment ends with, under its cheapest
            // prior, averaged: the next pass's (and the final coding's) starting state.
            let cm = cost(&book, cfg);
            report(&format!("  train pass {pass}"), &cm);
            let na = if cfg.apm == 1 { 16 } else { 64 };
            let ends = Mutex::new((vec![[0u64; 33]; na], vec![[0i64; 2]; 64], 0u64));
            segs.par_iter().zip(&sst).zip(&cm).for_each(|((s, nb), c)| {
                if skip(s) {
                    return;
                }
                let a = c.iter().enumerate().min_by_key(|&(_, &x)| x).unwrap().0;
                let mut en: Ends = (vec![[0u64; 33]; na], vec![[0i64; 2]; 64], 0);
                code_st(s, nb, &book[a], w, cfg, None, Some(&mut en));
                let mut all = ends.lock().unwrap();
                for (x, y) in all.0.iter_mut().zip(&en.0) {
                    for (a, b) in x.iter_mut().zip(y) {
                        *a += b;
                    }
                }
                for (x, y) in all.1.iter_mut().zip(&en.1) {
                    x[0] += y[0];
                    x[1] += y[1];
                }
                all.2 += en.2;
            });
            let (sa, sm, n) = ends.into_inner().unwrap();
            let n = n.max(1);
            let mut next = cfg.clone();
            if cfg.apm > 0 {
                next.apm0 = Some(
                    sa.iter()
                        .map(|t| {
                            let mut o = [0u32; 33];
                            for (x, &y) in o.iter_mut().zip(t) {
                                *x = (y / n) as u32;
                            }
                            o
                        })
                        .collect(),
                );
            }
            if cfg.mix && !cfg.avg {
                next.mw0 = Some(
                    sm.iter()
                        .map(|x| [x[0] / n as i64, x[1] / n as i64])
                        .collect(),
                );
                println!("  trained weights {:?}", &next.mw0.as_ref().unwrap()[..16]);
            }
            cfgm = next;
        }
        // The trained starting state: saved with `SAVE` (file `.state`), read with `STATE`.
        if let Ok(f) = std::env::var("STATE") {
            let t = std::fs::read_to_string(f).unwrap();
            let mut l = t.lines();
            let a: Vec<u32> = l
                .next()
                .unwrap()
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            let m: Vec<i64> = l
                .next()
                .unwrap()
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            if !a.is_empty() {
                cfgm.apm0 = Some(
                    a.chunks(33)
                        .map(|c| <[u32; 33]>::try_from(c).unwrap())
                        .collect(),
                );
            }
            if !m.is_empty() {
                cfgm.mw0 = Some(m.chunks(2).map(|c| [c[0], c[1]]).collect());
            }
        }
        if let Ok(out) = std::env::var("SAVE") {
            let a: Vec<String> = cfgm
                .apm0
                .iter()
                .flatten()
                .flatten()
                .map(u32::to_string)
                .collect();
            let m: Vec<String> = cfgm
                .mw0
                .iter()
                .flatten()
                .flatten()
                .map(i64::to_string)
                .collect();
            std::fs::write(
                format!("{out}.{ci}.state"),
                format!("{}\n{}\n", a.join(" "), m.join(" ")),
            )
            .unwrap();
        }
        let cfg = &cfgm;
        let cm = cost(&book, cfg);
        report(
            &format!("final cfg {ci} [{}] K={}", cfg.name, book.len()),
            &cm,
        );
        if std::env::var("TIME").is_ok() {
            // The cost of coding (the model's work per position, as a decoder would do it),
            // one thread, every 10th coded segment, three times, prior 0.
            let picked: Vec<usize> = (0..segs.len())
                .filter(|&i| !skip(&segs[i]))
                .step_by(10)
                .collect();
            let mut best = f64::MAX;
            let mut npos = 0u64;
            let mut sink = 0usize;
            for _ in 0..3 {
                let a = Instant::now();
                npos = 0;
                for &i in &picked {
                    sink += code(&segs[i], &sst[i], &book[0], w, cfg, None).len();
                    npos += segs[i].pos.len() as u64;
                }
                best = best.min(a.elapsed().as_secs_f64());
            }
            println!(
                "  time cfg {ci}: coding {:.1} ns a position (best of 3 passes over {} segments; sink {sink})",
                best * 1e9 / npos as f64,
                picked.len()
            );
        }
    }
}
