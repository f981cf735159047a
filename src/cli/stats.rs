//! `egdb stats`: per-material statistics from the table headers. See docs/cli.md.
use super::CliResult;
use checkers_egdb::{material_stats, missing_slices, read_dir_info, MaterialStats};
use std::path::PathBuf;

/// Arguments of `egdb stats`.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory.
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Print a JSON array instead of text lines.
    #[arg(long)]
    pub json: bool,
    /// Also write an SVG plot (win/draw/loss shares per material and side to move, the longest
    /// resolution marked) to this file (written atomically).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// List the longest distance to conversion instead, per material and side to move, with
    /// one position attaining it: `bm bk wm wk stm longest_win FEN longest_loss FEN` (`-` when
    /// there is none); needs the `.dtc` files of `egdb build --dtc`. Not with --plot (the
    /// chart shows the win/draw/loss statistics).
    #[arg(long, conflicts_with = "plot")]
    pub dtc: bool,
    /// List the longest depth to win instead (plies to the end of the game), per material and
    /// side to move, with one position attaining it, in the shape of `--dtc`; needs the
    /// `.dtw` files of `egdb build --dtw`. Not with --plot or --dtc.
    #[arg(long, conflicts_with_all = ["plot", "dtc"])]
    pub dtw: bool,
}

/// Label of one statistics row: `bm bk wm wk` digits and the side to move, e.g. `1101 B`.
fn row_label(s: &MaterialStats) -> String {
    format!("{}{}{}{} {}", s.bm, s.bk, s.wm, s.wk, s.stm)
}

/// The SVG plot of `stats` (plotters, SVG backend): one horizontal bar per material and side to
/// move split into wins (green), draws (grey) and losses (red) of the side to move, each bar
/// labelled with its material and ending with `longest N` (the longest resolution in plies).
/// Materials where one side has no piece (decided before any move) are left out.
///
/// # Errors
/// A drawing error from plotters.
pub fn plot_svg(
    stats: &[MaterialStats],
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    use plotters::prelude::*;
    // A side without pieces has already lost: those rows are all loss or all win, left out.
    let stats: Vec<&MaterialStats> = stats
        .iter()
        .filter(|s| s.bm + s.bk > 0 && s.wm + s.wk > 0)
        .collect();
    let n = stats.len().max(1);
    let height = 110 + 16 * n as u32;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (900, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Win (green) / draw (grey) / loss (red) for the side to move; material bm bk wm wk, side; longest resolution in plies",
                ("sans-serif", 18),
            )
            .margin(10)
            .x_label_area_size(30)
            .build_cartesian_2d(-0.22f64..1.3f64, 0f64..n as f64)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_x_mesh()
            .y_labels(0)
            .x_labels(12)
            .x_label_formatter(&|x| {
                if *x < -1e-9 || *x > 1.0 + 1e-9 {
                    String::new()
                } else {
                    format!("{:.0}%", x * 100.0)
                }
            })
            .draw()
            .map_err(|e| e.to_string())?;
        let green = RGBColor(26, 127, 55);
        let grey = RGBColor(170, 170, 170);
        let red = RGBColor(179, 38, 30);
        let font = ("sans-serif", 12).into_font();
        for (i, s) in stats.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let total = s.positions.max(1) as f64;
            let (w, d) = (s.wins as f64 / total, s.draws as f64 / total);
            let l = s.losses as f64 / total;
            let bars = [(0.0, w, green), (w, w + d, grey), (w + d, w + d + l, red)];
            chart
                .draw_series(
                    bars.iter().filter(|b| b.1 > b.0).map(|&(a, b, c)| {
                        Rectangle::new([(a, y + 0.12), (b, y + 0.88)], c.filled())
                    }),
                )
                .map_err(|e| e.to_string())?;
            chart
                .draw_series([
                    Text::new(row_label(s), (-0.21, y + 0.8), font.clone()),
                    Text::new(
                        format!(
                            "longest {}{}",
                            s.longest,
                            if s.complete { "" } else { " (partial)" }
                        ),
                        (1.02, y + 0.8),
                        font.clone(),
                    ),
                ])
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(buf)
}

/// Run `egdb stats`: one line per material and side to move,
/// `bm bk wm wk stm positions wins losses draws longest`.
pub fn run(args: Args) -> CliResult {
    let infos = read_dir_info(&args.dir)?;
    // One variant per directory: a mix is refused before anything is summed. The rules are
    // named on stderr (stdout keeps the rows' shape).
    if let Some(id) = checkers_egdb::format::dir_rules(&args.dir)? {
        match checkers_egdb::rules::Variant::from_id(id) {
            Some(v) => eprintln!("egdb: rules: {v}"),
            None => eprintln!("egdb: rules: unknown (rules id {id})"),
        }
    }
    if infos.is_empty() {
        return Err(format!(
            "no table files in {} (run egdb build first)",
            args.dir.display()
        )
        .into());
    }
    if args.dtc || args.dtw {
        let (rows, ext, what) = if args.dtw {
            (
                checkers_egdb::longest_dtw(&args.dir)?,
                "dtw",
                "depth-to-win",
            )
        } else {
            (checkers_egdb::longest_dtc(&args.dir)?, "dtc", "distance")
        };
        if rows.is_empty() {
            return Err(format!(
                "no {what} files (*.{ext}) in {} (run egdb build --{ext} first)",
                args.dir.display()
            )
            .into());
        }
        if args.json {
            println!("{}", serde_json::to_string_pretty(&rows)?);
        } else {
            println!("bm bk wm wk stm longest_win fen longest_loss fen");
            let col = |x: &Option<(u32, String)>| match x {
                Some((d, f)) => format!("{d} {f}"),
                None => "- -".into(),
            };
            for r in &rows {
                println!(
                    "{} {} {} {} {} {} {}",
                    r.bm,
                    r.bk,
                    r.wm,
                    r.wk,
                    r.stm,
                    col(&r.longest_win),
                    col(&r.longest_loss)
                );
            }
        }
        // Slices with a WLD file but no distance file: their materials' rows above are
        // partial or absent; say so and fail, as for missing WLD files.
        let no_dtc: Vec<String> = infos
            .iter()
            .filter(|f| {
                let kind = if args.dtw {
                    checkers_egdb::format::FileKind::Dtw
                } else {
                    checkers_egdb::format::FileKind::Dtc
                };
                // Its own file or its member of a material file (`egdb pack`).
                !matches!(
                    checkers_egdb::format::locate(&args.dir, &f.slice, kind),
                    Ok(Some(_))
                )
            })
            .map(|f| f.slice.to_string())
            .collect();
        if let Some(first) = no_dtc.first() {
            return Err(format!(
                "{what} files incomplete: {} slices have a .egdb file but no .{ext} file (first \
                 {first}; run egdb build --{ext}); the rows above leave them out",
                no_dtc.len()
            )
            .into());
        }
        return Ok(());
    }
    let stats = material_stats(&infos);
    if let Some(path) = &args.plot {
        super::write_atomic(path, plot_svg(&stats)?.as_bytes())?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
    } else {
        println!("bm bk wm wk stm positions wins losses draws longest");
        for s in &stats {
            println!(
                "{} {} {} {} {} {} {} {} {} {}",
                s.bm, s.bk, s.wm, s.wk, s.stm, s.positions, s.wins, s.losses, s.draws, s.longest
            );
        }
    }
    let missing = missing_slices(&infos);
    if let Some(first) = missing.first() {
        let partial: Vec<String> = stats
            .iter()
            .filter(|s| !s.complete)
            .map(|s| format!("{}{}{}{} {}", s.bm, s.bk, s.wm, s.wk, s.stm))
            .collect();
        return Err(format!(
            "tables incomplete: {} slice files missing (first {first}; see egdb info --slices); \
             partial totals above for: {}; materials with no file at all are not listed",
            missing.len(),
            if partial.is_empty() {
                "none".to_string()
            } else {
                partial.join(", ")
            }
        )
        .into());
    }
    Ok(())
}
