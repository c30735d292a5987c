//! `embedded-axum`: our server as an application embeds it, for bench/compare.sh's
//! `ours-embedded` rows. The demo agent (the `a2a-server` binary's) on the in-memory store,
//! its `Server::into_router()` mounted in the application's own `axum::serve`, with the
//! server's connection protections (`a2a_server::serve`) around it: the composition of
//! `examples/src/embedded.rs`, with mimalloc as the `a2a-server` binary has it. Against the
//! `ours-memory` rows (`Server::serve`), it shows what an embedder gets.
//!
//! Usage: `embedded-axum [--listen 127.0.0.1:0]`; prints `embedded-axum listening on
//! http://ADDR`.

use a2a_server::demo::DemoAgent;
use a2a_server::serve::Connection;
use a2a_server::{MemoryStore, Server};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut listen = "127.0.0.1:0".to_owned();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--listen" => listen = args.next().ok_or("--listen needs an address")?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    let url = format!("http://{}", listener.local_addr()?);
    let server = Server::builder(DemoAgent)
        .agent_card(DemoAgent::card())
        .task_store(MemoryStore::new())
        .public_url(&url)
        .build()?;
    let handle = server.handle();
    let protections = server.protections().shutdown_on(handle.shutdown_token());
    tokio::spawn(server.upkeep());
    let app = server.into_router().layer(protections.layer());
    println!("embedded-axum listening on {url}");
    axum::serve(
        protections.listener(listener),
        app.into_make_service_with_connect_info::<Connection>(),
    )
    .with_graceful_shutdown(handle.shutdown_token().cancelled_owned())
    .await?;
    Ok(())
}
