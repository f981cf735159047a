//! `egdb build --mpi`: the build spread over the ranks of an MPI job (cargo feature `mpi`).
//! See docs/mpi.md.
//!
//! Started as `mpirun -n N egdb build --mpi --pieces P --dir SHARED_DIR` (every rank gets the
//! same arguments). Rank 0 runs the build driver of every build,
//! [`drive`](checkers_egdb::driver::drive): options, the directory lock, the units
//! (`--pieces`, `--slice`, `--with-deps`), the codec, damaged files, the resume and the
//! summary. This module is only the driver's [`Runner`](checkers_egdb::driver::Runner), the
//! transport that hands the units left to the ranks:
//!
//! - **Rank 0** schedules: it keeps the dependency graph (a unit waits until every unit it reads
//!   is finished: leading-man advances, crowning and all captured materials), hands ready units
//!   to idle ranks, one unit per rank at a time, so up to N units are in flight, and chooses among
//!   ready units the one with the most positions on its longest chain of dependents (list
//!   scheduling by critical path). Rank 0 **also works**: a thread of rank 0 solves units like
//!   any other rank, so `-n 1` is a plain build and one rank per node keeps every node busy; the
//!   scheduler itself only waits on messages (1 ms polls).
//! - **Every rank** (rank 0's worker thread included) receives a unit id with the codec and
//!   whether only its distance files are left, loads the dependencies from the shared
//!   directory's files ([`DecodedTables`](checkers_egdb::driver::DecodedTables),
//!   checksum-verified, within `--memory`), solves with rayon on its cores
//!   ([`solve_unit`](checkers_egdb::driver::solve_unit): WLD, then `--dtc`'s distance pass),
//!   writes with the usual atomic, checksummed writes
//!   ([`write_unit`](checkers_egdb::driver::write_unit)) and reports the counts to rank 0.
//!   The solved values stay in the rank's dependency store for later units.
//! - **Same bytes**: a unit's values depend only on its dependencies' values and the solver is
//!   deterministic, so the files are byte-identical to a single-process build whatever N is.
//! - **Faults**: a killed rank ends the job (mpirun stops the others); rerunning the command
//!   skips the finished units. A rank whose unit fails (an unreadable dependency, a write error,
//!   a panic) reports it; rank 0 prints `egdb: error: rank R failed on unit I (slices): reason`
//!   and aborts the job (`MPI_Abort`, exit status 1).
//! - **Progress** (rank 0, stderr, unless `--quiet`): units done/total, positions/s and the unit
//!   each rank holds; redrawn every second on a terminal, one line every 30 s otherwise. `-v`
//!   adds one line per unit finished.
//!
//! Messages (tags below) are small byte vectors: rank 0 sends ASSIGN `[unit id, unit count,
//! WLD files complete, codec]` (little-endian u64; the count guards against ranks started with
//! different arguments) or STOP; workers answer DONE (a `Report`: 18 words, then any recheck
//! notes) or FAIL (`[unit id]` then the reason in UTF-8).
//!
//! - **Split units** (`driver::split_unit`: more positions than `--split-above`, or a solver
//!   state over `--memory`): rank 0 stops handing out units until every rank is idle, sends
//!   SPLIT (the ASSIGN words) to every rank, and all ranks, rank 0's MPI thread included (with
//!   rank 0's one dependency store, its idle worker thread's), solve the unit together
//!   ([`solve_unit_split`](checkers_egdb::driver::solve_unit_split) over `MpiExchange`:
//!   non-blocking `MPI_Ialltoallv`/`MPI_Iallreduce`, polled with sleeps so waiting ranks do
//!   not spin), then write its files ([`build_unit_split`](checkers_egdb::driver::build_unit_split):
//!   every rank encodes its own blocks and writes them at its offset of the file rank 0 lays
//!   out; with `--dtc` the distance pass is split too and its files are written the same way). A rank whose part fails sends FAIL; every rank stops
//!   (each step's failure is all-reduced).
//! - **Checks at the start**: before the driver runs, rank 0 sends every rank HELLO with its
//!   identity (egdb version, xxh64 of the executable file, the options but `--dir` and
//!   `--memory`); each rank
//!   answers what differs, if anything, and a difference stops the job with one line before
//!   anything is built. With the directory locked and before the first unit, rank 0 writes
//!   a file of random content into `--dir` and sends its name (SHARED); each rank answers once
//!   it reads that content in its own `--dir` (up to 60 s), or why not: a directory not shared
//!   by every rank stops the job with one line naming the rank and its node.
//!
//! Test hooks: `EGDB_MPI_TEST_SHARED_WAIT_MS=N`: wait N ms instead of 60 s for the shared
//! directory's check file; `EGDB_MPI_TEST_KILL=R:K` makes rank R kill itself (SIGKILL) when it receives its
//! (K+1)-th unit, to test that a rerun resumes after a rank dies mid-build;
//! `EGDB_MPI_TEST_SPLIT_ALIGN=N` aligns the ranges of split units to N positions instead of
//! the file's blocks (65,520), so that small test units spread over every rank.

#[cfg(not(feature = "mpi"))]
/// Without the `mpi` feature: a clear error.
///
/// # Errors
/// Always: this `egdb` has no MPI support.
pub fn run(
    _opts: &checkers_egdb::BuildOptions,
    _quiet: bool,
    _verbose: bool,
    _observer: &dyn checkers_egdb::BuildObserver,
) -> Result<Option<checkers_egdb::BuildSummary>, Box<dyn std::error::Error + Send + Sync>> {
    Err("this egdb was built without MPI support: rebuild it with `cargo build --release --features mpi` (needs Open MPI and libclang, see docs/mpi.md)".into())
}

#[cfg(feature = "mpi")]
pub use imp::run;

#[cfg(feature = "mpi")]
mod imp {
    use checkers_egdb::driver::{
        build_unit_split, drive, solve_unit, split_unit, write_unit, BuildPlan, DecodedTables,
        Exchange, Runner, UnitOptions, BLOCK_ALIGN,
    };
    use checkers_egdb::format::table_path;
    use checkers_egdb::planning::build_order;
    use checkers_egdb::{
        BuildError, BuildObserver, BuildOptions, BuildSummary, NoProgress, Slice, Unit,
    };
    use mpi::collective::{CommunicatorCollectives, SystemOperation};
    use mpi::datatype::{Partition, PartitionMut};
    use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
    use mpi::topology::{Communicator, SimpleCommunicator};
    use mpi::Threading;
    use std::cmp::Reverse;
    use std::collections::{BinaryHeap, HashMap};
    use std::path::Path;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    type Error = Box<dyn std::error::Error + Send + Sync>;

    const TAG_ASSIGN: i32 = 1;
    const TAG_STOP: i32 = 2;
    const TAG_DONE: i32 = 3;
    const TAG_FAIL: i32 = 4;
    const TAG_SPLIT: i32 = 5;
    const TAG_HELLO: i32 = 6;
    const TAG_SHARED: i32 = 7;

    /// How long to wait between polls for a message (receives never spin a core).
    const POLL: Duration = Duration::from_millis(1);

    /// Words of a DONE message before its recheck notes.
    const REPORT_WORDS: usize = 18;

    /// What a rank reports for a unit it finished.
    #[derive(Clone, Debug, Default)]
    pub(super) struct Report {
        /// Unit id (index in the build order).
        pub unit: usize,
        /// The unit's files were already complete: nothing was solved.
        pub skipped: bool,
        /// Counts, bytes and times of the unit (`seconds`: the rank's wall time on it).
        pub sum: BuildSummary,
    }

    impl Report {
        pub(super) fn encode(&self) -> Vec<u8> {
            let s = &self.sum;
            let words: [u64; REPORT_WORDS] = [
                self.unit as u64,
                self.skipped as u64,
                s.slices_built,
                s.slices_skipped,
                s.positions,
                s.wins,
                s.losses,
                s.draws,
                s.bytes,
                s.plies as u64,
                s.seconds.to_bits(),
                s.solve_seconds.to_bits(),
                s.initial_seconds.to_bits(),
                s.write_seconds.to_bits(),
                s.dtc_bytes,
                s.dtc_seconds.to_bits(),
                s.dtc_files,
                s.dtc_positions,
            ];
            // Then the recheck notes, UTF-8, separated by newlines (notes are one line each).
            let mut b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            b.extend(s.rechecked.join("\n").as_bytes());
            b
        }

        pub(super) fn decode(b: &[u8]) -> Option<Report> {
            if b.len() < REPORT_WORDS * 8 {
                return None;
            }
            let (b, notes) = b.split_at(REPORT_WORDS * 8);
            let notes = std::str::from_utf8(notes).ok()?;
            let w: Vec<u64> = b
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
            Some(Report {
                unit: usize::try_from(w[0]).ok()?,
                skipped: w[1] != 0,
                sum: BuildSummary {
                    slices_built: w[2],
                    slices_skipped: w[3],
                    positions: w[4],
                    wins: w[5],
                    losses: w[6],
                    draws: w[7],
                    bytes: w[8],
                    plies: u32::try_from(w[9]).ok()?,
                    seconds: f64::from_bits(w[10]),
                    solve_seconds: f64::from_bits(w[11]),
                    initial_seconds: f64::from_bits(w[12]),
                    write_seconds: f64::from_bits(w[13]),
                    dtc_bytes: w[14],
                    dtc_seconds: f64::from_bits(w[15]),
                    dtc_files: w[16],
                    dtc_positions: w[17],
                    rechecked: if notes.is_empty() {
                        Vec::new()
                    } else {
                        notes.split('\n').map(str::to_string).collect()
                    },
                    ..BuildSummary::default()
                },
            })
        }
    }

    /// Every unit of `units` each one reads (positions in `units`, sorted): the
    /// same-piece-count units of [`Unit::dep_units`] and the units holding every non-empty
    /// slice of its capture materials. Units not in `units` (already built) are left out.
    pub(super) fn job_dependencies(units: &[&Unit]) -> Vec<Vec<usize>> {
        let at: HashMap<usize, usize> = units.iter().enumerate().map(|(k, u)| (u.id, k)).collect();
        let unit_of: HashMap<Slice, usize> = units
            .iter()
            .flat_map(|u| u.slices.iter().map(move |s| (*s, u.id)))
            .collect();
        units
            .iter()
            .map(|u| {
                let mut d: Vec<usize> = u.dep_units.clone();
                for m in &u.capture_materials {
                    // Slices without positions have no unit and are no dependency.
                    d.extend(Slice::all_of(*m).iter().filter_map(|s| unit_of.get(s)));
                }
                let mut d: Vec<usize> = d.iter().filter_map(|id| at.get(id).copied()).collect();
                d.sort_unstable();
                d.dedup();
                d
            })
            .collect()
    }

    /// Which units may start: a unit becomes ready when all the units it reads are finished.
    /// Among ready units the one with the largest `priority` goes first (ties: lower id).
    pub(super) struct Scheduler {
        dependents: Vec<Vec<usize>>,
        /// Unfinished dependencies of each unit.
        waiting: Vec<usize>,
        /// Positions on the heaviest chain from the unit to the end of the graph (the unit
        /// included): units on long chains start first.
        priority: Vec<u64>,
        ready: BinaryHeap<(u64, Reverse<usize>)>,
        finished: Vec<bool>,
        done: usize,
    }

    impl Scheduler {
        /// `deps[i]`: the units unit `i` reads (each `< i`); `sizes[i]`: its positions.
        pub(super) fn new(deps: &[Vec<usize>], sizes: &[u64]) -> Scheduler {
            let n = deps.len();
            let mut dependents = vec![Vec::new(); n];
            for (i, d) in deps.iter().enumerate() {
                for &j in d {
                    assert!(j < i, "unit {i} depends on later unit {j}");
                    dependents[j].push(i);
                }
            }
            let mut priority = vec![0u64; n];
            for i in (0..n).rev() {
                let tail = dependents[i].iter().map(|&k| priority[k]).max();
                priority[i] = sizes[i] + tail.unwrap_or(0);
            }
            let waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
            let ready = (0..n)
                .filter(|&i| waiting[i] == 0)
                .map(|i| (priority[i], Reverse(i)))
                .collect();
            Scheduler {
                dependents,
                waiting,
                priority,
                ready,
                finished: vec![false; n],
                done: 0,
            }
        }

        /// The next unit to hand out, if one is ready.
        pub(super) fn next(&mut self) -> Option<usize> {
            self.ready.pop().map(|(_, Reverse(i))| i)
        }

        /// Record unit `i` as finished; its dependents whose dependencies are now all finished
        /// become ready. A unit reported twice is ignored.
        pub(super) fn finish(&mut self, i: usize) {
            if std::mem::replace(&mut self.finished[i], true) {
                return;
            }
            self.done += 1;
            for &k in &self.dependents[i] {
                self.waiting[k] -= 1;
                if self.waiting[k] == 0 {
                    self.ready.push((self.priority[k], Reverse(k)));
                }
            }
        }

        /// Units finished.
        pub(super) fn done(&self) -> usize {
            self.done
        }

        /// Whether every unit is finished.
        pub(super) fn all_done(&self) -> bool {
            self.done == self.finished.len()
        }
    }

    fn names(u: &Unit) -> String {
        u.slices
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Print a fatal error naming what failed and stop every rank of the job.
    fn die(world: &SimpleCommunicator, msg: &str) -> ! {
        eprintln!("egdb: error: {msg}");
        world.abort(1)
    }

    /// `EGDB_MPI_TEST_SPLIT_ALIGN=N`: ranges of split units aligned to N positions instead of
    /// the file's blocks, so that the small units of a test spread over every rank (the same
    /// on every rank: pass it with `mpirun -x`).
    fn split_align_hook() -> Option<u64> {
        std::env::var("EGDB_MPI_TEST_SPLIT_ALIGN")
            .ok()?
            .trim()
            .parse()
            .ok()
            .filter(|&n| n > 0)
    }

    /// `EGDB_MPI_TEST_KILL=R:K`: (rank, units to finish before dying).
    fn kill_hook(rank: i32) -> Option<usize> {
        let v = std::env::var("EGDB_MPI_TEST_KILL").ok()?;
        let (r, k) = v.split_once(':')?;
        (r.trim().parse::<i32>().ok()? == rank)
            .then(|| k.trim().parse().ok())
            .flatten()
    }

    /// Wait (up to 2 minutes) until the files of the unit's dependencies are visible: on a
    /// network filesystem a file renamed into place on another node may show up a little
    /// later (attribute caching). A file still missing after that is reported by the solver.
    fn wait_for_dependencies(dir: &Path, u: &Unit) {
        let mut needed: Vec<Slice> = u.deps.clone();
        for m in &u.capture_materials {
            needed.extend(
                Slice::all_of(*m)
                    .into_iter()
                    .filter(|s| checkers_egdb::format::SliceIndex::new(*s).size() > 0),
            );
        }
        let t0 = Instant::now();
        for s in needed {
            let p = table_path(dir, &s);
            while !p.exists() && t0.elapsed() < Duration::from_secs(120) {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    /// What every rank of a job must agree on, one item a line: the egdb version, the xxh64 of
    /// the running executable's file (the same binary, not only the same version: a build mixing
    /// binaries could mix solvers), then the build options as `--option<TAB>value`, all but
    /// `--dir` (the directory may be mounted at another path on another node; that it is the
    /// same directory is checked by [`check_shared_dir`]) and `--memory` (each rank's own
    /// budget, by default from its node's memory; rank 0's decides which units split).
    fn identity(opts: &BuildOptions) -> Vec<String> {
        let exe = std::env::current_exe().and_then(std::fs::read).map_or_else(
            |e| format!("unreadable ({e})"),
            |b| format!("{:016x}", xxhash_rust::xxh64::xxh64(&b, 0)),
        );
        let on = |b: bool| if b { "on" } else { "off" }.to_string();
        let items = [
            ("--pieces", opts.pieces.to_string()),
            (
                "--slice",
                opts.slice.map_or_else(|| "none".into(), |s| s.to_string()),
            ),
            ("--with-deps", on(opts.with_deps)),
            ("--dtc", on(opts.dtc)),
            ("--dtw", on(opts.dtw)),
            (
                "--codec",
                if opts.codec_from_dir {
                    format!("{} (or the directory's)", opts.codec)
                } else {
                    opts.codec.to_string()
                },
            ),
            ("--rules", format!("{:?}", opts.rules)),
            (
                "--split-above",
                opts.split_above
                    .map_or_else(|| "none".into(), |n| n.to_string()),
            ),
        ];
        let mut out = vec![env!("CARGO_PKG_VERSION").to_string(), exe];
        out.extend(items.iter().map(|(k, v)| format!("{k}\t{v}")));
        out
    }

    /// A worker's answer to rank 0's identity (`theirs`, from [`identity`]): empty when they
    /// agree, else what differs, as the end of a sentence starting "rank R ".
    fn identity_mismatch(opts: &BuildOptions, theirs: &[u8]) -> String {
        let mine = identity(opts);
        let theirs: Vec<&str> = std::str::from_utf8(theirs)
            .unwrap_or("")
            .split('\n')
            .collect();
        let get = |k: usize| theirs.get(k).copied().unwrap_or("?");
        if get(0) != mine[0] {
            return format!(
                "runs egdb {}, rank 0 egdb {}: start every rank with the same egdb binary",
                mine[0],
                get(0)
            );
        }
        if get(1) != mine[1] {
            return format!(
                "runs another egdb executable than rank 0 (xxh64 of the file {} here, {} on rank \
                 0): start every rank with the same egdb binary (one copy on the shared \
                 filesystem), or rebuild it identically everywhere",
                mine[1],
                get(1)
            );
        }
        let diffs: Vec<String> = (2..mine.len().max(theirs.len()))
            .filter(|&k| mine.get(k).map(String::as_str) != theirs.get(k).copied())
            .map(|k| {
                let (name, here) = mine
                    .get(k)
                    .and_then(|l| l.split_once('\t'))
                    .unwrap_or(("?", "?"));
                let there = get(k).split_once('\t').map_or("?", |(_, v)| v);
                format!("{name} {here} here, {there} on rank 0")
            })
            .collect();
        if diffs.is_empty() {
            String::new()
        } else {
            format!(
                "was started with other build options than rank 0 ({}): give every rank the \
                 same arguments",
                diffs.join("; ")
            )
        }
    }

    /// Rank 0, before anything is built: every other rank must run the same egdb binary
    /// with the same options ([`identity`]). Each is sent HELLO with rank 0's identity and
    /// answers HELLO with nothing (agreed) or what differs. (A rank running an egdb from
    /// before this check answers no HELLO: it stops the job with "unexpected message (tag
    /// 6)".)
    fn hello(world: &SimpleCommunicator, opts: &BuildOptions) -> Result<(), Error> {
        let me = identity(opts).join("\n");
        for r in 1..world.size() {
            world
                .process_at_rank(r)
                .send_with_tag(me.as_bytes(), TAG_HELLO);
        }
        let mut bad = Vec::new();
        for r in 1..world.size() {
            let (buf, tag) = receive_from(world, r);
            match tag {
                TAG_HELLO if buf.is_empty() => {}
                TAG_HELLO => bad.push((r, String::from_utf8_lossy(&buf).into_owned())),
                t => die(
                    world,
                    &format!("rank {r}: unexpected answer (tag {t}) to rank 0's greeting: does it run the same egdb?"),
                ),
            }
        }
        match bad.split_first() {
            None => Ok(()),
            Some(((r, why), rest)) => {
                let more = if rest.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (also rank{} {})",
                        if rest.len() > 1 { "s" } else { "" },
                        rest.iter()
                            .map(|(r, _)| r.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                Err(format!("rank {r} {why}{more}").into())
            }
        }
    }

    /// How long a rank waits for the file rank 0 wrote in the table directory to show up
    /// ([`check_shared_dir`]): 60 s (a network filesystem may show a new file on another node
    /// only after its attribute cache expires, 30 to 60 s by default for NFS), or
    /// `EGDB_MPI_TEST_SHARED_WAIT_MS` milliseconds (tests).
    fn shared_wait() -> Duration {
        std::env::var("EGDB_MPI_TEST_SHARED_WAIT_MS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .map_or(Duration::from_secs(60), Duration::from_millis)
    }

    /// Rank 0, with the directory locked and before any unit is handed out: every rank must
    /// see the table directory rank 0 writes (the split units' files are written by every
    /// rank into one file, and every rank reads the files the others wrote). Rank 0 writes a
    /// file of random content, `.egdb-mpi-shared.<pid>.<nonce>`, and sends its name and
    /// content (SHARED); each rank answers SHARED with nothing once it reads the same content
    /// in its `--dir`, or why not (after [`shared_wait`]). The file is removed either way.
    fn check_shared_dir(world: &SimpleCommunicator, dir: &Path) -> Result<(), BuildError> {
        if world.size() == 1 {
            return Ok(());
        }
        let seed = format!(
            "{:?} {} {dir:?}",
            std::time::SystemTime::now(),
            std::process::id()
        );
        let nonce = format!("{:016x}", xxhash_rust::xxh64::xxh64(seed.as_bytes(), 0));
        let name = format!(".egdb-mpi-shared.{}.{nonce}", std::process::id());
        let path = dir.join(&name);
        let written = std::fs::write(&path, nonce.as_bytes())
            .and_then(|()| std::fs::File::open(&path)?.sync_all());
        if let Err(e) = written {
            let _ = std::fs::remove_file(&path);
            return Err(BuildError::Options(format!(
                "cannot write {}: {e}",
                path.display()
            )));
        }
        let msg = format!("{name}\n{nonce}");
        for r in 1..world.size() {
            world
                .process_at_rank(r)
                .send_with_tag(msg.as_bytes(), TAG_SHARED);
        }
        let mut bad = Vec::new();
        for r in 1..world.size() {
            let (buf, tag) = receive_from(world, r);
            match tag {
                TAG_SHARED if buf.is_empty() => {}
                TAG_SHARED => bad.push((r, String::from_utf8_lossy(&buf).into_owned())),
                t => die(world, &format!("rank {r}: unexpected message (tag {t})")),
            }
        }
        let _ = std::fs::remove_file(&path);
        match bad.first() {
            None => Ok(()),
            Some((r, why)) => Err(BuildError::Options(format!(
                "rank {r} {why}{}",
                if bad.len() > 1 {
                    format!(
                        " ({} of the {} ranks do not see it)",
                        bad.len(),
                        world.size()
                    )
                } else {
                    String::new()
                }
            ))),
        }
    }

    /// A worker's answer to SHARED (`name\ncontent` of the file rank 0 wrote): empty once it
    /// reads that content in `dir`, else why not, as the end of a sentence starting "rank R ".
    fn shared_mismatch(dir: &Path, msg: &[u8]) -> String {
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        let msg = String::from_utf8_lossy(msg);
        let (name, nonce) = msg.split_once('\n').unwrap_or((&msg, ""));
        if !dir.is_dir() {
            return format!(
                "(on {host}) has no table directory {}: --dir must be on a filesystem every \
                 rank shares (NFS, Lustre, GPFS, ...), see docs/mpi.md",
                dir.display()
            );
        }
        let path = dir.join(name);
        let wait = shared_wait();
        let t0 = Instant::now();
        loop {
            match std::fs::read(&path) {
                Ok(b) if b == nonce.as_bytes() => return String::new(),
                r if t0.elapsed() >= wait => {
                    let what = match r {
                        Ok(_) => "reads other content in".to_string(),
                        Err(e) => format!("does not see ({e})"),
                    };
                    return format!(
                        "(on {host}) {what} the file {name} that rank 0 wrote in the table \
                         directory {} (waited {:.0} s): --dir must be one directory on a \
                         filesystem every rank shares (NFS, Lustre, GPFS, ...), see docs/mpi.md",
                        dir.display(),
                        wait.as_secs_f64()
                    );
                }
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Solve and write one unit with the driver's [`solve_unit`] and [`write_unit`], as a
    /// single-process build does. The error is the reason as text.
    fn work(
        dir: &Path,
        u: &Unit,
        uo: &UnitOptions,
        deps: &mut DecodedTables,
    ) -> Result<Report, String> {
        let t0 = Instant::now();
        wait_for_dependencies(dir, u);
        deps.begin_unit(
            u,
            u.sizes.iter().sum::<u64>() * checkers_egdb::planning::unit_bytes_per_position(uo.dtc),
        );
        let deps = &*deps;
        let run = || -> Result<BuildSummary, String> {
            let mut solved = solve_unit(u, deps, uo, &NoProgress).map_err(|e| e.to_string())?;
            let mut sum = std::mem::take(&mut solved.summary);
            for sv in &mut solved.wld {
                deps.insert(&sv.slice, &sv.values)
                    .map_err(|e| e.to_string())?;
                sv.resolution_plies = None;
            }
            sum.add(&write_unit(dir, &solved, uo.codec).map_err(|e| e.to_string())?);
            // Written: the slices handed over above may leave the store from now on.
            deps.written(&u.slices);
            Ok(sum)
        };
        let mut sum = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
            Ok(r) => r?,
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                return Err(format!("panicked: {msg}"));
            }
        };
        sum.seconds = t0.elapsed().as_secs_f64();
        Ok(Report {
            unit: u.id,
            skipped: false,
            sum,
        })
    }

    /// The split solve's transport over the world communicator: `MPI_Ialltoallv` (in rounds
    /// of at most `i32::MAX / ranks` bytes per destination, so no count or displacement
    /// overflows) and `MPI_Iallreduce` (maximum), each waited for by [`wait_polling`].
    struct MpiExchange<'w> {
        world: &'w SimpleCommunicator,
    }

    impl Exchange for MpiExchange<'_> {
        fn rank(&self) -> usize {
            self.world.rank() as usize
        }

        fn ranks(&self) -> usize {
            self.world.size() as usize
        }

        fn all_to_all(&self, send: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
            let n = self.ranks();
            let lens: Vec<u64> = send.iter().map(|m| m.len() as u64).collect();
            let mut rlens = vec![0u64; n];
            mpi::request::scope(|scope| {
                wait_polling(
                    self.world
                        .immediate_all_to_all_into(scope, &lens[..], &mut rlens[..]),
                )
            });
            let round = (i32::MAX as u64 / n as u64).min(1 << 28);
            let most = lens.iter().chain(&rlens).copied().max().unwrap_or(0);
            let rounds = self.all_max(&[most.div_ceil(round)])[0];
            let mut recv: Vec<Vec<u8>> = rlens
                .iter()
                .map(|&l| Vec::with_capacity(l as usize))
                .collect();
            for k in 0..rounds {
                let piece = |l: u64| {
                    let a = (k * round).min(l);
                    (a as usize, (a + round).min(l) as usize)
                };
                let mut sbuf = Vec::new();
                let (mut scounts, mut sdispls) = (Vec::with_capacity(n), Vec::with_capacity(n));
                for m in &send {
                    let (a, b) = piece(m.len() as u64);
                    sdispls.push(sbuf.len() as i32);
                    scounts.push((b - a) as i32);
                    sbuf.extend_from_slice(&m[a..b]);
                }
                let (mut rcounts, mut rdispls) = (Vec::with_capacity(n), Vec::with_capacity(n));
                let mut total = 0usize;
                for &l in &rlens {
                    let (a, b) = piece(l);
                    rdispls.push(total as i32);
                    rcounts.push((b - a) as i32);
                    total += b - a;
                }
                // One byte more on each side, never sent: two empty vectors share the same
                // dangling pointer, and MPI refuses a send buffer equal to the receive buffer.
                sbuf.push(0);
                let mut rbuf = vec![0u8; total + 1];
                {
                    let sp = Partition::new(&sbuf[..], &scounts[..], &sdispls[..]);
                    let mut rp = PartitionMut::new(&mut rbuf[..], &rcounts[..], &rdispls[..]);
                    mpi::request::scope(|scope| {
                        wait_polling(
                            self.world
                                .immediate_all_to_all_varcount_into(scope, &sp, &mut rp),
                        )
                    });
                }
                for (r, v) in recv.iter_mut().enumerate() {
                    let a = rdispls[r] as usize;
                    v.extend_from_slice(&rbuf[a..a + rcounts[r] as usize]);
                }
            }
            recv
        }

        fn all_max(&self, x: &[u64]) -> Vec<u64> {
            let mut out = vec![0u64; x.len()];
            mpi::request::scope(|scope| {
                wait_polling(self.world.immediate_all_reduce_into(
                    scope,
                    x,
                    &mut out[..],
                    SystemOperation::max(),
                ))
            });
            out
        }
    }

    /// Wait for a non-blocking collective without spinning a core (a blocking MPI collective
    /// busy-waits: a rank waiting for the others would take the CPU of the ranks still
    /// working when ranks share cores): test it, sleeping 10 us at first, doubling up to 1 ms.
    fn wait_polling<'a, D: ?Sized, S: mpi::request::Scope<'a>>(
        mut req: mpi::request::Request<'a, D, S>,
    ) {
        let mut pause = Duration::from_micros(10);
        loop {
            match req.test() {
                Ok(_) => return,
                Err(r) => req = r,
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(POLL);
        }
    }

    /// What rank 0 learns of a split unit: its report, and the exchange figures summed over
    /// the ranks.
    struct SplitReport {
        report: Report,
        /// Plies, predecessor updates sent between ranks, their bytes, the bytes of the
        /// busiest ply, the bytes gathered on rank 0 or sent for writing; the distance pass's
        /// plies and bytes between ranks (requests, answers and updates; `--dtc`).
        plies: u32,
        updates: u64,
        bytes: u64,
        busiest: u64,
        gather: u64,
        dtc_plies: u32,
        dtc_bytes: u64,
    }

    /// Why a rank's part of a split unit failed.
    enum SplitFail {
        /// This rank failed: the reason.
        Own(String),
        /// Another rank failed (it sends its own reason to rank 0).
        Peer(usize),
    }

    /// Every rank: solve unit `u` split over all the ranks and write its files, every rank its
    /// own blocks ([`build_unit_split`]). `Ok(Some)` on rank 0, `Ok(None)` on the other ranks. A panic aborts the job: the other ranks
    /// would wait for this one forever.
    fn work_split(
        world: &SimpleCommunicator,
        dir: &Path,
        u: &Unit,
        uo: &UnitOptions,
        deps: &mut DecodedTables,
    ) -> Result<Option<SplitReport>, SplitFail> {
        let t0 = Instant::now();
        let ex = MpiExchange { world };
        wait_for_dependencies(dir, u);
        let n: u64 = u.sizes.iter().sum();
        // The rank's share of the state and one round of the ply exchange's buffers, as
        // `driver::split_unit` charged them when it chose to split.
        let held = n.div_ceil(ex.ranks() as u64);
        deps.begin_unit(
            u,
            held * checkers_egdb::planning::unit_bytes_per_position(uo.dtc)
                + checkers_egdb::driver::exchange_round_bytes(held),
        );
        let deps = &*deps;
        let run = || {
            let align = split_align_hook().unwrap_or(BLOCK_ALIGN);
            let (written, stats) = match build_unit_split(u, deps, uo, &ex, align, dir, &NoProgress)
            {
                Ok(x) => x,
                Err(BuildError::PeerFailed { rank, .. }) => return Err(SplitFail::Peer(rank)),
                Err(e) => return Err(SplitFail::Own(e.to_string())),
            };
            // The exchange figures of every rank, gathered on rank 0.
            let mine: Vec<u8> = [
                stats.updates_sent,
                stats.bytes_per_ply.iter().sum(),
                stats.gather_bytes + stats.write_bytes,
                stats.dtc_request_bytes + stats.dtc_bytes_per_ply.iter().sum::<u64>(),
            ]
            .iter()
            .chain(&stats.bytes_per_ply)
            .flat_map(|w| w.to_le_bytes())
            .collect();
            let mut send = vec![Vec::new(); ex.ranks()];
            send[0] = mine;
            let got = ex.all_to_all(send);
            let Some(mut sum) = written else {
                return Ok(None);
            };
            sum.seconds = t0.elapsed().as_secs_f64();
            let words = |b: &[u8]| -> Vec<u64> {
                b.chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect()
            };
            let all: Vec<Vec<u64>> = got.iter().map(|b| words(b)).collect();
            let plies = stats.bytes_per_ply.len();
            let busiest = (0..plies)
                .map(|k| {
                    all.iter()
                        .map(|w| w.get(4 + k).copied().unwrap_or(0))
                        .sum::<u64>()
                })
                .max()
                .unwrap_or(0);
            let total = |i: usize| all.iter().map(|w| w.get(i).copied().unwrap_or(0)).sum();
            Ok(Some(SplitReport {
                report: Report {
                    unit: u.id,
                    skipped: false,
                    sum,
                },
                plies: stats.plies,
                updates: total(0),
                bytes: total(1),
                busiest,
                gather: total(2),
                dtc_plies: stats.dtc_plies,
                dtc_bytes: total(3),
            }))
        };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
            Ok(r) => r,
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                die(
                    world,
                    &format!(
                        "rank {} panicked in the split solve of unit {} ({}): {msg}",
                        world.rank(),
                        u.id,
                        names(u)
                    ),
                )
            }
        }
    }

    /// ASSIGN: `[unit id, unit count, WLD files complete, codec]`, little-endian u64 words.
    fn encode_assign(unit: usize, count: usize, uo: &UnitOptions) -> Vec<u8> {
        [
            unit as u64,
            count as u64,
            uo.wld_done as u64,
            uo.codec as u64,
        ]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect()
    }

    /// Wait for the next message from rank `from`, polling (an idle rank sleeps instead of
    /// spinning a core as a blocking MPI receive does).
    fn receive_from(world: &SimpleCommunicator, from: i32) -> (Vec<u8>, i32) {
        loop {
            if let Some(m) = world.process_at_rank(from).immediate_matched_probe() {
                let (buf, status) = m.matched_receive_vec::<u8>();
                return (buf, status.tag());
            }
            std::thread::sleep(POLL);
        }
    }

    /// A rank other than 0: solve the units rank 0 sends until STOP.
    fn worker(world: &SimpleCommunicator, opts: &BuildOptions) {
        let rank = world.rank();
        let dir = opts.dir.as_path();
        let mut deps = DecodedTables::with_budget(dir, opts.memory).for_variant(opts.rules);
        let root = world.process_at_rank(0);
        let kill_after = kill_hook(rank);
        let mut received = 0usize;
        // Planned on the first unit received (rank 0 checked the options first).
        let mut units: Option<Vec<Unit>> = None;
        let mut greeted = false;
        loop {
            let (buf, tag) = receive_from(world, 0);
            match tag {
                TAG_STOP => return,
                TAG_HELLO => {
                    greeted = true;
                    root.send_with_tag(identity_mismatch(opts, &buf).as_bytes(), TAG_HELLO);
                    continue;
                }
                TAG_SHARED => {
                    root.send_with_tag(shared_mismatch(dir, &buf).as_bytes(), TAG_SHARED);
                    continue;
                }
                _ if !greeted => die(
                    world,
                    &format!(
                        "rank {rank}: rank 0 sent work (tag {tag}) without the greeting this egdb                          expects first: rank 0 runs another (older) egdb; start every rank with                          the same egdb binary"
                    ),
                ),
                _ => {}
            }
            let words: Vec<u64> = buf
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
            let (id, count, uo) = match (tag, words.as_slice()) {
                (TAG_ASSIGN | TAG_SPLIT, &[id, count, wld_done, codec]) => (
                    id as usize,
                    count as usize,
                    UnitOptions {
                        wld_done: wld_done != 0,
                        dtc: opts.dtc,
                        codec: codec as u32,
                    },
                ),
                _ => die(
                    world,
                    &format!("rank {rank}: unexpected message (tag {tag})"),
                ),
            };
            if kill_after == Some(received) {
                // SAFETY: sending a signal to this process.
                unsafe {
                    libc::kill(libc::getpid(), libc::SIGKILL);
                }
            }
            received += 1;
            let units = units.get_or_insert_with(|| build_order(opts.pieces));
            if tag == TAG_SPLIT {
                if count != units.len() || id >= units.len() {
                    die(
                        world,
                        &format!(
                            "rank {rank}: rank 0 plans {count} units, this rank {}: were all ranks started with the same --pieces?",
                            units.len()
                        ),
                    );
                }
                if let Err(SplitFail::Own(e)) = work_split(world, dir, &units[id], &uo, &mut deps) {
                    let mut b = (id as u64).to_le_bytes().to_vec();
                    b.extend(e.as_bytes());
                    root.send_with_tag(&b[..], TAG_FAIL);
                }
                continue;
            }
            let result = if count != units.len() || id >= units.len() {
                Err(format!(
                    "rank 0 plans {count} units, this rank {}: were all ranks started with the same --pieces?",
                    units.len()
                ))
            } else {
                work(dir, &units[id], &uo, &mut deps)
            };
            match result {
                Ok(r) => root.send_with_tag(&r.encode()[..], TAG_DONE),
                Err(e) => {
                    let mut b = (id as u64).to_le_bytes().to_vec();
                    b.extend(e.as_bytes());
                    root.send_with_tag(&b[..], TAG_FAIL);
                }
            }
        }
    }

    /// Rank 0's progress display.
    struct Display {
        /// Redraw one line in place (a terminal) or print a line now and then.
        tty: bool,
        every: Duration,
        last: Option<Instant>,
        quiet: bool,
    }

    impl Display {
        fn show(&mut self, line: impl FnOnce() -> String, force: bool) {
            if self.quiet {
                return;
            }
            if !force && self.last.is_some_and(|t| t.elapsed() < self.every) {
                return;
            }
            self.last = Some(Instant::now());
            if self.tty {
                eprint!("\r\x1b[K{}", line());
            } else {
                eprintln!("{}", line());
            }
        }

        fn clear(&self) {
            if !self.quiet && self.tty && self.last.is_some() {
                eprint!("\r\x1b[K");
            }
        }

        /// Print a line above the status line.
        fn note(&self, s: &str) {
            self.clear();
            eprintln!("{s}");
        }
    }

    fn human_rate(x: f64) -> String {
        if x >= 1e6 {
            format!("{:.2} M ", x / 1e6)
        } else if x >= 1e3 {
            format!("{:.1} k ", x / 1e3)
        } else {
            format!("{x:.0} ")
        }
    }

    enum Event {
        Done(i32, Box<Report>),
        Fail(i32, usize, String),
    }

    /// Rank 0's [`Runner`]: schedules the driver's units over the ranks (rank 0's own worker
    /// thread included) and gathers the totals. A rank's failure aborts the job.
    struct MpiRunner<'w> {
        world: &'w SimpleCommunicator,
        quiet: bool,
        verbose: bool,
    }

    impl Runner for MpiRunner<'_> {
        fn run(
            &mut self,
            plan: &BuildPlan<'_>,
            observer: &dyn BuildObserver,
        ) -> Result<BuildSummary, BuildError> {
            check_shared_dir(self.world, &plan.opts.dir)?;
            Ok(scheduler(
                self.world,
                plan,
                self.quiet,
                self.verbose,
                observer,
            ))
        }

        // The ranks size their memory themselves: units whose state does not fit one rank
        // are split (`split_unit`, `egdb plan --ranks`), and each unit is written before the
        // next, so there is no writer backlog to charge.
        fn checks_unit_memory(&self) -> bool {
            false
        }
    }

    /// Rank 0: schedule every unit of `plan`, run rank 0's own worker thread, gather the totals.
    fn scheduler(
        world: &SimpleCommunicator,
        plan: &BuildPlan<'_>,
        quiet: bool,
        verbose: bool,
        observer: &dyn BuildObserver,
    ) -> BuildSummary {
        let opts = plan.opts;
        let progress = !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let start = Instant::now();
        let size = world.size();
        let units: Vec<&Unit> = plan.jobs.iter().map(|j| j.unit).collect();
        let deps = job_dependencies(&units);
        let sizes: Vec<u64> = units.iter().map(|u| u.sizes.iter().sum()).collect();
        let mut sched = Scheduler::new(&deps, &sizes);
        // Every rank plans the units of --pieces; the count guards against other arguments.
        let count = build_order(opts.pieces).len();
        // Rank 0's one dependency store (one `--memory`): its worker thread's units use it, and
        // so does rank 0's part of a split unit, which runs only while that thread is idle.
        let shared_store = std::sync::Mutex::new(
            DecodedTables::with_budget(&opts.dir, opts.memory).for_variant(opts.rules),
        );
        std::thread::scope(|scope| {
            // Rank 0's own worker: a thread fed through channels (only this thread calls MPI).
            let (to_local, local_rx) = mpsc::channel::<Option<usize>>();
            let (local_tx, from_local) = mpsc::channel::<Result<Report, (usize, String)>>();
            let local = {
                let units = &units;
                let dir = opts.dir.clone();
                let kill_after = kill_hook(0);
                let shared_store = &shared_store;
                scope.spawn(move || {
                    for (n, k) in local_rx.iter().map_while(|x| x).enumerate() {
                        if kill_after == Some(n) {
                            // SAFETY: sending a signal to this process.
                            unsafe {
                                libc::kill(libc::getpid(), libc::SIGKILL);
                            }
                        }
                        let uo = plan.unit_options(&plan.jobs[k]);
                        let r = {
                            let mut store = shared_store
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner);
                            work(&dir, units[k], &uo, &mut store).map_err(|e| (k, e))
                        };
                        if local_tx.send(r).is_err() {
                            return;
                        }
                    }
                })
            };
            // (job index, since) held by each rank.
            let mut holding: Vec<Option<(usize, Instant)>> = vec![None; size as usize];
            let mut total = BuildSummary::default();
            let mut display = Display {
                tty: progress,
                every: if progress {
                    Duration::from_secs(1)
                } else {
                    Duration::from_secs(30)
                },
                last: None,
                quiet,
            };
            // A unit to be split over every rank: it starts when all ranks are idle.
            let mut pending_split: Option<usize> = None;
            loop {
                if let Some(k) = pending_split {
                    if holding.iter().all(Option::is_none) {
                        pending_split = None;
                        let uo = plan.unit_options(&plan.jobs[k]);
                        for r in 1..size {
                            world.process_at_rank(r).send_with_tag(
                                &encode_assign(units[k].id, count, &uo)[..],
                                TAG_SPLIT,
                            );
                        }
                        // Rank 0's part runs on this thread (the one that calls MPI), with
                        // rank 0's store: its worker thread is idle (every rank is), so the
                        // lock is free and one `--memory` holds for the whole rank.
                        let mut store = shared_store
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                        let split = work_split(world, &opts.dir, units[k], &uo, &mut store);
                        drop(store);
                        let rep = match split {
                            Ok(Some(rep)) => rep,
                            Ok(None) => die(world, "internal error: rank 0 gathered no split unit"),
                            Err(fail) => {
                                display.clear();
                                let (r, e) = match fail {
                                    SplitFail::Own(e) => (0, e),
                                    SplitFail::Peer(rank) => {
                                        // The failed rank sends its reason.
                                        let (buf, _) = receive_from(world, rank as i32);
                                        let e = buf.get(8..).unwrap_or(&[]);
                                        (rank, String::from_utf8_lossy(e).into_owned())
                                    }
                                };
                                die(
                                    world,
                                    &format!(
                                        "rank {r} failed on unit {} ({}) split over {size} ranks: {e}",
                                        units[k].id,
                                        names(units[k])
                                    ),
                                );
                            }
                        };
                        sched.finish(k);
                        total.add(&rep.report.sum);
                        if verbose {
                            let n: u64 = units[k].sizes.iter().sum();
                            display.note(&format!(
                                "built {}\t{n} positions\t{:.3} s split over {size} ranks ({} plies; {} predecessor updates between ranks, {} bytes, {:.2} bytes per update, busiest ply {} bytes; {} bytes sent between ranks for writing or gathered; distance pass {} plies, {} bytes between ranks; writing {:.3})\t{:.0} positions/s",
                                names(units[k]),
                                rep.report.sum.seconds,
                                rep.plies,
                                rep.updates,
                                rep.bytes,
                                rep.bytes as f64 / rep.updates.max(1) as f64,
                                rep.busiest,
                                rep.gather,
                                rep.dtc_plies,
                                rep.dtc_bytes,
                                rep.report.sum.write_seconds,
                                n as f64 / rep.report.sum.seconds.max(1e-9)
                            ));
                        }
                        continue;
                    }
                }
                for (r, h) in holding.iter_mut().enumerate() {
                    if h.is_some() || pending_split.is_some() {
                        continue;
                    }
                    let Some(k) = sched.next() else { break };
                    // Split by size and memory whether or not the value files exist: a
                    // distance pass alone holds most of the unit's state (`--dtc` over
                    // existing value files, or a run killed between a unit's two files).
                    if split_unit(units[k], opts, size as usize) {
                        pending_split = Some(k);
                        break;
                    }
                    *h = Some((k, Instant::now()));
                    if r == 0 {
                        to_local.send(Some(k)).expect("rank 0 worker thread alive");
                    } else {
                        let uo = plan.unit_options(&plan.jobs[k]);
                        world
                            .process_at_rank(r as i32)
                            .send_with_tag(&encode_assign(units[k].id, count, &uo)[..], TAG_ASSIGN);
                    }
                }
                if sched.all_done() {
                    break;
                }
                if holding.iter().all(Option::is_none) && pending_split.is_none() {
                    die(
                        world,
                        "internal error: no unit ready and none in flight (dependency cycle?)",
                    );
                }
                let mut event = None;
                match from_local.try_recv() {
                    Ok(Ok(r)) => event = Some(Event::Done(0, Box::new(r))),
                    Ok(Err((k, e))) => event = Some(Event::Fail(0, units[k].id, e)),
                    Err(mpsc::TryRecvError::Empty) => {}
                    Err(mpsc::TryRecvError::Disconnected) => {
                        die(world, "rank 0's worker thread stopped")
                    }
                }
                if event.is_none() && size > 1 {
                    if let Some(m) = world.any_process().immediate_matched_probe() {
                        let (buf, status) = m.matched_receive_vec::<u8>();
                        let from = status.source_rank();
                        event = Some(match status.tag() {
                            TAG_DONE => match Report::decode(&buf) {
                                Some(r) => Event::Done(from, Box::new(r)),
                                None => die(world, &format!("rank {from}: malformed report")),
                            },
                            TAG_FAIL if buf.len() >= 8 => Event::Fail(
                                from,
                                u64::from_le_bytes(buf[..8].try_into().expect("8 bytes")) as usize,
                                String::from_utf8_lossy(&buf[8..]).into_owned(),
                            ),
                            t => die(world, &format!("rank {from}: unexpected message (tag {t})")),
                        });
                    }
                }
                match event {
                    None => std::thread::sleep(POLL),
                    Some(Event::Fail(r, id, e)) => {
                        display.clear();
                        let what = units
                            .iter()
                            .find(|u| u.id == id)
                            .map_or_else(String::new, |u| names(u));
                        die(
                            world,
                            &format!("rank {r} failed on unit {id} ({what}): {e}"),
                        );
                    }
                    Some(Event::Done(r, rep)) => {
                        let Some((k, _)) =
                            holding[r as usize].filter(|h| units[h.0].id == rep.unit)
                        else {
                            die(
                                world,
                                &format!("rank {r} reported unit {} it was not given", rep.unit),
                            );
                        };
                        holding[r as usize] = None;
                        sched.finish(k);
                        let wall = rep.sum.seconds;
                        for note in &rep.sum.rechecked {
                            display.clear();
                            observer.unit_rechecked(units[k], note);
                        }
                        total.add(&rep.sum);
                        if verbose && !rep.skipped {
                            display.note(&format!(
                                "built {}\t{} positions\t{:.3} s on rank {r} (initial pass {:.3}, propagation {:.3} over {} plies, distance pass {:.3}, writing {:.3})\t{:.0} positions/s",
                                names(units[k]),
                                units[k].sizes.iter().sum::<u64>(),
                                wall,
                                rep.sum.initial_seconds,
                                rep.sum.solve_seconds - rep.sum.initial_seconds - rep.sum.dtc_seconds,
                                rep.sum.plies,
                                rep.sum.dtc_seconds,
                                rep.sum.write_seconds,
                                units[k].sizes.iter().sum::<u64>() as f64 / wall.max(1e-9)
                            ));
                        }
                    }
                }
                display.show(
                    || status_line(&sched, &total, &holding, &units, start),
                    false,
                );
            }
            display.show(
                || status_line(&sched, &total, &holding, &units, start),
                true,
            );
            if display.tty {
                display.clear();
            }
            let _ = to_local.send(None);
            let _ = local.join();
            total.codec = plan.codec;
            total
        })
    }

    /// The status line: elapsed time, units done/total, positions/s, what each rank holds.
    fn status_line(
        sched: &Scheduler,
        total: &BuildSummary,
        holding: &[Option<(usize, Instant)>],
        units: &[&Unit],
        start: Instant,
    ) -> String {
        let elapsed = start.elapsed().as_secs_f64();
        let ranks: Vec<String> = holding
            .iter()
            .enumerate()
            .map(|(r, h)| match h {
                Some((k, t)) => format!(
                    "r{r} {} ({:.0} s)",
                    names(units[*k]),
                    t.elapsed().as_secs_f64()
                ),
                None => format!("r{r} idle"),
            })
            .collect();
        let solved = total.positions.max(total.dtc_positions);
        format!(
            "[{elapsed:.0} s] units {}/{} done  {} positions  {}positions/s  |  {}",
            sched.done(),
            units.len(),
            solved,
            human_rate(solved as f64 / elapsed.max(1e-9)),
            ranks.join("  ")
        )
    }

    /// Run `egdb build --mpi` on this rank (MPI is initialised here and finalised on return).
    /// Rank 0 runs the build driver ([`drive`]: options, lock, units, codec, resume) with the
    /// ranks as its runner and returns the totals; the other ranks solve the units it sends
    /// and return `None`.
    ///
    /// A rank's failure is not returned: it is printed on rank 0 with the unit and the rank,
    /// and the whole job is aborted (exit status 1).
    ///
    /// # Errors
    /// MPI cannot be initialised (already initialised, or no MPI runtime); on rank 0, the
    /// driver's errors ([`BuildError`]: options, another build holding the directory, ...).
    pub fn run(
        opts: &BuildOptions,
        quiet: bool,
        verbose: bool,
        observer: &dyn BuildObserver,
    ) -> Result<Option<BuildSummary>, Error> {
        let (universe, _threading) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or("cannot initialise MPI (already initialised)")?;
        let world = universe.world();
        if world.rank() == 0 {
            if world.size() > 1 {
                if let Err(e) = hello(&world, opts) {
                    for k in 1..world.size() {
                        world.process_at_rank(k).send_with_tag(&[0u8][..], TAG_STOP);
                    }
                    return Err(e);
                }
            }
            let mut runner = MpiRunner {
                world: &world,
                quiet,
                verbose,
            };
            let r = drive(opts, observer, &mut runner);
            for k in 1..world.size() {
                world.process_at_rank(k).send_with_tag(&[0u8][..], TAG_STOP);
            }
            Ok(Some(r?))
        } else {
            worker(&world, opts);
            Ok(None)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn report_round_trip() {
            let r = Report {
                unit: 17,
                skipped: false,
                sum: BuildSummary {
                    slices_built: 2,
                    positions: 123456,
                    wins: 1,
                    losses: 2,
                    draws: 3,
                    bytes: 99,
                    plies: 41,
                    seconds: 1.5,
                    solve_seconds: 1.25,
                    initial_seconds: 0.5,
                    write_seconds: 0.125,
                    dtc_bytes: 7,
                    dtc_seconds: 0.25,
                    dtc_files: 2,
                    dtc_positions: 1000,
                    rechecked: vec!["one".into(), "two".into()],
                    ..Default::default()
                },
            };
            let d = Report::decode(&r.encode()).unwrap();
            assert_eq!(format!("{r:?}"), format!("{d:?}"));
            assert!(Report::decode(&[0u8; 13]).is_none());
        }

        /// The dependencies gathered for the scheduler, checked against the plan's own
        /// definition: every slice of a capture material with positions, and every
        /// same-piece-count dependency slice, lies in a listed unit; nothing else is listed.
        #[test]
        fn unit_dependencies_cover_the_plan() {
            let units = build_order(4);
            let refs: Vec<&Unit> = units.iter().collect();
            let deps = job_dependencies(&refs);
            let unit_of: HashMap<Slice, usize> = units
                .iter()
                .flat_map(|u| u.slices.iter().map(move |s| (*s, u.id)))
                .collect();
            for (u, d) in units.iter().zip(&deps) {
                let mut want: Vec<usize> = u.deps.iter().map(|s| unit_of[s]).collect();
                for m in &u.capture_materials {
                    for s in Slice::all_of(*m) {
                        if checkers_egdb::format::SliceIndex::new(s).size() > 0 {
                            want.push(unit_of[&s]);
                        }
                    }
                }
                want.sort_unstable();
                want.dedup();
                assert_eq!(d, &want, "unit {}", u.id);
                assert!(d.iter().all(|&j| j < u.id));
            }
        }

        /// Simulated runs with several ranks finishing in a scrambled order: every unit is
        /// handed out exactly once, only after all its dependencies finished.
        #[test]
        fn scheduler_respects_dependencies() {
            let units = build_order(4);
            let refs: Vec<&Unit> = units.iter().collect();
            let deps = job_dependencies(&refs);
            let sizes: Vec<u64> = units.iter().map(|u| u.sizes.iter().sum()).collect();
            for ranks in [1usize, 3, 8] {
                let mut s = Scheduler::new(&deps, &sizes);
                let mut finished = vec![false; units.len()];
                let mut handed = vec![false; units.len()];
                let mut in_flight: Vec<usize> = Vec::new();
                let mut step = 0u64;
                while !s.all_done() {
                    while in_flight.len() < ranks {
                        let Some(i) = s.next() else { break };
                        assert!(!handed[i], "unit {i} handed out twice");
                        assert!(
                            deps[i].iter().all(|&j| finished[j]),
                            "unit {i} started before its dependencies"
                        );
                        handed[i] = true;
                        in_flight.push(i);
                    }
                    assert!(!in_flight.is_empty(), "stalled with {} done", s.done());
                    // Finish a pseudo-randomly chosen unit in flight.
                    step = step
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let k = (step >> 33) as usize % in_flight.len();
                    let i = in_flight.swap_remove(k);
                    finished[i] = true;
                    s.finish(i);
                }
                assert!(handed.iter().all(|&h| h));
                assert_eq!(s.done(), units.len());
            }
        }
    }
}
