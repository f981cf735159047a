//! `egdb build`: build tables by retrograde analysis. See docs/cli.md.
use super::CliResult;
use checkers_egdb::planning::{default_budget, format_size};
use checkers_egdb::{
    build_with, peak_rss_bytes, BuildObserver, BuildOptions, Slice, Unit, UnitReport,
};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;

/// Arguments of `egdb build`.
#[derive(clap::Args)]
pub struct Args {
    /// Build every slice with at most this many pieces (1-10; default 5). With --slice, the
    /// slice must have at most this many pieces.
    #[arg(long)]
    pub pieces: Option<u32>,
    /// Table directory (created if missing).
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Build only the unit (slice and colour-mirror partner) containing this slice, e.g. 2101-3n;
    /// its dependencies must already exist.
    #[arg(long)]
    pub slice: Option<Slice>,
    /// With --slice: also build every unit of the slice's piece count that it reads (leading-man
    /// advances and crownings, transitively), in build order; units already built are skipped.
    /// Only the tables with fewer pieces must exist.
    #[arg(long, requires = "slice")]
    pub with_deps: bool,
    /// Memory budget, e.g. 512M or 16G (binary units K, M, G, T): the unit being solved (2
    /// bytes per position: state and values) plus the decoded dependencies (2 bits per position) and a block
    /// cache; dependencies that do not fit are read from their compressed files instead. The
    /// files do not depend on it. Default: half the physical memory. A budget that cannot hold
    /// the largest unit's state is refused before anything is solved, with the size it needs.
    #[arg(long, value_name = "SIZE", value_parser = checkers_egdb::planning::parse_size)]
    pub memory: Option<u64>,
    /// No progress bars and no summary.
    #[arg(long)]
    pub quiet: bool,
    /// One line per unit built on stderr (slices, positions, seconds, positions/s).
    #[arg(long, short)]
    pub verbose: bool,
    /// Spread the build over the ranks of an MPI job: `mpirun -n N egdb build --mpi ...`, with
    /// --dir on a filesystem all ranks share (needs the `mpi` cargo feature; see docs/mpi.md).
    #[arg(long)]
    pub mpi: bool,
    /// With --mpi: solve every unit of more than POSITIONS positions split over all the ranks
    /// (each rank holds an index range of both slices of the unit and exchanges predecessor
    /// updates with the others; docs/mpi.md). For tests and measurements: units whose solver
    /// state (2 bytes per position) exceeds --memory, or whose dependencies decoded fit only
    /// next to a share of it, are split anyway. Works with --dtc.
    #[arg(long, value_name = "POSITIONS")]
    pub split_above: Option<u64>,
    /// Also build the distance-to-conversion file of every slice (`<slice>.dtc`); on a
    /// directory whose WLD files exist, only the distance files are built.
    #[arg(long)]
    pub dtc: bool,
    /// Also build the depth-to-win file of every slice (`<slice>.dtw`: plies to the end of
    /// the game, the winner fastest, the loser slowest), after the WLD (and distance) files;
    /// on a directory whose WLD files exist, only the depth-to-win files are built.
    /// With --mpi the depth-to-win phase runs on rank 0 after the ranks have built the value
    /// files (it is not distributed).
    #[arg(long)]
    pub dtw: bool,
    /// Value codec of the WLD files written: 2 (default), 4 (about 1.5x smaller WLD files;
    /// the first probe of a threat position pays a search, later ones are remembered), 5
    /// (codec 4's don't cares, context-model coded: about 2x smaller than codec 2, block
    /// decodes much slower), 6 (codec 4's don't cares, context-model coded in segments of
    /// 4,120 positions that decode without move generation) or 7 (codec 6 with a codebook of
    /// trained priors and constant segments: about 2x smaller than codec 2 at 6 pieces, 2.3x
    /// at 7; docs/format.md). Codecs 4 to 7: English only. Without --codec a build continues
    /// in the codec of its complete units with the most pieces (when they agree; with none, of the other
    /// tables with the most pieces), else 2; the summary's `codec` line says which.
    /// Complete units keep their files whatever their codec; a unit interrupted with one file
    /// written in another codec is refused before anything is written.
    #[arg(long, value_parser = parse_codec)]
    pub codec: Option<u32>,
    /// The game: english (default), russian, brazilian, italian, giveaway, pool, spanish,
    /// czech. Its rules id goes into every file header; a directory holds one variant's
    /// tables (a build into a directory of another variant is refused). Variants other than
    /// English: codec 2 only, no --dtw.
    #[arg(long, default_value = "english")]
    pub rules: String,
}

/// `--codec`: 2, 4, 5, 6 or 7, read as every other integer option is (`05` is 5; spaces are
/// refused).
fn parse_codec(s: &str) -> Result<u32, String> {
    use checkers_egdb::format::{
        CODEC_2BIT_THREATS, CODEC_2BIT_ZSTD, CODEC_CM_BOOK, CODEC_CM_FILLED, CODEC_CM_THREATS,
    };
    match s.parse::<u32>() {
        Ok(c)
            if [
                CODEC_2BIT_ZSTD,
                CODEC_2BIT_THREATS,
                CODEC_CM_THREATS,
                CODEC_CM_FILLED,
                CODEC_CM_BOOK,
            ]
            .contains(&c) =>
        {
            Ok(c)
        }
        _ => Err("expected 2, 4, 5, 6 or 7".into()),
    }
}

/// Progress bars (an overall bar and one per unit) and, with `-v`, one line per unit solved.
struct Bars {
    multi: MultiProgress,
    overall: ProgressBar,
    unit: Mutex<Option<ProgressBar>>,
    verbose: bool,
}

impl Bars {
    fn new(visible: bool, verbose: bool) -> Bars {
        let multi = MultiProgress::with_draw_target(if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        });
        let overall = multi.add(ProgressBar::new(0));
        overall.set_style(
            ProgressStyle::with_template(
                "{prefix:>8} [{bar:30}] {percent:>3}% {human_pos}/{human_len} pos  {per_sec}  ETA {eta}",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        overall.set_prefix("all");
        Bars {
            multi,
            overall,
            unit: Mutex::new(None),
            verbose,
        }
    }

    fn current(&self) -> std::sync::MutexGuard<'_, Option<ProgressBar>> {
        self.unit.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl BuildObserver for Bars {
    fn start(&self, _units: usize, positions: u64) {
        self.overall.set_length(positions);
    }
    fn unit_started(&self, unit: &Unit) {
        let bar = self.multi.add(ProgressBar::new(unit.sizes.iter().sum()));
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>8} [{bar:30}] {percent:>3}% {human_pos}/{human_len} pos  {per_sec}",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        bar.set_prefix(unit.slices[0].to_string());
        *self.current() = Some(bar);
    }
    fn progress(&self, n: u64) {
        if let Some(b) = self.current().as_ref() {
            b.inc(n);
        }
        self.overall.inc(n);
    }
    fn unit_solved(&self, unit: &Unit, r: &UnitReport) {
        if self.verbose {
            let names: Vec<String> = unit.slices.iter().map(|s| s.to_string()).collect();
            self.multi.suspend(|| {
                eprintln!(
                    "built {}\t{} positions\t{:.3} s (initial pass {:.3}, propagation {:.3} over {} plies)\t{:.0} positions/s",
                    names.join(","),
                    r.positions,
                    r.seconds,
                    r.initial_seconds,
                    r.propagate_seconds,
                    r.plies,
                    r.positions as f64 / r.seconds.max(1e-9)
                )
            });
        }
        if let Some(b) = self.current().take() {
            b.finish_and_clear();
            self.multi.remove(&b);
        }
    }
    fn unit_rechecked(&self, _unit: &Unit, note: &str) {
        // Printed even with --quiet: it reports a fault, like an error.
        self.multi.suspend(|| eprintln!("egdb: warning: {note}"));
    }
    fn file_replaced(&self, path: &std::path::Path, why: &str) {
        // Printed even with --quiet: a file on disk was found damaged.
        self.multi.suspend(|| {
            eprintln!(
                "egdb: note: {} is written again: {}",
                super::one_line(&path.display().to_string()),
                super::one_line(why)
            )
        });
    }
    fn unlocked(&self, dir: &std::path::Path) {
        // Printed even with --quiet: nothing keeps another build out of the directory.
        self.multi.suspend(|| {
            eprintln!(
                "egdb: warning: the filesystem of {} does not support locks (flock): the build \
                 runs without excluding other builds of this directory",
                super::one_line(&dir.display().to_string())
            )
        });
    }
    fn finish(&self) {
        self.overall.finish_and_clear();
    }
}

/// Run `egdb build`.
pub fn run(args: Args) -> CliResult {
    super::init_threads(args.threads)?;
    let rules: checkers_egdb::rules::Variant = args.rules.parse()?;
    if args.split_above.is_some() && !args.mpi {
        return Err(
            "--split-above splits units over the ranks of an MPI job: it needs --mpi (mpirun -n R egdb build --mpi ...)"
                .into(),
        );
    }
    let opts = BuildOptions {
        dir: args.dir.clone(),
        // Without --pieces, --slice builds its slice whatever its piece count.
        pieces: args
            .pieces
            .or(args.slice.map(|s| s.material.pieces()))
            .unwrap_or(5),
        slice: args.slice,
        with_deps: args.with_deps,
        memory: Some(args.memory.unwrap_or_else(default_budget)),
        dtc: args.dtc,
        dtw: args.dtw,
        codec: args.codec.unwrap_or(checkers_egdb::format::CODEC_2BIT_ZSTD),
        codec_from_dir: args.codec.is_none(),
        rules,
        split_above: args.split_above,
    };
    let bars = Bars::new(!args.quiet && std::io::stderr().is_terminal(), args.verbose);
    let s = if args.mpi {
        bars.overall.finish_and_clear();
        // Rank 0 shows its own status line; the bars only print notes and warnings.
        let notes = Bars::new(false, false);
        match super::build_mpi::run(&opts, args.quiet, args.verbose, &notes)? {
            Some(s) => s,
            // Ranks other than 0 print nothing.
            None => return Ok(()),
        }
    } else {
        let s = build_with(&opts, &bars);
        bars.overall.finish_and_clear();
        s?
    };
    if !args.quiet {
        let rss =
            peak_rss_bytes().map_or("?".into(), |b| format!("{:.1} MiB", b as f64 / 1048576.0));
        let total = s.wins + s.losses + s.draws;
        let pct = |x: u64| {
            if total == 0 {
                0.0
            } else {
                100.0 * x as f64 / total as f64
            }
        };
        println!("dir           {}", args.dir.display());
        println!(
            "slices        {} built, {} already complete",
            s.slices_built, s.slices_skipped
        );
        println!("codec         {} (value files written)", s.codec);
        println!("positions     {}", s.positions);
        println!(
            "values        {} wins ({:.1}%), {} losses ({:.1}%), {} draws ({:.1}%)",
            s.wins,
            pct(s.wins),
            s.losses,
            pct(s.losses),
            s.draws,
            pct(s.draws)
        );
        // Value files and distance files apart: each figure over its own positions and bytes.
        let per_byte = |positions: u64, bytes: u64| {
            if bytes == 0 {
                0.0
            } else {
                positions as f64 / bytes as f64
            }
        };
        let value_bytes = s.bytes.saturating_sub(s.dtc_bytes + s.dtw_bytes);
        println!(
            "bytes         {} ({:.1} positions/byte)",
            value_bytes,
            per_byte(s.positions, value_bytes)
        );
        // Positions solved: those of the value files built; with --dtc every unit built gets
        // its distance files, so those of the distance files built (a distances-only unit
        // counts too).
        let solved = s.positions.max(s.dtc_positions);
        println!(
            "time          {:.2} s ({:.0} positions/s)",
            s.seconds,
            if s.seconds > 0.0 {
                solved as f64 / s.seconds
            } else {
                0.0
            }
        );
        // The parts after "of which" add up to the wall time; writing runs on its own thread
        // alongside solving and is reported apart. With --mpi the solve and write seconds are
        // summed over the ranks, which run at the same time. Shown to 0.01 s: the parts are
        // computed from the rounded figures so that they add up as printed. Solving includes
        // the distance pass of --dtc.
        let r2 = |x: f64| (x * 100.0).round() / 100.0;
        let propagation =
            (r2(s.solve_seconds) - r2(s.initial_seconds) - r2(s.dtc_seconds)).max(0.0);
        if args.mpi {
            println!(
                "              summed over ranks (they overlap): solving {:.2} s (initial pass {:.2} s, propagation {:.2} s, up to {} plies), compressing and writing {:.2} s",
                s.solve_seconds, s.initial_seconds, propagation, s.plies, s.write_seconds
            );
        } else {
            println!(
                "              of which solving {:.2} s (initial pass {:.2} s, propagation {:.2} s, up to {} plies, distance pass {:.2} s), other {:.2} s (setup, waiting for the writer)",
                s.solve_seconds,
                s.initial_seconds,
                propagation,
                s.plies,
                s.dtc_seconds,
                (r2(s.seconds) - r2(s.solve_seconds)).max(0.0)
            );
            println!(
                "              alongside: compressing and writing {:.2} s on the writer thread",
                s.write_seconds
            );
        }
        if args.dtc {
            println!(
                "distances     {} built, {} already complete, {} bytes ({:.1} positions/byte), pass {:.2} s",
                s.dtc_files,
                s.dtc_skipped,
                s.dtc_bytes,
                per_byte(s.dtc_positions, s.dtc_bytes),
                s.dtc_seconds
            );
        }
        if args.dtw {
            println!(
                "depth to win  {} built, {} already complete, {} bytes ({:.1} positions/byte), pass {:.2} s",
                s.dtw_files,
                s.dtw_skipped,
                s.dtw_bytes,
                per_byte(s.dtw_positions, s.dtw_bytes),
                s.dtw_seconds
            );
        }
        if !s.rechecked.is_empty() {
            println!(
                "rechecked     {} units solved twice after a distance-pass inconsistency (warnings above); run egdb verify",
                s.rechecked.len()
            );
        }
        println!("peak RSS      {rss}");
        let st = &s.store;
        println!(
            "dependencies  budget {}: peak {} decoded, {} slices loaded, {} released, {} evicted, {} lookups through the block cache",
            opts.memory.map_or("unbounded".into(), format_size),
            format_size(st.peak_resident_bytes),
            st.slices_loaded,
            st.slices_released,
            st.slices_evicted,
            st.spilled_lookups
        );
    }
    Ok(())
}
