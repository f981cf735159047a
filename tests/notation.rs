//! FEN and move-notation cases from the reference facts (section 4) and the PDN conventions.
use checkers_egdb::{
    format_move, parse_move, Color, FenError, MoveParseError, Position, PositionError,
};

fn sq(s: u8) -> u32 {
    1 << (s - 1)
}
fn squares(v: &[u8]) -> u32 {
    v.iter().map(|&s| sq(s)).fold(0, |a, b| a | b)
}

#[test]
fn accepts_ranges_case_space_dot_and_tag() {
    for s in [
        "B:W21-32:B1-12",
        "b:w21-32:b1-12",
        "B:B1-12:W21-32",
        "  B : W21-32 : B1-12  ",
        "B:W21-32:B1-12.",
        "[FEN \"B:W21-32:B1-12\"]",
        "[fen \"B:W21-32:B1-12.\"]",
        "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12",
    ] {
        assert_eq!(Position::from_fen(s), Ok(Position::START), "{s:?}");
    }
}

#[test]
fn king_ranges_and_empty_sides() {
    let p = Position::from_fen("W:WK1-3:B20").unwrap();
    assert_eq!(p.white, squares(&[1, 2, 3]));
    assert_eq!(p.kings, squares(&[1, 2, 3]));
    assert_eq!(p.black, sq(20));
    assert_eq!(p.side, Color::White);
    assert_eq!(p.to_fen(), "W:WK1,K2,K3:B20");

    let p = Position::from_fen("B:W32:B").unwrap();
    assert_eq!((p.white, p.black, p.kings), (sq(32), 0, 0));
    assert_eq!(p.side, Color::Black);
    // Black to move with no pieces has no move: it has lost.
    assert!(p.moves().is_empty());
    assert_eq!(p.to_fen(), "B:W32:B");
}

#[test]
fn canonical_output() {
    let p = Position::from_fen("w:bK22,12:W24,K27,18").unwrap();
    assert_eq!(p.to_fen(), "W:W18,24,K27:B12,K22");
    assert_eq!(p.to_string(), "W:W18,24,K27:B12,K22");
    assert_eq!(
        Position::START.to_fen(),
        "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
    );
    let q: Position = "W:W18,24,K27:B12,K22".parse().unwrap();
    assert_eq!(q, p);
}

#[test]
fn rejects_with_the_named_fault() {
    // The reference string has three faults; the first (stray 'W' at column 7) is reported.
    let e = Position::from_fen("W:WK4,WK5,33:B4").unwrap_err();
    assert_eq!(
        e,
        FenError::StrayCharacter {
            ch: 'W',
            column: 7,
            expected: "a square number"
        }
    );
    assert!(
        e.to_string().contains("'W'") && e.to_string().contains("column 7"),
        "{e}"
    );
    // Each fault alone.
    let e = Position::from_fen("W:WK4,K5,33:B").unwrap_err();
    assert!(
        matches!(e, FenError::SquareOutOfRange { square: 33, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("33"));
    let e = Position::from_fen("W:WK4,K5:B4").unwrap_err();
    assert_eq!(e, FenError::SquareUsedTwice(4));
    assert!(e.to_string().contains("square 4"));
    assert_eq!(
        Position::from_fen("W:W5,5:B1").unwrap_err(),
        FenError::SquareUsedTwice(5)
    );
    assert!(matches!(
        Position::from_fen("W:W0:B1").unwrap_err(),
        FenError::SquareOutOfRange { square: 0, .. }
    ));
    assert!(matches!(
        Position::from_fen("W:W99999999999999999999:B1").unwrap_err(),
        FenError::SquareOutOfRange { .. }
    ));
    // Men on their own crowning rows.
    let e = Position::from_fen("W:W4:BK20").unwrap_err();
    assert_eq!(
        e,
        FenError::Illegal(PositionError::ManOnCrowningRow {
            color: Color::White,
            square: 4
        })
    );
    assert!(e.to_string().contains("crowning row") && e.to_string().contains('4'));
    let e = Position::from_fen("W:WK20:B29").unwrap_err();
    assert_eq!(
        e,
        FenError::Illegal(PositionError::ManOnCrowningRow {
            color: Color::Black,
            square: 29
        })
    );
    // More than 12 pieces a side.
    let e = Position::from_fen("B:W21-32:B1-13").unwrap_err();
    assert_eq!(
        e,
        FenError::Illegal(PositionError::TooManyPieces {
            color: Color::Black,
            count: 13
        })
    );
    assert!(e.to_string().contains("13"));
    let e = Position::from_fen("W:WK1-13:B20").unwrap_err();
    assert_eq!(
        e,
        FenError::Illegal(PositionError::TooManyPieces {
            color: Color::White,
            count: 13
        })
    );
    // Side to move.
    assert!(matches!(
        Position::from_fen("X:W1:B2").unwrap_err(),
        FenError::BadSideToMove { .. }
    ));
    assert!(matches!(
        Position::from_fen(":W21:B2").unwrap_err(),
        FenError::BadSideToMove { .. }
    ));
    assert!(matches!(
        Position::from_fen("W21:B2").unwrap_err(),
        FenError::BadSideToMove { .. }
    ));
    assert!(Position::from_fen("X:W1:B2")
        .unwrap_err()
        .to_string()
        .contains("side to move"));
    assert_eq!(Position::from_fen("").unwrap_err(), FenError::Empty);
    assert_eq!(Position::from_fen("   ").unwrap_err(), FenError::Empty);
    // Structure.
    assert_eq!(
        Position::from_fen("W:W21").unwrap_err(),
        FenError::MissingSection(Color::Black)
    );
    assert_eq!(
        Position::from_fen("W:W21:W22:B1").unwrap_err(),
        FenError::DuplicateSection(Color::White)
    );
    assert!(matches!(
        Position::from_fen("W:W21:B1-0").unwrap_err(),
        FenError::SquareOutOfRange { square: 0, .. }
    ));
    assert!(matches!(
        Position::from_fen("W:W21:B5-3").unwrap_err(),
        FenError::BadRange { from: 5, to: 3, .. }
    ));
    assert!(matches!(
        Position::from_fen("W:W21:B1;2").unwrap_err(),
        FenError::StrayCharacter { ch: ';', .. }
    ));
    assert!(matches!(
        Position::from_fen("W:W21:B1:").unwrap_err(),
        FenError::UnexpectedEnd { .. }
    ));
    assert!(matches!(
        Position::from_fen("W:W21:X1").unwrap_err(),
        FenError::StrayCharacter { ch: 'X', .. }
    ));
    assert!(Position::from_fen("[FEN \"W:W21:B1\"").is_err());
    assert!(Position::from_fen("[PDN \"W:W21:B1\"]").is_err());
}

#[test]
fn apply_then_reapply_fails() {
    let p = Position::from_fen("W:W22:B5").unwrap();
    let m = parse_move(&p, "22-18").unwrap();
    let q = p.apply(&m);
    assert_eq!(q.to_fen(), "B:W18:B5");
    let e = parse_move(&q, "22-18").unwrap_err();
    assert!(matches!(e, MoveParseError::Illegal { .. }), "{e:?}");
    // The message lists Black's legal moves.
    assert!(
        e.to_string().contains("5-9") && e.to_string().contains("22-18"),
        "{e}"
    );
}

#[test]
fn move_notation_round_trip_and_short_forms() {
    let p = Position::from_fen("W:W30,K22:B11,18").unwrap();
    let m = parse_move(&p, "22x15x8").unwrap();
    assert_eq!(format_move(&m), "22x15x8");
    assert_eq!(m.to_string(), "22x15x8");
    assert_eq!(parse_move(&p, "22x8").unwrap(), m);
    assert_eq!(parse_move(&p, " 22 X 8 ").unwrap(), m);
    assert!(matches!(
        parse_move(&p, "22x15").unwrap_err(),
        MoveParseError::Illegal { .. }
    ));
    // A capture is compulsory: the simple move is illegal.
    assert!(matches!(
        parse_move(&p, "30-26").unwrap_err(),
        MoveParseError::Illegal { .. }
    ));
    // Simple moves.
    let s = Position::START;
    assert_eq!(format_move(&parse_move(&s, "11-15").unwrap()), "11-15");
    assert!(matches!(
        parse_move(&s, "11x15").unwrap_err(),
        MoveParseError::Illegal { .. }
    ));
    // Syntax errors.
    for bad in [
        "", "11", "11-", "-15", "11-15-19", "11x15-19", "a-b", "11--15",
    ] {
        assert!(
            matches!(
                parse_move(&s, bad).unwrap_err(),
                MoveParseError::Syntax { .. }
            ),
            "{bad:?}"
        );
    }
    assert_eq!(
        parse_move(&s, "11-33").unwrap_err(),
        MoveParseError::SquareOutOfRange(33)
    );
}

#[test]
fn ambiguous_short_capture_lists_candidates() {
    // A white man on 26 can reach 10 over 23 and 15 or over 22 and 14.
    let p = Position::from_fen("W:W26:B14,15,22,23").unwrap();
    let mut all: Vec<String> = p.moves().iter().map(format_move).collect();
    all.sort();
    assert_eq!(all, ["26x17x10", "26x19x10"]);
    match parse_move(&p, "26x10").unwrap_err() {
        MoveParseError::Ambiguous { mut candidates, .. } => {
            candidates.sort();
            assert_eq!(candidates, ["26x17x10", "26x19x10"]);
        }
        e => panic!("expected ambiguity, got {e:?}"),
    }
    let e = parse_move(&p, "26x10").unwrap_err().to_string();
    assert!(e.contains("26x17x10") && e.contains("26x19x10"), "{e}");
    assert_eq!(
        format_move(&parse_move(&p, "26x19x10").unwrap()),
        "26x19x10"
    );
    assert_eq!(
        format_move(&parse_move(&p, "26x17x10").unwrap()),
        "26x17x10"
    );
}

#[test]
fn ring_capture_short_form_is_one_move() {
    // Both paths take the same pieces to the same square: one resulting position.
    let p = Position::from_fen("W:WK6:B9,10,17,18").unwrap();
    let m = parse_move(&p, "6x6").unwrap();
    assert_eq!(p.apply(&m).to_fen(), "B:WK6:B");
    assert_eq!(
        format_move(&parse_move(&p, "6x15x22x13x6").unwrap()),
        "6x15x22x13x6"
    );
    assert_eq!(
        format_move(&parse_move(&p, "6x13x22x15x6").unwrap()),
        "6x13x22x15x6"
    );
}

#[test]
fn full_path_wins_over_longer_path_through_it() {
    // Found by the round-trip proptest: the king's short path 1x10x19x26 is also an in-order
    // subset of the longer 1x10x3x12x19x26; the exact path must name the short one.
    let p = Position::from_fen("B:W6,7,8,15,16,23:BK1").unwrap();
    let mut all: Vec<String> = p.moves().iter().map(format_move).collect();
    all.sort();
    assert!(all.contains(&"1x10x19x26".to_string()), "{all:?}");
    assert!(all.contains(&"1x10x3x12x19x26".to_string()), "{all:?}");
    assert_eq!(
        format_move(&parse_move(&p, "1x10x19x26").unwrap()),
        "1x10x19x26"
    );
    assert_eq!(
        format_move(&parse_move(&p, "1x10x3x12x19x26").unwrap()),
        "1x10x3x12x19x26"
    );
    // The short form reaches 26 by different captures: ambiguous.
    assert!(matches!(
        parse_move(&p, "1x26").unwrap_err(),
        MoveParseError::Ambiguous { .. }
    ));
}

/// A square number too large for any integer type is quoted as written, never as a made-up
/// saturated value.
#[test]
fn huge_square_number_is_quoted_as_written() {
    let e = Position::from_fen("B:W99999999999999999999:B5").unwrap_err();
    assert!(
        matches!(&e, FenError::SquareOutOfRange { text, column: 4, .. } if text == "99999999999999999999"),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("square 99999999999999999999 is out of range"),
        "{msg}"
    );
    assert!(!msg.contains("4294967295"), "{msg}");
    // Absurdly long numbers are cut short in the message, not copied whole.
    let long = format!("B:W{}:B5", "7".repeat(1000));
    let msg = Position::from_fen(&long).unwrap_err().to_string();
    assert!(
        msg.contains(&format!("square {}... is out of range", "7".repeat(24))),
        "{msg}"
    );
    assert!(msg.len() < 100, "{msg}");
    // In a range too, and an ordinary bad number is quoted as is.
    let msg = Position::from_fen("B:W5-4294967296:B1")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("square 4294967296 is out of range"), "{msg}");
    let msg = Position::from_fen("B:W033:B1").unwrap_err().to_string();
    assert!(msg.contains("square 033 is out of range"), "{msg}");
}

/// Text after the `[FEN "..."]` wrapper is reported as such, not as an early end.
#[test]
fn text_after_fen_tag_is_reported() {
    let e = Position::from_fen("[FEN \"B:W5:B6\"] x").unwrap_err();
    assert_eq!(
        e,
        FenError::StrayCharacter {
            ch: 'x',
            column: 17,
            expected: "nothing after the [FEN \"...\"] tag"
        }
    );
    assert!(!e.to_string().contains("ends early"), "{e}");
    // Something between the closing quote and ']'.
    assert!(matches!(
        Position::from_fen("[FEN \"B:W5:B6\" x]").unwrap_err(),
        FenError::StrayCharacter {
            ch: 'x',
            column: 16,
            ..
        }
    ));
    // Genuinely unfinished tags still say what is missing.
    assert!(matches!(
        Position::from_fen("[FEN \"B:W5:B6\"").unwrap_err(),
        FenError::UnexpectedEnd { expected } if expected.contains(']')
    ));
    assert!(matches!(
        Position::from_fen("[FEN \"B:W5:B6").unwrap_err(),
        FenError::UnexpectedEnd { expected } if expected.contains('"')
    ));
    // Spacing inside the wrapper stays accepted.
    assert_eq!(
        Position::from_fen(" [ fen  \"B:W5:B6\"  ] ")
            .unwrap()
            .to_fen(),
        "B:W5:B6"
    );
}
