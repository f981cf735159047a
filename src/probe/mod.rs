//! Probing the tables: [`Tablebase`] (lazy opening, shared block cache, statistics) and
//! [`resolve()`], the capture-resolving search every probe goes through.
//!
//! Tables store only quiet (no capture for the side to move) Black-to-move positions
//! meaningfully; [`resolve()`] turns any position into such lookups: a side with no legal move
//! loses, a side that must capture gets the best value over its de-duplicated capture
//! successors (recursively, as the opponent may have to capture too), and a White-to-move
//! position is looked up as its colour flip ([`crate::Position::normalized`]).
//!
//! Rooms: [`error`] ([`ProbeError`]), [`resolve`](mod@resolve) (capture resolution,
//! [`RawSource`]), [`slots`] (the slot scheme shared with the generator's dependency store),
//! `cache` (the block cache), [`tablebase`] ([`Tablebase`]).
//!
//! ```no_run
//! use checkers_egdb::{Position, Tablebase};
//! let tb = Tablebase::builder("egdb").cache_bytes(64 << 20).open().unwrap();
//! let p = Position::from_fen("W:WK19,K23:BK28,12").unwrap();
//! println!("{}", tb.probe_wld(&p).unwrap()); // win
//! ```

mod cache;
pub mod error;
mod memo;
pub mod resolve;
pub mod slots;
pub mod tablebase;

pub use cache::max_cache_bytes;
pub use error::ProbeError;
pub use resolve::{resolve, resolve_with, RawSource};
pub use slots::MAX_PIECES;
pub use tablebase::{Dtc, ProbeStats, Tablebase, TablebaseBuilder};
