//! `bare-axum`: the floor of the comparison. A bare axum JSON-RPC handler that parses each
//! request's envelope (`id`, `method`, `params` skipped over) and answers with fixed bytes: the
//! same completed echo task our server returns (one user message, one artifact), a fixed
//! `ListTasks` page, a fixed two-event SSE stream for `SendStreamingMessage` and
//! `SubscribeToTask`, and a fixed agent card. No task store, no agent, no validation: what
//! remains is HTTP, routing and JSON-RPC framing, which any A2A server pays.
//!
//! Usage: `bare-axum [--listen 127.0.0.1:0]`; prints `bare-axum listening on http://ADDR`.

use a2a_core::{
    AgentInterface, Artifact, BINDING_JSONRPC, ListTasksResponse, Message, SendMessageResponse,
    StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt as _;
use serde::Deserialize;
use serde::de::IgnoredAny;
use std::convert::Infallible;
use std::sync::Arc;

#[derive(Debug)]
struct Fixed {
    send: Vec<u8>,
    task: Vec<u8>,
    list: Vec<u8>,
    events: Vec<(u64, Vec<u8>)>,
    card: Bytes,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: serde_json::Value,
    method: String,
    #[serde(default)]
    #[allow(dead_code)]
    params: IgnoredAny,
}

fn json(v: &impl serde::Serialize) -> Vec<u8> {
    serde_json::to_vec(v).expect("fixed values serialize")
}

fn envelope(id: &serde_json::Value, result: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(result.len() + 48);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut out, id).expect("an id serializes");
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result);
    out.push(b'}');
    out
}

fn fixed(url: &str) -> Fixed {
    let mut user = Message::user_text("hello");
    user.task_id = Some("3f0b8d51-0000-4000-8000-000000000001".into());
    user.context_id = Some("3f0b8d51-0000-4000-8000-000000000002".into());
    let mut task = Task::new(
        "3f0b8d51-0000-4000-8000-000000000001",
        "3f0b8d51-0000-4000-8000-000000000002",
        TaskStatus::new(TaskState::Completed),
    );
    task.history.push(user);
    task.apply_artifact(Artifact::text("echo", "echo: hello"), false);
    let mut created = task.clone();
    created.status = TaskStatus::new(TaskState::Submitted);
    let done = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: task.status.clone(),
        metadata: None,
        generation: 0,
    });
    let mut listed = task.clone();
    listed.artifacts.clear();
    let list = ListTasksResponse {
        tasks: vec![listed; 50],
        next_page_token: String::new(),
        page_size: 50,
        total_size: 50,
    };
    let mut card = a2a_server::demo::DemoAgent::card();
    card.supported_interfaces = vec![AgentInterface::new(BINDING_JSONRPC, url)];
    Fixed {
        send: json(&SendMessageResponse::Task(task.clone())),
        task: json(&task),
        list: json(&list),
        events: vec![(1, json(&StreamResponse::Task(created))), (2, json(&done))],
        card: Bytes::from(json(&card)),
    }
}

fn json_response(body: Vec<u8>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

async fn rpc(State(fixed): State<Arc<Fixed>>, body: Bytes) -> Response {
    let req: Envelope = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(_) => {
            return json_response(
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
                    .to_vec(),
            );
        }
    };
    match req.method.as_str() {
        "SendMessage" => json_response(envelope(&req.id, &fixed.send)),
        "GetTask" => json_response(envelope(&req.id, &fixed.task)),
        "ListTasks" => json_response(envelope(&req.id, &fixed.list)),
        "SendStreamingMessage" | "SubscribeToTask" => {
            let id = req.id;
            let events: Vec<Result<Event, Infallible>> = fixed
                .events
                .iter()
                .map(|(seq, e)| {
                    let data = String::from_utf8(envelope(&id, e)).expect("JSON is UTF-8");
                    Ok(Event::default().id(seq.to_string()).data(data))
                })
                .collect();
            Sse::new(futures::stream::iter(events)).into_response()
        }
        _ => json_response(envelope(&req.id, b"{}")),
    }
}

async fn card(State(fixed): State<Arc<Fixed>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        fixed.card.clone(),
    )
        .into_response()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut listen = "127.0.0.1:0".to_owned();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => listen = args.next().ok_or("--listen needs an address")?,
            "-h" | "--help" => {
                println!("usage: bare-axum [--listen 127.0.0.1:0]");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    let local = listener.local_addr()?;
    let url = format!("http://{local}");
    let fixed = Arc::new(fixed(&url));
    let app = Router::new()
        .route("/", post(rpc))
        .route("/.well-known/agent-card.json", get(card))
        .with_state(fixed);
    println!("bare-axum listening on {url}");
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await?;
    Ok(())
}
