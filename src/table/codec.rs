//! Value codecs: how the symbols of a slice are packed into a block before compression, and
//! into memory after decompression (what the block cache and [`super::Block`] hold).
//!
//! A codec works on *symbols*, one byte per position: for [`Wld2Bit`] 0 = loss, 1 = draw,
//! 2 = win (for the side to move) and, on the writer's input, [`DONT_CARE`]. A distance codec
//! (distance to conversion, values up to thousands of plies) fits the same trait: small
//! distances as symbols, one symbol reserved as an escape whose value is looked up in a per
//! block exception list; it gets its own [`ValueCodec::ID`] in the header.

use crate::board::Wld;

/// Symbol of the writer's input marking a "don't care" position (the side to move must
/// capture; probes resolve it by search), filled by the writer with whatever compresses best.
pub const DONT_CARE: u8 = 3;
/// Codec id: values packed 2 bits each (4 per byte), blocks compressed with zstd one by one.
/// (Codec 1, base-3 packing, belonged to format version 1 and is no longer read.)
pub const CODEC_2BIT_ZSTD: u32 = 2;

/// Codec id: the stored form of [`CODEC_2BIT_ZSTD`] (2 bits per value, zstd per block), with
/// more don't-care positions: besides captures, the positions without a legal move and the
/// threat positions [`crate::rules::search::is_dont_care`] resolves by a search of at most two plies; don't-care
/// runs are filled from their neighbours (docs/format.md). Type `Wld2BitThreats`.
pub const CODEC_2BIT_THREATS: u32 = 4;

/// A value codec: the packing of symbols in stored blocks and in memory.
pub trait ValueCodec: Send + Sync + 'static {
    /// Codec id in byte 10 of the header; the reader refuses other ids.
    const ID: u32;
    /// Largest symbol a file of this codec stores (the writer's input may also hold
    /// [`DONT_CARE`] where [`ValueCodec::DONT_CARE`] is set).
    const MAX_SYMBOL: u8;
    /// The input symbol meaning "don't care", if the codec has one.
    const DONT_CARE: Option<u8>;
    /// Symbols per byte of the memory form (5 for base-3 packing, 1 for byte symbols).
    const PER_BYTE: usize;
    /// What a symbol means.
    type Value: Copy;

    /// Stored form of a block of symbols (each at most [`ValueCodec::MAX_SYMBOL`]), before
    /// compression.
    fn pack(symbols: &[u8]) -> Vec<u8>;
    /// Bytes of the stored form of `n` symbols.
    fn stored_len(n: usize) -> usize;
    /// Symbol `i` of a stored-form buffer (as [`ValueCodec::pack`] writes it).
    fn stored_symbol(stored: &[u8], i: usize) -> u8;
    /// Check the stored form of `n` symbols (after decompression) and turn it into the memory
    /// form. `Err(i)`: byte `i` holds an impossible symbol or nonzero padding.
    fn unpack(stored: &[u8], n: usize) -> Result<Vec<u8>, usize>;
    /// Symbol `k` (`k < PER_BYTE`) of memory-form byte `byte`.
    fn symbol_in_byte(byte: u8, k: usize) -> u8;
    /// Symbol `i` of a memory-form buffer.
    #[inline(always)]
    fn memory_symbol(mem: &[u8], i: usize) -> u8 {
        Self::symbol_in_byte(mem[i / Self::PER_BYTE], i % Self::PER_BYTE)
    }
    /// The value of a symbol; `None` for a symbol the codec does not store.
    fn value(symbol: u8) -> Option<Self::Value>;
}

/// Win/loss/draw, 2 bits per position in the file (codec [`CODEC_2BIT_ZSTD`]), base 3 (five
/// per byte) in memory. Symbols: 0 loss, 1 draw, 2 win.
#[derive(Clone, Copy, Debug, Default)]
pub struct Wld2Bit;

impl ValueCodec for Wld2Bit {
    const ID: u32 = CODEC_2BIT_ZSTD;
    const MAX_SYMBOL: u8 = 2;
    const DONT_CARE: Option<u8> = Some(DONT_CARE);
    const PER_BYTE: usize = 5;
    type Value = Wld;

    fn pack(symbols: &[u8]) -> Vec<u8> {
        pack_2bit(symbols)
    }
    #[inline(always)]
    fn stored_len(n: usize) -> usize {
        n.div_ceil(4)
    }
    #[inline(always)]
    fn stored_symbol(stored: &[u8], i: usize) -> u8 {
        stored.get(i >> 2).map_or(3, |b| (b >> ((i & 3) * 2)) & 3)
    }
    fn unpack(stored: &[u8], n: usize) -> Result<Vec<u8>, usize> {
        repack_2bit_to_base3(stored, n)
    }
    #[inline(always)]
    fn symbol_in_byte(byte: u8, k: usize) -> u8 {
        DIGITS[byte as usize][k]
    }
    #[inline(always)]
    fn value(symbol: u8) -> Option<Wld> {
        Wld::from_u8(symbol)
    }
}

/// Codec [`CODEC_2BIT_THREATS`]: [`Wld2Bit`]'s packing under another id (the writer marks
/// more positions don't care, [`crate::rules::search::is_dont_care`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Wld2BitThreats;

impl ValueCodec for Wld2BitThreats {
    const ID: u32 = CODEC_2BIT_THREATS;
    const MAX_SYMBOL: u8 = 2;
    const DONT_CARE: Option<u8> = Some(DONT_CARE);
    const PER_BYTE: usize = 5;
    type Value = Wld;

    fn pack(symbols: &[u8]) -> Vec<u8> {
        Wld2Bit::pack(symbols)
    }
    #[inline(always)]
    fn stored_len(n: usize) -> usize {
        Wld2Bit::stored_len(n)
    }
    #[inline(always)]
    fn stored_symbol(stored: &[u8], i: usize) -> u8 {
        Wld2Bit::stored_symbol(stored, i)
    }
    fn unpack(stored: &[u8], n: usize) -> Result<Vec<u8>, usize> {
        Wld2Bit::unpack(stored, n)
    }
    #[inline(always)]
    fn symbol_in_byte(byte: u8, k: usize) -> u8 {
        Wld2Bit::symbol_in_byte(byte, k)
    }
    #[inline(always)]
    fn value(symbol: u8) -> Option<Wld> {
        Wld2Bit::value(symbol)
    }
}

/// `DIGITS[b][k]` = k-th base-3 digit (value of position `5*i+k`) of packed byte `b`
/// (only bytes 0..=242 occur in valid data; larger bytes decode to 3 and are rejected).
pub(crate) static DIGITS: [[u8; 5]; 256] = build_digits();

const fn build_digits() -> [[u8; 5]; 256] {
    let mut t = [[3u8; 5]; 256];
    let mut b = 0;
    while b < 243 {
        let mut x = b;
        let mut k = 0;
        while k < 5 {
            t[b][k] = (x % 3) as u8;
            x /= 3;
            k += 1;
        }
        b += 1;
    }
    t
}

/// Pack values 0..=2, five per byte: byte = v0 + 3 v1 + 9 v2 + 27 v3 + 81 v4 (a short last
/// group is padded with zeros).
pub(crate) fn pack_base3(values: &[u8]) -> Vec<u8> {
    values
        .chunks(5)
        .map(|c| {
            let mut b = 0u8;
            for &v in c.iter().rev() {
                b = b * 3 + v;
            }
            b
        })
        .collect()
}

/// Value (0..=2) of position `i` of a packed block (`i < 5 * packed.len()`).
#[inline(always)]
#[cfg(test)]
pub(crate) fn packed_value(packed: &[u8], i: usize) -> u8 {
    DIGITS[packed[i / 5] as usize][i % 5]
}

/// Pack values 0..=3 two bits each, four per byte: byte = v0 | v1 << 2 | v2 << 4 | v3 << 6 (a
/// short last group is padded with zeros). The stored form of codec 2.
pub(crate) fn pack_2bit(values: &[u8]) -> Vec<u8> {
    values
        .chunks(4)
        .map(|c| c.iter().rev().fold(0u8, |b, &v| (b << 2) | v))
        .collect()
}

/// `B3_OF_10BITS[x]`: the base-3 byte of the five 2-bit values in the low 10 bits of `x`, or
/// 0xFF when one of them is 3 (not a value).
static B3_OF_10BITS: [u8; 1024] = {
    let mut t = [0u8; 1024];
    let mut x = 0;
    while x < 1024 {
        let mut b = 0u32;
        let mut k = 5;
        let mut bad = false;
        while k > 0 {
            k -= 1;
            let v = (x >> (2 * k)) & 3;
            if v == 3 {
                bad = true;
            }
            b = b * 3 + v as u32;
        }
        t[x] = if bad { 0xFF } else { b as u8 };
        x += 1;
    }
    t
};

/// Convert a 2-bit packed block of `n` values (`ceil(n/4)` bytes) to base-3 packed bytes
/// (`ceil(n/5)`, what `packed_value` reads). `Err(i)` names a byte holding a 3 or a nonzero
/// padding digit.
pub(crate) fn repack_2bit_to_base3(two: &[u8], n: usize) -> Result<Vec<u8>, usize> {
    debug_assert_eq!(two.len(), n.div_ceil(4));
    let mut out = Vec::with_capacity(n.div_ceil(5));
    let full = n / 20;
    let mut bad = false;
    for g in 0..full {
        // 20 values = 5 bytes of 2 bits = 4 bytes of base 3.
        let s = &two[5 * g..5 * g + 5];
        let x = u64::from(s[0])
            | u64::from(s[1]) << 8
            | u64::from(s[2]) << 16
            | u64::from(s[3]) << 24
            | u64::from(s[4]) << 32;
        let q = [
            B3_OF_10BITS[(x & 1023) as usize],
            B3_OF_10BITS[((x >> 10) & 1023) as usize],
            B3_OF_10BITS[((x >> 20) & 1023) as usize],
            B3_OF_10BITS[((x >> 30) & 1023) as usize],
        ];
        bad |= q.contains(&0xFF);
        out.extend_from_slice(&q);
    }
    if bad {
        let g = (0..full)
            .find(|&g| {
                two[5 * g..5 * g + 5]
                    .iter()
                    .any(|&b| (0..4).any(|k| (b >> (2 * k)) & 3 == 3))
            })
            .unwrap_or(0);
        return Err(5 * g);
    }
    // Tail: fewer than 20 values.
    let start = 20 * full;
    let mut tail = Vec::with_capacity(n - start);
    for i in start..two.len() * 4 {
        let v = (two[i / 4] >> (2 * (i % 4))) & 3;
        if v == 3 || (i >= n && v != 0) {
            return Err(i / 4);
        }
        if i < n {
            tail.push(v);
        }
    }
    out.extend_from_slice(&pack_base3(&tail));
    Ok(out)
}
