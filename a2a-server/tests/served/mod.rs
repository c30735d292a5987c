//! Serving and calling a server in tests: the `Steps` agent on a free loopback port, JSON-RPC
//! calls to it with or without a bearer token, and the HTTP+JSON body of a send. Shared by the
//! webhook tests (`push_webhooks.rs`), the authentication tests (`auth.rs`) and the durability
//! tests (`durability_*.rs`).

#![allow(dead_code, unreachable_pub)]

use a2a_core::{Artifact, Error, Message};
use a2a_server::push::PushSettings;
use a2a_server::{Agent, RequestContext, TaskEvents};
use serde_json::{Value, json};
use std::time::Duration;

/// Three steps, each a status update and an artifact chunk; or asks a question for `ask`.
pub struct Steps;

impl Agent for Steps {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        if cx.message.text() == "ask" && cx.stored_task.is_none() {
            return events.input_required("Which one?").await;
        }
        for i in 1..=3 {
            events.working(format!("step {i}")).await?;
            let chunk = Artifact::text("out", format!("{i};")).with_id("a-1");
            events.artifact_chunk(chunk, i > 1, i == 3).await?;
        }
        events.complete(Some(Message::agent_text("done"))).await
    }

    async fn cancel(&self, _: RequestContext, _: TaskEvents) -> Result<(), Error> {
        Ok(())
    }
}

pub fn fast_push() -> PushSettings {
    PushSettings::default()
        .allow("127.0.0.1")
        .unwrap()
        .backoff(Duration::from_millis(20), Duration::from_millis(100))
        .max_attempts(400)
}

/// Serves the built server on a free loopback port, advertising that address.
pub async fn start(builder: a2a_server::ServerBuilder) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = builder.public_url(&url).build().unwrap();
    tokio::spawn(async move { server.serve(listener).await });
    url
}

/// A JSON-RPC call: a v1.0 method with `A2A-Version: 1.0`, a v0.3 one (`tasks/get`) without a
/// version, as a v0.3 client sends it.
pub async fn rpc(url: &str, token: Option<&str>, method: &str, params: Value) -> Value {
    let mut req = reqwest::Client::new()
        .post(format!("{url}/"))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    if !method.contains('/') {
        req = req.header("A2A-Version", "1.0");
    }
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    req.send().await.unwrap().json().await.unwrap()
}

/// A GET of `url` decoded as JSON (whatever its status).
pub async fn get_json(http: &reqwest::Client, url: &str) -> Value {
    http.get(url).send().await.unwrap().json().await.unwrap()
}

/// The HTTP+JSON body of a send: a user message `text` with the id `id`.
pub fn message(id: &str, text: &str) -> Value {
    json!({"message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]}})
}
