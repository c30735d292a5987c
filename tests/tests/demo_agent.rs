//! The demo agent of the `a2a-server` binary, end to end: echo, a streamed countdown whose
//! chunks are merged in the stored task (checklist 33), the multi-turn greeting, and the
//! cancel of a running countdown.

use a2a_e2e::sse::summary;
use a2a_e2e::{ALL, Binding, Kind, Op, TestServer, reply_params, send_params, str_at, texts};
use a2a_server::demo::DemoAgent;
use serde_json::{Value, json};

async fn demo() -> TestServer {
    TestServer::start_with(DemoAgent, |b| b.agent_card(DemoAgent::card())).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_card_lists_its_three_skills() {
    let srv = demo().await;
    let card: Value = srv.card().await;
    let skills: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["echo", "countdown", "greet"]);
    assert_eq!(card["supportedInterfaces"][0]["url"], srv.base);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_echoes_text_as_an_artifact() {
    let srv = demo().await;
    for b in ALL {
        let task = srv.send_task(b, "hello there").await;
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(task["artifacts"][0]["name"], "echo");
        assert_eq!(texts(&task["artifacts"][0]["parts"]), ["echo: hello there"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_countdown_is_merged_into_one_artifact() {
    let srv = demo().await;
    // Both bindings at once: the countdown takes a few hundred milliseconds each.
    let runs = ALL.map(|b| {
        let srv = &srv;
        async move {
            let mut stream = srv
                .stream(b, Op::SendStreamingMessage, send_params("countdown 3"))
                .await;
            (b, stream.rest().await)
        }
    });
    for (b, events) in futures::future::join_all(runs).await {
        assert_eq!(
            summary(&events),
            [
                "task:TASK_STATE_WORKING",
                "artifactUpdate",
                "statusUpdate:TASK_STATE_WORKING",
                "artifactUpdate",
                "statusUpdate:TASK_STATE_WORKING",
                "artifactUpdate",
                "statusUpdate:TASK_STATE_COMPLETED",
            ],
            "{b:?}"
        );
        let progress: Vec<String> = [
            &events[0]["task"],
            &events[2]["statusUpdate"],
            &events[4]["statusUpdate"],
        ]
        .iter()
        .map(|e| texts(&e["status"]["message"]["parts"]).join(""))
        .collect();
        assert_eq!(progress, ["3...", "2...", "1..."]);
        let chunks: Vec<&Value> = [1, 3, 5]
            .iter()
            .map(|i| &events[*i]["artifactUpdate"])
            .collect();
        assert!(chunks[0].get("append").is_none());
        assert_eq!(chunks[1]["append"], true);
        assert_eq!(chunks[2]["append"], true);
        assert_eq!(chunks[2]["lastChunk"], true);
        let artifact_id = &chunks[0]["artifact"]["artifactId"];
        assert!(
            chunks
                .iter()
                .all(|c| &c["artifact"]["artifactId"] == artifact_id)
        );
        assert_eq!(
            texts(&events[6]["statusUpdate"]["status"]["message"]["parts"]),
            ["Liftoff!"]
        );

        let id = str_at(&events[0]["task"], "id");
        let task = srv.ok(b, Op::GetTask, json!({"id": id})).await;
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
        let artifacts = task["artifacts"].as_array().unwrap();
        assert_eq!(artifacts.len(), 1, "one merged artifact: {task:#}");
        assert_eq!(&artifacts[0]["artifactId"], artifact_id);
        assert_eq!(texts(&artifacts[0]["parts"]), ["3\n", "2\n", "1\n"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_greets_over_two_turns() {
    let srv = demo().await;
    for b in ALL {
        let task = srv.send_task(b, "greet").await;
        assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(
            texts(&task["status"]["message"]["parts"]),
            ["What is your name?"]
        );
        let id = str_at(&task, "id");
        let done = srv.ok(b, Op::SendMessage, reply_params(id, "Ada")).await["task"].clone();
        assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(texts(&done["status"]["message"]["parts"]), ["Hello, Ada!"]);
        assert_eq!(done["contextId"], task["contextId"]);
        let roles: Vec<&str> = done["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            roles,
            ["ROLE_USER", "ROLE_AGENT", "ROLE_USER", "ROLE_AGENT"]
        );
        srv.err(b, Op::SendMessage, reply_params(id, "again"))
            .await
            .assert_kind(Kind::UnsupportedOperation);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_countdown_can_be_canceled() {
    let srv = demo().await;
    for b in ALL {
        let mut stream = srv
            .stream(b, Op::SendStreamingMessage, send_params("countdown 50"))
            .await;
        let first = stream.expect().await;
        assert_eq!(first["task"]["status"]["state"], "TASK_STATE_WORKING");
        let id = str_at(&first["task"], "id");
        let canceled = srv.ok(b, Op::CancelTask, json!({"id": id})).await;
        assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
        let rest = stream.rest().await;
        assert_eq!(
            rest.last().and_then(a2a_e2e::sse::state_of),
            Some("TASK_STATE_CANCELED"),
            "{b:?}: the stream ends with the cancel"
        );
        let task = srv.get_task(id).await;
        assert_eq!(task, canceled, "nothing happened after the cancel");
        let parts = texts(&task["artifacts"][0]["parts"]);
        assert!(!parts.is_empty() && parts.len() < 50, "{parts:?}");
        assert_eq!(parts[0], "50\n");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_countdown_without_a_number_is_rejected() {
    let srv = demo().await;
    for text in [
        "countdown",
        "countdown lots",
        "countdown 0",
        "countdown 1001",
    ] {
        let task = srv.send_task(Binding::JsonRpc, text).await;
        assert_eq!(task["status"]["state"], "TASK_STATE_REJECTED", "{text}");
        assert!(
            texts(&task["status"]["message"]["parts"])
                .join("")
                .contains("1 to 1000")
        );
    }
}
