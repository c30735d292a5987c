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
    AgentCard, AgentSkill, Message, SendMessageResponse, StreamResponse, Task, TaskState,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, GetTaskParams, GetTaskResult, Implementation, InputRequest,
    InputRequiredResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod convert;
mod serve;

use convert::{
    content_of, detailed, message_of, progress_text, schema, skill_modes, status_text, tool_error,
};
pub use serve::{HTTP_PATH, http_router, refuse_stdio, serve_stdio};

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
