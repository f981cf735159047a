//! A tablebase of any variant, chosen at run time: [`AnyTablebase`], what the front ends that
//! serve one directory (`egdb serve`, the Python module, the C ABI) hold.
//!
//! A directory holds the tables of one variant; its rules id is in every file header
//! (docs/format.md). [`AnyTablebase::open`] reads it ([`crate::format::dir_rules`]), or takes
//! the rules asked for and refuses a directory of other rules, and opens a [`Tablebase`] with
//! that variant's fast engine ([`crate::with_engine!`]'s choice: [`English`], [`Giveaway`],
//! [`Fast`] of the variant's id). [`crate::with_tablebase!`] binds the typed tablebase inside,
//! for code generic over [`Rules`].
//!
//! ```no_run
//! use checkers_egdb::{AnyTablebase, Metric, Position};
//! let tb = AnyTablebase::open("tables-russian", None).unwrap(); // rules from the headers
//! let p = Position::from_fen("B:WK32:BK1,K5").unwrap();
//! println!("{} {}", tb.variant(), tb.probe_wld(&p).unwrap());
//! let best = tb.scored_moves(&p, Metric::Dtc).unwrap();
//! ```

use crate::board::{Position, Wld};
use crate::movegen::Move;
use crate::play::{Line, Metric, ScoredMove};
use crate::probe::{Dtc, ProbeError, ProbeStats, Tablebase, TablebaseBuilder};
use crate::rules::engine::Fast;
use crate::rules::{brazilian, czech, italian, pool, russian, spanish};
use crate::rules::{English, Giveaway, Rules, Variant};
use crate::table::TableError;
use std::path::Path;

/// A [`Tablebase`] of one of the variants ([`Variant`]), chosen at run time. Each arm holds
/// the tablebase typed by the variant's fast engine.
#[derive(Debug)]
pub enum AnyTablebase {
    /// English checkers.
    English(Tablebase<English>),
    /// Russian draughts.
    Russian(Tablebase<Fast<{ russian::ID }>>),
    /// Brazilian draughts.
    Brazilian(Tablebase<Fast<{ brazilian::ID }>>),
    /// Italian draughts.
    Italian(Tablebase<Fast<{ italian::ID }>>),
    /// Giveaway checkers.
    Giveaway(Tablebase<Giveaway>),
    /// Pool checkers.
    Pool(Tablebase<Fast<{ pool::ID }>>),
    /// Spanish draughts.
    Spanish(Tablebase<Fast<{ spanish::ID }>>),
    /// Czech draughts.
    Czech(Tablebase<Fast<{ czech::ID }>>),
}

/// `with_tablebase!(any, tb => body)`: `body` with `tb` bound to the typed [`Tablebase`]
/// inside `any` (an `&`[`AnyTablebase`]); `body` is compiled once per variant, so it may call
/// code generic over [`Rules`] (`checkers_egdb::scored_moves(tb, ..)`).
#[macro_export]
macro_rules! with_tablebase {
    ($any:expr, $tb:ident => $body:expr) => {{
        use $crate::AnyTablebase as A;
        match $any {
            A::English($tb) => $body,
            A::Russian($tb) => $body,
            A::Brazilian($tb) => $body,
            A::Italian($tb) => $body,
            A::Giveaway($tb) => $body,
            A::Pool($tb) => $body,
            A::Spanish($tb) => $body,
            A::Czech($tb) => $body,
        }
    }};
}

/// The variant of the tables in `dir` under `asked` (`None`: the rules in the files' headers,
/// English for a directory without readable tables).
///
/// # Errors
/// [`ProbeError::Table`] ([`TableError::Invalid`]) when `asked` is not the rules of the
/// tables in `dir` (naming both), when the directory mixes variants, or when its rules id is
/// one no variant has.
pub fn resolve_rules(dir: &Path, asked: Option<Variant>) -> Result<Variant, ProbeError> {
    let found = match crate::table::dir_rules(dir) {
        Ok(Some(id)) => Some(Variant::from_id(id).ok_or_else(|| {
            ProbeError::Table(TableError::Invalid(format!(
                "the tables in {} have rules id {id}, which no variant has",
                dir.display()
            )))
        })?),
        // No tables, or a directory that cannot be read: the open reports it.
        Ok(None) | Err(TableError::Io { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    match (asked, found) {
        (Some(a), Some(f)) if a != f => Err(ProbeError::Table(TableError::Invalid(format!(
            "the tables in {} are of {f} rules, not {a} (a directory holds the tables of one \
             variant; omit the rules to use the directory's)",
            dir.display()
        )))),
        (Some(a), _) => Ok(a),
        (None, Some(f)) => Ok(f),
        (None, None) => Ok(Variant::English),
    }
}

impl AnyTablebase {
    /// Open `dir` under `rules` (`None`: the rules in its files' headers) with the default
    /// settings.
    ///
    /// # Errors
    /// As [`resolve_rules`] (a rules mismatch) and [`TablebaseBuilder::open`].
    pub fn open(dir: impl AsRef<Path>, rules: Option<Variant>) -> Result<Self, ProbeError> {
        Self::open_builder(Tablebase::builder(dir), rules)
    }

    /// Open with the settings of `builder` (cache size, access, ...; its rules are replaced)
    /// under `rules` (`None`: the rules in the directory's headers).
    ///
    /// # Errors
    /// As [`AnyTablebase::open`].
    pub fn open_builder(
        builder: TablebaseBuilder,
        rules: Option<Variant>,
    ) -> Result<Self, ProbeError> {
        let v = resolve_rules(builder.directory(), rules)?;
        Ok(match v {
            Variant::English => AnyTablebase::English(builder.open()?),
            Variant::Russian => AnyTablebase::Russian(builder.rules(Fast).open()?),
            Variant::Brazilian => AnyTablebase::Brazilian(builder.rules(Fast).open()?),
            Variant::Italian => AnyTablebase::Italian(builder.rules(Fast).open()?),
            Variant::Giveaway => AnyTablebase::Giveaway(builder.rules(Giveaway).open()?),
            Variant::Pool => AnyTablebase::Pool(builder.rules(Fast).open()?),
            Variant::Spanish => AnyTablebase::Spanish(builder.rules(Fast).open()?),
            Variant::Czech => AnyTablebase::Czech(builder.rules(Fast).open()?),
        })
    }

    /// The variant the tables are of.
    pub fn variant(&self) -> Variant {
        match self {
            AnyTablebase::English(_) => Variant::English,
            AnyTablebase::Russian(_) => Variant::Russian,
            AnyTablebase::Brazilian(_) => Variant::Brazilian,
            AnyTablebase::Italian(_) => Variant::Italian,
            AnyTablebase::Giveaway(_) => Variant::Giveaway,
            AnyTablebase::Pool(_) => Variant::Pool,
            AnyTablebase::Spanish(_) => Variant::Spanish,
            AnyTablebase::Czech(_) => Variant::Czech,
        }
    }

    /// The table directory.
    pub fn dir(&self) -> &Path {
        crate::with_tablebase!(self, tb => tb.dir())
    }

    /// Largest piece count of any table present ([`Tablebase::max_pieces`]).
    pub fn max_pieces(&self) -> u32 {
        crate::with_tablebase!(self, tb => tb.max_pieces())
    }

    /// List the directory again ([`Tablebase::rescan`]): the number of table files known.
    ///
    /// # Errors
    /// As [`Tablebase::rescan`].
    pub fn rescan(&self) -> Result<u64, ProbeError> {
        crate::with_tablebase!(self, tb => tb.rescan())
    }

    /// Counters since opening ([`Tablebase::stats`]).
    pub fn stats(&self) -> ProbeStats {
        crate::with_tablebase!(self, tb => tb.stats())
    }

    /// Whether `p` is a legal position of the variant ([`Rules::validate`]).
    ///
    /// # Errors
    /// [`crate::PositionError`] naming the fault.
    pub fn validate(&self, p: &Position) -> Result<(), crate::PositionError> {
        crate::with_tablebase!(self, tb => tb.rules().validate(p))
    }

    /// Whether the side to move of `p` has a legal move under the variant.
    pub fn has_move(&self, p: &Position) -> bool {
        crate::with_tablebase!(self, tb => tb.rules().has_move(p))
    }

    /// The legal moves of `p` under the variant, every capture path ([`Variant::moves`]).
    pub fn moves(&self, p: &Position) -> Vec<Move> {
        self.variant().moves(p)
    }

    /// Win, loss or draw of `p` for the side to move ([`Tablebase::probe_wld`]).
    ///
    /// # Errors
    /// As [`Tablebase::probe_wld`].
    pub fn probe_wld(&self, p: &Position) -> Result<Wld, ProbeError> {
        crate::with_tablebase!(self, tb => tb.probe_wld(p))
    }

    /// [`Tablebase::probe_wld_cached`].
    ///
    /// # Errors
    /// As [`Tablebase::probe_wld_cached`].
    pub fn probe_wld_cached(&self, p: &Position) -> Result<Wld, ProbeError> {
        crate::with_tablebase!(self, tb => tb.probe_wld_cached(p))
    }

    /// Value and distance to conversion ([`Tablebase::probe_dtc`]).
    ///
    /// # Errors
    /// As [`Tablebase::probe_dtc`].
    pub fn probe_dtc(&self, p: &Position) -> Result<Dtc, ProbeError> {
        crate::with_tablebase!(self, tb => tb.probe_dtc(p))
    }

    /// Value and depth to win ([`Tablebase::probe_dtw`]; English tables only have `.dtw`
    /// files).
    ///
    /// # Errors
    /// As [`Tablebase::probe_dtw`].
    pub fn probe_dtw(&self, p: &Position) -> Result<Dtc, ProbeError> {
        crate::with_tablebase!(self, tb => tb.probe_dtw(p))
    }

    /// [`Tablebase::has_dtw`].
    ///
    /// # Errors
    /// As [`Tablebase::has_dtw`].
    pub fn has_dtw(&self, p: &Position) -> Result<bool, ProbeError> {
        crate::with_tablebase!(self, tb => tb.has_dtw(p))
    }

    /// [`Metric::default_for`].
    ///
    /// # Errors
    /// As [`Tablebase::has_dtw`].
    pub fn default_metric(&self, p: &Position) -> Result<Metric, ProbeError> {
        crate::with_tablebase!(self, tb => Metric::default_for(tb, p))
    }

    /// The value of `p` by `metric` ([`Metric::probe`]).
    ///
    /// # Errors
    /// As [`Metric::probe`].
    pub fn probe_metric(&self, p: &Position, metric: Metric) -> Result<Dtc, ProbeError> {
        crate::with_tablebase!(self, tb => metric.probe(tb, p))
    }

    /// Every legal move scored by `metric`, best first ([`crate::scored_moves`]).
    ///
    /// # Errors
    /// As [`crate::scored_moves`].
    pub fn scored_moves(
        &self,
        p: &Position,
        metric: Metric,
    ) -> Result<Vec<ScoredMove>, ProbeError> {
        crate::with_tablebase!(self, tb => crate::play::scored_moves(tb, p, metric))
    }

    /// The perfect line ([`crate::line()`]).
    ///
    /// # Errors
    /// As [`crate::line()`].
    pub fn line(&self, p: &Position, metric: Metric, max_plies: u32) -> Result<Line, ProbeError> {
        crate::with_tablebase!(self, tb => crate::play::line(tb, p, metric, max_plies))
    }
}
