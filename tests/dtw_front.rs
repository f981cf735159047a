//! The user-facing half of issue 33 (depth to win): `play::{scored_moves, best_move, line}` by
//! [`Metric::Dtw`], `egdb line --metric`, `egdb moves --values` with both metrics and
//! `egdb stats --dtw`, checked against the independent DTW oracle (tests/dtw_oracle: forward
//! iteration over every position of at most 4 pieces with the path move generator, no slices,
//! no un-moves, no tables) and facts decided outside the code (issue 33,
//! ../shared/reference.md): DTW = DTC in K v K (longest 11), the longest 2K v K the same in both
//! metrics (33 / 34); DTW >= DTC for every decided position; a line by DTW has exactly DTW(p)
//! plies and ends with the loser unable to move.

mod dtw_oracle;
mod probe_common;

use checkers_egdb::{best_move, line, scored_moves, LineEnd, Metric};
use checkers_egdb::{build, BuildOptions};
use checkers_egdb::{Color, Position, Wld};
use checkers_egdb::{Dtc, Tablebase};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap()
}

/// One 4-piece directory with WLD, DTC and DTW files, built once for the tests of this file.
fn tables4() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let mut o = BuildOptions::new(d.path(), 4);
        o.dtc = true;
        o.dtw = true;
        build(&o).unwrap();
        let p = d.path().to_path_buf();
        (d, p)
    })
    .1
}

fn oracle4() -> &'static dtw_oracle::DtwOracle {
    static O: OnceLock<dtw_oracle::DtwOracle> = OnceLock::new();
    O.get_or_init(|| dtw_oracle::solve(4))
}

/// The oracle's value of position `i` as a [`Dtc`] (the variants the probes use).
fn want(o: &dtw_oracle::DtwOracle, i: usize) -> Dtc {
    match o.value[i] {
        Wld::Win => Dtc::Win(o.dtw[i].unwrap()),
        Wld::Loss => Dtc::Loss(o.dtw[i].unwrap()),
        Wld::Draw => Dtc::Draw,
    }
}

fn egdb(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `scored_moves`, `best_move` and `line` by DTW from a sample of every position of at most 4
/// pieces: each move's value is 1 + the oracle's depth after it (win and loss swapped), the
/// best equals the oracle's depth of the position, and the line has exactly that many plies
/// and ends with the loser to move and no move (the oracle's successor list empty).
#[test]
fn play_by_dtw_equals_the_oracle() {
    let tb = Tablebase::open(tables4()).unwrap();
    let o = oracle4();
    let bad: Vec<String> = o
        .positions
        .par_iter()
        .enumerate()
        .step_by(61)
        .filter_map(|(i, p)| {
            let w = want(o, i);
            let ms = scored_moves(&tb, p, Metric::Dtw).unwrap();
            for m in &ms {
                let j = o.id[&m.after] as usize;
                let after = want(o, j);
                let mover = match after {
                    Dtc::Win(n) => Dtc::Loss(n + 1),
                    Dtc::Loss(n) => Dtc::Win(n + 1),
                    Dtc::Draw => Dtc::Draw,
                };
                if m.after_value != after || m.value != mover {
                    return Some(format!(
                        "{} move to {}: {} / {}, oracle {mover} / {after}",
                        p.to_fen(),
                        m.after.to_fen(),
                        m.value,
                        m.after_value
                    ));
                }
            }
            let best = best_move(&tb, p, Metric::Dtw).unwrap();
            match best {
                None if w != Dtc::Loss(0) => return Some(format!("{}: no move", p.to_fen())),
                Some(m) if m.value != w => {
                    return Some(format!("{}: best {} oracle {w}", p.to_fen(), m.value))
                }
                _ => {}
            }
            if let Some(d) = w.plies() {
                let l = line(&tb, p, Metric::Dtw, 1000).unwrap();
                let last = l.moves.last().map_or(*p, |m| m.after);
                if l.moves.len() as u32 != d
                    || l.end != LineEnd::NoMoves
                    || !o.succ[o.id[&last] as usize].is_empty()
                    || l.metric != Metric::Dtw
                {
                    return Some(format!(
                        "{}: line of {} plies ending {:?}, oracle DTW {d}",
                        p.to_fen(),
                        l.moves.len(),
                        l.end
                    ));
                }
                // Along the line the depth falls by one each ply.
                for (k, m) in l.moves.iter().enumerate() {
                    if m.after_value.plies() != Some(d - 1 - k as u32) {
                        return Some(format!("{}: ply {k} {}", p.to_fen(), m.after_value));
                    }
                }
            }
            None
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{} differences, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

/// DTW >= DTC at every decided position of at most 4 pieces, and DTW = DTC at every K v K
/// position (the only conversion, a capture, ends the game). Not at every 2K v K position: the
/// loser may capture a king into a lost K v K, a conversion DTC's loser avoids and DTW's takes
/// (B:WK10:BK1,K2 has DTC 11, DTW 13); their longest agree (33 / 34,
/// [`stats_dtw_equals_the_oracle`]).
#[test]
fn dtw_is_at_least_dtc_and_equal_in_king_v_king() {
    let tb = Tablebase::open(tables4()).unwrap();
    let o = oracle4();
    let bad: Vec<String> = o
        .positions
        .par_iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let c = tb.probe_dtc(p).unwrap();
            let w = want(o, i);
            if c.wld() != w.wld() {
                return Some(format!("{}: dtc {c}, oracle {w}", p.to_fen()));
            }
            let (Some(dw), Some(dc)) = (w.plies(), c.plies()) else {
                return None;
            };
            let kings_only = p.kings == p.black | p.white;
            if dw < dc || (kings_only && p.piece_count() == 2 && dw != dc) {
                return Some(format!("{}: dtw {dw} dtc {dc}", p.to_fen()));
            }
            None
        })
        .collect();
    assert!(bad.is_empty(), "{:?}", &bad[..bad.len().min(5)]);
}

/// The oracle's longest win and loss per material and side to move (every position, captures
/// included), keyed `(bm, bk, wm, wk, stm)`.
/// `(bm, bk, wm, wk, side to move)` -> `(longest win, longest loss)`.
type Longest = BTreeMap<(u8, u8, u8, u8, char), (Option<u32>, Option<u32>)>;

fn oracle_longest() -> Longest {
    let o = oracle4();
    let mut out: BTreeMap<_, (Option<u32>, Option<u32>)> = BTreeMap::new();
    for (i, p) in o.positions.iter().enumerate() {
        let n = |b: u32| b.count_ones() as u8;
        let key = (
            n(p.black & !p.kings),
            n(p.black & p.kings),
            n(p.white & !p.kings),
            n(p.white & p.kings),
            if p.side == Color::Black { 'B' } else { 'W' },
        );
        let e = out.entry(key).or_default();
        let slot = match o.value[i] {
            Wld::Win => &mut e.0,
            Wld::Loss => &mut e.1,
            Wld::Draw => continue,
        };
        let d = o.dtw[i].unwrap();
        *slot = Some(slot.map_or(d, |x| x.max(d)));
    }
    out
}

/// `stats::longest_dtw` and `egdb stats --dtw` against the oracle: per material and side to
/// move the longest win and loss, each with a position that attains it; the published
/// kings-only figures (K v K 11, 2K v K 33 / 34).
#[test]
fn stats_dtw_equals_the_oracle() {
    let dir = tables4();
    let want = oracle_longest();
    let rows = checkers_egdb::longest_dtw(dir).unwrap();
    let tb = Tablebase::open(dir).unwrap();
    let mut seen = 0;
    for r in &rows {
        let key = (r.bm, r.bk, r.wm, r.wk, r.stm);
        let Some(&(win, loss)) = want.get(&key) else {
            continue;
        };
        seen += 1;
        assert_eq!(r.longest_win.as_ref().map(|w| w.0), win, "{key:?} win");
        assert_eq!(r.longest_loss.as_ref().map(|l| l.0), loss, "{key:?} loss");
        if let Some((d, fen)) = &r.longest_win {
            assert_eq!(tb.probe_dtw(&pos(fen)).unwrap(), Dtc::Win(*d), "{fen}");
        }
        if let Some((d, fen)) = &r.longest_loss {
            assert_eq!(tb.probe_dtw(&pos(fen)).unwrap(), Dtc::Loss(*d), "{fen}");
        }
    }
    assert!(seen > 100, "{seen} rows compared");
    let d = dir.to_str().unwrap();
    let (ok, out, e) = egdb(&["stats", "--dir", d, "--dtw"]);
    assert!(ok, "{e}");
    let row = |prefix: &str| {
        out.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix}: {out}"))
            .split(' ')
            .map(str::to_string)
            .collect::<Vec<String>>()
    };
    assert_eq!(row("0 1 0 1 B ")[5], "11");
    assert_eq!(row("0 2 0 1 B ")[5], "33");
    assert_eq!(row("0 2 0 1 W ")[7], "34");
    // --json: the same rows.
    let (ok, out, _) = egdb(&["stats", "--dir", d, "--dtw", "--json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().unwrap().len(), rows.len());
    // Not with --dtc.
    let (ok, _, e) = egdb(&["stats", "--dir", d, "--dtw", "--dtc"]);
    assert!(!ok && e.contains("--dtc"), "{e}");
}

/// `egdb line`: by default and with `--metric dtw` the line of the longest 4-piece win has the
/// oracle's DTW plies and ends with the loser unable to move; `--metric dtc` plays by DTC
/// (`play::line`'s moves); a directory without `.dtw` files defaults to DTC, and
/// `--metric dtw` there is a clear error.
#[test]
fn command_line_line_and_moves_by_metric() {
    let dir = tables4();
    let d = dir.to_str().unwrap();
    let o = oracle4();
    // The longest win of the oracle (the first in enumeration order).
    let (i, _) = (0..o.positions.len())
        .filter(|&i| o.value[i] == Wld::Win)
        .map(|i| (i, o.dtw[i].unwrap()))
        .fold((0, 0), |a, b| if b.1 > a.1 { b } else { a });
    let (p, dtw) = (o.positions[i], o.dtw[i].unwrap());
    let fen = p.to_fen();
    for extra in [&[][..], &["--metric", "dtw"][..]] {
        let mut args = vec!["line", "--dir", d, fen.as_str()];
        args.extend_from_slice(extra);
        let (ok, out, e) = egdb(&args);
        assert!(ok, "{e}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "metric\tdtw");
        assert_eq!(lines[1], format!("start\twin {dtw}\t{fen}"));
        assert_eq!(lines.len() as u32, dtw + 3, "{out}");
        let last = lines[dtw as usize + 1];
        assert!(last.contains("loss 0"), "{last}");
        let fen_last = last.rsplit('\t').next().unwrap();
        assert!(o.succ[o.id[&pos(fen_last)] as usize].is_empty());
        assert_eq!(
            lines[dtw as usize + 2],
            "end\tno legal move: the side to move has lost"
        );
    }
    // By DTC: the library's DTC line, move for move.
    let tb = Tablebase::open(dir).unwrap();
    let l = line(&tb, &p, Metric::Dtc, 1000).unwrap();
    let (ok, out, _) = egdb(&["line", "--dir", d, "--metric", "dtc", "--json", &fen]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["metric"], "dtc");
    assert_eq!(v["dtc"], tb.probe_dtc(&p).unwrap().plies().unwrap());
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), l.moves.len());
    for (a, b) in moves.iter().zip(&l.moves) {
        assert_eq!(a["after"], b.after.to_fen());
        assert_eq!(a["dtc"].as_u64().map(|x| x as u32), b.after_value.plies());
    }
    let (ok, out, _) = egdb(&["line", "--dir", d, "--metric", "dtw", "--json", &fen]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (v["metric"].as_str(), v["dtw"].as_u64()),
        (Some("dtw"), Some(dtw as u64))
    );
    assert_eq!(v["moves"].as_array().unwrap().len() as u32, dtw);
    let (ok, _, e) = egdb(&["line", "--dir", d, "--metric", "dtx", &fen]);
    assert!(!ok && e.contains("dtx"), "{e}");

    // moves --values: both metrics, ordered by DTW; each column against the oracle and the DTC
    // probe.
    let (ok, out, e) = egdb(&["moves", "--dir", d, "--values", &fen]);
    assert!(ok, "{e}");
    let mut prev: Option<(u8, i64)> = None;
    for row in out.lines() {
        let c: Vec<&str> = row.split('\t').collect();
        assert_eq!(c.len(), 6, "{row}");
        let after = pos(c[3]);
        let j = o.id[&after] as usize;
        let aw = want(o, j);
        let (dw, adw) = c[5].split_once(' ').unwrap();
        let num = |s: &str| s.parse::<u32>().ok();
        assert_eq!(num(adw), aw.plies(), "{row}");
        assert_eq!(num(dw), aw.plies().map(|x| x + 1), "{row}");
        let ac = tb.probe_dtc(&after).unwrap();
        assert_eq!(num(c[4].split(' ').nth(1).unwrap()), ac.plies(), "{row}");
        assert_eq!(c[1], aw.wld().negate().as_str());
        // Best first by DTW: wins by smallest, then draws, then losses by largest.
        let key = match (c[1], num(dw)) {
            ("win", Some(n)) => (0, i64::from(n)),
            ("draw", _) => (1, 0),
            (_, Some(n)) => (2, -i64::from(n)),
            _ => unreachable!(),
        };
        assert!(prev.is_none_or(|q| q <= key), "{out}");
        prev = Some(key);
        // DTW >= DTC for the move, too.
        if let (Some(a), Some(b)) = (num(dw), num(c[2])) {
            assert!(a >= b, "{row}");
        }
    }
    let (ok, out, _) = egdb(&["moves", "--dir", d, "--values", "--json", "W:W5:BK2"]);
    assert!(ok);
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let ow = want(o, o.id[&pos("B:WK1:BK2")] as usize).plies().unwrap();
    assert_eq!(first["move"], "5-1");
    assert_eq!(first["dtc"], 1);
    assert_eq!(first["dtw"], ow + 1);
    assert_eq!(first["after_dtw"], ow);

    // A directory without .dtw files: DTC by default, --metric dtw an error naming the build.
    let only = tempfile::tempdir().unwrap();
    let mut b = BuildOptions::new(only.path(), 3);
    b.dtc = true;
    build(&b).unwrap();
    let od = only.path().to_str().unwrap();
    let (ok, out, _) = egdb(&["line", "--dir", od, "B:WK14:BK1,K2"]);
    assert!(ok);
    assert!(out.starts_with("metric\tdtc\nstart\twin 33\t"), "{out}");
    let (ok, _, e) = egdb(&["line", "--dir", od, "--metric", "dtw", "B:WK14:BK1,K2"]);
    assert!(!ok && e.contains("egdb build --dtw"), "{e}");
    let (ok, out, _) = egdb(&["moves", "--dir", od, "--values", "W:W5:BK2"]);
    assert!(ok);
    assert_eq!(out.lines().next().unwrap().split('\t').count(), 5);
    // --metric dtw asked for by name: an error where a move needs a .dtw file, never the DTC
    // order under the DTW name; a king-v-king draw (every move draws) needs none: `- -`.
    let (ok, _, e) = egdb(&[
        "moves", "--dir", od, "--values", "--metric", "dtw", "W:W5:BK2",
    ]);
    assert!(!ok && e.contains("egdb build --dtw"), "{e}");
    let (ok, out, _) = egdb(&[
        "moves",
        "--dir",
        od,
        "--values",
        "--metric",
        "dtw",
        "W:WK1:BK32",
    ]);
    assert!(ok);
    for l in out.lines() {
        let cols: Vec<&str> = l.split('\t').collect();
        assert_eq!((cols.len(), cols[1], cols[5]), (6, "draw", "- -"), "{l}");
    }
    let (ok, _, e) = egdb(&["stats", "--dir", od, "--dtw"]);
    assert!(!ok && e.contains("egdb build --dtw"), "{e}");
}
