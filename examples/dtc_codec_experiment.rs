//! Experiment (issue 32): how small could the distance-to-conversion files be?
//!
//! Reads every `.dtc` file of PIECES pieces in DIR (every k-th by name with `SAMPLE=k`, from
//! the o-th with `OFFSET=o`) and its WLD file, and codes each block of distances again in
//! several ways, all with the file's block size (65,520 positions). Positions per byte count
//! the files as the writer lays them out: 72 bytes of header and checksum a file and 8 bytes of
//! offset table a block, a block whose kept distances are all one distance no data, a uniform
//! file 72 bytes (the baseline's layout; the sums of the baseline are checked against the
//! files' real sizes).
//!
//! *Don't cares.* As the writer: draws and positions where the side to move has a capture
//! (capture test per position). A position without a legal move (walk class 0 without a
//! capture) is a loss in 0 plies, which the probe answers without the file.
//!
//! The ideas (names as printed):
//! - `maj Lk`: today's byte form (distance, 255 escape + u32 list), don't cares filled with
//!   the block's most common kept distance (the writer's rule), one zstd frame at level k.
//!   `maj L9` is today's file; checked byte for byte against it (sum of sizes).
//! - `prev Lk`: don't cares filled with the previous kept distance (the first ones with the
//!   block's first kept distance).
//! - `skipdraw Lk`: positions whose WLD value is a draw left out (the decoder reads the WLD
//!   block), captures filled with the previous kept distance.
//! - `skipdraw/maj Lk`: the same with the captures filled with the block's majority (the
//!   writer's fill).
//! - `skipwalk Lk`: left out as well every position that codec 6's walk skips (the side to move
//!   has a capture or no move: bitboard tests, `cm6::walk_classes`); only the kept
//!   distances remain, in index order.
//! - `skipwalk/thr Lk`: as `skipwalk`, but every threat position (the side not to move has
//!   a capture: walk class 2) kept whatever its stored WLD value, a draw there filled with
//!   the previous kept distance: the set a codec independent of the WLD codec would keep
//!   (codecs 4-7 store no value at some threat positions).
//! - `skipwalk+par Lk`: the same stream with each distance `d` of a win stored as `d - 1`,
//!   so a win in `2q + 1` and a loss in `2q` share the byte `2q` (escape rule unchanged, on
//!   the mapped value).
//! - `cm`: an adaptive binary context model and codec 5/6's range coder
//!   (`checkers_egdb::format::cm`, the library's own) over the
//!   positions `skipwalk` keeps, one coder a block (a fresh model each). Each distance is
//!   coded given its WLD value (win or loss) and up to six references (`REFS`, default
//!   `kmhg1K`; see [`refs`]): the same-valued kept distances one king step, one men step
//!   (`cm::strides`, codec 5/6's), one index and four king steps back, a match model's
//!   prediction (the distance that followed the last occurrence of the same 12 kept (value,
//!   distance) pairs, [`Matcher`]) and a neighbourhood predictor (the distance last seen after
//!   the same states at 5 index neighbours, [`Ngb`]). Bits: "equal to the first reference" (context: value, which
//!   reference, which of the others agree with it, its size bucket, the last two hits), then
//!   "equal to" each other distinct reference in turn, then the parity (expected: odd for a
//!   win, even for a loss) and `q = d >> 1` as a signed Elias-gamma difference from the first
//!   reference's `q`, every bit with an adaptive probability in a context. Prints the ideal
//!   code length (sum of -log2 p, and its split over the decisions) and the real bytes
//!   (`Encoder::finish_short`). Options: `MIX=1` mixes a second estimate of the first bit
//!   (logistic mixing, `f64`); `TRAIN=o` starts every probability from a prior trained on
//!   the files `o, o + k, ...` (held out when `o` is not `OFFSET`), weight `PW` bits (default
//!   4); `SEGS=0,16380` also codes segments of that many positions alone (0: the block);
//!   `MATCH=n` the match model's order (`MATCH2` the second's, ref kind `H`); `HIST=0` no hit
//!   history in the first bit's context, `RUNCTX=1` the match run there instead; `LR` the
//!   mixer's rate.
//!
//! Every coded form is decoded again, block by block, and compared with the stored
//! distance at every position that is not a don't care (and 0 at positions without a move);
//! a difference stops the program. Decode times are the thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`) per block, divided by the block's positions: zstd
//! decompression plus the scatter into positions; for `cm` the model and coder, with the
//! class walk (which a decoder also needs) timed apart; the WLD block's decode is not counted.
//!
//! Usage: `[SAMPLE=k] [OFFSET=o] [LEVELS=9,15,19] [SEGS=..] [REFS=..] [MIX=1] [TRAIN=o]
//! [RAYON_NUM_THREADS=n] cargo run --release --example dtc_codec_experiment -- DIR PIECES`
use checkers_egdb::format::{
    cm, cm6, decode_block_form, dtc_path, encode_dtc_block, slice_of_file_name, table_path,
    DtcFile, SliceIndex, TableFile, RULES_ENGLISH,
};
use checkers_egdb::rules::{English, Rules};
use rayon::prelude::*;
use std::sync::Mutex;

use cm::Prob;

const ESCAPE: u32 = 255;
/// Header (64) + file checksum (8).
const FILE_HEAD: u64 = 72;
/// Offset-table entry of a block (4-byte end offset, 4-byte checksum).
const BLOCK_ENTRY: u64 = 8;

fn cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn zstd_bytes(stored: &[u8], level: i32) -> Vec<u8> {
    let mut c = zstd::bulk::Compressor::new(level).unwrap();
    c.include_checksum(false).unwrap();
    c.include_contentsize(true).unwrap();
    c.include_dictid(false).unwrap();
    c.compress(stored).unwrap()
}

// ---------------------------------------------------------------------- the context model

/// One bit through the coder: the encoder codes `bit` and returns it, the decoder ignores it
/// and returns the bit it reads. The model is written once over this trait.
trait Bits {
    fn bit(&mut self, p: &mut Prob, bit: bool) -> bool;
    /// The decision the next bits belong to (for the ideal length's breakdown).
    fn part(&mut self, _id: usize) {}
}

/// Decisions of the breakdown.
const PARTS: [&str; 6] = ["eq1", "eq2", "parity", "qeq", "sign", "gamma"];

struct Enc {
    e: cm::Encoder,
    /// Ideal code length so far, in bits, per decision.
    ideal: [f64; 6],
    id: usize,
}

impl Bits for Enc {
    #[inline]
    fn bit(&mut self, p: &mut Prob, bit: bool) -> bool {
        let p0 = f64::from(p.p) / f64::from(cm::PROB_ONE);
        self.ideal[self.id] -= if bit { (1.0 - p0).log2() } else { p0.log2() };
        self.e.bit(p, bit);
        bit
    }
    fn part(&mut self, id: usize) {
        self.id = id;
    }
}

struct Dec<'a>(cm::Decoder<'a>);

impl Bits for Dec<'_> {
    #[inline]
    fn bit(&mut self, p: &mut Prob, _bit: bool) -> bool {
        self.0.bit(p)
    }
}

const START: Prob = Prob { p: 2048, n: 0 };
/// Unary length cap of the Elias-gamma code (values below 2^GAMMA_MAX - 1).
const GAMMA_MAX: usize = 31;
/// Buckets of a reference distance.
const RB: usize = 6;

fn rbucket(r: u32) -> usize {
    match r {
        0..=2 => 0,
        3..=6 => 1,
        7..=12 => 2,
        13..=24 => 3,
        25..=48 => 4,
        _ => 5,
    }
}

/// The adaptive probabilities of one block (a fresh model a block).
struct Model {
    /// "d == first reference": value, its slot, the others' states (none, equal, different:
    /// `PAT` patterns), bucket of the reference, the last two hits.
    eq1: Vec<Prob>,
    /// "d == a further distinct reference": value, its slot, its rank among the candidates,
    /// how many references hold it.
    eq2: Vec<Prob>,
    /// Parity as expected: value, reference state (none, reference parity expected, not).
    par: Vec<Prob>,
    /// "q == reference q": value, parity expected.
    qeq: Vec<Prob>,
    /// Sign of `q - rq` (1 = larger): value, bucket, where the other references lie.
    sign: Vec<Prob>,
    /// Unary bits of the gamma length: value, mode (no reference, below, above), bucket of
    /// the reference, position.
    un: Vec<Prob>,
    /// Mantissa bits: value, mode, length, bit position.
    man: Vec<Prob>,
    /// `MIX=1`: a second estimate of "d == first reference" (value, source, the match
    /// model's run bucket, hit history, how many other references agree), mixed with
    /// `eq1`'s in the logistic domain by weights learnt online per (value, source).
    eq1b: Vec<Prob>,
    mixw: Vec<[f64; 3]>,
    mix: bool,
}

fn stretch(p1: f64) -> f64 {
    (p1 / (1.0 - p1)).ln()
}

fn squash(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// P(bit = 1) of a probability.
fn p_one(p: &Prob) -> f64 {
    1.0 - f64::from(p.p) / f64::from(cm::PROB_ONE)
}

/// A trained starting point of every probability (`TRAIN`), in [`Model::flat`]'s order.
static PRIOR: std::sync::OnceLock<Vec<Prob>> = std::sync::OnceLock::new();

impl Model {
    fn new() -> Model {
        let mut m = Model::fresh();
        if let Some(p) = PRIOR.get() {
            let mut at = 0;
            for v in m.vectors() {
                let n = v.len();
                v.copy_from_slice(&p[at..at + n]);
                at += n;
            }
        }
        m
    }
    fn vectors(&mut self) -> [&mut Vec<Prob>; 8] {
        [
            &mut self.eq1b,
            &mut self.eq1,
            &mut self.eq2,
            &mut self.par,
            &mut self.qeq,
            &mut self.sign,
            &mut self.un,
            &mut self.man,
        ]
    }
    /// Every probability, in a fixed order.
    fn flat(&mut self) -> Vec<Prob> {
        self.vectors()
            .iter()
            .flat_map(|v| v.iter().copied())
            .collect()
    }
    fn fresh() -> Model {
        Model {
            eq1: vec![START; 2 * MAXR * PAT * RB * 4],
            eq2: vec![START; 2 * MAXR * MAXR * 3],
            par: vec![START; 2 * 3],
            qeq: vec![START; 2 * 2],
            sign: vec![START; 2 * RB * 3],
            un: vec![START; 2 * 3 * RB * GAMMA_MAX],
            man: vec![START; 2 * 3 * GAMMA_MAX * GAMMA_MAX],
            eq1b: vec![START; 2 * MAXR * 4 * 4 * 4],
            mixw: vec![[0.55, 0.45, 0.0]; 2 * MAXR],
            mix: std::env::var("MIX").is_ok_and(|s| s == "1"),
        }
    }

    /// Elias gamma of `x >= 1` (`x` ignored when decoding); returns `x`.
    /// `mode`: 0 no reference, 1 below it, 2 above; `b` the reference's bucket (the unary
    /// part's context).
    fn gamma<C: Bits>(&mut self, c: &mut C, v: usize, mode: usize, b: usize, x: u32) -> u32 {
        let nb_in = 31 - x.max(1).leading_zeros() as usize;
        c.part(5);
        let mut nb = 0;
        while nb < GAMMA_MAX - 1 {
            let k = ((v * 3 + mode) * RB + b) * GAMMA_MAX + nb;
            if !c.bit(&mut self.un[k], nb < nb_in) {
                break;
            }
            nb += 1;
        }
        let mut y = 1u32;
        for j in (0..nb).rev() {
            let k = ((v * 3 + mode) * GAMMA_MAX + nb) * GAMMA_MAX + j;
            let b = c.bit(&mut self.man[k], (x >> j) & 1 == 1);
            y = (y << 1) | u32::from(b);
        }
        y
    }

    /// Code distance `d` (ignored when decoding) of a position of value `v` (0 loss, 1 win)
    /// with its references `refs` ([`refs`]), `hist` the last two hits of the first bit (or
    /// with `RUNCTX=1` the match model's run bucket) and `run` the run bucket (the mixed
    /// estimate's context); returns `d`.
    #[allow(clippy::too_many_arguments)]
    fn code<C: Bits>(
        &mut self,
        c: &mut C,
        v: usize,
        refs: &Refs,
        hist: usize,
        run: usize,
        d: u32,
    ) -> u32 {
        let first = refs.iter().position(|r| r.is_some());
        let mut r = None;
        if let Some(s) = first {
            let rv = refs[s].unwrap();
            r = Some(rv);
            // Each other reference: none, equal to the first, different (`PAT` patterns).
            let pattern = refs
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != s)
                .fold(0, |a, (_, x)| {
                    a * 3
                        + match x {
                            None => 0,
                            Some(y) if *y == rv => 1,
                            Some(_) => 2,
                        }
                });
            let k = (((v * MAXR + s) * PAT + pattern) * RB + rbucket(rv)) * 4 + hist;
            c.part(0);
            let hit = if self.mix {
                let agree = refs.iter().filter(|&&x| x == Some(rv)).count().min(4) - 1;
                let kb = ((v * MAXR + s) * 4 + run) * 16 + hist * 4 + agree;
                let x = [
                    stretch(p_one(&self.eq1[k])),
                    stretch(p_one(&self.eq1b[kb])),
                    0.3,
                ];
                let w = &mut self.mixw[v * MAXR + s];
                let pm = squash(w.iter().zip(&x).map(|(a, b)| a * b).sum());
                let q = ((1.0 - pm) * f64::from(cm::PROB_ONE)).round() as u32;
                let mut tmp = Prob {
                    p: q.clamp(cm::PROB_MIN, cm::PROB_ONE - cm::PROB_MIN) as u16,
                    n: cm::RATE_CAP as u16,
                };
                let bit = c.bit(&mut tmp, d == rv);
                let err = f64::from(u8::from(bit)) - pm;
                for (wi, xi) in w.iter_mut().zip(&x) {
                    *wi += mix_lr() * err * xi;
                }
                self.eq1[k].update(bit);
                self.eq1b[kb].update(bit);
                bit
            } else {
                c.bit(&mut self.eq1[k], d == rv)
            };
            if hit {
                return rv;
            }
            // The other distinct references in order, each "equal to it?" in the context of
            // its slot, its rank among the candidates and how many references agree with it.
            let mut tried = [rv; MAXR];
            let mut nt = 1;
            for s2 in s + 1..MAXR {
                let Some(r2) = refs[s2] else { continue };
                if tried[..nt].contains(&r2) {
                    continue;
                }
                tried[nt] = r2;
                nt += 1;
                let votes = refs.iter().filter(|&&x| x == Some(r2)).count().min(3) - 1;
                c.part(1);
                let k = ((v * MAXR + s2) * MAXR + (nt - 2)) * 3 + votes;
                if c.bit(&mut self.eq2[k], d == r2) {
                    return r2;
                }
            }
        }
        let expected = v as u32; // a win odd, a loss even
        let rstate = match r {
            None => 0,
            Some(x) if x & 1 == expected => 1,
            Some(_) => 2,
        };
        c.part(2);
        let par_ok = c.bit(&mut self.par[v * 3 + rstate], (d & 1) == expected);
        let parity = if par_ok { expected } else { expected ^ 1 };
        let q = match r {
            None => self.gamma(c, v, 0, 0, (d >> 1) + 1) - 1,
            Some(rv) => {
                let rq = rv >> 1;
                let dq = d >> 1;
                // q == rq is possible only when the parity differs from the reference's.
                let same = (rv & 1) == parity;
                c.part(3);
                if !same && c.bit(&mut self.qeq[v * 2 + usize::from(par_ok)], dq == rq) {
                    rq
                } else {
                    c.part(4);
                    let b = rbucket(rv);
                    // Where the other references lie: as many above as below, more above,
                    // more below.
                    let (above, below) = refs.iter().flatten().fold((0, 0), |(a, l), &x| {
                        (a + usize::from(x > rv), l + usize::from(x < rv))
                    });
                    let dir = match above.cmp(&below) {
                        std::cmp::Ordering::Equal => 0,
                        std::cmp::Ordering::Greater => 1,
                        std::cmp::Ordering::Less => 2,
                    };
                    if rq == 0 || c.bit(&mut self.sign[(v * RB + b) * 3 + dir], dq > rq) {
                        rq + self.gamma(c, v, 2, b, dq.wrapping_sub(rq))
                    } else {
                        rq - self.gamma(c, v, 1, b, rq.wrapping_sub(dq))
                    }
                }
            }
        };
        (q << 1) | parity
    }
}

/// Most references a position has.
const MAXR: usize = 6;
type Refs = [Option<u32>; MAXR];
/// States of the other references (none, equal, different).
const PAT: usize = 3usize.pow(MAXR as u32 - 1);

/// The references of position `k` of a block, in the order of `kinds` (`REFS`, at most
/// [`MAXR`], default `kmhg1K`): `k` the kept same-valued distance one king step back
/// (`cm::strides`' first), `m` one men step back (its second), `l` the block's last kept one
/// of the same value, `x` that of the other value, `K`, `M` four king or men steps back, `1`
/// to `9` the kept same-valued one that many indices back (all inside the block); `h`, `H`
/// the two match models' predictions ([`Matcher`]), `g` the neighbourhood predictor's
/// ([`Ngb`]).
#[inline]
#[allow(clippy::too_many_arguments)]
fn refs(
    kinds: &[u8],
    k: usize,
    v: u8,
    strides: (usize, usize),
    keep: &[bool],
    val: &[u8],
    d: &[u32],
    last: &[Option<u32>; 3],
    matched: [Option<u32>; 3],
) -> Refs {
    let nb = |s: usize| (s > 0 && k >= s && keep[k - s] && val[k - s] == v).then(|| d[k - s]);
    let mut r = [None; MAXR];
    for (x, &c) in r.iter_mut().zip(kinds) {
        *x = match c {
            b'k' => nb(strides.0),
            b'm' => nb(strides.1),
            b'K' => nb(4 * strides.0),
            b'M' => nb(4 * strides.1),
            b'l' => last[v as usize],
            b'x' => last[2 - v as usize],
            b'h' => matched[0],
            b'H' => matched[1],
            b'g' => matched[2],
            b'1'..=b'9' => nb(usize::from(c - b'0')),
            _ => panic!("REFS: unknown kind {}", c as char),
        };
    }
    r
}

/// A match model: the kept position that last followed the same `order` kept (value,
/// distance) pairs predicts the next distance (`MATCH=order`, default 12; a second one, ref
/// kind `H`, `MATCH2`, default 5), and how many of its predictions in a row were right.
struct Matcher {
    order: usize,
    recent: Vec<u64>,
    table: Vec<u32>,
    hash: u64,
    pred: Option<u32>,
    run: u32,
}

const MATCH_BITS: u32 = 16;

impl Matcher {
    fn new(var: &str, default: usize) -> Matcher {
        let order = std::env::var(var)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default);
        Matcher {
            order,
            recent: Vec::new(),
            table: vec![u32::MAX; 1 << MATCH_BITS],
            hash: 0,
            pred: None,
            run: 0,
        }
    }
    /// The prediction for the next kept position (of value `v`; `d` the block's distances so
    /// far).
    fn predict(&mut self, v: u8, val: &[u8], d: &[u32]) -> Option<u32> {
        self.pred = None;
        if self.recent.len() < self.order {
            return None;
        }
        let n = self.recent.len();
        let mut h = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(u64::from(v) + 1);
        for &x in &self.recent[n - self.order..] {
            h = (h ^ x).wrapping_mul(0x100_0000_01B3).rotate_left(29);
        }
        self.hash = h >> (64 - MATCH_BITS);
        let j = self.table[self.hash as usize];
        self.pred = (j != u32::MAX && val[j as usize] == v).then(|| d[j as usize]);
        self.pred
    }
    /// The run of right predictions, bucketed (0, 1-3, 4-15, 16+).
    fn run_bucket(&self) -> usize {
        match self.run {
            0 => 0,
            1..=3 => 1,
            4..=15 => 2,
            _ => 3,
        }
    }
    /// Record kept position `k` (value `v`, distance `x`), after [`Matcher::predict`].
    fn update(&mut self, k: usize, v: u8, x: u32) {
        if self.recent.len() >= self.order {
            self.table[self.hash as usize] = k as u32;
        }
        match self.pred {
            Some(p) if p == x => self.run += 1,
            Some(_) => self.run = 0,
            None => {}
        }
        self.recent.push(u64::from(x) << 2 | u64::from(v));
    }
}

/// Train [`PRIOR`] on `slices`: the adapted probabilities at the end of every block, averaged
/// weighted by their bit counts, each starting with the weight of `PW` bits (default 4).
fn train(dir: &std::path::Path, slices: &[checkers_egdb::Slice]) {
    let acc: Mutex<Vec<(f64, f64)>> = Mutex::new(Vec::new());
    slices.par_iter().for_each(|s| {
        let f = DtcFile::open(&dtc_path(dir, s), RULES_ENGLISH).unwrap();
        let wld = TableFile::open(&table_path(dir, s))
            .unwrap()
            .decode_all()
            .unwrap();
        let d_all = f.decode_all().unwrap();
        let ix = SliceIndex::new(*s);
        let strides = cm::strides(&ix);
        let bp = f.block_positions() as usize;
        for lo in (0..d_all.len()).step_by(bp) {
            let hi = (lo + bp).min(d_all.len());
            let mut cls = vec![0u8; hi - lo];
            cm6::walk_classes(&ix, lo as u64, &mut cls);
            let val = &wld[lo..hi];
            let keep: Vec<bool> = (0..hi - lo).map(|i| val[i] != 1 && cls[i] != 0).collect();
            let (_, _, probs) = cm_encode(&keep, val, &d_all[lo..hi], strides);
            let mut a = acc.lock().unwrap();
            a.resize(probs.len(), (0.0, 0.0));
            for (x, p) in a.iter_mut().zip(&probs) {
                x.0 += f64::from(p.p) * f64::from(p.n);
                x.1 += f64::from(p.n);
            }
        }
    });
    let pw: u16 = std::env::var("PW")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    let prior = acc
        .into_inner()
        .unwrap()
        .iter()
        .map(|&(sp, n)| Prob {
            p: if n > 0.0 {
                (sp / n).round() as u16
            } else {
                2048
            },
            n: pw,
        })
        .collect();
    assert!(PRIOR.set(prior).is_ok());
}

/// A neighbourhood context predictor (ref kind `g`): the distance last seen after the same
/// states (kept and value, distance) of the positions 1, 2, one king step, one king step
/// and 1, and one men step back.
struct Ngb {
    table: Vec<u32>,
    hash: usize,
}

impl Ngb {
    fn new() -> Ngb {
        Ngb {
            table: vec![0; 1 << MATCH_BITS],
            hash: 0,
        }
    }
    fn predict(
        &mut self,
        k: usize,
        v: u8,
        keep: &[bool],
        val: &[u8],
        d: &[u32],
        strides: (usize, usize),
    ) -> Option<u32> {
        let mut h = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(u64::from(v) + 1);
        for o in [1, 2, strides.0, strides.0 + 1, strides.1] {
            let x = if o == 0 || k < o {
                1
            } else if !keep[k - o] {
                2 + u64::from(val[k - o])
            } else {
                8 + (u64::from(d[k - o]) << 2 | u64::from(val[k - o]))
            };
            h = (h ^ x).wrapping_mul(0x100_0000_01B3).rotate_left(29);
        }
        self.hash = (h >> (64 - MATCH_BITS)) as usize;
        let t = self.table[self.hash];
        (t > 0).then(|| t - 1)
    }
}

fn ref_kinds() -> Vec<u8> {
    let k = std::env::var("REFS").unwrap_or_else(|_| "kmhg1K".into());
    assert!(k.len() <= MAXR, "REFS: at most {MAXR} kinds");
    k.into_bytes()
}

/// Whether the eq1 context holds the last two hits (`HIST=1`, default) or not.
fn hist_on() -> bool {
    std::env::var("HIST").map_or(true, |s| s != "0")
}

/// Encode the kept distances of a block: `(bytes, ideal bits, the model's probabilities)`.
fn cm_encode(
    keep: &[bool],
    val: &[u8],
    d: &[u32],
    strides: (usize, usize),
) -> (Vec<u8>, [f64; 6], Vec<Prob>) {
    let mut c = Enc {
        e: cm::Encoder::new(),
        ideal: [0.0; 6],
        id: 0,
    };
    let mut d = d.to_vec();
    let mut m = cm_walk(&mut c, keep, val, &mut d, strides, true);
    (c.e.finish_short(), c.ideal, m.flat())
}

/// Decode a block coded by [`cm_encode`]: every kept position's distance (0 elsewhere).
fn cm_decode(keep: &[bool], val: &[u8], data: &[u8], strides: (usize, usize)) -> Vec<u32> {
    let mut c = Dec(cm::Decoder::new_short(data));
    let mut d = vec![0u32; keep.len()];
    cm_walk(&mut c, keep, val, &mut d, strides, false);
    d
}

/// The model's walk over a block's kept positions, shared by the encoder and the decoder so
/// that both see the same contexts: `encoding`, each kept `d[k]` is coded (and checked to
/// come back); otherwise `d[k]` is decoded into place. The model at the end.
fn cm_walk<C: Bits>(
    c: &mut C,
    keep: &[bool],
    val: &[u8],
    d: &mut [u32],
    strides: (usize, usize),
    encoding: bool,
) -> Model {
    let mut m = Model::new();
    let mut last = [None; 3];
    let (kinds, hon, mut hist) = (ref_kinds(), hist_on(), 0);
    let use_match = kinds.contains(&b'h');
    let use_match2 = kinds.contains(&b'H');
    let run_ctx = use_match && std::env::var("RUNCTX").is_ok_and(|s| s == "1");
    let mut mt = Matcher::new("MATCH", 12);
    let mut mt2 = Matcher::new("MATCH2", 5);
    let use_ngb = kinds.contains(&b'g');
    let mut ngb = Ngb::new();
    for k in 0..d.len() {
        if !keep[k] {
            continue;
        }
        let v = val[k];
        let pm = [
            if use_match {
                mt.predict(v, val, d)
            } else {
                None
            },
            if use_match2 {
                mt2.predict(v, val, d)
            } else {
                None
            },
            if use_ngb {
                ngb.predict(k, v, keep, val, d, strides)
            } else {
                None
            },
        ];
        let hctx = if run_ctx { mt.run_bucket() } else { hist };
        let r = refs(&kinds, k, v, strides, keep, val, d, &last, pm);
        let want = if encoding { d[k] } else { 0 };
        let got = m.code(c, usize::from(v == 2), &r, hctx, mt.run_bucket(), want);
        if encoding {
            assert_eq!(got, d[k]);
        }
        d[k] = got;
        last[v as usize] = Some(got);
        if use_match {
            mt.update(k, v, got);
        }
        if use_match2 {
            mt2.update(k, v, got);
        }
        if use_ngb {
            ngb.table[ngb.hash] = got + 1;
        }
        if hon {
            hist = (hist << 1 | usize::from(r.iter().flatten().next() == Some(&got))) & 3;
        }
    }
    m
}

// ---------------------------------------------------------------------- accounting

/// One coded form's totals: data bytes, blocks stored with data, decode CPU ns and the
/// positions of the blocks decoded.
#[derive(Default, Clone)]
struct Acc {
    data: u64,
    ideal_bits: [f64; 6],
    decode_ns: u64,
    decode_pos: u64,
    walk_ns: u64,
}

#[derive(Default)]
struct Totals {
    files: u64,
    positions: u64,
    real_bytes: u64,
    /// Layout bytes without data (header, offset tables), as the writer lays out.
    head_bytes: u64,
    stored: u64,
    draws: u64,
    captures: u64,
    no_move: u64,
    wins: u64,
    wins_odd: u64,
    losses: u64,
    losses_even: u64,
    escapes: u64,
    longest: u32,
    forms: Vec<(String, Acc)>,
}

fn add(forms: &mut Vec<(String, Acc)>, name: &str, a: &Acc) {
    if let Some(f) = forms.iter_mut().find(|f| f.0 == name) {
        f.1.data += a.data;
        for (x, y) in f.1.ideal_bits.iter_mut().zip(a.ideal_bits) {
            *x += y;
        }
        f.1.decode_ns += a.decode_ns;
        f.1.decode_pos += a.decode_pos;
        f.1.walk_ns += a.walk_ns;
    } else {
        forms.push((name.to_string(), a.clone()));
    }
}

/// Code a block of `n` positions as a zstd frame of `stored` (unless `constant`), decode it
/// again with `check` and account it.
fn zstd_form(
    acc: &mut Acc,
    stored: &[u8],
    level: i32,
    constant: bool,
    n: usize,
    check: impl Fn(&[u8]),
) {
    if constant {
        return;
    }
    let z = zstd_bytes(stored, level);
    acc.data += z.len() as u64;
    let t = cpu_ns();
    let mem = zstd::bulk::decompress(&z, stored.len()).unwrap();
    acc.decode_ns += cpu_ns() - t;
    acc.decode_pos += n as u64;
    check(&mem);
}

fn varint_len(x: usize) -> u64 {
    u64::from((usize::BITS - x.max(1).leading_zeros()).div_ceil(7))
}

fn all_same(d: impl Iterator<Item = u32>) -> bool {
    let mut first = None;
    for x in d {
        match first {
            None => first = Some(x),
            Some(f) if f != x => return false,
            _ => {}
        }
    }
    true
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: dtc_codec_experiment DIR PIECES");
        std::process::exit(2);
    }
    let dir = std::path::PathBuf::from(&args[1]);
    let pieces: u32 = args[2].parse().unwrap();
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(d)
    };
    let (sample, offset) = (env("SAMPLE", 1).max(1), env("OFFSET", 0));
    let levels: Vec<i32> = std::env::var("LEVELS")
        .unwrap_or_else(|_| "9,19".into())
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let segs: Vec<usize> = std::env::var("SEGS")
        .unwrap_or_else(|_| "0".into())
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let mut slices: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().ok()?;
            let s = slice_of_file_name(&format!("{}.egdb", name.strip_suffix(".dtc")?))?;
            let m = s.material;
            (u32::from(m.bm) + u32::from(m.bk) + u32::from(m.wm) + u32::from(m.wk) == pieces)
                .then_some(s)
        })
        .collect();
    slices.sort_by_key(|s| s.to_string());
    if let Some(o) = std::env::var("TRAIN")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
    {
        let t: Vec<_> = slices.iter().copied().skip(o).step_by(sample).collect();
        let t0 = clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID);
        train(&dir, &t);
        println!(
            "prior trained on {} files (every {sample} from {o}), {:.1} s CPU",
            t.len(),
            (clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID) - t0) as f64 / 1e9
        );
    }
    let slices: Vec<_> = slices.into_iter().skip(offset).step_by(sample).collect();
    let totals = Mutex::new(Totals::default());
    let t0 = clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID);
    slices.par_iter().for_each(|s| {
        let f = DtcFile::open(&dtc_path(&dir, s), RULES_ENGLISH).unwrap();
        let w = TableFile::open(&table_path(&dir, s)).unwrap();
        let d_all = f.decode_all().unwrap();
        let wld = w.decode_all().unwrap();
        let ix = SliceIndex::new(*s);
        let n = d_all.len();
        assert_eq!(wld.len(), n);
        let mut cap = vec![false; n];
        ix.visit(0, n as u64, |i, p| {
            cap[i as usize] = English.has_capture(&p)
        });
        let strides = cm::strides(&ix);
        let bp = f.block_positions() as usize;
        let blocks = n.div_ceil(bp);
        let mut forms: Vec<(String, Acc)> = Vec::new();
        let mut t = Totals {
            files: 1,
            positions: n as u64,
            real_bytes: f.file_bytes(),
            head_bytes: FILE_HEAD,
            longest: f.meta().longest,
            ..Default::default()
        };
        if f.uniform().is_none() {
            t.head_bytes += BLOCK_ENTRY * blocks as u64;
        }
        for b in 0..blocks {
            let (lo, hi) = (b * bp, ((b + 1) * bp).min(n));
            let k = hi - lo;
            let d = &d_all[lo..hi];
            let val = &wld[lo..hi];
            let mut cls = vec![0u8; k];
            let tw = cpu_ns();
            assert_eq!(cm6::walk_classes(&ix, lo as u64, &mut cls), k);
            let walk_ns = cpu_ns() - tw;
            // The writer's don't cares; what the readers must get back.
            let dc: Vec<bool> = (0..k).map(|i| cap[lo + i] || val[i] == 1).collect();
            for i in 0..k {
                if cap[lo + i] {
                    t.captures += 1;
                } else if val[i] == 1 {
                    t.draws += 1;
                } else {
                    t.stored += 1;
                    if d[i] >= ESCAPE {
                        t.escapes += 1;
                    }
                    if val[i] == 2 {
                        t.wins += 1;
                        t.wins_odd += u64::from(d[i] & 1);
                    } else {
                        t.losses += 1;
                        t.losses_even += u64::from(d[i] & 1 == 0);
                    }
                    if cls[i] == 0 {
                        // No legal move: a loss in 0 (the probe's answer without the file).
                        assert!(val[i] == 0 && d[i] == 0, "{s} {}: skipped, stored", lo + i);
                        t.no_move += 1;
                    }
                }
            }
            let check_full = |got: &[u32]| {
                for i in 0..k {
                    assert!(dc[i] || got[i] == d[i], "{s} {}: decoded wrong", lo + i);
                }
            };
            // Fill variants. `d` holds the writer's majority fill already.
            let mut prev = d.to_vec();
            let first = (0..k).find(|&i| !dc[i]).map_or(0, |i| d[i]);
            let mut last = first;
            for i in 0..k {
                if dc[i] {
                    prev[i] = last;
                } else {
                    last = d[i];
                }
            }
            // Kept streams of the skip variants.
            let keep_draw: Vec<bool> = (0..k).map(|i| val[i] != 1).collect();
            let keep_walk: Vec<bool> = (0..k).map(|i| val[i] != 1 && cls[i] != 0).collect();
            let s_draw: Vec<u32> = (0..k).filter(|&i| keep_draw[i]).map(|i| prev[i]).collect();
            // Independent of the WLD codec: every threat position (walk class 2) kept whatever
            // its stored value (a draw there filled with the previous distance).
            let keep_thr: Vec<bool> = (0..k)
                .map(|i| cls[i] == 2 || (cls[i] == 1 && val[i] != 1))
                .collect();
            let s_thr: Vec<u32> = (0..k).filter(|&i| keep_thr[i]).map(|i| prev[i]).collect();
            let s_draw_maj: Vec<u32> = (0..k).filter(|&i| keep_draw[i]).map(|i| d[i]).collect();
            let s_walk: Vec<u32> = (0..k).filter(|&i| keep_walk[i]).map(|i| d[i]).collect();
            let s_par: Vec<u32> = (0..k)
                .filter(|&i| keep_walk[i])
                .map(|i| if val[i] == 2 { d[i] - 1 } else { d[i] })
                .collect();
            let scatter = |got: &[u32], keep: &[bool]| {
                let mut out = vec![0u32; k];
                let mut j = 0;
                for i in 0..k {
                    if keep[i] {
                        out[i] = got[j];
                        j += 1;
                    }
                }
                assert_eq!(j, got.len());
                out
            };
            let const_maj = all_same(d.iter().copied());
            let const_walk = all_same(s_walk.iter().copied());
            for &level in &levels {
                let mut a = Acc::default();
                zstd_form(&mut a, &encode_dtc_block(d), level, const_maj, k, |m| {
                    check_full(&decode_block_form(m, k));
                });
                add(&mut forms, &format!("maj L{level}"), &a);
                let mut a = Acc::default();
                zstd_form(&mut a, &encode_dtc_block(&prev), level, const_maj, k, |m| {
                    check_full(&decode_block_form(m, k));
                });
                add(&mut forms, &format!("prev L{level}"), &a);
                let mut a = Acc::default();
                let c = all_same(s_draw_maj.iter().copied());
                zstd_form(&mut a, &encode_dtc_block(&s_draw_maj), level, c, k, |m| {
                    check_full(&scatter(
                        &decode_block_form(m, s_draw_maj.len()),
                        &keep_draw,
                    ));
                });
                add(&mut forms, &format!("skipdraw/maj L{level}"), &a);
                let mut a = Acc::default();
                let c = all_same(s_draw.iter().copied());
                zstd_form(&mut a, &encode_dtc_block(&s_draw), level, c, k, |m| {
                    check_full(&scatter(&decode_block_form(m, s_draw.len()), &keep_draw));
                });
                add(&mut forms, &format!("skipdraw L{level}"), &a);
                let mut a = Acc::default();
                zstd_form(
                    &mut a,
                    &encode_dtc_block(&s_walk),
                    level,
                    const_walk,
                    k,
                    |m| {
                        check_full(&scatter(&decode_block_form(m, s_walk.len()), &keep_walk));
                    },
                );
                add(&mut forms, &format!("skipwalk L{level}"), &a);
                let mut a = Acc::default();
                let c = all_same(s_thr.iter().copied());
                zstd_form(&mut a, &encode_dtc_block(&s_thr), level, c, k, |m| {
                    check_full(&scatter(&decode_block_form(m, s_thr.len()), &keep_thr));
                });
                add(&mut forms, &format!("skipwalk/thr L{level}"), &a);
                let mut a = Acc::default();
                zstd_form(
                    &mut a,
                    &encode_dtc_block(&s_par),
                    level,
                    const_walk,
                    k,
                    |m| {
                        let q = scatter(&decode_block_form(m, s_par.len()), &keep_walk);
                        let got: Vec<u32> = (0..k)
                            .map(|i| {
                                if keep_walk[i] && val[i] == 2 {
                                    q[i] + 1
                                } else {
                                    q[i]
                                }
                            })
                            .collect();
                        check_full(&got);
                    },
                );
                add(&mut forms, &format!("skipwalk+par L{level}"), &a);
            }
            // The context model: over the whole block, or in segments coded alone (`SEGS`,
            // a list of segment lengths, 0 the block: a segment's length costs a varint).
            for &seg in &segs {
                let mut a = Acc::default();
                if !const_walk {
                    let seg = if seg == 0 { k } else { seg };
                    let mut got = vec![0u32; k];
                    for a0 in (0..k).step_by(seg) {
                        let b0 = (a0 + seg).min(k);
                        let r = a0..b0;
                        let (bytes, ideal, _) = cm_encode(
                            &keep_walk[r.clone()],
                            &val[r.clone()],
                            &d[r.clone()],
                            strides,
                        );
                        a.data += bytes.len() as u64;
                        if seg < k {
                            a.data += varint_len(bytes.len());
                        }
                        for (x, y) in a.ideal_bits.iter_mut().zip(ideal) {
                            *x += y;
                        }
                        let t1 = cpu_ns();
                        let g = cm_decode(&keep_walk[r.clone()], &val[r.clone()], &bytes, strides);
                        a.decode_ns += cpu_ns() - t1;
                        got[r].copy_from_slice(&g);
                    }
                    a.decode_pos = k as u64;
                    a.walk_ns = walk_ns;
                    check_full(&got);
                }
                let name = if seg == 0 {
                    "cm".to_string()
                } else {
                    format!("cm seg {seg}")
                };
                add(&mut forms, &name, &a);
            }
        }
        let mut g = totals.lock().unwrap();
        g.files += t.files;
        g.positions += t.positions;
        g.real_bytes += t.real_bytes;
        g.head_bytes += t.head_bytes;
        g.stored += t.stored;
        g.draws += t.draws;
        g.captures += t.captures;
        g.no_move += t.no_move;
        g.wins += t.wins;
        g.wins_odd += t.wins_odd;
        g.losses += t.losses;
        g.losses_even += t.losses_even;
        g.escapes += t.escapes;
        g.longest = g.longest.max(t.longest);
        for (name, a) in &forms {
            add(&mut g.forms, name, a);
        }
    });
    let t = totals.into_inner().unwrap();
    let pct = |x: u64| 100.0 * x as f64 / t.positions as f64;
    println!(
        "{} files of {pieces} pieces (every {sample} from {offset}), {} positions, {} bytes as \
         written: {:.2} positions/byte; {:.1} s CPU (process)",
        t.files,
        t.positions,
        t.real_bytes,
        t.positions as f64 / t.real_bytes as f64,
        (clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID) - t0) as f64 / 1e9
    );
    println!(
        "kept {} ({:.1}%), draws {} ({:.1}%), capture positions {} ({:.1}%), of the kept: no \
         move {} ({:.2}%), wins {} ({:.1}% odd), losses {} ({:.1}% even), escapes {}, longest {}",
        t.stored,
        pct(t.stored),
        t.draws,
        pct(t.draws),
        t.captures,
        pct(t.captures),
        t.no_move,
        pct(t.no_move),
        t.wins,
        100.0 * t.wins_odd as f64 / t.wins.max(1) as f64,
        t.losses,
        100.0 * t.losses_even as f64 / t.losses.max(1) as f64,
        t.escapes,
        t.longest
    );
    println!("form\tdata bytes\tfile bytes\tpositions/byte\tbits/kept\tdecode ns/position\tcm walk ns/position");
    for (name, a) in &t.forms {
        let bytes = t.head_bytes + a.data;
        let mut line = format!(
            "{name}\t{}\t{bytes}\t{:.2}\t{:.3}\t{:.2}",
            a.data,
            t.positions as f64 / bytes as f64,
            8.0 * a.data as f64 / t.stored as f64,
            a.decode_ns as f64 / a.decode_pos.max(1) as f64
        );
        if name == "maj L9" && t.files == slices.len() as u64 {
            line += &format!("\t(as written: {} bytes)", t.real_bytes);
            assert_eq!(
                bytes, t.real_bytes,
                "the baseline does not reproduce the files"
            );
        }
        if name.starts_with("cm") {
            let ideal: f64 = a.ideal_bits.iter().sum();
            let ib = t.head_bytes as f64 + ideal / 8.0;
            line += &format!(
                "\t{:.2}\tideal {:.0} data bytes, {:.2} positions/byte",
                a.walk_ns as f64 / a.decode_pos.max(1) as f64,
                ideal / 8.0,
                t.positions as f64 / ib
            );
            for (p, b) in PARTS.iter().zip(a.ideal_bits) {
                line += &format!(
                    "\n\tideal bytes {p}: {:.0} ({:.1}%)",
                    b / 8.0,
                    100.0 * b / ideal
                );
            }
        }
        println!("{line}");
    }
    println!("every coded form decoded again and checked at every kept position: ok");
}

/// The mixer's learning rate (`LR`, default 0.02).
fn mix_lr() -> f64 {
    static LR: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *LR.get_or_init(|| {
        std::env::var("LR")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.02)
    })
}
