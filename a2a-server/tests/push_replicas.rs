//! Webhooks with two replicas sharing one store: both run a delivery worker for the same
//! registration, and each event still reaches the webhook once, in order.

use a2a_core::{Artifact, Error, Message, SendMessageRequest, TaskId};
use a2a_server::push::PushSettings;
use a2a_server::{
    Agent, CallContext, EventBus, Leases, LocalBus, LocalLeases, MemoryStore, PushStore as _,
    RequestContext, SendReply, Server, Store, TaskEvents, TaskStore as _,
};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(20);

mod hook;
use hook::Receiver;

/// Working, six artifact chunks, completed.
struct Chunks;

impl Agent for Chunks {
    async fn execute(&self, _cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.working("chunking").await?;
        for i in 0..6 {
            let chunk = Artifact::text("out", format!("{i};")).with_id("a-1");
            events.artifact_chunk(chunk, i > 0, i == 5).await?;
        }
        events.complete(Some(Message::agent_text("done"))).await
    }
}

fn replica(
    name: &str,
    store: &Arc<MemoryStore>,
    bus: &Arc<LocalBus>,
    leases: &Arc<LocalLeases>,
) -> Server {
    let push = PushSettings::default()
        .allow("127.0.0.1")
        .unwrap()
        .backoff(Duration::from_millis(20), Duration::from_millis(50));
    Server::builder(Chunks)
        .task_store_arc(store.clone() as Arc<dyn Store>)
        .event_bus(bus.clone() as Arc<dyn EventBus>)
        .leases(leases.clone() as Arc<dyn Leases>)
        .lease_ttl(Duration::from_millis(400))
        .replica_id(name)
        .push_notifications(push)
        .build()
        .expect("server")
}

#[tokio::test]
async fn two_replicas_delivering_one_webhook_post_each_event_once() {
    let store = Arc::new(MemoryStore::new());
    let (bus, leases) = (Arc::new(LocalBus::new()), Arc::new(LocalLeases::new()));
    let a = replica("a", &store, &bus, &leases).handler();
    let b = replica("b", &store, &bus, &leases).handler();
    let (receiver, url) = Receiver::start(Duration::from_millis(40)).await;

    // The task runs on A, which registers the webhook and starts posting its events.
    let req: SendMessageRequest = serde_json::from_value(json!({
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "go"}]},
        "configuration": {"taskPushNotificationConfig": {"id": "hook", "url": url}}
    }))
    .unwrap();
    let cx = CallContext::default();
    let task: TaskId = match timeout(WAIT, a.send_message(&cx, req)).await {
        Ok(Ok(SendReply::Task(task))) => task.into_task().id,
        other => panic!("send: {other:?}"),
    };
    let version = store.get(&task).await.unwrap().unwrap().version;
    assert!(version >= 8, "the task's events: {version}");
    // B's start-up resumes the same registration while A is still posting (each post takes
    // 40 ms): both workers want the same pending events.
    timeout(WAIT, b.recover()).await.unwrap().unwrap();
    let posted = receiver.posts().len() as u64;
    assert!(posted < version, "B started before A was done posting");
    let delivered = async {
        loop {
            let record = store.push_config(&task, "hook").await.unwrap().unwrap();
            if record.delivered == version {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    timeout(WAIT, delivered)
        .await
        .expect("every event delivered");
    // Long enough for a worker that lost the lease race to look again (a tenth of a second
    // at this lease time) and find nothing left to post.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        receiver.posts(),
        (1..=version).collect::<Vec<_>>(),
        "each event once, in order"
    );
}
