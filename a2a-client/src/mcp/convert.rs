//! A2A content as MCP content and back: a tool's input schema, the message a tool call's
//! arguments describe, a task's artifacts as tool content, a task as an MCP task.

use super::ANSWER;
use a2a_core::{
    AgentCard, AgentSkill, Artifact, Message, Part, PartContent, Role, StreamResponse, Task,
    TaskState,
};
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, DetailedTask, ElicitRequest,
    ElicitRequestParams, ElicitationSchema, InputRequest, ResourceContents, TaskPayload,
    TaskStatus,
};
use serde_json::{Map, Value, json};

pub(super) fn skill_modes(skill: &AgentSkill, card: &AgentCard) -> Vec<String> {
    if skill.input_modes.is_empty() {
        card.default_input_modes.clone()
    } else {
        skill.input_modes.clone()
    }
}

/// The input schema of a tool: `text`, and `data` and `files` when the input modes accept
/// them; `contextId` and `taskId` on the generic tool.
pub(super) fn schema(modes: Vec<String>, generic: bool) -> Map<String, Value> {
    let accepts = |prefixes: &[&str]| {
        modes.is_empty()
            || modes
                .iter()
                .any(|m| m == "*/*" || prefixes.iter().any(|p| m.starts_with(p)))
    };
    let mut properties = json!({
        "text": {"type": "string", "description": "The message to the agent."},
    });
    if accepts(&["application/json"]) {
        properties["data"] = json!({"type": "object", "description": "Structured data for the agent (a data part)."});
    }
    let binary = modes
        .iter()
        .any(|m| !m.starts_with("text/") && m != "application/json");
    if binary || modes.is_empty() {
        properties["files"] = json!({
            "type": "array",
            "description": "Files for the agent: bytes in base64 or a URL.",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "mediaType": {"type": "string"},
                    "base64": {"type": "string"},
                    "url": {"type": "string"}
                }
            }
        });
    }
    if generic {
        properties["taskId"] = json!({"type": "string", "description": "The task to continue (to answer its question)."});
        properties["contextId"] =
            json!({"type": "string", "description": "The conversation to continue."});
    }
    match json!({"type": "object", "properties": properties, "required": ["text"], "additionalProperties": false})
    {
        Value::Object(o) => o,
        _ => Map::new(),
    }
}

/// The message a tool call's arguments describe, or what is wrong with them.
pub(super) fn message_of(
    arguments: &Map<String, Value>,
    allowed: &Map<String, Value>,
) -> Result<Message, String> {
    let properties = allowed["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Some(unknown) = arguments.keys().find(|k| !properties.contains_key(*k)) {
        return Err(format!("unknown argument {unknown:?}"));
    }
    let text = match arguments.get("text") {
        Some(Value::String(t)) => t.clone(),
        Some(other) => return Err(format!("`text` must be a string, not {other}")),
        None => return Err("`text` is required".into()),
    };
    let mut parts = vec![Part::text(text)];
    match arguments.get("data") {
        None | Some(Value::Null) => {}
        Some(v @ Value::Object(_)) => {
            parts.push(Part::data(v.clone()).with_media_type("application/json"))
        }
        Some(other) => return Err(format!("`data` must be an object, not {other}")),
    }
    for file in arguments
        .get("files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = file["name"].as_str();
        let media = file["mediaType"].as_str();
        let mut part = match (file["base64"].as_str(), file["url"].as_str()) {
            (Some(b64), None) => {
                use base64::Engine as _;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| format!("a file's `base64` does not decode: {e}"))?;
                Part::raw(bytes)
            }
            (None, Some(url)) => Part::url(url),
            _ => return Err("each file needs exactly one of `base64` and `url`".into()),
        };
        if let Some(n) = name {
            part = part.with_filename(n);
        }
        if let Some(m) = media {
            part = part.with_media_type(m);
        }
        parts.push(part);
    }
    let mut message = Message::new(Role::User, parts);
    message.task_id = arguments
        .get("taskId")
        .and_then(Value::as_str)
        .map(Into::into);
    message.context_id = arguments
        .get("contextId")
        .and_then(Value::as_str)
        .map(Into::into);
    Ok(message)
}

/// The status text of a task or an event, if it has one.
pub(super) fn status_text(task: &Task) -> String {
    task.status
        .message
        .as_ref()
        .map(|m| m.text())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| task.status.state.to_string())
}

/// What one event says, for a progress notification.
pub(super) fn progress_text(event: &StreamResponse) -> Option<String> {
    match event {
        StreamResponse::StatusUpdate(u) => Some(
            u.status
                .message
                .as_ref()
                .map(|m| m.text())
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| u.status.state.to_string()),
        ),
        StreamResponse::Task(t) => Some(status_text(t)),
        _ => None,
    }
}

/// A task's artifacts as tool content: text, files (embedded or linked), data (structured).
pub(super) fn content_of(task: &Task) -> CallToolResult {
    let mut content = Vec::new();
    let mut structured: Vec<Value> = Vec::new();
    for artifact in &task.artifacts {
        parts_into(artifact, &mut content, &mut structured);
    }
    if content.is_empty() && structured.is_empty() {
        content.push(ContentBlock::text(status_text(task)));
    }
    let mut result = CallToolResult::success(content);
    match structured.len() {
        0 => {}
        1 => result.structured_content = Some(structured.remove(0)),
        _ => result.structured_content = Some(json!({"data": structured})),
    }
    result
}

pub(super) fn parts_into(
    artifact: &Artifact,
    content: &mut Vec<ContentBlock>,
    structured: &mut Vec<Value>,
) {
    // Consecutive text parts (the chunks of a streamed artifact) make one text block.
    let mut text = String::new();
    let flush = |text: &mut String, content: &mut Vec<ContentBlock>| {
        if !text.is_empty() {
            content.push(ContentBlock::text(std::mem::take(text)));
        }
    };
    for (i, part) in artifact.parts.iter().enumerate() {
        let uri = format!("a2a://artifact/{}/{i}", artifact.artifact_id);
        if let PartContent::Text(t) = &part.content {
            text.push_str(t);
            continue;
        }
        flush(&mut text, content);
        match &part.content {
            PartContent::Text(_) => {}
            PartContent::Data(v) => {
                structured.push(v.clone());
                content.push(ContentBlock::text(v.to_string()));
            }
            PartContent::Raw(bytes) => {
                use base64::Engine as _;
                let blob = base64::engine::general_purpose::STANDARD.encode(bytes);
                content.push(ContentBlock::resource(
                    ResourceContents::BlobResourceContents {
                        uri: part.filename.clone().map_or(uri, |n| {
                            format!("a2a://artifact/{}/{n}", artifact.artifact_id)
                        }),
                        mime_type: part.media_type.clone(),
                        blob,
                        meta: None,
                    },
                ));
            }
            PartContent::Url(url) => {
                let name = part.filename.clone().unwrap_or_else(|| url.clone());
                let mut resource = rmcp::model::Resource::new(url.clone(), name);
                resource.mime_type = part.media_type.clone();
                content.push(ContentBlock::resource_link(resource));
            }
        }
    }
    flush(&mut text, content);
}

pub(super) fn tool_error(text: impl Into<String>) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(text.into())]).into()
}

/// The MCP task an A2A task is: its status, and what goes with it (the question, the result).
pub(super) fn detailed(task: &Task) -> DetailedTask {
    let stamp = task
        .status
        .timestamp
        .as_ref()
        .and_then(|t| serde_json::to_value(t).ok())
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let result = |r: CallToolResult| TaskPayload::Completed {
        result: match serde_json::to_value(r) {
            Ok(Value::Object(o)) => o,
            _ => Map::new(),
        },
    };
    let payload = match &task.status.state {
        TaskState::InputRequired => {
            let question = status_text(task);
            match ElicitationSchema::builder().required_string(ANSWER).build() {
                Ok(schema) => {
                    let params = ElicitRequestParams::FormElicitationParams {
                        meta: None,
                        message: question,
                        requested_schema: schema,
                    };
                    let request = InputRequest::Elicitation(ElicitRequest::new(params));
                    TaskPayload::InputRequired {
                        input_requests: [(ANSWER.to_owned(), request)].into_iter().collect(),
                    }
                }
                Err(_) => TaskPayload::Working,
            }
        }
        TaskState::Completed => result(content_of(task)),
        TaskState::Canceled => TaskPayload::Cancelled,
        TaskState::AuthRequired => result(CallToolResult::error(vec![ContentBlock::text(
            format!("the agent needs authentication: {}", status_text(task)),
        )])),
        TaskState::Failed | TaskState::Rejected => {
            result(CallToolResult::error(vec![ContentBlock::text(format!(
                "the A2A task ended {}: {}",
                task.status.state,
                status_text(task)
            ))]))
        }
        _ => TaskPayload::Working,
    };
    let mcp = rmcp::model::Task::new(task.id.to_string(), TaskStatus::Working, &stamp, &stamp)
        .with_status_message(status_text(task));
    DetailedTask::new(mcp, payload)
}
