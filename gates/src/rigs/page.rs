//! The one reader of the pages memoria renders: an HTML parser with CSS selectors (`scraper`), and typed accessors for what gates assert on (§8.1, §8.9, gates 6, 8, 15, 27 and 38).
//!
//! Gates never scan markup by hand: a results page's withheld and
//! reconciling lines, its results and the app each came from, the egress
//! footer, refusal text, the sources page's sections, citations, forms,
//! every use of script and a page's whole shape all come from here, read the way a browser parses the page. Text
//! is the page's text as a reader sees it (entities decoded), trimmed;
//! [`Page::text`] also folds runs of whitespace into one space.
//!
//! ```
//! use memoria_gates::Page;
//! let page = Page::parse(
//!     "<p class=\"withheld\" data-app=\"Sheets\">Sheets did not answer; 1 result withheld.</p>\
//!      <ol><li class=\"result\"><div class=\"meta\"><span class=\"app\">Docs</span></div></li></ol>\
//!      <footer><p class=\"egress\">AI is off.</p></footer>",
//! );
//! assert_eq!(page.withheld(), ["Sheets did not answer; 1 result withheld."]);
//! assert_eq!(page.results_from("Docs"), 1);
//! assert_eq!(page.footer().as_deref(), Some("AI is off."));
//! ```

use memoria::testkit::TestResponse;
use scraper::{ElementRef, Html, Selector};

/// A parsed page, and the status it was served with when read from a response.
#[derive(Debug)]
pub struct Page {
    status: Option<u16>,
    html: Html,
}

/// One result on a results page: an `li.result`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultItem {
    /// The app it came from: the text of its `span.app` (empty if it has none).
    pub app: String,
    /// Its text, whitespace folded.
    pub text: String,
}

/// One result's citation, read the way a reader sees it (§8.1: app,
/// title, locator, marker, date and deep link).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    /// The text of its `span.app`.
    pub app: String,
    /// The text of the title its first link carries.
    pub title: String,
    /// The deep link that link names, without the search it came from.
    pub link: String,
    /// The text of its `div.meta`, whitespace folded: the locator, the
    /// marker, the date and the revision.
    pub meta: String,
}

/// One fact-box row, `div.fact li.fact-row`, as a reader sees it (§8.8, §8.9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactRowSeen {
    /// Its box's `data-kind`, e.g. `address`.
    pub kind: String,
    /// True when its box is a model box (`div.fact-model`, §8.9).
    pub model: bool,
    /// The text of its `span.fact-by`: the drawn 🤖 marker's words
    /// ("found by a model"), the provider and the model (empty on a
    /// validated row).
    pub by: String,
    /// The text of its `span.fact-label`.
    pub label: String,
    /// The text of its `strong.fact-value`, exactly, untrimmed.
    pub value: String,
    /// The text of its citation, `a.fact-cite`, whitespace folded.
    pub cite: String,
    /// The citation's `href`.
    pub link: String,
}

/// One form on a page, as a browser would submit it without script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    /// Its `method`, lowercased (a form with none submits `get`).
    pub method: String,
    /// Its `action` (empty if none).
    pub action: String,
    /// Its `enctype` (empty if none).
    pub enctype: String,
    /// Its fields as (name, type, value), in document order: each `input`;
    /// each `select` as type `select` with the value a browser submits
    /// untouched (the `selected` option's, else the first's); each
    /// `textarea` as type `textarea` with its text.
    pub inputs: Vec<(String, String, String)>,
}

impl Form {
    /// The value of the input named `name`, if the form has one.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.inputs
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, v)| v.as_str())
    }

    /// The type of the input named `name`, if the form has one.
    pub fn input_type(&self, name: &str) -> Option<&str> {
        self.inputs
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, t, _)| t.as_str())
    }
}

/// One element's name and attributes, in document order, for checks on
/// the tag itself (a `hidden` attribute, an inline style).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    /// The element's name, e.g. `footer`.
    pub name: String,
    /// Its attributes as (name, value), in source order.
    pub attrs: Vec<(String, String)>,
}

impl std::fmt::Display for Tag {
    /// The tag as `<name a="v" b="w">`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{}", self.name)?;
        for (k, v) in &self.attrs {
            write!(f, " {k}=\"{v}\"")?;
        }
        write!(f, ">")
    }
}

/// A selector from a constant in this file or a gate.
///
/// # Panics
/// If `css` is not a valid selector: a bug in the caller, not in the page.
fn selector(css: &str) -> Selector {
    Selector::parse(css).unwrap_or_else(|e| panic!("CSS selector {css:?}: {e}"))
}

/// An element's text, trimmed, as one string.
fn text_of(el: ElementRef<'_>) -> String {
    el.text().collect::<String>().trim().to_string()
}

/// An element's text with every run of whitespace folded into one space.
fn folded(el: ElementRef<'_>) -> String {
    el.text()
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `el` is shown as the page opens: see [`Page::shown_texts`].
fn shown(el: ElementRef<'_>) -> bool {
    let mut in_summary = false;
    for node in std::iter::once(el).chain(el.ancestors().filter_map(ElementRef::wrap)) {
        let v = node.value();
        let style: String = v
            .attr("style")
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        if v.attr("hidden").is_some()
            || style.contains("display:none")
            || style.contains("visibility:hidden")
            || v.name() == "template"
            || (v.name() == "details" && v.attr("open").is_none() && !in_summary)
        {
            return false;
        }
        in_summary = v.name() == "summary";
    }
    true
}

impl Page {
    /// Parses a page's body (a whole document or a fragment).
    pub fn parse(body: &str) -> Page {
        Page {
            status: None,
            html: Html::parse_document(body),
        }
    }

    /// Parses a response's body and keeps its status.
    pub fn of(response: &TestResponse) -> Page {
        Page {
            status: Some(response.status.as_u16()),
            ..Page::parse(&response.body)
        }
    }

    /// The status the page was served with, if it was read with [`Page::of`].
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// The text of every element `css` selects, in document order, trimmed.
    ///
    /// # Panics
    /// If `css` is not a valid selector.
    pub fn texts(&self, css: &str) -> Vec<String> {
        self.html.select(&selector(css)).map(text_of).collect()
    }

    /// The withheld lines, `p.withheld`, in order: one per app whose answers
    /// were withheld, e.g. "Sheets did not answer; 7 results withheld." (§8.1).
    pub fn withheld(&self) -> Vec<String> {
        self.texts("p.withheld")
    }

    /// The reconciling lines, `p.reconciling`, in order: one per source
    /// marked for re-announce (§4.1 rule 1, gate 27).
    pub fn reconciling(&self) -> Vec<String> {
        self.texts("p.reconciling")
    }

    /// The freshness lines, `p.freshness`, in order: one per sibling whose
    /// last pull failed or whose content is old (§8.1), e.g. "memoria's
    /// last pull of changes from Docs failed; its results are current as of
    /// 2026-11-30 09:00 UTC."
    pub fn freshness(&self) -> Vec<String> {
        self.texts("p.freshness")
    }

    /// Every `li.result` in rank order. A result folded under its document
    /// (a `li.result` inside `li.fold`) comes later in the page's source
    /// than some results it outranks; each item's `value` is its rank.
    fn result_items(&self) -> Vec<scraper::ElementRef<'_>> {
        let mut items: Vec<_> = self.html.select(&selector("li.result")).collect();
        items.sort_by_key(|li| {
            li.value()
                .attr("value")
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(usize::MAX)
        });
        items
    }

    /// The results, `li.result`, in rank order, each with its app.
    pub fn results(&self) -> Vec<ResultItem> {
        let app = selector("span.app");
        self.result_items()
            .into_iter()
            .map(|li| ResultItem {
                app: li.select(&app).next().map(text_of).unwrap_or_default(),
                text: folded(li),
            })
            .collect()
    }

    /// Each result's citation, `li.result`, in rank order; its `link` is the
    /// deep link its title's `href` names, without the search it came from
    /// ([`deep_link`]).
    pub fn citations(&self) -> Vec<Citation> {
        let (app, link, meta) = (
            selector("span.app"),
            selector("a[href]"),
            selector("div.meta"),
        );
        self.result_items()
            .into_iter()
            .map(|li| {
                let first = li.select(&link).next();
                Citation {
                    app: li.select(&app).next().map(text_of).unwrap_or_default(),
                    title: first.map(folded).unwrap_or_default(),
                    link: deep_link(
                        first
                            .and_then(|a| a.value().attr("href"))
                            .unwrap_or_default(),
                    ),
                    meta: li.select(&meta).next().map(folded).unwrap_or_default(),
                }
            })
            .collect()
    }

    /// The 🤖 answer's sentences (`section.answer span.sentence`), in
    /// order: each one's text, its citations' `[n]` marks included, and
    /// the `href` of each citation link (§8.4).
    pub fn answer_sentences(&self) -> Vec<(String, Vec<String>)> {
        let cite = selector("a.cite");
        self.html
            .select(&selector("section.answer span.sentence"))
            .map(|s| {
                let hrefs = s
                    .select(&cite)
                    .filter_map(|a| a.value().attr("href").map(str::to_string))
                    .collect();
                (folded(s), hrefs)
            })
            .collect()
    }

    /// Every fact-box row, box by box, in order (§8.8, §8.9).
    pub fn fact_rows(&self) -> Vec<FactRowSeen> {
        let (row, by, label, value, cite) = (
            selector("li.fact-row"),
            selector("span.fact-by"),
            selector("span.fact-label"),
            selector("strong.fact-value"),
            selector("a.fact-cite"),
        );
        let mut out = vec![];
        for b in self.html.select(&selector("div.fact")) {
            let kind = b.value().attr("data-kind").unwrap_or_default().to_string();
            let model = b.value().classes().any(|c| c == "fact-model");
            for li in b.select(&row) {
                let a = li.select(&cite).next();
                out.push(FactRowSeen {
                    kind: kind.clone(),
                    model,
                    by: li.select(&by).next().map(text_of).unwrap_or_default(),
                    label: li.select(&label).next().map(text_of).unwrap_or_default(),
                    value: li
                        .select(&value)
                        .next()
                        .map(|v| v.text().collect())
                        .unwrap_or_default(),
                    cite: a.map(folded).unwrap_or_default(),
                    link: a
                        .and_then(|a| a.value().attr("href"))
                        .unwrap_or_default()
                        .to_string(),
                });
            }
        }
        out
    }

    /// The `href` of every element `css` selects that has one, in order.
    ///
    /// # Panics
    /// If `css` is not a valid selector.
    pub fn hrefs(&self, css: &str) -> Vec<String> {
        self.html
            .select(&selector(css))
            .filter_map(|el| el.value().attr("href").map(str::to_string))
            .collect()
    }

    /// Every `form`, in document order.
    pub fn forms(&self) -> Vec<Form> {
        let input = selector("input, select, textarea");
        let option = selector("option");
        self.html
            .select(&selector("form"))
            .map(|f| {
                let attr = |k: &str| f.value().attr(k).unwrap_or_default().to_string();
                Form {
                    method: f
                        .value()
                        .attr("method")
                        .unwrap_or("get")
                        .to_ascii_lowercase(),
                    action: attr("action"),
                    enctype: attr("enctype"),
                    inputs: f
                        .select(&input)
                        .map(|i| {
                            let a = |k: &str| i.value().attr(k).unwrap_or_default().to_string();
                            match i.value().name() {
                                "select" => {
                                    let options: Vec<_> = i.select(&option).collect();
                                    let chosen = options
                                        .iter()
                                        .find(|o| o.value().attr("selected").is_some())
                                        .or(options.first());
                                    let value = chosen.map_or(String::new(), |o| {
                                        o.value()
                                            .attr("value")
                                            .map_or_else(|| text_of(*o), str::to_string)
                                    });
                                    (a("name"), "select".to_string(), value)
                                }
                                "textarea" => {
                                    (a("name"), "textarea".to_string(), i.text().collect())
                                }
                                _ => (a("name"), a("type"), a("value")),
                            }
                        })
                        .collect(),
                }
            })
            .collect()
    }

    /// Every use of script on the page, described: a `script` element, an
    /// event-handler attribute (`on…`), or a `javascript:` URL in an
    /// `href`, `src`, `action` or `formaction`. Empty for a scriptless page
    /// (§8.1, gate 15).
    pub fn scripts(&self) -> Vec<String> {
        let mut out = vec![];
        for el in self.html.root_element().descendent_elements() {
            let v = el.value();
            if v.name() == "script" {
                out.push("a <script> element".to_string());
            }
            for (k, val) in v.attrs() {
                let url = matches!(k, "href" | "src" | "action" | "formaction");
                if k.to_ascii_lowercase().starts_with("on") {
                    out.push(format!("<{} {k}>", v.name()));
                } else if url
                    && val
                        .trim_start()
                        .to_ascii_lowercase()
                        .starts_with("javascript:")
                {
                    out.push(format!("<{} {k}=\"javascript:…\">", v.name()));
                }
            }
        }
        out
    }

    /// The text of every element `css` selects that a reader sees without
    /// script, in document order, trimmed: not itself or inside an element
    /// that is `hidden`, styled `display:none` or `visibility:hidden`
    /// inline, a `template`, or a closed `details` (its `summary` aside). A
    /// loud line must be on the page as it opens, not one click away
    /// (§8.1, gate 15).
    ///
    /// # Panics
    /// If `css` is not a valid selector.
    pub fn shown_texts(&self, css: &str) -> Vec<String> {
        self.html
            .select(&selector(css))
            .filter(|el| shown(*el))
            .map(text_of)
            .collect()
    }

    /// How many results came from `app` (its name as the page shows it, e.g. `docs`).
    pub fn results_from(&self, app: &str) -> usize {
        self.results().iter().filter(|r| r.app == app).count()
    }

    /// The egress sentence in the page's footer, `footer p.egress` (§3.6, gate 38).
    pub fn footer(&self) -> Option<String> {
        self.texts("footer p.egress").into_iter().next()
    }

    /// Every egress line, `p.egress`, footer or not: a fragment states the
    /// mode without the layout's `footer` (gate 38).
    pub fn egress(&self) -> Vec<String> {
        self.texts("p.egress")
    }

    /// The refusal text, `p.refusal`, of an error or refused-search page.
    pub fn refusals(&self) -> Vec<String> {
        self.texts("p.refusal")
    }

    /// The highlighted words of every snippet, `mark`, in order.
    pub fn marks(&self) -> Vec<String> {
        self.texts("mark")
    }

    /// The text of the first element `css` selects, whitespace folded, or
    /// `None` if it selects nothing: one section of a page.
    ///
    /// # Panics
    /// If `css` is not a valid selector.
    pub fn section(&self, css: &str) -> Option<String> {
        self.html.select(&selector(css)).next().map(folded)
    }

    /// The contents of every `style` element: the page's stylesheets.
    pub fn styles(&self) -> Vec<String> {
        self.html
            .select(&selector("style"))
            .map(|s| s.text().collect())
            .collect()
    }

    /// Every element `css` selects, as its name and attributes.
    ///
    /// # Panics
    /// If `css` is not a valid selector.
    pub fn tags(&self, css: &str) -> Vec<Tag> {
        self.html
            .select(&selector(css))
            .map(|el| Tag {
                name: el.value().name().to_string(),
                attrs: el
                    .value()
                    .attrs()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            })
            .collect()
    }

    /// The page's shape: every element in document order as `name.class`
    /// (its whole class attribute, empty if none) and no other attribute, so
    /// two renderings that differ only in a per-session token compare equal.
    pub fn shape(&self) -> Vec<String> {
        self.html
            .root_element()
            .descendent_elements()
            .map(|el| {
                format!(
                    "{}.{}",
                    el.value().name(),
                    el.value().attr("class").unwrap_or("")
                )
            })
            .collect()
    }

    /// The page's whole text, every run of whitespace folded into one space.
    pub fn text(&self) -> String {
        folded(self.html.root_element())
    }
}

/// A result's `href` as a deep link: the results page writes
/// `/documents/{id}?q=…&page=N#p{n}`, the search kept so the document
/// page can link back to it; the passage cited is `/documents/{id}#p{n}`.
pub fn deep_link(href: &str) -> String {
    let (path, anchor) = href
        .split_once('#')
        .map_or((href, None), |(p, a)| (p, Some(a)));
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    match anchor {
        Some(a) => format!("{path}#{a}"),
        None => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESULTS: &str = "<!DOCTYPE html><html><head><style>footer{color:#444}</style></head><body>\
        <main><section id=\"results\">\
        <p class=\"reconciling\" data-app=\"Sheets\">Sheets is reconciling after a restore.</p>\
        <p class=\"withheld\" data-app=\"Docs\">Docs did not answer; 2 results withheld.</p>\
        <p class=\"withheld\" data-app=\"Calendar\">Calendar's answer was STALE; 1 result withheld.</p>\
        <ol><li class=\"result\"><div>a</div><div class=\"meta\"><span class=\"app\">docs</span> · passage 1</div>\
        <p class=\"snippet\">The <mark>qzv</mark> figure &amp; more</p></li>\
        <li class=\"result\"><div class=\"meta\"><span class=\"app\">sheets</span></div></li></ol>\
        </section></main><footer hidden><p class=\"egress\">AI is off.</p></footer></body></html>";

    #[test]
    fn a_results_page_yields_its_lines_results_and_footer_in_order() {
        let p = Page::parse(RESULTS);
        assert_eq!(p.reconciling(), ["Sheets is reconciling after a restore."]);
        assert_eq!(
            p.withheld(),
            [
                "Docs did not answer; 2 results withheld.",
                "Calendar's answer was STALE; 1 result withheld."
            ]
        );
        let apps: Vec<String> = p.results().into_iter().map(|r| r.app).collect();
        assert_eq!(apps, ["docs", "sheets"]);
        assert_eq!((p.results_from("docs"), p.results_from("calendar")), (1, 0));
        assert_eq!(p.marks(), ["qzv"]);
        assert_eq!(p.footer().as_deref(), Some("AI is off."));
        assert_eq!(p.styles(), ["footer{color:#444}"]);
        assert_eq!(p.tags("footer")[0].to_string(), "<footer hidden=\"\">");
        assert!(p.text().contains("The qzv figure & more"), "{}", p.text());
    }

    #[test]
    fn a_page_without_the_lines_yields_none_rather_than_guessing() {
        let p = Page::parse(
            "<p class=\"notice\">withheld</p><p class=\"refusal\">Sign in to search.</p>",
        );
        assert!(p.withheld().is_empty() && p.reconciling().is_empty() && p.results().is_empty());
        assert_eq!(p.footer(), None);
        assert_eq!(p.refusals(), ["Sign in to search."]);
        assert_eq!(p.status(), None);
    }

    #[test]
    fn a_page_yields_its_citations_forms_and_every_use_of_script() {
        let p = Page::parse(RESULTS);
        let c = &p.citations()[0];
        assert_eq!(
            (c.app.as_str(), c.title.as_str(), c.link.as_str()),
            ("docs", "", "")
        );
        assert_eq!(c.meta, "docs · passage 1");
        assert!(p.scripts().is_empty(), "{:?}", p.scripts());
        let f = Page::parse(
            "<form action=\"/\"><input name=\"q\" type=\"search\"></form>\
             <a href=\"javascript:go()\" onclick=\"go()\">x</a><script>go()</script>",
        );
        assert_eq!(f.forms()[0].method, "get");
        assert_eq!(f.forms()[0].input_type("q"), Some("search"));
        assert_eq!(f.scripts().len(), 3, "{:?}", f.scripts());
    }

    #[test]
    fn a_line_folded_away_hidden_or_styled_out_is_not_shown() {
        let p = Page::parse(
            "<p class=\"l\">open</p>\
             <details><summary><p class=\"l\">summary</p></summary><p class=\"l\">folded</p></details>\
             <details open><p class=\"l\">unfolded</p></details>\
             <div hidden><p class=\"l\">hidden</p></div>\
             <p class=\"l\" style=\"display: none\">styled</p>",
        );
        assert_eq!(p.texts("p.l").len(), 6);
        assert_eq!(p.shown_texts("p.l"), ["open", "summary", "unfolded"]);
    }

    #[test]
    fn the_shape_names_every_element_and_its_class_and_no_other_attribute() {
        let a = Page::parse("<form><input type=\"hidden\" name=\"csrf\" value=\"one\"></form>");
        let b = Page::parse("<form><input type=\"hidden\" name=\"csrf\" value=\"two\"></form>");
        assert_eq!(a.shape(), b.shape());
        assert!(a.shape().contains(&"input.".to_string()), "{:?}", a.shape());
    }
}
