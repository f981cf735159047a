//! The independent DTC oracle (tests/dtc_oracle) against published facts, so that the oracle
//! the distance tables are compared with is itself checked from outside
//! (../shared/reference.md §3 and §7).

mod dtc_oracle;
mod probe_common;

use checkers_egdb::{Color, Material, Position, Wld};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap()
}

#[test]
fn oracle_matches_published_distances_up_to_3_pieces() {
    let o = dtc_oracle::solve(3);
    // Single positions.
    assert_eq!(o.get(&pos("B:WK13:BK1")), (Wld::Win, Some(11)));
    assert_eq!(o.get(&pos("W:W5:BK2")), (Wld::Win, Some(1)));
    assert_eq!(o.get(&pos("W:WK29:BK25")), (Wld::Win, Some(1)));
    assert_eq!(o.get(&pos("B:WK29:BK25")).0, Wld::Win);
    assert_eq!(o.get(&pos("W:WK4:BK12")).0, Wld::Loss);
    assert_eq!(o.get(&pos("B:WK14:BK1,K2")), (Wld::Win, Some(33)));

    let kk = Material::new(0, 1, 0, 1).unwrap();
    let kkk = Material::new(0, 2, 0, 1).unwrap(); // two black kings v one white king
    let mut kk_win = 0u32;
    let mut kk_counts = [0u32; 3];
    let (mut two_to_move_win, mut one_to_move_loss) = (0u32, 0u32);
    let mut two_to_move_not_won = 0u32;
    for (i, p) in o.positions.iter().enumerate() {
        let m = Material::of(p);
        let (v, d) = (o.value[i], o.dtc[i]);
        if m == kk {
            if p.side == Color::White {
                kk_counts[v as usize] += 1;
            }
            if v == Wld::Win {
                kk_win = kk_win.max(d.unwrap());
            }
        }
        if m == kkk {
            // Black has the two kings.
            if p.side == Color::Black {
                if v == Wld::Win {
                    two_to_move_win = two_to_move_win.max(d.unwrap());
                } else {
                    two_to_move_not_won += 1;
                }
            } else if v == Wld::Loss {
                one_to_move_loss = one_to_move_loss.max(d.unwrap());
            }
        }
    }
    // K v K, White to move: 230 wins, 654 draws, 108 losses; longest win 11 plies.
    assert_eq!(kk_counts, [108, 654, 230]);
    assert_eq!(kk_win, 11);
    // 2K v K: every position but 34 won with the two kings to move; longest win 33, longest
    // loss with the single king to move 34.
    assert_eq!(two_to_move_not_won, 34);
    assert_eq!(two_to_move_win, 33);
    assert_eq!(one_to_move_loss, 34);
}
