//! Whole-key bloom filter over user keys.
//!
//! Layout of a filter block: `bits[n_bytes]  num_probes: u8`. Bit `i` is bit `i % 8` of byte
//! `i / 8`; the filter has `m = 8 * n_bytes` bits. A key with hash `h = xxh3_64(user_key)` sets
//! or probes, for `j` in `0..num_probes`, bit `((h + j * delta) as u128 * m as u128) >> 64`
//! (wrapping 64-bit arithmetic, `delta = h.rotate_left(32) | 1`): double hashing mapped onto the
//! bit range by multiply-shift. `num_probes == 0` means "no filter": every probe answers "may
//! contain".

use riptide_common::{Error, Result};

/// Largest accepted number of probes.
pub const MAX_PROBES: u8 = 30;

/// The hash a bloom filter uses for `user_key`.
#[inline]
pub fn bloom_hash(user_key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(user_key)
}

#[inline]
fn bit_position(h: u64, delta: u64, j: u64, num_bits: u64) -> u64 {
    let g = h.wrapping_add(j.wrapping_mul(delta));
    ((u128::from(g) * u128::from(num_bits)) >> 64) as u64
}

/// Number of probes for `bits_per_key`: `round(bits_per_key * ln 2)`, within `1..=30`.
pub fn probes_for(bits_per_key: u32) -> u8 {
    ((f64::from(bits_per_key) * std::f64::consts::LN_2).round() as u8).clamp(1, MAX_PROBES)
}

/// Collects key hashes and builds a filter block.
#[derive(Debug, Clone)]
pub struct BloomFilterBuilder {
    bits_per_key: u32,
    hashes: Vec<u64>,
}

impl BloomFilterBuilder {
    /// A builder spending `bits_per_key` bits per added key; 0 builds a no-op filter.
    pub fn new(bits_per_key: u32) -> Self {
        BloomFilterBuilder {
            bits_per_key,
            hashes: Vec::new(),
        }
    }

    /// Adds a user key. Add each distinct key once (duplicates only waste bits).
    pub fn add_key(&mut self, user_key: &[u8]) {
        if self.bits_per_key > 0 {
            self.hashes.push(bloom_hash(user_key));
        }
    }

    /// Number of keys added.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True if no key was added.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The filter block's bytes.
    pub fn finish(&self) -> Vec<u8> {
        if self.bits_per_key == 0 {
            return vec![0];
        }
        let wanted = (self.hashes.len() as u64)
            .saturating_mul(u64::from(self.bits_per_key))
            .max(64);
        let n_bytes = wanted.div_ceil(8) as usize;
        let num_bits = n_bytes as u64 * 8;
        let k = probes_for(self.bits_per_key);
        let mut out = vec![0u8; n_bytes + 1];
        for &h in &self.hashes {
            let delta = h.rotate_left(32) | 1;
            for j in 0..u64::from(k) {
                let bit = bit_position(h, delta, j, num_bits);
                if let Some(b) = out.get_mut((bit >> 3) as usize) {
                    *b |= 1 << (bit & 7);
                }
            }
        }
        if let Some(last) = out.last_mut() {
            *last = k;
        }
        out
    }
}

/// A bloom filter read back from a filter block.
#[derive(Debug, Clone)]
pub struct BloomFilter {
    bits: Vec<u8>,
    num_bits: u64,
    num_probes: u8,
}

impl BloomFilter {
    /// Parses a filter block; `Corruption` if it is empty or names more than 30 probes.
    pub fn new(mut data: Vec<u8>) -> Result<BloomFilter> {
        let num_probes = data
            .pop()
            .ok_or_else(|| Error::corruption("empty filter block".to_string()))?;
        if num_probes > MAX_PROBES {
            return Err(Error::corruption(format!(
                "filter block asks for {num_probes} probes (at most {MAX_PROBES})"
            )));
        }
        if num_probes > 0 && data.is_empty() {
            return Err(Error::corruption(
                "filter block has probes but no bits".to_string(),
            ));
        }
        let num_bits = data.len() as u64 * 8;
        Ok(BloomFilter {
            bits: data,
            num_bits,
            num_probes,
        })
    }

    /// A filter that answers "may contain" for every key.
    pub fn disabled() -> Self {
        BloomFilter {
            bits: Vec::new(),
            num_bits: 0,
            num_probes: 0,
        }
    }

    /// False only if `user_key` was certainly not added.
    #[inline]
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        self.num_probes == 0 || self.may_contain_hash(bloom_hash(user_key))
    }

    /// [`may_contain`](Self::may_contain) for a key whose [`bloom_hash`] is `h`.
    #[inline]
    pub fn may_contain_hash(&self, h: u64) -> bool {
        let delta = h.rotate_left(32) | 1;
        for j in 0..u64::from(self.num_probes) {
            let bit = bit_position(h, delta, j, self.num_bits);
            match self.bits.get((bit >> 3) as usize) {
                Some(b) if b & (1 << (bit & 7)) == 0 => return false,
                _ => {}
            }
        }
        true
    }

    /// True if this filter actually filters (was built with bits per key > 0).
    pub fn is_enabled(&self) -> bool {
        self.num_probes > 0
    }

    /// Bytes of the bit array.
    pub fn size(&self) -> usize {
        self.bits.len()
    }

    /// Bytes of memory this filter occupies: the bit array's capacity and the struct itself.
    pub fn memory_size(&self) -> usize {
        self.bits.capacity() + std::mem::size_of::<BloomFilter>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_false_negatives_and_low_false_positives() {
        let mut b = BloomFilterBuilder::new(10);
        for i in 0..10_000u32 {
            b.add_key(format!("key{i}").as_bytes());
        }
        let f = BloomFilter::new(b.finish()).unwrap();
        for i in 0..10_000u32 {
            assert!(f.may_contain(format!("key{i}").as_bytes()));
        }
        let fp = (0..10_000u32)
            .filter(|i| f.may_contain(format!("other{i}").as_bytes()))
            .count();
        assert!(fp < 200, "{fp} false positives in 10000");
    }

    #[test]
    fn disabled_and_empty() {
        let f = BloomFilter::new(BloomFilterBuilder::new(0).finish()).unwrap();
        assert!(f.may_contain(b"x"));
        let f = BloomFilter::new(BloomFilterBuilder::new(10).finish()).unwrap();
        assert!(!f.may_contain(b"x"));
        assert!(BloomFilter::new(vec![]).is_err());
        assert!(BloomFilter::new(vec![31]).is_err());
        assert!(BloomFilter::new(vec![3]).is_err());
    }
}
