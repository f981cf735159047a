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

/// Positions where two WLD solutions of the same unit differ, as
/// (values, capture flags, resolution plies, first position `(slice number, index)`).
fn wld_differences(
    a: &[SolvedSlice],
    b: &[SolvedSlice],
) -> (u64, u64, u64, Option<(usize, usize)>) {
    let (mut values, mut captures, mut plies) = (0u64, 0u64, 0u64);
    let mut first = None;
    if a.len() != b.len() {
        return (u64::MAX, u64::MAX, u64::MAX, Some((0, 0)));
    }
    for (x, (p, q)) in a.iter().zip(b).enumerate() {
        if p.slice != q.slice || p.values.len() != q.values.len() {
            return (u64::MAX, u64::MAX, u64::MAX, Some((x, 0)));
        }
        let no_plies: &[u16] = &[];
        let pp = p.resolution_plies.as_deref().unwrap_or(no_plies);
        let qp = q.resolution_plies.as_deref().unwrap_or(no_plies);
        for i in 0..p.values.len() {
            let dv = p.values[i] != q.values[i];
            let dc = p.captures[i] != q.captures[i];
            let dp = pp.get(i) != qp.get(i);
            values += u64::from(dv);
            captures += u64::from(dc);
            plies += u64::from(dp);
            if (dv || dc || dp) && first.is_none() {
                first = Some((x, i));
            }
        }
    }
    (values, captures, plies, first)
}

/// Distances that differ between two distance passes of the same unit.
fn dtc_differences(a: &[DtcSlice], b: &[DtcSlice]) -> u64 {
    if a.len() != b.len() {
        return u64::MAX;
    }
    a.iter()
        .zip(b)
        .map(|(p, q)| {
            if p.dtc.len() != q.dtc.len() {
                return u64::MAX;
            }
            p.dtc.iter().zip(&q.dtc).filter(|(x, y)| x != y).count() as u64
        })
        .fold(0u64, u64::saturating_add)
}

/// After the distance pass of a unit failed with `first_err` (a [`BuildError::Inconsistent`])
/// on the WLD solution `first`: run the distance pass on `first` again (`dtc_of`), solve the
/// unit again (`solve_again`) and run the distance pass on that solution.
///
/// The second solution, its distances and a note saying what happened (for the build's
/// output) are returned only when the second WLD solution equals `first` (values, capture
/// flags and resolution plies of every position) and, with R1 the rerun on `first` and R2 the
/// pass on the second solution:
/// - both succeed with identical distances: accepted;
/// - both succeed with different distances: [`BuildError::Unreproducible`];
/// - exactly one fails: the distance pass disagrees with itself on identical input,
///   [`BuildError::Unreproducible`];
/// - both fail: the fault repeats, R2's error is returned (a solver bug to report, never a
///   value to write).
///
/// # Errors
/// [`BuildError::Unreproducible`] as above, or when the second WLD solution differs from the
/// first; the errors of `solve_again` (a dependency that cannot be read) and of R2.
pub fn recheck_unit(
    unit: &str,
    first: &[SolvedSlice],
    first_err: &BuildError,
    solve_again: impl FnOnce() -> Result<Vec<SolvedSlice>, BuildError>,
    dtc_of: impl Fn(&[SolvedSlice]) -> Result<Vec<DtcSlice>, BuildError>,
) -> Result<(Vec<SolvedSlice>, Vec<DtcSlice>, String), BuildError> {
    let unreproducible = |detail: String| BuildError::Unreproducible {
        unit: unit.to_string(),
        detail: format!("{first_err}; then {detail}"),
    };
    let r1 = dtc_of(first);
    let second = solve_again()?;
    let (dv, dc, dp, at) = wld_differences(first, &second);
    if let Some((x, i)) = at {
        return Err(unreproducible(format!(
            "the WLD pass run again gave other results: {dv} values, {dc} capture flags and \
             {dp} resolution plies differ (the first at position {i} of {})",
            first.get(x).map_or("?".into(), |s| s.slice.to_string())
        )));
    }
    let r2 = dtc_of(&second);
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
        (Ok(d1), Ok(d2)) => {
            let n = dtc_differences(&d1, &d2);
            if n != 0 {
                return Err(unreproducible(format!(
                    "two more distance passes on identical WLD solutions agreed with them but \
                     differ in {n} distances"
                )));
            }
            let note = format!(
                "unit {unit}: {first_err}. Solved again: the WLD pass gave identical values, \
                 capture flags and resolution plies, and two more distance passes agreed with \
                 them and with each other; the unit's files are written from the second run. \
                 A fault that did not repeat (in the solver or the machine): please report it, \
                 and check the tables with `egdb verify`"
            );
            Ok((second, d2, note))
        }
    }
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
            &first,
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
        for (v, p) in [([0u8, 2, 2], P), (V, [2u16, 4, u16::MAX])] {
            let first = wld(&V, &P);
            let e = recheck_unit(
                "0202-nn",
                &first,
                &inconsistent(),
                || Ok(wld(&v, &p)),
                scripted(vec![Some(vec![2, 3, 9]), Some(vec![2, 3, 9])]),
            )
            .unwrap_err();
            assert!(matches!(e, BuildError::Unreproducible { .. }), "{e}");
            assert!(
                e.to_string().contains("1 values") || e.to_string().contains("1 resolution plies"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_capture_flag_that_differs_stops_the_build() {
        let first = wld(&V, &P);
        let mut second = wld(&V, &P);
        second[0].captures.set(2, true);
        let e = recheck_unit(
            "0202-nn",
            &first,
            &inconsistent(),
            || Ok(second),
            scripted(vec![Some(vec![2, 3, 9]), Some(vec![2, 3, 9])]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("1 capture flags"), "{e}");
    }

    #[test]
    fn a_repeated_inconsistency_is_returned_as_it_is() {
        let first = wld(&V, &P);
        let e = recheck_unit(
            "0202-nn",
            &first,
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
                &first,
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
            &first,
            &inconsistent(),
            || Err(BuildError::Options("dependency gone".into())),
            scripted(vec![Some(vec![2, 3, 9]), Some(vec![2, 3, 9])]),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "dependency gone");
    }
}
