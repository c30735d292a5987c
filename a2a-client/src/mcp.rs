//! Any A2A agent as an MCP server (what `a2a mcp URL` runs), on rmcp, the official Rust MCP
//! SDK.
//!
//! [`Bridge`] offers one tool per skill of the agent's card (and a generic `send_message`).
//! A tool call sends an A2A message and follows the task (streaming, or polling when the agent
//! cannot stream), mapping A2A onto MCP:
//!
//! | A2A | MCP |
//! |---|---|
//! | status updates | progress notifications, in order, with the status text (when the call carries a progress token) |
//! | artifacts | the tool result's content: text as text, files as embedded resources (bytes) or resource links (URLs), data as structured content |
//! | INPUT_REQUIRED | an elicitation of the host's user (a form with one `answer` field): an `elicitation/create` request on protocol versions before 2026-07-28, an `input_required` result (MRTR) on later ones; the answer continues the same task, declining or cancelling cancels it; a host that cannot elicit gets the question, with the task's id to answer through `send_message` |
//! | AUTH_REQUIRED | a tool error saying what the agent needs |
//! | CANCELED, FAILED, REJECTED | a tool error with the agent's status text |
//! | MCP cancellation (`notifications/cancelled`) | CancelTask |
//! | the A2A task, for a host that declares MCP tasks (SEP-2663, `io.modelcontextprotocol/tasks`) | the MCP task, with the same id: `tasks/get` reads the A2A task (its question as an input request, its artifacts as the result), `tasks/update` answers it, `tasks/cancel` cancels it; the A2A server keeps it, so a host that reconnects finds it again |
//!
//! The A2A side is a [`Client`]: a dropped stream is resumed (`SubscribeToTask` with
//! `Last-Event-ID`), calls are retried with backoff. Nothing but protocol messages is written
//! to stdout; logs go to stderr.

use crate::{Client, DelegateOptions, Error};
use a2a_core::{
    AgentCard, AgentSkill, Artifact, Message, Part, PartContent, Role, SendMessageResponse,
    StreamResponse, Task, TaskState,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, DetailedTask, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, GetTaskParams, GetTaskResult, Implementation,
    InputRequest, InputRequiredResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ResourceContents, ServerCapabilities, ServerConfig, TaskPayload,
    TaskStatus, Tool, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The generic tool, beside one per skill.
pub const SEND_MESSAGE_TOOL: &str = "send_message";

/// An A2A agent as an MCP server: clone it per MCP session.
#[derive(Clone, Debug)]
pub struct Bridge {
    client: Client,
    card: Arc<AgentCard>,
    /// (tool name, skill) for each skill tool.
    tools: Arc<Vec<(String, Option<AgentSkill>)>>,
    deadline: Duration,
}

/// An MCP tool name (`[A-Za-z0-9_-]{1,64}`) for a skill id.
fn tool_name(id: &str) -> String {
    let mut name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        name.push_str("skill");
    }
    name
}

impl Bridge {
    /// The bridge to the agent `client` talks to, described by `card`.
    pub fn new(client: Client, card: AgentCard) -> Self {
        let mut tools: Vec<(String, Option<AgentSkill>)> = Vec::new();
        for skill in &card.skills {
            let mut name = tool_name(&skill.id);
            while name == SEND_MESSAGE_TOOL || tools.iter().any(|(n, _)| *n == name) {
                name.push('_');
            }
            tools.push((name, Some(skill.clone())));
        }
        tools.push((SEND_MESSAGE_TOOL.to_owned(), None));
        Self {
            client,
            card: Arc::new(card),
            tools: Arc::new(tools),
            deadline: Duration::from_secs(3600),
        }
    }

    /// How long one tool call may follow its task (default an hour).
    #[must_use]
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The tools: one per skill, then `send_message`.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools
            .iter()
            .map(|(name, skill)| match skill {
                Some(skill) => {
                    let mut description = format!("{}: {}", skill.name, skill.description);
                    if !skill.examples.is_empty() {
                        description.push_str(&format!(" Examples: {}.", skill.examples.join("; ")));
                    }
                    Tool::new(name.clone(), description, schema(skill_modes(skill, &self.card), false))
                }
                None => Tool::new(
                    name.clone(),
                    format!(
                        "Send a message to the A2A agent {:?} ({}); with taskId, answer a question it asked in that task.",
                        self.card.name, self.card.description
                    ),
                    schema(self.card.default_input_modes.clone(), true),
                ),
            })
            .collect()
    }
}

fn skill_modes(skill: &AgentSkill, card: &AgentCard) -> Vec<String> {
    if skill.input_modes.is_empty() {
        card.default_input_modes.clone()
    } else {
        skill.input_modes.clone()
    }
}

/// The input schema of a tool: `text`, and `data` and `files` when the input modes accept
/// them; `contextId` and `taskId` on the generic tool.
fn schema(modes: Vec<String>, generic: bool) -> Map<String, Value> {
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
fn message_of(
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
fn status_text(task: &Task) -> String {
    task.status
        .message
        .as_ref()
        .map(|m| m.text())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| task.status.state.to_string())
}

/// What one event says, for a progress notification.
fn progress_text(event: &StreamResponse) -> Option<String> {
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
fn content_of(task: &Task) -> CallToolResult {
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

fn parts_into(artifact: &Artifact, content: &mut Vec<ContentBlock>, structured: &mut Vec<Value>) {
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

fn tool_error(text: impl Into<String>) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(text.into())]).into()
}

impl Bridge {
    /// One tool call: send, follow, ask the user when the agent asks, until the task ends.
    async fn run(
        &self,
        mut message: Message,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let token = context.meta.get_progress_token();
        let progress = Arc::new(Mutex::new(0u32));
        let task_id: Arc<Mutex<Option<String>>> = Arc::default();
        loop {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
            let seen = task_id.clone();
            let options = DelegateOptions::default().deadline(self.deadline);
            let follow = self
                .client
                .delegate_with(message.clone(), options, move |event| {
                    if let StreamResponse::Task(t) = event {
                        *seen.lock().expect("task id lock") = Some(t.id.to_string());
                    }
                    if let Some(text) = progress_text(event) {
                        let _ = tx.send(text);
                    }
                });
            let peer = context.peer.clone();
            let count = progress.clone();
            let token = token.clone();
            let notify = async move {
                while let Some(text) = rx.recv().await {
                    let Some(token) = token.clone() else { continue };
                    let n = {
                        let mut c = count.lock().expect("progress lock");
                        *c += 1;
                        *c
                    };
                    let param =
                        ProgressNotificationParam::new(token, f64::from(n)).with_message(text);
                    if peer.notify_progress(param).await.is_err() {
                        break;
                    }
                }
            };
            let outcome = tokio::select! {
                (outcome, ()) = async { tokio::join!(follow, notify) } => outcome,
                () = context.ct.cancelled() => {
                    let id = task_id.lock().expect("task id lock").clone();
                    if let Some(id) = id {
                        let _ = self.client.cancel_task(id).await;
                    }
                    return Ok(tool_error("canceled: the A2A task was canceled"));
                }
            };
            let task = match outcome {
                Ok(SendMessageResponse::Message(reply)) => {
                    return Ok(
                        CallToolResult::success(vec![ContentBlock::text(reply.text())]).into(),
                    );
                }
                Ok(SendMessageResponse::Task(task)) => task,
                Err(e) => return Ok(tool_error(describe(&e))),
            };
            match task.status.state {
                TaskState::Completed => return Ok(content_of(&task).into()),
                TaskState::InputRequired => {
                    let question = status_text(&task);
                    match self.ask(&question, context).await {
                        Asked::Answer(answer) => {
                            let mut reply = Message::user_text(answer);
                            reply.task_id = Some(task.id.clone());
                            reply.context_id = Some(task.context_id.clone());
                            message = reply;
                        }
                        Asked::Refused => {
                            let _ = self.client.cancel_task(task.id.clone()).await;
                            return Ok(tool_error(format!(
                                "the agent asked {question:?}; the user declined, and the A2A task {} was canceled",
                                task.id
                            )));
                        }
                        Asked::Later(request) => {
                            // MRTR: the host asks its user and calls again with the answer and
                            // this state, which names the task to continue.
                            let state = json!({"taskId": task.id, "contextId": task.context_id});
                            let inputs = [(ANSWER.to_owned(), InputRequest::Elicitation(request))];
                            return Ok(InputRequiredResult::new(
                                Some(inputs.into_iter().collect()),
                                Some(state.to_string()),
                            )
                            .into());
                        }
                        Asked::CannotAsk => {
                            return Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                                "The agent asks: {question}\nAnswer with the `{SEND_MESSAGE_TOOL}` tool, with taskId {:?} and contextId {:?}.",
                                task.id.to_string(),
                                task.context_id.to_string()
                            ))])
                            .into());
                        }
                    }
                }
                TaskState::AuthRequired => {
                    return Ok(tool_error(format!(
                        "the agent needs authentication: {} (task {})",
                        status_text(&task),
                        task.id
                    )));
                }
                ref state => {
                    return Ok(tool_error(format!(
                        "the A2A task {} ended {state}: {}",
                        task.id,
                        status_text(&task)
                    )));
                }
            }
        }
    }

    /// Asks the host's user: an elicitation request now (protocol versions before
    /// 2026-07-28), or one for the host to make and answer in its next call (MRTR).
    async fn ask(&self, question: &str, context: &RequestContext<RoleServer>) -> Asked {
        // The request's own capabilities (stateless protocol versions), else the handshake's.
        if context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_none())
        {
            return Asked::CannotAsk;
        }
        let Ok(schema) = ElicitationSchema::builder().required_string(ANSWER).build() else {
            return Asked::CannotAsk;
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question.to_owned(),
            requested_schema: schema,
        };
        match context.peer.create_elicitation(params.clone()).await {
            Ok(result) => answer_of(&result),
            Err(e) => {
                // Later protocol versions have no server-to-client requests.
                tracing::debug!(error = %e, "elicitation/create refused; asking through MRTR");
                Asked::Later(ElicitRequest::new(params))
            }
        }
    }
}

/// The one field the bridge's elicitation form has.
const ANSWER: &str = "answer";

enum Asked {
    Answer(String),
    Refused,
    CannotAsk,
    Later(ElicitRequest),
}

fn answer_of(result: &ElicitResult) -> Asked {
    if result.action != ElicitationAction::Accept {
        return Asked::Refused;
    }
    match result
        .content
        .as_ref()
        .and_then(|c| c.get(ANSWER))
        .and_then(Value::as_str)
    {
        Some(answer) => Asked::Answer(answer.to_owned()),
        None => Asked::Refused,
    }
}

impl Bridge {
    /// A call again after an `input_required` result: the user's answer continues the task
    /// its state names (declining cancels it).
    async fn resume(
        &self,
        state: &str,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let state: Value = serde_json::from_str(state)
            .map_err(|_| McpError::invalid_params("requestState was changed", None))?;
        let (Some(task), Some(ctx)) = (state["taskId"].as_str(), state["contextId"].as_str())
        else {
            return Err(McpError::invalid_params("requestState was changed", None));
        };
        let result = request
            .input_responses
            .as_ref()
            .and_then(|r| r.get(ANSWER))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
            .ok_or_else(|| McpError::invalid_params("inputResponses lacks the answer", None))?;
        match answer_of(&result) {
            Asked::Answer(answer) => {
                let mut reply = Message::user_text(answer);
                reply.task_id = Some(task.into());
                reply.context_id = Some(ctx.into());
                self.run(reply, context).await
            }
            _ => {
                let _ = self.client.cancel_task(task.to_owned()).await;
                Ok(tool_error(format!(
                    "the user declined; the A2A task {task} was canceled"
                )))
            }
        }
    }
}

/// An A2A failure, for a tool error.
fn describe(e: &Error) -> String {
    match e {
        Error::Transport(_) | Error::Grpc { .. } | Error::Timeout(_) | Error::StreamEnded(_) => {
            format!("the A2A agent could not be reached: {e}")
        }
        Error::TooLarge { .. } => format!("the A2A agent's answer was refused: {e}"),
        _ => format!("the A2A agent answered with an error: {e}"),
    }
}

impl ServerHandler for Bridge {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tasks()
            .build();
        let mut info = ServerConfig::new(capabilities);
        info.server_info = Implementation::new(
            format!("a2a-mcp: {}", self.card.name),
            env!("CARGO_PKG_VERSION"),
        );
        info.instructions = Some(format!(
            "Tools of the A2A agent {:?}: {}",
            self.card.name, self.card.description
        ));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let tools = self.tools();
        let Some(tool) = tools.iter().find(|t| t.name == request.name) else {
            return Err(McpError::invalid_params(
                format!("unknown tool {:?}", request.name),
                None,
            ));
        };
        if let Some(state) = &request.request_state {
            return self.resume(state, &request, &context).await;
        }
        let arguments = request.arguments.clone().unwrap_or_default();
        let message = message_of(&arguments, &tool.input_schema)
            .map_err(|e| McpError::invalid_params(format!("{}: {e}", request.name), None))?;
        if context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks())
        {
            return self.start_task(message).await;
        }
        self.run(message, &context).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let task = self
            .client
            .get_task(request.task_id.clone())
            .await
            .map_err(|e| task_error(&request.task_id, &e))?;
        Ok(GetTaskResult::new(detailed(&task)))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let answer = request
            .input_responses
            .get(ANSWER)
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
            .ok_or_else(|| McpError::invalid_params("inputResponses lacks the answer", None))?;
        let task = self
            .client
            .get_task(request.task_id.clone())
            .await
            .map_err(|e| task_error(&request.task_id, &e))?;
        match answer_of(&answer) {
            Asked::Answer(text) => {
                let mut reply = Message::user_text(text);
                reply.task_id = Some(task.id.clone());
                reply.context_id = Some(task.context_id.clone());
                let request =
                    a2a_core::SendMessageRequest::new(reply).with_return_immediately(true);
                self.client
                    .send_message(&request)
                    .await
                    .map_err(|e| task_error(&request_id(&task), &e))?;
            }
            _ => {
                let _ = self.client.cancel_task(task.id.clone()).await;
            }
        }
        Ok(())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        match self.client.cancel_task(request.task_id.clone()).await {
            Ok(_) => Ok(()),
            // Already finished: cancellation is cooperative, and there is nothing to stop.
            Err(e) if e.kind() == Some(a2a_core::ErrorKind::TaskNotCancelable) => Ok(()),
            Err(e) => Err(task_error(&request.task_id, &e)),
        }
    }
}

fn request_id(task: &Task) -> String {
    task.id.to_string()
}

/// An A2A error about a task, as an MCP error.
fn task_error(id: &str, e: &Error) -> McpError {
    if e.kind() == Some(a2a_core::ErrorKind::TaskNotFound) {
        return McpError::invalid_params(format!("no task {id:?}"), None);
    }
    McpError::internal_error(describe(e), None)
}

impl Bridge {
    /// A tool call as an MCP task: the message sent without waiting, the A2A task's id as the
    /// MCP task's.
    async fn start_task(&self, message: Message) -> Result<CallToolResponse, McpError> {
        let request = a2a_core::SendMessageRequest::new(message).with_return_immediately(true);
        match self.client.send_message(&request).await {
            Ok(SendMessageResponse::Task(task)) => Ok(CallToolResponse::Task(
                CreateTaskResult::new(detailed(&task).task),
            )),
            Ok(SendMessageResponse::Message(reply)) => {
                Ok(CallToolResult::success(vec![ContentBlock::text(reply.text())]).into())
            }
            Err(e) => Ok(tool_error(describe(&e))),
        }
    }
}

/// The MCP task an A2A task is: its status, and what goes with it (the question, the result).
fn detailed(task: &Task) -> DetailedTask {
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

/// Serves `bridge` over MCP stdio (one session) until the host closes it.
pub async fn serve_stdio(bridge: Bridge) -> std::io::Result<()> {
    use rmcp::ServiceExt as _;
    let running = bridge
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// An MCP server for an agent that could not be reached or read: it answers `initialize` with
/// an error saying why, so that the host shows that rather than a server that exited.
#[derive(Clone, Debug)]
struct Refusal(String);

impl ServerHandler for Refusal {
    async fn initialize(
        &self,
        _request: rmcp::model::InitializeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, McpError> {
        Err(McpError::internal_error(self.0.clone(), None))
    }
}

/// Answers one MCP stdio session's `initialize` with `error` (why the bridge cannot serve:
/// the agent's card could not be had), then returns.
pub async fn refuse_stdio(error: &Error) {
    use rmcp::ServiceExt as _;
    let refusal = Refusal(format!("the A2A agent's card could not be read: {error}"));
    // The handshake fails by design: its error is the answer.
    if let Ok(running) = refusal.serve(rmcp::transport::stdio()).await {
        let _ = running.cancel().await;
    }
}

/// The path the streamable HTTP endpoint is served at.
pub const HTTP_PATH: &str = "/mcp";

/// `bridge` as an MCP streamable HTTP endpoint at [`HTTP_PATH`] (sessions for protocol
/// versions that have them, events replayed after `Last-Event-ID` when a client reconnects),
/// for `axum::serve`. `allowed_hosts`: the `Host` values accepted (DNS-rebinding protection;
/// loopback by default).
pub fn http_router(bridge: Bridge, allowed_hosts: Vec<String>) -> axum::Router {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let mut config = StreamableHttpServerConfig::default();
    if !allowed_hosts.is_empty() {
        config.allowed_hosts = allowed_hosts;
    }
    let service = StreamableHttpService::new(
        move || Ok(bridge.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    axum::Router::new().nest_service(HTTP_PATH, service)
}
