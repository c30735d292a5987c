//! A webhook URL is at most `MAX_WEBHOOK_URL_BYTES` long (issue 46): a longer one is refused
//! with InvalidParams naming the limit, registered on its own or given with a message, over
//! every binding; one at the limit is accepted.

use a2a_e2e::agents::Kitchen;
use a2a_e2e::{ALL, Kind, Op, TestServer, send_params, str_at};
use a2a_server::push::{MAX_WEBHOOK_URL_BYTES, PushSettings};
use serde_json::json;

/// A public https webhook URL exactly `len` bytes long.
fn url_of(len: usize) -> String {
    let base = "https://hooks.example.com/a2a?token=";
    format!("{base}{}", "x".repeat(len - base.len()))
}

#[tokio::test]
async fn webhook_urls_over_the_limit_are_refused_on_every_binding() {
    let srv =
        TestServer::start_with(Kitchen, |b| b.push_notifications(PushSettings::default())).await;
    let limit = MAX_WEBHOOK_URL_BYTES.to_string();
    for binding in ALL {
        let task = srv.make_task(binding, "TASK_STATE_INPUT_REQUIRED").await;
        let id = str_at(&task, "id").to_owned();

        // At the limit: registered.
        let ok = srv
            .ok(
                binding,
                Op::CreatePushConfig,
                json!({"taskId": id, "url": url_of(MAX_WEBHOOK_URL_BYTES)}),
            )
            .await;
        assert_eq!(
            ok["url"].as_str().map(str::len),
            Some(MAX_WEBHOOK_URL_BYTES)
        );

        for len in [MAX_WEBHOOK_URL_BYTES + 1, 1 << 20] {
            let e = srv
                .err(
                    binding,
                    Op::CreatePushConfig,
                    json!({"taskId": id, "url": url_of(len)}),
                )
                .await;
            e.assert_kind(Kind::InvalidParams);
            assert!(e.message.contains(&limit), "{binding:?}: {}", e.message);
            assert!(e.message.len() < 500, "{binding:?}: the URL is echoed");

            // The same, given with a message.
            let mut params = send_params("hello");
            params["configuration"] = json!({"taskPushNotificationConfig": {"url": url_of(len)}});
            let e = srv.err(binding, Op::SendMessage, params).await;
            e.assert_kind(Kind::InvalidParams);
            assert!(e.message.contains(&limit), "{binding:?}: {}", e.message);
        }

        // Only the registration at the limit was kept.
        let list = srv
            .ok(binding, Op::ListPushConfigs, json!({"taskId": id}))
            .await;
        assert_eq!(
            list["configs"].as_array().map(Vec::len),
            Some(1),
            "{list:#}"
        );
    }
}
