//! Output for people (colors and a live status line on a terminal) or for scripts (`--json`).

use crate::Outcome;
use a2a_core::{AgentCard, Message, SendMessageResponse, StreamResponse, Task, TaskState};
use std::io::IsTerminal as _;

/// Output for people (colors and a live status line on a terminal) or for scripts (`--json`).
pub(crate) struct Ui {
    pub(crate) json: bool,
    pub(crate) tty: bool,
}

impl Ui {
    pub(crate) fn new(json: bool) -> Self {
        Self {
            json,
            tty: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    pub(crate) fn paint(&self, code: &str, text: &str) -> String {
        if self.tty {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub(crate) fn state(&self, s: &TaskState) -> String {
        let name = a2a_core::v03::encode_state(s);
        let code = match s {
            TaskState::Completed => "32",
            TaskState::Failed | TaskState::Rejected | TaskState::Canceled => "31",
            TaskState::InputRequired | TaskState::AuthRequired => "33",
            _ => "36",
        };
        self.paint(code, name)
    }

    pub(crate) fn clear_line(&self) {
        if self.tty && !self.json {
            out!("\r\x1b[2K");
        }
    }

    pub(crate) fn status_line(&self, text: &str) {
        if self.tty {
            out!("\r\x1b[2K{text}");
        } else {
            outln!("{text}");
        }
    }

    /// One event for people: status on the status line, artifact text as it arrives.
    pub(crate) fn progress(&self, event: &StreamResponse, printed: &mut Vec<String>) {
        match event {
            StreamResponse::Task(t) => {
                self.status_line(&format!("task {} {}", t.id, self.state(&t.status.state)));
                for a in &t.artifacts {
                    if !printed.contains(&a.artifact_id.to_string()) {
                        printed.push(a.artifact_id.to_string());
                        self.clear_line();
                        outln!("{}", a.text_content().trim_end());
                    }
                }
            }
            StreamResponse::StatusUpdate(s) => {
                let note = s
                    .status
                    .message
                    .as_deref()
                    .map(Message::text)
                    .unwrap_or_default();
                self.status_line(&format!(
                    "task {} {} {note}",
                    s.task_id,
                    self.state(&s.status.state)
                ));
            }
            StreamResponse::ArtifactUpdate(a) => {
                self.clear_line();
                let text = a.artifact.text_content();
                out!("{text}");
                if (a.last_chunk || !a.append) && !text.ends_with('\n') {
                    outln!();
                }
            }
            StreamResponse::Message(m) => {
                self.clear_line();
                outln!("{}", m.text());
            }
        }
    }

    pub(crate) fn response(&self, response: &SendMessageResponse) -> Outcome {
        match response {
            SendMessageResponse::Task(t) => self.task(t),
            SendMessageResponse::Message(m) => {
                if self.json {
                    outln!("{}", serde_json::to_string(response).unwrap_or_default());
                } else {
                    outln!("{}", m.text());
                }
                Outcome::Done
            }
        }
    }

    pub(crate) fn task(&self, t: &Task) -> Outcome {
        if self.json {
            outln!("{}", serde_json::to_string(t).unwrap_or_default());
        } else {
            outln!(
                "task {}  context {}  {}",
                t.id,
                t.context_id,
                self.state(&t.status.state)
            );
            if let Some(m) = &t.status.message {
                let text = m.text();
                if t.status.state.is_interrupted() {
                    outln!("{} {text}", self.paint("33", "agent asks:"));
                    outln!("answer with: a2a send URL \"...\" --task {}", t.id);
                } else if !text.is_empty() {
                    outln!("{text}");
                }
            }
            for a in &t.artifacts {
                let name = a.name.as_deref().unwrap_or(a.artifact_id.as_str());
                outln!(
                    "{} {}",
                    self.paint("1", &format!("[{name}]")),
                    a.text_content()
                );
            }
        }
        match &t.status.state {
            TaskState::Completed | TaskState::Submitted | TaskState::Working => Outcome::Done,
            s if s.is_interrupted() => Outcome::NeedsInput,
            _ => Outcome::TaskUnsuccessful,
        }
    }

    pub(crate) fn card(&self, card: &AgentCard) {
        if self.json {
            outln!("{}", serde_json::to_string(card).unwrap_or_default());
            return;
        }
        outln!("{} {}", self.paint("1", &card.name), card.version);
        outln!("{}", card.description);
        for i in &card.supported_interfaces {
            outln!("  {} {} {}", i.protocol_binding, i.protocol_version, i.url);
        }
        let c = &card.capabilities;
        outln!(
            "  streaming: {}  push: {}  extended card: {}",
            c.streaming(),
            c.push_notifications(),
            c.extended_agent_card()
        );
        for s in &card.skills {
            outln!(
                "  skill {}: {} [{}]",
                self.paint("1", &s.id),
                s.description,
                s.tags.join(", ")
            );
        }
    }

    pub(crate) fn list(&self, page: &a2a_core::ListTasksResponse) {
        if self.json {
            outln!("{}", serde_json::to_string(page).unwrap_or_default());
            return;
        }
        for t in &page.tasks {
            let when = t
                .status
                .timestamp
                .map(|t| t.to_string())
                .unwrap_or_default();
            outln!(
                "{}  {}  {}  {}",
                t.id,
                self.state(&t.status.state),
                when,
                t.context_id
            );
        }
        outln!("{} of {} tasks", page.tasks.len(), page.total_size);
        if !page.next_page_token.is_empty() {
            outln!("next page: --page-token {}", page.next_page_token);
        }
    }
}
