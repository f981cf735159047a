//! Codec 7 experiment (issue 32): a stronger model than codec 6's for the same walk.
//!
//! Codec 6 (`format::cm6`, docs/format.md "Codec 6") codes the WLD values of a segment of
//! positions with one adaptive probability per context (128 contexts). Here several models
//! each give a probability, the probabilities are mixed in the logistic domain by a weight
//! vector trained online (paq style), optionally refined by an adaptive probability map
//! (APM / SSE), and each model, mixer and APM can start from a prior trained on a sample.
//! The walk, the classes (skipped, coded with a threat flag, don't care filled with the value
//! the model finds cheapest), the block and segment layout and the byte accounting are codec
//! 6's; all arithmetic of the model is integer (the tables of `squash` / `stretch` are computed
//! once from `f64` here; a codec would compile them in).
//!
//! Usage:
//! `SAMPLE=k [OFFSET=o] [SEG=n] [MODELS=1,2,3,4] [MIX=0|1] [APM=0|1|2] [LR=n] [CAP=n] [PW=n]
//!  [PRIORS=file] [TRAIN=file] [NODECODE=1] cm7_experiment DIR PIECES`
//!
//! - every k-th WLD file of PIECES pieces (from the o-th, by name) is coded;
//! - `MODELS`: which models (1: codec 6's context; 2: more neighbours; 3: mobility and
//!   material from bitboards; 4: leading men and kings on the edge);
//! - `MIX=0`: the first model's probability alone (no mixer), else the mixer, whose weights
//!   move by `x * err * LR / 2^14` (default `LR=16`);
//! - `PW`, `CAP` (or per model `PWS=a,b,c,d`, `CAPS=...`): the bits a prior counts for, and
//!   the cap of a counter's bit count (default 0 and 20);
//! - `APM`: 0 none, 1 an APM on (decision, threat flag, previous value), 2 on (decision,
//!   threat flag, king-step neighbour);
//! - `PRIORS`: priors written by `TRAIN` (else every probability 1/2, mixer weights equal);
//! - `TRAIN=file`: counts the bits of each model context (pass 1) and averages the mixer
//!   weights and APM tables at the end of each segment (pass 2, with the pass-1 priors), then
//!   writes the priors to `file` (with `PRIORS`, pass 1 runs under those priors: a second
//!   round of training, the don't cares filled by the trained model).
//!
//! Prints positions per byte (files laid out as the writer would: 72 bytes a file and 8 a
//! block, constant blocks no data, a uniform file 72 bytes) and the mean time to decode one
//! segment; every decoded value is checked against the coded one.
use checkers_egdb::format::{is_dont_care, SliceIndex, TableFile};
use checkers_egdb::rules::{English, Retro, Rules};
use checkers_egdb::{Color, Position};
use rayon::prelude::*;
use std::sync::Mutex;
use std::time::Instant;

const NONE: u8 = 3;
/// Inputs of the mixer: up to 4 models and a bias.
const NI: usize = 5;
const NM: usize = 4;
const BIAS: i32 = 256;
/// Contexts of each model (per decision).
const MODEL_CTX: [usize; NM] = [128, 2048, 768, 2880];
/// Mixer weight sets: decision, threat flag, previous value.
const MIX_SETS: usize = 2 * 2 * 4;
const APM_CTX: usize = 2 * 2 * 4;
const APM_N: usize = 33;

/// What a coded position contributes to the contexts (bitboard tests only).
#[derive(Clone, Copy, Default)]
struct Info {
    /// The side not to move has a capture.
    f: u8,
    /// Model 3's position part: mobility buckets, material sign, side to move.
    p3: u16,
    /// Model 4's position part: leading man's row, kings on the edge.
    p4: u16,
}

const EDGE: u32 = 0xF000_000F
    | (1 << 3)
    | (1 << 11)
    | (1 << 19)
    | (1 << 27)
    | (1 << 4)
    | (1 << 12)
    | (1 << 20)
    | (1 << 28);

fn info(p: &Position) -> Option<Info> {
    if English.has_capture(p) || !English.has_quiet_move(p) {
        return None;
    }
    let fl = Position {
        side: p.side.opponent(),
        ..*p
    };
    let f = u8::from(English.has_capture(&fl));
    let me = p.pieces(p.side);
    let opp = p.pieces(p.side.opponent());
    let mob = English.count_quiet_moves(p, me);
    let omob = English.count_quiet_moves(&fl, opp);
    let mb: u16 = match mob {
        0 | 1 => 0,
        2 => 1,
        3 | 4 => 2,
        _ => 3,
    };
    let ob: u16 = match omob {
        0 => 0,
        1 | 2 => 1,
        3..=5 => 2,
        _ => 3,
    };
    let d = (me.count_ones() as i32 - opp.count_ones() as i32).signum() + 1;
    let white = u16::from(matches!(p.side, Color::White));
    let p3 = ((mb * 4 + ob) * 3 + d as u16) * 2 + white;
    // Leading man of the side to move: rows from its crown row (0 next to crowning).
    let men = me & !p.kings;
    let lead: u16 = if men == 0 {
        4
    } else {
        let row = match p.side {
            Color::Black => 7 - (31 - men.leading_zeros()) / 4,
            Color::White => men.trailing_zeros() / 4,
        };
        row.min(3) as u16
    };
    let kedge = |b: u32| -> u16 {
        let k = b & p.kings;
        if k == 0 {
            0
        } else if k & !EDGE == 0 {
            1
        } else {
            2
        }
    };
    let p4 = ((lead * 3 + kedge(me)) * 3 + kedge(opp)) * 2 + white;
    Some(Info { f, p3, p4 })
}

// ---------------------------------------------------------------- logistic tables

struct Tables {
    /// squash[d + 2048] = 4096 / (1 + e^(-d/256)), d in -2048..2047, clamped to 1..4095.
    squash: Vec<i32>,
    /// stretch[p] = the d whose squash is nearest p (inverse of squash), p in 0..4096.
    stretch: Vec<i32>,
}

impl Tables {
    fn new() -> Tables {
        let squash: Vec<i32> = (-2048..2048)
            .map(|d| {
                let v = 4096.0 / (1.0 + (-(d as f64) / 256.0).exp());
                (v.round() as i32).clamp(1, 4095)
            })
            .collect();
        let mut stretch = vec![0i32; 4096];
        let mut pi = 0usize;
        for (x, &s) in squash.iter().enumerate() {
            let d = x as i32 - 2048;
            while pi as i32 <= s && pi < 4096 {
                stretch[pi] = d;
                pi += 1;
            }
        }
        while pi < 4096 {
            stretch[pi] = 2047;
            pi += 1;
        }
        Tables { squash, stretch }
    }
    #[inline]
    fn sq(&self, d: i32) -> i32 {
        self.squash[(d.clamp(-2047, 2047) + 2048) as usize]
    }
    #[inline]
    fn st(&self, p: i32) -> i32 {
        self.stretch[p as usize]
    }
}

// ---------------------------------------------------------------- counters

/// Probability of a 1 bit in 16 bits, and bits seen (up to the cap).
#[derive(Clone, Copy)]
struct Ctr {
    p: u16,
    n: u8,
}

struct Rates([u32; 256]);
impl Rates {
    fn new() -> Rates {
        let mut r = [0u32; 256];
        for (n, x) in r.iter_mut().enumerate() {
            *x = (65536 * 10) / (n as u32 * 10 + 14);
        }
        Rates(r)
    }
}

impl Ctr {
    #[inline]
    fn p12(self) -> i32 {
        (i32::from(self.p) >> 4).clamp(1, 4095)
    }
    #[inline]
    fn update(&mut self, y: bool, rates: &Rates, cap: u8) {
        let r = i64::from(rates.0[self.n as usize]);
        let p = i64::from(self.p);
        let t = if y { 65535 } else { 0 };
        self.p = (p + (((t - p) * r) >> 16)).clamp(32, 65535 - 32) as u16;
        if self.n < cap {
            self.n += 1;
        }
    }
}

// ---------------------------------------------------------------- configuration, priors

#[derive(Clone)]
struct Cfg {
    segment: usize,
    models: Vec<usize>,
    mix: bool,
    apm: u8,
    lr: i32,
    /// Per model: rate cap and prior weight (bits).
    caps: [u8; NM],
    pws: [u8; NM],
    apm_rate: u32,
}

#[derive(Clone)]
struct Priors {
    /// Per model: probability (16 bits) of a 1 per context and decision.
    models: Vec<Vec<u16>>,
    mix: Vec<[i32; NI]>,
    apm: Vec<[u16; APM_N]>,
}

impl Priors {
    fn flat(cfg: &Cfg, t: &Tables) -> Priors {
        let nm = cfg.models.len() as i32;
        let mut w = [0i32; NI];
        for x in w.iter_mut().take(cfg.models.len()) {
            *x = 65536 / nm.max(1);
        }
        let apm_row: [u16; APM_N] = std::array::from_fn(|j| {
            let d = (j as i32 - 16) * 128;
            (t.sq(d) * 16) as u16
        });
        Priors {
            models: MODEL_CTX.iter().map(|&n| vec![32768u16; 2 * n]).collect(),
            mix: vec![w; MIX_SETS],
            apm: vec![apm_row; APM_CTX],
        }
    }
    fn save(&self, path: &str) {
        let mut s = String::new();
        fn line<T: ToString>(s: &mut String, row: &[T]) {
            let words: Vec<String> = row.iter().map(|x| x.to_string()).collect();
            s.push_str(&words.join(" "));
            s.push('\n');
        }
        self.models.iter().for_each(|r| line(&mut s, r));
        self.mix.iter().for_each(|r| line(&mut s, r));
        self.apm.iter().for_each(|r| line(&mut s, r));
        std::fs::write(path, s).unwrap();
    }
    fn load(path: &str, cfg: &Cfg, t: &Tables) -> Priors {
        let mut p = Priors::flat(cfg, t);
        let text = std::fs::read_to_string(path).unwrap();
        let mut lines = text.lines();
        fn row<T: std::str::FromStr>(line: Option<&str>) -> Vec<T>
        where
            T::Err: std::fmt::Debug,
        {
            line.unwrap()
                .split(' ')
                .map(|x| x.parse().unwrap())
                .collect()
        }
        for m in p.models.iter_mut() {
            let v: Vec<u16> = row(lines.next());
            assert_eq!(v.len(), m.len());
            *m = v;
        }
        for w in p.mix.iter_mut() {
            w.copy_from_slice(&row::<i32>(lines.next()));
        }
        for a in p.apm.iter_mut() {
            a.copy_from_slice(&row::<u16>(lines.next()));
        }
        // Mixer weights trained with other models than this run's: equal weights instead.
        if std::env::var("FLATMIX").is_ok() {
            p.mix = Priors::flat(cfg, t).mix;
        }
        if std::env::var("FLATAPM").is_ok() {
            p.apm = Priors::flat(cfg, t).apm;
        }
        p
    }
}

/// What training gathers.
struct Train {
    counts: Vec<Vec<[u64; 2]>>,
    mix: Vec<[i64; NI]>,
    apm: Vec<[u64; APM_N]>,
    segs: u64,
}

impl Train {
    fn new() -> Train {
        Train {
            counts: MODEL_CTX.iter().map(|&n| vec![[0u64; 2]; 2 * n]).collect(),
            mix: vec![[0i64; NI]; MIX_SETS],
            apm: vec![[0u64; APM_N]; APM_CTX],
            segs: 0,
        }
    }
    fn add(&mut self, o: &Train) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            for (x, y) in a.iter_mut().zip(b) {
                x[0] += y[0];
                x[1] += y[1];
            }
        }
        for (a, b) in self.mix.iter_mut().zip(&o.mix) {
            for i in 0..NI {
                a[i] += b[i];
            }
        }
        for (a, b) in self.apm.iter_mut().zip(&o.apm) {
            for i in 0..APM_N {
                a[i] += b[i];
            }
        }
        self.segs += o.segs;
    }
}

// ---------------------------------------------------------------- the model

struct Model<'a> {
    cfg: &'a Cfg,
    t: &'a Tables,
    rates: &'a Rates,
    ctrs: Vec<Vec<Ctr>>,
    w: Vec<[i32; NI]>,
    apm: Vec<[u16; APM_N]>,
    coded: Vec<u8>,
    last: u8,
    last2: u8,
    s1: usize,
    s2: usize,
    // Per position.
    ctx: [usize; NM],
    set: usize,
    actx: usize,
    // Per decision, after predict.
    x: [i32; NI],
    pm: i32,
    aj: usize,
    aw: i32,
}

impl<'a> Model<'a> {
    fn new(
        cfg: &'a Cfg,
        t: &'a Tables,
        rates: &'a Rates,
        pri: &Priors,
        n: usize,
        s: (usize, usize),
    ) -> Model<'a> {
        Model {
            cfg,
            t,
            rates,
            ctrs: pri
                .models
                .iter()
                .enumerate()
                .map(|(j, m)| m.iter().map(|&p| Ctr { p, n: cfg.pws[j] }).collect())
                .collect(),
            w: pri.mix.clone(),
            apm: pri.apm.clone(),
            coded: vec![NONE; n],
            last: NONE,
            last2: NONE,
            s1: s.0,
            s2: s.1,
            ctx: [0; NM],
            set: 0,
            actx: 0,
            x: [0; NI],
            pm: 2048,
            aj: 0,
            aw: 0,
        }
    }
    #[inline]
    fn at(&self, k: usize, s: usize) -> usize {
        if s > 0 && k >= s {
            self.coded[k - s] as usize
        } else {
            NONE as usize
        }
    }
    /// Set the contexts of position `k` (within the segment).
    #[inline]
    fn position(&mut self, k: usize, i: Info) {
        let f = usize::from(i.f);
        let last = usize::from(self.last);
        let a1 = self.at(k, self.s1);
        let a2 = self.at(k, self.s2);
        self.ctx[0] = ((last * 4 + a1) * 4 + a2) * 2 + f;
        let b1 = self.at(k, 2 * self.s1);
        self.ctx[1] = ((((last * 4 + usize::from(self.last2)) * 4 + a1) * 4 + a2) * 4 + b1) * 2 + f;
        self.ctx[2] = (usize::from(i.p3) * 2 + f) * 4 + last;
        self.ctx[3] = ((usize::from(i.p4) * 2 + f) * 4 + last) * 4 + a1;
        self.set = (f * 4 + last) * 2;
        self.actx = match self.cfg.apm {
            2 => (f * 4 + a1) * 2,
            _ => (f * 4 + last) * 2,
        };
    }
    /// Probability (12 bits) that decision `d` (0: not a draw; 1: a win) is 1.
    #[inline]
    fn predict(&mut self, d: usize) -> i32 {
        if !self.cfg.mix {
            let m = self.cfg.models[0];
            return self.ctrs[m][self.ctx[m] * 2 + d].p12();
        }
        let mut dot: i64 = 0;
        let w = &self.w[self.set + d];
        for (j, &m) in self.cfg.models.iter().enumerate() {
            let x = self.t.st(self.ctrs[m][self.ctx[m] * 2 + d].p12());
            self.x[j] = x;
            dot += i64::from(x) * i64::from(w[j]);
        }
        self.x[NI - 1] = BIAS;
        dot += i64::from(BIAS) * i64::from(w[NI - 1]);
        let s = (dot >> 16) as i32;
        self.pm = self.t.sq(s);
        if self.cfg.apm == 0 {
            return self.pm;
        }
        let z = s.clamp(-2047, 2047) + 2048; // 1..4095
        self.aj = (z >> 7) as usize;
        self.aw = z & 127;
        let row = &self.apm[self.actx + d];
        let pa = (i32::from(row[self.aj]) * (128 - self.aw)
            + i32::from(row[self.aj + 1]) * self.aw)
            >> 11;
        ((self.pm + 3 * pa) >> 2).clamp(1, 4095)
    }
    #[inline]
    fn update(&mut self, d: usize, y: bool, p: i32) {
        for &m in &self.cfg.models {
            let cap = self.cfg.caps[m];
            self.ctrs[m][self.ctx[m] * 2 + d].update(y, self.rates, cap);
        }
        if !self.cfg.mix {
            return;
        }
        let _ = p;
        let err = ((i32::from(y) << 12) - self.pm) * self.cfg.lr;
        let w = &mut self.w[self.set + d];
        let n = self.cfg.models.len();
        for (wj, &xj) in w.iter_mut().zip(&self.x).take(n) {
            *wj += (xj * err) >> 14;
        }
        w[NI - 1] += (BIAS * err) >> 14;
        if self.cfg.apm != 0 {
            let row = &mut self.apm[self.actx + d];
            let t = if y { 65535i32 } else { 0 };
            let r = self.cfg.apm_rate;
            let j = if self.aw >= 64 { self.aj + 1 } else { self.aj };
            let v = i32::from(row[j]);
            row[j] = (v + ((t - v) >> r)) as u16;
        }
    }
    #[inline]
    fn seen(&mut self, k: usize, v: u8) {
        self.coded[k] = v;
        self.last2 = self.last;
        self.last = v;
    }
    /// The value cheapest to code now: 1 draw, 2 win, 0 loss.
    fn cheapest(&mut self) -> u8 {
        let p0 = i64::from(self.predict(0));
        let p1 = i64::from(self.predict(1));
        let draw = (4096 - p0) * 4096;
        let win = p0 * p1;
        let loss = p0 * (4096 - p1);
        if draw >= win && draw >= loss {
            1
        } else if win >= loss {
            2
        } else {
            0
        }
    }
    fn gather(&self, tr: &mut Train) {
        for s in 0..MIX_SETS {
            for i in 0..NI {
                tr.mix[s][i] += i64::from(self.w[s][i]);
            }
        }
        for s in 0..APM_CTX {
            for i in 0..APM_N {
                tr.apm[s][i] += u64::from(self.apm[s][i]);
            }
        }
        tr.segs += 1;
    }
}

// ---------------------------------------------------------------- range coder (codec 6's scheme)

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
    /// Code bit `y` whose probability of being 1 is `p1` / 4096.
    #[inline]
    fn bit(&mut self, p1: i32, y: bool) {
        let bound = (self.range >> 12) * (4096 - p1) as u32;
        if !y {
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

struct Dec<'a> {
    data: &'a [u8],
    pos: usize,
    range: u32,
    code: u32,
}

impl<'a> Dec<'a> {
    fn new(data: &'a [u8]) -> Dec<'a> {
        let mut d = Dec {
            data,
            pos: 0,
            range: u32::MAX,
            code: 0,
        };
        for _ in 0..4 {
            d.code = (d.code << 8) | u32::from(d.byte());
        }
        d
    }
    #[inline]
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    #[inline]
    fn bit(&mut self, p1: i32) -> bool {
        let bound = (self.range >> 12) * (4096 - p1) as u32;
        let y = if self.code < bound {
            self.range = bound;
            false
        } else {
            self.code = self.code.wrapping_sub(bound);
            self.range -= bound;
            true
        };
        while self.range < (1 << 24) {
            self.range <<= 8;
            self.code = (self.code << 8) | u32::from(self.byte());
        }
        y
    }
}

// ---------------------------------------------------------------- walk

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

/// Code one value with the model's state: draw-or-not, then win-or-loss.
#[inline]
fn code_value(m: &mut Model, e: &mut Enc, v: u8) {
    let p = m.predict(0);
    let y = v != 1;
    e.bit(p, y);
    m.update(0, y, p);
    if y {
        let p = m.predict(1);
        let y = v == 2;
        e.bit(p, y);
        m.update(1, y, p);
    }
}

#[inline]
fn decode_value(m: &mut Model, d: &mut Dec) -> u8 {
    let p = m.predict(0);
    let y = d.bit(p);
    m.update(0, y, p);
    if !y {
        return 1;
    }
    let p = m.predict(1);
    let y = d.bit(p);
    m.update(1, y, p);
    if y {
        2
    } else {
        0
    }
}

struct FileResult {
    positions: u64,
    bytes: u64,
    dsecs: f64,
    nseg: u64,
}

fn run_file(
    path: &std::path::Path,
    cfg: &Cfg,
    t: &Tables,
    rates: &Rates,
    pri: &Priors,
    train: Option<&mut Train>,
    decode: bool,
) -> FileResult {
    let tf = TableFile::open(path).unwrap();
    let meta = tf.meta().clone();
    let ix = SliceIndex::new(meta.slice);
    let vals = tf.decode_all().unwrap();
    let st = strides(&ix);
    let bp = 65_520usize;
    let mut train = train;
    let (mut data, mut nblocks, mut dsecs, mut nseg) = (0u64, 0u64, 0f64, 0u64);
    let mut all_const = true;
    let mut first_const: Option<u8> = None;
    for (b, chunk) in vals.chunks(bp).enumerate() {
        nblocks += 1;
        let start = (b * bp) as u64;
        let n = chunk.len();
        // Class per position: None skipped; Some((info, dont care)).
        let mut cls: Vec<Option<(Info, bool)>> = Vec::with_capacity(n);
        ix.visit(start, start + n as u64, |_, p| {
            cls.push(info(&p).map(|i| (i, i.f == 1 && is_dont_care(English, &p))));
        });
        let mut first = None;
        let mut constant = true;
        for (k, c) in cls.iter().enumerate() {
            if let Some((_, false)) = c {
                let v = chunk[k];
                assert!(v <= 2);
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
                Some(x) if x != c => all_const = false,
                _ => {}
            }
            continue;
        }
        all_const = false;
        let mut segs: Vec<(Vec<u8>, Vec<u8>)> = Vec::new(); // (bytes, coded values)
        for s0 in (0..n).step_by(cfg.segment) {
            let s1 = (s0 + cfg.segment).min(n);
            let mut m = Model::new(cfg, t, rates, pri, s1 - s0, st);
            let mut e = Enc::new();
            let mut coded = vec![255u8; s1 - s0];
            for k in s0..s1 {
                let Some((i, dc)) = cls[k] else { continue };
                m.position(k - s0, i);
                let v = if dc { m.cheapest() } else { chunk[k] };
                if let Some(tr) = train.as_deref_mut() {
                    for (j, &c) in m.ctx.iter().enumerate() {
                        tr.counts[j][c * 2][usize::from(v != 1)] += 1;
                        if v != 1 {
                            tr.counts[j][c * 2 + 1][usize::from(v == 2)] += 1;
                        }
                    }
                }
                code_value(&mut m, &mut e, v);
                m.seen(k - s0, v);
                coded[k - s0] = v;
            }
            if let Some(tr) = train.as_deref_mut() {
                m.gather(tr);
            }
            let bytes = e.finish_short();
            let mut l = bytes.len();
            loop {
                data += 1;
                l >>= 7;
                if l == 0 {
                    break;
                }
            }
            data += bytes.len() as u64;
            segs.push((bytes, coded));
        }
        if decode {
            let t1 = Instant::now();
            let mut outs = Vec::with_capacity(segs.len());
            for (si, (bytes, _)) in segs.iter().enumerate() {
                let s0 = si * cfg.segment;
                let s1 = (s0 + cfg.segment).min(n);
                let mut m = Model::new(cfg, t, rates, pri, s1 - s0, st);
                let mut d = Dec::new(bytes);
                let mut out = vec![1u8; s1 - s0];
                let mut fill = 1u8;
                let mut k = 0usize;
                ix.visit(start + s0 as u64, start + s1 as u64, |_, p| {
                    if let Some(i) = info(&p) {
                        m.position(k, i);
                        let v = decode_value(&mut m, &mut d);
                        m.seen(k, v);
                        fill = v;
                    }
                    out[k] = fill;
                    k += 1;
                });
                outs.push(std::hint::black_box(out));
            }
            dsecs += t1.elapsed().as_secs_f64();
            nseg += segs.len() as u64;
            for (out, (_, coded)) in outs.iter().zip(&segs) {
                for (k, &c) in coded.iter().enumerate() {
                    if c != 255 {
                        assert_eq!(out[k], c, "{} block {b}", path.display());
                    }
                }
            }
        }
    }
    let bytes = if all_const {
        72
    } else {
        72 + 8 * nblocks + data
    };
    FileResult {
        positions: meta.positions,
        bytes,
        dsecs,
        nseg,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let pieces: u32 = args[2].parse().unwrap();
    let env = |k: &str, d: usize| std::env::var(k).map_or(d, |s| s.parse().unwrap());
    let k = env("SAMPLE", 1);
    let per_model = |name: &str, d: u8| -> [u8; NM] {
        match std::env::var(name) {
            Ok(v) => {
                let x: Vec<u8> = v.split(',').map(|x| x.parse().unwrap()).collect();
                std::array::from_fn(|i| x[i.min(x.len() - 1)])
            }
            Err(_) => [d; NM],
        }
    };
    let offset = env("OFFSET", 0);
    let cfg = Cfg {
        segment: env("SEG", 4120),
        models: std::env::var("MODELS")
            .unwrap_or_else(|_| "0".into())
            .split(',')
            .map(|x| x.parse::<usize>().unwrap().saturating_sub(1))
            .collect(),
        mix: env("MIX", 1) != 0,
        apm: env("APM", 0) as u8,
        lr: env("LR", 16) as i32,
        caps: per_model("CAPS", env("CAP", 20) as u8),
        pws: per_model("PWS", env("PW", 0) as u8),
        apm_rate: env("APMRATE", 6) as u32,
    };
    let t = Tables::new();
    let rates = Rates::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension().is_some_and(|x| x == "egdb")).then_some(p)
        })
        .filter(|p| TableFile::open(p).unwrap().meta().slice.material.pieces() == pieces)
        .collect();
    files.sort();
    let files: Vec<_> = files.into_iter().skip(offset).step_by(k).collect();
    let t0 = Instant::now();
    if let Ok(out) = std::env::var("TRAIN") {
        // Pass 1: counts of each model context under flat priors (the contexts do not
        // depend on the priors except through the filled don't cares).
        // With `PRIORS`, pass 1 runs under those (the don't cares filled by a trained model).
        let flat = match std::env::var("PRIORS") {
            Ok(p) => Priors::load(&p, &cfg, &t),
            Err(_) => Priors::flat(&cfg, &t),
        };
        let all = Mutex::new(Train::new());
        files.par_iter().for_each(|p| {
            let mut tr = Train::new();
            run_file(p, &cfg, &t, &rates, &flat, Some(&mut tr), false);
            all.lock().unwrap().add(&tr);
        });
        let all = all.into_inner().unwrap();
        let mut pri = flat.clone();
        for (m, c) in pri.models.iter_mut().zip(&all.counts) {
            for (p, n) in m.iter_mut().zip(c) {
                let q = (n[1] as f64 + 0.4) / (n[0] as f64 + n[1] as f64 + 0.8);
                *p = ((q * 65536.0).round() as u32).clamp(32, 65535 - 32) as u16;
            }
        }
        // Pass 2: mixer weights and APM tables at the end of each segment, averaged.
        let all2 = Mutex::new(Train::new());
        files.par_iter().for_each(|p| {
            let mut tr = Train::new();
            run_file(p, &cfg, &t, &rates, &pri, Some(&mut tr), false);
            all2.lock().unwrap().add(&tr);
        });
        let all2 = all2.into_inner().unwrap();
        let ns = all2.segs.max(1) as i64;
        for (w, s) in pri.mix.iter_mut().zip(&all2.mix) {
            for i in 0..NI {
                w[i] = (s[i] / ns) as i32;
            }
        }
        for (a, s) in pri.apm.iter_mut().zip(&all2.apm) {
            for i in 0..APM_N {
                a[i] = (s[i] / ns as u64) as u16;
            }
        }
        pri.save(&out);
        println!(
            "trained on {} files, {} segments: {out}; {:.0} s",
            files.len(),
            all2.segs,
            t0.elapsed().as_secs_f64()
        );
        return;
    }
    let pri = match std::env::var("PRIORS") {
        Ok(p) => Priors::load(&p, &cfg, &t),
        Err(_) => Priors::flat(&cfg, &t),
    };
    let decode = std::env::var("NODECODE").is_err();
    let tot = Mutex::new((0u64, 0u64, 0f64, 0u64));
    files.par_iter().for_each(|p| {
        let r = run_file(p, &cfg, &t, &rates, &pri, None, decode);
        let mut tt = tot.lock().unwrap();
        tt.0 += r.positions;
        tt.1 += r.bytes;
        tt.2 += r.dsecs;
        tt.3 += r.nseg;
    });
    let tt = tot.into_inner().unwrap();
    println!(
        "{} files, {} positions: {} bytes = {:.2} positions/byte; segment decode mean {:.1} us = {:.1} ns/position over {} segments; {:.0} s",
        files.len(),
        tt.0,
        tt.1,
        tt.0 as f64 / tt.1 as f64,
        tt.2 * 1e6 / tt.3.max(1) as f64,
        tt.2 * 1e9 / tt.3.max(1) as f64 / cfg.segment as f64,
        tt.3,
        t0.elapsed().as_secs_f64()
    );
}
