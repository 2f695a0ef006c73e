//! The model half's pure logic against hand-made ruled results: what is sent, which replies are refused whole, and §8.9's six checks per proposal (§8.9).

use super::*;
use crate::search::facts::Kind;
use crate::search::highlight::Snippet;

fn result(rank: usize, title: &str, text: &str) -> SearchResult {
    SearchResult {
        rank,
        app: "memoria".into(),
        document_id: format!("doc{rank}"),
        title: title.into(),
        trail: vec![],
        ordinal: 0,
        marker: "👨",
        revision: 1,
        date: "2026-09-21".into(),
        date_kind: crate::date::DateKind::Imported,
        date_at: 0,
        link: format!("/documents/doc{rank}#p0"),
        snippet: Snippet {
            cut_before: false,
            segments: vec![],
            cut_after: false,
        },
        provenance: None,
        text: text.into(),
    }
}

fn reply(text: &str) -> ChatReply {
    ChatReply {
        text: text.into(),
        finish: FinishReason::Stop,
    }
}

fn proposal(passage: u64, text: &str) -> Proposal {
    Proposal {
        passage,
        text: text.into(),
    }
}

const ADDRESS: &str = "12 Harcourt Street, Dublin 2";

fn rows(sent: &[Sent<'_>], proposals: &[Proposal]) -> Vec<(String, String, String)> {
    model_box(ModelKind::Address, sent, proposals, ChatModels::PINNED)
        .facts
        .map(|b| {
            b.rows
                .into_iter()
                .map(|r| (r.label, r.value, r.link))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_allowlist_is_exactly_the_address_and_the_lexicon_primes_it_apart_from_the_validated_kinds() {
    assert_eq!(MODEL_KINDS, [ModelKind::Address]);
    let q = super::super::FactQuery::parse("office phone number and postal address");
    assert_eq!(q.kinds, [Kind::Phone]);
    assert_eq!(q.models, [ModelKind::Address]);
    let q = super::super::FactQuery::parse("support email address");
    assert_eq!(q.kinds, [Kind::Email]);
    assert!(q.models.is_empty(), "email address primes email only");
    assert!(
        super::super::FactQuery::parse("phone vat iban eircode email")
            .models
            .is_empty()
    );
}

#[test]
fn at_most_the_top_eight_by_rank_are_sent_and_a_gone_one_is_never_refilled() {
    let results: Vec<SearchResult> = (1..=12).map(|r| result(r, &format!("T{r}"), "x")).collect();
    let all: Vec<usize> = select(&results, |_| true).iter().map(|s| s.index).collect();
    assert_eq!(all, [1, 2, 3, 4, 5, 6, 7, 8]);
    let thinned: Vec<usize> = select(&results, |r| r.rank != 1)
        .iter()
        .map(|s| s.index)
        .collect();
    assert_eq!(
        thinned,
        [2, 3, 4, 5, 6, 7, 8],
        "result nine does not move up"
    );
    let page_two: Vec<SearchResult> = (21..=25).map(|r| result(r, "T", "x")).collect();
    assert!(select(&page_two, |_| true).is_empty());
}

#[test]
fn a_passage_is_sent_with_its_index_and_nothing_else_about_it() {
    let results = [
        result(1, "Secret title", "First passage."),
        result(2, "Other", "Second."),
    ];
    let sent = select(&results, |_| true);
    let p = prompt(&sent);
    assert_eq!(p.question, MODEL_QUESTION);
    let ids: Vec<(&str, &str)> = p
        .passages
        .iter()
        .map(|c| (c.id.as_str(), c.text.as_str()))
        .collect();
    assert_eq!(ids, [("1", "First passage."), ("2", "Second.")]);
    let body = crate::ai::chat::encode_chat_request("m", &p).unwrap();
    let body = String::from_utf8(body.to_vec()).unwrap();
    assert!(
        !body.contains("Secret title") && !body.contains("doc1"),
        "{body}"
    );
}

#[test]
fn a_reply_is_the_list_and_nothing_else_or_it_is_refused_whole() {
    let ok = decode_reply(&reply(&format!(
        " [{{\"passage\": 1, \"text\": \"{ADDRESS}\"}}]\n"
    )))
    .unwrap();
    assert_eq!(ok, [proposal(1, ADDRESS)]);
    assert_eq!(decode_reply(&reply("[]")).unwrap(), []);
    for bad in [
        "Here you are: []",
        "```json\n[]\n```",
        r#"[{"passage": 1, "text": "x", "why": "it looks like one"}]"#,
        r#"[{"passage": "1", "text": "x"}]"#,
        r#"[{"passage": -1, "text": "x"}]"#,
        r#"[{"passage": 1}]"#,
        r#"{"passage": 1, "text": "x"}"#,
        r#"[{"passage": 1, "text": "x"}"#,
    ] {
        assert!(
            matches!(decode_reply(&reply(bad)), Err(ReplyError::Malformed { .. })),
            "{bad}"
        );
    }
    let cut = ChatReply {
        text: format!("[{{\"passage\": 1, \"text\": \"{ADDRESS}\"}}]"),
        finish: FinishReason::Length,
    };
    assert_eq!(decode_reply(&cut), Err(ReplyError::Truncated));
    let filtered = ChatReply {
        finish: FinishReason::Other,
        ..cut
    };
    assert_eq!(decode_reply(&filtered), Err(ReplyError::Unfinished));
    let many = format!(
        "[{}]",
        vec![format!("{{\"passage\":1,\"text\":\"{ADDRESS}\"}}"); MODEL_PROPOSALS_MAX + 1]
            .join(",")
    );
    assert_eq!(
        decode_reply(&reply(&many)),
        Err(ReplyError::TooManyProposals {
            proposals: MODEL_PROPOSALS_MAX + 1
        })
    );
    assert!(!ReplyError::Truncated.to_string().contains("Harcourt"));
}

#[test]
fn each_check_refuses_what_it_names() {
    let text = "Visit us at 12 Harcourt Street, Dublin 2 on Monday.\nWrite to harcourt.street.dublin2@example.ie or call +353 1 547 7854.\nSee\u{a0}12 Main St, Cork 3 or \u{201c}The Yard, 4 Mill Lane\u{201d}.";
    let results = [result(1, "Office", text)];
    let sent = select(&results, |_| true);
    let check = |p: u64, t: &str| locate(&proposal(p, t), &sent);
    assert!(check(1, ADDRESS).is_ok(), "presence");
    assert_eq!(check(9, ADDRESS), Err(Refusal::NotSent));
    assert_eq!(check(0, ADDRESS), Err(Refusal::NotSent));
    assert_eq!(check(1, ""), Err(Refusal::Empty));
    assert_eq!(check(1, "Dublin 2"), Err(Refusal::TooShort));
    assert_eq!(check(1, "Harcourt Street"), Err(Refusal::Unstructured));
    assert_eq!(
        check(1, "12 harcourt street, dublin 2"),
        Err(Refusal::NotFound)
    );
    assert_eq!(
        check(1, "See 12 Main St, Cork 3"),
        Err(Refusal::NotFound),
        "NBSP"
    );
    assert_eq!(
        check(1, "\"The Yard, 4 Mill Lane\""),
        Err(Refusal::NotFound),
        "curly quotes"
    );
    assert_eq!(
        check(1, "Dublin 2 on Monday. Write to"),
        Err(Refusal::NotFound),
        "a line break flattened to a space"
    );
    assert_eq!(
        check(1, "2 Harcourt Street, Dublin 2"),
        Err(Refusal::SplitsAWord)
    );
    assert_eq!(
        check(1, "harcourt.street.dublin2"),
        Err(Refusal::InRecognisedSpan),
        "a street name inside an email address is not an address"
    );
    assert_eq!(
        check(1, "dublin2@example.ie or call"),
        Err(Refusal::InRecognisedSpan)
    );
}

#[test]
fn the_first_occurrence_by_byte_offset_is_the_one_whatever_the_provider_order() {
    let text = format!("Old office: {ADDRESS}.\nNew office: {ADDRESS}.");
    let results = [result(1, "Office", &text)];
    let sent = select(&results, |_| true);
    let c = locate(&proposal(1, ADDRESS), &sent).unwrap();
    assert_eq!((c.start, c.end), (12, 12 + ADDRESS.len()));
    assert_eq!(
        rows(&sent, &[proposal(1, ADDRESS)]),
        [(
            "Old office".to_string(),
            ADDRESS.to_string(),
            "/documents/doc1#p0".to_string()
        )]
    );
}

#[test]
fn the_same_bytes_in_two_passages_are_one_row_cited_to_the_better_ranked() {
    let results = [
        result(1, "Office", &format!("Head office: {ADDRESS}")),
        result(2, "Old", &format!("Post: {ADDRESS}")),
    ];
    let sent = select(&results, |_| true);
    // The provider's order is not the rank order: rank decides.
    let got = rows(&sent, &[proposal(2, ADDRESS), proposal(1, ADDRESS)]);
    assert_eq!(
        got,
        [(
            "Head office".to_string(),
            ADDRESS.to_string(),
            "/documents/doc1#p0".to_string()
        )]
    );
}

#[test]
fn the_displayed_span_is_the_documents_slice_and_the_label_skips_a_recognised_span() {
    let text = format!("Call +353 1 547 7854 - {ADDRESS}");
    let results = [result(1, "Office", &text)];
    let sent = select(&results, |_| true);
    let b = model_box(
        ModelKind::Address,
        &sent,
        &[proposal(1, ADDRESS)],
        ChatModels::PINNED,
    );
    let facts = b.facts.unwrap();
    assert_eq!(facts.kind, Kind::Address);
    assert_eq!(
        facts.attribution,
        Attribution::Model {
            provider: "TensorX",
            model: "deepseek/deepseek-v4-flash-0731"
        }
    );
    assert_eq!(facts.rows[0].value, ADDRESS);
    // The run after the phone number is " - ": empty, so the title.
    assert_eq!(facts.rows[0].label, "Office");
    assert!(facts.narrowed.is_none());
}

#[test]
fn four_accepted_addresses_render_nothing_and_three_render() {
    let addresses = [
        "1 Main Street, Cork",
        "2 Main Street, Cork",
        "3 Main Street, Cork",
        "4 Main Street, Cork",
    ];
    let text: String = addresses
        .iter()
        .enumerate()
        .map(|(i, a)| format!("Site {i}: {a}\n"))
        .collect();
    let results = [result(1, "Sites", &text)];
    let sent = select(&results, |_| true);
    let all: Vec<Proposal> = addresses.iter().map(|a| proposal(1, a)).collect();
    assert_eq!(rows(&sent, &all[..3]).len(), 3);
    let four = model_box(ModelKind::Address, &sent, &all, ChatModels::PINNED);
    assert_eq!(four.located, 4);
    assert!(
        four.facts.is_none(),
        "over the cap: nothing, and no narrowing"
    );
}

#[test]
fn a_colliding_citation_line_and_an_over_long_label_silence_the_kind() {
    let results = [result(
        1,
        "Sites",
        "1 Main Street, Cork\n2 Main Street, Cork\n",
    )];
    let sent = select(&results, |_| true);
    let both = [
        proposal(1, "1 Main Street, Cork"),
        proposal(1, "2 Main Street, Cork"),
    ];
    assert!(rows(&sent, &both).is_empty(), "both fall to the title");
    let long = format!(
        "{}: {ADDRESS}",
        "The office we moved out of years ago and must never be given out"
    );
    let results = [result(1, "Office", &long)];
    let sent = select(&results, |_| true);
    assert!(rows(&sent, &[proposal(1, ADDRESS)]).is_empty());
}

#[test]
fn identical_proposals_are_checked_once_and_counted_once() {
    let results = [result(1, "Office", &format!("Office: {ADDRESS}"))];
    let sent = select(&results, |_| true);
    let b = model_box(
        ModelKind::Address,
        &sent,
        &[
            proposal(1, ADDRESS),
            proposal(1, ADDRESS),
            proposal(1, "Dublin"),
            proposal(1, "Dublin"),
        ],
        ChatModels::PINNED,
    );
    assert_eq!(b.located, 1);
    assert_eq!(b.refused, BTreeMap::from([(Refusal::TooShort, 1)]));
}

#[test]
fn every_failure_line_names_the_provider_and_quotes_nothing() {
    let lines: Vec<String> = [
        ModelFailure::Provider(ChatErrorKind::Deadline),
        ModelFailure::Provider(ChatErrorKind::Unreachable),
        ModelFailure::Provider(ChatErrorKind::Unavailable),
        ModelFailure::Provider(ChatErrorKind::Malformed),
        ModelFailure::Provider(ChatErrorKind::Input),
        ModelFailure::Reply(ReplyError::Truncated),
        ModelFailure::Reply(ReplyError::Unfinished),
        ModelFailure::Reply(ReplyError::TooManyProposals { proposals: 65 }),
    ]
    .iter()
    .map(ModelFailure::sentence)
    .collect();
    for l in &lines {
        assert!(l.contains("TensorX"), "{l}");
    }
    expect_test::expect![[r#"
        [
            "TensorX did not answer the address search within 800 ms, so no addresses from it are shown.",
            "TensorX could not be reached for the address search, so no addresses from it are shown.",
            "TensorX was unavailable for the address search, so no addresses from it are shown.",
            "TensorX sent a reply that is not a chat completion, so no addresses from it are shown.",
            "The address search was not sent to TensorX: these passages are over its size limit. No addresses are shown.",
            "TensorX's reply to the address search was cut off, so none of it is used.",
            "TensorX's reply to the address search did not finish, so none of it is used.",
            "TensorX's reply to the address search was not the list asked for, so none of it is used.",
        ]
    "#]]
    .assert_debug_eq(&lines);
}
