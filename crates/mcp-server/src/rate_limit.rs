//! Per-caller request budget: a token bucket per [`CallerKey`] refilled at
//! `rate_limit_per_minute` up to `rate_limit_burst`. Exceeding it is JSON-RPC `-32003`.
//!
//! Buckets live in a few mutex-guarded shards so concurrent callers rarely contend. Clones
//! share the buckets: the HTTP guard takes `initialize` from the same budget as the calls.

use crate::auth::CallerKey;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SHARDS: usize = 16;
/// Past this many buckets in a shard, full (idle) ones are dropped.
const SWEEP_THRESHOLD: usize = 4_096;

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    refreshed_at: Instant,
}

/// A refused request: how long until one more request would be allowed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimited {
    pub retry_after: Duration,
    pub limit_per_minute: u32,
}

/// Token keys are SHA-256 digests, so their first byte already spreads them evenly.
fn shard_of(key: CallerKey) -> usize {
    match key {
        CallerKey::Token(digest) => usize::from(digest[0]) % SHARDS,
        CallerKey::Anonymous => 0,
    }
}

#[derive(Clone, Debug)]
pub struct RateLimiter {
    per_second: f64,
    burst: f64,
    limit_per_minute: u32,
    shards: Arc<Vec<Mutex<HashMap<CallerKey, Bucket>>>>,
}

impl RateLimiter {
    pub fn new(limit_per_minute: u32, burst: u32) -> Self {
        Self {
            per_second: f64::from(limit_per_minute) / 60.0,
            burst: f64::from(burst.max(1)),
            limit_per_minute,
            shards: Arc::new((0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect()),
        }
    }

    /// Takes one request from `key`'s budget.
    pub fn check(&self, key: CallerKey) -> Result<(), RateLimited> {
        self.check_at(key, Instant::now())
    }

    pub fn check_at(&self, key: CallerKey, now: Instant) -> Result<(), RateLimited> {
        let shard = &self.shards[shard_of(key)];
        let mut buckets = shard.lock().expect("rate limit shard lock");
        if buckets.len() >= SWEEP_THRESHOLD && !buckets.contains_key(&key) {
            let (per_second, burst) = (self.per_second, self.burst);
            buckets.retain(|_, bucket| {
                let elapsed = now
                    .saturating_duration_since(bucket.refreshed_at)
                    .as_secs_f64();
                bucket.tokens + elapsed * per_second < burst
            });
        }
        let bucket = buckets.entry(key).or_insert(Bucket {
            tokens: self.burst,
            refreshed_at: now,
        });
        let elapsed = now
            .saturating_duration_since(bucket.refreshed_at)
            .as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.per_second).min(self.burst);
        bucket.refreshed_at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let missing = 1.0 - bucket.tokens;
            Err(RateLimited {
                retry_after: Duration::from_secs_f64(missing / self.per_second),
                limit_per_minute: self.limit_per_minute,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_refill_per_caller() {
        let limiter = RateLimiter::new(60, 3);
        let start = Instant::now();
        let alice = CallerKey::for_token("alice");
        let bob = CallerKey::for_token("bob");
        for _ in 0..3 {
            limiter.check_at(alice, start).unwrap();
        }
        let refused = limiter.check_at(alice, start).unwrap_err();
        assert!(refused.retry_after <= Duration::from_secs(1));
        limiter
            .check_at(bob, start)
            .expect("bob has his own budget");
        limiter
            .check_at(alice, start + Duration::from_millis(1_001))
            .expect("one token refilled");
        assert!(
            limiter
                .check_at(alice, start + Duration::from_millis(1_002))
                .is_err()
        );
    }
}
