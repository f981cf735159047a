//! The prover and the certificate checker under the other rules (Russian, Brazilian, Italian,
//! giveaway), against values decided outside the prover.
//!
//! Per variant, built once per test binary in a temporary directory by the command line
//! (`egdb build --rules V`): every table of at most 4 pieces (the prover's leaves), and a copy
//! of them with the 5-piece tables of two kings-only materials added (`--slice 0401-nn` and
//! `--slice 0302-nn`, each with its colour-mirror partner: four kings against one, three
//! against two). The builder's ≤4-piece tables of these variants are checked entry by entry
//! against an independent forward solver in `tests/variants_solve.rs`; the 5-piece slices come
//! from the same builder, never from the prover. The prover sees only the 4-piece directory.
//!
//! - Random positions of those two materials, either side to move: every value the prover
//!   settles equals the 5-piece table's (unknown is allowed and counted; at least some must
//!   settle), and every certificate passes the independent checker (which walks the variant's
//!   path generator, not the fast engine) with the same value.
//! - Random 5-piece positions with men: every certificate passes the checker with the value
//!   the prover gave (and the same value comes with one, two and four threads).
//! - Mutated certificates are refused: a record removed, a record's move replaced by one the
//!   5-piece table says does not keep the claim, the claimant swapped, the `rules` line naming
//!   another variant (refused naming both).
//! - Giveaway, one king against one king (Issue 34: never a draw; the side with no move wins):
//!   on the 1-piece tables only, every such position settles, never as a draw, and agrees with
//!   the 4-piece directory.
//! - The command line: `egdb prove` takes the rules from the table headers, refuses `--rules`
//!   of other tables naming both; its certificate names the rules and `egdb check-proof`
//!   accepts it, and refuses it against tables of other rules; `--state` resumes; `--build`
//!   builds the position's unit under the directory's rules.
#[path = "random_positions/mod.rs"]
mod random_positions;

use checkers_egdb::certificate::{certificate_text, check_certificate, CheckError, Proof};
use checkers_egdb::rules::Variant;
use checkers_egdb::{with_tablebase, AnyTablebase, Color, Position, ProveOptions, Prover, Wld};
use random_positions::{random_position, Rng};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The tables of one variant.
struct Dirs {
    _tmp: tempfile::TempDir,
    /// Every table up to 4 pieces (the prover's).
    t4: PathBuf,
    /// `t4` and the 5-piece slices 0401-nn, 0104-nn, 0302-nn, 0203-nn (the truth).
    t5: PathBuf,
    /// Only the 1-piece tables.
    t1: PathBuf,
}

fn egdb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(args)
        .env_remove("EGDB_DIR")
        .output()
        .expect("egdb runs")
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "status {:?}\nstdout {}\nstderr {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn copy_tables(from: &Path, to: &Path, max_pieces: u32) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let n = e.file_name().to_string_lossy().into_owned();
        let pieces: Option<u32> = n
            .get(..4)
            .and_then(|d| d.chars().map(|c| c.to_digit(10)).sum());
        if pieces.is_some_and(|p| p <= max_pieces) {
            std::fs::copy(e.path(), to.join(&n)).unwrap();
        }
    }
}

/// The tables of `v`, built once per test binary.
fn dirs(v: Variant) -> &'static Dirs {
    static DIRS: [OnceLock<Dirs>; 8] = [const { OnceLock::new() }; 8];
    DIRS[v.id() as usize - 1].get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let t4 = tmp.path().join("t4");
        let s4 = t4.to_str().unwrap();
        ok(&egdb(&[
            "build",
            "--rules",
            v.name(),
            "--pieces",
            "4",
            "--dir",
            s4,
            "--quiet",
        ]));
        let t5 = tmp.path().join("t5");
        copy_tables(&t4, &t5, 4);
        let s5 = t5.to_str().unwrap();
        for slice in ["0401-nn", "0302-nn"] {
            ok(&egdb(&[
                "build",
                "--rules",
                v.name(),
                "--slice",
                slice,
                "--with-deps",
                "--dir",
                s5,
                "--quiet",
            ]));
        }
        let t1 = tmp.path().join("t1");
        copy_tables(&t4, &t1, 1);
        Dirs {
            _tmp: tmp,
            t4,
            t5,
            t1,
        }
    })
}

fn opts(nodes: u64, threads: usize, certificate: bool) -> ProveOptions {
    ProveOptions {
        nodes: Some(nodes),
        // Node limits only: the results do not depend on the machine's load.
        time: None,
        tt_bytes: 32 << 20,
        threads,
        certificate,
        layer_positions: 0,
        memory: None,
        ..ProveOptions::default()
    }
}

/// A random position of `a` kings against `b` kings: the side with `a` and the side to move
/// drawn at random.
fn random_kings(rng: &mut Rng, a: u32, b: u32) -> Position {
    let mut p = Position {
        black: 0,
        white: 0,
        kings: 0,
        side: if rng.below(2) == 0 {
            Color::Black
        } else {
            Color::White
        },
    };
    let (na, nb) = if rng.below(2) == 0 { (a, b) } else { (b, a) };
    let mut put = |p: &mut Position, n: u32, black: bool| {
        let mut placed = 0;
        while placed < n {
            let s = 1u32 << rng.below(32);
            if p.occupied() & s == 0 {
                if black {
                    p.black |= s;
                } else {
                    p.white |= s;
                }
                p.kings |= s;
                placed += 1;
            }
        }
    };
    put(&mut p, na, true);
    put(&mut p, nb, false);
    p
}

/// What one variant's run found.
#[derive(Debug, Default)]
struct Counts {
    tried: usize,
    settled: usize,
    compared: usize,
    draws: usize,
}

/// Prove `positions` on the 4-piece tables of `v` with certificates; every settled value is
/// checked by the independent checker and, where `truth` covers the position, against it.
/// Returns the counts and the settled proofs (with their values).
fn prove_and_check(
    v: Variant,
    positions: &[Position],
    truth: Option<&AnyTablebase>,
    o: &ProveOptions,
) -> (Counts, Vec<(Position, Wld, Vec<Proof>)>) {
    let d = dirs(v);
    let tb4 = AnyTablebase::open(&d.t4, None).unwrap();
    assert_eq!(tb4.variant(), v);
    assert_eq!(tb4.max_pieces(), 4);
    let mut c = Counts::default();
    let mut settled = Vec::new();
    with_tablebase!(&tb4, tb => {
        let mut prover = Prover::new(tb, o);
        let set = prover.table_set().unwrap();
        for p in positions {
            c.tried += 1;
            let r = prover.prove(p).unwrap();
            let Some(val) = r.value else { continue };
            c.settled += 1;
            c.draws += usize::from(val == Wld::Draw);
            if let Some(t) = truth.filter(|t| {
                t.probe_wld(p).is_ok() && p.piece_count() <= t.max_pieces()
            }) {
                c.compared += 1;
                assert_eq!(
                    val,
                    t.probe_wld(p).unwrap(),
                    "{v}: {} settled against the tables' value",
                    p.to_fen()
                );
            }
            if o.certificate {
                assert!(r.proofs.iter().all(|q| q.rules == v));
                let text = certificate_text(&set, &r.proofs);
                assert!(text.contains(&format!("\nrules {}\n", v.name())), "{text}");
                let rep = check_certificate(&text, &d.t4)
                    .unwrap_or_else(|e| panic!("{v}: {} certificate refused: {e}", p.to_fen()));
                assert_eq!(rep.values(), vec![(*p, Some(val))], "{v}: {}", p.to_fen());
                settled.push((*p, val, r.proofs.clone()));
            }
        }
    });
    (c, settled)
}

/// Random kings-only positions of the two materials whose 5-piece tables are in `t5`: the
/// prover's values equal the tables', and the certificates pass.
fn kings_against_truth(v: Variant, seed: u64) {
    let d = dirs(v);
    let truth = AnyTablebase::open(&d.t5, Some(v)).unwrap();
    let mut rng = Rng(seed);
    let mut positions: Vec<Position> = (0..40).map(|_| random_kings(&mut rng, 4, 1)).collect();
    positions.extend((0..40).map(|_| random_kings(&mut rng, 3, 2)));
    // Only the positions the 5-piece slices hold (a random placement may put a king of each
    // side anywhere, so all do; the check below keeps the test honest).
    for p in &positions {
        assert_eq!(p.piece_count(), 5);
        truth.probe_wld(p).unwrap();
    }
    let (c, settled) = prove_and_check(v, &positions, Some(&truth), &opts(30_000, 2, true));
    eprintln!("{v}: kings only, {c:?}");
    assert_eq!(c.compared, c.settled);
    assert!(c.settled > 0, "{v}: nothing settled: {c:?}");
    // Mutations of settled proofs must be refused.
    mutations(v, &truth, &settled);
}

/// Mutated certificates are refused (see the module docs).
fn mutations(v: Variant, truth: &AnyTablebase, settled: &[(Position, Wld, Vec<Proof>)]) {
    let d = dirs(v);
    let tb4 = AnyTablebase::open(&d.t4, None).unwrap();
    let set = checkers_egdb::certificate::table_set(&d.t4, 4).unwrap();
    let invalid = |r: Result<_, CheckError>, what: &str| match r {
        Err(CheckError::Invalid { .. }) => {}
        other => panic!("{v}: {what}: expected an invalid proof, got {other:?}"),
    };
    let (mut removed, mut replaced, mut swapped) = (0, 0, 0);
    for (_, _, proofs) in settled {
        for proof in proofs {
            // The claimant swapped: the other side cannot establish the same goal at the
            // same root unless both not-lose (a draw); for a win claim it must fail.
            if proof.goal == checkers_egdb::Goal::Win {
                let mut m = proof.clone();
                m.claimant = m.claimant.opponent();
                invalid(
                    check_certificate(&certificate_text(&set, &[m]), &d.t4),
                    "swapped",
                );
                swapped += 1;
            }
            if proof.records.is_empty() {
                continue;
            }
            // A record removed (every record is reached).
            let k = proof.records.len() / 2;
            let mut m = proof.clone();
            m.records.remove(k);
            invalid(
                check_certificate(&certificate_text(&set, &[m]), &d.t4),
                "removed",
            );
            removed += 1;
            // A record's move replaced by one whose result the truth says fails the claim.
            let (q, _) = proof.records[k];
            let want_win = proof.goal == checkers_egdb::Goal::Win;
            let bad = v.moves(&q).into_iter().find(|mv| {
                let c = q.apply(mv);
                let val = if c.piece_count() <= 4 {
                    tb4.probe_wld(&c)
                } else {
                    truth.probe_wld(&c)
                };
                let Ok(val) = val else { return false };
                // `val` is for the opponent of the claimant (to move in `c`).
                if want_win {
                    val != Wld::Loss
                } else {
                    val == Wld::Win
                }
            });
            if let Some(mv) = bad {
                let mut m = proof.clone();
                m.records[k].1 = mv;
                invalid(
                    check_certificate(&certificate_text(&set, &[m]), &d.t4),
                    "replaced",
                );
                replaced += 1;
            }
        }
    }
    eprintln!("{v}: mutations: {swapped} swapped, {removed} removed, {replaced} replaced");
    assert!(swapped + removed > 0, "{v}: no mutation was tried");
    // The rules line naming another variant: refused, naming both.
    if let Some((_, _, proofs)) = settled.first() {
        let text = certificate_text(&set, proofs);
        let other = if v == Variant::Russian {
            Variant::Brazilian
        } else {
            Variant::Russian
        };
        let forged = text.replace(
            &format!("\nrules {}\n", v.name()),
            &format!("\nrules {}\n", other.name()),
        );
        assert_ne!(forged, text);
        match check_certificate(&forged, &d.t4) {
            Err(CheckError::Tables(m)) => {
                assert!(m.contains(v.name()) && m.contains(other.name()), "{m}");
            }
            r => panic!("{v}: certificate of {other} rules on {v} tables: {r:?}"),
        }
    }
}

/// Random 5-piece positions with men: certificates pass, and the value is the same with one,
/// two and four threads (four: each goal searched by two threads sharing its table) wherever
/// two of them settle the position.
fn men_certificates(v: Variant, seed: u64) {
    let mut rng = Rng(seed);
    let positions: Vec<Position> = (0..30).map(|_| random_position(&mut rng, 5)).collect();
    let (c2, s2) = prove_and_check(v, &positions, None, &opts(20_000, 2, true));
    let (c1, s1) = prove_and_check(v, &positions, None, &opts(20_000, 1, true));
    let (c4, s4) = prove_and_check(v, &positions, None, &opts(20_000, 4, true));
    eprintln!("{v}: 5 pieces with men, threads 2 {c2:?}, 1 {c1:?}, 4 {c4:?}");
    assert!(c2.settled > 0, "{v}: nothing settled");
    for other in [&s1, &s4] {
        for (p, val, _) in other {
            if let Some((_, w, _)) = s2.iter().find(|x| x.0 == *p) {
                assert_eq!(w, val, "{v}: {} with different thread counts", p.to_fen());
            }
        }
    }
}

#[test]
fn russian_prover_matches_the_tables() {
    kings_against_truth(Variant::Russian, 0x5eed_0201);
    men_certificates(Variant::Russian, 0x5eed_0202);
}

#[test]
fn brazilian_prover_matches_the_tables() {
    kings_against_truth(Variant::Brazilian, 0x5eed_0301);
    men_certificates(Variant::Brazilian, 0x5eed_0302);
}

#[test]
fn italian_prover_matches_the_tables() {
    kings_against_truth(Variant::Italian, 0x5eed_0401);
    men_certificates(Variant::Italian, 0x5eed_0402);
}

#[test]
fn giveaway_prover_matches_the_tables() {
    kings_against_truth(Variant::Giveaway, 0x5eed_0501);
    men_certificates(Variant::Giveaway, 0x5eed_0502);
}

/// Giveaway, one king against one king, on the 1-piece tables: never a draw (Issue 34's
/// fact), the value of the 4-piece directory.
#[test]
fn giveaway_king_against_king_is_never_drawn() {
    let v = Variant::Giveaway;
    let d = dirs(v);
    let t1 = AnyTablebase::open(&d.t1, None).unwrap();
    assert_eq!((t1.variant(), t1.max_pieces()), (v, 1));
    let truth = AnyTablebase::open(&d.t4, None).unwrap();
    let set = checkers_egdb::certificate::table_set(&d.t1, 1).unwrap();
    let (mut n, mut wins) = (0, 0);
    with_tablebase!(&t1, tb => {
        let mut prover = Prover::new(tb, &opts(200_000, 2, true));
        for b in 0..32u32 {
            for w in 0..32u32 {
                if b == w || (b * 32 + w) % 7 != 0 {
                    continue;
                }
                for side in [Color::Black, Color::White] {
                    let p = Position {
                        black: 1 << b,
                        white: 1 << w,
                        kings: 1 << b | 1 << w,
                        side,
                    };
                    let r = prover.prove(&p).unwrap();
                    let val = r.value.unwrap_or_else(|| panic!("{} unknown", p.to_fen()));
                    assert_ne!(val, Wld::Draw, "{}", p.to_fen());
                    assert_eq!(val, truth.probe_wld(&p).unwrap(), "{}", p.to_fen());
                    let rep = check_certificate(&certificate_text(&set, &r.proofs), &d.t1)
                        .unwrap();
                    assert_eq!(rep.values(), vec![(p, Some(val))]);
                    n += 1;
                    wins += usize::from(val == Wld::Win);
                }
            }
        }
    });
    eprintln!("giveaway K v K: {n} positions, {wins} won by the side to move");
    assert!(n > 200);
    // Who wins depends on the position and the side to move: both values occur.
    assert!(wins > 0 && wins < n);
}

/// The command line: rules from the headers, a mismatch refused, certificates checked.
#[test]
fn cli_prove_and_check_proof_under_other_rules() {
    let r = dirs(Variant::Russian);
    let g = dirs(Variant::Giveaway);
    let (t4, t5) = (r.t4.to_str().unwrap(), r.t5.to_str().unwrap());
    let truth = AnyTablebase::open(&r.t5, None).unwrap();
    // A Russian position the prover settles: 4 kings against 1 (the first settled of a few).
    let mut rng = Rng(0x5eed_0c11);
    let tmp = tempfile::tempdir().unwrap();
    let cert = tmp.path().join("c.txt");
    let cs = cert.to_str().unwrap();
    let mut done = None;
    for _ in 0..20 {
        let p = random_kings(&mut rng, 4, 1);
        let fen = p.to_fen();
        let out = egdb(&["prove", "--dir", t4, "--nodes", "30000", "--cert", cs, &fen]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            let val = text.split('\t').nth(1).unwrap().to_string();
            assert_eq!(val, truth.probe_wld(&p).unwrap().as_str(), "{text}");
            done = Some((fen, val));
            break;
        }
        assert_eq!(out.status.code(), Some(3), "{text}");
    }
    let (fen, val) = done.expect("a settled Russian position");
    let text = std::fs::read_to_string(&cert).unwrap();
    assert_eq!(text.lines().nth(1), Some("rules russian"), "{text}");
    let out = ok(&egdb(&["check-proof", "--dir", t4, cs]));
    assert_eq!(
        out.trim_end().split('\t').nth(1),
        Some(val.as_str()),
        "{out}"
    );
    // Against the tables of other rules: refused, naming both.
    let out = egdb(&["check-proof", "--dir", g.t4.to_str().unwrap(), cs]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("russian") && err.contains("giveaway"), "{err}");
    // `--rules` of other tables: refused, naming both.
    let out = egdb(&["prove", "--dir", t4, "--rules", "english", &fen]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("russian") && err.contains("english"), "{err}");
    // `--rules russian` given: the same answer; on the 5-piece tables the position is a
    // table leaf (the value of the tables).
    let out = ok(&egdb(&[
        "prove", "--dir", t4, "--rules", "russian", "--nodes", "30000", &fen,
    ]));
    assert_eq!(out.split('\t').nth(1), Some(val.as_str()), "{out}");
    let out = ok(&egdb(&["prove", "--dir", t5, &fen]));
    assert_eq!(out.split('\t').nth(1), Some(val.as_str()), "{out}");
    // --state: a second run resumes from the file and gives the same value.
    let st = tmp.path().join("s.state");
    let ss = st.to_str().unwrap();
    let a = egdb(&[
        "prove", "--dir", t4, "--nodes", "30000", "--state", ss, &fen,
    ]);
    assert!(st.exists());
    let b = egdb(&[
        "prove", "--dir", t4, "--nodes", "30000", "--state", ss, &fen,
    ]);
    let (a, b) = (ok(&a), ok(&b));
    assert_eq!(a.split('\t').nth(1), Some(val.as_str()), "{a}");
    assert_eq!(b.split('\t').nth(1), Some(val.as_str()), "{b}");
    // --build: the search cut short (one node), the unit of the position's slice is built
    // under the directory's rules (a Russian `egdb build --slice`), and answers.
    let tb = tmp.path().join("tb");
    for e in std::fs::read_dir(&r.t4).unwrap() {
        let e = e.unwrap();
        std::fs::create_dir_all(&tb).unwrap();
        std::fs::copy(e.path(), tb.join(e.file_name())).unwrap();
    }
    let tbs = tb.to_str().unwrap();
    // Three kings against two: one node does not settle it (four kings against one often do).
    let fen = "B:WK5,K9:BK20,K27,K30";
    let val = truth
        .probe_wld(&Position::from_fen(fen).unwrap())
        .unwrap()
        .as_str();
    let out = ok(&egdb(&[
        "prove", "--dir", tbs, "--nodes", "1", "--layer", "0", "--build", "5000000", "--cert", cs,
        fen,
    ]));
    assert_eq!(out.split('\t').nth(1), Some(val), "{out}");
    assert!(!out.contains(" built=0 "), "{out}");
    assert!(AnyTablebase::open(&tb, None).unwrap().variant() == Variant::Russian);
    let out = ok(&egdb(&["check-proof", "--dir", tbs, cs]));
    assert_eq!(out.trim_end().split('\t').nth(1), Some(val), "{out}");
}
