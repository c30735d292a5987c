//! `ListTaskPushNotificationConfigs` pages: `pageSize` (1 to 100; unset: 100) and
//! `pageToken` / `nextPageToken`, on every binding and on the memory and sled stores. Paging
//! visits every registration once, in registration order; a page size out of range or a token
//! the server did not give is an invalid-params error.

use a2a_client::{Binding, Client};
use a2a_core::{
    ErrorKind, ListTaskPushNotificationConfigsRequest, SendMessageResponse, Task, TaskId,
    TaskPushNotificationConfig,
};
use a2a_e2e::within;
use a2a_server::demo::DemoAgent;
use a2a_server::push::PushSettings;
use a2a_server::{Server, ServerBuilder, SledStore};

/// Registrations per task in these tests: more than one default page.
const CONFIGS: usize = 120;

/// Serves the demo agent, configured by `configure`, on a fresh port; its base URL.
async fn serve(configure: impl FnOnce(ServerBuilder) -> ServerBuilder) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let server = configure(Server::builder(DemoAgent).public_url(&url))
        .build()
        .expect("server config");
    tokio::spawn(async move { axum::serve(listener, server.into_router()).await });
    url
}

fn task_of(response: SendMessageResponse) -> Task {
    match response {
        SendMessageResponse::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn push(builder: ServerBuilder) -> ServerBuilder {
    let settings = PushSettings::default()
        .allow("127.0.0.1")
        .expect("an allow rule")
        .max_configs_per_task(CONFIGS);
    builder
        .agent_card(DemoAgent::card())
        .push_notifications(settings)
}

/// A task (waiting for input, so it stays) with [`CONFIGS`] webhooks, `c000` to `c119`.
async fn task_with_configs(client: &Client) -> (TaskId, Vec<String>) {
    let task = task_of(
        within("send", client.send_text("greet"))
            .await
            .expect("a task"),
    );
    let ids: Vec<String> = (0..CONFIGS).map(|i| format!("c{i:03}")).collect();
    for id in &ids {
        let config = TaskPushNotificationConfig {
            id: Some(id.clone()),
            task_id: Some(task.id.clone()),
            url: "http://127.0.0.1:9/hook".into(),
            ..Default::default()
        };
        within("create", client.create_push_config(&config))
            .await
            .expect("created");
    }
    (task.id, ids)
}

fn list(task: &TaskId, size: i32, token: Option<String>) -> ListTaskPushNotificationConfigsRequest {
    ListTaskPushNotificationConfigsRequest {
        task_id: task.clone(),
        page_size: size,
        page_token: token,
        ..Default::default()
    }
}

async fn pages_visit_every_config_once(url: &str, binding: Binding) {
    let client = within("connect", Client::builder().prefer([binding]).connect(url))
        .await
        .expect("connect");
    assert_eq!(client.binding().0, binding_name(binding));
    let (task, ids) = task_with_configs(&client).await;

    let mut seen = Vec::new();
    let mut sizes = Vec::new();
    let mut token = None;
    loop {
        let page = within("list", client.list_push_configs(&list(&task, 50, token)))
            .await
            .expect("a page");
        sizes.push(page.configs.len());
        seen.extend(page.configs.into_iter().map(|c| c.id.unwrap_or_default()));
        if page.next_page_token.is_empty() {
            break;
        }
        token = Some(page.next_page_token);
    }
    assert_eq!(sizes, [50, 50, 20]);
    assert_eq!(seen, ids);

    // Unset: the largest page, and the token of the rest.
    let first = within("list", client.list_push_configs(&list(&task, 0, None)))
        .await
        .expect("a page");
    assert_eq!(first.configs.len(), 100);
    assert!(!first.next_page_token.is_empty());

    for size in [-1, 101] {
        let e = within("list", client.list_push_configs(&list(&task, size, None)))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), Some(ErrorKind::InvalidParams), "{size}: {e:?}");
    }
    let forged = Some("bm90LWEtdG9rZW4".to_owned());
    let e = within("list", client.list_push_configs(&list(&task, 10, forged)))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::InvalidParams), "{e:?}");
}

fn binding_name(binding: Binding) -> &'static str {
    match binding {
        Binding::JsonRpc => a2a_core::BINDING_JSONRPC,
        Binding::HttpJson => a2a_core::BINDING_HTTP_JSON,
        _ => a2a_core::BINDING_GRPC,
    }
}

const BINDINGS: [Binding; 3] = [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc];

#[tokio::test]
async fn pages_visit_every_config_once_in_memory_on_every_binding() {
    for binding in BINDINGS {
        let url = serve(push).await;
        pages_visit_every_config_once(&url, binding).await;
    }
}

#[tokio::test]
async fn pages_visit_every_config_once_in_sled_on_every_binding() {
    for binding in BINDINGS {
        let dir = tempfile::tempdir().expect("a temp dir");
        let store = SledStore::open(dir.path()).expect("sled");
        let url = serve(|b| push(b).task_store(store)).await;
        pages_visit_every_config_once(&url, binding).await;
    }
}
