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
//! No function unwinds across the boundary: a panic becomes [`EGDB_UNKNOWN`] (lookup), NULL
//! (open) or a non-zero status.

use checkers_egdb::format::TableFile;
use checkers_egdb::planning::build_order;
use checkers_egdb::{scan_dir, Color, Position, ProbeError, ProbeStats, Slice, Tablebase, Wld};
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
/// reports (clients accept it as a WLD database).
pub const EGDB_KINGSROW32_WLD: c_int = 4;

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
/// first missing slice above it when some file of more pieces exists.
fn complete_pieces(dir: &Path) -> std::io::Result<(u32, Option<Slice>)> {
    let files = scan_dir(dir)?;
    let present: HashSet<Slice> = files.iter().map(|(s, _)| *s).collect();
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
/// `*egdb_type` = [`EGDB_KINGSROW32_WLD`] and `*max_pieces` = n; 1 otherwise (NULL or missing
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
        let dir = dir_arg(directory).ok()?;
        let (n, _) = complete_pieces(&dir).ok()?;
        (n > 0).then_some(n)
    });
    match r {
        Ok(Some(n)) => {
            if !egdb_type.is_null() {
                *egdb_type = EGDB_KINGSROW32_WLD;
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
    let dir = dir_arg(directory)?;
    let mb =
        usize::try_from(cache_mb).map_err(|_| format!("cache size {cache_mb} MiB is negative"))?;
    let (max, missing) =
        complete_pieces(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    if max == 0 {
        return Err(match missing {
            Some(s) => format!("{}: table {s} is missing", dir.display()),
            None => format!("no table files (*.egdb) in {}", dir.display()),
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
            "egdb_open: checkers-egdb tables of up to {} pieces in {}, {} MiB cache, {} boards",
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
    let r = catch_unwind(AssertUnwindSafe(|| lookup_in(s, pos, color, conditional)));
    let code = r.unwrap_or(EGDB_UNKNOWN);
    match code {
        EGDB_WIN | EGDB_LOSS | EGDB_DRAW => s.returns.fetch_add(1, Ordering::Relaxed),
        EGDB_UNKNOWN | EGDB_SUBDB_UNAVAILABLE => s.not_present.fetch_add(1, Ordering::Relaxed),
        _ => 0,
    };
    code
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
        }
        match complete_pieces(&s.dir) {
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
