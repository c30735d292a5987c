//! A custom transport: a handler built without the HTTP server, serving a v0.3 request by
//! decoding and encoding with `a2a_core::v03`.

use a2a_core::v03::{self, Params};
use a2a_core::{AgentCard, Artifact, Error, Method};
use a2a_server::{Agent, CallContext, RequestContext, RequestHandler, TaskEvents};
use serde_json::json;

struct Echo;

impl Agent for Echo {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events
            .artifact(Artifact::text("echo", cx.message.text()))
            .await?;
        events.complete(None).await
    }
}

#[tokio::test]
async fn a_v03_message_send_through_a_handler_of_its_own() {
    let card = AgentCard::builder("Echo", "Repeats").build();
    let handler = RequestHandler::builder(Echo)
        .agent_card(card)
        .build()
        .expect("handler");
    assert!(
        handler.agent_card().supported_interfaces.is_empty(),
        "the card as given"
    );

    let method = Method::from_v03_name("message/send").expect("a v0.3 method");
    let params = json!({"message": {
        "kind": "message", "messageId": "m-1", "role": "user",
        "parts": [{"kind": "text", "text": "hi there"}]
    }});
    let Params::SendMessage(request) = v03::decode_params(method, &params).expect("decodes") else {
        panic!("SendMessage params");
    };
    let cx = CallContext::default().with_v03(true);
    let reply = handler.send_message(&cx, request).await.expect("sent");
    let body = v03::encode_send_response(&reply.into());
    assert_eq!(body["kind"], "task");
    assert_eq!(body["status"]["state"], "completed");
    assert_eq!(body["artifacts"][0]["parts"][0]["text"], "hi there");
    assert_eq!(body["history"][0]["parts"][0]["kind"], "text");
}
