//! A KingsRow-compatible endgame driver over checkers-egdb tables: `libegdb_kingsrow.so`
//! exports exactly [`egdb_identify`], [`egdb_open`] and [`egdb_version`] with the calling
//! conventions of the driver API that English-checkers engines (Cake, GuiNN Checkers,
//! GuiCheckers, DarkHorse) already call; the C/C++ header is `kingsrow/include/egdb_kingsrow.h`.
//!
//! This is a separate library from the project's own C ABI (`capi/`: `libegdb.so`, header
//! `capi/include/egdb.h`, whose `egdb_open(dir, cache_mb, ...)` has another signature); the two
//! are never linked into one library.
//!
//! Semantics, as the published API defines them:
//! - `egdb_open(bitboard_type, pieces, cache_mb, directory, msg_fn)` returns an [`EgdbDriver`]
//!   (function pointers plus an opaque pointer) or NULL after sending the reason to `msg_fn`;
//! - two board layouts: [`EGDB_NORMAL`] (`black`, `white`, `king` words, bit i = square i+1)
//!   and [`EGDB_ROW_REVERSED`] (Cake's `black_man`, `black_king`, `white_man`, `white_king`
//!   with the four bits of every row reversed);
//! - `lookup` answers [`EGDB_WIN`], [`EGDB_LOSS`], [`EGDB_DRAW`], [`EGDB_UNKNOWN`],
//!   [`EGDB_NOT_IN_CACHE`] (conditional lookups never read a file or decode a block),
//!   [`EGDB_SUBDB_UNAVAILABLE`]. Unlike KingsRow's own tables, capture positions get their
//!   true value (captures are resolved by search, [`Tablebase::probe_wld`]).
//!
//! Three kinds of handle, chosen by the directory given to [`egdb_identify`] and
//! [`egdb_open`] (engines configure one directory per kind):
//! - the table directory itself: win/loss/draw, [`EGDB_KINGSROW32_WLD`];
//! - `<tables>/mtc` (the path need not exist; `<tables>` holds the `.dtc` files of
//!   `egdb build --dtc`): moves to conversion, [`EGDB_KINGSROW32_MTC`], with KingsRow's
//!   published MTC semantics (`MTC_THRESHOLD` 10, `MTC_LESS_THAN_THRESHOLD` 1; the
//!   conversion rule of our DTC: a capture or a man move): a won or lost position whose
//!   distance to conversion d (plies) is at least 10 answers d rounded up to even (d or d + 1;
//!   KingsRow stores d / 2 rounded up, so the true distance is the answer or one less); a
//!   distance below 10, a draw, or a position not covered (too many pieces, illegal) answers
//!   [`MTC_LESS_THAN_THRESHOLD`] (1): a client then searches, as with KingsRow's tables;
//! - `<tables>/dtw` (the `.dtw` files of `egdb build --dtw`): depth to win,
//!   [`EGDB_KINGSROW_DTW`], in the unit KingsRow's DTW clients read (moves: a win of d plies,
//!   d odd, answers (d - 1) / 2, a loss of d plies, d even, answers d / 2; the client knows
//!   the value from its WLD handle and takes 2v + 1 or 2v plies); capture positions answer
//!   too; a draw or a position not covered answers [`EGDB_DTW_NO_DEPTH`] (-3), negative like
//!   every answer that is not a depth.
//!
//! On MTC and DTW handles a conditional lookup always answers [`EGDB_NOT_IN_CACHE`] (there is
//! no cache-only distance probe; KingsRow's clients probe distances at the root only, never
//! conditionally), and a missing distance file [`EGDB_SUBDB_UNAVAILABLE`].
//!
//! No function unwinds across the boundary: a panic becomes [`EGDB_UNKNOWN`] (lookup), NULL
//! (open) or a non-zero status.

use checkers_egdb::format::TableFile;
use checkers_egdb::planning::build_order;
use checkers_egdb::scan_dir;
use checkers_egdb::Slice;
use checkers_egdb::{Color, Position, Wld};
use checkers_egdb::{Dtc, ProbeError, ProbeStats, Tablebase};
use std::cell::UnsafeCell;
use std::collections::HashSet;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// A needed table file is missing from the directory.
pub const EGDB_SUBDB_UNAVAILABLE: c_int = -2;
/// A conditional lookup would need to read a file or decode a block.
pub const EGDB_NOT_IN_CACHE: c_int = -1;
/// No value: more pieces than the driver was opened for, bad arguments, or a file error.
pub const EGDB_UNKNOWN: c_int = 0;
/// The side to move wins.
pub const EGDB_WIN: c_int = 1;
/// The side to move loses.
pub const EGDB_LOSS: c_int = 2;
/// Draw.
pub const EGDB_DRAW: c_int = 3;

/// `EGDB_TYPE` value of a KingsRow 32-bit win/loss/draw database, the kind this driver
/// reports for a table directory (clients accept it as a WLD database).
pub const EGDB_KINGSROW32_WLD: c_int = 4;
/// `EGDB_TYPE` value of a KingsRow 32-bit moves-to-conversion database, reported for
/// `<tables>/mtc`.
pub const EGDB_KINGSROW32_MTC: c_int = 5;
/// `EGDB_TYPE` value of a KingsRow depth-to-win database, reported for `<tables>/dtw`.
pub const EGDB_KINGSROW_DTW: c_int = 11;
/// MTC lookup: the distance to conversion is below [`MTC_THRESHOLD`] plies (also a draw, or a
/// position not covered).
pub const MTC_LESS_THAN_THRESHOLD: c_int = 1;
/// The smallest distance to conversion (plies) an MTC lookup gives.
pub const MTC_THRESHOLD: c_int = 10;
/// DTW lookup: no depth (a draw, or a position not covered: too many pieces, illegal, a file
/// error). This driver's own code; KingsRow's clients treat any negative answer as "no depth".
pub const EGDB_DTW_NO_DEPTH: c_int = -3;

/// The kind of a handle, from the directory's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Win/loss/draw: the table directory.
    Wld,
    /// Moves to conversion: `<tables>/mtc`, the `.dtc` files.
    Mtc,
    /// Depth to win: `<tables>/dtw`, the `.dtw` files.
    Dtw,
}

impl Kind {
    /// The `EGDB_TYPE` reported.
    fn type_id(self) -> c_int {
        match self {
            Kind::Wld => EGDB_KINGSROW32_WLD,
            Kind::Mtc => EGDB_KINGSROW32_MTC,
            Kind::Dtw => EGDB_KINGSROW_DTW,
        }
    }
    /// The distance files' extension, if any.
    fn ext(self) -> Option<&'static str> {
        match self {
            Kind::Wld => None,
            Kind::Mtc => Some("dtc"),
            Kind::Dtw => Some("dtw"),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Kind::Wld => "win/loss/draw",
            Kind::Mtc => "moves to conversion",
            Kind::Dtw => "depth to win",
        }
    }
}

/// The table directory and handle kind a client's directory stands for: a directory named
/// `mtc` or `dtw` (any case) that holds no table file is its parent's tables by that metric;
/// any other directory is win/loss/draw.
fn resolve_dir(dir: &Path) -> (PathBuf, Kind) {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_ascii_lowercase);
    let kind = match name.as_deref() {
        Some("mtc") => Kind::Mtc,
        Some("dtw") => Kind::Dtw,
        _ => return (dir.to_path_buf(), Kind::Wld),
    };
    let own_tables = scan_dir(dir).is_ok_and(|f| !f.is_empty());
    match dir.parent() {
        Some(parent) if !own_tables => (
            if parent.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                parent.to_path_buf()
            },
            kind,
        ),
        _ => (dir.to_path_buf(), Kind::Wld),
    }
}

/// Board layout `EGDB_NORMAL`: [`NormalBitboard`].
pub const EGDB_NORMAL: c_int = 0;
/// Board layout `EGDB_ROW_REVERSED`: [`RowReversedBitboard`].
pub const EGDB_ROW_REVERSED: c_int = 1;

/// Driver version, `major * 10000 + minor * 100 + patch` of this crate (exported as the data
/// symbol `egdb_version`).
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static egdb_version: c_uint = version();

const fn parse_u(s: &str) -> c_uint {
    let b = s.as_bytes();
    let mut v: c_uint = 0;
    let mut i = 0;
    while i < b.len() {
        v = v * 10 + (b[i] - b'0') as c_uint;
        i += 1;
    }
    v
}

const fn version() -> c_uint {
    parse_u(env!("CARGO_PKG_VERSION_MAJOR")) * 10000
        + parse_u(env!("CARGO_PKG_VERSION_MINOR")) * 100
        + parse_u(env!("CARGO_PKG_VERSION_PATCH"))
}

/// `EGDB_NORMAL_BITBOARD`: bit i = square i+1; `king` marks kings of both colours.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct NormalBitboard {
    /// Black pieces.
    pub black: c_uint,
    /// White pieces.
    pub white: c_uint,
    /// Kings of either colour.
    pub king: c_uint,
}

/// `EGDB_ROW_REVERSED_BITBOARD`: Cake's layout, each row's four bits reversed (square 1 =
/// bit 3, square 2 = bit 2, square 3 = bit 1, square 4 = bit 0, square 5 = bit 7, ...).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RowReversedBitboard {
    /// Black men.
    pub black_man: c_uint,
    /// Black kings.
    pub black_king: c_uint,
    /// White men.
    pub white_man: c_uint,
    /// White kings.
    pub white_king: c_uint,
}

/// `EGDB_BITBOARD`: the union of the two layouts (16 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub union EgdbBitboard {
    /// Used when the driver was opened with [`EGDB_NORMAL`].
    pub normal: NormalBitboard,
    /// Used when the driver was opened with [`EGDB_ROW_REVERSED`].
    pub row_reversed: RowReversedBitboard,
}

/// `EGDB_STATS`: six counters since opening or the last `reset_stats`, saturating at
/// `u32::MAX`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EgdbStats {
    /// Table reads answered from the block cache.
    pub lru_cache_hits: c_uint,
    /// Blocks read and decompressed into the cache.
    pub lru_cache_loads: c_uint,
    /// Always 0 (KingsRow counts hits in tables it preloads whole; there are none here).
    pub autoload_hits: c_uint,
    /// `lookup` calls.
    pub db_requests: c_uint,
    /// Lookups answered win, loss or draw.
    pub db_returns: c_uint,
    /// Lookups answered [`EGDB_UNKNOWN`] or [`EGDB_SUBDB_UNAVAILABLE`].
    pub db_not_present_requests: c_uint,
}

/// The message callback: receives a NUL-terminated line (ending in `\n`).
pub type MsgFn = unsafe extern "C" fn(*mut c_char);

/// `EGDB_DRIVER` (`struct egdb_driver`): the handle returned by [`egdb_open`]. Clients call the
/// function pointers with the handle as first argument; `internal_data` is the driver's.
#[repr(C)]
pub struct EgdbDriver {
    /// `lookup(handle, position, color, conditional)`.
    pub lookup: unsafe extern "C" fn(*mut EgdbDriver, *mut EgdbBitboard, c_int, c_int) -> c_int,
    /// `reset_stats(handle)`.
    pub reset_stats: unsafe extern "C" fn(*mut EgdbDriver),
    /// `get_stats(handle)`: pointer to counters owned by the handle.
    pub get_stats: unsafe extern "C" fn(*mut EgdbDriver) -> *mut EgdbStats,
    /// `verify(handle)`: 0 when every file's checksum is good.
    pub verify: unsafe extern "C" fn(*mut EgdbDriver) -> c_int,
    /// `close(handle)`: 0 on success.
    pub close: unsafe extern "C" fn(*mut EgdbDriver) -> c_int,
    /// Points to the driver's state.
    pub internal_data: *mut c_void,
}

/// Handle allocation: the public struct first, so a `*mut EgdbDriver` is a `*mut Handle`.
#[repr(C)]
struct Handle {
    driver: EgdbDriver,
    state: State,
}

struct State {
    tb: Tablebase,
    kind: Kind,
    dir: PathBuf,
    row_reversed: bool,
    pieces: u32,
    msg: Option<MsgFn>,
    requests: AtomicU64,
    returns: AtomicU64,
    not_present: AtomicU64,
    /// Set once a file error has been reported through `msg`.
    reported: AtomicBool,
    /// Counters at the last reset (tablebase counters since opening, then the driver's).
    base: Mutex<(ProbeStats, [u64; 3])>,
    /// What `get_stats` returns a pointer to; written under `base`'s lock.
    out: UnsafeCell<EgdbStats>,
}

// SAFETY: `out` is only written while `base` is locked; everything else is `Sync`.
unsafe impl Sync for State {}

/// Addresses of live handles, so that `close` can refuse NULL, foreign or closed handles.
static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

fn send(msg: Option<MsgFn>, text: &str) {
    if let Some(f) = msg {
        let line = format!("{}\n", text.trim_end()).replace('\0', " ");
        if let Ok(c) = CString::new(line) {
            let raw = c.into_raw();
            // SAFETY: `raw` is a valid, writable, NUL-terminated buffer we own.
            let _ = catch_unwind(|| unsafe { f(raw) });
            // SAFETY: `raw` came from `CString::into_raw` just above.
            drop(unsafe { CString::from_raw(raw) });
        }
    }
}

/// Reverse the bit order inside each 4-bit group (each board row): the conversion between
/// the row-reversed layout and ours, its own inverse.
#[inline(always)]
pub const fn reverse_rows(x: u32) -> u32 {
    let x = ((x & 0x5555_5555) << 1) | ((x >> 1) & 0x5555_5555);
    ((x & 0x3333_3333) << 2) | ((x >> 2) & 0x3333_3333)
}

/// The position a board in `layout` describes, with `color` (0 Black, 1 White) to move; `None`
/// for an illegal board (a square used twice, a man on its crowning row, ...) or color.
///
/// # Safety
/// `pos` must point to a readable `EgdbBitboard` of the given layout.
pub unsafe fn position_of(
    pos: &EgdbBitboard,
    row_reversed: bool,
    color: c_int,
) -> Option<Position> {
    let side = match color {
        0 => Color::Black,
        1 => Color::White,
        _ => return None,
    };
    let (black, white, kings) = if row_reversed {
        let b = pos.row_reversed;
        let (bm, bk, wm, wk) = (
            reverse_rows(b.black_man),
            reverse_rows(b.black_king),
            reverse_rows(b.white_man),
            reverse_rows(b.white_king),
        );
        if bm & bk != 0 || wm & wk != 0 {
            return None;
        }
        (bm | bk, wm | wk, bk | wk)
    } else {
        let b = pos.normal;
        (b.black, b.white, b.king)
    };
    Position::new(black, white, kings, side).ok()
}

/// Largest `n` such that every table file of 1..=n pieces is in `dir` (0 if none), and the
/// first missing slice above it when some file of more pieces exists. With `kind` MTC or DTW
/// every slice also needs its distance file (`.dtc` or `.dtw`).
fn complete_pieces(dir: &Path, kind: Kind) -> std::io::Result<(u32, Option<Slice>)> {
    let files = scan_dir(dir)?;
    let mut present: HashSet<Slice> = files.iter().map(|(s, _)| *s).collect();
    if let Some(ext) = kind.ext() {
        present.retain(|s| dir.join(format!("{s}.{ext}")).is_file());
    }
    let top = present
        .iter()
        .map(|s| s.material.pieces())
        .max()
        .unwrap_or(0);
    let mut n = 0;
    while n < top {
        let missing = build_order(n + 1)
            .into_iter()
            .filter(|u| u.pieces == n + 1)
            .flat_map(|u| u.slices)
            .find(|s| !present.contains(s));
        if let Some(s) = missing {
            return Ok((n, Some(s)));
        }
        n += 1;
    }
    Ok((n, None))
}

fn dir_arg(directory: *const c_char) -> Result<PathBuf, String> {
    if directory.is_null() {
        return Err("the directory is NULL".to_string());
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let d = unsafe { CStr::from_ptr(directory) }
        .to_str()
        .map_err(|_| "the directory name is not UTF-8".to_string())?;
    Ok(PathBuf::from(d))
}

/// Look for tables in `directory`: 0 when a complete set of 1..=n pieces exists, with
/// `*egdb_type` = [`EGDB_KINGSROW32_WLD`] and `*max_pieces` = n; for `<tables>/mtc`
/// [`EGDB_KINGSROW32_MTC`] and the largest n whose slices all have `.dtc` files too, for
/// `<tables>/dtw` [`EGDB_KINGSROW_DTW`] (`.dtw` files); 1 otherwise (NULL or missing
/// directory, no table files, 1-piece tables missing), the outputs then untouched.
///
/// # Safety
/// `directory` NULL or NUL-terminated; `egdb_type` and `max_pieces` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn egdb_identify(
    directory: *const c_char,
    egdb_type: *mut c_int,
    max_pieces: *mut c_int,
) -> c_int {
    let r = catch_unwind(|| {
        let (dir, kind) = resolve_dir(&dir_arg(directory).ok()?);
        let (n, _) = complete_pieces(&dir, kind).ok()?;
        (n > 0).then_some((n, kind))
    });
    match r {
        Ok(Some((n, kind))) => {
            if !egdb_type.is_null() {
                *egdb_type = kind.type_id();
            }
            if !max_pieces.is_null() {
                *max_pieces = n as c_int;
            }
            0
        }
        _ => 1,
    }
}

fn open_state(
    bitboard_type: c_int,
    pieces: c_int,
    cache_mb: c_int,
    directory: *const c_char,
    msg: Option<MsgFn>,
) -> Result<State, String> {
    let row_reversed = match bitboard_type {
        EGDB_NORMAL => false,
        EGDB_ROW_REVERSED => true,
        t => {
            return Err(format!(
                "bitboard type {t} is neither EGDB_NORMAL (0) nor EGDB_ROW_REVERSED (1)"
            ))
        }
    };
    let (dir, kind) = resolve_dir(&dir_arg(directory)?);
    let mb =
        usize::try_from(cache_mb).map_err(|_| format!("cache size {cache_mb} MiB is negative"))?;
    let (max, missing) =
        complete_pieces(&dir, kind).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    if max == 0 {
        return Err(match (missing, kind.ext()) {
            (Some(s), None) => format!("{}: table {s} is missing", dir.display()),
            (Some(s), Some(ext)) => format!(
                "{}: table {s} or its {ext} file is missing (egdb build --{ext})",
                dir.display()
            ),
            (None, None) => format!("no table files (*.egdb) in {}", dir.display()),
            (None, Some(ext)) => format!(
                "no table files with .{ext} files in {} (egdb build --{ext})",
                dir.display()
            ),
        });
    }
    if pieces < 1 || pieces as u32 > max {
        return Err(format!(
            "{pieces} pieces requested; {} holds complete tables of 1 to {max} pieces",
            dir.display()
        ));
    }
    // Positioned reads: a table file rewritten under the engine is an error, not SIGBUS.
    let tb = Tablebase::builder(&dir)
        .access(checkers_egdb::Access::Pread)
        .cache_bytes(mb.saturating_mul(1 << 20))
        .open()
        .map_err(|e| e.to_string())?;
    Ok(State {
        tb,
        kind,
        dir,
        row_reversed,
        pieces: pieces as u32,
        msg,
        requests: AtomicU64::new(0),
        returns: AtomicU64::new(0),
        not_present: AtomicU64::new(0),
        reported: AtomicBool::new(false),
        base: Mutex::new((ProbeStats::default(), [0; 3])),
        out: UnsafeCell::new(EgdbStats::default()),
    })
}

/// Open the tables in `directory` for lookups of positions with at most `pieces` pieces
/// (1..=what [`egdb_identify`] reports), boards in layout `bitboard_type` ([`EGDB_NORMAL`] or
/// [`EGDB_ROW_REVERSED`]), with a block cache of `cache_mb` MiB (0 = none). Returns the handle,
/// or NULL after sending the reason to `msg_fn` (which may be NULL).
///
/// # Safety
/// `directory` NULL or NUL-terminated; `msg_fn` NULL or a function taking a `char *`.
#[no_mangle]
pub unsafe extern "C" fn egdb_open(
    bitboard_type: c_int,
    pieces: c_int,
    cache_mb: c_int,
    directory: *const c_char,
    msg_fn: Option<MsgFn>,
) -> *mut EgdbDriver {
    let r = catch_unwind(AssertUnwindSafe(|| {
        open_state(bitboard_type, pieces, cache_mb, directory, msg_fn)
    }));
    let state = match r {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            send(msg_fn, &format!("egdb_open: {e}"));
            return std::ptr::null_mut();
        }
        Err(_) => {
            send(msg_fn, "egdb_open: internal error (panic)");
            return std::ptr::null_mut();
        }
    };
    send(
        msg_fn,
        &format!(
            "egdb_open: checkers-egdb {} tables of up to {} pieces in {}, {} MiB cache, {} boards",
            state.kind.name(),
            state.pieces,
            state.dir.display(),
            cache_mb,
            if state.row_reversed {
                "row-reversed"
            } else {
                "normal"
            }
        ),
    );
    let h = Box::into_raw(Box::new(Handle {
        driver: EgdbDriver {
            lookup,
            reset_stats,
            get_stats,
            verify,
            close,
            internal_data: std::ptr::null_mut(),
        },
        state,
    }));
    (*h).driver.internal_data = std::ptr::addr_of_mut!((*h).state) as *mut c_void;
    LIVE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert(h as usize);
    h as *mut EgdbDriver
}

#[inline(always)]
unsafe fn state<'a>(h: *mut EgdbDriver) -> Option<&'a State> {
    if h.is_null() || (*h).internal_data.is_null() {
        return None;
    }
    Some(&*((*h).internal_data as *const State))
}

unsafe extern "C" fn lookup(
    h: *mut EgdbDriver,
    pos: *mut EgdbBitboard,
    color: c_int,
    conditional: c_int,
) -> c_int {
    let Some(s) = state(h) else {
        return EGDB_UNKNOWN;
    };
    s.requests.fetch_add(1, Ordering::Relaxed);
    if s.kind != Kind::Wld {
        let r = catch_unwind(AssertUnwindSafe(|| {
            lookup_distance(s, pos, color, conditional)
        }));
        let (code, answered) = r.unwrap_or((no_distance(s.kind), false));
        if answered {
            s.returns.fetch_add(1, Ordering::Relaxed);
        } else if code != EGDB_NOT_IN_CACHE {
            s.not_present.fetch_add(1, Ordering::Relaxed);
        }
        return code;
    }
    let r = catch_unwind(AssertUnwindSafe(|| lookup_in(s, pos, color, conditional)));
    let code = r.unwrap_or(EGDB_UNKNOWN);
    match code {
        EGDB_WIN | EGDB_LOSS | EGDB_DRAW => s.returns.fetch_add(1, Ordering::Relaxed),
        EGDB_UNKNOWN | EGDB_SUBDB_UNAVAILABLE => s.not_present.fetch_add(1, Ordering::Relaxed),
        _ => 0,
    };
    code
}

/// The answer of an MTC or DTW handle for "no distance": [`MTC_LESS_THAN_THRESHOLD`] or
/// [`EGDB_DTW_NO_DEPTH`].
fn no_distance(kind: Kind) -> c_int {
    if kind == Kind::Mtc {
        MTC_LESS_THAN_THRESHOLD
    } else {
        EGDB_DTW_NO_DEPTH
    }
}

/// KingsRow's MTC answer for a distance to conversion ([module docs](self)).
pub fn mtc_code(d: Dtc) -> c_int {
    match d.plies() {
        Some(n) if n >= MTC_THRESHOLD as u32 => c_int::try_from(n + (n & 1)).unwrap_or(c_int::MAX),
        _ => MTC_LESS_THAN_THRESHOLD,
    }
}

/// KingsRow's DTW answer for a depth to win ([module docs](self)): the depth in moves,
/// `plies / 2` rounded down; [`EGDB_DTW_NO_DEPTH`] for a draw.
pub fn dtw_code(d: Dtc) -> c_int {
    match d.plies() {
        Some(n) => c_int::try_from(n / 2).unwrap_or(c_int::MAX),
        None => EGDB_DTW_NO_DEPTH,
    }
}

/// A lookup on an MTC or DTW handle: the code, and whether it is a value (counted in
/// `db_returns`; else `db_not_present_requests`, except [`EGDB_NOT_IN_CACHE`]).
unsafe fn lookup_distance(
    s: &State,
    pos: *mut EgdbBitboard,
    color: c_int,
    conditional: c_int,
) -> (c_int, bool) {
    let none = (no_distance(s.kind), false);
    if pos.is_null() {
        return none;
    }
    let Some(p) = position_of(&*pos, s.row_reversed, color) else {
        return none;
    };
    if p.piece_count() > s.pieces {
        return none;
    }
    if conditional != 0 {
        return (EGDB_NOT_IN_CACHE, false);
    }
    let r = if s.kind == Kind::Mtc {
        s.tb.probe_dtc(&p).map(mtc_code)
    } else {
        s.tb.probe_dtw(&p).map(dtw_code)
    };
    match r {
        Ok(code) => (code, true),
        Err(
            ProbeError::MissingSlice { .. }
            | ProbeError::MissingDtc { .. }
            | ProbeError::MissingDtw { .. },
        ) => (EGDB_SUBDB_UNAVAILABLE, false),
        Err(ProbeError::TooManyPieces { .. }) | Err(ProbeError::InvalidPosition(_)) => none,
        Err(e) => {
            if !s.reported.swap(true, Ordering::Relaxed) {
                send(s.msg, &format!("egdb lookup: {e}"));
            }
            none
        }
    }
}

#[inline]
unsafe fn lookup_in(s: &State, pos: *mut EgdbBitboard, color: c_int, conditional: c_int) -> c_int {
    if pos.is_null() {
        return EGDB_UNKNOWN;
    }
    let Some(p) = position_of(&*pos, s.row_reversed, color) else {
        return EGDB_UNKNOWN;
    };
    if p.piece_count() > s.pieces {
        return EGDB_UNKNOWN;
    }
    let r = if conditional != 0 {
        s.tb.probe_wld_cached(&p)
    } else {
        s.tb.probe_wld(&p)
    };
    match r {
        Ok(Wld::Win) => EGDB_WIN,
        Ok(Wld::Loss) => EGDB_LOSS,
        Ok(Wld::Draw) => EGDB_DRAW,
        Err(ProbeError::NotInCache) => EGDB_NOT_IN_CACHE,
        Err(ProbeError::MissingSlice { .. }) => EGDB_SUBDB_UNAVAILABLE,
        Err(ProbeError::TooManyPieces { .. }) | Err(ProbeError::InvalidPosition(_)) => EGDB_UNKNOWN,
        Err(e) => {
            if !s.reported.swap(true, Ordering::Relaxed) {
                send(s.msg, &format!("egdb lookup: {e}"));
            }
            EGDB_UNKNOWN
        }
    }
}

fn sat(x: u64) -> c_uint {
    c_uint::try_from(x).unwrap_or(c_uint::MAX)
}

unsafe extern "C" fn reset_stats(h: *mut EgdbDriver) {
    if let Some(s) = state(h) {
        let mut b = s.base.lock().unwrap_or_else(|e| e.into_inner());
        *b = (
            s.tb.stats(),
            [
                s.requests.load(Ordering::Relaxed),
                s.returns.load(Ordering::Relaxed),
                s.not_present.load(Ordering::Relaxed),
            ],
        );
    }
}

unsafe extern "C" fn get_stats(h: *mut EgdbDriver) -> *mut EgdbStats {
    let Some(s) = state(h) else {
        return std::ptr::null_mut();
    };
    let b = s.base.lock().unwrap_or_else(|e| e.into_inner());
    let (t0, d0) = *b;
    let t = s.tb.stats();
    let v = EgdbStats {
        lru_cache_hits: sat(t.cache_hits.saturating_sub(t0.cache_hits)),
        lru_cache_loads: sat(t.blocks_decoded.saturating_sub(t0.blocks_decoded)),
        autoload_hits: 0,
        db_requests: sat(s.requests.load(Ordering::Relaxed).saturating_sub(d0[0])),
        db_returns: sat(s.returns.load(Ordering::Relaxed).saturating_sub(d0[1])),
        db_not_present_requests: sat(s.not_present.load(Ordering::Relaxed).saturating_sub(d0[2])),
    };
    // SAFETY: written only while `base` is locked (held here).
    *s.out.get() = v;
    drop(b);
    s.out.get()
}

unsafe extern "C" fn verify(h: *mut EgdbDriver) -> c_int {
    let Some(s) = state(h) else {
        return 1;
    };
    let r = catch_unwind(AssertUnwindSafe(|| {
        let files = match scan_dir(&s.dir) {
            Ok(f) => f,
            Err(e) => {
                send(
                    s.msg,
                    &format!("egdb verify: cannot read {}: {e}", s.dir.display()),
                );
                return 1;
            }
        };
        let mut bad = 0;
        for (slice, path) in files
            .iter()
            .filter(|(sl, _)| sl.material.pieces() <= s.pieces)
        {
            if let Err(e) = TableFile::open(path).and_then(|t| t.verify_checksum()) {
                let e = ProbeError::from(e);
                send(s.msg, &format!("egdb verify: slice {slice}: {e}"));
                bad += 1;
            }
            // The distance file of an MTC or DTW handle too.
            let kind = match s.kind {
                Kind::Wld => continue,
                Kind::Mtc => checkers_egdb::format::FileKind::Dtc,
                Kind::Dtw => checkers_egdb::format::FileKind::Dtw,
            };
            let ext = s.kind.ext().unwrap_or_default();
            let d = s.dir.join(format!("{slice}.{ext}"));
            if let Err(e) = checkers_egdb::format::DtcFile::open_kind(
                &d,
                checkers_egdb::format::RULES_ENGLISH,
                kind,
            )
            .and_then(|t| t.verify_checksum())
            {
                let e = ProbeError::from(e);
                send(s.msg, &format!("egdb verify: slice {slice}.{ext}: {e}"));
                bad += 1;
            }
        }
        match complete_pieces(&s.dir, s.kind) {
            Ok((n, _)) if n >= s.pieces => {}
            Ok((_, missing)) => {
                let what = missing.map(|m| m.to_string()).unwrap_or_default();
                send(s.msg, &format!("egdb verify: table {what} is missing"));
                bad += 1;
            }
            Err(e) => {
                send(
                    s.msg,
                    &format!("egdb verify: cannot read {}: {e}", s.dir.display()),
                );
                bad += 1;
            }
        }
        if bad == 0 {
            send(s.msg, &format!("egdb verify: {} files good", files.len()));
        }
        c_int::from(bad != 0)
    }));
    r.unwrap_or(1)
}

unsafe extern "C" fn close(h: *mut EgdbDriver) -> c_int {
    if h.is_null() {
        return 1;
    }
    let live = LIVE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
        .is_some_and(|set| set.remove(&(h as usize)));
    if !live {
        return 1;
    }
    let r = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(h as *mut Handle))));
    c_int::from(r.is_err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverse_rows_matches_the_published_square_order() {
        // Square 1 at bit 3, 2 at bit 2, 3 at bit 1, 4 at bit 0, 5 at bit 7, ..., 32 at bit 28.
        for sq in 1..=32u32 {
            let row = (sq - 1) / 4;
            let col = (sq - 1) % 4;
            let rr_bit = 4 * row + (3 - col);
            assert_eq!(reverse_rows(1 << (sq - 1)), 1 << rr_bit, "square {sq}");
            assert_eq!(reverse_rows(1 << rr_bit), 1 << (sq - 1));
        }
    }

    #[test]
    fn version_is_the_crate_version() {
        let v = format!(
            "{}.{}.{}",
            egdb_version / 10000,
            egdb_version / 100 % 100,
            egdb_version % 100
        );
        assert_eq!(v, env!("CARGO_PKG_VERSION"));
    }
}
