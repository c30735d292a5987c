//! The inspector's state: the agent it is connected to (its card, a recorder in front of each
//! interface, a client per binding), the credentials it sends, and the feed of what happened
//! (wire exchanges, push deliveries) that the page follows live.

use super::recorder::{self, Upstream};
use crate::{Binding, Client, ClientBuilder, Credentials, Error, RetryPolicy};
use a2a_core::{AgentCard, BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{RwLock, broadcast};

/// How many feed entries are kept for a page that opens (or reloads) later.
const KEPT: usize = 5000;

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

/// What happened in the session, in order: `{"type": "wire" | "push", …}` entries, the last
/// [`KEPT`] kept, each also broadcast to the pages following it.
#[derive(Clone, Debug)]
pub(crate) struct Feed {
    inner: Arc<FeedInner>,
}

#[derive(Debug)]
struct FeedInner {
    ids: AtomicU64,
    kept: Mutex<VecDeque<Value>>,
    live: broadcast::Sender<Value>,
}

impl Default for Feed {
    fn default() -> Self {
        Self {
            inner: Arc::new(FeedInner {
                ids: AtomicU64::new(1),
                kept: Mutex::new(VecDeque::new()),
                live: broadcast::channel(1024).0,
            }),
        }
    }
}

impl Feed {
    /// A fresh exchange id.
    pub(crate) fn next_id(&self) -> u64 {
        self.inner.ids.fetch_add(1, Ordering::Relaxed)
    }

    fn push(&self, entry: Value) {
        let mut kept = self.inner.kept.lock().expect("feed lock poisoned");
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back(entry.clone());
        let _ = self.inner.live.send(entry);
    }

    /// Records one step of a wire exchange (request, response, chunk, trailers, end, error).
    pub(crate) fn wire(&self, mut entry: Value) {
        entry["type"] = json!("wire");
        self.push(entry);
    }

    /// Records a push notification the inspector's webhook received.
    pub(crate) fn push_delivery(&self, entry: Value) {
        let mut entry = entry;
        entry["type"] = json!("push");
        self.push(entry);
    }

    /// Everything kept, and a receiver of what comes next (subscribed under the same lock, so
    /// nothing falls between the two).
    pub(crate) fn follow(&self) -> (Vec<Value>, broadcast::Receiver<Value>) {
        let kept = self.inner.kept.lock().expect("feed lock poisoned");
        (kept.iter().cloned().collect(), self.inner.live.subscribe())
    }
}

/// A client builder for the agent's calls: `credentials`, the call timeout, no retries (so the
/// wire console shows each call once).
fn builder(
    credentials: &Credentials,
    timeout: Duration,
    card: &AgentCard,
) -> Result<ClientBuilder, Error> {
    let builder = ClientBuilder::default()
        .timeout(timeout)
        .retry(RetryPolicy::none());
    credentials.apply(builder, Some(card))
}

/// The agent the inspector is connected to.
#[derive(Debug)]
pub(crate) struct Agent {
    /// The URL the user gave.
    pub(crate) url: String,
    /// The card.
    pub(crate) card: AgentCard,
    /// A client per binding the card offers, each through the recorder.
    pub(crate) clients: Vec<(&'static str, Client)>,
    recorders: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Agent {
    fn drop(&mut self) {
        for r in &self.recorders {
            r.abort();
        }
    }
}

impl Agent {
    /// Puts a recorder in front of each interface of `card` and builds a client per binding
    /// through them.
    pub(crate) async fn start(
        url: String,
        card: AgentCard,
        credentials: &Credentials,
        timeout: Duration,
        feed: &Feed,
    ) -> Result<Self, Error> {
        let plain = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(Error::Transport)?;
        let h2 = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .http2_prior_knowledge()
            .build()
            .map_err(Error::Transport)?;
        let mut recorded = card.clone();
        let mut recorders = Vec::new();
        for interface in &mut recorded.supported_interfaces {
            let (binding, url, http) = match interface.protocol_binding.as_str() {
                BINDING_GRPC => (BINDING_GRPC, recorder::grpc_url(&interface.url), &h2),
                BINDING_HTTP_JSON => (BINDING_HTTP_JSON, interface.url.clone(), &plain),
                BINDING_JSONRPC => (BINDING_JSONRPC, interface.url.clone(), &plain),
                _ => continue,
            };
            let upstream = Upstream {
                binding,
                url,
                http: http.clone(),
                feed: feed.clone(),
                local: String::new(),
            };
            let (local, task) = recorder::start(upstream)
                .await
                .map_err(|e| Error::Config(format!("cannot start the wire recorder: {e}")))?;
            interface.url = if binding == BINDING_GRPC {
                local
            } else {
                format!("{local}/")
            };
            recorders.push(task);
        }
        let mut clients = Vec::new();
        for (name, binding) in [
            (BINDING_JSONRPC, Binding::JsonRpc),
            (BINDING_HTTP_JSON, Binding::HttpJson),
            (BINDING_GRPC, Binding::Grpc),
        ] {
            if !card
                .supported_interfaces
                .iter()
                .any(|i| i.protocol_binding == name)
            {
                continue;
            }
            let client = builder(credentials, timeout, &card)?
                .prefer([binding])
                .build_from_card(recorded.clone())?;
            if client.binding().0 == name {
                clients.push((name, client));
            }
        }
        Ok(Self {
            url,
            card,
            clients,
            recorders,
        })
    }

    /// The client speaking `binding` (`JSONRPC`, `HTTP+JSON`, `GRPC`), or the first one.
    pub(crate) fn client(&self, binding: Option<&str>) -> Result<&Client, Error> {
        match binding {
            Some(b) => self
                .clients
                .iter()
                .find(|(name, _)| *name == b)
                .map(|(_, c)| c)
                .ok_or_else(|| {
                    Error::NoCompatibleInterface(format!(
                        "the agent's card offers no {b} interface"
                    ))
                }),
            None => self.clients.first().map(|(_, c)| c).ok_or_else(|| {
                Error::NoCompatibleInterface("the agent's card offers no interface we speak".into())
            }),
        }
    }
}

/// Everything one running inspector holds.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) feed: Feed,
    /// What every call to the agent carries.
    pub(crate) credentials: Credentials,
    /// Each unary call's timeout.
    pub(crate) timeout: Duration,
    pub(crate) agent: RwLock<Option<Arc<Agent>>>,
    /// The inspector's own base URL (`http://127.0.0.1:PORT`), for its webhook.
    pub(crate) base: String,
    /// The secret path segment of the webhook (the agent cannot know the page's token).
    pub(crate) hook_secret: String,
    /// How long a followed stream may stay silent before the page is told so.
    pub(crate) idle_notice: Duration,
}

impl Session {
    /// The connected agent, or a clear error when there is none yet.
    pub(crate) async fn agent(&self) -> Result<Arc<Agent>, Error> {
        self.agent
            .read()
            .await
            .clone()
            .ok_or_else(|| Error::Config("not connected: connect to an agent first".into()))
    }

    /// The webhook URL push configs point at.
    pub(crate) fn webhook(&self) -> String {
        format!("{}/hook/{}", self.base, self.hook_secret)
    }
}
