//! The checks of one interface: that it answers, its error answers, a task's life through
//! SendMessage, GetTask, ListTasks and CancelTask (`tasks`), streaming (`streaming`), push
//! configs (`push`), authentication; and, over a 1.1 interface, task generations
//! (`generations`).

mod generations;
mod push;
mod streaming;
mod tasks;

use super::card::verdict;
use super::catalog::*;
use super::wire::{Answer, Call, Exchange, Fault, Streamed, Wire, clip};
use super::{Check, Group, Level, Run, Verdict};
use a2a_core::{ErrorKind, Method};
use push::push;
use serde_json::{Value, json};
use std::sync::Mutex;
use streaming::streaming;
use tasks::tasks;

/// The id the checker asks about when it needs a task that does not exist.
const NO_SUCH_TASK: &str = "a2a-check-no-such-task";

/// One interface under check.
struct Target<'a> {
    run: &'a Run,
    wire: &'a Wire,
    tenant: Option<&'a str>,
    binding: &'static str,
    /// Every A2A error seen, with what is wrong with its ErrorInfo, if anything.
    infos: Mutex<Vec<(Option<String>, Exchange)>>,
    /// Every error seen whose form is wrong for the binding.
    shapes: Mutex<Vec<(String, Exchange)>>,
}

impl Target<'_> {
    fn params(&self, mut params: Value) -> Value {
        if let (Some(t), Some(o)) = (self.tenant, params.as_object_mut()) {
            o.insert("tenant".to_owned(), json!(t));
        }
        params
    }

    async fn call(&self, method: Method, params: Value) -> Answer {
        self.call_with(method, params, Call::default()).await
    }

    async fn call_with(&self, method: Method, params: Value, call: Call<'_>) -> Answer {
        let params = self.params(params);
        self.wire.call(&self.run.probe, method, params, call).await
    }

    async fn stream(&self, method: Method, params: Value) -> Streamed {
        self.stream_with(method, params, Call::default()).await
    }

    async fn stream_with(&self, method: Method, params: Value, call: Call<'_>) -> Streamed {
        let params = self.params(params);
        let streamed = self
            .wire
            .stream(&self.run.probe, method, params, call)
            .await;
        if let Some(fault) = &streamed.opened {
            self.note_shape(fault, &streamed.exchange);
        }
        streamed
    }

    fn record(
        &self,
        check: Check,
        verdict: Verdict,
        detail: impl Into<String>,
        ex: Option<&Exchange>,
    ) {
        self.run
            .record(check, Some(self.binding), verdict, detail, ex);
    }

    /// How the binding writes `kind`: `-32001`, `HTTP 404`, `gRPC NOT_FOUND`.
    fn expected(&self, kind: ErrorKind) -> String {
        let codes = kind.codes();
        match self.wire {
            Wire::JsonRpc(_) => format!("JSON-RPC error {}", codes.json_rpc),
            Wire::Rest(_) => format!("HTTP {}", codes.http),
            Wire::Grpc(..) => format!("gRPC {}", codes.grpc),
        }
    }

    fn matches(&self, fault: &Fault, kind: ErrorKind) -> bool {
        let codes = kind.codes();
        match self.wire {
            Wire::JsonRpc(_) => fault.code == Some(i64::from(codes.json_rpc)),
            Wire::Rest(_) => fault.http == codes.http,
            Wire::Grpc(..) => fault.grpc == Some(codes.grpc),
        }
    }

    /// Notes an error whose form is wrong for the binding (not one that never came: a
    /// time-out or a broken connection fails the check that waited for it, not the form).
    fn note_shape(&self, fault: &Fault, exchange: &Exchange) {
        let answered = fault.http > 0 || fault.grpc.is_some();
        if let (true, Some(shape)) = (answered, &fault.shape) {
            let mut shapes = self.shapes.lock().expect("lock");
            shapes.push((shape.clone(), exchange.clone()));
        }
    }

    /// Notes what an error answer says of the binding's error form and ErrorInfo.
    fn note(&self, fault: &Fault, kind: ErrorKind, exchange: &Exchange) {
        self.note_shape(fault, exchange);
        let codes = kind.codes();
        if !(-32099..=-32001).contains(&codes.json_rpc) || !self.matches(fault, kind) {
            return;
        }
        let problem = match fault.error_info() {
            None => Some(format!("{kind}: no google.rpc.ErrorInfo among the details")),
            Some(info) if info["reason"] != codes.reason => Some(format!(
                "{kind}: ErrorInfo reason {} (the spec's is {})",
                info["reason"], codes.reason
            )),
            Some(info) if info["domain"] != "a2a-protocol.org" => Some(format!(
                "{kind}: ErrorInfo domain {} (the spec's is \"a2a-protocol.org\")",
                info["domain"]
            )),
            Some(_) => None,
        };
        self.infos
            .lock()
            .expect("lock")
            .push((problem, exchange.clone()));
    }

    /// Records `check`: the answer must be the error `kind`.
    fn expect_error(&self, check: Check, answer: &Answer, kind: ErrorKind) -> bool {
        self.expect_fault(
            check,
            check.level,
            answer.result.as_ref().err(),
            answer,
            kind,
        )
    }

    fn expect_fault(
        &self,
        check: Check,
        level: Level,
        fault: Option<&Fault>,
        answer: &Answer,
        kind: ErrorKind,
    ) -> bool {
        let expected = self.expected(kind);
        let (ok, detail) = match (fault, &answer.result) {
            (Some(fault), _) => {
                self.note(fault, kind, &answer.exchange);
                let got = match &fault.shape {
                    Some(shape) if fault.code.is_none() && fault.grpc.is_none() => {
                        format!("{} ({shape})", fault.describe())
                    }
                    _ => fault.describe(),
                };
                (
                    self.matches(fault, kind),
                    format!("expected {expected} ({kind}), got {got}"),
                )
            }
            (None, Ok(v)) => (
                false,
                format!(
                    "expected {expected} ({kind}), got a result: {}",
                    clip(&v.to_string(), 200)
                ),
            ),
            (None, Err(_)) => (false, format!("expected {expected} ({kind})")),
        };
        let binding = Some(self.binding);
        let ex = Some(&answer.exchange);
        self.run
            .record_at(check, level, binding, verdict(ok), detail, ex);
        ok
    }
}

impl<'a> Target<'a> {
    fn new(run: &'a Run, wire: &'a Wire, tenant: Option<&'a str>) -> Self {
        Target {
            run,
            wire,
            tenant,
            binding: wire.name(),
            infos: Mutex::new(Vec::new()),
            shapes: Mutex::new(Vec::new()),
        }
    }
}

/// Runs every group on one interface (but generations); `false` when the interface could not
/// be checked at all (it does not answer, or wants credentials the checker was not given).
pub(super) async fn check(run: &Run, wire: &Wire, tenant: Option<&str>, card: &Value) -> bool {
    let target = Target::new(run, wire, tenant);
    let t = &target;
    if !answers(t).await {
        return false;
    }
    let capability = |name: &str| card["capabilities"][name].as_bool() == Some(true);
    if run.wants(Group::Auth) {
        auth(t, card).await;
    }
    if run.wants(Group::Errors) {
        errors(t, capability("streaming")).await;
    }
    // The task is made whenever a later check needs one (findings are kept only for the
    // groups asked for).
    let needs_task = [Group::Tasks, Group::Errors, Group::Push];
    let sent = if needs_task.into_iter().any(|g| run.wants(g)) {
        tasks(t).await
    } else {
        None
    };
    if run.wants(Group::Errors) {
        match &sent {
            Some(sent) => {
                let params = json!({"id": sent.id, "historyLength": -1});
                let answer = t.call(Method::GetTask, params).await;
                t.expect_error(ERR_HISTORY_NEGATIVE, &answer, ErrorKind::InvalidParams);
            }
            None => t.record(
                ERR_HISTORY_NEGATIVE,
                Verdict::Skip,
                "no task to ask about",
                None,
            ),
        }
    }
    if run.wants(Group::Streaming) {
        streaming(t, capability("streaming")).await;
    }
    if run.wants(Group::Push) {
        push(t, capability("pushNotifications"), sent.as_ref()).await;
    }
    if run.wants(Group::Errors) {
        error_forms(t);
    }
    true
}

/// The generations group over a 1.1 interface.
pub(super) async fn generations(run: &Run, wire: &Wire, tenant: Option<&str>, card: &Value) {
    let target = Target::new(run, wire, tenant);
    let streaming = card["capabilities"]["streaming"].as_bool() == Some(true);
    generations::generations(&target, streaming, run.options.long_task.as_deref()).await;
}

/// `interface.answers` and `interface.media-type`, on a GetTask of a task that does not exist
/// (an answer every agent can give). `false` when nothing else can be checked.
async fn answers(t: &Target<'_>) -> bool {
    let answer = t.call(Method::GetTask, json!({"id": NO_SUCH_TASK})).await;
    let fault = answer.result.as_ref().err();
    let unauthenticated = fault.is_some_and(|f| f.http == 401 || f.grpc == Some("UNAUTHENTICATED"));
    let readable = match fault {
        None => true,
        Some(f) => f.code.is_some() || f.grpc.is_some() || (f.shape.is_none() && f.http > 0),
    };
    if unauthenticated {
        let why = format!(
            "{} answered {} to the checker's credentials (none, or not accepted): pass --token, --api-key or --header",
            t.binding,
            fault.map(Fault::describe).unwrap_or_default()
        );
        t.record(IFACE_ANSWERS, Verdict::Skip, &why, Some(&answer.exchange));
        t.run.gap(why);
        return false;
    }
    let detail = match fault {
        Some(f) if !readable => f.shape.clone().unwrap_or_default(),
        _ => String::new(),
    };
    t.record(
        IFACE_ANSWERS,
        verdict(readable),
        detail,
        Some(&answer.exchange),
    );
    if let Some(http) = &answer.http {
        let media = http.media_type();
        let ok = match t.wire {
            Wire::Rest(_) => media == "application/a2a+json" || media == "application/json",
            _ => media == "application/json",
        };
        t.record(
            IFACE_MEDIA_TYPE,
            verdict(ok),
            format!("Content-Type is {media:?}"),
            Some(&answer.exchange),
        );
    }
    if readable && t.run.wants(Group::Errors) {
        t.expect_error(ERR_GET_UNKNOWN, &answer, ErrorKind::TaskNotFound);
    }
    readable
}

async fn auth(t: &Target<'_>, card: &Value) {
    let declared = card["securityRequirements"]
        .as_array()
        .is_some_and(|r| !r.is_empty());
    if !declared {
        let why = "the card declares no security requirements";
        t.record(AUTH_REQUIRED, Verdict::Skip, why, None);
        t.record(AUTH_CHALLENGE, Verdict::Skip, why, None);
        return;
    }
    let call = Call {
        credentials: false,
        ..Call::default()
    };
    let answer = t
        .call_with(Method::GetTask, json!({"id": NO_SUCH_TASK}), call)
        .await;
    let fault = answer.result.as_ref().err();
    let refused = fault.is_some_and(|f| f.http == 401 || f.grpc == Some("UNAUTHENTICATED"));
    let got = fault.map_or("a result".to_owned(), Fault::describe);
    t.record(
        AUTH_REQUIRED,
        verdict(refused),
        format!("without credentials: {got}"),
        Some(&answer.exchange),
    );
    match &answer.http {
        Some(http) if refused => t.record(
            AUTH_CHALLENGE,
            verdict(http.header("www-authenticate").is_some()),
            "the 401 has no WWW-Authenticate",
            Some(&answer.exchange),
        ),
        Some(_) => t.record(
            AUTH_CHALLENGE,
            Verdict::Skip,
            "the call was not refused",
            None,
        ),
        None => {}
    }
}

async fn errors(t: &Target<'_>, streaming: bool) {
    let probe = &t.run.probe;
    // Not JSON (not protobuf). HTTP+JSON has no parse error of its own: any 400 with a Status
    // body is right there.
    let answer = t
        .wire
        .garbage(probe, Method::SendMessage, b"{not json")
        .await;
    match (t.wire, &answer.result) {
        (Wire::Rest(_), result) => {
            if let Err(f) = result {
                t.note_shape(f, &answer.exchange);
            }
            let ok = matches!(result, Err(f) if f.http == 400);
            let detail = format!("expected HTTP 400, got {}", describe(result));
            t.record(ERR_PARSE, verdict(ok), detail, Some(&answer.exchange));
        }
        (Wire::JsonRpc(_), _) => {
            t.expect_error(ERR_PARSE, &answer, ErrorKind::ParseError);
            let id = answer
                .http
                .as_ref()
                .and_then(|h| h.json())
                .map(|v| v["id"].clone());
            if let Some(id) = id.filter(|id| !id.is_null()) {
                let shape = format!("a parse error's id must be null, not {id}");
                t.shapes
                    .lock()
                    .expect("lock")
                    .push((shape, answer.exchange.clone()));
            }
        }
        (Wire::Grpc(..), result) => {
            // Bytes that are not the request message are the gRPC framework's to refuse, and
            // the spec does not say how: INVALID_ARGUMENT is the code for a bad argument, but
            // not every framework uses it.
            let fault = result.as_ref().err();
            t.expect_fault(
                ERR_PARSE,
                Level::Should,
                fault,
                &answer,
                ErrorKind::ParseError,
            );
        }
    }
    if let Wire::JsonRpc(url) = t.wire {
        let body = json!({"jsonrpc": "1.0", "id": "a2a-check-envelope", "method": "GetTask", "params": {"id": NO_SUCH_TASK}});
        let answer = raw_json_rpc(t, url, &body).await;
        t.expect_error(ERR_INVALID_REQUEST, &answer, ErrorKind::InvalidRequest);
    }
    if let Some(answer) = t.wire.unknown_method(probe).await {
        t.expect_error(ERR_UNKNOWN_METHOD, &answer, ErrorKind::MethodNotFound);
    }
    let answer = t.call(Method::SendMessage, json!({})).await;
    t.expect_error(ERR_INVALID_PARAMS, &answer, ErrorKind::InvalidParams);
    let answer = t
        .call(Method::CancelTask, json!({"id": NO_SUCH_TASK}))
        .await;
    t.expect_error(ERR_CANCEL_UNKNOWN, &answer, ErrorKind::TaskNotFound);
    if streaming {
        let streamed = t
            .stream(Method::SubscribeToTask, json!({"id": NO_SUCH_TASK}))
            .await;
        expect_refused_stream(t, ERR_SUBSCRIBE_UNKNOWN, &streamed, ErrorKind::TaskNotFound);
    } else {
        let why = "the card does not declare streaming";
        t.record(ERR_SUBSCRIBE_UNKNOWN, Verdict::Skip, why, None);
    }
    let call = Call {
        version: Some("99.0"),
        ..Call::default()
    };
    let answer = t
        .call_with(Method::GetTask, json!({"id": NO_SUCH_TASK}), call)
        .await;
    t.expect_error(ERR_VERSION, &answer, ErrorKind::VersionNotSupported);

    let answer = t.call(Method::ListTasks, json!({"pageSize": 101})).await;
    match &answer.result {
        Ok(v) => {
            let n = v["tasks"].as_array().map_or(0, Vec::len);
            t.record(
                ERR_PAGE_SIZE,
                verdict(n <= 100),
                format!("answered {n} tasks for pageSize 101"),
                Some(&answer.exchange),
            );
        }
        Err(_) => {
            t.expect_error(ERR_PAGE_SIZE, &answer, ErrorKind::InvalidParams);
        }
    }
    let params = json!({"pageToken": "a2a-check-never-issued", "pageSize": 1});
    let answer = t.call(Method::ListTasks, params).await;
    t.expect_error(ERR_PAGE_TOKEN, &answer, ErrorKind::InvalidParams);
}

/// A JSON-RPC request written by hand (an envelope the wire layer would not write).
async fn raw_json_rpc(t: &Target<'_>, url: &str, body: &Value) -> Answer {
    let request = t
        .run
        .probe
        .http
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_string());
    let sent = t.run.probe.send(request, Call::default()).await;
    super::wire::json_rpc_answer(sent, body["id"].as_str().unwrap_or(""))
}

/// Records `check`: a streaming call refused with `kind` as a plain answer, not a stream.
fn expect_refused_stream(t: &Target<'_>, check: Check, streamed: &Streamed, kind: ErrorKind) {
    let answer = Answer {
        result: Err(streamed.opened.clone().unwrap_or_default()),
        exchange: streamed.exchange.clone(),
        http: None,
    };
    match &streamed.opened {
        Some(fault) => {
            t.expect_fault(check, check.level, Some(fault), &answer, kind);
        }
        None => t.record(
            check,
            Verdict::Fail,
            format!(
                "expected {} ({kind}) as a plain answer, got a stream of {} event(s)",
                t.expected(kind),
                streamed.events.len()
            ),
            Some(&streamed.exchange),
        ),
    }
}

fn describe(result: &Result<Value, Fault>) -> String {
    match result {
        Ok(v) => clip(&v.to_string(), 200),
        Err(f) => f.describe(),
    }
}

/// The aggregate findings: ErrorInfo on every A2A error, and the binding's error form.
fn error_forms(t: &Target<'_>) {
    let infos = std::mem::take(&mut *t.infos.lock().expect("lock"));
    let level = match t.wire {
        Wire::JsonRpc(_) => Level::Should,
        _ => Level::Must,
    };
    let record = |check: Check, level, verdict, detail: String, ex: Option<&Exchange>| {
        t.run
            .record_at(check, level, Some(t.binding), verdict, detail, ex);
    };
    if infos.is_empty() {
        record(
            ERR_ERROR_INFO,
            level,
            Verdict::Skip,
            "no A2A error was seen".to_owned(),
            None,
        );
    } else {
        let bad: Vec<&(Option<String>, Exchange)> =
            infos.iter().filter(|(p, _)| p.is_some()).collect();
        let mut problems: Vec<String> = bad.iter().filter_map(|(p, _)| p.clone()).collect();
        problems.dedup();
        let detail = problems.join("; ");
        let ex = bad
            .first()
            .map(|(_, e)| e)
            .or(infos.first().map(|(_, e)| e));
        record(ERR_ERROR_INFO, level, verdict(bad.is_empty()), detail, ex);
    }
    let shapes = std::mem::take(&mut *t.shapes.lock().expect("lock"));
    let detail = shapes
        .iter()
        .map(|(s, _)| s.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let ex = shapes.first().map(|(_, e)| e);
    record(
        ERR_SHAPE,
        ERR_SHAPE.level,
        verdict(shapes.is_empty()),
        detail,
        ex,
    );
}

fn skip(t: &Target<'_>, checks: &[Check], why: &str) {
    t.run.skip(checks, Some(t.binding), why);
}
