//! Compiles the C++ client `tests/cpp/client.cpp` (g++, and clang++ when installed) and a C
//! header check `tests/cpp/header_check.c` (cc) against `libegdb_kingsrow.so`, and runs them on
//! real tables: those in `$EGDB_TEST_TABLES` (complete, at least 4 pieces) or, when unset, the
//! 4-piece tables built here with the library's builder (a few seconds).
//!
//! Expected values: the published facts hard-coded in the client (reference.md sections 3, 4
//! and 7, king v king totals, the longest kings-only distances) and, for a few thousand random
//! positions (both sides to move, captures included), the Rust API's `Tablebase::probe_wld`,
//! and for the MTC and DTW handles (when the tables have `.dtc` and `.dtw` files, as those
//! built here do) `probe_dtc` / `probe_dtw` mapped by KingsRow's published semantics, written
//! out here apart from the driver's code: MTC = plies rounded up to even from 10 plies on,
//! else 1; DTW = plies / 2 rounded down, -3 for a draw.

use checkers_egdb::{Color, Position, Tablebase, Wld};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory of the driver built alongside this test (target/<profile>/deps or its parent,
/// whichever copy is newer). The programs run with `LD_LIBRARY_PATH` set to it alone: cargo's
/// own `LD_LIBRARY_PATH` would take precedence over the rpath and could load a stale copy.
fn driver_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    [deps.clone(), deps.parent().unwrap().to_path_buf()]
        .into_iter()
        .filter(|d| d.join("libegdb_kingsrow.so").exists())
        .max_by_key(|d| {
            d.join("libegdb_kingsrow.so")
                .metadata()
                .and_then(|m| m.modified())
                .ok()
        })
        .expect("libegdb_kingsrow.so not found next to the test executable")
}

/// splitmix64: a fixed-seed stream for reproducible random positions.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random legal position of 1..=max pieces (either side may have none).
fn random_position(rng: &mut Rng, max: u32) -> Position {
    loop {
        let n = 1 + rng.below(max as u64) as u32;
        let (mut black, mut white, mut kings) = (0u32, 0u32, 0u32);
        for _ in 0..n {
            let sq = loop {
                let s = rng.below(32) as u32;
                if (black | white) & (1 << s) == 0 {
                    break s;
                }
            };
            if rng.below(2) == 0 {
                black |= 1 << sq;
            } else {
                white |= 1 << sq;
            }
            if rng.below(3) == 0 {
                kings |= 1 << sq;
            }
        }
        let side = if rng.below(2) == 0 {
            Color::Black
        } else {
            Color::White
        };
        if let Ok(p) = Position::new(black, white, kings, side) {
            return p;
        }
    }
}

fn code(v: Wld) -> i32 {
    match v {
        Wld::Win => 1,
        Wld::Loss => 2,
        Wld::Draw => 3,
    }
}

fn compile(compiler: &str, args: &[&str], src: &Path, out: &Path, lib: &Path) -> bool {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new(compiler)
        .args(args)
        .arg("-I")
        .arg(root.join("include"))
        .arg(src)
        .arg("-o")
        .arg(out)
        .arg(format!("-L{}", lib.display()))
        .arg("-legdb_kingsrow")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .output();
    match o {
        Ok(o) => {
            assert!(
                o.status.success(),
                "{compiler} failed on {}:\n{}",
                src.display(),
                String::from_utf8_lossy(&o.stderr)
            );
            true
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => panic!("{compiler}: {e}"),
    }
}

#[test]
fn cpp_client_uses_the_kingsrow_api() {
    let work = tempfile::tempdir().unwrap();
    let tables = match std::env::var_os("EGDB_TEST_TABLES") {
        Some(d) => PathBuf::from(d),
        None => {
            let d = work.path().join("tables");
            let mut o = checkers_egdb::BuildOptions::new(&d, 4);
            o.dtc = true;
            o.dtw = true;
            checkers_egdb::build(&o).expect("build 4-piece tables");
            d
        }
    };
    let tb = Tablebase::open(&tables).expect("open the test tables");
    let max = tb.max_pieces();
    assert!(
        max >= 4,
        "{} holds tables of {max} pieces",
        tables.display()
    );

    // Random positions with at most min(max, 5) pieces, valued through the Rust API.
    let mut rng = Rng(0x5EED_0013);
    let mut lines = String::new();
    let (mut captures, mut white) = (0, 0);
    for i in 0..3000 {
        // Every other position is one where the side to move must capture.
        let p = loop {
            let p = random_position(&mut rng, max.min(5));
            if i % 2 == 1 || p.has_capture() {
                break p;
            }
        };
        let v = tb.probe_wld(&p).expect("probe");
        captures += p.has_capture() as u32;
        white += (p.side == Color::White) as u32;
        lines += &format!(
            "{} {} {} {} {}\n",
            p.black,
            p.white,
            p.kings,
            (p.side == Color::White) as u32,
            code(v)
        );
    }
    assert!(captures >= 1500, "only {captures} capture positions");
    assert!(
        (1000..2000).contains(&white),
        "{white} White-to-move positions"
    );
    let random = work.path().join("random.txt");
    std::fs::write(&random, lines).unwrap();

    // The same positions' MTC and DTW answers, where the distance files are there.
    let distances = work.path().join("distances.txt");
    let has = |ext: &str| {
        std::fs::read_dir(&tables)
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(ext))
    };
    let with_distances = has(".dtc") && has(".dtw");
    if with_distances {
        let mut rng = Rng(0x5EED_0033);
        let mut lines = String::new();
        let (mut long, mut short) = (0, 0);
        for _ in 0..3000 {
            let p = random_position(&mut rng, max.min(5));
            let mtc = match tb.probe_dtc(&p).expect("probe_dtc").plies() {
                Some(d) if d >= 10 => d + d % 2,
                _ => 1,
            };
            let dtw = match tb.probe_dtw(&p).expect("probe_dtw").plies() {
                Some(d) => (d / 2) as i64,
                None => -3,
            };
            long += (mtc >= 10) as u32;
            short += (mtc == 1) as u32;
            lines += &format!(
                "{} {} {} {} {mtc} {dtw}\n",
                p.black,
                p.white,
                p.kings,
                (p.side == Color::White) as u32,
            );
        }
        assert!(long >= 10 && short >= 100, "{long} long, {short} short");
        std::fs::write(&distances, lines).unwrap();
    }

    // A copy with one damaged data byte in the largest file.
    let corrupt = work.path().join("corrupt");
    std::fs::create_dir(&corrupt).unwrap();
    let mut largest = (0, String::new());
    for e in std::fs::read_dir(&tables).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        if name.ends_with(".egdb") {
            std::fs::copy(e.path(), corrupt.join(&name)).unwrap();
            let len = e.metadata().unwrap().len();
            if len > largest.0 {
                largest = (len, name);
            }
        }
    }
    let victim = corrupt.join(&largest.1);
    let mut bytes = std::fs::read(&victim).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xFF;
    std::fs::write(&victim, bytes).unwrap();
    std::fs::write(corrupt.join("damaged.txt"), &largest.1).unwrap();
    let empty = work.path().join("empty");
    std::fs::create_dir(&empty).unwrap();

    let lib = driver_dir();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let warn = ["-Wall", "-Wextra", "-Werror", "-pedantic"];
    let mut ran = Vec::new();
    for cxx in ["g++", "clang++"] {
        let exe = work.path().join(format!("client-{cxx}"));
        let mut args = vec!["-std=c++17", "-O1"];
        args.extend(warn);
        if !compile(cxx, &args, &root.join("tests/cpp/client.cpp"), &exe, &lib) {
            assert_ne!(cxx, "g++", "g++ is required");
            continue;
        }
        let mut cmd = Command::new(&exe);
        cmd.env("LD_LIBRARY_PATH", &lib)
            .arg(&tables)
            .arg(max.to_string())
            .arg(&random)
            .arg(&corrupt)
            .arg(&empty);
        if with_distances {
            cmd.arg(&distances);
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("\n0 failures"),
            "{cxx} client failed:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ran.push(cxx);
    }
    eprintln!("C++ client passed with {ran:?}");

    // The header in C: compile, link and run a small program.
    let exe = work.path().join("header_check");
    let mut args = vec!["-std=c99"];
    args.extend(warn);
    compile(
        "cc",
        &args,
        &root.join("tests/cpp/header_check.c"),
        &exe,
        &lib,
    );
    let out = Command::new(&exe)
        .env("LD_LIBRARY_PATH", &lib)
        .arg(&tables)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "C check failed:\n{text}");
    assert_eq!(text.trim(), format!("type 4 pieces {max} value 1"));
}
