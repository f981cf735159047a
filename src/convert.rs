//! Converting a table directory from one value codec to another (`egdb convert`,
//! docs/format.md "Converting"): [`convert_dir`] writes every WLD file of a source directory
//! into a target directory in the codec asked for, copies the distance files (`.dtc`, `.dtw`)
//! byte for byte, and can check a random sample of positions against the source's values.
//!
//! Which conversions exist: a file already in the target codec is copied as it is; codec 2
//! converts to 4, 5, 6 or 7 without search (codec 2 stores the true value of every position
//! those codecs store, the captures aside, which they leave don't care too); codecs 4 to 7
//! have the same don't-care positions and convert into each other. Codecs 4 to 7 store no value
//! at their threat positions, so they cannot become codec 2 without a search (rebuild with
//! `egdb build`), and they are English only (a variant's directory converts to codec 2 only,
//! that is, is copied).

use crate::board::{Color, Position, Wld};
use crate::index::SliceIndex;
use crate::slice::Slice;
use crate::table::{
    slice_of_dtc_file_name, slice_of_file_name, Access, DtcFile, FileKind, TableError, TableFile,
    WriteOptions, ANY_RULES, CODEC_2BIT_THREATS, CODEC_2BIT_ZSTD, CODEC_CM_BOOK, CODEC_CM_FILLED,
    CODEC_CM_THREATS, RULES_ENGLISH,
};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The largest `check` of [`ConvertOptions`] (positions per piece count).
pub const MAX_CONVERT_CHECK: u64 = 10_000_000;

/// What [`convert_dir`] does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvertOptions {
    /// The source directory (read only).
    pub src: PathBuf,
    /// The target directory (created if missing); must not be `src`, by any path.
    pub dst: PathBuf,
    /// The value codec of the WLD files written: 2, 4, 5, 6 or 7 (docs/format.md).
    pub codec: u32,
    /// Positions per block of the files re-encoded (a positive multiple of 20; default
    /// 65,520, what `egdb build` writes). Files copied keep theirs.
    pub block_positions: u32,
    /// Random positions per piece count checked after the conversion (0: none; at most
    /// [`MAX_CONVERT_CHECK`]).
    pub check: u64,
}

impl ConvertOptions {
    /// Convert `src` into `dst` in `codec`, with the default block size and no check.
    pub fn new(src: impl Into<PathBuf>, dst: impl Into<PathBuf>, codec: u32) -> ConvertOptions {
        ConvertOptions {
            src: src.into(),
            dst: dst.into(),
            codec,
            block_positions: WriteOptions::default().block_positions,
            check: 0,
        }
    }
}

/// The files of one piece count (WLD files) or of the distance files, as converted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvertCounts {
    /// Files in the source.
    pub files: u64,
    /// Positions of those files (Black to move, as stored).
    pub positions: u64,
    /// Bytes of the source files.
    pub bytes_before: u64,
    /// Bytes of the target files.
    pub bytes_after: u64,
    /// Files re-encoded in the target codec.
    pub converted: u64,
    /// Files copied byte for byte (already in the target codec; distance files).
    pub copied: u64,
    /// Files found in the target already, whole and in the target codec (a resumed run): not
    /// written again.
    pub skipped: u64,
}

impl ConvertCounts {
    fn add(&mut self, o: &ConvertCounts) {
        self.files += o.files;
        self.positions += o.positions;
        self.bytes_before += o.bytes_before;
        self.bytes_after += o.bytes_after;
        self.converted += o.converted;
        self.copied += o.copied;
        self.skipped += o.skipped;
    }
}

/// What [`convert_dir`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvertReport {
    /// The rules id of the tables (kept in every file).
    pub rules: u32,
    /// The codec of the WLD files written.
    pub codec: u32,
    /// The WLD files, per piece count.
    pub wld: BTreeMap<u32, ConvertCounts>,
    /// The distance files (`.dtc` and `.dtw`), all piece counts (`positions` counts each
    /// file's positions).
    pub distance: ConvertCounts,
    /// Positions checked per piece count (empty without a check).
    pub checked: BTreeMap<u32, u64>,
    /// What the check compared the target's probe with: `"codec-2 reading"` (every source
    /// file codec 2: captures by search over the slow move generator, else the stored value;
    /// none of the probe's resolution code) or `"probe of the source"` (a source with codec 4,
    /// 5 or 6 files, or a variant's tables); empty without a check.
    pub check_reference: &'static str,
    /// Entries of the source that are not table files (not copied), by name, sorted; hidden
    /// entries (names starting with `.`: a build's lock, temporary files) left out.
    pub ignored: Vec<String>,
    /// The target's filesystem has no `flock` ([`crate::generate::DirLock::unsupported`]):
    /// nothing kept a build or another conversion out of it meanwhile (`egdb convert` warns).
    pub unlocked: bool,
}

impl ConvertReport {
    /// The WLD files of every piece count together.
    pub fn wld_total(&self) -> ConvertCounts {
        let mut t = ConvertCounts::default();
        self.wld.values().for_each(|c| t.add(c));
        t
    }
}

/// Why [`convert_dir`] failed. Every variant is found before anything is written, except
/// [`ConvertError::Source`] for a damaged block or file checksum, [`ConvertError::Write`] and
/// [`ConvertError::Check`]; the files written before such an error are whole and right (a
/// rerun skips them).
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// Bad options (codec, block size, check count), or a source that is not a table
    /// directory.
    #[error("{0}")]
    Options(String),
    /// The target is the source directory.
    #[error("the target {} is the source directory {}: convert into another directory", dst.display(), src.display())]
    SameDirectory {
        /// The source.
        src: PathBuf,
        /// The target.
        dst: PathBuf,
    },
    /// A file cannot be converted to the codec asked for (the reason says why).
    #[error("cannot convert {} from codec {from} to codec {to}: {why}", path.display())]
    Impossible {
        /// The first such source file.
        path: PathBuf,
        /// Its codec.
        from: u32,
        /// The codec asked for.
        to: u32,
        /// Why.
        why: String,
    },
    /// A source file is damaged or unreadable (the error names it).
    #[error("source file {0}")]
    Source(TableError),
    /// The target directory holds the tables of other rules.
    #[error("the target {} holds {found} tables, the source {expected} tables: convert into an empty directory", dst.display())]
    OtherRules {
        /// The target.
        dst: PathBuf,
        /// The variant found there.
        found: String,
        /// The source's variant.
        expected: String,
    },
    /// Another build or conversion holds the target directory's lock.
    #[error("{0}")]
    Busy(crate::generate::BuildError),
    /// A target file or directory could not be written (the error names it).
    #[error("cannot write {0}")]
    Write(TableError),
    /// The check found a position whose value in the target differs from the source's.
    #[error("check: {differ} of {checked} random positions of {pieces} pieces differ in the target, e.g. {example}")]
    Check {
        /// The piece count.
        pieces: u32,
        /// Positions that differ.
        differ: u64,
        /// Positions checked.
        checked: u64,
        /// The first one (FEN, source value, target value).
        example: String,
    },
}

/// One table file of the source.
struct Item {
    kind: FileKind,
    slice: Slice,
    src: PathBuf,
    dst: PathBuf,
    /// Positions of the slice.
    positions: u64,
    /// Source codec (WLD files).
    codec: u32,
}

/// How one file went: counted into its piece count (WLD) or the distance files.
struct Outcome {
    kind: FileKind,
    pieces: u32,
    counts: ConvertCounts,
}

/// `(dev, inode)` of `p`, if it exists.
fn identity(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// Refuse `dst` when it is `src` (the same directory by any path: canonical paths, or device
/// and inode).
fn refuse_same(src: &Path, dst: &Path) -> Result<(), ConvertError> {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let same_id = identity(src).is_some() && identity(src) == identity(dst);
    if same_id || (canon(src).is_some() && canon(src) == canon(dst)) {
        return Err(ConvertError::SameDirectory {
            src: src.to_path_buf(),
            dst: dst.to_path_buf(),
        });
    }
    Ok(())
}

/// The variant name of a rules id (for messages).
fn rules_name(id: u32) -> String {
    crate::rules::Variant::from_id(id)
        .map_or_else(|| format!("rules id {id}"), |v| v.name().to_string())
}

/// Whether `bytes` (a whole WLD, DTC or DTW file) ends with the xxh64 of everything before it
/// (the files' last check; so that the bytes copied are the bytes checked).
fn file_checksum_ok(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && {
        let body = bytes.len() - 8;
        xxhash_rust::xxh64::xxh64(&bytes[..body], 0).to_le_bytes()[..] == bytes[body..]
    }
}

/// Convert the tables of `opts.src` into `opts.dst` (see the module docs); `progress(done,
/// total)` is called as files finish (positions of the files done, of all files).
///
/// Every file is written atomically (temporary file, fsync, rename) and its bytes depend only
/// on the source and the options, whatever the thread count. A rerun after an interruption
/// skips the target files that are whole (file checksum), in the target codec, block size and
/// level, and of the source's slice, rules and counts (the distance files: byte-identical to
/// the source's), and writes the others again. The target directory is locked against builds
/// and other conversions while the files are written.
///
/// # Errors
/// [`ConvertError`]: everything but a damaged block, a write error and a failed check is
/// found before anything is written.
pub fn convert_dir(
    opts: &ConvertOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<ConvertReport, ConvertError> {
    let (src, dst) = (&opts.src, &opts.dst);
    let codecs = [
        CODEC_2BIT_ZSTD,
        CODEC_2BIT_THREATS,
        CODEC_CM_THREATS,
        CODEC_CM_FILLED,
        CODEC_CM_BOOK,
    ];
    if !codecs.contains(&opts.codec) {
        return Err(ConvertError::Options(format!(
            "codec {}: the target codec must be 2, 4, 5, 6 or 7",
            opts.codec
        )));
    }
    if opts.block_positions < 20 || !opts.block_positions.is_multiple_of(20) {
        return Err(ConvertError::Options(format!(
            "block size {}: not a positive multiple of 20",
            opts.block_positions
        )));
    }
    if opts.check > MAX_CONVERT_CHECK {
        return Err(ConvertError::Options(format!(
            "check {}: at most {MAX_CONVERT_CHECK} positions per piece count",
            opts.check
        )));
    }
    match std::fs::metadata(src) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(ConvertError::Options(format!(
                "the source {} is not a directory",
                src.display()
            )))
        }
        Err(e) => {
            return Err(ConvertError::Options(format!(
                "the source {}: {e}",
                src.display()
            )))
        }
    }
    for (d, what) in [(src, "source"), (dst, "target")] {
        if crate::table::pack::has_packs(d) {
            return Err(ConvertError::Options(format!(
                "the {what} {} holds material files (egdb pack); convert works on slice files: run `egdb unpack --dir {}` first",
                d.display(),
                d.display()
            )));
        }
    }
    if std::fs::metadata(dst).is_ok_and(|m| !m.is_dir()) {
        return Err(ConvertError::Options(format!(
            "the target {} exists and is not a directory",
            dst.display()
        )));
    }
    refuse_same(src, dst)?;

    // The source's table files, by canonical name; every other entry is left out.
    let rd = std::fs::read_dir(src)
        .map_err(|e| ConvertError::Source(TableError::io(src, "read directory", e)))?;
    let mut items: Vec<Item> = Vec::new();
    let mut ignored: Vec<String> = Vec::new();
    for e in rd {
        let e = e.map_err(|e| ConvertError::Source(TableError::io(src, "read directory", e)))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let kind_slice = if let Some(s) = slice_of_file_name(&name) {
            Some((FileKind::Wld, s))
        } else if let Some(s) = slice_of_dtc_file_name(&name) {
            Some((FileKind::Dtc, s))
        } else {
            crate::table::dtw::slice_of_dtw_file_name(&name).map(|s| (FileKind::Dtw, s))
        };
        match kind_slice {
            Some((kind, slice)) => items.push(Item {
                kind,
                slice,
                src: e.path(),
                dst: dst.join(&name),
                positions: 0,
                codec: 0,
            }),
            // Hidden entries (a build's lock, temporary files) are not reported.
            None if name.starts_with('.') => {}
            None => ignored.push(name),
        }
    }
    ignored.sort();
    // By name: the first file refused below is the same every run.
    items.sort_by(|a, b| a.src.cmp(&b.src));
    if !items.iter().any(|i| i.kind == FileKind::Wld) {
        return Err(ConvertError::Options(format!(
            "no table files in {} (<slice>.egdb)",
            src.display()
        )));
    }

    // Every header, before anything is written: the rules (one variant), the codecs.
    let mut rules: Option<(u32, PathBuf)> = None;
    for it in items.iter_mut().filter(|i| i.kind == FileKind::Wld) {
        let t = TableFile::open_rules(&it.src, Access::Pread, ANY_RULES)
            .map_err(ConvertError::Source)?;
        match &rules {
            None => rules = Some((t.rules(), it.src.clone())),
            Some((r, p)) if *r != t.rules() => {
                return Err(ConvertError::Options(format!(
                    "the source holds tables of two variants: {} ({}) and {} ({})",
                    p.display(),
                    rules_name(*r),
                    it.src.display(),
                    rules_name(t.rules())
                )))
            }
            _ => {}
        }
        it.positions = t.meta().positions;
        it.codec = t.codec();
    }
    let rules = rules.map_or(RULES_ENGLISH, |r| r.0);
    for it in items.iter_mut().filter(|i| i.kind != FileKind::Wld) {
        let t = DtcFile::open_kind(&it.src, rules, it.kind).map_err(ConvertError::Source)?;
        it.positions = t.meta().positions;
    }
    let to = opts.codec;
    for it in items.iter().filter(|i| i.kind == FileKind::Wld) {
        let from = it.codec;
        let why = if from == to {
            None
        } else if to == CODEC_2BIT_ZSTD {
            Some(format!(
                "codec {from} stores no value at its threat positions (it resolves them by a \
                 search at probe time), which codec 2 stores: that needs a search, not a \
                 conversion (rebuild the tables with `egdb build --codec 2`)"
            ))
        } else if rules != RULES_ENGLISH {
            Some(format!(
                "codec {to} is for English tables only; these are {} tables (codec 2 only)",
                rules_name(rules)
            ))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(ConvertError::Impossible {
                path: it.src.clone(),
                from,
                to,
                why,
            });
        }
    }

    // The target: made, locked, of the same rules, stale temporary files gone.
    std::fs::create_dir_all(dst)
        .map_err(|e| ConvertError::Write(TableError::io(dst, "create directory", e)))?;
    refuse_same(src, dst)?;
    let lock = crate::generate::DirLock::acquire(dst, true).map_err(ConvertError::Busy)?;
    match crate::table::dir_rules(dst) {
        Ok(Some(r)) if r != rules => {
            return Err(ConvertError::OtherRules {
                dst: dst.clone(),
                found: rules_name(r),
                expected: rules_name(rules),
            })
        }
        Ok(_) => {}
        Err(e) => return Err(ConvertError::Options(e.to_string())),
    }
    crate::generate::remove_stale_temp_files(dst);

    let wopts = WriteOptions {
        codec: to,
        block_positions: opts.block_positions,
        rules,
        ..WriteOptions::default()
    };
    let total: u64 = items.iter().map(|i| i.positions).sum();
    let done = std::sync::atomic::AtomicU64::new(0);
    let mut order: Vec<&Item> = items.iter().collect();
    order.sort_by_key(|i| std::cmp::Reverse(i.positions));
    let outcomes: Vec<Outcome> = order
        .par_iter()
        .map(|it| {
            let o = convert_file(it, rules, &wopts)?;
            let d = done.fetch_add(it.positions, std::sync::atomic::Ordering::Relaxed);
            progress(d + it.positions, total);
            Ok(o)
        })
        .collect::<Result<_, ConvertError>>()?;
    let mut report = ConvertReport {
        rules,
        codec: to,
        ignored,
        unlocked: lock.unsupported(),
        ..ConvertReport::default()
    };
    for o in &outcomes {
        match o.kind {
            FileKind::Wld => report.wld.entry(o.pieces).or_default().add(&o.counts),
            _ => report.distance.add(&o.counts),
        }
    }
    if opts.check > 0 {
        let wld: Vec<&Item> = items.iter().filter(|i| i.kind == FileKind::Wld).collect();
        report.check_reference = check(opts, rules, &wld, &mut report.checked)?;
    }
    Ok(report)
}

/// Convert (or copy, or skip) one file.
fn convert_file(it: &Item, rules: u32, wopts: &WriteOptions) -> Result<Outcome, ConvertError> {
    let pieces = it.slice.material.pieces();
    let mut c = ConvertCounts {
        files: 1,
        positions: it.positions,
        ..ConvertCounts::default()
    };
    let write = |bytes: &[u8]| -> Result<u64, ConvertError> {
        crate::table::write::write_atomic(&it.dst, bytes).map_err(ConvertError::Write)
    };
    if it.kind != FileKind::Wld || it.codec == wopts.codec {
        // A copy, byte for byte, of a file whose checks all pass (a target file equal to it
        // is skipped).
        if it.kind == FileKind::Wld {
            let t = TableFile::open_rules(&it.src, Access::Pread, rules)
                .map_err(ConvertError::Source)?;
            t.verify_checksum().map_err(ConvertError::Source)?;
        } else {
            let t = DtcFile::open_kind(&it.src, rules, it.kind).map_err(ConvertError::Source)?;
            t.verify_checksum().map_err(ConvertError::Source)?;
        }
        let bytes = std::fs::read(&it.src)
            .map_err(|e| ConvertError::Source(TableError::io(&it.src, "read", e)))?;
        if !file_checksum_ok(&bytes) {
            // Changed between the checks and the read.
            return Err(ConvertError::Source(TableError::corrupt(
                &it.src,
                crate::table::Fault::FileChecksum,
            )));
        }
        c.bytes_before = bytes.len() as u64;
        c.bytes_after = bytes.len() as u64;
        // Only a regular file of the same length is read and compared (a FIFO or device named
        // like the file would block the read or never end; the rename replaces it).
        let same = std::fs::symlink_metadata(&it.dst)
            .is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64)
            && std::fs::read(&it.dst).is_ok_and(|d| d == bytes);
        if same {
            c.skipped = 1;
        } else {
            write(&bytes)?;
            c.copied = 1;
        }
        return Ok(Outcome {
            kind: it.kind,
            pieces,
            counts: c,
        });
    }
    let t = TableFile::open_rules(&it.src, Access::Pread, rules).map_err(ConvertError::Source)?;
    c.bytes_before = t.file_bytes();
    // A file already converted (a resumed run): whole, in the target's codec and layout, of
    // the source's slice, rules and counts.
    let done = TableFile::open_rules(&it.dst, Access::Pread, rules)
        .ok()
        .filter(|d| {
            d.codec() == wopts.codec
                && d.block_positions() == wopts.block_positions
                && d.level() == wopts.level as u32
                && d.meta() == t.meta()
                && d.verify_checksum().is_ok()
        });
    if let Some(d) = done {
        c.skipped = 1;
        c.bytes_after = d.file_bytes();
    } else {
        t.verify_checksum().map_err(ConvertError::Source)?;
        let bytes = crate::table::write::reencode(&t, wopts).map_err(|e| match e {
            TableError::Invalid(_) => ConvertError::Options(e.to_string()),
            e => ConvertError::Source(e),
        })?;
        c.bytes_after = write(&bytes)?;
        c.converted = 1;
    }
    Ok(Outcome {
        kind: it.kind,
        pieces,
        counts: c,
    })
}

/// The check of [`convert_dir`]: `opts.check` random positions per piece count of the WLD
/// files `wld` (a random slice, each alike, for every other position, else a random position
/// of all, so that small slices are drawn too; either side to move), the target's probe
/// against the source's value. Returns the reference used
/// ([`ConvertReport::check_reference`]).
fn check(
    opts: &ConvertOptions,
    rules: u32,
    wld: &[&Item],
    checked: &mut BTreeMap<u32, u64>,
) -> Result<&'static str, ConvertError> {
    let variant = crate::rules::Variant::from_id(rules).unwrap_or_default();
    let probe_err = |e: crate::probe::ProbeError| ConvertError::Options(format!("check: {e}"));
    let target = crate::any::AnyTablebase::open(&opts.dst, Some(variant)).map_err(probe_err)?;
    let codec2 = rules == RULES_ENGLISH && wld.iter().all(|i| i.codec == CODEC_2BIT_ZSTD);
    let source = if codec2 {
        None
    } else {
        Some(crate::any::AnyTablebase::open(&opts.src, Some(variant)).map_err(probe_err)?)
    };
    let files: HashMap<Slice, &Path> = wld.iter().map(|i| (i.slice, i.src.as_path())).collect();
    let reader = Codec2Reading {
        files,
        open: std::sync::Mutex::new(HashMap::new()),
    };
    let mut by_pieces: BTreeMap<u32, Vec<&Item>> = BTreeMap::new();
    for it in wld.iter().filter(|i| i.positions > 0) {
        by_pieces
            .entry(it.slice.material.pieces())
            .or_default()
            .push(it);
    }
    for (&k, slices) in &by_pieces {
        let all: u64 = slices.iter().map(|i| i.positions).sum();
        let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ u64::from(k);
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut ps: Vec<Position> = Vec::with_capacity(opts.check as usize);
        for n in 0..opts.check {
            let (s, i) = if n % 2 == 0 {
                let it = slices[(next() % slices.len() as u64) as usize];
                (it.slice, next() % it.positions)
            } else {
                let mut g = next() % all;
                let it = slices
                    .iter()
                    .find(|it| {
                        let here = g < it.positions;
                        if !here {
                            g -= it.positions;
                        }
                        here
                    })
                    .expect("g below the sum of the positions");
                (it.slice, g)
            };
            let p = SliceIndex::new(s)
                .unrank(i)
                .map_err(|e| ConvertError::Options(format!("check: slice {s}: {e}")))?;
            let w = Position {
                side: Color::White,
                ..p
            };
            // The same men and kings with White to move, where that is a position.
            ps.push(if next() & 1 == 1 && target.validate(&w).is_ok() {
                w
            } else {
                p
            });
        }
        let results: Vec<Option<String>> = ps
            .par_iter()
            .map(|p| -> Result<Option<String>, ConvertError> {
                let want = match &source {
                    None => reader.value(p)?,
                    Some(tb) => tb.probe_wld(p).map_err(probe_err)?,
                };
                let got = target.probe_wld(p);
                Ok((got.as_ref().ok() != Some(&want))
                    .then(|| format!("{}: source {want}, target {got:?}", p.to_fen())))
            })
            .collect::<Result<_, _>>()?;
        let differ = results.iter().flatten().count() as u64;
        if let Some(example) = results.into_iter().flatten().next() {
            return Err(ConvertError::Check {
                pieces: k,
                differ,
                checked: opts.check,
                example,
            });
        }
        checked.insert(k, opts.check);
    }
    Ok(if codec2 {
        "codec-2 reading"
    } else {
        "probe of the source"
    })
}

/// Codec 2's reading of English positions from the source's files, written apart from the
/// probe: captures resolved by search over the slow move generator (`Position::unique_moves`),
/// no move a loss, else the stored entry of the Black-to-move form (`TableFile::get`). The
/// files are memory-mapped (no descriptor held open however many slices are drawn).
struct Codec2Reading<'a> {
    files: HashMap<Slice, &'a Path>,
    open: std::sync::Mutex<HashMap<Slice, std::sync::Arc<TableFile>>>,
}

impl Codec2Reading<'_> {
    fn value(&self, p: &Position) -> Result<Wld, ConvertError> {
        let succ: Vec<Position> = p.unique_moves().iter().map(|m| p.apply(m)).collect();
        if succ.is_empty() {
            return Ok(Wld::Loss);
        }
        if p.has_capture() {
            let mut best = Wld::Loss;
            for s in &succ {
                best = best.max(self.value(s)?.negate());
            }
            return Ok(best);
        }
        let n = p.normalized();
        let s = Slice::of(&n);
        let t = {
            let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
            match open.get(&s) {
                Some(t) => t.clone(),
                None => {
                    let path = self.files.get(&s).ok_or_else(|| {
                        ConvertError::Options(format!(
                            "check: the source has no file of slice {s} (needed by {})",
                            p.to_fen()
                        ))
                    })?;
                    let t = std::sync::Arc::new(
                        TableFile::open_rules(path, Access::Mmap, RULES_ENGLISH)
                            .map_err(ConvertError::Source)?,
                    );
                    open.insert(s, t.clone());
                    t
                }
            }
        };
        t.get(SliceIndex::new(s).rank(&n))
            .map_err(ConvertError::Source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_of_bytes() {
        let mut b = b"some bytes".to_vec();
        let h = xxhash_rust::xxh64::xxh64(&b, 0);
        b.extend_from_slice(&h.to_le_bytes());
        assert!(file_checksum_ok(&b));
        b[0] ^= 1;
        assert!(!file_checksum_ok(&b));
        assert!(!file_checksum_ok(&[1, 2, 3]));
    }
}
