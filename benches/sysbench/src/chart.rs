//! The PNG chart: one group of bars per workload, one bar per engine, TPS relative to a base
//! engine (plotters, with an embedded DejaVu font so no system font library is needed).

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use plotters::prelude::*;

/// One workload's bars: (engine, TPS) in legend order.
pub type Group = (String, Vec<(String, f64)>);

/// Draws `groups` into a 1400x750 PNG at `path`, each TPS divided by the TPS of engine
/// `base` in the same group (so `base` is 1.0), with the ratio written above each bar.
pub fn relative_bars(path: &Path, title: &str, base: &str, groups: &[Group]) -> Result<()> {
    let _ =
        plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    let engines: Vec<String> = groups
        .iter()
        .flat_map(|g| g.1.iter().map(|e| e.0.clone()))
        .fold(Vec::new(), |mut acc, e| {
            if !acc.contains(&e) {
                acc.push(e);
            }
            acc
        });
    let ratio = |vals: &[(String, f64)], engine: &str| -> Option<f64> {
        let b = vals.iter().find(|v| v.0 == base)?.1;
        let v = vals.iter().find(|v| v.0 == engine)?.1;
        (b > 0.0).then_some(v / b)
    };
    let max = groups
        .iter()
        .flat_map(|(_, vals)| engines.iter().filter_map(|e| ratio(vals, e)))
        .fold(1.0f64, f64::max);
    let root = BitMapBackend::new(path, (1400, 750)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let n = groups.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5..n - 0.5, 0.0..max * 1.2)
        .map_err(|e| anyhow!("{e}"))?;
    let names: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(format!("TPS relative to {base} (= 1.0)"))
        .x_labels(groups.len().max(1) * 2 + 1)
        .x_label_formatter(&|x| {
            // Groups sit on integers; other ticks stay blank.
            if (x - x.round()).abs() > 1e-6 || *x < 0.0 {
                return String::new();
            }
            names.get(x.round() as usize).cloned().unwrap_or_default()
        })
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    let palette = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
    ];
    let width = 0.8 / engines.len().max(1) as f64;
    for (ei, engine) in engines.iter().enumerate() {
        let color = palette.get(ei % palette.len()).copied().unwrap_or(BLACK);
        let bars: Vec<(f64, f64)> = groups
            .iter()
            .enumerate()
            .filter_map(|(gi, (_, vals))| {
                let r = ratio(vals, engine)?;
                Some((gi as f64 - 0.4 + ei as f64 * width, r))
            })
            .collect();
        chart
            .draw_series(
                bars.iter().map(|&(x0, r)| {
                    Rectangle::new([(x0, 0.0), (x0 + width * 0.9, r)], color.filled())
                }),
            )
            .map_err(|e| anyhow!("{e}"))?
            .label(engine.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], color.filled()));
        chart
            .draw_series(bars.iter().map(|&(x0, r)| {
                Text::new(
                    format!("{r:.2}"),
                    (x0, r + max * 0.015),
                    ("sans-serif", 12).into_font(),
                )
            }))
            .map_err(|e| anyhow!("{e}"))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    root.present()
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("writing chart {}", path.display()))?;
    Ok(())
}
