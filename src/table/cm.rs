//! Codec 5 ([`CODEC_CM_THREATS`]): the don't-care set of codec 4, coded by an adaptive
//! context model and a binary range coder instead of 2-bit packing and zstd
//! (docs/format.md, "Codec 5").
//!
//! A block's positions are walked in index order ([`SliceIndex::visit`]). Every position that
//! [`crate::rules::search::is_dont_care`] names (the side to move has a capture or no move, or a
//! threat position resolvable within two plies) is skipped: nothing is coded for it, and the
//! decoder, which walks the same positions, knows it. Each other position's value is coded as
//! two binary decisions (draw or not; then win or loss), each with an adaptive probability
//! chosen by a context of
//! - the previous coded value of the block,
//! - the coded values one black-king step and one men step back in the index
//!   ([`SliceIndex::king_count`] and the white kings' count; "none" when skipped or outside
//!   the block),
//! - whether the side not to move has a capture (a threat position) and, if so, how many of
//!   the side to move's moves leave it without one (0, 1, 2 or more).
//!
//! The model starts afresh at every block (blocks decode independently). A context's
//! probability moves toward each bit it sees by `1 / (n + 1.4)` for its `n`-th bit, `n`
//! capped at 20 (integer arithmetic only: every machine codes alike). The range
//! coder is the binary coder of LZMA (12-bit probabilities, 32-bit range, carry propagated
//! through a cached byte; written here from its description). The decoder reads past the end
//! of its bytes as zeros and never panics; it must end exactly at the last byte, which
//! catches some damage the block checksum would miss.
//!
//! Decoded blocks hold the codec-2 memory form (base 3, five values per byte), with each
//! skipped position holding the previous coded value (the probe never reads it as a value).

use crate::board::Position;
use crate::index::SliceIndex;
use crate::rules::{English, Rules};

/// Codec id 5: codec 4's don't cares, context-model coded (`encode_block`,
/// `decode_block`). English rules only (the decoder generates moves).
pub const CODEC_CM_THREATS: u32 = 5;

/// Bits of a probability.
pub const PROB_BITS: u32 = 12;
/// A probability of 1 ([`Prob::p`] is out of this).
pub const PROB_ONE: u32 = 1 << PROB_BITS;
/// Probabilities stay within `[PROB_MIN, PROB_ONE - PROB_MIN]` (every bit keeps a nonzero
/// share of the range).
pub const PROB_MIN: u32 = 31;
/// A context's `n`-th bit moves its probability `1 / (n + 1.4)` of the way to the bit seen
/// (the estimate `(count + 0.2) / (n + 0.4)` of a count model), `n` at most `RATE_CAP`
/// (later bits count as much as the `RATE_CAP`-th: the model follows changes in a block).
/// Measured on all 5-piece files: caps 12, 20, 30, 60, 120 give 198.8, 198.5, 197.9, 192.8,
/// 186.6 positions per byte.
pub const RATE_CAP: u32 = 20;
/// The range is renormalised (a byte shifted out) when it falls below this.
pub const TOP: u32 = 1 << 24;
/// "No value" in a context slot.
const NONE: usize = 3;
/// Contexts: previous value, two index neighbours (4 states each), feature (4).
const CONTEXTS: usize = 4 * 4 * 4 * 4;

/// An adaptive probability that the next bit of its context is 0 (out of [`PROB_ONE`]), and
/// how many bits it has seen (up to the rate cap).
#[derive(Clone, Copy)]
pub struct Prob {
    /// The probability of a 0 bit, out of [`PROB_ONE`].
    pub p: u16,
    /// Bits seen (at most [`RATE_CAP`]).
    pub n: u16,
}

/// `RATES[n] = 2^16 / (n + 1.4)` rounded down, the step of the `n`-th update (integers, so
/// every machine codes alike).
const RATES: [u32; RATE_CAP as usize + 1] = {
    let mut r = [0u32; RATE_CAP as usize + 1];
    let mut n = 0;
    while n <= RATE_CAP as usize {
        r[n] = (65536 * 10) / (n as u32 * 10 + 14);
        n += 1;
    }
    r
};

impl Prob {
    const START: Prob = Prob {
        p: (PROB_ONE / 2) as u16,
        n: 0,
    };
    /// Move the probability toward `bit` (by `1 / (n + 1.4)`, `n` capped at [`RATE_CAP`]).
    #[inline]
    pub fn update(&mut self, bit: bool) {
        // `p + ((target - p) * r >> 16)` (target 0 for a 1 bit, `PROB_ONE` for a 0 bit), an
        // arithmetic shift (rounds toward minus infinity on both sides, deterministic),
        // clamped to `[PROB_MIN, PROB_ONE - PROB_MIN]`. The product fits an `i32`
        // (`|target - p| <= 4096`, `r < 2^16`); a 1 bit moves `p` down, so only the lower
        // bound can bind, a 0 bit up, only the upper one.
        let r = RATES[self.n as usize] as i32;
        let p = i32::from(self.p);
        self.p = if bit {
            (p + ((-p * r) >> 16)).max(PROB_MIN as i32) as u16
        } else {
            (p + (((PROB_ONE as i32 - p) * r) >> 16)).min((PROB_ONE - PROB_MIN) as i32) as u16
        };
        if u32::from(self.n) < RATE_CAP {
            self.n += 1;
        }
    }
}

/// The binary range coder (LZMA's carry-less scheme) of codecs 5 and 6.
pub struct Encoder {
    low: u64,
    range: u32,
    cache: u8,
    cache_size: u64,
    out: Vec<u8>,
}

impl Default for Encoder {
    fn default() -> Encoder {
        Encoder::new()
    }
}

impl Encoder {
    /// An encoder with nothing coded yet.
    pub fn new() -> Encoder {
        Encoder {
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
    /// Code `bit` with the probability `prob`, then update it.
    #[inline]
    pub fn bit(&mut self, prob: &mut Prob, bit: bool) {
        let bound = (self.range >> PROB_BITS) * u32::from(prob.p);
        if !bit {
            self.range = bound;
        } else {
            self.low += u64::from(bound);
            self.range -= bound;
        }
        prob.update(bit);
        while self.range < TOP {
            self.range <<= 8;
            self.shift_low();
        }
    }
    /// Code one value in the memory form (0 loss, 1 draw, 2 win; base 3) with a context's two
    /// probabilities: "not a draw", then "a win" (codecs 5 and 6).
    #[inline]
    pub fn value(&mut self, pr: &mut [Prob; 2], v: usize) {
        self.bit(&mut pr[0], v != 1);
        if v != 1 {
            self.bit(&mut pr[1], v == 2);
        }
    }
    /// The coded bytes (codec 5: all of them).
    pub fn finish(mut self) -> Vec<u8> {
        for _ in 0..5 {
            self.shift_low();
        }
        self.out
    }
    /// The coded bytes without those that need not be stored (codec 6): the first byte,
    /// always 0, and the trailing zeros (read back by [`Decoder::new_short`], which reads
    /// zeros past the end).
    pub fn finish_short(mut self) -> Vec<u8> {
        // Any value in [low, low + range) identifies the bits; range >= 2^24, so one with its
        // low 24 bits zero is in it, and those zeros need not be stored.
        self.low = (self.low + 0x00FF_FFFF) & !0x00FF_FFFF;
        for _ in 0..5 {
            self.shift_low();
        }
        let mut out = self.out;
        // The first byte of this coder is always 0 (the code value is below 1).
        debug_assert_eq!(out.first(), Some(&0));
        out.remove(0);
        while out.last() == Some(&0) {
            out.pop();
        }
        out
    }
}

/// The decoder of [`Encoder`]; past the end of its data it reads zeros.
pub struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
    range: u32,
    code: u32,
}

impl<'a> Decoder<'a> {
    /// A decoder of [`Encoder::finish`]'s bytes.
    pub fn new(data: &'a [u8]) -> Decoder<'a> {
        Decoder::starting(data, 5)
    }
    /// A decoder of [`Encoder::finish_short`]'s bytes (the first byte, 0, not stored).
    pub fn new_short(data: &'a [u8]) -> Decoder<'a> {
        Decoder::starting(data, 4)
    }
    /// Decode one value coded by [`Encoder::value`] with the same probabilities.
    #[inline]
    pub fn value(&mut self, pr: &mut [Prob; 2]) -> usize {
        if !self.bit(&mut pr[0]) {
            1
        } else if self.bit(&mut pr[1]) {
            2
        } else {
            0
        }
    }
    fn starting(data: &'a [u8], first: usize) -> Decoder<'a> {
        let mut d = Decoder {
            data,
            pos: 0,
            range: u32::MAX,
            code: 0,
        };
        for _ in 0..first {
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
    /// Decode one bit coded by [`Encoder::bit`] with the same probability, then update it.
    #[inline]
    pub fn bit(&mut self, prob: &mut Prob) -> bool {
        let bound = (self.range >> PROB_BITS) * u32::from(prob.p);
        let bit = if self.code < bound {
            self.range = bound;
            false
        } else {
            self.code = self.code.wrapping_sub(bound);
            self.range -= bound;
            true
        };
        prob.update(bit);
        while self.range < TOP {
            self.range <<= 8;
            self.code = (self.code << 8) | u32::from(self.byte());
        }
        bit
    }
}

/// What the coder knows of a position: `None` if it is skipped (don't care), else its
/// feature 0 (no threat) or 1 + escapes (a threat position; escapes 0, 1, 2+ = the side to
/// move's moves after which the other side has no capture).
///
/// The same set as [`crate::rules::search::is_dont_care`] (a unit test checks it on whole slices),
/// with each capture test made once.
#[inline]
fn feature(p: &Position) -> Option<usize> {
    if English.has_capture(p) || !English.has_quiet_move(p) {
        return None;
    }
    let flipped = Position {
        side: p.side.opponent(),
        ..*p
    };
    if !English.has_capture(&flipped) {
        return Some(0);
    }
    // A threat position: don't care if it resolves within the probe's search depth.
    if crate::rules::search::threat_resolvable(English, p, crate::rules::search::THREAT_DEPTH) {
        return None;
    }
    let mut escapes = 0;
    English.for_each_successor(p, |c| {
        if escapes < 2 && !English.has_capture(&c) {
            escapes += 1;
        }
    });
    Some(1 + escapes)
}

/// Index strides of the two neighbour contexts: one black-king step (the white kings'
/// placements; the men's step without kings of both colours) and one men step.
pub fn strides(ix: &SliceIndex) -> (usize, usize) {
    let m = ix.slice().material;
    let free = 32u32.saturating_sub(u32::from(m.bm) + u32::from(m.wm));
    let (bk, wk) = (u32::from(m.bk), u32::from(m.wk));
    let wk_count = crate::index::binom(free.saturating_sub(bk), wk);
    let king_count = ix.king_count();
    let s1 = if wk > 0 && bk > 0 {
        wk_count
    } else {
        king_count
    };
    let s2 = if king_count != s1 { king_count } else { 0 };
    let clamp = |s: u64| usize::try_from(s).unwrap_or(0);
    (clamp(s1), clamp(s2))
}

/// The model's state over one block.
struct Model {
    probs: Vec<[Prob; 2]>,
    coded: Vec<u8>,
    last: usize,
    s1: usize,
    s2: usize,
}

impl Model {
    fn new(n: usize, (s1, s2): (usize, usize)) -> Model {
        Model {
            probs: vec![[Prob::START; 2]; CONTEXTS],
            coded: vec![NONE as u8; n],
            last: NONE,
            s1,
            s2,
        }
    }
    #[inline]
    fn context(&self, k: usize, feature: usize) -> usize {
        let at = |s: usize| {
            if s > 0 && k >= s {
                self.coded[k - s] as usize
            } else {
                NONE
            }
        };
        ((self.last * 4 + at(self.s1)) * 4 + at(self.s2)) * 4 + feature
    }
    #[inline]
    fn seen(&mut self, k: usize, v: usize) {
        self.coded[k] = v as u8;
        self.last = v;
    }
}

/// The result of coding one block.
#[derive(Debug, PartialEq, Eq)]
pub enum Coded {
    /// Every position not skipped holds this value (0 loss, 1 draw, 2 win), or none is left
    /// (then 1): no bytes.
    Const(u8),
    /// The coded bytes.
    Bytes(Vec<u8>),
}

/// Code the values `values` (0 loss, 1 draw, 2 win, [`super::DONT_CARE`] allowed only at
/// skipped positions) of positions `start..start + values.len()` of the slice of `ix`.
///
/// # Errors
/// The index of a position that is not skipped but holds [`super::DONT_CARE`] or a value
/// above 2.
pub fn encode_block(ix: &SliceIndex, start: u64, values: &[u8]) -> Result<Coded, u64> {
    let n = values.len();
    let mut feats: Vec<Option<usize>> = Vec::with_capacity(n);
    ix.visit(start, start + n as u64, |_, p| feats.push(feature(&p)));
    debug_assert_eq!(feats.len(), n);
    let mut first = None;
    let mut constant = true;
    for (k, f) in feats.iter().enumerate() {
        if f.is_some() {
            let v = values[k];
            if v > 2 {
                return Err(start + k as u64);
            }
            match first {
                None => first = Some(v),
                Some(x) if x != v => constant = false,
                _ => {}
            }
        }
    }
    if constant {
        return Ok(Coded::Const(first.unwrap_or(1)));
    }
    let mut m = Model::new(n, strides(ix));
    let mut e = Encoder::new();
    for (k, f) in feats.iter().enumerate() {
        let Some(f) = *f else { continue };
        let v = values[k] as usize;
        let c = m.context(k, f);
        let pr = &mut m.probs[c];
        e.value(pr, v);
        m.seen(k, v);
    }
    Ok(Coded::Bytes(e.finish()))
}

/// Decode `n` values of positions `start..start + n` of the slice of `ix` from `data` (as
/// [`encode_block`] coded them): one value 0..=2 per position, skipped positions holding the
/// previous coded value (1 before the first).
///
/// # Errors
/// `Err(())` if decoding did not end exactly at the end of `data` (damaged bytes).
#[allow(clippy::result_unit_err)]
pub fn decode_block(ix: &SliceIndex, start: u64, n: usize, data: &[u8]) -> Result<Vec<u8>, ()> {
    let mut m = Model::new(n, strides(ix));
    let mut d = Decoder::new(data);
    let mut out = vec![1u8; n];
    let mut fill = 1u8;
    let mut k = 0usize;
    ix.visit(start, start + n as u64, |_, p| {
        if let Some(f) = feature(&p) {
            let c = m.context(k, f);
            let pr = &mut m.probs[c];
            let v = d.value(pr);
            m.seen(k, v);
            fill = v as u8;
        }
        out[k] = fill;
        k += 1;
    });
    if k != n || d.pos != data.len() {
        return Err(());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slice::Slice;

    /// `Prob::update` against the update rule as docs/format.md states it (codec 5: the
    /// probability moves toward the bit by `(target - p) * r >> 16`, `r = 65536 / (n + 1.4)`
    /// truncated, in 64-bit arithmetic, then clamped), at every reachable state.
    #[test]
    fn update_follows_the_documented_rule_at_every_state() {
        for n in 0..=RATE_CAP as u16 {
            for p in PROB_MIN as u16..=(PROB_ONE - PROB_MIN) as u16 {
                for bit in [false, true] {
                    let r = (65_536i64 * 10) / (i64::from(n) * 10 + 14);
                    let target = if bit { 0 } else { 4096i64 };
                    let q = (i64::from(p) + (((target - i64::from(p)) * r) >> 16)).clamp(31, 4065);
                    let mut x = Prob { p, n };
                    x.update(bit);
                    assert_eq!(
                        (x.p, x.n),
                        (q as u16, (n + 1).min(20)),
                        "p {p} n {n} bit {bit}"
                    );
                }
            }
        }
    }

    #[test]
    fn skipped_positions_are_the_probes_dont_cares() {
        for name in ["2101-4n", "0202-nn", "1111-32", "0301-nn"] {
            let ix = SliceIndex::new(name.parse::<Slice>().unwrap());
            let mut n = [0u64; 2];
            ix.visit(0, ix.size(), |_, p| {
                let skip = feature(&p).is_none();
                assert_eq!(
                    skip,
                    crate::rules::search::is_dont_care(English, &p),
                    "{}",
                    p.to_fen()
                );
                n[usize::from(skip)] += 1;
            });
            assert!(n[0] > 0 && n[1] > 0, "{name}: {n:?}");
        }
    }

    #[test]
    fn the_range_coder_gives_back_every_bit() {
        // Skewed and balanced bit streams under shared adaptive probabilities.
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut bits = Vec::new();
        for i in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let skew = (i / 20_000) % 3;
            bits.push(match skew {
                0 => x.is_multiple_of(2),
                1 => x.is_multiple_of(50),
                _ => !x.is_multiple_of(50),
            });
        }
        let mut e = Encoder::new();
        let mut pe = [Prob::START; 4];
        for (i, &b) in bits.iter().enumerate() {
            e.bit(&mut pe[i % 4], b);
        }
        let out = e.finish();
        assert!(out.len() < bits.len() / 8, "compressed {}", out.len());
        let mut d = Decoder::new(&out);
        let mut pd = [Prob::START; 4];
        for (i, &b) in bits.iter().enumerate() {
            assert_eq!(d.bit(&mut pd[i % 4]), b, "bit {i}");
        }
        assert_eq!(d.pos, out.len(), "the decoder ends at the last byte");
    }

    #[test]
    fn a_block_decodes_to_its_values_at_every_position_not_skipped() {
        // Values with a pattern (so they compress) and some noise, on a real slice.
        let s: Slice = "2101-4n".parse().unwrap();
        let ix = SliceIndex::new(s);
        let n = ix.size().min(20_000) as usize;
        let mut x = 99u64;
        let values: Vec<u8> = (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if x.is_multiple_of(10) {
                    (x % 3) as u8
                } else {
                    ((i / 37) % 3) as u8
                }
            })
            .collect();
        let Coded::Bytes(data) = encode_block(&ix, 0, &values).unwrap() else {
            panic!("not constant")
        };
        let got = decode_block(&ix, 0, n, &data).unwrap();
        let mut skipped = 0;
        let mut k = 0;
        ix.visit(0, n as u64, |_, p| {
            if crate::rules::search::is_dont_care(English, &p) {
                skipped += 1;
            } else {
                assert_eq!(got[k], values[k], "index {k}");
            }
            k += 1;
        });
        assert!(skipped > 0 && skipped < n);
        // Damaged bytes: never a panic; a wrong length is an error.
        assert!(decode_block(&ix, 0, n, &data[..data.len() - 1]).is_err());
        let mut longer = data.clone();
        longer.push(0);
        assert!(decode_block(&ix, 0, n, &longer).is_err());
        for i in 0..data.len().min(64) {
            let mut bad = data.clone();
            bad[i] ^= 0x5A;
            let _ = decode_block(&ix, 0, n, &bad);
        }
        // A value above 2 at a coded position is refused.
        let mut wrong = values.clone();
        let at = (0..n)
            .find(|&i| !crate::rules::search::is_dont_care(English, &ix.unrank(i as u64).unwrap()))
            .unwrap();
        wrong[at] = 3;
        assert_eq!(encode_block(&ix, 0, &wrong), Err(at as u64));
    }
}
