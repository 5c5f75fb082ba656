#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! `Xid` encoding: every valid id round-trips, and decoding arbitrary bytes never panics (it
//! either fails with a corruption error or yields an id that re-encodes to the same bytes).

use proptest::prelude::*;
use riptide_common::ErrorKind;
use riptide_txn::{MAX_BQUAL_LEN, MAX_GTRID_LEN, Xid};

fn xid() -> impl Strategy<Value = Xid> {
    (
        any::<i32>().prop_filter("-1 is the null XID", |f| *f != -1),
        prop::collection::vec(any::<u8>(), 1..=MAX_GTRID_LEN),
        prop::collection::vec(any::<u8>(), 0..=MAX_BQUAL_LEN),
    )
        .prop_map(|(f, g, b)| Xid::new(f, &g, &b).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn encode_then_decode_is_identity(x in xid()) {
        let bytes = x.encode();
        prop_assert_eq!(bytes.len(), x.encoded_len());
        prop_assert_eq!(Xid::decode(&bytes).unwrap(), x);
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..140)) {
        match Xid::decode(&bytes) {
            Ok(x) => prop_assert_eq!(x.encode(), bytes),
            Err(e) => prop_assert_eq!(e.kind(), ErrorKind::Corruption),
        }
    }

    #[test]
    fn decoding_mutated_encodings_never_panics(
        x in xid(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = x.encode();
        for (at, value) in flips {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        match Xid::decode(&bytes) {
            Ok(y) => prop_assert_eq!(y.encode(), bytes),
            Err(e) => prop_assert_eq!(e.kind(), ErrorKind::Corruption),
        }
    }
}

#[test]
fn display_is_format_gtrid_bqual_hex() {
    let x = Xid::new(4660, b"\x00\xffgt", b"bq").unwrap();
    assert_eq!(x.to_string(), "4660:00ff6774:6271");
    assert_eq!(
        Xid::from_name("order-17").unwrap().to_string(),
        "0:6f726465722d3137:"
    );
}
