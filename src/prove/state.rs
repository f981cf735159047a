//! The saved search state of `egdb prove --state FILE`: both goals' transposition tables for
//! one root position, so that a long proof survives a restart.
//!
//! What is saved is every entry of the two tables ([`super::tt::Entry`]): the solved ones are
//! facts about the game with the tables used (path-independent results only ever enter the
//! table, see `search.rs`), the unsolved ones the proof and disproof numbers that steer the
//! search back to its frontier. Path-dependent results (the repetition cache) are not saved:
//! they hold on one path only and are found again. A resumed search therefore answers exactly
//! what a fresh one would; it only finds the answer sooner.
//!
//! # Format (version 1, little-endian)
//! - magic `egdb-prove-state` (16 bytes), version `u32` = 1;
//! - the root: black, white, kings (`u32` bitboards, bit i = square i+1), side to move (`u8`:
//!   0 black, 1 white);
//! - the tables ([`TableSet`]): largest piece count `u32`, file count `u64`, digest `u64`;
//! - two sections, *Win* then *NotLose*: an entry count `u64`, then that many entries of 31
//!   bytes: black, white, kings (`u32`), side (`u8`), OR-node flag (`u8`: the root's side to
//!   move is to move there), proof number, disproof number, work, proof height (`u32`), weak
//!   flag (`u8`);
//! - xxh64 (seed 0) of every byte before it (`u64`).
//!
//! A file is refused, never trusted, when its magic, version, length or checksum is wrong
//! (corrupt or truncated), when an entry is not a valid position or has impossible numbers,
//! or when it was saved for another root position or other tables. Files are written
//! atomically ([`crate::atomic::replace`]).

use super::tt::{Entry, SharedTable as Table, INF};
use crate::board::{Color, Position};
use crate::proofcheck::TableSet;
use std::io::Read;
use std::path::Path;

const MAGIC: &[u8; 16] = b"egdb-prove-state";
/// Format version written and read.
pub const VERSION: u32 = 1;
const ENTRY_BYTES: usize = 31;
const HEADER_BYTES: usize = 16 + 4 + 13 + 20;

/// Why a state file was refused or could not be written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Reading or writing failed.
    #[error("{path}: {err}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        err: std::io::Error,
    },
    /// Not a state file, or damaged or truncated.
    #[error("{path}: corrupt or truncated state file: {why}")]
    Corrupt {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// Written by another format version.
    #[error("{path}: state file version {found}; this egdb reads version {VERSION}")]
    Version {
        /// The file.
        path: String,
        /// The version found.
        found: u32,
    },
    /// Saved for another root position.
    #[error("{path}: the state file is of the position {found}, not {wanted}")]
    OtherPosition {
        /// The file.
        path: String,
        /// Its root (FEN).
        found: String,
        /// The position asked (FEN).
        wanted: String,
    },
    /// Saved with other tables.
    #[error(
        "{path}: the state file was made with other tables ({found}); this directory has {wanted}"
    )]
    OtherTables {
        /// The file.
        path: String,
        /// Its table set, in words.
        found: String,
        /// The directory's, in words.
        wanted: String,
    },
}

/// A loaded state: the entries of each goal's table.
#[derive(Debug)]
pub struct State {
    /// Entries of the *Win* searcher's table.
    pub win: Vec<Entry<Position>>,
    /// Entries of the *NotLose* searcher's table.
    pub not_lose: Vec<Entry<Position>>,
}

fn tables_words(t: &TableSet) -> String {
    format!(
        "{} files of at most {} pieces, digest {:016x}",
        t.files, t.max_pieces, t.digest
    )
}

fn put_pos(out: &mut Vec<u8>, p: &Position) {
    out.extend_from_slice(&p.black.to_le_bytes());
    out.extend_from_slice(&p.white.to_le_bytes());
    out.extend_from_slice(&p.kings.to_le_bytes());
    out.push(match p.side {
        Color::Black => 0,
        Color::White => 1,
    });
}

/// The bytes of the state of `root` (tables `tables`) with the two goals' tables.
pub fn encode(
    root: &Position,
    tables: &TableSet,
    win: &Table<Position>,
    not_lose: &Table<Position>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + 8 * 3 + (win.len() + not_lose.len()) * 31);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    put_pos(&mut out, root);
    out.extend_from_slice(&tables.max_pieces.to_le_bytes());
    out.extend_from_slice(&tables.files.to_le_bytes());
    out.extend_from_slice(&tables.digest.to_le_bytes());
    for t in [win, not_lose] {
        let entries = t.entries();
        out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        for e in &entries {
            put_pos(&mut out, &e.pos);
            out.push(u8::from(e.or_node));
            for x in [e.pn, e.dn, e.work, e.dist] {
                out.extend_from_slice(&x.to_le_bytes());
            }
            out.push(u8::from(e.weak));
        }
    }
    let sum = xxhash_rust::xxh64::xxh64(&out, 0);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Write the state atomically to `path`.
///
/// # Errors
/// [`StateError::Io`].
pub fn save(
    path: &Path,
    root: &Position,
    tables: &TableSet,
    win: &Table<Position>,
    not_lose: &Table<Position>,
) -> Result<(), StateError> {
    crate::atomic::replace(path, &encode(root, tables, win, not_lose))
        .map(|_| ())
        .map_err(|err| StateError::Io {
            path: path.display().to_string(),
            err,
        })
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|s| s[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|s| u32::from_le_bytes(s.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")))
    }
    fn pos(&mut self) -> Option<Result<Position, String>> {
        let (black, white, kings) = (self.u32()?, self.u32()?, self.u32()?);
        let side = match self.u8()? {
            0 => Color::Black,
            1 => Color::White,
            s => return Some(Err(format!("side to move {s}"))),
        };
        let p = Position {
            black,
            white,
            kings,
            side,
        };
        Some(p.validate().map(|_| p).map_err(|e| e.to_string()))
    }
}

/// Decode the bytes of a state file (named `path` in errors) for the root `root` and the
/// tables `tables`.
///
/// # Errors
/// [`StateError::Corrupt`], [`StateError::Version`], [`StateError::OtherPosition`],
/// [`StateError::OtherTables`].
pub fn decode(
    path: &str,
    bytes: &[u8],
    root: &Position,
    tables: &TableSet,
) -> Result<State, StateError> {
    let corrupt = |why: String| StateError::Corrupt {
        path: path.to_string(),
        why,
    };
    if bytes.len() < 16 || &bytes[..16] != MAGIC {
        return Err(corrupt(
            "not a prover state file (no egdb-prove-state magic)".into(),
        ));
    }
    let mut r = Reader { b: bytes, at: 16 };
    let version = r
        .u32()
        .ok_or_else(|| corrupt("ends in its header".into()))?;
    if version != VERSION {
        return Err(StateError::Version {
            path: path.to_string(),
            found: version,
        });
    }
    if bytes.len() < HEADER_BYTES + 8 {
        return Err(corrupt("ends in its header".into()));
    }
    let (body, sum) = bytes.split_at(bytes.len() - 8);
    if xxhash_rust::xxh64::xxh64(body, 0) != u64::from_le_bytes(sum.try_into().expect("8 bytes")) {
        return Err(corrupt(format!(
            "checksum mismatch ({} bytes)",
            bytes.len()
        )));
    }
    let mut r = Reader { b: body, at: 20 };
    let short = || corrupt("shorter than its counts say".into());
    let found = r
        .pos()
        .ok_or_else(short)?
        .map_err(|e| corrupt(format!("root: {e}")))?;
    if found != *root {
        return Err(StateError::OtherPosition {
            path: path.to_string(),
            found: found.to_fen(),
            wanted: root.to_fen(),
        });
    }
    let t = TableSet {
        max_pieces: r.u32().ok_or_else(short)?,
        files: r.u64().ok_or_else(short)?,
        digest: r.u64().ok_or_else(short)?,
    };
    if t != *tables {
        return Err(StateError::OtherTables {
            path: path.to_string(),
            found: tables_words(&t),
            wanted: tables_words(tables),
        });
    }
    let mut goals = [Vec::new(), Vec::new()];
    for (g, out) in goals.iter_mut().enumerate() {
        let n = r.u64().ok_or_else(short)?;
        let fits = (body.len() - r.at) / ENTRY_BYTES;
        if n > fits as u64 {
            return Err(short());
        }
        out.reserve(n as usize);
        for i in 0..n {
            let bad = |why: String| corrupt(format!("section {g}, entry {i}: {why}"));
            let pos = r.pos().ok_or_else(short)?.map_err(bad)?;
            let or_node = match r.u8().ok_or_else(short)? {
                0 => false,
                1 => true,
                x => return Err(bad(format!("OR flag {x}"))),
            };
            let (pn, dn, work, dist) = (
                r.u32().ok_or_else(short)?,
                r.u32().ok_or_else(short)?,
                r.u32().ok_or_else(short)?,
                r.u32().ok_or_else(short)?,
            );
            let weak = match r.u8().ok_or_else(short)? {
                0 => false,
                1 => true,
                x => return Err(bad(format!("weak flag {x}"))),
            };
            // A solved entry has one number 0 and the other infinite; an open one neither.
            let ok = match (pn, dn) {
                (0, d) => d == INF,
                (p, 0) => p == INF,
                (p, d) => p < INF && d < INF,
            };
            if !ok {
                return Err(bad(format!("impossible numbers pn={pn} dn={dn}")));
            }
            out.push(Entry {
                pos,
                or_node,
                pn,
                dn,
                work,
                dist,
                weak,
            });
        }
    }
    if r.at != body.len() {
        return Err(corrupt(format!(
            "{} bytes after the last entry",
            body.len() - r.at
        )));
    }
    let [win, not_lose] = goals;
    Ok(State { win, not_lose })
}

/// Read the state file `path` for the root `root` and the tables `tables`: `Ok(None)` when it
/// does not exist (a first run).
///
/// # Errors
/// As [`decode`], and [`StateError::Io`] when it exists but cannot be read.
pub fn load(path: &Path, root: &Position, tables: &TableSet) -> Result<Option<State>, StateError> {
    let name = path.display().to_string();
    let io = |err| StateError::Io {
        path: name.clone(),
        err,
    };
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    if !f.metadata().map_err(io)?.is_file() {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        )));
    }
    // The magic first: a large file of something else is refused without reading it all.
    let mut head = Vec::new();
    (&mut f).take(16).read_to_end(&mut head).map_err(io)?;
    if head.as_slice() != MAGIC {
        return decode(&name, &head, root, tables).map(Some);
    }
    let mut bytes = head;
    f.read_to_end(&mut bytes).map_err(io)?;
    decode(&name, &bytes, root, tables).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(fen: &str, or_node: bool, pn: u32, dn: u32) -> Entry<Position> {
        Entry {
            pos: Position::from_fen(fen).unwrap(),
            or_node,
            pn,
            dn,
            work: 7,
            dist: 3,
            weak: true,
        }
    }

    #[test]
    fn round_trip_and_impossible_numbers_refused() {
        let root = Position::from_fen("B:W13,K29,31:BK5,6").unwrap();
        let tables = TableSet {
            max_pieces: 4,
            files: 10,
            digest: 0x1234,
        };
        let w = Table::with_entries(64);
        let n = Table::with_entries(64);
        let a = entry("W:W13,K29,31:BK1,6", false, 0, INF);
        let b = entry("B:W13,K25,31:BK1,6", true, 5, 9);
        w.put(1, a);
        n.put(2, b);
        n.put(3, a);
        let bytes = encode(&root, &tables, &w, &n);
        let st = decode("f", &bytes, &root, &tables).unwrap();
        assert_eq!(st.win, vec![a]);
        assert_eq!(st.not_lose.len(), 2);
        assert!(st.not_lose.contains(&a) && st.not_lose.contains(&b));
        // An entry "proven" with a finite disproof number, checksum recomputed: refused.
        let w2 = Table::with_entries(64);
        w2.put(1, entry("W:W13,K29,31:BK1,6", false, 0, 5));
        let bad = encode(&root, &tables, &w2, &n);
        let e = decode("f", &bad, &root, &tables).unwrap_err().to_string();
        assert!(e.contains("impossible numbers pn=0 dn=5"), "{e}");
        // Another version.
        let mut v2 = bytes.clone();
        v2[16] = 2;
        let e = decode("f", &v2, &root, &tables).unwrap_err().to_string();
        assert!(e.contains("state file version 2"), "{e}");
    }
}
