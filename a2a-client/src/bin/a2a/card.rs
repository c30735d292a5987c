//! `a2a card`: the agent's card, and its signatures verified against the keys given.

use crate::Outcome;
use crate::args::{CardArgs, Global};
use crate::ui::Ui;
use a2a_client::{ClientBuilder, Error};
use std::time::Duration;

/// The keys `card --verify` trusts: each JWK set URL fetched, each file read (PEM or JSON).
async fn trusted_keys(
    args: &CardArgs,
    builder: &ClientBuilder,
) -> Result<a2a_core::signing::TrustedKeys, Error> {
    let mut sources = a2a_client::credentials::KeySources::default();
    for url in &args.jwks {
        sources = sources.with_jwks_url(url);
    }
    for path in &args.key {
        let label = format!("--key {}", path.display());
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::Config(format!("{label}: {e}")))?;
        sources = sources.with_key(label, text);
    }
    sources.load(builder).await
}

/// `a2a card`, within one `--timeout` for all of it (every JWK set fetched, then the card).
pub(crate) async fn card(args: CardArgs, g: &Global, ui: &Ui) -> Result<Outcome, Error> {
    let limit = Duration::from_secs(g.timeout);
    tokio::time::timeout(limit, show_card(args, g, ui))
        .await
        .unwrap_or_else(|_| {
            Err(Error::Timeout(
                format!("a2a card took over {limit:?} (raise the limit with --timeout SECONDS)")
                    .into(),
            ))
        })
}

async fn show_card(args: CardArgs, g: &Global, ui: &Ui) -> Result<Outcome, Error> {
    let builder = g.builder();
    let resolver = g.card_resolver(&builder)?;
    if !(args.verify || !args.jwks.is_empty() || !args.key.is_empty()) {
        ui.card(&resolver.resolve(&args.url).await?);
        return Ok(Outcome::Done);
    }
    if args.jwks.is_empty() && args.key.is_empty() {
        return Err(Error::Config(
            "--verify needs the keys to trust: --jwks URL or --key FILE (a card is never verified against keys it names itself)".into(),
        ));
    }
    let form = if args.sdk_canonicalization {
        a2a_core::signing::Canonicalization::Sdk
    } else {
        a2a_core::signing::Canonicalization::Jcs
    };
    let keys = trusted_keys(&args, &builder).await?;
    let (card, verified) = resolver
        .verify_with(keys, form)
        .resolve_verified(&args.url)
        .await?;
    ui.card(&card);
    eprintln!(
        "a2a: signature {} verified: kid {}, {}",
        verified.index,
        verified.kid.as_deref().unwrap_or("(none)"),
        verified.algorithm
    );
    Ok(Outcome::Done)
}
