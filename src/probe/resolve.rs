//! Capture resolution: [`resolve`] turns any position into lookups of quiet Black-to-move
//! positions in a [`RawSource`].

use super::error::ProbeError;
use crate::board::{Position, Wld};
use crate::index::SliceIndex;
use crate::rules::{English, Rules};
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
    fn raw_position(&self, p: &Position) -> Result<Wld, ProbeError> {
        let s = Slice::of(p);
        let index = with_index(&s, |ix| ix.rank(p));
        self.raw(&s, index)
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

/// Whether the side to move has a non-capturing move under English rules
/// ([`Rules::has_quiet_move`] of [`English`]). Together with [`Position::has_capture`] this
/// decides "has a legal move".
#[inline]
pub fn has_quiet_move(p: &Position) -> bool {
    English.has_quiet_move(p)
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
/// - No legal move (or no pieces): [`Wld::Loss`], no table needed.
/// - The side to move must capture: the best of `negate(resolve(successor))` over the
///   de-duplicated capture successors, stopping at the first win. A successor whose lookup
///   fails does not hide a win found among the others; otherwise its error is returned (the
///   first one met), so a missing table is never read as a draw.
/// - Otherwise: `src.raw_position(&p.normalized())`.
///
/// # Errors
/// Whatever `src` returns for a needed lookup.
pub fn resolve_with<R: Rules, S: RawSource + ?Sized>(
    rules: R,
    src: &S,
    pos: &Position,
) -> Result<Wld, ProbeError> {
    if rules.has_capture(pos) {
        let mut best = Wld::Loss;
        let mut err = None;
        // Successors without allocating; once a win is found the rest are skipped.
        rules.for_each_successor(pos, |succ| {
            if best == Wld::Win {
                return;
            }
            match resolve_with(rules, src, &succ) {
                Ok(v) => best = best.max(v.negate()),
                Err(e) => {
                    if err.is_none() {
                        err = Some(e);
                    }
                }
            }
        });
        if best == Wld::Win {
            return Ok(Wld::Win);
        }
        return match err {
            Some(e) => Err(e),
            None => Ok(best),
        };
    }
    if !rules.has_quiet_move(pos) {
        return Ok(Wld::Loss);
    }
    src.raw_position(&pos.normalized())
}
