//! The shared `reqwest::Client` as rmcp's Streamable HTTP backend, with one addition: when an
//! answer's SSE event exceeds the size cap, rmcp ends that response stream and tells the caller
//! only that "the stream closed". This wrapper remembers which request's stream was cut for
//! size, so the caller gets `ResponseTooLarge` instead of a vague connection error.
//!
//! And one refusal: a POST that carries no request (a notification such as the
//! `notifications/cancelled` sent after a timeout) awaits no answer, yet rmcp keeps reading
//! an event stream a server opens in reply until the whole transport ends. A server that
//! answers each such POST with a stream and then stays silent would pin a socket and a few
//! tasks per timed-out call for the session's life, so that stream is dropped (its
//! connection closed) and the POST counted as accepted.
//!
//! And one end: rmcp's worker awaits the answer to `initialize` without watching its own
//! cancellation, so a session start that timed out (the server sent event-stream headers,
//! then nothing) left that worker task, its stream and its socket behind for good, one per
//! attempt. Every request and answer stream here ends when `ended` is cancelled, which the
//! session (or the attempt that failed to become one) does when it goes.
//!
//! And one observation: rmcp re-initializes a session the upstream no longer knows (HTTP 404
//! to our session id, e.g. after the upstream restarted) underneath the same transport, so
//! nothing above the transport would learn that the upstream session — with its resource
//! subscriptions — is gone. The first 404 answered to each session id is reported
//! ([`ForgottenSession`]), whether on a POST or on the reconnection of the standalone event
//! stream (which notices a restarted upstream without any request of ours).

use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Requests whose answer was refused for size (drained by the caller that sees the error).
#[derive(Clone, Debug, Default)]
pub(crate) struct OversizedAnswers(Arc<Mutex<HashSet<RequestId>>>);

impl OversizedAnswers {
    fn record(&self, id: RequestId) {
        if let Ok(mut ids) = self.0.lock() {
            if ids.len() > 1024 {
                ids.clear();
            }
            ids.insert(id);
        }
    }

    /// True (once) if `id`'s answer was cut for size.
    pub fn take(&self, id: &RequestId) -> bool {
        self.0.lock().map(|mut ids| ids.remove(id)).unwrap_or(false)
    }
}

/// Told once per session id when the upstream answers 404 to it (it forgot the session).
#[derive(Clone)]
pub(crate) struct ForgottenSession {
    /// The last session id reported: the 404s that follow for it are the same loss.
    reported: Arc<Mutex<Option<Arc<str>>>>,
    on_forgotten: Arc<dyn Fn() + Send + Sync>,
}

impl std::fmt::Debug for ForgottenSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForgottenSession").finish_non_exhaustive()
    }
}

impl ForgottenSession {
    pub fn new(on_forgotten: impl Fn() + Send + Sync + 'static) -> Self {
        Self {
            reported: Arc::default(),
            on_forgotten: Arc::new(on_forgotten),
        }
    }

    /// The upstream answered 404 to `session_id`.
    fn forgotten(&self, session_id: &Arc<str>) {
        let first = match self.reported.lock() {
            Ok(mut reported) if reported.as_ref() != Some(session_id) => {
                *reported = Some(session_id.clone());
                true
            }
            _ => false,
        };
        if first {
            tracing::info!("the upstream no longer knows our session (HTTP 404)");
            (self.on_forgotten)();
        }
    }

    /// Reports `result` if it is a 404 to `session_id`.
    fn check<T>(&self, session_id: Option<&Arc<str>>, result: &HttpResult<T>) {
        let not_found = match result {
            Err(StreamableHttpError::SessionExpired) => true,
            Err(StreamableHttpError::Client(error)) => {
                error.status() == Some(reqwest::StatusCode::NOT_FOUND)
            }
            _ => false,
        };
        if let (true, Some(session_id)) = (not_found, session_id) {
            self.forgotten(session_id);
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct MeasuredHttpClient {
    pub inner: reqwest::Client,
    pub oversized: OversizedAnswers,
    /// Cancelled when the session (or the start attempt) goes: ends every stream.
    pub ended: CancellationToken,
    /// Told when the upstream forgets the session.
    pub forgotten: ForgottenSession,
}

type HttpResult<T> = Result<T, StreamableHttpError<reqwest::Error>>;

impl StreamableHttpClient for MeasuredHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let request_id = request_id(&message);
        let response = self.inner.post_message(
            uri,
            message,
            session_id.clone(),
            auth_header,
            custom_headers,
        );
        let response = self.until_ended(response).await;
        self.forgotten.check(session_id.as_ref(), &response);
        Ok(self.watch(response?, request_id))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let request_id = request_id(&message);
        let response = self.inner.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id.clone(),
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        let response = self.until_ended(response).await;
        self.forgotten.check(session_id.as_ref(), &response);
        Ok(self.watch(response?, request_id))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxStream<'static, Result<sse_stream_types::Sse, sse_stream_types::SseError>>>
    {
        let stream = self.inner.get_stream(
            uri,
            session_id.clone(),
            last_event_id,
            auth_header,
            custom_headers,
        );
        let stream = self.until_ended(stream).await;
        self.forgotten.check(session_id.as_ref(), &stream);
        Ok(self.ending(stream?))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<BoxStream<'static, Result<sse_stream_types::Sse, sse_stream_types::SseError>>>
    {
        let stream = self.inner.get_stream_with_max_sse_event_size(
            uri,
            session_id.clone(),
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        let stream = self.until_ended(stream).await;
        self.forgotten.check(session_id.as_ref(), &stream);
        Ok(self.ending(stream?))
    }
}

/// rmcp names the SSE types of the `sse-stream` version it depends on; these aliases name them
/// without a direct dependency on that crate.
mod sse_stream_types {
    use rmcp::transport::common::client_side_sse::BoxedSseResponse;

    type Item = <BoxedSseResponse as futures::Stream>::Item;
    pub type Sse = <Item as ResultParts>::Ok;
    pub type SseError = <Item as ResultParts>::Err;

    pub trait ResultParts {
        type Ok;
        type Err;
    }

    impl<T, E> ResultParts for Result<T, E> {
        type Ok = T;
        type Err = E;
    }
}

impl MeasuredHttpClient {
    /// `request`, or a closed-channel error as soon as the session ends.
    async fn until_ended<T>(&self, request: impl Future<Output = HttpResult<T>>) -> HttpResult<T> {
        tokio::select! {
            result = request => result,
            () = self.ended.cancelled() => Err(StreamableHttpError::TransportChannelClosed),
        }
    }

    /// `stream`, ending when the session ends.
    fn ending<T: Send + 'static>(&self, stream: BoxStream<'static, T>) -> BoxStream<'static, T> {
        stream
            .take_until(self.ended.clone().cancelled_owned())
            .boxed()
    }

    fn watch(
        &self,
        response: StreamableHttpPostResponse,
        request_id: Option<RequestId>,
    ) -> StreamableHttpPostResponse {
        match (request_id, response) {
            (Some(request_id), StreamableHttpPostResponse::Sse(stream, session_id)) => {
                let oversized = self.oversized.clone();
                let watched = self
                    .ending(stream)
                    .map(move |item| {
                        if let Err(error) = &item
                            && error.to_string().contains("exceeded the maximum size")
                        {
                            oversized.record(request_id.clone());
                        }
                        item
                    })
                    .boxed();
                StreamableHttpPostResponse::Sse(watched, session_id)
            }
            // Nothing is awaited on a stream opened for a message without a request.
            (None, StreamableHttpPostResponse::Sse(..)) => StreamableHttpPostResponse::Accepted,
            (_, response) => response,
        }
    }
}

fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        JsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}
