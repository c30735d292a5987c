//! The binary's logging, tracing and metrics set-up. A collector that is unreachable, or an
//! endpoint that does not parse, costs a warning, never a request: spans are exported in the
//! background (a bounded queue, dropped when full) and the server serves either way.

use super::{Args, LogFormat};
use a2a_server::Metrics;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::net::SocketAddr;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// How long the process waits at exit for its last spans to be exported (an unreachable
/// collector must not hold a shutdown up).
const EXPORT_AT_EXIT: std::time::Duration = std::time::Duration::from_secs(3);

/// What must be flushed before the process exits.
pub(crate) struct Tracing {
    provider: Option<SdkTracerProvider>,
}

impl Tracing {
    /// Exports the spans still queued, for at most [`EXPORT_AT_EXIT`].
    pub(crate) fn shutdown(self) {
        if let Some(provider) = self.provider
            && let Err(e) = provider.shutdown_with_timeout(EXPORT_AT_EXIT)
        {
            tracing::warn!(error = %e, "exporting the last spans failed");
        }
    }
}

/// The default filter of text log lines: the spans of requests (target `a2a::server`) left
/// out, as they cost a few microseconds per request to format.
const TEXT_LOGS: &str = "info,sled=warn,a2a::server=warn";

/// The default filter of exported traces and JSON log lines (which carry the requests' trace
/// and task ids).
const SPANS: &str = "info,sled=warn";

/// `RUST_LOG` if it is set and valid, else `default`.
fn filter(default: &str) -> tracing_subscriber::EnvFilter {
    std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .and_then(|v| tracing_subscriber::EnvFilter::try_new(v).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new(default))
}

/// Whether the standard variables ask for export (or turn the SDK off).
fn export_from_env() -> bool {
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
}

fn sdk_disabled() -> bool {
    std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"))
        || std::env::var("OTEL_TRACES_EXPORTER").is_ok_and(|v| v.trim() == "none")
}

/// The OTLP/HTTP endpoint for traces: `url` with `/v1/traces` appended, as the standard
/// `OTEL_EXPORTER_OTLP_ENDPOINT` is read.
fn traces_endpoint(url: &str) -> String {
    let base = url.trim_end_matches('/');
    if base.ends_with("/v1/traces") {
        base.to_owned()
    } else {
        format!("{base}/v1/traces")
    }
}

/// Installs the subscriber: the log lines (text or JSON) and, when exporting or logging JSON,
/// OpenTelemetry (so that each request has a trace id, taken from its `traceparent` or new).
/// Returns what to flush at exit, and logs the warnings that configuration earned.
pub(crate) fn init(args: &Args) -> Tracing {
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    let wants_export = !sdk_disabled() && (args.otlp_endpoint.is_some() || export_from_env());
    if !wants_export && args.log_format == LogFormat::Text {
        // Nothing to trace: the plain subscriber, whose level hint lets every disabled
        // `debug!` in the stack return at once.
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(filter(TEXT_LOGS))
            .init();
        return Tracing { provider: None };
    }
    let mut warnings = Vec::new();
    let exporter = if wants_export {
        let builder = opentelemetry_otlp::SpanExporter::builder().with_http();
        let builder = match &args.otlp_endpoint {
            Some(url) => {
                use opentelemetry_otlp::WithExportConfig as _;
                builder.with_endpoint(traces_endpoint(url))
            }
            None => builder,
        };
        match builder.build() {
            Ok(exporter) => Some(exporter),
            Err(e) => {
                warnings.push(format!(
                    "traces are not exported: the OTLP endpoint is not usable ({e})"
                ));
                None
            }
        }
    } else {
        None
    };
    let provider = (exporter.is_some() || args.log_format == LogFormat::Json).then(|| {
        let mut resource = opentelemetry_sdk::Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name("a2a-server");
        }
        let builder = SdkTracerProvider::builder().with_resource(resource.build());
        match exporter {
            Some(exporter) => builder.with_batch_exporter(exporter),
            None => builder,
        }
        .build()
    });
    // Each its own filter: the text lines leave out the requests' spans, which cost a few
    // microseconds each to format and which they have never shown.
    let otel = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("a2a-server"))
            .with_tracked_inactivity(false)
            .with_filter(filter(SPANS))
    });
    let text = (args.log_format == LogFormat::Text).then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_filter(filter(TEXT_LOGS))
    });
    let json = (args.log_format == LogFormat::Json).then(|| {
        tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .with_writer(std::io::stderr)
            .with_filter(filter(SPANS))
    });
    tracing_subscriber::registry()
        .with(otel)
        .with(text)
        .with(json)
        .init();
    for warning in warnings {
        tracing::warn!("{warning}; the server serves without them");
    }
    Tracing { provider }
}

/// Serves `/metrics` on `addr` in the background; the metrics to give the server.
pub(crate) async fn serve_metrics(addr: SocketAddr) -> Result<Metrics, String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen for metrics on {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("the metrics listener has no address: {e}"))?;
    let metrics = Metrics::new();
    let router = metrics.router();
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            tracing::error!(error = %e, "the metrics listener failed");
        }
    });
    tracing::info!(listen = %local, "metrics at http://{local}/metrics");
    super::announce(format_args!("a2a-server metrics on http://{local}/metrics"));
    Ok(metrics)
}

#[cfg(test)]
mod tests {
    use super::traces_endpoint;

    #[test]
    fn the_endpoint_is_a_base_url_like_the_standard_variable() {
        assert_eq!(
            traces_endpoint("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(traces_endpoint("http://c:4318/"), "http://c:4318/v1/traces");
        assert_eq!(
            traces_endpoint("http://c:4318/v1/traces"),
            "http://c:4318/v1/traces"
        );
    }
}
