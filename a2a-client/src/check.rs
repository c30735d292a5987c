//! Conformance checks of any running A2A agent: what `a2a check URL` runs.
//!
//! [`run`] fetches the agent's card, then, over each interface it declares (JSON-RPC,
//! HTTP+JSON, gRPC), tests what needs no cooperation from the agent beyond the protocol: error
//! answers, a plain text SendMessage and what GetTask and ListTasks then say of the task,
//! streaming, cancel, push configs, authentication. Each [`Finding`] names its [`Check`] (a
//! MUST, SHOULD or MAY of a spec section), the request sent and what came back.
//!
//! The checker is careful with the agent: it creates a few small tasks, each a text message
//! starting `a2a-check:` with `{"a2a-check": true}` in the message metadata; it paces its
//! requests ([`Options::rate`]); every request has a time-out, and the whole run a deadline
//! ([`Options::deadline`]) after which what is left is reported as skipped. A push config it
//! creates points at a closed port on 127.0.0.1 unless [`Options::webhook`] names a URL.
//!
//! ```no_run
//! # async fn run() {
//! let report = a2a_client::check::run("http://127.0.0.1:8080", &Default::default()).await;
//! print!("{}", report.table());
//! std::process::exit(if report.passed() { 0 } else { 1 });
//! # }
//! ```

mod binding;
mod card;
pub mod catalog;
mod report;
mod wire;

pub use report::Report;

use reqwest::header::HeaderMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wire::{Exchange, Probe};

/// How strongly the spec asks for what a check tests (RFC 2119).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// An absolute requirement: a failure makes [`Report::passed`] false.
    Must,
    /// A recommendation.
    Should,
    /// Optional.
    May,
}

impl Level {
    /// Every level, strongest first.
    pub const ALL: [Level; 3] = [Level::Must, Level::Should, Level::May];
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
        })
    }
}

/// A group of checks, for [`Options::only`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// The agent card: where it is served, its model, caching.
    Card,
    /// Each declared interface answers in its binding.
    Interfaces,
    /// Error answers: codes, statuses, ErrorInfo reasons.
    Errors,
    /// SendMessage, GetTask, ListTasks, pagination, history, cancel.
    Tasks,
    /// Streams: framing, first event, order, closing, SubscribeToTask.
    Streaming,
    /// Push-notification configs.
    Push,
    /// A2A 1.1 task generations, long-poll GetTask and `ifGenerationMatch`, over the interfaces
    /// the card declares with protocol version 1.1 (skipped where it declares none).
    Generations,
    /// Authentication challenges.
    Auth,
}

impl Group {
    /// Every group.
    pub const ALL: [Group; 8] = [
        Group::Card,
        Group::Interfaces,
        Group::Errors,
        Group::Tasks,
        Group::Streaming,
        Group::Push,
        Group::Generations,
        Group::Auth,
    ];

    /// The group's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Group::Card => "card",
            Group::Interfaces => "interfaces",
            Group::Errors => "errors",
            Group::Tasks => "tasks",
            Group::Streaming => "streaming",
            Group::Push => "push",
            Group::Generations => "generations",
            Group::Auth => "auth",
        }
    }

    /// The group named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|g| g.name() == name)
    }
}

/// One check: a requirement of the spec that the checker can test from outside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    /// A stable id (`errors.unknown-method`).
    pub id: &'static str,
    /// Its group.
    pub group: Group,
    /// MUST, SHOULD or MAY.
    pub level: Level,
    /// The section(s) of the A2A v1.0 specification (of the 1.1 text where marked `(1.1)`).
    pub section: &'static str,
    /// What it requires, in a sentence.
    pub title: &'static str,
}

/// What a check concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The agent does what the check requires.
    Pass,
    /// It does not.
    Fail,
    /// The check did not apply (a capability not declared) or could not run (an earlier
    /// failure, the deadline); the finding says why.
    Skip,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::Skip => "skip",
        })
    }
}

/// One check's outcome, on one binding (or on the card).
#[derive(Clone, Debug)]
pub struct Finding {
    /// The check.
    pub check: Check,
    /// The level this finding holds the agent to: the check's, except where a binding asks for
    /// less (ErrorInfo is a SHOULD over JSON-RPC).
    pub level: Level,
    /// The binding (`JSONRPC`, `HTTP+JSON`, `GRPC`); `None` for the card.
    pub binding: Option<&'static str>,
    /// The verdict.
    pub verdict: Verdict,
    /// What was seen, or why the check was skipped.
    pub detail: String,
    /// The request that shows it (method, URL, headers with credentials redacted, body).
    pub request: Option<String>,
    /// What came back (status, relevant headers, body, or the events of a stream).
    pub response: Option<String>,
}

impl Finding {
    /// Where the finding was made: its binding, `card`, or `-` (a check the deadline cut off
    /// before it reached a binding).
    pub fn place(&self) -> &'static str {
        match (self.binding, self.check.group) {
            (Some(b), _) => b,
            (None, Group::Card) => "card",
            (None, _) => "-",
        }
    }

    /// `FAIL MUST JSONRPC errors.unknown-method`: the finding in one stable line, the form
    /// tests pin.
    pub fn line(&self) -> String {
        format!(
            "{} {} {} {}",
            self.verdict,
            self.level,
            self.place(),
            self.check.id
        )
    }
}

/// What to check, and how gently.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// The bindings to check (`JSONRPC`, `HTTP+JSON`, `GRPC`); empty: every one the card
    /// declares.
    pub bindings: Vec<&'static str>,
    /// Headers sent with every request: credentials (`Authorization: Bearer …`, an API key).
    pub headers: HeaderMap,
    /// The groups to run; empty: all.
    pub only: Vec<Group>,
    /// At most this many requests a second (default 10).
    pub rate: f64,
    /// Each request's time-out (default 10 s).
    pub request_timeout: Duration,
    /// The whole run's deadline (default 120 s): what has not run by then is reported skipped.
    pub deadline: Duration,
    /// The webhook URL of the push configs the checker creates (default
    /// `http://127.0.0.1:9/a2a-check`, a closed port on the agent's own machine, so that no
    /// one else is ever called).
    pub webhook: Option<String>,
    /// The text of a message that keeps the agent working for a while (a second or more; the
    /// demo agent's `countdown 5`), sent as is for the long-poll check of 1.1 interfaces.
    /// Without it the checker sends its own message, and skips the check when the agent has
    /// finished that task by the time SendMessage returns.
    pub long_task: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            bindings: Vec::new(),
            headers: HeaderMap::new(),
            only: Vec::new(),
            rate: 10.0,
            request_timeout: Duration::from_secs(10),
            deadline: Duration::from_secs(120),
            webhook: None,
            long_task: None,
        }
    }
}

/// The webhook URL used when [`Options::webhook`] is not set.
pub const DEFAULT_WEBHOOK: &str = "http://127.0.0.1:9/a2a-check";

/// A run in progress: the probe and the findings so far (shared, so that a run cut short by
/// its deadline still reports what it found).
#[derive(Debug)]
struct Run {
    probe: Probe,
    options: Options,
    findings: Arc<Mutex<Vec<Finding>>>,
    gaps: Arc<Mutex<Vec<String>>>,
}

impl Run {
    fn wants(&self, group: Group) -> bool {
        self.options.only.is_empty() || self.options.only.contains(&group)
    }

    fn record(
        &self,
        check: Check,
        binding: Option<&'static str>,
        verdict: Verdict,
        detail: impl Into<String>,
        exchange: Option<&Exchange>,
    ) {
        self.record_at(check, check.level, binding, verdict, detail, exchange);
    }

    fn record_at(
        &self,
        check: Check,
        level: Level,
        binding: Option<&'static str>,
        verdict: Verdict,
        detail: impl Into<String>,
        exchange: Option<&Exchange>,
    ) {
        if !self.wants(check.group) {
            return;
        }
        let finding = Finding {
            check,
            level,
            binding,
            verdict,
            detail: detail.into(),
            request: exchange.map(|e| e.request.clone()),
            response: exchange.map(|e| e.response.clone()),
        };
        self.findings
            .lock()
            .expect("findings lock poisoned")
            .push(finding);
    }

    /// Notes that checks could not run for a reason that is not the agent's failure.
    fn gap(&self, why: String) {
        self.gaps.lock().expect("gaps lock poisoned").push(why);
    }

    fn skip(&self, checks: &[Check], binding: Option<&'static str>, why: &str) {
        for check in checks {
            self.record(*check, binding, Verdict::Skip, why, None);
        }
    }
}

/// Checks the agent at `url` (its base URL, where `/.well-known/agent-card.json` is, or the
/// card's own URL).
pub async fn run(url: &str, options: &Options) -> Report {
    let findings = Arc::new(Mutex::new(Vec::new()));
    let gaps = Arc::new(Mutex::new(Vec::new()));
    let complete = match Probe::new(
        options.headers.clone(),
        options.rate,
        options.request_timeout,
    ) {
        Err(e) => {
            findings.lock().expect("fresh lock").push(Finding {
                check: catalog::CARD_FETCH,
                level: Level::Must,
                binding: None,
                verdict: Verdict::Fail,
                detail: format!("the checker could not start: {e}"),
                request: None,
                response: None,
            });
            true
        }
        Ok(probe) => {
            let run = Run {
                probe,
                options: options.clone(),
                findings: findings.clone(),
                gaps: gaps.clone(),
            };
            tokio::time::timeout(options.deadline, all(&run, url))
                .await
                .is_ok()
        }
    };
    let mut findings = std::mem::take(&mut *findings.lock().expect("findings lock poisoned"));
    let mut gaps = std::mem::take(&mut *gaps.lock().expect("gaps lock poisoned"));
    if !complete {
        gaps.push(format!(
            "the run's deadline ({:?}) passed; what did not run is skipped",
            options.deadline
        ));
        // Whatever did not get a finding is reported as cut off by the deadline.
        let seen: Vec<&str> = findings.iter().map(|f| f.check.id).collect();
        let missing: Vec<Check> = catalog::ALL
            .iter()
            .filter(|c| !seen.contains(&c.id))
            .filter(|c| options.only.is_empty() || options.only.contains(&c.group))
            .copied()
            .collect();
        for check in missing {
            findings.push(Finding {
                check,
                level: check.level,
                binding: None,
                verdict: Verdict::Skip,
                detail: format!("not run: the deadline ({:?}) passed", options.deadline),
                request: None,
                response: None,
            });
        }
    }
    Report {
        url: url.to_owned(),
        findings,
        gaps,
    }
}

async fn all(run: &Run, url: &str) {
    let Some(card) = card::check(run, url).await else {
        return;
    };
    for (binding, target, tenant) in &card.interfaces {
        let binding = *binding;
        if !run.options.bindings.is_empty() && !run.options.bindings.contains(&binding) {
            continue;
        }
        let checked = match wire::Wire::of(binding, target, run.options.request_timeout) {
            Ok(wire) => binding::check(run, &wire, tenant.as_deref(), &card.value).await,
            Err(e) => {
                run.record(
                    catalog::IFACE_ANSWERS,
                    Some(binding),
                    Verdict::Fail,
                    format!("the interface URL {target:?} is not usable: {e}"),
                    None,
                );
                false
            }
        };
        if run.wants(Group::Generations) {
            generations(run, binding, checked, &card).await;
        }
    }
    for binding in &run.options.bindings {
        if !run
            .findings
            .lock()
            .expect("lock")
            .iter()
            .any(|f| f.binding == Some(binding))
        {
            run.record(
                catalog::IFACE_ANSWERS,
                Some(binding),
                Verdict::Skip,
                format!("the card declares no v1.0 {binding} interface"),
                None,
            );
        }
    }
}

/// The generations group on `binding`, over the interface the card declares with protocol
/// version 1.1 for it (skipped where there is none, or where the binding could not be checked
/// at all).
async fn generations(run: &Run, binding: &'static str, checked: bool, card: &card::CardInfo) {
    let skip = |why: String| run.skip(catalog::GENERATIONS, Some(binding), &why);
    if !checked {
        return skip(format!("the {binding} interface could not be checked"));
    }
    let Some((_, target, tenant)) = card.generations.iter().find(|(b, ..)| *b == binding) else {
        return skip(format!(
            "the card declares no {binding} interface with protocol version 1.1"
        ));
    };
    match wire::Wire::of(binding, target, run.options.request_timeout) {
        Ok(wire) => binding::generations(run, &wire, tenant.as_deref(), &card.value).await,
        Err(e) => skip(format!(
            "the 1.1 interface URL {target:?} is not usable: {e}"
        )),
    }
}
