//! The operations our server does not offer (push notifications; the extended card unless one is
//! configured) come back as typed remote errors with their A2A kind, over both bindings.

mod common;

use a2a_core::{
    AgentCard, DeleteTaskPushNotificationConfigRequest, ErrorKind,
    GetTaskPushNotificationConfigRequest, ListTaskPushNotificationConfigsRequest,
    TaskPushNotificationConfig,
};
use common::{TestServer, each_binding, task_of, within};

fn assert_remote(result: Result<impl std::fmt::Debug, a2a_client::Error>, kind: ErrorKind) {
    match result {
        Err(e @ a2a_client::Error::Remote { .. }) => assert_eq!(e.kind(), Some(kind), "{e}"),
        other => panic!("expected a remote {kind} error, got {other:?}"),
    }
}

each_binding! {
    async fn push_config_operations_are_answered_with_push_notification_not_supported(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let task = task_of(within("send", client.send_text("hello")).await.expect("send"));
        let task_id = task.id.clone();

        let config = TaskPushNotificationConfig {
            task_id: Some(task_id.clone()),
            url: "https://hooks.example.org/a2a".into(),
            token: Some("tok".into()),
            ..Default::default()
        };
        assert_remote(
            within("create", client.create_push_config(&config)).await,
            ErrorKind::PushNotificationNotSupported,
        );

        let get = GetTaskPushNotificationConfigRequest {
            task_id: task_id.clone(),
            id: "c-1".into(),
            ..Default::default()
        };
        assert_remote(
            within("get", client.get_push_config(&get)).await,
            ErrorKind::PushNotificationNotSupported,
        );

        let list = ListTaskPushNotificationConfigsRequest {
            task_id: task_id.clone(),
            ..Default::default()
        };
        assert_remote(
            within("list", client.list_push_configs(&list)).await,
            ErrorKind::PushNotificationNotSupported,
        );

        let delete = DeleteTaskPushNotificationConfigRequest {
            task_id,
            id: "c-1".into(),
            ..Default::default()
        };
        assert_remote(
            within("delete", client.delete_push_config(&delete)).await,
            ErrorKind::PushNotificationNotSupported,
        );

        let ops: Vec<String> = server.seen.calls().iter().map(common::Seen::op).collect();
        assert_eq!(
            ops,
            [
                "SendMessage",
                "CreateTaskPushNotificationConfig",
                "GetTaskPushNotificationConfig",
                "ListTaskPushNotificationConfigs",
                "DeleteTaskPushNotificationConfig",
            ],
            "each operation reached the server once, by its own route"
        );
    }
}

each_binding! {
    async fn the_extended_card_is_answered_with_unsupported_operation(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        assert!(!client.card().expect("card").capabilities.extended_agent_card());
        assert_remote(
            within("extended card", client.get_extended_agent_card()).await,
            ErrorKind::UnsupportedOperation,
        );
    }
}

each_binding! {
    async fn a_configured_extended_card_is_returned_to_authenticated_callers(binding) {
        let extended = AgentCard::builder("Demo (extended)", "More for members").build();
        let expected = extended.clone();
        let server = TestServer::start(a2a_server::demo::DemoAgent, move |b| {
            b.agent_card(a2a_server::demo::DemoAgent::card())
                .extended_agent_card(extended)
                .authenticator(a2a_server::auth::BearerTokens::new().token("member", "m"))
        })
        .await;
        // Without credentials: 401, typed.
        let anonymous = within("connect", server.builder(binding).connect(&server.url))
            .await
            .expect("connect");
        let err = within("extended card", anonymous.get_extended_agent_card())
            .await
            .expect_err("anonymous callers are refused");
        // HTTP 401, or gRPC UNAUTHENTICATED (over HTTP 200).
        let status = if binding == a2a_client::Binding::Grpc { 200 } else { 401 };
        assert!(
            matches!(err, a2a_client::Error::Remote { status: s, .. } if s == status),
            "{err:?}"
        );
        assert_eq!(err.kind(), Some(ErrorKind::Unauthenticated));
        let client = within(
            "connect",
            server.builder(binding).bearer_token("member").connect(&server.url),
        )
        .await
        .expect("connect");
        assert!(client.card().expect("card").capabilities.extended_agent_card());
        let card = within("extended card", client.get_extended_agent_card())
            .await
            .expect("extended card");
        assert_eq!(card.name, expected.name);
        assert_eq!(card.description, expected.description);
    }
}
