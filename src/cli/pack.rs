//! `egdb pack` and `egdb unpack`: a table directory in one file per material and metric, and
//! back. See docs/cli.md and docs/format.md ("Material files").
use super::CliResult;
use checkers_egdb::format::FileKind;
use checkers_egdb::{pack_dir, unpack_dir, PackReport};
use std::path::PathBuf;

/// Arguments of `egdb pack` and `egdb unpack`.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory, changed in place (under the build lock: not while a build runs).
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// No line per material file on standard error (the summary is still printed).
    #[arg(long)]
    pub quiet: bool,
}

fn summary(verb: &str, r: &PackReport, dir: &std::path::Path) {
    if r.unlocked {
        eprintln!(
            "egdb: warning: the filesystem of {} does not support locks (flock): nothing kept \
             other builds, conversions or packs out of the directory meanwhile",
            super::one_line(&dir.display().to_string())
        );
    }
    for (kind, slices, before, after) in &r.kinds {
        let what = match kind {
            FileKind::Wld => "values (.egdb)",
            FileKind::Dtc => "distances to conversion (.dtc)",
            FileKind::Dtw => "depths to win (.dtw)",
        };
        if *slices > 0 {
            println!("{verb} {what}: {slices} slices, {before} -> {after} files");
        }
    }
    println!("table bytes: {}", r.bytes);
}

/// Run `egdb pack`.
pub fn run_pack(args: Args) -> CliResult {
    let quiet = args.quiet;
    let r = pack_dir(&args.dir, &mut |p| {
        if !quiet {
            eprintln!("wrote {}", p.display());
        }
    })?;
    summary("packed", &r, &args.dir);
    Ok(())
}

/// Run `egdb unpack`.
pub fn run_unpack(args: Args) -> CliResult {
    let quiet = args.quiet;
    let r = unpack_dir(&args.dir, &mut |p| {
        if !quiet {
            eprintln!("unpacked and removed {}", p.display());
        }
    })?;
    summary("unpacked", &r, &args.dir);
    Ok(())
}
