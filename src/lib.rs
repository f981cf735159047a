//! checkers-egdb: endgame database (EGDB) generator, verifier and probe library for English
//! checkers (8x8, short-range kings).
//!
//! Values are win/loss/draw from the side to move's point of view. Squares are the standard
//! 1-32 (Black on 1-12 moves first); positions are written in PDN FEN (`B:W21-32:B1-12`).
//!
//! # Example
//!
//! Build the tables of at most 3 pieces into a directory, then probe a position:
//!
//! ```
//! use checkers_egdb::generate::{build, BuildOptions};
//! use checkers_egdb::probe::Tablebase;
//! use checkers_egdb::{Position, Wld};
//!
//! let dir = std::env::temp_dir().join(format!("egdb-doc-{}", std::process::id()));
//! build(&BuildOptions::new(&dir, 3)).unwrap();
//! let tb = Tablebase::open(&dir).unwrap();
//! // King against king: whoever is to move here cannot escape the corner trap...
//! let p = Position::from_fen("W:WK32:BK26").unwrap();
//! assert_eq!(tb.probe_wld(&p).unwrap(), Wld::Win); // White to move takes the opposition
//! // ...and a side without pieces has lost.
//! assert_eq!(tb.probe_wld(&Position::from_fen("B:WK32:B").unwrap()).unwrap(), Wld::Loss);
//! # std::fs::remove_dir_all(&dir).ok();
//! ```
//!
//! # Rooms
//!
//! | module | what it holds |
//! |---|---|
//! | [`board`] | squares, bitboards, [`Position`], [`Color`], [`Wld`] |
//! | [`rules`] | the [`rules::Rules`] trait and English checkers: fast engine, un-moves, crown rows, rules id |
//! | [`movegen`] | the slow path generator ([`Move`], [`movegen::Oracle`]): the independent oracle |
//! | [`notation`] | PDN FEN and move notation |
//! | [`pdn`] | PDN game files: reader and writer |
//! | [`slice`](mod@slice), [`index`], [`count`], [`plan`] | slices, their dense index, position counts, build order |
//! | [`generate`] | the retrograde generator (`egdb build`): driver and solver |
//! | [`store`], [`memory`] | the dependency store (slices decoded into memory, released and spilled under a budget); memory sizes and the build memory model |
//! | [`table`] | the file format: header, value codec, writer, reader |
//! | [`probe`] | [`probe::Tablebase`] (WLD and distance-to-conversion probes), capture resolution, slots, block cache |
//! | [`play`] | perfect play: scored moves, best move, the perfect line |
//! | [`verify`], [`stats`] | independent verification, statistics from headers |
//! | [`prove`], [`proofcheck`] | df-pn prover beyond the tables, certificates, and their independent checker |
//! | [`atomic`] | atomic whole-file replacement (temp file, fsync, rename) for certificates, journals, pictures |
//!
//! The `cli` feature (on by default) only adds the `egdb` binary's dependencies (clap,
//! indicatif, serde_json, axum, tokio, tower-http, plotters, resvg); a program that links the library with `default-features = false`
//! compiles none of them.
//!
//! The C ABI (`libegdb.so`, header `egdb.h`) is the workspace crate `checkers-egdb-capi`
//! (`capi/`), the KingsRow-compatible driver `egdb-kingsrow` (`kingsrow/`), the Python module
//! `python/`; all three use this library's public API only.

pub mod atomic;
pub mod bmi2;
pub mod board;
pub mod count;
pub mod generate;
pub mod index;
pub mod memory;
pub mod movegen;
pub mod notation;
pub mod pdn;
pub mod plan;
pub mod play;
pub mod probe;
pub mod proofcheck;
pub mod prove;
pub mod rules;
pub mod slice;
pub mod stats;
pub mod store;
pub mod table;
pub mod verify;

pub use board::{Bitboard, Color, Position, PositionError, Wld};
pub use index::SliceIndex;
pub use movegen::{perft, perft_parallel, Move};
pub use rules::{English, Rules};
pub use slice::{Material, Slice};
