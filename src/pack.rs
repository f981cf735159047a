//! Packing a table directory into one file per material and metric, and back (`egdb pack`,
//! `egdb unpack`; the file format is [`crate::table::pack`], docs/format.md "Material files").
//!
//! [`pack_dir`] gathers, for each metric (values `.egdb`, `.dtc`, `.dtw`) and material, the
//! slice files of the directory into the material file `<material>.<ext>` and then removes
//! them; [`unpack_dir`] writes the slice files back, byte for byte, and removes the material
//! files. Both work in place, under the directory's build lock, and lose nothing when killed:
//! every file they write is written atomically and checked (every member's header and
//! whole-file checksum) before the files it replaces are removed, and a rerun completes the
//! work (a slice present both as its own file and in a material file is read from its own file;
//! the two are identical). A damaged slice file or material file stops the run before anything
//! of its material is removed, and is named.

use crate::slice::{Material, Slice};
use crate::table::pack::{
    extract, list, pack_path, read_index, slice_path, write_pack, Listed, Source,
};
use crate::table::{DtcFile, FileKind, TableError, TableFile, ANY_RULES};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What [`pack_dir`] or [`unpack_dir`] did, per metric in the order values, DTC, DTW.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackReport {
    /// Per metric: (metric, slices, table files before, table files after).
    pub kinds: Vec<(FileKind, u64, u64, u64)>,
    /// Bytes of the table files after.
    pub bytes: u64,
    /// The directory's filesystem has no `flock` ([`crate::generate::DirLock::unsupported`]):
    /// nothing kept a build, conversion or another pack out of it meanwhile (`egdb pack` and
    /// `unpack` warn).
    pub unlocked: bool,
}

/// Why packing or unpacking stopped (nothing of the material named was removed).
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// The directory cannot be listed or does not exist.
    #[error("cannot read the table directory {}: {source}", dir.display())]
    Dir {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Another build or conversion holds the directory's lock.
    #[error(transparent)]
    Busy(crate::generate::BuildError),
    /// A table file or material file is damaged or unreadable, or a write failed; the error
    /// names the file.
    #[error("{0}; nothing of its material was removed")]
    Table(#[from] TableError),
}

fn kinds() -> [FileKind; 3] {
    [FileKind::Wld, FileKind::Dtc, FileKind::Dtw]
}

/// Open the file of `slice` at `src` and check its header and whole-file checksum.
fn check(src: &Source, slice: &Slice, kind: FileKind) -> Result<(), TableError> {
    match kind {
        FileKind::Wld => {
            TableFile::open_source(src, slice, crate::table::Access::Mmap, ANY_RULES, None)
                .and_then(|f| f.verify_checksum())
        }
        k => DtcFile::open_source(src, Some(slice), ANY_RULES, k).and_then(|f| f.verify_checksum()),
    }
}

/// The directory's entries of `kind`, damaged material files refused.
fn entries(dir: &Path, kind: FileKind) -> Result<Vec<(Slice, Source)>, PackError> {
    let listed = list(dir, kind).map_err(|e| PackError::Dir {
        dir: dir.to_path_buf(),
        source: e,
    })?;
    let mut out = Vec::with_capacity(listed.len());
    for l in listed {
        match l {
            Listed::Slice(s, src) => out.push((s, src)),
            Listed::BadPack(_, e) => return Err(PackError::Table(e)),
        }
    }
    Ok(out)
}

fn lock(dir: &Path) -> Result<crate::generate::DirLock, PackError> {
    if !dir.is_dir() {
        return Err(PackError::Dir {
            dir: dir.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "not a directory"),
        });
    }
    let l = crate::generate::DirLock::acquire(dir, true).map_err(PackError::Busy)?;
    crate::generate::remove_stale_temp_files(dir);
    Ok(l)
}

fn bytes_of(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Pack `dir` in place: for each metric and material with slice files, write the material file
/// `<material>.<ext>` holding them (with the members of an earlier material file of that
/// material that have no slice file), check every member, then remove the slice files.
/// `progress` is called with each material file written.
///
/// # Errors
/// [`PackError`]: the directory, the lock, the first damaged or unreadable file (slice file or
/// material file) or failed write; what was packed before stays packed and readable.
pub fn pack_dir(dir: &Path, progress: &mut dyn FnMut(&Path)) -> Result<PackReport, PackError> {
    let lock = lock(dir)?;
    let mut report = PackReport {
        unlocked: lock.unsupported(),
        ..PackReport::default()
    };
    for kind in kinds() {
        let all = entries(dir, kind)?;
        let mut by_material: BTreeMap<Material, Vec<(Slice, Source)>> = BTreeMap::new();
        for (s, src) in all.iter().cloned() {
            by_material.entry(s.material).or_default().push((s, src));
        }
        let before = all
            .iter()
            .map(|(_, s)| s.path.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .len() as u64;
        for (m, parts) in &by_material {
            let loose: Vec<&(Slice, Source)> =
                parts.iter().filter(|(_, s)| s.range.is_none()).collect();
            let dest = pack_path(dir, m, kind);
            if loose.is_empty() {
                report.bytes += bytes_of(&dest);
                continue;
            }
            for (s, src) in parts {
                if !src.path.is_file() {
                    return Err(TableError::NotAFile {
                        path: src.path.clone(),
                    }
                    .into());
                }
                check(src, s, kind)?;
            }
            // Every member of the new file is checked before it replaces an earlier one (whose
            // members without a slice file exist nowhere else).
            write_pack(&dest, kind, parts, &|src, s| check(src, s, kind))?;
            for (_, src) in loose {
                std::fs::remove_file(&src.path)
                    .map_err(|e| TableError::io(&src.path, "remove", e))?;
            }
            report.bytes += bytes_of(&dest);
            progress(&dest);
        }
        report
            .kinds
            .push((kind, all.len() as u64, before, by_material.len() as u64));
    }
    Ok(report)
}

/// Unpack `dir` in place: write every member of every material file back as its slice file
/// (the same bytes, checked), then remove the material file. `progress` is called with each
/// material file removed.
///
/// # Errors
/// As [`pack_dir`].
pub fn unpack_dir(dir: &Path, progress: &mut dyn FnMut(&Path)) -> Result<PackReport, PackError> {
    let lock = lock(dir)?;
    let mut report = PackReport {
        unlocked: lock.unsupported(),
        ..PackReport::default()
    };
    for kind in kinds() {
        let all = entries(dir, kind)?;
        let before = all
            .iter()
            .map(|(_, s)| s.path.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .len() as u64;
        for (s, src) in &all {
            let own = slice_path(dir, s, kind);
            if src.range.is_some() {
                check(src, s, kind)?;
                // The copy is checked before it takes its name: a slice file is read before the
                // member, so a bad one there would hide the good member.
                extract(src, s, &own, &|src, s| check(src, s, kind))?;
            }
            report.bytes += bytes_of(&own);
        }
        // Every material file: its members that had a slice file of their own were not
        // listed, and those files are whole (checked) before the material file goes.
        for path in material_files(dir, kind)? {
            let index = read_index(&path)?;
            for mem in &index.members {
                check(
                    &Source::file(slice_path(dir, &mem.slice, kind)),
                    &mem.slice,
                    kind,
                )?;
            }
            std::fs::remove_file(&path).map_err(|e| TableError::io(&path, "remove", e))?;
            progress(&path);
        }
        report
            .kinds
            .push((kind, all.len() as u64, before, all.len() as u64));
    }
    Ok(report)
}

/// The material files of `kind` in `dir`.
fn material_files(dir: &Path, kind: FileKind) -> Result<Vec<PathBuf>, PackError> {
    let rd = std::fs::read_dir(dir).map_err(|e| PackError::Dir {
        dir: dir.to_path_buf(),
        source: e,
    })?;
    let mut v = Vec::new();
    for e in rd.flatten() {
        if let Some((_, k)) = e
            .file_name()
            .to_str()
            .and_then(crate::table::pack::material_of_pack_name)
        {
            if k == kind {
                v.push(e.path());
            }
        }
    }
    v.sort();
    Ok(v)
}
