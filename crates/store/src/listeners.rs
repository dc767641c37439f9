//! PostgreSQL listeners' connections: each `LISTEN` runs on a connection of its own (not one of
//! the store's pool, which it would hold for good), named after what it hears so it can be told
//! apart in `pg_stat_activity`. Shared by the decision and answer-stream listeners.

use crate::error::{StoreError, StoreResult};
use sqlx::postgres::{PgListener, PgPool, PgPoolOptions};
use std::time::Duration;

/// How long one attempt to open a listener's connection may take.
const LISTENER_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A listener on `channel`, on its own connection with the store's connection options and
/// `application_name`. A lost connection is opened again (and the channel listened to again)
/// by the listener's next receive.
pub(crate) async fn open_listener(
    pool: &PgPool,
    application_name: &str,
    channel: &str,
) -> StoreResult<PgListener> {
    let own_pool = PgPoolOptions::new()
        .max_connections(1)
        // Opening it again after a lost connection gives up soon; the caller retries.
        .acquire_timeout(LISTENER_CONNECT_TIMEOUT)
        .min_connections(0)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(
            (*pool.connect_options())
                .clone()
                .application_name(application_name),
        )
        .await
        .map_err(StoreError::Database)?;
    let mut listener = PgListener::connect_with(&own_pool)
        .await
        .map_err(StoreError::Database)?;
    listener
        .listen(channel)
        .await
        .map_err(StoreError::Database)?;
    Ok(listener)
}
