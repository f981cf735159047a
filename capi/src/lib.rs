//! C ABI of the checkers-egdb probe library, for engines written in C or C++: `libegdb.so` and
//! `libegdb.a`, header `include/egdb.h` (hand-written, kept in step with this file and exercised
//! by `tests/ffi.rs`, which compiles `tests/c/egdb_test.c` and `tests/c/egdb_dtc_test.c`).
//!
//! Return codes follow KingsRow's egdb driver: [`EGDB_WIN`], [`EGDB_LOSS`], [`EGDB_DRAW`],
//! [`EGDB_UNKNOWN`] (position not covered: too many pieces), [`EGDB_NOT_IN_CACHE`] (conditional
//! lookup would need I/O), [`EGDB_SUBDB_UNAVAILABLE`] (a needed table file is missing), plus
//! [`EGDB_ERROR`] (corrupt file, I/O error) and [`EGDB_INVALID`] (bad arguments, position or
//! FEN). The text of the last failure on the calling thread is available from
//! [`egdb_last_error`]; a successful [`egdb_open`], [`egdb_lookup`], [`egdb_lookup_fen`] or
//! [`egdb_get_stats`] clears it, so it always describes the latest of these calls. No function
//! panics across the boundary.

use checkers_egdb::rules::Variant;
use checkers_egdb::{AnyTablebase, Color, Position, ProbeError, Tablebase, Wld};
use std::cell::{RefCell, UnsafeCell};
use std::ffi::{c_char, c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

/// Unknown: the position has more pieces than the tables cover.
pub const EGDB_UNKNOWN: c_int = 0;
/// The side to move wins.
pub const EGDB_WIN: c_int = 1;
/// The side to move loses.
pub const EGDB_LOSS: c_int = 2;
/// Draw.
pub const EGDB_DRAW: c_int = 3;
/// A conditional lookup needed a block that is not cached.
pub const EGDB_NOT_IN_CACHE: c_int = -1;
/// A table the answer needs is missing from the directory.
pub const EGDB_SUBDB_UNAVAILABLE: c_int = -2;
/// A table file is corrupt or could not be read.
pub const EGDB_ERROR: c_int = -3;
/// Bad arguments: null pointer, illegal position or unparsable FEN.
pub const EGDB_INVALID: c_int = -4;

/// Opaque handle returned by [`egdb_open`].
///
/// Closing drops the tables and cache but keeps this small shell allocated (a few dozen bytes
/// per handle ever opened) with its state word set to closed, so that a second
/// [`egdb_close`] or a use after close is answered [`EGDB_INVALID`] ("handle is closed")
/// instead of touching freed memory.
pub struct EgdbHandle {
    /// [`HANDLE_OPEN`] while open, [`HANDLE_CLOSED`] after [`egdb_close`].
    state: AtomicU64,
    /// The tables; `None` once closed. Written only by [`egdb_close`] (which the caller must
    /// not run concurrently with other calls on the handle).
    tb: UnsafeCell<Option<AnyTablebase>>,
}

// SAFETY: `tb` is written only by `egdb_close`, whose contract excludes concurrent calls on the
// handle; otherwise it is only read, and `Tablebase` is `Sync`.
unsafe impl Sync for EgdbHandle {}

/// State word of an open handle.
const HANDLE_OPEN: u64 = 0x6567_6462_4f50_454e;
/// State word of a closed handle.
const HANDLE_CLOSED: u64 = 0x6567_6462_434c_4f53;

/// The tables of handle `h`, or the error code (after setting the message) for a null, closed
/// or unknown handle.
///
/// # Safety
/// `h` null or a pointer returned by [`egdb_open`] (open or closed).
unsafe fn tables<'a>(h: *const EgdbHandle) -> Result<&'a AnyTablebase, c_int> {
    // SAFETY: `h` is null or a handle shell from `egdb_open`, never freed (caller's contract).
    let Some(h) = (unsafe { h.as_ref() }) else {
        set_error("null handle".into());
        return Err(EGDB_INVALID);
    };
    match h.state.load(Ordering::Acquire) {
        HANDLE_OPEN => {}
        HANDLE_CLOSED => {
            set_error("handle is closed".into());
            return Err(EGDB_INVALID);
        }
        _ => {
            set_error("not a handle from egdb_open".into());
            return Err(EGDB_INVALID);
        }
    }
    // SAFETY: the handle is open; `tb` is only written by `egdb_close`, which may not run
    // concurrently with this call (caller's contract).
    match unsafe { &*h.tb.get() } {
        Some(tb) => Ok(tb),
        None => {
            set_error("handle is closed".into());
            Err(EGDB_INVALID)
        }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn set_error(msg: String) {
    LAST_ERROR.with(|e| *e.borrow_mut() = msg);
}

fn clear_error() {
    LAST_ERROR.with(|e| e.borrow_mut().clear());
}

/// Copy `s` into `buf` (capacity `len`) NUL-terminated, truncating; returns `s.len()`.
///
/// # Safety
/// `buf` null or writable for `len` bytes.
unsafe fn copy_out(s: &str, buf: *mut c_char, len: usize) -> usize {
    if !buf.is_null() && len > 0 {
        let n = s.len().min(len - 1);
        // SAFETY: the caller guarantees `buf` is writable for `len > n` bytes; `s` is a
        // distinct Rust string of at least `n` bytes, so the ranges do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, buf, n);
            *buf.add(n) = 0;
        }
    }
    s.len()
}

fn code(r: Result<Wld, ProbeError>) -> c_int {
    match r {
        Ok(v) => {
            clear_error();
            match v {
                Wld::Win => EGDB_WIN,
                Wld::Loss => EGDB_LOSS,
                Wld::Draw => EGDB_DRAW,
            }
        }
        Err(e) => error_code(e),
    }
}

/// The return code of a probe error (and the thread's last error message set to it).
fn error_code(e: ProbeError) -> c_int {
    let c = match e {
        ProbeError::TooManyPieces { .. } => EGDB_UNKNOWN,
        ProbeError::NotInCache => EGDB_NOT_IN_CACHE,
        ProbeError::MissingSlice { .. } | ProbeError::MissingDtc { .. } => EGDB_SUBDB_UNAVAILABLE,
        ProbeError::InvalidPosition(_) | ProbeError::CapturePosition => EGDB_INVALID,
        _ => EGDB_ERROR,
    };
    set_error(e.to_string());
    c
}

/// The position of bitboards and a colour code (0 Black, 1 White to move), or
/// [`EGDB_INVALID`] with the error set.
fn position_of(black: u32, white: u32, kings: u32, color: c_int) -> Result<Position, c_int> {
    let side = match color {
        0 => Color::Black,
        1 => Color::White,
        _ => {
            set_error(format!("color {color} is not 0 (black) or 1 (white)"));
            return Err(EGDB_INVALID);
        }
    };
    Ok(Position {
        black,
        white,
        kings,
        side,
    })
}

/// Distance to conversion (issue 9's metric, plies, side to move's view) of the position given
/// as in [`egdb_lookup`]: returns [`EGDB_WIN`], [`EGDB_LOSS`] or [`EGDB_DRAW`] and stores the
/// distance in `*plies` (-1 for a draw; `plies` may be null), or an error code
/// ([`EGDB_SUBDB_UNAVAILABLE`] when a distance file `<slice>.dtc` is missing). Needs the
/// distance files of `egdb build --dtc`.
///
/// # Safety
/// `h` null or a live handle from [`egdb_open`]; `plies` null or writable.
#[no_mangle]
pub unsafe extern "C" fn egdb_lookup_dtc(
    h: *const EgdbHandle,
    black: u32,
    white: u32,
    kings: u32,
    color: c_int,
    plies: *mut i32,
) -> c_int {
    // SAFETY: `h` is null or a handle from `egdb_open` (caller's contract).
    let tb = match unsafe { tables(h) } {
        Ok(tb) => tb,
        Err(c) => return c,
    };
    let p = match position_of(black, white, kings, color) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let r = catch_unwind(AssertUnwindSafe(|| tb.probe_dtc(&p)));
    let (c, d) = match r {
        Ok(Ok(d)) => {
            clear_error();
            let n = d.plies().map_or(-1, |n| n.min(i32::MAX as u32) as i32);
            (code(Ok(d.wld())), n)
        }
        Ok(Err(e)) => (error_code(e), -1),
        Err(_) => {
            set_error("internal error (panic) during lookup".into());
            (EGDB_ERROR, -1)
        }
    };
    // SAFETY: `plies` is null or writable (caller's contract).
    if let Some(out) = unsafe { plies.as_mut() } {
        *out = d;
    }
    c
}

/// A move chosen by [`egdb_best_move`].
#[repr(C)]
pub struct EgdbMove {
    /// Square the piece starts on (1-32; 0 when there is no move).
    pub from: u8,
    /// Square it ends on (1-32).
    pub to: u8,
    /// Captured pieces, bit i = square i+1 (0 for a simple move).
    pub captured: u32,
    /// Whether the move is a conversion (capture or man move): 1 or 0.
    pub conversion: c_int,
    /// The move's distance for the mover in plies (1 for a conversion, else 1 + the distance
    /// after it; -1 for a draw); its value is the function's return code.
    pub plies: i32,
    /// The move in PDN notation (`9-14`, `9x18x27`), NUL-terminated.
    pub pdn: [c_char; 64],
}

/// The best move of perfect play ([`checkers_egdb::best_move`]: wins by the smallest distance,
/// then draws, then losses by the largest) for the position given as in [`egdb_lookup`].
/// Returns the move's value for the mover ([`EGDB_WIN`], [`EGDB_LOSS`], [`EGDB_DRAW`]) with the
/// move in `*out`; [`EGDB_LOSS`] with `out->from == 0` when the side to move has no legal move;
/// or an error code. Needs the distance files of `egdb build --dtc`.
///
/// # Safety
/// `h` null or a live handle from [`egdb_open`]; `out` null or writable.
#[no_mangle]
pub unsafe extern "C" fn egdb_best_move(
    h: *const EgdbHandle,
    black: u32,
    white: u32,
    kings: u32,
    color: c_int,
    out: *mut EgdbMove,
) -> c_int {
    // SAFETY: `out` null or writable (caller's contract).
    let Some(out) = (unsafe { out.as_mut() }) else {
        set_error("null move pointer".into());
        return EGDB_INVALID;
    };
    // SAFETY: `h` is null or a handle from `egdb_open` (caller's contract).
    let tb = match unsafe { tables(h) } {
        Ok(tb) => tb,
        Err(c) => return c,
    };
    let p = match position_of(black, white, kings, color) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let r = catch_unwind(AssertUnwindSafe(|| {
        tb.scored_moves(&p, checkers_egdb::Metric::Dtc)
            .map(|v| v.into_iter().next())
    }));
    out.from = 0;
    out.to = 0;
    out.captured = 0;
    out.conversion = 0;
    out.plies = -1;
    out.pdn = [0; 64];
    match r {
        Ok(Ok(None)) => {
            clear_error();
            // No legal move: the terminal rule (a loss; a win in giveaway).
            code(Ok(tb.variant().no_move_value()))
        }
        Ok(Ok(Some(m))) => {
            clear_error();
            out.from = m.mv.from;
            out.to = m.mv.to;
            out.captured = m.mv.captured;
            out.conversion = c_int::from(m.conversion);
            out.plies = m
                .value
                .plies()
                .map_or(-1, |n| n.min(i32::MAX as u32) as i32);
            let text = checkers_egdb::format_move(&m.mv);
            for (i, b) in text.bytes().take(63).enumerate() {
                out.pdn[i] = b as c_char;
            }
            code(Ok(m.value.wld()))
        }
        Ok(Err(e)) => error_code(e),
        Err(_) => {
            set_error("internal error (panic) during lookup".into());
            EGDB_ERROR
        }
    }
}

/// Open the tables of English checkers in directory `dir` (UTF-8 path, NUL-terminated) with
/// a block cache of `cache_mb` MiB (0 = no cache: every lookup decodes its block, conditional
/// lookups answer "not in cache"; more than half the physical memory is reduced to that;
/// negative is an error). Tables of another variant are refused (naming both rules): open
/// them with [`egdb_open_rules`]. Returns a handle, or null with a message copied into
/// `errbuf` (capacity `errlen`, may be null) and kept for [`egdb_last_error`].
///
/// # Safety
/// `dir` must be a valid NUL-terminated string; `errbuf` null or writable for `errlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn egdb_open(
    dir: *const c_char,
    cache_mb: c_int,
    errbuf: *mut c_char,
    errlen: usize,
) -> *mut EgdbHandle {
    // SAFETY: the caller's contract, passed on.
    unsafe { open_with(dir, cache_mb, Some(Variant::English), errbuf, errlen) }
}

/// [`egdb_open`] under the rules named by `rules` (NUL-terminated: `"english"`, `"russian"`,
/// `"brazilian"`, `"italian"`, `"giveaway"`, `"pool"`, `"spanish"`, `"czech"`), or, with
/// `rules` null, under the rules recorded in the table files' headers (a directory holds
/// the tables of one variant). Lookups, distances and best moves then follow that variant
/// (its moves, captures and terminal rule: in giveaway a side without a move wins). A
/// directory of other rules than those named, an unknown name or a directory mixing
/// variants is refused with a message.
///
/// # Safety
/// `dir` must be a valid NUL-terminated string; `rules` null or a valid NUL-terminated
/// string; `errbuf` null or writable for `errlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn egdb_open_rules(
    dir: *const c_char,
    cache_mb: c_int,
    rules: *const c_char,
    errbuf: *mut c_char,
    errlen: usize,
) -> *mut EgdbHandle {
    let v = if rules.is_null() {
        None
    } else {
        // SAFETY: `rules` is non-null and, by the caller's contract, NUL-terminated.
        let name = unsafe { CStr::from_ptr(rules) }.to_string_lossy();
        match name.parse::<Variant>() {
            Ok(v) => Some(v),
            Err(e) => {
                let msg = e.to_string();
                // SAFETY: `errbuf` is null or writable for `errlen` bytes (caller's contract).
                unsafe { copy_out(&msg, errbuf, errlen) };
                set_error(msg);
                return std::ptr::null_mut();
            }
        }
    };
    // SAFETY: the caller's contract, passed on.
    unsafe { open_with(dir, cache_mb, v, errbuf, errlen) }
}

/// The name of the rules the handle's tables are of (`"english"`, `"russian"`, ...; a static
/// NUL-terminated string), or null for a null or closed handle.
///
/// # Safety
/// `h` null or a handle from [`egdb_open`] / [`egdb_open_rules`].
#[no_mangle]
pub unsafe extern "C" fn egdb_rules(h: *const EgdbHandle) -> *const c_char {
    // SAFETY: `h` is null or a handle from `egdb_open` (caller's contract).
    match unsafe { tables(h) } {
        Ok(tb) => {
            clear_error();
            match tb.variant() {
                Variant::English => c"english",
                Variant::Russian => c"russian",
                Variant::Brazilian => c"brazilian",
                Variant::Italian => c"italian",
                Variant::Giveaway => c"giveaway",
                Variant::Pool => c"pool",
                Variant::Spanish => c"spanish",
                Variant::Czech => c"czech",
            }
            .as_ptr()
        }
        Err(_) => std::ptr::null(),
    }
}

/// The opening of [`egdb_open`] and [`egdb_open_rules`] (`rules` `None`: the headers').
///
/// # Safety
/// As [`egdb_open`].
unsafe fn open_with(
    dir: *const c_char,
    cache_mb: c_int,
    rules: Option<Variant>,
    errbuf: *mut c_char,
    errlen: usize,
) -> *mut EgdbHandle {
    let r = catch_unwind(AssertUnwindSafe(|| {
        if dir.is_null() {
            return Err("null directory".to_string());
        }
        // SAFETY: `dir` is non-null and, by the caller's contract, NUL-terminated.
        let d = unsafe { CStr::from_ptr(dir) }
            .to_str()
            .map_err(|_| "directory is not UTF-8".to_string())?;
        let mb = usize::try_from(cache_mb)
            .map_err(|_| format!("cache size {cache_mb} MiB is negative"))?;
        // Positioned reads: a table file rewritten under the engine is an error, not SIGBUS.
        AnyTablebase::open_builder(
            Tablebase::builder(d)
                .access(checkers_egdb::Access::Pread)
                .cache_bytes(mb << 20),
            rules,
        )
        .map_err(|e| e.to_string())
    }));
    match r {
        Ok(Ok(tb)) => {
            clear_error();
            Box::into_raw(Box::new(EgdbHandle {
                state: AtomicU64::new(HANDLE_OPEN),
                tb: UnsafeCell::new(Some(tb)),
            }))
        }
        Ok(Err(msg)) => {
            // SAFETY: `errbuf` is null or writable for `errlen` bytes (caller's contract).
            unsafe { copy_out(&msg, errbuf, errlen) };
            set_error(msg);
            std::ptr::null_mut()
        }
        Err(_) => {
            let msg = "internal error (panic) while opening".to_string();
            // SAFETY: as above.
            unsafe { copy_out(&msg, errbuf, errlen) };
            set_error(msg);
            std::ptr::null_mut()
        }
    }
}

/// Value for the side to move of the position given by bitboards (bit i = square i+1):
/// `black`, `white` pieces, `kings` of either colour; `color` 0 = Black to move, 1 = White.
/// Captures are resolved by search. With `conditional` non-zero no file is read: the answer is
/// [`EGDB_NOT_IN_CACHE`] when a needed block is not cached.
///
/// # Safety
/// `h` must be null or a live handle from [`egdb_open`].
#[no_mangle]
pub unsafe extern "C" fn egdb_lookup(
    h: *const EgdbHandle,
    black: u32,
    white: u32,
    kings: u32,
    color: c_int,
    conditional: c_int,
) -> c_int {
    // SAFETY: `h` is null or a handle from `egdb_open` (caller's contract).
    let tb = match unsafe { tables(h) } {
        Ok(tb) => tb,
        Err(c) => return c,
    };
    let side = match color {
        0 => Color::Black,
        1 => Color::White,
        _ => {
            set_error(format!("color {color} is not 0 (black) or 1 (white)"));
            return EGDB_INVALID;
        }
    };
    let p = Position {
        black,
        white,
        kings,
        side,
    };
    catch_unwind(AssertUnwindSafe(|| {
        code(if conditional != 0 {
            tb.probe_wld_cached(&p)
        } else {
            tb.probe_wld(&p)
        })
    }))
    .unwrap_or_else(|_| {
        set_error("internal error (panic) during lookup".into());
        EGDB_ERROR
    })
}

/// [`egdb_lookup`] of a position given as PDN FEN (e.g. `W:WK32:BK26`).
///
/// # Safety
/// `h` null or a live handle; `fen` null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn egdb_lookup_fen(
    h: *const EgdbHandle,
    fen: *const c_char,
    conditional: c_int,
) -> c_int {
    if fen.is_null() {
        set_error("null FEN".into());
        return EGDB_INVALID;
    }
    // SAFETY: `fen` is non-null and NUL-terminated (caller's contract).
    let p = match unsafe { CStr::from_ptr(fen) }
        .to_str()
        .map_err(|e| e.to_string())
        .and_then(|s| Position::from_fen(s).map_err(|e| e.to_string()))
    {
        Ok(p) => p,
        Err(e) => {
            set_error(format!("bad FEN: {e}"));
            return EGDB_INVALID;
        }
    };
    // SAFETY: `h` is null or a live handle (caller's contract), all `egdb_lookup` needs.
    unsafe {
        egdb_lookup(
            h,
            p.black,
            p.white,
            p.kings,
            (p.side == Color::White) as c_int,
            conditional,
        )
    }
}

/// Largest piece count the open tables cover (0 for a null handle).
///
/// # Safety
/// `h` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn egdb_max_pieces(h: *const EgdbHandle) -> c_int {
    // SAFETY: `h` is null or a handle from `egdb_open` (caller's contract).
    unsafe { tables(h) }.map_or(0, |tb| tb.max_pieces() as c_int)
}

/// List the table directory again so that files added since [`egdb_open`] (e.g. by a build
/// still running) are used. Returns the number of table files known (>= 0), [`EGDB_INVALID`]
/// for a null or closed handle, [`EGDB_ERROR`] if the directory cannot be listed. A slice
/// already opened keeps its state: a file that failed to open (damaged, or changed under the
/// handle) needs a new handle ([`egdb_close`], [`egdb_open`]) once repaired.
///
/// # Safety
/// `h` null or a handle from [`egdb_open`].
#[no_mangle]
pub unsafe extern "C" fn egdb_rescan(h: *const EgdbHandle) -> c_int {
    // SAFETY: `h` is null or a handle from `egdb_open` (caller's contract).
    let tb = match unsafe { tables(h) } {
        Ok(tb) => tb,
        Err(c) => return c,
    };
    match catch_unwind(AssertUnwindSafe(|| tb.rescan())) {
        Ok(Ok(n)) => {
            clear_error();
            n.min(c_int::MAX as u64) as c_int
        }
        Ok(Err(e)) => {
            set_error(e.to_string());
            EGDB_ERROR
        }
        Err(_) => {
            set_error("internal error (panic) during rescan".into());
            EGDB_ERROR
        }
    }
}

/// Counters of a handle, filled by [`egdb_get_stats`].
#[repr(C)]
#[derive(Default)]
pub struct EgdbStats {
    /// Probe calls.
    pub probes: u64,
    /// Lookups answered from the cache.
    pub cache_hits: u64,
    /// Lookups that missed the cache.
    pub cache_misses: u64,
    /// Blocks decompressed.
    pub blocks_decoded: u64,
}

/// Fill `out` with the handle's counters; returns 0, or [`EGDB_INVALID`] for null pointers.
///
/// # Safety
/// `h` null or a live handle; `out` null or writable.
#[no_mangle]
pub unsafe extern "C" fn egdb_get_stats(h: *const EgdbHandle, out: *mut EgdbStats) -> c_int {
    // SAFETY: `h` is null or a handle from `egdb_open`, `out` null or writable (caller's
    // contract).
    let tb = match unsafe { tables(h) } {
        Ok(tb) => tb,
        Err(c) => return c,
    };
    // SAFETY: `out` is null or writable (caller's contract).
    let Some(out) = (unsafe { out.as_mut() }) else {
        set_error("null stats pointer".into());
        return EGDB_INVALID;
    };
    clear_error();
    let s = tb.stats();
    *out = EgdbStats {
        probes: s.probes,
        cache_hits: s.cache_hits,
        cache_misses: s.cache_misses,
        blocks_decoded: s.blocks_decoded,
    };
    0
}

/// Copy the calling thread's last error message into `buf` (capacity `len`, NUL-terminated,
/// truncated); returns the message's full length in bytes (0 if none, or if the latest
/// open/lookup/stats call on this thread succeeded).
///
/// # Safety
/// `buf` null or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn egdb_last_error(buf: *mut c_char, len: usize) -> usize {
    // SAFETY: `buf` is null or writable for `len` bytes (caller's contract).
    LAST_ERROR.with(|e| unsafe { copy_out(&e.borrow(), buf, len) })
}

/// Close a handle from [`egdb_open`] (null is ignored): frees its tables and cache. A second
/// close, or any call on the handle after, is answered [`EGDB_INVALID`] with the message
/// "handle is closed" (the handle's small shell stays allocated for that).
///
/// # Safety
/// `h` null or a handle from [`egdb_open`], not used by any other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn egdb_close(h: *mut EgdbHandle) {
    // SAFETY: `h` is null or a handle shell from `egdb_open`, never freed (caller's contract).
    let Some(h) = (unsafe { h.as_ref() }) else {
        return;
    };
    match h.state.compare_exchange(
        HANDLE_OPEN,
        HANDLE_CLOSED,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => {
            // SAFETY: the state moved from open to closed here, once; no other call runs on
            // the handle during close (caller's contract), and later calls see it closed.
            let tb = unsafe { (*h.tb.get()).take() };
            let _ = catch_unwind(AssertUnwindSafe(|| drop(tb)));
        }
        Err(HANDLE_CLOSED) => set_error("handle is closed".into()),
        Err(_) => set_error("not a handle from egdb_open".into()),
    }
}
