//! `egdb build` end to end on at most 4 pieces: published values, K v K statistics, verify,
//! determinism across thread counts and with or without BMI2, and resuming an interrupted build.
use std::path::Path;
use std::process::Command;

fn egdb(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(args)
        .env("EGDB_DIR", dir)
        .output()
        .expect("egdb runs")
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// (file name, bytes) of every table file, sorted.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egdb"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn build_four_pieces_then_check_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t2");
    ok(&egdb(
        &["build", "--pieces", "4", "--quiet", "--threads", "2"],
        &dir,
    ));

    // K v K, published (reference: 992 positions; White to move 230 wins, 654 draws, 108 losses).
    let stats = ok(&egdb(&["stats"], &dir));
    let kvk_w = stats
        .lines()
        .find(|l| l.starts_with("0 1 0 1 W "))
        .expect("K v K line");
    assert_eq!(kvk_w, "0 1 0 1 W 992 230 108 654 11");
    // Colour symmetry: (bm,bk,wm,wk,B) equals (wm,wk,bm,bk,W).
    let rows: Vec<Vec<&str>> = stats
        .lines()
        .skip(1)
        .map(|l| l.split(' ').collect())
        .collect();
    for r in &rows {
        let mirror = rows
            .iter()
            .find(|m| m[0] == r[2] && m[1] == r[3] && m[2] == r[0] && m[3] == r[1] && m[4] != r[4])
            .expect("mirror line");
        assert_eq!(r[5..], mirror[5..]);
    }
    // Sub-counts from A055213's decomposition (reference §2).
    let pos = |m: &str, stm: &str| -> u64 {
        rows.iter()
            .find(|r| r[..4].join("") == m && r[4] == stm)
            .map(|r| r[5].parse().unwrap())
            .unwrap()
    };
    assert_eq!(pos("0201", "B"), 14_880);
    assert_eq!(pos("0202", "B"), 215_760);
    // Sum over all materials with Black to move equals A055213(1..=4).
    let mut by_n = [0u64; 5];
    for r in &rows {
        if r[4] == "B" {
            let n: usize = r[..4].iter().map(|x| x.parse::<usize>().unwrap()).sum();
            by_n[n] += r[5].parse::<u64>().unwrap();
        }
    }
    assert_eq!(by_n[1..], [120, 6_972, 261_224, 7_092_774]);

    // Published values (reference §3).
    let probe = ok(&egdb(
        &[
            "probe",
            "W:WK19,K23:BK28,12",
            "B:WK19,K23:BK28,12",
            "W:WK32:BK26",
            "B:WK32:BK26",
            "W:W5:BK2",
            "W:WK29:BK25",
            "B:WK29:BK25",
            "W:WK4:BK12",
        ],
        &dir,
    ));
    let vals: Vec<&str> = probe
        .lines()
        .map(|l| l.rsplit('\t').next().unwrap())
        .collect();
    assert_eq!(
        vals,
        ["win", "draw", "win", "draw", "win", "win", "win", "loss"]
    );

    // Independent verification passes.
    let v = ok(&egdb(&["verify", "--quiet"], &dir));
    assert!(v.starts_with("ok:"), "{v}");

    // Same bytes with one thread.
    let dir1 = tmp.path().join("t1");
    ok(&egdb(
        &["build", "--pieces", "4", "--quiet", "--threads", "1"],
        &dir1,
    ));
    let a = files(&dir);
    assert_eq!(a, files(&dir1));

    // Same bytes, distances included, with the king ranking's portable loops instead of the
    // BMI2 instructions (`checkers_egdb::bmi2`; on a CPU without BMI2 both builds take the
    // portable path).
    let both = ["build", "--pieces", "4", "--dtc", "--quiet"];
    let dirs = [tmp.path().join("bmi2"), tmp.path().join("no-bmi2")];
    for (d, no) in dirs.iter().zip(["0", "1"]) {
        let out = Command::new(env!("CARGO_BIN_EXE_egdb"))
            .args(both)
            .env("EGDB_DIR", d)
            .env("EGDB_NO_BMI2", no)
            .output()
            .expect("egdb runs");
        ok(&out);
    }
    assert_eq!(files(&dirs[0]), files(&dirs[1]));
    let dtc_files = |d: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "dtc"))
            .map(|p| {
                (
                    p.file_name().unwrap().to_owned(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let dtc = dtc_files(&dirs[0]);
    assert!(!dtc.is_empty(), "the --dtc build wrote distance files");
    assert_eq!(dtc, dtc_files(&dirs[1]));

    // Resume: delete some files, truncate another, leave a stray temp file; rebuild restores
    // byte-identical files.
    let names: Vec<String> = a.iter().map(|(n, _)| n.clone()).collect();
    for n in names.iter().step_by(7) {
        std::fs::remove_file(dir1.join(n)).unwrap();
    }
    let victim = dir1.join(&names[names.len() / 2]);
    if victim.exists() {
        let b = std::fs::read(&victim).unwrap();
        std::fs::write(&victim, &b[..b.len() / 2]).unwrap();
    }
    std::fs::write(dir1.join(format!("{}.tmp", names[3])), b"partial").unwrap();
    ok(&egdb(&["build", "--pieces", "4", "--quiet"], &dir1));
    assert_eq!(a, files(&dir1));
}

#[test]
fn killed_build_resumes_to_identical_files() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    ok(&egdb(&["build", "--pieces", "4", "--quiet"], &full));
    let killed = tmp.path().join("killed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args(["build", "--pieces", "4", "--quiet"])
        .env("EGDB_DIR", &killed)
        .spawn()
        .unwrap();
    // Kill it once a few files exist (mid-build).
    let t0 = std::time::Instant::now();
    while t0.elapsed().as_secs() < 60 {
        let n = std::fs::read_dir(&killed).map(|d| d.count()).unwrap_or(0);
        if n >= 40 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    ok(&egdb(&["build", "--pieces", "4", "--quiet"], &killed));
    assert_eq!(files(&full), files(&killed));
}

#[test]
fn missing_dependency_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    // 2 kings v 1 king needs the 2-piece tables.
    let out = egdb(&["build", "--slice", "0201-nn", "--quiet"], &dir);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("missing") && err.contains("01"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// The smallest budget `egdb build ARGS` accepts in `dir`: a 64 KiB budget (below any unit's
/// state and the 1 MiB block cache) is refused before anything is written, with an error
/// naming the unit and the budget that holds it; that budget is accepted by the next call,
/// one byte less is refused. Returns that budget in bytes.
fn smallest_budget(args: &[&str], dir: &Path) -> String {
    let mut a = args.to_vec();
    a.extend(["--memory", "64K"]);
    let out = egdb(&a, dir);
    assert!(!out.status.success(), "a 64K budget was accepted");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        err.contains("the memory budget 64.0 KiB (--memory; default half the physical memory) is too small: unit ")
            && !err.contains("panicked"),
        "{err}"
    );
    assert!(
        !dir.exists() || std::fs::read_dir(dir).unwrap().next().is_none(),
        "files written before the refusal"
    );
    let need: u64 = err
        .split("give --memory ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size in {err}"));
    let mut a = args.to_vec();
    let less = (need - 1).to_string();
    a.extend(["--memory", &less]);
    let out = egdb(&a, dir);
    assert!(!out.status.success(), "one byte below {need} was accepted");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("give --memory {need} ")));
    need.to_string()
}

/// A build under the smallest budget it accepts (dependencies read from the compressed files
/// through the block cache, slices evicted and released) writes byte-identical files to an
/// unbounded one. The reference is the unbounded build; the summary line shows the spill did
/// happen.
#[test]
fn tiny_memory_budget_gives_identical_files() {
    let tmp = tempfile::tempdir().unwrap();
    let free = tmp.path().join("free");
    let tight = tmp.path().join("tight");
    ok(&egdb(
        &["build", "--pieces", "4", "--quiet", "--memory", "1T"],
        &free,
    ));
    let least = smallest_budget(&["build", "--pieces", "4"], &tight);
    // `egdb plan` names the same budget, and says that 64K is too small.
    let plan = ok(&egdb(&["plan", "--pieces", "4", "--memory", "64K"], &tight));
    assert!(
        plan.contains(&format!(
            "({least} bytes); this budget is too small, egdb build refuses it"
        )),
        "{plan}"
    );
    let out = ok(&egdb(
        &["build", "--pieces", "4", "--memory", &least],
        &tight,
    ));
    let line = out
        .lines()
        .find(|l| l.starts_with("dependencies"))
        .unwrap_or_else(|| panic!("no dependencies line in {out}"));
    let number_before = |word: &str| -> u64 {
        let i = line
            .find(word)
            .unwrap_or_else(|| panic!("{word} in {line}"));
        line[..i]
            .split_whitespace()
            .last()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{word} in {line}"))
    };
    assert!(
        number_before("lookups through the block cache") > 0,
        "{line}"
    );
    assert!(number_before("evicted") > 0, "{line}");
    assert_eq!(files(&free), files(&tight));
    // And the tables answer like the unbounded ones under independent verification.
    let v = ok(&egdb(&["verify", "--quiet"], &tight));
    assert!(v.starts_with("ok:"), "{v}");
}

/// The same under a variant's rules (found by a code review): the dependency store served the
/// slices that do not fit through a spill source opened for English, which refused the
/// variant's files ("rules"), so `build --rules russian --memory 64K` failed as soon as a
/// lookup spilled (from 2 pieces on). The tight 3-piece build must give the unbounded one's bytes, and `verify` (whose
/// store spills the same way) must pass under the tight budget too.
#[test]
fn tiny_memory_budget_gives_identical_files_for_a_variant() {
    let tmp = tempfile::tempdir().unwrap();
    let free = tmp.path().join("free");
    let tight = tmp.path().join("tight");
    ok(&egdb(
        &[
            "build", "--rules", "russian", "--pieces", "3", "--quiet", "--memory", "1T",
        ],
        &free,
    ));
    let least = smallest_budget(&["build", "--rules", "russian", "--pieces", "3"], &tight);
    let out = ok(&egdb(
        &[
            "build", "--rules", "russian", "--pieces", "3", "--memory", &least,
        ],
        &tight,
    ));
    let line = out
        .lines()
        .find(|l| l.starts_with("dependencies"))
        .unwrap_or_else(|| panic!("no dependencies line in {out}"));
    assert!(
        !line.contains(" 0 lookups through the block cache"),
        "{line}"
    );
    assert_eq!(files(&free), files(&tight));
    let v = ok(&egdb(&["verify", "--quiet", "--memory", "64K"], &tight));
    assert!(v.starts_with("ok:"), "{v}");
}

/// The writer's backlog is bounded as the memory model charges it
/// (`memory::writer_backlog_bytes`): when a unit starts, the files of every unit before the
/// previous one are written. Checked from the observer at every unit start of a 4-piece build.
#[test]
fn a_unit_starts_only_when_the_units_before_the_previous_one_are_written() {
    use checkers_egdb::{build_with, BuildObserver, BuildOptions, Unit};
    use std::sync::Mutex;
    struct Watch<'a> {
        dir: &'a Path,
        started: Mutex<Vec<Vec<String>>>,
        violations: Mutex<Vec<String>>,
    }
    impl BuildObserver for Watch<'_> {
        fn unit_started(&self, unit: &Unit) {
            let mut started = self.started.lock().unwrap();
            let n = started.len();
            if n >= 2 {
                for name in started[..n - 1].iter().flatten() {
                    if !self.dir.join(format!("{name}.egdb")).exists() {
                        self.violations.lock().unwrap().push(format!(
                            "{name} not written when unit {n} ({:?}) started",
                            unit.slices
                        ));
                    }
                }
            }
            started.push(unit.slices.iter().map(|s| s.to_string()).collect());
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    std::fs::create_dir(&dir).unwrap();
    let watch = Watch {
        dir: &dir,
        started: Mutex::new(Vec::new()),
        violations: Mutex::new(Vec::new()),
    };
    let mut opts = BuildOptions::new(&dir, 4);
    let units = checkers_egdb::planning::build_order(4);
    let units: Vec<&Unit> = units.iter().collect();
    // The smallest budget the build accepts: the dependencies spill, the writer's backlog is
    // what the budget is charged with.
    opts.memory = checkers_egdb::planning::minimum_budget(&units, false).map(|(_, b)| b);
    build_with(&opts, &watch).unwrap();
    let started = watch.started.into_inner().unwrap();
    assert!(started.len() > 100, "{}", started.len());
    let v = watch.violations.into_inner().unwrap();
    assert!(v.is_empty(), "{} violations, first: {}", v.len(), v[0]);
}
