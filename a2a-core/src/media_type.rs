//! Which media types an agent accepts: the one rule behind `ContentTypeNotSupportedError`.

use crate::AgentCard;

/// The essence of a media type: `text/plain; charset=utf-8` → `text/plain`.
fn essence(media_type: &str) -> &str {
    media_type.split(';').next().unwrap_or_default().trim()
}

/// Whether `media_type` is covered by the declared `mode`: equal ignoring case and parameters,
/// or matched by a `type/*` or `*/*` wildcard.
pub fn media_type_matches(mode: &str, media_type: &str) -> bool {
    let (mode, media_type) = (essence(mode), essence(media_type));
    if mode == "*/*" || mode.eq_ignore_ascii_case(media_type) {
        return true;
    }
    mode.strip_suffix("/*").is_some_and(|ty| {
        media_type
            .split_once('/')
            .is_some_and(|(t, _)| t.eq_ignore_ascii_case(ty))
    })
}

impl AgentCard {
    /// Whether a part of `media_type` may be sent to this agent: it matches one of the card's
    /// `defaultInputModes` or one of a skill's `inputModes` (a request does not say which skill
    /// it is for). A card that declares no input modes at all accepts anything.
    pub fn accepts_input(&self, media_type: &str) -> bool {
        let mut modes = self
            .default_input_modes
            .iter()
            .chain(self.skills.iter().flat_map(|s| s.input_modes.iter()))
            .peekable();
        modes.peek().is_none() || modes.any(|m| media_type_matches(m, media_type))
    }

    /// Every input mode the card declares (defaults first, then the skills', without repeats).
    pub fn input_modes(&self) -> Vec<&str> {
        let mut all: Vec<&str> = Vec::new();
        for m in self
            .default_input_modes
            .iter()
            .chain(self.skills.iter().flat_map(|s| s.input_modes.iter()))
        {
            if !all.contains(&m.as_str()) {
                all.push(m);
            }
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::media_type_matches;
    use crate::{AgentCard, AgentSkill};

    #[test]
    fn modes_match_by_essence_case_and_wildcards() {
        for (mode, mt, expected) in [
            ("text/plain", "text/plain", true),
            ("text/plain", "Text/Plain; charset=utf-8", true),
            ("text/plain; charset=utf-8", "text/plain", true),
            ("text/plain", "text/markdown", false),
            ("text/*", "text/markdown", true),
            ("image/*", "text/markdown", false),
            ("*/*", "application/octet-stream", true),
            ("application/json", "application/json+x", false),
            ("text/*", "text", false),
        ] {
            assert_eq!(media_type_matches(mode, mt), expected, "{mode} ~ {mt}");
        }
    }

    #[test]
    fn a_card_accepts_its_defaults_and_its_skills_modes() {
        let card = AgentCard::builder("a", "b")
            .input_modes(["text/plain"])
            .skill(AgentSkill::new("s", "S", "d").with_input_modes(["image/*"]))
            .build();
        assert!(card.accepts_input("text/plain"));
        assert!(card.accepts_input("image/png"));
        assert!(!card.accepts_input("application/pdf"));
        assert_eq!(card.input_modes(), ["text/plain", "image/*"]);
        let open = AgentCard::builder("a", "b")
            .input_modes(Vec::<String>::new())
            .build();
        assert!(open.accepts_input("application/pdf"), "no modes: anything");
    }
}
