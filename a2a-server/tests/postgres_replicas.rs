//! Three `a2a-server` processes on one PostgreSQL database, a client spreading its calls over
//! them: streams, resumption, cancels, `kill -9` recovery and webhooks across replicas, and
//! followers catching up after their listening connection is killed.
#![cfg(all(feature = "postgres", feature = "cli"))]

mod hook;
mod pg;
mod process;

use a2a_server::RESTART_MESSAGE;
use hook::Receiver;
use pg::TestSchema;
use process::{Process, Sse, full_log, read_sse, read_sse_until};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(40);

/// The lease time the replicas run with: short, so that recovery is quick, yet several
/// heartbeats long (a heartbeat every third of it) on a loaded two-core machine.
const LEASE_TTL_SECS: &str = "3";

/// Replicas of one server on the test's schema.
struct Cluster {
    db: TestSchema,
    replicas: Vec<Process>,
    http: reqwest::Client,
    lease_ttl_secs: &'static str,
}

impl Cluster {
    /// `n` replicas, or `None` when there is no PostgreSQL (the test is skipped).
    async fn start(n: usize) -> Option<Self> {
        Some(Self::start_on(TestSchema::new().await?, n, LEASE_TTL_SECS).await)
    }

    /// `n` replicas on the schema `db`, with leases of `lease_ttl_secs`.
    async fn start_on(db: TestSchema, n: usize, lease_ttl_secs: &'static str) -> Self {
        let mut cluster = Self {
            db,
            replicas: Vec::new(),
            http: reqwest::Client::new(),
            lease_ttl_secs,
        };
        for i in 0..n {
            let replica = cluster.spawn(&format!("r{i}")).await;
            cluster.replicas.push(replica);
        }
        cluster
    }

    /// A new replica process named `id`, ready to serve.
    async fn spawn(&self, id: &str) -> Process {
        let replica = Process::with_args(&[
            "--postgres",
            &self.db.url,
            "--postgres-schema",
            &self.db.schema,
            "--postgres-pool",
            "4",
            "--replica-id",
            id,
            "--lease-ttl-secs",
            self.lease_ttl_secs,
            "--push-allow",
            "127.0.0.1",
        ]);
        replica.ready(&self.http).await;
        replica
    }

    fn url(&self, i: usize) -> String {
        self.replicas[i].url.clone()
    }

    /// Sends `text` to replica `i` and returns the task (at once with `wait: false`).
    async fn send(&self, i: usize, text: &str, configuration: Value) -> Value {
        let body = json!({
            "message": {
                "messageId": uuid::Uuid::new_v4().to_string(),
                "role": "ROLE_USER",
                "parts": [{"text": text}],
            },
            "configuration": configuration,
        });
        let response = self
            .http
            .post(format!("{}/message:send", self.url(i)))
            .json(&body)
            .send()
            .await
            .expect("SendMessage answers");
        assert!(response.status().is_success(), "{}", response.status());
        let v: Value = response.json().await.unwrap();
        v["task"].clone()
    }

    /// Starts `countdown n` on replica `i`; returns the task id.
    async fn countdown(&self, i: usize, n: u32) -> String {
        let task = self
            .send(
                i,
                &format!("countdown {n}"),
                json!({"returnImmediately": true}),
            )
            .await;
        task["id"].as_str().expect("a task id").to_owned()
    }

    /// Follows `task` from `Last-Event-ID: after` on the given replicas in turn, resuming on
    /// the next one whenever a stream breaks, until its final event.
    async fn follow(&self, on: &[String], task: &str, mut events: Vec<Sse>) -> Vec<Sse> {
        follow(&self.http, on, task, &mut events).await;
        events
    }
}

/// The state an event announces, if it carries one.
fn state_of(event: &Sse) -> Option<&str> {
    let d = &event.data;
    d["statusUpdate"]["status"]["state"]
        .as_str()
        .or_else(|| d["task"]["status"]["state"].as_str())
}

fn is_final(event: &Sse) -> bool {
    matches!(
        state_of(event),
        Some(
            "TASK_STATE_COMPLETED"
                | "TASK_STATE_FAILED"
                | "TASK_STATE_CANCELED"
                | "TASK_STATE_REJECTED"
        )
    )
}

/// See [`Cluster::follow`].
async fn follow(http: &reqwest::Client, on: &[String], task: &str, events: &mut Vec<Sse>) {
    timeout(WAIT, async {
        for url in on.iter().cycle() {
            let last = events.last().map_or(0, |e| e.id);
            let response = http
                .get(format!("{url}/tasks/{task}:subscribe"))
                .header("Last-Event-ID", last.to_string())
                .send()
                .await;
            if let Ok(response) = response
                && response.status().is_success()
            {
                read_sse(response, events).await;
            }
            if events.last().is_some_and(is_final) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("task {task} did not finish; got {} events", events.len()));
}

/// Every event of a task's log exactly once, in order: ids `1, 2, …, n`.
fn assert_gap_free(task: &str, events: &[Sse]) {
    let ids: Vec<u64> = events.iter().map(|e| e.id).collect();
    let expected: Vec<u64> = (1..=ids.len() as u64).collect();
    assert_eq!(ids, expected, "the events of {task}: no gap, no duplicate");
}

#[tokio::test]
async fn a_stream_on_another_replica_gets_every_event_in_order_and_resumes_on_a_third() {
    let Some(cluster) = Cluster::start(3).await else {
        return;
    };
    let task = cluster.countdown(0, 12).await;
    // Followed on C while it runs on A.
    let c = [cluster.url(2)];
    let on_c = cluster.follow(&c, &task, Vec::new());
    // Followed on B for five events, then resumed with Last-Event-ID on C.
    let first_part = async {
        let response = cluster
            .http
            .get(format!("{}/tasks/{task}:subscribe", cluster.url(1)))
            .header("Last-Event-ID", "0")
            .send()
            .await
            .unwrap();
        let mut first = Vec::new();
        timeout(WAIT, read_sse_until(response, &mut first, 5))
            .await
            .expect("five events on B");
        first
    };
    let (on_c, first) = tokio::join!(on_c, first_part);
    assert_eq!(first.len(), 5);
    assert_gap_free(&task, &on_c);
    assert_eq!(state_of(on_c.last().unwrap()), Some("TASK_STATE_COMPLETED"));
    let full = full_log(&cluster.http, &cluster.url(1), &task).await;
    assert_eq!(on_c, full, "C's stream is the task's log");
    let resumed = cluster.follow(&c, &task, first).await;
    assert_eq!(resumed, full, "resumed on C after B: the log, exactly");
}

/// Waits until `check` holds, polling every 20 ms.
async fn eventually<F: std::future::Future<Output = bool>>(what: &str, check: impl Fn() -> F) {
    timeout(WAIT, async {
        while !check().await {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what}: not within {WAIT:?}"));
}

#[tokio::test]
async fn a_cancel_sent_to_one_replica_stops_the_agent_running_on_another() {
    let Some(cluster) = Cluster::start(3).await else {
        return;
    };
    let db = cluster.db.sql().await;
    let task = cluster.countdown(0, 200).await;
    // Running on A: A holds its execution lease.
    let holder = || async {
        db.query_opt("SELECT owner FROM a2a_leases WHERE task_id = $1", &[&task])
            .await
            .unwrap()
            .map(|r| r.get::<_, String>(0))
    };
    assert_eq!(holder().await.as_deref(), Some("r0"));
    let started = cluster.follow_until(&cluster.url(0), &task, 4).await;
    assert_eq!(started.len(), 4);

    let response = cluster
        .http
        .post(format!("{}/tasks/{task}:cancel", cluster.url(1)))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let canceled: Value = response.json().await.unwrap();
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    // The agent on A stopped: its execution ended and gave the lease up, long before the
    // countdown's 20 s.
    eventually("A's execution ends", || async { holder().await.is_none() }).await;
    let log = full_log(&cluster.http, &cluster.url(2), &task).await;
    assert_gap_free(&task, &log);
    assert_eq!(state_of(log.last().unwrap()), Some("TASK_STATE_CANCELED"));
    let chunks = log
        .iter()
        .filter(|e| e.data.get("artifactUpdate").is_some())
        .count();
    assert!(chunks < 100, "stopped early: {chunks} chunks of 200");
}

impl Cluster {
    /// The first `n` events of `task` (from `Last-Event-ID: 0`) on the replica at `url`.
    async fn follow_until(&self, url: &str, task: &str, n: usize) -> Vec<Sse> {
        let response = self
            .http
            .get(format!("{url}/tasks/{task}:subscribe"))
            .header("Last-Event-ID", "0")
            .send()
            .await
            .unwrap();
        let mut events = Vec::new();
        timeout(WAIT, read_sse_until(response, &mut events, n))
            .await
            .expect("events arrive");
        events
    }
}

#[tokio::test]
async fn kill_9_of_the_replica_running_countdowns_under_load_loses_nothing_five_times() {
    let Some(mut cluster) = Cluster::start(3).await else {
        return;
    };
    for round in 0..5 {
        let victim = round % 3;
        let survivors: Vec<String> = (0..3)
            .filter(|&i| i != victim)
            .map(|i| cluster.url(i))
            .collect();
        let everyone: Vec<String> = (0..3).map(|i| cluster.url(i)).collect();

        // Load: blocking echo sends spread over every replica; each answer is an
        // acknowledged task.
        let acked = Arc::new(Mutex::new(Vec::<String>::new()));
        let stop = tokio_util::sync::CancellationToken::new();
        let mut load = Vec::new();
        for worker in 0..4 {
            let (http, urls, acked, stop) = (
                cluster.http.clone(),
                everyone.clone(),
                acked.clone(),
                stop.clone(),
            );
            load.push(tokio::spawn(async move {
                for i in worker.. {
                    if stop.is_cancelled() {
                        return;
                    }
                    let body = json!({"message": {
                        "messageId": uuid::Uuid::new_v4().to_string(),
                        "role": "ROLE_USER", "parts": [{"text": format!("hello {i}")}]}});
                    let sent = http
                        .post(format!("{}/message:send", urls[i % urls.len()]))
                        .json(&body)
                        .send()
                        .await;
                    if let Ok(r) = sent
                        && let Ok(v) = r.json::<Value>().await
                        && let Some(id) = v["task"]["id"].as_str()
                    {
                        acked.lock().unwrap().push(id.to_owned());
                    }
                }
            }));
        }

        // Countdowns on the victim, each followed on a survivor from its first event.
        let mut followers = Vec::new();
        for k in 0..4 {
            let task = cluster.countdown(victim, 100).await;
            let http = cluster.http.clone();
            // Half of them start on each survivor, and resume on the other if cut.
            let on = [survivors[k % 2].clone(), survivors[(k + 1) % 2].clone()];
            followers.push(tokio::spawn(async move {
                let mut events = Vec::new();
                follow(&http, &on, &task, &mut events).await;
                (task, events)
            }));
        }
        tokio::time::sleep(Duration::from_millis(700)).await;
        cluster.replicas[victim].kill9();
        let killed = Instant::now();

        for follower in followers {
            let (task, events) = follower.await.unwrap();
            assert_gap_free(&task, &events);
            assert_eq!(
                state_of(events.last().unwrap()),
                Some("TASK_STATE_FAILED"),
                "round {round}: {task} interrupted, then failed by a survivor"
            );
            // Recovered once: one restart status in the whole log.
            let log = full_log(&cluster.http, &survivors[0], &task).await;
            assert_eq!(log, events, "the stream is the log");
            let restarts = log
                .iter()
                .filter(|e| {
                    e.data["statusUpdate"]["status"]["message"]["parts"][0]["text"]
                        == RESTART_MESSAGE
                })
                .count();
            assert_eq!(restarts, 1, "round {round}: {task} recovered exactly once");
        }
        // Within the lease bounds: the dead replica's heartbeat runs out within a lease time,
        // and survivors look for orphans once per lease time (3 s each); slack for a loaded
        // machine.
        let recovered_in = killed.elapsed();
        assert!(
            recovered_in < Duration::from_secs(12),
            "round {round}: recovered in {recovered_in:?}"
        );

        stop.cancel();
        for worker in load {
            worker.await.unwrap();
        }
        // Every acknowledged task is there, finished, on a survivor.
        let acked = acked.lock().unwrap().clone();
        assert!(!acked.is_empty(), "round {round}: the load got answers");
        for id in &acked {
            let r = cluster
                .http
                .get(format!("{}/tasks/{id}", survivors[0]))
                .send()
                .await
                .unwrap();
            assert!(
                r.status().is_success(),
                "round {round}: acknowledged task {id} lost"
            );
            let t: Value = r.json().await.unwrap();
            assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED", "{id}");
        }
        // The victim comes back under a new name.
        cluster.replicas[victim] = cluster.spawn(&format!("r{victim}-{round}")).await;
    }
}

#[tokio::test]
async fn a_webhook_sees_each_event_once_in_order_while_the_delivering_replica_is_killed() {
    let Some(mut cluster) = Cluster::start(3).await else {
        return;
    };
    let (receiver, hook) = Receiver::start(Duration::ZERO).await;
    let configuration = json!({
        "returnImmediately": true,
        "taskPushNotificationConfig": {"url": hook},
    });
    let task = cluster.send(0, "countdown 100", configuration).await;
    let task = task["id"].as_str().unwrap().to_owned();
    eventually("deliveries start", || async { receiver.posts().len() >= 6 }).await;
    cluster.replicas[0].kill9();

    // A survivor fails the task, and the webhook hears the rest, up to that final event.
    let survivors = [cluster.url(1), cluster.url(2)];
    let log = cluster.follow(&survivors, &task, Vec::new()).await;
    assert_eq!(state_of(log.last().unwrap()), Some("TASK_STATE_FAILED"));
    let last = log.last().unwrap().id;
    eventually("the final event is delivered", || async {
        receiver.posts().contains(&last)
    })
    .await;
    let posts = receiver.posts();
    // In order, each once; the one post in flight when the replica died may come twice (the
    // receiver got it, the replica did not live to record it): that is what the
    // notification id is for.
    let mut seen: Vec<u64> = posts.clone();
    seen.dedup();
    let first = seen[0];
    let expected: Vec<u64> = (first..=last).collect();
    assert_eq!(seen, expected, "every event, in order: {posts:?}");
    assert!(
        posts.len() <= seen.len() + 1,
        "at most the post in flight at the kill twice: {posts:?}"
    );
    drop(cluster.replicas.remove(0));
}

#[tokio::test]
async fn followers_catch_up_after_their_listening_connections_are_killed() {
    let Some(cluster) = Cluster::start(2).await else {
        return;
    };
    let task = cluster.countdown(0, 30).await;
    let b = [cluster.url(1)];
    let following = cluster.follow(&b, &task, Vec::new());
    let kill = async {
        tokio::time::sleep(Duration::from_millis(800)).await;
        let db = cluster.db.sql().await;
        let killed = db
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE application_name = $1",
                &[&format!("a2a-bus a2a_{}", cluster.db.schema)],
            )
            .await
            .unwrap();
        assert_eq!(killed.len(), 2, "each replica's listening connection");
    };
    let started = Instant::now();
    let (events, ()) = tokio::join!(following, kill);
    assert_gap_free(&task, &events);
    assert_eq!(
        state_of(events.last().unwrap()),
        Some("TASK_STATE_COMPLETED")
    );
    // Woken as events go on, not by the 30 s safety poll.
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn followers_catch_up_and_nothing_acknowledged_is_lost_when_postgres_restarts() {
    // A server of the test's own, to restart without disturbing the other tests.
    let Some(server) = tokio::task::spawn_blocking(pg::OwnServer::start)
        .await
        .unwrap()
    else {
        return;
    };
    let db = TestSchema::at(server.url())
        .await
        .expect("the test's own server answers");
    let cluster = Cluster::start_on(db, 2, LEASE_TTL_SECS).await;
    let before = cluster.send(1, "before the restart", json!({})).await;
    let task = cluster.countdown(0, 40).await;
    let b = [cluster.url(1)];
    let following = cluster.follow(&b, &task, Vec::new());
    let restart = async {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let server = &server;
        let restarted = tokio::task::block_in_place(|| server.pg_ctl("restart"));
        assert!(restarted, "pg_ctl restart");
    };
    let (events, ()) = tokio::join!(following, restart);
    // B's stream goes on through the restart to the task's end: gap-free, and the same as the
    // log. (The countdown's writes during the outage failed, so the task ends FAILED, by
    // recovery, or COMPLETED if none fell in the outage.)
    assert_gap_free(&task, &events);
    assert!(is_final(events.last().unwrap()));
    assert_eq!(
        events,
        full_log(&cluster.http, &cluster.url(0), &task).await
    );
    // What was acknowledged before is there, and both replicas serve again.
    let id = before["id"].as_str().unwrap();
    for i in 0..2 {
        let r = cluster
            .http
            .get(format!("{}/tasks/{id}", cluster.url(i)))
            .send()
            .await
            .unwrap();
        assert!(
            r.status().is_success(),
            "replica {i} after the restart: {}",
            r.status()
        );
        let after = cluster.send(i, "after the restart", json!({})).await;
        assert_eq!(after["status"]["state"], "TASK_STATE_COMPLETED");
    }
}

#[tokio::test]
async fn a_webhook_registered_on_one_replica_hears_a_task_running_on_another_at_once() {
    // Long leases: the upkeep's periodic look at every registration (once per lease time) is
    // not what delivers here.
    let Some(db) = TestSchema::new().await else {
        return;
    };
    let cluster = Cluster::start_on(db, 2, "30").await;
    let (receiver, hook) = Receiver::start(Duration::ZERO).await;
    let task = cluster.countdown(0, 20).await;
    let response = cluster
        .http
        .post(format!(
            "{}/tasks/{task}/pushNotificationConfigs",
            cluster.url(1)
        ))
        .json(&json!({"url": hook}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    // Followed on A (a stream on B would wake B's worker on its own).
    let log = cluster.follow(&[cluster.url(0)], &task, Vec::new()).await;
    let last = log.last().unwrap().id;
    // Delivered from B as A writes, not on the next look of an idle worker (30 s).
    let finished = Instant::now();
    eventually("the final event is delivered", || async {
        receiver.posts().contains(&last)
    })
    .await;
    assert!(
        finished.elapsed() < Duration::from_secs(2),
        "{:?}",
        finished.elapsed()
    );
    let posts = receiver.posts();
    let expected: Vec<u64> = (posts[0]..=last).collect();
    assert_eq!(posts, expected, "each event once, in order");
}
