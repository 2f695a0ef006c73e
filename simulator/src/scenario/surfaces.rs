//! The surfaces the oracle reads, each as one [`Rendered`] (the passages shown, the withheld and reconciling lines), and the truth of memoria-owned documents ([`Owned`]) (§4.2, §7.4, §8.1).
//!
//! Every surface that shows a passage rules it on the one S2 path (§8.1),
//! so the oracle judges them alike once each is read into a [`Rendered`]:
//! the search page's HTML ([`from_page`]), the brief page's
//! ([`from_brief`]), and the ruled page as JSON, which `memoria search
//! --format json` prints and the MCP `search` tool carries as its
//! structured content ([`from_json`]); a document's answer on its page
//! ([`from_document`]) and from the MCP `document` tool
//! ([`from_document_tool`]). [`Owned`] is the truth of what
//! memoria itself owns: each uploaded document, whether it is stored now,
//! and whether it was ever deleted. [`at_rest`] greps memoria's data
//! directory for words at a checkpoint.

use std::collections::BTreeMap;

use memoria_page::{Numeric, Page};

/// One passage as a surface shows it: its app (empty where the surface
/// does not say, as a brief's excerpt) and its document's title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Shown {
    pub(super) app: String,
    pub(super) title: String,
}

/// Why a withheld line withholds (§8.1's sentences).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Reason {
    Unknown,
    Stale,
    Ahead,
}

impl Reason {
    pub(super) fn wire(self) -> &'static str {
        match self {
            Reason::Unknown => "UNKNOWN",
            Reason::Stale => "STALE",
            Reason::Ahead => "AHEAD",
        }
    }
}

/// What one surface showed a person.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Rendered {
    /// The passages shown, in order.
    pub(super) shown: Vec<Shown>,
    /// (app, reason, count) of every plain withheld line.
    pub(super) withheld: Vec<(String, Option<Reason>, usize)>,
    /// The apps named reconciling.
    pub(super) reconciling: Vec<String>,
    /// The search page's numeric answer (§8.7), as its box reads;
    /// `None` on every other surface and on a page without one.
    pub(super) numeric: Option<Numeric>,
    /// The search page says memoria holds no roster copy
    /// ([`NO_ROSTER_LINE`], §6.5); always false on the other surfaces.
    pub(super) no_roster: bool,
    /// The search page says why nobody's team standing can be established
    /// (the roster copy stale or missing: [`STALE_ROSTER_LINE`] or
    /// [`NO_ROSTER_LINE`], §4.3); `None` on every other surface.
    pub(super) standing_lack_said: Option<bool>,
}

/// Words of the line memoria's search page carries while it holds no
/// usable copy of the home's roster (`RosterLack::NoCopy`, §6.5).
pub(super) const NO_ROSTER_LINE: &str = "has not been able to fetch the team's roster";

/// Words of the line memoria's pages carry while the roster copy it holds
/// is past its TTL (`RosterLack::Stale`, §4.3).
pub(super) const STALE_ROSTER_LINE: &str = "roster is stale";

impl Rendered {
    /// Lines that name `app` withheld or reconciling.
    pub(super) fn names(&self, app: &str) -> bool {
        self.withheld.iter().any(|(a, _, _)| a == app) || self.reconciling.iter().any(|a| a == app)
    }
}

/// Why a withheld line's sentence withholds, and how many results it
/// counts (its first number), read from its words (§8.1).
fn withheld_reading(sentence: &str) -> (Option<Reason>, usize) {
    let reason = if sentence.contains("did not answer") {
        Some(Reason::Unknown)
    } else if sentence.contains("newer version") {
        Some(Reason::Stale)
    } else if sentence.contains("is behind") {
        Some(Reason::Ahead)
    } else {
        None
    };
    let count = sentence
        .split(|c: char| !c.is_ascii_digit())
        .find(|w| !w.is_empty())
        .and_then(|w| w.parse().ok())
        .unwrap_or(0);
    (reason, count)
}

/// (app, reason, count) of every withheld line that names an app, on a
/// page ([`Page::app_lines`]).
pub(super) fn withheld_lines(page: &Page) -> Vec<(String, Option<Reason>, usize)> {
    page.app_lines("withheld")
        .into_iter()
        .map(|l| {
            let (reason, count) = withheld_reading(&l.text);
            (l.app, reason, count)
        })
        .collect()
}

fn reconciling_lines(page: &Page) -> Vec<String> {
    page.app_lines("reconciling")
        .into_iter()
        .map(|l| l.app)
        .collect()
}

/// The search page's HTML: each result's app and title.
pub(super) fn from_page(body: &str) -> Rendered {
    let page = Page::parse(body);
    Rendered {
        shown: page
            .citations()
            .into_iter()
            .map(|c| Shown {
                app: c.app,
                title: c.title,
            })
            .collect(),
        withheld: withheld_lines(&page),
        reconciling: reconciling_lines(&page),
        numeric: page.numeric(),
        no_roster: page.text().contains(NO_ROSTER_LINE),
        standing_lack_said: Some({
            let text = page.text();
            text.contains(STALE_ROSTER_LINE) || text.contains(NO_ROSTER_LINE)
        }),
    }
}

/// The brief page's HTML: every document it links by title, once (the
/// resolved item, the candidates, each excerpt's and relation's document,
/// the grounds), with the app the brief names for the resolved item and
/// each candidate (the first word of the meta line set right after its
/// title), unsaid for a document it names nowhere else.
pub(super) fn from_brief(body: &str) -> Rendered {
    let page = Page::parse(body);
    let Some(brief) = page.region("section#brief") else {
        return Rendered {
            withheld: withheld_lines(&page),
            ..Rendered::default()
        };
    };
    // A passage's link (`…#pN`) names a passage of a document linked by
    // title elsewhere in the brief.
    let links: Vec<(String, String, String)> = brief
        .links("a[href^=\"/documents/\"]")
        .into_iter()
        .filter(|l| !l.href.contains('#'))
        .map(|l| {
            let app = l
                .meta
                .trim_start_matches(|c: char| c == '·' || c.is_whitespace())
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string();
            (l.href, l.text, app)
        })
        .collect();
    let app_of = |href: &str| {
        links
            .iter()
            .find(|(h, _, app)| h == href && !app.is_empty())
            .map_or(String::new(), |(_, _, app)| app.clone())
    };
    let mut hrefs: Vec<&str> = Vec::new();
    let shown = links
        .iter()
        .filter(|(href, _, _)| {
            let first = !hrefs.contains(&href.as_str());
            hrefs.push(href);
            first
        })
        .map(|(href, title, _)| Shown {
            app: app_of(href),
            title: title.clone(),
        })
        .collect();
    Rendered {
        shown,
        withheld: withheld_lines(&brief),
        reconciling: reconciling_lines(&brief),
        numeric: None,
        no_roster: false,
        standing_lack_said: None,
    }
}

/// The ruled page as JSON (`SearchPage` serialised): its results, withheld
/// lines and reconciling sources.
pub(super) fn from_json(page: &serde_json::Value) -> Rendered {
    let list = |key: &str| page.get(key).and_then(|v| v.as_array()).cloned();
    let text = |v: &serde_json::Value, key: &str| {
        v.get(key)
            .and_then(|x| x.as_str())
            .unwrap_or("")
            .to_string()
    };
    Rendered {
        shown: list("results")
            .unwrap_or_default()
            .iter()
            .map(|r| Shown {
                app: text(r, "app"),
                title: text(r, "title"),
            })
            .collect(),
        withheld: list("withheld")
            .unwrap_or_default()
            .iter()
            .map(|w| {
                let reason = match text(w, "reason").as_str() {
                    "no_answer" => Some(Reason::Unknown),
                    "stale" => Some(Reason::Stale),
                    "ahead" => Some(Reason::Ahead),
                    _ => None,
                };
                let count = w.get("count").and_then(|c| c.as_u64()).unwrap_or(0) as usize;
                (text(w, "app"), reason, count)
            })
            .collect(),
        reconciling: list("reconciling")
            .unwrap_or_default()
            .iter()
            .map(|r| text(r, "app"))
            .collect(),
        numeric: None,
        no_roster: false,
        standing_lack_said: None,
    }
}

/// A document's answer on the document page (`GET /documents/{id}`): on a
/// 200, the document shown, its title (the page's heading) and its app (the
/// first part of the line under it); on any status, its withheld lines (a
/// 503 names the app and the reason, §8.1).
pub(super) fn from_document(status: u16, body: &str) -> Rendered {
    let page = Page::parse(body);
    let shown = (status == 200)
        .then(|| page.document())
        .flatten()
        .filter(|d| !d.meta.is_empty())
        .map(|d| Shown {
            app: d.meta.split(" · ").next().unwrap_or("").to_string(),
            title: d.title,
        });
    Rendered {
        shown: shown.into_iter().collect(),
        withheld: withheld_lines(&page),
        ..Rendered::default()
    }
}

/// A document's answer from the MCP `document` tool, by the outcome's
/// `kind`, `text` and `json` ([`memoria::ToolOutcome`]): the document
/// answered (its JSON's app and title), or a withheld sentence, read as
/// the page's line of it (the sentence's first word, the app's display
/// name, is the app).
pub(super) fn from_document_tool(
    kind: &str,
    text: &str,
    json: Option<&serde_json::Value>,
) -> Rendered {
    let field = |key: &str| {
        json.and_then(|j| j.get(key))
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    match kind {
        "answered" => Rendered {
            shown: vec![Shown {
                app: field("app"),
                title: field("title"),
            }],
            ..Rendered::default()
        },
        "withheld" => {
            let app = text.split_whitespace().next().unwrap_or("").to_lowercase();
            let (reason, count) = withheld_reading(text);
            Rendered {
                withheld: vec![(app, reason, count)],
                ..Rendered::default()
            }
        }
        _ => Rendered::default(),
    }
}

/// The app memoria's own documents carry on every surface.
pub(super) const APP_MEMORIA: &str = "memoria";

/// One memoria-owned document, as the truth knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct OwnedDoc {
    /// The word its title ends in.
    pub(super) tag: String,
    /// Its id, once an upload stored it.
    pub(super) id: Option<String>,
    /// Stored now.
    pub(super) live: bool,
    /// Deleted at some point: it never comes back (§7.4).
    pub(super) deleted: bool,
    /// A simulated crash cut its upload or its deletion off before memoria
    /// answered (issue 26): never acknowledged, so it may be stored or
    /// not, and the oracle asks neither until a deletion settles it.
    pub(super) doubt: bool,
    /// Its words hold the stub provider's `REFUSED_MARKER`: the provider
    /// refuses to embed its passage, ever (issue 26).
    pub(super) refused: bool,
}

/// The truth of memoria-owned documents, and memoria's backups of them.
#[derive(Debug, Clone, Default)]
pub(super) struct Owned {
    pub(super) docs: BTreeMap<String, OwnedDoc>,
    /// Per backup name, which documents were live when it was taken.
    pub(super) backups: BTreeMap<String, BTreeMap<String, bool>>,
    /// Every long upload (`sections`), by name, with its words: the dense
    /// crowd's, whose question `[safety:dense-crowded]` asks (`dense.rs`).
    pub(super) crowds: Vec<(String, String)>,
}

impl Owned {
    /// The document whose tag `title` ends in.
    pub(super) fn by_title(&self, title: &str) -> Option<(&String, &OwnedDoc)> {
        let last = title.split_whitespace().last()?;
        self.docs.iter().find(|(_, d)| d.tag == last)
    }

    /// How many live documents' passages the stub provider refuses to
    /// embed (each upload is one passage).
    pub(super) fn refused_live(&self) -> usize {
        self.docs.values().filter(|d| d.live && d.refused).count()
    }

    /// memoria's data restored from backup `name`: a document is live if it
    /// was then and was never deleted since (the tombstone log replays
    /// every deletion, §7.4); one in doubt stays so.
    pub(super) fn restored(&mut self, name: &str) {
        let Some(then) = self.backups.get(name).cloned() else {
            return;
        };
        for (doc, d) in &mut self.docs {
            d.live = !d.deleted && !d.doubt && then.get(doc).copied().unwrap_or(false);
        }
    }
}

/// The tag a memoria-owned document's title ends in (letters only).
pub fn owned_tag(doc: &str) -> String {
    let letters: String = doc.chars().filter(char::is_ascii_lowercase).collect();
    format!("qxown{letters}")
}

/// The words among `words` that some file under `dir` holds as bytes,
/// and how many bytes were read (so an absence is read over something).
///
/// # Errors
/// If a file cannot be read (the message names its path).
pub(super) fn at_rest(
    dir: &std::path::Path,
    words: &[String],
) -> Result<(Vec<String>, u64), String> {
    let finders: Vec<memchr::memmem::Finder<'_>> = words
        .iter()
        .map(|w| memchr::memmem::Finder::new(w.as_bytes()))
        .collect();
    let mut found = vec![];
    let mut read = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for e in entries {
            let path = e.map_err(|e| format!("{}: {e}", d.display()))?.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            read += bytes.len() as u64;
            for (w, finder) in words.iter().zip(&finders) {
                if !w.is_empty() && !found.contains(w) && finder.find(&bytes).is_some() {
                    found.push(w.clone());
                }
            }
        }
    }
    Ok((found, read))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_withheld_line_is_read_as_its_app_reason_and_count() {
        let body = "<p class=\"withheld\" role=\"status\" data-app=\"docs\">Docs has a newer version of 3 results; withheld while memoria fetches it.</p>";
        assert_eq!(
            withheld_lines(&Page::parse(body)),
            vec![("docs".to_string(), Some(Reason::Stale), 3)]
        );
    }

    #[test]
    fn a_document_page_is_read_as_its_title_and_app_and_a_withheld_one_as_its_line() {
        let shown = "<nav class=\"back\"><a href=\"/#documents\">‹ Every document</a></nav><h1>rota &amp; qxab</h1><p class=\"meta\">docs · rota.md · revision 2 · …</p><section class=\"passage\" id=\"p1\"></section>";
        let r = from_document(200, shown);
        assert_eq!(
            r.shown,
            vec![Shown {
                app: "docs".into(),
                title: "rota & qxab".into()
            }]
        );
        let withheld = "<h1>503 Service Unavailable</h1><p class=\"withheld\" role=\"status\" data-app=\"docs\">Docs did not answer; 1 result withheld.</p>";
        let r = from_document(503, withheld);
        assert!(r.shown.is_empty());
        assert_eq!(
            r.withheld,
            vec![("docs".to_string(), Some(Reason::Unknown), 1)]
        );
    }

    #[test]
    fn a_document_tool_s_answer_is_read_as_its_document_or_its_app_s_withheld_line() {
        let json = serde_json::json!({ "app": "memoria", "title": "rota qxownab", "passages": [] });
        let r = from_document_tool("answered", "rota qxownab", Some(&json));
        assert_eq!(r.shown[0].app, "memoria");
        let r = from_document_tool(
            "withheld",
            "Sheets has a newer version of 1 result; withheld while memoria fetches it.",
            None,
        );
        assert_eq!(
            r.withheld,
            vec![("sheets".to_string(), Some(Reason::Stale), 1)]
        );
        assert_eq!(
            from_document_tool("absent", "No document", None),
            Rendered::default()
        );
    }

    #[test]
    fn a_json_page_is_read_as_its_results_and_lines() {
        let page = serde_json::json!({
            "results": [{ "app": "memoria", "title": "rota qxownab" }],
            "withheld": [{ "app": "docs", "reason": "no_answer", "count": 2 }],
            "reconciling": [{ "app": "sheets" }],
        });
        let r = from_json(&page);
        assert_eq!(r.shown[0].title, "rota qxownab");
        assert_eq!(
            r.withheld,
            vec![("docs".to_string(), Some(Reason::Unknown), 2)]
        );
        assert_eq!(r.reconciling, vec!["sheets".to_string()]);
    }

    #[test]
    fn a_brief_shows_each_linked_title_but_not_its_passage_links() {
        let body = "<section class=\"brief\" id=\"brief\"><h2><a href=\"/documents/ab\">rota qxab</a></h2><p class=\"meta\"><a href=\"/documents/ab#p1\">passage 1</a></p></section>";
        let r = from_brief(body);
        assert_eq!(r.shown.len(), 1);
        assert_eq!(r.shown[0].title, "rota qxab");
    }

    #[test]
    fn a_brief_names_each_linked_document_once_with_the_app_its_item_or_candidate_line_gives() {
        let body = "<section class=\"brief\" id=\"brief\">\
            <ul class=\"candidates\"><li><a href=\"/documents/cd\">plan qxcd</a><span class=\"meta\"> · docs · revision 2 · the team · score 0.300</span></li></ul>\
            <h2><a href=\"/documents/ab\">rota qxab</a></h2><p class=\"meta\">memoria · revision 1 · the team</p>\
            <p class=\"meta\"><a href=\"/documents/ab#p1\">rota qxab</a> · passage 1</p>\
            <ul><li data-id=\"ab\"><a href=\"/documents/ab\">rota qxab</a> · revision 1</li>\
            <li data-id=\"ef\"><a href=\"/documents/ef\">linked</a></li></ul></section>";
        let apps: Vec<(String, String)> = from_brief(body)
            .shown
            .into_iter()
            .map(|s| (s.app, s.title))
            .collect();
        let pair = |a: &str, t: &str| (a.to_string(), t.to_string());
        assert_eq!(
            apps,
            [
                pair("docs", "plan qxcd"),
                pair("memoria", "rota qxab"),
                pair("", "linked"),
            ]
        );
    }
}
