//! The truth oracle: every page a person sees is judged against the fake siblings' own state and the spec, never memoria's internals (§4.1, §6.1, §6.5, §8.1).
//!
//! Size: about 1,300 lines, 250 of them this doc (each invariant stated once, here; ARCHITECTURE.md points to it). The code is just over 800 lines because the oracle is one reading of §4.1, §5.1, §6.x and §8.7 as checks, each invariant beside the truth it reads; the surfaces it reads pages from are already apart (`surfaces.rs`), and the numeric judgement is the next to move out.
//!
//! A scenario with `oracle = true` (what `memoria-harness explore`
//! generates) has every query's page judged here, as the person saw it:
//!
//! - **Safety, at every render** ([`judge_page`]): a passage reaches a
//!   person only if, in the request that rendered it, its sibling answered
//!   S2 VISIBLE for that person at that revision, and the sibling's truth
//!   (its model: team-visible, the grants join, the current revision)
//!   agrees unless that answer was a lie the sibling told (§4.1, §8.1).
//!   Every withheld line counts what the sibling answered that request:
//!   STALE, AHEAD and UNKNOWN loudly, exactly once, in their app's line
//!   with their reason; NOT_VISIBLE never (§4.1's table). A person no
//!   longer admitted sees no passage (§4.3).
//! - **Liveness** ([`converge`]): once every fault is off, after a quiet
//!   period of [`QUIET_S`] on memoria's calendar and
//!   [`CONVERGENCE_ROUNDS`] questions, every team-visible item at its
//!   current revision is found by each admitted member the sibling shows
//!   it to, and no page names a source reconciling or withheld (§4.1 rule
//!   1, §6.1, §6.5).
//!
//! The oracle reads a page by the titles the world gave its items: every
//! item's title ends in a word of its own (its tag), which is also what
//! [`converge`] asks for.
//!
//! # The invariants
//!
//! A failed check names its invariant first, and the shrinker keeps a
//! failure by that name. Each is judged against the fake siblings' own
//! state (their models, their fault knobs, the trace of the calls they
//! received) and the spec, never memoria's internals.
//!
//! - `[safety:visible]` (§4.1, §8.1): a sibling passage reaches a person only
//!   if, in the request that rendered it, its sibling answered S2 VISIBLE for
//!   that person's subject, and the sibling's truth agrees for the revision
//!   answered (team-visible, the grants join admits them, the revision is
//!   current) unless the answer was a lie the fake told. The page's
//!   "revision N" is memoria's own count, so the revision judged is the one
//!   S2 was asked about. "Answered" is what the wire said: a pair a
//!   malformed answer broke is UNKNOWN, as the contract's decoder cases
//!   read each shape (`on_the_wire`).
//! - `[safety:counted]` (§4.1's table, §8.1): for each app whose S2 was clean
//!   in the request (no knob on, every call 200 unshaped) or only malformed
//!   (read on the wire, as above), each of STALE,
//!   AHEAD and UNKNOWN is counted in one line of that app with its reason,
//!   exactly the pairs answered so when each is one passage and at least
//!   that otherwise; a reason nobody answered has no line, so NOT_VISIBLE is
//!   never counted. An app whose token file cannot be read now is skipped as
//!   a faulted one is: memoria asks it nothing, so every pair is UNKNOWN.
//! - `[safety:admitted]` (§4.3): a person removed from the owners sees no
//!   passage, in the session they held.
//! - `[safety:provenance]`: every result is an item of a declared sibling,
//!   a document someone uploaded, or a connector's document (its title
//!   the shape `connector.rs` writes). An item a sibling's restore took
//!   away is still one it held (memoria may not have pulled since); S2
//!   can answer VISIBLE for it only as a lie, which `[safety:visible]`
//!   requires.
//! - `[safety:owned]` (§4.2, §7.4): a memoria-owned document (uploaded
//!   through the home page's form, deleted through its delete form) is shown
//!   only while it is stored, and a deleted one never comes back, after any
//!   restart, crash or any restore of memoria's data directory from a
//!   backup (the tombstone log kept apart). Admission is
//!   `[safety:admitted]`'s: an owned passage reaches only people admitted. A
//!   stored document asked for by its tag by an admitted person is found
//!   (`[safety:silent]`), and at liveness by every member: nothing
//!   acknowledged is lost. An upload or deletion a crash cut off before
//!   memoria answered (`crash`, issue 26) was never acknowledged: it is in
//!   doubt, neither asked for nor refused, until a deletion of it settles
//!   it (done, or answered 404 because the wake replayed it).
//! - `[safety:at-rest]` (§0, decision 6): at checkpoints (every restart,
//!   crash, backup, restore, the liveness check, and every 25th event) a
//!   sample of at most 4 tags of items and documents some page showed (so
//!   memoria holds them, and the truth model's titles carry them) is
//!   grepped for in the bytes of every file under memoria's data
//!   directory; none may be there, and a directory with no bytes fails
//!   rather than passes.
//! - `[safety:silent]` (§4.1 rules 1 and 3, gate 27): a question that is one
//!   item's tag, asked by an admitted member the sibling's truth shows it to,
//!   after some page showed that item and with no `gone` row for it in the
//!   sibling's log since, finds it or carries a withheld or reconciling line
//!   for its app. Only a complete announce of an item the sibling no longer
//!   holds retires anything, so an item that never left cannot vanish
//!   quietly. A restore of that sibling starts the record afresh.
//! - `[liveness]` (§4.1 rule 1, §6.1, §6.5): once every fault is off, after
//!   `CONVERGENCE_ROUNDS` (3) rounds of questions (one for every
//!   team-visible item, by a member it shows to), each after a quiet period
//!   of `QUIET_S` (305 s: memoria's `S1_PULL_BACKOFF_MAX_S` plus
//!   `S1_PULL_INTERVAL_MIN_S`) on memoria's calendar and followed by
//!   `PULL_SETTLE_MS` (15 s) of simulated time, every team-visible item is found by each
//!   admitted member the sibling shows it to, ruled VISIBLE at its current
//!   revision, with no source withheld or reconciling. Only questions and
//!   time move memoria: no event makes it pull.
//! - `[safety:number]` (§8.7, issue 27): a numeric answer shows a figure
//!   only with the outcome VALUE, and then the figure is, byte for byte, the
//!   display string Sheets' own S6 arithmetic (`fake::sheet::aggregate`)
//!   gives now over the cells memoria asked in that request, every one on a
//!   sheet the reader may see now (custody, the grants join, the asked
//!   revision current), in the cells' current format; any other outcome
//!   shows the slot table and no figure. The trace names no tab, so the
//!   oracle reads a sheet's first tab: the worked example has one.
//! - `[safety:roster]` (§4.3, §6.5; `simulator/src/scenario/roster.rs`): in
//!   suite shape, a reader the home removed from the roster, and not added
//!   back, sees no passage, in the session they held, once the fake home has
//!   answered a pull with its roster as it stood (status 200, no fault) after
//!   the removal: within the TTL the copy is enforced as it stands, and a
//!   failed pull (down, garbage, another team's roster, a lagging replica's
//!   older epoch, a dropped connection, a pull never answered) keeps the last
//!   good copy, so nothing re-admits them. Before
//!   that pull memoria may go on admitting them (the spec's tail, one
//!   `ROSTER_REFRESH_S`). And the copy is kept: while a clean pull since
//!   memoria's last wake is under `ROSTER_TTL_S` less a minute old, the
//!   search page never says memoria has not been able to fetch the roster
//!   (a failed pull, answered or not, drops nothing). The pulls are the fake
//!   home's own record. At
//!   liveness, each such person asks for every team-visible item (each just
//!   found by a member: the presence) and is shown nothing. And a stale
//!   copy stops everyone's team standing, sessions included (§4.3, suite
//!   gate 5): once the last pull memoria may have adopted since its last
//!   wake is older than `ROSTER_TTL_S` and a minute (the explorer's stale
//!   spell, `explore/home.rs`), a roster reader sees no passage on any
//!   surface and the search page says the roster is stale or missing.
//!   Once the home starts a new generation (`explore/generation.rs`), the
//!   oracle follows every state memoria's copy may be in from the home's
//!   own record of its pulls, memoria's wakes and the owner's
//!   confirmations (`Possible` in `roster.rs`, §4.3 as code: a new
//!   generation waits pending, never replaced by an older epoch of itself,
//!   and refreshes nothing; an owner's confirmation adopts it as old as
//!   the pull that brought it), and judges what every state agrees on: no
//!   passage for a reader no state admits, the stale line while every
//!   state is stale, and the owner's roster page offering the confirmation
//!   exactly when a generation waits.
//! - `[safety:deadline]` (§6.5; `simulator/src/scenario/deadline.rs`):
//!   every question's S2 calls are one round, within 20 ms of each other,
//!   and its answer arrives within the 800 ms deadline and 100 ms of its
//!   last round's first call: no sibling is waited for past its deadline.
//! - `[safety:document]` (§4.1, §4.2, §8.1;
//!   `simulator/src/scenario/documents.rs`): a document opened by its link,
//!   on the document page or over the MCP `document` tool, is judged as every
//!   surface is (the invariants above) and then: it is the link's own
//!   document; a document shown shows its passages, never an empty page; the
//!   answer is shown (200), absent (404), withheld (503) or the sign-in page
//!   (401), nothing else; a sibling's document is absent only where memoria
//!   asked its app nobody in the request or the app answered NOT_VISIBLE for
//!   it, every other answer (STALE, AHEAD, UNKNOWN, a failed call) being
//!   withheld loudly with its app's line or, on VISIBLE, shown; memoria's
//!   own document, stored, opens for every person admitted (the presence
//!   that makes a deleted one's absence mean something); a document not
//!   shown (withheld, absent, refused) names no tag of its titles; each
//!   passage shown is anchored `#p{n}`, `n` the number its label shows
//!   (§8.4, §8.8's `/documents/{id}#p{n}`: the page's section id and label
//!   link, the tool's link); a sibling's document withheld counts one
//!   result in one line, however many passages it holds (§4.1; gate 6's
//!   "1 result withheld"); and, where the explorer drew it
//!   (`explore/absent_alike.rs`), a sibling's document answered absent
//!   answers what an id never held answers, asked by the same person at
//!   once: status, every header but `date`, body (§4.1: NOT_VISIBLE is
//!   silent, and no answer may tell which ids exist, suite gate 3).
//! - `[safety:reconciling]` (§4.1 rule 1, §6.1, §7.4, §8.1;
//!   `simulator/src/scenario/reconciling.rs`): a page (every surface a
//!   question is asked on) that names an app reconciling shows no passage
//!   of it and its request asks that app S2 about no item; and from the
//!   moment memoria surely knows the app is marked (the fake answered its
//!   feed 410 or an S2 pair AHEAD, unshaped by any fault, a deadline
//!   before the question; or memoria's data directory was restored from a
//!   backup after which the durable log holds a deletion, which marks
//!   every sibling it held a passage of, and brings back every mark the
//!   backup held) until the app answered an announce page carrying its
//!   close (a re-announce that may have completed), every results page of
//!   a person admitted names it reconciling. A restart or a crash drops a
//!   mark memoria was not yet sure to hold.
//! - `[safety:reconciling-cause]` (§4.1, §6.1, §7.4, §8.1;
//!   `reconciling_cause.rs`): a page names an app reconciling only for a
//!   cause in the trace no earlier results page not naming it has spent (an
//!   S1 410, an S2 AHEAD, an S6 answer, memoria's restore, or an S3 404 no
//!   later feed row explains), and a mark from such a 404 alone is
//!   re-announced in the pull that met it (judged only where sure).
//! - `[liveness:phantom]` (§4.1 rules 3 and 4, §6.1; `reconciling.rs`): at
//!   `expect-converged`, after the rounds, every item any sibling ever held
//!   is asked for by its tag, and `PULL_SETTLE_MS` later the tags of the
//!   items named behind are asked again: no S2 pair
//!   names an item its sibling no longer holds as team-visible (deleted,
//!   gone from team visibility, which §4.1 makes indistinguishable from
//!   deletion, or lost by a restore), and none names a revision other than
//!   the current one twice in a row.
//! - `[safety:sources]` (§8.1): the owner's sources page has a section for
//!   every configured sibling, names no tag of any item any sibling ever held
//!   nor of memoria's own documents (breakers, polls and counts only), opens
//!   for a person admitted and, under `[safety:admitted]`, not for one
//!   removed.
//! - `[safety:breaker]` (§8.1, §3.2; `simulator/src/scenario/breaker.rs`):
//!   at every render of the owner's sources page, each sibling's refusal
//!   and S3 lines say what the fakes' trace says they must on memoria's
//!   UTC day W (its calendar: the epoch, the days and hours skipped, the
//!   elapsed time): fired, naming as many askers or fetches; no anomaly; or
//!   cannot determine, naming the baseline (counted only since after W-7)
//!   or the window and the baseline (nothing counted). Refusal: at least 3
//!   askers the sibling answered VISIBLE in `[W-7, W)` each answered
//!   VISIBLE = 0 and NOT_VISIBLE >= 1 on W. S3: at least 20 fetches on W,
//!   all 404, and a success in `[W-7, W)`. Where a tally may not have
//!   reached memoria (an answer shaped by latency or a malformation, a
//!   crash, a sync cut off or still running, a restore of memoria's data)
//!   the truth is a pair of bounds, and a sibling whose bounds disagree is
//!   not judged at that render.
//! - `[safety:token-file]` (§6.2, §4.3, §6.5;
//!   `simulator/src/scenario/token_file.rs`): while memoria's token file for
//!   a sibling cannot be read (a directory in its place, removed, or holding
//!   no bearer token), no call of memoria's reaches that sibling, with a
//!   token it read before or with the file's bytes: §6.2 makes the token
//!   platform config as delivered (the sender switches only by a delivery),
//!   §4.3 and gate 21 read credentials-shaped config and never hold it, and
//!   a sibling memoria cannot ask is §6.5's UNKNOWN, withheld loudly. A call
//!   that arrives within `IN_FLIGHT_MS` (one sibling deadline) of the break
//!   may have read the file before it and is not judged; the rotation's
//!   probes are the oracle's own. The spec has no sentence on an unreadable
//!   token file; this is the reading `reference/src/net/token.rs` documents.
//! - `[safety:rotation]` (§6.2; `rotation.rs`): over every sibling call of the run, none is
//!   answered 401 (the handover leaves no window in which one side is
//!   wrong, interrupted or not), none is accepted as a consumer other than
//!   memoria, and none is accepted on an epoch phase 3 retired there before
//!   it arrived; and each time phase 3 retires a token, a probe carrying it
//!   (an S1 call, made only while no fault is on there) is answered 401, its
//!   own 401 excepted from the first rule.
//! - `[liveness:rotation]` (§6.2): at `expect-converged` the rotation in
//!   flight is resumed as the drain resumes one (phases 1 and 2 to the end)
//!   before the convergence rounds, and after them phase 3 to the end must
//!   retire the old token everywhere (memoria seen using the new one), and
//!   then every sibling answers memoria 200 on the new token's epoch, and a
//!   member asking for a team-visible item there finds it with no line for
//!   its app.
//! - `[liveness:embeddings]` (§7, §8.3): in an AI-on world (`ai = true`),
//!   at `expect-converged` the provider answers again, and within
//!   `EMBED_DRAIN_WAIT_MAX_S` (three of the embedding loop's intervals and a
//!   slow call's deadline) the owner's sources page says every passage has
//!   its vector: memoria's own loop retries, with no hook production lacks
//!   (`provider.rs`). Judged before the rounds' questions, whose pulls
//!   would wake the loop. A live upload the stub provider always refuses
//!   (its words carry `REFUSED_MARKER`) is the exception, and is §8.1's
//!   floor, found by its words: the page must then say every other passage
//!   has its vector and count exactly those passages set aside.
//! - `[safety:dense]` (§7, §7.2; `simulator/src/scenario/dense.rs`): in an
//!   AI-on world, of two passages shown for a question holding a word no
//!   passage holds, each holding no word of the question (so ranked by the
//!   dense scan alone: fusion keeps their dense order), the one above has
//!   a dot product with the question, in the stub provider's own vectors
//!   cut to 512 values and renormalised, not surely lower by more than
//!   int8's margin; a passage's score is bounded over every text the stub
//!   was sent for its document.
//! - `[safety:dense-crowded]` (§7, §7.4; `dense.rs`): in an AI-on world,
//!   at `expect-converged`, once `[liveness:embeddings]` held with the
//!   provider answering, the first member asks the words of the
//!   explorer's deleted crowds (long uploads whose every passage holds
//!   them, `explore/dense.rs`), which no live passage holds, so the page is
//!   the dense half's order alone; when a live upload (the beacon) is
//!   surely in the dense top 20 (at most 19 of every text the stub was
//!   sent, the crowds' excepted, score within int8's margin of its least
//!   dot product), the page shows that upload: no row of a chunk memoria
//!   no longer holds takes a live passage's place, and no live row is
//!   ranked by another's vector.
//! - `[safety:enumeration]` (§5.1, gate 7; `connector.rs`): in a world with
//!   a connector (a folder of the run, a paged source), after each of
//!   memoria's scheduled enumerations every item an admitted member found
//!   before it and still in the source (the folder's files, the fake's
//!   items) is found after it: a failed, timed-out, truncated or unreadable
//!   enumeration deletes nothing. With no fault on, the enumeration must
//!   be complete: every item of the source is found and none removed from
//!   it is.
//! - `[safety:connector-record]` (§5.1, §4.2's amendment): the attempt is
//!   recorded at its time with the failure it had; with no fault on, a
//!   complete enumeration then, no failure, and every item of the source
//!   seen then (`last_seen_at`). No surface shows the record, so this check
//!   alone reads memoria's store.
//! - `[liveness:connector]` (§5.1): at `expect-converged` the connector
//!   faults stop, two scheduled enumerations run, and every item of each
//!   source is found at its current version, none removed.
//! - `[safety:tombstones]` (§7.4; `simulator/src/scenario/tomb.rs`):
//!   started on a tombstone log that is not its own (a copy from an older
//!   backup, one entry short, another store's as far along), memoria
//!   refuses to wake with `TombstonesBehind`, naming the log's path, where
//!   it stops and the database's sequence (or that it does not hold the
//!   database's last deletion), quoting no content; started on its own, it
//!   wakes. The spec is silent on the refusal's form: gate 10's reading.
//! - `[safety:retention]` (§7.4; `tomb.rs`): a snapshot generation the
//!   bucket held as its newest at a checkpoint is still there at every
//!   later checkpoint within `BACKUP_RETENTION_WINDOW_S` on memoria's
//!   calendar (the harness's own restores and bucket faults start afresh).
//! - `[simulation: …]`: the run itself failed (memoria could not wake, an
//!   event could not apply).
//!
//! # Every surface alike
//!
//! Every surface that shows a passage is judged alike (§8.1's one S2 path):
//! a question is asked on the search page, the brief page (`/brief`, every
//! document it links), the ruled page as JSON (what `memoria search --format
//! json` prints) or the MCP `search` tool's structured content, and each is
//! read into the passages shown and its withheld and reconciling lines
//! (`surfaces.rs`) before `[safety:visible]`,
//! `[safety:counted]`, `[safety:admitted]` and `[safety:owned]` judge it;
//! `[safety:silent]` judges every surface, the brief too: a task that is one
//! item's tag names that item alone, so the brief resolves it (or lists it
//! among its candidates, or names its app withheld or reconciling). The brief
//! was left out at first because a brief for an upload's tag answered
//! "Nothing in the team matched" while a JSON search found the upload. That
//! was a bug, not the papers' intent (`brief-material.md` §4: `none` is
//! "Nothing matched", and the index had matched it): the tag is a word of the
//! title alone, and the brief's words term read each sentence without the
//! title and section it is quoted under, though the index ranks a passage by
//! all three and the dense term reads the whole passage. `terms_of` now reads
//! a sentence under its title and section;
//! `explore-brief-finds-an-upload.toml` holds it, with a mutation the
//! oracle's `[safety:silent]` on the brief kills. `from_brief` reads each
//! linked document once, with the app the brief's item or candidate line
//! names.
//!
//!
//! # Not judged yet
//!
//! Not judged yet: MCP's brief tool, a failed enumeration's
//! deletions (observable only through what is found later), and with AI on
//! the answer, derived artefacts and `#tag` titles (the explorer's AI-on
//! worlds embed and fuse the ranking, judged as every page is, but draw no
//! `topic` items and ask for no answer). A retirement made
//! while its sibling is still named reconciling, and undone by the complete
//! announce after it, is invisible to every page; `timed-out-announce.toml`
//! holds that case by `expect-held`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::checks::Check;
use super::surfaces::{APP_MEMORIA, Owned, Reason, Rendered, Shown, from_page};
use crate::fake::faults::{Faults, MalformedS2};
use crate::fake::model::{Item, Model, Role};
use crate::fake::server::FakeSibling;
use crate::fake::trace::{CallDetail, CallKind, TraceEvent, TracedPair};
use crate::world::{MEMORIA_CONSUMER, Memoria};

/// The quiet period before the liveness check, in seconds of memoria's
/// calendar: memoria's longest wait between two pulls of a failing
/// sibling, `S1_PULL_BACKOFF_MAX_S` (`reference/src/sibling/pull.rs`,
/// README "Siblings": "pulled again within five minutes of the first
/// question after it returns"), plus the least interval between two
/// pulls, `S1_PULL_INTERVAL_MIN_S` (5 s). After it, the next question
/// starts a pull of every sibling (§6.1: on each question).
pub const QUIET_S: i64 = 300 + 5;
/// Questions (each after a quiet period) before liveness is judged: a
/// whole-log restore's 410 marks the sibling (1), the next pull is the
/// re-announce (2), and the one after it catches the feed up from the
/// announce's cursor (3) (§4.1 rule 2, §6.1).
pub const CONVERGENCE_ROUNDS: usize = 3;
/// Simulated time a pull is given to finish after the question that
/// started it, in ms: the feed, up to a page of S3 fetches and an
/// announce, each inside §6.5's per-call deadline, at the world's link
/// latency.
pub const PULL_SETTLE_MS: u64 = 15_000;
/// A body shorter than this, in bytes, is one passage: its withheld count
/// is exact (one line entry per pair). Longer bodies may be several
/// passages of one pair, so their count is a lower bound.
pub const ONE_PASSAGE_BODY_BYTES_MAX: usize = 400;

/// Whether `body` is certainly one passage: shorter than
/// [`ONE_PASSAGE_BODY_BYTES_MAX`] and with no heading after its first line
/// (a heading starts a passage, so a tagged corpus body, its tag line then
/// `# Title`, is two however short it is).
fn one_passage(body: &str) -> bool {
    body.len() < ONE_PASSAGE_BODY_BYTES_MAX
        && !body
            .lines()
            .skip(1)
            .any(|l| l.trim_start().starts_with('#'))
}

/// The invariant a failed oracle check names, as the first word of its
/// `expected` (the shrinker keeps a failure by it).
pub const SAFETY_VISIBLE: &str = "[safety:visible]";
/// A withheld line disagrees with what S2 answered.
pub const SAFETY_COUNTED: &str = "[safety:counted]";
/// A person no longer admitted saw a passage.
pub const SAFETY_ADMITTED: &str = "[safety:admitted]";
/// A page showed something no sibling holds.
pub const SAFETY_PROVENANCE: &str = "[safety:provenance]";
/// A page went quietly short: an item found before, still visible to the
/// reader and never gone since, missing with no line for its app.
pub const SAFETY_SILENT: &str = "[safety:silent]";
/// A memoria-owned document shown while not stored, or after its deletion.
pub const SAFETY_OWNED: &str = "[safety:owned]";
/// A word memoria has shown is in its data directory in plain text.
pub const SAFETY_AT_REST: &str = "[safety:at-rest]";
/// Liveness failed after the quiet period.
pub const LIVENESS: &str = "[liveness]";
/// A number shown that is not S6's display for cells the reader may see
/// now, at their current format (§8.7).
pub const SAFETY_NUMBER: &str = "[safety:number]";

/// The tag a corpus item's title ends in, in an oracle world: letters
/// only, unique per app and index (`qxsheetscb` for sheets' item 1).
pub fn corpus_tag(app: &str, index: usize) -> String {
    format!("qx{app}c{}", letters(index))
}

/// `n` in base 26 over `a`..`z` (`0` → `a`).
pub fn letters(mut n: usize) -> String {
    let mut out = vec![];
    loop {
        out.push(b'a' + (n % 26) as u8);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

fn fail(invariant: &str, what: String, saw: String) -> Check {
    Check {
        expected: format!("{invariant} {what}"),
        actual: saw,
        ok: false,
    }
}

/// The app label of a fake's host (`acme.sheets.oficina.works` → `sheets`).
pub(super) fn app_of(callee: &str) -> &str {
    callee.split('.').nth(1).unwrap_or(callee)
}

/// The sibling's truth for `address` on `item` at `revision` (§4.1): the
/// item is team-visible (custody), the grants join admits them (a member,
/// not removed from the item), and `revision` is current.
fn truly_visible(item: &Item, role: Option<Role>, address: &str, revision: &str) -> bool {
    item.team_visible()
        && role == Some(Role::Member)
        && !item.removed.contains(address)
        && item.current().revision == revision
}

/// The item of `model` one of whose revisions is titled `title`, and
/// whether the sibling holds it now: an item it holds, else one a restore
/// took away ([`crate::fake::model::Model::lost_items`]). A whole-log
/// restore rewinds the sibling's rows, not its past: memoria may have
/// pulled an item before it and, until its next pull meets the new epoch,
/// still hold it; only a lie has S2 answer VISIBLE for it (§4.1, §6.1).
fn held<'m>(model: &'m Model, title: &str) -> Option<(&'m Item, bool)> {
    let titled = |i: &&Item| i.log.iter().any(|v| v.title == title);
    model
        .items()
        .find(titled)
        .map(|i| (i, true))
        .or_else(|| model.lost_items().find(titled).map(|i| (i, false)))
}

/// Judges one surface `address` saw (`seen`), rendered while `window`
/// (the S-calls the siblings received during the request) happened,
/// against `fakes`' state now (no sibling changes during a request) and
/// `owned`, the truth of memoria's own documents. `admitted` is false for
/// a person the owners file no longer names. Returns only the failed
/// checks, plus one passing summary check.
///
/// `unasked`: the apps memoria has no token for
/// now (their token file cannot be read, `token_file.rs`). Like an app
/// with a fault knob on, their withheld lines are not counted against the
/// trace: memoria asks them nothing, and every pair of theirs is UNKNOWN
/// (§6.2, §6.5).
pub(super) fn judge_page(
    address: &str,
    seen: &Rendered,
    window: &[TraceEvent],
    fakes: &BTreeMap<String, FakeSibling>,
    admitted: bool,
    owned: &Owned,
    unasked: &BTreeSet<String>,
) -> Vec<Check> {
    let mut out = vec![];
    let shown = &seen.shown;
    if !admitted && !shown.is_empty() {
        out.push(fail(
            SAFETY_ADMITTED,
            "a person no longer admitted sees no passage (§4.3)".into(),
            format!("{} results", shown.len()),
        ));
    }
    let s2: Vec<&TraceEvent> = window
        .iter()
        .filter(|e| e.call == CallKind::S2 && e.caller == MEMORIA_CONSUMER)
        .collect();
    for r in shown {
        if r.app == APP_MEMORIA
            || (r.app.is_empty()
                && (owned.by_title(&r.title).is_some()
                    || super::connector::is_connector_title(&r.title)))
        {
            out.extend(judge_owned(r, owned));
            continue;
        }
        let app = if r.app.is_empty() {
            fakes
                .iter()
                .find(|(_, f)| f.model().with(|m| held(m, &r.title).is_some()))
                .map_or(String::new(), |(a, _)| a.clone())
        } else {
            r.app.clone()
        };
        let r = &Shown {
            app,
            title: r.title.clone(),
        };
        let Some(fake) = fakes.get(&r.app) else {
            out.push(fail(
                SAFETY_PROVENANCE,
                "every result comes from a declared sibling".into(),
                format!("a result from {:?}", r.app),
            ));
            continue;
        };
        let (found, label, role) = fake.model().with(|m| {
            let person = m.person(address);
            let found = held(m, &r.title).map(|(i, now)| (i.clone(), now));
            (
                found,
                person.map_or("stranger".to_string(), |p| p.label.clone()),
                person.map(|p| p.role),
            )
        });
        let Some((item, held_now)) = found else {
            out.push(fail(
                SAFETY_PROVENANCE,
                format!("every result from {} is one of its items", r.app),
                "a title it never held".into(),
            ));
            continue;
        };
        match visible_answer(&s2, fakes, &r.app, &label, &item.item_id) {
            None => out.push(fail(
                SAFETY_VISIBLE,
                format!(
                    "{}:{} is shown only after {} answered VISIBLE for {label} in this request (§4.1, §8.1)",
                    r.app, item.item_id, r.app
                ),
                "no such answer".into(),
            )),
            // An item a restore took away is no longer the sibling's to
            // show: only a lie says VISIBLE for it.
            Some((revision, lie)) => {
                if !lie && (!held_now || !truly_visible(&item, role, address, &revision)) {
                    out.push(fail(
                        SAFETY_VISIBLE,
                        format!(
                            "{}:{}@{revision} is shown only when the sibling's truth says VISIBLE for {label} (§4.1)",
                            r.app, item.item_id
                        ),
                        format!(
                            "held now {held_now}, team-visible {}, current {}, removed {}",
                            item.team_visible(),
                            item.current().revision,
                            item.removed.contains(address)
                        ),
                    ));
                }
            }
        }
    }
    let has_numeric = seen.numeric.is_some();
    out.extend(judge_withheld(
        &seen.withheld,
        &s2,
        fakes,
        unasked,
        has_numeric,
    ));
    // Only the search page carries the numeric answer (§8.7).
    let numeric = seen.numeric.as_ref();
    out.extend(judge_numeric(address, numeric, window, fakes));
    if out.is_empty() {
        let number = match numeric.map(|n| n.outcome.as_str()) {
            Some("VALUE") => ", the number is S6's display".to_string(),
            Some(other) => format!(", {other}: no number"),
            None => String::new(),
        };
        out.push(Check {
            expected: format!(
                "oracle: {} passages ruled, withheld lines counted{number}",
                shown.len()
            ),
            actual: "held".into(),
            ok: true,
        });
    }
    out
}

/// The numeric answer on a page (§8.7), judged from the fakes' cells:
/// a figure is shown only with the outcome VALUE, and then it is byte for
/// byte the display string the sibling's own S6 arithmetic gives, now, over
/// the cells memoria asked in this request, every one on a sheet the
/// reader may see now (custody, the grants join, the asked revision
/// current), in the format the cells have now. Any other outcome shows
/// the slot table and no figure. A page with no numeric section is not
/// judged here.
fn judge_numeric(
    address: &str,
    numeric: Option<&memoria_page::Numeric>,
    window: &[TraceEvent],
    fakes: &BTreeMap<String, FakeSibling>,
) -> Vec<Check> {
    let Some(numeric) = numeric else {
        return vec![];
    };
    let outcome = numeric.outcome.as_str();
    let figure = numeric.figure.clone();
    if outcome != "VALUE" {
        return match figure {
            Some(f) => vec![fail(
                SAFETY_NUMBER,
                format!("a {outcome} answer shows the slot table and no figure"),
                format!("the figure {f:?}"),
            )],
            None => vec![],
        };
    }
    let Some(figure) = figure else {
        return vec![fail(
            SAFETY_NUMBER,
            "a VALUE answer shows its figure".into(),
            "no figure".into(),
        )];
    };
    let answered: Vec<(&str, &TraceEvent)> = window
        .iter()
        .filter(|e| e.call == CallKind::S6 && e.caller == MEMORIA_CONSUMER)
        .filter_map(|e| match &e.detail {
            CallDetail::S6 {
                result: Some(r), ..
            } if r == "VALUE" && e.status == Some(200) => Some((app_of(&e.callee), e)),
            _ => None,
        })
        .collect();
    let [(app, call)] = answered[..] else {
        return vec![fail(
            SAFETY_NUMBER,
            "a figure is shown only after one S6 call answered VALUE in this request (§8.7)".into(),
            format!("{} such calls", answered.len()),
        )];
    };
    let Some(fake) = fakes.get(app) else {
        return vec![fail(
            SAFETY_PROVENANCE,
            "every S6 answer comes from a declared sibling".into(),
            app.to_string(),
        )];
    };
    let CallDetail::S6 {
        function, cells, ..
    } = &call.detail
    else {
        return vec![];
    };
    let truth = fake.model().with(|m| {
        let role = m.person(address).map(|p| p.role);
        let function: crate::fake::wire::S6Fn =
            serde_json::from_value(serde_json::Value::String(function.clone()?)).ok()?;
        let mut operands = vec![];
        for c in cells {
            let item = m.item(&c.sheet)?;
            if !truly_visible(item, role, address, &c.revision) {
                return Some(Err(format!(
                    "{}@{} is not visible to them now",
                    c.sheet, c.revision
                )));
            }
            // The trace names no tab: a sheet the explorer asks about
            // has one (§8.7's worked example).
            let sheet = item.current().sheet.as_ref()?;
            let cell = sheet.tabs.first()?.cell(c.row, c.col)?;
            operands.push((cell.value()?.clone(), cell.format_code.clone()));
        }
        let operands: Vec<(&num::rational::BigRational, Option<&str>)> =
            operands.iter().map(|(v, f)| (v, f.as_deref())).collect();
        Some(Ok(crate::fake::sheet::aggregate(function, &operands)))
    });
    let want = match truth {
        Some(Ok(crate::fake::wire::S6Result::Value { display, .. })) => display,
        Some(Err(why)) => {
            return vec![fail(
                SAFETY_NUMBER,
                "a figure is computed only over cells the reader may see now (§8.7, §4.1)".into(),
                why,
            )];
        }
        other => {
            return vec![fail(
                SAFETY_NUMBER,
                "a figure is shown only where the sibling's cells now give a VALUE".into(),
                format!("{other:?}"),
            )];
        }
    };
    if figure == want {
        vec![]
    } else {
        vec![fail(
            SAFETY_NUMBER,
            format!("the figure is S6's display now, {want:?}, byte for byte (§8.7)"),
            format!("{figure:?}"),
        )]
    }
}

/// The revision `app` answered VISIBLE for `item_id` to `label` in `s2`,
/// on the wire ([`on_the_wire`]), and whether that answer was shaped by a
/// lie.
fn visible_answer(
    s2: &[&TraceEvent],
    fakes: &BTreeMap<String, FakeSibling>,
    app: &str,
    label: &str,
    item_id: &str,
) -> Option<(String, bool)> {
    s2.iter().find_map(|e| {
        let CallDetail::S2 { subject, .. } = &e.detail else {
            return None;
        };
        (app_of(&e.callee) == app && e.status == Some(200) && subject.as_deref() == Some(label))
            .then_some(())?;
        on_the_wire(e, fakes)
            .into_iter()
            .find(|(p, result)| p.item_id == item_id && *result == "VISIBLE")
            .map(|(p, _)| (p.revision.clone(), e.faults.iter().any(|f| f == "lie")))
    })
}

/// What `e`, an S2 call memoria received, told memoria of each pair it
/// asked: the value the fake traced (its truth, or its lie), except where
/// the fake's malformation broke the answer, read as the contract's decoder
/// cases read it (`fixtures/contract/s2-decoder-cases.json`; §4.1 and
/// §6.5: the decoder is total, gate 6). A body refused whole (not JSON,
/// empty, cut short, bytes after it, an unknown field, another subject
/// kind or the kind in capitals, a status other than 200) makes every pair
/// UNKNOWN; a result dropped (the last), cut off by a short response
/// (all but the first), answered twice or with a value outside the five
/// (the first) makes its own pair UNKNOWN, the others as answered. The
/// shape is the fake's knob, which no event changes during a request; a
/// call traced as malformed with the knob since gone is read as refused
/// whole.
pub(super) fn on_the_wire<'e>(
    e: &'e TraceEvent,
    fakes: &BTreeMap<String, FakeSibling>,
) -> Vec<(&'e TracedPair, &'e str)> {
    let CallDetail::S2 { pairs, .. } = &e.detail else {
        return vec![];
    };
    let shape = e.faults.iter().any(|f| f == "malformed_s2").then(|| {
        fakes
            .get(app_of(&e.callee))
            .and_then(|f| f.faults().get().malformed_s2)
    });
    let last = pairs.len().saturating_sub(1);
    pairs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let broken = match shape {
                None => false,
                Some(Some(MalformedS2::MissingItem)) => i == last,
                Some(Some(MalformedS2::ShortResponse)) => i > 0,
                Some(Some(
                    MalformedS2::DuplicateItem
                    | MalformedS2::DuplicateSameValue
                    | MalformedS2::UnknownValue,
                )) => i == 0,
                Some(_) => true,
            };
            (p, if broken { "UNKNOWN" } else { p.result.as_str() })
        })
        .collect()
}

/// Whether `faults` can shape an S2 answer beyond what [`on_the_wire`]
/// reads (the announce knob cannot; a malformation alone is read).
fn s2_faulted(faults: &Faults) -> bool {
    let mut f = faults.clone();
    f.truncate_announce = None;
    f.malformed_s2 = None;
    f != Faults::default()
}

/// Whether `e`, an S2 call, was answered as [`on_the_wire`] reads it:
/// status 200 and no fault but a malformation, or a malformation's own
/// status (a 2xx other than 200, whose pairs are all UNKNOWN).
fn read_on_the_wire(e: &TraceEvent, faults: &Faults) -> bool {
    let malformed = e.faults.iter().all(|f| f == "malformed_s2");
    match faults.malformed_s2 {
        Some(MalformedS2::Not200(code)) => malformed && e.status == Some(code),
        _ => malformed && e.status == Some(200),
    }
}

/// Loud withholding (§4.1's table, §8.1): per app whose S2 this request
/// was clean or only malformed (no knob on but a malformation, every call
/// answered 200 or with the malformation's own status, and nothing else
/// shaping it), each reason's line counts the pairs answered so on the
/// wire ([`on_the_wire`]: a pair a malformation broke is UNKNOWN), exactly
/// when each is one passage and at least otherwise; a reason nobody
/// answered has no line (NOT_VISIBLE is never counted). An app in
/// `unasked` (no token to send it) is skipped as a faulted one is, and a
/// malformed app on a page carrying a numeric answer (`numeric`) too: the
/// sheets its S6 cells come from are ruled in a call of their own, and a
/// pair broken there is the numeric box's (a slot table), not a passage
/// line's.
fn judge_withheld(
    lines: &[(String, Option<Reason>, usize)],
    s2: &[&TraceEvent],
    fakes: &BTreeMap<String, FakeSibling>,
    unasked: &BTreeSet<String>,
    numeric: bool,
) -> Vec<Check> {
    let mut out = vec![];
    for (app, fake) in fakes {
        let knobs = fake.faults().get();
        if unasked.contains(app) || s2_faulted(&knobs) {
            continue;
        }
        let mine: Vec<&&TraceEvent> = s2.iter().filter(|e| app_of(&e.callee) == app).collect();
        if !mine.iter().all(|e| read_on_the_wire(e, &knobs))
            || (numeric && mine.iter().any(|e| !e.faults.is_empty()))
        {
            continue;
        }
        let mut asked: BTreeMap<Reason, BTreeSet<(String, String)>> = BTreeMap::new();
        for e in &mine {
            for (p, result) in on_the_wire(e, fakes) {
                let reason = match result {
                    "STALE" => Reason::Stale,
                    "AHEAD" => Reason::Ahead,
                    "UNKNOWN" => Reason::Unknown,
                    _ => continue,
                };
                asked
                    .entry(reason)
                    .or_default()
                    .insert((p.item_id.clone(), p.revision.clone()));
            }
        }
        for reason in [Reason::Unknown, Reason::Stale, Reason::Ahead] {
            let pairs = asked.remove(&reason).unwrap_or_default();
            let counted: Vec<usize> = lines
                .iter()
                .filter(|(a, r, _)| a == app && *r == Some(reason))
                .map(|(_, _, n)| *n)
                .collect();
            let exact = fake.model().with(|m| {
                pairs.iter().all(|(id, rev)| {
                    m.item(id).is_some_and(|i| {
                        i.log
                            .iter()
                            .any(|v| v.revision == *rev && one_passage(&v.body))
                    })
                })
            });
            let n: usize = counted.iter().sum();
            let ok = counted.len() <= 1
                && if pairs.is_empty() {
                    counted.is_empty()
                } else if exact {
                    n == pairs.len()
                } else {
                    n >= pairs.len()
                };
            if !ok {
                out.push(fail(
                    SAFETY_COUNTED,
                    format!(
                        "{app}'s {} answers are counted once each in one line: {} pair(s){} (§4.1, §8.1)",
                        reason.wire(),
                        pairs.len(),
                        if exact { "" } else { " at least" }
                    ),
                    format!("lines counting {counted:?}"),
                ));
            }
        }
    }
    out
}

/// The word a person asks to find `item`: its current title's last word
/// (the item's tag).
fn tag(item: &Item) -> String {
    item.current()
        .title
        .split_whitespace()
        .last()
        .unwrap_or("")
        .to_string()
}

/// Liveness (module docs): every fault is switched off, memoria's calendar
/// moves past the quiet period before each of [`CONVERGENCE_ROUNDS`]
/// rounds of questions, one for every team-visible item (they start its
/// pulls, §6.1, and let S2 see a restore, §4.1), and then each admitted member
/// in `readers` asks for every team-visible item the sibling shows them:
/// it must be on the page at its current revision, with no source named
/// reconciling or withheld. Each final page is judged for safety too. In
/// suite shape (`home`), simulated time runs after the first round until
/// memoria's roster loop has pulled again.
///
/// # Errors
/// If memoria cannot be reached.
pub(super) async fn converge(
    m: &mut Memoria,
    fakes: &BTreeMap<String, FakeSibling>,
    owned: &Owned,
    readers: &[String],
    trace: &crate::fake::trace::Trace,
    home: Option<&super::roster::RosterTruth>,
) -> Result<Vec<Check>, String> {
    let mut out = vec![];
    let Some(first) = readers.first() else {
        return Ok(out);
    };
    for fake in fakes.values() {
        fake.faults().clear();
    }
    // The questions people go on asking: each round, every team-visible
    // item is asked for once, by a member it shows to (a partial restore
    // is seen only by S2, in a question that touches the item, §4.1).
    for round in 0..CONVERGENCE_ROUNDS {
        // Suite shape: the calendar skips below age the roster copy
        // (`ROSTER_TTL_S`, 900 s) while its loop sleeps in simulated time,
        // so time runs until the loop's next pull once, after the first
        // round: the copy is then younger than the rounds left (§4.3, §6.5).
        if round == 1
            && let Some(truth) = home
        {
            super::roster::await_clean_pull(truth).await;
        }
        m.advance_s(QUIET_S);
        let _ = m.search(first, "convergence").await;
        for fake in fakes.values() {
            let asks: Vec<(String, String)> = fake.model().with(|mm| {
                mm.items()
                    .filter(|i| i.team_visible())
                    .filter_map(|i| {
                        readers
                            .iter()
                            .find(|r| {
                                !i.removed.contains(*r)
                                    && mm.person(r).map(|p| p.role) == Some(Role::Member)
                            })
                            .map(|r| (r.clone(), tag(i)))
                    })
                    .collect()
            });
            for (reader, q) in asks {
                let _ = m.search(&reader, &q).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(PULL_SETTLE_MS)).await;
    }
    let mut found = 0usize;
    for (app, fake) in fakes {
        let items: Vec<Item> = fake
            .model()
            .with(|mm| mm.items().filter(|i| i.team_visible()).cloned().collect());
        for item in items {
            for reader in readers {
                let member = fake
                    .model()
                    .with(|mm| mm.person(reader).map(|p| p.role) == Some(Role::Member));
                if !member || item.removed.contains(reader) {
                    continue;
                }
                let before = trace.len();
                let page = m.search(reader, &tag(&item)).await;
                let window = &trace.since(before);
                let seen = from_page(&page.response.body);
                out.extend(
                    judge_page(reader, &seen, window, fakes, true, owned, &BTreeSet::new())
                        .into_iter()
                        .filter(|c| !c.ok),
                );
                let shown = &seen.shown;
                let want = Shown {
                    app: app.clone(),
                    title: item.current().title.clone(),
                };
                let revision = item.current().revision.clone();
                let s2: Vec<&TraceEvent> = window
                    .iter()
                    .filter(|e| e.call == CallKind::S2 && e.caller == MEMORIA_CONSUMER)
                    .collect();
                let label = fake
                    .model()
                    .with(|mm| mm.person(reader).map(|p| p.label.clone()))
                    .unwrap_or_default();
                let current = visible_answer(&s2, fakes, app, &label, &item.item_id)
                    .is_some_and(|(r, _)| r == revision);
                let notices = seen.withheld.len() + seen.reconciling.len();
                if !shown.contains(&want) || !current || notices > 0 {
                    out.push(fail(
                        LIVENESS,
                        format!(
                            "after the quiet period {app}:{}@{} is found by {} with no source withheld or reconciling (§4.1, §6.1, §6.5)",
                            item.item_id,
                            revision,
                            reader.split('@').next().unwrap_or(reader)
                        ),
                        format!(
                            "{} results, the item {}, {notices} notice lines",
                            shown.len(),
                            match (shown.contains(&want), current) {
                                (true, true) => "at its current revision",
                                (true, false) => "at another revision",
                                _ => "absent",
                            }
                        ),
                    ));
                } else {
                    found += 1;
                }
            }
        }
    }
    // memoria's own documents: each one stored is found by every member
    // still admitted (§4.2: no S2 stands between them).
    for (doc, d) in owned.docs.iter().filter(|(_, d)| d.live) {
        for reader in readers {
            let page = m.search(reader, &d.tag).await;
            let seen = from_page(&page.response.body);
            if seen
                .shown
                .iter()
                .any(|r| r.app == APP_MEMORIA && r.title.ends_with(&d.tag))
            {
                found += 1;
            } else {
                out.push(fail(
                    LIVENESS,
                    format!(
                        "memoria's own document {doc}, stored and never deleted, is found by {} (§4.2)",
                        reader.split('@').next().unwrap_or(reader)
                    ),
                    format!("{} results, not it", seen.shown.len()),
                ));
            }
        }
    }
    if out.is_empty() {
        out.push(Check {
            expected: format!(
                "{LIVENESS} every team-visible item found by each member it shows to"
            ),
            actual: format!("{found} found"),
            ok: true,
        });
    }
    Ok(out)
}

/// A memoria-owned document is shown only while it exists (§4.2), and a
/// deleted one never comes back, after any restart or restore (§7.4).
fn judge_owned(r: &Shown, owned: &Owned) -> Vec<Check> {
    // A connector's document (`connector.rs`): its source, not an upload,
    // is its truth, and `[safety:enumeration]` judges it there.
    if super::connector::is_connector_title(&r.title) {
        return vec![];
    }
    match owned.by_title(&r.title) {
        None => vec![fail(
            SAFETY_PROVENANCE,
            "every memoria result is a document someone uploaded".into(),
            "a title nobody uploaded".into(),
        )],
        Some((doc, d)) if d.deleted => vec![fail(
            SAFETY_OWNED,
            format!(
                "memoria's own document {doc}, deleted, never comes back after any restart or restore (§7.4)"
            ),
            "it was shown".into(),
        )],
        // Cut off by a crash before memoria answered: stored or not.
        Some((_, d)) if d.doubt => vec![],
        Some((doc, d)) if !d.live => vec![fail(
            SAFETY_OWNED,
            format!("memoria's own document {doc} is shown only while it is stored (§4.2)"),
            "it was shown though no upload stored it".into(),
        )],
        Some(_) => vec![],
    }
}

/// No plaintext at rest (§0, decision 6): of `words`, each a word of an
/// item's title in the truth model that some page showed (so memoria
/// holds it: the presence that makes an absence meaningful), none is in
/// the bytes of memoria's data directory `dir`. An empty directory proves
/// nothing and fails too.
pub(super) fn judge_at_rest(dir: &std::path::Path, words: &[String]) -> Vec<Check> {
    if words.is_empty() {
        return vec![];
    }
    match super::surfaces::at_rest(dir, words) {
        Err(e) => vec![fail(
            SAFETY_AT_REST,
            "memoria's data directory can be read".into(),
            e,
        )],
        Ok((_, 0)) => vec![fail(
            SAFETY_AT_REST,
            "memoria's data directory holds what it has shown".into(),
            "no bytes".into(),
        )],
        Ok((found, read)) if !found.is_empty() => vec![fail(
            SAFETY_AT_REST,
            format!(
                "none of {} words memoria has shown is in its data directory's bytes (§0, decision 6)",
                words.len()
            ),
            format!("{} of them in plain text among {read} bytes", found.len()),
        )],
        Ok((_, read)) => vec![Check {
            expected: format!(
                "{SAFETY_AT_REST} none of {} words memoria has shown is in its data directory's bytes",
                words.len()
            ),
            actual: format!("{read} bytes read"),
            ok: true,
        }],
    }
}

/// Items some page showed, by (app, item id), with the length of the app's
/// event log when it was last shown: a `gone` row after that position is a
/// departure memoria may have acted on.
pub(super) type ShownSince = BTreeMap<(String, String), usize>;

/// No silent loss (§4.1 rules 1 and 3, gate 27): a question that is one
/// item's tag, asked by an admitted reader the sibling's truth shows the
/// item to, after some page showed that item and with no `gone` row for it
/// since, finds it or carries a withheld or reconciling line for its app.
/// A retirement is only ever made by a complete announce of an item the
/// sibling no longer holds, so an item that never left cannot vanish
/// quietly. Then records what this page showed in `shown`.
pub(super) fn judge_silence(
    address: &str,
    q: &str,
    seen: &Rendered,
    fakes: &BTreeMap<String, FakeSibling>,
    admitted: bool,
    shown: &mut ShownSince,
    owned: &Owned,
) -> Vec<Check> {
    let mut out = vec![];
    let results = &seen.shown;
    let q = q.trim();
    // memoria's own document, stored, asked for by its tag by a person
    // admitted: nothing stands between them (§4.2).
    if let Some((doc, _)) = owned.docs.iter().find(|(_, d)| d.live && d.tag == q)
        && admitted
        && !results
            .iter()
            .any(|r| r.app == APP_MEMORIA && r.title.ends_with(q))
    {
        out.push(fail(
            SAFETY_SILENT,
            format!("memoria's own document {doc}, stored, is found by its tag (§4.2)"),
            format!("{} results, none of it", results.len()),
        ));
    }
    for (app, fake) in fakes {
        let missing = fake.model().with(|m| {
            let item = m.items().find(|i| {
                i.current().title == q || i.current().title.ends_with(&format!(" {q}"))
            })?;
            let since = *shown.get(&(app.clone(), item.item_id.clone()))?;
            let gone_since = m
                .events()
                .get(since..)
                .is_none_or(|log| log.iter().any(|e| e.item_id == item.item_id && e.gone));
            let member = m.person(address).is_some_and(|p| p.role == Role::Member);
            let visible = item.team_visible() && member && !item.removed.contains(address);
            let found = results
                .iter()
                .any(|r| r.app == *app && item.log.iter().any(|v| v.title == r.title));
            (admitted && visible && !gone_since && !found).then(|| item.item_id.clone())
        });
        let Some(item_id) = missing else { continue };
        let noticed = seen.names(app);
        if !noticed {
            out.push(fail(
                SAFETY_SILENT,
                format!(
                    "{app}:{item_id}, shown before and never gone since, is found again by its tag or its app has a withheld or reconciling line (§4.1 rules 1 and 3)"
                ),
                format!("{} results, none of it, and no line for {app}", results.len()),
            ));
        }
    }
    for r in results {
        if let Some(fake) = fakes.get(&r.app) {
            fake.model().with(|m| {
                if let Some(item) = m.items().find(|i| i.log.iter().any(|v| v.title == r.title)) {
                    shown.insert((r.app.clone(), item.item_id.clone()), m.events().len());
                }
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::traced::{calls, sheets_with};
    use super::*;
    use crate::fake::model::{ModelHandle, Rung};
    use crate::fake::trace::Clock;

    #[test]
    fn an_item_a_whole_restore_took_away_was_held_and_only_a_lie_shows_it() {
        // Each row: what | where sheets' item `sh-ia` is | the question's
        // calls (`traced.rs`) | the invariant of each failure, or nothing.
        let rows = [
            "held now, VISIBLE truly | now | VISIBLE | ",
            "held now, a lie | now | VISIBLE!lie | ",
            "taken away by a whole restore, a lie | lost | VISIBLE!lie | ",
            "taken away, VISIBLE without a lie | lost | VISIBLE | [safety:visible]",
            "taken away, no answer | lost | | [safety:visible]",
            "never held, a lie | never | VISIBLE!lie | [safety:provenance]",
        ];
        for row in rows {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let [what, held, own, failures] = cells[..] else {
                panic!("a row of four cells: {row}");
            };
            let model = ModelHandle::new(Clock::manual().0);
            let label = model.add_member("ana@acme.example", None);
            assert_eq!(label, "member-1", "{what}: the label traced.rs asks for");
            let before = model.with(|m| m.snapshot());
            if held != "never" {
                model
                    .add_item("sh-ia", Rung::Team, "budget qxshia", "b1")
                    .expect("add");
                model
                    .revise("sh-ia", "budget qxshia", "b2")
                    .expect("revise");
            }
            if held == "lost" {
                model.with(|m| m.restore_whole(&before));
            }
            let fakes = sheets_with(model, Clock::manual().0);
            let seen = Rendered {
                shown: vec![Shown {
                    app: "sheets".into(),
                    title: "budget qxshia".into(),
                }],
                ..Rendered::default()
            };
            let got: Vec<String> = judge_page(
                "ana@acme.example",
                &seen,
                &calls(own, "sh-ia"),
                &fakes,
                true,
                &Owned::default(),
                &BTreeSet::new(),
            )
            .into_iter()
            .filter(|c| !c.ok)
            .map(|c| c.expected.split(' ').next().unwrap_or_default().to_string())
            .collect();
            let want: Vec<String> = failures.split_whitespace().map(String::from).collect();
            assert_eq!(got, want, "{what}");
        }
    }

    #[test]
    fn a_tag_is_letters_only_and_unique_per_index() {
        let tags: BTreeSet<String> = (0..100).map(|i| corpus_tag("docs", i)).collect();
        assert_eq!(tags.len(), 100);
        assert!(
            tags.iter()
                .all(|t| t.chars().all(|c| c.is_ascii_lowercase()))
        );
    }
}
