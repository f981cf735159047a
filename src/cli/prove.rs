//! `egdb prove [--dir DIR] [--rules NAME] [--time S] [--nodes N] [--tt-mb M] [--threads T]
//! [--cert FILE] [--json] [FEN...]`: settle positions beyond the tables by proof-number search,
//! under the rules of the tables (`--rules`, default: the rules in the table files' headers).
//!
//! FENs come from the arguments or, without any, from stdin one per line (blank lines skipped;
//! lines capped at 4096 bytes and read as bytes, exactly as `egdb probe` reads them).
//! Each input gives one line on stdout, in input order:
//! - `FEN<TAB>win|loss|draw|unknown<TAB>DETAILS` where DETAILS are space-separated `key=value`
//!   pairs: `nodes=` (expansions, both goals), `seconds=`, `win=` and `notlose=`
//!   (`proven`, `disproven`, or `unknown` followed by `win_pn=`/`win_dn=` or
//!   `notlose_pn=`/`notlose_dn=`; a result implied by the other goal's is followed by
//!   `implied=win` or `implied=notlose`), `layer=` (positions of the layer retrograde that settled
//!   it, 0 if the search did), `built=` (positions of tables built for it with `--build`, 0
//!   for none), and `pv=` (moves separated by commas, possibly empty; empty when the layer
//!   retrograde settled the position);
//! - `INPUT<TAB>error: MESSAGE` for a bad FEN or a failed search (e.g. a missing table).
//!
//! `--json` prints one JSON object per line instead. `--cert FILE` writes the certificates of
//! every settled position to FILE (one certificate file; see docs/certificate.md), checked
//! with the independent checker before it is written; when none was settled nothing is written
//! (a note on stderr). Exit status: 0 when every position was
//! settled, 3 when some stayed unknown (and none failed), 1 on any error.
use super::CliResult;
use checkers_egdb::rules::{Rules, Variant};
use checkers_egdb::{
    certificate as cert, format_move, max_cache_bytes, AnyTablebase, GoalReport, Position,
    ProofOutcome as Outcome, ProveOptions, ProveReport, Prover, Tablebase,
    LAYER_BYTES_PER_POSITION,
};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Arguments of `egdb prove`.
/// The largest `--time` and `--state-interval` taken, in seconds (about 32 years): larger
/// values do not fit a `Duration` comfortably and mean nothing here.
const MAX_SECONDS: f64 = 1e9;
/// The smallest `--state-interval`, in seconds: a save takes time, and a smaller interval
/// would leave the search none.
const MIN_STATE_INTERVAL: f64 = 0.01;

/// A number of seconds as an error message shows it: plain, or in exponent form when very
/// large or very small.
fn seconds_text(x: f64) -> String {
    if x == 0.0 || (1e-4..1e12).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// Table directory (every table up to its largest piece count is used as exact leaves).
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// The game (english, russian, brazilian, italian, giveaway, pool, spanish, czech): its
    /// moves (flying kings, majority and precedence rules, crowning during a capture) and its
    /// terminal rule (no legal move loses; wins in giveaway). Default: the rules in the table
    /// files' headers (english for a directory without tables); given and not those of the
    /// tables, refused naming both.
    #[arg(long)]
    pub rules: Option<String>,
    /// Time limit per position in seconds (0: none; at most 1e9), covering everything done for it: search,
    /// layer retrograde, certificates, --build and the search after it; the first position's
    /// time also covers opening the tables.
    #[arg(long, default_value_t = 60.0)]
    pub time: f64,
    /// Node-expansion limit per goal and position (default: none), covering the goal's search,
    /// its certificate extraction and any repeated search.
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Memory for the transposition tables in MiB (default: an eighth of RAM, at most 2048).
    #[arg(long = "tt-mb")]
    pub tt_mb: Option<usize>,
    /// Search threads in all (default: all cores): 1 runs the two goals one after the other;
    /// T of 2 or more runs them at the same time (win on T - T/2 threads, notlose on T/2, each
    /// goal's threads sharing its transposition table), and a goal finished without settling
    /// the other lends its threads to the other's search.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Most positions of the layer retrograde tried where the search ends unknown (the king
    /// placements reachable without a capture or a man move, then, breadth first, the layers
    /// its man moves lead to; the search gets half of --time where a layer may follow, and
    /// what the layer leaves of it when the layer does not settle the position;
    /// estimated at 256 bytes each and
    /// within --memory: a --layer given that does not fit is refused, the default is lowered
    /// to fit; 0: never) [default: 8000000].
    #[arg(long)]
    pub layer: Option<usize>,
    /// Most positions of tables the prover may build into DIR to settle a position that the
    /// search and the layer retrograde left unknown: the position's slice and every slice of
    /// its piece count that it reads, exactly as `egdb build --slice S --with-deps` builds them
    /// (needs write access and every table with fewer pieces). The position is then valued by
    /// its table. 0 (default): never build.
    #[arg(long, default_value_t = 0, value_name = "POSITIONS")]
    pub build: u64,
    /// Memory budget of the layer retrograde and of a --build, as `egdb build --memory`, e.g.
    /// 512M or 4G (default: half the RAM). The transposition tables (--tt-mb) come on top.
    #[arg(long, value_name = "SIZE", value_parser = checkers_egdb::planning::parse_size)]
    pub memory: Option<u64>,
    /// Write the certificates of the settled positions to this file.
    #[arg(long)]
    pub cert: Option<PathBuf>,
    /// Save the search state of the position (one position only) to this file, atomically,
    /// every --state-interval seconds and at the end; when the file exists, resume from it (it
    /// must be of the same position and tables: another, or a damaged one, is an error).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Seconds between two saves of the --state file (0.01 to 1e9).
    #[arg(long, default_value_t = 60.0, value_name = "S")]
    pub state_interval: f64,
    /// One JSON object per line instead of tab-separated text.
    #[arg(long)]
    pub json: bool,
    /// Positions in PDN FEN; read from stdin when none are given.
    pub fens: Vec<String>,
}

/// Default transposition-table memory: an eighth of RAM (a quarter of the probe cache cap,
/// itself half of RAM), between 64 MiB and 2 GiB.
fn default_tt_bytes() -> usize {
    (max_cache_bytes() / 4).clamp(64 << 20, 2048 << 20)
}

/// `s` with backslash and control characters escaped (`\t`, `\n`, `\u{1b}`), so echoed input
/// cannot add a column or a line.
fn escape(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || c == '\\' {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn goal_text(name: &str, g: &GoalReport) -> String {
    // A goal settled by the other's result (its search stopped then).
    let implied = if g.implied {
        format!(" implied={name}")
    } else {
        String::new()
    };
    match g.outcome {
        Outcome::Proven => format!("{name}=proven{implied}"),
        Outcome::Disproven => format!("{name}=disproven{implied}"),
        Outcome::Unknown { pn, dn } => format!("{name}=unknown {name}_pn={pn} {name}_dn={dn}"),
    }
}

fn goal_json(g: &GoalReport) -> serde_json::Value {
    match g.outcome {
        Outcome::Proven => {
            serde_json::json!({"result": "proven", "nodes": g.nodes, "implied": g.implied})
        }
        Outcome::Disproven => {
            serde_json::json!({"result": "disproven", "nodes": g.nodes, "implied": g.implied})
        }
        Outcome::Unknown { pn, dn } => {
            serde_json::json!({"result": "unknown", "pn": pn, "dn": dn, "nodes": g.nodes})
        }
    }
}

fn line(r: &ProveReport, built: u64, stopped: &[String], json: bool) -> String {
    let value = r.value.map_or("unknown", |v| v.as_str());
    let pv: Vec<String> = r.pv.iter().map(format_move).collect();
    if json {
        serde_json::json!({
            "fen": r.position.to_fen(),
            "value": value,
            "nodes": r.nodes,
            "seconds": r.seconds,
            "win": goal_json(&r.win),
            "notlose": goal_json(&r.not_lose),
            "layer": r.layer,
            "built": built,
            "stopped": stopped,
            "pv": pv,
        })
        .to_string()
    } else {
        format!(
            "{}\t{value}\tnodes={} seconds={:.3} {} {} layer={} built={built} stopped={} pv={}",
            r.position.to_fen(),
            r.nodes,
            r.seconds,
            goal_text("win", &r.win),
            goal_text("notlose", &r.not_lose),
            r.layer,
            stopped.join(","),
            pv.join(",")
        )
    }
}

/// The words of the note on stderr for a limit reached (`time limit 5 s reached`).
fn limit_note(limit: &str, args: &Args, layer: usize, memory: u64) -> String {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    match limit {
        "time" => format!("time limit {} s reached", args.time),
        "nodes" => format!(
            "node limit {} per goal reached",
            args.nodes.unwrap_or_default()
        ),
        "depth" => "depth limit (4000 plies below the root) reached".to_string(),
        "layer" => format!("layer limit {layer} positions reached"),
        "memory" => format!(
            "memory limit {:.0} MiB reached by the layer retrograde ({} B per position)",
            mib(memory),
            LAYER_BYTES_PER_POSITION
        ),
        "build" => format!("build limit {} positions reached", args.build),
        "build-memory" => format!(
            "memory limit {:.1} MiB too small to build the tables needed (--memory)",
            mib(memory)
        ),
        other => other.to_string(),
    }
}

/// What [`build_to_cover`] did.
struct Built {
    /// Positions of the units built (complete units only).
    positions: u64,
    /// The limit that stopped it (`build`: over the --build budget; `build-memory`: a unit
    /// needs more than --memory; `time`: the deadline), if any.
    stopped: Option<&'static str>,
}

/// With `egdb prove --build`: build the units that make the tables cover `p` when they hold at
/// most `budget` positions and every table they read with fewer pieces is present; then make
/// the new files visible to `tb`. The build runs as a child process (`egdb build --slice S
/// --with-deps --memory M --quiet`), ended at `deadline`: the units it completed by then stay
/// (each unit's files are written atomically), the rest is left for a later run.
fn build_to_cover<R: Rules>(
    tb: &Tablebase<R>,
    rules: Variant,
    p: &Position,
    budget: u64,
    memory: u64,
    deadline: Option<Instant>,
) -> Result<Built, String> {
    use checkers_egdb::first_missing_dependency;
    let none = |stopped| Built {
        positions: 0,
        stopped,
    };
    let units = checkers_egdb::units_to_cover(tb.dir(), p).map_err(|e| e.to_string())?;
    let total: u64 = units.iter().map(|u| u.sizes.iter().sum::<u64>()).sum();
    let fen = p.to_fen();
    if total == 0 {
        return Ok(none(None));
    }
    if total > budget {
        eprintln!(
            "{fen}: covering it needs {total} positions of tables ({} units), more than --build {budget}",
            units.len()
        );
        return Ok(none(Some("build")));
    }
    // Present or about to be built (the units come in build order).
    let mut avail: std::collections::HashSet<_> = checkers_egdb::scan_dir(tb.dir())
        .map_err(|e| format!("{}: {e}", tb.dir().display()))?
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    avail.extend(units.iter().flat_map(|u| u.slices.iter().copied()));
    if let Some(missing) = units
        .iter()
        .find_map(|u| first_missing_dependency(u, &avail))
    {
        eprintln!(
            "{fen}: covering it needs the table {missing}, which {} lacks",
            tb.dir().display()
        );
        return Ok(none(None));
    }
    // A --memory below what the largest unit needs (the build would refuse it): the memory
    // limit, named, and nothing started.
    let order: Vec<&checkers_egdb::Unit> = units.iter().collect();
    if let Some((i, need)) = checkers_egdb::planning::minimum_budget(&order, false) {
        if memory < need {
            eprintln!(
                "{fen}: building the unit {} needs --memory {need} or more (bytes), more than {memory}",
                units[i]
                    .slices
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(" and ")
            );
            return Ok(none(Some("build-memory")));
        }
    }
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return Ok(none(Some("time")));
    }
    eprintln!(
        "{fen}: building {total} positions ({} units) of tables into {}",
        units.len(),
        tb.dir().display()
    );
    let s = checkers_egdb::Slice::of(&p.normalized());
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the egdb binary: {e}"))?;
    let mut child = std::process::Command::new(exe)
        .arg("build")
        .arg("--dir")
        .arg(tb.dir())
        .args(["--rules", rules.name()])
        .args(["--slice", &s.to_string(), "--with-deps", "--quiet"])
        .args(["--memory", &memory.to_string()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the build of {s}: {e}"))?;
    let mut stopped = None;
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(st);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            // The time limit: end the build (complete units stay, the rest is not written).
            let _ = child.kill();
            let _ = child.wait();
            // Its temporary files (a unit being written) go.
            checkers_egdb::driver::remove_stale_temp_files(tb.dir());
            stopped = Some("time");
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if let Some(st) = status {
        if !st.success() {
            return Err(format!(
                "building the tables of {s} failed ({st}; its error is above)"
            ));
        }
    }
    tb.rescan().map_err(|e| e.to_string())?;
    let left: u64 = checkers_egdb::units_to_cover(tb.dir(), p)
        .map_err(|e| e.to_string())?
        .iter()
        .map(|u| u.sizes.iter().sum::<u64>())
        .sum();
    Ok(Built {
        positions: total.saturating_sub(left),
        stopped,
    })
}

/// Run `egdb prove`.
pub fn run(args: Args) -> CliResult {
    // The first position's time counts from here (opening the tables included).
    let started = Instant::now();
    let threads = match args.threads {
        Some(0) => return Err("--threads must be at least 1".into()),
        Some(n) if n > super::MAX_THREADS => {
            return Err(format!(
                "--threads {n} is too many: at most {} are allowed",
                super::MAX_THREADS
            )
            .into())
        }
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(2, |n| n.get()),
    };
    if !(args.time.is_finite() && (0.0..=MAX_SECONDS).contains(&args.time)) {
        return Err(format!(
            "--time must be a number of seconds from 0 to {MAX_SECONDS:e}, got {}",
            seconds_text(args.time)
        )
        .into());
    }
    let tt_bytes = match args.tt_mb {
        Some(0) => return Err("--tt-mb must be at least 1".into()),
        Some(mb) => mb
            .checked_mul(1 << 20)
            .filter(|&b| b <= max_cache_bytes())
            .ok_or_else(|| format!("--tt-mb {mb} is more than half the memory of this machine"))?,
        None => default_tt_bytes(),
    };
    // The layer retrograde's memory: refused up front when a --layer given does not fit.
    let memory = args
        .memory
        .unwrap_or_else(checkers_egdb::planning::default_budget);
    let per = LAYER_BYTES_PER_POSITION;
    let layer_positions = match args.layer {
        Some(n) if (n as u64).saturating_mul(per) > memory => {
            return Err(format!(
                "--layer {n} needs up to {:.1} MiB ({per} B per position), more than the memory \
                 budget of {:.1} MiB{}; lower --layer to at most {} or raise --memory",
                n as f64 * per as f64 / 1048576.0,
                memory as f64 / 1048576.0,
                if args.memory.is_some() {
                    " (--memory)"
                } else {
                    " (half the RAM)"
                },
                memory / per
            )
            .into())
        }
        Some(n) => n,
        // The library lowers it to what the memory holds (reported as the memory limit).
        None => 8_000_000,
    };
    if let Some(path) = &args.cert {
        // Before hours of search: the certificate must be writable.
        cert::check_writable(path)?;
    }
    if !(args.state_interval.is_finite()
        && (MIN_STATE_INTERVAL..=MAX_SECONDS).contains(&args.state_interval))
    {
        return Err(format!(
            "--state-interval must be a number of seconds from {MIN_STATE_INTERVAL} to {MAX_SECONDS:e}, got {}",
            seconds_text(args.state_interval)
        )
        .into());
    }
    if let Some(path) = &args.state {
        if args.fens.len() != 1 {
            return Err("--state takes exactly one position (as an argument)".into());
        }
        cert::check_writable(path)?;
    }
    let rules = args
        .rules
        .as_deref()
        .map(str::parse::<Variant>)
        .transpose()?;
    let any = AnyTablebase::open(&args.dir, rules)?;
    let set = Settings {
        started,
        threads,
        tt_bytes,
        memory,
        layer_positions,
    };
    checkers_egdb::with_tablebase!(&any, tb => prove_all(tb, any.variant(), &args, &set))
}

/// What [`run`] worked out from the arguments before opening the tables.
#[derive(Clone, Copy)]
struct Settings {
    /// When the command started (the first position's time counts from here).
    started: Instant,
    /// Search threads in all.
    threads: usize,
    /// Transposition-table bytes.
    tt_bytes: usize,
    /// Memory budget of the layer retrograde and of a --build, in bytes.
    memory: u64,
    /// Most positions of a layer retrograde.
    layer_positions: usize,
}

/// Prove every input position on the tables `tb` of the variant `rules`.
fn prove_all<R: Rules>(
    tb: &Tablebase<R>,
    rules: Variant,
    args: &Args,
    set: &Settings,
) -> CliResult {
    let Settings {
        started,
        threads,
        tt_bytes,
        memory,
        layer_positions,
    } = *set;
    let time = (args.time > 0.0).then(|| Duration::from_secs_f64(args.time));
    let opts = ProveOptions {
        nodes: args.nodes,
        time,
        tt_bytes,
        threads,
        certificate: args.cert.is_some(),
        layer_positions,
        memory: Some(memory),
        state: args.state.clone(),
        state_interval: Duration::from_secs_f64(args.state_interval),
        stop_implied: true,
        schedule: Default::default(),
    };
    let mut prover = Prover::new(tb, &opts);
    if args.cert.is_some() {
        // Fail early on unreadable tables (the set is taken again at the end: --build adds).
        prover.table_set()?;
    }
    // Stdin as `egdb probe` reads it: lines capped at `probe::MAX_LINE` bytes, a line that is
    // not UTF-8 answered with an error line, a blank line skipped; every argument (a blank one
    // too) gets its line.
    let from_stdin = args.fens.is_empty();
    let inputs: Box<dyn Iterator<Item = std::io::Result<super::probe::Input>>> = if from_stdin {
        Box::new(super::probe::stdin_lines())
    } else {
        Box::new(args.fens.clone().into_iter().map(|f| Ok(Ok(f))))
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut failed, mut unknown, mut answered) = (0u64, 0u64, 0u64);
    let mut proofs = Vec::new();
    let mut any_built = false;
    let mut first = true;
    for input in inputs {
        let input = input.map_err(|e| format!("cannot read stdin: {e}"))?;
        let (text, bad) = match input {
            Ok(l) => (l, None),
            Err((lossy, why)) => (lossy, Some(why)),
        };
        let input = text.trim();
        if input.is_empty() && bad.is_none() && from_stdin {
            continue;
        }
        let mut built = 0;
        let mut stopped: Vec<String> = Vec::new();
        // One deadline for everything done for this position.
        let start = if std::mem::take(&mut first) {
            started
        } else {
            Instant::now()
        };
        let deadline = time.map(|t| start + t);
        let result = match bad {
            Some(why) => Err(why),
            None => rules.parse_fen(input).map_err(|e| format!("bad FEN: {e}")),
        }
        .and_then(|p| {
            let r = prover.prove_from(&p, start).map_err(|e| e.to_string())?;
            if r.value.is_some() || args.build == 0 {
                return Ok(r);
            }
            // Unknown: build the tables of its slice if they fit the budget, then again
            // within what is left of the time.
            let b = build_to_cover(tb, rules, &p, args.build, memory, deadline)?;
            built = b.positions;
            stopped.extend(b.stopped.map(String::from));
            if built == 0 {
                return Ok(r);
            }
            // The state file is of the tables before the build: not used again.
            let after = ProveOptions {
                state: None,
                ..opts.clone()
            };
            prover = Prover::new(tb, &after);
            let mut again = prover.prove_from(&p, start).map_err(|e| e.to_string())?;
            again.nodes += r.nodes;
            again.win.nodes += r.win.nodes;
            again.not_lose.nodes += r.not_lose.nodes;
            if again.value.is_none() {
                again.limits.extend(r.limits);
            }
            Ok(again)
        });
        any_built |= built > 0;
        match result {
            Ok(r) => {
                if r.value.is_none() {
                    let mut all: Vec<String> =
                        r.limits.iter().map(|l| l.as_str().to_string()).collect();
                    all.append(&mut stopped);
                    all.sort();
                    all.dedup();
                    stopped = all;
                } else {
                    stopped.clear();
                }
                writeln!(out, "{}", line(&r, built, &stopped, args.json))?;
                answered += 1;
                if r.value.is_none() {
                    unknown += 1;
                    let notes: Vec<String> = stopped
                        .iter()
                        .map(|l| limit_note(l, args, layer_positions, memory))
                        .collect();
                    let mut why = if notes.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", notes.join("; "))
                    };
                    if let Some(v) = r.uncertified {
                        why.push_str(&format!(
                            "; the search found {v} but its certificate was not completed"
                        ));
                    }
                    eprintln!("{}: unknown{why}", r.position.to_fen());
                }
                proofs.extend(r.proofs);
            }
            Err(e) => {
                failed += 1;
                if args.json {
                    writeln!(out, "{}", serde_json::json!({"input": input, "error": e}))?;
                } else {
                    writeln!(out, "{}\terror: {}", escape(input), escape(&e))?;
                }
            }
        }
        out.flush()?;
    }
    if let (Some(path), true) = (&args.cert, proofs.is_empty()) {
        // A certificate holds at least one proof (the checker refuses an empty one).
        eprintln!(
            "no position was settled: no certificate written to {}",
            path.display()
        );
    } else if let Some(path) = &args.cert {
        if any_built {
            // Positions the new tables cover are leaves now (the checker takes exactly the
            // records reached).
            proofs = proofs
                .iter()
                .map(|p| p.pruned(|q| tb.covers(q)))
                .collect::<Result<_, _>>()
                .map_err(|e| format!("internal error: {e}"))?;
        }
        let tables = prover.table_set()?;
        let text = cert::certificate_text(&tables, &proofs);
        // The prover checks its own certificate with the independent checker before writing.
        checkers_egdb::certificate::check_certificate(&text, &args.dir)
            .map_err(|e| format!("internal error: the certificate does not verify: {e}"))?;
        cert::write_atomic(path, &text)?;
    }
    if failed > 0 {
        return Err(format!(
            "{failed} of {} inputs got an error line (listed above)",
            answered + failed
        )
        .into());
    }
    if unknown > 0 {
        out.flush()?;
        drop(out);
        std::process::exit(3);
    }
    Ok(())
}
