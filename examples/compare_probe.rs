//! Probe two table directories at the same random positions and count the differences: a
//! check of a converted subset of files against their source when `egdb convert --check`
//! cannot run (the source directory holds only the subset, so the check's reading lacks their
//! partner and successor slices). Used for codec 7's 7-piece sample (docs/format.md, "Codec 7").
//! Usage: `compare_probe REF_DIR DIR N FILE...`: N random positions of each slice file named
//! (its slice, Black to move and the colour flip, White to move), probed in REF_DIR and DIR
//! (each a complete directory: every slice a probe needs).
use checkers_egdb::format::SliceIndex;
use checkers_egdb::{Slice, Tablebase};

#[path = "common/bench.rs"]
mod bench;
use bench::Rng;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: compare_probe REF_DIR DIR N FILE...");
        std::process::exit(2);
    }
    let a = Tablebase::open(&args[1]).unwrap();
    let b = Tablebase::open(&args[2]).unwrap();
    let n: u64 = args[3].parse().unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut probed, mut differ) = (0u64, 0u64);
    for f in &args[4..] {
        let name = std::path::Path::new(f)
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap();
        let s: Slice = name.parse().unwrap();
        let ix = SliceIndex::new(s);
        for _ in 0..n {
            let p = ix.unrank(rng.next() % ix.size()).unwrap();
            for q in [p, p.flip()] {
                let (x, y) = (a.probe_wld(&q), b.probe_wld(&q));
                probed += 1;
                if x.as_ref().ok() != y.as_ref().ok() || x.is_err() {
                    differ += 1;
                    if differ <= 5 {
                        eprintln!("{}: {x:?} against {y:?}", q.to_fen());
                    }
                }
            }
        }
    }
    println!("{probed} positions probed, {differ} differ");
    if differ > 0 {
        std::process::exit(1);
    }
}
