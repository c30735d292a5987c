//! Run with: cargo run -p a2a-examples --example itk_agent -- --httpPort 10102 --grpcPort 11002
//!
//! The agent of the A2A interoperability test kit (ACTS conformance runs): JSON-RPC and
//! HTTP+JSON on `127.0.0.1:<httpPort>`, gRPC on `127.0.0.1:<grpcPort>`. `ITK_ACTS_AUTH=1`
//! requires a bearer token on every call; `ITK_ACTS_REDUCED_CAPABILITIES=1` drops streaming,
//! push notifications and the extended card. Runs until interrupted.

use a2a_examples::itk::{self, Mode};

fn port(args: &[String], flag: &str) -> Result<u16, String> {
    let value = args
        .iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .ok_or_else(|| format!("missing {flag} PORT"))?;
    value
        .parse()
        .map_err(|e| format!("{flag} {value:?} is not a port: {e}"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (http_port, grpc_port) = match (port(&args, "--httpPort"), port(&args, "--grpcPort")) {
        (Ok(h), Ok(g)) => (h, g),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("usage: itk_agent --httpPort PORT --grpcPort PORT ({e})");
            std::process::exit(2);
        }
    };
    let mode = Mode::from_env();
    let http = tokio::net::TcpListener::bind(("127.0.0.1", http_port)).await?;
    let grpc = tokio::net::TcpListener::bind(("127.0.0.1", grpc_port)).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    itk::serve(mode, http, grpc, async {
        let _ = stopped.await;
    })
    .await?;
    println!("itk agent ({mode:?}) on http://127.0.0.1:{http_port}, gRPC 127.0.0.1:{grpc_port}");
    shutdown_signal().await;
    let _ = stop.send(());
    Ok(())
}

/// Ctrl-C, or SIGTERM (how the conformance runner stops its agent).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
