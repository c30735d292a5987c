//! Following an ITK instruction: answer, run steps, or call the next agent of a traversal with
//! this project's client (over the binding the instruction names, streaming or not, with a
//! webhook or a resubscription) and gather the texts it answers.

use super::instruction::{CallAgent, CallBehavior, FILE_NAME, Instruction, MEDIA_TYPE};
use a2a_client::{Binding, Client};
use a2a_core::{
    Error, ErrorKind, Message, Part, Role, SendMessageConfiguration, SendMessageRequest,
    SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig,
};
use futures::StreamExt as _;
use futures::future::BoxFuture;
use std::time::Duration;

/// What marks the answer of a held task, for a client that resubscribes to it.
pub(super) const FINISHED: &str = "task-finished";
/// How long one outbound call (a whole stream included) may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The texts answering `instruction`, in order.
pub(super) fn run(instruction: &Instruction) -> BoxFuture<'_, Result<Vec<String>, Error>> {
    Box::pin(async move {
        match instruction {
            Instruction::ReturnResponse { response, .. } => Ok(vec![response.clone()]),
            Instruction::Steps(steps) => {
                let mut all = Vec::new();
                for step in steps {
                    all.extend(run(step).await?);
                }
                Ok(all)
            }
            Instruction::CallAgent(call) => tokio::time::timeout(CALL_TIMEOUT, call_agent(call))
                .await
                .map_err(|_| {
                    failed(
                        call,
                        format!("no answer within {}s", CALL_TIMEOUT.as_secs()),
                    )
                })?,
        }
    })
}

fn failed(call: &CallAgent, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::Internal,
        format!(
            "the call to {} over {} failed: {why}",
            call.agent_card_uri, call.transport
        ),
    )
}

async fn call_agent(call: &CallAgent) -> Result<Vec<String>, Error> {
    let binding = match call.transport.to_ascii_uppercase().as_str() {
        "JSONRPC" => Binding::JsonRpc,
        "HTTP+JSON" | "HTTP_JSON" | "REST" => Binding::HttpJson,
        "GRPC" => Binding::Grpc,
        other => {
            return Err(Error::invalid_params(
                "call_agent.transport",
                format!("{other} is no A2A binding"),
            ));
        }
    };
    let client = Client::builder()
        .timeout(CALL_TIMEOUT)
        .prefer([binding])
        .connect(&call.agent_card_uri)
        .await
        .map_err(|e| failed(call, e))?;
    let message = Message::new(
        Role::User,
        [Part::raw(call.instruction.clone())
            .with_media_type(MEDIA_TYPE)
            .with_filename(FILE_NAME)],
    );
    let mut request = SendMessageRequest::new(message);
    if let CallBehavior::PushNotification { url } = &call.behavior {
        let base = if url.starts_with("http://") || url.starts_with("https://") {
            url.clone()
        } else {
            format!("http://{url}")
        };
        request.configuration = Some(SendMessageConfiguration {
            task_push_notification_config: Some(TaskPushNotificationConfig {
                url: format!("{base}/notifications"),
                token: Some("itk-token".to_owned()),
                ..Default::default()
            }),
            ..Default::default()
        });
    }
    exchange(&client, &request, call)
        .await
        .map_err(|e| failed(call, e))
}

/// The call itself, as `call` says: a send, a streaming send, or a resubscription.
async fn exchange(
    client: &Client,
    request: &SendMessageRequest,
    call: &CallAgent,
) -> Result<Vec<String>, a2a_client::Error> {
    if call.behavior == CallBehavior::Resubscribe {
        return resubscribe(client, request).await;
    }
    if call.streaming {
        let mut stream = client.send_streaming_message(request).await?;
        let mut texts = Vec::new();
        while let Some(event) = stream.next().await {
            texts.extend(texts_of_event(&event?));
        }
        return Ok(texts);
    }
    Ok(match client.send_message(request).await? {
        SendMessageResponse::Task(task) => status_texts(&task),
        SendMessageResponse::Message(m) => texts_of(&m),
    })
}

/// Sends streaming, hangs up after the first event, subscribes again and reads until the
/// held answer (marked [`FINISHED`]) arrives; a task that never says so is canceled.
async fn resubscribe(
    client: &Client,
    request: &SendMessageRequest,
) -> Result<Vec<String>, a2a_client::Error> {
    let mut first = client.send_streaming_message(request).await?;
    let task_id = match first.next().await {
        Some(Ok(StreamResponse::Task(t))) => t.id,
        Some(Ok(StreamResponse::StatusUpdate(u))) => u.task_id,
        Some(Ok(StreamResponse::ArtifactUpdate(u))) => u.task_id,
        Some(Ok(StreamResponse::Message(m))) => return Ok(texts_of(&m)),
        Some(Err(e)) => return Err(e),
        None => {
            return Err(a2a_client::Error::StreamEnded(
                "the stream ended before its first event".into(),
            ));
        }
    };
    drop(first);
    let mut again = client.subscribe(task_id.clone()).await?;
    let mut texts = Vec::new();
    while let Some(event) = again.next().await {
        let event = event?;
        let found: Vec<String> = match &event {
            // The held answer may already be in the task's history.
            StreamResponse::Task(task) => task
                .history
                .iter()
                .chain(task.status.message.as_deref())
                .filter(|m| m.role == Role::Agent)
                .flat_map(texts_of)
                .filter(|t| t.contains(FINISHED))
                .collect(),
            other => texts_of_event(other),
        };
        if let Some(done) = found.iter().find(|t| t.contains(FINISHED)) {
            texts.push(done.replace(FINISHED, ""));
            return Ok(texts);
        }
        texts.extend(found);
    }
    client.cancel_task(task_id).await?;
    Ok(texts)
}

fn texts_of(message: &Message) -> Vec<String> {
    message
        .parts
        .iter()
        .filter_map(Part::as_text)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

fn status_texts(task: &Task) -> Vec<String> {
    task.status
        .message
        .as_deref()
        .map(texts_of)
        .unwrap_or_default()
}

/// The texts of an event's message: a message, or a task's or status update's status message.
fn texts_of_event(event: &StreamResponse) -> Vec<String> {
    match event {
        StreamResponse::Message(m) => texts_of(m),
        StreamResponse::Task(t) => status_texts(t),
        StreamResponse::StatusUpdate(u) => u
            .status
            .message
            .as_deref()
            .map(texts_of)
            .unwrap_or_default(),
        StreamResponse::ArtifactUpdate(_) => Vec::new(),
    }
}
