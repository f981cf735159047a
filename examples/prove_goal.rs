//! Diagnostic run of the prover on one position, through the public API: `cargo run --release
//! --example prove_goal -- DIR FEN win|notlose|both|children [--nodes N] [--tt-mb M]
//! [--layer POSITIONS] [--seconds S]`. Prints the outcome and node count of the goal asked for
//! (or both goals, the value and the principal variation), and the size of the layer
//! retrograde when one was tried; `children` lists the FEN after each legal move instead.
//! (`egdb prove` is the command-line front end of the same search.)
use checkers_egdb::{format_move, Position, ProofOutcome, ProveOptions, Prover, Tablebase};
use std::time::Duration;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 4 {
        eprintln!(
            "usage: prove_goal DIR FEN win|notlose|both|children [--nodes N] [--tt-mb M] \
             [--layer POSITIONS] [--seconds S]"
        );
        std::process::exit(2);
    }
    let tb = Tablebase::open(&a[1]).expect("tables");
    let p = Position::from_fen(&a[2]).expect("fen");
    if a[3] == "children" {
        for m in p.moves() {
            println!("{}", p.apply(&m).to_fen());
        }
        return;
    }
    let num = |f: &str| {
        a.iter()
            .position(|x| x == f)
            .and_then(|i| a.get(i + 1))
            .map(|v| v.parse::<u64>().expect("a number"))
    };
    let opts = ProveOptions {
        nodes: Some(num("--nodes").unwrap_or(40_000_000)),
        time: num("--seconds").map(Duration::from_secs),
        tt_bytes: (num("--tt-mb").unwrap_or(512) as usize) << 20,
        layer_positions: num("--layer").map_or(2_000_000, |n| n as usize),
        ..ProveOptions::default()
    };
    let r = Prover::new(&tb, &opts).prove(&p).expect("search");
    let show = |name: &str, o: &ProofOutcome, nodes: u64| match o {
        ProofOutcome::Unknown { pn, dn } => {
            println!("{name}: unknown pn={pn} dn={dn} nodes={nodes}")
        }
        o => println!("{name}: {o:?} nodes={nodes}"),
    };
    match a[3].as_str() {
        "win" => show("win", &r.win.outcome, r.win.nodes),
        "notlose" => show("notlose", &r.not_lose.outcome, r.not_lose.nodes),
        _ => {
            show("win", &r.win.outcome, r.win.nodes);
            show("notlose", &r.not_lose.outcome, r.not_lose.nodes);
            let pv: Vec<String> = r.pv.iter().map(format_move).collect();
            println!("value {:?}, pv {}", r.value, pv.join(" "));
        }
    }
    println!(
        "{} nodes in {:.2} s; layer retrograde that settled it: {} positions",
        r.nodes, r.seconds, r.layer
    );
}
