//! Board pictures: `egdb show --svg` / `--png`. Pieces are vector shapes (circles, a crown
//! path for kings); square numbers are SVG text. No Unicode glyphs.
use checkers_egdb::{Color, Position};
use std::fmt::Write;

/// Size of one square in SVG units; the board is `8 * SQ` square plus a caption band.
const SQ: u32 = 60;
/// Height of the caption band below the board.
const CAPTION: u32 = 28;

/// (column, row) of square `s` (1-32) in the standard diagram orientation: Black's back rank
/// (1-4) on top; even rows hold their dark squares on columns 1, 3, 5, 7.
pub fn square_xy(s: u8) -> (u32, u32) {
    let r = (s as u32 - 1) / 4;
    let k = (s as u32 - 1) % 4;
    let c = if r.is_multiple_of(2) {
        2 * k + 1
    } else {
        2 * k
    };
    (c, r)
}

/// The position as a standalone SVG document (480 x 508 units): board, square numbers 1-32,
/// men as discs, kings as discs with a crown, a caption with the side to move and the FEN.
pub fn board_svg(pos: &Position) -> String {
    let w = 8 * SQ;
    let h = 8 * SQ + CAPTION;
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">"##
    );
    let _ = write!(s, r##"<rect width="{w}" height="{h}" fill="#ffffff"/>"##);
    for r in 0..8 {
        for c in 0..8 {
            let fill = if (r + c) % 2 == 1 {
                "#7a5230"
            } else {
                "#f0d9b5"
            };
            let _ = write!(
                s,
                r##"<rect x="{}" y="{}" width="{SQ}" height="{SQ}" fill="{fill}"/>"##,
                c * SQ,
                r * SQ
            );
        }
    }
    for sq in 1..=32u8 {
        let (c, r) = square_xy(sq);
        let (x, y) = (c * SQ, r * SQ);
        let _ = write!(
            s,
            r##"<text x="{}" y="{}" font-family="DejaVu Sans, Arial, sans-serif" font-size="12" fill="#f0d9b5">{sq}</text>"##,
            x + 3,
            y + 13
        );
        let bit = 1u32 << (sq - 1);
        let color = if pos.black & bit != 0 {
            Color::Black
        } else if pos.white & bit != 0 {
            Color::White
        } else {
            continue;
        };
        let (fill, edge, ring) = match color {
            Color::Black => ("#1c1c1c", "#000000", "#555555"),
            Color::White => ("#ffffff", "#444444", "#bbbbbb"),
        };
        let (cx, cy) = (x + SQ / 2, y + SQ / 2 + 2);
        let _ = write!(
            s,
            r##"<circle cx="{cx}" cy="{cy}" r="23" fill="{fill}" stroke="{edge}" stroke-width="2"/><circle cx="{cx}" cy="{cy}" r="17" fill="none" stroke="{ring}" stroke-width="1.5"/>"##
        );
        if pos.kings & bit != 0 {
            let gold = if color == Color::Black {
                "#d4af37"
            } else {
                "#c8102e"
            };
            let (cx, cy) = (cx as i32, cy as i32);
            let _ = write!(
                s,
                r##"<path d="M{},{} L{},{} L{},{} L{},{} L{},{} L{},{} L{},{} Z" fill="{gold}" stroke="{edge}" stroke-width="1"/>"##,
                cx - 14,
                cy + 8,
                cx - 16,
                cy - 8,
                cx - 7,
                cy,
                cx,
                cy - 12,
                cx + 7,
                cy,
                cx + 16,
                cy - 8,
                cx + 14,
                cy + 8
            );
        }
    }
    let side = match pos.side {
        Color::Black => "Black",
        Color::White => "White",
    };
    let _ = write!(
        s,
        r##"<text x="6" y="{}" font-family="DejaVu Sans, Arial, sans-serif" font-size="14" fill="#222222">{side} to move   {}</text></svg>"##,
        8 * SQ + 19,
        pos.to_fen()
    );
    s.push('\n');
    s
}

/// Rasterise an SVG document to PNG bytes with resvg (system fonts for the text).
///
/// # Errors
/// An SVG resvg cannot parse, or a PNG that cannot be encoded.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, String> {
    let mut opt = resvg::usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    let tree = resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| format!("bad SVG: {e}"))?;
    let size = tree.size().to_int_size();
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("empty picture")?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| format!("cannot encode PNG: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_follow_the_diagram() {
        // Square 1 is on the top row, second column; 5 on the second row, first column;
        // 32 bottom right corner's dark square is column 6 of row 7.
        assert_eq!(square_xy(1), (1, 0));
        assert_eq!(square_xy(4), (7, 0));
        assert_eq!(square_xy(5), (0, 1));
        assert_eq!(square_xy(29), (0, 7));
        assert_eq!(square_xy(32), (6, 7));
    }

    #[test]
    fn svg_has_every_number_and_the_pieces() {
        let p = Position::from_fen("W:WK32,21:B1,K5").unwrap();
        let svg = board_svg(&p);
        for sq in 1..=32 {
            assert!(svg.contains(&format!(">{sq}</text>")), "square {sq}");
        }
        // Four pieces: two circles each; two kings: two crown paths.
        assert_eq!(svg.matches("<circle").count(), 8);
        assert_eq!(svg.matches("<path").count(), 2);
        assert!(svg.is_ascii(), "no Unicode glyphs");
        let png = svg_to_png(&svg).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
}
