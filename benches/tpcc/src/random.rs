//! The random data of TPC-C (revision 5.11, clauses 2.1.6 and 4.3.2): NURand and its
//! constants, customer last names, the random strings of the loader.

use rand::rngs::StdRng;
use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

/// NURand's `A` for customer last names (clause 2.1.6).
pub const A_C_LAST: u64 = 255;
/// NURand's `A` for customer ids.
pub const A_C_ID: u64 = 1023;
/// NURand's `A` for item ids.
pub const A_OL_I_ID: u64 = 8191;

/// The ten syllables of a customer last name (clause 4.3.2.3).
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` (0 to 999): the syllables of its three digits, so 371 is
/// `PRICALLYOUGHT`. Larger numbers use their last three digits.
pub fn last_name(n: u64) -> String {
    let digit = |d: u64| SYLLABLES.get((d % 10) as usize).copied().unwrap_or("");
    format!("{}{}{}", digit(n / 100), digit(n / 10), digit(n))
}

/// The run-time constants `C` of NURand (clause 2.1.6.1): one per field, the same for every
/// terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constants {
    /// `C` for C_LAST.
    pub c_last: u64,
    /// `C` for C_ID.
    pub c_id: u64,
    /// `C` for OL_I_ID.
    pub ol_i_id: u64,
}

impl Constants {
    /// The constants of the load: each uniform within `[0, A]`.
    pub fn load(rng: &mut Rand) -> Constants {
        Constants {
            c_last: rng.uniform(0, A_C_LAST),
            c_id: rng.uniform(0, A_C_ID),
            ol_i_id: rng.uniform(0, A_OL_I_ID),
        }
    }

    /// The constants of the measured runs, given the load's (clause 2.1.6.1): C_ID's and
    /// OL_I_ID's drawn afresh; C_LAST's such that its distance to the load's is within
    /// [65, 119] and neither 96 nor 112, so the run's last names are not the load's.
    pub fn run(load: &Constants, rng: &mut Rand) -> Constants {
        loop {
            let c_last = rng.uniform(0, A_C_LAST);
            if valid_c_last_delta(load.c_last, c_last) {
                return Constants {
                    c_last,
                    c_id: rng.uniform(0, A_C_ID),
                    ol_i_id: rng.uniform(0, A_OL_I_ID),
                };
            }
        }
    }
}

/// Whether a run's C_LAST may go with a load's (clause 2.1.6.1).
pub fn valid_c_last_delta(load: u64, run: u64) -> bool {
    let delta = load.abs_diff(run);
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// `NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x`, from the
/// two uniform draws (clause 2.1.6).
pub fn nurand_of(a_draw: u64, xy_draw: u64, c: u64, x: u64, y: u64) -> u64 {
    (((a_draw | xy_draw) + c) % (y - x + 1)) + x
}

/// The characters of TPC-C's random a-strings: letters and digits (the specification
/// allows any 128 characters; these need no escaping in SQL).
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A seeded random source with TPC-C's draws.
pub struct Rand {
    rng: StdRng,
}

impl Rand {
    /// A source seeded with `seed` (the same seed gives the same data and inputs).
    pub fn new(seed: u64) -> Rand {
        Rand {
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// Uniform within `[lo, hi]` (both included).
    pub fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            lo
        } else {
            self.rng.random_range(lo..=hi)
        }
    }

    /// True with probability `pct` percent (`uniform(1, 100) <= pct`).
    pub fn percent(&mut self, pct: u32) -> bool {
        self.uniform(1, 100) <= u64::from(pct)
    }

    /// NURand(A, x, y) with constant `c` (clause 2.1.6).
    pub fn nurand(&mut self, a: u64, x: u64, y: u64, c: u64) -> u64 {
        let a_draw = self.uniform(0, a);
        let xy_draw = self.uniform(x, y);
        nurand_of(a_draw, xy_draw, c, x, y)
    }

    /// A random a-string (letters and digits) of a length uniform within `[lo, hi]`.
    pub fn astring(&mut self, lo: u64, hi: u64) -> String {
        let len = self.uniform(lo, hi);
        (0..len)
            .map(|_| {
                let i = self.uniform(0, ALNUM.len() as u64 - 1) as usize;
                char::from(ALNUM.get(i).copied().unwrap_or(b'x'))
            })
            .collect()
    }

    /// A random n-string (digits) of a length uniform within `[lo, hi]`.
    pub fn nstring(&mut self, lo: u64, hi: u64) -> String {
        let len = self.uniform(lo, hi);
        (0..len)
            .map(|_| char::from(b'0' + self.uniform(0, 9) as u8))
            .collect()
    }

    /// A zip code: four random digits and `11111` (clause 4.3.2.7).
    pub fn zip(&mut self) -> String {
        format!("{}11111", self.nstring(4, 4))
    }

    /// I_DATA or S_DATA: an a-string of 26 to 50 characters, 10% of them with `ORIGINAL`
    /// at a random position (clause 4.3.3.1).
    pub fn data_with_original(&mut self) -> String {
        let mut s = self.astring(26, 50);
        if self.percent(10) {
            let at = self.uniform(0, s.len() as u64 - 8) as usize;
            s.replace_range(at..at + 8, "ORIGINAL");
        }
        s
    }

    /// A random permutation of `1..=n` (the order's customer ids of the load).
    pub fn permutation(&mut self, n: u64) -> Vec<u64> {
        let mut v: Vec<u64> = (1..=n).collect();
        v.shuffle(&mut self.rng);
        v
    }

    /// Shuffles `items` in place.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        items.shuffle(&mut self.rng);
    }

    /// A decimal with two places uniform within `[lo, hi]` hundredths, as text (`12.34`).
    pub fn cents(&mut self, lo: u64, hi: u64) -> String {
        cents_text(self.uniform(lo, hi) as i64)
    }

    /// A decimal with four places uniform within `[lo, hi]` ten-thousandths (`0.1234`).
    pub fn fraction4(&mut self, lo: u64, hi: u64) -> String {
        let v = self.uniform(lo, hi);
        format!("{}.{:04}", v / 10_000, v % 10_000)
    }
}

/// Hundredths as decimal text: 1234 is `12.34`, -1000 is `-10.00`.
pub fn cents_text(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let a = cents.unsigned_abs();
    format!("{sign}{}.{:02}", a / 100, a % 100)
}

/// Decimal text (`-12.3`, `5`, `0.07`) as hundredths; more than two places are refused.
pub fn parse_cents(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    if int.is_empty() && frac.is_empty() || frac.len() > 2 {
        return None;
    }
    let int: i64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut f: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    if frac.len() == 1 {
        f *= 10;
    }
    let v = int.checked_mul(100)?.checked_add(f)?;
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_from_syllables() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
        assert_eq!(last_name(1371), "PRICALLYOUGHT");
    }

    #[test]
    fn nurand_formula_and_range() {
        // ((0b1010 | 0b0101) + 3) % 10 + 1 = (15 + 3) % 10 + 1 = 9
        assert_eq!(nurand_of(0b1010, 0b0101, 3, 1, 10), 9);
        let mut r = Rand::new(7);
        let mut seen = vec![0u32; 3001];
        for _ in 0..100_000 {
            let v = r.nurand(A_C_ID, 1, 3000, 259);
            assert!((1..=3000).contains(&v));
            if let Some(s) = seen.get_mut(v as usize) {
                *s += 1;
            }
        }
        // Non-uniform: the most frequent id is drawn far more often than the average 33.
        let max = seen.iter().copied().max().unwrap_or(0);
        assert!(max > 100, "max {max}");
        for _ in 0..10_000 {
            let v = r.nurand(A_C_LAST, 0, 999, 17);
            assert!(v <= 999);
            let i = r.nurand(A_OL_I_ID, 1, 100_000, 5000);
            assert!((1..=100_000).contains(&i));
        }
    }

    #[test]
    fn run_constants_keep_the_c_last_distance() {
        assert!(valid_c_last_delta(0, 65));
        assert!(valid_c_last_delta(200, 81));
        assert!(!valid_c_last_delta(0, 64));
        assert!(!valid_c_last_delta(0, 120));
        assert!(!valid_c_last_delta(10, 106));
        assert!(!valid_c_last_delta(120, 8));
        let mut r = Rand::new(1);
        for _ in 0..1000 {
            let load = Constants::load(&mut r);
            assert!(load.c_last <= A_C_LAST && load.c_id <= A_C_ID && load.ol_i_id <= A_OL_I_ID);
            let run = Constants::run(&load, &mut r);
            assert!(valid_c_last_delta(load.c_last, run.c_last));
            assert!(run.c_last <= A_C_LAST);
        }
    }

    #[test]
    fn strings_have_their_lengths_and_original_share() {
        let mut r = Rand::new(3);
        let mut original = 0;
        for _ in 0..10_000 {
            let s = r.astring(8, 16);
            assert!((8..=16).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric()));
            let d = r.data_with_original();
            assert!((26..=50).contains(&d.len()));
            if d.contains("ORIGINAL") {
                original += 1;
            }
        }
        assert!((800..1200).contains(&original), "{original}");
        let z = r.zip();
        assert_eq!(z.len(), 9);
        assert!(z.ends_with("11111") && z.bytes().all(|b| b.is_ascii_digit()));
        let n = r.nstring(16, 16);
        assert_eq!(n.len(), 16);
        let mut p = r.permutation(3000);
        p.sort_unstable();
        assert!(p.iter().copied().eq(1..=3000));
    }

    #[test]
    fn cents_round_trip() {
        assert_eq!(cents_text(1234), "12.34");
        assert_eq!(cents_text(-1000), "-10.00");
        assert_eq!(cents_text(5), "0.05");
        assert_eq!(parse_cents("12.34"), Some(1234));
        assert_eq!(parse_cents("-10.00"), Some(-1000));
        assert_eq!(parse_cents("300000"), Some(30_000_000));
        assert_eq!(parse_cents("0.5"), Some(50));
        assert_eq!(parse_cents("1.234"), None);
        assert_eq!(parse_cents("x"), None);
        assert_eq!(parse_cents(""), None);
        let mut r = Rand::new(9);
        for _ in 0..1000 {
            let t = r.cents(100, 500_000);
            let v = parse_cents(&t).unwrap_or(0);
            assert!((100..=500_000).contains(&v));
            let f = r.fraction4(0, 2000);
            assert!(f.starts_with("0.") && f.len() == 6);
        }
    }
}
