//! `a2a-bench report`: the JSON lines of several runs as one Markdown table, with each
//! server's CPU per request relative to the floor and its throughput relative to a peer, and
//! each gRPC row beside the same server's JSON-RPC row, and each JSON-RPC-over-HTTP/2 row
//! beside both (the two bindings on one transport).

use crate::load::{Binding, Outcome};
use std::path::PathBuf;

/// Options of `a2a-bench report`.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// The JSON-lines file the runs were appended to (`run --out`).
    pub(crate) file: PathBuf,
    /// The label of the reference floor (CPU ratios are relative to it).
    #[arg(long, default_value = "bare-axum")]
    pub(crate) floor: String,
    /// The label of the peer to compare throughput with.
    #[arg(long, default_value = "a2a-server-lf-0.5.3")]
    pub(crate) peer: String,
}

/// The row of `label` over `binding` that compares with `o`.
fn find_over<'a>(
    all: &'a [Outcome],
    label: &str,
    binding: Binding,
    o: &Outcome,
) -> Option<&'a Outcome> {
    // Runs under callgrind are compared only with each other.
    all.iter().find(|x| {
        x.label == label
            && x.binding == binding
            && x.scenario == o.scenario
            && x.concurrency == o.concurrency
            && x.under_callgrind == o.under_callgrind
            && x.subscribe.is_none()
            && x.db_cpu_pct.is_none()
    })
}

/// The row of `label` that compares with `o`, over the same binding.
fn find<'a>(all: &'a [Outcome], label: &str, o: &Outcome) -> Option<&'a Outcome> {
    find_over(all, label, o.binding, o)
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "-".into(),
    }
}

/// The median of `v` (the mean of the middle two for an even count); `v` is not empty.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn median_of(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = v.flatten().collect();
    (!v.is_empty()).then(|| median(v))
}

/// A timed row measured more than once (`compare.sh --repeat`): its throughputs.
struct Repeated {
    row: String,
    rps: Vec<f64>,
}

/// The timed rows measured several times, each as one row of medians (throughput, latencies,
/// CPU), with requests and errors summed; every other row as it is.
fn merge_repeats(all: Vec<Outcome>) -> (Vec<Outcome>, Vec<Repeated>) {
    let timed = |o: &Outcome| !o.under_callgrind && o.subscribe.is_none() && o.db_cpu_pct.is_none();
    let mut groups: Vec<Vec<Outcome>> = Vec::new();
    for o in all {
        let same = |g: &Vec<Outcome>| {
            let f = &g[0];
            timed(f)
                && timed(&o)
                && f.label == o.label
                && f.binding == o.binding
                && f.scenario == o.scenario
                && f.concurrency == o.concurrency
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => g.push(o),
            None => groups.push(vec![o]),
        }
    }
    let mut repeated = Vec::new();
    let merged = groups
        .into_iter()
        .map(|g| {
            if g.len() == 1 {
                return g.into_iter().next().expect("one");
            }
            let mut m = g[0].clone();
            m.rps = median(g.iter().map(|o| o.rps).collect());
            m.p50_ms = median(g.iter().map(|o| o.p50_ms).collect());
            m.p99_ms = median(g.iter().map(|o| o.p99_ms).collect());
            m.max_ms = g.iter().map(|o| o.max_ms).fold(0.0, f64::max);
            m.ttfe_p50_ms = median_of(g.iter().map(|o| o.ttfe_p50_ms));
            m.ttfe_p99_ms = median_of(g.iter().map(|o| o.ttfe_p99_ms));
            m.server_cpu_us = median_of(g.iter().map(|o| o.server_cpu_us));
            m.server_cpu_pct = median_of(g.iter().map(|o| o.server_cpu_pct));
            m.client_cpu_pct = median(g.iter().map(|o| o.client_cpu_pct).collect());
            m.requests = g.iter().map(|o| o.requests).sum();
            m.errors = g.iter().map(|o| o.errors).sum();
            m.seconds = g.iter().map(|o| o.seconds).sum();
            m.first_error = g.iter().find_map(|o| o.first_error.clone());
            repeated.push(Repeated {
                row: format!("{} {} c={}", m.shown_label(), m.scenario, m.concurrency),
                rps: g.iter().map(|o| o.rps).collect(),
            });
            m
        })
        .collect();
    (merged, repeated)
}

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// Prints the table.
pub(crate) fn report(args: &ReportArgs) -> Result<(), String> {
    let text =
        std::fs::read_to_string(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let all: Vec<Outcome> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", args.file.display()))?;
    let (all, repeated) = merge_repeats(all);
    let timed: Vec<&Outcome> = all
        .iter()
        .filter(|o| o.subscribe.is_none() && !o.under_callgrind && o.db_cpu_pct.is_none())
        .collect();
    if !timed.is_empty() {
        println!(
            "| server | scenario | c | req/s | p50 ms | p99 ms | first event p50 ms | server CPU µs/req | CPU ÷ {} | req/s ÷ {} | errors | load-gen CPU % |",
            args.floor, args.peer
        );
        println!("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    }
    for o in timed {
        let floor = find(&all, &args.floor, o);
        let peer = find(&all, &args.peer, o);
        println!(
            "| {} | {} | {} | {:.0} | {:.3} | {:.3} | {} | {} | {} | {} | {} | {:.0} |",
            o.shown_label(),
            o.scenario,
            o.concurrency,
            o.rps,
            o.p50_ms,
            o.p99_ms,
            num(o.ttfe_p50_ms, 3),
            num(o.server_cpu_us, 1),
            ratio(o.server_cpu_us, floor.and_then(|f| f.server_cpu_us)),
            ratio(Some(o.rps), peer.map(|p| p.rps)),
            o.errors,
            o.client_cpu_pct,
        );
    }
    // Runs with a database's CPU (`run --db-process`): servers and database side by side.
    let with_db: Vec<&Outcome> = all
        .iter()
        .filter(|o| o.db_cpu_pct.is_some() && !o.under_callgrind)
        .collect();
    if !with_db.is_empty() {
        println!();
        println!(
            "| server | scenario | c | req/s | p50 ms | p99 ms | server CPU % | server CPU µs/req | database CPU % | database CPU µs/req | together µs/req | errors | load-gen CPU % | other CPU % |"
        );
        println!("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for o in with_db {
            let together = o.server_cpu_us.zip(o.db_cpu_us).map(|(a, b)| a + b);
            // The machine's busy CPU that is none of the three (another job, the kernel's
            // unaccounted work).
            let other = o.other_cpu_pct();
            println!(
                "| {} | {} | {} | {:.0} | {:.3} | {:.3} | {} | {} | {} | {} | {} | {} | {:.0} | {} |",
                o.shown_label(),
                o.scenario,
                o.concurrency,
                o.rps,
                o.p50_ms,
                o.p99_ms,
                num(o.server_cpu_pct, 0),
                num(o.server_cpu_us, 1),
                num(o.db_cpu_pct, 0),
                num(o.db_cpu_us, 1),
                num(together, 1),
                o.errors,
                o.client_cpu_pct,
                num(other, 0),
            );
        }
    }
    let counted: Vec<&Outcome> = all.iter().filter(|o| o.under_callgrind).collect();
    if !counted.is_empty() {
        println!();
        println!(
            "| server | scenario | c | requests counted | server instructions/req (user space, callgrind) | ÷ {} | errors |",
            args.floor
        );
        println!("|---|---|--:|--:|--:|--:|--:|");
        for o in counted {
            let floor = find(&all, &args.floor, o).and_then(|f| f.server_instructions);
            println!(
                "| {} | {} | {} | {} | {} | {} | {} |",
                o.shown_label(),
                o.scenario,
                o.concurrency,
                o.requests,
                num(o.server_instructions, 0),
                ratio(o.server_instructions, floor),
                o.errors,
            );
        }
    }
    grpc_table(&all);
    h2_table(&all);
    let fan: Vec<&Outcome> = all.iter().filter(|o| o.subscribe.is_some()).collect();
    if !fan.is_empty() {
        println!();
        println!(
            "| server | subscribers | received every event | events delivered | deliveries/s | all subscribed after s | spread p50 ms | spread p99 ms | server RSS subscribed MiB | server RSS peak MiB |"
        );
        println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for o in fan {
            let f = o.subscribe.as_ref().expect("filtered");
            println!(
                "| {} | {} | {} | {} | {:.0} | {:.2} | {:.3} | {:.3} | {} | {} |",
                o.label,
                f.subscribers,
                f.complete,
                f.events_delivered,
                o.rps,
                f.all_subscribed_s,
                f.spread_p50_ms,
                f.spread_p99_ms,
                num(f.rss_subscribed_mib, 0),
                num(f.rss_peak_mib, 0),
            );
        }
    }
    if !repeated.is_empty() {
        println!();
        println!("Rows measured more than once show the median of each figure; their throughputs:");
        for r in &repeated {
            let shown: Vec<String> = r.rps.iter().map(|v| format!("{v:.0}")).collect();
            println!("- {}: {} req/s", r.row, shown.join(", "));
        }
    }
    let errors: Vec<&Outcome> = all.iter().filter(|o| o.first_error.is_some()).collect();
    if !errors.is_empty() {
        println!();
        for o in errors {
            println!(
                "- {} {} c={}: first error: {}",
                o.shown_label(),
                o.scenario,
                o.concurrency,
                o.first_error.as_deref().unwrap_or_default()
            );
        }
    }
    Ok(())
}

/// Each gRPC row beside the JSON-RPC row of the same server, scenario and concurrency: server
/// CPU per request (timed runs) or instructions per request (callgrind).
fn grpc_table(all: &[Outcome]) {
    let grpc = |counted: bool| -> Vec<(&Outcome, Option<&Outcome>)> {
        all.iter()
            .filter(|o| o.binding == Binding::Grpc && o.under_callgrind == counted)
            .filter(|o| o.subscribe.is_none() && o.db_cpu_pct.is_none())
            .map(|o| (o, find_over(all, &o.label, Binding::JsonRpc, o)))
            .collect()
    };
    let timed = grpc(false);
    if !timed.is_empty() {
        println!();
        println!(
            "| server | scenario | c | JSON-RPC req/s | gRPC req/s | JSON-RPC server CPU µs/req | gRPC server CPU µs/req | gRPC ÷ JSON-RPC CPU | gRPC errors | load-gen CPU %, JSON-RPC / gRPC | other jobs' CPU %, JSON-RPC / gRPC |"
        );
        println!("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (g, j) in timed {
            println!(
                "| {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {} / {:.0} | {} / {} |",
                g.label,
                g.scenario,
                g.concurrency,
                num(j.map(|j| j.rps), 0),
                g.rps,
                num(j.and_then(|j| j.server_cpu_us), 1),
                num(g.server_cpu_us, 1),
                ratio(g.server_cpu_us, j.and_then(|j| j.server_cpu_us)),
                g.errors,
                num(j.map(|j| j.client_cpu_pct), 0),
                g.client_cpu_pct,
                num(j.and_then(Outcome::other_cpu_pct), 0),
                num(g.other_cpu_pct(), 0),
            );
        }
    }
    let counted = grpc(true);
    if !counted.is_empty() {
        println!();
        println!(
            "| server | scenario | c | JSON-RPC instructions/req | gRPC instructions/req | gRPC ÷ JSON-RPC | gRPC errors |"
        );
        println!("|---|---|--:|--:|--:|--:|--:|");
        for (g, j) in counted {
            println!(
                "| {} | {} | {} | {} | {} | {} | {} |",
                g.label,
                g.scenario,
                g.concurrency,
                num(j.and_then(|j| j.server_instructions), 0),
                num(g.server_instructions, 0),
                ratio(g.server_instructions, j.and_then(|j| j.server_instructions)),
                g.errors,
            );
        }
    }
}

/// Each JSON-RPC-over-HTTP/2 row beside the same server's JSON-RPC/HTTP/1.1 and gRPC rows:
/// the two bindings on one transport, and what the transport changes for JSON-RPC.
fn h2_table(all: &[Outcome]) {
    let rows = |counted: bool| -> Vec<(&Outcome, Option<&Outcome>, Option<&Outcome>)> {
        all.iter()
            .filter(|o| o.binding == Binding::JsonRpcH2 && o.under_callgrind == counted)
            .filter(|o| o.subscribe.is_none() && o.db_cpu_pct.is_none())
            .map(|o| {
                (
                    o,
                    find_over(all, &o.label, Binding::JsonRpc, o),
                    find_over(all, &o.label, Binding::Grpc, o),
                )
            })
            .collect()
    };
    let timed = rows(false);
    if !timed.is_empty() {
        println!();
        println!(
            "| server | scenario | c | req/s, JSON-RPC HTTP/1.1 / JSON-RPC HTTP/2 / gRPC | server CPU µs/req, JSON-RPC HTTP/1.1 | JSON-RPC HTTP/2 | gRPC | JSON-RPC HTTP/2 ÷ HTTP/1.1 | gRPC ÷ JSON-RPC HTTP/2 | JSON-RPC HTTP/2 errors | load-gen CPU %, HTTP/1.1 / HTTP/2 / gRPC | other jobs' CPU %, HTTP/1.1 / HTTP/2 / gRPC |"
        );
        println!("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (h, j, g) in timed {
            println!(
                "| {} | {} | {} | {} / {:.0} / {} | {} | {} | {} | {} | {} | {} | {} / {:.0} / {} | {} / {} / {} |",
                h.label,
                h.scenario,
                h.concurrency,
                num(j.map(|j| j.rps), 0),
                h.rps,
                num(g.map(|g| g.rps), 0),
                num(j.and_then(|j| j.server_cpu_us), 1),
                num(h.server_cpu_us, 1),
                num(g.and_then(|g| g.server_cpu_us), 1),
                ratio(h.server_cpu_us, j.and_then(|j| j.server_cpu_us)),
                ratio(g.and_then(|g| g.server_cpu_us), h.server_cpu_us),
                h.errors,
                num(j.map(|j| j.client_cpu_pct), 0),
                h.client_cpu_pct,
                num(g.map(|g| g.client_cpu_pct), 0),
                num(j.and_then(Outcome::other_cpu_pct), 0),
                num(h.other_cpu_pct(), 0),
                num(g.and_then(Outcome::other_cpu_pct), 0),
            );
        }
    }
    let counted = rows(true);
    if !counted.is_empty() {
        println!();
        println!(
            "| server | scenario | c | instructions/req, JSON-RPC HTTP/1.1 | JSON-RPC HTTP/2 | gRPC | JSON-RPC HTTP/2 ÷ HTTP/1.1 | gRPC ÷ JSON-RPC HTTP/2 | JSON-RPC HTTP/2 errors |"
        );
        println!("|---|---|--:|--:|--:|--:|--:|--:|--:|");
        for (h, j, g) in counted {
            let g_ir = g.and_then(|g| g.server_instructions);
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                h.label,
                h.scenario,
                h.concurrency,
                num(j.and_then(|j| j.server_instructions), 0),
                num(h.server_instructions, 0),
                num(g_ir, 0),
                ratio(h.server_instructions, j.and_then(|j| j.server_instructions)),
                ratio(g_ir, h.server_instructions),
                h.errors,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, rps: f64, cpu: f64) -> Outcome {
        Outcome {
            label: label.into(),
            scenario: "send".into(),
            concurrency: 16,
            requests: 10,
            rps,
            server_cpu_us: Some(cpu),
            ..Outcome::default()
        }
    }

    #[test]
    fn repeated_rows_become_one_row_of_medians_and_others_stay() {
        let mut counted = row("ours", 1.0, 1.0);
        counted.under_callgrind = true;
        let all = vec![
            row("ours", 100.0, 30.0),
            row("peer", 50.0, 40.0),
            row("ours", 300.0, 10.0),
            row("ours", 200.0, 20.0),
            counted.clone(),
            counted,
        ];
        let (merged, repeated) = merge_repeats(all);
        assert_eq!(
            merged.len(),
            4,
            "ours and peer timed, two callgrind rows as they are"
        );
        let ours = &merged[0];
        assert_eq!(
            (ours.rps, ours.server_cpu_us, ours.requests),
            (200.0, Some(20.0), 30)
        );
        assert_eq!(merged[1].rps, 50.0);
        assert!(merged[2].under_callgrind && merged[3].under_callgrind);
        assert_eq!(repeated.len(), 1);
        assert_eq!(repeated[0].rps, [100.0, 300.0, 200.0]);
        assert_eq!(median(vec![4.0, 1.0]), 2.5);
    }
}
