//! Ready-made tool answers per workspace, so repeated schema questions cost a clone instead of
//! a rebuild: `schema_version` for 5 minutes, type answers for 15, changelog answers for 1
//! (configurable). A schema change drops everything at once: entries carry the schema revision
//! they were built from, and an entry built before a change is neither stored nor served.

use crate::config::CacheLifetimes;
use rmcp::model::CallToolResult;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// Which answer an entry holds (the arguments that shape it included).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AnswerKey {
    TypeInfo(Option<String>),
    RelationshipInfo(Option<String>, Option<String>),
    SearchTypes(String),
    Changelog(Option<String>, usize),
}

impl AnswerKey {
    fn lifetime(&self, lifetimes: &CacheLifetimes) -> Duration {
        match self {
            AnswerKey::Changelog(..) => lifetimes.changelog,
            _ => lifetimes.types,
        }
    }
}

#[derive(Debug)]
struct Entry {
    answer: Arc<CallToolResult>,
    revision: u64,
    expires_at: Instant,
}

/// Most keyed entries kept; past this the map is emptied (arguments are user-controlled).
const MAX_KEYED_ENTRIES: usize = 512;

#[derive(Debug)]
pub struct AnswerCache {
    lifetimes: CacheLifetimes,
    /// Bumped on every schema change.
    revision: AtomicU64,
    schema_version: RwLock<Option<Entry>>,
    keyed: Mutex<HashMap<AnswerKey, Entry>>,
}

impl AnswerCache {
    pub fn new(lifetimes: CacheLifetimes) -> Self {
        Self {
            lifetimes,
            revision: AtomicU64::new(0),
            schema_version: RwLock::new(None),
            keyed: Mutex::new(HashMap::new()),
        }
    }

    /// The revision answers built now belong to. Read it while holding the graph's read lock.
    pub fn revision(&self) -> u64 {
        self.revision.load(Ordering::Acquire)
    }

    /// Drops every answer; call while holding the graph's write lock, after the change.
    pub fn invalidate(&self) {
        self.revision.fetch_add(1, Ordering::AcqRel);
        *self.schema_version.write().expect("answer cache lock") = None;
        self.keyed.lock().expect("answer cache lock").clear();
    }

    pub fn schema_version(&self) -> Option<Arc<CallToolResult>> {
        let slot = self.schema_version.read().expect("answer cache lock");
        slot.as_ref()
            .filter(|entry| self.is_fresh(entry))
            .map(|entry| entry.answer.clone())
    }

    pub fn store_schema_version(&self, revision: u64, answer: Arc<CallToolResult>) {
        let mut slot = self.schema_version.write().expect("answer cache lock");
        if revision == self.revision() {
            *slot = Some(Entry {
                answer,
                revision,
                expires_at: Instant::now() + self.lifetimes.schema_version,
            });
        }
    }

    pub fn get(&self, key: &AnswerKey) -> Option<Arc<CallToolResult>> {
        let keyed = self.keyed.lock().expect("answer cache lock");
        keyed
            .get(key)
            .filter(|entry| self.is_fresh(entry))
            .map(|entry| entry.answer.clone())
    }

    pub fn store(&self, key: AnswerKey, revision: u64, answer: Arc<CallToolResult>) {
        let mut keyed = self.keyed.lock().expect("answer cache lock");
        if revision != self.revision() {
            return;
        }
        if keyed.len() >= MAX_KEYED_ENTRIES {
            keyed.clear();
        }
        let expires_at = Instant::now() + key.lifetime(&self.lifetimes);
        keyed.insert(
            key,
            Entry {
                answer,
                revision,
                expires_at,
            },
        );
    }

    fn is_fresh(&self, entry: &Entry) -> bool {
        entry.revision == self.revision() && entry.expires_at > Instant::now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    fn answer(text: &str) -> Arc<CallToolResult> {
        Arc::new(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    #[test]
    fn invalidation_drops_answers_and_refuses_stale_ones() {
        let cache = AnswerCache::new(CacheLifetimes::default());
        let revision = cache.revision();
        cache.store_schema_version(revision, answer("v1"));
        cache.store(AnswerKey::TypeInfo(None), revision, answer("types"));
        assert!(cache.schema_version().is_some());
        assert!(cache.get(&AnswerKey::TypeInfo(None)).is_some());
        cache.invalidate();
        assert!(cache.schema_version().is_none());
        assert!(cache.get(&AnswerKey::TypeInfo(None)).is_none());
        // An answer computed before the change arrives late: it is not stored.
        cache.store_schema_version(revision, answer("stale"));
        assert!(cache.schema_version().is_none());
    }

    #[test]
    fn entries_expire_after_their_lifetime() {
        let lifetimes = CacheLifetimes {
            schema_version: Duration::ZERO,
            types: Duration::from_secs(60),
            changelog: Duration::ZERO,
        };
        let cache = AnswerCache::new(lifetimes);
        cache.store_schema_version(0, answer("v"));
        cache.store(AnswerKey::Changelog(None, 10), 0, answer("c"));
        cache.store(AnswerKey::TypeInfo(None), 0, answer("t"));
        assert!(cache.schema_version().is_none());
        assert!(cache.get(&AnswerKey::Changelog(None, 10)).is_none());
        assert!(cache.get(&AnswerKey::TypeInfo(None)).is_some());
    }
}
