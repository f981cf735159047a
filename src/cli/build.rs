//! `egdb build`: build tables by retrograde analysis. See docs/cli.md.
use super::CliResult;
use checkers_egdb::build::{build, peak_rss_bytes, BuildOptions};
use checkers_egdb::slice::Slice;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Arguments of `egdb build`.
#[derive(clap::Args)]
pub struct Args {
    /// Build every slice with at most this many pieces (1-10).
    #[arg(long, default_value_t = 5)]
    pub pieces: u32,
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
    /// No progress bars and no summary.
    #[arg(long)]
    pub quiet: bool,
    /// One line per unit built on stderr (slices, positions, seconds, positions/s).
    #[arg(long, short)]
    pub verbose: bool,
    /// Spread the build over the ranks of an MPI job: `mpirun -n N egdb build --mpi ...`, with
    /// --dir on a filesystem all ranks share (needs the `mpi` cargo feature; see docs/mpi.md).
    #[arg(long, conflicts_with = "slice")]
    pub mpi: bool,
}

/// Run `egdb build`.
pub fn run(args: Args) -> CliResult {
    super::init_threads(args.threads)?;
    let opts = BuildOptions {
        dir: args.dir.clone(),
        pieces: args.pieces,
        slice: args.slice,
        verbose: args.verbose,
        progress: !args.quiet && std::io::stderr().is_terminal(),
    };
    let s = if args.mpi {
        match super::build_mpi::run(&opts, args.quiet)? {
            Some(s) => s,
            // Ranks other than 0 print nothing.
            None => return Ok(()),
        }
    } else {
        build(&opts)?
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
        println!(
            "bytes         {} ({:.1} positions/byte)",
            s.bytes,
            if s.bytes == 0 {
                0.0
            } else {
                s.positions as f64 / s.bytes as f64
            }
        );
        println!(
            "time          {:.2} s ({:.0} positions/s)",
            s.seconds,
            if s.seconds > 0.0 {
                s.positions as f64 / s.seconds
            } else {
                0.0
            }
        );
        println!(
            "              of which initial pass {:.2} s, propagation {:.2} s (up to {} plies), compressing and writing {:.2} s",
            s.initial_seconds,
            s.solve_seconds - s.initial_seconds,
            s.plies,
            s.write_seconds
        );
        println!("peak RSS      {rss}");
    }
    Ok(())
}
