//! Gate 15 (§8.1, §3.2, §10): the AI-off floor — every §8.1 affordance works scriptless with the provider unreachable, and a network guard asserts nothing left the instance.
//!
//! Size: fourteen floor cases share its world, its page reader and the network guard's syn walk; the guard's walk is the piece to move out when cases become table rows (issue 29).
//!
//! Each simulated case builds a world of fake siblings and no provider: the
//! world holds no host for §8.3's provider ([`PROVIDER_HOST`]), so it is
//! unreachable, and memoria runs with AI off (its only mode). A browser on
//! its own host drives memoria over HTTP the way a reader without script
//! would: it submits forms as their markup says and follows plain links.
//! Every page it reads goes through the page reader, and each must carry no
//! script (no `script` element, no event handler, no `javascript:` URL) and
//! the AI-off footer. After the run the network guard (the simulator's
//! `NetGuard`, which sits in memoria's one dialer) must show, presence
//! first, a lookup and a connection to every configured sibling, and then
//! nothing else: no lookup and no connection to any other host or port, the
//! provider's host named in particular. The last case reads the reference's
//! code to hold that the dialer is memoria's only way to the network, so
//! the guard hears everything memoria could send.
//!
//! Over 700 lines because it is eleven cases over one world and one guard
//! verdict (`no_egress`) they all end on; split, each half would re-export
//! the other's helpers.

use std::collections::BTreeSet;

use memoria::{MARKER_PERSON, MARKER_PERSON_LABEL, PAGE_SIZE_RESULTS};
use memoria_simulator::{CallKind, Memoria, Outage, Rung, SIBLING_PORT, SiblingSpec, TEAM, World};
use syn::visit::Visit;

use super::g38_egress_footer::AI_OFF_FOOTER;
use crate::rigs::page::Page;
use crate::rigs::sim::{check, fail, run_world};
use crate::{Case, Ctx, Failure, Gate};

/// §8.3's provider host, which no world in this gate holds (§8.3: "TensorX (api.tensorx.ai)").
pub const PROVIDER_HOST: &str = "api.tensorx.ai";

/// The reference's source tree, read by the last case.
const REFERENCE_SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../reference/src");

/// Names that open a socket or resolve a name without a `Dialer`: std's,
/// tokio's and the usual crates'. Any of them in the reference outside
/// [`NET_ALLOWED`] is a way out the guard would not hear.
const NET_NAMES: &[&str] = &[
    "TcpStream",
    "TcpListener",
    "TcpSocket",
    "UdpSocket",
    "UnixStream",
    "lookup_host",
    "ToSocketAddrs",
    "to_socket_addrs",
    "getaddrinfo",
    "reqwest",
    "ureq",
    "hickory_resolver",
    "trust_dns_resolver",
];

/// Where the reference may name one of [`NET_NAMES`], and why: (file under
/// `reference/src`, the top-level item it is inside, name). The item, not
/// just the file: a second `TcpStream` beside the dialer in its own file is
/// as much a way out as one anywhere else.
const NET_ALLOWED: &[(&str, &str, &str)] = &[
    // The production dialer: every sibling call's lookup and connect.
    ("net/transport.rs", "impl Dialer for TcpDialer", "TcpStream"),
    // `memoria serve` binds its listener; a listener accepts, it sends nothing.
    ("main.rs", "fn serve", "TcpListener"),
];

/// Gate 15.
pub static GATE: Gate = Gate {
    id: "15",
    title: "The AI-off floor works scriptless, and nothing leaves the instance",
    gates_md: &[
        "AI-off floor: every §8.1 affordance works scriptless with the provider unreachable; no egress, asserted by a network guard",
    ],
    sections: &["§8.1", "§3.2", "§10"],
    requirement: "Every §8.1 affordance (the GET form, ranked passages with app, title, locator, marker, date and deep link, pagination, loud withholding, the fact box, the document page, upload) works without script with the provider unreachable, and a network guard sees memoria look up and connect to its configured siblings and to nothing else.",
    cases: &[
        Case {
            id: "15/the-form-is-a-get-to-q",
            desc: "§8.1: \"With AI off, the floor: a GET form, ?q=\". The home page's search form is method GET to / with an input named q; submitting it as markup says (GET /?q=canary) answers with the canary's passages.",
            run: form_is_a_get,
        },
        Case {
            id: "15/every-passage-carries-its-citation",
            desc: "§8.1: \"ranked passages, each carrying app, title, locator, 👨/🤖 marker, date, and a deep link\". Five sibling passages: each result names its app and title, a passage locator, the 👨 marker drawn as an SVG figure beside its words (\"written by a person\", so it reads without an emoji font), the date it was edited in its sibling, from its S1 row's touched_at and named so (\"edited 30 November 2026 in Sheets\", not its import date), and a deep link /documents/{id}#p{n}; the passage naming the canary three times ranks first.",
            run: every_passage_cited,
        },
        Case {
            id: "15/the-deep-link-opens-the-document-page",
            desc: "§8.1's deep link, followed: the first result's link opens the document page, titled as the result was, holding the passage its fragment names.",
            run: deep_link_opens_document,
        },
        Case {
            id: "15/pagination-is-plain-links",
            desc: "§8.1: \"Scriptless, paginated\". A page size and five more passages: page 1 shows a full page and a plain Next link to /?q=…&page=2; following it shows the other five and a Previous link; no passage is on both pages.",
            run: pagination_is_plain_links,
        },
        Case {
            id: "15/withholding-is-loud",
            desc: "§8.1: \"UNKNOWN from a sibling → “Sheets did not answer; 7 results withheld.”\" Docs answers S2 with 503: the page says \"Docs did not answer; 3 results withheld.\" where a reader sees it as the page opens (not in a closed details, hidden or styled out), and still shows Sheets' two passages.",
            run: withholding_is_loud,
        },
        Case {
            id: "15/a-failed-pull-says-how-current-the-page-is",
            desc: "§8.1: \"the page states the time the corpus is current as of\" when S1 fails. Docs' feed answers 503 after the wake: the question that meets it, more than a minute after the wake, still shows Docs' held passages, and its pull fails; the next page says, in one line a reader sees as it opens, that memoria's last pull from Docs failed and its results are current as of the wake's pull (the simulation's epoch, to the minute, not the failure's minute), names no other sibling, and still shows Docs' passages.",
            run: failed_pull_names_freshness,
        },
        Case {
            id: "15/the-fact-box-is-on-the-floor",
            desc: "§8.1: \"§8.8's fact box is part of this floor … it renders inside the results region rather than beside it.\" An office phone number in a Sheets passage: the box is inside section#results, holds the number, and cites the passage by its deep link.",
            run: fact_box_on_the_floor,
        },
        Case {
            id: "15/upload-is-a-form-post",
            desc: "Upload without script (§8.1's floor, §9.1's POST /documents): the home page's upload form is a multipart POST to /documents carrying a CSRF token; posting exactly its fields stores the file, redirects to its document page, and a search finds it.",
            run: upload_is_a_form_post,
        },
        Case {
            id: "15/the-brief-is-a-get-form",
            desc: "A brief without script (issue 16's GET /brief, beside §8.1's floor): the home page links to /brief; its form is a GET to /brief with a task, a scope and a budget; submitting exactly its fields with the canary as the task answers a brief whose first line is resolved, quoting Sheets' passage with a deep link to it, and Docs' passage, which Docs does not answer S2 for, withheld loudly where a reader sees it as the page opens.",
            run: brief_is_a_get_form,
        },
        Case {
            id: "15/ai-off-a-question-calls-no-model-and-renders-no-answer",
            desc: "Presence: with AI on, a question over four Sheets items sends one request to the stub provider and renders a 🤖 answer. The same world with AI off (the stub still served on the provider's host): the same question sends it nothing, the guard hears no lookup of the provider's host, and the page holds no answer, no route line and no answer line, with the AI-off footer: the list exactly as the floor renders it.",
            run: ai_off_answers_nothing,
        },
        Case {
            id: "15/the-guard-hears-memoria-and-no-one-else",
            desc: "The guard itself: after a warm-up, a search and a search no passage matches (where a fallback to meaning would call the provider) it holds a lookup and a connection per configured sibling (presence), the world resolves no provider host (a dial from the browser finds nothing), and the browser's own dials are not in memoria's record.",
            run: guard_hears_memoria,
        },
        Case {
            id: "15/the-guard-hears-a-dial-that-fails",
            desc: "The guard hears what does not connect, as every dial to the provider would not: memoria configured with a Calendar the world does not hold looks up its host and records the attempt as unresolved, beside Sheets' lookup and connection.",
            run: guard_hears_a_failed_dial,
        },
        Case {
            id: "15/the-dialer-is-the-only-way-out",
            desc: "What makes the guard complete: the reference's code names a socket or a resolver (TcpStream, UdpSocket, lookup_host, ToSocketAddrs, reqwest …) only inside the production dialer (impl Dialer for TcpDialer) and memoria serve's listener (fn serve) — the item, not merely its file — so every lookup and connection memoria makes passes the Dialer the guard wraps.",
            run: dialer_is_the_only_way_out,
        },
    ],
};

fn ai_off_answers_nothing(ctx: &mut Ctx) -> Result<(), Failure> {
    use crate::rigs::answer::{ITEMS, item_id, question, title};
    let canary = ctx.canary();
    let q = question(&canary);
    for ai in [true, false] {
        let mut w = World::new(ctx.seed(), vec![SiblingSpec::own("sheets")]);
        for i in 0..ITEMS {
            let body = crate::rigs::answer::body(&canary, i);
            put(&w, "sheets", &item_id(i), &title(i), &body);
        }
        let stub = memoria_simulator::StubProvider::new();
        stub.set_chat_default_reply(Some("It changed [1]."));
        let egress = if ai {
            memoria::EgressMode::AiOn
        } else {
            memoria::EgressMode::AiOff
        };
        w.use_stub_provider(&stub, egress);
        let guard = w.net_guard().clone();
        let (q, s2) = (q.clone(), stub.clone());
        run_world(&w, move |mut m| async move {
            m.warmed_up().await?;
            let page = crate::rigs::page::of(&m.search(ANA, &q).await.response);
            check(
                page.results().len() == ITEMS,
                "the question lists the four items",
                format!("{:?}", page.results()),
            )?;
            let answered = page.section("section.answer").is_some();
            if ai {
                return check(
                    s2.chat_calls() == 1 && answered,
                    "with AI on, the question calls the stub once and renders an answer (presence)",
                    format!("{} calls, answered {answered}", s2.chat_calls()),
                );
            }
            check(
                s2.chat_calls() == 0,
                "with AI off, the stub provider hears nothing",
                format!("{} calls", s2.chat_calls()),
            )?;
            check(
                !guard.hosts().contains(PROVIDER_HOST),
                "with AI off, memoria never looks up the provider's host",
                format!("{:?}", guard.hosts()),
            )?;
            check(
                !answered
                    && page.texts("p.answer-route").is_empty()
                    && page.texts("p.answer-failed").is_empty(),
                "with AI off, the page holds no answer, no route line and no answer line",
                "it holds one",
            )?;
            check(
                page.footer().as_deref() == Some(AI_OFF_FOOTER),
                "with AI off, the footer is the AI-off footer",
                format!("{:?}", page.footer()),
            )
        })?;
    }
    Ok(())
}

/// memoria's host name for one of its own siblings.
fn sibling_host(app: &str) -> String {
    SiblingSpec::own(app).host()
}

/// A world of memoria's own siblings `apps`, and no provider.
fn world(ctx: &Ctx, apps: &[&str]) -> World {
    World::new(
        ctx.seed(),
        apps.iter().map(|a| SiblingSpec::own(a)).collect(),
    )
}

/// Reads a page the browser got: it must carry no script and the AI-off
/// footer, or the floor fails here.
fn read(page: &memoria_simulator::Page, what: &str) -> Result<Page, String> {
    let p = crate::rigs::page::of(&page.response);
    check(
        p.scripts().is_empty(),
        format!("{what} works without script"),
        format!("{:?}", p.scripts()),
    )?;
    check(
        p.footer().as_deref() == Some(AI_OFF_FOOTER),
        format!("{what} states that AI is off"),
        format!("{:?}", p.footer()),
    )?;
    Ok(p)
}

/// Files one team item in `app`'s fake sibling.
fn put(w: &World, app: &str, id: &str, title: &str, body: &str) {
    w.fake(app).model().with(|m| {
        m.add_item(id, Rung::Team, title, body).expect("item");
    });
}

/// Files one team item a title in `app`'s fake sibling, its ids `prefix`
/// and a count from 0 (`sh-0`, `dc-1`), each body saying `words` of the
/// canary once.
fn put_titles(w: &World, (app, prefix): (&str, &str), titles: &[&str], canary: &str, words: &str) {
    for (i, t) in titles.iter().enumerate() {
        put(w, app, &format!("{prefix}-{i}"), t, &body(t, canary, words));
    }
}

/// A body that matches `canary` once, titled `title`.
fn body(title: &str, canary: &str, words: &str) -> String {
    format!("# {title}\n\nThe {canary} {words}.\n")
}

/// The guard's verdict on a finished run: presence (a lookup and a
/// connection to every configured sibling at its port), then absence
/// (nothing else, the provider's host named).
fn no_egress(world: &World, apps: &[&str]) -> Result<(), Failure> {
    let guard = world.net_guard();
    let siblings: BTreeSet<String> = apps.iter().map(|a| sibling_host(a)).collect();
    let connected = guard.connected();
    let looked_up = guard.looked_up();
    let missing: Vec<&String> = siblings
        .iter()
        .filter(|h| !looked_up.contains(*h) || !connected.contains(&((*h).clone(), SIBLING_PORT)))
        .collect();
    if !missing.is_empty() {
        return Err(Failure::new(
            "the guard saw memoria look up and connect to every configured sibling (presence)",
            format!("not seen: {missing:?}; seen: {:?}", guard.events()),
        ));
    }
    let provider: Vec<_> = guard
        .events()
        .into_iter()
        .filter(|e| e.host() == PROVIDER_HOST)
        .collect();
    if !provider.is_empty() {
        return Err(Failure::new(
            format!("no lookup of and no connection to the provider's host {PROVIDER_HOST}"),
            format!("{provider:?}"),
        ));
    }
    let stray: Vec<_> = guard
        .events()
        .into_iter()
        .filter(|e| match e {
            memoria_simulator::NetEvent::Lookup { host } => !siblings.contains(host),
            memoria_simulator::NetEvent::Connect { host, port, .. } => {
                !siblings.contains(host) || *port != SIBLING_PORT
            }
        })
        .collect();
    if !stray.is_empty() {
        return Err(Failure::new(
            "no lookup and no connection to anything but the configured siblings",
            format!("{stray:?}"),
        ));
    }
    Ok(())
}

/// Runs `scenario` in `world` and then the guard's verdict.
fn floor<F, Fut>(world: &World, apps: &[&str], scenario: F) -> Result<(), Failure>
where
    F: FnOnce(Memoria) -> Fut + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + 'static,
{
    run_world(world, scenario)?;
    no_egress(world, apps)
}

const ANA: &str = memoria_simulator::OWNERS[0];

fn form_is_a_get(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let w = world(ctx, &["sheets"]);
    put(
        &w,
        "sheets",
        "sh-1",
        "Budget",
        &body("Budget", &canary, "figure rose"),
    );
    floor(&w, &["sheets"], move |mut m| async move {
        m.warmed_up().await?;
        let home = read(&m.get(ANA, "/").await, "the home page")?;
        let form = home
            .forms()
            .into_iter()
            .find(|f| f.input_type("q").is_some())
            .ok_or_else(|| {
                fail(
                    "a search form with an input named q",
                    format!("{:?}", home.forms()),
                )
            })?;
        check(
            form.method == "get" && form.action == "/",
            "the search form is method GET to /",
            format!("{form:?}"),
        )?;
        // What a browser submits for that form: the action, ?q=.
        let uri = format!(
            "{}?q={}",
            form.action,
            memoria::testkit::form_encode(&canary)
        );
        let got = m.get(ANA, &uri).await;
        check(
            got.response.status == 200,
            "the form's GET answers 200",
            got.response.status.to_string(),
        )?;
        let page = read(&got, "the results page")?;
        check(
            page.results().len() == 1 && page.marks().iter().any(|k| k == &canary),
            "the canary's one passage, the canary marked",
            format!("{:?} marks {:?}", page.results(), page.marks()),
        )
    })
}

/// Whether `s` dates a sibling passage by its own revision, as its S1 row's
/// `touched_at` gave it (issue 31): "edited 30 November 2026 in Sheets".
/// The fakes stamp every item at the simulated epoch's day.
fn is_edited_in(s: &str, app: &str) -> bool {
    let edited = memoria::DocumentDate {
        kind: memoria::DateKind::Edited,
        at: memoria_simulator::EPOCH_UNIX_S,
    };
    s == edited.phrase(&memoria::app_display_name(app))
}

/// Whether `link` is a deep link, `/documents/{id}#p{n}`.
fn is_deep_link(link: &str) -> bool {
    link.strip_prefix("/documents/")
        .and_then(|rest| rest.split_once("#p"))
        .is_some_and(|(id, n)| {
            !id.is_empty() && !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit())
        })
}

const TITLES: [&str; 5] = ["Budget", "Roadmap", "Minutes", "Hiring", "Offsite"];

fn every_passage_cited(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let apps = ["sheets", "docs"];
    let w = world(ctx, &apps);
    let thrice = format!(
        "# {}\n\nThe {canary} figure, the {canary} total and the {canary} line.\n",
        TITLES[0]
    );
    put(&w, "sheets", "sh-0", TITLES[0], &thrice);
    let once = "is mentioned once among many other words here";
    for (i, t) in TITLES[1..3].iter().enumerate() {
        put(
            &w,
            "sheets",
            &format!("sh-{}", i + 1),
            t,
            &body(t, &canary, once),
        );
    }
    put_titles(&w, ("docs", "dc"), &TITLES[3..], &canary, once);
    floor(&w, &apps, move |mut m| async move {
        m.warmed_up().await?;
        let page = read(&m.search(ANA, &canary).await, "the results page")?;
        let cites = page.citations();
        check(
            cites.len() == TITLES.len(),
            format!("{} passages (presence)", TITLES.len()),
            format!("{cites:?}"),
        )?;
        check(
            cites[0].title == TITLES[0],
            "ranked: the passage naming the canary three times is first",
            format!("{cites:?}"),
        )?;
        for c in &cites {
            let tokens: Vec<&str> = c.meta.split(" · ").collect();
            let ok = ["sheets", "docs"].contains(&c.app.as_str())
                && TITLES.contains(&c.title.as_str())
                && tokens.iter().any(|t| {
                    t.strip_prefix("passage ")
                        .is_some_and(|n| n.parse::<u32>().is_ok())
                })
                && tokens.contains(&MARKER_PERSON_LABEL)
                && tokens.iter().any(|t| is_edited_in(t, &c.app))
                && is_deep_link(&c.link);
            check(
                ok,
                "each result carries its app, title, a passage locator, the 👨 marker with its label, the date it was edited in its sibling (\"edited 30 November 2026 in Sheets\") and a deep link /documents/{id}#p{n}",
                format!("{c:?}"),
            )?;
        }
        // The marker is drawn, not a font's emoji: an SVG figure in each
        // result's marker, and no emoji character left beside its words.
        let figures = page.tags("li.result span.marker svg").len();
        let markers = page.tags("li.result span.marker").len();
        check(
            figures == cites.len()
                && markers == cites.len()
                && !page.text().contains(MARKER_PERSON),
            "each result's 👨 marker is an SVG figure beside its words, with no emoji for a font to miss",
            format!(
                "{figures} figures, {markers} markers, {} results",
                cites.len()
            ),
        )?;
        Ok(())
    })
}

fn deep_link_opens_document(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let w = world(ctx, &["sheets"]);
    let roadmap =
        format!("# Roadmap\n\nAn opening passage.\n\n## Later\n\nThe {canary} milestone moved.\n");
    put(&w, "sheets", "sh-1", "Roadmap", &roadmap);
    floor(&w, &["sheets"], move |mut m| async move {
        m.warmed_up().await?;
        let page = read(&m.search(ANA, &canary).await, "the results page")?;
        let first = page
            .citations()
            .into_iter()
            .next()
            .ok_or_else(|| fail("a result to follow (presence)", "none"))?;
        let (path, fragment) = first
            .link
            .split_once('#')
            .ok_or_else(|| fail("a deep link with a fragment", &first.link))?;
        let got = m.get(ANA, path).await;
        check(
            got.response.status == 200,
            "the deep link's page answers 200",
            got.response.status.to_string(),
        )?;
        let doc = read(&got, "the document page")?;
        check(
            doc.texts("h1") == ["Roadmap"],
            "the document page is titled as the result was",
            format!("{:?}", doc.texts("h1")),
        )?;
        let passage = doc
            .section(&format!("section.passage#{fragment}"))
            .unwrap_or_default();
        check(
            passage.contains(&canary),
            format!("the passage #{fragment} is on the page, holding the matched words"),
            passage,
        )
    })
}

fn pagination_is_plain_links(ctx: &mut Ctx) -> Result<(), Failure> {
    const MORE: usize = 5;
    let canary = ctx.canary();
    let total = PAGE_SIZE_RESULTS + MORE;
    let w = world(ctx, &["sheets"]);
    for i in 0..total {
        let t = format!("Note {i}");
        put(
            &w,
            "sheets",
            &format!("sh-{i}"),
            &t,
            &body(&t, &canary, "is on this note"),
        );
    }
    floor(&w, &["sheets"], move |mut m| async move {
        m.warmed_up().await?;
        let one = read(&m.search(ANA, &canary).await, "page 1")?;
        let next = one.hrefs("nav.pages a");
        let want = format!("/?q={}&page=2", memoria::testkit::form_encode(&canary));
        check(
            one.results().len() == PAGE_SIZE_RESULTS && next == [want.clone()],
            format!("page 1 holds {PAGE_SIZE_RESULTS} passages and one plain link, to {want}"),
            format!("{} passages, links {next:?}", one.results().len()),
        )?;
        let two = read(&m.get(ANA, &want).await, "page 2")?;
        let back = format!("/?q={}&page=1", memoria::testkit::form_encode(&canary));
        check(
            two.results().len() == MORE && two.hrefs("nav.pages a") == [back.clone()],
            format!("page 2 holds the other {MORE} and a plain link back, to {back}"),
            format!(
                "{} passages, links {:?}",
                two.results().len(),
                two.hrefs("nav.pages a")
            ),
        )?;
        let firsts: BTreeSet<String> = one.citations().into_iter().map(|c| c.link).collect();
        let seconds: BTreeSet<String> = two.citations().into_iter().map(|c| c.link).collect();
        check(
            firsts.is_disjoint(&seconds) && firsts.len() + seconds.len() == total,
            format!("{total} different passages across the two pages"),
            format!(
                "{} and {}, {} on both",
                firsts.len(),
                seconds.len(),
                firsts.intersection(&seconds).count()
            ),
        )
    })
}

fn withholding_is_loud(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let apps = ["sheets", "docs"];
    let w = world(ctx, &apps);
    put_titles(&w, ("sheets", "sh"), &TITLES[..2], &canary, "is in a sheet");
    put_titles(&w, ("docs", "dc"), &TITLES[2..], &canary, "is in a doc");
    let docs = w.fake("docs").clone();
    floor(&w, &apps, move |mut m| async move {
        m.warmed_up().await?;
        docs.faults()
            .set_outage_for(Some(Outage::Status(503)), Some(CallKind::S2));
        let page = read(&m.search(ANA, &canary).await, "the results page")?;
        check(
            page.withheld() == ["Docs did not answer; 3 results withheld."],
            "one line naming Docs and the three passages it did not answer for",
            format!("{:?}", page.withheld()),
        )?;
        // §8.1: "Loud withholding": the line is on the page as it opens,
        // not folded into a closed details, hidden or styled out.
        check(
            page.shown_texts("p.withheld") == page.withheld(),
            "the withheld line is shown as the page opens, not folded or hidden away",
            format!("{:?}", page.tags("details, [hidden], [style]")),
        )?;
        check(
            page.results_from("sheets") == 2 && page.results_from("docs") == 0,
            "Sheets' two passages still shown, none of Docs'",
            format!("{:?}", page.results()),
        )
    })
}

fn failed_pull_names_freshness(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let apps = ["sheets", "docs"];
    let w = world(ctx, &apps);
    put_titles(&w, ("sheets", "sh"), &TITLES[..2], &canary, "is held");
    put_titles(&w, ("docs", "dc"), &TITLES[2..], &canary, "is held");
    let docs = w.fake("docs").clone();
    floor(&w, &apps, move |mut m| async move {
        m.warmed_up().await?;
        let first = read(&m.search(ANA, &canary).await, "the first results page")?;
        check(
            first.freshness().is_empty() && first.results_from("docs") == 3,
            "right after the wake's pulls the page names no sibling as behind and shows Docs' three passages (presence)",
            format!("{:?} {:?}", first.freshness(), first.results()),
        )?;
        docs.faults()
            .set_outage_for(Some(Outage::Status(503)), Some(CallKind::S1));
        // Past the epoch's minute: the line dates Docs' content to the
        // minute, so a failure dated to the failed pull would read as the
        // wake's pull were both in one minute.
        tokio::time::sleep(std::time::Duration::from_secs(
            memoria::S1_PULL_INTERVAL_MIN_S.unsigned_abs() + 61,
        ))
        .await;
        // This question is due to pull; its page is what memoria held.
        m.search(ANA, &canary).await;
        m.settle_follow_ups().await;
        let page = read(
            &m.search(ANA, &canary).await,
            "the page after a failed pull",
        )?;
        let as_of = memoria::iso_date_time(memoria_simulator::EPOCH_UNIX_S);
        let want = format!(
            "memoria's last pull of changes from Docs failed; its results are current as of {as_of} UTC."
        );
        check(
            page.freshness() == [want.clone()],
            format!("one line: {want:?}"),
            format!("{:?}", page.freshness()),
        )?;
        check(
            page.shown_texts("p.freshness") == page.freshness(),
            "the freshness line is shown as the page opens, not folded or hidden away",
            format!("{:?}", page.tags("details, [hidden], [style]")),
        )?;
        check(
            page.results_from("docs") == 3 && page.results_from("sheets") == 2,
            "what memoria holds of Docs is still shown beside Sheets': a failed pull withholds nothing",
            format!("{:?}", page.results()),
        )
    })
}

fn brief_is_a_get_form(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let apps = ["sheets", "docs"];
    let w = world(ctx, &apps);
    put(
        &w,
        "sheets",
        "sh-1",
        "Budget",
        &body("Budget", &canary, "figure rose"),
    );
    put(
        &w,
        "docs",
        "dc-1",
        "Minutes",
        &body("Minutes", &canary, "is in a doc"),
    );
    let docs = w.fake("docs").clone();
    floor(&w, &apps, move |mut m| async move {
        m.warmed_up().await?;
        docs.faults()
            .set_outage_for(Some(Outage::Status(503)), Some(CallKind::S2));
        let home = read(&m.get(ANA, "/").await, "the home page")?;
        check(
            home.hrefs("main a").iter().any(|h| h == "/brief"),
            "the home page links to /brief",
            format!("{:?}", home.hrefs("main a")),
        )?;
        let ask = read(&m.get(ANA, "/brief").await, "the brief form")?;
        let form = ask
            .forms()
            .into_iter()
            .find(|f| f.action == "/brief")
            .ok_or_else(|| {
                fail(
                    "a form whose action is /brief",
                    format!("{:?}", ask.forms()),
                )
            })?;
        check(
            form.method == "get"
                && ["task", "scope", "budget"]
                    .iter()
                    .all(|n| form.value(n).is_some()),
            "the brief form is a GET to /brief with a task, a scope and a budget",
            format!("{form:?}"),
        )?;
        // What a browser submits for that form, the canary typed as the
        // task: every named field but an unticked checkbox, in order.
        let fields: Vec<String> = form
            .inputs
            .iter()
            .filter(|(name, kind, _)| !name.is_empty() && kind != "checkbox")
            .map(|(name, _, value)| {
                let value = if name == "task" {
                    canary.as_str()
                } else {
                    value.as_str()
                };
                format!("{name}={}", memoria::testkit::form_encode(value))
            })
            .collect();
        let got = m
            .get(ANA, &format!("{}?{}", form.action, fields.join("&")))
            .await;
        check(
            got.response.status == 200,
            "the form's GET answers 200",
            got.response.status.to_string(),
        )?;
        let page = read(&got, "the brief page")?;
        check(
            page.texts("#brief p.status") == ["resolved"],
            "the brief's first line is resolved",
            format!("{:?}", page.texts("#brief p.status")),
        )?;
        let quoted = page.texts("#brief ol.excerpts blockquote");
        check(
            quoted.iter().any(|q| q.contains(&canary)),
            "an excerpt quotes Sheets' passage",
            format!("{quoted:?}"),
        )?;
        let links = page.hrefs("#brief ol.excerpts a");
        check(
            !links.is_empty() && links.iter().all(|l| is_deep_link(l)),
            "every excerpt links to its passage, /documents/{id}#p{n}",
            format!("{links:?}"),
        )?;
        check(
            page.withheld() == ["Docs did not answer; 1 result withheld."]
                && page.shown_texts("p.withheld") == page.withheld(),
            "Docs' passage is withheld in one line, shown as the page opens",
            format!("{:?}", page.withheld()),
        )?;
        check(
            !page.text().contains("Minutes"),
            "nothing of Docs' withheld item is on the page",
            "its title is",
        )
    })
}

fn fact_box_on_the_floor(ctx: &mut Ctx) -> Result<(), Failure> {
    const NUMBER: &str = "01 547 7801";
    let canary = ctx.canary();
    let w = world(ctx, &["sheets"]);
    let office = format!("# Office\n\nThe {canary} office phone: {NUMBER}\n");
    put(&w, "sheets", "sh-office", "Office", &office);
    floor(&w, &["sheets"], move |mut m| async move {
        m.warmed_up().await?;
        let page = read(
            &m.search(ANA, &format!("{canary} office phone")).await,
            "the results page",
        )?;
        check(
            page.texts("section#results section.facts strong.fact-value") == [NUMBER],
            "the box, inside the results region, holds the office number",
            format!("{:?}", page.texts("section.facts strong.fact-value")),
        )?;
        let cites = page.hrefs("section#results section.facts a.fact-cite");
        let results: Vec<String> = page.citations().into_iter().map(|c| c.link).collect();
        check(
            cites.len() == 1 && is_deep_link(&cites[0]) && results.contains(&cites[0]),
            "the box cites the listed passage by its deep link",
            format!("box cites {cites:?}, results {results:?}"),
        )
    })
}

fn upload_is_a_form_post(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let w = world(ctx, &["sheets"]);
    let name = "field-notes.md";
    let file = format!("# Field notes\n\nThe {canary} survey is done.\n");
    floor(&w, &["sheets"], move |mut m| async move {
        m.warmed_up().await?;
        let home = read(&m.get(ANA, "/").await, "the home page")?;
        let form = home
            .forms()
            .into_iter()
            .find(|f| f.input_type("file").is_some())
            .ok_or_else(|| {
                fail(
                    "an upload form with a file input",
                    format!("{:?}", home.forms()),
                )
            })?;
        check(
            form.method == "post"
                && form.action == "/documents"
                && form.enctype == "multipart/form-data",
            "the upload form is a multipart POST to /documents",
            format!("{form:?}"),
        )?;
        let token = form
            .inputs
            .iter()
            .find(|(_, t, v)| t == "hidden" && !v.is_empty())
            .cloned()
            .ok_or_else(|| fail("the form carries a hidden CSRF token", format!("{form:?}")))?;
        let file_field = form
            .inputs
            .iter()
            .find(|(_, t, _)| t == "file")
            .map(|(n, _, _)| n.clone())
            .unwrap_or_default();
        let (content_type, bytes) =
            multipart(&[(&token.0, &token.2)], &file_field, name, file.as_bytes());
        let posted = m.post(ANA, &form.action, &content_type, bytes).await;
        let location = posted
            .response
            .location()
            .map(str::to_string)
            .filter(|l| l.starts_with("/documents/"))
            .ok_or_else(|| {
                fail(
                    "the POST redirects to the stored document",
                    posted.response.status.to_string(),
                )
            })?;
        let doc = read(&m.get(ANA, &location).await, "the uploaded document's page")?;
        check(
            doc.texts("h1") == ["Field notes"],
            "the document page shows the upload",
            format!("{:?}", doc.texts("h1")),
        )?;
        let found = read(&m.search(ANA, &canary).await, "the results page")?;
        let links: Vec<String> = found.citations().into_iter().map(|c| c.link).collect();
        check(
            links.iter().any(|l| l.split('#').next() == Some(&location)),
            "a search finds the uploaded document",
            format!("{links:?}"),
        )
    })
}

/// A `multipart/form-data` body as a browser builds it from a form's
/// `fields` and one file: (content type, body).
pub(crate) fn multipart(
    fields: &[(&str, &str)],
    file_field: &str,
    name: &str,
    bytes: &[u8],
) -> (String, Vec<u8>) {
    let boundary = "gate15-boundary-0b4f";
    let mut body = Vec::new();
    for (k, v) in fields {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n")
                .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{file_field}\"; filename=\"{name}\"\r\nContent-Type: text/markdown\r\n\r\n").as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

fn guard_hears_memoria(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let unmatched = ctx.canary();
    let apps = ["sheets", "docs"];
    let w = world(ctx, &apps);
    put(
        &w,
        "docs",
        "dc-1",
        "Minutes",
        &body("Minutes", &canary, "was agreed"),
    );
    let guard = w.net_guard().clone();
    run_world(&w, move |mut m| async move {
        m.warmed_up().await?;
        let page = read(&m.search(ANA, &canary).await, "the results page")?;
        check(
            page.results_from("docs") == 1,
            "the search finds the Docs passage",
            format!("{:?}", page.results()),
        )?;
        // §8.1: "Lexical only, since embeddings need a provider — and per
        // §3.2, nothing leaves the instance in this mode": a search no word
        // matches is where a fallback to meaning would reach for one.
        let none = read(&m.search(ANA, &unmatched).await, "an empty results page")?;
        check(
            none.results().is_empty() && none.texts("section#results p") == ["No passage matched."],
            "a search no passage holds says so, and nothing more",
            format!("{:?}", none.texts("section#results p")),
        )?;
        let before = guard.events().len();
        // The browser, not memoria: the world holds no provider host.
        let dialled = turmoil::net::TcpStream::connect((PROVIDER_HOST, 443)).await;
        check(
            dialled.as_ref().err().map(std::io::Error::kind) == Some(std::io::ErrorKind::NotFound),
            format!(
                "{PROVIDER_HOST} resolves to nothing in the world: the provider is unreachable"
            ),
            format!("{:?}", dialled.map(|_| "connected")),
        )?;
        check(
            guard.events().len() == before,
            "a dial that is not memoria's is not in memoria's record",
            format!("{:?}", guard.events()),
        )
    })?;
    no_egress(&w, &apps)?;
    let hosts = w.net_guard().hosts();
    let want: BTreeSet<String> = apps.iter().map(|a| sibling_host(a)).collect();
    if hosts != want || !want.iter().all(|h| h.starts_with(&format!("{TEAM}."))) {
        return Err(Failure::new(
            format!("memoria reached exactly {want:?}"),
            format!("{hosts:?}"),
        ));
    }
    Ok(())
}

fn guard_hears_a_failed_dial(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut w = world(ctx, &["sheets"]);
    let (sheets, absent) = (sibling_host("sheets"), sibling_host("calendar"));
    w.configure_extra_url(&format!("http://{absent}:{SIBLING_PORT}"));
    run_world(&w, move |mut m| async move {
        // Calendar's share of the warm-up fails; that is the point.
        let _ = m.warmed_up().await;
        Ok(())
    })?;
    let guard = w.net_guard();
    let events = guard.events();
    let attempted = events.iter().any(|e| {
        matches!(e, memoria_simulator::NetEvent::Connect { host, port, outcome }
            if *host == absent && *port == SIBLING_PORT
                && *outcome != memoria_simulator::DialOutcome::Connected)
    });
    if !guard.looked_up().contains(&absent) || !attempted {
        return Err(Failure::new(
            format!("the guard recorded the lookup of {absent} and the attempt that found nothing"),
            format!("{events:?}"),
        ));
    }
    if !guard.connected().contains(&(sheets.clone(), SIBLING_PORT)) {
        return Err(Failure::new(
            format!("beside it, the connection to {sheets} (presence)"),
            format!("{events:?}"),
        ));
    }
    let hosts = guard.hosts();
    let want: BTreeSet<String> = [sheets, absent].into();
    if hosts != want {
        return Err(Failure::new(
            format!("memoria asked for exactly {want:?}"),
            format!("{hosts:?}"),
        ));
    }
    Ok(())
}

/// One name from [`NET_NAMES`] in the reference.
struct NetName {
    /// The file under `reference/src`.
    file: String,
    /// The top-level item it is inside, e.g. `impl Dialer for TcpDialer`
    /// or `fn serve` (empty outside any).
    item: String,
    /// The name.
    name: String,
    /// Its line.
    line: usize,
}

/// Every name in the reference from [`NET_NAMES`], with where it is.
struct NetNames {
    file: String,
    /// The top-level item being read.
    item: String,
    found: Vec<NetName>,
}

impl NetNames {
    fn note(&mut self, ident: &proc_macro2::Ident) {
        let name = ident.to_string();
        if NET_NAMES.contains(&name.as_str()) {
            self.found.push(NetName {
                file: self.file.clone(),
                item: self.item.clone(),
                name,
                line: ident.span().start().line,
            });
        }
    }
}

/// A top-level item's name as [`NET_ALLOWED`] writes it: `fn serve`,
/// `impl Dialer for TcpDialer`, `impl TcpDialer`, `mod tests`.
fn item_name(item: &syn::Item) -> String {
    let last = |p: &syn::Path| {
        p.segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default()
    };
    match item {
        syn::Item::Fn(f) => format!("fn {}", f.sig.ident),
        syn::Item::Impl(i) => {
            let ty = match i.self_ty.as_ref() {
                syn::Type::Path(t) => last(&t.path),
                _ => "?".into(),
            };
            match &i.trait_ {
                Some((_, t, _)) => format!("impl {} for {ty}", last(t)),
                None => format!("impl {ty}"),
            }
        }
        syn::Item::Mod(m) => format!("mod {}", m.ident),
        syn::Item::Const(c) => format!("const {}", c.ident),
        syn::Item::Static(s) => format!("static {}", s.ident),
        syn::Item::Struct(s) => format!("struct {}", s.ident),
        syn::Item::Enum(e) => format!("enum {}", e.ident),
        syn::Item::Trait(t) => format!("trait {}", t.ident),
        syn::Item::Type(t) => format!("type {}", t.ident),
        syn::Item::Use(_) => "use".into(),
        _ => "item".into(),
    }
}

impl<'ast> Visit<'ast> for NetNames {
    fn visit_file(&mut self, file: &'ast syn::File) {
        for item in &file.items {
            self.item = item_name(item);
            self.visit_item(item);
        }
        self.item.clear();
    }

    fn visit_ident(&mut self, ident: &'ast proc_macro2::Ident) {
        self.note(ident);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // A macro's tokens are not parsed as syntax: read every identifier.
        fn walk(t: proc_macro2::TokenStream, v: &mut NetNames) {
            for tt in t {
                match tt {
                    proc_macro2::TokenTree::Ident(i) => v.note(&i),
                    proc_macro2::TokenTree::Group(g) => walk(g.stream(), v),
                    _ => {}
                }
            }
        }
        walk(m.tokens.clone(), self);
        syn::visit::visit_macro(self, m);
    }
}

fn dialer_is_the_only_way_out(_ctx: &mut Ctx) -> Result<(), Failure> {
    let root = std::path::Path::new(REFERENCE_SRC);
    let mut v = NetNames {
        file: String::new(),
        item: String::new(),
        found: vec![],
    };
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.map_err(|e| Failure::new("the reference's tree reads", e.to_string()))?;
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path())
            .map_err(|e| Failure::new("a reference file reads", e.to_string()))?;
        let file = syn::parse_file(&text).map_err(|e| {
            Failure::new(format!("{} parses", entry.path().display()), e.to_string())
        })?;
        v.file = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        v.visit_file(&file);
    }
    let allowed = |n: &&NetName| {
        NET_ALLOWED
            .iter()
            .any(|(af, ai, an)| *af == n.file && *ai == n.item && *an == n.name)
    };
    let seen: BTreeSet<(&str, &str, &str)> = v
        .found
        .iter()
        .filter(allowed)
        .map(|n| (n.file.as_str(), n.item.as_str(), n.name.as_str()))
        .collect();
    let want: BTreeSet<(&str, &str, &str)> = NET_ALLOWED.iter().copied().collect();
    if seen != want {
        return Err(Failure::new(
            "the reader finds the production dialer's TcpStream and serve's TcpListener (presence)",
            format!("{seen:?}"),
        ));
    }
    let other: Vec<String> = v
        .found
        .iter()
        .filter(|n| !allowed(n))
        .map(|n| format!("{}:{} {} (in {})", n.file, n.line, n.name, n.item))
        .collect();
    if other.is_empty() {
        Ok(())
    } else {
        Err(Failure::new(
            "no socket or resolver outside the Dialer (the guard would not hear it)",
            other.join(", "),
        ))
    }
}
