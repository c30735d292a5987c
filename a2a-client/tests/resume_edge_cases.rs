//! Resumable streams at their edges: a stream cut before there is a task to resume, one that
//! keeps breaking until the retry budget is spent, a task that ends while the client is cut
//! off (replayed, or reported by its final state), a resubscribe answered with 503, and a cut
//! subscription. A reverse proxy between the client and our server cuts the event stream
//! (over gRPC, its messages); the client resumes through SubscribeToTask.

mod common;
#[path = "support/resume.rs"]
mod resume;

use a2a_client::Binding;
use a2a_core::{Message, SendMessageRequest, StreamResponse, TaskState};
use common::{Stepper, TestServer, each_binding, fold, shape, within};
use futures::StreamExt as _;
use resume::{
    Cut, CuttingProxy, How, Step, assert_no_event_twice, client_via, next, read_rest, rest,
    stepper_request,
};

each_binding! {
    async fn a_stream_cut_before_its_first_event_ends_with_stream_ended(binding) {
        let server = TestServer::demo().await;
        let (cut, trigger) = Cut::on_signal(0, How::Abort);
        let proxy = CuttingProxy::start(&server.url, vec![cut]).await;
        let client = client_via(&proxy, &server, binding);
        let request = SendMessageRequest::new(Message::user_text("hello"));
        let mut stream = within("open", client.send_streaming_message(&request))
            .await
            .expect("open");
        trigger.notify_one();
        let err = within("the next event", stream.next())
            .await
            .expect("an item")
            .expect_err("no task to resume");
        assert!(matches!(err, a2a_client::Error::StreamEnded(_)), "{err}");
        assert!(within("the end", stream.next()).await.is_none());
        assert!(proxy.seen.calls_of("SubscribeToTask").is_empty());
    }
}

each_binding! {
    async fn a_stream_that_keeps_breaking_gives_up_after_the_retry_budget(binding) {
        let agent = Stepper::new(3);
        let server = TestServer::start(agent.clone(), |b| b).await;
        let mut cuts = vec![Cut::after(2, How::Close)];
        cuts.extend((0..10).map(|_| Cut::after(0, How::Close)));
        let proxy = CuttingProxy::start(&server.url, cuts).await;
        let client = client_via(&proxy, &server, binding);

        agent.open(1);
        let mut stream = within("open", client.send_streaming_message(&stepper_request()))
            .await
            .expect("open");
        next(&mut stream).await;
        next(&mut stream).await;
        let err = within("the next event", stream.next())
            .await
            .expect("an item")
            .expect_err("the stream cannot be resumed");
        assert!(matches!(err, a2a_client::Error::StreamEnded(_)), "{err}");
        assert!(within("the end", stream.next()).await.is_none());
        let attempts = common::fast_retry().max_attempts as usize;
        assert_eq!(proxy.seen.calls_of("SubscribeToTask").len(), attempts - 1);
    }
}

/// A one-step stepper task that completes while the client is cut off after its first event.
async fn ends_while_cut_off(
    binding: Binding,
    proxy_ignores_last_event_id: bool,
) -> Vec<StreamResponse> {
    let agent = Stepper::new(1);
    let server = TestServer::start(agent.clone(), |b| b).await;
    let (cut, trigger) = Cut::on_signal(1, How::Abort);
    let proxy = if proxy_ignores_last_event_id {
        CuttingProxy::ignoring_last_event_id(&server.url, vec![cut]).await
    } else {
        CuttingProxy::start(&server.url, vec![cut]).await
    };
    let client = client_via(&proxy, &server, binding);

    agent.open(1);
    let mut stream = within("open", client.send_streaming_message(&stepper_request()))
        .await
        .expect("open");
    let first = next(&mut stream).await;
    assert!(matches!(first, StreamResponse::Task(_)));
    agent.open(1);
    agent.reached(2).await;
    trigger.notify_one();
    let mut events = vec![first];
    rest(&mut stream, &mut events).await;

    assert_no_event_twice(&events);
    let task = fold(&events).expect("a task");
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts[0].text_content(), "1;");
    if proxy_ignores_last_event_id {
        // SubscribeToTask is refused (the task is finished): the client asks for the task.
        assert_eq!(proxy.seen.calls_of("GetTask").len(), 1);
    }
    events
}

each_binding! {
    async fn a_task_that_ends_while_cut_off_is_followed_to_its_end(binding) {
        ends_while_cut_off(binding, false).await;
    }
}

each_binding! {
    async fn a_task_that_ends_while_cut_off_is_reported_by_its_final_state_when_it_cannot_be_replayed(binding) {
        let events = ends_while_cut_off(binding, true).await;
        let shapes: Vec<String> = events.iter().map(shape).collect();
        assert_eq!(shapes, ["task TASK_STATE_WORKING []", "task TASK_STATE_COMPLETED [1;]"]);
    }
}

each_binding! {
    async fn a_resubscribe_answered_with_503_is_tried_again(binding) {
        let mut bodies = vec![serde_json::json!("Service Unavailable")];
        // An HTTP 503 is retried even when it carries an A2A error; gRPC has no such status
        // (the fault becomes UNAVAILABLE without one).
        if binding != Binding::Grpc {
            bodies.push(common::a2a_error_body(binding, a2a_core::ErrorKind::Internal, "overloaded"));
        }
        for body in bodies {
            let agent = Stepper::new(3);
            let server = TestServer::start(agent.clone(), |b| b).await;
            let (cut, trigger) = Cut::on_signal(4, How::Abort);
            let proxy = CuttingProxy::start(&server.url, vec![cut]).await;
            let client = client_via(&proxy, &server, binding);
            server.faults.fail(1, |s| s.op() == "SubscribeToTask", 503, body);

            agent.open(2);
            let mut stream = within("open", client.send_streaming_message(&stepper_request()))
                .await
                .expect("open");
            let mut events = Vec::new();
            for _ in 0..4 {
                events.push(next(&mut stream).await);
            }
            agent.open(2);
            trigger.notify_one();
            rest(&mut stream, &mut events).await;

            assert_no_event_twice(&events);
            let task = fold(&events).expect("a task");
            assert_eq!(task.status.state, TaskState::Completed);
            assert_eq!(task.artifacts[0].text_content(), "1;2;3;");
            assert_eq!(server.seen.calls_of("SubscribeToTask").len(), 2, "one 503, then a stream");
        }
    }
}

each_binding! {
    async fn a_cut_subscription_resumes_too(binding) {
        let agent = Stepper::new(2);
        let server = TestServer::start(agent.clone(), |b| b).await;
        let (cut, trigger) = Cut::on_signal(1, How::Abort);
        let proxy = CuttingProxy::start(&server.url, vec![cut]).await;
        let client = client_via(&proxy, &server, binding);

        agent.open(1);
        let request = stepper_request().with_return_immediately(true);
        let task = common::task_of(within("send", client.send_message(&request)).await.expect("send"));
        agent.reached(1).await;
        let mut stream = within("subscribe", client.subscribe(task.id.clone()))
            .await
            .expect("subscribe");
        let snapshot = next(&mut stream).await;
        let StreamResponse::Task(first) = &snapshot else {
            panic!("a subscription starts with the task, got {snapshot:?}");
        };
        assert_eq!(first.artifacts[0].text_content(), "1;");
        trigger.notify_one();
        let reader = read_rest(stream, vec![snapshot]);
        proxy.wait_for(Step::Opened(1)).await;
        agent.open(2);
        let events = within("the rest", reader).await.expect("reader");

        assert_no_event_twice(&events);
        let folded = fold(&events).expect("a task");
        assert_eq!(folded.id, task.id);
        assert_eq!(folded.status.state, TaskState::Completed);
        assert_eq!(folded.artifacts[0].text_content(), "1;2;");
        let subscribes = proxy.seen.calls_of("SubscribeToTask");
        assert_eq!(subscribes.len(), 2);
        assert_eq!(subscribes[0].header("last-event-id"), None);
        assert_eq!(subscribes[1].header("last-event-id"), Some("2"));
    }
}
