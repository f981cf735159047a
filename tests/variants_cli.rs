//! `egdb perft --rules NAME`: the variants from the command line (published counts, sources
//! in tests/variants_perft.rs) and the refusal of an unknown name.

use std::process::Command;

fn egdb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(args)
        .output()
        .expect("egdb runs")
}

#[test]
fn perft_rules_prints_the_published_counts() {
    // Russian (shashki.com validation thread) and Brazilian (same thread): depth 6 differs.
    for (rules, d6) in [
        ("russian", "37986"),
        ("brazilian", "37628"),
        ("italian", "36473"),
        ("giveaway", "36768"),
        ("ENGLISH", "36768"),
    ] {
        let out = egdb(&["perft", "--rules", rules, "6"]);
        assert!(out.status.success(), "{rules}");
        let text = String::from_utf8(out.stdout).unwrap();
        let want = format!("1\t7\n2\t49\n3\t302\n4\t1469\n5\t{}\n6\t{d6}\n", {
            if rules == "russian" {
                "7482"
            } else if rules == "brazilian" {
                "7473"
            } else {
                "7361"
            }
        });
        assert_eq!(text, want, "{rules}");
    }
}

#[test]
fn perft_refuses_unknown_rules() {
    let out = egdb(&["perft", "--rules", "klingon", "3"]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unknown rules \"klingon\""), "{err}");
    assert!(err.contains("russian"), "{err}");
    assert!(out.stdout.is_empty());
}

/// Giveaway tables from the command line: `build --rules giveaway`, then `probe`, `verify`
/// and `stats` reading the rules from the headers; published facts (M. Fierz, "Drawing
/// tendencies in suicide checkers", 2005: `W:WK5,K1:BK32` and `B:WK21,K1:BK18` won by the side
/// to move; a side without pieces wins); a directory holds one variant: an English build into
/// it, `probe --rules english` and `verify --rules russian` are refused naming both;
/// `annotate` (English games only) is refused naming the rules; `prove` refuses a `--time` or
/// `--state-interval` out of range with one line.
#[test]
fn giveaway_tables_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = egdb(&[
        "build", "--rules", "giveaway", "--pieces", "3", "--dtc", "--dir", d, "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = egdb(&[
        "probe",
        "--dtc",
        "--dir",
        d,
        "W:WK5,K1:BK32",
        "B:WK21,K1:BK18",
        "B:WK32:B",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let values: Vec<&str> = text
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert_eq!(values, ["win", "win", "win"], "{text}");
    assert!(text.lines().nth(2).unwrap().ends_with("\twin\t0"), "{text}");

    let out = egdb(&["verify", "--dir", d, "--quiet"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // Every Black-to-move position of at most 3 pieces (OEIS A055213: 120 + 6,972 + 261,224).
    assert!(text.contains("268316 positions verified"), "{text}");

    let out = egdb(&["stats", "--dir", d]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // A lone White king, Black to move: Black has no pieces and wins, all 32 positions.
    assert!(text.lines().any(|l| l == "0 0 0 1 B 32 32 0 0 0"), "{text}");

    let other = tempfile::tempdir().unwrap();
    let pdn = other.path().join("game.pdn").to_str().unwrap().to_string();
    std::fs::write(&pdn, "[FEN \"W:WK32:BK26\"]\n1. 32-28 *\n").unwrap();
    let state = other
        .path()
        .join("prove.state")
        .to_str()
        .unwrap()
        .to_string();
    for (args, want) in [
        (
            vec!["build", "--pieces", "3", "--dir", d, "--quiet"],
            "holds giveaway tables",
        ),
        (
            vec!["probe", "--rules", "english", "--dir", d, "W:WK32:BK26"],
            "are of giveaway rules, not english",
        ),
        (
            vec!["annotate", "--dir", d, pdn.as_str()],
            "reads English checkers games only; the tables in",
        ),
        (
            vec!["prove", "--dir", d, "--time", "1e20", "W:WK32:BK26"],
            "--time must be a number of seconds from 0 to 1e9, got 1e20",
        ),
        (
            vec![
                "prove",
                "--dir",
                d,
                "--state",
                state.as_str(),
                "--state-interval",
                "1e-300",
                "W:WK32:BK26",
            ],
            "--state-interval must be a number of seconds from 0.01",
        ),
        (
            vec!["verify", "--rules", "russian", "--dir", d, "--quiet"],
            "not russian",
        ),
    ] {
        let out = egdb(&args);
        assert!(!out.status.success(), "{args:?}");
        let all = String::from_utf8_lossy(&out.stderr).to_string()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(all.contains(want), "{args:?}: {all}");
    }
}

/// `info`, `stats` and `verify` on a variant directory (issue 34): each works on the Italian
/// tables built from the command line and names their rules (`info`: a `rules<TAB>NAME` line
/// after the tables; `stats`: `egdb: rules: NAME` on stderr, stdout keeping its rows;
/// `verify`: a last line `rules: NAME`). Facts: the positions of at most 3 pieces with Black
/// to move (OEIS A055213: 120, 6,972, 261,224); king v king is the same game in Italian as in
/// English (short kings, one capture at most, no man to move), so its row is English's
/// published one: White to move, 992 positions, 230 wins, 108 losses, 654 draws, longest 11.
#[test]
fn info_stats_and_verify_name_the_rules() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = egdb(&[
        "build", "--rules", "italian", "--pieces", "3", "--dtc", "--dir", d, "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = egdb(&["info", "--dir", d]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows[0][0], "pieces", "{text}");
    let positions: Vec<&str> = rows[1..4].iter().map(|r| r[3]).collect();
    assert_eq!(positions, ["120", "6972", "261224"], "{text}");
    assert!(
        rows[1..4].iter().all(|r| r[2] == "0"),
        "nothing missing: {text}"
    );
    assert!(text.lines().any(|l| l == "rules\titalian"), "{text}");

    let out = egdb(&["stats", "--dir", d]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().next(),
        Some("bm bk wm wk stm positions wins losses draws longest")
    );
    assert!(
        text.lines().any(|l| l == "0 1 0 1 W 992 230 108 654 11"),
        "{text}"
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end(), "egdb: rules: italian", "{err}");
    // --json keeps its shape: an array of rows.
    let out = egdb(&["stats", "--dir", d, "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.as_array().is_some_and(|a| !a.is_empty()));

    let out = egdb(&["verify", "--dir", d, "--quiet"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("268316 positions verified"), "{text}");
    assert_eq!(text.lines().last(), Some("rules: italian"), "{text}");
    // --rules naming the directory's own rules: the same.
    let out = egdb(&["verify", "--rules", "italian", "--dir", d, "--quiet"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().lines().last(),
        Some("rules: italian")
    );

    // English tables say so too.
    let en = tempfile::tempdir().unwrap();
    let e = en.path().to_str().unwrap();
    assert!(egdb(&["build", "--pieces", "2", "--dir", e, "--quiet"])
        .status
        .success());
    let out = egdb(&["info", "--dir", e]);
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .any(|l| l == "rules\tenglish"));
    let out = egdb(&["stats", "--dir", e]);
    assert_eq!(
        String::from_utf8(out.stderr).unwrap().trim_end(),
        "egdb: rules: english"
    );
}

/// Depth to win is built for English only: asked for on a variant's tables, `line`, `moves`
/// and `probe` say so in one line instead of "missing ... build it with egdb build --dtw"
/// (a build the variant refuses).
#[test]
fn depth_to_win_on_a_variants_tables_is_refused_naming_the_metric_to_use() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = egdb(&[
        "build", "--rules", "russian", "--pieces", "2", "--dtc", "--dir", d, "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The variant's own build refuses --dtw (what the old message sent the user to).
    let out = egdb(&[
        "build", "--rules", "russian", "--pieces", "2", "--dtw", "--dir", d,
    ]);
    assert!(!out.status.success());
    for args in [
        vec!["line", "--dir", d, "--metric", "dtw", "W:WK32:BK26"],
        vec![
            "moves",
            "--dir",
            d,
            "--values",
            "--metric",
            "dtw",
            "W:WK32:BK26",
        ],
        vec!["probe", "--dir", d, "--dtw", "W:WK32:BK26"],
    ] {
        let out = egdb(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            err.contains("English tables only") && err.contains("--metric dtc"),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    // DTC still answers.
    let out = egdb(&["line", "--dir", d, "--metric", "dtc", "W:WK32:BK26"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
