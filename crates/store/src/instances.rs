//! Instances: which Switchboard processes are alive, so that one process's start-up (or its
//! periodic sweep) recovers only the work of processes that died, never the work in flight of
//! replicas still running on the same database.
//!
//! A process registers an instance ([`Store::register_instance`]) before it writes anything,
//! and from then on the rows that belong to an answer running in it — tool calls, approval and
//! elicitation requests, its answer claims ([`crate::conversation_answers`]) — carry its id.
//! It keeps the instance alive ([`Store::keep_instance_alive`]): every heartbeat moves
//! `alive_until` to three intervals ahead, then sweeps the rows of dead instances. An instance
//! is dead when its row is gone (deregistered at shutdown, or swept) or `alive_until` has
//! passed; rows without an instance (written before migration 0006, or by a store that never
//! registered) are dead too. A process never recovers its own rows while it runs.
//!
//! Liveness compares timestamps written by each process's clock, so replicas' clocks must
//! agree to well within two heartbeat intervals (NTP does). On SQLite there is one process per
//! database file: registering declares every other instance dead, so a restart right after a
//! crash recovers everything the crashed process left.
//!
//! Must not: decide anything about answers or approvals (that is `chat`'s and `approvals`'s);
//! it only says which rows are orphaned and applies the recovery the callers documented.

use crate::backend::{Backend, on_backend};
use crate::clock;
use crate::error::{StoreError, StoreResult};
use crate::store::Store;
use chrono::{DateTime, TimeDelta, Utc};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// An instance is presumed dead after this many missed heartbeats.
const MISSED_HEARTBEATS_BEFORE_DEAD: u32 = 3;

/// However slow the heartbeat, an instance silent for a day is dead.
const MAX_MARGIN: Duration = Duration::from_secs(24 * 60 * 60);

/// SQL condition true for a row (with an `instance_id` column) whose instance is not alive,
/// excluding the caller's own instance. `$me` binds the caller's id (`""` when unregistered),
/// `$now` the caller's time.
macro_rules! orphaned {
    ($me:literal, $now:literal) => {
        concat!(
            "(instance_id IS NULL OR (instance_id <> ",
            $me,
            " AND instance_id NOT IN (SELECT id FROM instances WHERE alive_until > ",
            $now,
            ")))"
        )
    };
}
pub(crate) use orphaned;

/// Identifies one running Switchboard process (random; never reused).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InstanceId(String);

impl InstanceId {
    fn generate() -> Self {
        InstanceId(format!("inst_{}", uuid::Uuid::now_v7().simple()))
    }

    pub fn from_string(value: impl Into<String>) -> Self {
        InstanceId(value.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for InstanceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// This store's registration: who it is and how often it says so.
#[derive(Clone, Debug)]
pub(crate) struct Registration {
    pub(crate) id: InstanceId,
    heartbeat_every: Duration,
}

/// What one sweep recovered from dead instances.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OrphansRecovered {
    /// Tool calls: `dispatched` → `unknown`, `proposed`/`approved` → `failed`.
    pub tool_calls: u64,
    /// Pending approval requests → `expired`.
    pub approvals: u64,
    /// Pending elicitation requests → `expired`.
    pub elicitations: u64,
    /// Answer claims released (their conversations may answer again).
    pub answers: u64,
    /// Dead instances' rows removed.
    pub instances: u64,
}

impl OrphansRecovered {
    pub fn is_empty(&self) -> bool {
        *self == OrphansRecovered::default()
    }
}

/// The task keeping this process's instance alive; see [`Store::keep_instance_alive`].
#[derive(Debug)]
pub struct InstanceHeartbeat {
    stop: Arc<Notify>,
    task: JoinHandle<()>,
    store: Store,
}

impl InstanceHeartbeat {
    /// Stops the heartbeats and deregisters the instance (clean shutdown: whatever it still
    /// owns is now recoverable by any replica's next sweep or start).
    pub async fn stop(self) {
        self.stop.notify_one();
        if let Err(error) = self.task.await {
            tracing::warn!(%error, "the instance heartbeat task failed");
        }
        if let Err(error) = self.store.deregister_instance().await {
            tracing::warn!(%error, "could not deregister this instance");
        }
    }

    /// Stops the heartbeats without deregistering, as a crash would (tests).
    pub fn abandon(self) {
        self.task.abort();
    }
}

impl Store {
    /// Registers this process as a new live instance; rows written through this store (and its
    /// clones) from now on belong to it. Call once, before anything else writes. On SQLite
    /// every other instance is removed (one process per database file).
    pub async fn register_instance(&self, heartbeat_every: Duration) -> StoreResult<InstanceId> {
        if heartbeat_every.is_zero() {
            return Err(StoreError::invalid(
                "heartbeat_every",
                "the instance heartbeat interval must be positive",
            ));
        }
        let registration = Registration {
            id: InstanceId::generate(),
            heartbeat_every,
        };
        if self.registration.set(registration.clone()).is_err() {
            return Err(StoreError::Conflict(format!(
                "this store has already registered instance {}",
                self.instance_id().map(InstanceId::as_str).unwrap_or("")
            )));
        }
        if let Backend::Sqlite(pool) = &self.backend {
            sqlx::query("DELETE FROM instances").execute(pool).await?;
        }
        let now = clock::now();
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO instances (id, started_at, heartbeat_at, alive_until) \
             VALUES ($1, $2, $2, $3)"
        )
        .bind(registration.id.as_str())
        .bind(now)
        .bind(registration.alive_until(now))
        .execute(pool)
        .await
        .map(|_| ()))?;
        tracing::info!(instance = %registration.id, "registered this Switchboard instance");
        Ok(registration.id)
    }

    /// This store's instance, once registered.
    pub fn instance_id(&self) -> Option<&InstanceId> {
        self.registration.get().map(|registration| &registration.id)
    }

    /// The instance id rows are written with (`None` before registration).
    pub(crate) fn owning_instance(&self) -> Option<&str> {
        self.instance_id().map(InstanceId::as_str)
    }

    /// The `$me` bound by [`orphaned!`] conditions.
    pub(crate) fn me_for_recovery(&self) -> &str {
        self.owning_instance().unwrap_or("")
    }

    /// Says "still alive" for another three intervals. If a sweep elsewhere presumed this
    /// instance dead (a long stall) and removed it, the row is written again and a warning
    /// says its earlier work was recovered as orphaned.
    pub async fn heartbeat_instance(&self) -> StoreResult<()> {
        let Some(registration) = self.registration.get() else {
            return Ok(());
        };
        let now = clock::now();
        let updated = on_backend!(self, |pool| sqlx::query(
            "UPDATE instances SET heartbeat_at = $2, alive_until = $3 WHERE id = $1"
        )
        .bind(registration.id.as_str())
        .bind(now)
        .bind(registration.alive_until(now))
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        if updated == 0 {
            tracing::warn!(
                instance = %registration.id,
                "this instance was presumed dead (no heartbeat for {} intervals): another \
                 process may have recovered its pending approvals and tool calls; registering \
                 it again",
                MISSED_HEARTBEATS_BEFORE_DEAD
            );
            on_backend!(self, |pool| sqlx::query(
                "INSERT INTO instances (id, started_at, heartbeat_at, alive_until) \
                 VALUES ($1, $2, $2, $3) ON CONFLICT (id) DO NOTHING"
            )
            .bind(registration.id.as_str())
            .bind(now)
            .bind(registration.alive_until(now))
            .execute(pool)
            .await
            .map(|_| ()))?;
        }
        Ok(())
    }

    /// Removes this instance: from now on its rows count as dead.
    pub async fn deregister_instance(&self) -> StoreResult<()> {
        let Some(registration) = self.registration.get() else {
            return Ok(());
        };
        on_backend!(self, |pool| sqlx::query(
            "DELETE FROM instances WHERE id = $1"
        )
        .bind(registration.id.as_str())
        .execute(pool)
        .await
        .map(|_| ()))?;
        tracing::info!(instance = %registration.id, "deregistered this Switchboard instance");
        Ok(())
    }

    /// Recovers everything dead instances left: tool calls, approval and elicitation requests
    /// (as at start-up, see [`Store::recover_interrupted_tool_calls`],
    /// [`Store::expire_pending_approval_requests`],
    /// [`Store::expire_pending_elicitation_requests`]), their answer claims, and their
    /// instance rows. Never touches this instance's rows.
    pub async fn recover_orphaned_work(&self) -> StoreResult<OrphansRecovered> {
        let tool_calls = self.recover_interrupted_tool_calls().await?;
        let approvals = self.expire_pending_approval_requests().await?;
        let elicitations = self.expire_pending_elicitation_requests().await?;
        let answers = self.release_orphaned_answers().await?;
        let now = clock::now();
        let instances = on_backend!(self, |pool| sqlx::query(
            "DELETE FROM instances WHERE alive_until <= $1 AND id <> $2"
        )
        .bind(now)
        .bind(self.me_for_recovery())
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        Ok(OrphansRecovered {
            tool_calls,
            approvals,
            elicitations,
            answers,
            instances,
        })
    }

    /// Starts the task that heartbeats every `heartbeat_every` (as registered) and then sweeps
    /// dead instances' work ([`Store::recover_orphaned_work`]), so a replica that crashed is
    /// recovered by the survivors within a few intervals. Failures are logged and retried at
    /// the next tick. `None` before [`Store::register_instance`].
    pub fn keep_instance_alive(&self) -> Option<InstanceHeartbeat> {
        let every = self.registration.get()?.heartbeat_every;
        let stop = Arc::new(Notify::new());
        let store = self.clone();
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await;
            loop {
                tokio::select! {
                    _ = stopped.notified() => return,
                    _ = ticks.tick() => {}
                }
                if let Err(error) = store.heartbeat_instance().await {
                    tracing::warn!(%error, "instance heartbeat failed; retrying at the next tick");
                    continue;
                }
                match store.recover_orphaned_work().await {
                    Ok(recovered) if !recovered.is_empty() => tracing::warn!(
                        ?recovered,
                        "recovered the work of Switchboard instances that stopped without \
                         cleaning up"
                    ),
                    Ok(_) => {}
                    Err(error) => tracing::warn!(%error, "sweeping dead instances failed"),
                }
            }
        });
        Some(InstanceHeartbeat {
            stop,
            task,
            store: self.clone(),
        })
    }
}

impl Registration {
    fn alive_until(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        let margin = (self.heartbeat_every * MISSED_HEARTBEATS_BEFORE_DEAD).min(MAX_MARGIN);
        now + TimeDelta::from_std(margin).unwrap_or(TimeDelta::days(1))
    }
}
