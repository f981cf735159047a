//! Convert WLD table files (`*.egdb`) of codec 2 to codec 4 (docs/format.md), or to codec 5
//! with `CODEC=5` or codec 6 with `CODEC=6` (from codec 2 or 4: codecs 5 and 6 leave exactly
//! codec 4's don't cares unread), and check the result.
//! Usage:
//!   cargo run --release --example convert_tables -- IN_DIR OUT_DIR [BLOCK_POSITIONS] [CHECK_N]
//! Every file of IN_DIR is decoded and written again into OUT_DIR with the default
//! [`WriteOptions`] under codec 4 (block size overridable); codec 2 stores the true value of every position
//! that codec 4 leaves don't care, except captures, which codec 4 leaves don't care too, so
//! the conversion needs no search. A codec-4 input file is copied as is. Prints positions and
//! bytes per piece count, before and after. With CHECK_N, draws CHECK_N random positions per
//! piece count (both sides to move) and checks that the probe of OUT_DIR agrees with codec 2's
//! reading of IN_DIR (captures by search over the slow move generator, else the stored value),
//! computed here without the probe's resolution code.
//! OUT_DIR must not be IN_DIR (by any path: the same directory is refused before anything is
//! read or written, since a file already in the output codec would be copied onto itself).
//! CHECK_N is at most 10,000,000; BLOCK_POSITIONS a positive multiple of 20.
//! Bad arguments or files give one error line and exit status 1 (2 for usage). `CODEC` must
//! be 4, 5 or 6: codec 4, 5 and 6 files store no value at their don't cares, so they cannot be
//! turned back into codec 2 without a search (rebuild with `egdb build` instead).
use checkers_egdb::format::SliceIndex;
use checkers_egdb::format::{
    table_path, write_table_with, TableFile, WriteOptions, CODEC_2BIT_THREATS, CODEC_CM_FILLED,
    CODEC_CM_THREATS,
};
use checkers_egdb::{Color, Position, Slice, Tablebase, Wld};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

/// The largest CHECK_N (positions per piece count, held in memory at once).
const MAX_CHECK: usize = 10_000_000;

/// Codec 2's reading of `p` from the files of `dir` (decoded slices kept in `cache`).
/// A slice file that is missing, unreadable or not codec 2 is an error naming it.
fn old_value(
    dir: &std::path::Path,
    cache: &Mutex<HashMap<Slice, std::sync::Arc<Vec<u8>>>>,
    p: &Position,
) -> Result<Wld, String> {
    let succ: Vec<Position> = p.unique_moves().iter().map(|m| p.apply(m)).collect();
    if succ.is_empty() {
        return Ok(Wld::Loss);
    }
    if p.has_capture() {
        let mut best = Wld::Loss;
        for s in &succ {
            best = best.max(old_value(dir, cache, s)?.negate());
        }
        return Ok(best);
    }
    let n = p.normalized();
    let s = Slice::of(&n);
    let vals = {
        let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
        match c.get(&s) {
            Some(v) => v.clone(),
            None => {
                let path = table_path(dir, &s);
                let t = TableFile::open(&path)
                    .map_err(|e| format!("slice {s}, needed by the check: {e}"))?;
                if t.codec() != 2 {
                    return Err(format!(
                        "{}: codec {}; CHECK_N needs codec-2 input",
                        path.display(),
                        t.codec()
                    ));
                }
                let v = std::sync::Arc::new(t.decode_all().map_err(|e| e.to_string())?);
                c.insert(s, v.clone());
                v
            }
        }
    };
    let i = SliceIndex::new(s).rank(&n) as usize;
    vals.get(i)
        .and_then(|&v| Wld::from_u8(v))
        .ok_or_else(|| format!("slice {s}: no value at index {i}"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 || args.len() > 5 {
        eprintln!("usage: convert_tables IN_DIR OUT_DIR [BLOCK_POSITIONS] [CHECK_N]");
        std::process::exit(2);
    }
    if let Err(e) = run(&args) {
        eprintln!("convert_tables: {e}");
        std::process::exit(1);
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let (inp, out) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
    let codec: u32 = match std::env::var("CODEC") {
        Err(_) => CODEC_2BIT_THREATS,
        Ok(s) => match s.parse() {
            Ok(c) if [CODEC_2BIT_THREATS, CODEC_CM_THREATS, CODEC_CM_FILLED].contains(&c) => c,
            _ => {
                return Err(format!(
                    "CODEC={s}: the output codec must be 4, 5 or 6 (codec 4, 5 and 6 files store \
                     no value at their don't cares, so codec 2 needs a rebuild, not a conversion)"
                ))
            }
        },
    };
    let mut opts = WriteOptions {
        codec,
        ..WriteOptions::default()
    };
    if let Some(b) = args.get(3) {
        // The rule of write_table_with (src/table/write.rs), checked before OUT_DIR is made.
        opts.block_positions = b
            .parse()
            .ok()
            .filter(|&n: &u32| n >= 20 && n.is_multiple_of(20))
            .ok_or_else(|| {
                format!(
                    "block positions {b:?}: not a positive multiple of 20 in 20..={}",
                    u32::MAX / 20 * 20
                )
            })?;
    }
    let check: usize = match args.get(4) {
        None => 0,
        Some(s) => s.parse().ok().filter(|&n| n <= MAX_CHECK).ok_or_else(|| {
            format!("check count {s:?}: not a number of positions in 0..={MAX_CHECK}")
        })?,
    };
    // OUT_DIR == IN_DIR (by any path) would copy files onto themselves (truncating them):
    // refuse it before anything is read or written.
    {
        use std::os::unix::fs::MetadataExt;
        let same = match (std::fs::metadata(&inp), std::fs::metadata(&out)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        let canon = |p: &std::path::Path| std::fs::canonicalize(p).ok();
        if same || (canon(&inp).is_some() && canon(&inp) == canon(&out)) {
            return Err(format!(
                "OUT_DIR {} is IN_DIR {}: write the converted tables into another directory",
                out.display(),
                inp.display()
            ));
        }
    }
    let io = |p: &std::path::Path| {
        let p = p.display().to_string();
        move |e: std::io::Error| format!("{p}: {e}")
    };
    let mut files: Vec<(u64, PathBuf)> = Vec::new();
    for e in std::fs::read_dir(&inp).map_err(io(&inp))? {
        let p = e.map_err(io(&inp))?.path();
        if p.extension().is_some_and(|x| x == "egdb") {
            let t = TableFile::open(&p).map_err(|e| e.to_string())?;
            files.push((t.meta().positions, p));
        }
    }
    files.sort_by(|a, b| b.cmp(a));
    if files.is_empty() {
        return Err(format!("no table files in {} (*.egdb)", inp.display()));
    }
    if check > 0 {
        // The check reads the input as codec 2 does (a true value at every quiet position).
        for (_, p) in &files {
            let c = TableFile::open(p).map_err(|e| e.to_string())?.codec();
            if c != 2 {
                return Err(format!(
                    "{}: codec {c}; CHECK_N needs codec-2 input",
                    p.display()
                ));
            }
        }
    }
    std::fs::create_dir_all(&out).map_err(io(&out))?;
    let t0 = Instant::now();
    // pieces -> (files, positions, bytes in, bytes out)
    let acc: Mutex<BTreeMap<u32, (u64, u64, u64, u64)>> = Mutex::new(BTreeMap::new());
    files
        .par_iter()
        .try_for_each(|(_, path)| -> Result<(), String> {
            let t = TableFile::open(path).map_err(|e| e.to_string())?;
            t.verify_checksum().map_err(|e| e.to_string())?;
            let m = t.meta().clone();
            let dst = out.join(path.file_name().unwrap_or_default());
            {
                // Never onto itself (a hard link, or a directory check raced).
                use std::os::unix::fs::MetadataExt;
                if let (Ok(a), Ok(b)) = (std::fs::metadata(path), std::fs::metadata(&dst)) {
                    if a.dev() == b.dev() && a.ino() == b.ino() {
                        return Err(format!(
                            "{} is {}: not written onto itself",
                            dst.display(),
                            path.display()
                        ));
                    }
                }
            }
            let written = if t.codec() == codec {
                std::fs::copy(path, &dst).map_err(io(&dst))?
            } else {
                let v = t.decode_all().map_err(|e| e.to_string())?;
                write_table_with(&dst, &m, &v, &opts)
                    .map_err(|e| format!("{}: {e}", dst.display()))?
            };
            let mut a = acc.lock().unwrap_or_else(|p| p.into_inner());
            let e = a.entry(m.slice.material.pieces()).or_default();
            e.0 += 1;
            e.1 += m.positions;
            e.2 += t.file_bytes();
            e.3 += written;
            Ok(())
        })?;
    println!(
        "converted in {:.1} s ({opts:?})",
        t0.elapsed().as_secs_f64()
    );
    let a = acc.into_inner().unwrap_or_else(|p| p.into_inner());
    let (mut n, mut bi, mut bo) = (0u64, 0u64, 0u64);
    for (k, (f, pos, i, o)) in &a {
        println!(
            "{k} pieces: {f} files, {pos} positions; in {i} bytes ({:.1} pos/byte), out {o} bytes ({:.1} pos/byte)",
            *pos as f64 / *i as f64,
            *pos as f64 / *o as f64
        );
        n += pos;
        bi += i;
        bo += o;
    }
    println!(
        "all: {n} positions; in {bi} bytes ({:.1} pos/byte), out {bo} bytes ({:.1} pos/byte)",
        n as f64 / bi as f64,
        n as f64 / bo as f64
    );
    if check == 0 {
        return Ok(());
    }
    let tb = Tablebase::open(&out).map_err(|e| e.to_string())?;
    let cache = Mutex::new(HashMap::new());
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for &k in a.keys() {
        // Random positions of k pieces: a random slice weighted by nothing (every slice of
        // the piece count alike), a random index, either side to move.
        let mut slices: Vec<Slice> = Vec::new();
        for (_, p) in &files {
            let s = TableFile::open(p).map_err(|e| e.to_string())?.meta().slice;
            if s.material.pieces() == k {
                slices.push(s);
            }
        }
        let ps: Vec<Position> = (0..check)
            .map(|_| {
                let s = slices[(next() % slices.len() as u64) as usize];
                let ix = SliceIndex::new(s);
                let p = ix
                    .unrank(next() % ix.size())
                    .map_err(|e| format!("slice {s}: {e}"))?;
                Ok(if next() & 1 == 0 {
                    p
                } else {
                    // The same position with White to move (its own value).
                    Position {
                        side: Color::White,
                        ..p
                    }
                })
            })
            .collect::<Result<_, String>>()?;
        let differs: Vec<bool> = ps
            .par_iter()
            .filter(|p| p.validate().is_ok())
            .map(|p| Ok(tb.probe_wld(p).ok() != Some(old_value(&inp, &cache, p)?)))
            .collect::<Result<_, String>>()?;
        let bad = differs.iter().filter(|&&d| d).count();
        println!("check {k} pieces: {check} random positions, {bad} differ");
        if bad != 0 {
            return Err(format!("{bad} of {check} positions of {k} pieces differ"));
        }
    }
    Ok(())
}
