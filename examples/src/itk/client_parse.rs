//! `tck-client-parse`: the conformance suite hands the agent a canonical wire payload and the
//! operation it answers; the agent parses it with this project's client library, exactly as a
//! client would read that answer off the wire, and returns what the client produced (so the
//! suite grades the client too).

use a2a_client::transport::Payload;
use a2a_core::operation::Visit;
use a2a_core::{Error, Message, Method, Operation, Part};
use serde_json::{Value, json};

/// The parse of the `{operation, wire_payload}` data part of `message`, as the JSON of what
/// the client returned: the response, or `{"error": {code, message, details}}` for an error
/// the client read off the wire. A payload the client cannot read is an InvalidParams error.
pub(super) fn answer(message: &Message) -> Result<Value, Error> {
    let request = message
        .parts
        .iter()
        .find_map(Part::as_data)
        .ok_or_else(|| {
            Error::invalid_params(
                "message.parts",
                "tck-client-parse needs a data part {operation, wire_payload}",
            )
        })?;
    let operation = request
        .get("operation")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid_params("operation", "a string naming the operation"))?;
    let payload = request
        .get("wire_payload")
        .ok_or_else(|| Error::invalid_params("wire_payload", "the payload to parse"))?;
    let parsed = if operation == "get_agent_card" {
        a2a_client::decode_card(payload).map(|card| serde_json::to_value(card).unwrap_or_default())
    } else {
        let method = method_of(operation).ok_or_else(|| {
            Error::invalid_params("operation", format!("{operation} is no A2A operation"))
        })?;
        let body = serde_json::to_vec(payload).unwrap_or_default().into();
        // A JSON-RPC response as the JSON-RPC binding reads it; anything else is the bare
        // result, as the HTTP+JSON binding reads it.
        let payload = if payload.get("jsonrpc").is_some() {
            Payload::JsonRpc { body, status: 200 }
        } else {
            Payload::Json(body)
        };
        method.visit(Decode(payload))
    };
    match parsed {
        Ok(value) => Ok(value),
        Err(a2a_client::Error::Remote { error, .. }) => Ok(json!({
            "error": {"code": error.code, "message": error.message, "details": error.details}
        })),
        Err(other) => Err(Error::invalid_params(
            "wire_payload",
            format!("the client could not parse it: {other}"),
        )),
    }
}

/// The operations by the conformance suite's names.
fn method_of(operation: &str) -> Option<Method> {
    Some(match operation {
        "send_message" => Method::SendMessage,
        "send_streaming_message" => Method::SendStreamingMessage,
        "get_task" => Method::GetTask,
        "list_tasks" => Method::ListTasks,
        "cancel_task" => Method::CancelTask,
        "subscribe_to_task" => Method::SubscribeToTask,
        "create_push_config" => Method::CreateTaskPushNotificationConfig,
        "get_push_config" => Method::GetTaskPushNotificationConfig,
        "list_push_configs" => Method::ListTaskPushNotificationConfigs,
        "delete_push_config" => Method::DeleteTaskPushNotificationConfig,
        "get_extended_agent_card" => Method::GetExtendedAgentCard,
        _ => return None,
    })
}

/// Decodes a payload as the response of the operation visited.
struct Decode(Payload);

impl Visit for Decode {
    type Output = Result<Value, a2a_client::Error>;

    fn visit<O: Operation>(self) -> Self::Output {
        self.0
            .decode::<O>()
            .map(|response| serde_json::to_value(response).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::answer;
    use a2a_core::{Message, Part};
    use serde_json::{Value, json};

    fn parse(operation: &str, payload: Value) -> Value {
        let message = Message::user_text("tck-client-parse").with_part(Part::data(
            json!({"operation": operation, "wire_payload": payload}),
        ));
        answer(&message).expect("parsed")
    }

    #[test]
    fn a_send_message_result_is_parsed_into_its_task() {
        let parsed = parse(
            "send_message",
            json!({"jsonrpc": "2.0", "id": 1, "result": {"task": {
                "id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}}}),
        );
        assert_eq!(parsed["task"]["id"], "t1");
        assert_eq!(parsed["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }

    #[test]
    fn an_error_response_is_parsed_into_its_code_and_message() {
        let parsed = parse(
            "get_task",
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "Task not found"}}),
        );
        assert_eq!(parsed["error"]["code"], -32001);
        assert_eq!(parsed["error"]["message"], "Task not found");
    }

    #[test]
    fn a_card_is_parsed_by_the_client() {
        let parsed = parse(
            "get_agent_card",
            json!({"name": "A", "description": "d", "version": "1", "capabilities": {"streaming": false},
                   "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
                   "supportedInterfaces": [{"url": "https://x", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}]}),
        );
        assert_eq!(parsed["capabilities"]["streaming"], false);
    }

    #[test]
    fn a_payload_the_client_cannot_read_is_refused() {
        let message = Message::user_text("tck-client-parse").with_part(Part::data(
            json!({"operation": "get_task", "wire_payload": {"jsonrpc": "2.0", "id": 1, "result": 7}}),
        ));
        assert!(answer(&message).is_err());
    }
}
