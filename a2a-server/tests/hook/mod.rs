//! A webhook receiver for tests: the sequence number (from `A2A-Notification-Id`) of every post
//! it got, duplicates included.

#![allow(dead_code, unreachable_pub)]

use axum::http::{HeaderMap, StatusCode};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The receiver's record of posts.
#[derive(Clone, Default)]
pub struct Receiver {
    posts: Arc<Mutex<Vec<u64>>>,
}

impl Receiver {
    /// Listens on a port of its own; each post takes `delay` to answer (a slow receiver makes
    /// deliveries overlap). Returns the receiver and its URL.
    pub async fn start(delay: Duration) -> (Self, String) {
        let r = Self::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let state = r.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap| {
                let state = state.clone();
                async move {
                    let id = headers["a2a-notification-id"].to_str().unwrap();
                    let seq = id.rsplit(':').next().unwrap().parse().unwrap();
                    state.posts.lock().unwrap().push(seq);
                    tokio::time::sleep(delay).await;
                    StatusCode::OK
                }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        (r, url)
    }

    /// The sequence numbers posted so far, in arrival order.
    pub fn posts(&self) -> Vec<u64> {
        self.posts.lock().unwrap().clone()
    }
}
