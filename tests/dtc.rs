//! Distance-to-conversion tables (`egdb build --dtc`), `Tablebase::probe_dtc` and the play
//! functions, checked against the independent DTC oracle (tests/dtc_oracle: forward iteration
//! over every position with the path move generator, no slices, no un-moves) and against
//! published facts (../shared/reference.md).

mod dtc_oracle;
mod probe_common;

use checkers_egdb::{best_move, line, scored_moves, LineEnd, Metric};
use checkers_egdb::{build, BuildOptions};
use checkers_egdb::{Dtc, Tablebase};
use checkers_egdb::{Position, Wld};
use std::path::Path;
use std::sync::OnceLock;

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap()
}

fn build_dtc(dir: &Path, pieces: u32) {
    let mut o = BuildOptions::new(dir, pieces);
    o.dtc = true;
    build(&o).unwrap();
}

fn oracle_dtc(v: Wld, d: Option<u32>) -> Dtc {
    match v {
        Wld::Win => Dtc::Win(d.unwrap()),
        Wld::Loss => Dtc::Loss(d.unwrap()),
        Wld::Draw => Dtc::Draw,
    }
}

/// The oracle of every position with at most `n` pieces (3 or 4), computed once per test
/// binary and shared by the tests (the 4-piece one, 14 million positions, takes the longest).
fn oracle(n: u32) -> &'static dtc_oracle::Oracle {
    static O3: OnceLock<dtc_oracle::Oracle> = OnceLock::new();
    static O4: OnceLock<dtc_oracle::Oracle> = OnceLock::new();
    match n {
        3 => O3.get_or_init(|| dtc_oracle::solve(3)),
        4 => O4.get_or_init(|| dtc_oracle::solve(4)),
        _ => panic!("oracle of {n} pieces: 3 or 4"),
    }
}

/// Tables (values and distances) of at most 4 pieces, built once per test binary; tests only
/// read them (copies or conversions go to their own directories).
fn tables4() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        build_dtc(dir.path(), 4);
        dir
    })
    .path()
}

/// Every position with at most `n` pieces: `probe_dtc` equals the oracle.
fn compare_with_oracle(tb: &Tablebase, n: u32) -> usize {
    let o = oracle(n);
    use rayon::prelude::*;
    let bad: Vec<String> = o
        .positions
        .par_iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let want = oracle_dtc(o.value[i], o.dtc[i]);
            let got = tb.probe_dtc(p).unwrap();
            (got != want).then(|| format!("{}: tables {got}, oracle {want}", p.to_fen()))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{} differences, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    o.positions.len()
}

#[test]
fn three_pieces_equal_the_oracle_and_the_published_facts() {
    let dir = tempfile::tempdir().unwrap();
    build_dtc(dir.path(), 3);
    let tb = Tablebase::open(dir.path()).unwrap();
    let n = compare_with_oracle(&tb, 3);
    assert!(n > 100_000);

    // Facts decided outside our code (issue 9, reference.md).
    assert_eq!(tb.probe_dtc(&pos("W:W5:BK2")).unwrap(), Dtc::Win(1));
    assert_eq!(tb.probe_dtc(&pos("W:WK29:BK25")).unwrap(), Dtc::Win(1));
    assert_eq!(tb.probe_dtc(&pos("B:WK13:BK1")).unwrap(), Dtc::Win(11));
    assert_eq!(tb.probe_dtc(&pos("B:WK14:BK1,K2")).unwrap(), Dtc::Win(33));
    assert_eq!(tb.probe_dtc(&pos("B:WK32:B")).unwrap(), Dtc::Loss(0));
    // K v K longest win 11; 2K v K: 33 with the kings to move, 34 for the lone king.
    let mut kk = 0;
    let (mut two, mut one) = (0, 0);
    for p in probe_common::all_positions(3) {
        let m = checkers_egdb::Material::of(&p);
        let d = tb.probe_dtc(&p).unwrap();
        if m == checkers_egdb::Material::new(0, 1, 0, 1).unwrap() {
            if let Dtc::Win(k) = d {
                kk = kk.max(k);
            }
        }
        if m == checkers_egdb::Material::new(0, 2, 0, 1).unwrap() {
            match (p.side, d) {
                (checkers_egdb::Color::Black, Dtc::Win(k)) => two = two.max(k),
                (checkers_egdb::Color::White, Dtc::Loss(k)) => one = one.max(k),
                _ => {}
            }
        }
    }
    assert_eq!((kk, two, one), (11, 33, 34));

    // The best move of W:W5:BK2 is the crowning 5-1, a conversion.
    let m = best_move(&tb, &pos("W:W5:BK2"), Metric::Dtc)
        .unwrap()
        .unwrap();
    assert_eq!(checkers_egdb::format_move(&m.mv), "5-1");
    assert_eq!(m.value, Dtc::Win(1));
    assert!(m.conversion);
}

#[test]
fn dtc_only_build_on_existing_wld_files_gives_the_same_bytes() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    build_dtc(a.path(), 3);
    build(&BuildOptions::new(b.path(), 3)).unwrap();
    // Table files only (not the build's lock file, `.egdb-build.lock`).
    let tables = |d: &std::path::Path| {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .collect::<Vec<_>>()
    };
    let before = tables(b.path()).len();
    build_dtc(b.path(), 3);
    let mut files = 0;
    for e in tables(a.path()) {
        let name = e.file_name();
        let x = std::fs::read(e.path()).unwrap();
        let y = std::fs::read(b.path().join(&name)).unwrap();
        assert_eq!(x, y, "{name:?}");
        files += 1;
    }
    assert_eq!(files, 2 * before);
    // Resumable: a second run builds nothing.
    let mut o = BuildOptions::new(b.path(), 3);
    o.dtc = true;
    let s = build(&o).unwrap();
    assert_eq!((s.slices_built, s.dtc_files), (0, 0));
    // A missing distance file is a clear error for probe_dtc, not a value.
    let s: checkers_egdb::Slice = "0101-nn".parse().unwrap();
    std::fs::remove_file(checkers_egdb::format::dtc_path(b.path(), &s)).unwrap();
    let tb = Tablebase::open(b.path()).unwrap();
    let e = tb.probe_dtc(&pos("B:WK13:BK1")).unwrap_err();
    assert!(e.to_string().contains("0101-nn"), "{e}");
    // ...and verify reports it instead of skipping the slice.
    let e = checkers_egdb::verify_dir(b.path(), &|_, _, _| {}).unwrap_err();
    assert!(e.to_string().contains("0101-nn"), "{e}");
}

/// Lines of perfect play: a won start ends with the loser to move and no move, never repeats,
/// each winning move keeps the win with the distance falling by one unless it converts; a
/// loser playing random or repetition-seeking moves still loses.
#[test]
fn lines_end_in_wins_and_random_losers_still_lose() {
    let dir = tempfile::tempdir().unwrap();
    build_dtc(dir.path(), 3);
    let tb = Tablebase::open(dir.path()).unwrap();
    let mut won = 0;
    let mut seed = 12345u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for (k, p) in probe_common::all_positions(3).into_iter().enumerate() {
        if k % 7 != 0 {
            continue;
        }
        let d = tb.probe_dtc(&p).unwrap();
        let Dtc::Win(_) = d else { continue };
        won += 1;
        let l = line(&tb, &p, Metric::Dtc, 500).unwrap();
        assert_eq!(l.end, LineEnd::NoMoves, "{}", p.to_fen());
        assert_eq!(l.moves.len() % 2, 1, "the winner moves last");
        let mut seen = std::collections::HashSet::new();
        seen.insert(p);
        let mut cur = p;
        for (i, m) in l.moves.iter().enumerate() {
            assert!(seen.insert(m.after), "repetition in a won line");
            let before = tb.probe_dtc(&cur).unwrap();
            assert_eq!(m.value, before, "best move keeps the value");
            if i % 2 == 0 {
                assert!(matches!(m.value, Dtc::Win(_)));
            }
            if !m.conversion {
                assert_eq!(
                    m.after_value.plies().unwrap() + 1,
                    before.plies().unwrap(),
                    "distance falls by one within a slice"
                );
            }
            cur = m.after;
        }
        // The loser plays at random (or back to an earlier position when it can).
        let mut cur = p;
        let mut history = vec![p];
        let mut plies = 0;
        loop {
            let ms = scored_moves(&tb, &cur, Metric::Dtc).unwrap();
            if ms.is_empty() {
                break;
            }
            plies += 1;
            assert!(plies < 400, "the winner did not finish: {}", p.to_fen());
            let pick = if plies % 2 == 1 {
                &ms[0]
            } else if rnd() % 2 == 0 {
                ms.iter()
                    .find(|m| history.contains(&m.after))
                    .unwrap_or(&ms[(rnd() % ms.len() as u64) as usize])
            } else {
                &ms[(rnd() % ms.len() as u64) as usize]
            };
            if plies % 2 == 1 {
                assert!(matches!(pick.value, Dtc::Win(_)));
            }
            cur = pick.after;
            history.push(cur);
        }
        assert_eq!(plies % 2, 1, "the side that started won: {}", p.to_fen());
    }
    assert!(won > 1000);
    // A drawn start: drawing moves until a repetition or the limit.
    let p = pos("B:WK32:BK1");
    assert_eq!(tb.probe_dtc(&p).unwrap(), Dtc::Draw);
    let l = line(&tb, &p, Metric::Dtc, 50).unwrap();
    assert!(matches!(l.end, LineEnd::Repetition | LineEnd::MaxPlies));
    assert!(l.moves.iter().all(|m| m.value == Dtc::Draw));
}

/// Every position with at most 4 pieces (14 million) against the oracle, the distance files
/// built both in one pass and from existing WLD files. About a minute on 2 cores in release.
#[test]
fn four_pieces_equal_the_oracle() {
    let tb = Tablebase::open(tables4()).unwrap();
    let n = compare_with_oracle(&tb, 4);
    assert!(n > 10_000_000);
}

/// `verify_dir` re-derives every distance with the oracle: a built directory passes, a
/// distance changed in a file (with valid checksums) is found.
#[test]
fn verify_rederives_distances_and_finds_a_changed_one() {
    use checkers_egdb::format::{dtc_path, DtcFile, RULES_ENGLISH};
    let dir = tempfile::tempdir().unwrap();
    build_dtc(dir.path(), 3);
    let rep = checkers_egdb::verify_dir(dir.path(), &|_, _, _| {}).unwrap();
    assert!(rep.dtc_slices > 50);
    // The longest list: K v K 11 (both sides to move), 2K v K 33 / 34 (published facts).
    let rows = checkers_egdb::longest_dtc(dir.path()).unwrap();
    let row = |m: [u8; 4], stm: char| {
        rows.iter()
            .find(|r| [r.bm, r.bk, r.wm, r.wk] == m && r.stm == stm)
            .unwrap()
            .clone()
    };
    assert_eq!(row([0, 1, 0, 1], 'B').longest_win.unwrap().0, 11);
    assert_eq!(row([0, 1, 0, 1], 'W').longest_win.unwrap().0, 11);
    let (d, fen) = row([0, 2, 0, 1], 'B').longest_win.unwrap();
    assert_eq!(d, 33);
    let tb = Tablebase::open(dir.path()).unwrap();
    assert_eq!(tb.probe_dtc(&pos(&fen)).unwrap(), Dtc::Win(33));
    let (d, fen) = row([0, 2, 0, 1], 'W').longest_loss.unwrap();
    assert_eq!(d, 34);
    assert_eq!(tb.probe_dtc(&pos(&fen)).unwrap(), Dtc::Loss(34));
    drop(tb);
    assert_eq!(rep.dtc_positions, rep.positions);

    let p = pos("B:WK14:BK1,K2"); // won in 33
    let s = checkers_egdb::Slice::of(&p);
    let i = checkers_egdb::format::SliceIndex::new(s).rank(&p) as usize;
    let path = dtc_path(dir.path(), &s);
    let f = DtcFile::open(&path, RULES_ENGLISH).unwrap();
    let meta = f.meta().clone();
    let mut d = f.decode_all().unwrap();
    assert_eq!(d[i], 33);
    d[i] = 35;
    drop(f);
    let mask = bitvec::bitvec![u64, bitvec::order::Lsb0; 0; d.len()];
    checkers_egdb::format::write_dtc(&path, &meta, &d, &mask, &Default::default()).unwrap();
    let e = checkers_egdb::verify_dir(dir.path(), &|_, _, _| {}).unwrap_err();
    // Every failure is a distance mismatch, and the changed position itself is one of them
    // (its predecessors in the partner slice may be reported too).
    let fails = e.failures();
    assert!(
        fails
            .iter()
            .all(|f| matches!(f, checkers_egdb::VerifyError::DtcMismatch { .. })),
        "{e}"
    );
    let at = format!("slice {s}, index {i} ");
    assert!(
        fails.iter().any(|f| f.to_string().contains(&at)),
        "{at}: {e}"
    );
}

/// The command line: `build --dtc`, `probe --dtc`, `moves --values`, `line`, `stats --dtc`.
#[test]
fn command_line_distance_commands() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let egdb = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_egdb"))
            .args(args)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // WLD first, then only the distance files.
    let (ok, _, e) = egdb(&["build", "--pieces", "3", "--dir", d, "--quiet"]);
    assert!(ok, "{e}");
    let (ok, out, _) = egdb(&["probe", "--dir", d, "--dtc", "W:W5:BK2"]);
    assert!(
        !ok && out.starts_with("W:W5:BK2\terror: missing distance") && out.contains("--dtc"),
        "{out}"
    );
    let (ok, out, e) = egdb(&["build", "--pieces", "3", "--dir", d, "--dtc"]);
    assert!(ok && out.contains("distances"), "{out}{e}");

    let (ok, out, _) = egdb(&[
        "probe",
        "--dir",
        d,
        "--dtc",
        "W:W5:BK2",
        "W:WK29:BK25",
        "B:WK32:BK1",
    ]);
    assert!(ok);
    assert_eq!(
        out,
        "W:W5:BK2\twin\t1\nW:WK29:BK25\twin\t1\nB:WK32:BK1\tdraw\t-\n"
    );
    let (_, out, _) = egdb(&["probe", "--dir", d, "--dtc", "--json", "B:WK13:BK1"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (v["value"].as_str(), v["dtc"].as_u64()),
        (Some("win"), Some(11))
    );

    let (ok, out, _) = egdb(&["moves", "--dir", d, "--values", "W:W5:BK2"]);
    assert!(ok);
    // The crowning converts (win 1 for the mover); the K v K position after it starts a new
    // count (its distance, checked against the oracle above, is the last column).
    let first = out.lines().next().unwrap();
    let tb = Tablebase::open(dir.path()).unwrap();
    let after = tb.probe_dtc(&pos("B:WK1:BK2")).unwrap();
    assert_eq!(
        first,
        format!("5-1\twin\t1\tB:WK1:BK2\tloss {}", after.plies().unwrap())
    );
    drop(tb);

    let (ok, out, _) = egdb(&["line", "--dir", d, "B:WK14:BK1,K2"]);
    assert!(ok);
    let lines: Vec<&str> = out.lines().collect();
    // No .dtw files here: the line is by DTC.
    assert_eq!(lines[0], "metric\tdtc");
    let lines = &lines[1..];
    assert_eq!(lines[0], "start\twin 33\tB:WK14:BK1,K2");
    assert_eq!(lines.len(), 33 + 2);
    assert!(lines[33].starts_with("33. ") && lines[33].contains("loss 0"));
    assert_eq!(lines[34], "end\tno legal move: the side to move has lost");
    let (_, out, _) = egdb(&[
        "line",
        "--dir",
        d,
        "--json",
        "B:WK32:BK1",
        "--max-plies",
        "6",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["value"], "draw");
    assert!(v["end"] == "repetition" || v["end"] == "max_plies");

    let (ok, out, _) = egdb(&["stats", "--dir", d, "--dtc"]);
    assert!(ok);
    assert!(
        out.lines().any(|l| l == "0 2 0 1 B 33 B:WK14:BK1,K2 - -"),
        "{out}"
    );
}

/// `stats::longest_dtc` against the oracle: per material and side to move, the longest win
/// and loss over the positions without a capture, computed by forward iteration with no
/// tables. Codec-5 value files (no value stored at threat positions and positions without a
/// move) must give the same rows as codec 2: their don't cares are resolved, not read.
#[test]
fn longest_distances_equal_the_oracle_with_every_codec() {
    use checkers_egdb::longest_dtc;
    use std::collections::BTreeMap;
    let o = oracle(3);
    // (bm, bk, wm, wk, side to move) -> (longest win, longest loss)
    type Key = (u8, u8, u8, u8, char);
    let mut want: BTreeMap<Key, (Option<u32>, Option<u32>)> = BTreeMap::new();
    for (i, p) in o.positions.iter().enumerate() {
        let n = |b: u32| b.count_ones() as u8;
        let key = (
            n(p.black & !p.kings),
            n(p.black & p.kings),
            n(p.white & !p.kings),
            n(p.white & p.kings),
            if p.side == checkers_egdb::Color::Black {
                'B'
            } else {
                'W'
            },
        );
        let e = want.entry(key).or_default();
        if p.has_capture() {
            continue;
        }
        let slot = match o.value[i] {
            Wld::Win => &mut e.0,
            Wld::Loss => &mut e.1,
            Wld::Draw => continue,
        };
        let d = o.dtc[i].unwrap();
        *slot = Some(slot.map_or(d, |x| x.max(d)));
    }
    for codec in [
        checkers_egdb::format::CODEC_2BIT_ZSTD,
        checkers_egdb::format::CODEC_CM_THREATS,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = BuildOptions::new(dir.path(), 3);
        opts.dtc = true;
        opts.codec = codec;
        build(&opts).unwrap();
        let tb = Tablebase::open(dir.path()).unwrap();
        let rows = longest_dtc(dir.path()).unwrap();
        let mut seen = 0;
        for r in &rows {
            let key = (r.bm, r.bk, r.wm, r.wk, r.stm);
            let Some(&(win, loss)) = want.get(&key) else {
                continue;
            };
            seen += 1;
            assert_eq!(
                r.longest_win.as_ref().map(|w| w.0),
                win,
                "codec {codec} {key:?} win"
            );
            assert_eq!(
                r.longest_loss.as_ref().map(|l| l.0),
                loss,
                "codec {codec} {key:?} loss"
            );
            // The position shown attains the distance (the probe resolves it by search).
            if let Some((d, fen)) = &r.longest_win {
                assert_eq!(tb.probe_dtc(&pos(fen)).unwrap(), Dtc::Win(*d));
            }
            if let Some((d, fen)) = &r.longest_loss {
                assert_eq!(tb.probe_dtc(&pos(fen)).unwrap(), Dtc::Loss(*d));
            }
        }
        assert!(seen > 30, "codec {codec}: {seen} rows compared");
    }
}

/// `probe_dtc` reads a value and its distance with one cache lookup from a block built from
/// the distance block and the value blocks it spans. Value files re-encoded with other block
/// sizes than the distance files (smaller: a distance block spans many value blocks; larger
/// and not aligned: a value block spans distance blocks), a 1 MiB cache (the 4-piece blocks
/// take about 14 MiB: evictions all along), positions probed in table order (each block is
/// built about once per pass; in random order the test would rebuild a block per probe):
/// every position of at most 4 pieces equals the independent oracle.
#[test]
fn four_pieces_with_other_value_block_sizes_and_a_small_cache_equal_the_oracle() {
    use checkers_egdb::format::SliceIndex;
    use checkers_egdb::{convert_dir, ConvertOptions, Slice};
    use rayon::prelude::*;
    use std::collections::HashMap;
    let o = oracle(4);
    let mut ix: HashMap<Slice, SliceIndex> = HashMap::new();
    let mut order: Vec<(Slice, u64, u32)> = o
        .positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let n = p.normalized();
            let s = Slice::of(&n);
            let r = ix.entry(s).or_insert_with(|| SliceIndex::new(s)).rank(&n);
            (s, r, i as u32)
        })
        .collect();
    order.sort_unstable();
    for bp in [1_000, 100_000] {
        let out = tempfile::tempdir().unwrap();
        let dst = out.path().join("t");
        let mut c = ConvertOptions::new(tables4(), &dst, checkers_egdb::format::CODEC_2BIT_ZSTD);
        c.block_positions = bp;
        convert_dir(&c, &|_, _| {}).unwrap();
        let tb = Tablebase::builder(&dst)
            .cache_bytes(1 << 20)
            .open()
            .unwrap();
        let bad: Vec<String> = order
            .par_chunks(1 << 20)
            .flat_map_iter(|chunk| {
                let tb = &tb;
                chunk.iter().filter_map(move |&(_, _, i)| {
                    let (p, i) = (&o.positions[i as usize], i as usize);
                    let want = oracle_dtc(o.value[i], o.dtc[i]);
                    let got = tb.probe_dtc(p).unwrap();
                    (got != want).then(|| format!("{}: tables {got}, oracle {want}", p.to_fen()))
                })
            })
            .collect();
        assert!(
            bad.is_empty(),
            "blocks of {bp}: {} differences, e.g. {:?}",
            bad.len(),
            &bad[..bad.len().min(5)]
        );
        assert!(order.len() > 10_000_000);
        let st = tb.stats();
        assert!(st.blocks_decoded > 100, "{st:?}");
    }
}

/// A tablebase whose caches are backed by huge pages (`huge_pages(true)`, a kernel hint, the
/// default) and one without give the oracle's distances and values at every position of at
/// most 3 pieces.
#[test]
fn three_pieces_with_and_without_huge_pages_equal_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    build_dtc(dir.path(), 3);
    for huge in [true, false] {
        let tb = Tablebase::builder(dir.path())
            .cache_bytes(64 << 20)
            .huge_pages(huge)
            .open()
            .unwrap();
        assert!(compare_with_oracle(&tb, 3) > 100_000, "huge pages {huge}");
    }
}

/// The distance caches hold pages of 16 KiB (`cache::DTC_PAGE_BYTES`), far fewer frames than
/// the WLD cache's 824-byte pages for the same budget. Budgets of three distance frames (all
/// in one set: every new block evicts one), of less than one frame (the distance cache holds
/// nothing, every probe builds its signed block again) and of a few sets, each with the
/// positions probed in the oracle's order: every position of at most 3 pieces equals the
/// independent oracle.
#[test]
fn three_pieces_with_distance_caches_of_a_few_large_pages_equal_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    build_dtc(dir.path(), 3);
    for budget in [3 * (16_384 + 16), 10_000, 300_000] {
        let tb = Tablebase::builder(dir.path())
            .cache_bytes(budget)
            .open()
            .unwrap();
        assert!(compare_with_oracle(&tb, 3) > 100_000, "budget {budget}");
        assert!(tb.stats().blocks_decoded > 10, "budget {budget}");
    }
}

/// A handle opened before the distance files were built finds them after `rescan` (a missing
/// `.dtc` was once remembered for good), and answers as a handle opened afterwards does.
#[test]
fn distance_files_built_later_are_found_after_a_rescan() {
    let d = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(d.path(), 3)).unwrap();
    let tb = Tablebase::open(d.path()).unwrap();
    // Two kings against one, won in 33 plies (the published longest 2K v K win, as in
    // `verify_rederives_distances_and_finds_a_changed_one`).
    let p = pos("B:WK14:BK1,K2");
    assert!(
        matches!(
            tb.probe_dtc(&p),
            Err(checkers_egdb::ProbeError::MissingDtc { .. })
        ),
        "{:?}",
        tb.probe_dtc(&p)
    );
    build_dtc(d.path(), 3);
    tb.rescan().unwrap();
    assert_eq!(tb.probe_dtc(&p), Ok(Dtc::Win(33)));
    let fresh = Tablebase::open(d.path()).unwrap();
    assert_eq!(fresh.probe_dtc(&p), Ok(Dtc::Win(33)));
}
