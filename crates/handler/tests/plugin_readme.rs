//! `plugin-shim/README.md` documents what the tables declare: every server option
//! (`server_options()`, the plugin's `riptide_*` system variables) has one row in the
//! "Configuration: system variables" table with its default and range as the table has them,
//! no row names anything else, and every `Riptide_*` status variable the README names is a
//! statistic of `riptide::Statistics::TABLE`. The status variables themselves are not listed
//! there (a new statistic is a change to `stats.rs` only); the README says where they are.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::Path;

use riptide::{OptionType, OptionValue, Statistics};
use riptide_handler::{Scope, ServerOption, server_options};

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugin-shim/README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text of the section that starts with `heading`, up to the next `## ` heading.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(heading)
        .unwrap_or_else(|| panic!("README.md has no section {heading:?}"));
    let rest = &text[start + heading.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// A number as the README writes it: `1,048,576`, `64 MiB`, `4 KiB`, `0`; whatever follows
/// the number and its unit (`(no filter)`, `s`) is a comment.
fn number(cell: &str) -> u64 {
    let mut words = cell.split_whitespace();
    let digits = words.next().unwrap_or("").replace(',', "");
    let n: u64 = digits
        .parse()
        .unwrap_or_else(|e| panic!("{cell:?} does not start with a number: {e}"));
    let scale = match words.next() {
        Some("KiB") => 1 << 10,
        Some("MiB") => 1 << 20,
        Some("GiB") => 1 << 30,
        Some("TiB") => 1 << 40,
        _ => 1,
    };
    n * scale
}

/// The `backticked` words of a cell, in order.
fn quoted(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// Checks one README row against its option; returns what disagrees.
fn check_row(o: &ServerOption, default: &str, range: &str, row: &str) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut expect = |ok: bool, what: String| {
        if !ok {
            wrong.push(format!("riptide_{}: {what}", o.name));
        }
    };
    match (o.value_type, &o.default) {
        (OptionType::Unsigned { min, max, .. }, OptionValue::Unsigned(d)) => {
            expect(
                number(default) == *d,
                format!("default {default:?} is not {d}"),
            );
            let (lo, hi) = range.split_once(" .. ").unwrap_or((range, ""));
            expect(
                number(lo) == min && number(hi) == max,
                format!("range {range:?} is not {min} .. {max}"),
            );
        }
        (OptionType::Float { min, max }, OptionValue::Float(d)) => {
            let float = |cell: &str| -> f64 {
                let word = cell.split_whitespace().next().unwrap_or("");
                word.parse()
                    .unwrap_or_else(|e| panic!("{cell:?} does not start with a number: {e}"))
            };
            expect(
                float(default) == *d,
                format!("default {default:?} is not {d}"),
            );
            let (lo, hi) = range.split_once(" .. ").unwrap_or((range, ""));
            expect(
                float(lo) == min && float(hi) == max,
                format!("range {range:?} is not {min} .. {max}"),
            );
        }
        (OptionType::Enum { names }, OptionValue::Enum(_)) => {
            let d = o.value_type.format(&o.default);
            expect(
                quoted(default).first() == Some(&d.as_str()),
                format!("default {default:?} is not `{d}`"),
            );
            expect(
                quoted(range) == names,
                format!("range {range:?} is not {names:?}"),
            );
        }
        (OptionType::Bool, OptionValue::Bool(_)) => {
            let d = o.value_type.format(&o.default);
            expect(
                quoted(default).first() == Some(&d.as_str()),
                format!("default {default:?} is not `{d}`"),
            );
            expect(
                quoted(range) == ["OFF", "ON"],
                format!("range {range:?} is not `OFF`, `ON`"),
            );
        }
        (OptionType::Text, OptionValue::Text(_)) => {
            expect(
                !default.is_empty() && !range.is_empty(),
                "empty default or range".into(),
            );
        }
        (ty, d) => expect(
            false,
            format!("no README check for a {ty:?} option (default {d:?})"),
        ),
    }
    let session = row.contains("session");
    expect(
        session == (o.scope == Scope::Session),
        format!(
            "the row says session: {session}, the option is {:?}",
            o.scope
        ),
    );
    expect(
        !o.dynamic || row.contains("dynamic"),
        "a dynamic option whose row does not say so".into(),
    );
    wrong
}

#[test]
fn every_system_variable_has_its_row_with_its_default_and_range() {
    let text = readme();
    let table = section(&text, "## Configuration: system variables");
    let mut rows = Vec::new();
    for line in table.lines().filter(|l| l.starts_with("| `riptide_")) {
        let cells: Vec<&str> = line
            .split(" | ")
            .map(|c| c.trim_matches('|').trim())
            .collect();
        assert!(cells.len() >= 4, "README row with too few cells: {line}");
        let name = cells[0].trim_matches('`').trim_start_matches("riptide_");
        rows.push((name.to_string(), cells[1], cells[2], line));
    }
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for (name, default, range, line) in &rows {
        if !seen.insert(name.as_str()) {
            wrong.push(format!("riptide_{name}: more than one row"));
        }
        match server_options().iter().find(|o| o.name == name) {
            Some(o) => wrong.extend(check_row(o, default, range, line)),
            None => wrong.push(format!("riptide_{name}: a row for no server option")),
        }
    }
    for o in server_options() {
        if !seen.contains(o.name) {
            wrong.push(format!("riptide_{}: no row", o.name));
        }
    }
    assert!(
        wrong.is_empty(),
        "plugin-shim/README.md, \"Configuration: system variables\", disagrees with \
         riptide_handler::server_options():\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_status_variables_it_names_exist_and_fit_the_plugin() {
    let text = readme();
    let mut names: BTreeSet<&str> = Statistics::TABLE.iter().map(|s| s.name).collect();
    // The C library's own statistics come after the engine's (`LIBRARY_STATS` in
    // crates/capi/src/calls.rs, which depends on this crate, so read from its source: each
    // entry starts with its name on the line after `(`).
    let calls = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../capi/src/calls.rs"),
    )
    .expect("crates/capi/src/calls.rs");
    let library: Vec<String> = calls
        .split("LIBRARY_STATS: &[LibraryStat] = &[")
        .nth(1)
        .and_then(|rest| rest.split("];").next())
        .map(|block| {
            block
                .lines()
                .zip(block.lines().skip(1))
                .filter(|(a, _)| a.trim_end().ends_with('('))
                .filter_map(|(_, b)| b.trim().strip_prefix('"')?.split('"').next())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    assert!(
        library.iter().any(|n| n == "handler_calls"),
        "LIBRARY_STATS not found in crates/capi/src/calls.rs: {library:?}"
    );
    names.extend(library.iter().map(String::as_str));
    let mut stale = Vec::new();
    for (at, _) in text.match_indices("Riptide_") {
        let rest = &text[at + "Riptide_".len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(rest.len());
        let name = rest[..end].trim_end_matches('_');
        // `Riptide_<name>` is the pattern, not a variable.
        if !name.is_empty() && !names.contains(name) {
            stale.push(format!("Riptide_{name}"));
        }
    }
    assert!(
        stale.is_empty(),
        "plugin-shim/README.md names status variables that are no statistic of \
         riptide::Statistics::TABLE: {stale:?}"
    );
}
