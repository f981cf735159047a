//! checkers-egdb: endgame database generator, verifier and probe library for English checkers.
pub mod board;
pub mod movegen;
pub mod notation;

pub use board::{Bitboard, Color, Position, PositionError, Wld};
pub use movegen::{perft, perft_parallel, Move};
pub mod count;
pub mod ffi;
pub mod index;
pub mod plan;
pub mod probe;
pub mod slice;
pub mod table;

pub use index::SliceIndex;
pub use slice::{Material, Slice};
pub mod build;
pub mod proofcheck;
pub mod prove;
pub mod stats;
pub mod verify;
