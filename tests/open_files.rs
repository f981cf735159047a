//! The readers keep one file per slice open, and a table directory holds thousands (1,029
//! value files for at most 4 pieces), more than an ordinary user's usual soft limit of 1,024
//! open files. Found when the README's test command was run by an unprivileged user: `verify`,
//! the prover and probes failed with "Too many open files". The library now raises the soft
//! limit to the hard one on the first `EMFILE` and opens again.
use std::process::Command;

const EGDB: &str = env!("CARGO_BIN_EXE_egdb");

fn sh(script: &str) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .env_remove("EGDB_DIR")
        .output()
        .unwrap()
}

#[test]
fn verify_and_probes_run_under_a_low_soft_limit_of_open_files() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let hard = String::from_utf8_lossy(&sh("ulimit -Hn").stdout)
        .trim()
        .to_string();
    let hard: u64 = if hard == "unlimited" {
        u64::MAX
    } else {
        hard.parse().unwrap_or(0)
    };
    if hard < 2048 {
        eprintln!("skipped: the hard limit of open files is {hard}, below the 1,029 files needed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t4");
    let d = dir.to_str().unwrap();
    let out = Command::new(EGDB)
        .args(["build", "--pieces", "4", "--quiet", "--dir", d])
        .env_remove("EGDB_DIR")
        .output()
        .unwrap();
    assert!(out.status.success());
    // A soft limit of 256 open files, far below the 1,029 slices verify reads.
    let out = sh(&format!(
        "ulimit -Sn 256 && '{EGDB}' verify --quiet --dir '{d}'"
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Probes over many slices in one process (a man each, with or without a king: 2,224
    // positions in some 150 slices), under a soft limit of 64: the Tablebase keeps each slice
    // file it opened. Before the fix 1,302 of them failed with "Too many open files".
    let mut fens = String::new();
    for b in 1..=28u32 {
        for w in 5..=32u32 {
            if b == w {
                continue;
            }
            fens.push_str(&format!("B:W{w}:B{b}\n"));
            if b != 30 && w != 30 {
                fens.push_str(&format!("B:W{w}:B{b},K30\n"));
            }
            if b != 3 && w != 3 {
                fens.push_str(&format!("B:W{w},K3:B{b}\n"));
            }
        }
    }
    let list = tmp.path().join("fens.txt");
    std::fs::write(&list, &fens).unwrap();
    let l = list.to_str().unwrap();
    let out = sh(&format!(
        "ulimit -Sn 64 && '{EGDB}' probe --dir '{d}' < '{l}'"
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(text.lines().count(), fens.lines().count());
    assert!(text.lines().all(|x| !x.contains("error")), "{text}");
}

/// The tests of this file count the process's open descriptors; they run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

fn build4(dir: &std::path::Path) {
    let out = Command::new(EGDB)
        .args(["build", "--pieces", "4", "--quiet", "--dir"])
        .arg(dir)
        .env_remove("EGDB_DIR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 32: a `Tablebase` keeps at most `max_open_files` value files open. Eight, here, for
/// the 1,029 files of at most 4 pieces, probed without a block cache (every probe reads a
/// block, so files are closed and opened again all the time) from four threads: every answer
/// equals a memory-mapped reader's (which holds no descriptor), and the process never holds
/// more than the bound plus the threads' reads in flight plus a few descriptors.
#[test]
fn a_tablebase_keeps_a_bounded_number_of_files_open() {
    use checkers_egdb::format::SliceIndex;
    use checkers_egdb::{Access, Material, Slice, Tablebase};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    build4(tmp.path());
    let mut positions = Vec::new();
    let mut slices = 0;
    for k in 2..=4 {
        for m in Material::all_with_pieces(k) {
            for s in Slice::all_of(m) {
                slices += 1;
                let ix = SliceIndex::new(s);
                // Every slice, about 40 positions of each (its first and last among them).
                let step = (ix.size() / 40).max(1);
                for i in (0..ix.size()).step_by(step as usize).chain([ix.size() - 1]) {
                    positions.push(ix.unrank(i).unwrap());
                }
            }
        }
    }
    assert!(slices > 1000, "{slices}");
    let reference = Tablebase::builder(tmp.path())
        .access(Access::Mmap)
        .open()
        .unwrap();
    let want: Vec<_> = positions
        .iter()
        .map(|p| reference.probe_wld(p).unwrap())
        .collect();
    drop(reference);
    const BOUND: usize = 8;
    const THREADS: usize = 4;
    let before = open_fds();
    let tb = Tablebase::builder(tmp.path())
        .cache_bytes(0)
        .max_open_files(BOUND)
        .open()
        .unwrap();
    let done = AtomicBool::new(false);
    let most = AtomicUsize::new(0);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                most.fetch_max(open_fds(), Ordering::Relaxed);
                std::thread::yield_now();
            }
        });
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (tb, positions, want) = (&tb, &positions, &want);
                sc.spawn(move || {
                    // Each thread walks the list from its own start, so that they need
                    // different files at the same time.
                    let n = positions.len();
                    for j in 0..n {
                        let i = (j + t * n / THREADS) % n;
                        let got = tb.probe_wld(&positions[i]).unwrap();
                        assert_eq!(got, want[i], "{}", positions[i]);
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
    });
    let s = tb.stats();
    assert!(s.open_files <= BOUND as u64, "{s:?}");
    assert!(s.files_reopened > 0, "{s:?}");
    // The bound, plus one descriptor per thread whose read was in flight when its file was
    // closed, plus /proc/self/fd's own and a little slack.
    let most = most.load(Ordering::Relaxed);
    assert!(
        most <= before + BOUND + THREADS + 2,
        "{most} descriptors open, {before} before"
    );
    drop(tb);
    assert!(open_fds() <= before + 1);
}

/// A value file replaced on disk after its descriptor was closed (to make room) is reported as
/// changed when it is opened again, never read as values: whether the new file is a copy with
/// one byte of block data changed (atomically renamed over it) or the same bytes.
#[test]
fn a_file_replaced_while_closed_is_reported_not_read() {
    use checkers_egdb::format::{table_path, SliceIndex};
    use checkers_egdb::{Material, Position, ProbeError, Slice, Tablebase};
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    build4(tmp.path());
    // Two slices of 4 pieces and a quiet position in each.
    let quiet = |s: Slice| -> Position {
        let ix = SliceIndex::new(s);
        (0..ix.size())
            .map(|i| ix.unrank(i).unwrap())
            .find(|p| !p.has_capture())
            .unwrap()
    };
    let m = Material::all_with_pieces(4)
        .into_iter()
        .find(|m| m.bm == 2 && m.wm == 2)
        .unwrap();
    let mut slices = Slice::all_of(m).into_iter();
    let (a, b) = (slices.next().unwrap(), slices.next().unwrap());
    let (pa, pb) = (quiet(a), quiet(b));
    for same_bytes in [false, true] {
        let tb = Tablebase::builder(tmp.path())
            .cache_bytes(0)
            .max_open_files(1)
            .open()
            .unwrap();
        tb.probe_wld_raw(&pa).unwrap();
        tb.probe_wld_raw(&pb).unwrap(); // closes a's file
        let path = table_path(tmp.path(), &a);
        let mut bytes = std::fs::read(&path).unwrap();
        if !same_bytes {
            let at = bytes.len() - 9; // the last byte of block data
            bytes[at] ^= 0x40;
        }
        let tmp_file = path.with_extension("new");
        std::fs::write(&tmp_file, &bytes).unwrap();
        std::fs::rename(&tmp_file, &path).unwrap();
        let e = tb.probe_wld_raw(&pa).unwrap_err();
        assert!(
            matches!(&e, ProbeError::Table(t) if t.to_string().contains("changed since it was opened")),
            "{e}"
        );
        // Put the file back as built (same bytes again) for the next round: still "changed"
        // for this tablebase (another inode), fine for a new one.
        if !same_bytes {
            let at = bytes.len() - 9;
            bytes[at] ^= 0x40;
            std::fs::write(&tmp_file, &bytes).unwrap();
            std::fs::rename(&tmp_file, &path).unwrap();
        }
        assert!(tb.probe_wld_raw(&pa).is_err());
    }
}
