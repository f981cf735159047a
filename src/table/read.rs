//! The reader: [`TableFile`] opens, maps (or reads) and validates a table file and decodes its
//! blocks.

use super::codec::{ValueCodec, Wld2Bit, CODEC_2BIT_THREATS};
use super::error::{Fault, TableError};
use super::fdpool::{FilePool, Handle};
use super::header::{Header, TableMeta, FORMAT_VERSION, HEADER_LEN, HEADER_SUMMED, RULES_ENGLISH};
use super::pack::Source;
use super::{slice_of_file_name, NO_CONST};
use crate::board::Wld;
use crate::slice::{Material, Slice};
use rayon::prelude::*;
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh64::{xxh64, Xxh64};

/// How a [`TableFile`] reaches its bytes.
///
/// [`Access::Pread`] is what long-lived probers use (the default of
/// [`crate::probe::TablebaseBuilder`], hence of `egdb probe`, the C ABI, the KingsRow driver and
/// the Python module): a file changed or shortened while it is open (`cp` over it truncates it
/// first) only makes the reads of its slice fail with [`Fault::Changed`]. [`Access::Mmap`] saves
/// one system call per block decoded, but **a file shortened while it is mapped kills the
/// process with SIGBUS** on the next read past its new end; use it only for files nobody
/// rewrites in place while they are open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Access {
    /// Memory-map the file (memmap2): no system call per block. Hazard: SIGBUS if the file is
    /// shortened while mapped (see [`Access`]).
    #[default]
    Mmap,
    /// Read the header at open and each block with a positioned read (`pread`) when decoded;
    /// a file changed under us gives [`Fault::Changed`].
    Pread,
}

enum Backing {
    Mmap(memmap2::Mmap),
    /// File handle (own, or a place in a bounded [`FilePool`]) plus the header and offset
    /// table read at open.
    Pread(Handle, Vec<u8>),
}

/// One block's content as stored: either all one value or packed base-3 bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// Every position of the block has this value.
    Const(Wld),
    /// The memory form of the codec ([`Wld2Bit`]: `ceil(block positions / 5)` base-3 packed
    /// bytes); read with [`ValueCodec::memory_symbol`].
    Packed(Vec<u8>),
}

/// An open, validated table file. `Send + Sync`; all reads take `&self`.
pub struct TableFile {
    /// The file's path; for a member of a material file `<material file>[<slice>]` (how errors
    /// name it).
    path: PathBuf,
    /// Offset of the file's first byte in the file opened (non-zero only for a member of a
    /// material file, [`super::pack`]).
    base: u64,
    /// Length of the file opened at open (the material file's for a member).
    outer_len: u64,
    meta: TableMeta,
    backing: Backing,
    block_positions: u32,
    n_blocks: u64,
    uniform: Option<Wld>,
    level: u32,
    rules: u32,
    /// Value codec id (2, 4, 5 or 6, docs/format.md).
    codec: u32,
    /// The slice's index (codecs 5 and 6 decode by walking the block's positions), made on first
    /// use.
    index: std::sync::OnceLock<crate::index::SliceIndex>,
    /// Bytes of a block end offset in the offset table (4 or 8).
    width: usize,
    data_start: u64,
    file_len: u64,
    /// Modification time at open (to tell a file changed under us from a damaged one).
    mtime: Option<std::time::SystemTime>,
}

impl fmt::Debug for TableFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableFile")
            .field("path", &self.path)
            .field("meta", &self.meta)
            .field("block_positions", &self.block_positions)
            .field("n_blocks", &self.n_blocks)
            .finish()
    }
}

fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn rd64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}
/// Little-endian unsigned integer of `w` (4 or 8) bytes at `at`.
fn rd_uint(b: &[u8], at: usize, w: usize) -> u64 {
    if w == 4 {
        u64::from(rd32(b, at))
    } else {
        rd64(b, at)
    }
}

impl TableFile {
    /// Open and memory-map a table file, validating magic, version, rules, codec, header
    /// consistency, the header + offset table checksum and the file length. Cheap: block data
    /// is not read. If the file name is a slice name (`2101-3n.egdb`) the header must hold that
    /// slice.
    ///
    /// # Errors
    /// [`TableError::Io`], [`TableError::Corrupt`] (which check), [`TableError::WrongSlice`].
    pub fn open(path: &Path) -> Result<TableFile, TableError> {
        Self::open_with(path, Access::Mmap)
    }

    /// [`TableFile::open`] with a choice of memory map or positioned reads.
    ///
    /// # Errors
    /// As [`TableFile::open`].
    pub fn open_with(path: &Path, access: Access) -> Result<TableFile, TableError> {
        Self::open_rules(path, access, RULES_ENGLISH)
    }

    /// [`TableFile::open_with`] for a file of the rules with id `rules`
    /// ([`crate::rules::Rules::ID`]); a file of other rules gives [`Fault::Rules`]. With
    /// [`ANY_RULES`], a file of any variant this crate knows ([`crate::rules::Variant`]) is
    /// accepted ([`TableFile::rules`] says which): for the code that reads headers and checks
    /// files whatever the game (`stats`, `info`, the build's resume, [`dir_rules`]).
    ///
    /// # Errors
    /// As [`TableFile::open`].
    pub fn open_rules(path: &Path, access: Access, rules: u32) -> Result<TableFile, TableError> {
        Self::open_inner(&Source::file(path.to_path_buf()), None, access, rules, None)
    }

    /// [`TableFile::open_rules`] for the file of slice `slice` wherever it is: a slice file of
    /// its own or a member of a material file ([`super::pack::locate`]); the header must hold
    /// `slice`. With a `pool`, positioned reads through it as [`TableFile::open_pooled`]
    /// (`access` is then ignored).
    ///
    /// # Errors
    /// As [`TableFile::open`]; a member extending past the end of its material file is
    /// [`Fault::Truncated`].
    pub fn open_source(
        src: &Source,
        slice: &Slice,
        access: Access,
        rules: u32,
        pool: Option<&std::sync::Arc<FilePool>>,
    ) -> Result<TableFile, TableError> {
        match pool {
            Some(pool) => Self::open_pooled_inner(src, Some(slice), rules, pool),
            None => Self::open_inner(src, Some(slice), access, rules, None),
        }
    }

    /// [`TableFile::open_rules`] with positioned reads whose descriptor lives in `pool`: closed
    /// when the pool needs room, opened again on the next block read, which then checks that
    /// the file is the one validated here (device, inode, length, modification time and
    /// header bytes; otherwise [`Fault::Changed`], never a value). A memory-mapped reader holds
    /// no descriptor and needs no pool.
    ///
    /// # Errors
    /// As [`TableFile::open`].
    pub fn open_pooled(
        path: &Path,
        rules: u32,
        pool: &std::sync::Arc<FilePool>,
    ) -> Result<TableFile, TableError> {
        Self::open_pooled_inner(&Source::file(path.to_path_buf()), None, rules, pool)
    }

    fn open_pooled_inner(
        src: &Source,
        slice: Option<&Slice>,
        rules: u32,
        pool: &std::sync::Arc<FilePool>,
    ) -> Result<TableFile, TableError> {
        let t = Self::open_inner(src, slice, Access::Pread, rules, Some(pool))?;
        // What a reopened descriptor must still show at offset 0: the header, or for a member
        // the start of its material file (its index).
        let n = (HEADER_LEN as u64).min(t.outer_len) as usize;
        let header = t.read_outer(0, n)?;
        if let Backing::Pread(h, _) = &t.backing {
            h.set_identity(&header)?;
        }
        Ok(t)
    }

    fn open_inner(
        src: &Source,
        slice: Option<&Slice>,
        access: Access,
        rules: u32,
        pool: Option<&std::sync::Arc<FilePool>>,
    ) -> Result<TableFile, TableError> {
        let path = src.path.as_path();
        // How errors name the file: a member as `<material file>[<slice>]`.
        let name = match (src.range, slice) {
            (Some(_), Some(s)) => PathBuf::from(src.describe(s)),
            _ => path.to_path_buf(),
        };
        // Check first: opening a FIFO would block, a directory cannot be mapped.
        let md = std::fs::metadata(path).map_err(|e| TableError::io(path, "stat", e))?;
        if !md.is_file() {
            return Err(TableError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        let file = open_file(path).map_err(|e| TableError::io(path, "open", e))?;
        let fmd = file
            .metadata()
            .map_err(|e| TableError::io(path, "stat", e))?;
        let (outer_len, mtime) = (fmd.len(), fmd.modified().ok());
        let (base, len) = src
            .span(outer_len)
            .map_err(|f| TableError::corrupt(&name, f))?;
        let backing = match access {
            Access::Mmap => {
                if len == 0 {
                    return Err(TableError::corrupt(
                        &name,
                        Fault::Truncated {
                            len,
                            expected: HEADER_LEN as u64 + 8,
                        },
                    ));
                }
                // SAFETY: table files are written once (atomically renamed into place) and never
                // modified in place; a file changed under us can give wrong bytes, which the
                // block checksums catch, but no memory unsafety in this code (only reads).
                let map = unsafe {
                    memmap2::MmapOptions::new()
                        .offset(base)
                        .len(len as usize)
                        .map(&file)
                }
                .map_err(|e| TableError::io(path, "mmap", e))?;
                Backing::Mmap(map)
            }
            Access::Pread => match pool {
                Some(pool) => Backing::Pread(Handle::pooled(pool, path, file), Vec::new()),
                None => Backing::Pread(Handle::Own(file), Vec::new()),
            },
        };
        let mut t = TableFile {
            path: name,
            base,
            outer_len,
            meta: TableMeta {
                slice: Slice {
                    material: Material {
                        bm: 0,
                        bk: 0,
                        wm: 0,
                        wk: 0,
                    },
                    black_rank: None,
                    white_rank: None,
                },
                positions: 0,
                wins: 0,
                losses: 0,
                draws: 0,
                longest: 0,
            },
            backing,
            block_positions: 0,
            n_blocks: 0,
            uniform: None,
            index: std::sync::OnceLock::new(),
            level: 0,
            rules: 0,
            codec: 0,
            width: 4,
            data_start: 0,
            file_len: len,
            mtime,
        };
        t.load_header(len, rules)?;
        let expected = match (src.range, slice) {
            (Some(_), Some(s)) => Some(*s),
            _ => path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(slice_of_file_name)
                .or(slice.copied()),
        };
        if let Some(expected) = expected {
            if expected != t.meta.slice {
                return Err(TableError::WrongSlice {
                    path: t.path.clone(),
                    expected,
                    found: t.meta.slice,
                });
            }
        }
        Ok(t)
    }

    fn read_at(&self, off: u64, len: usize) -> Result<std::borrow::Cow<'_, [u8]>, TableError> {
        match &self.backing {
            Backing::Mmap(m) => {
                let end = off.checked_add(len as u64).filter(|&e| e <= m.len() as u64);
                match end {
                    Some(e) => Ok(std::borrow::Cow::Borrowed(&m[off as usize..e as usize])),
                    None => Err(self.fault(Fault::Truncated {
                        len: m.len() as u64,
                        expected: off + len as u64,
                    })),
                }
            }
            Backing::Pread(h, _) => {
                use std::os::unix::fs::FileExt;
                let f = h.file()?;
                let mut buf = vec![0u8; len];
                f.read_exact_at(&mut buf, off + self.base).map_err(|e| {
                    if let Some(c) = self.changed() {
                        self.fault(c)
                    } else if e.kind() == std::io::ErrorKind::UnexpectedEof {
                        self.fault(Fault::Truncated {
                            len: self.file_len,
                            expected: off + len as u64,
                        })
                    } else {
                        TableError::io(&self.path, "read", e)
                    }
                })?;
                Ok(std::borrow::Cow::Owned(buf))
            }
        }
    }

    fn fault(&self, what: Fault) -> TableError {
        TableError::corrupt(&self.path, what)
    }

    /// `len` bytes at `off` of the file opened (the material file for a member), positioned
    /// reads only (the identity a pooled descriptor is checked against).
    fn read_outer(&self, off: u64, len: usize) -> Result<Vec<u8>, TableError> {
        match &self.backing {
            Backing::Mmap(_) => Ok(Vec::new()),
            Backing::Pread(h, _) => {
                use std::os::unix::fs::FileExt;
                let f = h.file()?;
                let mut buf = vec![0u8; len];
                f.read_exact_at(&mut buf, off)
                    .map_err(|e| TableError::io(&self.path, "read", e))?;
                Ok(buf)
            }
        }
    }

    /// [`Fault::Changed`] if the open file's length or modification time is no longer what it
    /// was at open (positioned reads only: a mapped file is not checked). Called on the error
    /// paths only, so that a file rewritten under us is told apart from a damaged one.
    fn changed(&self) -> Option<Fault> {
        let Backing::Pread(h, _) = &self.backing else {
            return None;
        };
        let f = match h.file() {
            Ok(f) => f,
            Err(TableError::Corrupt { what, .. }) => return Some(what),
            Err(_) => return None,
        };
        let md = f.metadata().ok()?;
        // `outer_len` is the length of the file opened, at open.
        (md.len() != self.outer_len || md.modified().ok() != self.mtime).then_some(Fault::Changed {
            was: self.outer_len,
            now: md.len(),
        })
    }

    /// `what`, or [`Fault::Changed`] when the file changed since it was opened.
    fn fault_or_changed(&self, what: Fault) -> TableError {
        self.fault(self.changed().unwrap_or(what))
    }

    fn load_header(&mut self, len: u64, rules: u32) -> Result<(), TableError> {
        let min = HEADER_LEN as u64 + 8;
        if len < min {
            // Say "unsupported version" for an old or foreign file rather than "truncated".
            if len >= 12 {
                let h = self.read_at(0, 12)?;
                if let Some(v) = Header::peek_version(&h).filter(|&v| v != FORMAT_VERSION) {
                    return Err(self.fault(Fault::Version(v)));
                }
            }
            return Err(self.fault(Fault::Truncated { len, expected: min }));
        }
        let h = self.read_at(0, HEADER_LEN)?.into_owned();
        let header = Header::parse(&h).map_err(|f| self.fault(f))?;
        if header.kind != super::header::FileKind::Wld {
            return Err(self.fault(Fault::BadMagic));
        }
        if !rules_accepted(u32::from(header.rules), rules) {
            return Err(self.fault(Fault::Rules {
                found: u32::from(header.rules),
                expected: rules,
            }));
        }
        // Codecs 2 and 4 share the stored form; they differ in which positions are don't care.
        // Codec 5 (codec 4's don't cares, context-model coded) decodes with English move
        // generation, so only English files may use it.
        let codec = u32::from(header.codec);
        let cm_ok = (codec == super::cm::CODEC_CM_THREATS
            || codec == super::cm6::CODEC_CM_FILLED
            || codec == super::cm7::CODEC_CM_BOOK)
            && u32::from(header.rules) == crate::rules::english::ID;
        if codec != Wld2Bit::ID && codec != CODEC_2BIT_THREATS && !cm_ok {
            return Err(self.fault(Fault::Codec(codec)));
        }
        let width = header.width;
        if width != 4 && width != 8 {
            return Err(self.fault(Fault::BadHeader(format!("offset width {width}"))));
        }
        let n_blocks = u64::from(header.blocks);
        let entry_len = width as u64 + 4;
        let table_len = n_blocks * entry_len;
        if table_len > len - min {
            // A block count that fits the header's positions and block size means the file
            // was cut inside its block index; any other count is a damaged header.
            let bp = u64::from(header.block_positions.max(1));
            if header.uniform.is_none() && n_blocks == header.positions.div_ceil(bp) {
                return Err(self.fault(Fault::Truncated {
                    len,
                    expected: min + table_len,
                }));
            }
            return Err(self.fault(Fault::BadHeader(format!("block count {n_blocks}"))));
        }
        // Header checksum over header[0..56] + offset table.
        let table = self
            .read_at(HEADER_LEN as u64, table_len as usize)?
            .into_owned();
        let mut hh = Xxh64::new(0);
        hh.update(&h[..HEADER_SUMMED]);
        hh.update(&table);
        if hh.digest() != Header::stored_checksum(&h) {
            return Err(self.fault(Fault::HeaderChecksum));
        }
        // From here on the header is what the writer wrote; check its consistency anyway.
        let meta = header
            .validate(Wld2Bit::MAX_SYMBOL)
            .map_err(|f| self.fault(f))?;
        let uniform = header.uniform.and_then(Wld2Bit::value);
        let w = width as usize;
        let el = entry_len as usize;
        let mut prev = 0u64;
        for b in 0..n_blocks as usize {
            let e = &table[b * el..(b + 1) * el];
            let end = rd_uint(e, 0, w);
            let c = rd32(e, w);
            if end < prev || (end == prev && c > u32::from(Wld2Bit::MAX_SYMBOL)) {
                return Err(self.fault(Fault::BadHeader(format!("offset table entry {b}"))));
            }
            prev = end;
        }
        let data_len = prev;
        let data_start = HEADER_LEN as u64 + table_len;
        // The last offset is any u64 in a crafted file (8-byte entries): no overflow.
        let file_len = data_start
            .checked_add(data_len)
            .and_then(|x| x.checked_add(8))
            .ok_or_else(|| {
                self.fault(Fault::BadHeader(format!(
                    "offset table entry {}",
                    n_blocks.saturating_sub(1)
                )))
            })?;
        if file_len > len {
            return Err(self.fault(Fault::Truncated {
                len,
                expected: file_len,
            }));
        }
        if file_len < len {
            return Err(self.fault(Fault::TrailingBytes {
                len,
                expected: file_len,
            }));
        }
        self.meta = meta;
        self.block_positions = header.block_positions;
        self.n_blocks = n_blocks;
        self.uniform = uniform;
        self.level = u32::from(header.level);
        self.rules = u32::from(header.rules);
        self.codec = u32::from(header.codec);
        self.width = w;
        self.data_start = data_start;
        self.file_len = file_len;
        if let Backing::Pread(_, t) = &mut self.backing {
            *t = table;
        }
        Ok(())
    }

    /// The slice summary from the header.
    pub fn meta(&self) -> &TableMeta {
        &self.meta
    }
    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Positions per block.
    pub fn block_positions(&self) -> u32 {
        self.block_positions
    }
    /// Number of stored blocks (0 for a uniform slice).
    pub fn block_count(&self) -> u64 {
        self.n_blocks
    }
    /// The single value of a slice that stores no blocks.
    pub fn uniform(&self) -> Option<Wld> {
        self.uniform
    }
    /// The rules id in the header ([`crate::rules::Rules::ID`]).
    pub fn rules(&self) -> u32 {
        self.rules
    }
    /// The value codec id: [`super::CODEC_2BIT_ZSTD`] (capture positions don't care) or
    /// [`CODEC_2BIT_THREATS`] (also threat positions and positions without a move,
    /// [`crate::rules::search::is_dont_care`]). Values read the same way; the probe never reads a
    /// don't-care entry of either.
    pub fn codec(&self) -> u32 {
        self.codec
    }
    /// Whether the file stores no value at the threat positions
    /// [`crate::rules::search::is_dont_care`] names (codecs 4 and 5): readers resolve those by search.
    pub fn threats_dont_care(&self) -> bool {
        self.codec == CODEC_2BIT_THREATS
            || self.codec == super::cm::CODEC_CM_THREATS
            || self.codec == super::cm6::CODEC_CM_FILLED
            || self.codec == super::cm7::CODEC_CM_BOOK
    }
    /// The zstd level recorded by the writer (informational).
    pub fn level(&self) -> u32 {
        self.level
    }
    /// Size of the file in bytes.
    pub fn file_bytes(&self) -> u64 {
        self.file_len
    }

    /// Block `b`'s data range (relative to the data start), checksum, and constant value
    /// (`NO_CONST` for a block with data).
    fn entry(&self, b: u64) -> (u64, u64, u32, u32) {
        let table: &[u8] = match &self.backing {
            Backing::Mmap(m) => &m[HEADER_LEN..self.data_start as usize],
            Backing::Pread(_, t) => t,
        };
        let (w, el) = (self.width, self.width + 4);
        let b = b as usize;
        let end = rd_uint(table, b * el, w);
        let check = rd32(table, b * el + w);
        let start = if b == 0 {
            0
        } else {
            rd_uint(table, (b - 1) * el, w)
        };
        if start == end {
            (start, end, 0, check)
        } else {
            (start, end, check, NO_CONST)
        }
    }

    /// Number of positions in block `b` (the last block may be short).
    pub fn positions_in_block(&self, b: u64) -> u64 {
        let bp = self.block_positions as u64;
        (self.meta.positions - b * bp).min(bp)
    }

    /// The value of block `b` if it is stored as a constant (no I/O: the offset table is in
    /// memory), `None` if it holds data.
    ///
    /// # Errors
    /// [`TableError::Invalid`] for `b` out of range.
    pub fn block_constant(&self, b: u64) -> Result<Option<Wld>, TableError> {
        if let Some(u) = self.uniform {
            return Ok(Some(u));
        }
        if b >= self.n_blocks {
            return Err(TableError::Invalid(format!(
                "block {b} of {}",
                self.n_blocks
            )));
        }
        let (_, _, _, c) = self.entry(b);
        Ok((c != NO_CONST).then(|| Wld2Bit::value(c as u8).unwrap_or(Wld::Draw)))
    }

    /// Decode block `b` (`b < block_count()`): checks its checksum, decompresses it, checks the
    /// size and every 2-bit digit, and returns the values repacked base 3 (five per byte).
    ///
    /// # Errors
    /// [`TableError::Invalid`] for `b` out of range; [`TableError::Corrupt`] with
    /// [`Fault::BlockChecksum`] or [`Fault::BlockDecode`]; [`TableError::Io`] (pread).
    pub fn decode_block(&self, b: u64) -> Result<Block, TableError> {
        if b >= self.n_blocks {
            return Err(TableError::Invalid(format!(
                "block {b} of {} in {}",
                self.n_blocks,
                self.path.display()
            )));
        }
        let data = match self.checked_block_bytes(b)? {
            Ok(data) => data,
            Err(constant) => return Ok(constant),
        };
        let n = self.positions_in_block(b) as usize;
        if self.codec == super::cm6::CODEC_CM_FILLED || self.codec == super::cm7::CODEC_CM_BOOK {
            let ix = self
                .index
                .get_or_init(|| crate::index::SliceIndex::new(self.meta.slice));
            let start = b * u64::from(self.block_positions);
            let values = if self.codec == super::cm7::CODEC_CM_BOOK {
                super::cm7::decode_block(ix, start, n, &data)
            } else {
                super::cm6::decode_block(ix, start, n, &data)
            }
            .map_err(|why| self.fault(Fault::BlockDecode { block: b, why }))?;
            return Ok(Block::Packed(super::codec::pack_base3(&values)));
        }
        if self.codec == super::cm::CODEC_CM_THREATS {
            let ix = self
                .index
                .get_or_init(|| crate::index::SliceIndex::new(self.meta.slice));
            let start = b * u64::from(self.block_positions);
            let values = super::cm::decode_block(ix, start, n, &data).map_err(|()| {
                self.fault(Fault::BlockDecode {
                    block: b,
                    why: "the context-model data does not end at the block's end".into(),
                })
            })?;
            return Ok(Block::Packed(super::codec::pack_base3(&values)));
        }
        let want = Wld2Bit::stored_len(n);
        let mut out = vec![0u8; want];
        let got = super::with_decompressor(|d| d.decompress_to_buffer(&data[..], &mut out[..]));
        match got {
            Ok(k) if k == want => {}
            Ok(k) => {
                return Err(self.fault_or_changed(Fault::BlockDecode {
                    block: b,
                    why: format!("{k} bytes, expected {want}"),
                }))
            }
            Err(e) => {
                return Err(self.fault_or_changed(Fault::BlockDecode {
                    block: b,
                    why: e.to_string(),
                }))
            }
        }
        let out = Wld2Bit::unpack(&out, n).map_err(|i| {
            self.fault(Fault::BlockDecode {
                block: b,
                why: format!("byte {i} holds a digit 3 or nonzero padding"),
            })
        })?;
        Ok(Block::Packed(out))
    }

    /// Whether [`TableFile::decode_page`] decodes less than the whole block (codec 6, whose
    /// blocks are coded in segments of one cache page, [`super::cm6::SEGMENT`] positions), and
    /// codec 7 (the same segments).
    pub fn pages_decode_alone(&self) -> bool {
        self.codec == super::cm6::CODEC_CM_FILLED || self.codec == super::cm7::CODEC_CM_BOOK
    }

    /// The stored bytes of block `b` (`b` in range), their checksum checked, or `Err` with
    /// the block's value when the block is constant (nothing stored).
    ///
    /// # Errors
    /// A read error, or [`Fault::BlockChecksum`] when the bytes do not match the checksum.
    fn checked_block_bytes(
        &self,
        b: u64,
    ) -> Result<Result<std::borrow::Cow<'_, [u8]>, Block>, TableError> {
        let (start, end, check, constant) = self.entry(b);
        if constant != NO_CONST {
            return Ok(Err(Block::Const(
                Wld2Bit::value(constant as u8).unwrap_or(Wld::Draw),
            )));
        }
        let data = self.read_at(self.data_start + start, (end - start) as usize)?;
        if xxh64(&data, 0) as u32 != check {
            return Err(self.fault_or_changed(Fault::BlockChecksum(b)));
        }
        Ok(Ok(data))
    }

    /// Decode the positions `page * SEGMENT .. (page + 1) * SEGMENT` of block `b` (codecs 6 and 7,
    /// [`super::cm6::SEGMENT`] = 4,120 positions; the last page of a block may be shorter)
    /// and return them in the memory form (base 3, five per byte: one page of the probe's
    /// block cache, 824 bytes). The block's checksum is checked over all its bytes first;
    /// only the page's segment is decoded. For another codec, the whole block is decoded and
    /// the page cut from it.
    ///
    /// # Errors
    /// [`TableError::Invalid`] for `b` or `page` out of range; as
    /// [`TableFile::decode_block`] otherwise.
    pub fn decode_page(&self, b: u64, page: usize) -> Result<Block, TableError> {
        const PAGE_BYTES: usize = super::cm6::SEGMENT / 5;
        let n = if b < self.n_blocks {
            self.positions_in_block(b) as usize
        } else {
            0
        };
        if page >= n.div_ceil(super::cm6::SEGMENT) {
            return Err(TableError::Invalid(format!(
                "page {page} of block {b} of {} in {}",
                self.n_blocks,
                self.path.display()
            )));
        }
        if !self.pages_decode_alone() {
            return Ok(match self.decode_block(b)? {
                Block::Packed(p) => {
                    let a = page * PAGE_BYTES;
                    Block::Packed(p[a..(a + PAGE_BYTES).min(p.len())].to_vec())
                }
                c => c,
            });
        }
        let data = match self.checked_block_bytes(b)? {
            Ok(data) => data,
            Err(constant) => return Ok(constant),
        };
        let ix = self
            .index
            .get_or_init(|| crate::index::SliceIndex::new(self.meta.slice));
        let first = b * u64::from(self.block_positions);
        let decode_fault = |why: String| self.fault(Fault::BlockDecode { block: b, why });
        if self.codec == super::cm7::CODEC_CM_BOOK {
            let values =
                super::cm7::decode_page(ix, first, n, page, &data).map_err(decode_fault)?;
            return Ok(Block::Packed(super::codec::pack_base3(&values)));
        }
        let ranges = super::cm6::segment_ranges(n, &data).map_err(decode_fault)?;
        let (a, e) = ranges[page];
        let values = super::cm6::decode_segment(ix, first, n, page, &data[a..e])
            .map_err(|()| decode_fault(format!("segment {page} does not decode")))?;
        Ok(Block::Packed(super::codec::pack_base3(&values)))
    }

    /// Stored value of position `index` (decodes one block; no cache). Don't-care positions
    /// return the filler the writer chose.
    ///
    /// # Errors
    /// [`TableError::Invalid`] if `index >= positions`; block errors of
    /// [`TableFile::decode_block`].
    pub fn get(&self, index: u64) -> Result<Wld, TableError> {
        if index >= self.meta.positions {
            return Err(TableError::Invalid(format!(
                "index {index} out of range for slice {} ({} positions)",
                self.meta.slice, self.meta.positions
            )));
        }
        if let Some(u) = self.uniform {
            return Ok(u);
        }
        let bp = self.block_positions as u64;
        match self.decode_block(index / bp)? {
            Block::Const(w) => Ok(w),
            Block::Packed(p) => Wld2Bit::value(Wld2Bit::memory_symbol(&p, (index % bp) as usize))
                .ok_or_else(|| {
                    self.fault(Fault::BlockDecode {
                        block: index / bp,
                        why: "impossible symbol".into(),
                    })
                }),
        }
    }

    /// Every stored value, one byte 0..=2 per position in index order; the blocks are decoded
    /// in parallel (rayon's global pool).
    ///
    /// # Errors
    /// Block errors of [`TableFile::decode_block`].
    pub fn decode_all(&self) -> Result<Vec<u8>, TableError> {
        self.decode_all_in(true)
    }

    /// The stored values of positions `from..to` (one byte 0..=2 each, in index order), from
    /// the blocks that hold them only (decoded in parallel): the converter's input, a bounded
    /// range at a time whatever the slice's size.
    ///
    /// # Errors
    /// [`TableError::Invalid`] for a range that is empty-reversed or past the slice's end; block
    /// errors of [`TableFile::decode_block`].
    pub(crate) fn decode_range(&self, from: u64, to: u64) -> Result<Vec<u8>, TableError> {
        if from > to || to > self.meta.positions {
            return Err(TableError::Invalid(format!(
                "positions {from}..{to} of slice {} ({} positions)",
                self.meta.slice, self.meta.positions
            )));
        }
        if let Some(u) = self.uniform {
            return Ok(vec![u as u8; (to - from) as usize]);
        }
        if from == to {
            return Ok(Vec::new());
        }
        let bp = u64::from(self.block_positions);
        let (first, last) = (from / bp, (to - 1) / bp);
        let parts: Vec<Vec<u8>> = (first..=last)
            .into_par_iter()
            .map(|b| -> Result<Vec<u8>, TableError> {
                // The part of block b inside from..to.
                let (a, z) = ((b * bp).max(from), ((b + 1) * bp).min(to));
                let (lo, hi) = ((a - b * bp) as usize, (z - b * bp) as usize);
                Ok(match self.decode_block(b)? {
                    Block::Const(w) => vec![w as u8; hi - lo],
                    Block::Packed(p) => (lo..hi).map(|i| Wld2Bit::memory_symbol(&p, i)).collect(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(parts.concat())
    }

    /// [`TableFile::decode_all`] on the calling thread only. For a caller that holds a lock
    /// inside a rayon task: while a parallel decode waits for its blocks, the waiting thread
    /// runs other queued tasks, which may ask for the same lock and never get it (the
    /// dependency store's loads hung that way, `store::DecodedTables`).
    ///
    /// # Errors
    /// As [`TableFile::decode_all`].
    pub fn decode_all_serial(&self) -> Result<Vec<u8>, TableError> {
        self.decode_all_in(false)
    }

    fn decode_all_in(&self, parallel: bool) -> Result<Vec<u8>, TableError> {
        let n = self.meta.positions as usize;
        if let Some(u) = self.uniform {
            return Ok(vec![u as u8; n]);
        }
        let block = |b: u64| -> Result<Vec<u8>, TableError> {
            let k = self.positions_in_block(b) as usize;
            Ok(match self.decode_block(b)? {
                Block::Const(w) => vec![w as u8; k],
                Block::Packed(p) => (0..k).map(|i| Wld2Bit::memory_symbol(&p, i)).collect(),
            })
        };
        let parts: Vec<Vec<u8>> = if parallel {
            (0..self.n_blocks)
                .into_par_iter()
                .map(block)
                .collect::<Result<_, _>>()?
        } else {
            (0..self.n_blocks).map(block).collect::<Result<_, _>>()?
        };
        let mut out = Vec::with_capacity(n);
        for p in parts {
            out.extend_from_slice(&p);
        }
        debug_assert_eq!(out.len(), n);
        Ok(out)
    }

    /// Check the whole-file xxh64 checksum (reads every byte).
    ///
    /// # Errors
    /// [`TableError::Corrupt`] with [`Fault::FileChecksum`]; [`TableError::Io`] (pread).
    pub fn verify_checksum(&self) -> Result<(), TableError> {
        let body = self.file_len - 8;
        let (digest, stored) = match &self.backing {
            Backing::Mmap(m) => (xxh64(&m[..body as usize], 0), rd64(m, body as usize)),
            Backing::Pread(..) => {
                let mut h = Xxh64::new(0);
                let mut off = 0u64;
                const CHUNK: u64 = 1 << 20;
                while off < body {
                    let k = CHUNK.min(body - off);
                    h.update(&self.read_at(off, k as usize)?);
                    off += k;
                }
                let s = self.read_at(body, 8)?;
                (h.digest(), rd64(&s, 0))
            }
        };
        if digest != stored {
            return Err(self.fault_or_changed(Fault::FileChecksum));
        }
        Ok(())
    }
}

/// Open a table file for reading. A table directory holds one file per slice and metric (4,446
/// files for the values and distances of at most 5 pieces) and the readers keep the files they
/// use open, which passes the common default soft limit of 1,024 open files of an ordinary
/// user (root here had 20,000). On "too many open files" (`EMFILE`) the process's soft limit
/// (`RLIMIT_NOFILE`) is raised once to its hard limit, as the Go runtime does for every
/// program, and the open is tried again; past the hard limit the error stands (a bounded set of
/// open files is planned with the one-file-per-material layout, issue 32).
///
/// # Errors
/// The [`std::io::Error`] of the open.
pub(crate) fn open_file(path: &Path) -> std::io::Result<File> {
    match File::open(path) {
        Err(e) if e.raw_os_error() == Some(libc::EMFILE) && raise_open_file_limit() => {
            File::open(path)
        }
        r => r,
    }
}

/// Raise the soft limit of open files to the hard limit (tried once per process); whether it
/// was raised (then every caller that met `EMFILE` tries its open again).
fn raise_open_file_limit() -> bool {
    static RAISED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *RAISED.get_or_init(|| {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit are given a valid, initialised rlimit struct owned
        // by this frame; they only read or write that struct.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 || lim.rlim_cur >= lim.rlim_max {
                return false;
            }
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0
        }
    })
}

/// The `rules` argument of [`TableFile::open_rules`] and [`crate::table::DtcFile::open`] that
/// accepts a file of any rules id a variant of [`crate::rules::Variant`] has (no variant has
/// id 0).
pub const ANY_RULES: u32 = 0;

/// Whether a file whose header holds rules id `found` may be opened for `expected`
/// ([`ANY_RULES`]: any known variant).
pub(crate) fn rules_accepted(found: u32, expected: u32) -> bool {
    if expected == ANY_RULES {
        crate::rules::Variant::from_id(found).is_some()
    } else {
        found == expected
    }
}

/// The rules id of the tables in `dir` (one variant per directory): the id in the headers of
/// its WLD files (`<slice>.egdb`, and the slices of material files `<material>.egdb`) that open; `None` when none does (an empty directory, or
/// only damaged files, which the callers report themselves).
///
/// # Errors
/// [`TableError::Invalid`] when the files hold tables of two or more variants (naming two
/// files of different rules); [`TableError::Io`] when the directory cannot be listed.
pub fn dir_rules(dir: &Path) -> Result<Option<u32>, TableError> {
    // Slice files and the members of material files (`egdb pack`).
    let listed = super::pack::list(dir, super::header::FileKind::Wld)
        .map_err(|e| TableError::io(dir, "read directory", e))?;
    let mut first: Option<(u32, std::path::PathBuf)> = None;
    for l in listed {
        let super::pack::Listed::Slice(s, src) = l else {
            continue;
        };
        let Ok(f) = TableFile::open_source(&src, &s, Access::Pread, ANY_RULES, None) else {
            continue;
        };
        let p = f.path().to_path_buf();
        match &first {
            None => first = Some((f.rules(), p)),
            Some((r, q)) if *r != f.rules() => {
                let name =
                    |id: u32| crate::rules::Variant::from_id(id).map_or("unknown", |v| v.name());
                return Err(TableError::Invalid(format!(
                    "{} holds tables of two variants: {} ({}) and {} ({}); a directory holds the tables of one variant",
                    dir.display(),
                    q.display(),
                    name(*r),
                    p.display(),
                    name(f.rules())
                )));
            }
            _ => {}
        }
    }
    Ok(first.map(|(r, _)| r))
}
