//! One run's result: the JSON line `a2a-bench report` and `guard` read, and its printing.

use super::Binding;
use serde::{Deserialize, Serialize};

/// One run's result (one JSON line).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Outcome {
    pub(crate) label: String,
    pub(crate) scenario: String,
    /// JSON-RPC unless said otherwise (rows from before gRPC runs have no `binding`).
    #[serde(default, skip_serializing_if = "Binding::is_json_rpc")]
    pub(crate) binding: Binding,
    pub(crate) concurrency: usize,
    pub(crate) seconds: f64,
    pub(crate) requests: u64,
    pub(crate) errors: u64,
    pub(crate) rps: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) max_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ttfe_p50_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ttfe_p99_ms: Option<f64>,
    /// Server CPU time (user + system, all threads) per successful request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server_cpu_us: Option<f64>,
    /// Server CPU use during the measurement (100 = one core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server_cpu_pct: Option<f64>,
    /// CPU time of the `--db-process` processes per successful request, and their use (100 =
    /// one core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) db_cpu_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) db_cpu_pct: Option<f64>,
    /// The whole machine's busy CPU over the window (100 = one core): what it has beyond the
    /// server, the database and the load generator ran beside them (another job on a shared
    /// machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) machine_cpu_pct: Option<f64>,
    /// Server user-space instructions per successful request (with `--callgrind-out`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server_instructions: Option<f64>,
    /// Whether the server ran under callgrind (its times then mean nothing).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) under_callgrind: bool,
    /// The load generator's own CPU use (100 = one core): near 100, it may be the limit.
    pub(crate) client_cpu_pct: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server_rss_mib: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) subscribe: Option<FanOut>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) first_error: Option<String>,
}

impl Outcome {
    /// The label as reports show it: `ours-memory`, `ours-memory grpc`.
    pub(crate) fn shown_label(&self) -> String {
        match self.binding {
            Binding::JsonRpc => self.label.clone(),
            Binding::Grpc => format!("{} grpc", self.label),
            Binding::JsonRpcH2 => format!("{} jsonrpc-h2", self.label),
        }
    }

    /// The machine's busy CPU over the window that was neither the server, its database nor
    /// the load generator (100 = one core).
    pub(crate) fn other_cpu_pct(&self) -> Option<f64> {
        self.machine_cpu_pct.map(|m| {
            m - self.server_cpu_pct.unwrap_or(0.0)
                - self.db_cpu_pct.unwrap_or(0.0)
                - self.client_cpu_pct
        })
    }
}

/// The fan-out figures of a `subscribe` run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct FanOut {
    pub(crate) subscribers: usize,
    /// Subscribers that received every event from their snapshot to the terminal event.
    pub(crate) complete: usize,
    pub(crate) events_delivered: u64,
    /// Seconds until every subscriber had its first event.
    pub(crate) all_subscribed_s: f64,
    /// Server RSS with every subscriber connected, and its peak during the run.
    pub(crate) rss_subscribed_mib: Option<f64>,
    pub(crate) rss_peak_mib: Option<f64>,
    /// Delay of each delivery after the first delivery of the same event.
    pub(crate) spread_p50_ms: f64,
    pub(crate) spread_p99_ms: f64,
}

pub(super) fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64 / 1e6
}

/// Prints an outcome for people.
pub(crate) fn print(o: &Outcome) {
    let opt = |v: Option<f64>, unit: &str| v.map_or("-".to_owned(), |v| format!("{v:.3}{unit}"));
    if let Some(f) = &o.subscribe {
        println!(
            "{} subscribe: {} subscribers, {} received every event, {} events in {:.2}s ({:.0}/s); all subscribed after {:.2}s; delivery spread p50 {:.3} ms p99 {:.3} ms; server RSS subscribed {} peak {}; server CPU {} per delivery",
            o.label,
            f.subscribers,
            f.complete,
            f.events_delivered,
            o.seconds,
            o.rps,
            f.all_subscribed_s,
            f.spread_p50_ms,
            f.spread_p99_ms,
            opt(f.rss_subscribed_mib, " MiB"),
            opt(f.rss_peak_mib, " MiB"),
            opt(o.server_cpu_us, " µs"),
        );
    } else {
        println!(
            "{} {} c={}: {:.0} req/s, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms, first event p50 {} p99 {}, server CPU {}/req ({}), client CPU {:.0}%, other CPU {}, {} requests, {} errors",
            o.shown_label(),
            o.scenario,
            o.concurrency,
            o.rps,
            o.p50_ms,
            o.p99_ms,
            o.max_ms,
            opt(o.ttfe_p50_ms, " ms"),
            opt(o.ttfe_p99_ms, " ms"),
            opt(o.server_cpu_us, " µs"),
            opt(o.server_cpu_pct, "%"),
            o.client_cpu_pct,
            opt(o.other_cpu_pct(), "%"),
            o.requests,
            o.errors,
        );
    }
    if let Some(db) = o.db_cpu_pct {
        println!(
            "  database CPU {}/req ({db:.0}%), machine CPU {}",
            opt(o.db_cpu_us, " µs"),
            opt(o.machine_cpu_pct, "%")
        );
    }
    if let Some(ir) = o.server_instructions {
        println!("  server user-space instructions: {ir:.0} per request (callgrind)");
    }
    if let Some(e) = &o.first_error {
        println!("  first error: {e}");
    }
}
