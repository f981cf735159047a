//! The verification journal (`egdb verify --journal FILE`): what a verification has already
//! checked, so that a run killed or stopped after hours resumes where it stopped.
//!
//! A text file, one record per line, appended and flushed to disk (`fsync`) after every record:
//!
//! ```text
//! egdb-verify-journal 2
//! file 0301-6n 9f3c2a1b00d4e5f6      whole-file checksum of a WLD file the records rely on
//! dtcfile 0301-6n 0123456789abcdef   the same for a distance file
//! dtwfile 0301-6n 0123456789abcdef   the same for a depth-to-win file
//! wld 0301-6n 1234567                the slice's values are verified (positions)
//! dtc 0301-6n 1234567                its distances are verified (positions)
//! dtw 0301-6n 1234567                its depths to win are verified (positions)
//! ```
//!
//! A slice's values are derived from other slices, so a `wld` or `dtc` record holds only while
//! every file stays as it was. Before any work, every file present gets a `file`/`dtcfile`/`dtwfile` record
//! (the last 8 bytes of the file: its stored xxh64 checksum, which `verify` checks first). On
//! resume every recorded file must still exist with the same checksum. Otherwise the tables
//! changed (a rebuild, a deleted or replaced file, another directory): when a value file did,
//! the journal is started afresh and the earlier one kept as `FILE.old`; when only distance
//! files did, only the distance records are dropped (values never depend on distances); when
//! only depth-to-win files did, every depth-to-win record is dropped (a slice's depths read
//! those of slices in earlier units) and the value and distance records are kept.
//! [`Journal::open`] reports either. Files added since are recorded before work resumes. A last line
//! without its newline (a run killed while writing) is ignored. One run at a time: an open
//! journal holds an exclusive `flock` on `FILE.lock` ([`JournalError::Busy`] for another).

use crate::slice::Slice;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

const MAGIC: &str = "egdb-verify-journal 2";
/// The first line of the journals of `egdb verify` before the resolution-ply check of every
/// unit (2026-12-04): their `wld` records were written without it, and a slice recorded is
/// skipped, so such a journal is started afresh (kept as `FILE.old`), never resumed.
const MAGIC_1: &str = "egdb-verify-journal 1";

/// Why a journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Reading or writing the journal (or reading a table file's checksum) failed.
    #[error("verify journal {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Another `egdb verify` has the journal open (its lock file `FILE.lock` is locked): two
    /// runs appending to one journal could record a file as verified under the other run's
    /// checksum.
    #[error("verify journal {} is in use by another egdb verify (lock {}); wait for it to finish or give another --journal", path.display(), lock.display())]
    Busy {
        /// The journal.
        path: PathBuf,
        /// Its lock file.
        lock: PathBuf,
    },
    /// The journal is not one (another file given by mistake) or a line is malformed.
    #[error("verify journal {}: line {line}: {why} (not a journal written by egdb verify; remove it or give another path)", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Line number, from 1.
        line: usize,
        /// What is wrong.
        why: String,
    },
}

/// Which kind of file or record: the WLD file, the distance (`.dtc`) file or the depth-to-win
/// (`.dtw`) file of a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// The win/loss/draw file.
    Wld,
    /// The distance file.
    Dtc,
    /// The depth-to-win file.
    Dtw,
}

impl Part {
    fn file_tag(self) -> &'static str {
        match self {
            Part::Wld => "file",
            Part::Dtc => "dtcfile",
            Part::Dtw => "dtwfile",
        }
    }
    fn done_tag(self) -> &'static str {
        match self {
            Part::Wld => "wld",
            Part::Dtc => "dtc",
            Part::Dtw => "dtw",
        }
    }
    /// Order of the records of one slice (values, distances, depths).
    fn rank(self) -> u8 {
        match self {
            Part::Wld => 0,
            Part::Dtc => 1,
            Part::Dtw => 2,
        }
    }
    /// What the file is called in messages.
    fn what(self) -> &'static str {
        match self {
            Part::Wld => "the table file",
            Part::Dtc => "the distance file",
            Part::Dtw => "the depth-to-win file",
        }
    }
}

/// An open journal (appending).
pub struct Journal {
    path: PathBuf,
    file: File,
    /// The lock file `FILE.lock`, locked (`flock`, exclusive) while the journal is open; the
    /// kernel releases it when the process ends in any way. `None` where the filesystem has
    /// no locks.
    _lock: Option<File>,
    done: HashMap<(Part, Slice), u64>,
    /// What was dropped of an earlier journal because files changed, and why (the first such
    /// file): "started afresh: ..." or "kept its value records and dropped its distance
    /// records: ...", printed after "egdb: verify journal ".
    pub restarted: Option<String>,
}

/// The stored whole-file checksum of a table or distance file: its last 8 bytes
/// (little-endian xxh64 of the rest; see docs/format.md).
///
/// # Errors
/// I/O errors, a file under 8 bytes (`InvalidData`).
pub fn stored_file_checksum(path: &Path) -> std::io::Result<u64> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    if len < 8 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "file shorter than its checksum",
        ));
    }
    f.seek(SeekFrom::Start(len - 8))?;
    let mut b = [0u8; 8];
    f.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

impl Journal {
    /// Open (or create) the journal at `path` for the files `current` ((part, slice) → stored
    /// checksum, every file present). Records of an earlier run are kept when every file they
    /// name still has its checksum. Otherwise, when a value file
    /// changed or is gone, the journal is rewritten empty (the earlier one kept as `FILE.old`);
    /// when only distance files did, its distance records are dropped and its value records
    /// kept; [`Journal::restarted`] says which and why. Files of `current` not yet recorded are recorded.
    ///
    /// # Errors
    /// [`JournalError::Io`]: reading or writing the journal failed, or `path` is not a regular
    /// file (a directory, a device, a FIFO) or is a symbolic link to nothing;
    /// [`JournalError::Malformed`] for a file that is not a journal (its first line is checked
    /// before the rest is read) or has a malformed line (quoted cut to 80 characters);
    /// [`JournalError::Busy`] while another process has the journal open (an exclusive
    /// `flock` on `FILE.lock` beside it, created if missing and left there; on a filesystem
    /// without locks the journal is used unlocked).
    pub fn open(
        path: &Path,
        current: &HashMap<(Part, Slice), u64>,
    ) -> Result<Journal, JournalError> {
        let io = |source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut files = HashMap::new();
        let mut done = HashMap::new();
        let mut restarted = None;
        // A symbolic link to nothing would be replaced by a new regular file: refused, left
        // as it is.
        if let Some(e) = dangling_link(path) {
            return Err(io(e));
        }
        // Only a regular file (or a link to one, followed) is a journal: a device
        // (`/dev/null`), a FIFO or a directory would be replaced by the atomic rewrite, so it is
        // refused untouched.
        let path = &crate::atomic::target(path).map_err(io)?;
        let lock = beside(path, ".lock");
        let lock_file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock)
            .map_err(|source| JournalError::Io {
                path: lock.clone(),
                source,
            })?;
        let lock_file = match crate::atomic::try_lock(&lock_file, true).map_err(io)? {
            crate::atomic::LockOutcome::Locked => Some(lock_file),
            crate::atomic::LockOutcome::Unsupported => None,
            crate::atomic::LockOutcome::Busy => {
                return Err(JournalError::Busy {
                    path: path.to_path_buf(),
                    lock,
                })
            }
        };
        let existing = match File::open(path) {
            Ok(f) => Some(read_journal(path, f)?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(e)),
        };
        let version_1 = existing
            .as_ref()
            .is_some_and(|b| b.starts_with(format!("{MAGIC_1}\n").as_bytes()));
        if let (true, Some(bytes)) = (version_1, &existing) {
            let old = beside(path, ".old");
            crate::atomic::replace(&old, bytes).map_err(io)?;
            restarted = Some(format!(
                "started afresh: the journal was written by an earlier egdb verify (version 1, \
                 whose records were made without the check of every unit's resolution plies) \
                 (the earlier journal is kept as {})",
                old.display()
            ));
        } else if let Some(bytes) = &existing {
            let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            // A journal is created whole with its first line (atomically), so a file with bytes
            // but no complete line is some other file, not a torn journal: refuse it, keep it.
            if keep == 0 && !bytes.is_empty() {
                return Err(JournalError::Malformed {
                    path: path.to_path_buf(),
                    line: 1,
                    why: format!("expected {MAGIC:?}"),
                });
            }
            let text = String::from_utf8_lossy(&bytes[..keep]);
            parse(path, &text, &mut files, &mut done)?;
            // The first recorded file that changed or is gone, value files first (sorted, so
            // the message does not depend on the hash order).
            let mut stale: Vec<(Part, Slice)> = files
                .iter()
                .filter(|(k, sum)| current.get(k) != Some(sum))
                .map(|(k, _)| *k)
                .collect();
            stale.sort_by_key(|(p, s)| (p.rank(), *s));
            if let Some(&(part, s)) = stale.first() {
                let what = format!(
                    "{} of slice {s} {} since it was written",
                    part.what(),
                    if current.contains_key(&(part, s)) {
                        "changed"
                    } else {
                        "is gone"
                    }
                );
                if part == Part::Wld {
                    // Every value may depend on the changed file: start afresh, but keep the
                    // earlier records beside it (a run on the wrong directory would otherwise
                    // throw away hours of verification).
                    let old = beside(path, ".old");
                    crate::atomic::replace(&old, bytes).map_err(io)?;
                    restarted = Some(format!(
                        "started afresh: {what} (the earlier journal is kept as {})",
                        old.display()
                    ));
                    files.clear();
                    done.clear();
                } else if part == Part::Dtc {
                    // Values never depend on distance files, and a distance check only on its
                    // unit's distance files: the value records stay, the distance ones go.
                    restarted = Some(format!(
                        "kept its value records and dropped its distance records: {what}"
                    ));
                    files.retain(|(p, _), _| *p == Part::Wld);
                    done.retain(|(p, _), _| *p == Part::Wld);
                } else {
                    // A depth-to-win check reads the depths of slices of earlier units: every
                    // depth-to-win record goes, the value and distance ones stay.
                    restarted = Some(format!(
                        "kept its value and distance records and dropped its depth-to-win \
                         records: {what}"
                    ));
                    files.retain(|(p, _), _| *p != Part::Dtw);
                    done.retain(|(p, _), _| *p != Part::Dtw);
                }
            }
        }
        let bytes = existing.unwrap_or_default();
        // Records up to the last newline; a torn last line (a run killed while writing) is cut.
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let mut file = if keep == 0 || (restarted.is_some() && files.is_empty()) {
            rewrite(path, format!("{MAGIC}\n").as_bytes()).map_err(io)?
        } else if restarted.is_some() {
            // The records kept, rewritten without the dropped ones.
            let mut kept = format!("{MAGIC}\n");
            let mut keys: Vec<&(Part, Slice)> = files.keys().collect();
            keys.sort_by_key(|(p, s)| (*s, p.rank()));
            for k in keys {
                kept.push_str(&format!("{} {} {:016x}\n", k.0.file_tag(), k.1, files[k]));
                if let Some(n) = done.get(k) {
                    kept.push_str(&format!("{} {} {n}\n", k.0.done_tag(), k.1));
                }
            }
            rewrite(path, kept.as_bytes()).map_err(io)?
        } else if keep < bytes.len() {
            rewrite(path, &bytes[..keep]).map_err(io)?
        } else {
            OpenOptions::new().append(true).open(path).map_err(io)?
        };
        let mut keys: Vec<&(Part, Slice)> =
            current.keys().filter(|k| !files.contains_key(*k)).collect();
        keys.sort_by_key(|(p, s)| (*s, p.rank()));
        let mut add = String::new();
        for k in keys {
            add.push_str(&format!("{} {} {:016x}\n", k.0.file_tag(), k.1, current[k]));
            files.insert(*k, current[k]);
        }
        file.write_all(add.as_bytes()).map_err(io)?;
        file.sync_data().map_err(io)?;
        Ok(Journal {
            path: path.to_path_buf(),
            file,
            _lock: lock_file,
            done,
            restarted,
        })
    }

    /// Positions of `slice`'s `part` verified by an earlier run, if recorded.
    pub fn done(&self, part: Part, slice: &Slice) -> Option<u64> {
        self.done.get(&(part, *slice)).copied()
    }

    /// Record that `slice`'s `part` (`positions` positions) is verified; flushed to disk.
    ///
    /// # Errors
    /// [`JournalError::Io`].
    pub fn record(
        &mut self,
        part: Part,
        slice: &Slice,
        positions: u64,
    ) -> Result<(), JournalError> {
        let line = format!("{} {} {}\n", part.done_tag(), slice, positions);
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|source| JournalError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.done.insert((part, *slice), positions);
        Ok(())
    }
}

/// The error for a `path` that is a symbolic link naming nothing (or a loop of links), if it is
/// one: writing the journal there would replace the link by a file.
fn dangling_link(path: &Path) -> Option<std::io::Error> {
    let link = std::fs::symlink_metadata(path).ok()?;
    if !link.file_type().is_symlink() {
        return None;
    }
    let why = std::fs::metadata(path).err()?;
    let to = std::fs::read_link(path).map_or_else(|_| "?".into(), |t| t.display().to_string());
    Some(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "journal path is a dangling symbolic link: {} -> {to} ({why}); point it at a file \
             or give another path",
            path.display()
        ),
    ))
}

/// The bytes of the journal file `f` (at `path`), its first line checked first: a file that
/// does not start with the journal's first line is refused after reading that much of it,
/// however large it is. An empty file passes (it becomes a journal).
///
/// # Errors
/// [`JournalError::Malformed`] (line 1), [`JournalError::Io`].
fn read_journal(path: &Path, mut f: File) -> Result<Vec<u8>, JournalError> {
    let io = |source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    };
    let first = format!("{MAGIC}\n");
    let mut bytes = Vec::with_capacity(first.len());
    (&mut f)
        .take(first.len() as u64)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let first_1 = format!("{MAGIC_1}\n");
    if !bytes.is_empty() && bytes != first.as_bytes() && bytes != first_1.as_bytes() {
        let found = String::from_utf8_lossy(&bytes);
        let found = found.split('\n').next().unwrap_or_default();
        return Err(JournalError::Malformed {
            path: path.to_path_buf(),
            line: 1,
            why: format!("expected {MAGIC:?}, found {}", quote(found)),
        });
    }
    f.read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// Longest part of a journal line an error message quotes, in characters.
const QUOTE_CHARS: usize = 80;

/// `s` quoted for an error message (as `{:?}`), cut to [`QUOTE_CHARS`] characters with `...`
/// after the quote when longer: a malformed line may be huge.
fn quote(s: &str) -> String {
    match s.char_indices().nth(QUOTE_CHARS) {
        Some((i, _)) => format!("{:?}...", &s[..i]),
        None => format!("{s:?}"),
    }
}

/// `FILE` + `suffix` beside the journal at `path`: its lock file (`.lock`) and the earlier
/// journal kept when one starts afresh (`.old`).
fn beside(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    std::path::PathBuf::from(s)
}

/// Replace `path` by `bytes` atomically ([`crate::atomic::replace`]); the new file, for
/// appending.
fn rewrite(path: &Path, bytes: &[u8]) -> std::io::Result<File> {
    let written = crate::atomic::replace(path, bytes)?;
    OpenOptions::new().append(true).open(written)
}

fn parse(
    path: &Path,
    text: &str,
    files: &mut HashMap<(Part, Slice), u64>,
    done: &mut HashMap<(Part, Slice), u64>,
) -> Result<(), JournalError> {
    let bad = |line: usize, why: String| JournalError::Malformed {
        path: path.to_path_buf(),
        line,
        why,
    };
    for (i, l) in text.lines().enumerate() {
        let n = i + 1;
        if n == 1 {
            if l != MAGIC {
                return Err(bad(n, format!("expected {MAGIC:?}")));
            }
            continue;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        let [tag, slice, value] = f[..] else {
            return Err(bad(n, format!("expected three fields: {}", quote(l))));
        };
        let slice: Slice = slice.parse().map_err(|e: crate::slice::SliceNameError| {
            // The parser's message quotes the whole name, which may be huge.
            let why = if slice.chars().count() > QUOTE_CHARS {
                format!("slice {}: not a slice name like 2101-3n", quote(slice))
            } else {
                e.to_string()
            };
            bad(n, why)
        })?;
        let (part, is_file) = match tag {
            "file" => (Part::Wld, true),
            "dtcfile" => (Part::Dtc, true),
            "wld" => (Part::Wld, false),
            "dtc" => (Part::Dtc, false),
            "dtwfile" => (Part::Dtw, true),
            "dtw" => (Part::Dtw, false),
            _ => return Err(bad(n, format!("unknown record {}", quote(tag)))),
        };
        if is_file {
            let sum = u64::from_str_radix(value, 16)
                .map_err(|e| bad(n, format!("checksum {}: {e}", quote(value))))?;
            files.insert((part, slice), sum);
        } else {
            let k: u64 = value
                .parse()
                .map_err(|e| bad(n, format!("positions {}: {e}", quote(value))))?;
            done.insert((part, slice), k);
        }
    }
    // A record of work on a file that is not recorded cannot be trusted.
    done.retain(|k, _| files.contains_key(k));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runs must not append to one journal (found by a code review: each could record a
    /// file as verified under the other's checksum). The second open is refused while the
    /// first is open, and allowed once it is closed; the journal keeps the first's records.
    #[test]
    fn a_journal_open_elsewhere_is_refused_until_closed() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("v.journal");
        let s: Slice = "0101-nn".parse().unwrap();
        let current = HashMap::from([((Part::Wld, s), 0x1234u64)]);
        let mut first = Journal::open(&path, &current).unwrap();
        match Journal::open(&path, &current) {
            Err(JournalError::Busy { path: p, lock }) => {
                assert_eq!(p, crate::atomic::target(&path).unwrap());
                assert_eq!(lock, beside(&p, ".lock"));
            }
            other => panic!("expected Busy, got {:?}", other.map(|_| ())),
        }
        first.record(Part::Wld, &s, 6).unwrap();
        drop(first);
        let again = Journal::open(&path, &current).unwrap();
        assert_eq!(again.done(Part::Wld, &s), Some(6));
    }
}
