//! `a2a check`: the conformance report of any agent.

use crate::Outcome;
use crate::args::{BindingArg, CheckArgs, Global};
use crate::ui::Ui;
use a2a_client::Error;
use std::io::Write as _;
use std::time::Duration;

/// The credentials `check` sends: `--header`s, `--token`, and `--api-key` where the card puts it.
async fn check_headers(url: &str, g: &Global) -> Result<reqwest::header::HeaderMap, Error> {
    let credentials = g.credentials()?;
    let card = match &credentials.api_key {
        Some(_) => Some(g.card_resolver(&g.builder())?.resolve(url).await?),
        None => None,
    };
    credentials.headers(card.as_ref())
}

pub(crate) async fn check(args: CheckArgs, g: &Global, ui: &Ui) -> Result<Outcome, Error> {
    let mut options = a2a_client::check::Options::default();
    options.headers = check_headers(&args.url, g).await?;
    options.only = args.only;
    options.rate = args.rate;
    options.deadline = Duration::from_secs(args.max_time);
    options.request_timeout = Duration::from_secs(g.timeout.min(10));
    options.webhook = args.allow_webhook;
    options.long_task = args.long_task;
    options.bindings = match g.binding {
        None | Some(BindingArg::All) => vec![],
        Some(BindingArg::Jsonrpc) => vec![a2a_core::BINDING_JSONRPC],
        Some(BindingArg::Rest) => vec![a2a_core::BINDING_HTTP_JSON],
        Some(BindingArg::Grpc) => vec![a2a_core::BINDING_GRPC],
    };
    let report = a2a_client::check::run(&args.url, &options).await;
    let mut out = std::io::stdout().lock();
    let written = if ui.json {
        writeln!(out, "{}", report.to_json())
    } else {
        write!(out, "{}", report.table())
    };
    written.map_err(|e| Error::Config(format!("cannot write the report: {e}")))?;
    Ok(if report.passed() {
        Outcome::Done
    } else {
        Outcome::TaskUnsuccessful
    })
}
