//! A second look at a unit whose distance pass disagreed with its win/loss/draw solution.
//!
//! The distance pass ([`super::solve::solve_dtc_unit`]) re-derives the values of the unit's
//! king-move positions and checks them against the WLD solution it was given; the two are
//! computed from the same rules, so a disagreement is a fault: a solver bug (then it repeats)
//! or a fault of the machine (then it does not). Twice, in full 7-piece builds sharing a 2-core
//! machine with other heavy work, a unit stopped with that error and then solved consistently
//! on every rerun (docs/scaling.md, "An intermittent distance-pass inconsistency"). Instead of
//! stopping a build of hours there, [`recheck_unit`] runs the unit again and accepts it only
//! when the second run reproduces the first WLD solution exactly and the distance passes of the
//! reruns agree with it and with each other; otherwise the build stops with
//! [`BuildError::Unreproducible`] or the repeated error. Either way the caller reports what
//! happened (the returned note), and nothing of the first, inconsistent run is written.

use super::solve::{DtcSlice, SolvedSlice};
use super::BuildError;
use xxhash_rust::xxh64::Xxh64;

/// Digests of one WLD solution, per slice: (slice name, values, capture flags, resolution
/// plies). Kept instead of the arrays, so that a recheck holds no second copy of a unit (about
/// 3 bytes per position, 15 GB for the largest 8-piece unit).
pub(super) type WldDigest = Vec<(String, u64, u64, u64)>;

pub(super) fn wld_digest(w: &[SolvedSlice]) -> WldDigest {
    w.iter()
        .map(|s| {
            let mut v = Xxh64::new(0);
            v.update(&(s.values.len() as u64).to_le_bytes());
            v.update(&s.values);
            let mut c = Xxh64::new(0);
            c.update(&(s.captures.len() as u64).to_le_bytes());
            for w in s.captures.as_raw_slice() {
                c.update(&w.to_le_bytes());
            }
            let mut p = Xxh64::new(0);
            match &s.resolution_plies {
                None => p.update(b"none"),
                Some(pl) => {
                    for x in pl {
                        p.update(&x.to_le_bytes());
                    }
                }
            }
            (s.slice.to_string(), v.digest(), c.digest(), p.digest())
        })
        .collect()
}

/// Digest of the distances of a unit's slices (with their lengths).
pub(super) fn dtc_digest(d: &[DtcSlice]) -> u64 {
    let mut h = Xxh64::new(0);
    for s in d {
        h.update(&(s.dtc.len() as u64).to_le_bytes());
        for x in &s.dtc {
            h.update(&x.to_le_bytes());
        }
    }
    h.digest()
}

/// What differs between two WLD digests, in words ("values of 0313-n5, resolution plies of
/// 1303-5n").
fn digest_differences(a: &WldDigest, b: &WldDigest) -> Option<String> {
    if a.len() != b.len() || a.iter().zip(b).any(|(x, y)| x.0 != y.0) {
        return Some("the slices".into());
    }
    let mut parts = Vec::new();
    for (x, y) in a.iter().zip(b) {
        for (what, p, q) in [
            ("values", x.1, y.1),
            ("capture flags", x.2, y.2),
            ("resolution plies", x.3, y.3),
        ] {
            if p != q {
                parts.push(format!("{what} of {}", x.0));
            }
        }
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// After the distance pass of a unit failed with `first_err` (a [`BuildError::Inconsistent`])
/// on the WLD solution `first`: run the distance pass on `first` again (`dtc_of`), solve the
/// unit again (`solve_again`) and run the distance pass on that solution. `first` is reduced
/// to digests and dropped before the second solve, and the rerun's distances to a digest, so
/// the recheck needs no more memory than the first run.
///
/// The second solution, its distances and a note saying what happened (for the build's
/// output) are returned only when the second WLD solution equals `first` (the digests of the
/// values, capture flags and resolution plies of every slice) and, with R1 the rerun on
/// `first` and R2 the pass on the second solution:
/// - both succeed with identical distances: accepted;
/// - both succeed with different distances: [`BuildError::Unreproducible`];
/// - exactly one fails with an inconsistency: the distance pass disagrees with itself on
///   identical input, [`BuildError::Unreproducible`];
/// - both fail with an inconsistency: the fault repeats, R2's error is returned (a solver bug
///   to report, never a value to write).
///
/// Any other error of R1, R2 or `solve_again` (a dependency that cannot be read, a distance
/// too long) is returned as it is.
///
/// # Errors
/// As above.
pub fn recheck_unit(
    unit: &str,
    first: Vec<SolvedSlice>,
    first_err: &BuildError,
    solve_again: impl FnOnce() -> Result<Vec<SolvedSlice>, BuildError>,
    dtc_of: impl Fn(&[SolvedSlice]) -> Result<Vec<DtcSlice>, BuildError>,
) -> Result<(Vec<SolvedSlice>, Vec<DtcSlice>, String), BuildError> {
    let pass = |w: &Vec<SolvedSlice>| match dtc_of(w) {
        Ok(d) => Ok(Ok(d)),
        Err(e @ BuildError::Inconsistent { .. }) => Ok(Err(e)),
        Err(e) => Err(e),
    };
    recheck_unit_with(
        unit,
        first,
        first_err,
        solve_again,
        pass,
        |w| wld_digest(w),
        |b| b,
    )
}

/// The distance pass's outcome for [`recheck_unit_with`]: the distances, or the error of an
/// inconsistency (`Err`); other errors are the outer `Result`'s.
pub(super) type PassOutcome = Result<Vec<DtcSlice>, BuildError>;

/// [`recheck_unit`] for a WLD solution of any form `S` (the unit's slices, or one rank's
/// ranges of a unit split over ranks), with `digest` its digests, `dtc_of` a distance pass
/// on it (`Ok(Err(e))` an inconsistency), and `any` telling whether a condition holds on
/// some rank (the identity in one process; an all-reduce over the ranks of a split unit,
/// so that every rank takes the same branch: each decision below is made collectively).
pub(super) fn recheck_unit_with<S>(
    unit: &str,
    first: S,
    first_err: &BuildError,
    solve_again: impl FnOnce() -> Result<S, BuildError>,
    dtc_of: impl Fn(&S) -> Result<PassOutcome, BuildError>,
    digest: impl Fn(&S) -> WldDigest,
    any: impl Fn(bool) -> bool,
) -> Result<(S, Vec<DtcSlice>, String), BuildError> {
    let unreproducible = |detail: String| BuildError::Unreproducible {
        unit: unit.to_string(),
        detail: format!("{first_err}; then {detail}"),
    };
    let r1 = dtc_of(&first)?.map(|d| dtc_digest(&d));
    let first_digest = digest(&first);
    drop(first);
    let second = solve_again()?;
    let differs = digest_differences(&first_digest, &digest(&second));
    if any(differs.is_some()) {
        let what = differs.unwrap_or_else(|| "values on another rank".into());
        return Err(unreproducible(format!(
            "the WLD pass run again gave other results ({what} differ)"
        )));
    }
    let r2 = dtc_of(&second)?;
    match (r1, r2) {
        (Err(_), Err(e2)) => Err(e2),
        (Ok(_), Err(e2)) => Err(unreproducible(format!(
            "the distance pass run again on the same WLD solution agreed with it, but failed \
             again on the identical solution of a second WLD pass: {e2}"
        ))),
        (Err(e1), Ok(_)) => Err(unreproducible(format!(
            "the distance pass run again on the same WLD solution failed again ({e1}), but \
             agreed with the identical solution of a second WLD pass"
        ))),
        (Ok(h1), Ok(d2)) => {
            if any(h1 != dtc_digest(&d2)) {
                return Err(unreproducible(
                    "two more distance passes on identical WLD solutions agreed with them but \
                     gave different distances"
                        .into(),
                ));
            }
            let note = format!(
                "unit {unit}: {first_err}. Solved again: the WLD pass gave identical values, \
                 capture flags and resolution plies, and two more distance passes agreed with \
                 them and with each other, so the first distance pass was the faulty one; the unit's \
                 files will be written from the second run. A fault that did not repeat (in the \
                 solver or the machine): please report it, and check the tables with `egdb verify`"
            );
            Ok((second, d2, note))
        }
    }
}

/// After the distance pass of a unit whose value files exist failed with `first_err` (an
/// inconsistency): two more passes from the files (`pass`: `Ok(Err(e))` an inconsistency),
/// which must both agree with the values and give the same distances (`any`: whether a
/// condition holds on some rank, as in [`recheck_unit_with`]). Returns the last pass's
/// distances and the note for the build's output.
///
/// # Errors
/// The second or third pass's error (an inconsistency again: the fault repeats), or
/// [`BuildError::Unreproducible`] when they agree with the values but not with each other.
pub(super) fn recheck_from_files(
    unit: &str,
    first_err: &BuildError,
    mut pass: impl FnMut() -> Result<PassOutcome, BuildError>,
    any: impl Fn(bool) -> bool,
) -> Result<(Vec<DtcSlice>, String), BuildError> {
    let d1 = dtc_digest(&pass()??);
    let d = pass()??;
    if any(dtc_digest(&d) != d1) {
        return Err(BuildError::Unreproducible {
            unit: unit.to_string(),
            detail: format!(
                "{first_err}; then two more distance passes from the files agreed with them \
                 but gave different distances"
            ),
        });
    }
    let note = format!(
        "unit {unit}: {first_err}. Run twice more from the value files, the distance pass \
         agreed with them and gave the same distances both times; the unit's files will be \
         written from the last run. A fault that did not repeat (in the solver or the \
         machine): please report it, and check the tables with `egdb verify`"
    );
    Ok((d, note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Wld;
    use crate::slice::Slice;
    use bitvec::prelude::{BitVec, Lsb0};
    use std::cell::Cell;

    fn wld(values: &[u8], plies: &[u16]) -> Vec<SolvedSlice> {
        vec![SolvedSlice {
            slice: "0202-nn".parse::<Slice>().unwrap(),
            values: values.to_vec(),
            captures: BitVec::<u64, Lsb0>::repeat(false, values.len()),
            resolution_plies: Some(plies.to_vec()),
            wins: 0,
            losses: 0,
            draws: 0,
            longest: 0,
            initial_seconds: 0.0,
            propagate_seconds: 0.0,
            plies: 0,
        }]
    }

    fn dtc(d: &[u16]) -> Vec<DtcSlice> {
        vec![DtcSlice {
            slice: "0202-nn".parse::<Slice>().unwrap(),
            dtc: d.to_vec(),
            wins: 0,
            losses: 0,
            longest: 0,
            dont_care: BitVec::repeat(false, d.len()),
            longest_win: None,
            longest_loss: None,
            seconds: 0.0,
        }]
    }

    fn inconsistent() -> BuildError {
        BuildError::Inconsistent {
            slice: "0202-nn".parse::<Slice>().unwrap(),
            index: 1,
            wld: Wld::Loss,
            dtc_pass: Wld::Draw,
        }
    }

    /// A distance pass whose outcomes are scripted run by run.
    fn scripted(
        outcomes: Vec<Option<Vec<u16>>>,
    ) -> impl Fn(&[SolvedSlice]) -> Result<Vec<DtcSlice>, BuildError> {
        let k = Cell::new(0usize);
        move |_| {
            let o = outcomes[k.get()].clone();
            k.set(k.get() + 1);
            o.map(|d| dtc(&d)).ok_or_else(inconsistent)
        }
    }

    const V: [u8; 3] = [0, 2, 1];
    const P: [u16; 3] = [2, 3, u16::MAX];

    #[test]
    fn a_fault_that_does_not_repeat_is_accepted_from_the_second_run() {
        let first = wld(&V, &P);
        let (w, d, note) = recheck_unit(
            "0202-nn",
            first,
            &inconsistent(),
            || Ok(wld(&V, &P)),
            scripted(vec![Some(vec![2, 3, 9]), Some(vec![2, 3, 9])]),
        )
        .unwrap();
        assert_eq!(w[0].values, V);
        assert_eq!(d[0].dtc, [2, 3, 9]);
        assert!(note.contains("did not repeat"), "{note}");
    }

    #[test]
    fn a_second_wld_solution_that_differs_stops_the_build() {
        for (v, p, what) in [
            ([0u8, 2, 2], P, "(values of 0202-nn differ)"),
            (
                V,
                [2u16, 4, u16::MAX],
                "(resolution plies of 0202-nn differ)",
            ),
        ] {
            let first = wld(&V, &P);
            let e = recheck_unit(
                "0202-nn",
                first,
                &inconsistent(),
                || Ok(wld(&v, &p)),
                scripted(vec![Some(vec![2, 3, 9]), Some(vec![2, 3, 9])]),
            )
            .unwrap_err();
            assert!(matches!(e, BuildError::Unreproducible { .. }), "{e}");
            assert!(e.to_string().contains(what), "{e}");
        }
    }

    #[test]
    fn other_errors_of_the_reruns_are_returned_as_they_are() {
        // R1 fails with a dependency error: returned at once, whatever R2 would give.
        let k = Cell::new(0);
        let e = recheck_unit(
            "0202-nn",
            wld(&V, &P),
            &inconsistent(),
            || Ok(wld(&V, &P)),
            |_| {
                k.set(k.get() + 1);
                Err(BuildError::Options("unreadable dependency".into()))
            },
        )
        .unwrap_err();
        assert_eq!(
            (e.to_string().as_str(), k.get()),
            ("unreadable dependency", 1)
        );
        // R2 fails so.
        let k = Cell::new(0);
        let e = recheck_unit(
            "0202-nn",
            wld(&V, &P),
            &inconsistent(),
            || Ok(wld(&V, &P)),
            |_| {
                k.set(k.get() + 1);
                if k.get() == 1 {
                    Ok(dtc(&[2, 3, 9]))
                } else {
                    Err(BuildError::Options("unreadable dependency".into()))
                }
            },
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "unreadable dependency");
    }

    #[test]
    fn a_capture_flag_that_differs_stops_the_build() {
        let first = wld(&V, &P);
        let mut second = wld(&V, &P);
        second[0].captures.set(2, true);
        let e = recheck_unit(
            "0202-nn",
            first,
            &inconsistent(),
            || Ok(second),
            scripted(vec![Some(vec![2, 3, 9]), Some(vec![2, 3, 9])]),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("capture flags of 0202-nn differ"),
            "{e}"
        );
    }

    #[test]
    fn a_repeated_inconsistency_is_returned_as_it_is() {
        let first = wld(&V, &P);
        let e = recheck_unit(
            "0202-nn",
            first,
            &inconsistent(),
            || Ok(wld(&V, &P)),
            scripted(vec![None, None]),
        )
        .unwrap_err();
        assert!(matches!(e, BuildError::Inconsistent { .. }), "{e}");
    }

    #[test]
    fn distance_passes_that_disagree_with_each_other_stop_the_build() {
        for script in [
            vec![None, Some(vec![2, 3, 9])],
            vec![Some(vec![2, 3, 9]), None],
            vec![Some(vec![2, 3, 9]), Some(vec![2, 5, 9])],
        ] {
            let first = wld(&V, &P);
            let e = recheck_unit(
                "0202-nn",
                first,
                &inconsistent(),
                || Ok(wld(&V, &P)),
                scripted(script),
            )
            .unwrap_err();
            assert!(matches!(e, BuildError::Unreproducible { .. }), "{e}");
        }
    }

    #[test]
    fn a_failing_second_solve_is_returned() {
        let first = wld(&V, &P);
        let e = recheck_unit(
            "0202-nn",
            first,
            &inconsistent(),
            || Err(BuildError::Options("dependency gone".into())),
            scripted(vec![Some(vec![2, 3, 9]), Some(vec![2, 3, 9])]),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "dependency gone");
    }
}
