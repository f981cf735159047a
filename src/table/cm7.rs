//! Codec 7 ([`CODEC_CM_BOOK`]): codec 6 ([`super::cm6`]) with a codebook of priors and
//! segments stored without the range coder (docs/format.md, "Codec 7").
//!
//! Blocks, segments of [`SEGMENT`] positions, the walk, the classes, the filled don't cares,
//! the model and the range coder are codec 6's. What differs is the segment table at the
//! start of a stored block: one code per segment (a LEB128 varint),
//! - `0..=2` ([`CONST_CODES`]): every position the readers take holds this value (a
//!   *constant* segment): no further bytes;
//! - `3..=32`: a *near-constant* segment, value `v = (code - 3) / 10` with
//!   `e = (code - 3) % 10 + 1` exceptions ([`NEAR_MAX`] at most); the code is followed in the
//!   table by `e` varints `delta * 2 + which`: the exception's position in the segment is the
//!   previous exception's plus `delta` (the first: `delta` itself; later ones `delta >= 1`),
//!   its value the lower (`which` 0) or the higher (1) of the two values other than `v`;
//! - `33 + len * 64 + id` ([`CODED_BASE`], [`BOOK`] = 64): a *coded* segment of `len`
//!   bytes in the block's body (after the table, coded segments in order), coded as in codec 6
//!   from prior `id` of the compiled-in codebook [`PRIORS`].
//!
//! Constant and near-constant segments decode without the walk: every position holds `v`
//! but the exceptions (positions the readers do not take, skipped or don't care, hold `v`
//! too). The encoder chooses the prior of each coded segment ([`encode_block`]) and whether a
//! segment with at most 10 exceptions is cheaper coded; any choice decodes.

use crate::index::SliceIndex;

use super::cm::strides;
use super::cm6::{
    self, block_constant, classes, code_segment, push_varint, stored, Coded, CONTEXTS,
};

/// Codec id 7: codec 6 with a codebook of priors and constant / near-constant segments.
/// English rules only.
pub const CODEC_CM_BOOK: u32 = 7;

/// Positions per segment: codec 6's (one probe cache page).
pub const SEGMENT: usize = cm6::SEGMENT;

/// Priors in the codebook.
pub const BOOK: usize = 64;

/// The codebook: per prior, per context of codec 6's model, the 12-bit probabilities of a 0
/// bit of its two decisions. Trained on every 10th 6-piece file (`examples/cm8_experiment.rs`,
/// docs/format.md "Codec 7") and compiled in.
pub static PRIORS: [[[u16; 2]; CONTEXTS]; BOOK] = include!("cm7_priors.in");

/// Segment codes `0..CONST_CODES`: a constant segment of that value.
pub const CONST_CODES: u64 = 3;
/// The most exceptions of a near-constant segment.
pub const NEAR_MAX: usize = 10;
/// The first code of a coded segment: `CODED_BASE + len * BOOK + id`.
pub const CODED_BASE: u64 = CONST_CODES + 3 * NEAR_MAX as u64;

/// Encoder search: every `PROBE_EVERY`-th segment of a block that needs the coder is coded
/// with every prior; the others with the [`SHORTLIST`] priors that coded those in the fewest
/// bytes (an encoder choice, not part of the format).
const PROBE_EVERY: usize = 4;
/// Priors tried on the segments not probed.
const SHORTLIST: usize = 8;

/// A segment as the table describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// Every position holds this value.
    Const(u8),
    /// Every position holds `value` but the exceptions (position in the segment, value).
    Near {
        /// The segment's value.
        value: u8,
        /// Positions (increasing) and their values.
        exceptions: Vec<(usize, u8)>,
    },
    /// Coded from prior `prior` in the bytes `range` of the block.
    Coded {
        /// Index into [`PRIORS`].
        prior: usize,
        /// Byte range within the stored block.
        range: (usize, usize),
    },
}

fn varint_len(mut x: u64) -> usize {
    let mut n = 1;
    while x >= 0x80 {
        x >>= 7;
        n += 1;
    }
    n
}

/// The two values other than `v`, lower first.
fn others(v: u8) -> [u8; 2] {
    match v {
        0 => [1, 2],
        1 => [0, 2],
        _ => [0, 1],
    }
}

/// The table entry of a near-constant segment (code and exceptions), if it has at most
/// [`NEAR_MAX`] exceptions to its most common stored value.
fn near_entry(cls: &[u8], values: &[u8]) -> Option<Vec<u8>> {
    let mut h = [0usize; 3];
    for (&c, &v) in cls.iter().zip(values) {
        if stored(c) {
            h[usize::from(v)] += 1;
        }
    }
    let major = (0..3u8).max_by_key(|&v| (h[usize::from(v)], v))?;
    let exc = h.iter().sum::<usize>() - h[usize::from(major)];
    if exc == 0 || exc > NEAR_MAX {
        return None;
    }
    let mut out = Vec::with_capacity(1 + 2 * exc);
    push_varint(
        &mut out,
        CONST_CODES + u64::from(major) * NEAR_MAX as u64 + (exc - 1) as u64,
    );
    let o = others(major);
    let mut prev = 0usize;
    for (k, (&c, &v)) in cls.iter().zip(values).enumerate() {
        if stored(c) && v != major {
            push_varint(&mut out, ((k - prev) as u64) * 2 + u64::from(v == o[1]));
            prev = k;
        }
    }
    Some(out)
}

/// Code the values `values` (0 loss, 1 draw, 2 win, [`super::DONT_CARE`] allowed only at the
/// don't-care positions of [`crate::rules::search::is_dont_care`]) of positions
/// `start..start + values.len()` of the slice of `ix` (a block).
///
/// Each segment is stored constant when its stored values agree; else it is range coded from
/// the prior of the codebook that codes it in the fewest bytes among those tried (every
/// prior for every [`PROBE_EVERY`]-th such segment of the block, the [`SHORTLIST`] best of
/// those for the others), or stored near-constant when that takes no more bytes.
///
/// # Errors
/// The index of a position that is not don't care but holds [`super::DONT_CARE`] or a value
/// above 2.
pub fn encode_block(ix: &SliceIndex, start: u64, values: &[u8]) -> Result<Coded, u64> {
    let n = values.len();
    let cls = classes(ix, start, n);
    if let Some(c) = block_constant(&cls, values, start)? {
        return Ok(Coded::Const(c));
    }
    let st = strides(ix);
    let bounds: Vec<(usize, usize)> = (0..n)
        .step_by(SEGMENT)
        .map(|s0| (s0, (s0 + SEGMENT).min(n)))
        .collect();
    // Constant segments first; the others need the coder (or the near-constant form).
    let consts: Vec<Option<u8>> = bounds
        .iter()
        .map(|&(a, b)| {
            block_constant(&cls[a..b], &values[a..b], start + a as u64)
                .ok()
                .flatten()
        })
        .collect();
    let coded_cost = |bytes: &[u8], id: usize| {
        varint_len(CODED_BASE + (bytes.len() * BOOK + id) as u64) + bytes.len()
    };
    let code_with = |s: usize, id: usize| {
        let (a, b) = bounds[s];
        code_segment(
            &cls[a..b],
            &values[a..b],
            st,
            &PRIORS[id],
            cm6::PRIOR_WEIGHT,
            None,
        )
    };
    // The best (fewest bytes, then lowest id) of `ids` for segment `s`.
    let best_of = |s: usize, ids: &mut dyn Iterator<Item = usize>, costs: Option<&mut [u64]>| {
        let mut best: Option<(usize, usize, Vec<u8>)> = None;
        let mut costs = costs;
        for id in ids {
            let bytes = code_with(s, id);
            let c = coded_cost(&bytes, id);
            if let Some(cs) = costs.as_deref_mut() {
                cs[id] += c as u64;
            }
            if best
                .as_ref()
                .is_none_or(|&(bc, bid, _)| (c, id) < (bc, bid))
            {
                best = Some((c, id, bytes));
            }
        }
        best.expect("at least one prior")
    };
    let need: Vec<usize> = (0..bounds.len()).filter(|&s| consts[s].is_none()).collect();
    let mut chosen: Vec<Option<(usize, usize, Vec<u8>)>> = vec![None; bounds.len()];
    let mut totals = vec![0u64; BOOK];
    for &s in need.iter().step_by(PROBE_EVERY) {
        chosen[s] = Some(best_of(s, &mut (0..BOOK), Some(&mut totals)));
    }
    let mut short: Vec<usize> = (0..BOOK).collect();
    short.sort_by_key(|&id| (totals[id], id));
    short.truncate(SHORTLIST);
    short.sort_unstable();
    for &s in &need {
        if chosen[s].is_none() {
            chosen[s] = Some(best_of(s, &mut short.iter().copied(), None));
        }
    }
    let mut table = Vec::new();
    let mut body = Vec::new();
    for (s, &(a, b)) in bounds.iter().enumerate() {
        if let Some(v) = consts[s] {
            push_varint(&mut table, u64::from(v));
            continue;
        }
        let (cost, id, bytes) = chosen[s].take().expect("coded");
        match near_entry(&cls[a..b], &values[a..b]) {
            Some(e) if e.len() <= cost => table.extend_from_slice(&e),
            _ => {
                push_varint(&mut table, CODED_BASE + (bytes.len() * BOOK + id) as u64);
                body.extend_from_slice(&bytes);
            }
        }
    }
    table.extend_from_slice(&body);
    Ok(Coded::Bytes(table))
}

/// Read one varint at `*at` of `data`.
fn read_varint(data: &[u8], at: &mut usize, s: usize) -> Result<u64, String> {
    let mut x = 0u64;
    let mut shift = 0;
    loop {
        let Some(&b) = data.get(*at) else {
            return Err(format!("segment table ends inside segment {s}"));
        };
        *at += 1;
        if shift > 35 {
            return Err(format!("segment {s}: code too long"));
        }
        x |= u64::from(b & 0x7F) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(x);
        }
    }
}

/// The segments of a stored block of `n` positions, from its segment table.
///
/// # Errors
/// A description of the damage: the table ends early or holds a code too long, an exception
/// lies past its segment's end or not after the previous one, the coded segments' lengths
/// do not add up to the block's bytes.
pub fn parse_block(n: usize, data: &[u8]) -> Result<Vec<Segment>, String> {
    let k = n.div_ceil(SEGMENT);
    let mut segs = Vec::with_capacity(k);
    let mut coded = Vec::new();
    let mut at = 0usize;
    for s in 0..k {
        let len = (n - s * SEGMENT).min(SEGMENT);
        let code = read_varint(data, &mut at, s)?;
        if code < CONST_CODES {
            segs.push(Segment::Const(code as u8));
        } else if code < CODED_BASE {
            let value = ((code - CONST_CODES) / NEAR_MAX as u64) as u8;
            let e = ((code - CONST_CODES) % NEAR_MAX as u64) as usize + 1;
            let o = others(value);
            let mut exceptions = Vec::with_capacity(e);
            let mut pos = 0u64;
            for j in 0..e {
                let x = read_varint(data, &mut at, s)?;
                let delta = x >> 1;
                if j > 0 && delta == 0 {
                    return Err(format!("segment {s}: exception {j} not after the previous"));
                }
                pos += delta;
                if pos >= len as u64 {
                    return Err(format!(
                        "segment {s}: exception {j} at {pos}, past the segment's end ({len})"
                    ));
                }
                exceptions.push((pos as usize, o[(x & 1) as usize]));
            }
            segs.push(Segment::Near { value, exceptions });
        } else {
            let x = code - CODED_BASE;
            coded.push((s, x / BOOK as u64));
            segs.push(Segment::Coded {
                prior: (x % BOOK as u64) as usize,
                range: (0, 0),
            });
        }
    }
    let mut pos = at as u64;
    for (s, l) in coded {
        let end = pos + l;
        if end > data.len() as u64 {
            return Err(format!("segment {s}: lengths exceed the block"));
        }
        if let Segment::Coded { range, .. } = &mut segs[s] {
            *range = (pos as usize, end as usize);
        }
        pos = end;
    }
    if pos != data.len() as u64 {
        return Err(format!(
            "segment lengths end at byte {pos} of {}",
            data.len()
        ));
    }
    Ok(segs)
}

/// Decode segment `seg` (described by `segment`, from [`parse_block`] of the block's bytes
/// `data`) of the block of `n` positions starting at index `start` of the slice of `ix`: one
/// value 0..=2 per position of the segment.
///
/// # Errors
/// A description: `seg` not a segment of the block, or the walk of the slice's positions
/// ended early. As in codec 6, damaged coded bytes are not detected here: the block checksum,
/// checked before, refuses them.
pub fn decode_segment(
    ix: &SliceIndex,
    start: u64,
    n: usize,
    seg: usize,
    segment: &Segment,
    data: &[u8],
) -> Result<Vec<u8>, String> {
    let s0 = seg.saturating_mul(SEGMENT);
    let len = s0.saturating_add(SEGMENT).min(n).saturating_sub(s0);
    if len == 0 {
        return Err(format!("segment {seg} of a block of {n} positions"));
    }
    match segment {
        Segment::Const(v) => Ok(vec![*v; len]),
        Segment::Near { value, exceptions } => {
            let mut out = vec![*value; len];
            for &(k, v) in exceptions {
                *out.get_mut(k)
                    .ok_or_else(|| format!("segment {seg}: exception past its end"))? = v;
            }
            Ok(out)
        }
        Segment::Coded { prior, range } => {
            let pr = PRIORS
                .get(*prior)
                .ok_or_else(|| format!("segment {seg}: prior {prior} not in the codebook"))?;
            let bytes = data
                .get(range.0..range.1)
                .ok_or_else(|| format!("segment {seg}: bytes past the block"))?;
            cm6::decode_segment_with(ix, start, n, seg, bytes, pr, cm6::Params::CODEC)
                .map_err(|()| format!("segment {seg} does not decode"))
        }
    }
}

/// Decode segment `page` of a stored block of `n` positions starting at `start`.
///
/// # Errors
/// As [`parse_block`] and [`decode_segment`].
pub fn decode_page(
    ix: &SliceIndex,
    start: u64,
    n: usize,
    page: usize,
    data: &[u8],
) -> Result<Vec<u8>, String> {
    let segs = parse_block(n, data)?;
    let s = segs
        .get(page)
        .ok_or_else(|| format!("segment {page} of {}", segs.len()))?;
    decode_segment(ix, start, n, page, s, data)
}

/// Decode a whole stored block (every segment) of `n` positions starting at `start`.
///
/// # Errors
/// As [`parse_block`] and [`decode_segment`].
pub fn decode_block(ix: &SliceIndex, start: u64, n: usize, data: &[u8]) -> Result<Vec<u8>, String> {
    let segs = parse_block(n, data)?;
    let mut out = Vec::with_capacity(n);
    for (s, seg) in segs.iter().enumerate() {
        out.extend_from_slice(&decode_segment(ix, start, n, s, seg, data)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::English;
    use crate::slice::Slice;

    /// Values with a pattern (so they compress) and some noise; `noise` in 1..: one value in
    /// `noise` random.
    fn values(n: usize, seed: u64, noise: u64) -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if x.is_multiple_of(noise) {
                    (x % 3) as u8
                } else {
                    ((i / 37) % 3) as u8
                }
            })
            .collect()
    }

    fn check(ix: &SliceIndex, start: u64, v: &[u8], back: &[u8]) -> usize {
        let mut checked = 0;
        ix.visit(start, start + v.len() as u64, |i, p| {
            if !crate::rules::search::is_dont_care(English, &p) {
                let k = (i - start) as usize;
                assert_eq!(back[k], v[k], "index {i}");
                checked += 1;
            }
        });
        checked
    }

    #[test]
    fn every_segment_form_decodes_to_the_values_the_readers_take() {
        let s: Slice = "2101-4n".parse().unwrap();
        let ix = SliceIndex::new(s);
        let n = 5 * SEGMENT + 977;
        assert!(ix.size() as usize >= n);
        let mut v = values(n, 99, 10);
        // Segment 1 constant (draws), segment 2 a draw with three exceptions, segment 3 a
        // win with one exception at its first position.
        v[SEGMENT..2 * SEGMENT].fill(1);
        v[2 * SEGMENT..3 * SEGMENT].fill(1);
        let stored_at = |range: std::ops::Range<usize>| {
            range
                .filter(|&i| {
                    !crate::rules::search::is_dont_care(English, &ix.unrank(i as u64).unwrap())
                })
                .collect::<Vec<_>>()
        };
        let s2 = stored_at(2 * SEGMENT..3 * SEGMENT);
        v[s2[5]] = 0;
        v[s2[100]] = 2;
        v[s2[101]] = 2;
        v[3 * SEGMENT..4 * SEGMENT].fill(2);
        let s3 = stored_at(3 * SEGMENT..4 * SEGMENT);
        v[s3[0]] = 0;
        let Coded::Bytes(data) = encode_block(&ix, 0, &v).unwrap() else {
            panic!("not constant")
        };
        let segs = parse_block(n, &data).unwrap();
        assert_eq!(segs.len(), 6);
        assert!(matches!(segs[0], Segment::Coded { .. }), "{:?}", segs[0]);
        assert_eq!(segs[1], Segment::Const(1));
        assert_eq!(
            segs[2],
            Segment::Near {
                value: 1,
                exceptions: vec![
                    (s2[5] - 2 * SEGMENT, 0),
                    (s2[100] - 2 * SEGMENT, 2),
                    (s2[101] - 2 * SEGMENT, 2)
                ]
            }
        );
        assert_eq!(
            segs[3],
            Segment::Near {
                value: 2,
                exceptions: vec![(s3[0] - 3 * SEGMENT, 0)]
            }
        );
        let all = decode_block(&ix, 0, n, &data).unwrap();
        assert_eq!(all.len(), n);
        assert!(check(&ix, 0, &v, &all) > 4000);
        for p in 0..6 {
            let page = decode_page(&ix, 0, n, p, &data).unwrap();
            assert_eq!(page, all[p * SEGMENT..(p * SEGMENT + page.len())]);
        }
        // A block that does not start at 0 codes alike (the walk starts at `start`).
        let off = 1000u64;
        let m = 2 * SEGMENT;
        let w = values(m, 5, 10);
        let Coded::Bytes(d2) = encode_block(&ix, off, &w).unwrap() else {
            panic!("not constant")
        };
        let back = decode_block(&ix, off, m, &d2).unwrap();
        assert!(check(&ix, off, &w, &back) > 1000);
    }

    #[test]
    fn every_prior_of_the_codebook_decodes() {
        // Each prior id written by hand into a coded segment's code decodes the segment the
        // encoder coded with it.
        let s: Slice = "1111-32".parse().unwrap();
        let ix = SliceIndex::new(s);
        let n = (ix.size() as usize).min(SEGMENT);
        let v = values(n, 3, 4);
        let cls = classes(&ix, 0, n);
        for id in [0, 1, 17, BOOK - 1] {
            let bytes = code_segment(&cls, &v, strides(&ix), &PRIORS[id], cm6::PRIOR_WEIGHT, None);
            let mut data = Vec::new();
            push_varint(&mut data, CODED_BASE + (bytes.len() * BOOK + id) as u64);
            data.extend_from_slice(&bytes);
            let back = decode_block(&ix, 0, n, &data).unwrap();
            assert!(check(&ix, 0, &v, &back) > 100, "prior {id}");
        }
    }

    #[test]
    fn damaged_segment_tables_are_errors_and_bytes_never_panic() {
        let s: Slice = "2101-4n".parse().unwrap();
        let ix = SliceIndex::new(s);
        let n = 2 * SEGMENT + 5;
        let v = values(n, 7, 10);
        let Coded::Bytes(data) = encode_block(&ix, 0, &v).unwrap() else {
            panic!("not constant")
        };
        // Lengths must add up exactly.
        assert!(parse_block(n, &data[..data.len() - 1]).is_err());
        let mut longer = data.clone();
        longer.push(0);
        assert!(parse_block(n, &longer).is_err());
        assert!(parse_block(n, &[]).is_err());
        assert!(parse_block(n, &[0xFF; 12]).is_err());
        // Constant segments: three codes, no bytes; a fourth code is trailing data.
        assert_eq!(
            decode_block(&ix, 0, n, &[2, 0, 1]).unwrap(),
            [vec![2; SEGMENT], vec![0; SEGMENT], vec![1; 5]].concat()
        );
        assert!(decode_block(&ix, 0, n, &[2, 0, 1, 1]).is_err());
        // Near-constant: an exception past the segment's end (the last segment has 5
        // positions), or not after the previous one, is an error.
        let near = |v: u64, e: &[u64]| {
            let mut d = vec![1, 1];
            push_varint(
                &mut d,
                CONST_CODES + v * NEAR_MAX as u64 + (e.len() - 1) as u64,
            );
            for &x in e {
                push_varint(&mut d, x);
            }
            d
        };
        let ok = decode_block(&ix, 0, n, &near(2, &[4 * 2 + 1])).unwrap();
        assert_eq!(ok[2 * SEGMENT..], [2, 2, 2, 2, 1]);
        let ok = decode_block(&ix, 0, n, &near(0, &[0, 2 * 2 + 1, 2 * 2])).unwrap();
        assert_eq!(ok[2 * SEGMENT..], [1, 0, 2, 0, 1]);
        for bad in [
            near(2, &[5 * 2]),
            near(2, &[3 * 2, 2 * 2]),
            near(0, &[2 * 2, 0, 1]),
            near(1, &[1u64 << 40]),
        ] {
            assert!(decode_block(&ix, 0, n, &bad).is_err(), "{bad:?}");
            assert!(decode_page(&ix, 0, n, 2, &bad).is_err(), "{bad:?}");
        }
        // The table ends inside a near-constant segment's exceptions.
        let cut = near(1, &[2, 4, 6]);
        assert!(decode_block(&ix, 0, n, &cut[..cut.len() - 1]).is_err());
        // A page past the block.
        assert!(decode_page(&ix, 0, n, 3, &data).is_err());
        // Flipped bytes and truncations: an error or some values, never a panic (the block
        // checksum, checked before, is what refuses damaged coded bytes).
        for i in 0..data.len() {
            for x in [0x01, 0x5A, 0x80, 0xFF] {
                let mut bad = data.clone();
                bad[i] ^= x;
                let _ = decode_block(&ix, 0, n, &bad);
                for p in 0..3 {
                    let _ = decode_page(&ix, 0, n, p, &bad);
                }
            }
            let _ = decode_block(&ix, 0, n, &data[..i]);
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
        let mut v = vec![0u8; n];
        ix.visit(0, n as u64, |i, p| {
            if crate::rules::search::is_dont_care(English, &p) {
                v[i as usize] = super::super::DONT_CARE;
            }
        });
        assert_eq!(encode_block(&ix, 0, &v), Ok(Coded::Const(0)));
    }
}
