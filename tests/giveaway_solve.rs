//! Giveaway checkers end to end through the retrograde solver: every position of at most 3
//! pieces solved by the builder's solver under the giveaway rules (`rules::Giveaway`: the
//! English fast engine and un-moves, no legal move = win), unit by unit in build order, and
//! compared position by position with an independent forward fixpoint over the slow path
//! generator (`rules::giveaway::GiveawayPaths`, written apart from the English engine): no
//! slices, no index, no un-moves. Also the published fact that one king against one king is
//! never a draw in giveaway (who wins depends on the side to move). Then the same values
//! through files: written with the giveaway rules id, probed by a giveaway `Tablebase`,
//! refused by an English one, and verified against the path generator by `verify_slice`.

#[path = "probe_common/mod.rs"]
mod probe_common;

use checkers_egdb::generate::solve::{solve_unit_opts, SolveOptions, SolvedSlice};
use checkers_egdb::generate::{build_order, DecodedTables};
use checkers_egdb::probe::Tablebase;
use checkers_egdb::rules::giveaway::{self, GiveawayPaths};
use checkers_egdb::rules::{Giveaway, Rules};
use checkers_egdb::table::{table_path, write_table_masked, TableMeta, WriteOptions};
use checkers_egdb::verify::verify_slice;
use checkers_egdb::{Position, SliceIndex, Wld};
use std::collections::HashMap;

const PIECES: u32 = 3;

/// Forward fixpoint: the value of every position of `all` under the path generator's giveaway
/// rules. No move: a win. A move to a position lost for the opponent: a win. Every move to a
/// position won for the opponent: a loss. Whatever never settles: a draw.
fn forward(all: &[Position]) -> HashMap<Position, Wld> {
    let id: HashMap<Position, usize> = all.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    let succ: Vec<Vec<usize>> = all
        .iter()
        .map(|p| {
            let mut v = Vec::new();
            GiveawayPaths::default().for_each_successor(p, |q| v.push(id[&q]));
            v
        })
        .collect();
    let mut val: Vec<Option<Wld>> = succ
        .iter()
        .map(|s| s.is_empty().then_some(Wld::Win))
        .collect();
    loop {
        let mut changed = false;
        for i in 0..all.len() {
            if val[i].is_some() {
                continue;
            }
            if succ[i].iter().any(|&j| val[j] == Some(Wld::Loss)) {
                val[i] = Some(Wld::Win);
                changed = true;
            } else if succ[i].iter().all(|&j| val[j] == Some(Wld::Win)) {
                val[i] = Some(Wld::Loss);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    all.iter()
        .zip(val)
        .map(|(p, v)| (*p, v.unwrap_or(Wld::Draw)))
        .collect()
}

/// The value of any position from the solved tables (Black-to-move positions, by
/// `Position::normalized`): no move is a win, a capture position is the best of its
/// successors, every other position is read.
fn resolve(tables: &HashMap<Position, Wld>, p: &Position) -> Result<Wld, String> {
    let g = Giveaway;
    if !g.has_move(p) {
        return Ok(g.no_move_value());
    }
    if g.has_capture(p) {
        let mut best = Wld::Loss;
        let mut err = None;
        g.for_each_successor(p, |q| match resolve(tables, &q) {
            Ok(v) => best = best.max(v.negate()),
            Err(e) => err = Some(e),
        });
        return err.map_or(Ok(best), Err);
    }
    tables
        .get(&p.normalized())
        .copied()
        .ok_or_else(|| format!("no value for {}", p.to_fen()))
}

#[test]
fn giveaway_tables_match_a_forward_solver_and_king_v_king_is_never_drawn() {
    // The retrograde solver, unit by unit.
    let mut tables: HashMap<Position, Wld> = HashMap::new();
    let mut files: Vec<SolvedSlice> = Vec::new();
    for unit in build_order(PIECES) {
        let lookup = |p: &Position| resolve(&tables, p);
        let solved = solve_unit_opts(
            Giveaway,
            unit.slices[0],
            &lookup,
            &|_| {},
            &SolveOptions::default(),
        )
        .unwrap();
        let mut new = Vec::new();
        for sv in &solved {
            let ix = SliceIndex::new(sv.slice);
            for (i, &v) in sv.values.iter().enumerate() {
                let p = ix.unrank(i as u64).unwrap();
                new.push((p, Wld::from_u8(v).unwrap()));
            }
        }
        tables.extend(new);
        files.extend(solved);
    }

    let all = probe_common::all_positions(PIECES);
    let oracle = forward(&all);
    let mut counts = [0u64; 3];
    for p in &all {
        let want = oracle[p];
        assert_eq!(resolve(&tables, p).unwrap(), want, "{}", p.to_fen());
        counts[want as usize] += 1;
    }
    // Every kind of value occurs (the comparison is not vacuous).
    assert!(counts.iter().all(|&c| c > 0), "{counts:?}");

    // A side without pieces or moves wins.
    let p = Position::from_fen("B:WK32:B").unwrap();
    assert_eq!(resolve(&tables, &p).unwrap(), Wld::Win);
    // One king against one king is never a draw, either side to move.
    let mut kk = 0;
    for p in &all {
        if p.piece_count() == 2 && p.kings.count_ones() == 2 && p.black != 0 && p.white != 0 {
            kk += 1;
            assert_ne!(oracle[p], Wld::Draw, "{}", p.to_fen());
        }
    }
    assert_eq!(kk, 992 * 2);

    // The same values through files of the giveaway rules id.
    let dir = std::env::temp_dir().join(format!("egdb-giveaway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wopts = WriteOptions {
        rules: giveaway::ID,
        codec: checkers_egdb::table::CODEC_2BIT_ZSTD,
        ..WriteOptions::default()
    };
    for sv in &files {
        let meta = TableMeta {
            slice: sv.slice,
            positions: sv.values.len() as u64,
            wins: sv.wins,
            losses: sv.losses,
            draws: sv.draws,
            longest: sv.longest,
        };
        write_table_masked(
            &table_path(&dir, &sv.slice),
            &meta,
            &sv.values,
            &sv.captures,
            &wopts,
        )
        .unwrap();
    }
    let tb = Tablebase::builder(&dir).rules(Giveaway).open().unwrap();
    for p in &all {
        assert_eq!(tb.probe_wld(p).unwrap(), oracle[p], "{}", p.to_fen());
    }
    // An English tablebase refuses the files (another rules id).
    let english = Tablebase::open(&dir).unwrap();
    let e = english
        .probe_wld(&Position::from_fen("W:WK32:BK26").unwrap())
        .unwrap_err();
    assert!(e.to_string().contains("rules"), "{e}");
    // Every slice verified against the path generator, through the dependency store.
    let store = DecodedTables::with_rules(&dir, Giveaway);
    for sv in &files {
        let n = verify_slice(
            GiveawayPaths::default(),
            &store,
            &sv.slice,
            (sv.wins, sv.losses, sv.draws),
            &|_| {},
        )
        .unwrap();
        assert_eq!(n, sv.values.len() as u64);
    }
    std::fs::remove_dir_all(&dir).ok();
}
