//! Convert a table directory to codec 4 (docs/format.md), or to codec 5, 6 or 7 with
//! `CODEC=5`, `CODEC=6` or `CODEC=7`: a thin wrapper over the library's [`convert_dir`], which
//! `egdb convert` runs too (prefer the command; this example keeps the older commands of
//! docs/format.md working).
//! Usage:
//!   cargo run --release --example convert_tables -- IN_DIR OUT_DIR [BLOCK_POSITIONS] [CHECK_N]
//! is `egdb convert --dir IN_DIR --out OUT_DIR --codec 4 --check CHECK_N` with blocks of
//! BLOCK_POSITIONS positions (default 65,520; a positive multiple of 20) in the files
//! re-encoded. Prints positions and bytes per piece count, before and after, and the check.
//! Bad arguments or files give one error line and exit status 1 (2 for usage).
use checkers_egdb::format::CODEC_2BIT_THREATS;
use checkers_egdb::{convert_dir, ConvertOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 || args.len() > 5 {
        eprintln!("usage: convert_tables IN_DIR OUT_DIR [BLOCK_POSITIONS] [CHECK_N]");
        std::process::exit(2);
    }
    if let Err(e) = run(&args) {
        eprintln!("convert_tables: {e}");
        std::process::exit(1);
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let codec: u32 = match std::env::var("CODEC") {
        Err(_) => CODEC_2BIT_THREATS,
        Ok(s) => s
            .parse()
            .map_err(|_| format!("CODEC={s}: the output codec must be 4, 5, 6 or 7"))?,
    };
    let mut opts = ConvertOptions::new(&args[1], &args[2], codec);
    if let Some(b) = args.get(3) {
        opts.block_positions = b
            .parse()
            .map_err(|_| format!("block positions {b:?}: not a positive multiple of 20"))?;
    }
    if let Some(c) = args.get(4) {
        opts.check = c
            .parse()
            .map_err(|_| format!("check count {c:?}: not a number of positions"))?;
    }
    let t0 = std::time::Instant::now();
    let rep = convert_dir(&opts, &|_, _| {}).map_err(|e| e.to_string())?;
    println!(
        "converted in {:.1} s (codec {}, blocks of {} positions)",
        t0.elapsed().as_secs_f64(),
        rep.codec,
        opts.block_positions
    );
    let mut all = rep.wld.values().cloned().collect::<Vec<_>>();
    all.push(rep.wld_total());
    let names = rep
        .wld
        .keys()
        .map(|k| format!("{k} pieces"))
        .chain(["all".to_string()]);
    for (name, c) in names.zip(&all) {
        println!(
            "{name}: {} files, {} positions; in {} bytes ({:.1} pos/byte), out {} bytes ({:.1} pos/byte)",
            c.files,
            c.positions,
            c.bytes_before,
            c.positions as f64 / c.bytes_before.max(1) as f64,
            c.bytes_after,
            c.positions as f64 / c.bytes_after.max(1) as f64
        );
    }
    for (k, n) in &rep.checked {
        println!(
            "check {k} pieces: {n} random positions against the {}, 0 differ",
            rep.check_reference
        );
    }
    Ok(())
}
