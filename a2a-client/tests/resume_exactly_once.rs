//! Resumable streams, every event exactly once: a reverse proxy between the client and our
//! server cuts the event stream after N events; the client resumes through SubscribeToTask,
//! sending `Last-Event-ID`, and the caller sees every event exactly once. A server that honours
//! `Last-Event-ID` replays what the client missed; one that does not (simulated by a proxy that
//! hides the header) opens the new stream with a task snapshot, which the client drops when its
//! `id:` shows nothing new, or passes on when the task moved on meanwhile. Over gRPC the proxy
//! counts and cuts messages, the ids come in the events' metadata (the resumable-streams
//! extension), and `last-event-id` is request metadata.

mod common;
#[path = "support/resume.rs"]
mod resume;

use a2a_client::Binding;
use a2a_core::{Message, SendMessageRequest, StreamResponse, TaskState};
use common::{Stepper, TestServer, collect, each_binding, fold, shape, within};
use resume::{
    Cut, CuttingProxy, How, Step, assert_no_event_twice, client_via, next, read_rest,
    stepper_request,
};

/// The events of a stepper task of three steps, streamed without interruption.
async fn uncut_run(binding: Binding) -> Vec<StreamResponse> {
    let agent = Stepper::new(3);
    let server = TestServer::start(agent.clone(), |b| b).await;
    let client = server.client(binding).await;
    agent.open(4);
    let stream = within("open", client.send_streaming_message(&stepper_request()))
        .await
        .expect("open");
    collect(stream).await
}

/// The shapes of a stepper run of three steps cut after two and resumed after step 3 happened,
/// from a server that does not replay: the task as it is now stands for the two missed events.
fn caught_up_with_a_snapshot() -> Vec<&'static str> {
    vec![
        "task TASK_STATE_WORKING []",
        "artifact \"1;\" append=false last=false",
        "status TASK_STATE_WORKING step 2",
        "artifact \"2;\" append=true last=false",
        "task TASK_STATE_WORKING [1;2;3;]",
        "status TASK_STATE_COMPLETED done",
    ]
}

/// Cuts a stepper stream after two steps (four events, ids 1..=4) while the agent waits,
/// resumes, and lets the agent finish once the resumed stream is open.
async fn cut_between_steps(binding: Binding, how: How, proxy_ignores_last_event_id: bool) {
    let expected: Vec<String> = uncut_run(binding).await.iter().map(shape).collect();
    assert_eq!(expected.len(), 7, "{expected:?}");

    let agent = Stepper::new(3);
    let server = TestServer::start(agent.clone(), |b| b).await;
    let (cut, trigger) = Cut::on_signal(4, how);
    let proxy = if proxy_ignores_last_event_id {
        CuttingProxy::ignoring_last_event_id(&server.url, vec![cut]).await
    } else {
        CuttingProxy::start(&server.url, vec![cut]).await
    };
    let client = client_via(&proxy, &server, binding);

    agent.open(2);
    let mut stream = within("open", client.send_streaming_message(&stepper_request()))
        .await
        .expect("open");
    let mut events = Vec::new();
    for _ in 0..4 {
        events.push(next(&mut stream).await);
    }
    agent.reached(2).await;
    trigger.notify_one();

    // The client resubscribes; once the server answered, the agent goes on.
    let reader = read_rest(stream, events);
    proxy.wait_for(Step::Opened(1)).await;
    agent.open(2);
    let events = within("the rest", reader).await.expect("reader");

    let shapes: Vec<String> = events.iter().map(shape).collect();
    assert_eq!(
        shapes, expected,
        "the caller sees what an uncut stream shows"
    );
    assert_no_event_twice(&events);
    let task = fold(&events).expect("a task");
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts[0].text_content(), "1;2;3;");

    let subscribes = proxy.seen.calls_of("SubscribeToTask");
    assert_eq!(subscribes.len(), 1, "resumed once");
    assert_eq!(subscribes[0].header("last-event-id"), Some("4"));
    let resumed: Vec<Option<String>> = proxy
        .steps_so_far()
        .await
        .into_iter()
        .filter_map(|s| match s {
            Step::Forwarded(1, id) => Some(id),
            _ => None,
        })
        .collect();
    let ids = |ids: &[&str]| {
        ids.iter()
            .map(|i| Some((*i).to_owned()))
            .collect::<Vec<_>>()
    };
    if proxy_ignores_last_event_id {
        // The server opened with its snapshot (id 4): seen already, so not yielded again.
        assert_eq!(resumed, ids(&["4", "5", "6", "7"]));
    } else {
        assert!(
            resumed == ids(&["5", "6", "7"]) || resumed == ids(&["4", "5", "6", "7"]),
            "{resumed:?}"
        );
    }
}

each_binding! {
    async fn a_stream_cut_between_steps_resumes_and_yields_the_events_of_an_uncut_run(binding) {
        cut_between_steps(binding, How::Abort, false).await;
    }
}

each_binding! {
    async fn a_stream_closed_early_between_steps_resumes_and_yields_the_events_of_an_uncut_run(binding) {
        cut_between_steps(binding, How::Close, false).await;
    }
}

each_binding! {
    async fn a_snapshot_already_seen_is_dropped_when_the_server_ignores_last_event_id(binding) {
        cut_between_steps(binding, How::Abort, true).await;
    }
}

/// Cuts a stepper stream after two steps, lets the agent do step 3 while the client is cut
/// off, then resumes; returns the events the caller saw.
async fn cut_while_the_agent_moves_on(
    binding: Binding,
    proxy_ignores_last_event_id: bool,
) -> Vec<StreamResponse> {
    let agent = Stepper::new(3);
    let server = TestServer::start(agent.clone(), |b| b).await;
    let (cut, trigger) = Cut::on_signal(4, How::Abort);
    let proxy = if proxy_ignores_last_event_id {
        CuttingProxy::ignoring_last_event_id(&server.url, vec![cut]).await
    } else {
        CuttingProxy::start(&server.url, vec![cut]).await
    };
    let client = client_via(&proxy, &server, binding);

    agent.open(2);
    let mut stream = within("open", client.send_streaming_message(&stepper_request()))
        .await
        .expect("open");
    let mut events = Vec::new();
    for _ in 0..4 {
        events.push(next(&mut stream).await);
    }
    // Step 3 happens while the client is cut off: events 5 and 6 never reach it.
    agent.open(1);
    agent.reached(3).await;
    trigger.notify_one();
    let reader = read_rest(stream, events);
    proxy.wait_for(Step::Opened(1)).await;
    agent.open(1);
    let events = within("the rest", reader).await.expect("reader");

    assert_no_event_twice(&events);
    let task = fold(&events).expect("a task");
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts.len(), 1);
    assert_eq!(task.artifacts[0].text_content(), "1;2;3;");
    let subscribes = proxy.seen.calls_of("SubscribeToTask");
    assert_eq!(subscribes.len(), 1, "resumed once");
    assert_eq!(subscribes[0].header("last-event-id"), Some("4"));
    events
}

each_binding! {
    async fn a_stream_cut_while_the_agent_moves_on_still_yields_every_change_once(binding) {
        let uncut: Vec<String> = uncut_run(binding).await.iter().map(shape).collect();
        let events = cut_while_the_agent_moves_on(binding, false).await;
        let shapes: Vec<String> = events.iter().map(shape).collect();
        assert!(
            shapes == uncut || shapes == caught_up_with_a_snapshot(),
            "either replayed or caught up with a snapshot: {shapes:#?}"
        );
    }
}

each_binding! {
    async fn a_server_ignoring_last_event_id_catches_the_client_up_with_one_snapshot(binding) {
        let events = cut_while_the_agent_moves_on(binding, true).await;
        let shapes: Vec<String> = events.iter().map(shape).collect();
        assert_eq!(shapes, caught_up_with_a_snapshot());
    }
}

each_binding! {
    async fn a_countdown_cut_twice_completes_with_every_chunk_exactly_once(binding) {
        for ignore_last_event_id in [false, true] {
            let server = TestServer::demo().await;
            let cuts = vec![Cut::after(2, How::Abort), Cut::after(2, How::Close)];
            let proxy = if ignore_last_event_id {
                CuttingProxy::ignoring_last_event_id(&server.url, cuts).await
            } else {
                CuttingProxy::start(&server.url, cuts).await
            };
            let client = client_via(&proxy, &server, binding);
            let request = SendMessageRequest::new(Message::user_text("countdown 3"));
            let stream = within("open", client.send_streaming_message(&request))
                .await
                .expect("open");
            let events = collect(stream).await;
            assert_no_event_twice(&events);
            let task = fold(&events).expect("a task");
            assert_eq!(task.status.state, TaskState::Completed);
            assert_eq!(task.artifacts.len(), 1);
            assert_eq!(task.artifacts[0].text_content(), "3\n2\n1\n");
            assert!(!proxy.seen.calls_of("SubscribeToTask").is_empty(), "resumed");

            let stored = within("get", client.get_task(task.id.clone())).await.expect("get");
            assert_eq!(stored.artifacts, task.artifacts);
            assert_eq!(stored.status.state, task.status.state);
        }
    }
}
