//! `egdb annotate [--dir DIR] [--summary] GAMES.pdn`: replay PDN games and, for every position
//! inside the tables, print its value; mark the moves that change it (a win thrown into a draw
//! or a loss, a draw into a loss) and check the recorded result against the tables.
//!
//! Output per game (unless `--summary`): a header line `game N: Black - White (Event) result R`,
//! then for every ply whose position before the move is inside the tables
//! `  ply P  NUM. MOVE  VALUE-BEFORE -> VALUE-AFTER [MARK]` (values for the mover; DTC in
//! brackets when known), and a closing `  end: ...` line with the result check. A move the
//! game record gets wrong in a harmless way (`10x14` for the simple move `10-14`) is read with
//! the other separator and noted; an illegal move ends the replay of that game.
use super::values::{self, Eval};
use super::CliResult;
use checkers_egdb::pdn::{parse_games, Game, Outcome};
use checkers_egdb::{format_move, parse_move, Color, Move, Position, ProbeError, Tablebase, Wld};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `egdb annotate`.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory.
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Print only the totals.
    #[arg(long)]
    pub summary: bool,
    /// PDN file of games.
    pub file: PathBuf,
}

/// Totals over a file.
#[derive(Default, Debug)]
struct Totals {
    games: usize,
    illegal: usize,
    bad_fen: usize,
    reached: usize,
    mistakes: usize,
    mismatches: usize,
    checked: usize,
}

/// The move named by `text`, trying the other separator when the record used `x` for a simple
/// move or `-` for a capture. The flag says whether the fallback was needed.
fn find_move(p: &Position, text: &str) -> Option<(Move, bool)> {
    if let Ok(m) = parse_move(p, text) {
        return Some((m, false));
    }
    let alt = if text.contains(['x', 'X']) {
        text.replace(['x', 'X'], "-")
    } else {
        text.replace('-', "x")
    };
    parse_move(p, &alt).ok().map(|m| (m, true))
}

/// The value inside the tables, `None` outside them (too many pieces, a missing slice).
fn eval_in(tb: &Tablebase, p: &Position) -> Result<Option<Eval>, ProbeError> {
    match values::eval(tb, p) {
        Ok(e) => Ok(Some(e)),
        Err(ProbeError::TooManyPieces { .. } | ProbeError::MissingSlice { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::BlackWins => "black wins",
        Outcome::WhiteWins => "white wins",
        Outcome::Draw => "draw",
    }
}

fn show(e: Eval) -> String {
    match e.plies {
        Some(n) => format!("{} [{n}]", e.wld),
        None => e.wld.to_string(),
    }
}

/// Replay one game, writing its lines to `out` (when `verbose`) and adding to `t`.
fn annotate_game(
    tb: &Tablebase,
    n: usize,
    g: &Game,
    verbose: bool,
    out: &mut impl Write,
    t: &mut Totals,
) -> CliResult {
    t.games += 1;
    let tag = |k: &str| g.header(k).unwrap_or("?").to_string();
    if verbose {
        writeln!(
            out,
            "game {n}: {} - {} ({}) result {}",
            tag("Black"),
            tag("White"),
            tag("Event"),
            g.result.as_deref().or(g.header("Result")).unwrap_or("?")
        )?;
    }
    let mut p = match g.start() {
        Ok(p) => p,
        Err(e) => {
            t.bad_fen += 1;
            if verbose {
                writeln!(out, "  bad FEN tag: {e}")?;
            }
            return Ok(());
        }
    };
    let white_first = usize::from(p.side == Color::White);
    let mut reached = false;
    for (i, text) in g.moves.iter().enumerate() {
        let Some((mv, fallback)) = find_move(&p, text) else {
            t.illegal += 1;
            if verbose {
                writeln!(
                    out,
                    "  ply {}: {text} is not a legal move; replay stops",
                    i + 1
                )?;
            }
            return Ok(());
        };
        let before = eval_in(tb, &p)?;
        let after_pos = p.apply(&mv);
        if let Some(b) = before {
            reached = true;
            // Every successor has no more pieces, so it is inside the tables too.
            let a = values::eval(tb, &after_pos)?.negate();
            let mark = match (b.wld, a.wld) {
                (Wld::Win, Wld::Draw) => "  ?? win thrown into a draw",
                (Wld::Win, Wld::Loss) => "  ?? win thrown into a loss",
                (Wld::Draw, Wld::Loss) => "  ?? draw thrown into a loss",
                _ => "",
            };
            if !mark.is_empty() {
                t.mistakes += 1;
            }
            if verbose {
                let num = format!(
                    "{}{}",
                    (i + white_first) / 2 + 1,
                    if p.side == Color::Black { "." } else { "..." }
                );
                let note = if fallback {
                    format!(" (recorded {text})")
                } else {
                    String::new()
                };
                writeln!(
                    out,
                    "  ply {}  {num} {}{note}  {} -> {}{mark}",
                    i + 1,
                    format_move(&mv),
                    show(b),
                    show(a)
                )?;
            }
        } else if fallback && verbose {
            writeln!(
                out,
                "  ply {}: recorded {text}, read as {}",
                i + 1,
                format_move(&mv)
            )?;
        }
        p = after_pos;
    }
    let end = eval_in(tb, &p)?;
    if end.is_some() {
        reached = true;
    }
    if reached {
        t.reached += 1;
    }
    let recorded = g.outcome();
    match (end, recorded) {
        (Some(e), Some(o)) => {
            t.checked += 1;
            let black_view = if p.side == Color::Black {
                e.wld
            } else {
                e.wld.negate()
            };
            let tables = match black_view {
                Wld::Win => Outcome::BlackWins,
                Wld::Loss => Outcome::WhiteWins,
                Wld::Draw => Outcome::Draw,
            };
            let ok = tables == o;
            if !ok {
                t.mismatches += 1;
            }
            if verbose {
                writeln!(
                    out,
                    "  end: {} {} to move: {}; recorded {}, tables {}{}",
                    p.to_fen(),
                    p.side,
                    show(e),
                    outcome_word(o),
                    outcome_word(tables),
                    if ok { "" } else { "  MISMATCH" }
                )?;
            }
        }
        (Some(e), None) if verbose => writeln!(
            out,
            "  end: {}: {} (no recorded result)",
            p.to_fen(),
            show(e)
        )?,
        (None, _) if verbose => writeln!(
            out,
            "  end: {} pieces, outside the tables",
            (p.black | p.white).count_ones()
        )?,
        _ => {}
    }
    Ok(())
}

/// Run `egdb annotate`.
pub fn run(args: Args) -> CliResult {
    // Games are read with English moves and annotated from English tables.
    let variant = super::variant_of(None, &args.dir)?;
    if variant != checkers_egdb::rules::Variant::English {
        return Err(format!(
            "egdb annotate reads English checkers games only; the tables in {} are of {variant} rules (`egdb probe`, `moves --values` and `line` take positions of every variant)",
            args.dir.display()
        )
        .into());
    }
    let tb = Tablebase::open(&args.dir)?;
    // Bounded in size; PDN files are often Latin-1, read lossily rather than refused.
    let text = checkers_egdb::pdn::read_pdn_file(&args.file)?;
    let games = parse_games(&text).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut t = Totals::default();
    for (i, g) in games.iter().enumerate() {
        annotate_game(&tb, i + 1, g, !args.summary, &mut out, &mut t)?;
    }
    writeln!(
        out,
        "games {} replayed {} stopped_at_illegal_move {} reached_tables {} (max {} pieces) \
         value_changing_moves {} results_checked {} result_mismatches {} bad_fen_tags {}",
        t.games,
        t.games - t.illegal - t.bad_fen,
        t.illegal,
        t.reached,
        tb.max_pieces(),
        t.mistakes,
        t.checked,
        t.mismatches,
        t.bad_fen
    )?;
    out.flush()?;
    Ok(())
}
