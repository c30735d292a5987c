//! Discovery through `CardResolver`: the HTTP cache (`Cache-Control: max-age`, `ETag`,
//! `If-None-Match` → 304), the fallback to `/.well-known/agent.json`, and our server's card.

mod common;

use a2a_client::{CacheOutcome, CardResolver, Error};
use a2a_core::AgentCard;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use common::{Recorder, TestServer, within};
use std::sync::{Arc, Mutex};

/// What the card server answers with; tests change it between fetches.
#[derive(Debug)]
struct Published {
    card: AgentCard,
    etag: String,
    cache_control: String,
}

/// A small card server: `ETag`, `Cache-Control`, and 304 when `If-None-Match` matches.
struct CardServer {
    url: String,
    seen: Recorder,
    published: Arc<Mutex<Published>>,
}

impl CardServer {
    /// Serves the card at `path` only (404 elsewhere).
    async fn start(path: &str, cache_control: &str) -> Self {
        let published = Arc::new(Mutex::new(Published {
            card: card("Weather agent"),
            etag: "\"v1\"".to_owned(),
            cache_control: cache_control.to_owned(),
        }));
        let seen = Recorder::default();
        let router = seen.wrap(
            Router::new()
                .route(path, get(serve_card))
                .with_state(published.clone()),
        );
        Self {
            url: common::serve(router).await,
            seen,
            published,
        }
    }

    fn publish(&self, change: impl FnOnce(&mut Published)) {
        change(&mut self.published.lock().expect("published"));
    }

    fn fetches(&self) -> Vec<common::Seen> {
        self.seen.all()
    }
}

fn card(name: &str) -> AgentCard {
    AgentCard::builder(name, "Forecasts")
        .interface(a2a_core::BINDING_JSONRPC, "http://127.0.0.1:9/a2a")
        .build()
}

async fn serve_card(
    State(published): State<Arc<Mutex<Published>>>,
    headers: HeaderMap,
) -> Response {
    let p = published.lock().expect("published");
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == p.etag);
    let common = [
        (header::ETAG, p.etag.clone()),
        (header::CACHE_CONTROL, p.cache_control.clone()),
    ];
    if matches {
        (StatusCode::NOT_MODIFIED, common).into_response()
    } else {
        (common, axum::Json(p.card.clone())).into_response()
    }
}

fn resolver() -> CardResolver {
    CardResolver::new(reqwest::Client::new(), Default::default())
}

async fn resolve(resolver: &CardResolver, url: &str) -> (AgentCard, CacheOutcome) {
    within("resolve", resolver.resolve_with_outcome(url))
        .await
        .expect("resolve")
}

#[tokio::test]
async fn a_second_resolve_within_max_age_is_answered_from_the_cache_without_asking() {
    let server = CardServer::start("/.well-known/agent-card.json", "public, max-age=60").await;
    let resolver = resolver();
    let (first, outcome) = resolve(&resolver, &server.url).await;
    assert_eq!(outcome, CacheOutcome::Fetched);
    assert_eq!(first.name, "Weather agent");
    let (second, outcome) = resolve(&resolver, &server.url).await;
    assert_eq!(outcome, CacheOutcome::Fresh);
    assert_eq!(second, first);
    // A trailing slash names the same agent.
    let (_, outcome) = resolve(&resolver, &format!("{}/", server.url)).await;
    assert_eq!(outcome, CacheOutcome::Fresh);
    assert_eq!(server.fetches().len(), 1, "the server was asked once");
}

#[tokio::test]
async fn a_stale_card_is_revalidated_with_if_none_match_and_a_304() {
    let server = CardServer::start("/.well-known/agent-card.json", "max-age=0").await;
    let resolver = resolver();
    let (first, outcome) = resolve(&resolver, &server.url).await;
    assert_eq!(outcome, CacheOutcome::Fetched);
    let (second, outcome) = resolve(&resolver, &server.url).await;
    assert_eq!(outcome, CacheOutcome::Revalidated);
    assert_eq!(second, first);

    let fetches = server.fetches();
    assert_eq!(fetches.len(), 2);
    assert_eq!(fetches[0].header("if-none-match"), None);
    assert_eq!(fetches[1].header("if-none-match"), Some("\"v1\""));
}

#[tokio::test]
async fn a_card_served_with_no_cache_is_revalidated_every_time() {
    let server = CardServer::start("/.well-known/agent-card.json", "no-cache").await;
    let resolver = resolver();
    assert_eq!(
        resolve(&resolver, &server.url).await.1,
        CacheOutcome::Fetched
    );
    assert_eq!(
        resolve(&resolver, &server.url).await.1,
        CacheOutcome::Revalidated
    );
    assert_eq!(
        resolve(&resolver, &server.url).await.1,
        CacheOutcome::Revalidated
    );
    assert_eq!(server.fetches().len(), 3);
}

#[tokio::test]
async fn a_304_with_a_new_max_age_makes_the_card_fresh_again() {
    let server = CardServer::start("/.well-known/agent-card.json", "max-age=0").await;
    let resolver = resolver();
    assert_eq!(
        resolve(&resolver, &server.url).await.1,
        CacheOutcome::Fetched
    );
    server.publish(|p| p.cache_control = "max-age=60".into());
    assert_eq!(
        resolve(&resolver, &server.url).await.1,
        CacheOutcome::Revalidated
    );
    assert_eq!(resolve(&resolver, &server.url).await.1, CacheOutcome::Fresh);
    assert_eq!(server.fetches().len(), 2);
}

#[tokio::test]
async fn a_card_that_changed_is_fetched_again_when_revalidated() {
    let server = CardServer::start("/.well-known/agent-card.json", "max-age=0").await;
    let resolver = resolver();
    assert_eq!(
        resolve(&resolver, &server.url).await.0.name,
        "Weather agent"
    );
    server.publish(|p| {
        p.card = card("Weather agent v2");
        p.etag = "\"v2\"".into();
    });
    let (card, outcome) = resolve(&resolver, &server.url).await;
    assert_eq!(outcome, CacheOutcome::Fetched);
    assert_eq!(card.name, "Weather agent v2");
    assert_eq!(server.fetches()[1].header("if-none-match"), Some("\"v1\""));
    // The new ETag is the one revalidated next.
    assert_eq!(
        resolve(&resolver, &server.url).await.1,
        CacheOutcome::Revalidated
    );
    assert_eq!(server.fetches()[2].header("if-none-match"), Some("\"v2\""));
}

#[tokio::test]
async fn the_legacy_agent_json_is_tried_when_agent_card_json_is_missing() {
    let server = CardServer::start("/.well-known/agent.json", "max-age=0").await;
    let resolver = resolver();
    let (card, outcome) = resolve(&resolver, &server.url).await;
    assert_eq!(outcome, CacheOutcome::Fetched);
    assert_eq!(card.name, "Weather agent");
    let paths: Vec<String> = server.fetches().iter().map(|s| s.path.clone()).collect();
    assert_eq!(
        paths,
        ["/.well-known/agent-card.json", "/.well-known/agent.json"]
    );

    // Revalidation goes straight to where the card was found.
    assert_eq!(
        resolve(&resolver, &server.url).await.1,
        CacheOutcome::Revalidated
    );
    let last = server.fetches().pop().expect("a fetch");
    assert_eq!(last.path, "/.well-known/agent.json");
    assert_eq!(server.fetches().len(), 3);
}

#[tokio::test]
async fn no_card_at_either_path_is_an_http_404() {
    let server = CardServer::start("/somewhere/else.json", "max-age=60").await;
    let err = within("resolve", resolver().resolve(&server.url))
        .await
        .expect_err("no card");
    assert!(matches!(err, Error::Http { status: 404, .. }), "{err}");
    assert_eq!(server.fetches().len(), 2, "both paths were tried");
}

#[tokio::test]
async fn a_full_card_url_is_fetched_as_is() {
    let server = CardServer::start("/cards/weather.json", "max-age=60").await;
    let url = format!("{}/cards/weather.json", server.url);
    let (card, outcome) = resolve(&resolver(), &url).await;
    assert_eq!(outcome, CacheOutcome::Fetched);
    assert_eq!(card.name, "Weather agent");
    assert_eq!(server.fetches().len(), 1);
}

#[tokio::test]
async fn the_resolver_sends_its_headers_with_every_fetch() {
    let server = CardServer::start("/.well-known/agent-card.json", "max-age=0").await;
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("x-trace", "t-42".parse().expect("header"));
    let resolver = CardResolver::new(reqwest::Client::new(), headers);
    resolve(&resolver, &server.url).await;
    resolve(&resolver, &server.url).await;
    assert!(
        server
            .fetches()
            .iter()
            .all(|f| f.header("x-trace") == Some("t-42"))
    );
}

#[tokio::test]
async fn our_server_card_is_fresh_for_its_max_age_and_lists_each_binding() {
    let server = TestServer::demo().await;
    let resolver = resolver();
    let (card, outcome) = resolve(&resolver, &server.url).await;
    assert_eq!(outcome, CacheOutcome::Fetched);
    assert_eq!(resolve(&resolver, &server.url).await.1, CacheOutcome::Fresh);
    assert_eq!(server.seen.all().len(), 1);

    assert_eq!(card, server.card, "the hybrid card reads as the v1.0 card");
    let offered: Vec<(String, String)> = card
        .supported_interfaces
        .iter()
        .map(|i| (i.protocol_binding.clone(), i.protocol_version.clone()))
        .collect();
    assert!(offered.contains(&("JSONRPC".into(), "1.0".into())));
    assert!(offered.contains(&("HTTP+JSON".into(), "1.0".into())));
    assert!(card.capabilities.streaming());
}

#[tokio::test]
async fn an_unreachable_agent_is_a_transport_error() {
    let url = common::unreachable_url().await;
    let err = within("resolve", resolver().resolve(&url))
        .await
        .expect_err("nothing listens");
    assert!(matches!(err, Error::Transport(_)), "{err}");
}

#[tokio::test]
async fn a_card_that_is_not_json_is_a_decode_error_naming_the_url() {
    let app = Router::new().route(
        "/.well-known/agent-card.json",
        get(|| async { "<html>maintenance</html>" }),
    );
    let url = common::serve(app).await;
    let err = within("resolve", resolver().resolve(&url))
        .await
        .expect_err("not a card");
    let Error::Decode(message) = &err else {
        panic!("a decode error expected, got {err:?}");
    };
    // The cause is kept: the JSON error, behind what was being read.
    let message = message.to_string();
    assert!(message.contains("agent-card.json is not JSON"), "{message}");
    assert!(
        std::error::Error::source(&err).is_some_and(|cause| cause.source().is_some()),
        "{err:?}"
    );
}
