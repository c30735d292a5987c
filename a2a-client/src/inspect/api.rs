//! The page's JSON and SSE API. Every A2A call goes through the connected agent's clients
//! (so through the wire recorder); requests and answers are the A2A v1.0 JSON shapes, so the
//! page builds a `Message` or a `ListTasksRequest` exactly as the wire carries it.

use super::connect;
use super::session::{Agent, Session, now_ms};
use crate::Error;
use a2a_core::{ListTasksRequest, Message, SendMessageRequest, TaskId};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt as _};
use serde::Deserialize;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// How long a stream may stay silent before the inspector gives up on it.
const IDLE_LIMIT: Duration = Duration::from_secs(300);

/// An error as the page shows it: `{"error": {"message", "kind"?, "code"?}}`; 400 for what the
/// user gave, 502 for what the agent did.
#[derive(Debug)]
pub(crate) struct Failure {
    status: StatusCode,
    body: Value,
}

impl Failure {
    /// Something the user gave is wrong.
    pub(crate) fn input(message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            status: StatusCode::BAD_REQUEST,
            body: json!({ "message": message }),
        }
    }

    /// The agent (or the way to it) failed.
    pub(crate) fn agent(message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            status: StatusCode::BAD_GATEWAY,
            body: json!({ "message": message }),
        }
    }
}

/// What went wrong, with its causes (`error sending request: connection refused`).
pub(crate) fn describe(e: &Error) -> String {
    if let Error::Config(message) = e {
        return message.clone();
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

pub(crate) fn error_json(e: &Error) -> Value {
    let mut body = json!({ "message": describe(e) });
    if let Some(kind) = e.remote().and_then(a2a_core::Error::kind) {
        body["kind"] = json!(format!("{kind:?}"));
        body["code"] = json!(kind.codes().json_rpc);
    }
    body
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let status = match e {
            Error::Config(_) | Error::NoCompatibleInterface(_) => StatusCode::BAD_REQUEST,
            _ => StatusCode::BAD_GATEWAY,
        };
        Self {
            status,
            body: error_json(&e),
        }
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.body }))).into_response()
    }
}

type Api<T> = Result<T, Failure>;
type Shared = State<Arc<Session>>;

/// `POST /api/connect`.
pub(crate) async fn connect(
    State(s): Shared,
    Json(req): Json<connect::ConnectRequest>,
) -> Api<Json<Value>> {
    Ok(Json(connect::connect(&s, req).await?))
}

/// Which binding a call goes over (`JSONRPC`, `HTTP+JSON`, `GRPC`; default the card's first).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Via {
    #[serde(default)]
    binding: Option<String>,
}

async fn agent(s: &Session) -> Result<Arc<Agent>, Error> {
    s.agent().await
}

/// `POST /api/send`: `{binding, stream, message, returnImmediately?}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SendBody {
    #[serde(flatten)]
    via: Via,
    #[serde(default)]
    stream: bool,
    /// Answer as soon as the task exists (blocking sends only).
    #[serde(default)]
    return_immediately: bool,
    message: Message,
}

pub(crate) async fn send(State(s): Shared, Json(req): Json<SendBody>) -> Api<Response> {
    let agent = agent(&s).await?;
    let client = agent.client(req.via.binding.as_deref())?.clone();
    let request = SendMessageRequest::new(req.message);
    if !req.stream {
        let request = request.with_return_immediately(req.return_immediately);
        let response = client.send_message(&request).await?;
        return Ok(Json(json!({ "at": now_ms(), "response": response })).into_response());
    }
    let stream = client.send_streaming_items(&request).await?;
    Ok(events(stream, s.idle_notice).into_response())
}

/// The events of a stream for the page: `event` entries `{at, id, event}` (`id`: the event's
/// id, a sequence number on agents that let a stream resume, absent on others), `notice` when
/// the agent goes quiet, `failure` `{message}` when the stream breaks, `end` when it ends.
fn events(
    mut stream: crate::transport::ItemStream,
    notice: Duration,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let out = async_stream::stream! {
        let mut quiet = Duration::ZERO;
        loop {
            match tokio::time::timeout(notice, stream.next()).await {
                Ok(Some(Ok(item))) => {
                    quiet = Duration::ZERO;
                    let data = json!({ "at": now_ms(), "id": item.id, "event": item.event });
                    yield Ok(Event::default().event("event").data(data.to_string()));
                }
                Ok(Some(Err(e))) => {
                    yield Ok(Event::default().event("failure").data(json!(error_json(&e)).to_string()));
                    break;
                }
                Ok(None) => {
                    yield Ok(Event::default().event("end").data("{}"));
                    break;
                }
                Err(_) => {
                    quiet += notice;
                    if quiet >= IDLE_LIMIT {
                        let message = format!("the agent sent nothing for {}s: stopped following", quiet.as_secs());
                        yield Ok(Event::default().event("failure").data(json!({ "message": message }).to_string()));
                        break;
                    }
                    let message = format!("the agent has sent nothing for {}s (still waiting)", quiet.as_secs());
                    yield Ok(Event::default().event("notice").data(json!({ "message": message }).to_string()));
                }
            }
        }
    };
    Sse::new(out).keep_alive(KeepAlive::default())
}

/// A task named in a call: `{binding, taskId, historyLength?}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskBody {
    #[serde(flatten)]
    via: Via,
    task_id: TaskId,
    #[serde(default)]
    history_length: Option<i32>,
}

/// `POST /api/task`: GetTask.
pub(crate) async fn task(State(s): Shared, Json(req): Json<TaskBody>) -> Api<Json<Value>> {
    let agent = agent(&s).await?;
    let client = agent.client(req.via.binding.as_deref())?;
    let mut get = a2a_core::GetTaskRequest::new(req.task_id);
    get.history_length = req.history_length;
    let task = client.call(&get).await?;
    Ok(Json(json!({ "at": now_ms(), "task": task })))
}

/// `POST /api/cancel`: CancelTask.
pub(crate) async fn cancel(State(s): Shared, Json(req): Json<TaskBody>) -> Api<Json<Value>> {
    let agent = agent(&s).await?;
    let task = agent
        .client(req.via.binding.as_deref())?
        .cancel_task(req.task_id)
        .await?;
    Ok(Json(json!({ "at": now_ms(), "task": task })))
}

/// `POST /api/subscribe`: `{binding, taskId, after?}`: SubscribeToTask, resumed after event
/// `after` (sent as `Last-Event-ID`) when given.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SubscribeBody {
    #[serde(flatten)]
    via: Via,
    task_id: TaskId,
    #[serde(default)]
    after: Option<String>,
}

/// `POST /api/subscribe`: SubscribeToTask, as a stream of events.
pub(crate) async fn subscribe(State(s): Shared, Json(req): Json<SubscribeBody>) -> Api<Response> {
    let agent = agent(&s).await?;
    let client = agent.client(req.via.binding.as_deref())?.clone();
    let after = req.after.filter(|a| !a.trim().is_empty());
    let stream = client.subscribe_items(req.task_id, after).await?;
    Ok(events(stream, s.idle_notice).into_response())
}

/// `POST /api/tasks`: `{binding, request: ListTasksRequest}`.
#[derive(Debug, Deserialize)]
pub(crate) struct ListBody {
    #[serde(flatten)]
    via: Via,
    #[serde(default)]
    request: ListTasksRequest,
}

pub(crate) async fn tasks(State(s): Shared, Json(req): Json<ListBody>) -> Api<Json<Value>> {
    let agent = agent(&s).await?;
    let page = agent
        .client(req.via.binding.as_deref())?
        .list_tasks(&req.request)
        .await?;
    Ok(Json(json!({ "at": now_ms(), "page": page })))
}

/// `POST /api/push`: a push config for the task pointing at the inspector's own webhook.
pub(crate) async fn push(State(s): Shared, Json(req): Json<TaskBody>) -> Api<Json<Value>> {
    let agent = agent(&s).await?;
    let client = agent.client(req.via.binding.as_deref())?;
    let config = a2a_core::TaskPushNotificationConfig {
        task_id: Some(req.task_id),
        url: s.webhook(),
        token: Some(s.hook_secret.clone()),
        ..Default::default()
    };
    let created = client.create_push_config(&config).await?;
    Ok(Json(
        json!({ "at": now_ms(), "config": created, "webhook": s.webhook() }),
    ))
}

/// `POST /api/check`: `a2a check` of the connected agent: `{bindings?: [..], groups?: [..],
/// longTask?: ".."}` (`longTask`: `a2a check --long-task`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CheckBody {
    #[serde(default)]
    bindings: Vec<String>,
    #[serde(default)]
    groups: Vec<String>,
    #[serde(default)]
    long_task: Option<String>,
}

pub(crate) async fn check(State(s): Shared, Json(req): Json<CheckBody>) -> Api<Json<Value>> {
    let agent = agent(&s).await?;
    let mut options = crate::check::Options {
        headers: s.credentials.headers(Some(&agent.card))?,
        ..Default::default()
    };
    for b in &req.bindings {
        let known = [
            a2a_core::BINDING_JSONRPC,
            a2a_core::BINDING_HTTP_JSON,
            a2a_core::BINDING_GRPC,
        ];
        let b = known
            .into_iter()
            .find(|k| k == b)
            .ok_or_else(|| Error::Config(format!("unknown binding {b:?}")))?;
        options.bindings.push(b);
    }
    for g in &req.groups {
        options.only.push(
            crate::check::Group::from_name(g)
                .ok_or_else(|| Error::Config(format!("unknown check group {g:?}")))?,
        );
    }
    options.webhook = Some(s.webhook());
    options.long_task = req.long_task.filter(|t| !t.trim().is_empty());
    let report = crate::check::run(&agent.url, &options).await;
    Ok(Json(report.to_json()))
}

/// `GET /api/feed`: what was recorded so far, then what comes, as SSE `entry` events.
pub(crate) async fn feed(State(s): Shared) -> impl IntoResponse {
    let (kept, mut live) = s.feed.follow();
    let out = async_stream::stream! {
        for entry in kept {
            yield Ok::<_, Infallible>(Event::default().event("entry").data(entry.to_string()));
        }
        loop {
            match live.recv().await {
                Ok(entry) => yield Ok(Event::default().event("entry").data(entry.to_string())),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    let note = json!({ "type": "lost", "count": n });
                    yield Ok(Event::default().event("entry").data(note.to_string()));
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    };
    Sse::new(out).keep_alive(KeepAlive::default())
}
