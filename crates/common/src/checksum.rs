//! The checksum used on every block and record: 64-bit xxh3.

/// The xxh3-64 checksum of `data`.
#[inline]
pub fn checksum(data: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(data)
}

/// The xxh3-64 checksum of the concatenation of `parts`, without copying them.
pub fn checksum_parts(parts: &[&[u8]]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for p in parts {
        h.update(p);
    }
    h.digest()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_equal_whole() {
        assert_eq!(
            checksum(b"hello world"),
            checksum_parts(&[b"hello", b" world"])
        );
        assert_ne!(checksum(b"hello world"), checksum(b"hello worle"));
    }
}
