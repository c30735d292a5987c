//! `a2a check` and `a2a card --verify` end to end: the built binary against a server started
//! in the test, with the exit codes of `src/bin/a2a/main.rs`.

mod common;
#[path = "support/cli.rs"]
mod run;

use common::TestServer;
use run::a2a;

#[tokio::test]
async fn check_exits_0_when_every_must_holds_and_reports_in_json() {
    let server = TestServer::demo().await;
    let run = a2a(&["check", &server.url, "--rate", "500"]).await;
    run.expect_code(0);
    assert!(run.stdout.contains("every MUST holds"), "{}", run.stdout);
    assert!(run.stdout.contains("JSONRPC"), "{}", run.stdout);

    let run = a2a(&[
        "--json",
        "--binding",
        "rest",
        "check",
        &server.url,
        "--rate",
        "500",
        "--only",
        "errors",
    ])
    .await;
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["passed"], true, "{report:#}");
    let findings = report["findings"].as_array().expect("findings");
    assert!(!findings.is_empty());
    for f in findings {
        assert_eq!(f["group"], "errors", "{f:#}");
        assert_eq!(f["binding"], "HTTP+JSON", "{f:#}");
        assert!(
            f["section"].as_str().is_some_and(|s| !s.is_empty()),
            "{f:#}"
        );
    }
}

#[tokio::test]
async fn check_exits_1_when_it_cannot_check_and_2_on_a_bad_group() {
    // Credentials required and none given: nothing past the card can be checked.
    let server = TestServer::start(a2a_server::demo::DemoAgent, |b| {
        b.agent_card(a2a_server::demo::DemoAgent::card())
            .authenticator(a2a_server::auth::BearerTokens::each_its_own(["t0k"]))
    })
    .await;
    let run = a2a(&["check", &server.url, "--rate", "500"]).await;
    run.expect_code(1);
    assert!(run.stdout.contains("incomplete"), "{}", run.stdout);
    assert!(run.stdout.contains("--token"), "{}", run.stdout);
    // With the token every MUST holds, the auth checks included.
    let run = a2a(&["check", &server.url, "--rate", "500", "--token", "t0k"]).await;
    run.expect_code(0);
    assert!(
        run.stdout.contains("pass MUST   JSONRPC   auth.required"),
        "{}",
        run.stdout
    );

    let run = a2a(&["check", &server.url, "--only", "cards"]).await;
    run.expect_code(2);
    assert!(
        run.stderr.contains("one of card, interfaces"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn card_verify_says_which_key_signed_and_exits_1_when_none_it_trusts_did() {
    let (server, kid, public_pem) = common::signed_demo_server().await;
    let jwks = format!("{}/.well-known/jwks.json", server.url);

    // Trusting the agent's JWK set, or its public key in a PEM file.
    let run = a2a(&["card", &server.url, "--verify", "--jwks", &jwks]).await;
    run.expect_code(0);
    assert!(
        run.stderr.contains(&format!("verified: kid {kid}, ES256")),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("a2a-rust demo agent"), "{}", run.stdout);
    let dir = tempfile::tempdir().expect("a temp dir");
    let public = dir.path().join("agent.pub.pem");
    std::fs::write(&public, public_pem).expect("write");
    let run = a2a(&["card", &server.url, "--key", public.to_str().expect("path")]).await;
    run.expect_code(0);

    // Trusting another key: exit 1, saying why.
    let other = dir.path().join("other.pub.pem");
    std::fs::write(&other, common::unrelated_public_pem()).expect("write");
    let run = a2a(&["card", &server.url, "--key", other.to_str().expect("path")]).await;
    run.expect_code(1);
    assert!(run.stderr.contains("is not trusted"), "{}", run.stderr);
    assert!(run.stderr.contains("does not match"), "{}", run.stderr);

    // --verify without keys to trust is a usage error.
    let run = a2a(&["card", &server.url, "--verify"]).await;
    run.expect_code(2);
    assert!(
        run.stderr.contains("--jwks URL or --key FILE"),
        "{}",
        run.stderr
    );
}
