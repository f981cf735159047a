//! Material files: one file per material and metric holding the files of all its slices.
//!
//! A table directory holds one file per slice and metric (`2202-6n.egdb`, `2202-6n.dtc`, ...):
//! 4,219 value files for at most 6 pieces, about 9,000 per metric at 8. `egdb pack` gathers the
//! files of each material into one *material file* named after the material and the metric,
//! `2202.egdb`, `2202.dtc`, `2202.dtw` (the material's four counts bm bk wm wk; a slice file
//! name always has a `-` and leading ranks, so the two kinds of names never clash), and
//! `egdb unpack` restores the slice files byte for byte.
//!
//! A material file is a short index followed by the slice files themselves, unchanged and
//! contiguous, in slice order (byte layout in docs/format.md, "Material files"):
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | magic `EGDBPACK` |
//! | 8 | 4 | pack format version (1) |
//! | 12 | 4 | metric: 0 values (`.egdb`), 1 DTC (`.dtc`), 2 DTW (`.dtw`) |
//! | 16 | 4 | member count `n` (1 to [`MAX_MEMBERS`]) |
//! | 20 | 4 | reserved, 0 |
//! | 24 | 24 n | per member: the slice name (ASCII, zero-padded to 8 bytes), offset and length of its file (u64 each, little-endian) |
//! | 24 + 24 n | 8 | xxh64 (seed 0) of the bytes before it |
//! | 32 + 24 n | ... | the members' files, the first at this offset, each starting where the last ends; the file ends with the last |
//!
//! Each member keeps its own header checksum, block checksums and whole-file checksum, so a
//! member reads exactly as the slice file it was made from ([`Source`] tells the readers where
//! its bytes are). The index is validated whole when read ([`read_index`]): magic, version,
//! metric, count, checksum, member names (slices of the file's material, strictly increasing)
//! and offsets (contiguous, ending at the file's end); anything else is
//! [`TableError::Corrupt`], never a value.
//!
//! A slice present both as its own file and in the material file is read from its own file
//! (what a `pack` interrupted before it removed the slice files leaves; the two are identical).

use super::error::{Fault, TableError};
use super::header::FileKind;
use crate::slice::{Material, Slice};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh64::xxh64;

/// Magic of a material file.
pub const PACK_MAGIC: [u8; 8] = *b"EGDBPACK";
/// Version of the material-file index written and read here.
pub const PACK_VERSION: u32 = 1;
/// Most members a material file may hold (a material has at most 7 x 7 slices; the bound only
/// keeps a damaged count from asking for a huge read).
pub const MAX_MEMBERS: u32 = 4096;
/// Bytes of the fixed part of the index before the member entries.
const FIXED: usize = 24;
/// Bytes of one member entry.
const ENTRY: usize = 24;

/// File name extension of `kind`'s files (the same for slice and material files).
pub fn extension(kind: FileKind) -> &'static str {
    match kind {
        FileKind::Wld => super::EXTENSION,
        FileKind::Dtc => super::dtc::DTC_EXTENSION,
        FileKind::Dtw => super::dtw::DTW_EXTENSION,
    }
}

fn kind_code(kind: FileKind) -> u32 {
    match kind {
        FileKind::Wld => 0,
        FileKind::Dtc => 1,
        FileKind::Dtw => 2,
    }
}

/// `dir/<material>.<extension>`, e.g. `egdb/2202.egdb`: the material file of `material`'s
/// files of `kind`.
pub fn pack_path(dir: &Path, material: &Material, kind: FileKind) -> PathBuf {
    dir.join(format!("{material}.{}", extension(kind)))
}

/// `dir/<slice>.<extension>`: the slice file of `kind`.
pub fn slice_path(dir: &Path, slice: &Slice, kind: FileKind) -> PathBuf {
    dir.join(format!("{slice}.{}", extension(kind)))
}

/// The material and metric a file name `<material>.<extension>` stands for (canonical spelling
/// only), or `None` for any other name.
pub fn material_of_pack_name(name: &str) -> Option<(Material, FileKind)> {
    let (stem, ext) = name.rsplit_once('.')?;
    let kind = [FileKind::Wld, FileKind::Dtc, FileKind::Dtw]
        .into_iter()
        .find(|&k| extension(k) == ext)?;
    let m: Material = stem.parse().ok()?;
    (m.to_string() == stem).then_some((m, kind))
}

/// Where the bytes of one slice's file are: a file of its own, or a range of a material file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Source {
    /// The file to open: the slice file, or the material file holding it.
    pub path: PathBuf,
    /// For a member of a material file: its offset and length in bytes.
    pub range: Option<(u64, u64)>,
}

impl Source {
    /// The slice file at `path` (all of it).
    pub fn file(path: PathBuf) -> Source {
        Source { path, range: None }
    }

    /// The offset and length of its bytes in the file opened, of length `outer_len`: all of
    /// it, or the member's range, which must lie inside it ([`Fault::Truncated`] otherwise).
    pub(crate) fn span(&self, outer_len: u64) -> Result<(u64, u64), Fault> {
        match self.range {
            None => Ok((0, outer_len)),
            Some((off, len)) if off.checked_add(len).is_some_and(|e| e <= outer_len) => {
                Ok((off, len))
            }
            Some((off, len)) => Err(Fault::Truncated {
                len: outer_len,
                expected: off.saturating_add(len),
            }),
        }
    }

    /// How errors name it: the path, and for a member `path[slice]`.
    pub fn describe(&self, slice: &Slice) -> String {
        match self.range {
            None => self.path.display().to_string(),
            Some(_) => format!("{}[{slice}]", self.path.display()),
        }
    }
}

/// One member of a material file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// The slice whose file this is.
    pub slice: Slice,
    /// Offset of its first byte in the material file.
    pub offset: u64,
    /// Length of its file in bytes.
    pub len: u64,
}

/// The validated index of a material file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackIndex {
    /// The material (from the file name).
    pub material: Material,
    /// The metric.
    pub kind: FileKind,
    /// The members in slice order.
    pub members: Vec<Member>,
}

impl PackIndex {
    /// The member holding `slice`, if any.
    pub fn member(&self, slice: &Slice) -> Option<&Member> {
        self.members
            .binary_search_by(|m| m.slice.cmp(slice))
            .ok()
            .map(|i| &self.members[i])
    }
}

fn corrupt(path: &Path, what: String) -> TableError {
    TableError::corrupt(
        path,
        Fault::BadHeader(format!("material file index: {what}")),
    )
}

/// Read and validate the index of the material file at `path`, whose name must be
/// `<material>.<extension>` (the material and metric are taken from it and checked against the
/// index). Reads only the index.
///
/// # Errors
/// [`TableError::Io`], [`TableError::NotAFile`], [`TableError::Invalid`] for a name that is not
/// a material file's, [`TableError::Corrupt`] for any inconsistency (see the module docs).
pub fn read_index(path: &Path) -> Result<PackIndex, TableError> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let (material, kind) = material_of_pack_name(name).ok_or_else(|| {
        TableError::Invalid(format!(
            "{} is not named like a material file (<material>.egdb|dtc|dtw, e.g. 2202.egdb)",
            path.display()
        ))
    })?;
    read_index_of(path, material, kind)
}

/// [`read_index`] of a file named otherwise (a temporary file), as a material file of
/// `material` and `kind`.
fn read_index_of(path: &Path, material: Material, kind: FileKind) -> Result<PackIndex, TableError> {
    let md = std::fs::metadata(path).map_err(|e| TableError::io(path, "stat", e))?;
    if !md.is_file() {
        return Err(TableError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mut f = super::read::open_file(path).map_err(|e| TableError::io(path, "open", e))?;
    let len = f
        .metadata()
        .map_err(|e| TableError::io(path, "stat", e))?
        .len();
    let truncated = |expected: u64| TableError::corrupt(path, Fault::Truncated { len, expected });
    if len < (FIXED + ENTRY + 8) as u64 {
        return Err(truncated((FIXED + ENTRY + 8) as u64));
    }
    let mut head = [0u8; FIXED];
    f.read_exact(&mut head)
        .map_err(|e| TableError::io(path, "read", e))?;
    if head[..8] != PACK_MAGIC {
        return Err(TableError::corrupt(path, Fault::BadMagic));
    }
    let rd32 = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let rd64 = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let version = rd32(&head, 8);
    if version != PACK_VERSION {
        return Err(TableError::corrupt(path, Fault::Version(version)));
    }
    let n = rd32(&head, 16);
    if n == 0 || n > MAX_MEMBERS {
        return Err(corrupt(path, format!("member count {n}")));
    }
    let index_len = FIXED + ENTRY * n as usize + 8;
    if (index_len as u64) > len {
        return Err(truncated(index_len as u64));
    }
    let mut index = vec![0u8; index_len];
    index[..FIXED].copy_from_slice(&head);
    f.read_exact(&mut index[FIXED..])
        .map_err(|e| TableError::io(path, "read", e))?;
    let body = index_len - 8;
    if xxh64(&index[..body], 0) != rd64(&index, body) {
        return Err(TableError::corrupt(path, Fault::HeaderChecksum));
    }
    // From here on the index is what the writer wrote; check its consistency anyway.
    if rd32(&head, 12) != kind_code(kind) {
        return Err(corrupt(
            path,
            format!("metric {} in a .{} file", rd32(&head, 12), extension(kind)),
        ));
    }
    if rd32(&head, 20) != 0 {
        return Err(corrupt(path, "reserved field not 0".into()));
    }
    let mut members = Vec::with_capacity(n as usize);
    let mut at = index_len as u64;
    for i in 0..n as usize {
        let e = &index[FIXED + i * ENTRY..FIXED + (i + 1) * ENTRY];
        let name_len = e[..8].iter().position(|&b| b == 0).unwrap_or(8);
        let slice = std::str::from_utf8(&e[..name_len])
            .ok()
            .and_then(|s| s.parse::<Slice>().ok().filter(|x| x.to_string() == s))
            .ok_or_else(|| corrupt(path, format!("member {i}: bad slice name")))?;
        if slice.material != material {
            return Err(corrupt(
                path,
                format!("member {slice} is not of material {material}"),
            ));
        }
        if members.last().is_some_and(|m: &Member| m.slice >= slice) {
            return Err(corrupt(path, format!("member {slice} out of order")));
        }
        let (offset, mlen) = (rd64(e, 8), rd64(e, 16));
        if offset != at || mlen == 0 {
            return Err(corrupt(path, format!("member {slice}: offset {offset}")));
        }
        at = offset
            .checked_add(mlen)
            .ok_or_else(|| corrupt(path, format!("member {slice}: length {mlen}")))?;
        members.push(Member {
            slice,
            offset,
            len: mlen,
        });
    }
    if at > len {
        return Err(truncated(at));
    }
    if at < len {
        return Err(TableError::corrupt(
            path,
            Fault::TrailingBytes { len, expected: at },
        ));
    }
    Ok(PackIndex {
        material,
        kind,
        members,
    })
}

/// The index bytes of a material file of `kind` with members `(slice, length)` in slice order.
fn index_bytes(kind: FileKind, members: &[(Slice, u64)]) -> Vec<u8> {
    let n = members.len();
    let mut b = Vec::with_capacity(FIXED + ENTRY * n + 8);
    b.extend_from_slice(&PACK_MAGIC);
    b.extend_from_slice(&PACK_VERSION.to_le_bytes());
    b.extend_from_slice(&kind_code(kind).to_le_bytes());
    b.extend_from_slice(&(n as u32).to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    let mut at = (FIXED + ENTRY * n + 8) as u64;
    for (s, len) in members {
        let mut name = [0u8; 8];
        let t = s.to_string();
        name[..t.len()].copy_from_slice(t.as_bytes());
        b.extend_from_slice(&name);
        b.extend_from_slice(&at.to_le_bytes());
        b.extend_from_slice(&len.to_le_bytes());
        at += len;
    }
    let sum = xxh64(&b, 0);
    b.extend_from_slice(&sum.to_le_bytes());
    b
}

/// What a writer of this module calls on a member it wrote, before the file replaces anything:
/// `(source, slice)` to check (e.g. open it and check its header and whole-file checksum).
pub type MemberCheck<'a> = &'a dyn Fn(&Source, &Slice) -> Result<(), TableError>;

/// Write the material file `dest` of `kind` from the given parts, atomically (a temporary
/// file next to it, fsync, rename): each part is `(slice, source)`, in any order, all of one
/// material (the one `dest` is named after). The parts' bytes are copied unchanged (streamed,
/// not held in memory); the caller checks them first. Before the rename, the temporary file's
/// index is read back and `check` is called on each of its members: a file that fails never
/// replaces an earlier `dest` (whose members may exist nowhere else). Returns the bytes written.
///
/// # Errors
/// [`TableError::Invalid`] for no parts, a part of another material or a slice twice;
/// [`TableError::Io`] for a failed read or write; the error of reading the index back or of
/// `check` (nothing is left at `dest` then, and an earlier `dest` is untouched).
pub fn write_pack(
    dest: &Path,
    kind: FileKind,
    parts: &[(Slice, Source)],
    check: MemberCheck<'_>,
) -> Result<u64, TableError> {
    let name = dest.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let (material, k) = material_of_pack_name(name).ok_or_else(|| {
        TableError::Invalid(format!("{} is not a material file name", dest.display()))
    })?;
    if k != kind {
        return Err(TableError::Invalid(format!(
            "{} is not a .{} file name",
            dest.display(),
            extension(kind)
        )));
    }
    let mut parts: Vec<&(Slice, Source)> = parts.iter().collect();
    parts.sort_by_key(|p| p.0);
    if parts.is_empty() || parts.len() > MAX_MEMBERS as usize {
        return Err(TableError::Invalid(format!(
            "{}: {} members",
            dest.display(),
            parts.len()
        )));
    }
    for w in parts.windows(2) {
        if w[0].0 == w[1].0 {
            return Err(TableError::Invalid(format!("slice {} given twice", w[0].0)));
        }
    }
    if let Some(p) = parts.iter().find(|p| p.0.material != material) {
        return Err(TableError::Invalid(format!(
            "slice {} is not of material {material}",
            p.0
        )));
    }
    let lens = parts
        .iter()
        .map(|(s, src)| Ok((*s, source_len(src)?)))
        .collect::<Result<Vec<_>, TableError>>()?;
    let index = index_bytes(kind, &lens);
    let sources: Vec<(&Source, u64)> = parts
        .iter()
        .map(|p| &p.1)
        .zip(lens.iter().map(|l| l.1))
        .collect();
    let slices: Vec<Slice> = parts.iter().map(|p| p.0).collect();
    write_streamed(dest, &index, &sources, &|tmp| {
        let back = read_index_of(tmp, material, kind)?;
        if back
            .members
            .iter()
            .map(|m| m.slice)
            .ne(slices.iter().copied())
        {
            return Err(corrupt(tmp, "members differ from those written".into()));
        }
        for m in &back.members {
            let src = Source {
                path: tmp.to_path_buf(),
                range: Some((m.offset, m.len)),
            };
            check(&src, &m.slice)?;
        }
        Ok(())
    })
}

/// Write `head` then the bytes of each `(source, length)` to `dest`, atomically (a temporary
/// file next to it, fsync, `before_rename` on the temporary file's path, rename, directory
/// fsync), streaming; the bytes written.
fn write_streamed(
    dest: &Path,
    head: &[u8],
    sources: &[(&Source, u64)],
    before_rename: &dyn Fn(&Path) -> Result<(), TableError>,
) -> Result<u64, TableError> {
    let (dir, tmp, out) = super::write::create_temp(dest)?;
    let result = (|| {
        let mut out = out;
        out.write_all(head)
            .map_err(|e| TableError::io(&tmp, "write", e))?;
        let mut total = head.len() as u64;
        for (src, len) in sources {
            let mut f = super::read::open_file(&src.path)
                .map_err(|e| TableError::io(&src.path, "open", e))?;
            if let Some((off, _)) = src.range {
                use std::io::Seek;
                f.seek(std::io::SeekFrom::Start(off))
                    .map_err(|e| TableError::io(&src.path, "seek", e))?;
            }
            let copied = std::io::copy(&mut (&mut f).take(*len), &mut out)
                .map_err(|e| TableError::io(&src.path, "copy", e))?;
            if copied != *len {
                return Err(TableError::corrupt(
                    &src.path,
                    Fault::Truncated {
                        len: copied,
                        expected: *len,
                    },
                ));
            }
            total += copied;
        }
        out.sync_all()
            .map_err(|e| TableError::io(&tmp, "fsync", e))?;
        drop(out);
        before_rename(&tmp)?;
        std::fs::rename(&tmp, dest).map_err(|e| TableError::io(dest, "rename", e))?;
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(total)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Bytes of the file a source names (the member's length, or the file's).
fn source_len(src: &Source) -> Result<u64, TableError> {
    match src.range {
        Some((_, len)) => Ok(len),
        None => Ok(std::fs::metadata(&src.path)
            .map_err(|e| TableError::io(&src.path, "stat", e))?
            .len()),
    }
}

/// Copy the bytes of `src` (the file of `slice`) to the file `dest`, atomically (the `unpack`
/// of one member); `check` is called on the copy before it replaces anything at `dest` (a
/// slice file there is read before the member, so a bad copy would hide a good member).
///
/// # Errors
/// [`TableError::Io`]; the error of `check` (nothing is left at `dest` then).
pub fn extract(
    src: &Source,
    slice: &Slice,
    dest: &Path,
    check: MemberCheck<'_>,
) -> Result<u64, TableError> {
    let len = source_len(src)?;
    write_streamed(dest, &[], &[(src, len)], &|tmp| {
        check(&Source::file(tmp.to_path_buf()), slice)
    })
}

/// Where `slice`'s file of `kind` is in `dir`: its own file `<slice>.<ext>` when that is a
/// regular file, else its member of the material file `<material>.<ext>`, else `None`.
///
/// # Errors
/// The material file's [`read_index`] error when it exists but is damaged (the slice may be in
/// it: not "missing").
pub fn locate(dir: &Path, slice: &Slice, kind: FileKind) -> Result<Option<Source>, TableError> {
    let own = slice_path(dir, slice, kind);
    if own.is_file() {
        return Ok(Some(Source::file(own)));
    }
    let pack = pack_path(dir, &slice.material, kind);
    if !pack.exists() {
        return Ok(None);
    }
    let index = read_index(&pack)?;
    Ok(index.member(slice).map(|m| Source {
        path: pack,
        range: Some((m.offset, m.len)),
    }))
}

/// One entry of [`list`]: a slice file of `kind` or a member of a material file, or a material
/// file that could not be read.
#[derive(Debug)]
pub enum Listed {
    /// A slice's file (own or member); for an own file, whether it is a regular file is not
    /// checked here.
    Slice(Slice, Source),
    /// A material file whose index is damaged or unreadable (its slices are unknown).
    BadPack(Material, TableError),
}

/// Every file of `kind` in `dir`: the slice files `<slice>.<ext>` (regular files or not) and
/// the members of the material files `<material>.<ext>`, sorted by slice; a slice present both
/// ways is listed once, as its own file (see the module docs). Damaged material files are
/// listed as [`Listed::BadPack`] after the slices.
///
/// # Errors
/// The I/O error of reading the directory.
pub fn list(dir: &Path, kind: FileKind) -> std::io::Result<Vec<Listed>> {
    let mut own = Vec::new();
    let mut packs = Vec::new();
    let suffix = format!(".{}", extension(kind));
    for e in std::fs::read_dir(dir)? {
        let path = e?.path();
        let Some(name) = path.file_name().and_then(|x| x.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(&suffix) else {
            continue;
        };
        if let Some(s) = stem.parse::<Slice>().ok().filter(|s| s.to_string() == stem) {
            own.push((s, path));
        } else if let Some((m, _)) = material_of_pack_name(name) {
            packs.push((m, path));
        }
    }
    own.sort();
    packs.sort();
    let mut out: Vec<(Slice, Source)> = own
        .iter()
        .map(|(s, p)| (*s, Source::file(p.clone())))
        .collect();
    let mut bad = Vec::new();
    for (m, path) in packs {
        match read_index(&path) {
            Ok(ix) => {
                for mem in ix.members {
                    if own.binary_search_by(|(s, _)| s.cmp(&mem.slice)).is_err() {
                        out.push((
                            mem.slice,
                            Source {
                                path: path.clone(),
                                range: Some((mem.offset, mem.len)),
                            },
                        ));
                    }
                }
            }
            Err(e) => bad.push(Listed::BadPack(m, e)),
        }
    }
    out.sort();
    let mut v: Vec<Listed> = out.into_iter().map(|(s, p)| Listed::Slice(s, p)).collect();
    v.extend(bad);
    Ok(v)
}

/// Whether `dir` holds any material file (of any metric).
pub fn has_packs(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.flatten().any(|e| {
            e.file_name()
                .to_str()
                .and_then(material_of_pack_name)
                .is_some()
                && e.path().is_file()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: &str) -> Slice {
        n.parse().unwrap()
    }

    #[test]
    fn names_of_material_files_and_slice_files_never_clash() {
        assert_eq!(
            material_of_pack_name("2202.egdb"),
            Some(("2202".parse().unwrap(), FileKind::Wld))
        );
        assert_eq!(
            material_of_pack_name("0a01.dtw").map(|x| x.1),
            Some(FileKind::Dtw)
        );
        assert_eq!(material_of_pack_name("2202-6n.egdb"), None);
        assert_eq!(material_of_pack_name("2202.txt"), None);
        assert_eq!(
            material_of_pack_name("0A01.dtc"),
            None,
            "canonical spelling only"
        );
        assert_eq!(super::super::slice_of_file_name("2202.egdb"), None);
    }

    #[test]
    fn an_index_written_reads_back_and_every_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::write(&a, b"first member bytes").unwrap();
        std::fs::write(&b, b"second").unwrap();
        let dest = pack_path(dir.path(), &"1001".parse().unwrap(), FileKind::Dtc);
        let parts = [
            (s("1001-4n"), Source::file(b.clone())),
            (s("1001-1n"), Source::file(a.clone())),
        ];
        let n = write_pack(&dest, FileKind::Dtc, &parts, &|_, _| Ok(())).unwrap();
        let ix = read_index(&dest).unwrap();
        assert_eq!(ix.members.len(), 2);
        assert_eq!(ix.members[0].slice, s("1001-1n"));
        let bytes = std::fs::read(&dest).unwrap();
        assert_eq!(bytes.len() as u64, n);
        let m = ix.member(&s("1001-4n")).unwrap();
        assert_eq!(
            &bytes[m.offset as usize..(m.offset + m.len) as usize],
            b"second"
        );
        // Extract gives the bytes back.
        let out = dir.path().join("x");
        let src = locate(dir.path(), &s("1001-1n"), FileKind::Dtc)
            .unwrap()
            .unwrap();
        extract(&src, &s("1001-1n"), &out, &|_, _| Ok(())).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"first member bytes");
        assert_eq!(
            locate(dir.path(), &s("1001-2n"), FileKind::Dtc).unwrap(),
            None
        );
        // Every single flipped byte of the index, and any cut or extension of the file, is
        // refused.
        let index_len = FIXED + 2 * ENTRY + 8;
        for i in 0..index_len {
            let mut d = bytes.clone();
            d[i] ^= 0x40;
            std::fs::write(&dest, &d).unwrap();
            assert!(read_index(&dest).is_err(), "flipped byte {i} accepted");
        }
        for cut in [0, 10, index_len - 1, index_len, bytes.len() - 1] {
            std::fs::write(&dest, &bytes[..cut]).unwrap();
            assert!(read_index(&dest).is_err(), "cut at {cut} accepted");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        std::fs::write(&dest, &longer).unwrap();
        assert!(read_index(&dest).is_err());
        // The metric must match the name.
        std::fs::write(&dest, &bytes).unwrap();
        let wrong = pack_path(dir.path(), &"1001".parse().unwrap(), FileKind::Dtw);
        std::fs::copy(&dest, &wrong).unwrap();
        assert!(read_index(&wrong).is_err());
        // A member of another material is refused by the writer.
        let other = [(s("2001-1n"), Source::file(a))];
        assert!(write_pack(&dest, FileKind::Dtc, &other, &|_, _| Ok(())).is_err());
    }

    #[test]
    fn a_file_failing_its_check_replaces_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, b"member bytes").unwrap();
        let dest = pack_path(dir.path(), &"1001".parse().unwrap(), FileKind::Dtc);
        std::fs::write(&dest, b"the earlier material file").unwrap();
        let parts = [(s("1001-1n"), Source::file(a.clone()))];
        let seen = std::cell::RefCell::new(Vec::new());
        let refuse = |src: &Source, sl: &Slice| {
            seen.borrow_mut().push((*sl, src.range));
            Err(TableError::Invalid("refused".into()))
        };
        assert!(write_pack(&dest, FileKind::Dtc, &parts, &refuse).is_err());
        // The check saw the member as written (its offset past the index), and the earlier
        // file and the directory are as they were (no temporary file left).
        let index_len = (FIXED + ENTRY + 8) as u64;
        assert_eq!(
            seen.borrow().as_slice(),
            &[(s("1001-1n"), Some((index_len, 12)))]
        );
        assert_eq!(std::fs::read(&dest).unwrap(), b"the earlier material file");
        let names = |d: &Path| {
            let mut v: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(dir.path()), ["1001.dtc", "a"]);
        // Extracting: a copy failing its check leaves nothing at its destination.
        let out = dir.path().join("1001-1n.dtc");
        assert!(extract(&Source::file(a.clone()), &s("1001-1n"), &out, &refuse).is_err());
        assert!(!out.exists());
        assert_eq!(names(dir.path()), ["1001.dtc", "a"]);
        // And with a check that passes, both land.
        write_pack(&dest, FileKind::Dtc, &parts, &|_, _| Ok(())).unwrap();
        assert_eq!(read_index(&dest).unwrap().members.len(), 1);
        extract(&Source::file(a), &s("1001-1n"), &out, &|_, _| Ok(())).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"member bytes");
    }
}
