//! `CardResolver::find` with a `SkillQuery`: picking the right agent among several by skill id,
//! tag and media types, skipping agents that cannot be reached.

mod common;

use a2a_client::{CardResolver, Client, Error, SkillQuery};
use a2a_core::{AgentCard, AgentSkill, TaskState};
use a2a_server::demo::DemoAgent;
use common::{TestServer, task_of, within};

/// Three agents (all running the demo agent behind different cards).
struct Agents {
    echo: TestServer,
    translator: TestServer,
    painter: TestServer,
}

async fn agents() -> Agents {
    let translator = AgentCard::builder("Translator", "Translates text")
        .skill(
            AgentSkill::new("translate", "Translate", "Into any language")
                .with_tags(["language", "text"]),
        )
        .build();
    let painter = AgentCard::builder("Painter", "Draws pictures")
        .skill(
            AgentSkill::new("draw", "Draw", "Draws what you describe")
                .with_tags(["image"])
                .with_output_modes(["image/png"]),
        )
        .build();
    Agents {
        echo: TestServer::demo().await,
        translator: TestServer::start(DemoAgent, |b| b.agent_card(translator)).await,
        painter: TestServer::start(DemoAgent, |b| b.agent_card(painter)).await,
    }
}

impl Agents {
    fn urls(&self) -> [&str; 3] {
        [
            self.echo.url.as_str(),
            self.translator.url.as_str(),
            self.painter.url.as_str(),
        ]
    }
}

fn resolver() -> CardResolver {
    CardResolver::new(reqwest::Client::new(), Default::default())
}

async fn find(urls: &[&str], query: &SkillQuery) -> Result<(String, AgentCard), Error> {
    within("find", resolver().find(urls, query)).await
}

#[tokio::test]
async fn a_skill_id_picks_the_agent_that_has_it() {
    let agents = agents().await;
    let (url, card) = find(&agents.urls(), &SkillQuery::new().skill("translate"))
        .await
        .expect("found");
    assert_eq!(url, agents.translator.url);
    assert_eq!(card.name, "Translator");

    let (url, _) = find(&agents.urls(), &SkillQuery::new().skill("countdown"))
        .await
        .expect("found");
    assert_eq!(url, agents.echo.url);
}

#[tokio::test]
async fn tags_and_media_types_pick_the_agent_that_fits() {
    let agents = agents().await;
    let (url, _) = find(&agents.urls(), &SkillQuery::new().tag("image"))
        .await
        .expect("by tag");
    assert_eq!(url, agents.painter.url);

    let (url, _) = find(&agents.urls(), &SkillQuery::new().output_mode("image/png"))
        .await
        .expect("by output mode");
    assert_eq!(url, agents.painter.url);

    // The translator's skill takes the card's default input modes (text/plain).
    let query = SkillQuery::new().tag("language").input_mode("text/plain");
    let (url, _) = find(&agents.urls(), &query)
        .await
        .expect("by tag and input");
    assert_eq!(url, agents.translator.url);

    // Every criterion must hold for the same skill.
    let err = find(
        &agents.urls(),
        &SkillQuery::new().tag("image").skill("translate"),
    )
    .await
    .expect_err("no skill has both");
    assert!(matches!(err, Error::NoCompatibleInterface(_)), "{err}");
}

#[tokio::test]
async fn the_first_matching_agent_in_the_given_order_wins() {
    let agents = agents().await;
    let query = SkillQuery::new().input_mode("text/plain");
    let (url, _) = find(&agents.urls(), &query).await.expect("found");
    assert_eq!(url, agents.echo.url);
    let reversed = [agents.painter.url.as_str(), agents.echo.url.as_str()];
    let (url, _) = find(&reversed, &query).await.expect("found");
    assert_eq!(url, agents.painter.url);
}

#[tokio::test]
async fn unreachable_agents_are_skipped_and_no_match_is_an_error_naming_them() {
    let agents = agents().await;
    let gone = common::unreachable_url().await;
    let urls = [gone.as_str(), agents.translator.url.as_str()];
    let (url, _) = find(&urls, &SkillQuery::new().skill("translate"))
        .await
        .expect("the reachable one");
    assert_eq!(url, agents.translator.url);

    let err = find(&urls, &SkillQuery::new().skill("fly"))
        .await
        .expect_err("nobody flies");
    let Error::NoCompatibleInterface(why) = &err else {
        panic!("{err}");
    };
    assert!(why.contains(&gone), "{why}");
}

#[tokio::test]
async fn the_card_found_builds_a_client_for_that_agent() {
    let agents = agents().await;
    let (_, card) = find(&agents.urls(), &SkillQuery::new().skill("draw"))
        .await
        .expect("found");
    let client = Client::builder().build_from_card(card).expect("client");
    let task = task_of(
        within("send", client.send_text("a cat"))
            .await
            .expect("send"),
    );
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(agents.painter.seen.calls().len(), 1);
    assert!(agents.echo.seen.calls().is_empty());
}
