//! Capture resolution: [`resolve`] turns any position into lookups of quiet Black-to-move
//! positions in a [`RawSource`].

use super::error::ProbeError;
use crate::board::{Position, Wld};
use crate::index::SliceIndex;
use crate::rules::{English, Rules};
// The rules-level searches live beside the rules (`rules::search`, below `table/`); their
// old paths under `probe` stay valid.
pub use crate::rules::search::is_dont_care;
pub(crate) use crate::rules::search::{best_of_successors, threat_search};
use crate::slice::Slice;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// A source of stored values: the value for Black (to move) of a quiet position of a slice.
/// Implemented by [`super::Tablebase`] and by the generator's dependency store
/// ([`crate::store::DecodedTables`]).
pub trait RawSource: Sync {
    /// Stored value of position `index` of `slice` (a quiet Black-to-move position).
    ///
    /// # Errors
    /// Whatever the source fails with, e.g. [`ProbeError::MissingSlice`].
    fn raw(&self, slice: &Slice, index: u64) -> Result<Wld, ProbeError>;

    /// Stored value of the quiet Black-to-move position `p`. The default computes the slice
    /// and its index (with a per-thread cache of [`SliceIndex`]) and calls [`RawSource::raw`].
    ///
    /// # Errors
    /// As [`RawSource::raw`].
    #[allow(
        dead_code,
        reason = "no caller in the library today; its implementations stay"
    )]
    fn raw_position(&self, p: &Position) -> Result<Wld, ProbeError> {
        let s = Slice::of(p);
        let index = with_index(&s, |ix| ix.rank(p));
        self.raw(&s, index)
    }

    /// Whether the stored values of `slice` may be don't care at the threat positions
    /// [`is_dont_care`] names: `true` for a codec-4 file ([`crate::table::CODEC_2BIT_THREATS`],
    /// docs/format.md), `false` where every position without a capture holds its true value
    /// (codec 2, or values handed over by the generator). Decided per slice, so a directory
    /// may mix both codecs.
    ///
    /// # Errors
    /// As [`RawSource::raw`] (e.g. [`ProbeError::MissingSlice`]).
    fn threats_dont_care(&self, slice: &Slice) -> Result<bool, ProbeError>;

    /// The stored value of the quiet Black-to-move position `p`, or `None` when `p`'s slice
    /// leaves threat positions don't care ([`RawSource::threats_dont_care`]) and `threat()`
    /// (called only then) says `p` is one the caller resolves by search. The default looks
    /// the slice up twice; sources override it with one lookup.
    ///
    /// # Errors
    /// As [`RawSource::raw`].
    fn raw_quiet(
        &self,
        p: &Position,
        threat: &dyn Fn() -> bool,
    ) -> Result<Option<Wld>, ProbeError> {
        let s = Slice::of(p);
        if self.threats_dont_care(&s)? && threat() {
            return Ok(None);
        }
        let index = with_index(&s, |ix| ix.rank(p));
        self.raw(&s, index).map(Some)
    }

    /// Told the value `value` (for Black, to move) that a search found for the quiet
    /// Black-to-move position `p` after [`RawSource::raw_quiet`] answered `None` for it, so
    /// that the source may remember it (the [`super::Tablebase`] does, in a bounded table: a
    /// second probe of `p` then costs one lookup). The default forgets it.
    fn threat_resolved(&self, p: &Position, value: Wld) {
        let _ = (p, value);
    }
}

/// Run `f` with the (per-thread cached) [`SliceIndex`] of `s`.
pub fn with_index<R>(s: &Slice, f: impl FnOnce(&SliceIndex) -> R) -> R {
    thread_local! {
        static INDEXES: RefCell<HashMap<Slice, Arc<SliceIndex>>> = RefCell::new(HashMap::new());
    }
    let ix = INDEXES.with(|m| {
        let mut m = m.borrow_mut();
        if let Some(ix) = m.get(s) {
            return ix.clone();
        }
        if m.len() > 4096 {
            m.clear();
        }
        let ix = Arc::new(SliceIndex::new(*s));
        m.insert(*s, ix.clone());
        ix
    });
    f(&ix)
}

/// [`resolve_with`] under English rules ([`English`], the fast engine).
///
/// # Errors
/// As [`resolve_with`].
#[inline]
pub fn resolve<S: RawSource + ?Sized>(src: &S, pos: &Position) -> Result<Wld, ProbeError> {
    resolve_with(English, src, pos)
}

/// Exact value for the side to move of any position under `rules`, looking quiet positions up
/// in `src`.
///
/// - No legal move (or no pieces): the terminal rule, [`Rules::no_move_value`] ([`Wld::Loss`]
///   in English, [`Wld::Win`] in giveaway), no table needed.
/// - The side to move must capture: the best of `negate(resolve(successor))` over the
///   de-duplicated capture successors, stopping at the first win. A successor whose lookup
///   fails does not hide a win found among the others; otherwise its error is returned (the
///   first one met), so a missing table is never read as a draw.
/// - Otherwise the stored value of `p.normalized()` ([`RawSource::raw_quiet`]), except in a
///   slice that stores no value at threat positions (codec 4,
///   [`RawSource::threats_dont_care`]): there a threat position (the side not to move has a
///   capture, [`is_threat`]) that resolves within [`THREAT_DEPTH`] plies (see
///   [`is_dont_care`]) is the best of `negate(resolve(successor))` over its quiet moves.
///   Codec-2 slices are read directly, with no extra move generation.
///
/// # Errors
/// Whatever `src` returns for a needed lookup.
pub fn resolve_with<R: Rules, S: RawSource + ?Sized>(
    rules: R,
    src: &S,
    pos: &Position,
) -> Result<Wld, ProbeError> {
    if rules.has_capture(pos) {
        return best_successor(rules, src, pos);
    }
    if !rules.has_quiet_move(pos) {
        return Ok(rules.no_move_value());
    }
    match src.raw_quiet(&pos.normalized(), &|| threat_search(rules, pos))? {
        Some(v) => Ok(v),
        // A threat position of a codec-4 slice (no value stored): a search over the quiet
        // moves. Each successor is a capture position (capture search), has no move, is no
        // threat position (one lookup) or is a threat position resolvable in one ply less:
        // the search is at most THREAT_DEPTH plies deep at this material.
        None => {
            let v = best_successor(rules, src, pos)?;
            src.threat_resolved(&pos.normalized(), v);
            Ok(v)
        }
    }
}

/// The best of `negate(resolve(successor))` over the successors of `pos` (which has a legal
/// move), stopping at the first win. A successor whose lookup fails does not hide a win found
/// among the others; otherwise its error is returned (the first one met).
pub(crate) fn best_successor<R: Rules, S: RawSource + ?Sized>(
    rules: R,
    src: &S,
    pos: &Position,
) -> Result<Wld, ProbeError> {
    best_of_successors(rules, pos, |succ| resolve_with(rules, src, succ))
}
