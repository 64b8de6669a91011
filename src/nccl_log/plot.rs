//! `nccl-log --plot FILE.svg`: bus bandwidth against message size (log scale), one
//! curve per table read, with the line rate and the calibration row's healthy band, so
//! that two runs compare at a glance.
//!
//! Drawn with plotters' SVG backend alone (no font or bitmap backend: text is SVG
//! `<text>`, which the viewer lays out). Each curve is one `<polyline>` of stroke width
//! [`CURVE_WIDTH`]; legends are swatches, not lines, so the curves are the only
//! polylines of that width.

use plotters::prelude::*;

use super::verdict::Verdict;
use crate::diagnostics::escape::{cut, printable};

pub const CURVE_WIDTH: u32 = 2;
pub const WIDTH: u32 = 960;
pub const HEIGHT: u32 = 560;
pub const X_LABEL: &str = "message size (bytes, log scale)";
pub const Y_LABEL: &str = "bus bandwidth (GB/s)";

/// Colour-blind safe (Okabe and Ito), one per curve in turn.
const COLOURS: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(0, 0, 0),
];

/// One curve: its label and (size, best bus bandwidth) points, by size.
struct Curve {
    label: String,
    points: Vec<(f64, f64)>,
}

/// The SVG, or why there is nothing to draw.
pub fn svg(verdict: &Verdict) -> Result<String, String> {
    let curves: Vec<Curve> = verdict
        .sweeps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let mut points: Vec<(f64, f64)> = s
                .rows
                .iter()
                .filter(|r| r.size > 0)
                .filter_map(|r| Some((r.size as f64, r.best_busbw()?)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            points.dedup_by(|a, b| a.0 == b.0);
            let same_file = verdict.sweeps.iter().filter(|o| o.file == s.file).count();
            // The file's name, not its directories: the legend has room for one line.
            let name = std::path::Path::new(&s.file)
                .file_name()
                .map_or(s.file.clone(), |n| n.to_string_lossy().into_owned());
            let mut label = printable(&cut(&name, 60)).into_owned();
            if same_file > 1 {
                label += &format!(" (table {})", i + 1);
            }
            if let Some(c) = &s.collective {
                label += &format!(" {}", printable(&cut(c, 24)));
            }
            (!points.is_empty()).then_some(Curve { label, points })
        })
        .collect();
    if curves.is_empty() {
        return Err("the input has no nccl-tests table to plot".to_owned());
    }
    let (mut x0, mut x1) = curves
        .iter()
        .flat_map(|c| &c.points)
        .fold((f64::MAX, 0.0f64), |(lo, hi), (x, _)| {
            (lo.min(*x), hi.max(*x))
        });
    if x1 <= x0 {
        (x0, x1) = (x0 / 2.0, x1 * 2.0);
    }
    let peak = curves
        .iter()
        .flat_map(|c| &c.points)
        .map(|p| p.1)
        .fold(0.0, f64::max);
    let b = verdict.bandwidth.as_ref();
    let line_rate = b.and_then(|b| b.line_rate);
    let band = b.and_then(|b| {
        let c = b.calibration.as_ref()?;
        let r = b.line_rate?;
        Some((r * c.healthy_share, r * c.ceiling_share, c.row))
    });
    let top = [Some(peak), line_rate, band.map(|b| b.1)]
        .into_iter()
        .flatten()
        .fold(1.0, f64::max)
        * 1.1;
    let mut out = String::new();
    draw(&mut out, &curves, (x0, x1), top, line_rate, band).map_err(|e| e.to_string())?;
    Ok(out)
}

fn draw(
    out: &mut String,
    curves: &[Curve],
    (x0, x1): (f64, f64),
    top: f64,
    line_rate: Option<f64>,
    band: Option<(f64, f64, &str)>,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("nccl-tests bus bandwidth", ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d((x0..x1).log_scale(), 0f64..top)?;
    chart
        .configure_mesh()
        .x_desc(X_LABEL)
        .y_desc(Y_LABEL)
        .x_label_formatter(&|v| size_label(*v))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    if let Some((lo, hi, row)) = band {
        let colour = RGBColor(0, 158, 115).mix(0.15);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x0, lo), (x1, hi.min(top))],
                colour.filled(),
            )))?
            .label(format!("healthy band (calibration row {row})"))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], colour.filled()));
    }
    if let Some(rate) = line_rate {
        let red = RGBColor(200, 0, 0);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x0, rate), (x1, rate)],
                red.stroke_width(1),
            )))?
            .label(format!("line rate {rate} GB/s"))
            .legend(move |(x, y)| Rectangle::new([(x, y - 1), (x + 16, y + 1)], red.filled()));
    }
    for (i, curve) in curves.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(
                curve.points.iter().copied(),
                colour.stroke_width(CURVE_WIDTH),
            ))?
            .label(curve.label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 3), (x + 16, y + 3)], colour.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// `8`, `4K`, `128M`, `8G` (binary units, as nccl-tests' -b/-e take them).
fn size_label(bytes: f64) -> String {
    for (shift, unit) in [(30, "G"), (20, "M"), (10, "K")] {
        let scale = (1u64 << shift) as f64;
        if bytes >= scale {
            let v = bytes / scale;
            return if (v - v.round()).abs() < 0.05 {
                format!("{}{unit}", v.round())
            } else {
                format!("{v:.1}{unit}")
            };
        }
    }
    format!("{}", bytes.round())
}

#[cfg(test)]
mod tests {
    use super::size_label;

    #[test]
    fn sizes_read_as_nccl_tests_takes_them() {
        assert_eq!(size_label(8.0), "8");
        assert_eq!(size_label(4096.0), "4K");
        assert_eq!(size_label(134217728.0), "128M");
        assert_eq!(size_label(8589934592.0), "8G");
        assert_eq!(size_label(1.5 * 1048576.0), "1.5M");
    }
}
