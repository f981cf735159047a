//! Independent checker of prover certificates (`egdb check-proof`; format in
//! `docs/certificate.md`).
//!
//! This module shares no code with the prover's search: it walks the claimant's strategy with
//! the simple path move generator ([`Position::moves`], [`Position::apply`]) and values leaves
//! with the capture-resolving table probe ([`Tablebase::probe_wld`]) only. A proof is accepted
//! when, starting from its root, with the claimant playing the recorded move in each of their
//! positions and the opponent playing every legal move:
//! - every position reached whose slice (of its Black-to-move form) is one of the table files is
//!   a leaf whose table value satisfies the claimant's goal (a directory may hold only some
//!   slices of its largest piece count), and every position reached where the side to move has no
//!   legal move is lost by the side to move, who must not be the claimant;
//! - every claimant position reached beyond the tables has exactly one record, naming one of its
//!   legal moves (full path notation, as `format_move` writes it);
//! - every record is reached (no stray records);
//! - for a *win* claim, no position is reached twice on one line of play (no cycle), so every
//!   line ends at a winning leaf; a *notlose* claim may cycle (endless play is a draw).
//!
//! The header names the tables by a digest of the header checksums of every table file with at
//! most that many pieces; the directory given to the checker must hold the same files.

use crate::board::{Color, Position, Wld};
use crate::notation::format_move;
use crate::probe::Tablebase;
use crate::slice::Slice;
use crate::table::slice_of_file_name;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;

/// The table files a certificate relies on: every `*.egdb` file of the directory whose slice has
/// at most `max_pieces` pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableSet {
    /// Largest piece count of the tables used (positions with more pieces are not leaves).
    pub max_pieces: u32,
    /// Number of table files.
    pub files: u64,
    /// xxh64 (seed 0) of the lines `<file name> <header checksum, 16 hex digits>\n` of those
    /// files, sorted by file name.
    pub digest: u64,
}

/// Why a certificate was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The certificate file could not be read.
    #[error("cannot read the certificate {path}: {what}")]
    Read {
        /// The file.
        path: String,
        /// The OS error.
        what: String,
    },
    /// The text does not follow the format.
    #[error("line {line}: {what}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        what: String,
    },
    /// The table directory does not hold the tables named in the header, or cannot be read.
    #[error("tables: {0}")]
    Tables(String),
    /// A probe failed (missing or corrupt table).
    #[error("probe of {fen}: {what}")]
    Probe {
        /// The position.
        fen: String,
        /// The probe error.
        what: String,
    },
    /// The proof does not establish its claim.
    #[error("proof {index} (root {root}): {what}")]
    Invalid {
        /// 1-based number of the proof in the file.
        index: usize,
        /// Its root.
        root: String,
        /// What is wrong.
        what: String,
    },
}

/// The claimant's goal in a proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Claim {
    /// The claimant wins.
    Win,
    /// The claimant wins or draws.
    NotLose,
}

/// One verified proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedProof {
    /// The root.
    pub root: Position,
    /// The claimant.
    pub claimant: Color,
    /// The claimant's goal.
    pub claim: Claim,
    /// Records in the proof.
    pub records: usize,
    /// Distinct positions reached by the walk (leaves included).
    pub positions: usize,
}

/// Result of checking a whole certificate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckReport {
    /// The tables named by the header (and found in the directory).
    pub tables: TableSet,
    /// Every proof, in file order.
    pub proofs: Vec<CheckedProof>,
}

impl CheckReport {
    /// The value for the side to move at each root (in order of first appearance) that the
    /// verified proofs establish: `Some(v)` when they settle it (a win claim by either side, or
    /// not-lose claims by both), `None` when they only bound it.
    pub fn values(&self) -> Vec<(Position, Option<Wld>)> {
        let mut order: Vec<Position> = Vec::new();
        for p in &self.proofs {
            if !order.contains(&p.root) {
                order.push(p.root);
            }
        }
        order
            .into_iter()
            .map(|root| {
                let has = |c: Color, g: Claim| {
                    self.proofs
                        .iter()
                        .any(|p| p.root == root && p.claimant == c && p.claim == g)
                };
                let me = root.side;
                let v = if has(me, Claim::Win) {
                    Some(Wld::Win)
                } else if has(me.opponent(), Claim::Win) {
                    Some(Wld::Loss)
                } else if has(me, Claim::NotLose) && has(me.opponent(), Claim::NotLose) {
                    Some(Wld::Draw)
                } else {
                    None
                };
                (root, v)
            })
            .collect()
    }
}

/// The [`TableSet`] of the files in `dir` with at most `max_pieces` pieces. Each file is opened
/// as a table (which checks its header checksum) and its header checksum (bytes 56..64) read.
///
/// # Errors
/// [`CheckError::Tables`] when the directory or a file cannot be read or a file is not a valid
/// table.
pub fn table_set(dir: &Path, max_pieces: u32) -> Result<TableSet, CheckError> {
    scan_tables(dir, max_pieces).map(|(set, _)| set)
}

/// [`table_set`] and the slices of its files (the leaves a certificate may use).
fn scan_tables(dir: &Path, max_pieces: u32) -> Result<(TableSet, HashSet<Slice>), CheckError> {
    let mut slices = HashSet::new();
    let err = |what: String| CheckError::Tables(what);
    let rd = std::fs::read_dir(dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
    let mut lines = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| err(format!("{}: {e}", dir.display())))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(slice) = slice_of_file_name(name) else {
            continue;
        };
        if slice.material.pieces() > max_pieces {
            continue;
        }
        let path = entry.path();
        crate::table::TableFile::open(&path)
            .map_err(|e| err(format!("{}: {e}", path.display())))?;
        let mut head = [0u8; 64];
        std::fs::File::open(&path)
            .and_then(|mut f| f.read_exact(&mut head))
            .map_err(|e| err(format!("{}: {e}", path.display())))?;
        let sum = u64::from_le_bytes(head[56..64].try_into().expect("8 bytes"));
        lines.push(format!("{name} {sum:016x}\n"));
        slices.insert(slice);
    }
    lines.sort();
    let mut h = xxhash_rust::xxh64::Xxh64::new(0);
    for l in &lines {
        h.update(l.as_bytes());
    }
    Ok((
        TableSet {
            max_pieces,
            files: lines.len() as u64,
            digest: h.digest(),
        },
        slices,
    ))
}

struct ParsedProof {
    line: usize,
    root: Position,
    claimant: Color,
    claim: Claim,
    /// position -> (move text, line number)
    records: HashMap<Position, (String, usize)>,
}

fn parse(text: &str) -> Result<(TableSet, Vec<ParsedProof>), CheckError> {
    let syntax = |line: usize, what: String| CheckError::Syntax { line, what };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let mut expect = |want: &str| -> Result<(usize, Vec<String>), CheckError> {
        let (n, l) = lines
            .next()
            .ok_or_else(|| syntax(0, format!("file ends before the {want:?} line")))?;
        let words: Vec<String> = l.split_whitespace().map(str::to_string).collect();
        if words.first().map(String::as_str) != Some(want) {
            return Err(syntax(n, format!("expected a {want:?} line")));
        }
        Ok((n, words))
    };
    let (n, w) = expect("egdb-proof")?;
    if w.len() != 2 || w[1] != "1" {
        return Err(syntax(
            n,
            "unsupported certificate version (expected 1)".into(),
        ));
    }
    let (n, w) = expect("rules")?;
    if w.len() != 2 || w[1] != "english" {
        return Err(syntax(n, "unsupported rules (expected english)".into()));
    }
    let (n, w) = expect("tables")?;
    let bad_tables = || {
        syntax(
            n,
            "expected: tables <max pieces> <files> <digest hex>".into(),
        )
    };
    if w.len() != 4 {
        return Err(bad_tables());
    }
    let tables = TableSet {
        max_pieces: w[1].parse().map_err(|_| bad_tables())?,
        files: w[2].parse().map_err(|_| bad_tables())?,
        digest: u64::from_str_radix(&w[3], 16).map_err(|_| bad_tables())?,
    };
    if tables.max_pieces > crate::probe::MAX_PIECES {
        return Err(bad_tables());
    }
    let mut proofs = Vec::new();
    let mut cur: Option<(ParsedProof, usize)> = None;
    for (n, l) in lines {
        let words: Vec<&str> = l.split_whitespace().collect();
        match (&mut cur, words.as_slice()) {
            (None, ["proof", fen, who, goal, count]) => {
                let root = Position::from_fen(fen)
                    .map_err(|e| syntax(n, format!("bad root FEN {fen}: {e}")))?;
                let claimant = match *who {
                    "black" => Color::Black,
                    "white" => Color::White,
                    _ => return Err(syntax(n, format!("bad claimant {who:?}"))),
                };
                let claim = match *goal {
                    "win" => Claim::Win,
                    "notlose" => Claim::NotLose,
                    _ => return Err(syntax(n, format!("bad goal {goal:?}"))),
                };
                let count: usize = count
                    .parse()
                    .map_err(|_| syntax(n, format!("bad record count {count:?}")))?;
                cur = Some((
                    ParsedProof {
                        line: n,
                        root,
                        claimant,
                        claim,
                        records: HashMap::new(),
                    },
                    count,
                ));
            }
            (None, _) => return Err(syntax(n, "expected a \"proof\" line".into())),
            (Some(_), ["end"]) => {
                let (p, count) = cur.take().expect("in a proof");
                if p.records.len() != count {
                    return Err(syntax(
                        n,
                        format!(
                            "proof has {} records, its header says {count}",
                            p.records.len()
                        ),
                    ));
                }
                proofs.push(p);
            }
            (Some((p, _)), [fen, mv]) => {
                let pos = Position::from_fen(fen)
                    .map_err(|e| syntax(n, format!("bad FEN {fen}: {e}")))?;
                if let Some((_, first)) = p.records.insert(pos, (mv.to_string(), n)) {
                    return Err(syntax(
                        n,
                        format!("second record for {} (first on line {first})", pos.to_fen()),
                    ));
                }
            }
            (Some(_), _) => {
                return Err(syntax(n, "expected \"FEN MOVE\" or \"end\"".into()));
            }
        }
    }
    if let Some((p, _)) = cur {
        return Err(syntax(p.line, "proof has no \"end\" line".into()));
    }
    Ok((tables, proofs))
}

/// Check the certificate `text` against the tables in `dir`.
///
/// # Errors
/// The first fault found: [`CheckError::Syntax`], [`CheckError::Tables`] (other files than the
/// header names), [`CheckError::Probe`], [`CheckError::Invalid`] (naming the position).
pub fn check_certificate(text: &str, dir: &Path) -> Result<CheckReport, CheckError> {
    let (tables, parsed) = parse(text)?;
    let (found, slices) = scan_tables(dir, tables.max_pieces)?;
    if found != tables {
        return Err(CheckError::Tables(format!(
            "the certificate was made with {} table files of at most {} pieces (digest {:016x}); \
             {} holds {} such files (digest {:016x})",
            tables.files,
            tables.max_pieces,
            tables.digest,
            dir.display(),
            found.files,
            found.digest
        )));
    }
    let tb = if tables.files > 0 {
        Some(Tablebase::open(dir).map_err(|e| CheckError::Tables(e.to_string()))?)
    } else {
        None
    };
    let mut proofs = Vec::new();
    for (i, p) in parsed.iter().enumerate() {
        proofs.push(check_proof(i + 1, p, &slices, tb.as_ref())?);
    }
    Ok(CheckReport { tables, proofs })
}

/// Read the certificate file `path` and check it against the tables in `dir`.
///
/// # Errors
/// As [`check_certificate`]; a file that cannot be read (missing, a directory, not UTF-8) gives
/// [`CheckError::Read`].
pub fn check_file(path: &Path, dir: &Path) -> Result<CheckReport, CheckError> {
    let text = std::fs::read_to_string(path).map_err(|e| CheckError::Read {
        path: path.display().to_string(),
        what: e.to_string(),
    })?;
    check_certificate(&text, dir)
}

fn side_word(c: Color) -> &'static str {
    match c {
        Color::Black => "black",
        Color::White => "white",
    }
}

/// Walk one proof (see the module docs).
fn check_proof(
    index: usize,
    p: &ParsedProof,
    slices: &HashSet<Slice>,
    tb: Option<&Tablebase>,
) -> Result<CheckedProof, CheckError> {
    let invalid = |what: String| CheckError::Invalid {
        index,
        root: p.root.to_fen(),
        what,
    };
    // Walk state: 1 = on the current line of play (win claims only), 2 = finished.
    let mut state: HashMap<Position, u8> = HashMap::new();
    let mut used = 0usize;
    // Explicit depth-first stack: (position, its successors, next successor to visit).
    let mut stack: Vec<(Position, Vec<Position>, usize)> = Vec::new();

    // Expand `q`: Ok(None) for a leaf that satisfies the claim, Ok(Some(children)) otherwise.
    let expand = |q: &Position, used: &mut usize| -> Result<Option<Vec<Position>>, CheckError> {
        let moves = q.moves();
        if moves.is_empty() {
            return if q.side == p.claimant {
                Err(invalid(format!(
                    "the claimant ({}) has no legal move at {} and loses",
                    side_word(p.claimant),
                    q.to_fen()
                )))
            } else {
                Ok(None)
            };
        }
        // A leaf: its slice (of the Black-to-move form) is one of the table files.
        if slices.contains(&Slice::of(&q.normalized())) {
            let tb = tb.ok_or_else(|| {
                CheckError::Tables(format!("no table files to value the leaf {}", q.to_fen()))
            })?;
            let v = tb.probe_wld(q).map_err(|e| CheckError::Probe {
                fen: q.to_fen(),
                what: e.to_string(),
            })?;
            let for_claimant = if q.side == p.claimant { v } else { v.negate() };
            let ok = match p.claim {
                Claim::Win => for_claimant == Wld::Win,
                Claim::NotLose => for_claimant != Wld::Loss,
            };
            return if ok {
                Ok(None)
            } else {
                Err(invalid(format!(
                    "leaf {} is a {} for the side to move, which does not satisfy the claim",
                    q.to_fen(),
                    v
                )))
            };
        }
        if q.side == p.claimant {
            let (mv, line) = p.records.get(q).ok_or_else(|| {
                invalid(format!(
                    "no record for {} (the claimant is to move)",
                    q.to_fen()
                ))
            })?;
            let m = moves
                .iter()
                .find(|m| format_move(m) == *mv)
                .ok_or_else(|| {
                    invalid(format!(
                        "line {line}: {mv} is not a legal move of {}",
                        q.to_fen()
                    ))
                })?;
            *used += 1;
            Ok(Some(vec![q.apply(m)]))
        } else {
            let mut v: Vec<Position> = moves.iter().map(|m| q.apply(m)).collect();
            v.sort_by_key(|x| (x.black, x.white, x.kings));
            v.dedup();
            Ok(Some(v))
        }
    };

    let win = p.claim == Claim::Win;
    match expand(&p.root, &mut used)? {
        None => {
            state.insert(p.root, 2);
        }
        Some(ch) => {
            state.insert(p.root, 1);
            stack.push((p.root, ch, 0));
        }
    }
    while let Some((q, ch, next)) = stack.last_mut() {
        if *next == ch.len() {
            state.insert(*q, 2);
            stack.pop();
            continue;
        }
        let c = ch[*next];
        *next += 1;
        match state.get(&c) {
            Some(2) => continue,
            Some(_) => {
                if win {
                    return Err(invalid(format!(
                        "cycle: {} is reached again on one line of play, so a win claim fails",
                        c.to_fen()
                    )));
                }
                continue;
            }
            None => {}
        }
        match expand(&c, &mut used)? {
            None => {
                state.insert(c, 2);
            }
            Some(cc) => {
                state.insert(c, 1);
                stack.push((c, cc, 0));
            }
        }
    }
    if used != p.records.len() {
        let mut stray: Vec<(usize, String)> = p
            .records
            .iter()
            .filter(|(q, _)| !state.contains_key(*q))
            .map(|(q, (_, line))| (*line, q.to_fen()))
            .collect();
        stray.sort();
        let (line, fen) = stray.first().cloned().unwrap_or_default();
        return Err(invalid(format!(
            "{} records are never reached (first: line {line}, {fen})",
            p.records.len() - used
        )));
    }
    Ok(CheckedProof {
        root: p.root,
        claimant: p.claimant,
        claim: p.claim,
        records: used,
        positions: state.len(),
    })
}
