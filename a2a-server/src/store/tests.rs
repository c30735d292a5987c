//! Behaviour every store must have; each implementation runs these.

use super::*;
use a2a_core::TaskStatus;

pub(crate) fn task_at(id: &str, ctx: &str, state: TaskState, millis: i64) -> Task {
    let mut status = TaskStatus::new(state);
    status.timestamp = Timestamp::from_unix_millis(millis);
    Task::new(id, ctx, status)
}

pub(crate) fn status_event(t: &Task) -> StreamResponse {
    StreamResponse::StatusUpdate(a2a_core::TaskStatusUpdateEvent {
        task_id: t.id.clone(),
        context_id: t.context_id.clone(),
        status: t.status.clone(),
        metadata: None,
        generation: 0,
    })
}

pub(crate) async fn create_get_update(store: &dyn Store) {
    let t = task_at("t1", "c1", TaskState::Submitted, 1000);
    let created = store
        .create(Arc::new(t.clone()), Scope::default())
        .await
        .unwrap();
    assert_eq!(created.version, 1);
    assert!(matches!(
        store.create(Arc::new(t.clone()), Scope::default()).await,
        Err(StoreError::AlreadyExists(_))
    ));
    let mut next = t.clone();
    next.status.state = TaskState::Working;
    let updated = store
        .update(Arc::new(next.clone()), 1, &status_event(&next))
        .await
        .unwrap();
    assert_eq!(updated.version, 2);
    assert!(matches!(
        store
            .update(Arc::new(next.clone()), 1, &status_event(&next))
            .await,
        Err(StoreError::VersionConflict {
            expected: 1,
            found: 2
        })
    ));
    let got = store.get(&TaskId::from("t1")).await.unwrap().unwrap();
    assert_eq!(*got.task, next);
    assert_eq!(got.version, 2);
    // The log: the creation snapshot at 1, the update at 2; the failed write logged nothing.
    let log = store.events(&TaskId::from("t1"), 0, 100).await.unwrap();
    assert_eq!(log.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(log[0].event, StreamResponse::Task(t.clone()));
    assert_eq!(log[1].event, status_event(&next));
    assert_eq!(
        store
            .events(&TaskId::from("t1"), 1, 100)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        store
            .events(&TaskId::from("t1"), 2, 100)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.get(&TaskId::from("nope")).await.unwrap().is_none());
    let ghost = task_at("nope", "c", TaskState::Working, 1);
    assert!(matches!(
        store
            .update(Arc::new(ghost.clone()), 1, &status_event(&ghost))
            .await,
        Err(StoreError::NotFound(_))
    ));
}

/// A store that gives out a task's JSON ([`TaskStore::task_json`]) gives exactly the task's
/// JSON, at its current version only.
pub(crate) async fn task_json_is_the_tasks_json(store: &dyn Store) {
    let mut t = task_at("json", "c", TaskState::Working, 1000);
    t.metadata = Some(serde_json::from_str(r#"{"n": 1, "f": 0.5, "s": "\u00e9\n"}"#).unwrap());
    store
        .create(Arc::new(t.clone()), Scope::default())
        .await
        .unwrap();
    t.status = a2a_core::TaskStatus::new(TaskState::Completed);
    store
        .update(Arc::new(t.clone()), 1, &status_event(&t))
        .await
        .unwrap();
    let id = TaskId::from("json");
    for version in [1, 2, 3] {
        if let Some(json) = store.task_json(&id, version) {
            assert_eq!(version, 2, "only the current version");
            assert_eq!(json.get(), serde_json::to_string(&t).unwrap());
        }
    }
    assert!(store.task_json(&TaskId::from("nope"), 1).is_none());
}

pub(crate) async fn log_pages_retention_and_claims(store: &dyn Store) {
    let mut t = task_at("long", "c", TaskState::Working, 10);
    store
        .create(Arc::new(t.clone()), Scope::default())
        .await
        .unwrap();
    for v in 1..600u64 {
        t.status.timestamp = Timestamp::from_unix_millis(10 + v as i64);
        store
            .update(Arc::new(t.clone()), v, &status_event(&t))
            .await
            .unwrap();
    }
    let mut seen = 0;
    loop {
        let page = store.events(&t.id, seen, 256).await.unwrap();
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 256);
        for e in &page {
            seen += 1;
            assert_eq!(e.seq, seen, "gap-free, in order");
        }
    }
    assert_eq!(seen, 600);

    for (i, state) in [
        TaskState::Completed,
        TaskState::Failed,
        TaskState::InputRequired,
    ]
    .into_iter()
    .enumerate()
    {
        store
            .create(
                Arc::new(task_at(&format!("old{i}"), "c", state, 5)),
                Scope::default(),
            )
            .await
            .unwrap();
    }
    store
        .create(
            Arc::new(task_at("new", "c", TaskState::Completed, 10_000)),
            Scope::default(),
        )
        .await
        .unwrap();
    let expired = store
        .terminal_before(Timestamp::from_unix_millis(1000).unwrap(), 10)
        .await
        .unwrap();
    let mut ids: Vec<String> = expired.iter().map(ToString::to_string).collect();
    ids.sort();
    assert_eq!(ids, ["old0", "old1"], "only old terminal tasks");
    for id in &expired {
        assert!(store.delete(id).await.unwrap());
        assert!(store.get(id).await.unwrap().is_none());
        assert!(store.events(id, 0, 10).await.unwrap().is_empty());
    }
    assert!(!store.delete(&TaskId::from("old0")).await.unwrap());
    let page = store
        .list(&ListQuery {
            page_size: 100,
            ..ListQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(page.total_size, 3, "long, old2 and new remain");

    let claim = |task: &str, ms| MessageClaim {
        task_id: task.into(),
        reply: None,
        received_ms: ms,
    };
    assert_eq!(
        store.claim_message("k1", claim("a", 1)).await.unwrap(),
        None
    );
    assert_eq!(
        store.claim_message("k1", claim("b", 2)).await.unwrap(),
        Some(claim("a", 1))
    );
    let mut with_reply = claim("a", 1);
    with_reply.reply = Some(Message::agent_text("hi"));
    store.update_claim("k1", with_reply.clone()).await.unwrap();
    assert_eq!(
        store.claim_message("k1", claim("c", 3)).await.unwrap(),
        Some(with_reply)
    );
    assert_eq!(
        store.claim_message("k2", claim("d", 50)).await.unwrap(),
        None
    );
    assert_eq!(
        store.claim_message("k3", claim("g", 50)).await.unwrap(),
        None
    );
    store.release_claim("k3").await.unwrap();
    assert_eq!(
        store.claim_message("k3", claim("h", 50)).await.unwrap(),
        None
    );
    store.release_claim("k3").await.unwrap();
    store.release_claim("never-claimed").await.unwrap();
    assert_eq!(store.expire_claims(10).await.unwrap(), 1);
    assert_eq!(
        store.claim_message("k1", claim("e", 60)).await.unwrap(),
        None
    );
    assert!(
        store
            .claim_message("k2", claim("f", 60))
            .await
            .unwrap()
            .is_some()
    );
}

pub(crate) async fn list_orders_filters_and_pages(store: &dyn Store) {
    for i in 0..25 {
        let ctx = if i % 2 == 0 { "even" } else { "odd" };
        let state = if i % 3 == 0 {
            TaskState::Completed
        } else {
            TaskState::Working
        };
        store
            .create(
                Arc::new(task_at(&format!("t{i:02}"), ctx, state, 1000 + i)),
                Scope::default(),
            )
            .await
            .unwrap();
    }
    // Another tenant's task is never listed.
    let other = Scope {
        tenant: Some("other".into()),
        owner: None,
    };
    store
        .create(
            Arc::new(task_at("hidden", "even", TaskState::Working, 5000)),
            other,
        )
        .await
        .unwrap();

    let mut seen = Vec::new();
    let mut query = ListQuery {
        page_size: 7,
        ..ListQuery::default()
    };
    loop {
        let page = store.list(&query).await.unwrap();
        assert_eq!(page.total_size, 25);
        seen.extend(page.tasks.iter().map(|t| t.task.id.to_string()));
        match page.next_page_token {
            Some(token) => query.page_token = Some(token),
            None => break,
        }
    }
    let expected: Vec<String> = (0..25).rev().map(|i| format!("t{i:02}")).collect();
    assert_eq!(seen, expected, "newest first, every task exactly once");

    let query = ListQuery {
        page_size: 100,
        context_id: Some("even".into()),
        status: Some(TaskState::Completed),
        status_timestamp_after: Timestamp::from_unix_millis(1006),
        ..ListQuery::default()
    };
    let page = store.list(&query).await.unwrap();
    let ids: Vec<String> = page.tasks.iter().map(|t| t.task.id.to_string()).collect();
    assert_eq!(ids, ["t24", "t18", "t12", "t06"]);
    assert_eq!(page.total_size, 4);
    assert!(page.next_page_token.is_none());

    let bad = ListQuery {
        page_size: 5,
        page_token: Some("!!".into()),
        ..ListQuery::default()
    };
    assert!(matches!(
        store.list(&bad).await,
        Err(StoreError::InvalidPageToken)
    ));
}

/// An artifact chunk of `t`, as the engine builds it for `TaskEvents::artifact_chunk`: chunk
/// 0 opens the artifact, the others append to it.
pub(crate) fn chunk(t: &Task, artifact: &str, i: usize) -> StreamResponse {
    StreamResponse::ArtifactUpdate(a2a_core::TaskArtifactUpdateEvent {
        task_id: t.id.clone(),
        context_id: t.context_id.clone(),
        artifact: a2a_core::Artifact::text("answer", format!("chunk {i} ")).with_id(artifact),
        append: i > 0,
        last_chunk: false,
        metadata: None,
        generation: 0,
    })
}

/// Writes `event` as the engine does: the stored task with the event applied.
pub(crate) async fn write(
    store: &dyn Store,
    stored: &StoredTask,
    event: StreamResponse,
) -> StoredTask {
    let mut next = Task::clone(&stored.task);
    next.apply(&event).unwrap();
    store
        .update(Arc::new(next), stored.version, &event)
        .await
        .unwrap()
}

/// The task a log folds to, read in pages, and its last seq.
pub(crate) async fn fold_of_log(store: &dyn Store, id: &TaskId) -> (Task, u64) {
    let (mut task, mut seen): (Option<Task>, u64) = (None, 0);
    loop {
        let page = store.events(id, seen, 50).await.unwrap();
        if page.is_empty() {
            break;
        }
        for e in page {
            assert_eq!(e.seq, seen + 1, "gap-free");
            seen = e.seq;
            match (&mut task, e.event) {
                (None, StreamResponse::Task(t)) => task = Some(t),
                (Some(t), event) => t.apply(&event).unwrap(),
                (None, other) => panic!("a log starts with its task, not {other:?}"),
            }
        }
    }
    (task.expect("a log"), seen)
}

/// A long append stream with a status update, a continuation and an agent message in the
/// middle: after every write the store reads back the engine's task, and the log folds to
/// it (up to the continuation, whose user message no event carries). Returns the final task.
pub(crate) async fn long_append_stream_reads_back_as_its_fold(store: &dyn Store) -> StoredTask {
    let t = task_at("stream", "c", TaskState::Submitted, 100);
    let mut stored = store
        .create(Arc::new(t.clone()), Scope::default())
        .await
        .unwrap();
    let check = async |stored: &StoredTask| {
        let got = store.get(&t.id).await.unwrap().unwrap();
        assert_eq!(got, *stored, "read back at version {}", stored.version);
    };
    let mut working = t.status.clone();
    working.state = TaskState::Working;
    stored = write(
        store,
        &stored,
        status_event(&Task {
            status: working,
            ..t.clone()
        }),
    )
    .await;
    for i in 0..150 {
        stored = write(store, &stored, chunk(&t, "a1", i)).await;
        check(&stored).await;
    }
    let (folded, seq) = fold_of_log(store, &t.id).await;
    assert_eq!((folded, seq), (Task::clone(&stored.task), stored.version));
    assert_eq!(
        stored.task.artifacts[0].parts.len(),
        150,
        "appended, not replaced"
    );

    // A status update in the middle, then a continuation: the user's message joins the
    // history with the WORKING event, as the engine does it.
    let mut asking = Task::clone(&stored.task);
    asking.status = a2a_core::TaskStatus::new(TaskState::InputRequired)
        .with_message(Message::agent_text("more?"));
    stored = write(store, &stored, status_event(&asking)).await;
    check(&stored).await;
    let mut continued = Task::clone(&stored.task);
    continued.history.push(Message::user_text("yes, more"));
    continued.status = a2a_core::TaskStatus::new(TaskState::Working);
    let event = status_event(&continued);
    stored = store
        .update(Arc::new(continued), stored.version, &event)
        .await
        .unwrap();
    check(&stored).await;
    let mut said = Message::agent_text("here it comes");
    said.task_id = Some(t.id.clone());
    stored = write(store, &stored, StreamResponse::Message(said)).await;
    for i in 0..70 {
        stored = write(store, &stored, chunk(&t, "a2", i)).await;
        check(&stored).await;
    }
    let done = Task {
        status: a2a_core::TaskStatus::new(TaskState::Completed),
        ..Task::clone(&stored.task)
    };
    stored = write(store, &stored, status_event(&done)).await;
    check(&stored).await;
    assert_eq!(stored.version, 1 + 1 + 150 + 2 + 1 + 70 + 1);
    assert_eq!(
        stored.task.history.last().map(Message::text).as_deref(),
        Some("here it comes")
    );
    stored
}

/// `task` with `event` applied.
pub(crate) fn applied(task: &Task, event: &StreamResponse) -> Task {
    let mut next = task.clone();
    next.apply(event).unwrap();
    next
}

/// A batch of changes ([`TaskStore::write_batch`]) reads back as the same changes written one
/// at a time: the task at its last version, its log `1..=n`. A batch that would create a task
/// that exists, or continue a version that is not the stored one, is refused and writes
/// nothing.
pub(crate) async fn batch_writes_read_back_as_single_writes(store: &dyn Store) {
    let scope = Scope::default();
    let t1 = Arc::new(task_at("batch", "c", TaskState::Submitted, 10));
    let e2 = chunk(&t1, "a", 0);
    let t2 = Arc::new(applied(&t1, &e2));
    let mut working = Task::clone(&t2);
    working.status = task_at("batch", "c", TaskState::Working, 20).status;
    let e3 = status_event(&working);
    let t3 = Arc::new(applied(&t2, &e3));
    let change = |task, event| BatchWrite { task, event };
    store
        .write_batch(
            &scope,
            0,
            &[
                change(&t1, None),
                change(&t2, Some(&e2)),
                change(&t3, Some(&e3)),
            ],
        )
        .await
        .unwrap();
    let stored = store.get(&t1.id).await.unwrap().expect("created");
    assert_eq!((stored.version, &*stored.task), (3, &*t3));
    let log = store.events(&t1.id, 0, 10).await.unwrap();
    let seqs: Vec<u64> = log.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!(log[0].event, StreamResponse::Task(Task::clone(&t1)));
    assert_eq!((&log[1].event, &log[2].event), (&e2, &e3));
    assert!(matches!(
        store.write_batch(&scope, 0, &[change(&t1, None)]).await,
        Err(StoreError::AlreadyExists(_))
    ));
    // The next batch: another chunk, then the completion.
    let e4 = chunk(&t3, "a", 1);
    let t4 = Arc::new(applied(&t3, &e4));
    let mut done = Task::clone(&t4);
    done.status = task_at("batch", "c", TaskState::Completed, 30).status;
    let e5 = status_event(&done);
    let t5 = Arc::new(applied(&t4, &e5));
    let next = [change(&t4, Some(&e4)), change(&t5, Some(&e5))];
    assert!(matches!(
        store.write_batch(&scope, 2, &next).await,
        Err(StoreError::VersionConflict { .. })
    ));
    assert_eq!(
        store.events(&t1.id, 3, 10).await.unwrap(),
        [],
        "nothing written"
    );
    store.write_batch(&scope, 3, &next).await.unwrap();
    let stored = store.get(&t1.id).await.unwrap().expect("kept");
    assert_eq!((stored.version, &*stored.task), (5, &*t5));
    let rest: Vec<StreamResponse> = (store.events(&t1.id, 3, 10).await.unwrap())
        .into_iter()
        .map(|e| e.event)
        .collect();
    assert_eq!(rest, [e4, e5]);
}
