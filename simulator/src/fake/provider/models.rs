//! The stub provider's fake chat models: the reply to an answer request answered apart, and the extractive stand-in that quotes and cites the passages it was sent (the demo's stand-in for a model, NOT one).

/// The reply to an answer request answered apart: it cites nothing, so
/// memoria drops it whole and says so.
pub const STUB_ANSWER_APART_REPLY: &str = "The stub answers memoria's answers apart.";

/// How many passages [`extractive_reply`] quotes.
pub const STUB_EXTRACTIVE_PASSAGES_MAX: usize = 3;

/// The extractive stand-in's reply to `messages`: for each of the first
/// [`STUB_EXTRACTIVE_PASSAGES_MAX`] `[id] text` paragraphs of the user
/// message (memoria's prompt shape, `memoria::encode_chat_request`), the
/// text's first sentence followed by `[id]`. `None` if the message holds
/// no such paragraph.
pub fn extractive_reply(messages: &[serde_json::Value]) -> Option<String> {
    let system = messages
        .iter()
        .find(|m| m.get("role").and_then(|r| r.as_str()) == Some("system"))
        .and_then(|m| m.get("content")?.as_str())
        .unwrap_or_default();
    if system.contains("postal addresses") {
        return Some(address_reply(messages));
    }
    let user = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(|r| r.as_str()) == Some("user"))?
        .get("content")?
        .as_str()?;
    let mut out = Vec::new();
    for para in user.split("\n\n") {
        let Some(rest) = para.strip_prefix('[') else {
            continue;
        };
        let Some((id, text)) = rest.split_once("] ") else {
            continue;
        };
        let flat = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join(" ");
        let first = flat
            .split_inclusive(". ")
            .next()
            .unwrap_or(&flat)
            .trim()
            .trim_end_matches('.');
        if !first.is_empty() {
            out.push(format!("{first} [{id}]."));
        }
        if out.len() == STUB_EXTRACTIVE_PASSAGES_MAX {
            break;
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// The extractive stand-in's answer to §8.9's address request (memoria's
/// `MODEL_INSTRUCTIONS`): a JSON list of `{"passage", "text"}` for every
/// line of a sent passage that opens with a house number and a capitalised
/// word and holds a comma ("14 Grand Canal Quay, Dublin 2, D02 X7K4"),
/// trimmed. A pattern, NOT a model: it lets the demo show a located
/// address; it finds nothing else and proves nothing about extraction.
fn address_reply(messages: &[serde_json::Value]) -> String {
    let user = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(|r| r.as_str()) == Some("user"))
        .and_then(|m| m.get("content")?.as_str())
        .unwrap_or_default();
    // A passage runs from its `[n] ` paragraph to the next one (its own
    // blank lines included), and the question ends the last.
    let mut passages: Vec<(u64, String)> = Vec::new();
    for para in user.split("\n\n") {
        if para.starts_with("Question: ") {
            break;
        }
        let opened = para
            .strip_prefix('[')
            .and_then(|r| r.split_once("] "))
            .and_then(|(id, text)| Some((id.parse::<u64>().ok()?, text)));
        match (opened, passages.last_mut()) {
            (Some((index, text)), _) => passages.push((index, text.to_owned())),
            (None, Some((_, text))) => {
                text.push_str("\n\n");
                text.push_str(para);
            }
            (None, None) => {}
        }
    }
    let mut found = Vec::new();
    for (index, text) in &passages {
        let index = *index;
        for line in text.lines().map(str::trim) {
            let mut words = line.split(' ');
            let number = words
                .next()
                .is_some_and(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit()));
            let named = words
                .next()
                .is_some_and(|w| w.chars().next().is_some_and(char::is_uppercase));
            if number && named && line.contains(',') {
                found.push(serde_json::json!({"passage": index, "text": line}));
            }
        }
    }
    serde_json::Value::Array(found).to_string()
}
