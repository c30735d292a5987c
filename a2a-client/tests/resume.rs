//! Resumable streams: a reverse proxy between the client and our server cuts the event stream
//! after N events; the client resumes through SubscribeToTask, sending `Last-Event-ID`, and the
//! caller sees every event exactly once. A server that honours `Last-Event-ID` replays what the
//! client missed; one that does not (simulated by a proxy that hides the header) opens the new
//! stream with a task snapshot, which the client drops when its `id:` shows nothing new, or
//! passes on when the task moved on meanwhile. Over gRPC the proxy counts and cuts messages,
//! the ids come in the events' metadata (the resumable-streams extension), and `last-event-id`
//! is request metadata.

mod common;

use a2a_client::sse::SseParser;
use a2a_client::{Binding, Client, EventStream};
use a2a_core::{AgentCard, Message, SendMessageRequest, StreamResponse, TaskState};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use common::{Recorder, Stepper, TestServer, collect, each_binding, fold, shape, within};
use futures::StreamExt as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{Mutex, Notify, mpsc};

/// How the proxy ends a stream it cuts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    /// The connection breaks: the chunked body never ends (a transport error for the client).
    Abort,
    /// The response ends normally, just too early.
    Close,
}

/// Where the proxy cuts one stream: after `after` events, once `trigger` fires (at once when
/// there is none).
#[derive(Clone, Debug)]
struct Cut {
    after: usize,
    how: How,
    trigger: Option<Arc<Notify>>,
}

impl Cut {
    /// Cuts as soon as `after` events went through. Use [`How::Close`] when the test needs
    /// those events delivered: an abort may lose what the proxy had not flushed yet.
    fn after(after: usize, how: How) -> Self {
        Self {
            after,
            how,
            trigger: None,
        }
    }

    /// Cuts after `after` events, when the returned notify is notified (once the test has read
    /// those events from the client, so they certainly arrived).
    fn on_signal(after: usize, how: How) -> (Self, Arc<Notify>) {
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
enum Step {
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
struct CuttingProxy {
    url: String,
    seen: Recorder,
    steps: Mutex<mpsc::UnboundedReceiver<Step>>,
}

impl CuttingProxy {
    /// A proxy passing `Last-Event-ID` on (the server may replay what the client missed).
    async fn start(upstream: &str, cuts: Vec<Cut>) -> Self {
        Self::start_with(upstream, cuts, false).await
    }

    /// A proxy hiding `Last-Event-ID` from the server, which then opens a resumed stream with
    /// a task snapshot: how a server without replay behaves.
    async fn ignoring_last_event_id(upstream: &str, cuts: Vec<Cut>) -> Self {
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
    async fn wait_for(&self, step: Step) -> Vec<Step> {
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
    async fn steps_so_far(&self) -> Vec<Step> {
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
fn client_via(proxy: &CuttingProxy, server: &TestServer, binding: Binding) -> Client {
    server
        .builder(binding)
        .build_from_card(proxy.card(&server.card))
        .expect("client")
}

/// Reads the next event, which must come within the wait.
async fn next(stream: &mut EventStream) -> StreamResponse {
    within("the next event", stream.next())
        .await
        .expect("the stream goes on")
        .expect("an event")
}

fn stepper_request() -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text("steps"))
}

/// The events of a stepper task of three steps, streamed without interruption.
async fn uncut_run(binding: Binding) -> Vec<StreamResponse> {
    let agent = Stepper::new(3);
    let server = TestServer::start(agent.clone(), |b| b).await;
    let client = server.client(binding).await;
    agent.open(4);
    let stream = within("open", client.send_streaming_message(&stepper_request()))
        .await
        .expect("open");
    collect(stream).await
}

fn assert_no_event_twice(events: &[StreamResponse]) {
    for (i, a) in events.iter().enumerate() {
        for b in &events[i + 1..] {
            assert_ne!(a, b, "an event was yielded twice");
        }
    }
}

/// Reads what is left of a stream.
async fn rest(stream: &mut EventStream, events: &mut Vec<StreamResponse>) {
    while let Some(event) = within("the next event", stream.next()).await {
        events.push(event.expect("an event"));
    }
}

/// Reads what is left of a stream in the background (the client resumes only while its stream
/// is read), adding it to `events`.
fn read_rest(
    mut stream: EventStream,
    mut events: Vec<StreamResponse>,
) -> tokio::task::JoinHandle<Vec<StreamResponse>> {
    tokio::spawn(async move {
        rest(&mut stream, &mut events).await;
        events
    })
}

/// The shapes of a stepper run of three steps cut after two and resumed after step 3 happened,
/// from a server that does not replay: the task as it is now stands for the two missed events.
fn caught_up_with_a_snapshot() -> Vec<&'static str> {
    vec![
        "task TASK_STATE_WORKING []",
        "artifact \"1;\" append=false last=false",
        "status TASK_STATE_WORKING step 2",
        "artifact \"2;\" append=true last=false",
        "task TASK_STATE_WORKING [1;2;3;]",
        "status TASK_STATE_COMPLETED done",
    ]
}

/// Cuts a stepper stream after two steps (four events, ids 1..=4) while the agent waits,
/// resumes, and lets the agent finish once the resumed stream is open.
async fn cut_between_steps(binding: Binding, how: How, proxy_ignores_last_event_id: bool) {
    let expected: Vec<String> = uncut_run(binding).await.iter().map(shape).collect();
    assert_eq!(expected.len(), 7, "{expected:?}");

    let agent = Stepper::new(3);
    let server = TestServer::start(agent.clone(), |b| b).await;
    let (cut, trigger) = Cut::on_signal(4, how);
    let proxy = if proxy_ignores_last_event_id {
        CuttingProxy::ignoring_last_event_id(&server.url, vec![cut]).await
    } else {
        CuttingProxy::start(&server.url, vec![cut]).await
    };
    let client = client_via(&proxy, &server, binding);

    agent.open(2);
    let mut stream = within("open", client.send_streaming_message(&stepper_request()))
        .await
        .expect("open");
    let mut events = Vec::new();
    for _ in 0..4 {
        events.push(next(&mut stream).await);
    }
    agent.reached(2).await;
    trigger.notify_one();

    // The client resubscribes; once the server answered, the agent goes on.
    let reader = read_rest(stream, events);
    proxy.wait_for(Step::Opened(1)).await;
    agent.open(2);
    let events = within("the rest", reader).await.expect("reader");

    let shapes: Vec<String> = events.iter().map(shape).collect();
    assert_eq!(
        shapes, expected,
        "the caller sees what an uncut stream shows"
    );
    assert_no_event_twice(&events);
    let task = fold(&events).expect("a task");
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts[0].text_content(), "1;2;3;");

    let subscribes = proxy.seen.calls_of("SubscribeToTask");
    assert_eq!(subscribes.len(), 1, "resumed once");
    assert_eq!(subscribes[0].header("last-event-id"), Some("4"));
    let resumed: Vec<Option<String>> = proxy
        .steps_so_far()
        .await
        .into_iter()
        .filter_map(|s| match s {
            Step::Forwarded(1, id) => Some(id),
            _ => None,
        })
        .collect();
    let ids = |ids: &[&str]| {
        ids.iter()
            .map(|i| Some((*i).to_owned()))
            .collect::<Vec<_>>()
    };
    if proxy_ignores_last_event_id {
        // The server opened with its snapshot (id 4): seen already, so not yielded again.
        assert_eq!(resumed, ids(&["4", "5", "6", "7"]));
    } else {
        assert!(
            resumed == ids(&["5", "6", "7"]) || resumed == ids(&["4", "5", "6", "7"]),
            "{resumed:?}"
        );
    }
}

each_binding! {
    async fn a_stream_cut_between_steps_resumes_and_yields_the_events_of_an_uncut_run(binding) {
        cut_between_steps(binding, How::Abort, false).await;
    }
}

each_binding! {
    async fn a_stream_closed_early_between_steps_resumes_and_yields_the_events_of_an_uncut_run(binding) {
        cut_between_steps(binding, How::Close, false).await;
    }
}

each_binding! {
    async fn a_snapshot_already_seen_is_dropped_when_the_server_ignores_last_event_id(binding) {
        cut_between_steps(binding, How::Abort, true).await;
    }
}

/// Cuts a stepper stream after two steps, lets the agent do step 3 while the client is cut
/// off, then resumes; returns the events the caller saw.
async fn cut_while_the_agent_moves_on(
    binding: Binding,
    proxy_ignores_last_event_id: bool,
) -> Vec<StreamResponse> {
    let agent = Stepper::new(3);
    let server = TestServer::start(agent.clone(), |b| b).await;
    let (cut, trigger) = Cut::on_signal(4, How::Abort);
    let proxy = if proxy_ignores_last_event_id {
        CuttingProxy::ignoring_last_event_id(&server.url, vec![cut]).await
    } else {
        CuttingProxy::start(&server.url, vec![cut]).await
    };
    let client = client_via(&proxy, &server, binding);

    agent.open(2);
    let mut stream = within("open", client.send_streaming_message(&stepper_request()))
        .await
        .expect("open");
    let mut events = Vec::new();
    for _ in 0..4 {
        events.push(next(&mut stream).await);
    }
    // Step 3 happens while the client is cut off: events 5 and 6 never reach it.
    agent.open(1);
    agent.reached(3).await;
    trigger.notify_one();
    let reader = read_rest(stream, events);
    proxy.wait_for(Step::Opened(1)).await;
    agent.open(1);
    let events = within("the rest", reader).await.expect("reader");

    assert_no_event_twice(&events);
    let task = fold(&events).expect("a task");
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts.len(), 1);
    assert_eq!(task.artifacts[0].text_content(), "1;2;3;");
    let subscribes = proxy.seen.calls_of("SubscribeToTask");
    assert_eq!(subscribes.len(), 1, "resumed once");
    assert_eq!(subscribes[0].header("last-event-id"), Some("4"));
    events
}

each_binding! {
    async fn a_stream_cut_while_the_agent_moves_on_still_yields_every_change_once(binding) {
        let uncut: Vec<String> = uncut_run(binding).await.iter().map(shape).collect();
        let events = cut_while_the_agent_moves_on(binding, false).await;
        let shapes: Vec<String> = events.iter().map(shape).collect();
        assert!(
            shapes == uncut || shapes == caught_up_with_a_snapshot(),
            "either replayed or caught up with a snapshot: {shapes:#?}"
        );
    }
}

each_binding! {
    async fn a_server_ignoring_last_event_id_catches_the_client_up_with_one_snapshot(binding) {
        let events = cut_while_the_agent_moves_on(binding, true).await;
        let shapes: Vec<String> = events.iter().map(shape).collect();
        assert_eq!(shapes, caught_up_with_a_snapshot());
    }
}

each_binding! {
    async fn a_countdown_cut_twice_completes_with_every_chunk_exactly_once(binding) {
        for ignore_last_event_id in [false, true] {
            let server = TestServer::demo().await;
            let cuts = vec![Cut::after(2, How::Abort), Cut::after(2, How::Close)];
            let proxy = if ignore_last_event_id {
                CuttingProxy::ignoring_last_event_id(&server.url, cuts).await
            } else {
                CuttingProxy::start(&server.url, cuts).await
            };
            let client = client_via(&proxy, &server, binding);
            let request = SendMessageRequest::new(Message::user_text("countdown 3"));
            let stream = within("open", client.send_streaming_message(&request))
                .await
                .expect("open");
            let events = collect(stream).await;
            assert_no_event_twice(&events);
            let task = fold(&events).expect("a task");
            assert_eq!(task.status.state, TaskState::Completed);
            assert_eq!(task.artifacts.len(), 1);
            assert_eq!(task.artifacts[0].text_content(), "3\n2\n1\n");
            assert!(!proxy.seen.calls_of("SubscribeToTask").is_empty(), "resumed");

            let stored = within("get", client.get_task(task.id.clone())).await.expect("get");
            assert_eq!(stored.artifacts, task.artifacts);
            assert_eq!(stored.status.state, task.status.state);
        }
    }
}

each_binding! {
    async fn a_stream_cut_before_its_first_event_ends_with_stream_ended(binding) {
        let server = TestServer::demo().await;
        let (cut, trigger) = Cut::on_signal(0, How::Abort);
        let proxy = CuttingProxy::start(&server.url, vec![cut]).await;
        let client = client_via(&proxy, &server, binding);
        let request = SendMessageRequest::new(Message::user_text("hello"));
        let mut stream = within("open", client.send_streaming_message(&request))
            .await
            .expect("open");
        trigger.notify_one();
        let err = within("the next event", stream.next())
            .await
            .expect("an item")
            .expect_err("no task to resume");
        assert!(matches!(err, a2a_client::Error::StreamEnded(_)), "{err}");
        assert!(within("the end", stream.next()).await.is_none());
        assert!(proxy.seen.calls_of("SubscribeToTask").is_empty());
    }
}

each_binding! {
    async fn a_stream_that_keeps_breaking_gives_up_after_the_retry_budget(binding) {
        let agent = Stepper::new(3);
        let server = TestServer::start(agent.clone(), |b| b).await;
        let mut cuts = vec![Cut::after(2, How::Close)];
        cuts.extend((0..10).map(|_| Cut::after(0, How::Close)));
        let proxy = CuttingProxy::start(&server.url, cuts).await;
        let client = client_via(&proxy, &server, binding);

        agent.open(1);
        let mut stream = within("open", client.send_streaming_message(&stepper_request()))
            .await
            .expect("open");
        next(&mut stream).await;
        next(&mut stream).await;
        let err = within("the next event", stream.next())
            .await
            .expect("an item")
            .expect_err("the stream cannot be resumed");
        assert!(matches!(err, a2a_client::Error::StreamEnded(_)), "{err}");
        assert!(within("the end", stream.next()).await.is_none());
        let attempts = common::fast_retry().max_attempts as usize;
        assert_eq!(proxy.seen.calls_of("SubscribeToTask").len(), attempts - 1);
    }
}

/// A one-step stepper task that completes while the client is cut off after its first event.
async fn ends_while_cut_off(
    binding: Binding,
    proxy_ignores_last_event_id: bool,
) -> Vec<StreamResponse> {
    let agent = Stepper::new(1);
    let server = TestServer::start(agent.clone(), |b| b).await;
    let (cut, trigger) = Cut::on_signal(1, How::Abort);
    let proxy = if proxy_ignores_last_event_id {
        CuttingProxy::ignoring_last_event_id(&server.url, vec![cut]).await
    } else {
        CuttingProxy::start(&server.url, vec![cut]).await
    };
    let client = client_via(&proxy, &server, binding);

    agent.open(1);
    let mut stream = within("open", client.send_streaming_message(&stepper_request()))
        .await
        .expect("open");
    let first = next(&mut stream).await;
    assert!(matches!(first, StreamResponse::Task(_)));
    agent.open(1);
    agent.reached(2).await;
    trigger.notify_one();
    let mut events = vec![first];
    rest(&mut stream, &mut events).await;

    assert_no_event_twice(&events);
    let task = fold(&events).expect("a task");
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts[0].text_content(), "1;");
    if proxy_ignores_last_event_id {
        // SubscribeToTask is refused (the task is finished): the client asks for the task.
        assert_eq!(proxy.seen.calls_of("GetTask").len(), 1);
    }
    events
}

each_binding! {
    async fn a_task_that_ends_while_cut_off_is_followed_to_its_end(binding) {
        ends_while_cut_off(binding, false).await;
    }
}

each_binding! {
    async fn a_task_that_ends_while_cut_off_is_reported_by_its_final_state_when_it_cannot_be_replayed(binding) {
        let events = ends_while_cut_off(binding, true).await;
        let shapes: Vec<String> = events.iter().map(shape).collect();
        assert_eq!(shapes, ["task TASK_STATE_WORKING []", "task TASK_STATE_COMPLETED [1;]"]);
    }
}

each_binding! {
    async fn a_resubscribe_answered_with_503_is_tried_again(binding) {
        let mut bodies = vec![serde_json::json!("Service Unavailable")];
        // An HTTP 503 is retried even when it carries an A2A error; gRPC has no such status
        // (the fault becomes UNAVAILABLE without one).
        if binding != Binding::Grpc {
            bodies.push(common::a2a_error_body(binding, a2a_core::ErrorKind::Internal, "overloaded"));
        }
        for body in bodies {
            let agent = Stepper::new(3);
            let server = TestServer::start(agent.clone(), |b| b).await;
            let (cut, trigger) = Cut::on_signal(4, How::Abort);
            let proxy = CuttingProxy::start(&server.url, vec![cut]).await;
            let client = client_via(&proxy, &server, binding);
            server.faults.fail(1, |s| s.op() == "SubscribeToTask", 503, body);

            agent.open(2);
            let mut stream = within("open", client.send_streaming_message(&stepper_request()))
                .await
                .expect("open");
            let mut events = Vec::new();
            for _ in 0..4 {
                events.push(next(&mut stream).await);
            }
            agent.open(2);
            trigger.notify_one();
            rest(&mut stream, &mut events).await;

            assert_no_event_twice(&events);
            let task = fold(&events).expect("a task");
            assert_eq!(task.status.state, TaskState::Completed);
            assert_eq!(task.artifacts[0].text_content(), "1;2;3;");
            assert_eq!(server.seen.calls_of("SubscribeToTask").len(), 2, "one 503, then a stream");
        }
    }
}

each_binding! {
    async fn a_cut_subscription_resumes_too(binding) {
        let agent = Stepper::new(2);
        let server = TestServer::start(agent.clone(), |b| b).await;
        let (cut, trigger) = Cut::on_signal(1, How::Abort);
        let proxy = CuttingProxy::start(&server.url, vec![cut]).await;
        let client = client_via(&proxy, &server, binding);

        agent.open(1);
        let request = stepper_request().with_return_immediately(true);
        let task = common::task_of(within("send", client.send_message(&request)).await.expect("send"));
        agent.reached(1).await;
        let mut stream = within("subscribe", client.subscribe(task.id.clone()))
            .await
            .expect("subscribe");
        let snapshot = next(&mut stream).await;
        let StreamResponse::Task(first) = &snapshot else {
            panic!("a subscription starts with the task, got {snapshot:?}");
        };
        assert_eq!(first.artifacts[0].text_content(), "1;");
        trigger.notify_one();
        let reader = read_rest(stream, vec![snapshot]);
        proxy.wait_for(Step::Opened(1)).await;
        agent.open(2);
        let events = within("the rest", reader).await.expect("reader");

        assert_no_event_twice(&events);
        let folded = fold(&events).expect("a task");
        assert_eq!(folded.id, task.id);
        assert_eq!(folded.status.state, TaskState::Completed);
        assert_eq!(folded.artifacts[0].text_content(), "1;2;");
        let subscribes = proxy.seen.calls_of("SubscribeToTask");
        assert_eq!(subscribes.len(), 2);
        assert_eq!(subscribes[0].header("last-event-id"), None);
        assert_eq!(subscribes[1].header("last-event-id"), Some("2"));
    }
}
