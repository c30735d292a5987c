//! Folding a task's events into the task ([`Task::apply`]): the events of a stream, applied in
//! order to its first snapshot, give the task as the server stores it; events of another task
//! are refused.

use a2a_core::*;
use proptest::collection::vec;
use proptest::prelude::*;

const TASK: &str = "t-1";
const CONTEXT: &str = "c-1";

fn status_update(status: TaskStatus) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: TASK.into(),
        context_id: CONTEXT.into(),
        status,
        metadata: None,
        generation: 0,
    })
}

fn artifact_update(artifact: Artifact, append: bool, last_chunk: bool) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: TASK.into(),
        context_id: CONTEXT.into(),
        artifact,
        append,
        last_chunk,
        metadata: None,
        generation: 0,
    })
}

/// An agent message of the task, with its text as its id (so that two calls are equal).
fn agent_message(text: &str) -> Message {
    Message::agent_text(text)
        .with_message_id(text)
        .with_task_id(TASK)
        .with_context_id(CONTEXT)
}

/// A status in `state` with no timestamp (so that two calls are equal).
fn status_of(state: TaskState) -> TaskStatus {
    TaskStatus {
        state,
        message: None,
        timestamp: None,
    }
}

/// A task as a server creates it: SUBMITTED, with the user's message as its history.
fn submitted() -> Task {
    let mut task = Task::new(TASK, CONTEXT, status_of(TaskState::Submitted));
    task.history
        .push(Message::user_text("write a poem").with_message_id("m-1"));
    task
}

fn fold(mut task: Task, events: &[StreamResponse]) -> Task {
    for e in events {
        task.apply(e).expect("an event of the task applies");
    }
    task
}

#[test]
fn a_streamed_task_folds_into_the_task_the_server_stores() {
    let working = status_of(TaskState::Working).with_message(agent_message("on it"));
    let done = status_of(TaskState::Completed).with_message(agent_message("done"));
    let mut first_chunk = Artifact::text("poem", "Roses ").with_id("poem");
    first_chunk.metadata = Some([("lines".to_owned(), 1.into())].into_iter().collect());
    let mut second_chunk = Artifact::new([Part::text("are red")]).with_id("poem");
    second_chunk.description = Some("a short poem".to_owned());
    second_chunk.extensions = vec!["urn:x-rhyme".to_owned()];
    let draft = Artifact::text("notes", "draft").with_id("notes");
    let notes = Artifact::text("notes", "final notes").with_id("notes");
    let events = [
        status_update(working),
        artifact_update(first_chunk, false, false),
        artifact_update(second_chunk, true, true),
        artifact_update(draft, false, true),
        StreamResponse::Message(agent_message("here it comes")),
        artifact_update(notes.clone(), false, true),
        status_update(done.clone()),
    ];

    let task = fold(submitted(), &events);

    // What the server stores for the same changes: each status message and agent message
    // joins the history; chunks appended to one artifact; a non-appending update replaces.
    let mut poem = Artifact::new([Part::text("Roses "), Part::text("are red")])
        .with_id("poem")
        .with_name("poem")
        .with_description("a short poem");
    poem.metadata = Some([("lines".to_owned(), 1.into())].into_iter().collect());
    poem.extensions = vec!["urn:x-rhyme".to_owned()];
    let mut expected = submitted();
    expected.status = done;
    expected.history.extend([
        agent_message("on it"),
        agent_message("here it comes"),
        agent_message("done"),
    ]);
    expected.artifacts = vec![poem, notes];
    assert_eq!(task, expected);
    assert_eq!(task.artifacts[0].text_content(), "Roses are red");
}

#[test]
fn a_status_update_without_a_message_leaves_the_history_alone() {
    let status = status_of(TaskState::Working);
    let task = fold(submitted(), &[status_update(status.clone())]);
    assert_eq!(task.status, status);
    assert_eq!(task.history, submitted().history);
}

#[test]
fn a_task_snapshot_replaces_the_task() {
    let mut snapshot = Task::new(TASK, "c-2", status_of(TaskState::InputRequired));
    snapshot.artifacts.push(Artifact::text("a", "b"));
    let task = fold(submitted(), &[StreamResponse::Task(snapshot.clone())]);
    assert_eq!(task, snapshot);
}

#[test]
fn events_of_another_task_are_refused_and_change_nothing() {
    let other = |mut e: StreamResponse| {
        match &mut e {
            StreamResponse::Task(t) => t.id = "t-2".into(),
            StreamResponse::Message(m) => m.task_id = Some("t-2".into()),
            StreamResponse::StatusUpdate(s) => s.task_id = "t-2".into(),
            StreamResponse::ArtifactUpdate(a) => a.task_id = "t-2".into(),
        }
        e
    };
    let refused = [
        other(StreamResponse::Task(submitted())),
        other(StreamResponse::Message(agent_message("hi"))),
        other(status_update(status_of(TaskState::Failed))),
        other(artifact_update(Artifact::text("a", "b"), false, true)),
    ];
    for e in &refused {
        let mut task = submitted();
        let err = task.apply(e).unwrap_err();
        assert_eq!(
            err,
            ApplyError::OtherTask {
                task: TASK.into(),
                event: Some("t-2".into()),
            }
        );
        assert_eq!(task, submitted(), "{e:?}");
    }
}

#[test]
fn a_message_that_names_no_task_is_refused() {
    let mut task = submitted();
    let reply = StreamResponse::Message(Message::agent_text("a direct reply"));
    let err = task.apply(&reply).unwrap_err();
    assert_eq!(
        err,
        ApplyError::OtherTask {
            task: TASK.into(),
            event: None,
        }
    );
    assert_eq!(
        err.to_string(),
        "an event of task (none) cannot be applied to task t-1"
    );
    assert_eq!(task, submitted());
}

// ---------------------------------------------------------------------------------------------
// Properties. Artifact ids come from a small set, so that chunks meet the artifacts they extend.

fn artifact() -> impl Strategy<Value = Artifact> {
    (
        prop::sample::select(vec!["a", "b", "c"]),
        proptest::option::of("[a-z]{1,4}"),
        vec("[a-z ]{0,4}", 1..3),
    )
        .prop_map(|(id, name, texts)| {
            let mut a = Artifact::new(texts.into_iter().map(Part::text)).with_id(id);
            a.name = name;
            a
        })
}

fn state() -> impl Strategy<Value = TaskState> {
    prop::sample::select(TaskState::ALL.to_vec())
}

fn message() -> impl Strategy<Value = Message> {
    "[a-z ]{0,6}".prop_map(|t| agent_message(&t))
}

fn status() -> impl Strategy<Value = TaskStatus> {
    (state(), proptest::option::of(message())).prop_map(|(state, message)| TaskStatus {
        state,
        message: message.map(Box::new),
        timestamp: None,
    })
}

fn task() -> impl Strategy<Value = Task> {
    (status(), vec(artifact(), 0..3), vec(message(), 0..3)).prop_map(
        |(status, artifacts, history)| {
            let mut t = Task::new(TASK, CONTEXT, status);
            for a in artifacts {
                t.apply_artifact(a, false);
            }
            t.history = history;
            t
        },
    )
}

/// An event of the task, any kind.
fn event() -> impl Strategy<Value = StreamResponse> {
    prop_oneof![
        1 => task().prop_map(StreamResponse::Task),
        2 => message().prop_map(StreamResponse::Message),
        3 => status().prop_map(status_update),
        6 => (artifact(), any::<bool>(), any::<bool>())
            .prop_map(|(a, append, last)| artifact_update(a, append, last)),
    ]
}

/// The parts each artifact should hold after `events` (none of them a task snapshot).
fn expected_parts(task: &Task, events: &[StreamResponse]) -> Vec<(ArtifactId, Vec<Part>)> {
    let mut model: Vec<(ArtifactId, Vec<Part>)> = task
        .artifacts
        .iter()
        .map(|a| (a.artifact_id.clone(), a.parts.clone()))
        .collect();
    for e in events {
        let StreamResponse::ArtifactUpdate(u) = e else {
            continue;
        };
        let parts = u.artifact.parts.iter().cloned();
        match model
            .iter_mut()
            .find(|(id, _)| *id == u.artifact.artifact_id)
        {
            Some((_, existing)) if u.append => existing.extend(parts),
            Some((_, existing)) => *existing = parts.collect(),
            None => model.push((u.artifact.artifact_id.clone(), parts.collect())),
        }
    }
    model
}

proptest! {
    #[test]
    fn applying_events_of_the_task_never_fails_and_keeps_its_id(
        t in task(),
        events in vec(event(), 0..12),
    ) {
        let mut task = t;
        for e in &events {
            prop_assert!(task.apply(e).is_ok());
            prop_assert_eq!(task.id.as_str(), TASK);
        }
    }

    #[test]
    fn applying_a_task_snapshot_yields_exactly_that_task(t in task(), snapshot in task()) {
        let mut task = t;
        task.apply(&StreamResponse::Task(snapshot.clone())).unwrap();
        prop_assert_eq!(task, snapshot);
    }

    #[test]
    fn updates_fold_as_the_server_stores_them(
        t in task(),
        events in vec(event().prop_filter("no snapshot", |e| !matches!(e, StreamResponse::Task(_))), 0..12),
    ) {
        let mut task = t.clone();
        for e in &events {
            task.apply(e).unwrap();
        }
        let parts: Vec<_> = task
            .artifacts
            .iter()
            .map(|a| (a.artifact_id.clone(), a.parts.clone()))
            .collect();
        prop_assert_eq!(parts, expected_parts(&t, &events));
        let mut history = t.history.clone();
        let mut status = t.status;
        for e in &events {
            match e {
                StreamResponse::Message(m) => history.push(m.clone()),
                StreamResponse::StatusUpdate(s) => {
                    history.extend(s.status.message.as_deref().cloned());
                    status = s.status.clone();
                }
                _ => {}
            }
        }
        prop_assert_eq!(&task.history, &history);
        prop_assert_eq!(&task.status, &status);
    }

    #[test]
    fn an_event_of_another_task_is_refused_and_changes_nothing(t in task(), e in event()) {
        let mut e = e;
        match &mut e {
            StreamResponse::Task(t) => t.id = "t-2".into(),
            StreamResponse::Message(m) => m.task_id = Some("t-2".into()),
            StreamResponse::StatusUpdate(s) => s.task_id = "t-2".into(),
            StreamResponse::ArtifactUpdate(a) => a.task_id = "t-2".into(),
        }
        let mut task = t.clone();
        prop_assert!(task.apply(&e).is_err());
        prop_assert_eq!(task, t);
    }
}
