//! The fixed 64-byte file header: one type, [`Header`], written and parsed here and nowhere
//! else (byte layout in docs/format.md).

use super::error::Fault;
use crate::slice::{Material, Slice};
use std::fmt;

/// File magic, the first 8 bytes of every win/loss/draw table file.
pub const MAGIC: [u8; 8] = *b"EGDBWLD\0";
/// File magic of a distance-to-conversion file (`<slice>.dtc`, see [`super::dtc`]).
pub const DTC_MAGIC: [u8; 8] = *b"EGDBDTC\0";
/// File magic of a depth-to-win file (`<slice>.dtw`, see [`super::dtw`]).
pub const DTW_MAGIC: [u8; 8] = *b"EGDBDTW\0";

/// What a table file holds, told by its magic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FileKind {
    /// Win/loss/draw values (magic `EGDBWLD`, `.egdb`).
    #[default]
    Wld,
    /// Distances to conversion (magic `EGDBDTC`, `.dtc`).
    Dtc,
    /// Depths to win (magic `EGDBDTW`, `.dtw`): the container and codec of `.dtc` files.
    Dtw,
}

impl FileKind {
    /// The magic of files of this kind.
    pub const fn magic(self) -> [u8; 8] {
        match self {
            FileKind::Wld => MAGIC,
            FileKind::Dtc => DTC_MAGIC,
            FileKind::Dtw => DTW_MAGIC,
        }
    }
    fn of_magic(m: &[u8]) -> Option<FileKind> {
        if m == MAGIC {
            Some(FileKind::Wld)
        } else if m == DTC_MAGIC {
            Some(FileKind::Dtc)
        } else if m == DTW_MAGIC {
            Some(FileKind::Dtw)
        } else {
            None
        }
    }
}
/// Format version written by this code (and the only one it reads).
pub const FORMAT_VERSION: u32 = 2;
/// Rules id of English (American) checkers ([`crate::rules::English`]).
pub const RULES_ENGLISH: u32 = crate::rules::english::ID;
/// Size in bytes of the fixed header at the start of a file (checksum included).
pub const HEADER_LEN: usize = 64;
/// Bytes of the header covered by the header checksum (the checksum follows them).
pub const HEADER_SUMMED: usize = 56;
/// Byte value of "no value" in the uniform-value and leading-rank fields.
const NONE: u8 = 0xFF;

/// Summary of one slice's table: what [`super::write_table`] is given and
/// [`super::TableFile::meta`] returns.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TableMeta {
    /// The slice (material and leading ranks) the file holds.
    #[serde(serialize_with = "ser_display")]
    pub slice: Slice,
    /// Number of positions (Black to move) = `SliceIndex::new(slice).size()`.
    pub positions: u64,
    /// Positions won for the side to move (Black), counting every position, capture positions
    /// with their true value.
    pub wins: u64,
    /// Positions lost for the side to move.
    pub losses: u64,
    /// Drawn positions.
    pub draws: u64,
    /// Longest distance to conversion in plies (max over the slice's positions).
    pub longest: u32,
}

fn ser_display<S: serde::Serializer, T: fmt::Display>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// Every field of the fixed header, in file order (offsets in bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// 0..8: the magic, i.e. what the file holds.
    pub kind: FileKind,
    /// 8: format version ([`FORMAT_VERSION`]).
    pub version: u8,
    /// 9: rules id ([`crate::rules::Rules::ID`]).
    pub rules: u8,
    /// 10: value codec id ([`super::ValueCodec::ID`]).
    pub codec: u8,
    /// 11: zstd level used by the writer (informational).
    pub level: u8,
    /// 12..16: material; 16, 17: Black's and White's leading ranks (0xFF: none).
    pub slice: Slice,
    /// 18: the symbol of every position when the file stores no blocks (0xFF: blocks follow).
    pub uniform: Option<u8>,
    /// 19: bytes of a block end offset in the offset table (4 or 8).
    pub width: u8,
    /// 20: positions per block.
    pub block_positions: u32,
    /// 24: positions of the slice.
    pub positions: u64,
    /// 32: wins over all positions.
    pub wins: u64,
    /// 40: losses over all positions (draws are the rest).
    pub losses: u64,
    /// 48: longest resolution in plies.
    pub longest: u32,
    /// 52: number of blocks.
    pub blocks: u32,
}

fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn rd64(b: &[u8], at: usize) -> u64 {
    u64::from(rd32(b, at)) | u64::from(rd32(b, at + 4)) << 32
}

impl Header {
    /// The [`HEADER_SUMMED`] bytes the header checksum covers (the checksum itself, 8 bytes at
    /// offset 56, is computed over these and the offset table by the writer).
    pub fn to_bytes(&self) -> [u8; HEADER_SUMMED] {
        let mut out = [0u8; HEADER_SUMMED];
        out[..8].copy_from_slice(&self.kind.magic());
        let m = self.slice.material;
        let r = |x: Option<u8>| x.unwrap_or(NONE);
        out[8..20].copy_from_slice(&[
            self.version,
            self.rules,
            self.codec,
            self.level,
            m.bm,
            m.bk,
            m.wm,
            m.wk,
            r(self.slice.black_rank),
            r(self.slice.white_rank),
            r(self.uniform),
            self.width,
        ]);
        out[20..24].copy_from_slice(&self.block_positions.to_le_bytes());
        out[24..32].copy_from_slice(&self.positions.to_le_bytes());
        out[32..40].copy_from_slice(&self.wins.to_le_bytes());
        out[40..48].copy_from_slice(&self.losses.to_le_bytes());
        out[48..52].copy_from_slice(&self.longest.to_le_bytes());
        out[52..56].copy_from_slice(&self.blocks.to_le_bytes());
        out
    }

    /// The version of a file from its first bytes (at least 12), when they start with the
    /// magic: format 1 stored a u32 at offset 8, format 2 a byte.
    pub fn peek_version(h: &[u8]) -> Option<u32> {
        if h.len() < 12 || FileKind::of_magic(&h[..8]).is_none() {
            return None;
        }
        Some(if h[8] == 1 {
            rd32(h, 8)
        } else {
            u32::from(h[8])
        })
    }

    /// Read the fields of a header (`h`: at least [`HEADER_LEN`] bytes), checking only the
    /// magic and the version; [`Header::validate`] checks the rest once the checksum matched.
    ///
    /// # Errors
    /// [`Fault::BadMagic`], [`Fault::Version`], [`Fault::BadHeader`] for an impossible
    /// material (more than 12 pieces a side: never a panic or a wrapped count).
    pub fn parse(h: &[u8]) -> Result<Header, Fault> {
        if h.len() < HEADER_LEN {
            return Err(Fault::Truncated {
                len: h.len() as u64,
                expected: HEADER_LEN as u64,
            });
        }
        let kind = FileKind::of_magic(&h[..8]).ok_or(Fault::BadMagic)?;
        if u32::from(h[8]) != FORMAT_VERSION {
            return Err(Fault::Version(Self::peek_version(h).unwrap_or(0)));
        }
        let material = Material::new(h[12], h[13], h[14], h[15]).ok_or_else(|| {
            Fault::BadHeader(format!("material {} {} {} {}", h[12], h[13], h[14], h[15]))
        })?;
        let opt = |x: u8| (x != NONE).then_some(x);
        Ok(Header {
            kind,
            version: h[8],
            rules: h[9],
            codec: h[10],
            level: h[11],
            slice: Slice {
                material,
                black_rank: opt(h[16]),
                white_rank: opt(h[17]),
            },
            uniform: opt(h[18]),
            width: h[19],
            block_positions: rd32(h, 20),
            positions: rd64(h, 24),
            wins: rd64(h, 32),
            losses: rd64(h, 40),
            longest: rd32(h, 48),
            blocks: rd32(h, 52),
        })
    }

    /// The stored header checksum of header bytes `h` (offset 56).
    pub fn stored_checksum(h: &[u8]) -> u64 {
        rd64(h, HEADER_SUMMED)
    }

    /// Consistency of the fields with each other and with the slice index: valid slice ranks,
    /// positions equal to the slice's size, wins + losses within the positions, a block size
    /// that is a positive multiple of 20, a block count that covers the positions (or none for
    /// a uniform file, whose symbol must be at most `max_symbol`). Returns the meta summary.
    ///
    /// # Errors
    /// [`Fault::BadHeader`] naming the field.
    pub fn validate(&self, max_symbol: u8) -> Result<TableMeta, Fault> {
        let bad = |s: String| Fault::BadHeader(s);
        if !self.slice.is_valid() {
            return Err(bad("slice ranks".into()));
        }
        let size = crate::index::SliceIndex::new(self.slice).size();
        if self.positions != size {
            return Err(bad(format!(
                "{} positions, but slice {} has {size}",
                self.positions, self.slice
            )));
        }
        let draws = match self.wins.checked_add(self.losses) {
            Some(x) if x <= self.positions => self.positions - x,
            _ => return Err(bad("W/L counts exceed the positions".into())),
        };
        let bp = self.block_positions;
        if bp < 20 || !bp.is_multiple_of(20) {
            return Err(bad(format!("block size {bp}")));
        }
        match self.uniform {
            None => {
                let need = self.positions.div_ceil(u64::from(bp));
                if u64::from(self.blocks) != need {
                    return Err(bad(format!(
                        "{} blocks for {} positions of {bp}",
                        self.blocks, self.positions
                    )));
                }
            }
            Some(u) => {
                if u > max_symbol {
                    return Err(bad(format!("uniform value {u}")));
                }
                if self.blocks != 0 {
                    return Err(bad("uniform slice with blocks".into()));
                }
            }
        }
        Ok(TableMeta {
            slice: self.slice,
            positions: self.positions,
            wins: self.wins,
            losses: self.losses,
            draws,
            longest: self.longest,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_and_overflowing_material_is_an_error() {
        let h = Header {
            kind: FileKind::Wld,
            version: FORMAT_VERSION as u8,
            rules: RULES_ENGLISH as u8,
            codec: 2,
            level: 15,
            slice: "2110-34".parse().unwrap(),
            uniform: None,
            width: 4,
            block_positions: 200,
            positions: 1234,
            wins: 5,
            losses: 6,
            longest: 7,
            blocks: 8,
        };
        let mut b = h.to_bytes().to_vec();
        b.resize(HEADER_LEN, 0);
        assert_eq!(Header::parse(&b).unwrap(), h);
        b[12] = 250; // 250 black men: u8 sums would wrap
        assert!(matches!(Header::parse(&b), Err(Fault::BadHeader(_))));
    }
}
