//! SendStreamingMessage and SubscribeToTask over both bindings against our server.

mod common;

use a2a_core::{ErrorKind, Message, SendMessageRequest, StreamResponse, TaskState};
use common::{Stepper, TestServer, collect, each_binding, fold, shape, task_of, within};
use futures::StreamExt as _;

each_binding! {
    async fn a_streamed_countdown_yields_the_task_then_every_update_until_completion(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let request = SendMessageRequest::new(Message::user_text("countdown 2"));
        let stream = within("open", client.send_streaming_message(&request))
            .await
            .expect("open the stream");
        let events = collect(stream).await;
        let shapes: Vec<String> = events.iter().map(shape).collect();
        assert_eq!(
            shapes,
            [
                "task TASK_STATE_WORKING []",
                "artifact \"2\\n\" append=false last=false",
                "status TASK_STATE_WORKING 1...",
                "artifact \"1\\n\" append=true last=true",
                "status TASK_STATE_COMPLETED Liftoff!",
            ]
        );
        let StreamResponse::Task(first) = &events[0] else { unreachable!() };
        assert!(events.iter().all(|e| e.task_id() == Some(&first.id)));
        let task = fold(&events).expect("a task");
        assert_eq!(task.artifacts.len(), 1);
        assert_eq!(task.artifacts[0].text_content(), "2\n1\n");
    }
}

each_binding! {
    async fn subscribing_to_a_running_task_starts_with_its_snapshot_and_follows_it_to_the_end(binding) {
        let agent = Stepper::new(3);
        let server = TestServer::start(agent.clone(), |b| b).await;
        let client = server.client(binding).await;
        agent.open(1);
        let request = SendMessageRequest::new(Message::user_text("steps"))
            .with_return_immediately(true);
        let task = task_of(within("send", client.send_message(&request)).await.expect("send"));
        agent.reached(1).await;

        let mut stream = within("subscribe", client.subscribe(task.id.clone()))
            .await
            .expect("subscribe");
        let first = within("the snapshot", stream.next())
            .await
            .expect("an event")
            .expect("the snapshot");
        let StreamResponse::Task(snapshot) = &first else {
            panic!("the first event is the task snapshot, got {first:?}");
        };
        assert_eq!(snapshot.id, task.id);
        assert_eq!(snapshot.artifacts[0].text_content(), "1;");

        agent.open(3);
        let mut events = vec![first];
        events.extend(collect(stream).await);
        assert_eq!(
            events.iter().map(shape).collect::<Vec<_>>(),
            [
                "task TASK_STATE_WORKING [1;]",
                "status TASK_STATE_WORKING step 2",
                "artifact \"2;\" append=true last=false",
                "status TASK_STATE_WORKING step 3",
                "artifact \"3;\" append=true last=true",
                "status TASK_STATE_COMPLETED done",
            ]
        );
        assert_eq!(fold(&events).expect("a task").artifacts[0].text_content(), "1;2;3;");
        assert_eq!(server.seen.calls_of("SubscribeToTask").len(), 1);
    }
}

each_binding! {
    async fn two_subscribers_see_the_same_events(binding) {
        let agent = Stepper::new(2);
        let server = TestServer::start(agent.clone(), |b| b).await;
        let client = server.client(binding).await;
        agent.open(1);
        let request = SendMessageRequest::new(Message::user_text("steps"))
            .with_return_immediately(true);
        let task = task_of(within("send", client.send_message(&request)).await.expect("send"));
        agent.reached(1).await;
        let mut a = within("subscribe", client.subscribe(task.id.clone())).await.expect("a");
        let mut b = within("subscribe", client.subscribe(task.id.clone())).await.expect("b");
        let first_a = within("a", a.next()).await.expect("event").expect("event");
        let first_b = within("b", b.next()).await.expect("event").expect("event");
        assert_eq!(first_a, first_b);
        agent.open(2);
        let (rest_a, rest_b) = tokio::join!(collect(a), collect(b));
        assert_eq!(rest_a, rest_b);
        assert_eq!(rest_a.last().and_then(StreamResponse::state), Some(&TaskState::Completed));
    }
}

each_binding! {
    async fn a_stream_ends_when_the_task_needs_input(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let request = SendMessageRequest::new(Message::user_text("greet"));
        let stream = within("open", client.send_streaming_message(&request))
            .await
            .expect("open");
        let events = collect(stream).await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0].state(), Some(&TaskState::InputRequired));
    }
}

each_binding! {
    async fn subscribing_to_a_finished_task_is_unsupported_operation(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let task = task_of(within("send", client.send_text("hello")).await.expect("send"));
        let err = within("subscribe", client.subscribe(task.id))
            .await
            .err()
            .expect("a finished task has nothing to follow");
        assert_eq!(err.kind(), Some(ErrorKind::UnsupportedOperation), "{err}");
    }
}

each_binding! {
    async fn subscribing_to_an_unknown_task_is_task_not_found(binding) {
        let server = TestServer::demo().await;
        let client = server.client(binding).await;
        let err = within("subscribe", client.subscribe("no-such-task"))
            .await
            .err()
            .expect("unknown task");
        assert_eq!(err.kind(), Some(ErrorKind::TaskNotFound), "{err}");
    }
}

each_binding! {
    async fn streaming_from_an_agent_that_cannot_stream_is_unsupported_operation(binding) {
        let server =
            TestServer::start(a2a_server::demo::DemoAgent, |b| b.streaming(false)).await;
        let client = server.client(binding).await;
        assert!(!client.supports_streaming());
        let request = SendMessageRequest::new(Message::user_text("hello"));
        let err = within("open", client.send_streaming_message(&request))
            .await
            .err()
            .expect("streaming is off");
        assert_eq!(err.kind(), Some(ErrorKind::UnsupportedOperation), "{err}");
    }
}
