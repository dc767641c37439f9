//! Token revocations, seen at once by whatever caches authentication (the `/mcp` endpoint keeps
//! verified tokens for `kg.token_cache_secs`). The store keeps a **revocation epoch**, a number
//! that moves whenever a token may have stopped working: at once for a revocation made through
//! this store, and — on PostgreSQL, once [`Store::follow_revocations`] runs — for one made by any
//! process on the database (another replica, the CLI), which announces it with
//! `NOTIFY switchboard_revocations, '<token id>'` after its update. A cache remembers the epoch a
//! verdict was made at and trusts it only while the epoch has not moved: one atomic load per
//! request, no query.
//!
//! A notice may be lost (a listener reconnecting misses what was sent meanwhile), so the
//! listener moves the epoch on every reconnection too; while it cannot reach the database the
//! caches' own lifetime is the bound. On SQLite, where another process (the CLI) revoking
//! sends nothing, the follower counts revoked tokens every second instead.

use crate::backend::Backend;
use crate::store::Store;
use sqlx::postgres::{PgListener, PgPoolOptions};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// The PostgreSQL channel revocations are announced on (payload: the token id).
pub const REVOCATIONS_CHANNEL: &str = "switchboard_revocations";

/// How often a listener that cannot reach the database tries again, and how often a quiet one
/// checks whether its store is gone.
const LISTENER_RETRY: Duration = Duration::from_secs(1);
const LISTENER_LIVENESS_CHECK: Duration = Duration::from_secs(5);
/// SQLite: how often revoked tokens are counted.
const SQLITE_POLL: Duration = Duration::from_secs(1);

/// Shared by a store's clones.
#[derive(Debug, Default)]
pub(crate) struct Revocations {
    epoch: AtomicU64,
    following: AtomicBool,
}

impl Revocations {
    fn advance(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }
}

impl Store {
    /// Moves whenever a token may have stopped working (see the module documentation).
    pub fn revocation_epoch(&self) -> u64 {
        self.revocations.epoch.load(Ordering::SeqCst)
    }

    /// After a revocation committed: other replicas are told (PostgreSQL), this one at once.
    pub(crate) async fn announce_revocation(&self, token_id: &str) {
        if let Backend::Postgres(pool) = &self.backend {
            let sent = sqlx::query("SELECT pg_notify($1, $2)")
                .bind(REVOCATIONS_CHANNEL)
                .bind(token_id)
                .execute(pool)
                .await;
            if let Err(error) = sent {
                // The revocation stands; other replicas notice it within their cache lifetime.
                tracing::warn!(%error, "could not announce a token revocation to other replicas");
            }
        }
        self.revocations.advance();
    }

    /// Starts (once per store) a background task that moves the epoch for revocations made by
    /// other processes: PostgreSQL, a listener on [`REVOCATIONS_CHANNEL`] on a connection of
    /// its own (every notice and reconnection moves it); SQLite, a count of revoked tokens
    /// every second. It ends once every clone of the store is dropped. Must be
    /// called inside a Tokio runtime.
    pub fn follow_revocations(&self) {
        if self.revocations.following.swap(true, Ordering::SeqCst) {
            return;
        }
        let pool = match &self.backend {
            Backend::Postgres(pool) => pool,
            Backend::Sqlite(pool) => {
                tokio::spawn(poll_revocations(
                    pool.clone(),
                    Arc::downgrade(&self.revocations),
                ));
                return;
            }
        };
        let options = (*pool.connect_options())
            .clone()
            .application_name("switchboard-revocations");
        let revocations = Arc::downgrade(&self.revocations);
        tokio::spawn(async move {
            while let Some(alive) = revocations.upgrade() {
                drop(alive);
                let listened = async {
                    let own_pool = PgPoolOptions::new()
                        .max_connections(1)
                        .min_connections(0)
                        .idle_timeout(None)
                        .max_lifetime(None)
                        .connect_with(options.clone())
                        .await?;
                    let mut listener = PgListener::connect_with(&own_pool).await?;
                    listener.listen(REVOCATIONS_CHANNEL).await?;
                    Ok::<_, sqlx::Error>(listener)
                }
                .await;
                match listened {
                    Ok(listener) => {
                        // Listening now: what was revoked before is in the database already.
                        if let Some(revocations) = revocations.upgrade() {
                            revocations.advance();
                        }
                        hear_revocations(listener, &revocations).await
                    }
                    Err(error) => {
                        tracing::warn!(%error, "cannot listen for token revocations; retrying");
                        tokio::time::sleep(LISTENER_RETRY).await;
                    }
                }
                // Deaf for a moment: whatever was revoked meanwhile must not stay cached.
                if let Some(revocations) = revocations.upgrade() {
                    revocations.advance();
                }
            }
        });
    }
}

/// SQLite: another process on the same file (the CLI) revokes without telling anyone, so the
/// revoked tokens are counted every [`SQLITE_POLL`] and the epoch moved when the count changes.
async fn poll_revocations(pool: sqlx::SqlitePool, revocations: Weak<Revocations>) {
    let mut seen: Option<i64> = None;
    let mut ticker = tokio::time::interval(SQLITE_POLL);
    loop {
        // The first tick is at once: the count at start is the baseline.
        ticker.tick().await;
        let Some(alive) = revocations.upgrade() else {
            return;
        };
        // A revocation is never undone and tokens are never deleted, so the count of revoked
        // tokens changes exactly when one is revoked.
        let revoked: Result<i64, _> =
            sqlx::query_scalar("SELECT COUNT(*) FROM api_tokens WHERE revoked_at IS NOT NULL")
                .fetch_one(&pool)
                .await;
        match revoked {
            Ok(revoked) => {
                if seen.is_some_and(|seen| seen != revoked) {
                    alive.advance();
                }
                seen = Some(revoked);
            }
            Err(error) => tracing::warn!(%error, "could not count revoked tokens"),
        }
    }
}

/// Moves the epoch on every notice until the connection fails or the store is gone.
async fn hear_revocations(mut listener: PgListener, revocations: &Weak<Revocations>) {
    loop {
        let heard = tokio::time::timeout(LISTENER_LIVENESS_CHECK, listener.try_recv()).await;
        let Some(alive) = revocations.upgrade() else {
            return;
        };
        match heard {
            // Quiet: just checked that the store is still there.
            Err(_elapsed) => {}
            Ok(Ok(Some(_notice))) => alive.advance(),
            // Reconnected by sqlx: notices sent in between are lost.
            Ok(Ok(None)) => alive.advance(),
            Ok(Err(error)) => {
                tracing::warn!(%error, "lost the token revocation listener");
                return;
            }
        }
    }
}
