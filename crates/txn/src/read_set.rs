//! The keys a transaction read for update or wrote, for optimistic validation at commit.
//!
//! Each key keeps the smallest sequence number it was tracked at: at commit, the transaction
//! conflicts if any tracked key has a committed version newer than that.
//!
//! Tracking is not savepoint-aware: a key tracked after a savepoint stays tracked after a
//! rollback to it. That can only cause a false conflict at commit, never a missed one.

use std::collections::HashMap;

use riptide_common::{CfId, SeqNo};

/// Tracked `(column family, key) -> first sequence number` pairs.
#[derive(Debug, Default, Clone)]
pub struct TrackedKeys {
    keys: HashMap<CfId, HashMap<Vec<u8>, SeqNo>>,
}

impl TrackedKeys {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Tracks `key` of `cf` as read or written at `seqno`, keeping the smallest sequence number
    /// if it is already tracked. Returns `true` if the key was not tracked before.
    pub fn track(&mut self, cf: CfId, key: &[u8], seqno: SeqNo) -> bool {
        let per_cf = self.keys.entry(cf).or_default();
        match per_cf.get_mut(key) {
            Some(first) => {
                *first = (*first).min(seqno);
                false
            }
            None => {
                per_cf.insert(key.to_vec(), seqno);
                true
            }
        }
    }

    /// The sequence number `key` of `cf` was first tracked at, if tracked.
    pub fn get(&self, cf: CfId, key: &[u8]) -> Option<SeqNo> {
        self.keys.get(&cf).and_then(|m| m.get(key)).copied()
    }

    /// Every tracked key with its sequence number, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (CfId, &[u8], SeqNo)> + '_ {
        self.keys
            .iter()
            .flat_map(|(&cf, m)| m.iter().map(move |(k, &s)| (cf, k.as_slice(), s)))
    }

    /// How many keys are tracked.
    pub fn len(&self) -> usize {
        self.keys.values().map(HashMap::len).sum()
    }

    /// Whether no key is tracked.
    pub fn is_empty(&self) -> bool {
        self.keys.values().all(HashMap::is_empty)
    }

    /// Forgets every key.
    pub fn clear(&mut self) {
        self.keys.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_smallest_seqno() {
        let mut t = TrackedKeys::new();
        assert!(t.is_empty());
        assert!(t.track(0, b"k", 10));
        assert!(!t.track(0, b"k", 12));
        assert_eq!(t.get(0, b"k"), Some(10));
        assert!(!t.track(0, b"k", 7));
        assert_eq!(t.get(0, b"k"), Some(7));
        assert!(t.track(1, b"k", 3));
        assert_eq!(t.get(2, b"k"), None);
        assert_eq!(t.len(), 2);
        let mut all: Vec<_> = t.iter().collect();
        all.sort();
        assert_eq!(all, vec![(0, &b"k"[..], 7), (1, &b"k"[..], 3)]);
        t.clear();
        assert_eq!(t.len(), 0);
    }
}
