//! Message de-duplication as a user configures it: claims in a store of their own
//! (`HandlerBuilder::claim_store`), or off (`HandlerBuilder::dedup(false)`).

use a2a_core::{Error, Message, SendMessageRequest, TaskState};
use a2a_server::{
    Agent, CallContext, ClaimStore, MemoryStore, RequestContext, RequestHandler, SendReply, Server,
    TaskEvents,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts its executions; completes the task, or answers "reply" with a message.
#[derive(Clone, Default)]
struct Counting(Arc<AtomicUsize>);

impl Agent for Counting {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        self.0.fetch_add(1, Ordering::SeqCst);
        if cx.message.text() == "reply" {
            return events.reply(Message::agent_text("once")).await;
        }
        events.complete(None).await
    }
}

/// Sends the same message twice; returns both answers.
async fn send_twice(h: &RequestHandler, text: &str) -> (SendReply, SendReply) {
    let cx = CallContext::default();
    let message = Message::user_text(text);
    let first = h
        .send_message(&cx, SendMessageRequest::new(message.clone()))
        .await
        .expect("first send");
    let again = h
        .send_message(&cx, SendMessageRequest::new(message))
        .await
        .expect("retried send");
    (first, again)
}

fn task_id(reply: &SendReply) -> a2a_core::TaskId {
    match reply {
        SendReply::Task(t) => {
            assert_eq!(t.status.state, TaskState::Completed);
            t.id.clone()
        }
        SendReply::Message(m) => panic!("a task, not {m:?}"),
    }
}

/// By default, a retried send is answered with the task of the first, and the agent runs once.
#[tokio::test]
async fn a_retried_send_runs_the_agent_once_by_default() {
    let agent = Counting::default();
    let h = RequestHandler::builder(agent.clone()).build().unwrap();
    let (first, again) = send_twice(&h, "go").await;
    assert_eq!(task_id(&first), task_id(&again));
    assert_eq!(agent.0.load(Ordering::SeqCst), 1);
}

/// With de-duplication off, nothing is claimed: the same message sent twice runs the agent
/// twice, as two tasks.
#[tokio::test]
async fn with_dedup_off_a_retried_send_runs_the_agent_again() {
    let agent = Counting::default();
    let store = Arc::new(MemoryStore::new());
    let h = RequestHandler::builder(agent.clone())
        .task_store_arc(store.clone())
        .dedup(false)
        .build()
        .unwrap();
    let (first, again) = send_twice(&h, "go").await;
    assert_ne!(task_id(&first), task_id(&again));
    assert_eq!(agent.0.load(Ordering::SeqCst), 2);
    assert_eq!(
        store.expire_claims(i64::MAX).await.unwrap(),
        0,
        "no claim was written"
    );
}

/// A message sent again to a task it finished is refused with de-duplication off: there is
/// no claim to recognize it as the retry of the message that continued the task.
#[tokio::test]
async fn with_dedup_off_a_message_to_a_finished_task_is_refused() {
    let h = RequestHandler::builder(Counting::default())
        .dedup(false)
        .build()
        .unwrap();
    let cx = CallContext::default();
    let done = h
        .send_message(&cx, SendMessageRequest::new(Message::user_text("go")))
        .await
        .unwrap();
    let again = Message::user_text("more").with_task_id(task_id(&done));
    let refused = h.send_message(&cx, SendMessageRequest::new(again)).await;
    let kind = refused
        .expect_err("a finished task takes no message")
        .kind();
    assert_eq!(kind, Some(a2a_core::ErrorKind::UnsupportedOperation));
}

/// Claims go to the claim store given, not to the task store; a retry is recognized through
/// it, a message reply included (recorded in the claim store before it is answered).
#[tokio::test]
async fn a_separate_claim_store_keeps_the_claims() {
    let agent = Counting::default();
    let tasks = Arc::new(MemoryStore::new());
    let claims = Arc::new(MemoryStore::new());
    let h = RequestHandler::builder(agent.clone())
        .task_store_arc(tasks.clone())
        .claim_store_arc(claims.clone())
        .build()
        .unwrap();
    let (first, again) = send_twice(&h, "go").await;
    assert_eq!(task_id(&first), task_id(&again));
    let (first, again) = send_twice(&h, "reply").await;
    for reply in [first, again] {
        assert!(matches!(reply, SendReply::Message(m) if m.text() == "once"));
    }
    assert_eq!(agent.0.load(Ordering::SeqCst), 2, "once per message");
    assert_eq!(tasks.expire_claims(i64::MAX).await.unwrap(), 0);
    assert_eq!(claims.expire_claims(i64::MAX).await.unwrap(), 2);
}

/// The server builder forwards both settings.
#[tokio::test]
async fn the_server_builder_forwards_the_claim_settings() {
    let agent = Counting::default();
    let claims = MemoryStore::new();
    let server = Server::builder(agent.clone())
        .claim_store(claims)
        .dedup(false)
        .build()
        .unwrap();
    let (first, again) = send_twice(&server.handler(), "go").await;
    assert_ne!(task_id(&first), task_id(&again));
    assert_eq!(agent.0.load(Ordering::SeqCst), 2);
}

/// Execution leases whose first `acquire` fails, as a database might.
#[derive(Default)]
struct FlakyLeases {
    inner: a2a_server::LocalLeases,
    failed: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl a2a_server::Leases for FlakyLeases {
    async fn acquire(
        &self,
        task: &a2a_core::TaskId,
        owner: &str,
        ttl: std::time::Duration,
    ) -> Result<bool, a2a_server::StoreError> {
        if !self.failed.swap(true, Ordering::SeqCst) {
            return Err(a2a_server::StoreError::Backend(
                "the lease table is down".into(),
            ));
        }
        self.inner.acquire(task, owner, ttl).await
    }
    async fn take_over(
        &self,
        task: &a2a_core::TaskId,
        owner: &str,
        ttl: std::time::Duration,
    ) -> Result<Option<String>, a2a_server::StoreError> {
        self.inner.take_over(task, owner, ttl).await
    }
    async fn give_back(
        &self,
        task: &a2a_core::TaskId,
        owner: &str,
        previous: Option<&str>,
    ) -> Result<(), a2a_server::StoreError> {
        self.inner.give_back(task, owner, previous).await
    }
    async fn renew(
        &self,
        owner: &str,
        ttl: std::time::Duration,
    ) -> Result<(), a2a_server::StoreError> {
        self.inner.renew(owner, ttl).await
    }
    async fn release(
        &self,
        task: &a2a_core::TaskId,
        owner: &str,
    ) -> Result<(), a2a_server::StoreError> {
        self.inner.release(task, owner).await
    }
}

/// A send whose start fails after its message was claimed and its webhook registered (here,
/// at the execution lease) leaves neither behind: the same message sent again runs the agent
/// as a first send, and only its task has a webhook.
#[tokio::test]
async fn a_failed_start_releases_its_claim_and_removes_its_webhook() {
    use a2a_server::PushStore as _;
    let agent = Counting::default();
    let store = Arc::new(MemoryStore::new());
    let settings = a2a_server::push::PushSettings::default()
        .allow("127.0.0.1")
        .unwrap();
    let h = RequestHandler::builder(agent.clone())
        .task_store_arc(store.clone())
        .leases(Arc::new(FlakyLeases::default()))
        .push_notifications(settings)
        .build()
        .unwrap();
    let cx = CallContext::default();
    let webhook: a2a_core::TaskPushNotificationConfig =
        serde_json::from_value(serde_json::json!({"url": "http://127.0.0.1:9/hook"})).unwrap();
    let mut req = SendMessageRequest::new(Message::user_text("go"));
    req.configuration = Some(a2a_core::SendMessageConfiguration {
        task_push_notification_config: Some(webhook),
        ..Default::default()
    });
    let failed = h.send_message(&cx, req.clone()).await;
    assert!(failed.is_err(), "the lease could not be taken: {failed:?}");
    assert_eq!(agent.0.load(Ordering::SeqCst), 0);
    assert!(
        store
            .tasks_with_push_configs(None, 10)
            .await
            .unwrap()
            .is_empty()
    );

    let reply = h.send_message(&cx, req).await.expect("sent again");
    let id = task_id(&reply);
    assert_eq!(agent.0.load(Ordering::SeqCst), 1, "run as a first send");
    assert_eq!(
        store.tasks_with_push_configs(None, 10).await.unwrap(),
        vec![id]
    );
}
