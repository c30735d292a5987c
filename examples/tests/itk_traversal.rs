//! Run with: cargo test -p a2a-examples --test itk_traversal
//!
//! Traversal with another SDK: our ITK agent (`a2a_examples::itk`) and the ITK kit's Python
//! agent (`agents/python/v10`, on PyPI's a2a-sdk; `tests/acts/itk-python.sh` installs it under
//! `.scratch/itk`) call each other, both ways, over each binding both serve (JSON-RPC,
//! HTTP+JSON, gRPC), with each behaviour of the contract (send, streaming send, push
//! notification, resubscribe). Each chain goes first → second → first and must bring back the
//! answer of its last hop.

use a2a_client::Client;
use a2a_core::{SendMessageRequest, SendMessageResponse};
use a2a_examples::itk::instruction::{CallAgent, CallBehavior, Instruction};
use a2a_examples::itk::{self, Mode};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TRANSPORTS: [&str; 3] = ["JSONRPC", "HTTP+JSON", "GRPC"];
const CHAIN_TIMEOUT: Duration = Duration::from_secs(90);

/// The kit's Python agent, stopped on drop.
struct PythonAgent {
    child: tokio::process::Child,
    url: String,
}

impl Drop for PythonAgent {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

async fn start_python() -> PythonAgent {
    let setup = std::process::Command::new("bash")
        .arg(repo().join("tests/acts/itk-python.sh"))
        .output()
        .expect("bash runs");
    assert!(
        setup.status.success(),
        "the traversal test needs the ITK kit's Python agent, and tests/acts/itk-python.sh \
         could not prepare it:\n{}",
        String::from_utf8_lossy(&setup.stderr)
    );
    let dir = PathBuf::from(String::from_utf8_lossy(&setup.stdout).trim().to_owned());
    let python = repo().join(".scratch/itk/py/bin/python");
    let (http, grpc) = (free_port(), free_port());
    let child = tokio::process::Command::new(python)
        .arg("main.py")
        .args([
            "--httpPort",
            &http.to_string(),
            "--grpcPort",
            &grpc.to_string(),
        ])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the Python agent starts");
    let url = format!("http://127.0.0.1:{http}");
    let card = format!("{url}/.well-known/agent-card.json");
    let ready = async {
        loop {
            if reqwest::get(&card)
                .await
                .is_ok_and(|r| r.status().is_success())
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), ready)
        .await
        .expect("the Python agent serves its card within 60 s");
    PythonAgent { child, url }
}

async fn start_rust() -> String {
    let http = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let grpc = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", http.local_addr().unwrap());
    itk::serve(Mode::Normal, http, grpc, std::future::pending())
        .await
        .expect("our ITK agent starts");
    url
}

/// A webhook receiver: the bodies posted to `/notifications`.
async fn start_receiver() -> (String, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let store = seen.clone();
    let app = axum::Router::new().route(
        "/notifications",
        axum::routing::post(move |body: String| {
            let store = store.clone();
            async move {
                store.lock().unwrap().push(body);
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Behavior {
    Send,
    Stream,
    Push,
    Resubscribe,
}

/// first → second over `transport` with `behavior`, then second → first (a plain send) for the
/// answer `token`; a resubscribed second agent holds its task after answering.
fn chain(
    transport: &str,
    behavior: Behavior,
    first: &str,
    second: &str,
    receiver: &str,
    token: &str,
) -> Instruction {
    let back = Instruction::CallAgent(CallAgent {
        transport: transport.to_owned(),
        agent_card_uri: first.to_owned(),
        instruction: Instruction::ReturnResponse {
            response: token.to_owned(),
            hold_task: false,
        }
        .encode(),
        streaming: false,
        behavior: CallBehavior::SendMessage,
    });
    let nested = if behavior == Behavior::Resubscribe {
        Instruction::Steps(vec![
            back,
            Instruction::ReturnResponse {
                response: "held".to_owned(),
                hold_task: true,
            },
        ])
    } else {
        back
    };
    Instruction::CallAgent(CallAgent {
        transport: transport.to_owned(),
        agent_card_uri: second.to_owned(),
        instruction: nested.encode(),
        streaming: matches!(behavior, Behavior::Stream | Behavior::Resubscribe),
        behavior: match behavior {
            Behavior::Send | Behavior::Stream => CallBehavior::SendMessage,
            Behavior::Push => CallBehavior::PushNotification {
                url: receiver.to_owned(),
            },
            Behavior::Resubscribe => CallBehavior::Resubscribe,
        },
    })
}

/// Sends `instruction` to the agent at `url` and returns its answer's text.
async fn answer(url: &str, instruction: &Instruction) -> String {
    let client = Client::connect(url).await.expect("the first agent's card");
    let request = SendMessageRequest::new(instruction.to_message());
    match client
        .send_message(&request)
        .await
        .expect("the chain answers")
    {
        SendMessageResponse::Task(task) => {
            assert_eq!(
                task.status.state,
                a2a_core::TaskState::Completed,
                "{task:#?}"
            );
            task.status.message.map(|m| m.text()).unwrap_or_default()
        }
        SendMessageResponse::Message(m) => m.text(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn our_agent_and_the_python_sdks_call_each_other_over_every_binding_and_behavior() {
    let python = start_python().await;
    let rust = start_rust().await;
    let (receiver, notifications) = start_receiver().await;
    let mut failures = Vec::new();
    for transport in TRANSPORTS {
        for behavior in [
            Behavior::Send,
            Behavior::Stream,
            Behavior::Push,
            Behavior::Resubscribe,
        ] {
            for (first, second, name) in [
                (&rust, &python.url, "rust→python→rust"),
                (&python.url, &rust, "python→rust→python"),
            ] {
                let token = format!("{name} {transport} {behavior:?}");
                let instruction = chain(transport, behavior, first, second, &receiver, &token);
                let got = tokio::time::timeout(CHAIN_TIMEOUT, answer(first, &instruction)).await;
                match got {
                    Ok(text) if text.contains(&token) => {}
                    Ok(text) => failures.push(format!("{token}: answered {text:?}")),
                    Err(_) => failures.push(format!("{token}: no answer in {CHAIN_TIMEOUT:?}")),
                }
                if behavior == Behavior::Push {
                    let pushed = notifications
                        .lock()
                        .unwrap()
                        .iter()
                        .any(|n| n.contains(&token));
                    if !pushed {
                        failures.push(format!("{token}: the webhook got no event with the answer"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "chains that failed:\n{}",
        failures.join("\n")
    );
}
