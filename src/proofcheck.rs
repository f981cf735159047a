//! Independent checker of prover certificates (`egdb check-proof`; format in
//! `docs/certificate.md`).
//!
//! This module shares no code with the prover's search: it walks the claimant's strategy with
//! the simple path move generator of the certificate's rules ([`Variant::moves`]: English and
//! giveaway [`Position::moves`], the other variants [`crate::rules::paths`], never the fast
//! engine; [`Position::apply`]) and values leaves with the capture-resolving table probe
//! ([`crate::Tablebase::probe_wld`]) only. A proof is accepted when, starting from its root,
//! with the claimant playing the recorded move in each of their positions and the opponent
//! playing every legal move:
//! - every position reached whose slice (of its Black-to-move form) is one of the table files is
//!   a leaf whose table value satisfies the claimant's goal (a directory may hold only some
//!   slices of its largest piece count), and every position reached where the side to move has no
//!   legal move is valued by the terminal rule ([`Variant::no_move_value`]: lost by the side to
//!   move, won in giveaway), which must satisfy the claimant's goal;
//! - every claimant position reached beyond the tables has exactly one record, naming one of its
//!   legal moves (full path notation, as `format_move` writes it);
//! - every record is reached (no stray records);
//! - for a *win* claim, no position is reached twice on one line of play (no cycle), so every
//!   line ends at a winning leaf; a *notlose* claim may cycle (endless play is a draw).
//!
//! The header names the rules (`rules english`, `rules russian`, ...) and the tables by a
//! digest of the header checksums of every table file with at most that many pieces; the
//! directory given to the checker must hold the same files, of the same rules.

use crate::any::AnyTablebase;
use crate::board::{Color, Position, Wld};
use crate::notation::format_move;
use crate::rules::Variant;
use crate::slice::Slice;
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
    /// The certificate ends early: a line, a proof or the `proofs N` trailer is missing, or it
    /// holds no proof at all.
    #[error("truncated certificate: {0}")]
    Truncated(String),
    /// The certificate (a line of it, or the whole file) is larger than the checker reads.
    #[error("{0}")]
    TooLarge(String),
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

/// What the verified proofs of one root establish (see [`CheckReport::roots`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootSummary {
    /// The root.
    pub root: Position,
    /// The value for the side to move that the proofs settle: `Some(v)` when they settle it
    /// (a win claim by either side, or not-lose claims by both), `None` when they only bound
    /// it.
    pub value: Option<Wld>,
    /// Whether a not-lose proof by the side to move is among them (with `value == None`: the
    /// side to move does not lose).
    pub notlose_by_side: bool,
    /// Number of proofs of this root.
    pub proofs: usize,
    /// Records of those proofs, summed.
    pub records: usize,
    /// Distinct positions reached by the walk of each of those proofs, summed.
    pub positions: usize,
}

impl CheckReport {
    /// One summary per distinct root, in order of first appearance in the file; time and memory
    /// linear in the number of proofs.
    pub fn roots(&self) -> Vec<RootSummary> {
        /// Claims seen for a root: win / not-lose, by the side to move / by the opponent.
        #[derive(Default)]
        struct Seen {
            win_side: bool,
            win_opp: bool,
            notlose_side: bool,
            notlose_opp: bool,
            proofs: usize,
            records: usize,
            positions: usize,
        }
        let mut order: Vec<Position> = Vec::new();
        let mut seen: HashMap<Position, Seen> = HashMap::new();
        for p in &self.proofs {
            let s = seen.entry(p.root).or_insert_with(|| {
                order.push(p.root);
                Seen::default()
            });
            let by_side = p.claimant == p.root.side;
            match (p.claim, by_side) {
                (Claim::Win, true) => s.win_side = true,
                (Claim::Win, false) => s.win_opp = true,
                (Claim::NotLose, true) => s.notlose_side = true,
                (Claim::NotLose, false) => s.notlose_opp = true,
            }
            s.proofs += 1;
            s.records += p.records;
            s.positions += p.positions;
        }
        order
            .into_iter()
            .map(|root| {
                let s = &seen[&root];
                let value = if s.win_side {
                    Some(Wld::Win)
                } else if s.win_opp {
                    Some(Wld::Loss)
                } else if s.notlose_side && s.notlose_opp {
                    Some(Wld::Draw)
                } else {
                    None
                };
                RootSummary {
                    root,
                    value,
                    notlose_by_side: s.notlose_side,
                    proofs: s.proofs,
                    records: s.records,
                    positions: s.positions,
                }
            })
            .collect()
    }

    /// The value for the side to move at each root (in order of first appearance) that the
    /// verified proofs establish: `Some(v)` when they settle it (a win claim by either side, or
    /// not-lose claims by both), `None` when they only bound it. Time linear in the number of
    /// proofs ([`CheckReport::roots`]).
    pub fn values(&self) -> Vec<(Position, Option<Wld>)> {
        self.roots()
            .into_iter()
            .map(|r| (r.root, r.value))
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
    // Slice files and the members of material files (`egdb pack`): a member counts as the
    // slice file it was made from (same name, same header), so packing does not change the
    // set.
    let listed = crate::table::pack::list(dir, crate::table::FileKind::Wld)
        .map_err(|e| err(format!("{}: {e}", dir.display())))?;
    let mut lines = Vec::new();
    for entry in listed {
        let (slice, src) = match entry {
            crate::table::pack::Listed::Slice(s, src) => (s, src),
            crate::table::pack::Listed::BadPack(_, e) => return Err(err(e.to_string())),
        };
        if slice.material.pieces() > max_pieces {
            continue;
        }
        let name = format!("{slice}.{}", crate::table::EXTENSION);
        let shown = src.describe(&slice);
        // Of any variant (the rules are checked against the certificate's separately).
        crate::table::TableFile::open_source(
            &src,
            &slice,
            crate::table::Access::Mmap,
            crate::table::ANY_RULES,
            None,
        )
        .map_err(|e| err(format!("{shown}: {e}")))?;
        let mut head = [0u8; 64];
        std::fs::File::open(&src.path)
            .and_then(|mut f| {
                use std::io::Seek;
                f.seek(std::io::SeekFrom::Start(src.range.map_or(0, |r| r.0)))?;
                f.read_exact(&mut head)
            })
            .map_err(|e| err(format!("{shown}: {e}")))?;
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

/// Longest certificate line read, in bytes (the newline excluded); a record is one line. A
/// canonical FEN has at most 100 bytes and a move path about 40.
pub const MAX_LINE: usize = 4096;

/// Largest certificate file read, in bytes (1 GiB, about 30 million records).
pub const MAX_FILE: u64 = 1 << 30;

/// Parse a certificate given as numbered lines (1-based; the newline removed).
fn parse(
    lines: impl Iterator<Item = Result<(usize, String), CheckError>>,
) -> Result<Parsed, CheckError> {
    let syntax = |line: usize, what: String| CheckError::Syntax { line, what };
    let mut lines = lines.filter(|r| match r {
        Ok((_, l)) => {
            let l = l.trim();
            !l.is_empty() && !l.starts_with('#')
        }
        Err(_) => true,
    });
    let mut expect = |want: &str| -> Result<(usize, Vec<String>), CheckError> {
        let (n, l) = lines.next().transpose()?.ok_or_else(|| {
            CheckError::Truncated(format!("the file ends before the {want:?} line"))
        })?;
        let words: Vec<String> = l.split_whitespace().map(str::to_string).collect();
        if words.first().map(String::as_str) != Some(want) {
            return Err(syntax(n, format!("expected a {want:?} line")));
        }
        Ok((n, words))
    };
    let (n, w) = expect("egdb-proof")?;
    if w.len() == 2 && w[1] == "1" {
        return Err(syntax(
            n,
            "certificate format version 1 has no \"proofs N\" trailer, so a truncated file \
             cannot be told from a whole one; make it again with this egdb prove --cert \
             (version 2)"
                .into(),
        ));
    }
    if w.len() != 2 || w[1] != "2" {
        return Err(syntax(
            n,
            "unsupported certificate version (expected 2)".into(),
        ));
    }
    let (n, w) = expect("rules")?;
    let rules: Variant =
        match w.as_slice() {
            [_, name] if name.to_ascii_lowercase() == *name => name
                .parse()
                .map_err(|e: crate::rules::variant::UnknownVariant| syntax(n, e.to_string()))?,
            _ => return Err(syntax(
                n,
                "expected: rules <english|russian|brazilian|italian|giveaway|pool|spanish|czech>"
                    .into(),
            )),
        };
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
    // The line of the trailer `proofs N`, once read.
    let mut trailer: Option<usize> = None;
    for item in lines {
        let (n, l) = item?;
        let words: Vec<&str> = l.split_whitespace().collect();
        if let Some(t) = trailer {
            return Err(syntax(
                n,
                format!("text after the \"proofs\" trailer on line {t}"),
            ));
        }
        match (&mut cur, words.as_slice()) {
            (None, ["proofs", count]) => {
                let count: usize = count
                    .parse()
                    .map_err(|_| syntax(n, format!("bad proof count {count:?}")))?;
                if count != proofs.len() {
                    return Err(syntax(
                        n,
                        format!(
                            "the trailer says {count} proofs, the file holds {}",
                            proofs.len()
                        ),
                    ));
                }
                if count == 0 {
                    return Err(syntax(n, "the certificate holds no proofs".into()));
                }
                trailer = Some(n);
            }
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
            (None, _) => {
                return Err(syntax(
                    n,
                    "expected a \"proof\" line or the \"proofs N\" trailer".into(),
                ))
            }
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
            (Some((p, count)), [fen, mv]) => {
                if p.records.len() >= *count {
                    return Err(syntax(
                        n,
                        format!("more records than the {count} the proof's header says"),
                    ));
                }
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
        return Err(CheckError::Truncated(format!(
            "the proof on line {} has no \"end\" line",
            p.line
        )));
    }
    if trailer.is_none() {
        return Err(CheckError::Truncated(format!(
            "no \"proofs N\" trailer after the {} complete proofs read",
            proofs.len()
        )));
    }
    Ok((rules, tables, proofs))
}

/// A parsed certificate: its rules, tables and proofs.
type Parsed = (Variant, TableSet, Vec<ParsedProof>);

/// The numbered lines of `text`, each at most [`MAX_LINE`] bytes.
fn text_lines(text: &str) -> impl Iterator<Item = Result<(usize, String), CheckError>> + '_ {
    text.lines().enumerate().map(|(i, l)| {
        if l.len() > MAX_LINE {
            Err(CheckError::TooLarge(format!(
                "line {} is longer than {MAX_LINE} bytes",
                i + 1
            )))
        } else {
            Ok((i + 1, l.to_string()))
        }
    })
}

/// The numbered lines of the file `path`, read as they are needed: each at most [`MAX_LINE`]
/// bytes and valid UTF-8, the whole at most [`MAX_FILE`] bytes (the first line or byte over a
/// limit is an error; nothing beyond it is read).
fn file_lines(
    path: &Path,
) -> Result<impl Iterator<Item = Result<(usize, String), CheckError>>, CheckError> {
    use std::io::BufRead;
    let shown = path.display().to_string();
    let read_err = move |e: std::io::Error| CheckError::Read {
        path: shown.clone(),
        what: e.to_string(),
    };
    let f = std::fs::File::open(path).map_err(&read_err)?;
    let meta = f.metadata().map_err(&read_err)?;
    if meta.is_dir() {
        return Err(read_err(std::io::Error::other("is a directory")));
    }
    if meta.is_file() && meta.len() > MAX_FILE {
        return Err(CheckError::TooLarge(format!(
            "{} holds {} bytes, more than the {MAX_FILE} a certificate may have",
            path.display(),
            meta.len()
        )));
    }
    let mut r = std::io::BufReader::new(f);
    let (mut n, mut total, mut done) = (0usize, 0u64, false);
    Ok(std::iter::from_fn(move || {
        if done {
            return None;
        }
        let mut buf = Vec::new();
        let got = (&mut r)
            .take(MAX_LINE as u64 + 2)
            .read_until(b'\n', &mut buf);
        let fail = |e: CheckError, done: &mut bool| {
            *done = true;
            Some(Err(e))
        };
        match got {
            Err(e) => return fail(read_err(e), &mut done),
            Ok(0) => return None,
            Ok(k) => total += k as u64,
        }
        n += 1;
        if total > MAX_FILE {
            return fail(
                CheckError::TooLarge(format!(
                    "the certificate is longer than {MAX_FILE} bytes (at line {n})"
                )),
                &mut done,
            );
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        if buf.len() > MAX_LINE {
            return fail(
                CheckError::TooLarge(format!("line {n} is longer than {MAX_LINE} bytes")),
                &mut done,
            );
        }
        match String::from_utf8(buf) {
            Ok(l) => Some(Ok((n, l))),
            Err(_) => fail(
                CheckError::Syntax {
                    line: n,
                    what: "not valid UTF-8".into(),
                },
                &mut done,
            ),
        }
    }))
}

/// Check the certificate `text` against the tables in `dir`.
///
/// # Errors
/// The first fault found: [`CheckError::Syntax`], [`CheckError::Tables`] (other files than the
/// header names), [`CheckError::Probe`], [`CheckError::Invalid`] (naming the position).
pub fn check_certificate(text: &str, dir: &Path) -> Result<CheckReport, CheckError> {
    check_parsed(parse(text_lines(text))?, dir)
}

/// Check parsed proofs against the tables in `dir`.
fn check_parsed((rules, tables, parsed): Parsed, dir: &Path) -> Result<CheckReport, CheckError> {
    // Tables of other rules are refused first, naming both.
    match crate::table::dir_rules(dir) {
        Ok(Some(id)) if id != rules.id() => {
            let theirs = Variant::from_id(id)
                .map_or_else(|| format!("rules id {id}"), |v| v.name().to_string());
            return Err(CheckError::Tables(format!(
                "the certificate is of {rules} rules; the tables in {} are of {theirs} rules",
                dir.display()
            )));
        }
        // An unreadable directory is reported by the scan below, as before.
        Ok(_) | Err(crate::table::TableError::Io { .. }) => {}
        Err(e) => return Err(CheckError::Tables(e.to_string())),
    }
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
        Some(AnyTablebase::open(dir, Some(rules)).map_err(|e| CheckError::Tables(e.to_string()))?)
    } else {
        None
    };
    let mut proofs = Vec::new();
    for (i, p) in parsed.iter().enumerate() {
        proofs.push(check_proof(i + 1, rules, p, &slices, tb.as_ref())?);
    }
    Ok(CheckReport { tables, proofs })
}

/// Read the certificate file `path` and check it against the tables in `dir`.
///
/// # Errors
/// As [`check_certificate`]; a file that cannot be read (missing, a directory) gives
/// [`CheckError::Read`], a line longer than [`MAX_LINE`] or a file longer than [`MAX_FILE`]
/// [`CheckError::TooLarge`] (read no further: `/dev/zero` is refused at once), a line that is
/// not UTF-8 [`CheckError::Syntax`].
pub fn check_file(path: &Path, dir: &Path) -> Result<CheckReport, CheckError> {
    check_parsed(parse(file_lines(path)?)?, dir)
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
    rules: Variant,
    p: &ParsedProof,
    slices: &HashSet<Slice>,
    tb: Option<&AnyTablebase>,
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
        let moves = rules.moves(q);
        if moves.is_empty() {
            // The terminal rule: lost by the side to move (won in giveaway).
            let v = rules.no_move_value();
            let for_claimant = if q.side == p.claimant { v } else { v.negate() };
            let ok = match p.claim {
                Claim::Win => for_claimant == Wld::Win,
                Claim::NotLose => for_claimant != Wld::Loss,
            };
            return if ok {
                Ok(None)
            } else if q.side == p.claimant {
                Err(invalid(format!(
                    "the claimant ({}) has no legal move at {} and loses",
                    side_word(p.claimant),
                    q.to_fen()
                )))
            } else {
                Err(invalid(format!(
                    "the opponent ({}) has no legal move at {} and wins ({rules} rules)",
                    side_word(p.claimant.opponent()),
                    q.to_fen()
                )))
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
