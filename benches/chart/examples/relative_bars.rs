//! Draws a [`riptide_chart::relative_bars`] chart from a tab-separated file of
//! `group<TAB>series<TAB>value` lines (groups and series in first-seen order; `#` starts a
//! comment), for figures put together from several runs (a before/after next to the peers)
//! in `benches/RESULTS.md`:
//!
//! `cargo run -p riptide-chart --example relative_bars -- OUT.png TITLE WHAT BASE IN.tsv`

use std::path::Path;

use anyhow::{Context, Result, bail};
use riptide_chart::{Group, relative_bars};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [out, title, what, base, input] = args.as_slice() else {
        bail!("usage: relative_bars OUT.png TITLE WHAT BASE IN.tsv");
    };
    let text = std::fs::read_to_string(input).with_context(|| format!("read {input}"))?;
    let mut groups: Vec<Group> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let [group, series, value] = line.split('\t').collect::<Vec<_>>()[..] else {
            bail!("{input}:{}: expected group<TAB>series<TAB>value", n + 1);
        };
        let value: f64 = value
            .parse()
            .with_context(|| format!("{input}:{}: value {value:?}", n + 1))?;
        match groups.iter_mut().find(|(g, _)| g == group) {
            Some((_, vals)) => vals.push((series.to_string(), value)),
            None => groups.push((group.to_string(), vec![(series.to_string(), value)])),
        }
    }
    relative_bars(Path::new(out), title, what, base, &groups)
}
