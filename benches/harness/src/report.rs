//! Number formatting, medians and the phrases and tables shared by the benchmarks'
//! reports.

use std::fmt::Write as _;

use crate::Engine;

/// The median (mean of the middle two for an even count); None for no values. Values that
/// are not finite are left out.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return None;
    }
    if n % 2 == 1 {
        v.get(n / 2).copied()
    } else {
        Some((v.get(n / 2 - 1)? + v.get(n / 2)?) / 2.0)
    }
}

/// Bytes as `12.3 MiB`.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// A rate or count: no decimals from 100 up, one below; `-` for none.
pub fn num(v: Option<f64>) -> String {
    match v {
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.1}"),
        None => "-".into(),
    }
}

/// Milliseconds: one decimal from 10 up, two below; `-` for none.
pub fn ms(v: Option<f64>) -> String {
    match v {
        Some(x) if x >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
        None => "-".into(),
    }
}

/// `a / b` as `1.23x`; `-` when either is missing or `b` is not positive.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "-".into(),
    }
}

/// A CSV cell: three decimals, empty for none.
pub fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x:.3}"))
}

/// The report's phrase for the memory cap: the cgroup limit (and the load's, when it
/// differs), or a bold warning when there is none.
pub fn cap_text(cap: Option<u64>, load_cap: Option<u64>) -> String {
    match cap {
        Some(c) => format!(
            "each server in a memory cgroup capped at {}{}",
            mib(c),
            load_cap
                .filter(|l| *l != c)
                .map_or(String::new(), |l| format!(
                    " (**{} while loading**)",
                    mib(l)
                ))
        ),
        None => "**NO memory cap** (the OS page cache may hold the data: not an I/O-bound \
                 result)"
            .to_string(),
    }
}

/// The report's phrase for the durability settings.
pub fn durability_text(durable: bool) -> &'static str {
    if durable {
        "log synced at every commit (InnoDB/MyRocks flush_log_at_trx_commit=1, \
         riptide_sync_mode=full)"
    } else {
        "no fsync per commit, log synced about once a second (InnoDB/MyRocks \
         flush_log_at_trx_commit=2, riptide_sync_mode=interval)"
    }
}

/// Appends a markdown table: a header cell `first`, one column per engine, then, when
/// Riptide is among `engines`, one `Riptide / <peer>` ratio column per other engine; one
/// row per `(label, values in engine order)`, the values written with `cell`.
pub fn engine_table(
    s: &mut String,
    first: &str,
    engines: &[Engine],
    rows: &[(String, Vec<Option<f64>>)],
    cell: fn(Option<f64>) -> String,
) {
    let riptide = engines.iter().position(|e| *e == Engine::Riptide);
    let peers: Vec<usize> = (0..engines.len()).filter(|i| Some(*i) != riptide).collect();
    let mut header = format!("| {first} |");
    let mut rule = String::from("|---|");
    for e in engines {
        let _ = write!(header, " {} |", e.display());
        rule.push_str("---:|");
    }
    if riptide.is_some() {
        for &p in &peers {
            let name = engines.get(p).map_or("", |e| e.display());
            let _ = write!(header, " Riptide / {name} |");
            rule.push_str("---:|");
        }
    }
    let _ = writeln!(s, "{header}\n{rule}");
    for (label, values) in rows {
        let mut line = format!("| {label} |");
        for v in values {
            let _ = write!(line, " {} |", cell(*v));
        }
        if let Some(r) = riptide {
            let mine = values.get(r).copied().flatten();
            for &p in &peers {
                let _ = write!(line, " {} |", ratio(mine, values.get(p).copied().flatten()));
            }
        }
        let _ = writeln!(s, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
    }

    #[test]
    fn formats() {
        assert_eq!(num(Some(1234.5)), "1234");
        assert_eq!(num(Some(12.34)), "12.3");
        assert_eq!(ms(Some(12.34)), "12.3");
        assert_eq!(ms(Some(1.234)), "1.23");
        assert_eq!(ratio(Some(3.0), Some(2.0)), "1.50x");
        assert_eq!(ratio(Some(3.0), Some(0.0)), "-");
        assert_eq!(mib(3 * 1024 * 1024 / 2), "1.5 MiB");
        assert_eq!(opt(None), "");
        assert!(cap_text(None, None).starts_with("**NO memory cap**"));
        assert_eq!(
            cap_text(Some(1 << 20), Some(2 << 20)),
            "each server in a memory cgroup capped at 1.0 MiB (**2.0 MiB while loading**)"
        );
        assert!(durability_text(true).contains("=1"));
    }

    #[test]
    fn engine_table_has_ratios_to_each_peer() {
        let mut s = String::new();
        engine_table(
            &mut s,
            "workload",
            &[Engine::Riptide, Engine::Innodb, Engine::Rocksdb],
            &[("a".into(), vec![Some(300.0), Some(100.0), None])],
            num,
        );
        assert_eq!(
            s,
            "| workload | Riptide | InnoDB | MyRocks | Riptide / InnoDB | Riptide / MyRocks |\n\
             |---|---:|---:|---:|---:|---:|\n| a | 300 | 100 | - | 3.00x | - |\n"
        );
        let mut s = String::new();
        engine_table(&mut s, "x", &[Engine::Innodb], &[], num);
        assert_eq!(s, "| x | InnoDB |\n|---|---:|\n");
    }
}
