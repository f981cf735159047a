//! `egdb verify`: check table files independently of the builder.
//!
//! For every file: the whole-file checksum, then every stored value of a quiet position is
//! re-derived from its successors with the slow path generator ([`crate::movegen::Oracle`]:
//! neither the generator's fast engine nor its un-move code): no move = the terminal rule
//! ([`Rules::no_move_value`], a loss in English), otherwise the
//! best of the negated successor values, successors looked up in the tables with captures
//! resolved by search ([`crate::probe::resolve_with`] over the oracle). Positions whose stored
//! entry is "don't care" (captures; in a codec-4 slice also the threat positions and positions
//! without a move of [`crate::probe::resolve::is_dont_care`], decided per slice by
//! [`RawSource::threats_dont_care`]) are never read as values: they are derived the same way
//! and, with all others, counted against the
//! win/loss/draw totals in the header; the header's `longest` (the longest resolution ply)
//! is re-derived from the verified values unit by unit (forward moves, level by level). The functions are generic over the [`Rules`] used as
//! the oracle; [`verify_dir`] uses [`Oracle`](crate::movegen::Oracle).
//!
//! Distance files (`<slice>.dtc`, `egdb build --dtc`), where present, are verified the same
//! way ([`verify_dtc_slice`]): every stored distance of a won or lost quiet position is
//! re-derived from the oracle's successors by the definition (a conversion counts 1, a king
//! move 1 + the stored distance of its result; a win takes the minimum over the moves to a
//! lost position, a loss the maximum over all moves). This also closes the gap of win/loss/draw
//! verification: a cycle of positions wrongly marked as wins is locally consistent in values,
//! but not in distances, which must fall by one along every winning king move.

use crate::board::{rotate, Color, Position, Wld};
use crate::index::SliceIndex;
use crate::probe::{resolve_with, ProbeError, RawSource};
use crate::rules::Rules;
use crate::slice::Slice;
use crate::stats::{read_dir_info_all, StatsError};
use crate::store::{DecodedTables, QuietValues};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod dtw;
pub mod journal;
pub use journal::{Journal, JournalError};

/// A verification failure.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The directory or a header could not be read.
    #[error(transparent)]
    Stats(#[from] StatsError),
    /// A table (or one it depends on) is missing or corrupt.
    #[error("slice {slice}: {source}")]
    Probe {
        /// Slice being verified.
        slice: Slice,
        /// The error (names the missing or corrupt file).
        source: ProbeError,
    },
    /// A stored value differs from the value derived from the successors.
    #[error("slice {slice}, index {index} ({fen}): stored {stored}, successors give {derived}")]
    Mismatch {
        /// The slice.
        slice: Slice,
        /// Position index in the slice.
        index: u64,
        /// The position in FEN.
        fen: String,
        /// Value in the file.
        stored: Wld,
        /// Value derived from the successors.
        derived: Wld,
    },
    /// The header's win/loss/draw totals differ from the recount.
    #[error(
        "slice {slice}: header says {header:?} (wins, losses, draws), recount gives {counted:?}"
    )]
    Counts {
        /// The slice.
        slice: Slice,
        /// Totals in the header.
        header: (u64, u64, u64),
        /// Totals recounted.
        counted: (u64, u64, u64),
    },
    /// A stored distance differs from the one derived from the successors.
    #[error(
        "slice {slice}, index {index} ({fen}): stored distance {stored}, successors give {derived}"
    )]
    DtcMismatch {
        /// The slice.
        slice: Slice,
        /// Position index in the slice.
        index: u64,
        /// The position in FEN.
        fen: String,
        /// Distance in the `.dtc` file.
        stored: u32,
        /// Distance derived from the successors (`u32::MAX`: no move reaches the value).
        derived: u32,
    },
    /// The directory holds material files (`egdb pack`); verify reads slice files.
    #[error("{} holds material files (egdb pack); verify reads slice files: run `egdb unpack --dir {}` first (it checks every member's checksums), and `egdb pack` again after", .0.display(), .0.display())]
    Packed(PathBuf),
    /// A distance file does not belong with its WLD file (other counts) or cannot be read.
    #[error("slice {slice}: distance file: {why}")]
    DtcFile {
        /// The slice.
        slice: Slice,
        /// What is wrong.
        why: String,
    },
    /// A stored depth to win differs from the one derived from the successors
    /// (`verify_dtw_slice`).
    #[error(
        "slice {slice}, index {index} ({fen}): stored depth to win {stored}, successors give {derived}"
    )]
    DtwMismatch {
        /// The slice.
        slice: Slice,
        /// Position index in the slice.
        index: u64,
        /// The position in FEN.
        fen: String,
        /// Depth in the `.dtw` file.
        stored: u32,
        /// Depth derived from the successors (`u32::MAX`: no move reaches the value).
        derived: u32,
    },
    /// A depth-to-win file does not belong with its WLD file (other counts, a header's
    /// `longest` other than the largest depth), is missing, or cannot be read.
    #[error("slice {slice}: depth-to-win file: {why}")]
    DtwFile {
        /// The slice.
        slice: Slice,
        /// What is wrong.
        why: String,
    },
    /// The header's `longest` (the longest resolution ply, shown by `egdb stats`) differs
    /// from the one re-derived from the values (forward moves over the unit, level by level), or
    /// cannot be derived.
    #[error("slice {slice}: header statistic longest: {why}")]
    Longest {
        /// The slice.
        slice: Slice,
        /// What differs.
        why: String,
    },
    /// Slice files are missing (a build not finished, a deleted file).
    #[error(
        "tables incomplete: {missing} slice files missing (first {first}{}; see egdb info --slices)",
        needed_by.map_or(String::new(), |s| format!(", which the present slice {s} needs"))
    )]
    Incomplete {
        /// How many are missing.
        missing: usize,
        /// The first missing slice in build order.
        first: Slice,
        /// With `--partial`, where `first` has the largest piece count: a present slice whose
        /// unit needs it (the unit partner, or a slice of that piece count it reads), which is
        /// why it may not be absent.
        needed_by: Option<Slice>,
    },
    /// The directory holds no table files.
    #[error("no table files in {}", .0.display())]
    Empty(std::path::PathBuf),
    /// [`VerifyOptions::pieces`] selects no slice of the directory.
    #[error("no table files of {pieces} pieces in {} (it holds {held})", dir.display())]
    NoneSelected {
        /// The directory.
        dir: std::path::PathBuf,
        /// The piece counts asked for, as given (`8`, `5-8`).
        pieces: String,
        /// The piece counts it holds (`1-7`).
        held: String,
    },
    /// The slice index's incremental walk disagrees with `unrank` (a bug, never a table fault).
    #[error("slice {slice}: internal error in the index walk: {why}")]
    IndexWalk {
        /// The slice.
        slice: Slice,
        /// What disagreed.
        why: String,
    },
    /// The verification journal could not be read or written.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// A slice's values failed, and the failure reads another slice whose values failed
    /// before it: the moves from the wrong position reach it (through captures, crowning or
    /// a leading man's advance), or, for wrong totals, the slice's unit reads it. Its own
    /// error may only be a consequence, so it can be judged once that slice is right.
    #[error("{source} (it reads slice {failed}, which failed first)")]
    ReadsFailed {
        /// The slice.
        slice: Slice,
        /// The first failed slice it reads, in slice order.
        failed: Slice,
        /// Its own error.
        source: Box<VerifyError>,
    },
    /// Several files failed (each error names its file or slice), in the order verified
    /// (the build's).
    #[error("{} table files failed verification, first: {}", .0.len(), .0[0])]
    Several(Vec<VerifyError>),
}

impl VerifyError {
    /// The individual failures: those of [`VerifyError::Several`], or this one.
    pub fn failures(&self) -> Vec<&VerifyError> {
        match self {
            VerifyError::Several(v) => v.iter().collect(),
            e => vec![e],
        }
    }

    /// The slice a single failure is about; `None` for errors about the directory, the
    /// journal, [`VerifyError::Incomplete`] and [`VerifyError::Several`].
    pub fn slice(&self) -> Option<Slice> {
        match self {
            VerifyError::Probe { slice, .. }
            | VerifyError::Mismatch { slice, .. }
            | VerifyError::Counts { slice, .. }
            | VerifyError::DtcMismatch { slice, .. }
            | VerifyError::DtcFile { slice, .. }
            | VerifyError::DtwMismatch { slice, .. }
            | VerifyError::DtwFile { slice, .. }
            | VerifyError::Longest { slice, .. }
            | VerifyError::IndexWalk { slice, .. }
            | VerifyError::ReadsFailed { slice, .. } => Some(*slice),
            VerifyError::Stats(_)
            | VerifyError::Incomplete { .. }
            | VerifyError::Empty(_)
            | VerifyError::NoneSelected { .. }
            | VerifyError::Packed(_)
            | VerifyError::Journal(_)
            | VerifyError::Several(_) => None,
        }
    }

    /// For a slice that could not be verified because a table file *it reads* (a dependency,
    /// not its own `.egdb` or `.dtc` file) is damaged, unreadable or missing, or because a
    /// slice it reads failed before it ([`VerifyError::ReadsFailed`]): that file's path, or
    /// the file name of the missing or failed slice. `None` for every other error, including
    /// a fault in the slice's own files.
    pub fn failed_dependency(&self) -> Option<PathBuf> {
        if let VerifyError::ReadsFailed { failed, .. } = self {
            return Some(crate::table::table_path(Path::new(""), failed));
        }
        let VerifyError::Probe { slice, source } = self else {
            return None;
        };
        let path = match source {
            ProbeError::Table(t) => t.path()?.to_path_buf(),
            ProbeError::MissingSlice { slice: s } => crate::table::table_path(Path::new(""), s),
            _ => return None,
        };
        let own = path
            .file_stem()
            .and_then(|n| n.to_str())
            .and_then(|n| n.parse::<Slice>().ok())
            == Some(*slice);
        (!own).then_some(path)
    }
}

/// Open the journal at `path` for the files of `infos` (and their distance files, where
/// present), all of whose checksums have been checked.
fn open_journal(
    dir: &Path,
    infos: &[crate::stats::FileInfo],
    path: &Path,
) -> Result<Journal, VerifyError> {
    let mut current = std::collections::HashMap::new();
    let io = |p: &Path, e: std::io::Error| JournalError::Io {
        path: p.to_path_buf(),
        source: e,
    };
    for f in infos {
        let sum = journal::stored_file_checksum(&f.path).map_err(|e| io(&f.path, e))?;
        current.insert((journal::Part::Wld, f.slice), sum);
        let d = crate::table::dtc_path(dir, &f.slice);
        if d.exists() {
            let sum = journal::stored_file_checksum(&d).map_err(|e| io(&d, e))?;
            current.insert((journal::Part::Dtc, f.slice), sum);
        }
        let w = crate::table::dtw::dtw_path(dir, &f.slice);
        if w.exists() {
            let sum = journal::stored_file_checksum(&w).map_err(|e| io(&w, e))?;
            current.insert((journal::Part::Dtw, f.slice), sum);
        }
    }
    Ok(Journal::open(path, &current)?)
}

/// `Ok` for no errors, the error for one, [`VerifyError::Several`] for more.
fn fail(mut errors: Vec<VerifyError>) -> Result<(), VerifyError> {
    match errors.len() {
        0 => Ok(()),
        1 => Err(errors.remove(0)),
        _ => Err(VerifyError::Several(errors)),
    }
}

/// What a successful verification covered.
#[derive(Clone, Debug, Default)]
pub struct VerifyReport {
    /// Files checked.
    pub slices: u64,
    /// Positions checked (quiet and capture).
    pub positions: u64,
    /// Distance files checked (and their positions, counted in `dtc_positions`).
    pub dtc_slices: u64,
    /// Positions of the distance files checked.
    pub dtc_positions: u64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Slices of the largest piece count absent and allowed to be (`verify_dir_with` with
    /// `partial`).
    pub absent: u64,
    /// Distance files of the largest piece count absent while others are present, allowed
    /// with `partial` (a `build --dtc` in progress); their slices' values are still verified.
    pub dtc_absent: u64,
    /// Distance files present but left unchecked because their partner's is absent (with
    /// `partial`: a unit's distances are derived together).
    pub dtc_unchecked: u64,
    /// Slice files (WLD and distance) whose verification an earlier run recorded in the
    /// journal ([`VerifyOptions::journal`]), skipped now, and their positions.
    pub earlier_slices: u64,
    /// Positions of [`VerifyReport::earlier_slices`].
    pub earlier_positions: u64,
    /// Why an earlier journal was discarded (a file changed or is gone), if it was.
    pub journal_restarted: Option<String>,
    /// The dependency store's counters: peak decoded bytes, slices loaded and released,
    /// lookups served from the compressed files under the budget ([`VerifyOptions::memory`]).
    pub store: crate::store::StoreStats,
    /// Depth-to-win files checked (`verify_dtw_slice`; not recorded in the journal: checked
    /// again by every run).
    pub dtw_slices: u64,
    /// Positions of the depth-to-win files checked.
    pub dtw_positions: u64,
    /// Depth-to-win files of the largest piece count absent while others are present,
    /// allowed with `partial` (a `build --dtw` in progress).
    pub dtw_absent: u64,
    /// Depth-to-win files present but left unchecked because their partner's is absent
    /// (with `partial`).
    pub dtw_unchecked: u64,
    /// Slice files of piece counts outside [`VerifyOptions::pieces`]: their header and
    /// whole-file checksum were checked and their values read as dependencies, but not
    /// re-derived (nor their distance files).
    pub unselected_slices: u64,
    /// Positions of [`VerifyReport::unselected_slices`].
    pub unselected_positions: u64,
    /// With `partial`: slices present of a unit of the largest piece count whose other
    /// slice is absent (a unit a build in progress is writing) and that no complete unit
    /// reads: left unchecked for a later run.
    pub being_written: u64,
}

/// Options of [`verify_dir_opts`].
#[derive(Clone, Debug, Default)]
pub struct VerifyOptions {
    /// Allow absent slices of the largest piece count (`verify_dir_with`).
    pub partial: bool,
    /// A journal file (`journal`): slices verified are recorded there as they finish, and
    /// slices an earlier run recorded (with every file unchanged since) are skipped, so an
    /// interrupted verification resumes. The checksums of all files are still checked.
    pub journal: Option<PathBuf>,
    /// Memory budget in bytes for the decoded tables and distances (`None`: unbounded), as
    /// the build's `--memory` ([`crate::store::DecodedTables::with_budget`]). Either way a slice
    /// is released after the last unit (in build order) that reads it; under a budget the
    /// reads that do not fit are served from the compressed files through a block cache. The
    /// outcome does not depend on the budget, only the speed.
    pub memory: Option<u64>,
    /// The game the tables are expected to be of (`egdb verify --rules`): `None` takes it
    /// from the files' headers (one variant per directory); given and not the headers' rules,
    /// the verification is refused ([`VerifyError::Stats`] naming both).
    pub rules: Option<crate::rules::Variant>,
    /// Where to send notices for the user as soon as they are known, whatever the outcome:
    /// today the journal's restart ([`VerifyReport::journal_restarted`], which an error
    /// would otherwise lose). `None`: not sent.
    pub notices: Option<std::sync::mpsc::Sender<String>>,
    /// Verify only the slices of these piece counts (`egdb verify --pieces 8`, `--pieces
    /// 5-8`; `None`: every slice). The others are still checked for presence, header and
    /// whole-file checksum, and their values are read as the selected slices' dependencies,
    /// but not re-derived: for adding a piece count to tables verified before (the same
    /// bytes, e.g. against a published manifest). Counted in
    /// [`VerifyReport::unselected_slices`]; never recorded in the journal.
    pub pieces: Option<std::ops::RangeInclusive<u32>>,
}

/// `with_oracle!(variant, r => body)` (this module's): `body` with `r` bound to the variant's independent
/// slow move generator (a [`crate::rules::Rules`] value: [`crate::movegen::Oracle`] for
/// English, else [`crate::rules::paths::Paths`] of the variant's id), what `verify` derives
/// values with.
macro_rules! with_oracle {
    ($v:expr, $r:ident => $body:expr) => {{
        use $crate::rules::paths::Paths;
        use $crate::rules::{brazilian, czech, giveaway, italian, pool, russian, spanish, Variant};
        match $v {
            Variant::English => {
                let $r = $crate::movegen::Oracle;
                $body
            }
            Variant::Giveaway => {
                let $r = Paths::<{ giveaway::ID }>;
                $body
            }
            Variant::Russian => {
                let $r = Paths::<{ russian::ID }>;
                $body
            }
            Variant::Brazilian => {
                let $r = Paths::<{ brazilian::ID }>;
                $body
            }
            Variant::Italian => {
                let $r = Paths::<{ italian::ID }>;
                $body
            }
            Variant::Pool => {
                let $r = Paths::<{ pool::ID }>;
                $body
            }
            Variant::Spanish => {
                let $r = Paths::<{ spanish::ID }>;
                $body
            }
            Variant::Czech => {
                let $r = Paths::<{ czech::ID }>;
                $body
            }
        }
    }};
}

/// Value of `p` (any side to move) derived from its successors by forward move generation
/// under `rules` (the oracle, e.g. [`Oracle`](crate::movegen::Oracle)).
///
/// # Errors
/// A missing or corrupt table needed by a successor.
pub fn derive_value<R: Rules, S: RawSource + ?Sized>(
    rules: R,
    src: &S,
    p: &Position,
) -> Result<Wld, ProbeError> {
    let mut best = Wld::Loss;
    let mut any = false;
    let mut err = None;
    rules.for_each_successor(p, |s| {
        any = true;
        if best == Wld::Win || err.is_some() {
            return;
        }
        match resolve_with(rules, src, &s) {
            Ok(v) => best = best.max(v.negate()),
            Err(e) => err = Some(e),
        }
    });
    match err {
        Some(e) => Err(e),
        // No legal move: the terminal rule (a loss in English, a win in giveaway).
        None if !any => Ok(rules.no_move_value()),
        None => Ok(best),
    }
}

/// A [`RawSource`] that notes every slice it is asked about (to tell which slices a
/// derivation read), passing each question on to `inner`.
struct Recording<'a, S: ?Sized> {
    inner: &'a S,
    seen: std::sync::Mutex<std::collections::BTreeSet<Slice>>,
}

impl<'a, S: RawSource + ?Sized> Recording<'a, S> {
    fn new(inner: &'a S) -> Self {
        Recording {
            inner,
            seen: Default::default(),
        }
    }
    fn note(&self, s: Slice) {
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(s);
    }
    /// The slices asked about, sorted.
    fn slices(self) -> Vec<Slice> {
        let seen = self.seen.into_inner().unwrap_or_else(|p| p.into_inner());
        seen.into_iter().collect()
    }
}

impl<S: RawSource + ?Sized> RawSource for Recording<'_, S> {
    fn raw(&self, slice: &Slice, index: u64) -> Result<Wld, ProbeError> {
        self.note(*slice);
        self.inner.raw(slice, index)
    }
    fn raw_position(&self, p: &Position) -> Result<Wld, ProbeError> {
        self.note(Slice::of(p));
        self.inner.raw_position(p)
    }
    fn threats_dont_care(&self, slice: &Slice) -> Result<bool, ProbeError> {
        self.note(*slice);
        self.inner.threats_dont_care(slice)
    }
    fn raw_quiet(
        &self,
        p: &Position,
        threat: &dyn Fn() -> bool,
    ) -> Result<Option<Wld>, ProbeError> {
        self.note(Slice::of(p));
        self.inner.raw_quiet(p, threat)
    }
}

/// Call `f(i, position)` for the positions `start..end` of `index` in index order, by the
/// index's incremental walk (`visit`, several times cheaper than `unrank` per position). The
/// walk's first position is checked against `unrank`, every position against `rank` (a
/// separate computation: the builder's initial pass walks with `visit` too, so a position
/// given at the wrong index would otherwise be derived and stored alike) and its count against
/// the range, so a bug in the walk is reported ([`VerifyError::IndexWalk`]), never verified as
/// values. Stops at the first error of `f`.
fn walk(
    index: &SliceIndex,
    start: u64,
    end: u64,
    mut f: impl FnMut(u64, &Position) -> Result<(), VerifyError>,
) -> Result<(), VerifyError> {
    let slice = index.slice();
    let mut result = Ok(());
    let mut next = start;
    index.visit(start, end, |i, p| {
        if result.is_err() {
            return;
        }
        if i != next
            || i >= end
            || index.rank(&p) != i
            || (i == start && index.unrank(i).ok() != Some(p))
        {
            result = Err(VerifyError::IndexWalk {
                slice,
                why: format!("the walk gave position {i} where {next} was due"),
            });
            return;
        }
        next += 1;
        result = f(i, &p);
    });
    result?;
    if next != end {
        return Err(VerifyError::IndexWalk {
            slice,
            why: format!("the walk of {start}..{end} stopped at {next}"),
        });
    }
    Ok(())
}

/// Verify one slice against `src` (which must hold the slice itself and its dependencies);
/// `progress` is called with the number of positions done, per chunk. With `entries`, also
/// the slice's initial resolution-ply entries for
/// [`derive_longest`] (the same successors' lookups serve both). `quiet`: direct reads of the
/// slice's partner, for [`derive_entry`].
fn verify_slice_entries<R: Rules, S: RawSource + ?Sized>(
    rules: R,
    src: &S,
    slice: &Slice,
    header: (u64, u64, u64),
    entries: bool,
    quiet: Option<&QuietValues<'_>>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(u64, Option<Vec<u16>>), VerifyError> {
    let index = SliceIndex::new(*slice);
    let n = index.size();
    const CHUNK: u64 = 1 << 14;
    let chunks = n.div_ceil(CHUNK);
    let partner = slice.partner();
    let inside = |s: &Position| Slice::of(&s.normalized()) == partner;
    // Codec 4 stores no value at the threat positions and the positions without a move.
    let threats_dc = src
        .threats_dont_care(slice)
        .map_err(|e| VerifyError::Probe {
            slice: *slice,
            source: e,
        })?;
    // The entries are written in place, a chunk of the array per task (no per-chunk copies
    // gathered afterwards: two bytes a position, as `unit_own_bytes` charges).
    let mut all: Vec<u16> = if entries {
        zeroed_entries(n as usize)
    } else {
        Vec::new()
    };
    let run = |c: u64, mut out: Option<&mut [u16]>| -> Result<(u64, u64, u64), VerifyError> {
        let (mut w, mut l, mut d) = (0, 0, 0);
        let (start, end) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
        walk(&index, start, end, |i, p| {
            let perr = |e| VerifyError::Probe {
                slice: *slice,
                source: e,
            };
            let (derived, capture) = match out.as_deref_mut() {
                Some(o) => {
                    let (v, e, capture) =
                        derive_entry(rules, src, p, &inside, quiet).map_err(perr)?;
                    o[(i - start) as usize] = e;
                    (v, capture)
                }
                None => (
                    derive_value(rules, src, p).map_err(perr)?,
                    rules.has_capture(p),
                ),
            };
            // Positions whose entry is don't care (captures; in a codec-4 slice also
            // threats and no move) are only counted. A threat position of a codec-4
            // slice is classed (`threat_search`, several move generations of the
            // oracle) only where its entry differs from the derived value: the outcome
            // is that of `is_dont_care` at every position (a mismatch or a read error
            // counts only where the entry is not don't care), at a fraction of the cost.
            if !capture && (!threats_dc || rules.has_quiet_move(p)) {
                let stored = src.raw(slice, i);
                if stored.as_ref().ok() != Some(&derived)
                    && !(threats_dc && crate::rules::search::threat_search(rules, p))
                {
                    return Err(VerifyError::Mismatch {
                        slice: *slice,
                        index: i,
                        fen: p.to_fen(),
                        stored: stored.map_err(perr)?,
                        derived,
                    });
                }
            }
            match derived {
                Wld::Win => w += 1,
                Wld::Loss => l += 1,
                Wld::Draw => d += 1,
            }
            Ok(())
        })?;
        progress(end - start);
        Ok((w, l, d))
    };
    let per: Vec<Result<(u64, u64, u64), VerifyError>> = if entries {
        all.par_chunks_mut(CHUNK as usize)
            .enumerate()
            .map(|(c, out)| run(c as u64, Some(out)))
            .collect()
    } else {
        (0..chunks).into_par_iter().map(|c| run(c, None)).collect()
    };
    let mut counted = (0, 0, 0);
    for r in per {
        let (w, l, d) = r?;
        counted.0 += w;
        counted.1 += l;
        counted.2 += d;
    }
    if counted != header {
        return Err(VerifyError::Counts {
            slice: *slice,
            header,
            counted,
        });
    }
    Ok((n, entries.then_some(all)))
}

/// The value of `p` derived from its successors (as [`derive_value`]) and its initial entry
/// for [`derive_longest`]: [`RP_DRAW`]; 0 without a move (the terminal rule's value,
/// [`Rules::no_move_value`]); 1 for a capture position, a win
/// by a move leaving the unit (`inside` false) to a lost position, or a loss whose every
/// move leaves the unit; otherwise [`RP_OPEN`]. Wins carry [`RP_WIN`]. The third part says
/// whether `p` must capture (`rules.has_capture(p)`, asked once here for the caller too).
///
/// `quiet`: direct reads of the partner slice (where the side to move's king moves lead)
/// when it stores the true value at every position without a capture
/// ([`DecodedTables::exact_quiet`]). A king move (no capture, no crowning: the men and
/// the number of pieces unchanged) then stays in the unit, and its result, unless it must
/// capture, is read at `men_base` of its men (once per position) plus its kings' offset,
/// with no test for a move (a position without one stores its value in such a slice, and
/// the walk compares that stored value like any other). Every other move goes through
/// [`resolve_with`] as before; `p` must then have Black to move (a slice's position).
fn derive_entry<R: Rules, S: RawSource + ?Sized>(
    rules: R,
    src: &S,
    p: &Position,
    inside: &(dyn Fn(&Position) -> bool + Sync),
    quiet: Option<&QuietValues<'_>>,
) -> Result<(Wld, u16, bool), ProbeError> {
    let mut best = Wld::Loss;
    let (mut any, mut any_inside, mut exit_to_loss) = (false, false, false);
    let mut err = None;
    let (black_men, white_men) = (p.black & !p.kings, p.white & !p.kings);
    let pieces = (p.black | p.white).count_ones();
    // The result's men seen from its side to move (the colours swapped, the board turned),
    // and their part of the index, computed at the first king move met.
    let quiet = quiet.filter(|_| p.side == Color::Black && p.black & p.kings != 0);
    let men_flipped = rotate(black_men | white_men);
    let mut base = None;
    rules.for_each_successor(p, |s| {
        any = true;
        if exit_to_loss || err.is_some() {
            return;
        }
        if let Some(q) = quiet {
            if s.black & !s.kings == black_men
                && s.white & !s.kings == white_men
                && (s.black | s.white).count_ones() == pieces
            {
                // A king move: the result lies in the partner slice.
                any_inside = true;
                if best == Wld::Win {
                    return;
                }
                let v = if rules.has_capture(&s) {
                    resolve_with(rules, src, &s)
                } else {
                    let base = *base.get_or_insert_with(|| {
                        q.index.men_base(rotate(white_men), rotate(black_men))
                    });
                    let (bk, wk) = (rotate(s.white & s.kings), rotate(s.black & s.kings));
                    let i = base + q.index.king_offset(bk, wk, men_flipped);
                    debug_assert_eq!(i, q.index.rank(&s.normalized()));
                    q.value(i)
                };
                match v {
                    Ok(v) => best = best.max(v.negate()),
                    Err(e) => err = Some(e),
                }
                return;
            }
        }
        let stays = inside(&s);
        any_inside |= stays;
        // Once a win is known, only the moves leaving the unit still matter (a win by one
        // of them resolves at ply 1).
        if best == Wld::Win && stays {
            return;
        }
        match resolve_with(rules, src, &s) {
            Ok(v) => {
                best = best.max(v.negate());
                exit_to_loss = !stays && v == Wld::Loss;
            }
            Err(e) => err = Some(e),
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    if !any {
        // The terminal rule (a loss in English, a win in giveaway), at ply 0.
        let v = rules.no_move_value();
        return Ok((v, if v == Wld::Win { RP_WIN } else { 0 }, false));
    }
    let capture = rules.has_capture(p);
    let e = if best == Wld::Draw {
        RP_DRAW
    } else if capture || exit_to_loss || (best == Wld::Loss && !any_inside) {
        1
    } else {
        RP_OPEN
    };
    Ok((best, if best == Wld::Win { e | RP_WIN } else { e }, capture))
}

/// Verify the distances of one slice: `own` holds its stored distances (index order),
/// `partner` those of `slice.partner()` (where its king moves lead); `src` the WLD tables.
/// For every quiet position that is won or lost (draws and capture positions store no
/// distance) the stored distance must equal the one derived from the successors under
/// `rules` (the oracle): d(m) = 1 for a conversion ([`Rules::is_conversion`]), else 1 + the
/// distance of the result (0 if it has no move, 1 if it must capture, else stored); a win is
/// the minimum of d(m) over moves to a lost result, a loss the maximum over all moves (0 with
/// no move).
///
/// Returns the number of positions and the slice's longest distance as the header states it:
/// the largest distance of a won or lost position, a capture position's counting 1 (its
/// entry is don't care; it converts at once).
///
/// # Errors
/// [`VerifyError::DtcMismatch`] for the lowest bad index; [`VerifyError::Probe`].
pub fn verify_dtc_slice<R: Rules, S: RawSource + ?Sized>(
    rules: R,
    src: &S,
    slice: &Slice,
    own: &[u32],
    partner: &[u32],
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(u64, u32), VerifyError> {
    let index = SliceIndex::new(*slice);
    let partner_slice = slice.partner();
    let pindex = SliceIndex::new(partner_slice);
    let n = index.size();
    const CHUNK: u64 = 1 << 14;
    let chunks = n.div_ceil(CHUNK);
    let perr = |e| VerifyError::Probe {
        slice: *slice,
        source: e,
    };
    let threats_dc = src.threats_dont_care(slice).map_err(perr)?;
    let partner_threats_dc = src.threats_dont_care(&partner_slice).map_err(perr)?;
    // Per chunk: the largest stored (and verified) distance of a won or lost quiet position.
    let longest = (0..chunks).into_par_iter().map(|c| {
        let (start, end) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
        let mut longest: Option<u32> = None;
        walk(&index, start, end, |i, p| {
            if rules.has_capture(p) {
                return Ok(());
            }
            // A threat position of a codec-4 slice stores no value: resolved by a search of at
            // most two plies.
            let v = if threats_dc && crate::probe::resolve::is_dont_care(rules, p) {
                resolve_with(rules, src, p).map_err(perr)?
            } else {
                src.raw(slice, i).map_err(perr)?
            };
            if v == Wld::Draw && rules.has_quiet_move(p) {
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
                // The successor's value and d(m): a conversion counts 1 (its value resolved
                // through the tables of fewer pieces or another slice); otherwise a king move,
                // whose result lies in the partner slice: 1 + 1 if the result must capture
                // (resolved by search), 1 if it has no move (the terminal rule), else 1 + its stored
                // distance, its value read at the same index (or, at a threat position of a
                // codec-4 partner, resolved by search).
                let step = if rules.is_conversion(p, &s) {
                    resolve_with(rules, src, &s).map(|sv| (sv, 1))
                } else if rules.has_capture(&s) {
                    resolve_with(rules, src, &s).map(|sv| (sv, 2))
                } else if !rules.has_quiet_move(&s) {
                    Ok((rules.no_move_value(), 1))
                } else {
                    let r = pindex.rank(&s.normalized());
                    let sv = if partner_threats_dc && crate::probe::resolve::is_dont_care(rules, &s)
                    {
                        resolve_with(rules, src, &s)
                    } else {
                        src.raw(&partner_slice, r)
                    };
                    sv.map(|sv| (sv, partner[r as usize].saturating_add(1)))
                };
                let (sv, d) = match step {
                    Ok(x) => x,
                    Err(e) => {
                        err = Some(e);
                        return;
                    }
                };
                match v {
                    Wld::Win if sv == Wld::Loss => best = Some(best.map_or(d, |b| b.min(d))),
                    Wld::Loss => best = Some(best.map_or(d, |b| b.max(d))),
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
                return Err(VerifyError::DtcMismatch {
                    slice: *slice,
                    index: i,
                    fen: p.to_fen(),
                    stored: own[i as usize],
                    derived,
                });
            }
            longest = longest.max(Some(derived));
            Ok(())
        })?;
        progress(end - start);
        Ok::<Option<u32>, VerifyError>(longest)
    });
    let longest = longest.try_reduce(|| None, |a, b| Ok(a.max(b)))?;
    // A won or lost capture position counts 1: looked for only when no quiet distance
    // reaches 1 (rare: a slice of draws, captures and positions without a move).
    if longest.unwrap_or(0) >= 1 {
        return Ok((n, longest.unwrap_or(0)));
    }
    let mut capture_decided = false;
    walk(&index, 0, n, |_, p| {
        if !capture_decided && rules.has_capture(p) {
            capture_decided = resolve_with(rules, src, p).map_err(perr)? != Wld::Draw;
        }
        Ok(())
    })?;
    Ok((
        n,
        if capture_decided {
            1
        } else {
            longest.unwrap_or(0)
        },
    ))
}

/// An entry of the resolution-ply arrays of [`derive_longest`]: a draw.
const RP_DRAW: u16 = u16::MAX;
/// A won or lost position whose resolution ply is not known yet (with [`RP_WIN`] for a win).
const RP_OPEN: u16 = 0x7FFE;
/// Flag of a won position in the resolution-ply arrays (the ply is in the low 15 bits).
const RP_WIN: u16 = 0x8000;

/// The most bytes per position of a unit that [`derive_longest`] holds beside the unit's
/// resolution-ply arrays (two bytes a position): its list of open positions is used only
/// when it takes at most this much, else each level scans the arrays for open positions.
const LONGEST_LIST_BYTES_PER_POSITION: u64 = 2;

/// An index in the open list of [`derive_longest`]: `u32` when every index of the unit fits
/// below `u32::MAX - 1` (8 bytes an open position with its watch), else `u64`.
trait OpenIx: Copy + Send + Sync + Eq {
    /// No watched successor.
    const NONE: Self;
    /// Resolved at this level (dropped from the list after it).
    const DONE: Self;
    fn get(self) -> u64;
    fn of(v: u64) -> Self;
}

impl OpenIx for u32 {
    const NONE: u32 = u32::MAX;
    const DONE: u32 = u32::MAX - 1;
    fn get(self) -> u64 {
        u64::from(self)
    }
    fn of(v: u64) -> u32 {
        u32::try_from(v).expect("an index of a unit listed with u32 indices")
    }
}

impl OpenIx for u64 {
    const NONE: u64 = u64::MAX;
    const DONE: u64 = u64::MAX - 1;
    fn get(self) -> u64 {
        self
    }
    fn of(v: u64) -> u64 {
        v
    }
}

/// The open positions of one slice in index order, each with the successor it waits on.
type OpenList<I> = Vec<(I, I)>;

/// Whether a resolution-ply entry is a won or lost position not resolved yet.
fn rp_open(e: u16) -> bool {
    e != RP_DRAW && e & !RP_WIN == RP_OPEN
}

/// `n` resolution-ply entries, zero, on transparent huge pages where the kernel gives them
/// ([`crate::hint::advise_huge`], asked before they are first written): [`derive_longest`]
/// reads them at random places.
fn zeroed_entries(n: usize) -> Vec<u16> {
    let v = vec![0u16; n];
    crate::hint::advise_huge(&v);
    v
}

/// The resolution-ply arrays as atomics (the same bytes: `AtomicU16` has the size,
/// alignment and bit validity of `u16`), so that a level's entries are written in place
/// while other threads read the partner's (or, for a slice that is its own partner, the
/// same) array.
fn rp_atomic(v: Vec<u16>) -> Vec<std::sync::atomic::AtomicU16> {
    let mut v = std::mem::ManuallyDrop::new(v);
    let (ptr, len, cap) = (v.as_mut_ptr(), v.len(), v.capacity());
    // SAFETY: the allocation was made for `cap` `u16`s and is handed over whole (`v` is never
    // dropped); `AtomicU16` has the same size and alignment as `u16` and every bit pattern is
    // valid for both, so the layout the allocator sees is unchanged.
    unsafe { Vec::from_raw_parts(ptr.cast::<std::sync::atomic::AtomicU16>(), len, cap) }
}

/// Level `k` of [`derive_longest`] for one open position `p` (won when `win`): its entry
/// (`k`, with [`RP_WIN`] for a win) when it resolves at ply `k`, else the index of a
/// successor inside the unit that must resolve below `k` first (a loss), or `u64::MAX`.
/// `theirs`: the entries of the slice of `p`'s successors inside the unit.
fn longest_step<R: Rules>(
    rules: R,
    p: &Position,
    win: bool,
    k: u16,
    theirs: (&Slice, &SliceIndex, &[std::sync::atomic::AtomicU16]),
) -> Result<u16, u64> {
    use std::sync::atomic::Ordering::Relaxed;
    let (their_slice, their_index, their) = theirs;
    let below = |f: u16| f != RP_DRAW && !rp_open(f) && f & !RP_WIN < k;
    let mut hit = false; // win: a lost successor at ply k - 1
    let mut blocker = u64::MAX; // loss: a successor not below ply k
    let mut top = 0u16;
    rules.for_each_successor(p, |s| {
        if hit || blocker != u64::MAX {
            return;
        }
        let q = s.normalized();
        if Slice::of(&q) != *their_slice {
            return;
        }
        let r = their_index.rank(&q);
        // An entry written at this level (ply k) reads as an open one: neither below k nor
        // k - 1, so the level's result does not depend on the order of the positions.
        let f = their[r as usize].load(Relaxed);
        if !below(f) {
            if !win {
                blocker = r;
            }
            return;
        }
        let ply = f & !RP_WIN;
        hit |= win && f & RP_WIN == 0 && ply == k - 1;
        top = top.max(ply);
    });
    match (win, hit, blocker) {
        (true, true, _) => Ok(k | RP_WIN),
        (false, _, u64::MAX) if top == k - 1 => Ok(k),
        (_, _, b) => Err(b),
    }
}

/// One level of [`derive_longest`] over a list of the open positions of one slice, each with
/// the successor it waits on (a loss): resolved positions get their entry in `own` and leave
/// the list. Returns how many resolved.
fn longest_level_list<R: Rules, I: OpenIx>(
    rules: R,
    list: &mut Vec<(I, I)>,
    own: (&SliceIndex, &[std::sync::atomic::AtomicU16]),
    theirs: (&Slice, &SliceIndex, &[std::sync::atomic::AtomicU16]),
    k: u16,
) -> u64 {
    use std::sync::atomic::Ordering::Relaxed;
    let (index, own) = own;
    let below = |f: u16| f != RP_DRAW && !rp_open(f) && f & !RP_WIN < k;
    let resolved: u64 = list
        .par_iter_mut()
        .map(|e| {
            // A loss waits until the successor it watches has resolved below the level (one
            // array read instead of an unrank and a move generation at every level).
            if e.1 != I::NONE && !below(theirs.2[e.1.get() as usize].load(Relaxed)) {
                return 0;
            }
            let i = e.0.get();
            let Ok(p) = index.unrank(i) else {
                e.1 = I::NONE;
                return 0;
            };
            let win = own[i as usize].load(Relaxed) & RP_WIN != 0;
            match longest_step(rules, &p, win, k, theirs) {
                Ok(entry) => {
                    own[i as usize].store(entry, Relaxed);
                    e.1 = I::DONE;
                    1
                }
                Err(b) => {
                    e.1 = if b == u64::MAX { I::NONE } else { I::of(b) };
                    0
                }
            }
        })
        .sum();
    if resolved > 0 {
        list.retain(|e| e.1 != I::DONE);
    }
    resolved
}

/// One level of [`derive_longest`] by a scan of one slice's entries for the open positions
/// (no list: no memory beyond the arrays; a loss's successors are generated again at every
/// level until it resolves). Returns how many resolved.
fn longest_level_scan<R: Rules>(
    rules: R,
    own: (&SliceIndex, &[std::sync::atomic::AtomicU16]),
    theirs: (&Slice, &SliceIndex, &[std::sync::atomic::AtomicU16]),
    k: u16,
) -> u64 {
    use std::sync::atomic::Ordering::Relaxed;
    const SCAN: usize = 1 << 14;
    let (index, own) = own;
    own.par_chunks(SCAN)
        .enumerate()
        .map(|(c, chunk)| {
            let mut n = 0;
            for (j, cell) in chunk.iter().enumerate() {
                let e = cell.load(Relaxed);
                if !rp_open(e) {
                    continue;
                }
                let Ok(p) = index.unrank((c * SCAN + j) as u64) else {
                    continue;
                };
                if let Ok(entry) = longest_step(rules, &p, e & RP_WIN != 0, k, theirs) {
                    cell.store(entry, Relaxed);
                    n += 1;
                }
            }
            n
        })
        .sum()
}

/// The positions from which Black, to move, can have reached `s` (White to move) by one
/// quiet move that keeps Black's material: `f` gets each (Black to move). A king steps back
/// one square along any diagonal over empty squares (any number with `flying` kings), a man
/// one square back toward Black's side (rows of lower squares). Written for the verifier
/// from the board's geometry alone, apart from the builder's un-moves (`rules::Retro`);
/// it may give positions that have a capture (no quiet move is then legal) or lie in
/// another slice: its callers only use it to choose which positions to examine, and the
/// examination ([`longest_step`]) generates their moves forward with the oracle.
fn black_unmoves(s: &Position, flying: bool, mut f: impl FnMut(Position)) {
    use crate::board::{Bits, NEIGHBOUR};
    let empty = !(s.black | s.white);
    for t in Bits(s.black) {
        let t = t as usize;
        let king = s.kings & (1 << t) != 0;
        // Directions 0 and 1 point toward square 32 (a Black man's forward), 2 and 3 back.
        for (d, step) in NEIGHBOUR.iter().enumerate() {
            if !king && d < 2 {
                continue;
            }
            let mut from = step[t];
            while from != 0xFF && empty & (1 << from) != 0 {
                let moved = (1u32 << t) | (1u32 << from);
                f(Position {
                    black: s.black ^ moved,
                    white: s.white,
                    kings: if king { s.kings ^ moved } else { s.kings },
                    side: crate::board::Color::Black,
                });
                if !(king && flying) {
                    break;
                }
                from = step[from as usize];
            }
        }
    }
}

/// One level of [`derive_longest`] driven by the positions resolved at the level before:
/// the open positions of `own` examined are those from which a position of `theirs` whose
/// entry has ply `k - 1` is reached by one move ([`black_unmoves`]). Every position that
/// resolves at level `k` is among them (a win resolving at `k` has a lost successor of ply
/// `k - 1`, a loss a successor of ply `k - 1`, its largest), so the level assigns what a scan
/// of every open position would, examining each with the same [`longest_step`]. Returns
/// how many resolved.
fn longest_level_pred<R: Rules>(
    rules: R,
    flying: bool,
    own: (&Slice, &SliceIndex, &[std::sync::atomic::AtomicU16]),
    theirs: (&Slice, &SliceIndex, &[std::sync::atomic::AtomicU16]),
    k: u16,
) -> u64 {
    use std::sync::atomic::Ordering::Relaxed;
    const SCAN: usize = 1 << 14;
    let (own_slice, own_index, own_rp) = own;
    let (their_slice, their_index, their_rp) = theirs;
    // Every position of `theirs`, flipped, lies in its partner slice: `own` (a unit is a
    // slice and its partner). So a king's un-move, which keeps the men, never leaves `own`.
    assert_eq!(
        their_slice.partner(),
        *own_slice,
        "a unit's two slices are partners"
    );
    let last = k - 1;
    // Candidates are ranked and their entries prefetched a batch at a time, then examined:
    // the entry loads are random reads of a multi-GB array at 8 pieces.
    const BATCH: usize = 64;
    // A chunk with at least one position in DENSE at ply `k - 1` is walked, not unranked.
    const DENSE: usize = 8;
    let examine = |batch: &mut Vec<(usize, Position)>| -> u64 {
        let mut n = 0;
        for (i, p) in batch.drain(..) {
            let f = own_rp[i].load(Relaxed);
            if !rp_open(f) {
                continue;
            }
            if let Ok(entry) = longest_step(rules, &p, f & RP_WIN != 0, k, theirs) {
                // Two threads may reach the same position: the first store counts.
                if own_rp[i]
                    .compare_exchange(f, entry, Relaxed, Relaxed)
                    .is_ok()
                {
                    n += 1;
                }
            }
        }
        n
    };
    // The predecessors of `q` (a position of `theirs` resolved at ply `k - 1`) that lie in
    // `own`, each ranked, its entry prefetched and queued for `examine`.
    let queue = |q: &Position, batch: &mut Vec<(usize, Position)>| {
        let s = q.flip();
        // A king's un-move keeps every man where it is, so the predecessor lies in `s`'s
        // slice, `own` (material and leading ranks unchanged), and shares its men's part of
        // the index: ranked once per `q`, only the kings per predecessor. A man's un-move may
        // change a leading rank: tested and ranked in full.
        let (black_men, white_men) = (s.black & !s.kings, s.white & !s.kings);
        debug_assert_eq!(Slice::of(&s), *own_slice);
        let base = own_index.men_base(black_men, white_men);
        let white_kings = s.white & s.kings;
        let men = black_men | white_men;
        // The white kings' part of the rank changes only when a white king stands strictly
        // between the two squares of the black king's step ([`SliceIndex::king_offset_with`]).
        let white_rank = own_index.white_king_rank(white_kings, men | (s.black & s.kings));
        black_unmoves(&s, flying, |p| {
            let i = if p.black & !p.kings == black_men {
                let step = p.black ^ s.black;
                let low = step & step.wrapping_neg();
                let between = (step ^ low).wrapping_sub(1) & !(low | low.wrapping_sub(1));
                if white_kings & between == 0 {
                    base + own_index.king_offset_with(p.black & p.kings, men, white_rank)
                } else {
                    base + own_index.king_offset(p.black & p.kings, white_kings, men)
                }
            } else {
                if Slice::of(&p) != *own_slice {
                    return;
                }
                own_index.rank(&p)
            } as usize;
            debug_assert_eq!(i as u64, own_index.rank(&p));
            crate::hint::prefetch(&own_rp[i]);
            batch.push((i, p));
        });
    };
    // Entries written during this level have ply `k`, so the positions at ply `k - 1` stay
    // the same while the level runs (also when `own` and `theirs` are one slice).
    let at_last = |e: u16| e != RP_DRAW && !rp_open(e) && e & !RP_WIN == last;
    their_rp
        .par_chunks(SCAN)
        .enumerate()
        .map(|(c, chunk)| {
            let mut n = 0;
            let mut batch = Vec::with_capacity(BATCH + 64);
            let hits = chunk
                .iter()
                .filter(|cell| at_last(cell.load(Relaxed)))
                .count();
            if hits == 0 {
                return 0;
            }
            let first = (c * SCAN) as u64;
            if hits * DENSE >= chunk.len() {
                // Many positions of the chunk at ply `k - 1` (level 2 meets most won and lost
                // positions: captures and exits resolve at ply 1): the index's incremental
                // walk over the chunk costs less than an `unrank` each.
                their_index.visit(first, first + chunk.len() as u64, |i, q| {
                    if at_last(chunk[(i - first) as usize].load(Relaxed)) {
                        queue(&q, &mut batch);
                        if batch.len() >= BATCH {
                            n += examine(&mut batch);
                        }
                    }
                });
            } else {
                for (j, cell) in chunk.iter().enumerate() {
                    if !at_last(cell.load(Relaxed)) {
                        continue;
                    }
                    let Ok(q) = their_index.unrank(first + j as u64) else {
                        continue;
                    };
                    queue(&q, &mut batch);
                    if batch.len() >= BATCH {
                        n += examine(&mut batch);
                    }
                }
            }
            n + examine(&mut batch)
        })
        .sum()
}

/// The header statistic `longest` of each slice of a unit (`slices`: a slice and its partner,
/// or one slice that is its own partner), re-derived from the values by forward move
/// generation under `rules` (the oracle), independently of the builder.
///
/// The statistic is the largest *resolution ply* over the slice's won and lost positions: the
/// number of plies, both sides playing by the value, until the play leaves the unit (a capture,
/// a crowning or a move that changes a leading rank, i.e. a move to a position outside the
/// unit's two slices). By definition, for a won or lost position p:
/// - no legal move: 0;
/// - the side to move must capture: 1;
/// - won: 1 if a move leaving the unit reaches a position lost for the opponent, else 1 + the
///   least resolution ply of a lost successor inside the unit;
/// - lost: 1 if every move leaves the unit, else 1 + the largest resolution ply of its
///   successors inside the unit (all won for the opponent).
///
/// `initial` holds each slice's entries in index order as [`derive_entry`] gives them (the
/// plies known from the position and the moves leaving the unit). The rest is computed level
/// by level: level k assigns exactly the positions of ply k, reading only plies below k, so
/// the result does not depend on the scheduling. Each level looks at the positions still
/// open: from a list (an index and a watched successor each: a loss waits on one unresolved
/// successor) when the list takes at most [`LONGEST_LIST_BYTES_PER_POSITION`] bytes per
/// position of the unit (8 bytes an open position, 16 for slices of 2^32 positions or more),
/// else by a scan of the arrays. Memory: two bytes per position of the unit, and at most
/// [`LONGEST_LIST_BYTES_PER_POSITION`] more; the arrays are changed in place.
///
/// Returns the derived `longest` of each slice of `slices`, in order.
///
/// # Errors
/// [`VerifyError::Longest`] when a won or lost position never resolves (values that
/// contradict each other, such as a cycle of positions marked as wins; verified values never
/// do).
fn derive_longest<R: Rules>(
    rules: R,
    slices: &[Slice],
    initial: Vec<Vec<u16>>,
) -> Result<Vec<u32>, VerifyError> {
    derive_longest_with(rules, slices, initial, LongestWay::from_env())
}

/// How [`derive_longest`] finds the positions to examine at each level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LongestWay {
    /// Those reached back by one move from the positions resolved at the level before
    /// ([`longest_level_pred`]; the default: no memory beyond the arrays, each position's
    /// moves generated about once).
    Pred,
    /// A list of the open positions ([`longest_level_list`]).
    List,
    /// A scan of every open position ([`longest_level_scan`]).
    Scan,
    /// The list when it takes at most [`LONGEST_LIST_BYTES_PER_POSITION`] bytes a position,
    /// else the scan (the way before `Pred`).
    ListOrScan,
}

impl LongestWay {
    /// `EGDB_VERIFY_LONGEST=pred|list|scan|auto` forces a way (tests check that every way
    /// derives the same figures; docs/cli.md); unset or anything else: [`LongestWay::Pred`].
    fn from_env() -> LongestWay {
        match std::env::var("EGDB_VERIFY_LONGEST").as_deref() {
            Ok("list") => LongestWay::List,
            Ok("scan") => LongestWay::Scan,
            Ok("auto") => LongestWay::ListOrScan,
            _ => LongestWay::Pred,
        }
    }
}

/// [`derive_longest`] the way `way` says.
fn derive_longest_with<R: Rules>(
    rules: R,
    slices: &[Slice],
    initial: Vec<Vec<u16>>,
    way: LongestWay,
) -> Result<Vec<u32>, VerifyError> {
    use std::sync::atomic::Ordering::Relaxed;
    let indexes: Vec<SliceIndex> = slices.iter().map(|s| SliceIndex::new(*s)).collect();
    let other = |x: usize| if slices.len() == 1 { 0 } else { 1 - x };
    let rp: Vec<Vec<std::sync::atomic::AtomicU16>> = initial.into_iter().map(rp_atomic).collect();
    let open_of = |a: &[std::sync::atomic::AtomicU16]| {
        a.par_iter().filter(|e| rp_open(e.load(Relaxed))).count() as u64
    };
    // Open positions per slice, counted once (the total, and each list's exact capacity).
    let opens: Vec<usize> = rp.iter().map(|a| open_of(a) as usize).collect();
    let mut open: u64 = opens.iter().map(|&n| n as u64).sum();
    let positions: u64 = rp.iter().map(|a| a.len() as u64).sum();
    let small = rp
        .iter()
        .all(|a| (a.len() as u64) < u64::from(u32::MAX - 1));
    let list_bytes = open.saturating_mul(if small { 8 } else { 16 });
    let list = match way {
        LongestWay::List => true,
        LongestWay::Scan | LongestWay::Pred => false,
        LongestWay::ListOrScan => {
            list_bytes <= positions.saturating_mul(LONGEST_LIST_BYTES_PER_POSITION)
        }
    };
    let pred = way == LongestWay::Pred;
    let flying =
        crate::rules::paths::game_of(R::ID).kings == crate::rules::paths::KingRange::Flying;
    // The open positions of each slice in index order, with no watch yet (exact capacity, filled
    // in one pass: no transient copy beyond the list itself).
    fn listed<I: OpenIx>(a: &[std::sync::atomic::AtomicU16], n: usize) -> Vec<(I, I)> {
        let mut l = Vec::with_capacity(n);
        for (i, e) in a.iter().enumerate() {
            if rp_open(e.load(std::sync::atomic::Ordering::Relaxed)) {
                l.push((I::of(i as u64), I::NONE));
            }
        }
        l
    }
    let (mut lists32, mut lists64): (Vec<OpenList<u32>>, Vec<OpenList<u64>>) = match (list, small) {
        (true, true) => (
            rp.iter().zip(&opens).map(|(a, &n)| listed(a, n)).collect(),
            Vec::new(),
        ),
        (true, false) => (
            Vec::new(),
            rp.iter().zip(&opens).map(|(a, &n)| listed(a, n)).collect(),
        ),
        (false, _) => (Vec::new(), Vec::new()),
    };
    let mut k: u16 = 1;
    while open > 0 {
        if k >= RP_OPEN - 1 {
            return Err(VerifyError::Longest {
                slice: slices[0],
                why: format!("resolution plies beyond {k}"),
            });
        }
        let mut assigned = 0u64;
        for x in 0..slices.len() {
            let y = other(x);
            let own = (&indexes[x], &rp[x][..]);
            let theirs = (&slices[y], &indexes[y], &rp[y][..]);
            assigned += match (pred, list, small) {
                (true, _, _) => {
                    longest_level_pred(rules, flying, (&slices[x], own.0, own.1), theirs, k)
                }
                (_, true, true) => longest_level_list(rules, &mut lists32[x], own, theirs, k),
                (_, true, false) => longest_level_list(rules, &mut lists64[x], own, theirs, k),
                (_, false, _) => longest_level_scan(rules, own, theirs, k),
            };
        }
        open -= assigned;
        // Plies 0 and 1 are known before the levels (no move, captures, moves leaving the
        // unit), so level 1 may assign nothing while level 2 does; from level 2 on, a level
        // that assigns nothing leaves nothing for the next.
        if assigned == 0 && k >= 2 {
            // Open positions left that no level can assign: the values contradict each other
            // (a win with no way to realise it, a loss with a drawn successor).
            let (x, i) = (0..slices.len())
                .find_map(|x| {
                    rp[x]
                        .iter()
                        .position(|e| rp_open(e.load(Relaxed)))
                        .map(|i| (x, i as u64))
                })
                .expect("an open position remains");
            let fen = indexes[x].unrank(i).map(|p| p.to_fen()).unwrap_or_default();
            return Err(VerifyError::Longest {
                slice: slices[x],
                why: format!("position {i} ({fen}) never resolves"),
            });
        }
        k += 1;
    }
    Ok(rp
        .iter()
        .map(|a| {
            a.par_iter()
                .map(|e| e.load(Relaxed))
                .filter(|&e| e != RP_DRAW)
                .map(|e| u32::from(e & !RP_WIN))
                .max()
                .unwrap_or(0)
        })
        .collect())
}

/// The initial entries of [`derive_longest`] for `slice` alone (for a slice whose values an
/// earlier run verified, recorded in the journal, while its partner's are verified now).
///
/// # Errors
/// [`VerifyError::Probe`].
fn initial_entries<R: Rules, S: RawSource + ?Sized>(
    rules: R,
    src: &S,
    slice: &Slice,
) -> Result<Vec<u16>, VerifyError> {
    let index = SliceIndex::new(*slice);
    let n = index.size();
    const CHUNK: u64 = 1 << 14;
    let partner = slice.partner();
    let inside = |s: &Position| Slice::of(&s.normalized()) == partner;
    let mut all = zeroed_entries(n as usize);
    // Every chunk's result kept, so that the error reported is the first chunk's in order.
    let results: Vec<Result<(), VerifyError>> = all
        .par_chunks_mut(CHUNK as usize)
        .enumerate()
        .map(|(c, out)| {
            let (start, end) = (c as u64 * CHUNK, ((c as u64 + 1) * CHUNK).min(n));
            walk(&index, start, end, |i, p| {
                let (_, e, _) =
                    derive_entry(rules, src, p, &inside, None).map_err(|e| VerifyError::Probe {
                        slice: *slice,
                        source: e,
                    })?;
                out[(i - start) as usize] = e;
                Ok(())
            })
        })
        .collect();
    results.into_iter().collect::<Result<(), VerifyError>>()?;
    Ok(all)
}

/// Verify every table file in `dir` (checksums, values, header totals). Every bad file is
/// reported, not just the first: first every file's header and whole-file checksum (values
/// are not checked when any fails, since slices depend on each other), then every slice's
/// values. Then every distance file present
/// (checksum, counts against the WLD header, `verify_dtc_slice`).
///
/// # Errors
/// The failure, naming the slice (and position), or [`VerifyError::Several`] listing all.
pub fn verify_dir(
    dir: &Path,
    progress: &(dyn Fn(&Slice, u64, u64) + Sync),
) -> Result<VerifyReport, VerifyError> {
    verify_dir_with(dir, false, progress)
}

/// [`verify_dir`]; with `partial`, slices of the directory's largest piece count may be absent
/// (a build in progress, `egdb build --slice S --with-deps`, `egdb prove --build`) as long as
/// every slice present has its unit partner and every slice of that piece count it reads: the
/// slices present are verified, and the absent ones counted in [`VerifyReport::absent`].
/// Absent slices with fewer pieces are still an error.
///
/// # Errors
/// As [`verify_dir`].
pub fn verify_dir_with(
    dir: &Path,
    partial: bool,
    progress: &(dyn Fn(&Slice, u64, u64) + Sync),
) -> Result<VerifyReport, VerifyError> {
    verify_dir_opts(
        dir,
        &VerifyOptions {
            partial,
            ..VerifyOptions::default()
        },
        progress,
    )
}

/// `verify_dir_with` with [`VerifyOptions`]: also resumable through a journal.
///
/// # Errors
/// As [`verify_dir`]; [`VerifyError::Journal`].
pub fn verify_dir_opts(
    dir: &Path,
    opts: &VerifyOptions,
    progress: &(dyn Fn(&Slice, u64, u64) + Sync),
) -> Result<VerifyReport, VerifyError> {
    let table_err = |e| {
        VerifyError::Stats(StatsError::Table {
            path: dir.to_path_buf(),
            source: e,
        })
    };
    if crate::table::pack::has_packs(dir) {
        return Err(VerifyError::Packed(dir.to_path_buf()));
    }
    // (A directory that cannot be listed is reported below, as before.)
    let found = match crate::table::dir_rules(dir) {
        Err(crate::table::TableError::Io { .. }) => None,
        r => r.map_err(table_err)?,
    }
    .and_then(crate::rules::Variant::from_id);
    let variant = match (opts.rules, found) {
        (Some(want), Some(have)) if want != have => {
            return Err(table_err(crate::table::TableError::Invalid(format!(
                "{} holds {have} tables, not {want} (--rules {want})",
                dir.display()
            ))))
        }
        (Some(v), _) | (None, Some(v)) => v,
        (None, None) => crate::rules::Variant::English,
    };
    with_oracle!(variant, oracle => verify_dir_rules(oracle, variant, dir, opts, progress))
}

/// [`verify_dir_opts`] for the tables of `variant`, values derived with `oracle` (its slow
/// move generator).
fn verify_dir_rules<R: Rules>(
    oracle: R,
    variant: crate::rules::Variant,
    dir: &Path,
    opts: &VerifyOptions,
    progress: &(dyn Fn(&Slice, u64, u64) + Sync),
) -> Result<VerifyReport, VerifyError> {
    let partial = opts.partial;
    let start = Instant::now();
    let (infos, bad) = read_dir_info_all(dir)?;
    if infos.is_empty() && bad.is_empty() {
        return Err(VerifyError::Empty(dir.to_path_buf()));
    }
    if let Some(r) = &opts.pieces {
        let counts = infos
            .iter()
            .map(|f| f.slice.material.pieces())
            .chain(bad.iter().map(|(s, _)| s.material.pieces()));
        let (lo, hi) = counts.fold((u32::MAX, 0), |(l, h), p| (l.min(p), h.max(p)));
        let has = |p: u32| {
            infos.iter().any(|f| f.slice.material.pieces() == p)
                || bad.iter().any(|(s, _)| s.material.pieces() == p)
        };
        if !r.clone().any(has) {
            let range = |a: u32, b: u32| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            };
            return Err(VerifyError::NoneSelected {
                dir: dir.to_path_buf(),
                pieces: range(*r.start(), *r.end()),
                held: range(lo, hi),
            });
        }
    }
    let mut present = infos.clone();
    present.extend(bad.iter().map(|(s, _)| crate::stats::FileInfo {
        slice: *s,
        path: Default::default(),
        meta: crate::table::TableMeta {
            slice: *s,
            positions: 0,
            wins: 0,
            losses: 0,
            draws: 0,
            longest: 0,
        },
        bytes: 0,
        codec: 0,
        source: crate::table::pack::Source::file(Default::default()),
    }));
    let mut errors: Vec<VerifyError> = bad.into_iter().map(|(_, e)| e.into()).collect();
    let mut missing = crate::stats::missing_slices(&present);
    let mut absent = 0;
    let mut needed_by = None;
    // Slices of a unit being written (`partial`), left unchecked.
    let mut being_written: std::collections::HashSet<Slice> = std::collections::HashSet::new();
    if partial && !missing.is_empty() {
        let max = present.iter().map(|f| f.slice.material.pieces()).max();
        let have: std::collections::HashSet<Slice> = present.iter().map(|f| f.slice).collect();
        // Slices some present unit needs (its own slices and same-piece-count reads), each
        // with the first present slice (in build order) that needs it.
        // A unit with some of its slices present and some not is one being written (a
        // build in progress writes a unit's files one after the other): its present slices
        // are left for a later run, unless a complete unit present reads one of them.
        let mut needed = std::collections::HashMap::new();
        let mut in_progress = Vec::new();
        for u in crate::plan::build_order(max.unwrap_or(0)) {
            if Some(u.pieces) != max {
                continue;
            }
            if let Some(p) = u.slices.iter().find(|s| have.contains(s)) {
                if u.slices.iter().all(|s| have.contains(s)) {
                    for s in u.slices.iter().chain(&u.deps) {
                        needed.entry(*s).or_insert(*p);
                    }
                } else {
                    in_progress.push(u);
                }
            }
        }
        for u in in_progress {
            match u.slices.iter().find(|s| needed.contains_key(*s)) {
                Some(p) => {
                    // Read by a complete unit: its own slices are needed after all.
                    let p = needed[p];
                    for s in u.slices.iter().chain(&u.deps) {
                        needed.entry(*s).or_insert(p);
                    }
                }
                None => being_written.extend(u.slices.iter().filter(|s| have.contains(s))),
            }
        }
        let before = missing.len();
        missing.retain(|s| Some(s.material.pieces()) != max || needed.contains_key(s));
        needed_by = missing.first().and_then(|s| needed.get(s).copied());
        absent = (before - missing.len()) as u64;
    }
    if let Some(first) = missing.first() {
        errors.push(VerifyError::Incomplete {
            missing: missing.len(),
            first: *first,
            needed_by,
        });
    }
    // Distance files are all or nothing: once any slice has one, a slice without one is an
    // error (a deleted or never-built `.dtc` file), not something to skip; with `partial`,
    // except at the largest piece count (a `build --dtc` in progress).
    let any_dtc = infos
        .iter()
        .any(|f| crate::table::dtc_path(dir, &f.slice).exists());
    // Depth-to-win files are decoded whole per unit too (`dtw::verify_dtw_files`), with or
    // without distance-to-conversion files beside them.
    let any_distances = any_dtc
        || infos
            .iter()
            .any(|f| crate::table::dtw::dtw_path(dir, &f.slice).exists());
    let max_pieces = infos
        .iter()
        .map(|f| f.slice.material.pieces())
        .max()
        .unwrap_or(0);
    let mut dtc_absent = 0;
    for f in &infos {
        if let Err(e) =
            crate::table::TableFile::open_rules(&f.path, crate::table::Access::Mmap, R::ID)
                .and_then(|t| t.verify_checksum())
        {
            errors.push(VerifyError::Probe {
                slice: f.slice,
                source: e.into(),
            });
        }
        let d = crate::table::dtc_path(dir, &f.slice);
        if d.exists() {
            if let Err(e) = crate::table::DtcFile::open(&d, R::ID).and_then(|t| t.verify_checksum())
            {
                errors.push(VerifyError::DtcFile {
                    slice: f.slice,
                    why: e.to_string(),
                });
            }
        } else if any_dtc && partial && f.slice.material.pieces() == max_pieces {
            dtc_absent += 1;
        } else if any_dtc {
            errors.push(VerifyError::DtcFile {
                slice: f.slice,
                why: "the distance file is missing (other slices have one; rebuild with egdb build --dtc)".into(),
            });
        }
    }
    // A distance file whose value file is absent cannot be checked (its distances are derived
    // with the values): an error whatever `partial` says, never silently skipped.
    let named: std::collections::HashSet<Slice> = present.iter().map(|f| f.slice).collect();
    // The same for the depth-to-win files (issue 33).
    let (dtw_errors, dtw_absent) = dtw::check_dtw_files(dir, &infos, &named, partial, max_pieces);
    errors.extend(dtw_errors);
    let mut orphans: Vec<Slice> = std::fs::read_dir(dir)
        .map_err(|e| {
            VerifyError::Stats(StatsError::Io {
                path: dir.to_path_buf(),
                source: e,
            })
        })?
        .filter_map(|e| e.ok())
        .filter_map(|e| crate::table::slice_of_dtc_file_name(e.file_name().to_str()?))
        .filter(|s| !named.contains(s))
        .collect();
    orphans.sort();
    for s in orphans {
        errors.push(VerifyError::DtcFile {
            slice: s,
            why: format!(
                "a distance file without its value file {}: delete it or rebuild the slice",
                crate::table::table_path(dir, &s).display()
            ),
        });
    }
    fail(errors)?;
    let mut journal = match &opts.journal {
        Some(path) => Some(open_journal(dir, &infos, path)?),
        None => None,
    };
    if let (Some(tx), Some(why)) = (
        &opts.notices,
        journal.as_ref().and_then(|j| j.restarted.as_ref()),
    ) {
        // The receiver may be gone; the report still carries it.
        let _ = tx.send(format!("verify journal {why}"));
    }
    let selected = |s: &Slice| {
        opts.pieces
            .as_ref()
            .is_none_or(|r| r.contains(&s.material.pieces()))
    };
    let mut errors = Vec::new();
    // Every block of every file to verify decoded once (block checksums, zstd, digits) before
    // any value is checked: under a budget the store may serve a slice through the block
    // cache, which decodes only the blocks a lookup reaches, so the outcome must not rest on
    // the lookups, nor depend on the budget.
    for f in &infos {
        let done = journal
            .as_ref()
            .is_some_and(|j| j.done(journal::Part::Wld, &f.slice).is_some());
        if !done && selected(&f.slice) && !being_written.contains(&f.slice) {
            if let Err(e) = check_blocks(&f.path, R::ID) {
                errors.push(VerifyError::Probe {
                    slice: f.slice,
                    source: e.into(),
                });
            }
        }
    }
    fail(std::mem::take(&mut errors))?;
    // Verification goes by the build's units (piece counts ascending, then the plan's order),
    // so the store can release a slice after the last unit reading it and, under a budget,
    // serve the rest from the compressed files: memory like the build's, not every table.
    let max = infos
        .iter()
        .map(|f| f.slice.material.pieces())
        .max()
        .unwrap_or(0);
    let units: Vec<crate::plan::Unit> = crate::plan::build_order(max)
        .into_iter()
        .map(|mut u| {
            // The verifier also reads the unit's own slices through the store.
            let mut reads = u.slices.clone();
            reads.append(&mut u.deps);
            u.deps = reads;
            u
        })
        .collect();
    let by_slice: std::collections::HashMap<Slice, &crate::stats::FileInfo> =
        infos.iter().map(|f| (f.slice, f)).collect();
    // Each step: a unit of the plan (if any) and its files present, in the unit's order; a
    // file outside every unit (none are expected) goes last, on its own.
    let mut steps: Vec<(Option<&crate::plan::Unit>, Vec<&crate::stats::FileInfo>)> = Vec::new();
    // Files of piece counts not selected (`pieces`) are no step: only read.
    let mut placed = std::collections::HashSet::new();
    let mut unselected = (0u64, 0u64);
    for f in infos.iter().filter(|f| !selected(&f.slice)) {
        placed.insert(f.slice);
        unselected.0 += 1;
        unselected.1 += f.meta.positions;
    }
    for f in infos.iter().filter(|f| being_written.contains(&f.slice)) {
        placed.insert(f.slice);
    }
    for u in &units {
        let files: Vec<&crate::stats::FileInfo> = u
            .slices
            .iter()
            .filter(|s| !placed.contains(s))
            .filter_map(|s| by_slice.get(s).copied())
            .collect();
        if !files.is_empty() {
            placed.extend(files.iter().map(|f| f.slice));
            steps.push((Some(u), files));
        }
    }
    for f in &infos {
        if !placed.contains(&f.slice) {
            steps.push((None, vec![f]));
        }
    }
    let step_units: Vec<&crate::plan::Unit> = steps.iter().filter_map(|(u, _)| *u).collect();
    let last = crate::memory::last_reads(&step_units);
    let mut src = DecodedTables::with_budget(dir, opts.memory).for_variant(variant);
    let mut rep = VerifyReport {
        absent,
        dtc_absent,
        dtw_absent,
        journal_restarted: journal.as_ref().and_then(|j| j.restarted.clone()),
        unselected_slices: unselected.0,
        unselected_positions: unselected.1,
        // (A slice of a piece count not selected counts as not selected only.)
        being_written: being_written.iter().filter(|s| selected(s)).count() as u64,
        ..VerifyReport::default()
    };
    let mut errors = Vec::new();
    let mut wld_failed = false;
    // The tables, for the depths of successors in slices verified in earlier units.
    let dtw_tables = std::sync::OnceLock::new();
    // Slices whose values failed so far; a later value failure of a slice that reads one is
    // told apart. (Distance failures are never a consequence of another slice's: a slice's
    // distances are derived from its own and its partner's with the values of the others,
    // and they are only checked while every value so far is right.)
    let mut failed = std::collections::BTreeSet::new();
    let blame = |src: &DecodedTables,
                 unit: Option<&crate::plan::Unit>,
                 failed: &std::collections::BTreeSet<Slice>,
                 e: VerifyError| {
        let Some(u) = unit else { return e };
        let suspect = |s: &Slice| !u.slices.contains(s) && failed.contains(s);
        let read = match &e {
            // A wrong value at one position: the failed slices its derivation reads.
            VerifyError::Mismatch { slice, index, .. } => {
                SliceIndex::new(*slice).unrank(*index).ok().and_then(|p| {
                    let rec = Recording::new(src);
                    let _ = derive_value(oracle, &rec, &p);
                    rec.slices().into_iter().filter(suspect).min()
                })
            }
            // Totals that differ: the failed slices the unit reads.
            VerifyError::Counts { .. } => crate::memory::unit_reads(u)
                .into_iter()
                .filter(suspect)
                .min(),
            _ => None,
        };
        match (read, e.slice()) {
            (Some(d), Some(slice)) => VerifyError::ReadsFailed {
                slice,
                failed: d,
                source: Box::new(e),
            },
            _ => e,
        }
    };
    let mut k = 0;
    for (unit, files) in &steps {
        if let Some(u) = unit {
            // The unit's own memory: the decoded distances of its slices when it has any (DTC
            // or DTW files, 4 bytes a position), and two bytes per position for the resolution
            // plies of `derive_longest` (`unit_own_bytes`).
            let own = unit_own_bytes(u.sizes.iter().sum::<u64>(), any_distances);
            src.begin_unit(u, own);
        }
        let mut unit_ok = true;
        let mut unit_failed = Vec::new();
        let mut verified = Vec::new();
        for f in files {
            let m = &f.meta;
            if let Some(n) = journal
                .as_ref()
                .and_then(|j| j.done(journal::Part::Wld, &f.slice))
            {
                rep.earlier_slices += 1;
                rep.earlier_positions += n;
                continue;
            }
            let tick = |k: u64| progress(&f.slice, k, m.positions);
            // The longest-ply entries are kept when the whole unit is present.
            let entries = unit.is_some_and(|u| files.len() == u.slices.len());
            let header = (m.wins, m.losses, m.draws);
            // The partner's values read directly where it stores them at every position
            // without a capture (`derive_entry`); through `raw_quiet` otherwise, which also
            // reports a missing or damaged partner.
            let quiet = src.exact_quiet(&f.slice.partner()).ok().flatten();
            match verify_slice_entries(
                oracle,
                &src,
                &f.slice,
                header,
                entries,
                quiet.as_ref(),
                &tick,
            ) {
                Ok((n, e)) => verified.push((f, n, e)),
                Err(e) => {
                    errors.push(blame(&src, *unit, &failed, e));
                    unit_failed.push(f.slice);
                    unit_ok = false;
                }
            }
        }
        // The header's `longest` of every slice of the unit, re-derived from the verified
        // values (both slices of the unit at once; with `partial`, a unit whose partner is
        // absent is left unchecked). The journal records a slice only after this check.
        if let (Some(u), true) = (unit, unit_ok && !verified.is_empty()) {
            if files.len() == u.slices.len() {
                // Entries of a slice verified by an earlier run (journal) are derived now.
                let mut initial = Vec::with_capacity(files.len());
                for f in files.iter() {
                    let kept = verified
                        .iter_mut()
                        .find(|v| v.0.slice == f.slice)
                        .and_then(|v| v.2.take());
                    initial.push(match kept {
                        Some(e) => Ok(e),
                        None => initial_entries(oracle, &src, &f.slice),
                    });
                }
                let initial: Result<Vec<Vec<u16>>, VerifyError> = initial.into_iter().collect();
                match initial.and_then(|i| derive_longest(oracle, &u.slices, i)) {
                    Ok(derived) => {
                        for (f, d) in files.iter().zip(derived) {
                            if f.meta.longest != d {
                                errors.push(VerifyError::Longest {
                                    slice: f.slice,
                                    why: format!(
                                        "the header says {}, the values give {d}",
                                        f.meta.longest
                                    ),
                                });
                                unit_failed.push(f.slice);
                                unit_ok = false;
                            }
                        }
                    }
                    Err(e) => {
                        errors.push(e);
                        unit_failed.extend(u.slices.iter().copied());
                        unit_ok = false;
                    }
                }
            }
        }
        if unit_ok {
            for (f, n, _) in verified {
                rep.positions += n;
                rep.slices += 1;
                if let Some(j) = &mut journal {
                    j.record(journal::Part::Wld, &f.slice, n)?;
                }
            }
        }
        failed.extend(unit_failed);
        wld_failed |= !unit_ok;
        // Distances are checked against verified values only: after any WLD failure, the
        // distance files are left until the values are right.
        if !wld_failed {
            let dtc_errors = verify_dtc_files(
                oracle,
                dir,
                &src,
                files,
                partial.then_some(max_pieces),
                &mut journal,
                &mut rep,
                progress,
            )?;
            errors.extend(dtc_errors);
            errors.extend(dtw::verify_dtw_files(
                dir,
                &src,
                &dtw_tables,
                files,
                partial.then_some(max_pieces),
                &mut journal,
                &mut rep,
                progress,
            )?);
        }
        if unit.is_some() {
            src.release_done(k, &last);
            k += 1;
        }
    }
    fail(errors)?;
    rep.store = src.stats();
    rep.seconds = start.elapsed().as_secs_f64();
    Ok(rep)
}

/// Decode every block of the WLD file at `path` (in parallel), checking each block's
/// checksum, size and digits; the values are dropped.
///
/// # Errors
/// The first bad block's [`crate::table::TableError`].
fn check_blocks(path: &Path, rules: u32) -> Result<(), crate::table::TableError> {
    let t = crate::table::TableFile::open_rules(path, crate::table::Access::Mmap, rules)?;
    (0..t.block_count())
        .into_par_iter()
        .try_for_each(|b| t.decode_block(b).map(drop))
}

/// The distance files of `files` (one unit's slices, whose WLD values are verified; every
/// distance file's checksum and presence were checked before): counts against the WLD
/// header, [`verify_dtc_slice`]. Each file is decoded once for the unit. `absent_ok`: the
/// piece count whose distance files may be absent (`--partial`), a slice whose partner's
/// file is absent is then left unchecked. Returns the bad
/// files' errors (each file is checked even when another one fails).
///
/// # Errors
/// Only a journal that cannot be written ([`VerifyError::Journal`]).
#[allow(clippy::too_many_arguments)]
fn verify_dtc_files<R: Rules>(
    oracle: R,
    dir: &Path,
    src: &DecodedTables,
    files: &[&crate::stats::FileInfo],
    absent_ok: Option<u32>,
    journal: &mut Option<Journal>,
    rep: &mut VerifyReport,
    progress: &(dyn Fn(&Slice, u64, u64) + Sync),
) -> Result<Vec<VerifyError>, VerifyError> {
    let bad = |s: &Slice, e: crate::table::TableError| VerifyError::DtcFile {
        slice: *s,
        why: e.to_string(),
    };
    let open = |s: &Slice| -> Result<Option<crate::table::DtcFile>, VerifyError> {
        let path = crate::table::dtc_path(dir, s);
        if !path.exists() {
            return Ok(None);
        }
        crate::table::DtcFile::open(&path, R::ID)
            .map(Some)
            .map_err(|e| bad(s, e))
    };
    let mut errors = Vec::new();
    // Decoded distances of the unit's slices (`None`: absent or unreadable).
    let mut decoded = std::collections::HashMap::new();
    type Decoded = std::collections::HashMap<Slice, Option<Vec<u32>>>;
    let decode = |s: &Slice, decoded: &mut Decoded, errors: &mut Vec<VerifyError>| -> bool {
        if !decoded.contains_key(s) {
            let d = match open(s)
                .and_then(|f| f.map(|f| f.decode_all().map_err(|e| bad(s, e))).transpose())
            {
                Ok(d) => d,
                Err(e) => {
                    errors.push(e);
                    None
                }
            };
            decoded.insert(*s, d);
        }
        decoded[s].is_some()
    };
    for f in files {
        let hdr = match open(&f.slice) {
            Ok(Some(h)) => h,
            Ok(None) => continue,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        if let Some(n) = journal
            .as_ref()
            .and_then(|j| j.done(journal::Part::Dtc, &f.slice))
        {
            // Verified by an earlier run: its checksum was checked again before.
            rep.earlier_slices += 1;
            rep.earlier_positions += n;
            continue;
        }
        let (dm, m) = (hdr.meta(), &f.meta);
        if (dm.wins, dm.losses) != (m.wins, m.losses) {
            errors.push(VerifyError::DtcFile {
                slice: f.slice,
                why: format!(
                    "{} wins, {} losses; the WLD file says {}, {}",
                    dm.wins, dm.losses, m.wins, m.losses
                ),
            });
            continue;
        }
        let partner = f.slice.partner();
        if !decode(&f.slice, &mut decoded, &mut errors) {
            continue;
        }
        if !decode(&partner, &mut decoded, &mut errors) {
            // (With `partial`, a missing partner file of the largest piece count was counted
            // as absent above: the slice cannot be checked yet.)
            let allowed = absent_ok == Some(partner.material.pieces());
            let partner_absent = !crate::table::dtc_path(dir, &partner).exists();
            if partner_absent && allowed {
                rep.dtc_unchecked += 1;
            } else if partner_absent {
                errors.push(VerifyError::DtcFile {
                    slice: f.slice,
                    why: format!("the partner slice {partner} has no distance file"),
                });
            }
            continue;
        }
        let (own, other) = (&decoded[&f.slice], &decoded[&partner]);
        let (Some(own), Some(other)) = (own.as_deref(), other.as_deref()) else {
            continue;
        };
        let tick = |k: u64| progress(&f.slice, k, m.positions);
        match verify_dtc_slice(oracle, src, &f.slice, own, other, &tick) {
            Ok((_, longest)) if longest != dm.longest => errors.push(VerifyError::DtcFile {
                slice: f.slice,
                why: format!(
                    "the header's longest distance is {}, the verified distances give {longest}",
                    dm.longest
                ),
            }),
            Ok((n, _)) => {
                rep.dtc_positions += n;
                rep.dtc_slices += 1;
                if let Some(j) = journal {
                    j.record(journal::Part::Dtc, &f.slice, f.meta.positions)?;
                }
            }
            Err(e) => errors.push(e),
        }
    }
    Ok(errors)
}

/// The memory a unit of `positions` positions holds beside its dependencies while it is
/// verified: 2 bytes a position of resolution plies (`derive_longest`; the default way needs
/// nothing more), [`LONGEST_LIST_BYTES_PER_POSITION`] more when `EGDB_VERIFY_LONGEST` asks
/// for a list of open positions, and with distance files (`.dtc` or `.dtw`, decoded whole a
/// unit at a time) their distances, a `u32` a position.
fn unit_own_bytes(positions: u64, distances: bool) -> u64 {
    let list = match LongestWay::from_env() {
        LongestWay::List | LongestWay::ListOrScan => LONGEST_LIST_BYTES_PER_POSITION,
        LongestWay::Pred | LongestWay::Scan => 0,
    };
    let per = 2
        + list
        + if distances {
            std::mem::size_of::<u32>() as u64
        } else {
            0
        };
    positions.saturating_mul(per)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::movegen::Oracle;

    /// Every quiet move that keeps the material (no capture, no crowning) is found back by
    /// [`black_unmoves`] from the position it reaches: the oracle's moves (English: short
    /// kings) and the path generator's Russian ones (flying kings), from positions of a fixed
    /// pseudo-random sequence. What `longest_level_pred` relies on to examine every position
    /// that can resolve at a level.
    #[test]
    fn black_unmoves_find_every_quiet_move_back() {
        fn check<R: Rules>(rules: R, flying: bool) -> u64 {
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            let mut next = || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            let mut moves = 0;
            for _ in 0..20_000 {
                let (mut black, mut white, mut kings) = (0u32, 0u32, 0u32);
                let n = 2 + next() % 9;
                for j in 0..n {
                    let sq = 1u32 << (next() % 32);
                    if (black | white) & sq != 0 {
                        continue;
                    }
                    if j % 2 == 0 {
                        black |= sq
                    } else {
                        white |= sq
                    }
                    if next() % 2 == 0 {
                        kings |= sq;
                    }
                }
                let p = Position {
                    black,
                    white,
                    kings,
                    side: crate::board::Color::Black,
                };
                if black == 0 || white == 0 || rules.validate(&p).is_err() || rules.has_capture(&p)
                {
                    continue;
                }
                rules.for_each_successor(&p, |s| {
                    if s.black.count_ones() != black.count_ones()
                        || s.white != white
                        || (s.kings & s.black).count_ones() != (kings & black).count_ones()
                    {
                        return;
                    }
                    moves += 1;
                    let mut found = false;
                    black_unmoves(&s, flying, |q| found |= q == p);
                    assert!(found, "{} -> {}: not found back", p.to_fen(), s.to_fen());
                });
            }
            moves
        }
        assert!(check(Oracle, false) > 10_000);
        let russian = crate::rules::paths::Paths::<{ crate::rules::russian::ID }>;
        assert!(check(russian, true) > 10_000);
    }

    /// Won positions marked open while every other position of king v king (a slice that is
    /// its own partner) is a draw can never resolve: a win needs a lost successor. Both ways
    /// of finding the open positions report it, naming the lowest open index; the answer is
    /// the construction's, not the code's.
    #[test]
    fn positions_that_cannot_resolve_are_reported_the_same_both_ways() {
        let slice: Slice = "0101-nn".parse().unwrap();
        let n = SliceIndex::new(slice).size() as usize;
        for (a, b) in [(7usize, 300usize), (n - 1, 40)] {
            let mut rp = vec![RP_DRAW; n];
            rp[a] = RP_OPEN | RP_WIN;
            rp[b] = RP_OPEN | RP_WIN;
            let low = a.min(b);
            for way in [
                LongestWay::List,
                LongestWay::Scan,
                LongestWay::ListOrScan,
                LongestWay::Pred,
            ] {
                match derive_longest_with(Oracle, &[slice], vec![rp.clone()], way) {
                    Err(VerifyError::Longest { slice: s, why }) => {
                        assert_eq!(s, slice);
                        assert!(
                            why.starts_with(&format!("position {low} ("))
                                && why.ends_with("never resolves"),
                            "{way:?}: {why}"
                        );
                    }
                    other => panic!("{way:?}: {other:?}"),
                }
            }
        }
        // And with nothing open, every draw: longest 0, both ways.
        for way in [LongestWay::List, LongestWay::Scan, LongestWay::Pred] {
            let rp = vec![RP_DRAW; n];
            assert_eq!(
                derive_longest_with(Oracle, &[slice], vec![rp], way).unwrap(),
                vec![0]
            );
        }
    }
}
