//! The lifecycle approval requests and elicitation requests share: a row is written `pending`,
//! read by id inside its workspace, resolved **exactly once** (a compare-and-set on
//! `pending`; the loser of a race gets `Conflict` naming the status that won, and on
//! PostgreSQL the same statement announces the change to other replicas through
//! `decision_notices`), and, when the process that waited on it died, expired at recovery.
//!
//! One piece for both kinds so the guarantees cannot drift apart; each kind only says which
//! table and columns it uses ([`PendingKind`]) and what else its resolution writes. It must
//! not know what a request means (that is `approval_requests` / `elicitation_requests`).
//!
//! Its statements are assembled from the kinds' `&'static str` table and column names only
//! (never from input), hence `AssertSqlSafe`; values are always bound.

use crate::backend::Backend;
use crate::clock;
use crate::decision_notices::DECISIONS_CHANNEL;
use crate::error::{StoreError, StoreResult};
use crate::instances::orphaned;
use crate::store::Store;
use sqlx::AssertSqlSafe;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use switchboard_core::WorkspaceId;

/// Where a kind of pending request lives.
#[derive(Debug)]
pub(crate) struct PendingKind {
    /// The table (`approval_requests`).
    pub table: &'static str,
    /// Named in errors (`approval request`).
    pub entity: &'static str,
    /// `SELECT <columns> FROM <table> ` of one record.
    pub select: &'static str,
    /// Who resolved it (`decided_by`).
    pub resolved_by: &'static str,
    /// When (`decided_at`).
    pub resolved_at: &'static str,
    /// Prefix of the ids announced to other replicas (`decision_notices`).
    pub notice_prefix: &'static str,
    /// Further `column = 'value', ` assignments written when a restart expires a request.
    pub expiry_extra: &'static str,
}

/// A record of a kind of pending request, read from its row.
pub(crate) trait PendingRequest: Sized {
    type Row: for<'r> sqlx::FromRow<'r, SqliteRow> + for<'r> sqlx::FromRow<'r, PgRow> + Send + Unpin;
    const KIND: PendingKind;
    fn from_row(row: Self::Row) -> StoreResult<Self>;
    /// The status as stored (`pending`, `approved`…).
    fn status_name(&self) -> &'static str;
}

/// How a pending request ends: its new status and the other columns to set (the resolution
/// time is added).
#[derive(Debug)]
pub(crate) struct PendingResolution<'a> {
    pub status: &'static str,
    pub columns: &'a [(&'static str, Option<&'a str>)],
}

impl Store {
    /// The request with this id in the workspace (`NotFound` naming the kind otherwise).
    pub(crate) async fn get_pending_request<R: PendingRequest>(
        &self,
        workspace_id: &WorkspaceId,
        id: &str,
    ) -> StoreResult<R> {
        let sql = format!("{}WHERE workspace_id = $1 AND id = $2", R::KIND.select);
        let row: Option<R::Row> = match &self.backend {
            Backend::Sqlite(pool) => {
                sqlx::query_as(AssertSqlSafe(sql.clone()))
                    .bind(workspace_id.as_str())
                    .bind(id)
                    .fetch_optional(pool)
                    .await?
            }
            Backend::Postgres(pool) => {
                sqlx::query_as(AssertSqlSafe(sql.clone()))
                    .bind(workspace_id.as_str())
                    .bind(id)
                    .fetch_optional(pool)
                    .await?
            }
        };
        row.map(R::from_row)
            .transpose()?
            .ok_or_else(|| StoreError::not_found(R::KIND.entity))
    }

    /// Moves a pending request to `resolution.status`, exactly once: a request that is no
    /// longer pending answers `Conflict` naming its status (a decision racing a timeout loses
    /// cleanly).
    pub(crate) async fn resolve_pending_request<R: PendingRequest>(
        &self,
        workspace_id: &WorkspaceId,
        id: &str,
        resolution: PendingResolution<'_>,
    ) -> StoreResult<R> {
        if resolution.status == "pending" {
            return Err(StoreError::invalid(
                "status",
                "a resolution cannot be pending",
            ));
        }
        let kind = &R::KIND;
        let mut assignments = String::from("status = $3");
        for (index, (column, _)) in resolution.columns.iter().enumerate() {
            assignments.push_str(&format!(", {column} = ${}", index + 4));
        }
        let at = resolution.columns.len() + 4;
        let update = format!(
            "UPDATE {} SET {assignments}, {} = ${at} WHERE workspace_id = $1 AND id = $2 \
             AND status = 'pending' RETURNING id",
            kind.table, kind.resolved_at
        );
        let now = clock::now();
        macro_rules! bind_resolution {
            ($query:expr) => {{
                let mut query = $query
                    .bind(workspace_id.as_str())
                    .bind(id)
                    .bind(resolution.status);
                for (_, value) in resolution.columns {
                    query = query.bind(*value);
                }
                query.bind(now)
            }};
        }
        let affected = match &self.backend {
            Backend::Sqlite(pool) => bind_resolution!(sqlx::query_scalar::<_, String>(
                AssertSqlSafe(update.clone())
            ))
            .fetch_all(pool)
            .await?
            .len(),
            Backend::Postgres(pool) => {
                // The same statement announces the change to other replicas, delivered when
                // it commits.
                let notify = format!(
                    "WITH updated AS ({update}) SELECT count(pg_notify(${}, ${} || id)) \
                     FROM updated",
                    at + 1,
                    at + 2
                );
                let notified: i64 = bind_resolution!(sqlx::query_scalar(AssertSqlSafe(notify)))
                    .bind(DECISIONS_CHANNEL)
                    .bind(kind.notice_prefix)
                    .fetch_one(pool)
                    .await?;
                usize::try_from(notified).unwrap_or_default()
            }
        };
        let record: R = self.get_pending_request(workspace_id, id).await?;
        if affected == 0 {
            return Err(StoreError::Conflict(format!(
                "the {} is already {}",
                kind.entity,
                record.status_name()
            )));
        }
        Ok(record)
    }

    /// Recovery (at start-up and in each sweep), across all workspaces: requests still
    /// pending whose process died become `expired`, resolved by `restart`. Requests waiting
    /// in live instances (other replicas, and this one) are left alone; see `instances`.
    /// Returns how many changed.
    pub(crate) async fn expire_orphaned_requests<R: PendingRequest>(&self) -> StoreResult<u64> {
        let kind = &R::KIND;
        let update = format!(
            "UPDATE {} SET status = 'expired', {} = 'restart', {}{} = $1 \
             WHERE status = 'pending' AND {}",
            kind.table,
            kind.resolved_by,
            kind.expiry_extra,
            kind.resolved_at,
            orphaned!("$2", "$1")
        );
        let now = clock::now();
        let me = self.me_for_recovery();
        let changed = match &self.backend {
            Backend::Sqlite(pool) => sqlx::query(AssertSqlSafe(update.clone()))
                .bind(now)
                .bind(me)
                .execute(pool)
                .await?
                .rows_affected(),
            Backend::Postgres(pool) => sqlx::query(AssertSqlSafe(update.clone()))
                .bind(now)
                .bind(me)
                .execute(pool)
                .await?
                .rows_affected(),
        };
        Ok(changed)
    }
}
