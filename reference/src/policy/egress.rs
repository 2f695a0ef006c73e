//! The egress mode, and the footer sentence every page carries (§3.6, §8.3, §8.9).
//!
//! With AI off, no document leaves this instance, and the footer says exactly
//! that. With AI on (`MEMORIA_AI=on`, a team owner's choice), the footer says
//! what leaves, to whom, and for what: the text of each search and every
//! passage when it is indexed, to TensorX at `api.tensorx.ai`, to be embedded
//! by the pinned model (§3.2, §8.3). The footer is rendered from the mode,
//! never hard-coded in a template, so it cannot lag the mode (gate 38).

/// What this instance may send outside itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EgressMode {
    /// AI off: nothing leaves the instance, at query time or at ingest (§3.2, decision 5).
    #[default]
    AiOff,
    /// AI on: search text and every passage at ingest are sent to the one
    /// provider, TensorX, to be embedded (§3.2, §7.2, §8.3).
    AiOn,
}

impl EgressMode {
    /// Whether this mode embeds: AI on sends search text and passages to
    /// the provider (§8.3); AI off sends nothing.
    pub fn embeds(self) -> bool {
        matches!(self, EgressMode::AiOn)
    }

    /// The footer sentence stating this mode, for every page (gate 38). The
    /// AI-on sentence names the provider, its host and the model id
    /// (`crate::ai::provider`'s constants; a test holds them equal).
    pub fn footer(self) -> &'static str {
        match self {
            EgressMode::AiOff => {
                "Egress: AI is off. No document leaves this instance: memoria searches your content where it sits."
            }
            EgressMode::AiOn => {
                "Egress: AI is on. The text of every search, and every passage when it is indexed, is sent to TensorX (api.tensorx.ai) to be embedded by the model qwen/qwen3-embedding-8b. To write an answer above a search's results, the search's text and its top eight passages are sent to TensorX's deepseek/deepseek-v4-flash-0731 or deepseek/deepseek-v4-pro-0813 (the answer names which); a search that asks for a postal address, live searches included, sends its top eight passages to deepseek/deepseek-v4-flash-0731 to find one. TensorX can read what it receives; nothing else leaves this instance."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::provider::{EMBED_MODEL, PROVIDER_HOST, PROVIDER_NAME};

    #[test]
    fn the_ai_on_footer_names_the_provider_its_host_and_every_model_in_use() {
        let f = EgressMode::AiOn.footer();
        for named in [
            PROVIDER_NAME,
            PROVIDER_HOST,
            EMBED_MODEL,
            crate::ai::provider::MODEL_CHEAP,
            crate::ai::provider::MODEL_FRONTIER,
        ] {
            assert!(f.contains(named), "the AI-on footer names {named}");
        }
        assert!(f.contains("search") && f.contains("passage"));
        assert!(!EgressMode::AiOff.footer().contains(PROVIDER_NAME));
    }
}
