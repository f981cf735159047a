//! Crafting table files as a copy from another build or a damaged writer would leave them:
//! fields changed in place, every checksum recomputed (layout: docs/format.md, "Layout").

#![allow(dead_code)]

use checkers_egdb::format::{HEADER_LEN, HEADER_SUMMED};
use xxhash_rust::xxh64::{xxh64, Xxh64};

/// Recompute the header checksum (header bytes 0..56 and the offset table: block count at
/// byte 52, offset width at byte 19) and the whole-file checksum (the last 8 bytes) of a
/// table file's bytes (value, DTC and DTW files alike).
pub fn rechecksum(b: &mut [u8]) {
    let blocks = u32::from_le_bytes(b[52..56].try_into().unwrap()) as usize;
    rechecksum_with_table(b, blocks * (b[19] as usize + 4));
}

/// [`rechecksum`] with the offset table's length given (`table_len` bytes, as laid out in the
/// original file: a crafted header's block count may say otherwise), cut at the file checksum.
pub fn rechecksum_with_table(b: &mut [u8], table_len: usize) {
    let table_end = (HEADER_LEN + table_len).min(b.len().saturating_sub(8));
    let mut h = Xxh64::new(0);
    h.update(&b[..HEADER_SUMMED]);
    h.update(&b[HEADER_LEN..table_end]);
    let hc = h.digest();
    b[HEADER_SUMMED..HEADER_LEN].copy_from_slice(&hc.to_le_bytes());
    let body = b.len() - 8;
    let fc = xxh64(&b[..body], 0);
    b[body..].copy_from_slice(&fc.to_le_bytes());
}
