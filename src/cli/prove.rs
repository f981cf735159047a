//! `egdb prove [--dir DIR] [--time S] [--nodes N] [--tt-mb M] [--threads T] [--cert FILE]
//! [--json] [FEN...]`: settle positions beyond the tables by proof-number search.
//!
//! FENs come from the arguments or, without any, from stdin one per line (blank lines skipped;
//! lines capped at 4096 bytes and read as bytes, exactly as `egdb probe` reads them).
//! Each input gives one line on stdout, in input order:
//! - `FEN<TAB>win|loss|draw|unknown<TAB>DETAILS` where DETAILS are space-separated `key=value`
//!   pairs: `nodes=` (expansions, both goals), `seconds=`, `win=` and `notlose=`
//!   (`proven`, `disproven`, or `unknown` followed by `win_pn=`/`win_dn=` or
//!   `notlose_pn=`/`notlose_dn=`), `layer=` (positions of the layer retrograde that settled
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
use checkers_egdb::notation::format_move;
use checkers_egdb::probe::{max_cache_bytes, Tablebase};
use checkers_egdb::prove::search::Outcome;
use checkers_egdb::prove::{cert, GoalReport, ProveOptions, ProveReport, Prover};
use checkers_egdb::Position;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `egdb prove`.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory (every table up to its largest piece count is used as exact leaves).
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Time limit per position in seconds, covering search, layer retrograde and certificates
    /// (0: none).
    #[arg(long, default_value_t = 60.0)]
    pub time: f64,
    /// Node-expansion limit per goal and position (default: none).
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Memory for the transposition tables in MiB (default: an eighth of RAM, at most 2048).
    #[arg(long = "tt-mb")]
    pub tt_mb: Option<usize>,
    /// Search threads: 1 runs the two goals one after the other, 2 or more in parallel.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Most positions of the layer retrograde tried where the search ends unknown (the king
    /// placements reachable without a capture or a man move; estimated at 256 bytes each, and
    /// never more than half the RAM holds; 0: never).
    #[arg(long, default_value_t = 2_000_000)]
    pub layer: usize,
    /// Most positions of tables the prover may build into DIR to settle a position that the
    /// search and the layer retrograde left unknown: the position's slice and every slice of
    /// its piece count that it reads, exactly as `egdb build --slice S --with-deps` builds them
    /// (needs write access and every table with fewer pieces). The position is then valued by
    /// its table. 0 (default): never build.
    #[arg(long, default_value_t = 0, value_name = "POSITIONS")]
    pub build: u64,
    /// Memory budget of such a build, as `egdb build --memory` (default: half the RAM).
    #[arg(long, value_name = "SIZE", value_parser = checkers_egdb::memory::parse_size)]
    pub memory: Option<u64>,
    /// Write the certificates of the settled positions to this file.
    #[arg(long)]
    pub cert: Option<PathBuf>,
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
    match g.outcome {
        Outcome::Proven => format!("{name}=proven"),
        Outcome::Disproven => format!("{name}=disproven"),
        Outcome::Unknown { pn, dn } => format!("{name}=unknown {name}_pn={pn} {name}_dn={dn}"),
    }
}

fn goal_json(g: &GoalReport) -> serde_json::Value {
    match g.outcome {
        Outcome::Proven => serde_json::json!({"result": "proven", "nodes": g.nodes}),
        Outcome::Disproven => serde_json::json!({"result": "disproven", "nodes": g.nodes}),
        Outcome::Unknown { pn, dn } => {
            serde_json::json!({"result": "unknown", "pn": pn, "dn": dn, "nodes": g.nodes})
        }
    }
}

fn line(r: &ProveReport, built: u64, json: bool) -> String {
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
            "pv": pv,
        })
        .to_string()
    } else {
        format!(
            "{}\t{value}\tnodes={} seconds={:.3} {} {} layer={} built={built} pv={}",
            r.position.to_fen(),
            r.nodes,
            r.seconds,
            goal_text("win", &r.win),
            goal_text("notlose", &r.not_lose),
            r.layer,
            pv.join(",")
        )
    }
}

/// With `egdb prove --build`: build the units that make the tables cover `p` when they hold at
/// most `budget` positions and every table they read with fewer pieces is present; then make
/// the new files visible to `tb`. Returns the positions built (0: nothing built, `p` stays
/// unknown; the reason goes to stderr).
fn build_to_cover(
    tb: &Tablebase,
    p: &Position,
    budget: u64,
    memory: Option<u64>,
) -> Result<u64, String> {
    use checkers_egdb::generate::{build, first_missing_dependency, BuildOptions};
    let units = checkers_egdb::prove::units_to_cover(tb.dir(), p)?;
    let total: u64 = units.iter().map(|u| u.sizes.iter().sum::<u64>()).sum();
    let fen = p.to_fen();
    if total == 0 {
        return Ok(0);
    }
    if total > budget {
        eprintln!(
            "{fen}: covering it needs {total} positions of tables ({} units), more than --build {budget}",
            units.len()
        );
        return Ok(0);
    }
    // Present or about to be built (the units come in build order).
    let mut avail: std::collections::HashSet<_> = checkers_egdb::stats::scan_dir(tb.dir())
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
        return Ok(0);
    }
    eprintln!(
        "{fen}: building {total} positions ({} units) of tables into {}",
        units.len(),
        tb.dir().display()
    );
    let s = checkers_egdb::slice::Slice::of(&p.normalized());
    let opts = BuildOptions {
        slice: Some(s),
        with_deps: true,
        memory: Some(memory.unwrap_or_else(checkers_egdb::memory::default_budget)),
        codec_from_dir: true,
        rules: checkers_egdb::rules::Variant::English,
        ..BuildOptions::new(tb.dir(), s.material.pieces())
    };
    build(&opts).map_err(|e| format!("building the tables of {s}: {e}"))?;
    tb.rescan().map_err(|e| e.to_string())?;
    Ok(total)
}

/// Run `egdb prove`.
pub fn run(args: Args) -> CliResult {
    if args.threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    if !(args.time.is_finite() && args.time >= 0.0) {
        return Err(format!("--time must be a number of seconds >= 0, got {}", args.time).into());
    }
    let tt_bytes = match args.tt_mb {
        Some(0) => return Err("--tt-mb must be at least 1".into()),
        Some(mb) => mb
            .checked_mul(1 << 20)
            .filter(|&b| b <= max_cache_bytes())
            .ok_or_else(|| format!("--tt-mb {mb} is more than half the memory of this machine"))?,
        None => default_tt_bytes(),
    };
    if let Some(path) = &args.cert {
        // Before hours of search: the certificate must be writable.
        cert::check_writable(path)?;
    }
    let tb = Tablebase::open(&args.dir)?;
    let opts = ProveOptions {
        nodes: args.nodes,
        time: (args.time > 0.0).then(|| Duration::from_secs_f64(args.time)),
        tt_bytes,
        threads: args.threads,
        certificate: args.cert.is_some(),
        layer_positions: args.layer,
    };
    let mut prover = Prover::new(&tb, &opts);
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
        let result = match bad {
            Some(why) => Err(why),
            None => Position::from_fen(input).map_err(|e| format!("bad FEN: {e}")),
        }
        .and_then(|p| {
            let r = prover.prove(&p).map_err(|e| e.to_string())?;
            if r.value.is_some() || args.build == 0 {
                return Ok(r);
            }
            // Unknown: build the tables of its slice if they fit the budget, then again.
            let started = std::time::Instant::now();
            built = build_to_cover(&tb, &p, args.build, args.memory)?;
            if built == 0 {
                return Ok(r);
            }
            prover = Prover::new(&tb, &opts);
            let mut again = prover.prove(&p).map_err(|e| e.to_string())?;
            again.nodes += r.nodes;
            again.seconds = started.elapsed().as_secs_f64() + r.seconds;
            Ok(again)
        });
        any_built |= built > 0;
        match result {
            Ok(r) => {
                writeln!(out, "{}", line(&r, built, args.json))?;
                answered += 1;
                if r.value.is_none() {
                    unknown += 1;
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
        checkers_egdb::proofcheck::check_certificate(&text, &args.dir)
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
