//! What the resume tests (`resume_exactly_once.rs`, `resume_edge_cases.rs`) share: a reverse
//! proxy between the client and our server that cuts the event stream after N events (over
//! gRPC it counts and cuts messages), a client that goes through it, and readers of what is left
//! of a stream.

#![allow(dead_code)] // each test binary uses a part of it

use crate::common::{self, Recorder, TestServer, within};
use a2a_client::sse::SseParser;
use a2a_client::{Binding, Client, EventStream};
use a2a_core::{AgentCard, Message, SendMessageRequest, StreamResponse};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{Mutex, Notify, mpsc};

/// How the proxy ends a stream it cuts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum How {
    /// The connection breaks: the chunked body never ends (a transport error for the client).
    Abort,
    /// The response ends normally, just too early.
    Close,
}

/// Where the proxy cuts one stream: after `after` events, once `trigger` fires (at once when
/// there is none).
#[derive(Clone, Debug)]
pub(crate) struct Cut {
    after: usize,
    how: How,
    trigger: Option<Arc<Notify>>,
}

impl Cut {
    /// Cuts as soon as `after` events went through. Use [`How::Close`] when the test needs
    /// those events delivered: an abort may lose what the proxy had not flushed yet.
    pub(crate) fn after(after: usize, how: How) -> Self {
        Self {
            after,
            how,
            trigger: None,
        }
    }

    /// Cuts after `after` events, when the returned notify is notified (once the test has read
    /// those events from the client, so they certainly arrived).
    pub(crate) fn on_signal(after: usize, how: How) -> (Self, Arc<Notify>) {
        let trigger = Arc::new(Notify::new());
        let cut = Self {
            after,
            how,
            trigger: Some(trigger.clone()),
        };
        (cut, trigger)
    }
}

/// What the proxy did, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Stream `n` (0 = the first through the proxy) was answered by the server (it subscribed).
    Opened(usize),
    /// An event of stream `n`, with its SSE id, went to the client.
    Forwarded(usize, Option<String>),
}

struct ProxyState {
    upstream: String,
    http: reqwest::Client,
    /// The upstream server's gRPC binding (the same port).
    grpc: tonic::transport::Channel,
    cuts: Vec<Cut>,
    /// Drop `Last-Event-ID` on the way, as if the server did not know it.
    strip_last_event_id: bool,
    streams: AtomicUsize,
    steps: mpsc::UnboundedSender<Step>,
}

/// A reverse proxy in front of a server: the n-th event stream through it is cut as `cuts[n]`
/// says; other requests and later streams pass unchanged.
pub(crate) struct CuttingProxy {
    url: String,
    pub(crate) seen: Recorder,
    steps: Mutex<mpsc::UnboundedReceiver<Step>>,
}

impl CuttingProxy {
    /// A proxy passing `Last-Event-ID` on (the server may replay what the client missed).
    pub(crate) async fn start(upstream: &str, cuts: Vec<Cut>) -> Self {
        Self::start_with(upstream, cuts, false).await
    }

    /// A proxy hiding `Last-Event-ID` from the server, which then opens a resumed stream with
    /// a task snapshot: how a server without replay behaves.
    pub(crate) async fn ignoring_last_event_id(upstream: &str, cuts: Vec<Cut>) -> Self {
        Self::start_with(upstream, cuts, true).await
    }

    async fn start_with(upstream: &str, cuts: Vec<Cut>, strip_last_event_id: bool) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let state = Arc::new(ProxyState {
            upstream: upstream.to_owned(),
            http: reqwest::Client::new(),
            grpc: tonic::transport::Endpoint::from_shared(upstream.to_owned())
                .expect("upstream URL")
                .connect_lazy(),
            cuts,
            strip_last_event_id,
            streams: AtomicUsize::new(0),
            steps: tx,
        });
        let seen = Recorder::default();
        let router = seen.wrap(Router::new().fallback(forward).with_state(state));
        Self {
            url: common::serve(router).await,
            seen,
            steps: Mutex::new(rx),
        }
    }

    /// Waits for `step`, returning the steps before it.
    pub(crate) async fn wait_for(&self, step: Step) -> Vec<Step> {
        let mut rx = self.steps.lock().await;
        let mut before = Vec::new();
        loop {
            let next = within(&format!("the proxy: {step:?}"), rx.recv())
                .await
                .expect("the proxy is gone");
            if next == step {
                return before;
            }
            before.push(next);
        }
    }

    /// Everything the proxy did that was not waited for yet.
    pub(crate) async fn steps_so_far(&self) -> Vec<Step> {
        let mut rx = self.steps.lock().await;
        let mut steps = Vec::new();
        while let Ok(step) = rx.try_recv() {
            steps.push(step);
        }
        steps
    }

    /// `card` with every interface pointing at the proxy.
    fn card(&self, card: &AgentCard) -> AgentCard {
        let mut card = card.clone();
        for interface in &mut card.supported_interfaces {
            interface.url = self.url.clone();
        }
        card
    }
}

async fn forward(State(p): State<Arc<ProxyState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .expect("request body");
    let is_grpc = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"));
    if is_grpc {
        return forward_grpc(p, parts, body).await;
    }
    let path = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    let mut headers = parts.headers.clone();
    headers.remove(header::HOST);
    headers.remove(header::CONTENT_LENGTH);
    if p.strip_last_event_id {
        headers.remove("last-event-id");
    }
    let upstream = p
        .http
        .request(parts.method.clone(), format!("{}{path}", p.upstream))
        .headers(headers)
        .body(body)
        .send()
        .await
        .expect("the upstream server answers");
    let status = upstream.status();
    let mut headers = upstream.headers().clone();
    let is_sse = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_sse {
        let bytes = upstream.bytes().await.expect("upstream body");
        return (status, headers, bytes).into_response();
    }
    headers.remove(header::CONTENT_LENGTH);
    headers.remove(header::TRANSFER_ENCODING);
    let n = p.streams.fetch_add(1, Ordering::SeqCst);
    let cut = p.cuts.get(n).cloned();
    let steps = p.steps.clone();
    let _ = steps.send(Step::Opened(n));
    let events = async_stream::stream! {
        let mut parser = SseParser::default();
        let mut upstream = upstream.bytes_stream();
        let mut count = 0;
        'read: loop {
            if let Some(cut) = cut.as_ref().filter(|c| c.after == count) {
                if let Some(trigger) = &cut.trigger {
                    trigger.notified().await;
                }
                if cut.how == How::Abort {
                    yield Err(std::io::Error::other("the proxy cut the stream"));
                }
                return;
            }
            let Some(chunk) = upstream.next().await else { break 'read };
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    yield Err(std::io::Error::other(e));
                    return;
                }
            };
            for event in parser.feed(&chunk) {
                let mut text = String::new();
                if let Some(id) = &event.id {
                    text.push_str(&format!("id: {id}\n"));
                }
                if let Some(name) = &event.event {
                    text.push_str(&format!("event: {name}\n"));
                }
                text.push_str(&format!("data: {}\n\n", event.data));
                count += 1;
                let _ = steps.send(Step::Forwarded(n, event.id.clone()));
                yield Ok(Bytes::from(text));
                if cut.as_ref().is_some_and(|c| c.after == count) {
                    continue 'read;
                }
            }
        }
    };
    (status, headers, Body::from_stream(events)).into_response()
}

/// The gRPC side of the proxy: the call is made upstream with tonic, and answered with tonic;
/// a stream's messages are the events counted and cut (an abort ends it with `UNAVAILABLE`, as
/// a client sees a broken connection; a close ends it with `OK`, too early).
async fn forward_grpc(
    p: Arc<ProxyState>,
    parts: axum::http::request::Parts,
    body: Bytes,
) -> Response {
    use a2a_core::proto::{self, BytesCodec};
    use tonic::metadata::MetadataMap;
    let method = proto::method_of_path(parts.uri.path()).expect("an A2A gRPC method");
    let path = axum::http::uri::PathAndQuery::try_from(parts.uri.path()).expect("a path");
    let mut headers = parts.headers.clone();
    if p.strip_last_event_id {
        headers.remove("last-event-id");
    }
    let message = body.slice(5..);
    let upstream_request = tonic::Request::from_parts(
        MetadataMap::from_headers(headers),
        Default::default(),
        message,
    );
    let mut upstream = tonic::client::Grpc::new(p.grpc.clone());
    upstream
        .ready()
        .await
        .expect("the upstream server is ready");
    let request = axum::http::Request::from_parts(parts, http_body_util::Full::new(body));
    let mut server = tonic::server::Grpc::new(BytesCodec);
    let response = if !method.is_streaming() {
        let mut answer = Some(upstream.unary(upstream_request, path, BytesCodec).await);
        let service = tower::service_fn(move |_: tonic::Request<Bytes>| {
            std::future::ready(answer.take().expect("called once"))
        });
        server.unary(service, request).await
    } else {
        let answer = upstream
            .server_streaming(upstream_request, path, BytesCodec)
            .await;
        let n = p.streams.fetch_add(1, Ordering::SeqCst);
        let cut = p.cuts.get(n).cloned();
        let steps = p.steps.clone();
        let mut answer = Some(answer);
        let service = tower::service_fn(move |_: tonic::Request<Bytes>| {
            let answer = answer.take().expect("called once");
            let cut = cut.clone();
            let steps = steps.clone();
            async move {
                let (metadata, mut messages, _) = answer?.into_parts();
                let _ = steps.send(Step::Opened(n));
                let events = async_stream::stream! {
                    let mut count = 0;
                    loop {
                        if let Some(cut) = cut.as_ref().filter(|c| c.after == count) {
                            if let Some(trigger) = &cut.trigger {
                                trigger.notified().await;
                            }
                            if cut.how == How::Abort {
                                yield Err(tonic::Status::unavailable("the proxy cut the stream"));
                            }
                            return;
                        }
                        match messages.message().await {
                            Ok(Some(bytes)) => {
                                let mut event: StreamResponse =
                                    proto::decode(&bytes, &proto::schema::STREAM_RESPONSE)
                                        .expect("an event");
                                count += 1;
                                let _ = steps.send(Step::Forwarded(n, event.take_event_id()));
                                yield Ok(bytes);
                            }
                            Ok(None) => return,
                            Err(status) => {
                                yield Err(status);
                                return;
                            }
                        }
                    }
                };
                Ok::<_, tonic::Status>(tonic::Response::from_parts(
                    metadata,
                    Box::pin(events)
                        as std::pin::Pin<
                            Box<dyn futures::Stream<Item = Result<Bytes, tonic::Status>> + Send>,
                        >,
                    Default::default(),
                ))
            }
        });
        server.server_streaming(service, request).await
    };
    response.map(Body::new)
}

/// A client for `server` that goes through `proxy`.
pub(crate) fn client_via(proxy: &CuttingProxy, server: &TestServer, binding: Binding) -> Client {
    server
        .builder(binding)
        .build_from_card(proxy.card(&server.card))
        .expect("client")
}

/// Reads the next event, which must come within the wait.
pub(crate) async fn next(stream: &mut EventStream) -> StreamResponse {
    within("the next event", stream.next())
        .await
        .expect("the stream goes on")
        .expect("an event")
}

pub(crate) fn stepper_request() -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text("steps"))
}

pub(crate) fn assert_no_event_twice(events: &[StreamResponse]) {
    for (i, a) in events.iter().enumerate() {
        for b in &events[i + 1..] {
            assert_ne!(a, b, "an event was yielded twice");
        }
    }
}

/// Reads what is left of a stream.
pub(crate) async fn rest(stream: &mut EventStream, events: &mut Vec<StreamResponse>) {
    while let Some(event) = within("the next event", stream.next()).await {
        events.push(event.expect("an event"));
    }
}

/// Reads what is left of a stream in the background (the client resumes only while its stream
/// is read), adding it to `events`.
pub(crate) fn read_rest(
    mut stream: EventStream,
    mut events: Vec<StreamResponse>,
) -> tokio::task::JoinHandle<Vec<StreamResponse>> {
    tokio::spawn(async move {
        rest(&mut stream, &mut events).await;
        events
    })
}
