//! Run with: `cargo run --release -p a2a-bench --bin poll-delegation -- --tasks 100 --countdown 5`
//!
//! Delegation by polling (A2A issue 44): `--tasks` concurrent `countdown N` tasks of the demo
//! agent on one in-process server, each followed by `Client::delegate` with polling forced, once
//! by a 1.0 client (interval polling, 250 ms doubling to 5 s, the delegate defaults) and once by a
//! 1.1 client (long-poll `GetTask` with `currentGeneration`). For each mode it prints the
//! `GetTask` requests sent and how long after each task completed (its COMPLETED status
//! timestamp, in milliseconds) the client had it. Needs a quiet CPU: the figures go in
//! bench/README.md.

use a2a_client::transport::CallOptions;
use a2a_client::{Client, DelegateOptions, Error, Interceptor};
use a2a_core::{Message, Method, SendMessageResponse, Timestamp};
use a2a_server::Server;
use a2a_server::demo::DemoAgent;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Counts the `GetTask` calls a client makes.
#[derive(Debug, Default)]
struct CountGets(Arc<AtomicU64>);

impl Interceptor for CountGets {
    fn intercept(&self, method: Method, _options: &mut CallOptions) -> Result<(), Error> {
        if method == Method::GetTask {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

fn arg(name: &str, default: u32) -> u32 {
    let args: Vec<String> = std::env::args().collect();
    (args.iter().position(|a| a == name))
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a number"))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (tasks, countdown) = (arg("--tasks", 100), arg("--countdown", 5));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let server = Server::builder(DemoAgent)
        .agent_card(DemoAgent::card())
        .public_url(&url)
        .build()?;
    let stop = server.shutdown_token();
    let serving = tokio::spawn(server.serve(listener));
    println!("{tasks} concurrent `countdown {countdown}` tasks, delegated by polling");
    println!("mode        GetTask  noticed after completion (ms): p50  p99  max   wall");
    for long_poll in [false, true] {
        let gets = Arc::new(AtomicU64::new(0));
        let builder = Client::builder().interceptor(CountGets(gets.clone()));
        let client = if long_poll {
            builder.connect(&url).await?
        } else {
            builder.build_jsonrpc(&url)?
        };
        assert_eq!(client.speaks_generations(), long_poll);
        let started = Instant::now();
        let runs = (0..tasks).map(|_| {
            let client = client.clone();
            tokio::spawn(async move {
                let options = DelegateOptions::default().force_polling(true);
                let text = format!("countdown {countdown}");
                let outcome = client.delegate(Message::user_text(text), options).await?;
                let noticed = Timestamp::now().unix_millis();
                let SendMessageResponse::Task(task) = outcome else {
                    return Err(Error::StreamEnded("a message instead of a task".into()));
                };
                let done = task
                    .status
                    .timestamp
                    .map_or(noticed, Timestamp::unix_millis);
                Ok::<i64, Error>(noticed - done)
            })
        });
        let mut lags = Vec::new();
        for run in futures::future::join_all(runs).await {
            lags.push(run??);
        }
        lags.sort_unstable();
        let at = |q: f64| lags[((lags.len() - 1) as f64 * q) as usize];
        println!(
            "{:<10} {:>8}  {:>34} {:>4} {:>4} {:>6.1}s",
            if long_poll { "long-poll" } else { "interval" },
            gets.load(Ordering::Relaxed),
            at(0.5),
            at(0.99),
            lags.last().copied().unwrap_or_default(),
            started.elapsed().as_secs_f64(),
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.cancel();
    serving.await??;
    Ok(())
}
