//! Statistics of a table directory, read from the file headers (no values are decoded).
//!
//! Values are from the side to move's point of view. Tables store Black to move only, so the
//! White-to-move figures of material (bm,bk,wm,wk) are those stored for (wm,wk,bm,bk).

use crate::board::Color;
use crate::slice::{Material, Slice};
use crate::table::pack::{Listed, Source};
use crate::table::{TableError, TableFile, TableMeta};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every `<slice>.egdb` file in `dir`, and every slice in a material file `<material>.egdb`
/// (`egdb pack`; the path is then the material file's), sorted by slice. Other files are
/// ignored, and so is anything named like a table that is not a regular file (a directory, a
/// dangling link), and a damaged material file.
///
/// # Errors
/// The I/O error of reading the directory.
pub fn scan_dir(dir: &Path) -> std::io::Result<Vec<(Slice, PathBuf)>> {
    Ok(crate::table::pack::list(dir, crate::table::FileKind::Wld)?
        .into_iter()
        .filter_map(|l| match l {
            Listed::Slice(s, src) => Some((s, src.path)),
            Listed::BadPack(..) => None,
        })
        .filter(|(_, p)| p.is_file())
        .collect())
}

/// One table file's header and size.
#[derive(Clone, Debug)]
pub struct FileInfo {
    /// Slice named by the file.
    pub slice: Slice,
    /// Path of the file: the slice file, or the material file holding it (`egdb pack`).
    pub path: PathBuf,
    /// Where its bytes are (for a member of a material file, the range in it); what readers
    /// open ([`TableFile::open_source`]).
    pub source: Source,
    /// Header contents.
    pub meta: TableMeta,
    /// File size in bytes.
    pub bytes: u64,
    /// Value codec id from the header (2, 4 or 5; docs/format.md).
    pub codec: u32,
}

/// Why statistics could not be gathered.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// Reading the directory failed.
    #[error("cannot read the table directory {}: {source} (set --dir or EGDB_DIR)", path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A table file is unreadable (the table error names the file).
    #[error("{source}")]
    Table {
        /// The file.
        path: PathBuf,
        /// The table error.
        source: TableError,
    },
    /// A file's header names another slice than its file name.
    #[error("{}: file name says slice {named} but the header says {header}", path.display())]
    Renamed {
        /// The file.
        path: PathBuf,
        /// Slice in the file name.
        named: Slice,
        /// Slice in the header.
        header: Slice,
    },
    /// Something named like a table file is not a regular file (a directory, a dangling
    /// symbolic link).
    #[error("{}: named like a table file but not a regular file", path.display())]
    NotAFile {
        /// The entry.
        path: PathBuf,
    },
    /// Resolving the value of a position that a codec-4 or codec-5 file stores no value for
    /// (by search over the directory's tables) failed, e.g. a slice it needs is missing.
    #[error("{}: resolving a position this file stores no value for: {source}", path.display())]
    Probe {
        /// The value file being read.
        path: PathBuf,
        /// The probe error.
        source: crate::probe::ProbeError,
    },
}

/// Open every table file of `dir` and read its header.
///
/// # Errors
/// [`StatsError`] for an unreadable directory or the first unreadable or renamed file (see
/// [`read_dir_info_all`] for every bad file at once).
pub fn read_dir_info(dir: &Path) -> Result<Vec<FileInfo>, StatsError> {
    let (good, bad) = read_dir_info_all(dir)?;
    match bad.into_iter().next() {
        Some((_, e)) => Err(e),
        None => Ok(good),
    }
}

/// Open every table file of `dir` and read its header, going on past bad files: the files
/// read (sorted by slice) and, for each file that could not be read, is renamed or is not a
/// regular file (e.g. a directory named `2101-3n.egdb`), its slice (from the name) and the
/// error.
///
/// # Errors
/// [`StatsError::Io`] if the directory cannot be listed.
#[allow(clippy::type_complexity)]
pub fn read_dir_info_all(
    dir: &Path,
) -> Result<(Vec<FileInfo>, Vec<(Slice, StatsError)>), StatsError> {
    let files =
        crate::table::pack::list(dir, crate::table::FileKind::Wld).map_err(|e| StatsError::Io {
            path: dir.to_path_buf(),
            source: e,
        })?;
    let mut out = Vec::with_capacity(files.len());
    let mut bad = Vec::new();
    for entry in files {
        let (slice, src) = match entry {
            Listed::Slice(s, src) => (s, src),
            Listed::BadPack(m, e) => {
                // Its slices are unknown: reported under the material's first slice.
                let path = e.path().map_or_else(PathBuf::new, Path::to_path_buf);
                let first = Slice::all_of(m).into_iter().next().unwrap_or(Slice {
                    material: m,
                    black_rank: None,
                    white_rank: None,
                });
                bad.push((first, StatsError::Table { path, source: e }));
                continue;
            }
        };
        let path = src.path.clone();
        if !path.is_file() {
            bad.push((slice, StatsError::NotAFile { path }));
            continue;
        }
        // Any variant's tables (the header says which, `TableFile::rules`).
        let opened = if src.range.is_some() {
            TableFile::open_source(
                &src,
                &slice,
                crate::table::Access::Mmap,
                crate::table::ANY_RULES,
                None,
            )
        } else {
            // A slice file is opened without naming the slice, so that a renamed file is told
            // as such below.
            TableFile::open_rules(&path, crate::table::Access::Mmap, crate::table::ANY_RULES)
        };
        let f = match opened {
            Ok(f) => f,
            Err(e) => {
                bad.push((
                    slice,
                    StatsError::Table {
                        path: path.clone(),
                        source: e,
                    },
                ));
                continue;
            }
        };
        if f.meta().slice != slice {
            bad.push((
                slice,
                StatsError::Renamed {
                    path,
                    named: slice,
                    header: f.meta().slice,
                },
            ));
            continue;
        }
        out.push(FileInfo {
            slice,
            bytes: f.file_bytes(),
            codec: f.codec(),
            meta: f.meta().clone(),
            path,
            source: src,
        });
    }
    Ok((out, bad))
}

/// Totals for one material and side to move.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MaterialStats {
    /// Black men.
    pub bm: u8,
    /// Black kings.
    pub bk: u8,
    /// White men.
    pub wm: u8,
    /// White kings.
    pub wk: u8,
    /// Side to move, `"B"` or `"W"`.
    pub stm: char,
    /// Positions (all legal positions with this material and side to move).
    pub positions: u64,
    /// Wins for the side to move.
    pub wins: u64,
    /// Losses for the side to move.
    pub losses: u64,
    /// Draws.
    pub draws: u64,
    /// Longest resolution in plies (distance to leaving the slice) over wins and losses.
    pub longest: u32,
    /// Whether every slice file of the stored material is present (otherwise the totals are
    /// partial).
    pub complete: bool,
}

/// Per material and side to move totals over the files in `infos`: for every material with a
/// file, one Black-to-move line (its own files) and, if the flipped material has files, one
/// White-to-move line. Sorted by piece count, then material, then B before W.
pub fn material_stats(infos: &[FileInfo]) -> Vec<MaterialStats> {
    let missing = missing_slices(infos);
    let mut by: BTreeMap<Material, (u64, u64, u64, u64, u32)> = BTreeMap::new();
    for f in infos {
        let e = by.entry(f.slice.material).or_default();
        e.0 += f.meta.positions;
        e.1 += f.meta.wins;
        e.2 += f.meta.losses;
        e.3 += f.meta.draws;
        e.4 = e.4.max(f.meta.longest);
    }
    let mut out = Vec::new();
    let mut mats: Vec<Material> = by.keys().flat_map(|m| [*m, m.flip()]).collect();
    mats.sort_by_key(|m| (m.pieces(), *m));
    mats.dedup();
    for m in mats {
        for (stm, stored) in [(Color::Black, m), (Color::White, m.flip())] {
            if let Some(&(positions, wins, losses, draws, longest)) = by.get(&stored) {
                out.push(MaterialStats {
                    bm: m.bm,
                    bk: m.bk,
                    wm: m.wm,
                    wk: m.wk,
                    stm: stm.letter(),
                    positions,
                    wins,
                    losses,
                    draws,
                    longest,
                    complete: !missing.iter().any(|s| s.material == stored),
                });
            }
        }
    }
    out
}

/// Slices with positions that have no file, for every piece count from 1 up to the largest
/// present in `infos` (probes of n pieces need every table below n: captures, crowning). Sorted
/// in build order.
pub fn missing_slices(infos: &[FileInfo]) -> Vec<Slice> {
    let present: std::collections::HashSet<Slice> = infos.iter().map(|f| f.slice).collect();
    let Some(max) = infos.iter().map(|f| f.slice.material.pieces()).max() else {
        return Vec::new();
    };
    crate::plan::build_order(max)
        .into_iter()
        .flat_map(|u| u.slices)
        .filter(|s| !present.contains(s))
        .collect()
}

/// The longest distances to conversion of one material and side to move
/// ([`longest_dtc`]), each with one position that attains it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LongestDtc {
    /// Black men, Black kings, White men, White kings.
    pub bm: u8,
    /// See `bm`.
    pub bk: u8,
    /// See `bm`.
    pub wm: u8,
    /// See `bm`.
    pub wk: u8,
    /// Side to move, `B` or `W`.
    pub stm: char,
    /// Longest win in plies and a position (FEN, the side `stm` to move) with it.
    pub longest_win: Option<(u32, String)>,
    /// Longest loss in plies and a position with it.
    pub longest_loss: Option<(u32, String)>,
}

/// The longest win and the longest loss (plies to conversion) per material and side to move,
/// with one position each (the first in index order of the first slice in name order), from
/// the distance files (`<slice>.dtc`) of `dir` and the WLD files beside them. Capture
/// positions (distance 1, not stored) are skipped. Materials whose slices have no distance
/// file are not listed.
///
/// # Errors
/// [`StatsError`] for an unreadable directory or file; [`StatsError::Probe`] when the value
/// of a position that a codec-4 or codec-5 file stores no value for (a threat position or one
/// without a move, [`crate::rules::search::is_dont_care`]) cannot be resolved from the
/// directory's tables. Those values are resolved by search, as every probe does, never read
/// from the file's filler.
pub fn longest_dtc(dir: &Path) -> Result<Vec<LongestDtc>, StatsError> {
    longest_distances(dir, false)
}

/// The longest win and the longest loss by depth to win (plies to the end of the game, issue
/// 33) per material and side to move, with one position each (the first in index order of
/// the first slice in name order), from the depth-to-win files (`<slice>.dtw`, `egdb build
/// --dtw`) of `dir` and the WLD files beside them. Capture positions count (their depth is
/// stored); their value, which WLD files do not store, is resolved by search through the
/// directory's tables, as are the unstored values of codec-4 and codec-5 files. Materials
/// whose slices have no depth-to-win file are not listed. The rows have the shape of
/// [`longest_dtc`]'s.
///
/// # Errors
/// As [`longest_dtc`].
pub fn longest_dtw(dir: &Path) -> Result<Vec<LongestDtc>, StatsError> {
    longest_distances(dir, true)
}

/// [`longest_dtc`] (`dtw` false) or [`longest_dtw`].
fn longest_distances(dir: &Path, dtw: bool) -> Result<Vec<LongestDtc>, StatsError> {
    use crate::board::Wld;
    use rayon::prelude::*;
    type Best = Option<(u32, crate::board::Position)>;
    let infos = read_dir_info(dir)?;
    let mut by: BTreeMap<Material, (Best, Best)> = BTreeMap::new();
    let terr = |path: &Path| {
        let path = path.to_path_buf();
        move |e: TableError| StatsError::Table {
            path: path.clone(),
            source: e,
        }
    };
    // Opened on the first file that stores no value at some quiet positions (codecs 4 and 5).
    let mut tb: Option<crate::probe::Tablebase> = None;
    for f in &infos {
        let kind = if dtw {
            crate::table::FileKind::Dtw
        } else {
            crate::table::FileKind::Dtc
        };
        let dpath = crate::table::pack::locate(dir, &f.slice, kind)
            .ok()
            .flatten()
            .map_or_else(|| f.path.clone(), |s| s.path);
        let Some(dfile) = crate::table::DtcFile::find(dir, &f.slice, crate::table::ANY_RULES, kind)
            .map_err(terr(&dpath))?
        else {
            continue;
        };
        let d = dfile.decode_all().map_err(terr(&dpath))?;
        let wfile = TableFile::open_source(
            &f.source,
            &f.slice,
            crate::table::Access::Mmap,
            crate::table::ANY_RULES,
            None,
        )
        .map_err(terr(&f.path))?;
        let w = wfile.decode_all().map_err(terr(&f.path))?;
        let threats_dc = wfile.threats_dont_care();
        let variant = crate::rules::Variant::from_id(wfile.rules()).unwrap_or_default();
        // Depth-to-win files store the capture positions, whose value the WLD file does not:
        // resolved through the tables (English only: `--dtw` is refused for other variants).
        if (threats_dc || dtw) && tb.is_none() {
            tb = Some(
                crate::probe::Tablebase::open(dir).map_err(|source| StatsError::Probe {
                    path: f.path.clone(),
                    source,
                })?,
            );
        }
        let ix = crate::index::SliceIndex::new(f.slice);
        let e = by.entry(f.slice.material).or_default();
        let (win0, loss0) = (e.0.map(|b| b.0), e.1.map(|b| b.0));
        // Each chunk keeps, in index order, its first longest win and loss beyond the bests
        // of the slices before; the chunks are then merged keeping the lower index on ties.
        const CHUNK: usize = 1 << 16;
        type Found = (Option<(u32, usize)>, Option<(u32, usize)>);
        let chunks: Vec<Result<Found, StatsError>> = d
            .par_chunks(CHUNK)
            .zip(w.par_chunks(CHUNK))
            .enumerate()
            .map(|(c, (dc, wc))| {
                let (mut win, mut loss): Found = (None, None);
                let above = |best: Option<(u32, usize)>, start: Option<u32>, dist: u32| {
                    best.map_or(start, |b| Some(b.0)).is_none_or(|b| dist > b)
                };
                for (j, (&dist, &raw)) in dc.iter().zip(wc).enumerate() {
                    let (wins, loses) = (above(win, win0, dist), above(loss, loss0, dist));
                    if !wins && !loses {
                        continue;
                    }
                    // A file's stored value is exact except at its don't cares: capture
                    // positions (every codec; skipped here, their distance is 1) and, for
                    // codecs 4 and 5, positions without a move and threat positions
                    // (`probe::resolve::is_dont_care`), whose value is resolved by search.
                    let stored_counts =
                        (raw == Wld::Win as u8 && wins) || (raw == Wld::Loss as u8 && loses);
                    if !threats_dc && !dtw && !stored_counts {
                        continue;
                    }
                    let i = c * CHUNK + j;
                    let p = ix.unrank(i as u64).expect("index below size");
                    // (Under the file's rules: captures differ between variants.)
                    let capture =
                        crate::with_engine!(variant, r => crate::rules::Rules::has_capture(&r, &p));
                    if capture && !dtw {
                        continue;
                    }
                    if !capture && !threats_dc && !stored_counts {
                        continue;
                    }
                    let v = match &tb {
                        Some(tb)
                            if capture
                                || (threats_dc
                                    && crate::rules::search::is_dont_care(
                                        crate::rules::English,
                                        &p,
                                    )) =>
                        {
                            tb.probe_wld(&p).map_err(|source| StatsError::Probe {
                                path: f.path.clone(),
                                source,
                            })? as u8
                        }
                        _ => raw,
                    };
                    if v == Wld::Win as u8 && wins {
                        win = Some((dist, i));
                    } else if v == Wld::Loss as u8 && loses {
                        loss = Some((dist, i));
                    }
                }
                Ok((win, loss))
            })
            .collect();
        let better = |a: Option<(u32, usize)>, b: Option<(u32, usize)>| match (a, b) {
            (Some(x), Some(y)) if y.0 > x.0 => Some(y),
            (None, y) => y,
            (x, _) => x,
        };
        let (mut win, mut loss) = (None, None);
        for r in chunks {
            let (cw, cl) = r?;
            win = better(win, cw);
            loss = better(loss, cl);
        }
        let at = |i: usize| ix.unrank(i as u64).expect("index below size");
        if let Some((dist, i)) = win {
            e.0 = Some((dist, at(i)));
        }
        if let Some((dist, i)) = loss {
            e.1 = Some((dist, at(i)));
        }
    }
    let mut out = Vec::new();
    let mut mats: Vec<Material> = by.keys().flat_map(|m| [*m, m.flip()]).collect();
    mats.sort_by_key(|m| (m.pieces(), *m));
    mats.dedup();
    for m in mats {
        for (stm, stored) in [(Color::Black, m), (Color::White, m.flip())] {
            if let Some((win, loss)) = by.get(&stored) {
                let show = |b: &Best| {
                    b.map(|(d, p)| {
                        let p = if stm == Color::White { p.flip() } else { p };
                        (d, p.to_fen())
                    })
                };
                out.push(LongestDtc {
                    bm: m.bm,
                    bk: m.bk,
                    wm: m.wm,
                    wk: m.wk,
                    stm: stm.letter(),
                    longest_win: show(win),
                    longest_loss: show(loss),
                });
            }
        }
    }
    Ok(out)
}
