//! Experiment: re-encode the WLD files (`*.egdb`) of DIR at several zstd levels (codec 2) and
//! report bytes, positions per byte and encoding time on one thread, to weigh the writer's
//! CPU in a build against the files' size. Usage:
//!   cargo run --release --example wld_levels -- DIR [EVERY_NTH_FILE] [LEVEL...]
//! The files are written by the public writer to a scratch directory (/dev/shm where there is
//! one), so the time includes that in-memory write.
//! Files are taken in name order, every EVERY_NTH_FILE-th (default 1: all); levels default
//! to 15 (the writer's default), 13, 12, 11, 9, 5, 3.
use checkers_egdb::format::{TableFile, WriteOptions};
use std::time::Instant;

#[path = "common/scratch.rs"]
mod scratch;
use scratch::encoded_len;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: wld_levels DIR [EVERY_NTH_FILE] [LEVEL...]");
        std::process::exit(2);
    };
    let every: usize = args
        .get(2)
        .map_or(1, |s| s.parse().expect("EVERY_NTH_FILE"));
    let levels: Vec<i32> = if args.len() > 3 {
        args[3..]
            .iter()
            .map(|s| s.parse().expect("LEVEL"))
            .collect()
    } else {
        vec![15, 13, 12, 11, 9, 5, 3]
    };
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egdb"))
        .collect();
    files.sort();
    let data: Vec<_> = files
        .into_iter()
        .step_by(every.max(1))
        .map(|p| {
            let t = TableFile::open(&p).unwrap();
            (t.meta().clone(), t.decode_all().unwrap())
        })
        .collect();
    let positions: u64 = data.iter().map(|d| d.1.len() as u64).sum();
    println!("{} files, {positions} positions", data.len());
    // One thread, so the time is CPU time of the encoding alone.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for level in levels {
        let opts = WriteOptions {
            level,
            ..WriteOptions::default()
        };
        let t = Instant::now();
        let bytes: u64 = pool.install(|| data.iter().map(|(m, v)| encoded_len(m, v, &opts)).sum());
        let s = t.elapsed().as_secs_f64();
        println!(
            "level {level:2}: {bytes} bytes, {:.1} positions/byte, {s:.2} s, {:.1} M positions/s",
            positions as f64 / bytes as f64,
            positions as f64 / s / 1e6
        );
    }
}
