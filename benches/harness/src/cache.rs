//! What each engine's caches and bloom filters did, from its status variables: read before
//! and after a measured run, the difference is the run's share (issue 18: "block cache hit
//! rate, and bloom filter checks and useful negatives").

use anyhow::Result;

use crate::{Engine, Server};

/// Cumulative cache and bloom filter counters of one engine at one moment. A field the
/// engine does not have is `None` (InnoDB has no bloom filters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheCounters {
    /// Block lookups the cache served (InnoDB: buffer pool read requests that found their
    /// page in the pool).
    pub hits: Option<u64>,
    /// Block lookups that went to a file (InnoDB: `Innodb_buffer_pool_reads`).
    pub misses: Option<u64>,
    /// Bloom filters consulted by point reads.
    pub bloom_checked: Option<u64>,
    /// Of those, filters that ruled the key out.
    pub bloom_useful: Option<u64>,
}

/// The status variables each engine's counters come from, in the order
/// [`CacheCounters::from_status`] takes them.
fn status_names(engine: Engine) -> &'static [&'static str] {
    match engine {
        Engine::Riptide => &[
            "Riptide_block_cache_hits",
            "Riptide_block_cache_misses",
            "Riptide_bloom_filter_checks",
            "Riptide_bloom_filter_useful",
        ],
        Engine::Rocksdb => &[
            "Rocksdb_block_cache_hit",
            "Rocksdb_block_cache_miss",
            "Rocksdb_bloom_filter_full_positive",
            "Rocksdb_bloom_filter_useful",
        ],
        Engine::Innodb => &[
            "Innodb_buffer_pool_read_requests",
            "Innodb_buffer_pool_reads",
        ],
    }
}

impl CacheCounters {
    /// Reads the counters of `engine` from `server`.
    pub fn read(server: &Server, engine: Engine) -> Result<CacheCounters> {
        let values = server.status_counters(status_names(engine))?;
        Ok(CacheCounters::from_status(engine, &values))
    }

    /// The counters from the values of [`status_names`] (same order).
    fn from_status(engine: Engine, v: &[Option<u64>]) -> CacheCounters {
        let at = |i: usize| v.get(i).copied().flatten();
        match engine {
            Engine::Riptide => CacheCounters {
                hits: at(0),
                misses: at(1),
                bloom_checked: at(2),
                bloom_useful: at(3),
            },
            // MyRocks counts a filter's "may contain" answers (full.positive) and its "not
            // here" answers (useful); together they are the checks.
            Engine::Rocksdb => CacheCounters {
                hits: at(0),
                misses: at(1),
                bloom_checked: at(2).zip(at(3)).map(|(p, u)| p.saturating_add(u)),
                bloom_useful: at(3),
            },
            // Read requests include the ones that missed.
            Engine::Innodb => CacheCounters {
                hits: at(0).zip(at(1)).map(|(r, m)| r.saturating_sub(m)),
                misses: at(1),
                bloom_checked: None,
                bloom_useful: None,
            },
        }
    }

    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &CacheCounters) -> CacheCounters {
        let d = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| a.saturating_sub(b));
        CacheCounters {
            hits: d(self.hits, earlier.hits),
            misses: d(self.misses, earlier.misses),
            bloom_checked: d(self.bloom_checked, earlier.bloom_checked),
            bloom_useful: d(self.bloom_useful, earlier.bloom_useful),
        }
    }

    /// Share of block lookups the cache served (None without lookups or counters).
    pub fn hit_rate(&self) -> Option<f64> {
        let (h, m) = self.hits.zip(self.misses)?;
        let total = h.checked_add(m).filter(|&t| t > 0)?;
        Some(h as f64 / total as f64)
    }

    /// Share of bloom filter checks that ruled the key out (None without checks).
    pub fn bloom_useful_rate(&self) -> Option<f64> {
        let (c, u) = self.bloom_checked.zip(self.bloom_useful)?;
        (c > 0).then(|| u as f64 / c as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_engine_maps_its_status_variables() {
        let r =
            CacheCounters::from_status(Engine::Riptide, &[Some(90), Some(10), Some(8), Some(6)]);
        assert_eq!(r.hit_rate(), Some(0.9));
        assert_eq!(r.bloom_useful_rate(), Some(0.75));
        let m = CacheCounters::from_status(Engine::Rocksdb, &[Some(3), Some(1), Some(2), Some(6)]);
        assert_eq!(m.hit_rate(), Some(0.75));
        assert_eq!(m.bloom_checked, Some(8));
        assert_eq!(m.bloom_useful_rate(), Some(0.75));
        let i = CacheCounters::from_status(Engine::Innodb, &[Some(100), Some(20)]);
        assert_eq!((i.hits, i.misses), (Some(80), Some(20)));
        assert_eq!(i.bloom_useful_rate(), None);
        // A counter the server lacks stays unknown rather than zero.
        let partial = CacheCounters::from_status(Engine::Rocksdb, &[Some(3), None, None, Some(1)]);
        assert_eq!(partial.hit_rate(), None);
        assert_eq!(partial.bloom_checked, None);
    }

    #[test]
    fn differences_and_rates_of_a_run() {
        let before = CacheCounters {
            hits: Some(100),
            misses: Some(50),
            bloom_checked: Some(10),
            bloom_useful: Some(5),
        };
        let after = CacheCounters {
            hits: Some(400),
            misses: Some(150),
            bloom_checked: Some(10),
            bloom_useful: Some(5),
        };
        let run = after.since(&before);
        assert_eq!(run.hit_rate(), Some(0.75));
        assert_eq!(run.bloom_useful_rate(), None, "no checks in the run");
        assert_eq!(CacheCounters::default().hit_rate(), None);
    }
}
