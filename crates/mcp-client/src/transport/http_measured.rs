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

#[derive(Clone, Debug)]
pub(crate) struct MeasuredHttpClient {
    pub inner: reqwest::Client,
    pub oversized: OversizedAnswers,
    /// Cancelled when the session (or the start attempt) goes: ends every stream.
    pub ended: CancellationToken,
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
        let response =
            self.inner
                .post_message(uri, message, session_id, auth_header, custom_headers);
        let response = self.until_ended(response).await?;
        Ok(self.watch(response, request_id))
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
            session_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        let response = self.until_ended(response).await?;
        Ok(self.watch(response, request_id))
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
        let stream =
            self.inner
                .get_stream(uri, session_id, last_event_id, auth_header, custom_headers);
        Ok(self.ending(self.until_ended(stream).await?))
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
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        Ok(self.ending(self.until_ended(stream).await?))
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
