//! `send`, `stream`, `get`, `list`, `cancel`, `subscribe`: the client of the agent, the message
//! sent, a stream followed, a task waited for.

use crate::Outcome;
use crate::args::{BindingArg, Global, SendArgs};
use crate::ui::Ui;
use a2a_client::{Binding, Client, Error};
use a2a_core::{Message, Part, StreamResponse, TaskState};
use futures::StreamExt as _;
use std::time::Duration;

pub(crate) async fn connect(url: &str, g: &Global) -> Result<Client, Error> {
    let mut builder = g.builder();
    let preferred = match g.binding {
        None | Some(BindingArg::All) => None,
        Some(BindingArg::Jsonrpc) => Some(Binding::JsonRpc),
        Some(BindingArg::Rest) => Some(Binding::HttpJson),
        Some(BindingArg::Grpc) => Some(Binding::Grpc),
    };
    if let Some(b) = preferred {
        builder = builder.prefer([b]);
    }
    let credentials = g.credentials()?;
    let card = g.card_resolver(&builder)?.resolve(url).await?;
    credentials
        .apply(builder, Some(&card))?
        .build_from_card(card)
}

fn media_type(path: &std::path::Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("txt") => "text/plain",
        Some("md") => "text/markdown",
        Some("json") => "application/json",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("csv") => "text/csv",
        Some("html") => "text/html",
        _ => "application/octet-stream",
    }
}

pub(crate) fn build_message(args: &SendArgs) -> Result<Message, Error> {
    let mut parts = Vec::new();
    if let Some(t) = &args.text {
        parts.push(Part::text(t));
    }
    for path in &args.file {
        let bytes = std::fs::read(path)
            .map_err(|e| Error::Config(format!("cannot read {}: {e}", path.display())))?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
        parts.push(
            Part::raw(bytes)
                .with_filename(name)
                .with_media_type(media_type(path)),
        );
    }
    for d in &args.data {
        let v: serde_json::Value = serde_json::from_str(d)
            .map_err(|e| Error::Config(format!("--data is not JSON: {e}")))?;
        parts.push(Part::data(v).with_media_type("application/json"));
    }
    if parts.is_empty() {
        return Err(Error::Config(
            "nothing to send: give TEXT, --file or --data".into(),
        ));
    }
    let mut m = Message::new(a2a_core::Role::User, parts);
    m.task_id = args.task.clone().map(Into::into);
    m.context_id = args.context.clone().map(Into::into);
    Ok(m)
}

pub(crate) async fn follow(ui: &Ui, mut stream: a2a_client::EventStream) -> Result<Outcome, Error> {
    let mut last: Option<TaskState> = None;
    let mut seen = Vec::new();
    while let Some(event) = stream.next().await {
        let event = event?;
        if ui.json {
            outln!("{}", serde_json::to_string(&event).unwrap_or_default());
        } else {
            ui.progress(&event, &mut seen);
        }
        if let Some(s) = event.state() {
            last = Some(s.clone());
        }
        if let StreamResponse::Message(m) = &event
            && m.task_id.is_none()
        {
            return Ok(Outcome::Done);
        }
    }
    ui.clear_line();
    Ok(match last {
        Some(TaskState::Completed) => Outcome::Done,
        Some(s) if s.is_interrupted() => Outcome::NeedsInput,
        Some(s) if s.is_terminal() => Outcome::TaskUnsuccessful,
        _ => Outcome::Done,
    })
}

/// `a2a get --wait`: the task once it changes: to an agent that speaks 1.1, long polls until
/// its generation is past `after` (default: `first`'s), each held by the agent and asked again
/// when the agent's wait (or this client's timeout) runs out; to a 1.0 agent, a read every half
/// second until the task differs from `first`. An ended task is returned at once.
pub(crate) async fn wait_for_change(
    client: &Client,
    mut req: a2a_core::GetTaskRequest,
    first: a2a_core::Task,
    after: Option<i64>,
) -> Result<a2a_core::Task, Error> {
    if !client.speaks_generations() {
        loop {
            if first.status.state.is_terminal() {
                return Ok(first);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            let next = client.call(&req).await?;
            if next != first {
                return Ok(next);
            }
        }
    }
    let after = after.unwrap_or(first.generation);
    req.current_generation = Some(after);
    let mut task = first;
    while task.generation <= after && !task.status.state.is_terminal() {
        task = match client.call(&req).await {
            Ok(task) => task,
            Err(Error::Timeout(_)) => task,
            Err(e) => return Err(e),
        };
    }
    Ok(task)
}
