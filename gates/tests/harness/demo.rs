//! The harness demo as a person meets it: headless Chromium signs in through the printed link, searches, and reads the page's visible text (results, every withheld line, the egress footer), then opens a result; and, without a browser, the demo's arrangement read from the ruled page.
//!
//! The browser is Debian's `chromium` driven through `chromedriver` over
//! WebDriver (fantoccini). The test asserts on what a person reads, the
//! page's rendered text with whitespace folded, never on markup, and takes
//! its expected sentences from the reference's own
//! (`memoria::Withheld::sentence`, `memoria::Reconciling::sentence`,
//! `memoria::EgressMode::footer`). Screenshots of the search page and the
//! document page go to `$CARGO_TARGET_TMPDIR/browser/`, each page also at
//! 1280 and 390 px wide; with AI on (the stub provider), the answer and
//! the address box too. Every marker, 👨 or 🤖, is checked as drawn pixels.
//!
//! Without `chromium` or `chromedriver` the browser test fails and names
//! the install command; it is never skipped.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use memoria::{EgressMode, Reconciling, Withheld, WithheldReason};
use memoria_gates::demo::{self, DEMO_QUERY, Demo, Role};

/// How long chromedriver, Chromium and a page may take to come up: Chromium
/// starting on a busy 2-core machine takes a few seconds. It bounds polling;
/// nothing sleeps for it.
const BROWSER_DEADLINE: Duration = Duration::from_secs(60);

/// How often a page's text is read again while waiting for it.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// The command that installs what the browser test needs (Debian).
const INSTALL: &str = "apt-get install -y chromium chromium-driver";

/// The command that reruns this file's tests.
const RERUN: &str = "cargo test -p memoria-gates --test harness -- demo::";

/// Every sentence the search for [`DEMO_QUERY`] must show, in the
/// reference's own words: one per sibling state.
fn expected_lines() -> Vec<String> {
    let withheld = |app: &str, reason, count| {
        Withheld {
            app: app.to_owned(),
            reason,
            count,
        }
        .sentence()
    };
    vec![
        withheld("calendar", WithheldReason::NoAnswer, 2),
        withheld("sheets", WithheldReason::Stale, 1),
        withheld("docs", WithheldReason::Ahead, 1),
        Reconciling {
            app: "drive".to_owned(),
        }
        .sentence(),
    ]
}

/// Whitespace runs folded to one space: text as a person reads it.
fn folded(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `name` on `PATH`, or a failure naming the install command.
fn on_path(name: &str) -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "`{name}` is not on PATH: the browser test drives Debian's Chromium through chromedriver; install them with `{INSTALL}` (the README's test command and .ci/run do), then `{RERUN}`"
            )
        })
}

/// A running chromedriver on a loopback port it chose; killed on drop.
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    fn start() -> Driver {
        let exe = on_path("chromedriver");
        let mut child = Command::new(&exe)
            .arg("--port=0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{} --port=0 does not start: {e}", exe.display()));
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + BROWSER_DEADLINE;
        let mut seen = vec![];
        let port = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(port) = line
                        .split("started successfully on port ")
                        .nth(1)
                        .and_then(|p| p.trim_end_matches('.').trim().parse().ok())
                    {
                        break port;
                    }
                    seen.push(line);
                }
                Err(_) => {
                    let _ = child.kill();
                    panic!(
                        "{} --port=0 printed no port within {BROWSER_DEADLINE:?}: {seen:?}",
                        exe.display()
                    );
                }
            }
        };
        Driver { child, port }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A headless Chromium session through `driver`, its profile in `profile`.
async fn browser(driver: &Driver, profile: &Path) -> Client {
    let chromium = on_path("chromium");
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".to_owned(),
        serde_json::json!({
            "binary": chromium,
            "args": [
                "--headless=new",
                // Root in CI: Chromium's sandbox needs a user namespace.
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--window-size=1280,1400",
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    let url = format!("http://127.0.0.1:{}", driver.port);
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&url)
        .await
        .unwrap_or_else(|e| {
            panic!(
                "chromedriver on port {} opens no Chromium session: {e}",
                driver.port
            )
        })
}

/// The page's visible text, folded, once `ready` holds of it or the
/// deadline passes (then the failure names `what` and the text it read).
async fn visible_text(client: &Client, what: &str, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + BROWSER_DEADLINE;
    loop {
        let text = match client.find(Locator::Css("body")).await {
            Ok(body) => folded(&body.text().await.unwrap_or_default()),
            Err(_) => String::new(),
        };
        if ready(&text) {
            return text;
        }
        let url = client.current_url().await.map(|u| u.to_string());
        assert!(
            Instant::now() < deadline,
            "{what} did not show within {BROWSER_DEADLINE:?} at {url:?}; the page read:\n{text}\n(rerun: {RERUN})"
        );
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// Where the screenshots go: under the target directory.
fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).expect("the screenshot directory");
    dir
}

async fn screenshot(client: &Client, name: &str) -> PathBuf {
    let png = client.screenshot().await.expect("a screenshot");
    let path = screenshot_dir().join(name);
    std::fs::write(&path, png).expect("the screenshot is written");
    println!("screenshot: {}", path.display());
    path
}

/// The widths every page is looked at, in CSS pixels: a laptop's window
/// and a phone's (issue 31).
const WIDTHS: [u32; 2] = [1280, 390];
/// The window's height for every screenshot, in CSS pixels.
const WINDOW_HEIGHT: u32 = 1400;

/// Screenshots of the page now shown at each of [`WIDTHS`], named
/// `{name}-{width}.png`; the window is left at the first width.
async fn shots(client: &Client, name: &str) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for width in WIDTHS.iter().rev() {
        client
            .set_window_size(*width, WINDOW_HEIGHT)
            .await
            .expect("the window is resized");
        paths.push(screenshot(client, &format!("{name}-{width}.png")).await);
        // A line that cannot wrap widens the page past the window: on a
        // phone, a sideways scroll and a cut-off citation.
        let overflow = client
            .execute(
                "const e = document.documentElement; return e.scrollWidth - e.clientWidth;",
                vec![],
            )
            .await
            .expect("the page's width is read");
        assert!(
            overflow.as_i64().is_some_and(|px| px <= 0),
            "{name} at {width} px is wider than the window by {overflow} px: a line that does not wrap (rerun: {RERUN})"
        );
    }
    paths
}

/// What the marker's drawn figure looks like in pixels: its size, the
/// luminance (0 black to 255 white) at the centre of its head and at its
/// top-left corner, and the share of its pixels that are ink.
#[derive(Debug)]
struct MarkerPixels {
    width: u64,
    height: u64,
    head: f64,
    corner: f64,
    ink: f64,
}

/// Luminance under which a pixel is ink, not the page's white.
const INK_LUMINANCE_MAX: f64 = 160.0;

/// Reads the first drawn marker `marker` selects (a `span.marker`) as
/// pixels: a screenshot of its figure, decoded by Chromium itself on a
/// blank page (the page's own `img-src 'self'` refuses a `data:` image,
/// rightly), then goes back.
async fn marker_pixels(client: &Client, at: &str, marker: &str) -> MarkerPixels {
    use base64::Engine as _;
    let back = client.current_url().await.expect("a URL");
    let figure = client
        .find(Locator::Css(&format!("{marker} svg")))
        .await
        .unwrap_or_else(|e| panic!("{at}: no {marker} is a drawn figure (svg): {e}"));
    let png = figure
        .screenshot()
        .await
        .expect("a screenshot of the marker");
    client
        .goto("data:text/html,<!doctype html><title>pixels</title>")
        .await
        .expect("a blank page");
    let decoded = client
        .execute_async(
            "const [b64, done] = [arguments[0], arguments[arguments.length - 1]];
             const img = new Image();
             img.onerror = () => done(null);
             img.onload = () => {
               const c = document.createElement('canvas');
               c.width = img.width; c.height = img.height;
               const g = c.getContext('2d'); g.drawImage(img, 0, 0);
               const d = g.getImageData(0, 0, c.width, c.height).data;
               const lum = (x, y) => { const i = (y * c.width + x) * 4;
                 return (d[i] * 299 + d[i + 1] * 587 + d[i + 2] * 114) / 1000; };
               let ink = 0;
               for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) if (lum(x, y) < arguments[1]) ink++;
               done({ width: c.width, height: c.height,
                      head: lum(Math.floor(c.width / 2), Math.floor(c.height * 4.5 / 16)),
                      corner: lum(0, 0), ink: ink / (c.width * c.height) });
             };
             img.src = 'data:image/png;base64,' + b64;",
            vec![
                serde_json::json!(base64::engine::general_purpose::STANDARD.encode(&png)),
                serde_json::json!(INK_LUMINANCE_MAX),
            ],
        )
        .await
        .expect("the screenshot decodes");
    client.goto(back.as_str()).await.expect("back to the page");
    let number = |k: &str| decoded[k].as_f64().unwrap_or(f64::NAN);
    MarkerPixels {
        width: decoded["width"].as_u64().unwrap_or(0),
        height: decoded["height"].as_u64().unwrap_or(0),
        head: number("head"),
        corner: number("corner"),
        ink: number("ink"),
    }
}

/// Asserts that the first marker `marker` selects renders the same on every
/// machine: drawn, not a font's emoji, which shows as an empty box where
/// no emoji font is installed (issue 31). Its words are `label`, with no
/// character a plain font lacks, and its figure is ink where the head (the
/// person's, the robot's antenna) is and white at its corner: an empty box
/// (a missing glyph) is white there.
async fn assert_drawn_marker(client: &Client, at: &str, marker: &str, label: &str) {
    let marker_text = client
        .find(Locator::Css(marker))
        .await
        .unwrap_or_else(|e| panic!("{at}: no {marker}: {e}"))
        .text()
        .await
        .unwrap_or_default();
    assert!(
        marker_text.trim() == label && marker_text.chars().all(|c| (c as u32) < 0x2000),
        "{at}: {marker}'s text is {marker_text:?}: not {label:?}, or a character a plain font may lack"
    );
    let pixels = marker_pixels(client, at, marker).await;
    assert!(
        pixels.width >= 10
            && pixels.height >= 10
            && pixels.head < INK_LUMINANCE_MAX
            && pixels.corner >= INK_LUMINANCE_MAX
            && (0.2..0.6).contains(&pixels.ink),
        "{at}: {marker}'s figure did not render as a figure: {pixels:?}"
    );
}

/// Chromium through a chromedriver of its own, with a fresh profile, having
/// followed `demo`'s sign-in link; and `what` with where it runs, for
/// failure messages. The driver and the profile live as long as the caller
/// keeps them.
async fn signed_in(demo: &Demo, what: &str) -> (Driver, tempfile::TempDir, Client, String) {
    demo.deliver_sign_in_links();
    let link = demo.last_sign_in_link().expect("a sign-in link");
    let driver = Driver::start();
    let profile = tempfile::tempdir().expect("a browser profile directory");
    let client = browser(&driver, profile.path()).await;
    let at = format!(
        "{what} at {} through chromedriver on port {}",
        demo.url, driver.port
    );
    client
        .goto(&link)
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    (driver, profile, client, at)
}

async fn started() -> Demo {
    demo::start(([127, 0, 0, 1], 0).into(), false)
        .await
        .unwrap_or_else(|e| panic!("the harness demo did not start: {e} (rerun: {RERUN})"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_in_chromium_signs_in_searches_and_reads_results_every_withheld_line_and_the_footer()
 {
    let demo = started().await;
    let (_driver, _profile, client, at) = signed_in(&demo, "memoria").await;
    let footer = folded(EgressMode::AiOff.footer());

    visible_text(&client, "the signed-in search page", |t| {
        t.contains(&footer)
    })
    .await;
    let search_box = client
        .find(Locator::Css("input[name=q]"))
        .await
        .unwrap_or_else(|e| panic!("{at}: the page has no search box: {e}"));
    search_box
        .send_keys(&format!("{DEMO_QUERY}{}", char::from(Key::Enter)))
        .await
        .unwrap_or_else(|e| panic!("{at}: typing the query: {e}"));
    let lines: Vec<String> = expected_lines().iter().map(|l| folded(l)).collect();
    let results = visible_text(&client, "the results with every withheld line", |t| {
        lines.iter().all(|l| t.contains(l))
    })
    .await;
    let shot = screenshot(&client, "search-page.png").await;
    assert_drawn_marker(
        &client,
        &at,
        "li.result span.marker",
        memoria::MARKER_PERSON_LABEL,
    )
    .await;
    // A sibling's passage is dated by its own revision, and says so.
    assert!(
        results.contains("edited "),
        "{at}: no result is dated by its sibling's revision:\n{results}"
    );
    // Searched again on the way back: a STALE or AHEAD sibling has since
    // been synced, so only the results themselves are waited for.
    visible_text(&client, "the results again", |t| {
        t.contains("Offsite room list")
    })
    .await;
    shots(&client, "search-page").await;
    for title in ["Offsite room list", "Offsite travel notes"] {
        assert!(
            results.contains(title),
            "{at}: the visible result {title:?} is missing from:\n{results}"
        );
    }
    assert!(
        results.contains(&footer),
        "{at}: the footer is missing from the results page:\n{results}"
    );
    for hidden in [
        "Offsite photos",
        "Offsite dinner",
        "Offsite budget",
        "Offsite agenda",
    ] {
        assert!(
            !results.contains(hidden),
            "{at}: {hidden:?} is shown although its sibling's answer withholds it:\n{results}"
        );
    }

    client
        // A link whose visible text holds the title, as a person finds it.
        .find(Locator::XPath(
            "//a[contains(normalize-space(.), 'Offsite room list')]",
        ))
        .await
        .unwrap_or_else(|e| panic!("{at}: no link to the result: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("{at}: following the result: {e}"));
    let document = visible_text(&client, "the result's document page", |t| {
        t.contains("Fourteen rooms at the harbour hotel")
    })
    .await;
    let doc_shot = screenshot(&client, "document-page.png").await;
    assert!(
        document.contains("edited "),
        "{at}: the sibling's document is not dated by its revision:\n{document}"
    );
    assert!(
        document.contains(&footer),
        "{at}: the footer is missing from the document page:\n{document}"
    );
    shots(&client, "document-page").await;
    // The way back keeps the search: the link names it, and follows to it.
    let back = format!("Back to the results for “{DEMO_QUERY}”");
    assert!(document.contains(&back), "{at}: no way back:\n{document}");
    client
        .find(Locator::XPath("//nav[@class='back']/a"))
        .await
        .unwrap_or_else(|e| panic!("{at}: no back link: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("{at}: following the back link: {e}"));
    visible_text(&client, "the results, back from the document", |t| {
        t.contains("Offsite room list") && t.contains("Offsite travel notes")
    })
    .await;
    let url = client.current_url().await.expect("a URL");
    assert!(
        url.query()
            .is_some_and(|q| q.contains(&format!("q={DEMO_QUERY}"))),
        "{at}: the way back lost the search: {url}"
    );
    // An empty search is the home page's list; no match says so and
    // offers the way back to it.
    client
        .goto(&format!("{}/?q=", demo.url))
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    let home = visible_text(&client, "an empty search", |t| t.contains("Documents")).await;
    assert!(
        home.contains("Runbook: deploying client sites"),
        "{at}: an empty search does not list the documents:\n{home}"
    );
    shots(&client, "empty-search").await;
    client
        .goto(&format!("{}/?q=qqzzxxvv", demo.url))
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    // The demo's Drive is reconciling, so the page may not claim that
    // nothing matched (§4.1 rule 1); it still offers a way on.
    let none = visible_text(&client, "a search that matches nothing", |t| {
        t.contains("Drive is reconciling")
    })
    .await;
    assert!(
        none.contains("browse every document"),
        "{at}: no way on from no match:\n{none}"
    );
    shots(&client, "no-match").await;
    client
        .goto(&format!(
            "{}/brief?task=offsite+room+list&scope=team",
            demo.url
        ))
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    let brief = visible_text(&client, "a brief", |t| t.contains("Grounds")).await;
    shots(&client, "brief").await;
    assert!(
        brief.contains("Grounds: "),
        "{at}: the brief page has no grounds:\n{brief}"
    );
    client.close().await.unwrap_or_else(|e| panic!("{at}: {e}"));
    assert!(shot.exists() && doc_shot.exists());
}

/// A question the demo with AI on answers with a cited synthesis (README).
const ANSWER_QUERY: &str = "why is the offsite planned this way?";
/// A question whose address box holds a row a model found (§8.9; README).
const ADDRESS_QUERY: &str = "what is the delivery address for couriers?";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_ai_on_chromium_shows_the_answer_and_a_found_address_each_under_a_drawn_model_marker()
{
    let demo = demo::start_with(([127, 0, 0, 1], 0).into(), false, true)
        .await
        .unwrap_or_else(|e| {
            panic!("the harness demo with AI on did not start: {e} (rerun: {RERUN})")
        });
    let drained = demo.state().drain_embeddings().await;
    assert!(drained.failure.is_none(), "{drained:?}");
    let (_driver, _profile, client, at) = signed_in(&demo, "memoria with AI on").await;
    visible_text(&client, "the signed-in search page", |t| {
        t.contains("Documents")
    })
    .await;
    let search = |q: &str| {
        let q = percent_encoding::utf8_percent_encode(q, percent_encoding::NON_ALPHANUMERIC);
        format!("{}/?q={q}", demo.url)
    };
    client
        .goto(&search(ANSWER_QUERY))
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    let answered = visible_text(&client, "the answer above the list", |t| {
        t.contains("Route: synthesis")
    })
    .await;
    assert!(
        answered.contains(memoria::MARKER_MODEL_LABEL),
        "{at}: the answer is not marked as a model's:\n{answered}"
    );
    assert_drawn_marker(
        &client,
        &at,
        "section.answer span.marker",
        memoria::MARKER_MODEL_LABEL,
    )
    .await;
    shots(&client, "answer").await;
    client
        .goto(&search(ADDRESS_QUERY))
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    visible_text(&client, "the address a model found", |t| {
        t.contains(memoria::MARKER_MODEL_FOUND_LABEL)
    })
    .await;
    assert_drawn_marker(
        &client,
        &at,
        "span.fact-by span.marker",
        memoria::MARKER_MODEL_FOUND_LABEL,
    )
    .await;
    shots(&client, "fact-box").await;
    client.close().await.unwrap_or_else(|e| panic!("{at}: {e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_harness_demo_leaves_one_sibling_in_each_state_the_results_page_can_name() {
    let demo = started().await;
    let state = demo.state();
    let ruled = memoria::ruled_search(
        state.shared_instance(),
        state.siblings().as_deref(),
        memoria::DEV_OWNER,
        DEMO_QUERY,
        1,
    )
    .await
    .unwrap_or_else(|e| panic!("the demo's search failed: {e} (rerun: {RERUN})"));
    let page = ruled.page;
    let said: Vec<String> = page
        .withheld
        .iter()
        .map(Withheld::sentence)
        .chain(page.reconciling.iter().map(Reconciling::sentence))
        .collect();
    for line in expected_lines() {
        assert!(
            said.contains(&line),
            "memoria at {}: {line:?} is not among the page's lines {said:?} (rerun: {RERUN})",
            demo.url
        );
    }
    assert!(
        page.results
            .iter()
            .any(|r| r.app == demo.sibling(Role::Stale).spec.app),
        "a visible sibling result shows beside the withheld lines: {:?}",
        page.results.iter().map(|r| &r.title).collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_with_ai_on_ranks_by_words_and_meaning_and_says_so_when_the_stub_provider_is_down()
{
    let demo = demo::start_with(([127, 0, 0, 1], 0).into(), false, true)
        .await
        .unwrap_or_else(|e| {
            panic!("the harness demo with AI on did not start: {e} (rerun: {RERUN})")
        });
    let state = demo.state();
    let drained = state.drain_embeddings().await;
    assert!(
        drained.stored > 0 && drained.failure.is_none(),
        "{drained:?}"
    );
    let (stub, at, _) = demo.provider.clone().expect("the stub provider runs");
    // The state's own search path, the one the page takes, embedder included.
    let fused = state
        .ruled_search(memoria::DEV_OWNER, DEMO_QUERY, 1)
        .await
        .expect("the demo's search");
    assert_eq!(
        fused.semantic,
        memoria::SemanticRanking::Fused,
        "AI on ranks by words and meaning (the stub at {at})"
    );
    assert!(!fused.results.is_empty());
    stub.set_down(Some(memoria_simulator::ProviderDown::Status(503)));
    let lexical = state
        .ruled_search(memoria::DEV_OWNER, DEMO_QUERY, 1)
        .await
        .expect("the demo's search, the provider down");
    assert_eq!(lexical.semantic, memoria::SemanticRanking::Unavailable);
    assert!(
        !lexical.results.is_empty(),
        "with the provider down the page still answers, by words alone"
    );
}
