//! Experiment: re-encode the distance files of DIR at several zstd levels and report bytes,
//! positions per byte and encoding time (one thread). Usage:
//!   cargo run --release --example dtc_levels -- DIR [LEVEL...]
use checkers_egdb::format::{slice_of_file_name, write_dtc, DtcFile, WriteOptions, RULES_ENGLISH};
use std::time::Instant;

#[path = "common/scratch.rs"]
mod scratch;
use scratch::scratch_path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let levels: Vec<i32> = if args.len() > 2 {
        args[2..].iter().map(|s| s.parse().unwrap()).collect()
    } else {
        vec![1, 3, 6, 9, 12, 15]
    };
    let mut files = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if let Some(s) = name
            .strip_suffix(".dtc")
            .and_then(|n| slice_of_file_name(&format!("{n}.egdb")))
        {
            let f =
                DtcFile::open(&checkers_egdb::format::dtc_path(&dir, &s), RULES_ENGLISH).unwrap();
            let d = f.decode_all().unwrap();
            files.push((f.meta().clone(), d));
        }
    }
    let positions: u64 = files.iter().map(|f| f.0.positions).sum();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for level in levels {
        let opts = WriteOptions {
            level,
            ..Default::default()
        };
        let t = Instant::now();
        let bytes: u64 = pool.install(|| {
            files
                .iter()
                .map(|(m, d)| {
                    let mask = bitvec::bitvec![u64, bitvec::order::Lsb0; 0; d.len()];
                    let path = scratch_path();
                    let n = write_dtc(&path, m, d, &mask, &opts).unwrap();
                    std::fs::remove_file(&path).ok();
                    n
                })
                .sum()
        });
        println!(
            "level {level}: {bytes} bytes, {:.1} positions/byte, {:.2} s",
            positions as f64 / bytes as f64,
            t.elapsed().as_secs_f64()
        );
    }
}
