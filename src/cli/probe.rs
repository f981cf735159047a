//! `egdb probe [--dir DIR] [--json] [FEN...]`: win/loss/draw of positions from the tables.
//!
//! FENs come from the arguments or, without any, from stdin one per line (blank stdin lines
//! are skipped, a blank argument gets an error line; a line longer than [`MAX_LINE`] bytes is answered with an error line and dropped
//! without being kept in memory). Each input gives one line on stdout, in input order:
//! - `FEN<TAB>win|loss|draw` (canonical FEN; value for the side to move, captures resolved);
//! - `INPUT<TAB>error: MESSAGE` for a bad FEN, a stdin line that is not UTF-8 (shown with
//!   U+FFFD replacement characters, the message names the line number) or a failed probe (e.g. a
//!   missing table). INPUT is echoed with backslash, TAB and other control characters escaped
//!   (`\\`, `\t`, `\u{1b}`), MESSAGE with control characters escaped, so each line has exactly
//!   one TAB.
//!
//! With `--dtc` a third column gives the distance to conversion in plies (`-` for a draw):
//! `FEN<TAB>win|loss|draw<TAB>DTC` (JSON: `"dtc": n` or `null`); it needs the distance files
//! (`egdb build --dtc`). With `--dtw` a further column gives the depth to win in plies
//! (`"dtw"` in JSON; the `.dtw` files of `egdb build --dtw`).
//!
//! With `--json` each line is a JSON object instead: `{"fen":..,"value":"win"}` or
//! `{"input":..,"error":..}` (JSON string escaping, no extra escaping). The exit status is
//! non-zero when any input failed, after all inputs were answered.
use super::CliResult;
use checkers_egdb::{Access, Position, ProbeError, Tablebase};
use std::io::{BufRead, Write};
use std::path::PathBuf;

/// Arguments of `egdb probe`.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory.
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// One JSON object per line instead of tab-separated text.
    #[arg(long)]
    pub json: bool,
    /// Memory-map the table files instead of reading blocks with positioned reads (the
    /// default). Hazard: a table file shortened while this runs (e.g. `cp` of new tables over
    /// old ones) kills the process with SIGBUS; with positioned reads it is an error line.
    #[arg(long)]
    pub mmap: bool,
    /// Most table files kept open at once (least recently read closed first, opened again
    /// when needed and checked to be the same file); at least 1.
    #[arg(long, default_value_t = checkers_egdb::format::DEFAULT_MAX_OPEN_FILES as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_open_files: u64,
    /// Also print the distance to conversion in plies (a third column, `-` for draws); needs
    /// the `.dtc` files of `egdb build --dtc`.
    #[arg(long)]
    pub dtc: bool,
    /// Also print the depth to win in plies (a further column after any DTC column, `-` for
    /// draws; JSON `"dtw"`); needs the `.dtw` files of `egdb build --dtw`.
    #[arg(long)]
    pub dtw: bool,
    /// Print probe statistics (probes, cache hits, blocks decoded) to stderr at the end.
    #[arg(long)]
    pub stats: bool,
    /// The game the tables are of (english, russian, brazilian, italian, giveaway, pool,
    /// spanish, czech): moves, captures and the end of the game follow its rules. Default:
    /// the rules in the files' headers (a directory holds one variant); given and not those,
    /// every probe is refused naming both.
    #[arg(long)]
    pub rules: Option<String>,
    /// Positions in PDN FEN, e.g. `W:WK19,K23:BK28,12`; read from stdin when none are given.
    pub fens: Vec<String>,
}

/// One input: a FEN string, or a stdin line that is not UTF-8 (the reason says which line).
pub type Input = Result<String, (String, String)>;

/// `s` with backslash and every control or non-printable character escaped the way Rust's
/// `escape_debug` does (`\t`, `\n`, `\u{1b}`), quotes left as they are: echoed input can then
/// never add a column or a line to the tab-separated output.
fn escape_field(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' | '\'' => out.push(c),
            _ => out.extend(c.escape_debug()),
        }
    }
    out
}

/// Longest stdin line `egdb probe` accepts, in bytes without the newline: far more than any
/// FEN (at most about 100 bytes), small enough that a hostile input costs no memory.
pub const MAX_LINE: usize = 4096;

/// Bytes of an over-long line echoed in its error line.
const ECHO_LONG: usize = 40;

/// Read one line of at most `max` bytes (newline excluded) into `buf`; the rest of a longer
/// line is read and dropped, so memory stays bounded. Returns the bytes consumed (0 at end of
/// input) and whether the line was longer than `max`.
fn read_line_capped(
    r: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<(usize, bool)> {
    let (mut total, mut over) = (0usize, false);
    loop {
        let avail = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            break;
        }
        let (n, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        let content = if done { &avail[..n - 1] } else { &avail[..n] };
        let room = max.saturating_sub(buf.len());
        if content.len() > room {
            over = true;
        }
        buf.extend_from_slice(&content[..content.len().min(room)]);
        total += n;
        r.consume(n);
        if done {
            break;
        }
    }
    Ok((total, over))
}

/// Read stdin line by line as bytes, so that a line that is not UTF-8 is reported on its own;
/// a line longer than [`MAX_LINE`] is reported (its start echoed) without being kept.
pub fn stdin_lines() -> impl Iterator<Item = std::io::Result<Input>> {
    let mut stdin = std::io::stdin().lock();
    let mut lineno = 0u64;
    std::iter::from_fn(move || {
        let mut buf = Vec::new();
        match read_line_capped(&mut stdin, &mut buf, MAX_LINE) {
            Ok((0, _)) => None,
            Ok((_, over)) => {
                lineno += 1;
                if over {
                    buf.truncate(ECHO_LONG);
                    let mut echo = String::from_utf8_lossy(&buf).into_owned();
                    echo.push_str("...");
                    return Some(Ok(Err((
                        echo,
                        format!("line {lineno} is longer than {MAX_LINE} bytes"),
                    ))));
                }
                // A UTF-8 byte-order mark (as some Windows editors write) starts the input, it is
                // not part of the first line.
                if lineno == 1 && buf.starts_with(b"\xEF\xBB\xBF") {
                    buf.drain(..3);
                }
                Some(Ok(match String::from_utf8(buf) {
                    Ok(s) => Ok(s),
                    Err(e) => Err((
                        String::from_utf8_lossy(e.as_bytes()).into_owned(),
                        format!("line {lineno} is not valid UTF-8"),
                    )),
                }))
            }
            Err(e) => Some(Err(e)),
        }
    })
}

/// An error writing the answers.
fn stdout_err(e: std::io::Error) -> String {
    format!("cannot write to stdout: {e}")
}

/// Run `egdb probe`.
pub fn run(args: Args) -> CliResult {
    let access = if args.mmap {
        Access::Mmap
    } else {
        Access::Pread
    };
    let variant = super::variant_of(args.rules.as_deref(), &args.dir)?;
    if args.dtw {
        super::dtw_english_only(variant)?;
    }
    checkers_egdb::with_engine!(variant, r => answer(&args, access, r))
}

/// `egdb probe` on the tables of `rules`.
fn answer<R: checkers_egdb::rules::Rules>(args: &Args, access: Access, rules: R) -> CliResult {
    // Same wording as the other commands for a directory that cannot be read.
    let tb = Tablebase::builder(&args.dir)
        .access(access)
        .max_open_files(usize::try_from(args.max_open_files).unwrap_or(usize::MAX))
        .rules(rules)
        .open()
        .map_err(|e| match e {
            ProbeError::Io { .. } => format!("{e} (set --dir or EGDB_DIR)"),
            e => e.to_string(),
        })?;
    let from_stdin = args.fens.is_empty();
    let inputs: Box<dyn Iterator<Item = std::io::Result<Input>>> = if from_stdin {
        Box::new(stdin_lines())
    } else {
        Box::new(args.fens.clone().into_iter().map(|f| Ok(Ok(f))))
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut total, mut failed) = (0u64, 0u64);
    for line in inputs {
        let line = line.map_err(|e| format!("cannot read stdin: {e}"))?;
        let (line, bad_utf8) = match line {
            Ok(l) => (l, None),
            Err((lossy, why)) => (lossy, Some(why)),
        };
        let input = line.trim();
        // A blank stdin line is skipped; a blank argument is an input like any other (answered
        // with an error line), so that every argument gets its line.
        if input.is_empty() && bad_utf8.is_none() && from_stdin {
            continue;
        }
        total += 1;
        let result = match bad_utf8 {
            Some(why) => Err(why),
            None => Position::from_fen(input).map_err(|e| format!("bad FEN: {e}")),
        }
        .and_then(|p| {
            let mut extra: Vec<(&str, Option<u32>)> = Vec::new();
            let mut v = None;
            if args.dtc {
                let d = tb.probe_dtc(&p).map_err(|e| e.to_string())?;
                v = Some(d.wld());
                extra.push(("dtc", d.plies()));
            }
            if args.dtw {
                let d = tb.probe_dtw(&p).map_err(|e| e.to_string())?;
                v = Some(d.wld());
                extra.push(("dtw", d.plies()));
            }
            let v = match v {
                Some(v) => v,
                None => tb.probe_wld(&p).map_err(|e| e.to_string())?,
            };
            Ok((p.to_fen(), v, extra))
        });
        match (&result, args.json) {
            (Ok((fen, v, extra)), false) => {
                let mut l = format!("{fen}\t{v}");
                for (_, d) in extra {
                    l.push('\t');
                    l.push_str(&d.map_or("-".to_string(), |d| d.to_string()));
                }
                writeln!(out, "{l}")
            }
            (Ok((fen, v, extra)), true) => {
                let mut j = serde_json::json!({"fen": fen, "value": v.as_str()});
                for (k, d) in extra {
                    j[*k] = serde_json::json!(d);
                }
                writeln!(out, "{j}")
            }
            (Err(e), false) => writeln!(
                out,
                "{}\terror: {}",
                escape_field(input),
                super::one_line(e)
            ),
            (Err(e), true) => writeln!(out, "{}", serde_json::json!({"input": input, "error": e})),
        }
        .map_err(stdout_err)?;
        if result.is_err() {
            failed += 1;
        }
        if args.fens.is_empty() {
            out.flush().map_err(stdout_err)?; // interactive use: answer each line at once
        }
    }
    out.flush().map_err(stdout_err)?;
    if args.stats {
        let s = tb.stats();
        eprintln!(
            "probes {} cache_hits {} cache_misses {} blocks_decoded {} blocks_failed {} slices_opened {} threat_searches {} threat_memo_hits {}",
            s.probes,
            s.cache_hits,
            s.cache_misses,
            s.blocks_decoded,
            s.blocks_failed,
            s.slices_opened,
            s.threat_searches,
            s.threat_memo_hits
        );
    }
    if failed > 0 {
        return Err(format!("{failed} of {total} positions could not be probed").into());
    }
    Ok(())
}
