//! PNG charts of benchmark results, shared by `benches/compare` (`riptide-bench`) and
//! `benches/sysbench` (`riptide-sysbench`): line charts ([`lines`]) and grouped bars, one
//! group per workload and one bar per engine, either absolute on a log scale ([`log_bars`]) or
//! relative to a base engine ([`relative_bars`]). Drawn with plotters and an embedded DejaVu
//! font, so no system font library is needed.

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

/// One line of a line chart.
pub struct Series {
    /// Legend label.
    pub name: String,
    /// (x, y) points in x order.
    pub points: Vec<(f64, f64)>,
}

/// One group of bars: its label (the workload) and its (engine, value) bars in legend order.
pub type Group = (String, Vec<(String, f64)>);

/// Bar and line colours, in legend order.
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
];

/// The colour of legend entry `i`.
fn color(i: usize) -> RGBColor {
    PALETTE.get(i % PALETTE.len()).copied().unwrap_or(BLACK)
}

/// plotters' errors carry a backend type parameter; this flattens them into `anyhow`.
fn draw_err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("{e}")
}

/// A white `width` x `height` PNG canvas at `path`, with the font registered.
fn canvas(path: &Path, size: (u32, u32)) -> Result<DrawingArea<BitMapBackend<'_>, Shift>> {
    // Registering again is harmless; the result only matters the first time.
    let _ =
        plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(draw_err)?;
    Ok(root)
}

/// Writes the canvas to its file.
fn finish(root: &DrawingArea<BitMapBackend<'_>, Shift>, path: &Path) -> Result<()> {
    root.present()
        .map_err(draw_err)
        .with_context(|| format!("writing chart {}", path.display()))
}

/// The engines of `groups` in order of first appearance (the legend order).
fn engines(groups: &[Group]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in groups.iter().flat_map(|g| g.1.iter().map(|v| &v.0)) {
        if !out.contains(e) {
            out.push(e.clone());
        }
    }
    out
}

/// The value of `engine`'s bar in one group.
fn value(vals: &[(String, f64)], engine: &str) -> Option<f64> {
    vals.iter().find(|v| v.0 == engine).map(|v| v.1)
}

/// The x-axis label at `x` of a grouped-bar chart: groups sit on integers, other ticks blank.
fn group_label(names: &[String], x: f64) -> String {
    if (x - x.round()).abs() > 1e-6 || x < 0.0 {
        return String::new();
    }
    names.get(x.round() as usize).cloned().unwrap_or_default()
}

/// Left edge and width of engine `engine`'s bar in group `group` of `engines` bars.
fn bar_x(group: usize, engine: usize, engines: usize) -> (f64, f64) {
    let width = 0.8 / engines.max(1) as f64;
    (group as f64 - 0.4 + engine as f64 * width, width * 0.9)
}

/// Draws `series` as lines into a 1200x700 PNG at `path`.
pub fn lines(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<()> {
    let x_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0f64, f64::max);
    let y_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.1;
    let root = canvas(path, (1200, 700))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 26))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(draw_err)?;
    for (i, s) in series.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))
            .map_err(draw_err)?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 18))
        .draw()
        .map_err(draw_err)?;
    finish(&root, path)
}

/// Draws grouped bars of absolute values on a log scale into a 1400x750 PNG at `path`, so
/// workloads that differ by orders of magnitude fit one chart. Zero or negative values are
/// left out.
pub fn log_bars(path: &Path, title: &str, y_label: &str, groups: &[Group]) -> Result<()> {
    let engines = engines(groups);
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
    let root = canvas(path, (1400, 750))?;
    let n = groups.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(-0.5..n - 0.5, (lo..hi).log_scale())
        .map_err(draw_err)?;
    let names: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(y_label)
        .x_labels(groups.len().max(1) * 2 + 1)
        .x_label_formatter(&|x| group_label(&names, *x))
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
        .map_err(draw_err)?;
    for (ei, engine) in engines.iter().enumerate() {
        let c = color(ei);
        let bars = groups.iter().enumerate().filter_map(|(gi, (_, vals))| {
            let v = value(vals, engine).filter(|v| *v > 0.0)?;
            let (x0, w) = bar_x(gi, ei, engines.len());
            Some(Rectangle::new([(x0, lo), (x0 + w, v)], c.filled()))
        });
        chart
            .draw_series(bars)
            .map_err(draw_err)?
            .label(engine.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], c.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 18))
        .draw()
        .map_err(draw_err)?;
    finish(&root, path)
}

/// Draws grouped bars into a 1400x750 PNG at `path`, each value divided by the value of
/// engine `base` in the same group (so `base` is 1.0), with the ratio written above each bar;
/// `what` names the values on the y axis ("TPS", "CPU per transaction"). A group without a
/// positive `base` value draws no bars.
pub fn relative_bars(
    path: &Path,
    title: &str,
    what: &str,
    base: &str,
    groups: &[Group],
) -> Result<()> {
    let engines = engines(groups);
    let ratio = |vals: &[(String, f64)], engine: &str| -> Option<f64> {
        let b = value(vals, base)?;
        let v = value(vals, engine)?;
        (b > 0.0).then_some(v / b)
    };
    let max = groups
        .iter()
        .flat_map(|(_, vals)| engines.iter().filter_map(|e| ratio(vals, e)))
        .fold(1.0f64, f64::max);
    let root = canvas(path, (1400, 750))?;
    let n = groups.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5..n - 0.5, 0.0..max * 1.2)
        .map_err(draw_err)?;
    let names: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(format!("{what} relative to {base} (= 1.0)"))
        .x_labels(groups.len().max(1) * 2 + 1)
        .x_label_formatter(&|x| group_label(&names, *x))
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(draw_err)?;
    for (ei, engine) in engines.iter().enumerate() {
        let c = color(ei);
        let bars: Vec<(f64, f64, f64)> = groups
            .iter()
            .enumerate()
            .filter_map(|(gi, (_, vals))| {
                let (x0, w) = bar_x(gi, ei, engines.len());
                Some((x0, w, ratio(vals, engine)?))
            })
            .collect();
        chart
            .draw_series(
                bars.iter()
                    .map(|&(x0, w, r)| Rectangle::new([(x0, 0.0), (x0 + w, r)], c.filled())),
            )
            .map_err(draw_err)?
            .label(engine.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], c.filled()));
        chart
            .draw_series(bars.iter().map(|&(x0, _, r)| {
                Text::new(
                    format!("{r:.2}"),
                    (x0, r + max * 0.015),
                    ("sans-serif", 12).into_font(),
                )
            }))
            .map_err(draw_err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()
        .map_err(draw_err)?;
    finish(&root, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups() -> Vec<Group> {
        vec![
            ("a".into(), vec![("x".into(), 10.0), ("y".into(), 20.0)]),
            ("b".into(), vec![("y".into(), 5.0), ("z".into(), 1.0)]),
        ]
    }

    #[test]
    fn engines_follow_first_appearance() {
        assert_eq!(engines(&groups()), ["x", "y", "z"]);
    }

    #[test]
    fn group_labels_only_on_integers() {
        let names = vec!["a".to_string(), "b".to_string()];
        assert_eq!(group_label(&names, 1.0), "b");
        assert_eq!(group_label(&names, 0.5), "");
        assert_eq!(group_label(&names, -1.0), "");
        assert_eq!(group_label(&names, 2.0), "");
    }

    #[test]
    fn charts_are_written() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("riptide-chart-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let series = [Series {
            name: "s".into(),
            points: vec![(0.0, 1.0), (1.0, 3.0)],
        }];
        lines(&dir.join("l.png"), "t", "x", "y", &series)?;
        log_bars(&dir.join("g.png"), "t", "ops/s", &groups())?;
        relative_bars(&dir.join("r.png"), "t", "TPS", "y", &groups())?;
        for f in ["l.png", "g.png", "r.png"] {
            let len = std::fs::metadata(dir.join(f))?.len();
            assert!(len > 1000, "{f} is only {len} bytes");
        }
        std::fs::remove_dir_all(&dir)?;
        Ok(())
    }
}
