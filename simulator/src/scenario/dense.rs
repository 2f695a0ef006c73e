//! `[safety:dense]`: a question only the dense half can answer is ranked by the stub provider's own vectors, recomputed by the oracle (§7, §7.2, §8.3).
//!
//! §7 ranks by "BM25 + dense vectors, fused by reciprocal rank". A
//! question holding [`DENSE_ONLY_WORD`], a word no passage holds, is the
//! explorer's dense question. memoria's lexical half still fills a page
//! with passages holding some of its words (the reference's tiers: all
//! words but one, then any word), so a passage that holds no word of the
//! question (by root: [`root`], coarser than FTS5's Porter stemmer) is
//! *silent*: it can only be in the dense list, and its fused score,
//! `1 / (RRF_K + its dense rank)`, falls with its dense rank. Of two silent
//! passages shown, the one above has the better dense rank, whatever the
//! lexical half ranked around them. That order is a claim the oracle can
//! check without memoria's internals: the
//! embedder of every simulated AI-on world is the harness's stub
//! (`crate::fake::provider`), whose vector for a text is
//! [`embed_text`]'s hashed word features, so the oracle computes the
//! question's vector and every passage's itself, keeps the first
//! [`KEPT_VALUES`] values renormalised as §7.2's pipeline does, and
//! ranks by the raw dot product §7.2 commits to.
//!
//! What the oracle does not know is which text memoria embedded for a
//! passage (its title, heading trail and body, and which revision), so a
//! passage's score is an interval: the least and the greatest dot product
//! over every input the stub was sent (its own record of requests) that
//! holds the passage's document tag (the last word of every title in an
//! oracle world) and a line break (a passage's text: title, trail and body
//! on lines of their own; a question is one line). A vector that landed
//! came from one of those inputs, whichever revision, chunk or restore it
//! belongs to.
//!
//! The claim, on every surface that ranks (the search page, JSON, MCP):
//! no silent passage is shown above a silent one whose score surely
//! exceeds its own, by more than [`DENSE_MARGIN`] (int8 quantisation of both vectors and
//! ties). A dense matrix whose rows lost their chunk ids, scales or sums
//! (a wake that mirrors the ids, a removal that leaves the moved row the
//! removed one's scale) ranks a passage by another's vector, and the order
//! breaks. Judged only while none of the stub's vector-bending knobs (drift,
//! wrong length, NaN, all zero) is on: with them the oracle's vectors are
//! not the ones sent. A passage whose title carries no tag, or whose tag
//! no recorded input holds, is not judged.
//!
//! # `[safety:dense-crowded]`: gone rows never crowd a live passage out
//!
//! §7.4 deletes a document's vectors with it, and §7 fuses only what
//! memoria holds. memoria opens every dense hit from its store and skips
//! a gone one, so a matrix row of a chunk the store no longer holds (a
//! deletion that left its vector, a wake that skipped the replay, a vector
//! that landed after its document was deleted) shows nowhere: it only
//! takes a slot in the dense top N. The explorer makes such rows crowd
//! the live ones out (`explore/dense.rs`): a *crowd*, a long upload of
//! [`CROWD_SECTIONS`] passages all holding a made-up word set W, deleted
//! (before a restore from a backup that held it, with no wake after, or
//! while the provider was embedding it), and a *beacon*, a live upload of
//! made-up words no passage shares with W whose stub features lean
//! towards W's. At `expect-converged`, once `[liveness:embeddings]` saw
//! every passage embedded and with the provider answering, the first
//! member asks W on the search page ([`judge_crowded`]): no live passage
//! holds a word of W, so the lexical half (all four tiers) returns nothing
//! and the page is the dense half's order alone (no score floor cuts it).
//! If at most [`PAGE_ROWS`] − 1 of every text the stub was ever sent (the
//! crowds' excepted) can score as high as the beacon (its least dot
//! product less [`DENSE_MARGIN`]), the beacon is in the dense top
//! [`PAGE_ROWS`], so the page shows it (memoria opens every hit of the
//! first [`PAGE_ROWS`], and its own document opens for every person
//! admitted). With the crowd's rows left in the matrix, the top
//! [`PAGE_ROWS`] are all gone and the page is empty; with the rows' chunk
//! ids mirrored by a wake, the beacon's id carries another's vector.

use std::collections::BTreeMap;

use memoria::PAGE_SIZE_RESULTS;

use super::checks::Check;
use super::surfaces::{Owned, Rendered, from_page};
use crate::fake::provider::{RecordedRequest, StubProvider, embed_text};
use crate::world::Memoria;

/// The invariant a failed dense check names.
pub const SAFETY_DENSE: &str = "[safety:dense]";

/// The invariant a page crowded out by gone dense rows names (module doc).
pub const SAFETY_DENSE_CROWDED: &str = "[safety:dense-crowded]";

/// The passages of a crowd (module doc): more than a page
/// ([`PAGE_ROWS`]), so gone rows alone can fill the dense top of one.
pub const CROWD_SECTIONS: u32 = 24;
const _: () = assert!(CROWD_SECTIONS as usize > PAGE_ROWS);

/// How often a crowd section's paragraph repeats its words: 60 words or
/// more, past the chunker's runt (`memoria::RUNT_WORDS_MAX`, 50), so each
/// section is a passage of its own.
const CROWD_REPEATS: usize = 15;

/// The results a page shows, `memoria::PAGE_SIZE_RESULTS`: the dense
/// hits the first page is cut from, best first.
pub const PAGE_ROWS: usize = PAGE_SIZE_RESULTS;

/// A word no passage of an oracle world holds (no generated title or
/// body, no corpus text, no upload): a question carrying it matches no
/// passage lexically, so its page is the dense half's ranking alone.
pub const DENSE_ONLY_WORD: &str = "qzdensenowhere";

/// The values memoria keeps of each vector, §7.2: "the pipeline keeps the
/// first 512 values and re-normalises to unit L2".
pub const KEPT_VALUES: usize = 512;

/// How far apart two passages' scores must surely be, as raw dot products
/// of unit vectors, before their order on the page is judged. Int8
/// quantisation with one scale per vector (§7.2) moves a component by at
/// most half a level, `max|v| / 254`; a stub vector's largest component
/// is at most 0.5 and zero components stay exact, so each vector moves by
/// under 0.045 in L2 and a dot product by under 0.1 in the worst case,
/// and by about a tenth of that in practice. 0.1 covers the worst case
/// and exact ties.
pub const DENSE_MARGIN: f32 = 0.1;

/// The text of a crowd's upload (module doc): its title, then
/// `sections` headed sections, each a paragraph of `words` repeated.
pub fn crowd_text(words: &str, tag: &str, sections: u32) -> String {
    let mut out = format!("# {words} {tag}\n\n");
    for k in 1..=sections {
        let body = vec![words; CROWD_REPEATS].join(" ");
        out.push_str(&format!(
            "## {words} part {k}\n\nThe {words} notes: {body}.\n\n"
        ));
    }
    out
}

/// The dot product of two kept vectors ([`kept_vector`]): the raw score
/// §7.2 ranks by, over the shorter one's length.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Whether `text` holds `word` as one of the stub's words.
fn holds(text: &str, word: &str) -> bool {
    text.contains(word) && words(text).any(|w| w == word)
}

/// The live upload ranked surest inside the dense top [`PAGE_ROWS`] for
/// `query` (module doc): its tag and how many texts of `sent` may rank
/// above it, or `None` if no live upload's text was sent. `beacons` are
/// the live uploads' tags; `gone` the crowds' tags, whose texts are not
/// counted (memoria holds none of their rows, which is the claim).
fn surest_beacon(
    query: &[f32],
    sent: &[&str],
    beacons: &[String],
    gone: &[String],
) -> Option<(String, usize)> {
    let scored: Vec<(&str, f32)> = sent
        .iter()
        .filter(|t| !gone.iter().any(|g| holds(t, g)))
        .map(|t| (*t, dot(query, &kept_vector(t))))
        .collect();
    beacons
        .iter()
        .filter_map(|tag| {
            // Its passage's texts: title, trail and body on lines of their
            // own (a question naming its tag is one line, and counted
            // among the rest).
            let is_own = |t: &str| t.contains('\n') && holds(t, tag);
            let mut own: Vec<&str> = scored
                .iter()
                .filter(|(t, _)| is_own(t))
                .map(|(t, _)| *t)
                .collect();
            own.sort_unstable();
            own.dedup();
            let lo = scored
                .iter()
                .filter(|(t, _)| is_own(t))
                .map(|(_, d)| *d)
                .reduce(f32::min)?;
            let above = scored
                .iter()
                .filter(|(t, d)| !is_own(t) && *d >= lo - DENSE_MARGIN)
                .count()
                + own.len()
                - 1;
            Some((tag.clone(), above))
        })
        .min_by_key(|(_, above)| *above)
}

/// Judges the page `seen` that the crowd question `q` (a crowd's words)
/// was answered with (module doc). `sent` is every input the stub was
/// sent, the question's own among them; `beacons` the tags of the live
/// uploads the stub does not refuse; `gone` the crowds' tags. One check,
/// held or not; a passing one says why when nothing could be judged.
pub(super) fn judge_crowd_page(
    q: &str,
    seen: &Rendered,
    sent: &[&str],
    beacons: &[String],
    gone: &[String],
) -> Check {
    let q_words: Vec<String> = words(q).collect();
    // The question as memoria sent it to be embedded: a one-line text of
    // its words (the search's own vector), else nothing is judged.
    let Some(asked) = sent
        .iter()
        .rev()
        .find(|t| !t.contains('\n') && words(t).collect::<Vec<_>>() == q_words)
    else {
        return Check {
            expected: format!("{SAFETY_DENSE_CROWDED} the question {q:?} is embedded"),
            actual: "not judged: the stub was never sent the question".into(),
            ok: true,
        };
    };
    let query = kept_vector(asked);
    let Some((beacon, above)) = surest_beacon(&query, sent, beacons, gone) else {
        return Check {
            expected: format!("{SAFETY_DENSE_CROWDED} a live upload was embedded"),
            actual: "not judged: no live upload's text reached the stub".into(),
            ok: true,
        };
    };
    let expected = format!(
        "{SAFETY_DENSE_CROWDED} a question only the dense half answers, with the live upload \
         {beacon} among its top {PAGE_ROWS} ({above} texts may rank above it) and the rows of \
         the deleted crowd gone, shows that upload (§7, §7.4)"
    );
    if above >= PAGE_ROWS {
        return Check {
            expected,
            actual: "not judged: too many texts may rank above the beacon".into(),
            ok: true,
        };
    }
    let shown = seen
        .shown
        .iter()
        .any(|s| words(&s.title).last().as_deref() == Some(beacon.as_str()));
    Check {
        expected,
        actual: format!(
            "{} passages shown, {}",
            seen.shown.len(),
            if shown {
                "the beacon among them"
            } else {
                "not the beacon"
            }
        ),
        ok: shown,
    }
}

/// `[safety:dense-crowded]` at `expect-converged` (module doc): `owner`
/// asks each crowd's words on the search page, judged by
/// [`judge_crowd_page`] against `provider`'s record. Nothing for a crowd
/// still stored or in doubt (its live passages may fill the page).
pub(super) async fn judge_crowded(
    m: &mut Memoria,
    owner: &str,
    owned: &Owned,
    provider: &StubProvider,
) -> Vec<Check> {
    let crowd_docs: Vec<&str> = owned.crowds.iter().map(|(d, _)| d.as_str()).collect();
    let gone: Vec<String> = crowd_docs
        .iter()
        .filter_map(|d| owned.docs.get(*d))
        .map(|d| d.tag.clone())
        .collect();
    let beacons: Vec<String> = owned
        .docs
        .iter()
        .filter(|(name, d)| {
            d.live && !d.doubt && !d.refused && !crowd_docs.contains(&name.as_str())
        })
        .map(|(_, d)| d.tag.clone())
        .collect();
    let mut asked: Vec<&str> = owned.crowds.iter().map(|(_, w)| w.as_str()).collect();
    asked.sort_unstable();
    asked.dedup();
    let mut out = vec![];
    for q in asked {
        let stored = owned.crowds.iter().any(|(d, w)| {
            w == q
                && owned
                    .docs
                    .get(d)
                    .is_none_or(|d| d.live || d.doubt || !d.deleted)
        });
        if stored {
            continue;
        }
        let page = m.search(owner, q).await;
        let seen = from_page(&page.response.body);
        let requests = provider.requests();
        out.push(judge_crowd_page(
            q,
            &seen,
            &sent_texts(&requests),
            &beacons,
            &gone,
        ));
    }
    out
}

/// Every input of `requests` (the stub's record of its embeddings calls),
/// in the order sent.
fn sent_texts(requests: &[RecordedRequest]) -> Vec<&str> {
    requests
        .iter()
        .flat_map(|r| r.inputs.iter())
        .map(String::as_str)
        .collect()
}

/// `text`'s stub vector as memoria keeps it: the first [`KEPT_VALUES`]
/// values of [`embed_text`], renormalised to unit L2 (§7.2).
pub fn kept_vector(text: &str) -> Vec<f32> {
    let mut v = embed_text(text);
    v.truncate(KEPT_VALUES);
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// The words of `text` as the stub splits them: lower-cased, on anything
/// not alphanumeric.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Whether `q` is a dense-only question (it holds [`DENSE_ONLY_WORD`]).
pub fn is_dense_question(q: &str) -> bool {
    words(q).any(|w| w == DENSE_ONLY_WORD)
}

/// The tag a shown title ends in, if it has one (`qx…`).
fn tag_of(title: &str) -> Option<String> {
    words(title).last().filter(|w| w.starts_with("qx"))
}

/// `w` without the endings a Porter stemmer may take off a word of the
/// oracle's own (`s`, `es`, `ies`, `e`, `ed`, `ing`, `y`, `i`), taken off
/// greedily while a root of three letters or more stays: two words with
/// one root may be one word to FTS5's `porter` tokenizer (§7.1). Coarser
/// than Porter, never finer, so a passage it calls silent is silent.
fn root(w: &str) -> String {
    let mut r = w.to_string();
    'strip: loop {
        for end in ["ing", "ies", "es", "ed", "s", "e", "y", "i"] {
            if r.len() >= end.len() + 3 && r.ends_with(end) {
                r.truncate(r.len() - end.len());
                continue 'strip;
            }
        }
        return r;
    }
}

/// What the oracle knows of one document's passages for one question: the
/// least and greatest dot product of the question's vector with the
/// vector of every passage text sent to the stub that holds the
/// document's tag as a word, and whether every such text is lexically
/// silent (holds no word with the root of a word of the question).
#[derive(Debug, Clone, Copy)]
struct Score {
    lo: f32,
    hi: f32,
    silent: bool,
}

/// The [`Score`] of the document tagged `tag` among `inputs`, or `None`
/// if no input holds the tag.
fn score(query: &[f32], roots: &[String], inputs: &[&str], tag: &str) -> Option<Score> {
    let mut out: Option<Score> = None;
    for text in inputs.iter().filter(|t| t.contains(tag)) {
        if !words(text).any(|w| w == tag) {
            continue;
        }
        let silent = !words(text).any(|w| roots.contains(&root(&w)));
        let d = dot(query, &kept_vector(text));
        out = Some(match out {
            None => Score {
                lo: d,
                hi: d,
                silent,
            },
            Some(s) => Score {
                lo: s.lo.min(d),
                hi: s.hi.max(d),
                silent: s.silent && silent,
            },
        });
    }
    out
}

/// Judges the order of the passages `seen` shows for the dense-only
/// question `q` against `provider`'s record of what it embedded (module
/// doc). Returns the failed checks, plus one passing check naming how many
/// pairs were judged; nothing for a question that is not dense-only, or
/// while a vector-bending knob is on.
pub(super) fn judge_dense(q: &str, seen: &Rendered, provider: &StubProvider) -> Vec<Check> {
    if !is_dense_question(q) {
        return vec![];
    }
    let knobs = provider.faults();
    if knobs.drift.is_some() || knobs.wrong_length.is_some() || knobs.nan || knobs.all_zero {
        return vec![];
    }
    let requests = provider.requests();
    judge_order(q, seen, &sent_texts(&requests))
}

/// [`judge_dense`] over `sent`, every input the stub was sent.
fn judge_order(q: &str, seen: &Rendered, sent: &[&str]) -> Vec<Check> {
    if !is_dense_question(q) {
        return vec![];
    }
    let inputs: Vec<&str> = sent
        .iter()
        .copied()
        .filter(|t| t.contains('\n') && !is_dense_question(t))
        .collect();
    let query = kept_vector(q);
    let roots: Vec<String> = words(q).map(|w| root(&w)).collect();
    let mut scores: BTreeMap<String, Option<Score>> = BTreeMap::new();
    let shown: Vec<(String, Option<Score>)> = seen
        .shown
        .iter()
        .map(|s| {
            let Some(tag) = tag_of(&s.title) else {
                return (s.title.clone(), None);
            };
            let score = *scores
                .entry(tag.clone())
                .or_insert_with(|| score(&query, &roots, &inputs, &tag));
            (tag, score)
        })
        .collect();
    let mut out = vec![];
    let mut judged = 0usize;
    for (i, (above, a)) in shown.iter().enumerate() {
        let Some(a) = a.filter(|a| a.silent) else {
            continue;
        };
        for (below, b) in &shown[i + 1..] {
            let Some(b) = b.filter(|b| b.silent) else {
                continue;
            };
            judged += 1;
            let (a_hi, b_lo) = (a.hi, b.lo);
            if b_lo > a_hi + DENSE_MARGIN {
                out.push(Check {
                    expected: format!(
                        "{SAFETY_DENSE} a question only the dense half answers ranks {below} \
                         (dot ≥ {b_lo:.3}) above {above} (dot ≤ {a_hi:.3})"
                    ),
                    actual: format!("{above} shown above {below}"),
                    ok: false,
                });
            }
        }
    }
    if out.is_empty() {
        out.push(Check {
            expected: format!(
                "{SAFETY_DENSE} {} passages shown in the stub's dot-product order",
                shown.len()
            ),
            actual: format!("{judged} pairs judged"),
            ok: true,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::surfaces::Shown;

    fn shown(titles: &[&str]) -> Rendered {
        Rendered {
            shown: titles
                .iter()
                .map(|t| Shown {
                    app: "docs".into(),
                    title: (*t).into(),
                })
                .collect(),
            ..Rendered::default()
        }
    }

    #[test]
    fn a_kept_vector_is_unit_length_and_as_wide_as_memoria_keeps() {
        let v = kept_vector("budget qxdoia\nbudget qxdoia do-ia\nThe budget notes.");
        assert_eq!(v.len(), KEPT_VALUES);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
    }

    #[test]
    fn a_question_is_dense_only_by_its_word_alone() {
        for (q, dense) in [
            ("qxdoia budget qzdensenowhere", true),
            ("QZDENSENOWHERE", true),
            ("qxdoia budget", false),
            ("qzdensenowherex", false),
        ] {
            assert_eq!(is_dense_question(q), dense, "{q}");
        }
    }

    #[test]
    fn passages_in_the_stubs_order_pass_and_reversed_fail() {
        let target = "rota qxdoia\nrota qxdoia do-ia\nThe rota qxdoia notes, revision 1.";
        let other = "budget qxdoib\nbudget qxdoib do-ib\nThe budget qxdoib notes, revision 1.";
        let sent = [target, other, "qxdoib budget"];
        // A word neither passage holds whose stub features lean to the
        // target's: the question is silent to FTS5 and loud to the stub.
        let (t, o) = (kept_vector(target), kept_vector(other));
        let q = (0..26 * 26 * 26)
            .map(|n| format!("qz{} {DENSE_ONLY_WORD}", crate::scenario::letters(n)))
            .find(|q| {
                let v = kept_vector(q);
                dot(&v, &t) > dot(&v, &o) + DENSE_MARGIN + 0.02
            })
            .expect("some word leans to the target");
        let right = judge_order(&q, &shown(&["rota qxdoia", "budget qxdoib"]), &sent);
        assert!(right.iter().all(|c| c.ok), "{right:?}");
        assert_eq!(right[0].actual, "1 pairs judged");
        let wrong = judge_order(&q, &shown(&["budget qxdoib", "rota qxdoia"]), &sent);
        assert!(
            wrong
                .iter()
                .any(|c| !c.ok && c.expected.starts_with(SAFETY_DENSE)),
            "{wrong:?}"
        );
        // A passage holding a word of the question may rank by BM25 too:
        // its place is not judged.
        let loud = format!("qxdoib {q}");
        let mixed = judge_order(&loud, &shown(&["budget qxdoib", "rota qxdoia"]), &sent);
        assert_eq!(mixed[0].actual, "0 pairs judged", "{mixed:?}");
        // Not a dense-only question: nothing judged.
        assert!(
            judge_order(
                "qxdoia rota",
                &shown(&["budget qxdoib", "rota qxdoia"]),
                &sent
            )
            .is_empty()
        );
    }

    #[test]
    fn a_crowd_upload_is_one_passage_a_section() {
        let text = crowd_text("qzcwa qzcwb qzcwc qzcwd", "qxownzcrowda", CROWD_SECTIONS);
        let chunks = memoria::chunk(&text);
        assert_eq!(chunks.len(), CROWD_SECTIONS as usize);
        assert!(
            chunks.iter().all(|c| c.text.contains("qzcwd")),
            "{chunks:?}"
        );
    }

    /// A crowd question's page, judged: (what the stub was sent, beacons
    /// shown, passages withheld, held, what the check says).
    #[test]
    fn a_crowd_question_fails_a_page_without_the_beacon_only_when_it_is_surely_in_the_dense_top() {
        let q = "qzcwa qzcwb";
        let beacon = "qzbka qxownzbeacon\nqzbka qxownzbeacon\nThe qzbka notes, uploaded.";
        let crowd = "qzcwa qzcwb qxownzcrowda\npart 1\nThe qzcwa qzcwb notes.";
        let gone = vec!["qxownzcrowda".to_string()];
        let beacons = vec!["qxownzbeacon".to_string()];
        // Texts that lean to the question as much as the beacon can: a
        // page's worth of them and more, so the beacon may sit below.
        let close: Vec<String> = (0..PAGE_ROWS)
            .map(|i| format!("qzcwa qxother{i}\nx\nqzcwb"))
            .collect();
        let mut crowded: Vec<&str> = vec![beacon, crowd, q];
        crowded.extend(close.iter().map(String::as_str));
        let page = |n: usize, withheld: usize| Rendered {
            shown: (0..n)
                .map(|_| Shown {
                    app: "memoria".into(),
                    title: "qzbka qxownzbeacon".into(),
                })
                .collect(),
            withheld: if withheld > 0 {
                vec![("docs".into(), None, withheld)]
            } else {
                vec![]
            },
            ..Rendered::default()
        };
        for (sent, shown, withheld, ok, says) in [
            (vec![beacon, crowd, q], 0, 0, false, "0 passages shown"),
            (vec![beacon, crowd, q], 1, 0, true, "the beacon among them"),
            (vec![beacon, crowd, q], 0, 2, false, "not the beacon"),
            (vec![beacon, crowd], 0, 0, true, "never sent the question"),
            (vec![crowd, q], 0, 0, true, "no live upload"),
            (crowded, 0, 0, true, "too many texts"),
        ] {
            let c = judge_crowd_page(q, &page(shown, withheld), &sent, &beacons, &gone);
            assert_eq!(c.ok, ok, "{c:?}");
            assert!(c.actual.contains(says), "{c:?}");
            assert!(c.expected.starts_with(SAFETY_DENSE_CROWDED), "{c:?}");
        }
    }

    #[test]
    fn a_root_is_never_finer_than_porters() {
        for (a, b) in [
            ("qxshis", "qxshie"),
            ("notes", "note"),
            ("revised", "revise"),
            ("hiring", "hire"),
        ] {
            assert_eq!(root(a), root(b), "{a} {b}");
        }
        assert_ne!(root("qxshia"), root("qxshib"));
    }
}
