//! `a2a-bench`: drives any A2A server's JSON-RPC binding over real sockets and reports
//! throughput, latency percentiles, time to first SSE event, errors and (given the server's
//! pid) server CPU time per request; probes task-store memory; tabulates runs.
//!
//! ```sh
//! a2a-bench run --url http://127.0.0.1:8080 --scenario send -c 16 -d 5 --server-pid 1234
//! a2a-bench run --url http://127.0.0.1:8080 --scenario subscribe --subscribers 10000
//! a2a-bench store --checkpoints 100000,1000000
//! a2a-bench chunks --chunks 10000
//! a2a-bench list --dir /tmp/a2a-list-1m --tasks 1000000
//! a2a-bench run --url http://127.0.0.1:8081,http://127.0.0.1:8082 -s send --server-pid 11,12 --db-process postgres
//! a2a-bench replicas --url http://127.0.0.1:8081,http://127.0.0.1:8082 --tasks 10
//! a2a-bench recovery --url http://127.0.0.1:8081,http://127.0.0.1:8082 --kill-pid 11
//! a2a-bench report results.jsonl
//! a2a-bench guard results.jsonl --baseline bench/baseline-instructions.json
//! ```
//!
//! See `bench/README.md` for the methodology and the comparison script.

mod callgrind;
mod chunks_probe;
mod flush_probe;
mod guard;
mod http;
mod idle_probe;
mod list_probe;
mod load;
mod procfs;
mod replica_probe;
mod report;
mod store_probe;
mod tasks_probe;

use clap::{Parser, Subcommand};

/// Load generator and probes for A2A servers.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs one load scenario against a server.
    Run(load::RunArgs),
    /// Fills a task store and reports memory and ListTasks latency.
    Store(store_probe::StoreArgs),
    /// Streams a long chunked artifact into one task on sled and reports bytes written, wall
    /// time and CPU time.
    Chunks(chunks_probe::ChunksArgs),
    /// Fills a store with many scoped tasks and measures ListTasks per filter, and SendMessage
    /// latency while ListTasks callers run.
    List(list_probe::ListArgs),
    /// Leaves many tasks waiting for input and reports the memory the server keeps for them.
    Idle(idle_probe::IdleArgs),
    /// Cross-replica delivery latency: countdown tasks on replica A, SubscribeToTask on A and
    /// on replica B.
    Replicas(replica_probe::ReplicasArgs),
    /// Recovery after `kill -9` of a replica running countdown tasks, seen from the survivors.
    Recovery(replica_probe::RecoveryArgs),
    /// Prints the runs appended to a JSON-lines file as a table with ratios.
    Report(report::ReportArgs),
    /// Fails when a callgrind run's instructions per request grew beyond a committed baseline.
    Guard(guard::GuardArgs),
    /// The disk's flush latency (4 KiB appended, then fdatasync): the floor under a durable write.
    Flush(flush_probe::FlushArgs),
    /// The memory kept per finished echo task, in process (live heap bytes and RSS).
    Tasks(tasks_probe::TasksArgs),
    /// Prints the machine description used in reports.
    Machine,
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => {
            // One thread: pin the load generator to one core (taskset) and it stays there.
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime");
            rt.block_on(async {
                let out = args.out.clone();
                let quiet = args.quiet;
                let outcome = load::run(args).await?;
                if quiet {
                    println!(
                        "{}",
                        serde_json::to_string(&outcome).map_err(|e| e.to_string())?
                    );
                } else {
                    load::print(&outcome);
                }
                if let Some(out) = out {
                    use std::io::Write as _;
                    let mut f = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&out)
                        .map_err(|e| format!("{}: {e}", out.display()))?;
                    writeln!(
                        f,
                        "{}",
                        serde_json::to_string(&outcome).map_err(|e| e.to_string())?
                    )
                    .map_err(|e| e.to_string())?;
                }
                Ok::<_, String>(())
            })
        }
        Command::Store(args) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime");
            rt.block_on(store_probe::probe(args))
        }
        Command::Chunks(args) => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime");
            rt.block_on(chunks_probe::probe(args))
        }
        Command::List(args) => list_probe::probe(args),
        Command::Idle(args) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime");
            rt.block_on(idle_probe::probe(args))
        }
        Command::Replicas(args) => current_thread().block_on(replica_probe::replicas(args)),
        Command::Recovery(args) => current_thread().block_on(replica_probe::recovery(args)),
        Command::Report(args) => report::report(&args),
        Command::Guard(args) => guard::guard(&args),
        Command::Flush(args) => flush_probe::probe(&args),
        Command::Tasks(args) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime");
            rt.block_on(tasks_probe::probe(args))
        }
        Command::Machine => {
            println!("{}", procfs::machine());
            Ok(())
        }
    };
    if let Err(e) = result {
        eprintln!("a2a-bench: {e}");
        std::process::exit(1);
    }
}
