//! C ABI for engines written in C or C++; the header is `include/egdb.h` (hand-written, kept
//! in step with this file and exercised by `tests/ffi.rs`, which compiles `tests/c/egdb_test.c`).
//!
//! Return codes follow KingsRow's egdb driver: [`EGDB_WIN`], [`EGDB_LOSS`], [`EGDB_DRAW`],
//! [`EGDB_UNKNOWN`] (position not covered: too many pieces), [`EGDB_NOT_IN_CACHE`] (conditional
//! lookup would need I/O), [`EGDB_SUBDB_UNAVAILABLE`] (a needed table file is missing), plus
//! [`EGDB_ERROR`] (corrupt file, I/O error) and [`EGDB_INVALID`] (bad arguments, position or
//! FEN). The text of the last failure on the calling thread is available from
//! [`egdb_last_error`]; a successful [`egdb_open`], [`egdb_lookup`], [`egdb_lookup_fen`] or
//! [`egdb_get_stats`] clears it, so it always describes the latest of these calls. No function
//! panics across the boundary.

use crate::board::{Color, Position, Wld};
use crate::probe::{ProbeError, Tablebase};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

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
pub struct EgdbHandle {
    tb: Tablebase,
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
        Err(e) => {
            let c = match e {
                ProbeError::TooManyPieces { .. } => EGDB_UNKNOWN,
                ProbeError::NotInCache => EGDB_NOT_IN_CACHE,
                ProbeError::MissingSlice { .. } => EGDB_SUBDB_UNAVAILABLE,
                ProbeError::InvalidPosition(_) | ProbeError::CapturePosition => EGDB_INVALID,
                _ => EGDB_ERROR,
            };
            set_error(e.to_string());
            c
        }
    }
}

/// Open the tables in directory `dir` (UTF-8 path, NUL-terminated) with a block cache of
/// `cache_mb` MiB (0 = no cache: every lookup decodes its block, conditional lookups answer "not in cache";
/// more than half the physical memory is reduced to that; negative is an error). Returns a handle, or null with
/// a message copied into `errbuf` (capacity `errlen`, may be null) and kept for
/// [`egdb_last_error`].
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
        Tablebase::builder(d)
            .cache_bytes(mb << 20)
            .open()
            .map_err(|e| e.to_string())
    }));
    match r {
        Ok(Ok(tb)) => {
            clear_error();
            Box::into_raw(Box::new(EgdbHandle { tb }))
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
    // SAFETY: `h` is null or a live handle from `egdb_open` (caller's contract).
    let Some(h) = (unsafe { h.as_ref() }) else {
        set_error("null handle".into());
        return EGDB_INVALID;
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
            h.tb.probe_wld_cached(&p)
        } else {
            h.tb.probe_wld(&p)
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
    // SAFETY: `h` is null or a live handle (caller's contract).
    unsafe { h.as_ref() }.map_or(0, |h| h.tb.max_pieces() as c_int)
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
    // SAFETY: `h` is null or a live handle, `out` null or writable (caller's contract).
    let (Some(h), Some(out)) = (unsafe { h.as_ref() }, unsafe { out.as_mut() }) else {
        set_error("null handle or stats pointer".into());
        return EGDB_INVALID;
    };
    clear_error();
    let s = h.tb.stats();
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

/// Close a handle from [`egdb_open`] (null is ignored). The handle must not be used after.
///
/// # Safety
/// `h` null or a live handle not used by any other thread during or after the call.
#[no_mangle]
pub unsafe extern "C" fn egdb_close(h: *mut EgdbHandle) {
    if !h.is_null() {
        // SAFETY: a non-null `h` came from `Box::into_raw` in `egdb_open` and is not used
        // again (caller's contract).
        drop(unsafe { Box::from_raw(h) });
    }
}
