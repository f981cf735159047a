//! Verification of the depth-to-win files (`<slice>.dtw`, `egdb build --dtw`, issue 33), unit
//! by unit in build order after the unit's values are verified.
//!
//! Every stored depth of a won or lost position (captures and positions without a move
//! included) is re-derived from the successors given by the slow path generator (the oracle,
//! [`crate::movegen::Oracle`]), by the definition: no move: 0; a win: the minimum of 1 +
//! DTW(s) over the successors s lost for their side to move; a loss: the maximum of 1 + DTW(s)
//! over all successors. The values (win, loss, draw) of the position and its successors come
//! from the verified WLD tables with captures resolved by search over the oracle
//! ([`crate::probe::resolve_with`]); a successor without a move is a loss of depth 0 (no file
//! read); the depth of any other successor is the one stored for it: in the slice's own file
//! or its partner's (the unit, decoded whole), or in the file of a slice verified in an
//! earlier unit (read through [`Tablebase::stored_dtw`]). The header must hold the WLD file's
//! win and loss counts and, as `longest`, the largest re-derived depth.

use super::{walk, VerifyError, VerifyReport};
use crate::board::{Position, Wld};
use crate::index::SliceIndex;
use crate::probe::{resolve_with, ProbeError, RawSource, Tablebase};
use crate::rules::Rules;
use crate::slice::Slice;
use crate::table::dtw::{dtw_path, open_dtw, slice_of_dtw_file_name};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Verify the depths of one slice: `own` its stored depths (index order), `partner` those of
/// `slice.partner()`; `src` the (verified) WLD tables; `outside(s)` the stored depth of a
/// successor `s` in any other slice. Returns the positions checked and the largest depth
/// derived over the won and lost positions (0 when none).
///
/// # Errors
/// [`VerifyError::DtwMismatch`] for the lowest bad index; [`VerifyError::Probe`].
pub fn verify_dtw_slice<R: Rules, S: RawSource + ?Sized>(
    rules: R,
    src: &S,
    slice: &Slice,
    own: &[u32],
    partner: &[u32],
    outside: &(dyn Fn(&Position) -> Result<u32, ProbeError> + Sync),
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(u64, u32), VerifyError> {
    let index = SliceIndex::new(*slice);
    let partner_slice = slice.partner();
    let pindex = SliceIndex::new(partner_slice);
    let n = index.size();
    if own.len() as u64 != n || partner.len() as u64 != pindex.size() {
        return Err(VerifyError::DtwFile {
            slice: *slice,
            why: "its size or its partner's differs from the slice's".into(),
        });
    }
    const CHUNK: u64 = 1 << 14;
    let chunks = n.div_ceil(CHUNK);
    let perr = |e| VerifyError::Probe {
        slice: *slice,
        source: e,
    };
    // The stored depth of a successor that has a move.
    let depth = |s: &Position| -> Result<u32, ProbeError> {
        let sn = s.normalized();
        let t = Slice::of(&sn);
        if t == *slice {
            Ok(own[index.rank(&sn) as usize])
        } else if t == partner_slice {
            Ok(partner[pindex.rank(&sn) as usize])
        } else {
            outside(s)
        }
    };
    let longest = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let (start, end) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
            let mut longest = 0u32;
            walk(&index, start, end, |i, p| {
                let v = resolve_with(rules, src, p).map_err(perr)?;
                if v == Wld::Draw {
                    return Ok(());
                }
                let mut best: Option<u32> = None;
                let mut moves = 0u32;
                let mut err = None;
                rules.for_each_successor(p, |s| {
                    if err.is_some() {
                        return;
                    }
                    moves += 1;
                    let step = if !rules.has_move(&s) {
                        Ok((Wld::Loss, 0))
                    } else {
                        resolve_with(rules, src, &s).and_then(|sv| {
                            // Only the successors the definition reads need a depth.
                            let needed = match v {
                                Wld::Win => sv == Wld::Loss,
                                _ => sv != Wld::Draw,
                            };
                            Ok((sv, if needed { depth(&s)? } else { 0 }))
                        })
                    };
                    let (sv, d) = match step {
                        Ok(x) => x,
                        Err(e) => {
                            err = Some(e);
                            return;
                        }
                    };
                    let d = d.saturating_add(1);
                    match (v, sv) {
                        (Wld::Win, Wld::Loss) => best = Some(best.map_or(d, |b| b.min(d))),
                        // A draw or a loss after the loser's move cannot be (the values
                        // are verified); it leaves no depth.
                        (Wld::Loss, Wld::Win) => best = Some(best.map_or(d, |b| b.max(d))),
                        (Wld::Loss, _) => best = Some(u32::MAX),
                        _ => {}
                    }
                });
                if let Some(e) = err {
                    return Err(perr(e));
                }
                let derived = if moves == 0 {
                    0
                } else {
                    best.unwrap_or(u32::MAX)
                };
                if own[i as usize] != derived {
                    return Err(VerifyError::DtwMismatch {
                        slice: *slice,
                        index: i,
                        fen: p.to_fen(),
                        stored: own[i as usize],
                        derived,
                    });
                }
                longest = longest.max(derived);
                Ok(())
            })?;
            progress(end - start);
            Ok::<u32, VerifyError>(longest)
        })
        .collect::<Result<Vec<u32>, VerifyError>>()?
        .into_iter()
        .max()
        .unwrap_or(0);
    Ok((n, longest))
}

/// Presence of the depth-to-win files, checked before any value is: once any slice of `dir`
/// has a `.dtw` file, every slice of `infos` must (with `partial`, those of the largest piece
/// count `max_pieces` may lack one; counted in the returned number), each passes its
/// whole-file checksum, and no `.dtw` file is without its value file (`present`: every slice
/// with a value file, readable or not). Returns the errors and the absent files allowed.
pub(super) fn check_dtw_files(
    dir: &Path,
    infos: &[crate::stats::FileInfo],
    present: &HashSet<Slice>,
    partial: bool,
    max_pieces: u32,
) -> (Vec<VerifyError>, u64) {
    let mut errors = Vec::new();
    let mut absent = 0;
    let any = infos.iter().any(|f| dtw_path(dir, &f.slice).exists());
    for f in infos {
        let d = dtw_path(dir, &f.slice);
        if d.exists() {
            if let Err(e) =
                open_dtw(&d, crate::rules::english::ID).and_then(|t| t.verify_checksum())
            {
                errors.push(VerifyError::DtwFile {
                    slice: f.slice,
                    why: e.to_string(),
                });
            }
        } else if any && partial && f.slice.material.pieces() == max_pieces {
            absent += 1;
        } else if any {
            errors.push(VerifyError::DtwFile {
                slice: f.slice,
                why: "the depth-to-win file is missing (other slices have one; rebuild with \
                      egdb build --dtw)"
                    .into(),
            });
        }
    }
    let mut orphans: Vec<Slice> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| slice_of_dtw_file_name(e.file_name().to_str()?))
        .filter(|s| !present.contains(s))
        .collect();
    orphans.sort();
    for s in orphans {
        errors.push(VerifyError::DtwFile {
            slice: s,
            why: format!(
                "a depth-to-win file without its value file {}: delete it or rebuild the slice",
                crate::table::table_path(dir, &s).display()
            ),
        });
    }
    (errors, absent)
}

/// The depth-to-win files of `files` (one unit's slices, whose values are verified; every
/// `.dtw` file's checksum and presence were checked before): counts against the WLD header,
/// [`verify_dtw_slice`], the header's `longest` against the largest depth derived. `tb`: the
/// tables of `dir`, opened on first use, for the depths of successors in slices verified in
/// earlier units. `absent_ok`: the piece count whose files may be absent (`--partial`); a
/// slice whose partner's file is absent is then left unchecked. A slice the journal records as
/// verified is skipped (counted among the earlier ones), one verified here is recorded.
/// Returns the bad files' errors.
///
/// # Errors
/// [`VerifyError::Journal`] when a record cannot be written.
#[allow(clippy::too_many_arguments)]
pub(super) fn verify_dtw_files<S: RawSource + ?Sized>(
    dir: &Path,
    src: &S,
    tb: &std::sync::OnceLock<Result<Tablebase, ProbeError>>,
    files: &[&crate::stats::FileInfo],
    absent_ok: Option<u32>,
    journal: &mut Option<super::journal::Journal>,
    rep: &mut VerifyReport,
    progress: &(dyn Fn(&Slice, u64, u64) + Sync),
) -> Result<Vec<VerifyError>, VerifyError> {
    let bad = |s: &Slice, why: String| VerifyError::DtwFile { slice: *s, why };
    let mut errors = Vec::new();
    let mut decoded: HashMap<Slice, Option<Vec<u32>>> = HashMap::new();
    let mut decode = |s: &Slice, errors: &mut Vec<VerifyError>| -> bool {
        if !decoded.contains_key(s) {
            let path = dtw_path(dir, s);
            let d = if path.exists() {
                match open_dtw(&path, crate::rules::english::ID).and_then(|f| f.decode_all()) {
                    Ok(d) => Some(d),
                    Err(e) => {
                        errors.push(bad(s, e.to_string()));
                        None
                    }
                }
            } else {
                None
            };
            decoded.insert(*s, d);
        }
        decoded[s].is_some()
    };
    // Decode first, then verify (the closure above borrows `decoded` mutably).
    let mut todo = Vec::new();
    for f in files {
        let path = dtw_path(dir, &f.slice);
        if !path.exists() {
            continue;
        }
        if let Some(n) = journal
            .as_ref()
            .and_then(|j| j.done(super::journal::Part::Dtw, &f.slice))
        {
            // Verified by an earlier run: its checksum was checked again before.
            rep.earlier_slices += 1;
            rep.earlier_positions += n;
            continue;
        }
        let hdr = match open_dtw(&path, crate::rules::english::ID) {
            Ok(h) => h,
            Err(e) => {
                errors.push(bad(&f.slice, e.to_string()));
                continue;
            }
        };
        let (dm, m) = (hdr.meta(), &f.meta);
        if dm.slice != f.slice || (dm.wins, dm.losses) != (m.wins, m.losses) {
            errors.push(bad(
                &f.slice,
                format!(
                    "slice {}, {} wins, {} losses; the WLD file says {}, {}, {}",
                    dm.slice, dm.wins, dm.losses, f.slice, m.wins, m.losses
                ),
            ));
            continue;
        }
        let partner = f.slice.partner();
        if !decode(&f.slice, &mut errors) {
            continue;
        }
        if !decode(&partner, &mut errors) {
            let partner_absent = !dtw_path(dir, &partner).exists();
            if partner_absent && absent_ok == Some(partner.material.pieces()) {
                rep.dtw_unchecked += 1;
            } else if partner_absent {
                errors.push(bad(
                    &f.slice,
                    format!("the partner slice {partner} has no depth-to-win file"),
                ));
            }
            continue;
        }
        todo.push((*f, dm.longest));
    }
    for (f, header_longest) in todo {
        let (Some(own), Some(other)) = (
            decoded[&f.slice].as_deref(),
            decoded[&f.slice.partner()].as_deref(),
        ) else {
            continue;
        };
        let tb = tb.get_or_init(|| {
            Tablebase::builder(dir)
                .cache_bytes(64 << 20)
                .allow_empty(true)
                .open()
        });
        let tb = match tb {
            Ok(tb) => tb,
            Err(e) => {
                errors.push(VerifyError::Probe {
                    slice: f.slice,
                    source: e.clone(),
                });
                continue;
            }
        };
        let outside = |s: &Position| tb.stored_dtw(s);
        let tick = |k: u64| progress(&f.slice, k, f.meta.positions);
        match verify_dtw_slice(
            crate::movegen::Oracle,
            src,
            &f.slice,
            own,
            other,
            &outside,
            &tick,
        ) {
            Ok((n, longest)) if longest == header_longest => {
                rep.dtw_positions += n;
                rep.dtw_slices += 1;
                if let Some(j) = journal {
                    j.record(super::journal::Part::Dtw, &f.slice, f.meta.positions)?;
                }
            }
            Ok((_, longest)) => errors.push(bad(
                &f.slice,
                format!(
                    "the header's longest depth is {header_longest}, the largest re-derived \
                     depth {longest}"
                ),
            )),
            Err(e) => errors.push(e),
        }
    }
    Ok(errors)
}
