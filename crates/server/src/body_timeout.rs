//! The request-body deadline: a body must arrive whole within `server.body_read_timeout_secs`
//! of its first read, or the request is answered 408 `request_timeout`.
//!
//! Why a whole-body deadline rather than an idle timeout per frame: a client trickling one
//! byte every few seconds never goes idle, yet holds a connection and a handler for as long as
//! it likes. The deadline starts at the first read (not at the request's arrival) so a handler
//! that legitimately reads the body late is not penalised for its own wait.
//!
//! The readers of the body (axum extractors, the MCP endpoint) only see an error they turn into
//! 400; [`DeadlineBody`] also raises a flag that [`enforce_body_deadline`] turns into the 408.

use crate::error::ApiError;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

/// The error a reader of a late body gets.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time")]
pub(crate) struct BodyTimedOut;

/// Middleware: gives the request a [`DeadlineBody`] and answers 408 when it fired.
pub(crate) async fn enforce_body_deadline(
    request: Request,
    next: Next,
    timeout: Duration,
) -> Response {
    let timed_out = Arc::new(AtomicBool::new(false));
    let flag = timed_out.clone();
    let request = request.map(|body| {
        Body::new(DeadlineBody {
            inner: body,
            timeout,
            deadline: None,
            timed_out: flag,
        })
    });
    let response = next.run(request).await;
    if timed_out.load(Ordering::Relaxed) {
        tracing::debug!(
            timeout_secs = timeout.as_secs(),
            "request body too slow: answered 408"
        );
        return ApiError::RequestTimeout {
            timeout_secs: timeout.as_secs(),
        }
        .into_response();
    }
    response
}

/// A body that fails with [`BodyTimedOut`] once `timeout` has passed since its first read.
struct DeadlineBody {
    inner: Body,
    timeout: Duration,
    /// Armed at the first `poll_frame`.
    deadline: Option<Pin<Box<Sleep>>>,
    timed_out: Arc<AtomicBool>,
}

impl http_body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if this.timed_out.load(Ordering::Relaxed) {
            return Poll::Ready(Some(Err(axum::Error::new(BodyTimedOut))));
        }
        let timeout = this.timeout;
        let deadline = this
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        if deadline.as_mut().poll(cx).is_ready() {
            this.timed_out.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err(axum::Error::new(BodyTimedOut))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
