//! Receiving push notifications: an axum handler an orchestrator mounts as its webhook. It
//! checks the notification token or the `Authorization` credentials it expects, reads the
//! event (v1.0 `StreamResponse`, or the v0.3 shape), drops duplicates, and yields the events.
//! Needs the `webhook` feature (off by default: it brings in axum).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use a2a_client::webhook::PushReceiver;
//!
//! let (receiver, mut events) = PushReceiver::new(1024);
//! let app = receiver.expect_token("tok-9").router("/hooks/a2a");
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:9100").await?;
//! tokio::spawn(async move { axum::serve(listener, app).await });
//! while let Some(push) = events.recv().await {
//!     println!("{}: {:?}", push.task_id, push.event.state());
//! }
//! # Ok(()) }
//! ```

use a2a_core::{StreamResponse, TaskId};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// How many notification ids are remembered for de-duplication.
const REMEMBERED: usize = 65_536;

/// One received notification.
#[derive(Clone, Debug, PartialEq)]
pub struct PushEvent {
    /// The task it is about.
    pub task_id: TaskId,
    /// The sender's notification id (`A2A-Notification-Id`), if it sent one.
    pub notification_id: Option<String>,
    /// The event.
    pub event: StreamResponse,
}

/// A webhook endpoint for A2A push notifications.
#[derive(Clone)]
pub struct PushReceiver {
    token: Option<String>,
    authorization: Option<String>,
    tx: mpsc::Sender<PushEvent>,
    seen: Arc<Mutex<(HashSet<String>, VecDeque<String>)>>,
}

impl std::fmt::Debug for PushReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushReceiver")
            .field("checks_token", &self.token.is_some())
            .field("checks_authorization", &self.authorization.is_some())
            .finish_non_exhaustive()
    }
}

impl PushReceiver {
    /// A receiver and the channel its events arrive on (`capacity` events may wait; when the
    /// channel is full, the sender is answered 503 and retries later).
    pub fn new(capacity: usize) -> (Self, mpsc::Receiver<PushEvent>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (
            Self {
                token: None,
                authorization: None,
                tx,
                seen: Arc::default(),
            },
            rx,
        )
    }

    /// Requires this token in `X-A2A-Notification-Token` (or `A2A-Notification-Token`).
    #[must_use]
    pub fn expect_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Requires this exact `Authorization` value (e.g. `Bearer s3cr3t`).
    #[must_use]
    pub fn expect_authorization(mut self, value: impl Into<String>) -> Self {
        self.authorization = Some(value.into());
        self
    }

    /// An axum router serving the webhook at `path` (POST).
    pub fn router(self, path: &str) -> axum::Router {
        axum::Router::new()
            .route(path, axum::routing::post(receive))
            .with_state(self)
    }

    /// Whether `id` was seen before (and remembers it).
    fn seen_before(&self, id: &str) -> bool {
        let mut guard = self.seen.lock().expect("dedup lock");
        let (set, order) = &mut *guard;
        if set.contains(id) {
            return true;
        }
        set.insert(id.to_owned());
        order.push_back(id.to_owned());
        if order.len() > REMEMBERED
            && let Some(old) = order.pop_front()
        {
            set.remove(&old);
        }
        false
    }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn receive(
    State(rx): State<PushReceiver>,
    headers: HeaderMap,
    body: Bytes,
) -> impl IntoResponse {
    if let Some(expected) = &rx.token {
        let got = header_str(&headers, "x-a2a-notification-token")
            .or_else(|| header_str(&headers, "a2a-notification-token"));
        if got != Some(expected.as_str()) {
            return (
                StatusCode::UNAUTHORIZED,
                "wrong or missing notification token",
            )
                .into_response();
        }
    }
    if let Some(expected) = &rx.authorization
        && header_str(&headers, header::AUTHORIZATION.as_str()) != Some(expected.as_str())
    {
        return (StatusCode::UNAUTHORIZED, "wrong or missing credentials").into_response();
    }
    let value: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("not JSON: {e}")).into_response(),
    };
    let event = if value.get("kind").is_some() {
        a2a_core::v03::decode_stream_event(&value).map_err(|e| e.message)
    } else {
        serde_json::from_value::<StreamResponse>(value).map_err(|e| e.to_string())
    };
    let event = match event {
        Ok(e) => e,
        Err(e) => {
            return (StatusCode::BAD_REQUEST, format!("not an A2A event: {e}")).into_response();
        }
    };
    let Some(task_id) = event.task_id().cloned() else {
        return (StatusCode::BAD_REQUEST, "the event names no task").into_response();
    };
    let notification_id = header_str(&headers, "a2a-notification-id").map(str::to_owned);
    // Without a sender id, the payload itself identifies a duplicate.
    let key = notification_id
        .clone()
        .unwrap_or_else(|| format!("body:{}", String::from_utf8_lossy(&body)));
    if rx.seen_before(&key) {
        return StatusCode::OK.into_response();
    }
    let push = PushEvent {
        task_id,
        notification_id,
        event,
    };
    match rx.tx.try_send(push) {
        Ok(()) => StatusCode::OK.into_response(),
        Err(_) => {
            // Not delivered: forget it so that the sender's retry is accepted.
            let mut guard = rx.seen.lock().expect("dedup lock");
            guard.0.remove(&key);
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "receiver busy; retry later",
            )
                .into_response()
        }
    }
}
