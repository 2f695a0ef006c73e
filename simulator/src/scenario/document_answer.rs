//! What only a document's answer can show wrong, read by the explorer's document judge (`documents.rs`, `[safety:document]`): each passage's anchor against its label, a withheld document's count, an absent answer against an id never held's, and the refusal a 404 needs (§4.1, §8.1, §8.4, §8.8).
//!
//! - A passage shown is anchored `#p{n}`, `n` the number its label shows:
//!   on the document page its `section.passage` id and its label's link,
//!   over the MCP `document` tool its link's fragment (§8.8's citation
//!   `/documents/{id}#p{n}`; `reference/src/mcp.rs`: "`passage 2` is
//!   `#p2`").
//! - A sibling's document withheld is one pair ruled, and one result
//!   withheld in one line, however many passages it holds (§4.1's table:
//!   withheld loudly, each counted once; gate 6: "1 result withheld").
//! - A sibling's document answered absent answers exactly what an id
//!   memoria never held answers, asked by the same person at once on the
//!   same surface: status, every header but the instant's, body (§4.1:
//!   NOT_VISIBLE is the one silent value, and no answer may tell which
//!   ids exist: suite gate 3's byte-identical answer, as §4.1 cites it).
//!   The explorer draws the second request (`explore/absent_alike.rs`).
//! - A sibling's document answers 404 only where every S2 call of the
//!   request refused it as memoria's decoder read the call ([`refused`]:
//!   NOT_VISIBLE on the wire, a malformation that left its pair as
//!   answered included; §4.1, gate 6).

use memoria_page::Page;

use std::collections::BTreeMap;

use super::checks::Check;
use super::documents::{Opened, SAFETY_DOCUMENT, Target};
use super::oracle::on_the_wire;
use crate::fake::server::FakeSibling;
use crate::fake::trace::TraceEvent;

/// One passage's label and the anchors a reader follows to it (§8.4,
/// §8.8: a citation is `/documents/{id}#p{n}`, `n` the passage's number,
/// from 1, as its label shows it; `reference/src/mcp.rs`'s doc: "`passage
/// 2` is `#p2`").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Anchor {
    /// The number the label shows (`Passage 2`, the tool's `number`);
    /// `None` when no number can be read.
    pub(super) number: Option<i64>,
    /// The anchors that lead to it, without `#`.
    pub(super) names: Vec<String>,
}

/// An id memoria never held: 32 hex digits, the shape of a document id
/// (§9.1's `/documents/{id}`), all zero, where memoria draws its ids from
/// 16 random bytes (one chance in 2^128 of meeting it).
pub const NEVER_HELD_ID: &str = "00000000000000000000000000000000";

/// Headers that differ between two responses whatever they answer: the
/// instant they were sent.
const PER_RESPONSE_HEADERS: [&str; 1] = ["date"];

/// The anchors of a document page's `body` ([`Anchor`]).
pub(super) fn page_anchors(body: &str) -> Vec<Anchor> {
    let page = Page::parse(body);
    let ids: Vec<String> = page
        .tags("section.passage")
        .into_iter()
        .map(|t| {
            t.attrs
                .into_iter()
                .find(|(k, _)| k == "id")
                .map(|(_, v)| v)
                .unwrap_or_default()
        })
        .collect();
    let labels = page.links("section.passage > p.meta > a[href^=\"#\"]");
    ids.into_iter()
        .enumerate()
        .map(|(k, id)| {
            let label = labels.get(k);
            Anchor {
                number: label.and_then(|l| {
                    l.text
                        .strip_prefix("Passage ")
                        .and_then(|n| n.trim().parse().ok())
                }),
                names: std::iter::once(id)
                    .chain(label.map(|l| l.href.trim_start_matches('#').to_string()))
                    .collect(),
            }
        })
        .collect()
}

/// The anchors of the MCP `document` tool's `json` ([`Anchor`]).
pub(super) fn tool_anchors(json: Option<&serde_json::Value>) -> Vec<Anchor> {
    json.and_then(|j| j.get("passages"))
        .and_then(|p| p.as_array())
        .map(|ps| {
            ps.iter()
                .map(|p| Anchor {
                    number: p.get("number").and_then(serde_json::Value::as_i64),
                    names: p
                        .get("link")
                        .and_then(|l| l.as_str())
                        .map(|l| l.rsplit_once('#').map_or("", |(_, a)| a).to_string())
                        .into_iter()
                        .collect(),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn fail(what: String, saw: String) -> Check {
    Check {
        expected: format!("{SAFETY_DOCUMENT} {what}"),
        actual: saw,
        ok: false,
    }
}

/// Judges the anchors of a document shown, and the count of a sibling's
/// document withheld, in `opened` of `target` (module docs). Returns the
/// failed checks only.
pub(super) fn judge_answer(target: &Target, opened: &Opened) -> Vec<Check> {
    let mut out = vec![];
    let shown = opened.seen.shown.first();
    // A link names the number its label shows: `#p{n}` is the passage
    // labelled n (§8.4, §8.8's `/documents/{id}#p{n}`).
    if opened.status == 200
        && let Some((k, a)) = opened.anchors.iter().enumerate().find(|(_, a)| {
            a.names.is_empty()
                || a.names
                    .iter()
                    .any(|n| a.number.is_none_or(|num| *n != format!("p{num}")))
        })
    {
        out.push(fail(
            "each passage's anchor names the number its label shows, `#p{n}` for passage n (§8.4, §8.8)".into(),
            format!(
                "passage {} of {} labelled {:?}, its anchors {:?}",
                k + 1,
                opened.anchors.len(),
                a.number,
                a.names
            ),
        ));
    }
    // A sibling's document withheld is one pair ruled and one result
    // withheld, however many passages it holds (§4.1: each withheld
    // result counted exactly once; gate 6: "1 result withheld").
    if matches!(target, Target::Sibling { .. })
        && shown.is_none()
        && !opened.seen.withheld.is_empty()
    {
        let total: usize = opened.seen.withheld.iter().map(|(_, _, n)| n).sum();
        if total != 1 {
            out.push(fail(
                "a sibling's document withheld counts one result, in one line, however many passages it holds (§4.1, §8.1)".into(),
                format!(
                    "{} lines counting {total} (the document holds {} passages)",
                    opened.seen.withheld.len(),
                    opened.passages
                ),
            ));
        }
    }
    out
}

/// Judges a sibling's document answered absent (`opened`) against what the
/// same person got, on the same surface and session, at once, for
/// [`NEVER_HELD_ID`] (`never`): the same status, every header but the
/// instant's ([`PER_RESPONSE_HEADERS`]), the same body, or for the MCP
/// tool the same text and JSON (§4.1: NOT_VISIBLE is the silent value,
/// and no answer may tell which ids exist, suite gate 3 as §4.1 cites it;
/// §6.1's S3 "404s, never 403s"). Returns
/// the failed checks, plus one passing summary.
pub(super) fn judge_absent_alike(opened: &Opened, never: &Opened) -> Vec<Check> {
    let kept = |o: &Opened| -> Vec<(String, String)> {
        let mut h: Vec<(String, String)> = o
            .headers
            .iter()
            .filter(|(k, _)| !PER_RESPONSE_HEADERS.contains(&k.as_str()))
            .cloned()
            .collect();
        h.sort();
        h
    };
    let (a, b) = (kept(opened), kept(never));
    let differs = if opened.status != never.status {
        Some(format!("status {} against {}", opened.status, never.status))
    } else if a != b {
        let only: Vec<&String> = a
            .iter()
            .filter(|h| !b.contains(h))
            .chain(b.iter().filter(|h| !a.contains(h)))
            .map(|(k, _)| k)
            .collect();
        Some(format!("headers differ: {only:?}"))
    } else if opened.text != never.text {
        Some(format!(
            "bodies differ ({} bytes against {})",
            opened.text.len(),
            never.text.len()
        ))
    } else {
        None
    };
    match differs {
        Some(d) => vec![fail(
            "a sibling's document answered absent answers exactly what an id memoria never held answers, status, headers and body (§4.1)".into(),
            d,
        )],
        None => vec![Check {
            expected: format!(
                "oracle: an absent document's answer is an id never held's ({} headers)",
                a.len()
            ),
            actual: "held".into(),
            ok: true,
        }],
    }
}

/// Whether `e`, an S2 call, refused `item` as memoria read it: answered
/// 200 with `item`'s pair NOT_VISIBLE on the wire
/// ([`super::oracle::on_the_wire`]). A malformation that leaves the pair
/// as answered (a short response keeps the first result, a dropped result
/// is the last) is a refusal the decoder reads as one: each requested pair
/// it kept got exactly one
/// result (§4.1, gate 6). One that breaks the pair, or a body refused
/// whole, makes it UNKNOWN, which is never silent (§4.1's table, §8.1).
pub(super) fn refused(e: &TraceEvent, item: &str, fakes: &BTreeMap<String, FakeSibling>) -> bool {
    e.status == Some(200)
        && on_the_wire(e, fakes)
            .into_iter()
            .any(|(p, result)| p.item_id == item && result == "NOT_VISIBLE")
}

#[cfg(test)]
mod tests {
    use super::super::checks::PageSummary;
    use super::super::surfaces::Rendered;
    use super::super::traced::{self, sheets_with};
    use super::*;
    use crate::fake::faults::MalformedS2;
    use crate::fake::model::ModelHandle;
    use crate::fake::trace::{CallDetail, Clock, TracedPair};

    fn absent(headers: &[(&str, &str)], body: &str) -> Opened {
        Opened {
            status: 404,
            seen: Rendered::default(),
            passages: 0,
            summary: PageSummary::default(),
            text: body.into(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            anchors: vec![],
        }
    }

    #[test]
    fn an_absent_answer_is_judged_against_an_id_never_held_by_status_headers_and_body() {
        let base = [("content-type", "text/html"), ("cache-control", "no-store")];
        let never = absent(&[base[0], base[1], ("date", "Mon")], "nothing here");
        // (the absent answer, whether it is an id never held's).
        let rows: [(Opened, bool); 4] = [
            (
                absent(&[base[1], base[0], ("date", "Tue")], "nothing here"),
                true,
            ),
            (
                absent(
                    &[base[0], base[1], ("clear-site-data", "\"cache\"")],
                    "nothing here",
                ),
                false,
            ),
            (absent(&base, "nothing here, revoked"), false),
            (
                Opened {
                    status: 403,
                    ..absent(&base, "nothing here")
                },
                false,
            ),
        ];
        for (k, (opened, alike)) in rows.iter().enumerate() {
            let checks = judge_absent_alike(opened, &never);
            assert_eq!(checks.iter().all(|c| c.ok), *alike, "row {k}: {checks:?}");
        }
    }

    #[test]
    fn a_document_page_s_anchors_are_read_with_the_numbers_their_labels_show() {
        let body = r##"<h1>T</h1><p class="meta">docs · t · revision 1</p>
            <section class="passage" id="p1"><p class="meta"><a href="#p1">Passage 1</a></p></section>
            <section class="passage" id="p1"><p class="meta"><a href="#p1">Passage 2</a></p></section>"##;
        assert_eq!(
            page_anchors(body),
            vec![
                Anchor {
                    number: Some(1),
                    names: vec!["p1".into(), "p1".into()],
                },
                Anchor {
                    number: Some(2),
                    names: vec!["p1".into(), "p1".into()],
                },
            ]
        );
        let json = serde_json::json!({"passages": [{"number": 1, "link": "/documents/ab#p0"}]});
        assert_eq!(
            tool_anchors(Some(&json)),
            vec![Anchor {
                number: Some(1),
                names: vec!["p0".into()],
            }]
        );
    }

    /// An S2 call to Sheets answered `status`, traced with `fault` (or
    /// none), its pairs from `pairs`: words `ITEM=VALUE`, in order.
    fn s2(status: u16, fault: &str, pairs: &str) -> TraceEvent {
        let word = if fault.is_empty() {
            "VISIBLE".to_string()
        } else {
            format!("VISIBLE!{fault}")
        };
        let mut e = traced::calls(&word, "a").remove(0);
        e.status = Some(status);
        if let CallDetail::S2 { pairs: traced, .. } = &mut e.detail {
            *traced = pairs
                .split_whitespace()
                .map(|w| {
                    let (item, result) = w.split_once('=').expect("ITEM=VALUE");
                    TracedPair {
                        item_id: item.into(),
                        revision: "r2".into(),
                        result: result.into(),
                    }
                })
                .collect();
        }
        e
    }

    #[test]
    fn a_404_is_refused_where_the_pair_memoria_read_for_the_item_is_not_visible() {
        use MalformedS2::{DuplicateItem as Twice, MissingItem as Last};
        use MalformedS2::{ShortResponse as Short, Truncated as Cut};
        const M: &str = "malformed_s2";
        // (Sheets' S2 malformation knob, the call's status, its traced
        // fault, its pairs, whether it refused item `a` as memoria read
        // it.)
        let rows: [(Option<MalformedS2>, u16, &str, &str, bool); 12] = [
            (None, 200, "", "a=NOT_VISIBLE", true),
            (None, 200, "", "a=VISIBLE", false),
            (None, 200, "", "b=NOT_VISIBLE", false),
            (None, 503, "outage", "a=NOT_VISIBLE", false),
            // Seed 229: a short response to a one-pair request is the
            // whole answer, byte for byte.
            (Some(Short), 200, M, "a=NOT_VISIBLE", true),
            (Some(Short), 200, M, "a=NOT_VISIBLE b=VISIBLE", true),
            (Some(Short), 200, M, "b=VISIBLE a=NOT_VISIBLE", false),
            (Some(Last), 200, M, "a=NOT_VISIBLE", false),
            (Some(Last), 200, M, "a=NOT_VISIBLE b=VISIBLE", true),
            (Some(Twice), 200, M, "a=NOT_VISIBLE", false),
            (Some(Cut), 200, M, "a=NOT_VISIBLE", false),
            // Traced as malformed, the knob since gone: refused whole.
            (None, 200, M, "a=NOT_VISIBLE", false),
        ];
        for (knob, status, fault, pairs, want) in rows {
            let fakes = sheets_with(ModelHandle::new(Clock::manual().0), Clock::manual().0);
            fakes["sheets"].faults().set_malformed_s2(knob);
            assert_eq!(
                refused(&s2(status, fault, pairs), "a", &fakes),
                want,
                "{knob:?} {status} {fault:?} {pairs}"
            );
        }
    }
}
