//! `egdb count`: number of positions by piece count (formula, A055213) or by slice.
use super::CliResult;
use checkers_egdb::format::SliceIndex;
use checkers_egdb::planning::{positions_formula, slices_with_pieces};

/// Arguments of `egdb count`.
#[derive(clap::Args)]
pub struct Args {
    /// Largest piece count: 1-24 for totals (default 24), 1-10 with --slices (default 4).
    #[arg(long)]
    pieces: Option<u32>,
    /// One line per slice instead of per piece count:
    /// `slice<TAB>material<TAB>black_rank<TAB>white_rank<TAB>positions` (`n` = no men).
    #[arg(long)]
    slices: bool,
}

/// Run `egdb count`: without `--slices`, one line `n<TAB>positions` for n = 1..=N (closed
/// formula, Black-to-move positions = OEIS A055213); with `--slices`, every slice of 1..=N
/// pieces (size 0 included) with its exact size from the dense index.
pub fn run(args: Args) -> CliResult {
    let rank = |r: Option<u8>| r.map_or("n".to_string(), |r| r.to_string());
    if args.slices {
        let n = args.pieces.unwrap_or(4);
        if !(1..=10).contains(&n) {
            return Err(format!("--slices needs --pieces between 1 and 10 (got {n})").into());
        }
        let mut out = String::new();
        for k in 1..=n {
            for s in slices_with_pieces(k) {
                let size = SliceIndex::new(s).size();
                out.push_str(&format!(
                    "{s}\t{}\t{}\t{}\t{size}\n",
                    s.material,
                    rank(s.black_rank),
                    rank(s.white_rank)
                ));
            }
        }
        print!("{out}");
    } else {
        let n = args.pieces.unwrap_or(24);
        if !(1..=24).contains(&n) {
            return Err(format!("--pieces must be between 1 and 24 (got {n})").into());
        }
        for k in 1..=n {
            println!("{k}\t{}", positions_formula(k));
        }
    }
    Ok(())
}
