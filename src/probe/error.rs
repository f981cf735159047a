//! [`ProbeError`]: why a probe (or a dependency lookup of the generator) gave no value.

use crate::board::PositionError;
use crate::slice::Slice;
use crate::table::TableError;
use std::path::PathBuf;
use std::sync::Arc;

/// An operating-system error shared between threads (`Clone`), compared by kind and text.
#[derive(Clone, Debug)]
pub struct SharedIoError(pub Arc<std::io::Error>);

impl PartialEq for SharedIoError {
    fn eq(&self, other: &Self) -> bool {
        self.0.kind() == other.0.kind() && self.0.to_string() == other.0.to_string()
    }
}
impl Eq for SharedIoError {}
impl std::fmt::Display for SharedIoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}
impl std::error::Error for SharedIoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

/// Why a probe gave no value. `Clone + Eq` so that a failure remembered by a lazily opened
/// slice is reported identically to every thread.
///
/// Caller misuse ([`ProbeError::is_misuse`]: an invalid position, a capture position given to
/// a raw probe, an index out of range, more pieces than the tables cover) is kept apart from
/// problems of the tables ([`ProbeError::MissingSlice`], [`ProbeError::Table`] for damaged,
/// foreign or unreadable files, [`ProbeError::Io`], [`ProbeError::NoTables`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// The position has more pieces than the tables in the directory cover.
    #[error("position has {pieces} pieces; the tables cover at most {max}")]
    TooManyPieces {
        /// Pieces on the board.
        pieces: u32,
        /// Largest piece count of any table present.
        max: u32,
    },
    /// A slice needed for the answer (perhaps only during capture resolution) has no file.
    #[error("missing table for slice {slice}")]
    MissingSlice {
        /// The slice, e.g. `0101-nn`.
        slice: Slice,
    },
    /// A table file is damaged, truncated, foreign (other rules or codec), holds another slice
    /// than its name says, or cannot be read; the [`TableError`] names the file and the fault.
    #[error(transparent)]
    Table(#[from] TableError),
    /// A distance probe needs the distance-to-conversion file of a slice that has none
    /// (`egdb build --dtc` builds them).
    #[error("missing distance (DTC) table for slice {slice} (build it with egdb build --dtc)")]
    MissingDtc {
        /// The slice, e.g. `0201-nn`.
        slice: Slice,
    },
    /// The slice has no depth-to-win file (`<slice>.dtw`; `egdb build --dtw` builds them).
    #[error("missing depth-to-win (DTW) table for slice {slice} (build it with egdb build --dtw)")]
    MissingDtw {
        /// The slice, e.g. `0201-nn`.
        slice: Slice,
    },
    /// The table directory cannot be listed.
    #[error("cannot read the table directory {}: {source}", dir.display())]
    Io {
        /// The directory.
        dir: PathBuf,
        /// The OS error.
        #[source]
        source: SharedIoError,
    },
    /// A cache-only probe needed a block (or a slice) that is not loaded yet.
    #[error("value not in cache")]
    NotInCache,
    /// A raw probe was given a position where the side to move must capture.
    #[error("the side to move has a capture; use probe_wld to resolve it")]
    CapturePosition,
    /// A position index beyond the slice's size.
    #[error("index {index} out of range for slice {slice}")]
    IndexOutOfRange {
        /// The slice.
        slice: Slice,
        /// The index asked for.
        index: u64,
    },
    /// The position breaks a board invariant (see [`crate::Position::validate`]).
    #[error("invalid position: {0}")]
    InvalidPosition(#[from] PositionError),
    /// The directory holds no table files.
    #[error("no table files (*.egdb) in {}", dir.display())]
    NoTables {
        /// The directory.
        dir: PathBuf,
    },
}

impl ProbeError {
    /// Whether the error is the caller's misuse rather than a problem of the tables.
    pub fn is_misuse(&self) -> bool {
        matches!(
            self,
            ProbeError::TooManyPieces { .. }
                | ProbeError::CapturePosition
                | ProbeError::IndexOutOfRange { .. }
                | ProbeError::InvalidPosition(_)
        ) || matches!(self, ProbeError::Table(t) if t.is_misuse())
    }
}
