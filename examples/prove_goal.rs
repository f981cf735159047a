//! Diagnostic run of one prover goal on one position: `cargo run --release --example prove_goal
//! -- DIR FEN win|notlose|children|layer [--weak] [--nodes N] [--tt-mb M]`. Prints the outcome,
//! node count, table fill and the search counters every `--step` nodes (default 2,000,000);
//! `children` lists the FEN after each legal move instead; `layer` runs the layer retrograde
//! alone (size, time, bounds).
use checkers_egdb::probe::Tablebase;
use checkers_egdb::prove::layer::Layer;
use checkers_egdb::prove::search::{Budget, Dfpn, Goal, Outcome};
use checkers_egdb::prove::Checkers;
use checkers_egdb::Position;
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let tb = Tablebase::open(&a[1]).expect("tables");
    let p = Position::from_fen(&a[2]).expect("fen");
    if a[3] == "layer" {
        // The layer retrograde alone: size, time, the root's value in each model.
        let t = Instant::now();
        let l = Layer::build(&tb, &p, 50_000_000, None)
            .expect("probe")
            .expect("layer of at most 50 M positions");
        let built = t.elapsed().as_secs_f64();
        let (ms, mo) = (
            l.solve(p.side, None).expect("no deadline"),
            l.solve(p.side.opponent(), None).expect("no deadline"),
        );
        println!(
            "layer {} positions, built in {built:.2} s, solved twice in {:.2} s; root value \
             for the side to move: at least {:?}, at most {:?}",
            l.len(),
            t.elapsed().as_secs_f64() - built,
            l.root_value(&ms),
            l.root_value(&mo)
        );
        return;
    }
    if a[3] == "children" {
        for m in p.moves() {
            println!("{}", p.apply(&m).to_fen());
        }
        return;
    }
    let goal = if a[3] == "win" {
        Goal::Win
    } else {
        Goal::NotLose
    };
    let flag = |f: &str| a.iter().any(|x| x == f);
    let num = |f: &str, d: u64| {
        a.iter()
            .position(|x| x == f)
            .and_then(|i| a.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let game = Checkers::new(&tb);
    let mut d = Dfpn::new(&game, goal, (num("--tt-mb", 512) as usize) << 20);
    d.set_weak(flag("--weak"));
    let step = num("--step", 2_000_000);
    let total = num("--nodes", 40_000_000);
    let t = Instant::now();
    let mut used = 0;
    while used < total {
        let s = d
            .solve_for(
                p,
                p.side,
                &[],
                &Budget {
                    nodes: Some(step),
                    ..Default::default()
                },
            )
            .expect("search");
        used += step;
        let st = d.stats();
        println!(
            "{:>6.1}s nodes={} {:?} pathdep={} dep_hits={} maxdepth={} fill={}/{}",
            t.elapsed().as_secs_f64(),
            st.nodes,
            s.outcome,
            st.path_dependent,
            st.dep_hits,
            st.max_depth,
            d.table().len(),
            d.table().capacity()
        );
        if !matches!(s.outcome, Outcome::Unknown { .. }) {
            break;
        }
    }
}
