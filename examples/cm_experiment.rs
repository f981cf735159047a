//! Context-model experiment (issue 11, "smaller"): how many bytes would an adaptive
//! arithmetic coder need for built WLD tables, against the files as stored (2-bit packing,
//! zstd)? Prints ideal code lengths (sum of -log2 p, plus 4 bytes of coder flush per coded
//! block, 8 bytes of offset table per block and 72 bytes per file), not a real coder's output.
//!
//! Usage: `SAMPLE=k cargo run --release --example cm_experiment -- DIR MIN_PIECES MAX_PIECES`
//!
//! Models, all reset at every block of 65,520 positions (random access):
//! - `B`: the decoder knows nothing of the positions. Positions where the side to move has a
//!   capture are don't care: the encoder codes the most probable value there. Context: the
//!   previous value, the values one black-king step and one men step back (index strides).
//! - `F`: the decoder walks the block's positions (`SliceIndex::visit`) and computes two
//!   features: capture positions are skipped (no code at all), and whether the side not to
//!   move has a capture (a threat) is part of the context.
//! - `F-t`: `F` with every threat position skipped too (the decoder knows them; their values
//!   would come from a search, as codec 4 does for part of them): a bound on what a context
//!   model adds on top of codec 4's don't cares.
//! - `Fesc`: `F` (captures skipped, every threat position coded) with the number of escapes of
//!   a threat position (the side to move's moves after which the other side has no capture:
//!   0, 1, 2+) in the context.
//! - `F4`: `Fesc` with codec 4's don't cares skipped as well (threat positions none of whose
//!   quiet successors is a threat position; the decoder tests that per position).
//!
//! Adaptive counts per context (estimator (n + a) / (N + 3a), a = 0.2, counts halved above
//! 120; env `ALPHA`, `LIMIT`); other contexts tried and not better at 5 and 6 pieces: the
//! quiet-move counts of both sides (0, 1, 2, 3+), whether the capture of a threat takes two
//! pieces, guessed values at capture positions for later contexts, a second model on other
//! neighbours mixed by recent code length, counts carried over from the previous block.
use checkers_egdb::format::{SliceIndex, TableFile};
use checkers_egdb::rules::{English, Rules};
use checkers_egdb::Position;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::Mutex;

const BLOCK: usize = 65_520;
const UNK: usize = 3;

fn binom(n: u32, k: u32) -> u64 {
    if k > n {
        return 0;
    }
    let mut r = 1u64;
    for i in 0..k as u64 {
        r = r * (n as u64 - i) / (i + 1);
    }
    r
}

/// Adaptive ternary model: counts per context.
struct Model {
    n: Vec<[f32; 3]>,
    a: f64,
    limit: f32,
}

impl Model {
    fn new(contexts: usize) -> Model {
        let env = |k: &str, d: f64| std::env::var(k).map_or(d, |s| s.parse().unwrap());
        Model {
            n: vec![[0.0; 3]; contexts],
            a: env("ALPHA", 0.2),
            limit: env("LIMIT", 120.0) as f32,
        }
    }
    fn p(&self, c: usize, s: usize) -> f64 {
        let n = &self.n[c];
        let a = self.a;
        (n[s] as f64 + a) / ((n[0] + n[1] + n[2]) as f64 + 3.0 * a)
    }
    fn best(&self, c: usize) -> usize {
        let n = &self.n[c];
        (0..3).max_by(|&a, &b| n[a].total_cmp(&n[b])).unwrap()
    }
    fn update(&mut self, c: usize, s: usize) {
        let n = &mut self.n[c];
        n[s] += 1.0;
        if n[0] + n[1] + n[2] > self.limit {
            for x in n.iter_mut() {
                *x *= 0.5;
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let min: u32 = args[2].parse().unwrap();
    let max: u32 = args[3].parse().unwrap();
    let mut paths = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "egdb") {
            let t = TableFile::open(&p).unwrap();
            let k = t.meta().slice.material.pieces();
            if (min..=max).contains(&k) {
                paths.push((t.meta().positions, p));
            }
        }
    }
    paths.sort_by(|a, b| a.1.cmp(&b.1));
    let k: usize = std::env::var("SAMPLE").map_or(1, |s| s.parse().unwrap());
    let mut paths: Vec<_> = paths.into_iter().step_by(k).collect();
    paths.sort_by(|a, b| b.cmp(a));
    const MODELS: usize = 5;
    // pieces -> (files, positions, stored bytes, bytes per model)
    type Row = (u64, u64, u64, [f64; MODELS]);
    let acc: Mutex<BTreeMap<u32, Row>> = Mutex::new(BTreeMap::new());
    paths.par_iter().for_each(|(_, path)| {
        let t = TableFile::open(path).unwrap();
        let m = t.meta().clone();
        let ix = SliceIndex::new(m.slice);
        let vals = t.decode_all().unwrap();
        let n = m.positions as usize;
        // Features: bit 0 capture (side to move), bit 1 threat (the side not to move has a
        // capture).
        let mut feat = vec![0u8; n];
        ix.visit(0, m.positions, |i, p| {
            let cap = English.has_capture(&p);
            let flip = Position {
                side: p.side.opponent(),
                ..p
            };
            let thr = !cap && English.has_capture(&flip);
            // Threat positions: the side to move's moves after which the other side has no
            // capture (escapes), 0, 1 or 2+, in bits 2-3.
            let mut esc = 0u8;
            if thr {
                English.for_each_successor(&p, |c| {
                    if !English.has_capture(&c) {
                        esc = (esc + 1).min(2);
                    }
                });
            }
            // Threat positions resolvable in one ply (codec 4's don't cares: no quiet
            // successor is a threat position itself), bit 4.
            let mut one_ply = false;
            if thr && English.has_quiet_move(&p) {
                one_ply = true;
                English.for_each_successor(&p, |c| {
                    if one_ply && !English.has_capture(&c) {
                        let cf = Position {
                            side: c.side.opponent(),
                            ..c
                        };
                        if English.has_capture(&cf) {
                            one_ply = false;
                        }
                    }
                });
            }
            feat[i as usize] =
                u8::from(cap) | u8::from(thr) << 1 | esc << 2 | u8::from(one_ply) << 4;
        });
        let mt = m.slice.material;
        let (bm, bk, wm, wk) = (mt.bm as u32, mt.bk as u32, mt.wm as u32, mt.wk as u32);
        let free = 32 - bm - wm;
        let wk_count = binom(free - bk, wk) as usize;
        let king_count = binom(free, bk) as usize * wk_count;
        let s1 = if wk > 0 && bk > 0 {
            wk_count
        } else {
            king_count
        };
        let s2 = king_count;
        let mut bytes = [72.0f64; MODELS];
        for (b, chunk) in vals.chunks(BLOCK).enumerate() {
            let base = b * BLOCK;
            let f = &feat[base..base + chunk.len()];
            // Constant block (every value not a capture position the same): no bytes.
            let mut known = chunk
                .iter()
                .zip(f)
                .filter(|(_, &ft)| ft & 1 == 0)
                .map(|(&v, _)| v);
            let first = known.next();
            let constant = known.all(|v| Some(v) == first);
            for (mi, out) in bytes.iter_mut().enumerate() {
                *out += 8.0;
                if constant {
                    continue;
                }
                let mut model = Model::new(4 * 4 * 4 * 8);
                let mut coded = vec![UNK as u8; chunk.len()];
                let mut bits = 0.0f64;
                let mut last = UNK;
                for i in 0..chunk.len() {
                    let cap = f[i] & 1 != 0;
                    let thr = ((f[i] >> 1) & 1) as usize;
                    if (cap && mi >= 1) || (thr == 1 && mi == 2) || (f[i] & 16 != 0 && mi == 4) {
                        continue; // the decoder knows: nothing coded
                    }
                    let at = |s: usize| {
                        if s > 0 && i >= s {
                            coded[i - s] as usize
                        } else {
                            UNK
                        }
                    };
                    let extra = match mi {
                        1 => thr,
                        3 | 4 if thr == 1 => 1 + ((f[i] >> 2) & 3) as usize,
                        _ => 0,
                    };
                    let c =
                        ((last * 4 + at(s1)) * 4 + at(if s2 != s1 { s2 } else { 0 })) * 8 + extra;
                    let s = if cap {
                        model.best(c)
                    } else {
                        chunk[i] as usize
                    };
                    bits -= model.p(c, s).log2();
                    model.update(c, s);
                    coded[i] = s as u8;
                    last = s;
                }
                *out += bits / 8.0 + 4.0;
            }
        }
        let mut a = acc.lock().unwrap();
        let e = a.entry(mt.pieces()).or_insert((0, 0, 0, [0.0; MODELS]));
        e.0 += 1;
        e.1 += m.positions;
        e.2 += t.file_bytes();
        for (x, y) in e.3.iter_mut().zip(bytes) {
            *x += y;
        }
    });
    for (k, (f, n, stored, mb)) in acc.into_inner().unwrap() {
        println!(
            "{k} pieces: {f} files, {n} positions; stored {stored} bytes, {:.1} pos/byte",
            n as f64 / stored as f64
        );
        for (name, b) in ["B", "F", "F-t", "Fesc", "F4"].iter().zip(mb) {
            println!("  {name:<3} {:.0} bytes, {:.1} pos/byte", b, n as f64 / b);
        }
    }
}
