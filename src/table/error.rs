//! Errors of the table reader and writer: [`TableError`] and, for damaged files, [`Fault`].

use super::header::FORMAT_VERSION;
use crate::slice::Slice;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What is wrong with a damaged or foreign table file (the `what` of [`TableError::Corrupt`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// The file is shorter than its header says (or than a header).
    #[error("file is truncated: {len} bytes, expected {expected}")]
    Truncated {
        /// Actual length in bytes.
        len: u64,
        /// Length the header promises (or the minimum length).
        expected: u64,
    },
    /// The file is longer than its header says.
    #[error("file has {len} bytes, header says {expected}")]
    TrailingBytes {
        /// Actual length in bytes.
        len: u64,
        /// Length the header promises.
        expected: u64,
    },
    /// The first 8 bytes are not the table magic.
    #[error("bad magic (not an egdb table file)")]
    BadMagic,
    /// A format version this code does not read.
    #[error(
        "unsupported format version {0} (this build reads {FORMAT_VERSION}): rebuild the tables with egdb build"
    )]
    Version(u32),
    /// The file was built for other rules than those it is opened with.
    #[error(
        "rules id {found} ({}), expected {expected} ({}, the rules in use): a directory holds the tables of one variant",
        rules_name(*found),
        rules_name(*expected)
    )]
    Rules {
        /// Rules id in the header.
        found: u32,
        /// Rules id of the rules the file is opened with.
        expected: u32,
    },
    /// Another value codec than the reader's.
    #[error("unsupported codec id {0}")]
    Codec(u32),
    /// The header or block offset table does not match its checksum.
    #[error("header checksum mismatch")]
    HeaderChecksum,
    /// A header field is inconsistent (the text names which).
    #[error("bad header: {0}")]
    BadHeader(String),
    /// The whole-file checksum at the end of the file does not match.
    #[error("whole-file checksum mismatch")]
    FileChecksum,
    /// The file was rewritten or shortened since it was opened (its length or modification
    /// time differ): reopen the tables (a new `Tablebase`). Reported by positioned reads
    /// ([`crate::table::Access::Pread`]) for every block of the slice not already cached.
    #[error("file changed since it was opened ({was} bytes then, {now} now); reopen the tables")]
    Changed {
        /// Length at open.
        was: u64,
        /// Length now.
        now: u64,
    },
    /// A block's data does not match its checksum.
    #[error("block {0} checksum mismatch")]
    BlockChecksum(u64),
    /// A block's data did not decompress to the expected size and content.
    #[error("block {block} does not decode: {why}")]
    BlockDecode {
        /// Block number.
        block: u64,
        /// What the decoder said.
        why: String,
    },
}

/// Errors reading or writing table files.
#[derive(Clone, Debug, thiserror::Error)]
pub enum TableError {
    /// The operating system refused an operation on `path`.
    #[error("{}: {op}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done (`open`, `read`, `write`, `rename`, ...).
        op: &'static str,
        /// The OS error.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The file is damaged or not a table file.
    #[error("{}: corrupt table file: {what}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Which check failed.
        what: Fault,
    },
    /// The file holds another slice than its name (or the caller) says.
    #[error("{}: file holds slice {found}, expected {expected}", path.display())]
    WrongSlice {
        /// The file.
        path: PathBuf,
        /// The slice the name or caller asked for.
        expected: Slice,
        /// The slice in the header.
        found: Slice,
    },
    /// The path is not a regular file (a directory, a FIFO...).
    #[error("{} is not a regular file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// Caller misuse, not a file problem: bad arguments to the writer or reader (an index or
    /// block out of range, inconsistent counts, a bad block size; the text says which).
    #[error("invalid table request: {0}")]
    Invalid(String),
}

impl PartialEq for TableError {
    /// Equal variants with equal fields; I/O errors compare by path, operation and
    /// [`std::io::ErrorKind`].
    fn eq(&self, other: &Self) -> bool {
        use TableError::*;
        match (self, other) {
            (
                Io {
                    path: a,
                    op: x,
                    source: s,
                },
                Io {
                    path: b,
                    op: y,
                    source: t,
                },
            ) => a == b && x == y && s.kind() == t.kind(),
            (Corrupt { path: a, what: x }, Corrupt { path: b, what: y }) => a == b && x == y,
            (
                WrongSlice {
                    path: a,
                    expected: x,
                    found: f,
                },
                WrongSlice {
                    path: b,
                    expected: y,
                    found: g,
                },
            ) => a == b && x == y && f == g,
            (NotAFile { path: a }, NotAFile { path: b }) => a == b,
            (Invalid(a), Invalid(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for TableError {}

impl TableError {
    /// Whether the error is the caller's misuse ([`TableError::Invalid`]) rather than a
    /// problem with a file or the operating system.
    pub fn is_misuse(&self) -> bool {
        matches!(self, TableError::Invalid(_))
    }
}

impl TableError {
    /// The file the error is about; `None` for [`TableError::Invalid`] (caller misuse).
    pub fn path(&self) -> Option<&Path> {
        match self {
            TableError::Io { path, .. }
            | TableError::Corrupt { path, .. }
            | TableError::WrongSlice { path, .. }
            | TableError::NotAFile { path } => Some(path),
            TableError::Invalid(_) => None,
        }
    }

    pub(crate) fn io(path: &Path, op: &'static str, e: std::io::Error) -> TableError {
        TableError::Io {
            path: path.to_path_buf(),
            op,
            source: Arc::new(e),
        }
    }
    pub(crate) fn corrupt(path: &Path, what: Fault) -> TableError {
        TableError::Corrupt {
            path: path.to_path_buf(),
            what,
        }
    }
}

/// The name of the variant of rules id `id` (`"unknown rules"` for an id no variant has), for
/// [`Fault::Rules`].
fn rules_name(id: u32) -> &'static str {
    crate::rules::Variant::from_id(id).map_or("unknown rules", |v| v.name())
}
