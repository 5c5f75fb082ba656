//! PNG line charts of benchmark results (plotters, with an embedded DejaVu font so no system
//! font library is needed).

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use plotters::prelude::*;

/// One line of a chart.
pub struct Series {
    /// Legend label.
    pub name: String,
    /// (x, y) points in x order.
    pub points: Vec<(f64, f64)>,
}

fn register_font() {
    // Registering twice is harmless; ignore the result after the first time.
    let _ =
        plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
}

/// Draws `series` as lines into a 1200x700 PNG at `path`.
pub fn lines(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<()> {
    register_font();
    let x_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0f64, f64::max);
    let y_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.1;
    let root = BitMapBackend::new(path, (1200, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 26))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(|e| anyhow!("{e}"))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    let palette = [&BLUE, &RED, &GREEN, &MAGENTA, &CYAN, &BLACK];
    for (i, s) in series.iter().enumerate() {
        let color = palette.get(i % palette.len()).copied().unwrap_or(&BLACK);
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| anyhow!("{e}"))?
            .label(s.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 18))
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    root.present()
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("write chart {}", path.display()))?;
    Ok(())
}

/// Draws grouped bars (one group per workload, one bar per engine) of absolute values on a
/// log scale, so workloads that differ by orders of magnitude fit one 1400x750 PNG. Zero or
/// negative values are left out.
pub fn log_bars(
    path: &Path,
    title: &str,
    y_label: &str,
    groups: &[(String, Vec<(String, f64)>)],
) -> Result<()> {
    register_font();
    let engines: Vec<String> = groups
        .first()
        .map(|g| g.1.iter().map(|e| e.0.clone()).collect())
        .unwrap_or_default();
    let positive = || {
        groups
            .iter()
            .flat_map(|g| g.1.iter().map(|v| v.1))
            .filter(|v| *v > 0.0)
    };
    let lo = 10f64.powf(positive().fold(f64::INFINITY, f64::min).log10().floor());
    let hi = 10f64.powf(positive().fold(1.0, f64::max).log10().ceil());
    let lo = if lo.is_finite() && lo < hi {
        lo
    } else {
        hi / 10.0
    };
    let root = BitMapBackend::new(path, (1400, 750)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let n = groups.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(-0.5..n - 0.5, (lo..hi).log_scale())
        .map_err(|e| anyhow!("{e}"))?;
    let names: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(y_label)
        .x_labels(groups.len().max(1) * 2 + 1)
        .x_label_formatter(&|x| {
            // Groups are centred on integers; other ticks stay blank.
            if (x - x.round()).abs() > 1e-6 || *x < 0.0 {
                return String::new();
            }
            names.get(x.round() as usize).cloned().unwrap_or_default()
        })
        .y_label_formatter(&|y| {
            if *y >= 1e6 {
                format!("{:.0}M", y / 1e6)
            } else if *y >= 1e3 {
                format!("{:.0}k", y / 1e3)
            } else {
                format!("{y}")
            }
        })
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    let palette = [&BLUE, &RED, &GREEN, &MAGENTA];
    let width = 0.8 / engines.len().max(1) as f64;
    for (ei, engine) in engines.iter().enumerate() {
        let color = palette.get(ei % palette.len()).copied().unwrap_or(&BLACK);
        let bars = groups.iter().enumerate().filter_map(|(gi, (_, vals))| {
            let v = vals.get(ei)?.1;
            if v <= 0.0 {
                return None;
            }
            let x0 = gi as f64 - 0.4 + ei as f64 * width;
            Some(Rectangle::new(
                [(x0, lo), (x0 + width * 0.9, v)],
                color.filled(),
            ))
        });
        chart
            .draw_series(bars)
            .map_err(|e| anyhow!("{e}"))?
            .label(engine.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 18))
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    root.present()
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("write chart {}", path.display()))?;
    Ok(())
}
