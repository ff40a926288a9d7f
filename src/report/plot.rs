//! Charts for reports, written as SVG and PNG side by side (plotters). Text uses the embedded
//! DejaVu Sans (Bitstream Vera licence, `font/LICENSE-DejaVu.txt`), so plots look the same on a
//! machine without fonts. Files are written under a temporary name and renamed.

use crate::fsio::atomic_write;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::{Path, PathBuf};
use std::sync::Once;

const FONT: &[u8] = include_bytes!("font/DejaVuSans.ttf");
const SIZE: (u32, u32) = (900, 540);
const PALETTE: [RGBColor; 6] =
    [RGBColor(31, 119, 180), RGBColor(214, 39, 40), RGBColor(44, 160, 44), RGBColor(148, 103, 189), RGBColor(255, 127, 14), RGBColor(140, 86, 75)];

/// A plotting failure, one line naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct PlotError {
    pub path: String,
    pub message: String,
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).map_err(|_| ()).expect("embedded font is valid");
    });
}

/// A line (with markers and optional vertical error bars).
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// (low, high) for each point, or empty.
    pub errors: Vec<(f64, f64)>,
}

/// A group of bars (one value per category) with intervals.
#[derive(Clone, Debug, Default)]
pub struct BarSeries {
    pub name: String,
    /// (value, low, high) per category.
    pub values: Vec<(f64, f64, f64)>,
}

/// What to draw.
pub enum Chart<'a> {
    Lines {
        x_label: &'a str,
        y_label: &'a str,
        series: &'a [Series],
        y_range: Option<(f64, f64)>,
        x_log2: bool,
    },
    /// `y_range`: `None` for shares (0 to 100%, room above for the legend); otherwise the
    /// axis's range, for values of any sign (the bars grow from 0 either way).
    Bars {
        y_label: &'a str,
        categories: &'a [String],
        series: &'a [BarSeries],
        markers: &'a [(usize, f64, String)],
        y_range: Option<(f64, f64)>,
    },
}

/// Writes `base.svg` and `base.png`; returns both paths.
pub fn write(base: &Path, title: &str, chart: &Chart<'_>) -> Result<Vec<PathBuf>, PlotError> {
    register_font();
    let svg_path = base.with_extension("svg");
    let png_path = base.with_extension("png");
    let err = |p: &Path, m: String| PlotError { path: p.display().to_string(), message: m };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw(&root, title, chart).map_err(|m| err(&svg_path, m))?;
        root.present().map_err(|e| err(&svg_path, format!("{e:?}")))?;
    }
    atomic_write(&svg_path, svg.as_bytes()).map_err(|e| err(&svg_path, e.to_string()))?;
    let tmp = png_path.with_extension(format!("tmp{}.png", std::process::id()));
    {
        let root = BitMapBackend::new(&tmp, SIZE).into_drawing_area();
        draw(&root, title, chart).map_err(|m| err(&png_path, m))?;
        root.present().map_err(|e| err(&png_path, format!("{e:?}")))?;
    }
    std::fs::rename(&tmp, &png_path).map_err(|e| err(&png_path, e.to_string()))?;
    Ok(vec![svg_path, png_path])
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str, chart: &Chart<'_>) -> Result<(), String> {
    let e = |x: &dyn std::fmt::Debug| format!("{x:?}");
    root.fill(&WHITE).map_err(|x| e(&x))?;
    match chart {
        Chart::Lines { x_label, y_label, series, y_range, x_log2 } => {
            let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
            let (mut x0, mut x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
            if !x0.is_finite() {
                (x0, x1) = (0.0, 1.0);
            }
            if x1 <= x0 {
                x1 = x0 + 1.0;
            }
            let (y0, y1) = y_range.unwrap_or_else(|| {
                let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1).chain(s.errors.iter().flat_map(|&(l, h)| [l, h])));
                let (a, b) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| (a.min(y), b.max(y)));
                if !a.is_finite() {
                    (0.0, 1.0)
                } else {
                    let pad = ((b - a) * 0.08).max(1e-6);
                    (a - pad, b + pad)
                }
            });
            let pad = (x1 - x0) * 0.04;
            let mut c = ChartBuilder::on(root)
                .caption(title, ("sans-serif", 22))
                .margin(12)
                .x_label_area_size(45)
                .y_label_area_size(60)
                .build_cartesian_2d((x0 - pad)..(x1 + pad), y0..y1)
                .map_err(|x| e(&x))?;
            let fmt_x = |x: &f64| {
                if *x_log2 {
                    format!("{}", 2f64.powf(*x).round())
                } else if x.fract() == 0.0 {
                    format!("{x:.0}")
                } else {
                    format!("{x:.1}")
                }
            };
            c.configure_mesh().x_desc(*x_label).y_desc(*y_label).x_label_formatter(&fmt_x).draw().map_err(|x| e(&x))?;
            for (i, s) in series.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
                c.draw_series(LineSeries::new(s.points.clone(), color.stroke_width(2)))
                    .map_err(|x| e(&x))?
                    .label(s.name.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
                c.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|x| e(&x))?;
                if !s.errors.is_empty() {
                    c.draw_series(s.points.iter().zip(&s.errors).map(|(&(x, y), &(l, h))| ErrorBar::new_vertical(x, l, y, h, color.stroke_width(1), 8)))
                        .map_err(|x| e(&x))?;
                }
            }
            c.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw().map_err(|x| e(&x))?;
        }
        Chart::Bars { y_label, categories, series, markers, y_range } => {
            let n = categories.len().max(1) as f64;
            let k = series.len().max(1) as f64;
            let shares = y_range.is_none();
            let (y0, y1) = y_range.unwrap_or((0.0, 1.25));
            let mut c = ChartBuilder::on(root)
                .caption(title, ("sans-serif", 22))
                .margin(12)
                .x_label_area_size(45)
                .y_label_area_size(60)
                .build_cartesian_2d(0.0..n, y0..y1)
                .map_err(|x| e(&x))?;
            let cats = categories.to_vec();
            let fmt = move |x: &f64| {
                let i = x.floor() as usize;
                if (x - i as f64 - 0.5).abs() < 1e-6 {
                    cats.get(i).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            };
            c.configure_mesh()
                .disable_x_mesh()
                .x_labels(2 * categories.len() + 1)
                .x_label_formatter(&fmt)
                .y_desc(*y_label)
                .y_label_formatter(&|y| match shares {
                    true if *y <= 1.0 + 1e-9 => format!("{:.0}%", y * 100.0),
                    true => String::new(),
                    false => format!("{y:.1}"),
                })
                .draw()
                .map_err(|x| e(&x))?;
            let width = 0.8 / k;
            for (j, s) in series.iter().enumerate() {
                let color = PALETTE[j % PALETTE.len()];
                let left = |i: usize| i as f64 + 0.1 + j as f64 * width;
                c.draw_series(
                    s.values.iter().enumerate().map(|(i, &(v, _, _))| Rectangle::new([(left(i), 0.0), (left(i) + width * 0.9, v)], color.mix(0.8).filled())),
                )
                .map_err(|x| e(&x))?
                .label(s.name.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
                c.draw_series(
                    s.values.iter().enumerate().map(|(i, &(v, l, h))| ErrorBar::new_vertical(left(i) + width * 0.45, l, v, h, BLACK.stroke_width(1), 8)),
                )
                .map_err(|x| e(&x))?;
            }
            if !markers.is_empty() {
                c.draw_series(markers.iter().map(|(i, v, _)| Cross::new((*i as f64 + 0.5, *v), 7, BLACK.stroke_width(3))))
                    .map_err(|x| e(&x))?
                    .label("human play (defenders)")
                    .legend(|(x, y)| Cross::new((x + 7, y), 5, BLACK.stroke_width(2)));
            }
            // Above the 100% line, clear of the bars and the human markers.
            c.configure_series_labels()
                .position(SeriesLabelPosition::UpperMiddle)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|x| e(&x))?;
        }
    }
    Ok(())
}
