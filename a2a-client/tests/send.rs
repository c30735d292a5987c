//! SendMessage over both bindings against our server: blocking (the default), returning
//! immediately, continuing an interrupted task, and the errors it can meet.

mod common;

use a2a_client::Binding;
use a2a_core::{ErrorKind, Message, Role, SendMessageRequest, TaskState};
use common::{TestServer, each_binding, task_of, within};

each_binding! {
    async fn a_blocking_send_returns_the_completed_task_with_its_artifact(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let task = task_of(within("send", client.send_text("hello")).await.expect("send"));
        assert_eq!(task.status.state, TaskState::Completed);
        assert_eq!(task.artifacts.len(), 1);
        assert_eq!(task.artifacts[0].text_content(), "echo: hello");
        assert!(!task.context_id.is_empty());
        let first = task.history.first().expect("the user message is in the history");
        assert_eq!(first.role, Role::User);
        assert_eq!(first.text(), "hello");
    }
}

each_binding! {
    async fn a_send_with_return_immediately_answers_before_the_task_ends(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let request = SendMessageRequest::new(Message::user_text("countdown 100"))
            .with_return_immediately(true);
        let task = task_of(within("send", client.send_message(&request)).await.expect("send"));
        assert!(
            task.status.state.is_active(),
            "returned while the countdown runs, got {}",
            task.status.state
        );
        // The task exists and keeps running on the server; stop it so that nothing lingers.
        let canceled = within("cancel", client.cancel_task(task.id.clone()))
            .await
            .expect("cancel");
        assert_eq!(canceled.status.state, TaskState::Canceled);
        let sent = server.seen.calls_of("SendMessage");
        assert_eq!(sent.len(), 1);
        assert_eq!(
            sent[0].params().pointer("/configuration/returnImmediately"),
            Some(&serde_json::json!(true))
        );
    }
}

each_binding! {
    async fn a_history_length_of_zero_leaves_the_history_out(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let request = SendMessageRequest::new(Message::user_text("hi")).with_history_length(0);
        let task = task_of(within("send", client.send_message(&request)).await.expect("send"));
        assert_eq!(task.status.state, TaskState::Completed);
        assert!(task.history.is_empty(), "history: {:?}", task.history);
    }
}

each_binding! {
    async fn an_input_required_task_continues_in_the_same_task_and_context(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let asked = task_of(within("greet", client.send_text("greet")).await.expect("greet"));
        assert_eq!(asked.status.state, TaskState::InputRequired);
        let question = asked.status.message.as_ref().expect("the question").text();
        assert_eq!(question, "What is your name?");

        let answer = Message::user_text("Ada").with_task_id(asked.id.clone());
        let done = task_of(
            within("answer", client.send_message(&SendMessageRequest::new(answer)))
                .await
                .expect("answer"),
        );
        assert_eq!(done.id, asked.id);
        assert_eq!(done.context_id, asked.context_id);
        assert_eq!(done.status.state, TaskState::Completed);
        assert_eq!(done.status.message.expect("greeting").text(), "Hello, Ada!");
    }
}

each_binding! {
    async fn a_message_for_an_unknown_task_is_task_not_found(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let message = Message::user_text("hello").with_task_id("no-such-task");
        let err = within("send", client.send_message(&SendMessageRequest::new(message)))
            .await
            .expect_err("unknown task");
        assert_eq!(err.kind(), Some(ErrorKind::TaskNotFound), "{err}");
    }
}

each_binding! {
    async fn a_message_for_a_finished_task_is_unsupported_operation(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let done = task_of(within("send", client.send_text("hello")).await.expect("send"));
        let again = Message::user_text("more").with_task_id(done.id);
        let err = within("send", client.send_message(&SendMessageRequest::new(again)))
            .await
            .expect_err("terminal task");
        assert_eq!(err.kind(), Some(ErrorKind::UnsupportedOperation), "{err}");
    }
}

each_binding! {
    async fn a_message_without_parts_is_invalid_params_and_not_retried(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let empty = Message::new(Role::User, []);
        let err = within("send", client.send_message(&SendMessageRequest::new(empty)))
            .await
            .expect_err("no parts");
        assert_eq!(err.kind(), Some(ErrorKind::InvalidParams), "{err}");
        assert_eq!(server.seen.calls().len(), 1, "sent once");
    }
}

#[tokio::test]
async fn the_client_sends_the_a2a_version_of_its_interface_with_every_call() {
    let server = TestServer::demo().await;
    // The card offers 1.1 for every binding: a client from the card speaks it.
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let client = server.client(binding).await;
        within("send", client.send_text("v")).await.expect("send");
    }
    let calls = server.seen.calls();
    assert_eq!(calls.len(), 3);
    for call in calls {
        assert_eq!(call.header("a2a-version"), Some("1.1"), "{}", call.op());
    }
    // A client built for a URL, without the card, speaks 1.0.
    server.seen.clear();
    let client = a2a_client::Client::builder()
        .build_jsonrpc(&server.url)
        .expect("client");
    within("send", client.send_text("v")).await.expect("send");
    assert_eq!(server.seen.calls()[0].header("a2a-version"), Some("1.0"));
}
