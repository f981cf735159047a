//! checkers-egdb: endgame database (EGDB) generator, verifier and probe library for English
//! checkers (8x8, short-range kings).
//!
//! Values are win/loss/draw from the side to move's point of view. Squares are the standard
//! 1-32 (Black on 1-12 moves first); positions are written in PDN FEN (`B:W21-32:B1-12`).
//!
//! # Build, then probe
//!
//! Build the tables of at most 3 pieces into a directory ([`build`]; the distance files too,
//! [`BuildOptions::dtc`]), then probe positions ([`Tablebase::probe_wld`],
//! [`Tablebase::probe_dtc`]):
//!
//! ```
//! use checkers_egdb::{build, BuildOptions, Dtc, Position, Tablebase, Wld};
//!
//! let dir = std::env::temp_dir().join(format!("egdb-doc-build-{}", std::process::id()));
//! let summary = build(&BuildOptions { dtc: true, ..BuildOptions::new(&dir, 3) }).unwrap();
//! assert!(summary.positions > 0);
//! let tb = Tablebase::open(&dir).unwrap();
//! // King against king: whoever is to move here cannot escape the corner trap...
//! let p = Position::from_fen("W:WK32:BK26").unwrap();
//! assert_eq!(tb.probe_wld(&p).unwrap(), Wld::Win); // White to move takes the opposition
//! assert!(matches!(tb.probe_dtc(&p).unwrap(), Dtc::Win(_)));
//! // ...and a side without pieces has lost.
//! assert_eq!(tb.probe_wld(&Position::from_fen("B:WK32:B").unwrap()).unwrap(), Wld::Loss);
//! # std::fs::remove_dir_all(&dir).ok();
//! ```
//!
//! # Verify
//!
//! [`verify_dir`] checks every file of a directory (checksums, then every value against its
//! successors', independently of the builder); [`verify_dir_opts`] takes [`VerifyOptions`]
//! (a journal to resume, a partial directory):
//!
//! ```
//! use checkers_egdb::{build, verify_dir, BuildOptions};
//!
//! let dir = std::env::temp_dir().join(format!("egdb-doc-verify-{}", std::process::id()));
//! build(&BuildOptions::new(&dir, 3)).unwrap();
//! let report = verify_dir(&dir, &|_slice, _done, _total| {}).unwrap();
//! assert!(report.slices > 0 && report.positions > 0);
//! # std::fs::remove_dir_all(&dir).ok();
//! ```
//!
//! # Prove beyond the tables
//!
//! [`Prover`] (or [`prove`]) settles a position with more pieces than the tables by a
//! proof-number search whose leaves are table positions; [`ProveOptions`] bounds it:
//!
//! ```
//! use checkers_egdb::{build, BuildOptions, Position, ProofOutcome, ProveOptions, Prover, Tablebase, Wld};
//!
//! let dir = std::env::temp_dir().join(format!("egdb-doc-prove-{}", std::process::id()));
//! build(&BuildOptions::new(&dir, 3)).unwrap();
//! let tb = Tablebase::open(&dir).unwrap();
//! // Four pieces: White's man takes 27x18, leaving two kings against one.
//! let p = Position::from_fen("W:W27,K32:B23,K1").unwrap();
//! let opts = ProveOptions { nodes: Some(100_000), ..ProveOptions::default() };
//! let report = Prover::new(&tb, &opts).prove(&p).unwrap();
//! assert_eq!(report.value, Some(Wld::Win));
//! assert_eq!(report.win.outcome, ProofOutcome::Proven);
//! # std::fs::remove_dir_all(&dir).ok();
//! ```
//!
//! # Perfect play
//!
//! [`scored_moves`] values every legal move, [`best_move`] picks one, [`line()`] plays both
//! sides to the end, each by a [`Metric`]: distance to conversion (`Dtc`, the files of `build
//! --dtc`) or depth to win (`Dtw`, the fastest win and the longest defence, `build --dtw`):
//!
//! ```
//! use checkers_egdb::{build, line, scored_moves, BuildOptions, Dtc, LineEnd, Metric, Position, Tablebase};
//!
//! let dir = std::env::temp_dir().join(format!("egdb-doc-play-{}", std::process::id()));
//! build(&BuildOptions { dtc: true, dtw: true, ..BuildOptions::new(&dir, 3) }).unwrap();
//! let tb = Tablebase::open(&dir).unwrap();
//! let p = Position::from_fen("W:WK32:BK26").unwrap();
//! let moves = scored_moves(&tb, &p, Metric::Dtc).unwrap();
//! assert!(matches!(moves[0].value, Dtc::Win(_))); // best first
//! let l = line(&tb, &p, Metric::Dtw, 200).unwrap();
//! // A won line ends with the loser to move and without a legal move: Black, here, after
//! // exactly the depth to win.
//! assert_eq!(l.end, LineEnd::NoMoves);
//! assert_eq!(Some(l.moves.len() as u32), tb.probe_dtw(&p).unwrap().plies());
//! # std::fs::remove_dir_all(&dir).ok();
//! ```
//!
//! # The public API
//!
//! Everything a program needs is at the root: positions and notation ([`Position`],
//! [`Color`], [`Wld`], [`Move`], [`parse_move`], [`format_move`]), the tables ([`build`] and
//! [`BuildOptions`], [`Tablebase`] and its [`TablebaseBuilder`], [`Dtc`], [`ProbeError`]),
//! checking them ([`verify_dir`], [`verify_dir_opts`]), proving beyond them ([`Prover`],
//! [`prove`], [`certificate::check_certificate`]), perfect play ([`scored_moves`], [`best_move`],
//! [`line()`]) and statistics ([`read_dir_info`], [`material_stats`], [`longest_dtc`]). A few
//! public modules hold what only advanced users need:
//!
//! | module | what it holds |
//! |---|---|
//! | [`pdn`] | PDN game files: reader and writer |
//! | [`rules`] | the [`rules::Rules`] trait the solver and the tablebase are written against, and English checkers |
//! | [`format`](mod@format) | the table files: header, [`format::TableFile`] (WLD) and [`format::DtcFile`] readers, writers, file names, the dense index |
//! | [`planning`] | the build plan: the units' order and closures, position counts, the memory model, sizes |
//! | [`driver`] | the build driver's seam for other transports (the `egdb build --mpi` runner): solving and writing one unit |
//! | [`certificate`] | proof certificates: writing and checking them |
//!
//! Everything else (the retrograde solver, the codecs, the dependency store, the prover's
//! search) is private.
//!
//! The `cli` feature (on by default) only adds the `egdb` binary's dependencies (clap,
//! indicatif, serde_json, axum, tokio, tower-http, plotters, resvg); a program that links the library with `default-features = false`
//! compiles none of them.
//!
//! The C ABI (`libegdb.so`, header `egdb.h`) is the workspace crate `checkers-egdb-capi`
//! (`capi/`), the KingsRow-compatible driver `egdb-kingsrow` (`kingsrow/`), the Python module
//! `python/`; all three use this library's public API only.

mod any;
mod atomic;
mod bmi2;
mod board;
mod convert;
mod count;
mod generate;
mod hint;
mod index;
mod memory;
mod movegen;
mod notation;
mod pack;
pub mod pdn;
mod plan;
mod play;
mod probe;
mod proofcheck;
mod prove;
pub mod rules;
mod slice;
mod stats;
mod store;
mod table;
mod verify;

pub use any::{resolve_rules, AnyTablebase};
pub use atomic::replace as replace_file;
pub use board::{Bitboard, Color, Position, PositionError, Wld};
pub use convert::{
    convert_dir, ConvertCounts, ConvertError, ConvertOptions, ConvertReport, MAX_CONVERT_CHECK,
};
pub use generate::{
    build, build_with, first_missing_dependency, peak_rss_bytes, BuildError, BuildObserver,
    BuildOptions, BuildSummary, NoProgress, Unit, UnitReport, MAX_BUILD_PIECES,
};
pub use movegen::{perft, perft_by_moves, perft_parallel, Move};
pub use notation::{format_move, parse_move, FenError, MoveParseError};
pub use pack::{pack_dir, unpack_dir, PackError, PackReport};
pub use play::{
    best_move, legal_moves, line, scored_moves, Line, LineEnd, Metric, ParseMetricError, ScoredMove,
};
pub use probe::{max_cache_bytes, Dtc, ProbeError, ProbeStats, Tablebase, TablebaseBuilder};
pub use prove::search::{Goal, Outcome as ProofOutcome};
pub use prove::{
    prove, units_to_cover, GoalReport, Limit, ProveError, ProveOptions, ProveReport, Prover,
    Schedule, LAYER_BYTES_PER_POSITION,
};
pub use slice::{Material, Slice, SliceNameError};
pub use stats::{
    longest_dtc, longest_dtw, material_stats, missing_slices, read_dir_info, read_dir_info_all,
    scan_dir, FileInfo, LongestDtc, MaterialStats, StatsError,
};
pub use table::Access;
pub use verify::{verify_dir, verify_dir_opts, VerifyError, VerifyOptions, VerifyReport};

pub mod format {
    //! The table files, for programs that read (or write) them directly: the header
    //! ([`TableMeta`], [`FORMAT_VERSION`]), the WLD reader [`TableFile`] and the
    //! distance-to-conversion reader [`DtcFile`], the writers, the file names, and the dense
    //! index ([`SliceIndex`]) that maps a position of a slice to its offset in the file. The
    //! layout is described in docs/format.md. A program that only probes uses
    //! [`crate::Tablebase`]. [`cm`] (the range coder and adaptive probabilities of the
    //! context-model codecs) and [`cm6`] (their class walk) are here for codec experiments
    //! (`examples/cm*_experiment.rs`, `examples/dtc_codec_experiment.rs`).
    pub use crate::index::SliceIndex;
    pub use crate::rules::search::is_dont_care;
    pub use crate::table::cm;
    pub use crate::table::cm6;
    pub use crate::table::dtc::{decode_block_form, encode_block as encode_dtc_block, write_dtc};
    pub use crate::table::dtw::{dtw_path, open_dtw, slice_of_dtw_file_name, write_dtw};
    pub use crate::table::pack::{
        locate, material_of_pack_name, pack_path, read_index, Member, PackIndex, Source,
        PACK_MAGIC, PACK_VERSION,
    };
    pub use crate::table::{
        dir_rules, dtc_path, slice_of_dtc_file_name, slice_of_file_name, table_path, write_table,
        write_table_with, DtcFile, Fault, FileKind, FilePool, TableError, TableFile, TableMeta,
        WriteOptions, ANY_RULES, CODEC_2BIT_THREATS, CODEC_2BIT_ZSTD, CODEC_CM_BOOK,
        CODEC_CM_FILLED, CODEC_CM_THREATS, CODEC_DTC_BYTE, DEFAULT_MAX_OPEN_FILES, DONT_CARE,
        FORMAT_VERSION, HEADER_LEN, HEADER_SUMMED, RULES_ENGLISH,
    };
}

pub mod planning {
    //! The build plan, for programs that schedule or size a build: [`build_order`] lists the
    //! units ([`crate::Unit`]) of all slices with at most N pieces in dependency order,
    //! [`closure`] the units one slice needs; the position counts ([`positions_formula`] and
    //! its cross-checks); the memory model ([`predict`], [`unit_bytes_per_position`]) and the
    //! sizes of `--memory` options ([`parse_size`], [`format_size`], [`default_budget`]).
    pub use crate::count::{
        positions_by_slices, positions_formula, positions_of_material, slices_with_pieces,
    };
    pub use crate::generate::dtw::dtw_unit_bytes;
    pub use crate::memory::{
        budget_holding, default_budget, format_size, minimum_budget, parse_size, predict,
        predict_for, unit_bytes_per_position, unit_reads_decoded_bytes, unit_solve_bytes,
        SizeError, SizeProblem, StepPrediction, DTC_UNIT_BYTES_PER_POSITION,
        UNIT_BYTES_PER_POSITION,
    };
    pub use crate::plan::{build_order, closure};
}

pub mod driver {
    //! The build driver's seam, for a program that distributes a build over another
    //! transport (the `egdb build --mpi` runner is one): [`drive`] walks the plan and hands
    //! each unit to a [`Runner`], which solves it ([`solve_unit`], reading its dependencies
    //! through a [`DecodedTables`] store) and writes it ([`write_unit`]). The build directory's
    //! lock is [`DirLock`]. A program that only builds uses [`crate::build`].
    pub use crate::generate::split::{
        exchange_round_bytes, round_updates, run_local, set_round_updates_for_tests, Exchange,
        Partition, SplitStats, BLOCK_ALIGN, ROUND_UPDATES,
    };
    pub use crate::generate::{
        build_unit_split, drive, remove_stale_temp_files, solve_unit, solve_unit_split, split_unit,
        write_unit, BuildPlan, DirLock, LocalRunner, Runner, SolvedUnit, UnitJob, UnitOptions,
        LOCK_FILE,
    };
    pub use crate::store::{DecodedTables, StoreStats};
}

pub mod certificate {
    //! Proof certificates (docs/certificate.md): [`certificate_text`] writes the proofs a
    //! [`crate::Prover`] found, [`check_certificate`] and [`check_file`] check one
    //! independently of the prover, against the tables ([`table_set`]).
    pub use crate::proofcheck::{
        check_certificate, check_file, table_set, CheckError, CheckReport, CheckedProof, Claim,
        RootSummary, TableSet, MAX_FILE, MAX_LINE,
    };
    pub use crate::prove::cert::{
        certificate_text, check_writable, write_atomic, write_certificate, CertError, Proof,
    };
}
