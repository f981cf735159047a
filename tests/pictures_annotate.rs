//! `egdb show --svg/--png`, `egdb stats --plot` and `egdb annotate` through the binary, on
//! tables of at most 4 pieces built once. Values asserted are rules facts (a side left without
//! pieces has lost) or published facts (/work/shared/reference.md: the First Position, king v
//! king's longest win of 11 plies).
use checkers_egdb::{build, BuildOptions};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn tables() -> &'static std::path::Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        build(&BuildOptions::new(d.path(), 4)).unwrap();
        d
    })
    .path()
}

fn egdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(args)
        .output()
        .expect("run egdb")
}

fn ok_stdout(args: &[&str]) -> String {
    let out = egdb(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn show_svg_and_png() {
    let svg = ok_stdout(&["show", "--svg", "W:WK19,K23:BK28,12"]);
    assert!(svg.starts_with("<svg"));
    for sq in 1..=32 {
        assert!(svg.contains(&format!(">{sq}</text>")), "square {sq}");
    }
    assert!(svg.is_ascii(), "no Unicode glyphs");
    assert_eq!(svg.matches("<path").count(), 3, "three kings, three crowns");
    assert!(svg.contains("White to move"));
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("b.png");
    ok_stdout(&["show", "--png", png.to_str().unwrap(), "B:W21-32:B1-12"]);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // A bad FEN is one error line, no file.
    let bad = dir.path().join("bad.png");
    let out = egdb(&["show", "--png", bad.to_str().unwrap(), "X:W1:B2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!bad.exists());
}

#[test]
fn stats_plot() {
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("stats.svg");
    ok_stdout(&[
        "stats",
        "--dir",
        tables().to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    // plotters puts each label on its own line inside <text>.
    let svg = std::fs::read_to_string(&plot).unwrap().replace('\n', "");
    assert!(svg.starts_with("<svg"));
    // King v king rows, both sides to move, longest win 11 plies (published).
    assert!(
        svg.contains(">0101 B<") && svg.contains(">0101 W<"),
        "labels"
    );
    assert!(svg.contains(">longest 11<"));
    // Rows where a side has no piece are left out.
    assert!(!svg.contains(">0001 B<"));
}

#[test]
fn annotate_marks_thrown_wins_and_checks_results() {
    let dir = tempfile::tempdir().unwrap();
    let pdn = dir.path().join("g.pdn");
    // Game 1: the First Position (White to move wins); White plays 19-24?? and Black's king
    // jumps both white kings: White has no piece left, so Black has won (recorded 1-0).
    // Game 2: the same moves recorded as a White win: the result disagrees with the tables.
    // Game 3: an illegal move stops the replay; game 4 never reaches 4 pieces.
    std::fs::write(
        &pdn,
        "[Event \"one\"]\n[FEN \"W:WK19,K23:BK28,12\"]\n1... 19-24 {oops} 2. 28x19x26 1-0\n\n\
         [Event \"two\"]\n[FEN \"W:WK19,K23:BK28,12\"]\n1... 19-24 2. 28x19x26 0-1\n\n\
         [Event \"three\"]\n[FEN \"W:WK19,K23:BK28,12\"]\n1... 19-20 *\n\n\
         [Event \"four\"]\n1. 11-15 23-19 *\n",
    )
    .unwrap();
    let out = ok_stdout(&[
        "annotate",
        "--dir",
        tables().to_str().unwrap(),
        pdn.to_str().unwrap(),
    ]);
    let games: Vec<&str> = out.split("game ").skip(1).collect();
    assert_eq!(games.len(), 4, "{out}");
    // These tables have no distance files; the position after 19-24 still has a distance:
    // Black must capture, a conversion, DTC 1 by definition.
    assert!(
        games[0].contains("19-24  win -> loss [1]  ?? win thrown into a loss"),
        "{out}"
    );
    assert!(!games[0].contains("MISMATCH"), "{out}");
    assert!(
        games[0].contains("recorded black wins, tables black wins"),
        "{out}"
    );
    assert!(games[1].contains("MISMATCH"), "{out}");
    assert!(games[2].contains("not a legal move"), "{out}");
    assert!(games[3].contains("outside the tables"), "{out}");
    let summary = out.lines().last().unwrap();
    assert_eq!(
        summary,
        "games 4 replayed 3 stopped_at_illegal_move 1 reached_tables 2 (max 4 pieces) \
         value_changing_moves 2 results_checked 2 result_mismatches 1 bad_fen_tags 0"
    );
    // A file that is not PDN: one error line naming the line.
    std::fs::write(&pdn, "[Event \"x\"]\n1. 11-15 ???\n").unwrap();
    let out = egdb(&[
        "annotate",
        "--dir",
        tables().to_str().unwrap(),
        pdn.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("PDN line 2"), "{err}");
}
