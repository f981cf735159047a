//! `egdb info`: slices present, sizes, bytes, positions per byte, missing slices. See docs/cli.md.
use super::CliResult;
use checkers_egdb::driver::LOCK_FILE;
use checkers_egdb::format::slice_of_file_name;
use checkers_egdb::planning::build_order;
use checkers_egdb::read_dir_info_all;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Arguments of `egdb info`.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory.
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Also list every slice file, then every missing slice (`missing<TAB>NAME`).
    #[arg(long)]
    pub slices: bool,
    /// Print instead a manifest of every table file (`.egdb`, `.dtc`, `.dtw`): one line
    /// `SHA256<two spaces>NAME` per file, sorted by name, the format of `sha256sum` (check a
    /// copy elsewhere with `sha256sum -c` in its directory).
    #[arg(long, conflicts_with = "slices")]
    pub manifest: bool,
}

/// `egdb info --manifest`: the SHA-256 of every table file of `dir`, sorted by name (files
/// hashed in parallel, each read in 1 MiB pieces). Files named like tables that are not
/// regular files, or cannot be read, are errors naming them.
fn manifest(dir: &std::path::Path) -> CliResult {
    use rayon::prelude::*;
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let rd = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut names: Vec<String> = rd
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            slice_of_file_name(n).is_some()
                || is_dtc_file_name(n)
                || checkers_egdb::format::material_of_pack_name(n).is_some()
                || checkers_egdb::format::slice_of_dtw_file_name(n).is_some()
        })
        .collect();
    if names.is_empty() {
        return Err(format!("no table files in {} (run egdb build)", dir.display()).into());
    }
    names.sort();
    let sums: Vec<Result<String, String>> = names
        .par_iter()
        .map(|n| {
            let path = dir.join(n);
            let bad = |e: std::io::Error| format!("{}: {e}", path.display());
            let meta = std::fs::metadata(&path).map_err(bad)?;
            if !meta.is_file() {
                return Err(format!("{}: not a regular file", path.display()));
            }
            let mut f = std::fs::File::open(&path).map_err(bad)?;
            let mut h = Sha256::new();
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let k = f.read(&mut buf).map_err(bad)?;
                if k == 0 {
                    break;
                }
                h.update(&buf[..k]);
            }
            let d = h.finalize();
            Ok(d.iter().map(|b| format!("{b:02x}")).collect())
        })
        .collect();
    let mut failed = 0;
    for (n, s) in names.iter().zip(sums) {
        match s {
            Ok(s) => println!("{s}  {n}"),
            Err(e) => {
                eprintln!("egdb: bad table: {}", super::one_line(&e));
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Err(format!("{failed} table files could not be read (listed above)").into());
    }
    Ok(())
}

/// Whether `name` is a distance file's name (`SLICE.dtc`, written by `egdb build --dtc`).
fn is_dtc_file_name(name: &str) -> bool {
    checkers_egdb::format::slice_of_dtc_file_name(name).is_some()
        || checkers_egdb::format::slice_of_dtw_file_name(name).is_some()
}

/// Run `egdb info`.
pub fn run(args: Args) -> CliResult {
    if args.manifest {
        return manifest(&args.dir);
    }
    let (infos, bad) = read_dir_info_all(&args.dir)?;
    // Files that are not tables (other names, leftover temporaries) are not read: say so.
    if let Ok(rd) = std::fs::read_dir(&args.dir) {
        let mut ignored: Vec<String> = rd
            .filter_map(Result::ok)
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| {
                slice_of_file_name(n).is_none()
                    && n != LOCK_FILE
                    && !is_dtc_file_name(n)
                    && checkers_egdb::format::material_of_pack_name(n).is_none()
            })
            .collect();
        ignored.sort();
        for n in ignored {
            eprintln!(
                "egdb: note: ignored {}: not a table file name (like 2101-3n.egdb)",
                super::one_line(&n)
            );
        }
    }
    // Every bad file on its own line; the command fails at the end.
    for (_, e) in &bad {
        eprintln!("egdb: bad table: {}", super::one_line(&e.to_string()));
    }
    if infos.is_empty() && !bad.is_empty() {
        return Err(format!(
            "none of the {} table files in {} could be read (listed above)",
            bad.len(),
            super::one_line(&args.dir.display().to_string())
        )
        .into());
    }
    if infos.is_empty() {
        return Err(format!("no table files in {} (run egdb build)", args.dir.display()).into());
    }
    if args.slices {
        println!("slice\tpositions\tbytes\tpositions/byte\tcodec");
        for f in &infos {
            println!(
                "{}\t{}\t{}\t{:.1}\t{}",
                f.slice,
                f.meta.positions,
                f.bytes,
                f.meta.positions as f64 / f.bytes.max(1) as f64,
                f.codec
            );
        }
    }
    // A bad file is there, not missing.
    let present: BTreeSet<_> = infos
        .iter()
        .map(|f| f.slice)
        .chain(bad.iter().map(|(s, _)| *s))
        .collect();
    let max = infos
        .iter()
        .map(|f| f.slice.material.pieces())
        .max()
        .unwrap_or(0);
    println!("pieces\tslices\tmissing\tpositions\tbytes\tpositions/byte\tcodecs");
    let all = build_order(max);
    for n in 1..=max {
        let expected: Vec<_> = all
            .iter()
            .flat_map(|u| u.slices.iter())
            .filter(|s| s.material.pieces() == n)
            .collect();
        let have: Vec<_> = infos
            .iter()
            .filter(|f| f.slice.material.pieces() == n)
            .collect();
        let missing = expected.iter().filter(|s| !present.contains(s)).count();
        let pos: u64 = have.iter().map(|f| f.meta.positions).sum();
        let bytes: u64 = have.iter().map(|f| f.bytes).sum();
        // The value codecs of the piece count's files (a directory may mix them).
        let codecs: BTreeSet<u32> = have.iter().map(|f| f.codec).collect();
        let codecs: Vec<String> = codecs.iter().map(u32::to_string).collect();
        println!(
            "{n}\t{}\t{missing}\t{pos}\t{bytes}\t{:.1}\t{}",
            have.len(),
            pos as f64 / bytes.max(1) as f64,
            if codecs.is_empty() {
                "-".to_string()
            } else {
                codecs.join(",")
            }
        );
    }
    // The rules of the tables (every header names them; a directory holds one variant).
    let mut bad_rules = false;
    match checkers_egdb::format::dir_rules(&args.dir) {
        Ok(Some(id)) => match checkers_egdb::rules::Variant::from_id(id) {
            Some(v) => println!("rules\t{v}"),
            None => println!("rules\tunknown (rules id {id})"),
        },
        Ok(None) => {}
        Err(e) => {
            eprintln!("egdb: bad table: {}", super::one_line(&e.to_string()));
            bad_rules = true;
        }
    }
    // Distance files (`egdb build --dtc`), when there are any: per piece count, good files,
    // slices with a WLD file but no good distance file, bytes and positions per byte. Each
    // file is opened (header, slice and length checked; no block read): one that fails is
    // a bad table (not a file of the slice: counted as missing), and the command fails at
    // the end.
    let mut any_dtc = false;
    let mut bad_dtc = 0usize;
    // (pieces, positions, Some(bytes) of a good file)
    let dtc: Vec<(u32, u64, Option<u64>)> = infos
        .iter()
        .map(|f| {
            // Its own file, or its member of a material file (`egdb pack`).
            let own = checkers_egdb::format::dtc_path(&args.dir, &f.slice);
            let src = if std::fs::symlink_metadata(&own).is_ok() {
                Ok(Some(checkers_egdb::format::Source {
                    path: own,
                    range: None,
                }))
            } else {
                checkers_egdb::format::locate(
                    &args.dir,
                    &f.slice,
                    checkers_egdb::format::FileKind::Dtc,
                )
            };
            let (there, opened) = match src {
                Ok(None) => (false, None),
                Ok(Some(src)) => (
                    true,
                    Some(checkers_egdb::format::DtcFile::open_source(
                        &src,
                        None,
                        checkers_egdb::format::ANY_RULES,
                        checkers_egdb::format::FileKind::Dtc,
                    )),
                ),
                Err(e) => (true, Some(Err(e))),
            };
            let p = opened
                .as_ref()
                .and_then(|r| r.as_ref().ok())
                .map_or_else(|| f.path.clone(), |d| d.path().to_path_buf());
            any_dtc |= there;
            let bytes = if let Some(opened) = opened {
                match opened {
                    Ok(d) if d.meta().slice == f.slice => Some(d.file_bytes()),
                    Ok(d) => {
                        eprintln!(
                            "egdb: bad table: {}",
                            super::one_line(&format!(
                                "{}: holds slice {}, not {}",
                                p.display(),
                                d.meta().slice,
                                f.slice
                            ))
                        );
                        bad_dtc += 1;
                        None
                    }
                    Err(e) => {
                        eprintln!("egdb: bad table: {}", super::one_line(&e.to_string()));
                        bad_dtc += 1;
                        None
                    }
                }
            } else {
                None
            };
            (f.slice.material.pieces(), f.meta.positions, bytes)
        })
        .collect();
    if any_dtc {
        println!("pieces\tdtc_files\tdtc_missing\tpositions\tdtc_bytes\tpositions/byte");
        for n in 1..=max {
            let of_n: Vec<_> = dtc.iter().filter(|d| d.0 == n).collect();
            let with: Vec<_> = of_n.iter().filter(|d| d.2.is_some()).collect();
            let missing = of_n.len() - with.len();
            let pos: u64 = with.iter().map(|d| d.1).sum();
            let bytes: u64 = with.iter().filter_map(|d| d.2).sum();
            println!(
                "{n}\t{}\t{missing}\t{pos}\t{bytes}\t{:.1}",
                with.len(),
                pos as f64 / bytes.max(1) as f64
            );
        }
    }
    if args.slices {
        for n in 1..=max {
            for s in all
                .iter()
                .flat_map(|u| u.slices.iter())
                .filter(|s| s.material.pieces() == n && !present.contains(s))
            {
                println!("missing\t{s}");
            }
        }
    }
    if bad_rules {
        return Err("the table files are of more than one variant (listed above)".into());
    }
    if !bad.is_empty() || bad_dtc > 0 {
        return Err(format!(
            "{} table files could not be read (listed above)",
            bad.len() + bad_dtc
        )
        .into());
    }
    Ok(())
}
