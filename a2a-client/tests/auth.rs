//! Credentials and headers added by interceptors reach the server on every call, unary and
//! streaming, over both bindings: a bearer token, an API key in a header, the query or a cookie
//! (explicitly placed, or where the card's scheme says), and fixed extra headers.

mod common;

use a2a_client::{ApiKeyAuth, ApiKeyLocation, BearerAuth, Binding, Client};
use a2a_core::{
    AgentCard, ApiKeySecurityScheme, ListTasksRequest, Message, SecurityScheme, SendMessageRequest,
};
use a2a_server::demo::DemoAgent;
use common::{Seen, TestServer, collect, each_binding, http_bindings, task_of, within};

/// Makes one call of each kind: SendMessage, GetTask, ListTasks, SendStreamingMessage.
async fn exercise(client: &Client) {
    let task = task_of(
        within("send", client.send_text("hello"))
            .await
            .expect("send"),
    );
    within("get", client.get_task(task.id)).await.expect("get");
    within("list", client.list_tasks(&ListTasksRequest::default()))
        .await
        .expect("list");
    let request = SendMessageRequest::new(Message::user_text("countdown 1"));
    let stream = within("stream", client.send_streaming_message(&request))
        .await
        .expect("stream");
    collect(stream).await;
}

fn assert_every_call(server: &TestServer, check: impl Fn(&Seen) -> bool, what: &str) {
    let calls = server.seen.calls();
    assert_eq!(
        calls.len(),
        4,
        "{:?}",
        calls.iter().map(Seen::op).collect::<Vec<_>>()
    );
    for call in calls {
        assert!(
            check(&call),
            "{} lacks {what}: {:?} {:?}",
            call.op(),
            call.headers,
            call.query
        );
    }
}

each_binding! {
    async fn a_bearer_token_reaches_the_server_on_every_call(binding) {
        let server = TestServer::demo().await;
        let client = server
            .builder(binding)
            .bearer_token("s3cr3t-token")
            .connect(&server.url)
            .await
            .expect("connect");
        exercise(&client).await;
        assert_every_call(
            &server,
            |c| c.header("authorization") == Some("Bearer s3cr3t-token"),
            "the bearer token",
        );
    }
}

each_binding! {
    async fn an_api_key_in_a_header_reaches_the_server(binding) {
        let server = TestServer::demo().await;
        let client = server
            .builder(binding)
            .interceptor(ApiKeyAuth::new(ApiKeyLocation::Header("X-API-Key".into()), "k-123"))
            .connect(&server.url)
            .await
            .expect("connect");
        exercise(&client).await;
        assert_every_call(&server, |c| c.header("x-api-key") == Some("k-123"), "the key header");
    }
}

http_bindings! {
    async fn an_api_key_in_the_query_reaches_the_server(binding) {
        let server = TestServer::demo().await;
        let client = server
            .builder(binding)
            .interceptor(ApiKeyAuth::new(ApiKeyLocation::Query("api_key".into()), "k 1&2"))
            .connect(&server.url)
            .await
            .expect("connect");
        exercise(&client).await;
        assert_every_call(
            &server,
            |c| c.query_param("api_key") == Some("k+1%262"),
            "the key in the query (URL-encoded)",
        );
        // Extra query parameters do not disturb the REST query of ListTasks.
        let list = &server.seen.calls_of("ListTasks")[0];
        assert!(list.query.as_deref().is_some_and(|q| q.contains("api_key=")));
    }
}

each_binding! {
    async fn an_api_key_in_a_cookie_reaches_the_server(binding) {
        let server = TestServer::demo().await;
        let client = server
            .builder(binding)
            .interceptor(ApiKeyAuth::new(ApiKeyLocation::Cookie("session".into()), "c-789"))
            .connect(&server.url)
            .await
            .expect("connect");
        exercise(&client).await;
        assert_every_call(&server, |c| c.header("cookie") == Some("session=c-789"), "the cookie");
    }
}

/// The demo card declaring an API key scheme at `location` named `name`.
fn card_with_api_key(location: &str, name: &str) -> AgentCard {
    let mut card = DemoAgent::card();
    card.security_schemes.insert(
        "key".into(),
        SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
            description: None,
            location: location.into(),
            name: name.into(),
        }),
    );
    card
}

#[tokio::test]
async fn an_api_key_from_the_card_goes_where_the_card_says() {
    for (location, name, check) in [
        (
            "header",
            "X-Agent-Key",
            (|c: &Seen| c.header("x-agent-key") == Some("k")) as fn(&Seen) -> bool,
        ),
        ("query", "key", |c: &Seen| c.query_param("key") == Some("k")),
        ("cookie", "agent_key", |c: &Seen| {
            c.header("cookie") == Some("agent_key=k")
        }),
    ] {
        let card = card_with_api_key(location, name);
        let server = TestServer::start(DemoAgent, move |b| b.agent_card(card)).await;
        for binding in [Binding::JsonRpc, Binding::HttpJson] {
            let auth = ApiKeyAuth::from_card(&server.card, "k").expect("the card has a key scheme");
            let client = server
                .builder(binding)
                .interceptor(auth)
                .connect(&server.url)
                .await
                .expect("connect");
            within("send", client.send_text("hi")).await.expect("send");
        }
        let calls = server.seen.calls();
        assert_eq!(calls.len(), 2);
        assert!(calls.iter().all(check), "{location}: {calls:?}");
    }
}

#[tokio::test]
async fn an_api_key_from_a_card_without_a_key_scheme_is_a_config_error() {
    let err = ApiKeyAuth::from_card(&DemoAgent::card(), "k").expect_err("no scheme");
    assert!(matches!(err, a2a_client::Error::Config(_)), "{err}");
}

each_binding! {
    async fn extra_headers_and_several_interceptors_all_reach_the_server(binding) {
        let server = TestServer::demo().await;
        let client = server
            .builder(binding)
            .header("X-Request-Source", "tests")
            .expect("a valid header")
            .interceptor(BearerAuth::new("t"))
            .interceptor(ApiKeyAuth::new(ApiKeyLocation::Header("X-API-Key".into()), "k"))
            .connect(&server.url)
            .await
            .expect("connect");
        exercise(&client).await;
        assert_every_call(
            &server,
            |c| {
                c.header("x-request-source") == Some("tests")
                    && c.header("authorization") == Some("Bearer t")
                    && c.header("x-api-key") == Some("k")
            },
            "every interceptor's header",
        );
    }
}

#[tokio::test]
async fn an_invalid_header_is_a_config_error() {
    let err = Client::builder()
        .header("bad header", "x")
        .expect_err("a space in a header name");
    assert!(matches!(err, a2a_client::Error::Config(_)), "{err}");
}

#[tokio::test]
async fn credentials_are_not_printed_in_debug_output() {
    let bearer = format!("{:?}", BearerAuth::new("s3cr3t"));
    let key = format!(
        "{:?}",
        ApiKeyAuth::new(ApiKeyLocation::Header("X-API-Key".into()), "s3cr3t")
    );
    assert!(!bearer.contains("s3cr3t"), "{bearer}");
    assert!(!key.contains("s3cr3t"), "{key}");
}
