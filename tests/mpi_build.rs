//! `egdb build --mpi` under `mpirun` on loopback (cargo feature `mpi`; needs Open MPI's
//! `mpirun` on PATH): the files are byte-identical to a single-process build, a rerun skips
//! every finished unit, a rank killed mid-build leaves a directory the rerun completes to the
//! same bytes, and a rank whose unit fails stops the job with a message naming unit and rank.
//!
//! The reference is the single-process `egdb build` (itself checked against published counts
//! in tests/build_tables.rs), and `egdb verify` re-checks every value of the MPI-built files
//! against its successors.

/// Without the feature, `--mpi` is a one-line error that says how to get it (exit status 1).
#[cfg(not(feature = "mpi"))]
#[test]
fn without_the_feature_mpi_is_a_clear_error() {
    let t = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(["build", "--mpi", "--pieces", "2", "--dir"])
        .arg(t.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("egdb: error: ") && err.contains("--features mpi"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        0,
        "nothing built"
    );
}

#[cfg(feature = "mpi")]
mod with_mpi {
    use checkers_egdb::generate::build_order;
    use checkers_egdb::table::table_path;
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::process::{Command, Output};
    use std::sync::OnceLock;

    const EGDB: &str = env!("CARGO_BIN_EXE_egdb");
    const PIECES: u32 = 4;

    /// `mpirun -n <ranks> --oversubscribe egdb build --mpi --pieces 4 --dir <dir> <extra>`, with
    /// the settings a container needs (root allowed, shared-memory transport without
    /// cross-memory attach).
    fn mpirun(ranks: u32, dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = Command::new("mpirun");
        c.args(["-n", &ranks.to_string(), "--oversubscribe"])
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
            .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
            .env("RAYON_NUM_THREADS", "1");
        for (k, v) in env {
            c.args(["-x", k]).env(k, v);
        }
        c.args([
            EGDB,
            "build",
            "--mpi",
            "--pieces",
            &PIECES.to_string(),
            "--dir",
        ])
        .arg(dir)
        .args(extra);
        c.output()
            .expect("cannot run mpirun: install Open MPI (openmpi-bin), see docs/mpi.md")
    }

    /// Every table file of `dir`, by name.
    fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".egdb"))
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect()
    }

    /// The single-process build of all 4-piece tables (built once per test binary).
    fn reference() -> &'static BTreeMap<String, Vec<u8>> {
        static REF: OnceLock<(tempfile::TempDir, BTreeMap<String, Vec<u8>>)> = OnceLock::new();
        &REF.get_or_init(|| {
            let t = tempfile::tempdir().unwrap();
            let out = Command::new(EGDB)
                .args(["build", "--quiet", "--pieces", &PIECES.to_string(), "--dir"])
                .arg(t.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            let f = files(t.path());
            // Every non-empty slice of up to 4 pieces has its file.
            let slices: usize = build_order(PIECES).iter().map(|u| u.slices.len()).sum();
            assert_eq!(f.len(), slices);
            (t, f)
        })
        .1
    }

    fn assert_same_files(dir: &Path) {
        let got = files(dir);
        let want = reference();
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "file names differ"
        );
        for (name, bytes) in want {
            assert!(
                got[name] == *bytes,
                "{name} differs from the single-process build"
            );
        }
    }

    fn text(o: &Output) -> String {
        format!(
            "status {:?}\nstdout:\n{}\nstderr:\n{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    }

    #[test]
    fn three_ranks_build_the_same_bytes_then_verify_and_resume() {
        let t = tempfile::tempdir().unwrap();
        let out = mpirun(3, t.path(), &["--quiet"], &[]);
        assert!(out.status.success(), "{}", text(&out));
        assert_same_files(t.path());
        let v = Command::new(EGDB)
            .args(["verify", "--dir"])
            .arg(t.path())
            .output()
            .unwrap();
        assert!(v.status.success(), "{}", text(&v));
        assert!(
            String::from_utf8_lossy(&v.stdout).starts_with("ok:"),
            "{}",
            text(&v)
        );
        // A rerun finds every unit complete and builds nothing.
        let slices: usize = reference().len();
        let again = mpirun(3, t.path(), &[], &[]);
        assert!(again.status.success(), "{}", text(&again));
        let so = String::from_utf8_lossy(&again.stdout);
        assert!(
            so.contains(&format!("slices        0 built, {slices} already complete")),
            "{}",
            text(&again)
        );
        assert_same_files(t.path());
    }

    #[test]
    fn killed_rank_then_rerun_resumes_to_the_same_bytes() {
        let t = tempfile::tempdir().unwrap();
        // Rank 1 kills itself (SIGKILL) when handed its 6th unit: mpirun ends the job.
        let out = mpirun(3, t.path(), &["--quiet"], &[("EGDB_MPI_TEST_KILL", "1:5")]);
        assert!(!out.status.success(), "{}", text(&out));
        let partial = files(t.path()).len();
        let all = reference().len();
        assert!(
            partial >= 5 && partial < all,
            "{partial} of {all} files after the kill\n{}",
            text(&out)
        );
        let again = mpirun(3, t.path(), &[], &[]);
        assert!(again.status.success(), "{}", text(&again));
        let so = String::from_utf8_lossy(&again.stdout);
        // The rerun skipped what the killed run finished and built the rest. Writes are atomic,
        // so every file present is whole; a unit of two slices whose second file was not yet
        // written when the job died (at most one per surviving rank) is rebuilt whole.
        let line = so
            .lines()
            .find(|l| l.starts_with("slices "))
            .unwrap_or_else(|| panic!("no summary\n{}", text(&again)));
        let nums: Vec<usize> = line
            .split_whitespace()
            .filter_map(|w| w.trim_end_matches(',').parse().ok())
            .collect();
        let (built, skipped) = (nums[0], nums[1]);
        assert_eq!(built + skipped, all, "{line}");
        assert!(
            skipped <= partial && skipped + 2 >= partial,
            "{line}, {partial} files before"
        );
        assert_same_files(t.path());
    }

    #[test]
    fn failing_unit_stops_the_job_naming_unit_and_rank() {
        let t = tempfile::tempdir().unwrap();
        // A directory where the last unit's first table must go: its rename fails.
        let last = build_order(PIECES).pop().unwrap();
        std::fs::create_dir(table_path(t.path(), &last.slices[0])).unwrap();
        let out = mpirun(3, t.path(), &["--quiet"], &[]);
        assert!(!out.status.success(), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        let want = format!("failed on unit {} (", last.id);
        let line = err
            .lines()
            .find(|l| l.starts_with("egdb: error: rank ") && l.contains(&want))
            .unwrap_or_else(|| panic!("no error line naming rank and unit\n{}", text(&out)));
        assert!(line.contains(&last.slices[0].to_string()), "{line}");
    }
}
