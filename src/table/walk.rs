//! The classes of the position walk of codecs 6 and 7 (docs/format.md, "Codec 6"): for each
//! position of a range of a slice (Black to move), [`SKIP`] when Black has a capture or no
//! move at all, else [`CODED`], or [`THREAT`] when White (not to move) has a capture.
//!
//! [`class`] computes one position's class from the move generator's bitboard tests (the
//! definition). [`fill_classes`] computes those of a range with the work that depends only on
//! the men and the black kings done once per run of white-king placements
//! ([`SliceIndex::visit_runs`]): per run, the landing squares of the jumps over the men, the
//! squares a white king could be jumped on or jump from, the quiet-move targets; per position
//! a few mask tests against the white kings. The two give the same class at every position
//! (the format depends on it: the encoder and the decoder must agree), tested on every
//! position of at most 4 pieces and a sample at 5 and 6 pieces.

use crate::board::{down_a, down_b, up_a, up_b, Bitboard, Color, Position};
use crate::index::{KingRun, SliceIndex};
use crate::rules::{English, Rules};

/// Class of a skipped position (nothing coded).
pub(super) const SKIP: u8 = 0;
/// Class of a coded position without a threat (feature 0).
pub(super) const CODED: u8 = 1;
/// Class of a coded position where the side not to move has a capture (feature 1).
pub(super) const THREAT: u8 = 2;

/// The class of `p` (any side to move): [`SKIP`] if the side to move has a capture or no
/// quiet move, else [`THREAT`] if the other side has a capture, else [`CODED`].
#[inline]
pub(super) fn class(p: &Position) -> u8 {
    if English.has_capture(p) || !English.has_quiet_move(p) {
        return SKIP;
    }
    let flipped = Position {
        side: p.side.opponent(),
        ..*p
    };
    if English.has_capture(&flipped) {
        THREAT
    } else {
        CODED
    }
}

/// Writes the class of positions `start..start + out.len()` of the slice of `ix` into `out`
/// (one byte each, [`class`]'s). Returns how many positions the walk gave: `out.len()`,
/// unless the range passes the slice's end (then the rest of `out` is untouched).
pub(super) fn fill_classes(ix: &SliceIndex, start: u64, out: &mut [u8]) -> usize {
    let mut k = 0usize;
    let end = start.saturating_add(out.len() as u64);
    ix.visit_runs(start, end, |r| {
        let dst = &mut out[k..k + r.count];
        k += r.count;
        match (r.black_varies, r.kings) {
            (_, 0) => dst.fill(class(&Position {
                black: r.black_men | r.black_kings,
                white: r.white_men,
                kings: r.black_kings,
                side: Color::Black,
            })),
            (false, 1) => white_run::<true>(r, dst),
            (false, _) => white_run::<false>(r, dst),
            (true, 1) => black_run::<true>(r, dst),
            (true, _) => black_run::<false>(r, dst),
        }
    });
    k
}

/// Calls `f(j, kings)` with the varying kings of each position `j` of run `r` (which has
/// some); `ONE`: exactly one varying king (it steps through the free squares in order).
#[inline(always)]
fn each_kings<const ONE: bool>(r: &KingRun, mut f: impl FnMut(usize, Bitboard)) {
    if ONE {
        let first = r.kings_of(r.cw);
        let mut rest = r.king_squares() & !(first - 1);
        for j in 0..r.count {
            let kb = rest & rest.wrapping_neg();
            rest &= rest.wrapping_sub(1);
            f(j, kb);
        }
    } else {
        let mut cw = r.cw;
        for j in 0..r.count {
            f(j, r.kings_of(cw));
            if j + 1 < r.count {
                cw = KingRun::next(cw);
            }
        }
    }
}

/// The class of a position from its three tests.
#[inline(always)]
fn of(black_capture: bool, black_quiet: bool, white_capture: bool) -> u8 {
    if black_capture || !black_quiet {
        SKIP
    } else {
        CODED + u8::from(white_capture)
    }
}

/// The squares `sq` for which `m` holds a square other than `sq`.
#[inline(always)]
fn others(m: Bitboard) -> Bitboard {
    if m == 0 {
        0
    } else if m & (m - 1) != 0 {
        !0
    } else {
        !m
    }
}

/// The classes of run `r` with one varying king, into `out`: [`SKIP`] where the king stands
/// on a square of `skip`, else [`THREAT`] on a square of `threat`, else [`CODED`].
#[inline(always)]
fn one_king(r: &KingRun, skip: Bitboard, threat: Bitboard, out: &mut [u8]) {
    each_kings::<true>(r, |j, kb| {
        out[j] = if skip & kb != 0 {
            SKIP
        } else {
            CODED + u8::from(threat & kb != 0)
        };
    });
}

/// The classes of the positions of run `r` (the black kings vary: a slice without white
/// kings), into `out` (`out.len() == r.count`). `ONE`: exactly one black king.
#[inline(always)]
fn black_run<const ONE: bool>(r: &KingRun, out: &mut [u8]) {
    let bm = r.black_men;
    let wm = r.white_men;
    // Squares empty of the men (a black king may stand on one).
    let e0: Bitboard = !(bm | wm);
    // Landing squares of the black men's jumps over white men.
    let lbm = (up_a(up_a(bm) & wm) | up_b(up_b(bm) & wm)) & e0;
    // Squares from which a black king could jump a white man, landing on a square of `e0`.
    let jb = down_a(wm & down_a(e0))
        | down_b(wm & down_b(e0))
        | up_a(wm & up_a(e0))
        | up_b(wm & up_b(e0));
    // The black men's quiet-move targets among `e0`; the squares next to one of `e0`.
    let qm = (up_a(bm) | up_b(bm)) & e0;
    let nb = down_a(e0) | down_b(e0) | up_a(e0) | up_b(e0);
    // Landing squares of the white men's jumps over black men.
    let lwm = (down_a(down_a(wm) & bm) | down_b(down_b(wm) & bm)) & e0;
    // Squares where a black king could be jumped by a white man, landing on a square of `e0`.
    let vw = (down_a(wm) & up_a(e0)) | (down_b(wm) & up_b(e0));
    if ONE {
        // One king: a square of `e0` other than its own is empty, so each test is a mask of
        // the king's square.
        let skip = others(lbm) | jb | !(others(qm) | nb);
        return one_king(r, skip, others(lwm) | vw, out);
    }
    each_kings::<false>(r, |j, kb| {
        let nk = !kb;
        let mut bcap = (lbm & nk) != 0;
        let mut quiet = (qm & nk) != 0;
        let mut threat = (lwm & nk) != 0;
        if !bcap && (kb & jb) != 0 {
            bcap = ((down_a(down_a(kb) & wm)
                | down_b(down_b(kb) & wm)
                | up_a(up_a(kb) & wm)
                | up_b(up_b(kb) & wm))
                & e0
                & nk)
                != 0;
        }
        if !quiet && (kb & nb) != 0 {
            quiet = ((up_a(kb) | up_b(kb) | down_a(kb) | down_b(kb)) & e0 & nk) != 0;
        }
        if !threat && (kb & vw) != 0 {
            threat = ((down_a(down_a(wm) & kb) | down_b(down_b(wm) & kb)) & e0 & nk) != 0;
        }
        out[j] = of(bcap, quiet, threat);
    });
}

/// The classes of the positions of run `r` (the white kings vary), into `out`
/// (`out.len() == r.count`). `ONE`: exactly one white king.
#[inline(always)]
fn white_run<const ONE: bool>(r: &KingRun, out: &mut [u8]) {
    let b = r.black_men | r.black_kings;
    let bk = r.black_kings;
    let wm = r.white_men;
    // Squares empty of the men and the black kings (a white king may stand on one).
    let e0: Bitboard = !(b | wm);
    // The squares one step from a black piece in each direction it moves (men and kings
    // forward, up the board; kings backward too).
    let (tba, tbb, tka, tkb) = (up_a(b), up_b(b), down_a(bk), down_b(bk));
    // Landing squares of Black's jumps over white men (empty but for white kings).
    let lb0 = (up_a(tba & wm) | up_b(tbb & wm) | down_a(tka & wm) | down_b(tkb & wm)) & e0;
    // Squares where a white king could be jumped by Black, landing on a square of `e0`.
    let v = (tba & down_a(e0)) | (tbb & down_b(e0)) | (tka & up_a(e0)) | (tkb & up_b(e0));
    // Black's quiet-move targets among `e0`.
    let q0 = (tba | tbb | tka | tkb) & e0;
    // Landing squares of White's men's jumps (down the board) over black pieces.
    let lw0 = (down_a(down_a(wm) & b) | down_b(down_b(wm) & b)) & e0;
    // Squares from which a white king could jump a black piece, landing on a square of `e0`.
    let jw =
        down_a(b & down_a(e0)) | down_b(b & down_b(e0)) | up_a(b & up_a(e0)) | up_b(b & up_b(e0));
    // With one white king, a landing square of `e0` is empty (the king is the jumper or
    // the jumped piece, not on the landing square): the candidate tests are exact. With
    // more, a candidate is checked exactly against the other kings.
    if ONE {
        // Each test is then a mask of the king's square.
        let skip = others(lb0) | v | !others(q0);
        return one_king(r, skip, others(lw0) | jw, out);
    }
    each_kings::<false>(r, |j, wkb| {
        let nw = !wkb;
        let mut bcap = (lb0 & nw) != 0;
        let mut threat = (lw0 & nw) != 0;
        if !bcap && (wkb & v) != 0 {
            bcap = ((up_a(tba & wkb) | up_b(tbb & wkb) | down_a(tka & wkb) | down_b(tkb & wkb))
                & e0
                & nw)
                != 0;
        }
        if !threat && (wkb & jw) != 0 {
            threat = ((down_a(down_a(wkb) & b)
                | down_b(down_b(wkb) & b)
                | up_a(up_a(wkb) & b)
                | up_b(up_b(wkb) & b))
                & e0
                & nw)
                != 0;
        }
        out[j] = of(bcap, (q0 & nw) != 0, threat);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slice::Slice;

    /// Every slice with at most `pieces` pieces.
    fn slices(pieces: u32) -> Vec<Slice> {
        (1..=pieces)
            .flat_map(crate::count::slices_with_pieces)
            .collect()
    }

    /// `fill_classes` against `class` on positions `a..b` of `ix`, in windows of `w` (so that
    /// runs start and end inside windows); returns how many positions were compared.
    fn compare(ix: &SliceIndex, a: u64, b: u64, w: u64) -> u64 {
        let mut n = 0;
        let mut s = a;
        while s < b {
            let e = (s + w).min(b);
            let mut fast = vec![9u8; (e - s) as usize];
            assert_eq!(fill_classes(ix, s, &mut fast), fast.len());
            ix.visit(s, e, |i, p| {
                assert_eq!(
                    fast[(i - s) as usize],
                    class(&p),
                    "{} index {i}: {}",
                    ix.slice(),
                    p.to_fen()
                );
                n += 1;
            });
            s = e;
        }
        n
    }

    #[test]
    fn fast_classes_equal_the_definition_on_every_position_of_at_most_4_pieces() {
        let mut n = 0;
        let mut seen = [0u64; 3];
        for s in slices(4) {
            let ix = SliceIndex::new(s);
            n += compare(&ix, 0, ix.size(), 4_120);
            let mut c = vec![0u8; ix.size() as usize];
            fill_classes(&ix, 0, &mut c);
            for x in c {
                seen[usize::from(x)] += 1;
            }
        }
        // Every class occurs; the count is the number of positions of at most 4 pieces,
        // Black to move (the slices partition them).
        assert!(seen.iter().all(|&x| x > 1000), "{seen:?}");
        assert_eq!(n, seen.iter().sum::<u64>());
    }

    #[test]
    fn fast_classes_equal_the_definition_on_a_sample_of_5_and_6_pieces() {
        // Every 7th slice of 5 pieces and every 40th of 6, a window at the start, the middle
        // and the end of each, in windows of odd lengths.
        let mut n = 0;
        for (pieces, step) in [(5u32, 7usize), (6, 40)] {
            for s in crate::count::slices_with_pieces(pieces)
                .into_iter()
                .step_by(step)
            {
                let ix = SliceIndex::new(s);
                let size = ix.size();
                for at in [0, size / 2, size.saturating_sub(20_000)] {
                    n += compare(&ix, at, (at + 20_000).min(size), 4_097);
                }
            }
        }
        assert!(n > 1_000_000, "{n}");
    }

    #[test]
    fn a_range_past_the_end_stops_at_the_slice_end() {
        let ix = SliceIndex::new("1111-32".parse().unwrap());
        let mut out = vec![7u8; 100];
        let at = ix.size() - 30;
        assert_eq!(fill_classes(&ix, at, &mut out), 30);
        assert!(out[30..].iter().all(|&x| x == 7));
    }
}
