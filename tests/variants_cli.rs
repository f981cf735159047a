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
