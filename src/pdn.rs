//! PDN game files (Portable Draughts Notation): a reader and a writer for game records.
//!
//! Read: tag pairs `[Name "value"]` (backslash escapes `\"` and `\\`), move text with move
//! numbers (`12.`, `12...`), moves (`9-14`, `10x17`, `9x18x27`, with strength marks such as `!`
//! or `?` dropped), comments `{...}` and `;` to the end of the line, NAGs (`$3`, dropped),
//! variations `( ... )` (skipped, nesting allowed), `%` escape lines (skipped), and results
//! (`1-0`, `0-1`, `2-0`, `0-2`, `1-1`, `1/2-1/2`, `0-0`, `*`). A move run into text without
//! braces (`8-11Red overstepped`, seen in real files) is read as the move and a comment. A game ends at its result, or
//! where the next game's tags begin. The PDN 3.0 `[FEN "..."]` tag gives the starting position
//! ([`Game::start`]). Move legality is not checked here (see `notation::parse_move`).
//!
//! Write: [`Game::to_pdn`] gives text that [`parse_games`] reads back to an equal [`Game`].
//!
//! The reader never panics: any input gives games or one [`PdnError`] with a line number.
use crate::board::Position;
use crate::notation::FenError;

/// One game record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Game {
    /// Tag pairs in file order (`Event`, `Black`, `White`, `Result`, `FEN`, ...).
    pub headers: Vec<(String, String)>,
    /// Moves as written, strength marks removed (`9-14`, `10x17`, `9x18x27`).
    pub moves: Vec<String>,
    /// Comments, each with the number of moves played before it (0 = before the first move).
    pub comments: Vec<(usize, String)>,
    /// The result token ending the move text (`1-0`, `1/2-1/2`, `*`, ...), if any.
    pub result: Option<String>,
}

/// Why a PDN text cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("PDN line {line}: {message}")]
pub struct PdnError {
    /// 1-based line of the fault.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The outcome recorded by a result token, from Black's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Black won (`1-0`, `2-0`).
    BlackWins,
    /// White won (`0-1`, `0-2`).
    WhiteWins,
    /// A draw (`1/2-1/2`, `1-1`).
    Draw,
}

/// Result tokens accepted, with their outcome (`None`: unknown or unfinished).
const RESULTS: [(&str, Option<Outcome>); 8] = [
    ("1/2-1/2", Some(Outcome::Draw)),
    ("1-0", Some(Outcome::BlackWins)),
    ("0-1", Some(Outcome::WhiteWins)),
    ("2-0", Some(Outcome::BlackWins)),
    ("0-2", Some(Outcome::WhiteWins)),
    ("1-1", Some(Outcome::Draw)),
    ("0-0", None),
    ("*", None),
];

impl Game {
    /// The value of tag `name` (case-insensitive), the first if repeated.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The starting position: the `FEN` tag, or the initial position without one.
    ///
    /// # Errors
    /// The FEN parser's error for a bad `FEN` tag.
    pub fn start(&self) -> Result<Position, FenError> {
        match self.header("FEN") {
            Some(f) => Position::from_fen(f),
            None => Ok(Position::START),
        }
    }

    /// The recorded outcome: the result token, else the `Result` tag; `None` if neither names
    /// a finished game.
    pub fn outcome(&self) -> Option<Outcome> {
        let r = self.result.as_deref().or(self.header("Result"))?;
        RESULTS
            .iter()
            .find(|(t, _)| *t == r.trim())
            .and_then(|(_, o)| *o)
    }

    /// The game as PDN text: tags, then numbered moves (`1. 11-15 23-18 2. ...`, `1...` first
    /// when White moves first), comments in place, the result, lines of at most about 80
    /// characters, a blank line after. [`parse_games`] reads it back to an equal game.
    pub fn to_pdn(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.headers {
            let v = v.replace('\\', "\\\\").replace('"', "\\\"");
            out.push_str(&format!("[{k} \"{v}\"]\n"));
        }
        let white_first = self
            .start()
            .map(|p| p.side == crate::Color::White)
            .unwrap_or(false);
        let mut tokens: Vec<String> = Vec::new();
        let comments_at = |i: usize, tokens: &mut Vec<String>| {
            for (_, c) in self.comments.iter().filter(|(at, _)| *at == i) {
                tokens.push(format!("{{{c}}}"));
            }
        };
        comments_at(0, &mut tokens);
        for (i, m) in self.moves.iter().enumerate() {
            let ply = i + usize::from(white_first);
            if ply % 2 == 0 {
                tokens.push(format!("{}.", ply / 2 + 1));
            } else if i == 0 {
                tokens.push(format!("{}...", ply / 2 + 1));
            }
            tokens.push(m.clone());
            comments_at(i + 1, &mut tokens);
        }
        if let Some(r) = &self.result {
            tokens.push(r.clone());
        }
        let mut line = String::new();
        for t in tokens {
            if !line.is_empty() && line.len() + 1 + t.len() > 80 {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&t);
        }
        if !line.is_empty() {
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
        out
    }
}

/// A character cursor with line numbers.
struct Cursor {
    chars: Vec<char>,
    pos: usize,
    line: usize,
}

impl Cursor {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }
    /// `s` as an error message quotes it: at most 40 characters, then `...` and the length.
    fn quote(s: &str) -> String {
        let n = s.chars().count();
        if n <= 40 {
            format!("{s:?}")
        } else {
            let head: String = s.chars().take(40).collect();
            format!("{head:?}... ({n} characters)")
        }
    }
    fn err(&self, message: impl Into<String>) -> PdnError {
        PdnError {
            line: self.line,
            message: message.into(),
        }
    }
    fn at_line_start(&self) -> bool {
        self.pos == 0 || self.chars.get(self.pos - 1) == Some(&'\n')
    }
    /// A run of characters that are not whitespace and not one of `{}[]();`.
    fn word(&mut self) -> String {
        let mut w = String::new();
        while let Some(c) = self.peek() {
            if c.is_whitespace() || "{}[]();".contains(c) {
                break;
            }
            w.push(c);
            self.bump();
        }
        w
    }
}

/// Is `w` a move: at least two square numbers (1-32) joined by `-` or `x`/`X`/`:` (e.g.
/// `9-14`, `9x18x27`), and not a result token (`1-1` is a result)?
fn is_move(w: &str) -> bool {
    if RESULTS.iter().any(|(t, _)| *t == w) {
        return false;
    }
    let squares: Vec<&str> = w.split(['-', 'x', 'X', ':']).collect();
    squares.len() >= 2
        && squares.iter().all(|s| {
            !s.is_empty()
                && s.len() <= 2
                && s.bytes().all(|b| b.is_ascii_digit())
                && matches!(s.parse::<u8>(), Ok(1..=32))
        })
}

/// Why [`read_pdn_file`] refused a file; each message is one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum PdnFileError {
    /// The file cannot be opened or read (missing, no permission, an I/O error).
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The path names a directory.
    #[error("cannot read {}: is a directory", .0.display())]
    IsDirectory(std::path::PathBuf),
    /// The file is larger than [`MAX_PDN_BYTES`] (`bytes`: its size where the file system
    /// tells it, `None` for a stream found longer while reading).
    #[error("{} {}", path.display(), match bytes {
        Some(n) => format!("holds {n} bytes, more than the {MAX_PDN_BYTES} a PDN file may have"),
        None => format!("is longer than the {MAX_PDN_BYTES} bytes a PDN file may have"),
    })]
    TooLarge {
        /// The file.
        path: std::path::PathBuf,
        /// Its size in bytes, where known.
        bytes: Option<u64>,
    },
    /// Line `line` (1-based) is longer than [`MAX_PDN_LINE`] bytes.
    #[error("{}: line {line} is longer than {MAX_PDN_LINE} bytes", path.display())]
    LineTooLong {
        /// The file.
        path: std::path::PathBuf,
        /// The line number, from 1.
        line: usize,
    },
}

/// Largest PDN file [`read_pdn_file`] reads, in bytes (64 MiB; Tinsley's 724 games take 300 KB).
pub const MAX_PDN_BYTES: u64 = 64 << 20;

/// Longest PDN line [`read_pdn_file`] reads, in bytes (64 KiB; a whole game on one line takes
/// about 2 KB).
pub const MAX_PDN_LINE: usize = 64 << 10;

/// Most moves (plies) of one game [`parse_games`] accepts.
pub const MAX_GAME_MOVES: usize = 10_000;

/// The text of the PDN file `path`, read lossily (PDN files are often Latin-1), at most
/// [`MAX_PDN_BYTES`] bytes with lines of at most [`MAX_PDN_LINE`] bytes; reading stops at the
/// first line over the limit, so memory stays bounded whatever the file (`/dev/zero`).
///
/// # Errors
/// [`PdnFileError`], one line naming the file: it cannot be read (missing, a directory), it
/// is larger than [`MAX_PDN_BYTES`], or line N is longer than [`MAX_PDN_LINE`].
pub fn read_pdn_file(path: &std::path::Path) -> Result<String, PdnFileError> {
    use std::io::{BufRead, Read};
    let io = |source| PdnFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(PdnFileError::IsDirectory(path.to_path_buf()));
    }
    if meta.is_file() && meta.len() > MAX_PDN_BYTES {
        return Err(PdnFileError::TooLarge {
            path: path.to_path_buf(),
            bytes: Some(meta.len()),
        });
    }
    let mut r = std::io::BufReader::new(f);
    let mut bytes = Vec::new();
    let mut line = 0usize;
    loop {
        let start = bytes.len();
        let got = (&mut r)
            .take(MAX_PDN_LINE as u64 + 2)
            .read_until(b'\n', &mut bytes)
            .map_err(io)?;
        if got == 0 {
            break;
        }
        line += 1;
        let mut content = &bytes[start..];
        if let Some(c) = content.strip_suffix(b"\n") {
            content = c.strip_suffix(b"\r").unwrap_or(c);
        }
        if content.len() > MAX_PDN_LINE {
            return Err(PdnFileError::LineTooLong {
                path: path.to_path_buf(),
                line,
            });
        }
        if bytes.len() as u64 > MAX_PDN_BYTES {
            return Err(PdnFileError::TooLarge {
                path: path.to_path_buf(),
                bytes: None,
            });
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Read every game of a PDN text.
///
/// # Errors
/// [`PdnError`] with the line of the first fault: an unterminated tag, comment, string or
/// variation, a tag without a quoted value, or a token that is neither a move, a move number,
/// a result nor a NAG.
pub fn parse_games(text: &str) -> Result<Vec<Game>, PdnError> {
    let mut c = Cursor {
        chars: text.chars().collect(),
        pos: 0,
        line: 1,
    };
    let mut games = Vec::new();
    let mut g = Game::default();
    let mut started = false; // the current game has content
    let mut in_moves = false; // move text of the current game has begun
    let finish = |g: &mut Game, games: &mut Vec<Game>, started: &mut bool, in_moves: &mut bool| {
        if *started {
            games.push(std::mem::take(g));
        }
        *started = false;
        *in_moves = false;
    };
    while let Some(ch) = c.peek() {
        if ch.is_whitespace() {
            c.bump();
            continue;
        }
        if ch == '%' && c.at_line_start() {
            while let Some(x) = c.bump() {
                if x == '\n' {
                    break;
                }
            }
            continue;
        }
        match ch {
            '[' => {
                if in_moves {
                    finish(&mut g, &mut games, &mut started, &mut in_moves);
                }
                c.bump();
                while c.peek().is_some_and(|x| x == ' ' || x == '\t') {
                    c.bump();
                }
                let mut name = String::new();
                while let Some(x) = c.peek() {
                    if x.is_alphanumeric() || x == '_' || x == '-' {
                        name.push(x);
                        c.bump();
                    } else {
                        break;
                    }
                }
                if name.is_empty() {
                    return Err(c.err("tag without a name"));
                }
                while c.peek().is_some_and(|x| x.is_whitespace()) {
                    c.bump();
                }
                if c.bump() != Some('"') {
                    return Err(c.err(format!("tag {} has no quoted value", Cursor::quote(&name))));
                }
                let mut value = String::new();
                loop {
                    match c.bump() {
                        None => {
                            return Err(
                                c.err(format!("tag {}: unterminated string", Cursor::quote(&name)))
                            )
                        }
                        Some('\\') => match c.bump() {
                            Some(x) => value.push(x),
                            None => {
                                return Err(c.err(format!(
                                    "tag {}: unterminated string",
                                    Cursor::quote(&name)
                                )))
                            }
                        },
                        Some('"') => break,
                        Some(x) => value.push(x),
                    }
                }
                while c.peek().is_some_and(|x| x.is_whitespace()) {
                    c.bump();
                }
                if c.bump() != Some(']') {
                    return Err(c.err(format!("tag {}: expected ]", Cursor::quote(&name))));
                }
                g.headers.push((name, value));
                started = true;
            }
            '{' => {
                c.bump();
                let mut body = String::new();
                loop {
                    match c.bump() {
                        None => return Err(c.err("unterminated comment {")),
                        Some('}') => break,
                        Some(x) => body.push(x),
                    }
                }
                g.comments.push((g.moves.len(), body.trim().to_string()));
                started = true;
                in_moves = true;
            }
            ';' => {
                let mut body = String::new();
                c.bump();
                while let Some(x) = c.peek() {
                    if x == '\n' {
                        break;
                    }
                    body.push(x);
                    c.bump();
                }
                // Stored like a brace comment (the writer writes it as one).
                let body: String = body.trim().replace('}', ")");
                g.comments.push((g.moves.len(), body));
                started = true;
                in_moves = true;
            }
            '(' => {
                let mut depth = 0usize;
                loop {
                    match c.bump() {
                        None => return Err(c.err("unterminated variation (")),
                        Some('(') => depth += 1,
                        Some(')') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        Some('{') => loop {
                            match c.bump() {
                                None => return Err(c.err("unterminated comment {")),
                                Some('}') => break,
                                Some(_) => {}
                            }
                        },
                        Some(_) => {}
                    }
                }
            }
            ')' | ']' | '}' => return Err(c.err(format!("unexpected {ch:?}"))),
            _ => {
                let w = c.word();
                if w.is_empty() {
                    // A lone character that `word` refuses cannot happen (all handled above),
                    // but never loop forever.
                    c.bump();
                    continue;
                }
                if RESULTS.iter().any(|(t, _)| *t == w) {
                    g.result = Some(w);
                    started = true;
                    finish(&mut g, &mut games, &mut started, &mut in_moves);
                    continue;
                }
                if w.starts_with('$') && w.len() > 1 && w[1..].chars().all(|x| x.is_ascii_digit()) {
                    continue;
                }
                let num = w.trim_end_matches('.');
                if num.len() < w.len() && !num.is_empty() && num.chars().all(|x| x.is_ascii_digit())
                {
                    // A move number alone does not make a game.
                    in_moves = true;
                    continue;
                }
                let mv = w.trim_end_matches(['!', '?', '*']);
                if is_move(mv) {
                    if g.moves.len() >= MAX_GAME_MOVES {
                        return Err(c.err(format!("a game with more than {MAX_GAME_MOVES} moves")));
                    }
                    g.moves.push(mv.to_string());
                    in_moves = true;
                    started = true;
                    continue;
                }
                // A move run into text (a record that lost its comment braces, e.g.
                // `8-11Red overstepped...`): the move, then the text as a comment.
                let cut = w
                    .char_indices()
                    .find(|(_, x)| !(x.is_ascii_digit() || matches!(x, '-' | 'x' | 'X' | ':')))
                    .map_or(w.len(), |(i, _)| i);
                if cut < w.len() && is_move(&w[..cut]) && w[cut..].starts_with(char::is_alphabetic)
                {
                    if g.moves.len() >= MAX_GAME_MOVES {
                        return Err(c.err(format!("a game with more than {MAX_GAME_MOVES} moves")));
                    }
                    g.moves.push(w[..cut].to_string());
                    g.comments.push((g.moves.len(), w[cut..].replace('}', ")")));
                    in_moves = true;
                    started = true;
                    continue;
                }
                return Err(c.err(format!(
                    "unexpected {}: expected a move, a move number, a result or a tag",
                    Cursor::quote(&w)
                )));
            }
        }
    }
    finish(&mut g, &mut games, &mut started, &mut in_moves);
    Ok(games)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tags_moves_comments_results() {
        let text = "[Event \"Test \\\"1\\\"\"]\n[FEN \"W:W21,K30:B1\"]\n1... 21-17 {a comment} 2. 1-5 $1 17-14! (2... 30-26 {x}) ; tail\n0-1\n\n[Event \"B\"]\n1. 11-15 *";
        let games = parse_games(text).unwrap();
        assert_eq!(games.len(), 2);
        let g = &games[0];
        assert_eq!(g.header("event"), Some("Test \"1\""));
        assert_eq!(g.moves, ["21-17", "1-5", "17-14"]);
        assert_eq!(g.comments, [(1, "a comment".into()), (3, "tail".into())]);
        assert_eq!(g.result.as_deref(), Some("0-1"));
        assert_eq!(g.outcome(), Some(Outcome::WhiteWins));
        assert_eq!(g.start().unwrap().side, crate::Color::White);
        assert_eq!(games[1].moves, ["11-15"]);
        assert_eq!(games[1].outcome(), None);
        for g in &games {
            assert_eq!(&parse_games(&g.to_pdn()).unwrap()[0], g);
        }
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_games("[Event \"x\"]\n1. 11-15 zz").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(parse_games("{ open").is_err());
        assert!(parse_games("[Event x]").is_err());
        assert!(parse_games("1. 11-15 (").is_err());
        // A huge token is quoted in part, not echoed whole.
        let e = parse_games(&format!("1. {} *", "a".repeat(100_000))).unwrap_err();
        assert!(e.message.len() < 200, "{}", e.message.len());
        assert!(e.message.contains("(100000 characters)"), "{}", e.message);
        // A game without a result ends at the next tags.
        let games = parse_games("[A \"1\"]\n1. 9-14\n[A \"2\"]\n1. 9-13").unwrap();
        assert_eq!(games.len(), 2);
    }

    /// The game-length limit holds for every way a move is read: plain moves and moves run
    /// into text (`9-14a`, read as the move and a comment), which skipped the check.
    #[test]
    fn game_length_limit_covers_moves_run_into_text() {
        let want = format!("a game with more than {MAX_GAME_MOVES} moves");
        for tok in ["9-14 ", "9-14a "] {
            let ok = parse_games(&tok.repeat(MAX_GAME_MOVES)).unwrap();
            assert_eq!(ok[0].moves.len(), MAX_GAME_MOVES, "{tok:?}");
            let e = parse_games(&tok.repeat(MAX_GAME_MOVES + 1)).unwrap_err();
            assert!(e.message.contains(&want), "{tok:?}: {}", e.message);
        }
        // Both kinds mixed: the limit counts them together.
        let mixed = "9-14 9-14a ".repeat(MAX_GAME_MOVES / 2) + "9-14a";
        let e = parse_games(&mixed).unwrap_err();
        assert!(e.message.contains(&want), "{}", e.message);
    }
}
