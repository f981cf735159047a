//! Count the positions reachable from a FEN without changing the piece count (captures end the
//! walk): `cargo run --release --example closure_count -- FEN [LIMIT]`.
use checkers_egdb::Position;
use std::collections::HashSet;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let p = Position::from_fen(&a[1]).expect("fen");
    let limit: usize = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(50_000_000);
    let n = p.piece_count();
    let mut seen = HashSet::new();
    seen.insert(p);
    let mut frontier = vec![p];
    let mut depth = 0;
    while !frontier.is_empty() && seen.len() < limit {
        let mut next = Vec::new();
        for q in &frontier {
            q.for_each_successor(|c| {
                if c.piece_count() == n && seen.insert(c) {
                    next.push(c);
                }
            });
        }
        depth += 1;
        println!("depth {depth}: {} new, {} total", next.len(), seen.len());
        frontier = next;
    }
}
