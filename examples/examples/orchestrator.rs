//! Run with: cargo run -p a2a-examples --example orchestrator [AGENT_URL ...]
//!
//! An orchestrator: it starts three agents (or uses the URLs you give), discovers them by their
//! cards, picks an agent for each sub-task by skill, delegates the sub-tasks in parallel
//! (streaming where the agent can), answers an agent's question (INPUT_REQUIRED) in the same
//! task, and combines the results. It prints what happens as it goes.

use a2a_client::{CardResolver, Client, DelegateOptions, SkillQuery};
use a2a_core::{Message, SendMessageResponse, StreamResponse, Task};
use a2a_examples::agents::{TripBooker, Writer};
use a2a_server::demo::DemoAgent;
use std::time::Duration;

/// One piece of the overall job.
struct SubTask {
    label: &'static str,
    skill: &'static str,
    request: &'static str,
    /// The answer to give if the agent asks a question.
    answer: &'static str,
}

const PLAN: [SubTask; 3] = [
    SubTask {
        label: "booking",
        skill: "book-trip",
        request: "book a trip to Lisbon",
        answer: "2026-12-24",
    },
    SubTask {
        label: "guide",
        skill: "write",
        request: "Lisbon in winter",
        answer: "",
    },
    SubTask {
        label: "countdown",
        skill: "countdown",
        request: "countdown 3",
        answer: "",
    },
];

async fn run_subtask(
    resolver: &CardResolver,
    agents: &[String],
    sub: &SubTask,
) -> Result<Task, String> {
    let urls: Vec<&str> = agents.iter().map(String::as_str).collect();
    let (url, card) = resolver
        .find(&urls, &SkillQuery::new().skill(sub.skill))
        .await
        .map_err(|e| format!("no agent for {}: {e}", sub.skill))?;
    println!(
        "[{}] skill {:?} → {} at {url}",
        sub.label, sub.skill, card.name
    );
    let client = Client::builder()
        .build_from_card(card)
        .map_err(|e| e.to_string())?;
    let options = DelegateOptions::default().deadline(Duration::from_secs(60));
    let label = sub.label;
    let progress = move |e: &StreamResponse| match e {
        StreamResponse::StatusUpdate(s) => {
            let note = s
                .status
                .message
                .as_deref()
                .map(Message::text)
                .unwrap_or_default();
            println!("[{label}] {} {note}", s.status.state);
        }
        StreamResponse::ArtifactUpdate(a) => {
            println!("[{label}] artifact chunk: {:?}", a.artifact.text_content());
        }
        StreamResponse::Task(t) => println!("[{label}] task {} {}", t.id, t.status.state),
        StreamResponse::Message(m) => println!("[{label}] message: {}", m.text()),
    };
    let mut outcome = client
        .delegate_with(Message::user_text(sub.request), options.clone(), progress)
        .await
        .map_err(|e| e.to_string())?;
    loop {
        match outcome {
            SendMessageResponse::Message(m) => {
                return Err(format!("the agent only said: {}", m.text()));
            }
            SendMessageResponse::Task(task) if task.status.state.is_interrupted() => {
                let question = task
                    .status
                    .message
                    .as_deref()
                    .map(Message::text)
                    .unwrap_or_default();
                println!(
                    "[{label}] agent asks {question:?}; answering {:?}",
                    sub.answer
                );
                outcome = client
                    .reply(&task, Message::user_text(sub.answer), options.clone())
                    .await
                    .map_err(|e| e.to_string())?;
            }
            SendMessageResponse::Task(task) => return Ok(task),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut agents: Vec<String> = std::env::args().skip(1).collect();
    if agents.is_empty() {
        println!("starting three agents on free ports…");
        agents.push(a2a_examples::serve(TripBooker, TripBooker::card(), "127.0.0.1:0").await?);
        agents.push(a2a_examples::serve(Writer, Writer::card(), "127.0.0.1:0").await?);
        agents.push(a2a_examples::serve(DemoAgent, DemoAgent::card(), "127.0.0.1:0").await?);
    }
    let resolver = CardResolver::new(Default::default(), Default::default());
    for url in &agents {
        let card = resolver.resolve(url).await?;
        let skills: Vec<&str> = card.skills.iter().map(|s| s.id.as_str()).collect();
        println!("discovered {:?} at {url}: skills {skills:?}", card.name);
    }
    let results =
        futures::future::join_all(PLAN.iter().map(|sub| run_subtask(&resolver, &agents, sub)))
            .await;
    println!("\n=== combined result ===");
    let mut ok = true;
    for (sub, result) in PLAN.iter().zip(results) {
        match result {
            Ok(task) => {
                println!("{} ({}):", sub.label, task.status.state);
                for a in &task.artifacts {
                    println!("  {}", a.text_content().trim_end().replace('\n', "\n  "));
                }
            }
            Err(e) => {
                ok = false;
                println!("{}: FAILED: {e}", sub.label);
            }
        }
    }
    if ok {
        Ok(())
    } else {
        Err("some sub-tasks failed".into())
    }
}
