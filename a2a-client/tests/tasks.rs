//! GetTask, ListTasks (filters and paging) and CancelTask over both bindings against our server.

mod common;

use a2a_client::Client;
use a2a_core::{
    ContextId, ErrorKind, GetTaskRequest, ListTasksRequest, Message, SendMessageRequest, Task,
    TaskState, Timestamp,
};
use common::{TestServer, each_binding, task_of, within};

async fn send(client: &Client, message: Message) -> Task {
    task_of(
        within(
            "send",
            client.send_message(&SendMessageRequest::new(message)),
        )
        .await
        .expect("send"),
    )
}

each_binding! {
    async fn get_task_returns_the_stored_task_with_as_much_history_as_asked(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let sent = send(&client, Message::user_text("hello")).await;

        let got = within("get", client.get_task(sent.id.clone())).await.expect("get");
        assert_eq!(got, sent);

        let mut req = GetTaskRequest::new(sent.id.clone());
        req.history_length = Some(0);
        let short = within("get", client.call(&req)).await.expect("get");
        assert!(short.history.is_empty());
        assert_eq!(short.artifacts, sent.artifacts);

        let got = server.seen.calls_of("GetTask");
        assert_eq!(got.len(), 2);
        match binding {
            a2a_client::Binding::JsonRpc | a2a_client::Binding::Grpc => {
                assert_eq!(got[1].params()["historyLength"], 0);
            }
            _ => {
                assert_eq!(got[1].path, format!("/tasks/{}", sent.id));
                assert_eq!(got[1].query_param("historyLength"), Some("0"));
            }
        }
    }
}

each_binding! {
    async fn get_task_of_an_unknown_id_is_task_not_found(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let err = within("get", client.get_task("no-such-task"))
            .await
            .expect_err("unknown task");
        assert_eq!(err.kind(), Some(ErrorKind::TaskNotFound), "{err}");
        let a2a_client::Error::Remote { status, .. } = err else { unreachable!() };
        let expected = match binding {
            a2a_client::Binding::JsonRpc | a2a_client::Binding::Grpc => 200,
            _ => 404,
        };
        assert_eq!(status, expected);
        assert_eq!(server.seen.calls().len(), 1, "a TaskNotFound is not retried");
    }
}

each_binding! {
    async fn list_tasks_filters_by_context_and_state_and_pages_with_tokens(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let context = ContextId::new("ctx-list");
        let before = Timestamp::now();
        let mut ours = Vec::new();
        for text in ["one", "two", "three"] {
            ours.push(send(&client, Message::user_text(text).with_context_id(context.clone())).await);
        }
        let greet = send(&client, Message::user_text("greet")).await;
        assert_eq!(greet.status.state, TaskState::InputRequired);

        // All tasks: newest status first (tasks updated within one millisecond may come in
        // either order).
        let all = within("list", client.list_tasks(&ListTasksRequest::default()))
            .await
            .expect("list");
        assert_eq!(all.total_size, 4);
        assert_eq!(all.tasks.len(), 4);
        assert_eq!(all.next_page_token, "");
        let times: Vec<_> = all.tasks.iter().map(|t| t.status.timestamp.expect("a time")).collect();
        assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first: {times:?}");

        // By context.
        let by_context = ListTasksRequest {
            context_id: Some(context.clone()),
            ..Default::default()
        };
        let page = within("list", client.list_tasks(&by_context)).await.expect("list");
        assert_eq!(page.total_size, 3);
        assert!(page.tasks.iter().all(|t| t.context_id == context));
        assert!(page.tasks.iter().all(|t| t.artifacts.is_empty()), "no artifacts unless asked");

        // By state.
        let by_state = ListTasksRequest {
            status: Some(TaskState::InputRequired),
            ..Default::default()
        };
        let page = within("list", client.list_tasks(&by_state)).await.expect("list");
        assert_eq!(page.tasks.iter().map(|t| &t.id).collect::<Vec<_>>(), [&greet.id]);

        // By time, with artifacts and no history.
        let recent = ListTasksRequest {
            status_timestamp_after: Some(before),
            status: Some(TaskState::Completed),
            include_artifacts: Some(true),
            history_length: Some(0),
            ..Default::default()
        };
        let page = within("list", client.list_tasks(&recent)).await.expect("list");
        assert_eq!(page.total_size, 3);
        for t in &page.tasks {
            assert!(t.history.is_empty());
            assert_eq!(t.artifacts.len(), 1);
            assert!(t.artifacts[0].text_content().starts_with("echo: "));
        }

        // Paging through the context, two at a time.
        let mut seen = Vec::new();
        let mut token = None;
        let mut pages = 0;
        loop {
            let req = ListTasksRequest {
                context_id: Some(context.clone()),
                page_size: Some(2),
                page_token: token.clone(),
                ..Default::default()
            };
            let page = within("list", client.list_tasks(&req)).await.expect("list");
            pages += 1;
            assert!(page.tasks.len() <= 2);
            assert_eq!(page.total_size, 3);
            seen.extend(page.tasks.into_iter().map(|t| t.id));
            if page.next_page_token.is_empty() {
                break;
            }
            token = Some(page.next_page_token);
            assert!(pages < 5, "paging does not end");
        }
        assert_eq!(pages, 2);
        let mut expected: Vec<_> = ours.iter().map(|t| t.id.clone()).collect();
        expected.sort();
        seen.sort();
        assert_eq!(seen, expected, "every task once across the pages");
    }
}

each_binding! {
    async fn list_tasks_with_a_bad_page_size_is_invalid_params(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let req = ListTasksRequest {
            page_size: Some(1000),
            ..Default::default()
        };
        let err = within("list", client.list_tasks(&req)).await.expect_err("bad size");
        assert_eq!(err.kind(), Some(ErrorKind::InvalidParams), "{err}");
    }
}

each_binding! {
    async fn cancel_task_stops_a_running_countdown(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let request = SendMessageRequest::new(Message::user_text("countdown 100"))
            .with_return_immediately(true);
        let task = task_of(within("send", client.send_message(&request)).await.expect("send"));
        let canceled = within("cancel", client.cancel_task(task.id.clone()))
            .await
            .expect("cancel");
        assert_eq!(canceled.id, task.id);
        assert_eq!(canceled.status.state, TaskState::Canceled);
        let got = within("get", client.get_task(task.id)).await.expect("get");
        assert_eq!(got.status.state, TaskState::Canceled);
    }
}

each_binding! {
    async fn cancel_task_of_a_finished_task_is_task_not_cancelable(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let done = send(&client, Message::user_text("hello")).await;
        let err = within("cancel", client.cancel_task(done.id))
            .await
            .expect_err("already completed");
        assert_eq!(err.kind(), Some(ErrorKind::TaskNotCancelable), "{err}");
    }
}
