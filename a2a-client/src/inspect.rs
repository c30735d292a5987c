//! `a2a inspect`: a local web inspector for any A2A agent, over every binding.
//!
//! The `a2a` binary serves a page (plain HTML, CSS and JavaScript embedded in the binary: no
//! build step, nothing fetched at run time) and a small JSON/SSE API that does the A2A work
//! with this crate's [`Client`](crate::Client): the card and its problems, chat (blocking or
//! streaming, multi-turn, cancel), tasks and their timelines, push deliveries to a webhook the
//! inspector receives itself, `a2a check`. A recorder in front of each of the agent's
//! interfaces shows every exchange exactly as it went over the wire.
//!
//! Safety: it listens on loopback unless told otherwise; every API call needs the random
//! token of the printed URL (as Jupyter does) and a `Host` naming the inspector itself, so
//! neither another local user nor a DNS-rebinding page can drive it; the page's Content
//! Security Policy keeps everything it shows from being fetched anywhere else.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! let inspector = a2a_client::inspect::Inspector::bind(Default::default()).await?;
//! println!("{}", inspector.url());
//! inspector.serve().await
//! # }
//! ```

mod api;
mod connect;
mod recorder;
mod session;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use session::{Feed, Session, now_ms};
use std::net::SocketAddr;
use std::sync::Arc;

/// The largest push notification the webhook accepts.
const MAX_PUSH: usize = 1 << 20;

const INDEX: &str = include_str!("inspect/assets/index.html");
const APP_JS: &str = include_str!("inspect/assets/app.js");
const VIEWS_JS: &str = include_str!("inspect/assets/views.js");
const PANELS_JS: &str = include_str!("inspect/assets/panels.js");
const STYLE: &str = include_str!("inspect/assets/style.css");

/// How to start an inspector.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// Where to listen (default `127.0.0.1:0`: loopback, a free port).
    pub listen: SocketAddr,
    /// An agent to connect to when the page opens.
    pub agent: Option<String>,
    /// The credentials sent to the agent.
    pub credentials: crate::Credentials,
    /// Each unary call's timeout (default 300 s).
    pub timeout: std::time::Duration,
    /// How long a followed stream may stay silent before the page is told so (default 20 s;
    /// the inspector gives up after 5 minutes of silence).
    pub idle_notice: std::time::Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            agent: None,
            credentials: crate::Credentials::default(),
            timeout: std::time::Duration::from_secs(300),
            idle_notice: std::time::Duration::from_secs(20),
        }
    }
}

impl Options {
    /// Options listening on `listen`, connecting to `agent` first, sending `credentials`.
    pub fn new(listen: SocketAddr, agent: Option<String>, credentials: crate::Credentials) -> Self {
        Self {
            listen,
            agent,
            credentials,
            ..Self::default()
        }
    }
}

/// A bound inspector: its URL (with the token) is known before it serves.
#[derive(Debug)]
pub struct Inspector {
    listener: tokio::net::TcpListener,
    router: Router,
    url: String,
}

/// What the guard needs: the token, and the `Host` values that name the inspector.
#[derive(Debug)]
struct Guard {
    token: String,
    hosts: Vec<String>,
}

fn random_hex() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

impl Inspector {
    /// Binds the listener and builds the app.
    pub async fn bind(options: Options) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(options.listen).await?;
        let addr = listener.local_addr()?;
        let port = addr.port();
        let mut hosts = vec![
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ];
        if !addr.ip().is_loopback() {
            hosts.push(addr.to_string());
        }
        let token = random_hex();
        let shown = if addr.ip().is_unspecified() {
            SocketAddr::from(([127, 0, 0, 1], port))
        } else {
            addr
        };
        let base = format!("http://{shown}");
        let session = Arc::new(Session {
            feed: Feed::default(),
            credentials: options.credentials,
            timeout: options.timeout,
            agent: Default::default(),
            base: base.clone(),
            hook_secret: random_hex(),
            idle_notice: options.idle_notice,
        });
        let mut url = format!("{base}/?token={token}");
        if let Some(agent) = &options.agent {
            url.push_str("&agent=");
            url.push_str(&percent_encode(agent));
        }
        let guard = Arc::new(Guard { token, hosts });
        let api = Router::new()
            .route("/connect", post(api::connect))
            .route("/send", post(api::send))
            .route("/task", post(api::task))
            .route("/cancel", post(api::cancel))
            .route("/subscribe", post(api::subscribe))
            .route("/tasks", post(api::tasks))
            .route("/push", post(api::push))
            .route("/check", post(api::check))
            .route("/feed", get(api::feed))
            .layer(middleware::from_fn_with_state(guard.clone(), needs_token));
        let router = Router::new()
            .route(
                "/",
                get(index).layer(middleware::from_fn_with_state(guard.clone(), needs_token)),
            )
            .route("/assets/app.js", get(|| asset(APP_JS, "text/javascript")))
            .route(
                "/assets/views.js",
                get(|| asset(VIEWS_JS, "text/javascript")),
            )
            .route(
                "/assets/panels.js",
                get(|| asset(PANELS_JS, "text/javascript")),
            )
            .route("/assets/style.css", get(|| asset(STYLE, "text/css")))
            .route(
                "/hook/{secret}",
                post(hook).layer(axum::extract::DefaultBodyLimit::max(MAX_PUSH)),
            )
            .nest("/api", api)
            .layer(axum::extract::DefaultBodyLimit::max(32 << 20))
            .layer(middleware::from_fn_with_state(guard, check_host))
            .with_state(session);
        Ok(Self {
            listener,
            router,
            url,
        })
    }

    /// The page's URL, with its token (and the agent to connect to first, if given).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Serves until the process ends.
    pub async fn serve(self) -> std::io::Result<()> {
        axum::serve(self.listener, self.router).await
    }
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Refuses a request whose `Host` does not name the inspector (DNS rebinding).
async fn check_host(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if !guard.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return (StatusCode::FORBIDDEN, "a2a inspect: Host not allowed").into_response();
    }
    next.run(request).await
}

/// The token of the printed URL: in `X-Inspect-Token`, or `?token=` (for `EventSource`).
fn token_of(request: &Request) -> Option<String> {
    if let Some(t) = request.headers().get("x-inspect-token") {
        return t.to_str().ok().map(str::to_owned);
    }
    request.uri().query().and_then(|q| {
        q.split('&')
            .find_map(|kv| kv.strip_prefix("token="))
            .map(str::to_owned)
    })
}

/// Compares without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

async fn needs_token(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    match token_of(&request) {
        Some(t) if same(&t, &guard.token) => next.run(request).await,
        _ => (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({ "error": { "message": "open the URL `a2a inspect` printed: it carries the token" } })),
        )
            .into_response(),
    }
}

async fn index() -> Response {
    let mut response = INDEX.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

async fn asset(body: &'static str, media_type: &'static str) -> Response {
    ([(header::CONTENT_TYPE, media_type)], body).into_response()
}

/// `POST /hook/{secret}`: a push notification from the agent, shown on the page.
async fn hook(
    State(s): State<Arc<Session>>,
    Path(secret): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !same(&secret, &s.hook_secret) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let token_ok = headers
        .get("x-a2a-notification-token")
        .and_then(|t| t.to_str().ok())
        .is_some_and(|t| same(t, &s.hook_secret));
    let list: Vec<Value> = headers
        .iter()
        .map(|(k, v)| json!([k.as_str(), String::from_utf8_lossy(v.as_bytes())]))
        .collect();
    let payload = serde_json::from_slice::<Value>(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    s.feed.push_delivery(json!({
        "at": now_ms(),
        "headers": list,
        "tokenMatches": token_ok,
        "body": payload,
    }));
    StatusCode::NO_CONTENT.into_response()
}
