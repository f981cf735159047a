//! Codec 6 restart cost experiment (issue 32, helper cm32e): a codebook of priors chosen per
//! segment, constant segments, and the granularity of the prior choice.
//!
//! Codec 6 (`format::cm6`, docs/format.md "Codec 6") restarts its adaptive model at every
//! segment of 4,120 positions from one compiled-in prior. Here the model, walk, classes,
//! filled don't cares, range coder and byte accounting are codec 6's (the model is copied
//! bit for bit, and with `DECODE=1` every segment is decoded by the library's
//! `cm6::decode_segment_with` under the prior it was coded with and checked against the coded
//! values), but a segment may start from any of `K` priors (a codebook): the encoder codes the
//! segment with each and keeps the smallest, and the prior's id is folded into the segment's
//! length varint (`varint(len * K + id)`), so the decoder's work per position is codec 6's.
//!
//! Usage:
//! `SAMPLE=k [OFFSET=o] [SEG=n] [WEIGHT=w] [K=n] [ROUNDS=r] [BOOK=file] [SAVE=file]
//!  [ASSIGN=seg|block|file] [CONSTSEG=1] [FILEPRIOR=bits [MINN=n]] [DECODE=1] cm8_experiment DIR PIECES`
//!
//! - every k-th WLD file of `PIECES` pieces of `DIR` (from the o-th, by name) is coded;
//! - `EMIT=path`: also write the codebook as codec 7's compiled-in table
//!   (`src/table/cm7_priors.in`, docs/format.md "Codec 7"); with `BOOK=file`, that file's
//!   codebook is written at once and nothing is measured (the codebook of codec 7:
//!   `SAMPLE=10 CONSTSEG=1 K=64 ROUNDS=5 SAVE=book.txt EMIT=src/table/cm7_priors.in`);
//! - `BOOK=file`: the codebook to use (one prior a line, 256 numbers: per context the 12-bit
//!   probabilities of a 0 bit of its two decisions), no training; else the codebook is trained
//!   on the files: the first prior is codec 6's (`cm6::PRIOR`), the other `K - 1` are seeded
//!   k-means++ style from single segments of a subsample (a segment's bit frequencies
//!   smoothed toward codec 6's prior), then `ROUNDS` rounds (default 4) of: assign each segment
//!   to the prior that codes it in the fewest bytes, re-estimate each prior from its segments'
//!   bits (`(zeros + 0.4) / (n + 0.8)`, clamped as the model clamps). `SAVE=file` writes it;
//! - `ASSIGN=seg|block|file`: in training, one prior per segment (default), per block or per
//!   file (the one with the fewest bytes over the group);
//! - `WEIGHT`: the bits a prior counts for (codec 6: 4);
//! - `CONSTSEG=1`: a segment whose coded values (don't cares excepted) all equal `v` is stored
//!   as the varint `v` (one byte, no range coder); coded segments store `3 + len * K + id`;
//!   the training then leaves the constant segments out;
//! - `NEARSEG=e`: also a segment with at most `e` exceptions to its most common coded value
//!   (don't cares excepted) is stored without the range coder: a code for (value, count),
//!   then per exception `varint(delta * 2 + which)` (delta from the previous exception);
//!   coded segments store `3 + 3 e + len * K + id`;
//! - `PBITS=b [PMIN=m]`: size only (the library's decoder is codec 6's, so no `DECODE`):
//!   the model's probabilities in `b` bits (default 12) clamped to `[m, 2^b - m]` (default
//!   31 scaled to `b` bits), the 12-bit priors scaled up;
//! - `FILEPRIOR=b`: also a prior per file stored in its header (each context's probabilities
//!   trained on the file's own bits, those of contexts seen `MINN` times or more, default 16,
//!   stored as `b`-bit logits; a 256-bit map says which), alone and as one more choice beside
//!   the codebook;
//! - prints positions per byte with the prior chosen per segment, per block (a byte per coded
//!   block) and per file (a byte per file), every file laid out as the writer would (72 bytes a
//!   file and 8 a block, constant blocks no data, a uniform file 72 bytes).
use checkers_egdb::format::{cm6, is_dont_care, SliceIndex, TableFile};
use checkers_egdb::rules::{English, Rules};
use checkers_egdb::Position;
use rayon::prelude::*;
use std::sync::Mutex;
use std::time::Instant;

const CONTEXTS: usize = cm6::CONTEXTS;
type Prior = [[u16; 2]; CONTEXTS];
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
const RATE_CAP: u16 = 20;
const NONE: usize = 3;

const RATES: [u32; RATE_CAP as usize + 1] = {
    let mut r = [0u32; RATE_CAP as usize + 1];
    let mut n = 0;
    while n <= RATE_CAP as usize {
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
        if self.n < RATE_CAP {
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

// ---------------------------------------------------------------- the data

/// Per position of a segment: 0 skipped, else `CODED | dc << 3 | f << 2 | value`.
const CODED: u8 = 0x10;
const DC: u8 = 0x08;

struct Seg {
    file: usize,
    block: usize,
    /// Index of the segment in its block.
    index: usize,
    st: (usize, usize),
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
    let st = strides(&ix);
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
        ix.visit(start, start + n as u64, |i, p| {
            let c = class(&p);
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
                file: fi,
                block: b,
                index: si,
                st,
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

/// Code a segment from `prior` (weight `w`): the stored bytes and, with `counts`, the bits
/// seen per context; with `coded`, the coded value per position (255 where skipped).
fn code(
    s: &Seg,
    prior: &Prior,
    w: u16,
    mut counts: Option<&mut Counts>,
    coded_out: Option<&mut Vec<u8>>,
) -> Vec<u8> {
    let n = s.pos.len();
    let mut probs = [[Prob { p: 2048, n: 0 }; 2]; CONTEXTS];
    let up = precision().0 - 12;
    for (p, q) in probs.iter_mut().zip(prior.iter()) {
        p[0] = Prob {
            p: q[0] << up,
            n: w,
        };
        p[1] = Prob {
            p: q[1] << up,
            n: w,
        };
    }
    let mut coded = vec![NONE as u8; n];
    let mut last = NONE;
    let (s1, s2) = s.st;
    let mut e = Enc::new();
    for k in 0..n {
        let c = s.pos[k];
        if c & CODED == 0 {
            continue;
        }
        let f = usize::from((c >> 2) & 1);
        let at = |st: usize| {
            if st > 0 && k >= st {
                coded[k - st] as usize
            } else {
                NONE
            }
        };
        let ctx = ((last * 4 + at(s1)) * 4 + at(s2)) * 2 + f;
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
    if let Some(o) = coded_out {
        *o = coded
            .iter()
            .zip(&s.pos)
            .map(|(&v, &c)| if c & CODED != 0 { v } else { 255 })
            .collect();
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

/// Write `book` as codec 7's compiled-in codebook (`src/table/cm7_priors.in`).
fn emit(book: &[Prior], path: &str) {
    let mut s = String::from(
        "// Codec 7's codebook: 64 priors (per context of codec 6's model, the 12-bit probabilities of a 0\n\
         // bit of its two decisions). Generated, do not edit: docs/format.md \"Codec 7\",\n\
         // `SAMPLE=10 CONSTSEG=1 K=64 ROUNDS=5 SAVE=book.txt EMIT=src/table/cm7_priors.in cm8_experiment /work/tables/p6 6`.\n[\n",
    );
    for p in book {
        let w: Vec<String> = p.iter().map(|x| format!("[{}, {}]", x[0], x[1])).collect();
        s.push_str(&format!("    [{}],\n", w.join(", ")));
    }
    s.push_str("]\n");
    std::fs::write(path, s).unwrap();
}

fn load_book(path: &str) -> Vec<Prior> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Vec<u16> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            assert_eq!(v.len(), 2 * CONTEXTS);
            std::array::from_fn(|i| [v[2 * i], v[2 * i + 1]])
        })
        .collect()
}

/// Bytes of each segment under each prior.
fn cost_matrix(segs: &[Seg], book: &[Prior], w: u16) -> Vec<Vec<u32>> {
    segs.par_iter()
        .map(|s| {
            book.iter()
                .map(|p| code(s, p, w, None, None).len() as u32)
                .collect()
        })
        .collect()
}

struct Sizes {
    per_segment: u64,
    per_block: u64,
    per_file: u64,
    codec6: u64,
    const_segs: u64,
}

/// Total bytes of the files for the cost matrix `cm` (bytes of each segment under each
/// prior), with the prior chosen per segment, per block and per file, and codec 6's (prior 0
/// alone, no header codes).
fn sizes(files: &[FileInfo], segs: &[Seg], cm: &[Vec<u32>], hdr: Hdr) -> Sizes {
    let k = cm[0].len() as u64;
    let mut fbytes = vec![[0u64; 4]; files.len()];
    // Per block: the sum of each prior's cost over its segments.
    let mut blocks: std::collections::BTreeMap<(usize, usize), Vec<u64>> = Default::default();
    let mut const_segs = 0;
    for (s, c) in segs.iter().zip(cm) {
        let (id, &best) = c.iter().enumerate().min_by_key(|&(_, &x)| x).unwrap();
        let coded = varint_len(hdr.codes + u64::from(best) * k + id as u64) + u64::from(best);
        let alt = hdr.alt(s);
        let seg_cost = match alt {
            Some(a) if a <= coded => {
                const_segs += 1;
                a
            }
            _ => coded,
        };
        fbytes[s.file][0] += seg_cost;
        // codec 6: prior 0 alone, plain varint.
        fbytes[s.file][3] += varint_len(u64::from(c[0])) + u64::from(c[0]);
        let b = blocks
            .entry((s.file, s.block))
            .or_insert_with(|| vec![0; k as usize]);
        for (j, &x) in c.iter().enumerate() {
            let coded = varint_len(hdr.codes + u64::from(x)) + u64::from(x);
            b[j] += alt.map_or(coded, |a| a.min(coded));
        }
    }
    // Per block: a byte for the id; per file: a byte and the same id for all its blocks.
    let mut per_file_k: Vec<Vec<u64>> = vec![vec![0; k as usize]; files.len()];
    for ((f, _), b) in &blocks {
        fbytes[*f][1] += 1 + b.iter().min().unwrap();
        for (j, &x) in b.iter().enumerate() {
            per_file_k[*f][j] += x;
        }
    }
    for (f, v) in per_file_k.iter().enumerate() {
        if !files[f].uniform {
            fbytes[f][2] = 1 + v.iter().min().unwrap();
        }
    }
    let mut t = [0u64; 4];
    for (f, fi) in files.iter().enumerate() {
        for j in 0..4 {
            t[j] += if fi.uniform {
                72
            } else {
                72 + 8 * fi.nblocks as u64 + fbytes[f][j]
            };
        }
    }
    Sizes {
        per_segment: t[0],
        per_block: t[1],
        per_file: t[2],
        codec6: t[3],
        const_segs,
    }
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
    let constseg = env("CONSTSEG", 0) != 0;
    let near = env("NEARSEG", 0);
    let hdr = Hdr {
        codes: if constseg || near > 0 {
            3 + 3 * near as u64
        } else {
            0
        },
        near,
    };
    let assign_by = std::env::var("ASSIGN").unwrap_or_else(|_| "seg".into());
    if let (Ok(b), Ok(e)) = (std::env::var("BOOK"), std::env::var("EMIT")) {
        emit(&load_book(&b), &e);
        return;
    }
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
    let loaded: Vec<(FileInfo, Vec<Seg>)> = paths
        .par_iter()
        .enumerate()
        .map(|(i, p)| load(p, i, segment))
        .collect();
    let mut files = Vec::new();
    let mut segs = Vec::new();
    for (f, s) in loaded {
        files.push(f);
        segs.extend(s);
    }
    let positions: u64 = files.iter().map(|f| f.positions).sum();
    let nconst = segs.iter().filter(|s| s.constant.is_some()).count();
    println!(
        "{} files, {} positions, {} coded segments ({} constant apart from don't cares); loaded in {:.0} s",
        files.len(),
        positions,
        segs.len(),
        nconst,
        t0.elapsed().as_secs_f64()
    );
    let report = |name: &str, cm: &[Vec<u32>]| {
        let z = sizes(&files, &segs, cm, hdr);
        let ppb = |b: u64| positions as f64 / b as f64;
        println!(
            "{name}: per segment {} B = {:.2}; per block {:.2}; per file {:.2}{}; {:.0} s",
            z.per_segment,
            ppb(z.per_segment),
            ppb(z.per_block),
            ppb(z.per_file),
            if hdr.codes > 0 {
                format!("; {} segments without the coder", z.const_segs)
            } else {
                String::new()
            },
            t0.elapsed().as_secs_f64()
        );
    };
    let mut book: Vec<Prior> = if let Ok(b) = std::env::var("BOOK") {
        load_book(&b)
    } else {
        vec![cm6::PRIOR]
    };
    if std::env::var("BOOK").is_err() && kk > 1 {
        // Seeds, k-means++ style on a subsample: each next seed a segment drawn with
        // probability proportional to its bytes under the nearest seed so far.
        let sub: Vec<usize> = (0..segs.len())
            .step_by((segs.len() / 3000).max(1))
            .collect();
        let mut best: Vec<u32> = sub
            .par_iter()
            .map(|&i| code(&segs[i], &book[0], w, None, None).len() as u32)
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
            let mut cn: Counts = vec![[[0; 2]; 2]; CONTEXTS];
            code(&segs[sub[pick]], &book[0], w, Some(&mut cn), None);
            let p: Prior = std::array::from_fn(|c| estimate(&cn[c], &cm6::PRIOR[c], 4.0));
            book.push(p);
            let nb: Vec<u32> = sub
                .par_iter()
                .map(|&i| code(&segs[i], &p, w, None, None).len() as u32)
                .collect();
            for (b, n) in best.iter_mut().zip(nb) {
                *b = (*b).min(n);
            }
        }
        for r in 0..rounds {
            let cm = cost_matrix(&segs, &book, w);
            report(&format!("K={kk} round {r}"), &cm);
            // Re-estimate each prior from its segments' bits under it.
            let assign: Vec<usize> = match assign_by.as_str() {
                "seg" => cm
                    .iter()
                    .map(|c| c.iter().enumerate().min_by_key(|&(_, &x)| x).unwrap().0)
                    .collect(),
                by => {
                    // One prior per block or per file: the one with the fewest bytes over
                    // the group's segments.
                    let key = |s: &Seg| {
                        if by == "file" {
                            (s.file, 0)
                        } else {
                            (s.file, s.block)
                        }
                    };
                    let mut sum: std::collections::HashMap<(usize, usize), Vec<u64>> =
                        Default::default();
                    for (s, c) in segs.iter().zip(&cm) {
                        let v = sum.entry(key(s)).or_insert_with(|| vec![0; c.len()]);
                        for (a, &x) in v.iter_mut().zip(c) {
                            *a += u64::from(x);
                        }
                    }
                    let best: std::collections::HashMap<(usize, usize), usize> = sum
                        .into_iter()
                        .map(|(g, v)| (g, v.iter().enumerate().min_by_key(|&(_, &x)| x).unwrap().0))
                        .collect();
                    segs.iter().map(|s| best[&key(s)]).collect()
                }
            };
            let counts = Mutex::new(vec![vec![[[0u64; 2]; 2]; CONTEXTS]; book.len()]);
            segs.par_iter().zip(&assign).for_each(|(s, &a)| {
                if hdr.codes > 0 && s.constant.is_some() {
                    return;
                }
                let mut cn: Counts = vec![[[0; 2]; 2]; CONTEXTS];
                code(s, &book[a], w, Some(&mut cn), None);
                let mut all = counts.lock().unwrap();
                for (x, y) in all[a].iter_mut().zip(&cn) {
                    for d in 0..2 {
                        x[d][0] += y[d][0];
                        x[d][1] += y[d][1];
                    }
                }
            });
            let counts = counts.into_inner().unwrap();
            let used: Vec<usize> =
                assign
                    .iter()
                    .zip(&segs)
                    .fold(vec![0; book.len()], |mut v, (&a, s)| {
                        if !(hdr.codes > 0 && s.constant.is_some()) {
                            v[a] += 1;
                        }
                        v
                    });
            println!("  segments per prior: {used:?}");
            for (j, p) in book.iter_mut().enumerate() {
                if used[j] > 0 {
                    let old = *p;
                    *p = std::array::from_fn(|c| estimate(&counts[j][c], &old[c], 0.0));
                }
            }
        }
    }
    if let Ok(out) = std::env::var("SAVE") {
        save(&book, &out);
    }
    if let Ok(out) = std::env::var("EMIT") {
        emit(&book, &out);
    }
    // The final codebook, with codec 6 (prior 0 alone) beside it: codec 6 is measured by
    // coding with cm6::PRIOR in the same run.
    let mut full = vec![cm6::PRIOR];
    full.extend(book.iter().copied());
    let cm: Vec<Vec<u32>> = cost_matrix(&segs, &full, w);
    // Column 0 is codec 6; the codebook alone is columns 1..: recombine for the report.
    let c6w4: Vec<u32> = if w == cm6::PRIOR_WEIGHT {
        cm.iter().map(|c| c[0]).collect()
    } else {
        segs.par_iter()
            .map(|s| code(s, &cm6::PRIOR, cm6::PRIOR_WEIGHT, None, None).len() as u32)
            .collect()
    };
    let book_cm: Vec<Vec<u32>> = cm
        .iter()
        .zip(&c6w4)
        .map(|(c, &c6)| {
            let mut v = vec![c6];
            v.extend_from_slice(&c[1..]);
            v
        })
        .collect();
    // Report with codec 6's bytes (column 0) but the choice among the codebook only.
    let z = sizes(&files, &segs, &book_cm, hdr);
    let only: Vec<Vec<u32>> = cm.iter().map(|c| c[1..].to_vec()).collect();
    let zb = sizes(&files, &segs, &only, hdr);
    let ppb = |b: u64| positions as f64 / b as f64;
    println!(
        "final K={} weight {w}: codec 6 (weight 4) {} B = {:.2} positions/byte; codebook per segment {} B = {:.2} ({:+.1}%), per block {:.2} ({:+.1}%), per file {:.2} ({:+.1}%){}; {:.0} s",
        book.len(),
        z.codec6,
        ppb(z.codec6),
        zb.per_segment,
        ppb(zb.per_segment),
        (z.codec6 as f64 / zb.per_segment as f64 - 1.0) * 100.0,
        ppb(zb.per_block),
        (z.codec6 as f64 / zb.per_block as f64 - 1.0) * 100.0,
        ppb(zb.per_file),
        (z.codec6 as f64 / zb.per_file as f64 - 1.0) * 100.0,
        if hdr.codes > 0 {
            format!("; {} segments without the coder", zb.const_segs)
        } else {
            String::new()
        },
        t0.elapsed().as_secs_f64()
    );
    // Segment sizes under codec 6: where the small segments are.
    let mut hist = [(0u64, 0u64); 6];
    for c in &c6w4 {
        let b = u64::from(*c);
        let j = match b {
            0 => 0,
            1..=2 => 1,
            3..=8 => 2,
            9..=32 => 3,
            33..=128 => 4,
            _ => 5,
        };
        hist[j].0 += 1;
        hist[j].1 += b + varint_len(b);
    }
    println!(
        "codec 6 segments by bytes (0, 1-2, 3-8, 9-32, 33-128, >128): count and bytes with varint {hist:?}"
    );
    // Constant segments (coded values, don't cares excepted, all one value): what codec 6
    // spends on them.
    let (mut cn, mut cb) = (0u64, 0u64);
    for (s, c) in segs.iter().zip(&c6w4) {
        if s.constant.is_some() {
            cn += 1;
            cb += u64::from(*c) + varint_len(u64::from(*c));
        }
    }
    println!(
        "constant segments: {cn} of {}, codec 6 spends {cb} B on them (lengths included) of {} B",
        segs.len(),
        z.codec6
    );
    // Near-constant segments: exceptions to the most common coded value (don't cares
    // excepted), and what codec 6 spends on them.
    let mut near = [(0u64, 0u64, 0u64); 4]; // 1, 2-3, 4-10, 11-30 exceptions: count, bytes, exceptions
    for (s, c) in segs.iter().zip(&c6w4) {
        let mut h = [0u64; 3];
        for &x in &s.pos {
            if x & CODED != 0 && x & DC == 0 {
                h[usize::from(x & 3)] += 1;
            }
        }
        let ex = h.iter().sum::<u64>() - h.iter().max().unwrap();
        let j = match ex {
            1 => 0,
            2..=3 => 1,
            4..=10 => 2,
            11..=30 => 3,
            _ => continue,
        };
        near[j].0 += 1;
        near[j].1 += u64::from(*c) + varint_len(u64::from(*c));
        near[j].2 += ex;
    }
    println!(
        "near-constant segments (1, 2-3, 4-10, 11-30 exceptions): (count, codec 6 bytes, exceptions) {near:?}"
    );
    if let Ok(b) = std::env::var("FILEPRIOR") {
        // A prior per file, stored in its header: each context's two probabilities trained on
        // the file's own bits (coded with codec 6's prior, smoothed toward it), the contexts
        // seen at least `MINN` times stored as a `b`-bit logit (uniform in -7..7), the others
        // left at codec 6's; header cost a 256-bit map plus `b` bits per stored probability.
        let bits: u32 = b.parse().unwrap();
        let minn = env("MINN", 16) as u64;
        let mut counts: Vec<Counts> = vec![vec![[[0; 2]; 2]; CONTEXTS]; files.len()];
        {
            let per: Vec<(usize, Counts)> = segs
                .par_iter()
                .map(|s| {
                    let mut c: Counts = vec![[[0; 2]; 2]; CONTEXTS];
                    code(s, &cm6::PRIOR, w, Some(&mut c), None);
                    (s.file, c)
                })
                .collect();
            for (f, c) in per {
                for (x, y) in counts[f].iter_mut().zip(&c) {
                    for d in 0..2 {
                        x[d][0] += y[d][0];
                        x[d][1] += y[d][1];
                    }
                }
            }
        }
        let levels = (1u32 << bits) - 1;
        let quant = |p: u16| -> u16 {
            let x = (f64::from(p) / 4096.0).clamp(1e-4, 1.0 - 1e-4);
            let l = (x / (1.0 - x)).ln().clamp(-7.0, 7.0);
            let j = ((l + 7.0) / 14.0 * f64::from(levels)).round();
            let l = j / f64::from(levels) * 14.0 - 7.0;
            let q = 1.0 / (1.0 + (-l).exp());
            ((q * 4096.0).round() as u32).clamp(PROB_MIN, PROB_ONE - PROB_MIN) as u16
        };
        let mut head = vec![0u64; files.len()];
        let fprior: Vec<Prior> = counts
            .iter()
            .enumerate()
            .map(|(f, c)| {
                let mut stored = 0u64;
                let p: Prior = std::array::from_fn(|x| {
                    let e = estimate(&c[x], &cm6::PRIOR[x], 2.0);
                    let mut out = cm6::PRIOR[x];
                    for d in 0..2 {
                        if c[x][d][0] + c[x][d][1] >= minn {
                            out[d] = quant(e[d]);
                            stored += 1;
                        }
                    }
                    out
                });
                head[f] = (2 * CONTEXTS as u64 + u64::from(bits) * stored).div_ceil(8);
                p
            })
            .collect();
        let fc: Vec<u32> = segs
            .par_iter()
            .map(|s| code(s, &fprior[s.file], w, None, None).len() as u32)
            .collect();
        let mut tot = [0u64; 2];
        let mut fb = vec![[0u64; 2]; files.len()];
        for ((s, c), &x) in segs.iter().zip(&only).zip(&fc) {
            let alt = hdr.alt(s).unwrap_or(u64::MAX);
            let coded = u64::from(x) + varint_len(hdr.codes + u64::from(x));
            fb[s.file][0] += coded.min(alt);
            let kk = c.len() as u64 + 1;
            let (id, best) = c
                .iter()
                .copied()
                .chain([x])
                .enumerate()
                .min_by_key(|&(_, y)| y)
                .unwrap();
            let coded = u64::from(best) + varint_len(hdr.codes + u64::from(best) * kk + id as u64);
            fb[s.file][1] += coded.min(alt);
        }
        let mut hb = 0;
        for (f, fi) in files.iter().enumerate() {
            for j in 0..2 {
                tot[j] += if fi.uniform {
                    72
                } else {
                    72 + 8 * fi.nblocks as u64 + fb[f][j] + head[f]
                };
            }
            if !fi.uniform {
                hb += head[f];
            }
        }
        println!(
            "file priors ({bits} bits, contexts seen {minn}+ times; header {hb} B in all): alone {:.2} ({:+.1}% on codec 6); with the codebook, chosen per segment {:.2} ({:+.1}%)",
            positions as f64 / tot[0] as f64,
            (z.codec6 as f64 / tot[0] as f64 - 1.0) * 100.0,
            positions as f64 / tot[1] as f64,
            (z.codec6 as f64 / tot[1] as f64 - 1.0) * 100.0,
        );
    }
    if std::env::var("DECODE").is_ok() && precision().0 == 12 {
        // Decode every segment with the library's codec-6 decoder under its chosen prior,
        // check the values, and time it (one thread of the pool per file).
        let by_file = Mutex::new((0f64, 0u64, 0u64, 0f64));
        let idx: Vec<usize> = (0..segs.len()).collect();
        idx.par_chunks(64).for_each(|ch| {
            let (mut secs, mut nseg, mut npos, mut secs6) = (0f64, 0u64, 0u64, 0f64);
            for &i in ch {
                let s = &segs[i];
                let c = &only[i];
                let (id, _) = c.iter().enumerate().min_by_key(|&(_, &x)| x).unwrap();
                let mut coded = Vec::new();
                let bytes = code(s, &book[id], w, None, Some(&mut coded));
                let tf = TableFile::open(&files[s.file].path).unwrap();
                let ix = SliceIndex::new(tf.meta().slice);
                let start = (s.block * 65_520) as u64;
                let n = (tf.meta().positions - start).min(65_520) as usize;
                let params = cm6::Params { segment, weight: w };
                let b6 = code(s, &cm6::PRIOR, cm6::PRIOR_WEIGHT, None, None);
                let t6 = Instant::now();
                std::hint::black_box(cm6::decode_segment(&ix, start, n, s.index, &b6).unwrap());
                secs6 += t6.elapsed().as_secs_f64();
                let t1 = Instant::now();
                let out =
                    cm6::decode_segment_with(&ix, start, n, s.index, &bytes, &book[id], params)
                        .unwrap();
                secs += t1.elapsed().as_secs_f64();
                nseg += 1;
                npos += out.len() as u64;
                for (k, &v) in coded.iter().enumerate() {
                    if v != 255 {
                        assert_eq!(
                            out[k],
                            v,
                            "{} block {} segment {}",
                            files[s.file].path.display(),
                            s.block,
                            s.index
                        );
                    }
                }
            }
            let mut t = by_file.lock().unwrap();
            t.0 += secs;
            t.1 += nseg;
            t.2 += npos;
            t.3 += secs6;
        });
        let t = by_file.into_inner().unwrap();
        println!(
            "decoded and checked {} segments with cm6::decode_segment_with: mean {:.1} us a segment, {:.1} ns a position (codec 6 itself, cm6::decode_segment, alternately: {:.1} us, {:.1} ns)",
            t.1,
            t.0 * 1e6 / t.1.max(1) as f64,
            t.0 * 1e9 / t.2.max(1) as f64,
            t.3 * 1e6 / t.1.max(1) as f64,
            t.3 * 1e9 / t.2.max(1) as f64
        );
    }
}
