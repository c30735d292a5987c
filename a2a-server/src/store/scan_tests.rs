//! Behaviour every store must have, continued: the paged scans, claim expiry by receipt time,
//! and the webhook delivery cursor and lease that keep replicas from posting twice.

use super::tests::{status_event, task_at};
use super::*;
use a2a_core::TaskPushNotificationConfig;

fn record(task: &str, id: &str, url: &str, delivered: u64) -> PushRecord {
    let config: TaskPushNotificationConfig =
        serde_json::from_value(serde_json::json!({"taskId": task, "id": id, "url": url})).unwrap();
    PushRecord {
        config,
        v03: false,
        generations: false,
        delivered,
        dead_letter: None,
    }
}

/// Every id `tasks_in_states` gives, paging `limit` at a time; checks each page is in order,
/// no longer than `limit`, and after the previous one.
async fn states_paged(store: &dyn Store, states: &[TaskState], limit: usize) -> Vec<String> {
    let (mut all, mut after) = (Vec::<String>::new(), None::<TaskId>);
    loop {
        let page = store
            .tasks_in_states(states, after.as_ref(), limit)
            .await
            .unwrap();
        assert!(page.len() <= limit);
        for t in &page {
            assert!(states.contains(&t.task.status.state), "{t:?}");
            assert!(all.last().is_none_or(|l| l.as_str() < t.task.id.as_str()));
            all.push(t.task.id.to_string());
        }
        if page.len() < limit {
            return all;
        }
        after = page.last().map(|t| t.task.id.clone());
    }
}

/// Every task `tasks_with_push_configs` gives, paging `limit` at a time.
async fn pushes_paged(store: &dyn Store, limit: usize) -> Vec<String> {
    let (mut all, mut after) = (Vec::<String>::new(), None::<TaskId>);
    loop {
        let page = store
            .tasks_with_push_configs(after.as_ref(), limit)
            .await
            .unwrap();
        assert!(page.len() <= limit);
        all.extend(page.iter().map(ToString::to_string));
        if page.len() < limit {
            all.sort();
            return all;
        }
        after = page.last().cloned();
    }
}

pub(crate) async fn scans_page_with_a_cursor(store: &dyn Store) {
    let state = |i: usize| match i % 3 {
        0 => TaskState::Working,
        1 => TaskState::Submitted,
        _ => TaskState::Completed,
    };
    for i in 0..30 {
        let t = task_at(&format!("t{i:02}"), "c", state(i), 1000 + i as i64);
        store.create(Arc::new(t), Scope::default()).await.unwrap();
    }
    // t01 completes and t02 is resumed: the index follows the state; t00 is deleted.
    let mut t = task_at("t01", "c", TaskState::Completed, 2000);
    store
        .update(Arc::new(t.clone()), 1, &status_event(&t))
        .await
        .unwrap();
    t = task_at("t02", "c", TaskState::Working, 2000);
    store
        .update(Arc::new(t.clone()), 1, &status_event(&t))
        .await
        .unwrap();
    assert!(store.delete(&TaskId::from("t00")).await.unwrap());
    let active: Vec<String> = (0..30)
        .filter(|&i| i != 0 && i != 1 && (i == 2 || i % 3 != 2))
        .map(|i| format!("t{i:02}"))
        .collect();
    for limit in [1, 4, 7, 100] {
        let got = states_paged(store, &[TaskState::Submitted, TaskState::Working], limit).await;
        assert_eq!(got, active, "pages of {limit}");
    }
    let working: Vec<String> = (0..30)
        .filter(|&i| i == 2 || (i != 0 && i % 3 == 0))
        .map(|i| format!("t{i:02}"))
        .collect();
    assert_eq!(states_paged(store, &[TaskState::Working], 3).await, working);
    assert!(
        states_paged(store, &[TaskState::Canceled], 3)
            .await
            .is_empty()
    );

    // Webhook registrations: some tasks have two; each task is listed once.
    for i in 0..10 {
        let task = format!("t{i:02}");
        store
            .put_push_config(record(&task, "a", "https://a.example", 0))
            .await
            .unwrap();
        if i % 2 == 0 {
            store
                .put_push_config(record(&task, "b", "https://b.example", 0))
                .await
                .unwrap();
        }
    }
    let all: Vec<String> = (0..10).map(|i| format!("t{i:02}")).collect();
    for limit in [1, 3, 10, 50] {
        assert_eq!(pushes_paged(store, limit).await, all, "pages of {limit}");
    }
    // A task whose registrations are all deleted, and a deleted task, are not listed.
    assert!(
        store
            .delete_push_config(&TaskId::from("t03"), "a")
            .await
            .unwrap()
    );
    assert!(store.delete(&TaskId::from("t05")).await.unwrap());
    let left: Vec<String> = all
        .into_iter()
        .filter(|t| t != "t03" && t != "t05")
        .collect();
    assert_eq!(pushes_paged(store, 2).await, left);
}

pub(crate) async fn claims_expire_by_receipt_time(store: &dyn Store) {
    let claim = |ms| MessageClaim {
        task_id: "t".into(),
        reply: None,
        received_ms: ms,
    };
    // Claimed out of time order.
    for i in [5, 2, 8, 0, 9, 3, 7, 1, 6, 4] {
        let key = format!("k{i}");
        assert_eq!(
            store.claim_message(&key, claim(100 * i)).await.unwrap(),
            None
        );
    }
    let taken = async |key: &str| {
        store
            .claim_message(key, claim(10_000))
            .await
            .unwrap()
            .is_some()
    };
    // Only the claims received before the time go, oldest first.
    assert_eq!(store.expire_claims(350).await.unwrap(), 4);
    for i in 0..4 {
        assert!(
            !taken(&format!("k{i}")).await,
            "k{i} expired (and is claimed anew)"
        );
    }
    assert!(taken("k4").await);
    // A reply added keeps the receipt time.
    let mut with_reply = claim(500);
    with_reply.reply = Some(Message::agent_text("hi"));
    store.update_claim("k5", with_reply.clone()).await.unwrap();
    assert_eq!(store.expire_claims(550).await.unwrap(), 2, "k4 and k5");
    assert!(!taken("k5").await);
    // A released claim is not counted; a claim updated to another time expires at that time.
    store.release_claim("k6").await.unwrap();
    assert_eq!(store.expire_claims(650).await.unwrap(), 0);
    store.update_claim("k7", claim(50)).await.unwrap();
    assert_eq!(
        store.expire_claims(100).await.unwrap(),
        1,
        "k7, at its new time"
    );
    assert!(taken("k8").await);
    assert!(!taken("k7").await);
    // A claim released and made anew expires at its new time only.
    store.release_claim("k9").await.unwrap();
    store.claim_message("k9", claim(20_000)).await.unwrap();
    assert_eq!(store.expire_claims(901).await.unwrap(), 1, "k8 alone");
    assert!(taken("k9").await);
    // Left: k0..k3, k5 and k7 (claimed anew at 10 000), k9 (at 20 000).
    assert_eq!(store.expire_claims(15_000).await.unwrap(), 6);
    assert_eq!(store.expire_claims(i64::MAX).await.unwrap(), 1);
}

pub(crate) async fn delivery_cursor_is_compare_and_swap(store: &dyn Store) {
    let t = task_at("t", "c", TaskState::Working, 1);
    store.create(Arc::new(t), Scope::default()).await.unwrap();
    let id = TaskId::from("t");
    store
        .put_push_config(record("t", "c1", "https://a.example", 0))
        .await
        .unwrap();
    // The payload form a registration was made with is kept (A2A 1.1: with generations).
    let mut v11 = record("t", "c2", "https://a.example", 0);
    v11.generations = true;
    store.put_push_config(v11.clone()).await.unwrap();
    let stored = store.push_config(&id, "c2").await.unwrap();
    assert_eq!(stored, Some(v11), "a 1.1 registration reads back as one");
    assert!(store.delete_push_config(&id, "c2").await.unwrap());
    let cursor = async || {
        store
            .push_config(&id, "c1")
            .await
            .unwrap()
            .map(|r| r.delivered)
    };
    let moved = record("t", "c1", "https://a.example", 3);
    assert!(store.advance_delivery(&moved, 0).await.unwrap());
    assert_eq!(cursor().await, Some(3));
    // A stale expected value: another replica delivered meanwhile.
    let stale = record("t", "c1", "https://a.example", 5);
    assert!(!store.advance_delivery(&stale, 0).await.unwrap());
    assert_eq!(cursor().await, Some(3));
    assert!(store.advance_delivery(&stale, 3).await.unwrap());
    assert_eq!(cursor().await, Some(5));
    // A replaced registration is not moved by the old one's worker.
    store
        .put_push_config(record("t", "c1", "https://b.example", 5))
        .await
        .unwrap();
    let old = record("t", "c1", "https://a.example", 7);
    assert!(!store.advance_delivery(&old, 5).await.unwrap());
    assert_eq!(cursor().await, Some(5));
    // A dead letter is stored with the cursor, and ends it.
    let mut dead = record("t", "c1", "https://b.example", 5);
    dead.dead_letter = Some(DeadLetter {
        seq: 6,
        error: "HTTP 500".into(),
        at_ms: 9,
    });
    assert!(store.advance_delivery(&dead, 5).await.unwrap());
    let stored = store.push_config(&id, "c1").await.unwrap().unwrap();
    assert_eq!(stored.dead_letter, dead.dead_letter);
    let after = record("t", "c1", "https://b.example", 6);
    assert!(!store.advance_delivery(&after, 5).await.unwrap());
    // A deleted one is not moved either.
    assert!(store.delete_push_config(&id, "c1").await.unwrap());
    assert!(!store.advance_delivery(&after, 5).await.unwrap());
    assert!(store.push_config(&id, "c1").await.unwrap().is_none());
}

pub(crate) async fn delivery_lease_has_one_owner(store: &dyn Store) {
    let (t, ttl) = (TaskId::from("t"), std::time::Duration::from_millis(80));
    assert!(store.acquire_delivery(&t, "c1", "a", ttl).await.unwrap());
    assert!(!store.acquire_delivery(&t, "c1", "b", ttl).await.unwrap());
    // Another registration has its own lease; the holder renews its own.
    assert!(store.acquire_delivery(&t, "c2", "b", ttl).await.unwrap());
    assert!(store.acquire_delivery(&t, "c1", "a", ttl).await.unwrap());
    // Only the holder gives it up.
    store.release_delivery(&t, "c1", "b").await.unwrap();
    assert!(!store.acquire_delivery(&t, "c1", "b", ttl).await.unwrap());
    // Once it expires, another owner takes it, and the first one is out.
    tokio::time::sleep(ttl * 2).await;
    assert!(store.acquire_delivery(&t, "c1", "b", ttl).await.unwrap());
    assert!(!store.acquire_delivery(&t, "c1", "a", ttl).await.unwrap());
    store.release_delivery(&t, "c1", "b").await.unwrap();
    assert!(store.acquire_delivery(&t, "c1", "a", ttl).await.unwrap());
}
