//! Codec 6 ([`CODEC_CM_FILLED`]): codec 4's don't-care set, context-model coded like codec 5
//! (`table::cm`, `CODEC_CM_THREATS`), but decodable without move generation and in segments
//! (docs/format.md, "Codec 6").
//!
//! A block of `n` positions is cut into *segments* of [`SEGMENT`] positions (4,120: one page of
//! the probe's block cache, 824 base-3 bytes), the last one shorter. Each segment is coded on
//! its own (a fresh range coder, the model reset to a fixed prior), so a probe decodes the one
//! segment that holds its position, not the whole block.
//!
//! In a segment the positions are walked in index order ([`SliceIndex::visit`]) and each is
//! given a *class* from bitboard tests alone (no move list, no successor):
//! - **skipped** (nothing coded): the side to move has a capture, or no quiet move either;
//! - **coded**, with feature 1 if the side not to move has a capture (a threat position),
//!   else 0.
//!
//! The decoder computes the same classes. The encoder alone knows which threat positions are
//! don't care ([`crate::rules::search::is_dont_care`]: resolvable by a search of at most two
//! plies); there it codes the value the model finds most likely at that point (the cheapest),
//! so the decoder just decodes a value at every coded position.
//!
//! Each value is two binary decisions (draw or not; then win or loss), each with an adaptive
//! probability chosen by a context of 128: the previous coded value of the segment, the coded
//! values one black-king step and one men step back in the index (the same strides as codec
//! 5; "none" when skipped or outside the segment) and the feature. A probability starts from
//! [`PRIOR`] (trained once on the 6-piece tables, `examples/cm6_experiment.rs`, and fixed
//! here) as if it had seen [`PRIOR_WEIGHT`] bits, then adapts as in codec 5.
//!
//! Stored block: the byte lengths of the segments, each as a LEB128 varint, then the
//! segments' bytes in order. A segment's bytes are the LZMA-style range coder's output with
//! its always-zero first byte dropped and its trailing zero bytes stripped (the decoder reads
//! zeros past the end; the flush picks a final value whose low 24 bits are zero, so the
//! flush costs one or two bytes). The lengths must add up exactly to the block's bytes.

use crate::index::SliceIndex;
use crate::rules::English;

use super::cm::{strides, Decoder, Encoder, Prob, PROB_ONE};
use super::walk;

/// Codec id 6: codec 4's don't cares, context-model coded in segments that decode without
/// move generation (`encode_block`, `decode_segment`). English rules only.
pub const CODEC_CM_FILLED: u32 = 6;

/// Positions per segment (restart point of the coder and the model): one probe cache page,
/// 824 base-3 bytes.
pub const SEGMENT: usize = 4_120;

/// "No value" in a context slot.
const NONE: usize = 3;
/// Feature values (threat flag).
const FEATURES: usize = 2;
/// Contexts: previous value, two index neighbours (4 states each), feature.
pub const CONTEXTS: usize = 4 * 4 * 4 * FEATURES;
/// Bits a prior probability counts for (its context's adaptation starts at this count).
pub const PRIOR_WEIGHT: u16 = 4;

/// The starting probability (of a 0 bit, out of 4,096) of each context's two decisions.
pub const PRIOR: [[u16; 2]; CONTEXTS] = include!("cm6_prior.in");

/// The codec's parameters, variable for the experiments (`examples/cm6_experiment.rs`);
/// files are always written and read with [`Params::CODEC`].
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Positions per segment.
    pub segment: usize,
    /// Weight of the prior, in bits.
    pub weight: u16,
}

impl Params {
    /// The parameters of codec 6.
    pub const CODEC: Params = Params {
        segment: SEGMENT,
        weight: PRIOR_WEIGHT,
    };
}

/// The model's state over one segment.
struct Model {
    probs: [[Prob; 2]; CONTEXTS],
    coded: Vec<u8>,
    last: usize,
    s1: usize,
    s2: usize,
}

impl Model {
    fn new(n: usize, (s1, s2): (usize, usize), prior: &[[u16; 2]; CONTEXTS], weight: u16) -> Model {
        let mut probs = [[Prob { p: 2048, n: 0 }; 2]; CONTEXTS];
        for (p, q) in probs.iter_mut().zip(prior.iter()) {
            for d in 0..2 {
                p[d] = Prob { p: q[d], n: weight };
            }
        }
        Model {
            probs,
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
        ((self.last * 4 + at(self.s1)) * 4 + at(self.s2)) * FEATURES + feature
    }
    #[inline]
    fn seen(&mut self, k: usize, v: usize) {
        self.coded[k] = v as u8;
        self.last = v;
    }
}

/// The value the two probabilities of a context make most likely (the cheapest to code):
/// 1 draw, 2 win, 0 loss; ties to the first of draw, win, loss.
#[inline]
fn likeliest(pr: &[Prob; 2]) -> usize {
    let one = u64::from(PROB_ONE);
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

/// Counts of each context's bits seen (`[zeros, ones]` per decision), for training a prior.
pub type Counts = Vec<[[u64; 2]; 2]>;

/// The result of coding one block.
#[derive(Debug, PartialEq, Eq)]
pub enum Coded {
    /// Every coded position that is not don't care holds this value (0 loss, 1 draw, 2 win),
    /// or there is none (then 1): no bytes.
    Const(u8),
    /// The stored block.
    Bytes(Vec<u8>),
}

/// Number of segments of a block of `n` positions.
pub fn segments(n: usize) -> usize {
    n.div_ceil(SEGMENT)
}

fn segments_of(n: usize, segment: usize) -> usize {
    n.div_ceil(segment)
}

/// Code the values `values` (0 loss, 1 draw, 2 win, [`super::DONT_CARE`] allowed only at the
/// don't-care positions of [`crate::rules::search::is_dont_care`]) of positions
/// `start..start + values.len()` of the slice of `ix`.
///
/// # Errors
/// The index of a position that is not don't care but holds [`super::DONT_CARE`] or a value
/// above 2.
pub fn encode_block(ix: &SliceIndex, start: u64, values: &[u8]) -> Result<Coded, u64> {
    encode_block_with(ix, start, values, &PRIOR, Params::CODEC, None)
}

/// [`encode_block`] with another prior, adding the bits seen per context to `counts` (the
/// training of [`PRIOR`], `examples/cm6_experiment.rs`).
///
/// # Errors
/// As [`encode_block`].
#[doc(hidden)]
pub fn encode_block_with(
    ix: &SliceIndex,
    start: u64,
    values: &[u8],
    prior: &[[u16; 2]; CONTEXTS],
    params: Params,
    mut counts: Option<&mut Counts>,
) -> Result<Coded, u64> {
    let segment = params.segment.max(1);
    let n = values.len();
    let cls = classes(ix, start, n);
    if let Some(c) = block_constant(&cls, values, start)? {
        return Ok(Coded::Const(c));
    }
    let st = strides(ix);
    let mut lens = Vec::with_capacity(segments_of(n, segment));
    let mut body = Vec::new();
    for s0 in (0..n).step_by(segment) {
        let s1 = (s0 + segment).min(n);
        let bytes = code_segment(
            &cls[s0..s1],
            &values[s0..s1],
            st,
            prior,
            params.weight,
            counts.as_deref_mut(),
        );
        lens.push(bytes.len());
        body.extend_from_slice(&bytes);
    }
    let mut out = Vec::with_capacity(body.len() + 2 * lens.len());
    for l in lens {
        push_varint(&mut out, l as u64);
    }
    out.extend_from_slice(&body);
    Ok(Coded::Bytes(out))
}

/// The class of each position `start..start + n` of the slice of `ix` for the encoder: 0
/// skipped, 1 + feature coded, 3 + feature don't care (coded, with the likeliest value).
pub(super) fn classes(ix: &SliceIndex, start: u64, n: usize) -> Vec<u8> {
    // The walk's classes (0 skipped, 1 coded, 2 threat: the decoder's), then the threat
    // positions that are don't care (a search, on the position itself).
    let mut cls = vec![walk::SKIP; n];
    let got = walk::fill_classes(ix, start, &mut cls);
    debug_assert_eq!(got, n);
    if cls.contains(&walk::THREAT) {
        ix.visit(start, start + n as u64, |i, p| {
            let c = &mut cls[(i - start) as usize];
            if *c == walk::THREAT
                && crate::rules::search::threat_resolvable(
                    English,
                    &p,
                    crate::rules::search::THREAT_DEPTH,
                )
            {
                *c = 4;
            }
        });
    }
    cls
}

/// Whether a position of class `c` ([`classes`]) holds a value the readers take (coded, not
/// don't care).
#[inline]
pub(super) fn stored(c: u8) -> bool {
    c == 1 || c == 2
}

/// Checks the values of the positions the readers take (at most 2) and returns the one value
/// they all hold (1 if there is none), or `None` if they differ.
///
/// # Errors
/// The index (`start + k`) of a value above 2 at such a position.
pub(super) fn block_constant(cls: &[u8], values: &[u8], start: u64) -> Result<Option<u8>, u64> {
    let mut first = None;
    let mut constant = true;
    for (k, &c) in cls.iter().enumerate() {
        if stored(c) {
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
    Ok(constant.then(|| first.unwrap_or(1)))
}

/// The range coder's bytes of one segment: the classes `cls` ([`classes`]) and values of its
/// positions, the slice's strides, the prior and its weight; with `counts`, the bits seen per
/// context are added there.
pub(super) fn code_segment(
    cls: &[u8],
    values: &[u8],
    st: (usize, usize),
    prior: &[[u16; 2]; CONTEXTS],
    weight: u16,
    mut counts: Option<&mut Counts>,
) -> Vec<u8> {
    let mut m = Model::new(cls.len(), st, prior, weight);
    let mut e = Encoder::new();
    for (k, &c) in cls.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let f = usize::from((c - 1) % 2);
        let ctx = m.context(k, f);
        let pr = &mut m.probs[ctx];
        let v = if c >= 3 {
            likeliest(pr)
        } else {
            usize::from(values[k])
        };
        if let Some(cn) = counts.as_deref_mut() {
            cn[ctx][0][usize::from(v != 1)] += 1;
            if v != 1 {
                cn[ctx][1][usize::from(v == 2)] += 1;
            }
        }
        e.value(pr, v);
        m.seen(k, v);
    }
    e.finish_short()
}

/// Byte ranges (within `data`) of the segments of a stored block of `n` positions.
///
/// # Errors
/// A description of the damage: a bad varint, or lengths that do not add up to `data`.
pub fn segment_ranges(n: usize, data: &[u8]) -> Result<Vec<(usize, usize)>, String> {
    segment_ranges_with(n, data, SEGMENT)
}

/// [`segment_ranges`] for segments of `segment` positions.
///
/// # Errors
/// As [`segment_ranges`].
#[doc(hidden)]
pub fn segment_ranges_with(
    n: usize,
    data: &[u8],
    segment: usize,
) -> Result<Vec<(usize, usize)>, String> {
    let k = segments_of(n, segment.max(1));
    let mut lens = Vec::with_capacity(k);
    let mut at = 0usize;
    for s in 0..k {
        let mut l = 0u64;
        let mut shift = 0;
        loop {
            let Some(&b) = data.get(at) else {
                return Err(format!("segment table ends inside length {s}"));
            };
            at += 1;
            if shift > 28 {
                return Err(format!("segment length {s} too long"));
            }
            l |= u64::from(b & 0x7F) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        lens.push(l);
    }
    let mut out = Vec::with_capacity(k);
    let mut pos = at as u64;
    for l in lens {
        let end = pos + l;
        if end > data.len() as u64 {
            return Err("segment lengths exceed the block".into());
        }
        out.push((pos as usize, end as usize));
        pos = end;
    }
    if pos != data.len() as u64 {
        return Err(format!(
            "segment lengths end at byte {pos} of {}",
            data.len()
        ));
    }
    Ok(out)
}

/// Decode segment `seg` of the block of `n` positions starting at index `start` of the slice
/// of `ix`, from the segment's bytes `data`: one value 0..=2 per position of the segment,
/// skipped positions holding the previous decoded value (1 before the first).
///
/// # Errors
/// `Err(())` if `seg` is not a segment of the block, or the walk of the slice's positions
/// ended early. Damaged bytes are not detected here (the decoder reads zeros past the end of
/// `data`, which are legitimate: the encoder strips them): the block checksum catches them
/// before decoding.
#[allow(clippy::result_unit_err)]
pub fn decode_segment(
    ix: &SliceIndex,
    start: u64,
    n: usize,
    seg: usize,
    data: &[u8],
) -> Result<Vec<u8>, ()> {
    decode_segment_with(ix, start, n, seg, data, &PRIOR, Params::CODEC)
}

/// [`decode_segment`] with another prior and parameters.
///
/// # Errors
/// As [`decode_segment`].
#[doc(hidden)]
#[allow(clippy::result_unit_err)]
pub fn decode_segment_with(
    ix: &SliceIndex,
    start: u64,
    n: usize,
    seg: usize,
    data: &[u8],
    prior: &[[u16; 2]; CONTEXTS],
    params: Params,
) -> Result<Vec<u8>, ()> {
    let segment = params.segment.max(1);
    let s0 = seg.saturating_mul(segment);
    let s1 = s0.saturating_add(segment).min(n);
    if s0 >= s1 {
        return Err(());
    }
    let m_len = s1 - s0;
    let mut m = Model::new(m_len, strides(ix), prior, params.weight);
    let mut d = Decoder::new_short(data);
    // The classes first (one walk of the segment), then the values in place of them.
    let mut out = vec![walk::SKIP; m_len];
    if walk::fill_classes(ix, start + s0 as u64, &mut out) != m_len {
        return Err(());
    }
    let mut fill = 1u8;
    for (k, o) in out.iter_mut().enumerate() {
        let c = *o;
        if c != walk::SKIP {
            let ctx = m.context(k, usize::from(c - walk::CODED));
            let v = d.value(&mut m.probs[ctx]);
            m.seen(k, v);
            fill = v as u8;
        }
        *o = fill;
    }
    Ok(out)
}

/// The walk's classes of positions `start..start + out.len()` of the slice of `ix`, into `out`
/// (0 skipped, 1 coded, 2 coded threat position); returns how many positions the walk gave
/// (`out.len()` unless the range passes the slice's end). For the decode-cost experiments
/// (`examples/cm9_experiment.rs` `TIMING=1`); the codecs use it internally.
#[doc(hidden)]
pub fn walk_classes(ix: &SliceIndex, start: u64, out: &mut [u8]) -> usize {
    walk::fill_classes(ix, start, out)
}

/// Decode a whole stored block (every segment) of `n` positions starting at `start`.
///
/// # Errors
/// A description of the damage ([`segment_ranges`], [`decode_segment`]).
pub fn decode_block(ix: &SliceIndex, start: u64, n: usize, data: &[u8]) -> Result<Vec<u8>, String> {
    let ranges = segment_ranges(n, data)?;
    let mut out = Vec::with_capacity(n);
    for (s, &(a, b)) in ranges.iter().enumerate() {
        let v = decode_segment(ix, start, n, s, &data[a..b])
            .map_err(|()| format!("segment {s} does not decode"))?;
        out.extend_from_slice(&v);
    }
    Ok(out)
}

/// Append `x` as an LEB128 varint (7 bits a byte, low first; codec 6's segment lengths and
/// codec 7's segment codes).
pub(super) fn push_varint(out: &mut Vec<u8>, mut x: u64) {
    loop {
        let b = (x & 0x7F) as u8;
        x >>= 7;
        if x == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slice::Slice;

    /// Values with a pattern (so they compress) and some noise.
    fn values(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed;
        (0..n)
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
            .collect()
    }

    #[test]
    fn skipped_positions_are_captures_and_positions_without_a_move() {
        for name in ["2101-4n", "0202-nn", "1111-32", "0301-nn"] {
            let ix = SliceIndex::new(name.parse::<Slice>().unwrap());
            let mut n = [0u64; 2];
            ix.visit(0, ix.size(), |_, p| {
                let skip = walk::class(&p) == walk::SKIP;
                // The slow move generator: no move, or every move a capture.
                let moves = p.unique_moves();
                let want = moves.is_empty() || p.has_capture();
                assert_eq!(skip, want, "{}", p.to_fen());
                n[usize::from(skip)] += 1;
            });
            assert!(n[0] > 0 && n[1] > 0, "{name}: {n:?}");
        }
    }

    #[test]
    fn segments_decode_alone_to_the_values_of_every_position_not_dont_care() {
        // A slice large enough for blocks of several segments, and a short last segment.
        let s: Slice = "2101-4n".parse().unwrap();
        let ix = SliceIndex::new(s);
        let n = (ix.size() as usize).min(3 * SEGMENT + 977);
        assert!(n > 3 * SEGMENT, "{}", ix.size());
        let v = values(n, 99);
        let Coded::Bytes(data) = encode_block(&ix, 0, &v).unwrap() else {
            panic!("not constant")
        };
        let all = decode_block(&ix, 0, n, &data).unwrap();
        assert_eq!(all.len(), n);
        let ranges = segment_ranges(n, &data).unwrap();
        assert_eq!(ranges.len(), 4);
        let mut checked = 0;
        let mut dc = 0;
        for (s, &(a, b)) in ranges.iter().enumerate() {
            let seg = decode_segment(&ix, 0, n, s, &data[a..b]).unwrap();
            assert_eq!(seg, all[s * SEGMENT..(s * SEGMENT + seg.len())]);
        }
        ix.visit(0, n as u64, |i, p| {
            if crate::rules::search::is_dont_care(English, &p) {
                dc += 1;
            } else {
                assert_eq!(all[i as usize], v[i as usize], "index {i}");
                checked += 1;
            }
        });
        assert!(checked > 1000 && dc > 100, "{checked} {dc}");
        // A block that does not start at 0 codes alike (the walk starts at `start`).
        let off = 1000u64;
        let m = 2 * SEGMENT;
        let Coded::Bytes(d2) = encode_block(&ix, off, &v[..m]).unwrap() else {
            panic!("not constant")
        };
        let back = decode_block(&ix, off, m, &d2).unwrap();
        ix.visit(off, off + m as u64, |i, p| {
            if !crate::rules::search::is_dont_care(English, &p) {
                assert_eq!(back[(i - off) as usize], v[(i - off) as usize], "index {i}");
            }
        });
    }

    #[test]
    fn damaged_segment_tables_are_errors_and_bytes_never_panic() {
        let s: Slice = "2101-4n".parse().unwrap();
        let ix = SliceIndex::new(s);
        let n = 2 * SEGMENT + 5;
        let v = values(n, 7);
        let Coded::Bytes(data) = encode_block(&ix, 0, &v).unwrap() else {
            panic!("not constant")
        };
        // Lengths must add up exactly.
        assert!(segment_ranges(n, &data[..data.len() - 1]).is_err());
        let mut longer = data.clone();
        longer.push(0);
        assert!(segment_ranges(n, &longer).is_err());
        assert!(segment_ranges(n, &[]).is_err());
        assert!(segment_ranges(n, &[0xFF; 12]).is_err());
        // A segment number past the block.
        assert!(decode_segment(&ix, 0, n, 3, &data).is_err());
        // Flipped bytes: an error or some values, never a panic (the block checksum, checked
        // before, is what refuses them).
        for i in 0..data.len() {
            let mut bad = data.clone();
            bad[i] ^= 0x5A;
            let _ = decode_block(&ix, 0, n, &bad);
        }
        // A value above 2 at a position that is not don't care is refused by the encoder.
        let mut wrong = v.clone();
        let at = (0..n)
            .find(|&i| !crate::rules::search::is_dont_care(English, &ix.unrank(i as u64).unwrap()))
            .unwrap();
        wrong[at] = 3;
        assert_eq!(encode_block(&ix, 0, &wrong), Err(at as u64));
    }

    #[test]
    fn a_block_whose_stored_values_agree_is_constant() {
        let s: Slice = "0202-nn".parse().unwrap();
        let ix = SliceIndex::new(s);
        let n = ix.size() as usize;
        // Don't cares (DONT_CARE = 3) anywhere the probe does not read, 2 elsewhere.
        let mut v = vec![2u8; n];
        ix.visit(0, n as u64, |i, p| {
            if crate::rules::search::is_dont_care(English, &p) {
                v[i as usize] = super::super::DONT_CARE;
            }
        });
        assert_eq!(encode_block(&ix, 0, &v), Ok(Coded::Const(2)));
    }

    #[test]
    fn the_flush_keeps_every_bit_with_trailing_zeros_stripped() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for len in [0usize, 1, 2, 7, 100, 5_000, 60_000] {
            let bits: Vec<bool> = (0..len)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if i % 3 == 0 {
                        x.is_multiple_of(2)
                    } else {
                        x.is_multiple_of(40)
                    }
                })
                .collect();
            let mut e = Encoder::new();
            let mut pe = [Prob { p: 2048, n: 0 }; 3];
            for (i, &b) in bits.iter().enumerate() {
                e.bit(&mut pe[i % 3], b);
            }
            let out = e.finish_short();
            assert_ne!(out.last(), Some(&0));
            let mut d = Decoder::new_short(&out);
            let mut pd = [Prob { p: 2048, n: 0 }; 3];
            for (i, &b) in bits.iter().enumerate() {
                assert_eq!(d.bit(&mut pd[i % 3]), b, "length {len}, bit {i}");
            }
        }
    }
}
