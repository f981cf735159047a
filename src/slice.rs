//! Materials and slices: the units the database is split into.
//!
//! - A [`Material`] is (black men, black kings, white men, white kings), at most 12 pieces a side.
//! - Tables store **Black to move only** (colour normalisation): a White-to-move position is
//!   looked up as its [`Position::flip`], so material `(bm,bk,wm,wk)` with White to move is
//!   material `(wm,wk,bm,bk)` with Black to move.
//! - A [`Slice`] is a material plus the *leading rank* of each side's most advanced man, counted
//!   from that side's own back row (0-6), or `None` when the side has no men. Black's rank of a
//!   man on square s is its row `(s-1)/4`; White's is `7 - row`.
//!
//! Naming (used in file names and output, documented in docs/format.md): a material is the four
//! counts as single characters (0-9, then a, b, c for 10-12) in the order bm bk wm wk, e.g.
//! `2101`; a slice appends `-` and the two leading ranks, Black's then White's, with `n` for
//! none, e.g. `2101-3n`, `0202-nn`, `1011-6n`, `1010-34`.

use crate::board::{Bitboard, Color, Position};
use std::fmt;
use std::str::FromStr;

/// Piece counts: black men, black kings, white men, white kings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Material {
    /// Black men (0-12).
    pub bm: u8,
    /// Black kings (0-12).
    pub bk: u8,
    /// White men (0-12).
    pub wm: u8,
    /// White kings (0-12).
    pub wk: u8,
}

/// A material or slice name that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SliceNameError {
    /// The text is not of the form `BBWW-RR` (see the module docs).
    #[error("bad slice name {0:?}: expected a slice name like 2101-3n (material bm bk wm wk, then Black's and White's leading ranks, n for none)")]
    Syntax(String),
    /// The text is not a material `BBWW` (four counts, see the module docs).
    #[error("bad material {0:?}: expected four counts bm bk wm wk like 2101")]
    MaterialSyntax(String),
    /// The counts or ranks are not possible (more than 12 pieces a side, men without a rank...).
    #[error("impossible slice {0:?}: {1}")]
    Impossible(String, &'static str),
}

fn count_char(c: u8) -> char {
    char::from_digit(c as u32, 16).unwrap_or('?')
}

impl Material {
    /// Build a material; `None` if a side has more than 12 pieces, a side has more than 12 men
    /// in total would not fit, or the board has more than 32 pieces.
    pub fn new(bm: u8, bk: u8, wm: u8, wk: u8) -> Option<Material> {
        let m = Material { bm, bk, wm, wk };
        // Sums in u32: counts read from a file may be anything up to 255.
        (u32::from(bm) + u32::from(bk) <= 12 && u32::from(wm) + u32::from(wk) <= 12).then_some(m)
    }
    /// The material of a position (as it stands, whatever the side to move).
    pub fn of(p: &Position) -> Material {
        Material {
            bm: p.men(Color::Black).count_ones() as u8,
            bk: p.kings_of(Color::Black).count_ones() as u8,
            wm: p.men(Color::White).count_ones() as u8,
            wk: p.kings_of(Color::White).count_ones() as u8,
        }
    }
    /// Total number of pieces.
    pub const fn pieces(&self) -> u32 {
        self.bm as u32 + self.bk as u32 + self.wm as u32 + self.wk as u32
    }
    /// Total number of men (both colours).
    pub const fn men(&self) -> u32 {
        self.bm as u32 + self.wm as u32
    }
    /// The colour-flipped material `(wm, wk, bm, bk)`.
    pub const fn flip(&self) -> Material {
        Material {
            bm: self.wm,
            bk: self.wk,
            wm: self.bm,
            wk: self.bk,
        }
    }
    /// Every material with exactly `n` pieces (at most 12 a side), in a fixed order:
    /// fewer men first (crowning leads to fewer men), then by (bm, bk, wm, wk) ascending.
    pub fn all_with_pieces(n: u32) -> Vec<Material> {
        let mut v = Vec::new();
        for bm in 0..=12u8 {
            for bk in 0..=12u8 {
                for wm in 0..=12u8 {
                    for wk in 0..=12u8 {
                        if let Some(m) = Material::new(bm, bk, wm, wk) {
                            if m.pieces() == n && m.bm + m.wm <= 24 {
                                v.push(m);
                            }
                        }
                    }
                }
            }
        }
        v.sort_by_key(|m| (m.men(), m.bm, m.bk, m.wm, m.wk));
        v
    }
}

impl fmt::Display for Material {
    /// Four count characters in the order bm bk wm wk (hex digits for 10-12), e.g. `2101`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in [self.bm, self.bk, self.wm, self.wk] {
            write!(f, "{}", count_char(c))?;
        }
        Ok(())
    }
}

impl FromStr for Material {
    type Err = SliceNameError;
    fn from_str(s: &str) -> Result<Material, SliceNameError> {
        let b = s.as_bytes();
        if b.len() != 4 {
            return Err(SliceNameError::MaterialSyntax(s.to_string()));
        }
        let mut c = [0u8; 4];
        for (i, &ch) in b.iter().enumerate() {
            c[i] = (ch as char)
                .to_digit(16)
                .ok_or_else(|| SliceNameError::MaterialSyntax(s.to_string()))?
                as u8;
        }
        Material::new(c[0], c[1], c[2], c[3]).ok_or(SliceNameError::Impossible(
            s.to_string(),
            "more than 12 pieces a side",
        ))
    }
}

/// A material plus each side's leading rank (0-6 from its own back row, `None` without men).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slice {
    /// The material.
    pub material: Material,
    /// Black's leading rank = row of Black's most advanced man (0-6); `None` iff `bm == 0`.
    pub black_rank: Option<u8>,
    /// White's leading rank = 7 - row of White's most advanced man (0-6); `None` iff `wm == 0`.
    pub white_rank: Option<u8>,
}

/// Leading rank of Black's men bitboard (row of the highest man), `None` if empty.
#[inline(always)]
pub fn black_leading_rank(black_men: Bitboard) -> Option<u8> {
    if black_men == 0 {
        None
    } else {
        Some(((31 - black_men.leading_zeros()) / 4) as u8)
    }
}

/// Leading rank of White's men bitboard (7 - row of the lowest man), `None` if empty.
#[inline(always)]
pub fn white_leading_rank(white_men: Bitboard) -> Option<u8> {
    if white_men == 0 {
        None
    } else {
        Some((7 - white_men.trailing_zeros() / 4) as u8)
    }
}

impl Slice {
    /// The slice a position belongs to, reading the board as it stands (the side to move is
    /// ignored; callers normalise to Black to move first).
    #[inline]
    pub fn of(p: &Position) -> Slice {
        Slice {
            material: Material::of(p),
            black_rank: black_leading_rank(p.men(Color::Black)),
            white_rank: white_leading_rank(p.men(Color::White)),
        }
    }
    /// Whether the ranks are consistent with the material (a rank iff the side has men, men
    /// never on their crowning row).
    pub fn is_valid(&self) -> bool {
        let m = self.material;
        (m.bm == 0) == self.black_rank.is_none()
            && (m.wm == 0) == self.white_rank.is_none()
            && self.black_rank.is_none_or(|r| r <= 6)
            && self.white_rank.is_none_or(|r| r <= 6)
            && Material::new(m.bm, m.bk, m.wm, m.wk).is_some()
    }
    /// The colour-mirror slice: flipped material, ranks swapped. White-to-move positions of
    /// `self` are stored as Black-to-move positions of `self.partner()`.
    pub const fn partner(&self) -> Slice {
        Slice {
            material: self.material.flip(),
            black_rank: self.white_rank,
            white_rank: self.black_rank,
        }
    }
    /// Every slice of a material, in build order: higher leading ranks first (a man advancing
    /// its leading rank moves into a slice built earlier), i.e. descending (black_rank + white_rank),
    /// then descending black_rank.
    pub fn all_of(m: Material) -> Vec<Slice> {
        let ranks = |men: u8| -> Vec<Option<u8>> {
            if men == 0 {
                vec![None]
            } else {
                // With k men the leading man is on row >= (k-1)/4 (rows hold 4 squares).
                let lo = (men as u32).div_ceil(4).saturating_sub(1) as u8;
                (lo..=6).map(Some).collect()
            }
        };
        let mut v = Vec::new();
        for rb in ranks(m.bm) {
            for rw in ranks(m.wm) {
                let s = Slice {
                    material: m,
                    black_rank: rb,
                    white_rank: rw,
                };
                v.push(s);
            }
        }
        v.sort_by_key(|s| {
            let r = |x: Option<u8>| x.map_or(0, |r| r as i32 + 1);
            (-(r(s.black_rank) + r(s.white_rank)), -r(s.black_rank))
        });
        v
    }
}

impl fmt::Display for Slice {
    /// `MATERIAL-RR`, e.g. `2101-3n`; `n` stands for "no men".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = |x: Option<u8>| x.map_or('n', |r| (b'0' + r) as char);
        write!(
            f,
            "{}-{}{}",
            self.material,
            r(self.black_rank),
            r(self.white_rank)
        )
    }
}

impl FromStr for Slice {
    type Err = SliceNameError;
    fn from_str(s: &str) -> Result<Slice, SliceNameError> {
        let syn = || SliceNameError::Syntax(s.to_string());
        let (m, r) = s.split_once('-').ok_or_else(syn)?;
        let material: Material = m.parse().map_err(|e| match e {
            SliceNameError::Impossible(_, why) => SliceNameError::Impossible(s.to_string(), why),
            _ => syn(),
        })?;
        let rb = r.as_bytes();
        if rb.len() != 2 {
            return Err(syn());
        }
        let rank = |c: u8| -> Result<Option<u8>, SliceNameError> {
            match c {
                b'n' | b'N' => Ok(None),
                b'0'..=b'6' => Ok(Some(c - b'0')),
                _ => Err(syn()),
            }
        };
        let slice = Slice {
            material,
            black_rank: rank(rb[0])?,
            white_rank: rank(rb[1])?,
        };
        if !slice.is_valid() {
            return Err(SliceNameError::Impossible(
                s.to_string(),
                "a side has a leading rank iff it has men",
            ));
        }
        Ok(slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Material::all_with_pieces(4) {
            for s in Slice::all_of(m) {
                assert_eq!(s.to_string().parse::<Slice>().unwrap(), s);
            }
            assert_eq!(m.to_string().parse::<Material>().unwrap(), m);
        }
        assert!("2101-7n".parse::<Slice>().is_err());
        assert!("2101-n3".parse::<Slice>().is_err());
    }

    #[test]
    fn syntax_error_shows_a_possible_slice_name() {
        // The example in the message must itself be a valid slice name.
        let e = "1001".parse::<Slice>().unwrap_err();
        assert_eq!(e, SliceNameError::Syntax("1001".into()));
        let msg = e.to_string();
        assert!(msg.contains("like 2101-3n"), "{msg}");
        assert!(!msg.contains("2101-34"), "{msg}");
        assert!("2101-3n".parse::<Slice>().is_ok());
        assert!("2101-34".parse::<Slice>().is_err());
        // A bad material inside a slice name reports the whole name.
        assert_eq!(
            "21x1-3n".parse::<Slice>().unwrap_err(),
            SliceNameError::Syntax("21x1-3n".into())
        );
        assert!(matches!(
            "c100-6n".parse::<Slice>().unwrap_err(),
            SliceNameError::Impossible(name, _) if name == "c100-6n"
        ));
    }

    #[test]
    fn leading_ranks() {
        // Black man on 12 (row 2), white man on 21 (row 5 -> rank 2).
        let p = Position::new(1 << 11, 1 << 20, 0, Color::Black).unwrap();
        let s = Slice::of(&p);
        assert_eq!((s.black_rank, s.white_rank), (Some(2), Some(2)));
        assert_eq!(Slice::of(&p.flip()), s.partner());
    }
}
