//! The one build driver: everything a build decides once, whoever runs its units.
//!
//! [`drive`] checks the options, creates and locks the directory ([`DirLock`]), chooses the
//! units (all of a piece count, or a `--slice` with or without its dependencies), the codec
//! (given, or the directory's), reports damaged files, checks every dependency before the
//! first unit is solved, and leaves the complete units alone (resume). The units left are
//! handed to a [`Runner`]: [`LocalRunner`] solves them one after the other on this process's
//! threads with a background writer; the MPI front end (`egdb build --mpi`) hands them to the
//! ranks of a job. Either way a unit is solved by [`solve_unit`] (the WLD pass, then the
//! distance pass of `--dtc`, rechecked on an inconsistency) and written by [`write_unit`], so
//! the files are the same bytes whoever built them.
//!
//! A second distance metric hooks in at one place: [`solve_unit`] (its pass after the WLD
//! solution, like the DTC pass) and [`write_unit`] (its files).

use super::{
    codec_mismatch, damaged_file, dir_writable, first_missing_dependency, names, recheck,
    remove_stale_temp_files, resume_codec, solve, unit_dtc_complete, valid_file_codec, BuildError,
    BuildObserver, BuildOptions, BuildSummary, DecodedTables, DirLock, NoProgress, Unit,
    UnitReport, LOCK_FILE, MAX_BUILD_PIECES,
};
use crate::plan::build_order;
use crate::slice::Slice;
use crate::table::{dtc_path, table_path, WriteOptions};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One unit left to build, as the driver hands it to a [`Runner`].
#[derive(Clone, Copy, Debug)]
pub struct UnitJob<'a> {
    /// The unit (a slice and its colour-mirror partner).
    pub unit: &'a Unit,
    /// Its WLD files are complete: only its distance files are built (`--dtc`).
    pub wld_done: bool,
}

/// What a [`Runner`] is given: the units left, in build order (each unit's dependencies are
/// present in the directory or earlier in `jobs`), and how to write them.
#[derive(Debug)]
pub struct BuildPlan<'a> {
    /// The build's options (directory, `--memory`, `--dtc`).
    pub opts: &'a BuildOptions,
    /// The value codec of the WLD files written.
    pub codec: u32,
    /// The units to build, in build order.
    pub jobs: Vec<UnitJob<'a>>,
    /// The slices whose files exist in the directory when the build starts.
    pub present: HashSet<Slice>,
}

impl BuildPlan<'_> {
    /// The per-unit settings every unit of this build is solved and written with.
    pub fn unit_options(&self, job: &UnitJob<'_>) -> UnitOptions {
        UnitOptions {
            wld_done: job.wld_done,
            dtc: self.opts.dtc,
            codec: self.codec,
        }
    }
}

/// How the units of a build are run: on this process's threads ([`LocalRunner`]) or on the
/// ranks of an MPI job (the `egdb build --mpi` front end).
pub trait Runner {
    /// Solve and write every unit of `plan.jobs` (each with [`solve_unit`] and
    /// [`write_unit`]), reporting progress to `observer`; returns the totals of the units
    /// built (counts, bytes, times; `codec`, `slices_skipped`, `dtc_skipped`, `seconds` and
    /// `store` may be left at zero: the driver fills them where the runner does not).
    ///
    /// # Errors
    /// The first unit that failed ([`BuildError`]).
    fn run(
        &mut self,
        plan: &BuildPlan<'_>,
        observer: &dyn BuildObserver,
    ) -> Result<BuildSummary, BuildError>;

    /// Whether the driver refuses, before the first unit is solved, a budget
    /// ([`BuildOptions::memory`]) below what a unit holds whole with the previous unit's values
    /// waiting for the writer ([`crate::memory::minimum_budget`]): what [`LocalRunner`] holds.
    /// A runner that sizes its memory otherwise (the MPI runner splits the units that do not
    /// fit one rank, [`split_unit`], and writes each unit before the next) returns false and
    /// checks for itself.
    fn checks_unit_memory(&self) -> bool {
        true
    }
}

/// How one unit is solved and written ([`solve_unit`], [`write_unit`]).
#[derive(Clone, Copy, Debug)]
pub struct UnitOptions {
    /// The unit's WLD files exist: only the distance pass runs, from them (`dtc` must be set).
    pub wld_done: bool,
    /// Also the distance-to-conversion pass and files.
    pub dtc: bool,
    /// Value codec of the WLD files written.
    pub codec: u32,
}

/// One unit solved by [`solve_unit`].
#[derive(Debug, Default)]
pub struct SolvedUnit {
    /// The WLD solution of each slice (empty when [`UnitOptions::wld_done`]); with `dtc`, with
    /// the resolution plies.
    pub wld: Vec<solve::SolvedSlice>,
    /// The distance files' contents of each slice (`dtc`), else empty.
    pub dtc: Vec<solve::DtcSlice>,
    /// The solve's times, plies, distance-file count and recheck notes (no WLD counts: those
    /// come from writing).
    pub summary: BuildSummary,
    /// The rules the unit was solved under (the dependency store's): their id goes into the
    /// headers [`write_unit`] writes.
    pub rules: crate::rules::Variant,
}

/// Solve one unit: its WLD values by retrograde analysis from the dependencies in `deps`
/// (unless [`UnitOptions::wld_done`]), then, with [`UnitOptions::dtc`], its distance pass
/// (from the values just solved, or from its WLD files). A distance pass that disagrees with
/// the values once is rechecked (`recheck`): the note goes to
/// [`BuildObserver::unit_rechecked`] and [`BuildSummary::rechecked`]. `observer` also gets
/// the initial pass's progress. The unit's values are not handed to `deps`.
///
/// # Errors
/// [`BuildError::Dependency`] (a missing or corrupt table), [`BuildError::Inconsistent`] or
/// [`BuildError::Unreproducible`] (the distance pass), [`BuildError::Options`] (a distance
/// too long for the format).
pub fn solve_unit(
    unit: &Unit,
    deps: &DecodedTables,
    uo: &UnitOptions,
    observer: &dyn BuildObserver,
) -> Result<SolvedUnit, BuildError> {
    let u = unit;
    let tick = |n: u64| observer.progress(n);
    let t0 = Instant::now();
    if uo.wld_done {
        if !uo.dtc {
            return Ok(SolvedUnit {
                rules: deps.variant(),
                ..SolvedUnit::default()
            });
        }
        // Only the distance files: WLD values from the files. An inconsistency gets two more
        // passes (over the same values, decoded and resolved again by the store), which must
        // agree with the values and with each other.
        let mut rechecked = Vec::new();
        let dtc = match super::dtc_unit_with(u, deps, None) {
            Err(first @ BuildError::Inconsistent { .. }) => {
                let pass = || match super::dtc_unit_with(u, deps, None) {
                    Ok(d) => Ok(Ok(d)),
                    Err(e @ BuildError::Inconsistent { .. }) => Ok(Err(e)),
                    Err(e) => Err(e),
                };
                let (d, note) =
                    recheck::recheck_from_files(&names(&u.slices), &first, pass, |b| b)?;
                observer.unit_rechecked(u, &note);
                rechecked.push(note);
                d
            }
            r => r?,
        };
        tick(u.sizes.iter().sum());
        let secs = t0.elapsed().as_secs_f64();
        return Ok(SolvedUnit {
            wld: Vec::new(),
            summary: BuildSummary {
                solve_seconds: secs,
                dtc_seconds: secs,
                dtc_files: dtc.len() as u64,
                rechecked,
                ..Default::default()
            },
            dtc,
            rules: deps.variant(),
        });
    }
    let sopts = solve::SolveOptions {
        record_plies: uo.dtc,
    };
    let (solved, mut r) = super::solve_unit_with_opts(u, deps, &tick, &sopts)?;
    // A second distance metric runs here, after the WLD solution, as the DTC pass does.
    let (solved, dtc) = if uo.dtc {
        let t1 = Instant::now();
        let (solved, d) = match super::dtc_unit_with(u, deps, Some(&solved)) {
            Ok(d) => (solved, d),
            Err(first @ BuildError::Inconsistent { .. }) => {
                // (The recheck's time, a second WLD solve included, is counted as
                // distance-pass time.)
                let (again, d, note) = recheck::recheck_unit(
                    &names(&u.slices),
                    solved,
                    &first,
                    || super::solve_unit_with_opts(u, deps, &|_| {}, &sopts).map(|(s, _)| s),
                    |w| super::dtc_unit_with(u, deps, Some(w)),
                )?;
                observer.unit_rechecked(u, &note);
                r.rechecked.push(note);
                (again, d)
            }
            Err(e) => return Err(e),
        };
        let secs = t1.elapsed().as_secs_f64();
        r.solve_seconds += secs;
        r.dtc_seconds += secs;
        r.dtc_files += d.len() as u64;
        (solved, d)
    } else {
        (solved, Vec::new())
    };
    Ok(SolvedUnit {
        wld: solved,
        dtc,
        summary: r,
        rules: deps.variant(),
    })
}

/// Write the files of a unit solved by [`solve_unit`] into `dir` (atomically, see
/// [`crate::table::write_table`]): its WLD files in `codec`, its distance files, with the
/// rules id of [`SolvedUnit::rules`] in their headers. Returns the
/// counts and bytes written.
///
/// # Errors
/// [`BuildError::Write`].
pub fn write_unit(dir: &Path, solved: &SolvedUnit, codec: u32) -> Result<BuildSummary, BuildError> {
    let rules = solved.rules.id();
    let wopts = WriteOptions {
        codec,
        rules,
        ..WriteOptions::default()
    };
    let mut sum = BuildSummary::default();
    for sv in &solved.wld {
        sum.add(&super::write_solved_with(dir, sv, &wopts)?);
    }
    for d in &solved.dtc {
        sum.add(&super::write_dtc_solved(dir, d, rules)?);
    }
    Ok(sum)
}

/// The [`UnitReport`] of a unit solved in `seconds`.
pub(crate) fn unit_report(unit: &Unit, s: &SolvedUnit, seconds: f64) -> UnitReport {
    if s.wld.is_empty() {
        return UnitReport {
            positions: unit.sizes.iter().sum(),
            seconds,
            ..Default::default()
        };
    }
    let r = &s.summary;
    UnitReport {
        positions: s.wld.iter().map(|sv| sv.values.len() as u64).sum(),
        seconds,
        initial_seconds: r.initial_seconds,
        propagate_seconds: r.solve_seconds - r.initial_seconds - r.dtc_seconds,
        plies: r.plies,
    }
}

/// Run a build as described by `opts`, silently, on this process's threads.
/// A build that fails in a directory it created (with any parents it created) removes them
/// again while they hold nothing but the lock file; a build refused because another holds
/// the directory touches nothing.
///
/// # Errors
/// - [`BuildError::Options`]: a piece count or codec out of range, `dir` not a directory, a
///   `--slice` with more pieces than `pieces` or without positions;
/// - [`BuildError::Busy`]: another build holds the directory's lock ([`DirLock`]);
/// - [`BuildError::CodecMismatch`]: the valid file of a unit interrupted with one of its two
///   files written has another codec than [`BuildOptions::codec`] (nothing is written);
/// - [`BuildError::Unwritable`]: some unit is left to build and the directory cannot be
///   written (nothing is solved);
/// - [`BuildError::MissingDependency`], [`BuildError::Dependency`]: a table the build reads is
///   missing or corrupt (named);
/// - [`BuildError::Write`]: writing a table failed;
/// - [`BuildError::Inconsistent`], [`BuildError::Unreproducible`]: with `dtc`, the distance
///   pass disagreed with the values (see `recheck`);
/// - [`BuildError::Io`]: creating or reading the directory, or its lock file, failed.
pub fn build(opts: &BuildOptions) -> Result<BuildSummary, BuildError> {
    build_with(opts, &NoProgress)
}

/// Run a build as described by `opts` on this process's threads, reporting progress to
/// `observer`.
///
/// # Errors
/// As [`build`].
pub fn build_with(
    opts: &BuildOptions,
    observer: &dyn BuildObserver,
) -> Result<BuildSummary, BuildError> {
    drive(opts, observer, &mut LocalRunner)
}

/// Run a build as described by `opts`: every check, the lock, the choice of units and codec
/// and the resume once, then the units by `runner`; reports to `observer`.
///
/// # Errors
/// As [`build`], and whatever `runner` reports.
pub fn drive(
    opts: &BuildOptions,
    observer: &dyn BuildObserver,
    runner: &mut dyn Runner,
) -> Result<BuildSummary, BuildError> {
    if opts.pieces == 0 || opts.pieces > MAX_BUILD_PIECES {
        return Err(BuildError::Options(format!(
            "--pieces must be between 1 and {MAX_BUILD_PIECES}, got {}",
            opts.pieces
        )));
    }
    if ![
        crate::table::CODEC_2BIT_ZSTD,
        crate::table::CODEC_2BIT_THREATS,
        crate::table::CODEC_CM_THREATS,
        crate::table::CODEC_CM_FILLED,
        crate::table::CODEC_CM_BOOK,
    ]
    .contains(&opts.codec)
    {
        return Err(BuildError::Options(format!(
            "--codec must be {}, {}, {}, {} or {}, got {}",
            crate::table::CODEC_2BIT_ZSTD,
            crate::table::CODEC_2BIT_THREATS,
            crate::table::CODEC_CM_THREATS,
            crate::table::CODEC_CM_FILLED,
            crate::table::CODEC_CM_BOOK,
            opts.codec
        )));
    }
    if opts.dir.exists() && !opts.dir.is_dir() {
        return Err(BuildError::Options(format!(
            "{} exists and is not a directory",
            opts.dir.display()
        )));
    }
    if crate::table::pack::has_packs(&opts.dir) {
        return Err(BuildError::Options(format!(
            "{} holds material files (egdb pack); a build writes slice files: run `egdb unpack --dir {}` first, and `egdb pack` again after the build",
            opts.dir.display(),
            opts.dir.display()
        )));
    }
    let created = create_dirs(&opts.dir)?;
    // Before touching anything: another build on the directory makes this one refuse (and
    // leave the directories alone: they may be the other build's).
    let lock = DirLock::acquire(&opts.dir, opts.slice.is_none())?;
    if lock.unsupported() {
        observer.unlocked(&opts.dir);
    }
    let result = drive_locked(opts, observer, runner);
    if result.is_err() {
        // Still under the lock: no other build can have started in the directory.
        remove_if_unused(&created);
    }
    drop(lock);
    result
}

/// The checks of [`BuildOptions::rules`]: the directory holds no tables of other rules (one
/// variant per directory); the variants other than English build codec-2 value files and
/// distance-to-conversion files only (codecs 4 to 7 and the depth-to-win pass are English's).
fn check_rules(opts: &BuildOptions) -> Result<(), BuildError> {
    let v = opts.rules;
    match crate::table::dir_rules(&opts.dir) {
        Ok(Some(id)) if id != v.id() => {
            let there = crate::rules::Variant::from_id(id).map_or("unknown", |w| w.name());
            return Err(BuildError::Options(format!(
                "{} holds {there} tables, and this build is for {v} (--rules {v}): a directory \
                 holds the tables of one variant; use another --dir",
                opts.dir.display()
            )));
        }
        Ok(_) => {}
        Err(e) => return Err(BuildError::Options(e.to_string())),
    }
    if v != crate::rules::Variant::English {
        if opts.codec != crate::table::CODEC_2BIT_ZSTD {
            return Err(BuildError::Options(format!(
                "--codec {} is for English tables only; {v} tables use codec {}",
                opts.codec,
                crate::table::CODEC_2BIT_ZSTD
            )));
        }
        if opts.dtw {
            return Err(BuildError::Options(format!(
                "--dtw builds English tables only, not {v} (--rules {v})"
            )));
        }
    }
    Ok(())
}

/// Create `dir` and its missing parents; returns those this call created (the table
/// directory first). A directory another process created meanwhile is not listed.
fn create_dirs(dir: &Path) -> Result<Vec<PathBuf>, BuildError> {
    let missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|d| {
            !d.as_os_str().is_empty()
                && matches!(std::fs::symlink_metadata(d),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound)
        })
        .map(Path::to_path_buf)
        .collect();
    let mut created = Vec::new();
    for d in missing.iter().rev() {
        match std::fs::create_dir(d) {
            Ok(()) => created.push(d.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir() => {}
            Err(e) => {
                remove_if_unused_dirs(&created);
                return Err(BuildError::Io {
                    path: d.clone(),
                    source: e,
                });
            }
        }
    }
    // Parents last, as `remove_if_unused` wants them.
    created.reverse();
    std::fs::create_dir_all(dir).map_err(|e| BuildError::Io {
        path: dir.to_path_buf(),
        source: e,
    })?;
    Ok(created)
}

/// Remove `created` (directories, innermost first) where empty.
fn remove_if_unused_dirs(created: &[PathBuf]) {
    let mut v = created.to_vec();
    v.reverse();
    for d in &v {
        if std::fs::remove_dir(d).is_err() {
            return;
        }
    }
}

/// Remove the directories a failed build created (`created`, the table directory first, then
/// its parents) where they are empty but for the lock file: a build that failed before
/// writing a table (a missing dependency, bad options found late) leaves nothing behind. A
/// directory holding anything else stops the removal (so do its parents).
fn remove_if_unused(created: &[PathBuf]) {
    let Some(dir) = created.first() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let names: Vec<std::ffi::OsString> = entries
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    if !names.iter().all(|n| n == LOCK_FILE) {
        return;
    }
    let _ = std::fs::remove_file(dir.join(LOCK_FILE));
    for d in created {
        // remove_dir removes only an empty directory.
        if std::fs::remove_dir(d).is_err() {
            return;
        }
    }
}

/// [`drive`] under the lock: choose the units and the codec, check, run.
fn drive_locked(
    opts: &BuildOptions,
    observer: &dyn BuildObserver,
    runner: &mut dyn Runner,
) -> Result<BuildSummary, BuildError> {
    remove_stale_temp_files(&opts.dir);
    let start = Instant::now();
    check_rules(opts)?;
    let units: Vec<Unit> = match opts.slice {
        Some(s) => {
            if s.material.pieces() > opts.pieces {
                return Err(BuildError::Options(format!(
                    "slice {s} has {} pieces, more than --pieces {}",
                    s.material.pieces(),
                    opts.pieces
                )));
            }
            if s.material.pieces() > MAX_BUILD_PIECES {
                return Err(BuildError::Options(format!(
                    "slice {s} has {} pieces; the builder handles at most {MAX_BUILD_PIECES}",
                    s.material.pieces()
                )));
            }
            let all = build_order(s.material.pieces());
            let mut need: Vec<Unit> = crate::plan::closure(&all, &s)
                .into_iter()
                .cloned()
                .collect();
            if need.is_empty() {
                return Err(BuildError::Options(format!("slice {s} has no positions")));
            }
            if !opts.with_deps {
                need.drain(..need.len() - 1);
            }
            need
        }
        None => build_order(opts.pieces),
    };
    // The codec of every valid value file of the units (None: missing or not valid). The
    // valid partner of an incomplete unit in another codec is refused before anything is
    // written (the resume would rewrite it in the new codec); complete units stay as they are.
    let valid: Vec<Vec<Option<u32>>> = units
        .iter()
        .map(|u| {
            u.slices
                .iter()
                .map(|s| valid_file_codec(&opts.dir, s))
                .collect()
        })
        .collect();
    let codec = if opts.codec_from_dir {
        resume_codec(&opts.dir, &units, &valid).unwrap_or(opts.codec)
    } else {
        opts.codec
    };
    if let Some(e) = codec_mismatch(&opts.dir, &units, &valid, codec) {
        return Err(e);
    }
    // With --dtc a unit with complete WLD files and missing distance files gets only its
    // distance pass.
    let jobs: Vec<UnitJob<'_>> = units
        .iter()
        .zip(&valid)
        .map(|(u, v)| UnitJob {
            unit: u,
            wld_done: v.iter().all(Option::is_some),
        })
        .filter(|j| !j.wld_done || (opts.dtc && !unit_dtc_complete(&opts.dir, j.unit)))
        .collect();
    if let Some(first) = jobs.first() {
        // Before hours of solving: the files could not be written.
        dir_writable(&opts.dir).map_err(|e| BuildError::Unwritable {
            dir: opts.dir.clone(),
            units: jobs.len(),
            first: names(&first.unit.slices),
            source: e,
        })?;
    }
    let in_jobs = |u: &Unit| jobs.iter().any(|j| j.unit.id == u.id);
    let mut sum = BuildSummary {
        codec,
        // Value files not written: units skipped, and those that get only distance files.
        slices_skipped: units
            .iter()
            .zip(&valid)
            .filter(|(_, v)| v.iter().all(Option::is_some))
            .map(|(u, _)| u.slices.len() as u64)
            .sum(),
        dtc_skipped: if opts.dtc {
            units
                .iter()
                .filter(|u| !in_jobs(u))
                .map(|u| u.slices.len() as u64)
                .sum()
        } else {
            0
        },
        ..Default::default()
    };
    let total: u64 = jobs.iter().map(|j| j.unit.sizes.iter().sum::<u64>()).sum();
    // Every table a unit reads must be present or built earlier in this run: checked for
    // all units before the first is solved, so that a missing table is reported at once, not
    // hours into a build (the runners check again against the files really written).
    let present: HashSet<Slice> = crate::stats::scan_dir(&opts.dir)
        .map_err(|e| BuildError::Io {
            path: opts.dir.clone(),
            source: e,
        })?
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    {
        let mut will = present.clone();
        for j in &jobs {
            let u = j.unit;
            if let Some(missing) = first_missing_dependency(u, &will) {
                return Err(BuildError::MissingDependency {
                    building: u.slices.clone(),
                    missing,
                    pieces: u.pieces,
                });
            }
            will.extend(u.slices.iter().copied());
        }
    }
    // Damaged files of the units to build are written again: say so, before hours of work.
    // A directory under a file's name cannot be replaced (rename onto it fails): refused.
    for j in &jobs {
        for s in &j.unit.slices {
            let paths = [
                (!j.wld_done).then(|| table_path(&opts.dir, s)),
                opts.dtc.then(|| dtc_path(&opts.dir, s)),
            ];
            if let Some(p) = paths
                .into_iter()
                .flatten()
                .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
            {
                return Err(BuildError::Options(format!(
                    "{} is a directory named like a table file: the build would write that \
                     file there; remove or rename it (nothing was written)",
                    p.display()
                )));
            }
        }
    }
    for j in &jobs {
        for s in &j.unit.slices {
            let p = table_path(&opts.dir, s);
            if let Some(why) = (!j.wld_done).then(|| damaged_file(&p, s, false)).flatten() {
                observer.file_replaced(&p, &why);
            }
            let p = dtc_path(&opts.dir, s);
            if let Some(why) = opts.dtc.then(|| damaged_file(&p, s, true)).flatten() {
                observer.file_replaced(&p, &why);
            }
        }
    }
    observer.start(jobs.len(), total);
    let plan = BuildPlan {
        opts,
        codec,
        jobs,
        present,
    };
    if opts.dtw {
        // The depth-to-win pass's memory, checked before the first unit is solved.
        let todo: Vec<&Unit> = units
            .iter()
            .filter(|u| !super::dtw::unit_dtw_complete(&opts.dir, u))
            .collect();
        super::dtw::check_dtw_memory(&todo, opts.memory)?;
    }
    if runner.checks_unit_memory() {
        check_unit_memory(&plan.jobs, opts)?;
    }
    let done = runner.run(&plan, observer)?;
    let store = std::mem::take(&mut sum.store);
    sum.add(&done);
    sum.store = if done.store.slices_loaded > 0 || done.store.peak_resident_bytes > 0 {
        done.store
    } else {
        store
    };
    // --- DTW (issue 33): the depth-to-win phase, after every unit's WLD/DTC files exist
    // (on this process; under --mpi on rank 0 after the ranks are done).
    if opts.dtw {
        sum.add(&super::dtw::build_dtw_units(
            &opts.dir,
            &units,
            opts.memory,
        )?);
    }
    // --- end DTW
    observer.finish();
    sum.seconds = start.elapsed().as_secs_f64();
    Ok(sum)
}

/// Refuses, before any unit is solved, a budget ([`BuildOptions::memory`]) that cannot hold a
/// unit to solve whole: its solver state and values, the writer's backlog of the job before it
/// and the dependency store's block cache ([`crate::memory::minimum_budget`], what
/// [`LocalRunner`] charges). Such a build would not fail, it would exceed the budget it was
/// given, hours in; the error names the unit and the smallest budget that holds every unit of
/// this run.
fn check_unit_memory(jobs: &[UnitJob<'_>], opts: &BuildOptions) -> Result<(), BuildError> {
    let Some(budget) = opts.memory else {
        return Ok(());
    };
    let units: Vec<&Unit> = jobs.iter().map(|j| j.unit).collect();
    let Some((i, min)) =
        crate::memory::minimum_budget(&units, opts.dtc).filter(|&(_, min)| min > budget)
    else {
        return Ok(());
    };
    let u = units[i];
    let n: u64 = u.sizes.iter().sum();
    let backlog = if i > 0 {
        ", the values of the unit before it waiting to be written"
    } else {
        ""
    };
    Err(BuildError::Options(format!(
        "the memory budget {} (--memory; default half the physical memory) is too small: unit \
         {} ({n} positions) needs {} for its solver state ({} bytes per position){backlog} and \
         the dependencies' block cache; give --memory {min} or more (bytes; nothing was \
         written)",
        crate::memory::format_size(budget),
        names(&u.slices),
        crate::memory::format_size(min),
        crate::memory::unit_bytes_per_position(opts.dtc),
    )))
}

/// Runs the units of a build on this process: one unit at a time, solved on the rayon
/// threads, its files compressed and written by a second thread while the next unit is
/// solved; solved values go to the dependency store at once, which keeps to `--memory`.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalRunner;

impl Runner for LocalRunner {
    fn run(
        &mut self,
        plan: &BuildPlan<'_>,
        observer: &dyn BuildObserver,
    ) -> Result<BuildSummary, BuildError> {
        let opts = plan.opts;
        let todo: Vec<&Unit> = plan.jobs.iter().map(|j| j.unit).collect();
        let last_reads = crate::memory::last_reads(&todo);
        let mut deps = DecodedTables::with_budget(&opts.dir, opts.memory).for_variant(opts.rules);
        let mut present = plan.present.clone();
        let mut sum = BuildSummary::default();
        // A killed build simply has fewer finished files.
        enum Job {
            Unit(Box<SolvedUnit>),
            /// The jobs before this one are those of the units before unit `i` of the plan.
            UnitEnd(usize),
        }
        // The gate below bounds the backlog (at most the previous unit's jobs); the channel
        // only needs room for a unit and the markers, so that sending never waits for less.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(8);
        // The solver starts unit i only once the units before i - 1 are written, so the
        // writer holds at most one unit's values (`memory::writer_backlog_bytes`, charged to
        // the unit under the budget).
        let gate = super::WriterGate::default();
        let ws = &gate;
        let dir = opts.dir.clone();
        let codec = plan.codec;
        let written = std::thread::scope(|scope| -> Result<BuildSummary, BuildError> {
            let writer = scope.spawn(move || -> Result<BuildSummary, BuildError> {
                // However the writer ends (an error too), a waiting solver is woken.
                struct Stopped<'a>(&'a super::WriterGate);
                impl Drop for Stopped<'_> {
                    fn drop(&mut self) {
                        self.0.stop();
                    }
                }
                let _stopped = Stopped(ws);
                let mut w = BuildSummary::default();
                for job in rx {
                    match job {
                        Job::Unit(s) => w.add(&write_unit(&dir, &s, codec)?),
                        Job::UnitEnd(i) => ws.written(i),
                    }
                }
                Ok(w)
            });
            let solving = (|| -> Result<(), BuildError> {
                // Units whose files are known written (`DecodedTables::written`).
                let mut marked = 0usize;
                for (i, job) in plan.jobs.iter().enumerate() {
                    let u = job.unit;
                    if let Some(missing) = first_missing_dependency(u, &present) {
                        return Err(BuildError::MissingDependency {
                            building: u.slices.clone(),
                            missing,
                            pieces: u.pieces,
                        });
                    }
                    // Wait until the units before the previous one are written.
                    if tx.send(Job::UnitEnd(i)).is_err() {
                        return Ok(());
                    }
                    ws.wait_before(i);
                    // The units the writer has finished (at least those before i - 1): their
                    // slices may leave the store.
                    while marked < ws.written_below().min(i) {
                        deps.written(&plan.jobs[marked].unit.slices);
                        marked += 1;
                    }
                    observer.unit_started(u);
                    let previous = i
                        .checked_sub(1)
                        .map_or(0, |k| plan.jobs[k].unit.sizes.iter().sum::<u64>());
                    // What `check_unit_memory` charged this unit (`memory::minimum_budget`).
                    deps.begin_unit(
                        u,
                        crate::memory::unit_solve_bytes(
                            u.sizes.iter().sum::<u64>(),
                            previous,
                            opts.dtc,
                        ),
                    );
                    let t0 = Instant::now();
                    let mut solved = solve_unit(u, &deps, &plan.unit_options(job), observer)?;
                    observer.unit_solved(u, &unit_report(u, &solved, t0.elapsed().as_secs_f64()));
                    sum.add(&std::mem::take(&mut solved.summary));
                    for sv in &mut solved.wld {
                        deps.insert(&sv.slice, &sv.values)
                            .map_err(|e| BuildError::Dependency {
                                building: sv.slice,
                                source: e,
                            })?;
                        // The plies were only needed by the distance pass.
                        sv.resolution_plies = None;
                    }
                    let wrote_wld = !solved.wld.is_empty();
                    if tx.send(Job::Unit(Box::new(solved))).is_err() {
                        // The writer stopped on an error; it is reported below.
                        return Ok(());
                    }
                    if wrote_wld {
                        present.extend(u.slices.iter().copied());
                    }
                    deps.release_done(i, &last_reads);
                }
                Ok(())
            })();
            drop(tx);
            let written = writer
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            solving?;
            written
        })?;
        sum.add(&written);
        sum.codec = plan.codec;
        sum.store = deps.stats();
        Ok(sum)
    }
}

/// Whether `unit` is solved split over the `ranks` ranks of an MPI job (docs/mpi.md, "Inside
/// one unit") rather than whole on one rank: with more than one rank, when it has more
/// positions than [`BuildOptions::split_above`]; when its solver state
/// ([`crate::memory::unit_bytes_per_position`]: 2 bytes per position, 7 with `--dtc`) exceeds
/// [`BuildOptions::memory`], the budget of one rank; or when its state and its dependencies
/// decoded ([`crate::memory::unit_reads_decoded_bytes`]) exceed that budget whole but fit next
/// to one rank's share of the state and its exchange buffers
/// ([`super::split::exchange_round_bytes`]). The last rule keeps dependency lookups out of the block
/// cache, which is many times slower when it holds a small part of them (docs/mpi.md,
/// "Dependencies through the block cache"). The files do not depend on the choice.
pub fn split_unit(unit: &Unit, opts: &BuildOptions, ranks: usize) -> bool {
    let per_position = crate::memory::unit_bytes_per_position(opts.dtc);
    let n: u64 = unit.sizes.iter().sum();
    if ranks <= 1 {
        return false;
    }
    if opts.split_above.is_some_and(|t| n > t) {
        return true;
    }
    let Some(m) = opts.memory else {
        return false;
    };
    let state = n.saturating_mul(per_position);
    if state > m {
        return true;
    }
    let deps = crate::memory::unit_reads_decoded_bytes(unit);
    let held = n.div_ceil(ranks as u64);
    let share = (held * per_position).saturating_add(super::split::exchange_round_bytes(held));
    state.saturating_add(deps) > m && share.saturating_add(deps) <= m
}

/// Solve `unit` split over the ranks of `ex` ([`crate::driver::Exchange`]), every rank calling
/// this with the same unit; each rank reads its dependencies through its own `deps`, holds its index
/// range of both slices and exchanges predecessor updates with the others. Rank 0 returns the
/// unit solved as [`solve_unit`] solves it (identical values and distances, gathered there:
/// a few bytes per position of the unit on rank 0, so for tests and comparisons; a build
/// uses [`build_unit_split`], which gathers no values); the other ranks `None`. With
/// `uo.dtc` the distance pass runs split too (`split::dtc_split_local`; with `uo.wld_done`
/// alone, each rank reading its range of the value files). Also returns this
/// rank's exchange figures. Ranges are aligned to `align` positions
/// ([`super::split::BLOCK_ALIGN`], the file format's block, in a build; smaller in tests, to
/// make most updates cross ranks).
///
/// # Errors
/// [`BuildError::Dependency`] on the rank whose lookup failed, [`BuildError::Options`] (a
/// distance too long) on the rank whose distance pass found it, [`BuildError::PeerFailed`]
/// on the others. An inconsistency of the distance pass on any rank is rechecked over the
/// ranks as in one process (the unit solved again, or two more passes from the value files;
/// the note in [`BuildSummary::rechecked`] and [`BuildObserver::unit_rechecked`] on rank 0);
/// one that repeats is [`BuildError::Inconsistent`] on the rank that found it, one that does
/// not reproduce [`BuildError::Unreproducible`] on every rank; nothing of the unit is written.
pub fn solve_unit_split(
    unit: &Unit,
    deps: &DecodedTables,
    uo: &UnitOptions,
    ex: &dyn super::split::Exchange,
    align: u64,
    observer: &dyn BuildObserver,
) -> Result<(Option<SolvedUnit>, super::split::SplitStats), BuildError> {
    let t0 = Instant::now();
    let mut stats = super::split::SplitStats::default();
    let mut summary = BuildSummary::default();
    let (wld, dtc) = if uo.wld_done {
        let (dtc, note) = if uo.dtc {
            dtc_split_from_files(unit, deps, ex, align, &mut stats)?
        } else {
            (Vec::new(), None)
        };
        if let (Some(n), 0) = (&note, ex.rank()) {
            observer.unit_rechecked(unit, n);
        }
        summary.rechecked.extend(note);
        ((ex.rank() == 0).then(Vec::new), dtc)
    } else {
        let (mut local, st) = solve_split_local(unit, deps, uo, ex, align, observer)?;
        stats = st;
        summary.initial_seconds = local.times.0;
        summary.plies = local.plies;
        let t1 = Instant::now();
        let (dtc, note) = if uo.dtc {
            dtc_split_after_solve(unit, deps, uo, &mut local, ex, align, observer, &mut stats)?
        } else {
            (Vec::new(), None)
        };
        if let (Some(n), 0) = (&note, ex.rank()) {
            observer.unit_rechecked(unit, n);
        }
        summary.rechecked.extend(note);
        summary.dtc_seconds = t1.elapsed().as_secs_f64();
        (super::split::gather(local, ex, &mut stats), dtc)
    };
    let dtc: Vec<Option<solve::DtcSlice>> = dtc
        .into_iter()
        .map(|d| super::split::gather_dtc(d, ex, &mut stats))
        .collect();
    let solved = wld.map(|wld| {
        let dtc: Vec<solve::DtcSlice> = dtc.into_iter().flatten().collect();
        summary.solve_seconds = t0.elapsed().as_secs_f64();
        summary.dtc_files = dtc.len() as u64;
        if uo.wld_done {
            summary.dtc_seconds = summary.solve_seconds;
        }
        SolvedUnit {
            wld,
            dtc,
            summary,
            rules: deps.variant(),
        }
    });
    Ok((solved, stats))
}

/// Solve `unit` split over the ranks of `ex` as [`solve_unit_split`] does (its distance pass
/// too, with `uo.dtc`), then write its files into `dir`: the value files with every rank
/// encoding its own blocks of each file (`split::write_split`: rank 0 lays out the header and
/// offset table, each rank writes its blocks' bytes at their offset, rank 0 checks them and
/// renames the file into place), so no rank ever holds more than its range of the unit's
/// values; the distance files the same way (`split::write_dtc_split`). The files are the bytes [`write_unit`] writes for
/// [`solve_unit`]'s solution. Nothing is written before the distance pass succeeded. Every
/// rank calls this with the same unit; `dir` must be the same directory on every rank (a
/// shared filesystem). Rank 0 returns the unit's summary (counts, bytes, solve and write
/// times, plies); the other ranks `None`. Also returns this rank's exchange figures.
///
/// # Errors
/// As [`solve_unit_split`]; also [`BuildError::Write`] on the rank whose write failed (a
/// file operation, the temporary file not visible on that rank, a block read back
/// different), [`BuildError::PeerFailed`] on the others.
pub fn build_unit_split(
    unit: &Unit,
    deps: &DecodedTables,
    uo: &UnitOptions,
    ex: &dyn super::split::Exchange,
    align: u64,
    dir: &Path,
    observer: &dyn BuildObserver,
) -> Result<(Option<BuildSummary>, super::split::SplitStats), BuildError> {
    use super::split::SplitError;
    let t0 = Instant::now();
    let peer = |rank| BuildError::PeerFailed {
        unit: names(&unit.slices),
        rank,
    };
    let mut stats = super::split::SplitStats::default();
    let mut sum = BuildSummary::default();
    let dtc = if uo.wld_done {
        let (dtc, note) = if uo.dtc {
            dtc_split_from_files(unit, deps, ex, align, &mut stats)?
        } else {
            (Vec::new(), None)
        };
        if let (Some(n), 0) = (&note, ex.rank()) {
            observer.unit_rechecked(unit, n);
        }
        sum.rechecked.extend(note);
        let secs = t0.elapsed().as_secs_f64();
        sum.solve_seconds = secs;
        sum.dtc_seconds = secs;
        dtc
    } else {
        let (mut local, st) = solve_split_local(unit, deps, uo, ex, align, observer)?;
        stats = st;
        let (initial_seconds, plies) = (local.times.0, local.plies);
        let t1 = Instant::now();
        let (dtc, note) = if uo.dtc {
            dtc_split_after_solve(unit, deps, uo, &mut local, ex, align, observer, &mut stats)?
        } else {
            (Vec::new(), None)
        };
        if let (Some(n), 0) = (&note, ex.rank()) {
            observer.unit_rechecked(unit, n);
        }
        sum.rechecked.extend(note);
        let dtc_seconds = if uo.dtc {
            t1.elapsed().as_secs_f64()
        } else {
            0.0
        };
        let solve_seconds = t0.elapsed().as_secs_f64();
        let wopts = WriteOptions {
            codec: uo.codec,
            rules: deps.variant().id(),
            ..WriteOptions::default()
        };
        match super::split::write_split(dir, local, ex, &wopts, &mut stats) {
            Ok(w) => sum.add(&w.unwrap_or_default()),
            Err(SplitError::Own(e)) => {
                return Err(BuildError::Write {
                    slice: unit.slices[0],
                    source: e,
                })
            }
            Err(SplitError::Peer(rank)) => return Err(peer(rank)),
        }
        sum.add(&BuildSummary {
            solve_seconds,
            initial_seconds,
            dtc_seconds,
            plies,
            ..Default::default()
        });
        dtc
    };
    sum.dtc_files = dtc.len() as u64;
    let dopts = WriteOptions {
        level: crate::table::dtc::DTC_LEVEL,
        rules: deps.variant().id(),
        ..WriteOptions::default()
    };
    let (_, parts) = super::split::unit_parts(unit.slices[0], ex.ranks(), align);
    for (d, part) in dtc.into_iter().zip(&parts) {
        let slice = d.slice;
        match super::split::write_dtc_split(dir, d, part, ex, &dopts, &mut stats) {
            Ok(w) => sum.add(&w.unwrap_or_default()),
            Err(SplitError::Own(e)) => return Err(BuildError::Write { slice, source: e }),
            Err(SplitError::Peer(rank)) => return Err(peer(rank)),
        }
    }
    Ok(((ex.rank() == 0).then_some(sum), stats))
}

/// The split solve of [`solve_unit_split`] and [`build_unit_split`]: this rank's part (with
/// the resolution plies of its ranges for `uo.dtc`).
fn solve_split_local(
    unit: &Unit,
    deps: &DecodedTables,
    uo: &UnitOptions,
    ex: &dyn super::split::Exchange,
    align: u64,
    observer: &dyn BuildObserver,
) -> Result<(super::split::SplitSolved, super::split::SplitStats), BuildError> {
    let s = unit.slices[0];
    let lookup = |p: &crate::board::Position| deps.lookup(p);
    let tick = |n: u64| observer.progress(n);
    let r = crate::with_engine!(deps.variant(), r => {
        super::split::solve_split_local(r, s, &lookup, &tick, ex, align, uo.dtc)
    });
    match r {
        Ok(x) => Ok(x),
        Err(super::split::SplitError::Own(e)) => Err(BuildError::Dependency {
            building: s,
            source: e,
        }),
        Err(super::split::SplitError::Peer(rank)) => Err(BuildError::PeerFailed {
            unit: names(&unit.slices),
            rank,
        }),
    }
}

/// The distance pass of a split unit just solved (`local`, with its resolution plies, which
/// are dropped afterwards): this rank's range of each slice's distances, and the note of a
/// recheck. An inconsistency on any rank is rechecked over the ranks as in one process
/// ([`recheck::recheck_unit_with`], every decision all-reduced): the distance pass runs again
/// on `local`, the unit is solved again (`uo`, `align`, `observer`: as for the first solve)
/// and must give the same values on every rank, and the pass on it must agree; `local` is
/// then the second solution.
#[allow(clippy::too_many_arguments)]
fn dtc_split_after_solve(
    unit: &Unit,
    deps: &DecodedTables,
    uo: &UnitOptions,
    local: &mut super::split::SplitSolved,
    ex: &dyn super::split::Exchange,
    align: u64,
    observer: &dyn BuildObserver,
    stats: &mut super::split::SplitStats,
) -> Result<(Vec<solve::DtcSlice>, Option<String>), BuildError> {
    let pass = |w: &super::split::SplitSolved, stats: &mut super::split::SplitStats| {
        let inputs: Vec<solve::WldInput<'_>> = w.local.iter().map(solve::WldInput::of).collect();
        let r = dtc_split(unit, deps, &w.slices, &w.parts, &inputs, ex, stats);
        split_outcome(unit, ex, r)
    };
    let out = match pass(local, stats)? {
        Ok(d) => (d, None),
        Err(first) => {
            let taken = std::mem::replace(
                local,
                super::split::SplitSolved {
                    slices: Vec::new(),
                    parts: Vec::new(),
                    local: Vec::new(),
                    longest: Vec::new(),
                    plies: 0,
                    times: (0.0, 0.0),
                },
            );
            let (again, d, note) = recheck::recheck_unit_with(
                &names(&unit.slices),
                taken,
                &first,
                || solve_split_local(unit, deps, uo, ex, align, observer).map(|(s, _)| s),
                |w| pass(w, &mut super::split::SplitStats::default()),
                |w| recheck::wld_digest(&w.local),
                |b| ex.all_max(&[u64::from(b)])[0] != 0,
            )?;
            *local = again;
            (d, Some(note))
        }
    };
    for sv in &mut local.local {
        sv.resolution_plies = None;
    }
    Ok(out)
}

/// A split distance pass's result `r` on this rank, classified the same way on every rank
/// (collective: one all-reduce): the distances; `Ok(Err(e))` when the pass found an
/// inconsistency on some rank and no rank failed otherwise (`e` this rank's error: the
/// inconsistency, or [`BuildError::PeerFailed`]); else the error.
fn split_outcome(
    unit: &Unit,
    ex: &dyn super::split::Exchange,
    r: Result<Vec<solve::DtcSlice>, BuildError>,
) -> Result<recheck::PassOutcome, BuildError> {
    let flag = match &r {
        Ok(_) | Err(BuildError::PeerFailed { .. }) => 0,
        Err(BuildError::Inconsistent { .. }) => 1,
        Err(_) => 2,
    };
    match (ex.all_max(&[flag])[0], r) {
        (0, Ok(d)) => Ok(Ok(d)),
        (1, Err(e)) => Ok(Err(e)),
        (_, Err(e)) => Err(e),
        // Not reached: a split pass agrees its failures over the ranks, so every rank or none
        // returns an error.
        (_, Ok(_)) => Err(BuildError::PeerFailed {
            unit: names(&unit.slices),
            rank: 0,
        }),
    }
}

/// The distance pass of a split unit whose value files exist: each rank reads its range of
/// each slice's values through `deps` (captures resolved), then the split pass. An
/// inconsistency on any rank gets two more passes from the files on every rank, which must
/// agree with the values and with each other on every rank ([`recheck::recheck_from_files`]);
/// the note of such a recheck is returned.
fn dtc_split_from_files(
    unit: &Unit,
    deps: &DecodedTables,
    ex: &dyn super::split::Exchange,
    align: u64,
    stats: &mut super::split::SplitStats,
) -> Result<(Vec<solve::DtcSlice>, Option<String>), BuildError> {
    let pass = |stats: &mut super::split::SplitStats| {
        let r = dtc_split_from_files_once(unit, deps, ex, align, stats);
        split_outcome(unit, ex, r)
    };
    match pass(stats)? {
        Ok(d) => Ok((d, None)),
        Err(first) => {
            let (d, note) = recheck::recheck_from_files(
                &names(&unit.slices),
                &first,
                || pass(&mut super::split::SplitStats::default()),
                |b| ex.all_max(&[u64::from(b)])[0] != 0,
            )?;
            Ok((d, Some(note)))
        }
    }
}

/// One distance pass of [`dtc_split_from_files`].
fn dtc_split_from_files_once(
    unit: &Unit,
    deps: &DecodedTables,
    ex: &dyn super::split::Exchange,
    align: u64,
    stats: &mut super::split::SplitStats,
) -> Result<Vec<solve::DtcSlice>, BuildError> {
    let (slices, parts) = super::split::unit_parts(unit.slices[0], ex.ranks(), align);
    let loaded: Result<Vec<_>, BuildError> = slices
        .iter()
        .zip(&parts)
        .map(|(s, part)| super::wld_from_files(deps, *s, part.range(ex.rank())))
        .collect();
    let loaded = match super::split::agree(ex, loaded) {
        Ok(l) => l,
        Err(super::split::SplitError::Own(e)) => return Err(e),
        Err(super::split::SplitError::Peer(rank)) => {
            return Err(BuildError::PeerFailed {
                unit: names(&unit.slices),
                rank,
            })
        }
    };
    let inputs: Vec<solve::WldInput<'_>> = loaded
        .iter()
        .map(|(v, c)| solve::WldInput {
            values: v,
            captures: c,
            plies: None,
        })
        .collect();
    dtc_split(unit, deps, &slices, &parts, &inputs, ex, stats)
}

/// [`super::split::dtc_split_local`] under the store's rules, its errors as the build's.
fn dtc_split(
    unit: &Unit,
    deps: &DecodedTables,
    slices: &[Slice],
    parts: &[super::split::Partition],
    inputs: &[solve::WldInput<'_>],
    ex: &dyn super::split::Exchange,
    stats: &mut super::split::SplitStats,
) -> Result<Vec<solve::DtcSlice>, BuildError> {
    use super::split::SplitError;
    let lookup = |p: &crate::board::Position| deps.lookup(p);
    let r = crate::with_engine!(deps.variant(), r => {
        super::split::dtc_split_local(r, slices, parts, inputs, &lookup, ex, stats)
    });
    #[cfg(test)]
    let r = tests::inject_split_inconsistency(r, ex, slices[0]);
    r.map_err(|e| match e {
        SplitError::Own(solve::DtcError::Lookup(e)) => BuildError::Dependency {
            building: unit.slices[0],
            source: e,
        },
        SplitError::Own(solve::DtcError::Inconsistent {
            slice,
            index,
            wld,
            dtc_pass,
        }) => BuildError::Inconsistent {
            slice,
            index,
            wld,
            dtc_pass,
        },
        SplitError::Own(solve::DtcError::TooLong { slice }) => {
            BuildError::Options(format!("{slice}: a distance of 65,534 plies or more"))
        }
        SplitError::Peer(rank) => BuildError::PeerFailed {
            unit: names(&unit.slices),
            rank,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::build_order;
    use std::cell::Cell;

    thread_local! {
        /// Split distance passes still to fail on this rank's thread with an injected
        /// inconsistency after they ran (found by the last rank; set on every rank's thread).
        static SPLIT_INJECT: Cell<u32> = const { Cell::new(0) };
    }

    /// A split distance pass's result `r`, or, while [`SPLIT_INJECT`] is positive, an
    /// inconsistency found by the last rank (the others told as by the pass's own agreement).
    pub(super) fn inject_split_inconsistency<T, E>(
        r: Result<T, super::super::split::SplitError<solve::DtcError<E>>>,
        ex: &dyn super::super::split::Exchange,
        s: Slice,
    ) -> Result<T, super::super::split::SplitError<solve::DtcError<E>>> {
        use super::super::split::SplitError;
        if r.is_err() || SPLIT_INJECT.get() == 0 {
            return r;
        }
        SPLIT_INJECT.set(SPLIT_INJECT.get() - 1);
        let last = ex.ranks() - 1;
        Err(if ex.rank() == last {
            SplitError::Own(solve::DtcError::Inconsistent {
                slice: s,
                index: 0,
                wld: crate::board::Wld::Loss,
                dtc_pass: crate::board::Wld::Draw,
            })
        } else {
            SplitError::Peer(last)
        })
    }

    /// Every value and distance file of `dir`, by name, with its bytes.
    fn files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "egdb" || x == "dtc"))
            .map(|p| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect()
    }

    /// Build `u` split over `ranks` in-process ranks (64-position ranges) into `out` with
    /// `inject` injected inconsistencies on every rank, reading dependencies from `built`.
    fn split_build(
        u: &Unit,
        built: &Path,
        out: &Path,
        ranks: usize,
        inject: u32,
        wld_done: bool,
    ) -> Vec<Result<Option<BuildSummary>, BuildError>> {
        let uo = UnitOptions {
            wld_done,
            dtc: true,
            codec: crate::table::CODEC_2BIT_ZSTD,
        };
        super::super::split::run_local(ranks, |ex| {
            SPLIT_INJECT.set(inject);
            let mut deps = DecodedTables::new(built);
            deps.begin_unit(u, 0);
            let r = build_unit_split(u, &deps, &uo, ex, 64, out, &crate::NoProgress);
            SPLIT_INJECT.set(0);
            r.map(|x| x.0)
        })
    }

    /// The distance pass of a split unit that finds an inconsistency once is rechecked over
    /// the ranks: the unit is written, byte-identical to the single-process build's files,
    /// with a note; an inconsistency that repeats or does not reproduce stops every rank with
    /// nothing of the unit written. The single-process build (`build --dtc`, no injection)
    /// is the reference.
    #[test]
    fn an_inconsistency_of_a_split_distance_pass_is_rechecked_over_the_ranks() {
        let built = tempfile::tempdir().unwrap();
        let mut opts = BuildOptions::new(built.path(), 3);
        opts.dtc = true;
        crate::build(&opts).unwrap();
        let reference = files(built.path());
        // The largest unit of 3 pieces: ranges of 64 positions cut it between ranks.
        let units = build_order(3);
        let u = units
            .iter()
            .max_by_key(|u| u.sizes.iter().sum::<u64>())
            .unwrap();
        let want = |dir: &Path, with_values: bool| {
            for s in &u.slices {
                let mut names = vec![format!("{s}.dtc")];
                if with_values {
                    names.push(format!("{s}.egdb"));
                }
                for n in names {
                    assert_eq!(files(dir).get(&n), reference.get(&n), "{n}");
                }
            }
        };
        for ranks in [2, 3] {
            // Once: rechecked, written, noted on rank 0.
            let out = tempfile::tempdir().unwrap();
            let r = split_build(u, built.path(), out.path(), ranks, 1, false);
            let sum = r[0].as_ref().unwrap().as_ref().unwrap();
            assert_eq!(sum.rechecked.len(), 1, "{:?}", sum.rechecked);
            assert!(
                sum.rechecked[0].contains("Solved again"),
                "{}",
                sum.rechecked[0]
            );
            assert!(r[1..].iter().all(|x| matches!(x, Ok(None))));
            want(out.path(), true);
            assert_eq!(files(out.path()).len(), 2 * u.slices.len());

            // Every pass (the first, the rerun on it, the pass on the second solve): the
            // fault repeats; the last rank reports the inconsistency, the others the peer.
            let out = tempfile::tempdir().unwrap();
            let r = split_build(u, built.path(), out.path(), ranks, 3, false);
            assert!(
                matches!(r[ranks - 1], Err(BuildError::Inconsistent { .. })),
                "{r:?}"
            );
            assert!(r[..ranks - 1].iter().all(
                |x| matches!(x, Err(BuildError::PeerFailed { rank, .. }) if *rank == ranks - 1)
            ));
            assert!(files(out.path()).is_empty());

            // Twice (the first pass and the rerun on the first solution), then agreeing: the
            // pass disagrees with itself on identical input, on every rank.
            let out = tempfile::tempdir().unwrap();
            let r = split_build(u, built.path(), out.path(), ranks, 2, false);
            assert!(
                r.iter()
                    .all(|x| matches!(x, Err(BuildError::Unreproducible { .. }))),
                "{r:?}"
            );
            assert!(files(out.path()).is_empty());

            // From the value files: two more passes, then the distance files.
            let out = tempfile::tempdir().unwrap();
            for s in &u.slices {
                let n = format!("{s}.egdb");
                std::fs::write(out.path().join(&n), &reference[&n]).unwrap();
            }
            let r = split_build(u, built.path(), out.path(), ranks, 1, true);
            let sum = r[0].as_ref().unwrap().as_ref().unwrap();
            assert_eq!(sum.rechecked.len(), 1, "{:?}", sum.rechecked);
            assert!(
                sum.rechecked[0].contains("Run twice more"),
                "{}",
                sum.rechecked[0]
            );
            want(out.path(), false);
            let r = split_build(
                u,
                built.path(),
                tempfile::tempdir().unwrap().path(),
                ranks,
                3,
                true,
            );
            assert!(
                matches!(r[ranks - 1], Err(BuildError::Inconsistent { .. })),
                "{r:?}"
            );
        }
    }
}
