//! Literals for each column type: small domains (so keys collide and joins match), the
//! type's edges now and then, and sometimes a value the column cannot take (an error in
//! strict mode, a warning under IGNORE).

use rand::Rng;
use rand::rngs::StdRng;

use crate::schema::{Column, Ty};

/// Value-level switches (`--skip nul_strings,bad_values`).
#[derive(Clone, Copy, Debug)]
pub struct Features {
    /// Strings ending in or made of NUL bytes ('a\0'): NO PAD collations tell them from 'a'.
    pub nul_strings: bool,
    /// Values the column cannot hold (out of range, too long, invalid dates, unknown
    /// ENUM names), drawn 3% of the time.
    pub bad_values: bool,
}

const STRINGS: &[&str] = &[
    "", "a", "A", "a ", "b", "B", "ab", "Ab", "aB", "abc", "ABC", "ä", "Ä", "ß", "ss", "ü", "x",
    "xyz", " a", "ba", "z", "aa", "é", "e", "a  ",
];
const NUL_STRINGS: &[&str] = &["a\0", "\0", "ab\0", "a\0b"];
const BYTES: &[&str] = &[
    "X''",
    "X'00'",
    "X'61'",
    "X'41'",
    "X'6100'",
    "X'0061'",
    "X'FF'",
    "X'61FF'",
    "X'6162'",
    "X'00000000'",
    "X'7A'",
    "X'616263'",
];
const DECIMALS: &[&str] = &[
    "0.00",
    "1.50",
    "-1.50",
    "2.25",
    "99.99",
    "-0.01",
    "7",
    "123456.78",
    "999999.99",
    "-999999.99",
    "1.005",
];
const FLOATS: &[&str] = &[
    "0", "0.5", "-0.5", "1.25", "2", "100.75", "-3.5", "1024", "0.25",
];
const DOUBLES: &[&str] = &[
    "0", "0.5", "-0.5", "1.25", "2", "100.75", "-3.5", "0.1", "1e100", "-2.5e-3",
];
const DATES: &[&str] = &[
    "2024-01-01",
    "2024-01-02",
    "2024-02-29",
    "1999-12-31",
    "2000-01-01",
    "2024-12-31",
    "0000-00-00",
];
const TIMES: &[&str] = &[
    "00:00:00",
    "12:30:00",
    "-01:00:00",
    "23:59:59",
    "100:00:00",
    "00:00:01",
    "838:59:59",
];
const DATETIMES: &[&str] = &[
    "2024-01-01 00:00:00",
    "2024-01-01 00:00:00.50",
    "2024-01-01 12:00:00.25",
    "1999-12-31 23:59:59.99",
    "2024-02-29 10:10:10",
    "2000-01-01 00:00:00.01",
    "2024-01-01 00:00:00.505",
];
const TIMESTAMPS: &[&str] = &[
    "2024-01-01 00:00:00",
    "2024-01-01 00:00:00.5",
    "2001-09-09 01:46:40",
    "2038-01-19 03:14:07",
    "1999-12-31 23:59:59.9",
    "1970-01-01 00:00:01",
];
const YEARS: &[&str] = &["1999", "2000", "2024", "2069", "2155", "1901", "0"];
const ENUMS: &[&str] = &["'x'", "'y'", "'z'", "'w'", "1", "2"];
const SETS: &[&str] = &[
    "'p'", "'q'", "'r'", "'p,q'", "'q,r'", "''", "'r,p'", "'p,q,r'",
];

/// A quoted SQL string literal for `s` (backslash escapes: the default sql_mode).
pub fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('\'');
    for ch in s.chars() {
        match ch {
            '\'' => q.push_str("\\'"),
            '\\' => q.push_str("\\\\"),
            '\0' => q.push_str("\\0"),
            c => q.push(c),
        }
    }
    q.push('\'');
    q
}

fn pick<'a>(rng: &mut StdRng, xs: &[&'a str]) -> &'a str {
    xs.get(rng.random_range(0..xs.len()))
        .copied()
        .unwrap_or("0")
}

/// A literal for `c`: NULL at the column's rate, else [`value`].
pub fn literal(rng: &mut StdRng, c: &Column, f: Features) -> String {
    if !c.not_null && rng.random_range(0..100u8) < c.null_pct {
        return "NULL".into();
    }
    value(rng, c, f, true)
}

/// A non-NULL literal for `c`; `bad` allows values the column cannot hold (with
/// `Features::bad_values`).
pub fn value(rng: &mut StdRng, c: &Column, f: Features, bad: bool) -> String {
    // Values for rows may be anything the column takes; values for conditions (`bad`
    // false) keep to one type per column.
    let for_insert = bad;
    let bad = bad && f.bad_values && rng.random_range(0..100) < 3;
    match c.ty {
        Ty::Int { lo, hi, min, max } => {
            if bad {
                if rng.random_bool(0.5) {
                    (max + 1).to_string()
                } else {
                    (min - 1).to_string()
                }
            } else if rng.random_range(0..100) < 4 {
                if rng.random_bool(0.5) { max } else { min }.to_string()
            } else {
                rng.random_range(lo..=hi).to_string()
            }
        }
        // In a condition, no value with more decimals than the column: an index lookup
        // rounds the constant to the column's precision (1.005 finds 1.01) and a scan does
        // not, so the answer would depend on the plan, whatever the engine.
        Ty::Decimal if !for_insert => pick(rng, DECIMALS.get(..10).unwrap_or(DECIMALS)).into(),
        Ty::Decimal => {
            if bad {
                "1000000".into()
            } else {
                pick(rng, DECIMALS).into()
            }
        }
        Ty::Float => pick(rng, FLOATS).into(),
        Ty::Double => pick(rng, DOUBLES).into(),
        Ty::Bit => {
            if bad {
                "64".into()
            } else if rng.random_bool(0.3) {
                format!("b'{:b}'", rng.random_range(0..64u8))
            } else {
                rng.random_range(0..10u8).to_string()
            }
        }
        Ty::Date => quote(if bad { "2023-02-29" } else { pick(rng, DATES) }),
        Ty::Time => quote(if bad { "25:61:00" } else { pick(rng, TIMES) }),
        Ty::Datetime if !for_insert => quote(pick(rng, DATETIMES.get(..6).unwrap_or(DATETIMES))),
        Ty::Datetime => quote(if bad {
            "2024-13-01 00:00:00"
        } else {
            pick(rng, DATETIMES)
        }),
        Ty::Timestamp => quote(if bad {
            "1960-01-01 00:00:00"
        } else {
            pick(rng, TIMESTAMPS)
        }),
        Ty::Year => {
            if bad {
                "1900".into()
            } else {
                pick(rng, YEARS).into()
            }
        }
        // In a condition, only names: a number there makes the server convert every row's
        // value, with a warning per row evaluated (a count that depends on the plan).
        Ty::Enum if !for_insert => pick(rng, ENUMS.get(..4).unwrap_or(ENUMS)).into(),
        Ty::Enum => {
            if bad {
                "'v'".into()
            } else {
                pick(rng, ENUMS).into()
            }
        }
        Ty::Set => {
            if bad {
                "'s'".into()
            } else {
                pick(rng, SETS).into()
            }
        }
        Ty::Str { len, .. } => {
            if bad {
                return quote(&"abcdefghijklmnopqrstuvwxyz".repeat(len / 26 + 1));
            }
            if len > 100 && rng.random_range(0..100) < 15 {
                let unit = pick(rng, &["ab", "Ab", "x", "é"]);
                return format!(
                    "REPEAT({}, {})",
                    quote(unit),
                    rng.random_range(30..=len / 2)
                );
            }
            if f.nul_strings && rng.random_range(0..100) < 8 {
                return quote(pick(rng, NUL_STRINGS));
            }
            loop {
                let s = pick(rng, STRINGS);
                if s.chars().count() <= len {
                    return quote(s);
                }
            }
        }
        Ty::Bin { len } => {
            if bad {
                return format!("REPEAT(X'61', {})", len + 1);
            }
            if len > 100 && rng.random_range(0..100) < 15 {
                let unit = pick(rng, &["X'AB'", "X'00'", "X'6162'"]);
                return format!("REPEAT({unit}, {})", rng.random_range(30..=len / 2));
            }
            pick(rng, BYTES).into()
        }
    }
}

/// A pair of non-NULL literals for `c` in ascending order (as drawn: the bounds of a
/// BETWEEN; with strings under a collation "ascending" may be wrong, which is fine).
pub fn two(rng: &mut StdRng, c: &Column, f: Features) -> (String, String) {
    if let Ty::Int { lo, hi, .. } = c.ty {
        let a = rng.random_range(lo..=hi);
        let b = rng.random_range(lo..=hi);
        return (a.min(b).to_string(), a.max(b).to_string());
    }
    (value(rng, c, f, false), value(rng, c, f, false))
}
