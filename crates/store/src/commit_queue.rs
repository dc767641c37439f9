//! Group commit for SQLite: one writer task runs the hot, small write transactions of many
//! callers (a tool call's records) in one `BEGIN IMMEDIATE … COMMIT`, so concurrent callers share
//! one fsync instead of queueing for the write lock one commit each. The standard technique
//! (PostgreSQL's `commit_delay`, SQLite applications with a writer thread), without a delay:
//! while the writer commits one batch, the next callers queue, and the next batch takes them all.
//!
//! Durability is unchanged: each caller waits for the commit that holds its write, and is told
//! `Ok` only after that commit succeeded. Each write runs in its own savepoint, so one that
//! fails (a conflict, a missing parent row) is rolled back alone and its caller gets its error;
//! the others still commit. If the batch itself cannot commit, every caller in it gets the error.
//!
//! PostgreSQL needs none of this (many connections commit concurrently and the server groups
//! their WAL flushes itself); [`grouped_write!`] runs the same body in an ordinary transaction
//! there. A queue whose writer is gone (its runtime ended) is bypassed: the write runs on the
//! caller's task in its own transaction.

use crate::error::{StoreError, StoreResult};
use sqlx::Connection;
use sqlx::sqlite::{SqliteConnection, SqlitePool};
use std::future::Future;
use std::pin::Pin;
use tokio::sync::{mpsc, oneshot};

/// One caller's writes, run on the writer's connection inside the batch's transaction.
pub(crate) type Job = Box<
    dyn for<'c> FnOnce(
            &'c mut SqliteConnection,
        ) -> Pin<Box<dyn Future<Output = StoreResult<()>> + Send + 'c>>
        + Send,
>;

/// A [`Job`] from a closure (names the higher-ranked signature so closures infer it).
pub(crate) fn job<F>(write: F) -> Job
where
    F: for<'c> FnOnce(
            &'c mut SqliteConnection,
        ) -> Pin<Box<dyn Future<Output = StoreResult<()>> + Send + 'c>>
        + Send
        + 'static,
{
    Box::new(write)
}

/// Most writes one commit carries (bounds how long the write lock is held).
const MAX_BATCH: usize = 64;

struct Queued {
    job: Job,
    done: oneshot::Sender<StoreResult<()>>,
}

/// The handle callers send their writes through (shared by the store's clones).
pub(crate) struct CommitQueue {
    sender: mpsc::UnboundedSender<Queued>,
    pool: SqlitePool,
}

impl std::fmt::Debug for CommitQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitQueue").finish_non_exhaustive()
    }
}

impl CommitQueue {
    /// Starts the writer task on the current runtime; it ends when the last handle is dropped.
    pub(crate) fn start(pool: SqlitePool) -> CommitQueue {
        let (sender, receiver) = mpsc::unbounded_channel();
        tokio::spawn(run_writer(pool.clone(), receiver));
        CommitQueue { sender, pool }
    }

    /// Runs `job` in the next batch and returns once that batch is committed (or the job's
    /// own error, its writes rolled back).
    pub(crate) async fn write(&self, job: Job) -> StoreResult<()> {
        let (done, outcome) = oneshot::channel();
        match self.sender.send(Queued { job, done }) {
            Ok(()) => outcome.await.unwrap_or_else(|_| {
                Err(StoreError::Database(sqlx::Error::Protocol(
                    "the store's writer stopped before the write was committed".to_owned(),
                )))
            }),
            Err(mpsc::error::SendError(queued)) => run_alone(&self.pool, queued.job).await,
        }
    }
}

/// A write on the caller's task, in its own transaction (the writer is gone).
async fn run_alone(pool: &SqlitePool, job: Job) -> StoreResult<()> {
    run_lone(pool, job).await?
}

async fn run_writer(pool: SqlitePool, mut receiver: mpsc::UnboundedReceiver<Queued>) {
    while let Some(first) = receiver.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH
            && let Ok(next) = receiver.try_recv()
        {
            batch.push(next);
        }
        commit_batch(&pool, batch).await;
    }
}

/// Runs every job of `batch` in one transaction, each in a savepoint, commits, and tells each
/// caller how its write ended (every caller the batch's error if it could not commit).
async fn commit_batch(pool: &SqlitePool, batch: Vec<Queued>) {
    let (jobs, callers): (Vec<Job>, Vec<_>) = batch
        .into_iter()
        .map(|queued| (queued.job, queued.done))
        .unzip();
    match run_batch(pool, jobs).await {
        Ok(outcomes) => {
            for (done, outcome) in callers.into_iter().zip(outcomes) {
                let _ = done.send(outcome);
            }
        }
        Err(error) => {
            tracing::error!(%error, writes = callers.len(), "grouped commit failed");
            let message = format!("the grouped commit failed: {error}");
            for done in callers {
                let _ = done.send(Err(StoreError::Database(sqlx::Error::Protocol(
                    message.clone(),
                ))));
            }
        }
    }
}

/// `BEGIN IMMEDIATE`, each job in a savepoint (rolled back alone if it fails), `COMMIT`: each
/// job's own outcome, or the error that stopped the batch (then nothing is committed: a
/// transaction or savepoint dropped unfinished rolls back). A batch of one job needs no
/// savepoint: its transaction is its savepoint ([`run_lone`]), two statements fewer on the
/// path of every write made while no other is waiting (each statement is a round trip to
/// sqlx's SQLite worker thread).
async fn run_batch(pool: &SqlitePool, jobs: Vec<Job>) -> Result<Vec<StoreResult<()>>, sqlx::Error> {
    if jobs.len() == 1 {
        let job = jobs.into_iter().next().expect("one job");
        return Ok(vec![run_lone(pool, job).await?]);
    }
    let mut transaction = pool.begin_with("BEGIN IMMEDIATE").await?;
    let mut outcomes = Vec::with_capacity(jobs.len());
    for job in jobs {
        let mut savepoint = Connection::begin(&mut *transaction).await?;
        let outcome = job(&mut savepoint).await;
        if outcome.is_ok() {
            savepoint.commit().await?;
        } else {
            savepoint.rollback().await?;
        }
        outcomes.push(outcome);
    }
    transaction.commit().await?;
    Ok(outcomes)
}

/// One job in its own transaction: committed if it succeeds, rolled back if it fails (its
/// error is the job's outcome; only a failed `BEGIN` or `COMMIT` is the batch's error).
async fn run_lone(pool: &SqlitePool, job: Job) -> Result<StoreResult<()>, sqlx::Error> {
    let mut transaction = pool.begin_with("BEGIN IMMEDIATE").await?;
    let outcome = job(&mut transaction).await;
    if outcome.is_ok() {
        transaction.commit().await?;
    } else {
        transaction.rollback().await?;
    }
    Ok(outcome)
}

/// Runs `$body` with `$tx` bound to a write transaction, like `write_transaction!`, but on SQLite
/// as one job of the commit queue (so it shares its commit with concurrent writers). The body is
/// moved into the job: it may capture only owned values (clone what it needs first), and it
/// evaluates to `()` (`?` and `return Err(…)` roll back its writes alone). Use `&mut *$tx` as
/// the executor.
macro_rules! grouped_write {
    ($store:expr, |$tx:ident| $body:expr) => {
        match (&$store.backend, &$store.commit_queue) {
            ($crate::backend::Backend::Sqlite(_), Some(queue)) => {
                queue
                    .write($crate::commit_queue::job(move |$tx| {
                        Box::pin(async move {
                            $body;
                            Ok::<(), $crate::error::StoreError>(())
                        })
                    }))
                    .await?
            }
            ($crate::backend::Backend::Sqlite(pool), None) => {
                let mut $tx = pool.begin_with("BEGIN IMMEDIATE").await?;
                $body;
                $tx.commit().await?;
            }
            ($crate::backend::Backend::Postgres(pool), _) => {
                let mut $tx = pool.begin().await?;
                $body;
                $tx.commit().await?;
            }
        }
    };
}
pub(crate) use grouped_write;
