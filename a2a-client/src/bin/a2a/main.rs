//! `a2a`: talk to any A2A agent from the command line.
//!
//! Exit codes: 0 done (task completed, or accepted with `--no-wait`); 1 the task failed, was
//! rejected or canceled; 2 bad usage; 3 the agent returned an A2A error; 4 the agent (or its
//! token endpoint) could not be reached or refused; 5 the task needs input or authentication;
//! 6 any other error. `a2a check`
//! exits 0 when every MUST holds and 1 otherwise; `a2a card --verify` 0 when a signature
//! verifies with a trusted key and 1 when none does. Once nothing reads its standard output
//! (`a2a stream URL "..." | head -3`) the command ends at once with 0; it ends with 74 when
//! its output cannot be written for another reason.

// The output macros come before the modules, which use them.

/// `print!` to standard output, ending the program quietly once nothing reads it any more
/// (`a2a stream URL "..." | head -3`), where `print!` would panic. Flushed at once: progress
/// lines are drawn without a newline.
macro_rules! out {
    ($($arg:tt)*) => {
        crate::emit(format_args!($($arg)*))
    };
}

/// [`out!`] with a newline, as `println!`.
macro_rules! outln {
    () => {
        crate::emit(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        crate::emit(format_args!("{}\n", format_args!($($arg)*)))
    };
}

fn emit(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("a2a: cannot write to standard output: {e}");
        std::process::exit(74); // EX_IOERR
    }
}

mod args;
mod card;
mod check;
mod serve;
mod tasks;
mod ui;

use a2a_client::Error;
use a2a_core::{ListTasksRequest, SendMessageRequest, TaskState};
use args::{Cli, Command};
use clap::Parser as _;
use std::io::Write as _;
use std::process::ExitCode;
use tasks::{build_message, connect, follow, wait_for_change};
use ui::Ui;

/// How the process ends.
enum Outcome {
    Done,
    TaskUnsuccessful,
    NeedsInput,
}

fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    eprintln!("a2a: {message}");
    ExitCode::from(code)
}

fn exit_for(error: &Error) -> u8 {
    match error {
        Error::Remote { .. } | Error::Http { .. } => 3,
        Error::Transport(_)
        | Error::Grpc { .. }
        | Error::Timeout(_)
        | Error::StreamEnded(_)
        | Error::TooLarge { .. } => 4,
        Error::Config(_) => 2,
        Error::Untrusted { .. } => 1,
        Error::Token(_) => 4,
        _ => 6,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let ui = Ui::new(cli.global.json);
    match run(cli, &ui).await {
        Ok(Outcome::Done) => ExitCode::SUCCESS,
        Ok(Outcome::TaskUnsuccessful) => ExitCode::from(1),
        Ok(Outcome::NeedsInput) => ExitCode::from(5),
        Err(e) => fail(exit_for(&e), &e),
    }
}

async fn run(cli: Cli, ui: &Ui) -> Result<Outcome, Error> {
    let g = &cli.global;
    match cli.command {
        Command::Check(args) => check::check(args, g, ui).await,
        Command::Mcp(args) => serve::mcp(args, g).await,
        Command::Inspect(args) => serve::inspect(args, g).await,
        Command::Card(args) => card::card(args, g, ui).await,
        Command::Send(args) => {
            let client = connect(&args.url, g).await?;
            let request = SendMessageRequest::new(build_message(&args)?)
                .with_return_immediately(args.no_wait);
            if args.no_wait || ui.json {
                let response = client.send_message(&request).await?;
                return Ok(ui.response(&response));
            }
            // For people: follow the task live (streaming or polling) with a status line.
            let options = a2a_client::DelegateOptions::default();
            let mut seen = Vec::new();
            let response = client
                .delegate_with(request.message, options, |e| {
                    if ui.tty {
                        ui.progress(e, &mut seen);
                    }
                })
                .await?;
            ui.clear_line();
            Ok(ui.response(&response))
        }
        Command::Stream(args) => {
            let client = connect(&args.url, g).await?;
            let request = SendMessageRequest::new(build_message(&args)?);
            let stream = client.send_streaming_message(&request).await?;
            follow(ui, stream).await
        }
        Command::Get {
            url,
            task_id,
            history,
            wait,
            after,
        } => {
            let client = connect(&url, g).await?;
            let mut req = a2a_core::GetTaskRequest::new(task_id);
            req.history_length = history;
            let mut task = client.call(&req).await?;
            if wait {
                task = wait_for_change(&client, req, task, after).await?;
            }
            Ok(ui.task(&task))
        }
        Command::List {
            url,
            context,
            status,
            page_size,
            page_token,
            artifacts,
        } => {
            let client = connect(&url, g).await?;
            let status = status.map(|s| {
                let v1 = TaskState::from_wire(&s);
                if v1.is_known() {
                    v1
                } else {
                    a2a_core::v03::decode_state(&s)
                }
            });
            let req = ListTasksRequest {
                context_id: context.map(Into::into),
                status,
                page_size,
                page_token,
                include_artifacts: artifacts.then_some(true),
                ..Default::default()
            };
            let page = client.list_tasks(&req).await?;
            ui.list(&page);
            Ok(Outcome::Done)
        }
        Command::Cancel { url, task_id } => {
            let client = connect(&url, g).await?;
            let task = client.cancel_task(task_id).await?;
            ui.task(&task);
            Ok(Outcome::Done)
        }
        Command::Subscribe { url, task_id } => {
            let client = connect(&url, g).await?;
            let stream = client.subscribe(task_id).await?;
            follow(ui, stream).await
        }
    }
}
