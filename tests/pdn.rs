//! The PDN reader: never a panic on any input (proptest), writer/reader round trip on
//! generated games, and on the corpus of Tinsley's published games when it is present
//! (`EGDB_PDN_CORPUS` or ../shared/games/tinsley.pdn beside the repository).
use checkers_egdb::pdn::{parse_games, Game};
use checkers_egdb::{parse_move, Position};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Arbitrary text: games or an error, never a panic.
    #[test]
    fn never_panics_on_text(s in "\\PC*") {
        let _ = parse_games(&s);
    }

    /// Text made of PDN's own pieces in any order: still no panic, and whatever parses
    /// round-trips through the writer.
    #[test]
    fn pdn_like_tokens(parts in proptest::collection::vec(prop_oneof![
        Just("[".to_string()), Just("]".to_string()), Just("\"".to_string()),
        Just("{".to_string()), Just("}".to_string()), Just("(".to_string()),
        Just(")".to_string()), Just(";".to_string()), Just("\n".to_string()),
        Just(" ".to_string()), Just("%".to_string()), Just("\\".to_string()),
        Just("1-0".to_string()), Just("1/2-1/2".to_string()), Just("*".to_string()),
        Just("12.".to_string()), Just("3...".to_string()), Just("$4".to_string()),
        Just("[Event \"a\"]".to_string()), Just("[FEN \"W:W21:B1\"]".to_string()),
        "[0-9]{1,2}[-x][0-9]{1,2}", "[a-zA-Z]{1,3}", "\\PC",
    ], 0..40)) {
        let text: String = parts.concat();
        if let Ok(games) = parse_games(&text) {
            for g in &games {
                let again = parse_games(&g.to_pdn()).unwrap();
                prop_assert_eq!(again.len(), 1, "{}", g.to_pdn());
                prop_assert_eq!(&again[0], g);
            }
        }
    }
}

/// A game of random legal moves from the start (moves in notation), with tags and comments.
fn random_game(seed: u64, plies: usize) -> Game {
    let mut x = seed | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut p = Position::START;
    let mut g = Game {
        headers: vec![
            ("Event".into(), format!("random \"{seed}\" \\ test")),
            ("Result".into(), "*".into()),
        ],
        ..Game::default()
    };
    for i in 0..plies {
        let moves = p.unique_moves();
        if moves.is_empty() {
            break;
        }
        let m = moves[(next() % moves.len() as u64) as usize];
        g.moves.push(checkers_egdb::format_move(&m));
        if next() % 5 == 0 {
            g.comments.push((i + 1, format!("note {i}")));
        }
        p = p.apply(&m);
    }
    g.result = Some("*".into());
    g
}

#[test]
fn random_games_round_trip() {
    let games: Vec<Game> = (1..200).map(|s| random_game(s * 7919, 80)).collect();
    let text: String = games.iter().map(Game::to_pdn).collect();
    let back = parse_games(&text).unwrap();
    assert_eq!(back, games);
    // Every move read back names a legal move of the replayed position.
    for g in &back {
        let mut p = g.start().unwrap();
        for m in &g.moves {
            let mv = parse_move(&p, m).unwrap();
            p = p.apply(&mv);
        }
    }
}

#[test]
fn tinsley_corpus_round_trips() {
    let path = std::env::var("EGDB_PDN_CORPUS").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/games/tinsley.pdn").to_string()
    });
    let Ok(bytes) = std::fs::read(&path) else {
        eprintln!("skipped: no corpus at {path}");
        return;
    };
    let text = String::from_utf8_lossy(&bytes);
    let games = parse_games(&text).unwrap();
    // The file's own count of games: one [Event tag each.
    let events = text.matches("[Event ").count();
    assert_eq!(games.len(), events);
    let mut written = String::new();
    for g in &games {
        assert!(!g.moves.is_empty(), "{:?}", g.headers);
        assert!(g.result.is_some() || g.header("Result").is_some());
        written.push_str(&g.to_pdn());
    }
    assert_eq!(parse_games(&written).unwrap(), games);
}

/// Cases proptest found: a move run into text must not turn into a result when written back.
#[test]
fn results_never_read_as_moves() {
    for text in ["1-0A", "1-1A", "0-0x"] {
        if let Ok(games) = parse_games(text) {
            for g in &games {
                assert_eq!(parse_games(&g.to_pdn()).unwrap(), vec![g.clone()], "{text}");
            }
        }
    }
    assert!(parse_games("1. 0-5").is_err());
    assert!(parse_games("1. 33-28").is_err());
}
