//! Remote errors keep their A2A kind whatever HTTP status they come with, over both bindings
//! (a JSON-RPC error object and a google.rpc.Status body both carry an `error` object).

mod common;

use a2a_client::Error;
use a2a_core::{ErrorKind, Message, SendMessageRequest};
use a2a_server::demo::DemoAgent;
use common::{TestServer, each_binding, within};

each_binding! {
    async fn a_request_over_the_body_limit_is_payload_too_large_with_http_413(binding) {
        let server = TestServer::start(DemoAgent, |b| b.body_limit(1024)).await;
        let client = server.client(binding).await;
        let big = Message::user_text("x".repeat(4096));
        let err = within("send", client.send_message(&SendMessageRequest::new(big)))
            .await
            .expect_err("too large");
        // HTTP 413, or gRPC RESOURCE_EXHAUSTED (over HTTP 200).
        let expected = if binding == a2a_client::Binding::Grpc { 200 } else { 413 };
        assert!(matches!(err, Error::Remote { status, .. } if status == expected), "{err}");
        assert_eq!(err.kind(), Some(ErrorKind::PayloadTooLarge), "{err}");
        assert!(!err.is_retryable());
        assert_eq!(server.seen.calls().len(), 1, "not retried");
    }
}

each_binding! {
    async fn a_remote_error_carries_the_agents_message_and_details(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let err = within("get", client.get_task("t-404")).await.expect_err("unknown");
        let remote = err.remote().expect("a remote error");
        assert_eq!(remote.kind(), Some(ErrorKind::TaskNotFound));
        assert_eq!(remote.code, -32001);
        assert!(remote.message.contains("t-404"), "{}", remote.message);
        assert_eq!(remote.reason(), Some(ErrorKind::TaskNotFound.reason()));
        assert!(err.to_string().contains("t-404"), "{err}");
    }
}
