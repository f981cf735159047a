//! The variants this crate knows, as a run-time value ([`Variant`]): what `--rules NAME`
//! selects, with each variant's name, rules id (table file headers, byte 9) and the rules of
//! its slow path generator ([`crate::rules::paths::Game`]).
//!
//! | variant | id | kings | men capture | capture choice | crowning in a capture | no move |
//! |---|---|---|---|---|---|---|
//! | english | 1 | short | forward | any | crowned, move ends | loses |
//! | russian | 2 | flying | both ways | any | crowned, goes on as a king | loses |
//! | brazilian | 3 | flying | both ways | most pieces | only where the move ends | loses |
//! | italian | 4 | short | forward, not kings | Italian precedence | crowned, move ends | loses |
//! | giveaway | 5 | short | forward | any | crowned, move ends | **wins** |
//! | pool | 6 | flying | both ways | any | only where the move ends | loses |
//! | spanish | 7 | flying | forward | most pieces, then most kings | crowned, move ends | loses |
//! | czech | 8 | flying | forward | by a king first | crowned, move ends | loses |
//!
//! Every variant has a fast engine with un-moves, which the retrograde solver runs on
//! ([`crate::with_engine!`]): English and giveaway the English bitboard engine, the others
//! [`crate::rules::engine::Fast`]; `egdb build --rules NAME` builds the tables of any.

use super::paths::{game_of, Game};
use crate::board::{Color, Position, PositionError, Wld};

/// One of the 8x8 draughts variants (see the module docs for their rules and ids).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// English / American checkers ([`crate::rules::English`]); the default.
    #[default]
    English,
    /// Russian draughts ([`crate::rules::russian`]).
    Russian,
    /// Brazilian draughts ([`crate::rules::brazilian`]).
    Brazilian,
    /// Italian draughts ([`crate::rules::italian`]).
    Italian,
    /// Giveaway checkers ([`crate::rules::giveaway`]).
    Giveaway,
    /// Pool checkers ([`crate::rules::pool`]).
    Pool,
    /// Spanish draughts ([`crate::rules::spanish`]).
    Spanish,
    /// Czech draughts ([`crate::rules::czech`]).
    Czech,
}

impl Variant {
    /// Every variant, in rules id order.
    pub const ALL: [Variant; 8] = [
        Variant::English,
        Variant::Russian,
        Variant::Brazilian,
        Variant::Italian,
        Variant::Giveaway,
        Variant::Pool,
        Variant::Spanish,
        Variant::Czech,
    ];

    /// The rules id written in table headers (1-8).
    pub const fn id(self) -> u32 {
        match self {
            Variant::English => super::english::ID,
            Variant::Russian => super::russian::ID,
            Variant::Brazilian => super::brazilian::ID,
            Variant::Italian => super::italian::ID,
            Variant::Giveaway => super::giveaway::ID,
            Variant::Pool => super::pool::ID,
            Variant::Spanish => super::spanish::ID,
            Variant::Czech => super::czech::ID,
        }
    }

    /// The rules of the variant's path generator.
    pub const fn game(self) -> Game {
        game_of(self.id())
    }

    /// Lower-case name, as `--rules` takes it (`"english"`, `"russian"`, ...).
    pub const fn name(self) -> &'static str {
        self.game().name
    }

    /// The terminal rule: the value for the side to move of a position without a legal move.
    pub const fn no_move_value(self) -> Wld {
        self.game().no_move
    }

    /// The variant of rules id `id`, if any.
    pub fn from_id(id: u32) -> Option<Variant> {
        Self::ALL.into_iter().find(|v| v.id() == id)
    }

    /// The variant whose rules id is `R::ID` (`None` for rules this crate does not know).
    pub fn of<R: super::Rules>() -> Option<Variant> {
        Variant::from_id(R::ID)
    }

    /// Whether `p` is a legal position of this variant: [`crate::rules::Rules::validate`] with
    /// the variant's crowning rows (Black's 29-32, White's 1-4 in every variant on this
    /// crate's board). The checks are the same for all eight variants: no overlapping
    /// colours, no king flag on an empty square, no man on its own crowning row (a man that
    /// ends a move there is crowned in every variant; in Brazilian and Pool one that only
    /// passes it during a capture moves on), at most 12 pieces a side, at least one piece. A
    /// side without pieces is a legal position (the terminal rule gives its value: a loss, a
    /// win in giveaway).
    ///
    /// # Errors
    /// [`PositionError`] naming the first fault.
    pub fn validate(self, p: &Position) -> Result<(), PositionError> {
        p.validate_crown_rows(self.crown_row(Color::Black), self.crown_row(Color::White))
    }

    /// Parse a PDN FEN (`B:W21-32:B1-12`, this crate's square numbers and colours: the side
    /// that moves first is Black in every variant, see [`crate::rules::paths`],
    /// "Orientation"; Italian square numbers map with
    /// [`crate::rules::italian::from_italian_square`]) and check it with
    /// [`Variant::validate`].
    ///
    /// # Errors
    /// [`crate::FenError`] as [`Position::from_fen`] (which runs the same checks).
    pub fn parse_fen(self, s: &str) -> Result<Position, crate::FenError> {
        let p = Position::from_fen(s)?;
        self.validate(&p)?;
        Ok(p)
    }

    /// The squares where a man of `side` is crowned (the far row: 29-32 for Black, 1-4 for
    /// White, in every variant).
    pub const fn crown_row(self, side: Color) -> crate::board::Bitboard {
        match side {
            Color::Black => crate::board::BLACK_CROWN_ROW,
            Color::White => crate::board::WHITE_CROWN_ROW,
        }
    }

    /// Whether the variant has a fast engine with un-moves ([`crate::rules::Retro`]), which
    /// the retrograde solver needs: every variant (English and giveaway their bitboard
    /// engine, the others [`crate::rules::engine::Fast`]).
    pub const fn has_fast_engine(self) -> bool {
        true
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--rules` name that is not a variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown rules {name:?}: expected one of english, russian, brazilian, italian, giveaway, pool, spanish, czech")]
pub struct UnknownVariant {
    /// The name given.
    pub name: String,
}

impl std::str::FromStr for Variant {
    type Err = UnknownVariant;
    /// A variant by its name, case-insensitive, surrounding spaces ignored.
    fn from_str(s: &str) -> Result<Variant, UnknownVariant> {
        let t = s.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|v| v.name() == t)
            .ok_or_else(|| UnknownVariant {
                name: s.to_string(),
            })
    }
}

/// `with_engine!(variant, r => body)`: `body` with `r` bound to the variant's fast engine
/// (a [`crate::rules::Retro`] value: [`crate::rules::English`], [`crate::rules::Giveaway`],
/// else [`crate::rules::engine::Fast`] of the variant's id). The one place a run-time
/// [`Variant`] becomes a type for the generator, the store and the probes.
#[macro_export]
macro_rules! with_engine {
    ($v:expr, $r:ident => $body:expr) => {{
        use $crate::rules::engine::Fast;
        use $crate::rules::{brazilian, czech, italian, pool, russian, spanish, Variant};
        match $v {
            Variant::English => {
                let $r = $crate::rules::English;
                $body
            }
            Variant::Giveaway => {
                let $r = $crate::rules::Giveaway;
                $body
            }
            Variant::Russian => {
                let $r = Fast::<{ russian::ID }>;
                $body
            }
            Variant::Brazilian => {
                let $r = Fast::<{ brazilian::ID }>;
                $body
            }
            Variant::Italian => {
                let $r = Fast::<{ italian::ID }>;
                $body
            }
            Variant::Pool => {
                let $r = Fast::<{ pool::ID }>;
                $body
            }
            Variant::Spanish => {
                let $r = Fast::<{ spanish::ID }>;
                $body
            }
            Variant::Czech => {
                let $r = Fast::<{ czech::ID }>;
                $body
            }
        }
    }};
}
