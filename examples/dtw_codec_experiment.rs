//! How small depth-to-win files could be (issue 33/32 experiment, no format change): every
//! `.dtw` file of a directory is decoded and re-encoded (the distance container: a byte per
//! position with escapes, zstd per block) in a few transforms, and the bytes are summed.
//! A won position's DTW is odd and a lost one's even (the game ends after the winner's move),
//! so `d >> 1` with the WLD value loses nothing.
//!
//! ```text
//! cargo run --release --example dtw_codec_experiment -- DIR [LEVEL...]
//! ```
use checkers_egdb::format::{open_dtw, write_dtw, DtcFile, TableMeta, WriteOptions};
use std::path::Path;

fn encoded_len(meta: &TableMeta, d: &[u32], level: i32, tmp: &Path) -> u64 {
    let mask = bitvec::vec::BitVec::<u64, bitvec::order::Lsb0>::repeat(false, d.len());
    let opts = WriteOptions {
        level,
        ..WriteOptions::default()
    };
    let p = tmp.join("x.dtw");
    write_dtw(&p, meta, d, &mask, &opts).expect("encode")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = Path::new(&args[0]);
    let levels: Vec<i32> = if args.len() > 1 {
        args[1..].iter().map(|x| x.parse().unwrap()).collect()
    } else {
        vec![9]
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "dtw"))
        .collect();
    files.sort();
    let (mut positions, mut stored) = (0u64, 0u64);
    let mut sums = vec![[0u64; 2]; levels.len()];
    for p in &files {
        stored += std::fs::metadata(p).unwrap().len();
        let f: DtcFile = open_dtw(p, checkers_egdb::format::RULES_ENGLISH).expect("open");
        let meta = f.meta().clone();
        positions += meta.positions;
        let d = f.decode_all().expect("decode");
        let half: Vec<u32> = d.iter().map(|&x| x >> 1).collect();
        let mut m2 = meta.clone();
        m2.longest = meta.longest >> 1;
        for (k, &l) in levels.iter().enumerate() {
            sums[k][0] += encoded_len(&meta, &d, l, tmp.path());
            sums[k][1] += encoded_len(&m2, &half, l, tmp.path());
        }
    }
    println!(
        "{} files, {positions} positions, stored {stored} bytes ({:.2} positions/byte)",
        files.len(),
        positions as f64 / stored as f64
    );
    for (k, l) in levels.iter().enumerate() {
        println!(
            "level {l}: as stored {} B ({:.2}/B), d>>1 {} B ({:.2}/B, {:.3}x)",
            sums[k][0],
            positions as f64 / sums[k][0] as f64,
            sums[k][1],
            positions as f64 / sums[k][1] as f64,
            sums[k][0] as f64 / sums[k][1] as f64
        );
    }
}
