//! Whole-file block decode benchmark (not a timed test): the decode cost per position of a
//! table directory's codec, e.g. codec 7 against codec 2 (issue 32).
//!
//! Usage:
//!   cargo run --release --example bench_decode -- DIR [PIECES] [STEP] [OFFSET] [REPS]
//! Takes the files of DIR with PIECES pieces (default 6; 0: every file) in name order, every
//! STEP-th from OFFSET (default 20 and 0), and decodes every block of each with
//! `TableFile::decode_block` on one thread, REPS times (default 3). Reports the CPU time of the
//! decoding thread per position (all positions, and the positions of blocks with data), the
//! best and median of the passes, and a hash of every decoded value (`decode_all_serial`, not
//! timed; equal hashes: equal values, so two builds of the decoder can be compared on the same
//! files). The hash pass reads every file before the timed passes.
use checkers_egdb::format::TableFile;

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// FNV-1a over bytes.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= u64::from(b);
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

fn pieces(name: &str) -> u32 {
    name.chars().take(4).filter_map(|c| c.to_digit(10)).sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: bench_decode DIR [PIECES] [STEP] [OFFSET] [REPS]");
        std::process::exit(2);
    }
    let dir = std::path::PathBuf::from(&args[1]);
    let arg = |i: usize, d: usize| args.get(i).map_or(d, |s| s.parse().expect("a number"));
    let (want, step, offset, reps) = (arg(2, 6) as u32, arg(3, 20).max(1), arg(4, 0), arg(5, 3));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("read DIR")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".egdb") && (want == 0 || pieces(n) == want))
        .collect();
    names.sort();
    let files: Vec<TableFile> = names
        .iter()
        .skip(offset)
        .step_by(step)
        .map(|n| TableFile::open(&dir.join(n)).expect("open"))
        .collect();
    let (mut all, mut data_pos, mut codec) = (0u64, 0u64, None);
    for f in &files {
        all += f.meta().positions;
        codec.get_or_insert(f.codec());
        if f.uniform().is_none() {
            for b in 0..f.block_count() {
                if f.block_constant(b).expect("block").is_none() {
                    data_pos += f.positions_in_block(b);
                }
            }
        }
    }
    // The hash pass (not timed) also warms the page cache and the index tables.
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for f in &files {
        fnv(&mut hash, &f.decode_all_serial().expect("decode"));
    }
    let mut times = Vec::new();
    for _ in 0..reps.max(1) {
        let t = thread_cpu_ns();
        for f in &files {
            if f.uniform().is_some() {
                continue;
            }
            for b in 0..f.block_count() {
                std::hint::black_box(f.decode_block(b).expect("decode"));
            }
        }
        times.push(thread_cpu_ns() - t);
    }
    times.sort_unstable();
    let best = times[0] as f64;
    let med = times[times.len() / 2] as f64;
    println!(
        "{}: {} files ({} pieces, every {step} from {offset}), codec {:?}, {all} positions, {data_pos} in blocks with data",
        dir.display(),
        files.len(),
        want,
        codec
    );
    println!(
        "decode CPU per pass: best {:.1} ms, median {:.1} ms ({reps} passes); ns a position: best {:.2} (all) {:.2} (blocks with data), median {:.2} / {:.2}; hash {hash:016x}",
        best / 1e6,
        med / 1e6,
        best / all as f64,
        best / data_pos.max(1) as f64,
        med / all as f64,
        med / data_pos.max(1) as f64
    );
}
