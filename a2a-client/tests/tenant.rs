//! The tenant of the card's interface is copied into every request (JSON-RPC `params.tenant`,
//! HTTP+JSON leading path segment), and the server scopes the tasks by it.

mod common;

use a2a_client::{Binding, Client};
use a2a_core::{AgentCard, ErrorKind, ListTasksRequest, Message, SendMessageRequest, TaskState};
use common::{TestServer, collect, each_binding, task_of, within};

/// The server's card with `tenant` set on every interface, as a multi-tenant host would
/// publish it.
fn card_with_tenant(server: &TestServer, tenant: &str) -> AgentCard {
    let mut card = server.card.clone();
    for interface in &mut card.supported_interfaces {
        interface.tenant = Some(tenant.to_owned());
    }
    card
}

fn tenant_client(server: &TestServer, binding: Binding, tenant: &str) -> Client {
    server
        .builder(binding)
        .build_from_card(card_with_tenant(server, tenant))
        .expect("client")
}

each_binding! {
    async fn the_tenant_of_the_interface_is_sent_with_every_request(binding) {
        let server = TestServer::demo().await;
        let client = tenant_client(&server, binding, "acme");

        let task = task_of(within("send", client.send_text("hello")).await.expect("send"));
        within("get", client.get_task(task.id.clone())).await.expect("get");
        within("list", client.list_tasks(&ListTasksRequest::default()))
            .await
            .expect("list");
        let request = SendMessageRequest::new(Message::user_text("countdown 1"));
        let stream = within("stream", client.send_streaming_message(&request))
            .await
            .expect("stream");
        collect(stream).await;
        let err = within("cancel", client.cancel_task(task.id.clone()))
            .await
            .expect_err("a completed task cannot be canceled");
        assert_eq!(err.kind(), Some(ErrorKind::TaskNotCancelable), "found under the tenant");

        let calls = server.seen.calls();
        assert_eq!(calls.len(), 5);
        for call in &calls {
            match binding {
                Binding::JsonRpc => {
                    assert_eq!(call.path, "/");
                    assert_eq!(call.params()["tenant"], "acme", "{}", call.op());
                }
                Binding::Grpc => {
                    assert!(call.path.starts_with("/lf.a2a.v1.A2AService/"), "{}", call.path);
                    assert_eq!(call.params()["tenant"], "acme", "{}", call.op());
                }
                _ => {
                    assert!(call.path.starts_with("/acme/"), "{} {}", call.method, call.path);
                    assert!(call.params().get("tenant").is_none(), "the tenant is in the path");
                }
            }
        }
    }
}

each_binding! {
    async fn a_task_created_under_a_tenant_is_visible_only_under_that_tenant(binding) {
        let server = TestServer::demo().await;
        let acme = tenant_client(&server, binding, "acme");
        let globex = tenant_client(&server, binding, "globex");
        let untenanted = server.client(binding).await;

        let task = task_of(within("send", acme.send_text("hello")).await.expect("send"));
        assert_eq!(task.status.state, TaskState::Completed);

        let got = within("get", acme.get_task(task.id.clone())).await.expect("get");
        assert_eq!(got.id, task.id);
        let listed = within("list", acme.list_tasks(&ListTasksRequest::default()))
            .await
            .expect("list");
        assert_eq!(listed.tasks.iter().map(|t| &t.id).collect::<Vec<_>>(), [&task.id]);

        for other in [&globex, &untenanted] {
            let err = within("get", other.get_task(task.id.clone()))
                .await
                .expect_err("not visible outside its tenant");
            assert_eq!(err.kind(), Some(ErrorKind::TaskNotFound), "{err}");
            let listed = within("list", other.list_tasks(&ListTasksRequest::default()))
                .await
                .expect("list");
            assert!(listed.tasks.is_empty(), "{:?}", listed.tasks);
            assert_eq!(listed.total_size, 0);
        }
    }
}

#[tokio::test]
async fn an_interface_without_a_tenant_sends_none() {
    let server = TestServer::demo().await;
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let client = server.client(binding).await;
        within("send", client.send_text("hello"))
            .await
            .expect("send");
    }
    let calls = server.seen.calls();
    assert_eq!(calls[0].path, "/");
    assert!(calls[0].params().get("tenant").is_none());
    assert_eq!(calls[1].path, "/message:send");
    assert!(calls[1].params().get("tenant").is_none());
    assert_eq!(calls[2].path, "/lf.a2a.v1.A2AService/SendMessage");
    assert!(calls[2].params().get("tenant").is_none());
}
