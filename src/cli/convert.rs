//! `egdb convert`: a table directory written again in another value codec. See docs/cli.md.
use super::CliResult;
use checkers_egdb::{convert_dir, BuildOptions, ConvertCounts, ConvertOptions};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Arguments of `egdb convert`.
#[derive(clap::Args)]
pub struct Args {
    /// Source table directory (read only).
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Target directory (created if missing; must not be the source by any path). A rerun
    /// into the same target resumes: files already whole there in the target codec are
    /// skipped, missing or damaged ones written again.
    #[arg(long, value_name = "DST")]
    pub out: PathBuf,
    /// Value codec of the WLD files written: 2, 4, 5, 6 or 7 (docs/format.md); default: the
    /// codec `egdb build` writes without --codec. A file already in that codec is copied as
    /// it is; codec 2 converts to 4, 5, 6 and 7, and those into each other; codecs 4 to 7
    /// cannot become codec 2 (that needs a search: rebuild instead), and are English only.
    #[arg(long, value_parser = parse_codec)]
    pub codec: Option<u32>,
    /// After converting, check N random positions per piece count (either side to move):
    /// the target's probe against the source's value (for a codec-2 source read without the
    /// probe's resolution code: captures searched over the slow move generator). A position
    /// that differs is an error.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub check: u64,
    /// Worker threads (default: all cores). The files do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar and no time on standard error (the summary is still printed).
    #[arg(long)]
    pub quiet: bool,
}

/// `--codec`: 2, 4, 5, 6 or 7.
fn parse_codec(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(c @ (2 | 4 | 5 | 6 | 7)) => Ok(c),
        _ => Err("expected 2, 4, 5, 6 or 7".into()),
    }
}

/// Positions per byte, one decimal (`-` for no bytes).
fn per_byte(positions: u64, bytes: u64) -> String {
    if bytes == 0 {
        "-".into()
    } else {
        format!("{:.1}", positions as f64 / bytes as f64)
    }
}

/// One summary line of `c`.
fn line(what: &str, c: &ConvertCounts) -> String {
    format!(
        "{what}: {} files, {} positions; {} -> {} bytes; {} -> {} positions/byte; {} converted, {} copied, {} already there",
        c.files,
        c.positions,
        c.bytes_before,
        c.bytes_after,
        per_byte(c.positions, c.bytes_before),
        per_byte(c.positions, c.bytes_after),
        c.converted,
        c.copied,
        c.skipped
    )
}

/// Run `egdb convert`: the summary on standard output (the same whatever the thread count),
/// progress and time on standard error.
pub fn run(args: Args) -> CliResult {
    super::init_threads(args.threads)?;
    if args.check > checkers_egdb::MAX_CONVERT_CHECK {
        return Err(format!(
            "--check {}: at most {} positions per piece count",
            args.check,
            checkers_egdb::MAX_CONVERT_CHECK
        )
        .into());
    }
    let codec = args
        .codec
        .unwrap_or_else(|| BuildOptions::new(&args.dir, 1).codec);
    let opts = ConvertOptions {
        check: args.check,
        ..ConvertOptions::new(&args.dir, &args.out, codec)
    };
    let bar = indicatif::ProgressBar::new(0);
    if args.quiet || !std::io::stderr().is_terminal() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "convert [{bar:30}] {percent:>3}% {human_pos}/{human_len} pos  ETA {eta}",
        )
        .expect("static template")
        .progress_chars("=> "),
    );
    let t0 = std::time::Instant::now();
    let rep = convert_dir(&opts, &|done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let rep = rep.map_err(|e| super::one_line(&e.to_string()))?;
    let variant = checkers_egdb::rules::Variant::from_id(rep.rules).map_or_else(
        || format!("rules id {}", rep.rules),
        |v| v.name().to_string(),
    );
    println!(
        "{} -> {}: WLD files in codec {} ({variant} tables)",
        super::one_line(&args.dir.display().to_string()),
        super::one_line(&args.out.display().to_string()),
        rep.codec
    );
    for (k, c) in &rep.wld {
        println!("{}", line(&format!("{k} pieces"), c));
    }
    println!("{}", line("all", &rep.wld_total()));
    let d = &rep.distance;
    if d.files > 0 {
        println!(
            "distance files (.dtc, .dtw): {} files, {} bytes, copied as they are; {} copied, {} already there",
            d.files, d.bytes_after, d.copied, d.skipped
        );
    }
    for (k, n) in &rep.checked {
        println!(
            "check {k} pieces: {n} random positions against the {}: 0 differ",
            rep.check_reference
        );
    }
    if rep.unlocked {
        eprintln!(
            "egdb: warning: the filesystem of {} does not support locks (flock): nothing kept \
             other builds or conversions out of the directory meanwhile",
            super::one_line(&args.out.display().to_string())
        );
    }
    if !rep.ignored.is_empty() {
        let names: Vec<String> = rep
            .ignored
            .iter()
            .take(5)
            .map(|n| super::one_line(n))
            .collect();
        println!(
            "not copied: {} entries of the source that are not table files ({}{})",
            rep.ignored.len(),
            names.join(", "),
            if rep.ignored.len() > 5 { ", ..." } else { "" }
        );
    }
    if !args.quiet {
        eprintln!("converted in {:.1} s", t0.elapsed().as_secs_f64());
    }
    Ok(())
}
