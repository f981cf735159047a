//! Python bindings of the checkers-egdb probe library (PyO3, abi3): the module `checkers_egdb`.
//!
//! Everything goes through the public Rust API: [`Tablebase`] (`probe_wld` resolves captures,
//! `probe_wld_cached` is the cache-only probe, `stats`), [`Position`], the FEN parser and
//! [`Position::moves`]. Values are for the side to move. Errors keep the Rust messages:
//! `ValueError` for bad input (a bad FEN, an illegal position, more pieces than the tables
//! cover), `checkers_egdb.ProbeError` (a subclass of `OSError`) for table problems (no tables,
//! a missing or corrupt file, an I/O error). Batch calls release the GIL and run on rayon's
//! thread pool; results keep the input order whatever the thread count.

use checkers_egdb::format_move;
use checkers_egdb::rules::Variant;
use checkers_egdb::{AnyTablebase, LineEnd, Metric};
use checkers_egdb::{Color, Position, Wld};
use checkers_egdb::{Dtc, ProbeError as RustProbeError, Tablebase as RustTablebase};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rayon::prelude::*;

pyo3::create_exception!(
    checkers_egdb,
    ProbeError,
    PyOSError,
    "A table problem: no tables in the directory, a missing table (named), a corrupt file, an \
     I/O error. The message is the Rust library's."
);

/// The Python exception for a Rust probe error (message unchanged).
fn probe_err(e: RustProbeError) -> PyErr {
    match e {
        RustProbeError::InvalidPosition(_)
        | RustProbeError::TooManyPieces { .. }
        | RustProbeError::CapturePosition => PyValueError::new_err(e.to_string()),
        _ => ProbeError::new_err(e.to_string()),
    }
}

/// `ValueError` or `ProbeError` for a failure of item `i` of a batch: "item i: <message>".
fn batch_err(i: usize, e: PyErr, py: Python<'_>) -> PyErr {
    let msg = format!("item {i}: {}", e.value(py));
    if e.is_instance_of::<ProbeError>(py) {
        ProbeError::new_err(msg)
    } else {
        PyValueError::new_err(msg)
    }
}

fn parse(fen: &str) -> Result<Position, String> {
    Position::from_fen(fen).map_err(|e| format!("bad FEN: {e}"))
}

fn parse_py(fen: &str) -> PyResult<Position> {
    parse(fen).map_err(PyValueError::new_err)
}

/// Why one item of a batch failed, kept without the GIL.
enum ItemError {
    Fen(String),
    Probe(RustProbeError),
}

impl ItemError {
    fn into_py(self) -> PyErr {
        match self {
            ItemError::Fen(m) => PyValueError::new_err(m),
            ItemError::Probe(e) => probe_err(e),
        }
    }
}

/// Win/loss/draw tables of English checkers or another 8x8 variant, opened from a directory
/// of `*.egdb` files (a directory holds the tables of one variant).
///
/// `Tablebase(directory, cache_mb=64, rules=None)`: files are opened lazily on first use;
/// decompressed blocks are kept in a shared cache of `cache_mb` MiB (0 = none; more than half
/// the physical memory is reduced to that). The value, distance-to-conversion and
/// depth-to-win caches get this budget each: an object that also answers `probe_dtc`,
/// `probe_dtw` or `line` may hold up to three times `cache_mb`. `rules` (`"english"`, `"russian"`,
/// `"brazilian"`, `"italian"`, `"giveaway"`, `"pool"`, `"spanish"`, `"czech"`; default: the
/// rules in the files' headers): probes, moves and lines follow that variant's rules.
/// Thread-safe: share one object between threads.
///
/// Raises `ProbeError` when the directory cannot be read, holds no table files, or holds
/// tables of other rules than `rules` (naming both); `ValueError` for a negative `cache_mb`
/// or an unknown `rules` name.
#[pyclass(frozen, module = "checkers_egdb")]
struct Tablebase {
    tb: AnyTablebase,
}

fn value_i8(v: Wld) -> i8 {
    match v {
        Wld::Win => 1,
        Wld::Draw => 0,
        Wld::Loss => -1,
    }
}

/// `a` as a one-dimensional numpy array of integers in `0..=hi` (any integer or bool dtype;
/// an empty array of any dtype), returned as `u32` values (copied).
fn int_array(
    np: &Bound<'_, PyModule>,
    a: &Bound<'_, PyAny>,
    name: &str,
    hi: u64,
) -> PyResult<Vec<u32>> {
    let arr = np.call_method1("asarray", (a,))?;
    let ndim: usize = arr.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(PyValueError::new_err(format!(
            "{name} must be a one-dimensional array, got {ndim} dimensions"
        )));
    }
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    let n: usize = arr.getattr("size")?.extract()?;
    if n > 0 && !matches!(kind.as_str(), "u" | "i" | "b") {
        return Err(PyTypeError::new_err(format!(
            "{name} must hold integers, got dtype {}",
            arr.getattr("dtype")?.str()?
        )));
    }
    if n > 0 {
        let lo: i128 = arr
            .call_method0("min")?
            .call_method0("__int__")?
            .extract()?;
        let top: i128 = arr
            .call_method0("max")?
            .call_method0("__int__")?
            .extract()?;
        if lo < 0 || top > hi as i128 {
            return Err(PyValueError::new_err(format!(
                "{name} holds values outside 0..={hi} (min {lo}, max {top})"
            )));
        }
    }
    let c = np.call_method1("ascontiguousarray", (arr, "<u4"))?;
    let bytes = c.call_method0("tobytes")?;
    let bytes = bytes.cast::<PyBytes>()?.as_bytes();
    Ok(bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

#[pymethods]
impl Tablebase {
    #[new]
    #[pyo3(signature = (directory, cache_mb = 64, rules = None, max_open_files = 256))]
    fn new(
        py: Python<'_>,
        directory: std::path::PathBuf,
        cache_mb: i64,
        rules: Option<&str>,
        max_open_files: i64,
    ) -> PyResult<Self> {
        let max_open_files = usize::try_from(max_open_files)
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| {
                PyValueError::new_err(format!("max_open_files {max_open_files} is below 1"))
            })?;
        let mb = usize::try_from(cache_mb)
            .map_err(|_| PyValueError::new_err(format!("cache size {cache_mb} MiB is negative")))?;
        let rules = rules
            .map(|r| {
                r.parse::<Variant>()
                    .map_err(|e| PyValueError::new_err(e.to_string()))
            })
            .transpose()?;
        let tb = py
            .detach(|| {
                AnyTablebase::open_builder(
                    RustTablebase::builder(&directory)
                        .cache_bytes(mb.saturating_mul(1 << 20))
                        .max_open_files(max_open_files),
                    rules,
                )
            })
            .map_err(probe_err)?;
        Ok(Tablebase { tb })
    }

    /// The rules the tables are of: `"english"`, `"russian"`, ...
    #[getter]
    fn rules(&self) -> &'static str {
        self.tb.variant().name()
    }

    /// The table directory.
    #[getter]
    fn directory(&self) -> std::path::PathBuf {
        self.tb.dir().to_path_buf()
    }

    /// Largest piece count of any table file found.
    #[getter]
    fn max_pieces(&self) -> u32 {
        self.tb.max_pieces()
    }

    /// Value of the position `fen` (PDN FEN, e.g. `"W:WK19,K23:BK28,12"`) for the side to move:
    /// `"win"`, `"loss"` or `"draw"`. Captures are resolved by search.
    ///
    /// Raises `ValueError` (bad FEN, more pieces than the tables) or `ProbeError` (missing or
    /// corrupt table).
    fn probe(&self, py: Python<'_>, fen: &str) -> PyResult<&'static str> {
        let p = self.parse_py(fen)?;
        let v = py.detach(|| self.tb.probe_wld(&p)).map_err(probe_err)?;
        Ok(v.as_str())
    }

    /// As `probe`, but never reads a file or decompresses a block: `None` when the answer needs
    /// a block (or a table) that is not loaded yet (the "conditional" lookup of engines).
    fn probe_cached(&self, fen: &str) -> PyResult<Option<&'static str>> {
        let p = self.parse_py(fen)?;
        match self.tb.probe_wld_cached(&p) {
            Ok(v) => Ok(Some(v.as_str())),
            Err(RustProbeError::NotInCache) => Ok(None),
            Err(e) => Err(probe_err(e)),
        }
    }

    /// Values of many FENs, in input order (parsed and probed in parallel, the GIL released).
    ///
    /// Raises for the first failing item in input order, the message prefixed `item <i>: `.
    fn probe_many(&self, py: Python<'_>, fens: Vec<String>) -> PyResult<Vec<&'static str>> {
        let r: Vec<Result<&'static str, ItemError>> = py.detach(|| {
            fens.par_iter()
                .map(|f| {
                    let p = parse(f).map_err(ItemError::Fen)?;
                    self.tb
                        .probe_wld(&p)
                        .map(Wld::as_str)
                        .map_err(ItemError::Probe)
                })
                .collect()
        });
        r.into_iter()
            .enumerate()
            .map(|(i, v)| v.map_err(|e| batch_err(i, e.into_py(), py)))
            .collect()
    }

    /// Values of positions given as numpy arrays (the training-data case): `black`, `white`,
    /// `kings` (bitboards: bit i = square i+1; integer arrays of one length, values below
    /// 2**32) and `side` (0 = Black to move, 1 = White). Returns a new `numpy.int8` array:
    /// 1 win, 0 draw, -1 loss for the side to move. Probed in parallel, the GIL released.
    ///
    /// With `unknown` set, positions with more pieces than the tables cover get that value
    /// instead of raising; every other failure (an illegal position, a missing or corrupt
    /// table) raises for the first failing item, the message prefixed `item <i>: `.
    #[pyo3(signature = (black, white, kings, side, unknown = None))]
    fn probe_bitboards<'py>(
        &self,
        py: Python<'py>,
        black: &Bound<'py, PyAny>,
        white: &Bound<'py, PyAny>,
        kings: &Bound<'py, PyAny>,
        side: &Bound<'py, PyAny>,
        unknown: Option<i8>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let np = py.import("numpy")?;
        let b = int_array(&np, black, "black", u32::MAX as u64)?;
        let w = int_array(&np, white, "white", u32::MAX as u64)?;
        let k = int_array(&np, kings, "kings", u32::MAX as u64)?;
        let s = int_array(&np, side, "side", 1)?;
        let n = b.len();
        if w.len() != n || k.len() != n || s.len() != n {
            return Err(PyValueError::new_err(format!(
                "arrays differ in length: black {n}, white {}, kings {}, side {}",
                w.len(),
                k.len(),
                s.len()
            )));
        }
        let r: Vec<Result<i8, RustProbeError>> = py.detach(|| {
            (0..n)
                .into_par_iter()
                .map(|i| {
                    let color = if s[i] == 0 {
                        Color::Black
                    } else {
                        Color::White
                    };
                    let p = Position::new(b[i], w[i], k[i], color)
                        .map_err(RustProbeError::InvalidPosition)?;
                    match self.tb.probe_wld(&p) {
                        Ok(v) => Ok(value_i8(v)),
                        Err(RustProbeError::TooManyPieces { .. }) if unknown.is_some() => {
                            Ok(unknown.unwrap_or(0))
                        }
                        Err(e) => Err(e),
                    }
                })
                .collect()
        });
        let mut out = Vec::with_capacity(n);
        for (i, v) in r.into_iter().enumerate() {
            out.push(v.map_err(|e| batch_err(i, probe_err(e), py))? as u8);
        }
        let buf = PyBytes::new(py, &out);
        np.call_method1("frombuffer", (buf, "i1"))?
            .call_method0("copy")
    }

    /// Legal moves of `fen` under the tables' rules with their values for the side to move,
    /// in the order of the move generator (every capture path listed, as `egdb moves --rules`
    /// prints them): a list of `(move, value)`, e.g. `[("19-15", "win"), ...]`; moves are
    /// written `9-14` or `9x18x27`. Empty when the side to move has no move (the game is
    /// over: it has lost, or won in giveaway).
    ///
    /// Raises as `probe` for any successor.
    fn moves(&self, py: Python<'_>, fen: &str) -> PyResult<Vec<(String, &'static str)>> {
        let p = self.parse_py(fen)?;
        if p.piece_count() > self.tb.max_pieces() {
            // Successors may have fewer pieces; the position itself must be covered.
            return Err(probe_err(RustProbeError::TooManyPieces {
                pieces: p.piece_count(),
                max: self.tb.max_pieces(),
            }));
        }
        py.detach(|| {
            self.tb
                .moves(&p)
                .iter()
                .map(|m| {
                    let v = self.tb.probe_wld(&p.apply(m))?.negate();
                    Ok((format_move(m), v.as_str()))
                })
                .collect::<Result<Vec<_>, RustProbeError>>()
        })
        .map_err(probe_err)
    }

    /// Distance to conversion of `fen` (plies; a conversion is a capture or any man move; the
    /// winner converts as soon as possible, the loser as late as possible): `(value, plies)`,
    /// e.g. `("win", 33)`; plies `None` for a draw, `("loss", 0)` when the side to move has
    /// no move. Needs the `.dtc` files of `egdb build --dtc`.
    ///
    /// Raises as `probe`; `ProbeError` naming the slice when its `.dtc` file is missing.
    fn probe_dtc(&self, py: Python<'_>, fen: &str) -> PyResult<(&'static str, Option<u32>)> {
        let p = self.parse_py(fen)?;
        let d = py.detach(|| self.tb.probe_dtc(&p)).map_err(probe_err)?;
        Ok(dist_pair(d))
    }

    /// Depth to win of `fen` (plies to the end of the game, the winner playing fastest and
    /// the loser slowest, every move counted): `(value, plies)`, e.g. `("win", 11)`; wins odd,
    /// losses even; plies `None` for a draw. Needs the `.dtw` files of `egdb build --dtw`.
    ///
    /// Raises as `probe`; `ProbeError` naming the slice when its `.dtw` file is missing.
    fn probe_dtw(&self, py: Python<'_>, fen: &str) -> PyResult<(&'static str, Option<u32>)> {
        let p = self.parse_py(fen)?;
        let d = py.detach(|| self.tb.probe_dtw(&p)).map_err(probe_err)?;
        Ok(dist_pair(d))
    }

    /// The perfect line from `fen` by `metric` (`"dtw"`: the fastest win against the longest
    /// defence, to the end of the game; `"dtc"`: distance to conversion; default `None`:
    /// `"dtw"` where the position's `.dtw` file is present, else `"dtc"`), at most
    /// `max_plies` moves, as `egdb line --json` gives it: a dict with `start` (FEN),
    /// `metric`, `value` and the distance under the metric's name (`"dtw"` or `"dtc"`, `None`
    /// for a draw), `moves` (dicts with `move`, `conversion`, `after` (FEN), `value` and the
    /// distance of the position after the move for the side to move there), `rules` (the
    /// variant's name) and `end` (`"no_moves"`: the side to move has no move, so the game is
    /// over: it has lost, or won in giveaway; every won line ends so; `"repetition"`;
    /// `"max_plies"`). Moves follow the tables' rules.
    ///
    /// Raises as `probe`, `ValueError` for an unknown metric, `ProbeError` for a missing
    /// distance file.
    #[pyo3(signature = (fen, metric = None, max_plies = 1000))]
    fn line<'py>(
        &self,
        py: Python<'py>,
        fen: &str,
        metric: Option<&str>,
        max_plies: u32,
    ) -> PyResult<Bound<'py, PyDict>> {
        let p = self.parse_py(fen)?;
        let metric: Option<Metric> = metric
            .map(|m| {
                m.parse().map_err(|e: checkers_egdb::ParseMetricError| {
                    PyValueError::new_err(e.to_string())
                })
            })
            .transpose()?;
        let (metric, start, l) = py
            .detach(|| {
                let metric = match metric {
                    Some(m) => m,
                    None => self.tb.default_metric(&p)?,
                };
                let start = self.tb.probe_metric(&p, metric)?;
                let l = self.tb.line(&p, metric, max_plies)?;
                Ok::<_, RustProbeError>((metric, start, l))
            })
            .map_err(probe_err)?;
        let key = metric.as_str();
        let d = PyDict::new(py);
        d.set_item("start", p.to_fen())?;
        d.set_item("rules", self.tb.variant().name())?;
        d.set_item("metric", key)?;
        d.set_item("value", start.wld().as_str())?;
        d.set_item(key, start.plies())?;
        let moves = pyo3::types::PyList::empty(py);
        for m in &l.moves {
            let x = PyDict::new(py);
            x.set_item("move", format_move(&m.mv))?;
            x.set_item("conversion", m.conversion)?;
            x.set_item("after", m.after.to_fen())?;
            x.set_item("value", m.after_value.wld().as_str())?;
            x.set_item(key, m.after_value.plies())?;
            moves.append(x)?;
        }
        d.set_item("moves", moves)?;
        d.set_item(
            "end",
            match l.end {
                LineEnd::NoMoves => "no_moves",
                LineEnd::Repetition => "repetition",
                LineEnd::MaxPlies => "max_plies",
            },
        )?;
        Ok(d)
    }

    /// Counters since opening, a dict: `probes`, `cache_hits`, `cache_misses`,
    /// `blocks_decoded`, `blocks_failed`, `cached_blocks`, `cached_bytes`, `slices_opened`,
    /// `threat_searches`, `threat_memo_hits`, `open_files`, `files_reopened`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.tb.stats();
        let d = PyDict::new(py);
        d.set_item("probes", s.probes)?;
        d.set_item("cache_hits", s.cache_hits)?;
        d.set_item("cache_misses", s.cache_misses)?;
        d.set_item("blocks_decoded", s.blocks_decoded)?;
        d.set_item("blocks_failed", s.blocks_failed)?;
        d.set_item("cached_blocks", s.cached_blocks)?;
        d.set_item("cached_bytes", s.cached_bytes)?;
        d.set_item("slices_opened", s.slices_opened)?;
        d.set_item("threat_searches", s.threat_searches)?;
        d.set_item("threat_memo_hits", s.threat_memo_hits)?;
        d.set_item("open_files", s.open_files)?;
        d.set_item("files_reopened", s.files_reopened)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "Tablebase({:?}, rules={:?}, max_pieces={})",
            self.tb.dir().display().to_string(),
            self.tb.variant().name(),
            self.tb.max_pieces()
        )
    }
}

impl Tablebase {
    /// `fen` parsed and checked as a position of the tables' variant ([`Variant::parse_fen`]);
    /// `ValueError` naming the fault.
    fn parse_py(&self, fen: &str) -> PyResult<Position> {
        self.tb
            .variant()
            .parse_fen(fen)
            .map_err(|e| PyValueError::new_err(format!("bad FEN: {e}")))
    }
}

/// `(value, plies)` of a distance (plies `None` for a draw).
fn dist_pair(d: Dtc) -> (&'static str, Option<u32>) {
    (d.wld().as_str(), d.plies())
}

/// Bitboards of a FEN: `(black, white, kings, side)`, bit i = square i+1, side 0 = Black to
/// move, 1 = White. Raises `ValueError` naming the fault.
#[pyfunction]
fn parse_fen(fen: &str) -> PyResult<(u32, u32, u32, u8)> {
    let p = parse_py(fen)?;
    Ok((p.black, p.white, p.kings, (p.side == Color::White) as u8))
}

/// Canonical FEN of bitboards (as `parse_fen` returns them). Raises `ValueError` for an
/// illegal position.
#[pyfunction]
#[pyo3(signature = (black, white, kings, side))]
fn to_fen(black: u32, white: u32, kings: u32, side: u8) -> PyResult<String> {
    let color = match side {
        0 => Color::Black,
        1 => Color::White,
        _ => return Err(PyValueError::new_err(format!("side {side} is not 0 or 1"))),
    };
    let p = Position::new(black, white, kings, color)
        .map_err(|e| PyValueError::new_err(format!("invalid position: {e}")))?;
    Ok(p.to_fen())
}

/// Endgame tables of English checkers (8x8, short kings): win/loss/draw values for the side
/// to move, from directories built by `egdb build`.
#[pymodule]
#[pyo3(name = "checkers_egdb")]
fn checkers_egdb_py(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tablebase>()?;
    m.add("ProbeError", m.py().get_type::<ProbeError>())?;
    m.add_function(wrap_pyfunction!(parse_fen, m)?)?;
    m.add_function(wrap_pyfunction!(to_fen, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
