//! `egdb show [--ascii | --svg | --png FILE] FEN`: draw a position with square numbers, as text,
//! an SVG document on stdout, or a PNG file.
use super::CliResult;
use checkers_egdb::{Color, Position};

/// Arguments of `egdb show`.
#[derive(clap::Args)]
pub struct Args {
    /// Position in PDN FEN, e.g. `W:W18,24,K27:B12,K22`.
    pub fen: String,
    /// Draw with ASCII letters (`b` `B` black man/king, `w` `W` white man/king) instead of the
    /// Unicode checkers glyphs U+26C0-U+26C3.
    #[arg(long, conflicts_with_all = ["svg", "png"])]
    pub ascii: bool,
    /// Print an SVG picture (vector pieces, square numbers 1-32) instead of text.
    #[arg(long, conflicts_with = "png")]
    pub svg: bool,
    /// Write a PNG picture to this file (written atomically) instead of printing text.
    #[arg(long, value_name = "FILE")]
    pub png: Option<std::path::PathBuf>,
}

/// Render `pos` as text in the standard diagram orientation: Black's back rank (squares 1-4)
/// on top, White's (29-32) at the bottom, squares numbered left to right. Each dark square shows
/// its piece, or its number when empty; light squares are blank. Ends with the canonical FEN and
/// the side to move.
pub fn render(pos: &Position, ascii: bool) -> String {
    let glyph = |color: Color, king: bool| -> &'static str {
        match (ascii, color, king) {
            (true, Color::Black, false) => "b",
            (true, Color::Black, true) => "B",
            (true, Color::White, false) => "w",
            (true, Color::White, true) => "W",
            // U+26C0 white man, U+26C1 white king, U+26C2 black man, U+26C3 black king.
            (false, Color::White, false) => "\u{26C0}",
            (false, Color::White, true) => "\u{26C1}",
            (false, Color::Black, false) => "\u{26C2}",
            (false, Color::Black, true) => "\u{26C3}",
        }
    };
    let mut s = String::new();
    for row in 0..8u8 {
        let mut line = String::new();
        for col in 0..8u8 {
            // Even rows have their dark squares on columns 1,3,5,7; odd rows on 0,2,4,6.
            let dark = (row + col) % 2 == 1;
            if !dark {
                line.push_str("   ");
                continue;
            }
            let sq = 4 * row + col / 2 + 1;
            let bit = 1u32 << (sq - 1);
            let cell = if pos.black & bit != 0 {
                format!(" {} ", glyph(Color::Black, pos.kings & bit != 0))
            } else if pos.white & bit != 0 {
                format!(" {} ", glyph(Color::White, pos.kings & bit != 0))
            } else {
                format!("{sq:>2} ")
            };
            line.push_str(&cell);
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s.push_str(&format!("FEN: {}\n", pos.to_fen()));
    s.push_str(&format!(
        "{} to move\n",
        match pos.side {
            Color::Black => "Black",
            Color::White => "White",
        }
    ));
    s
}

/// Run `egdb show`.
pub fn run(args: Args) -> CliResult {
    let pos = Position::from_fen(&args.fen)?;
    if args.svg {
        print!("{}", super::svg::board_svg(&pos));
    } else if let Some(path) = &args.png {
        let png = super::svg::svg_to_png(&super::svg::board_svg(&pos))?;
        super::write_atomic(path, &png)?;
    } else {
        print!("{}", render(&pos, args.ascii));
    }
    Ok(())
}
