//! The brief's rig (gates 40-42): one memoria instance in the case's scratch directory, AI off, on a hand clock, holding documents at the paths a case gives, and a brief asked through the one ruling path.
//!
//! The gates assert the [`Brief`] that `memoria brief`, the `/brief` route
//! and the agent transport all return: it is built by
//! `memoria::ruled_brief`, which rules every sibling passage in its pool
//! through the same S2 path as every surface. Scopes are the reference's own
//! ([`Scopes::parse`]): a case files documents under projects and the
//! organisation by their paths, exactly as `MEMORIA_PROJECTS` and
//! `MEMORIA_ORGANISATION` would.

use std::sync::Arc;

use memoria::brief::{Brief, BriefError, BriefRequest, Scopes};
use memoria::{
    Admission, EgressMode, Instance, InstanceConfig, NewDocument, Offload, Sealer, SharedInstance,
};

use super::app::APP_T0_S;
use super::clock::HandClock;
use super::support::{block_on, dek};
use crate::{Ctx, Failure};

/// The one owner the rig's instance admits.
pub const BRIEF_OWNER: &str = "ana@example.org";

/// One document a case files: its title, its recorded path (which decides
/// its scope) and its Markdown body.
#[derive(Debug, Clone, Copy)]
pub struct Doc<'a> {
    /// The title.
    pub title: &'a str,
    /// The recorded path, e.g. `repo/notes/a.md`.
    pub path: &'a str,
    /// The Markdown body.
    pub body: &'a str,
}

/// An instance holding `docs`, in a fresh scratch directory of the case's
/// (so one case may build several), ready to be asked for briefs.
///
/// # Errors
/// A [`Failure`] if memoria does not wake or refuses a document.
pub fn instance_with(ctx: &mut Ctx, docs: &[Doc<'_>]) -> Result<SharedInstance, Failure> {
    use rand::RngCore as _;
    let name = format!("brief-{:08x}", ctx.rng().next_u32());
    let mut m = Instance::wake(
        InstanceConfig {
            data_dir: ctx.dir(&name),
            admission: Admission::parse(BRIEF_OWNER).expect("one owner"),
            egress: EgressMode::AiOff,
        },
        Sealer::new(&dek(ctx.rng())),
        Arc::new(HandClock::at(APP_T0_S)),
    )
    .map_err(|e| Failure::new("memoria wakes", e.to_string()))?;
    for d in docs {
        m.ingest(&NewDocument {
            source_key: format!("import:{}", d.path),
            title: d.title.into(),
            path: d.path.into(),
            body: d.body.into(),
            date: None,
        })
        .map_err(|e| Failure::new("memoria ingests the document", e.to_string()))?;
    }
    Ok(SharedInstance::new(m, Offload::Inline))
}

/// The scopes the rig's cases use: project `repo` under `repo/`, project
/// `other` under `other/`, the organisation under `org/`.
pub fn scopes() -> Scopes {
    Scopes::parse("repo=repo,other=other", Some("org")).expect("the rig's scopes parse")
}

/// A request for `task` from `scope` with `budget` characters.
pub fn request(task: &str, scope: &str, budget: usize) -> BriefRequest {
    BriefRequest {
        task: task.into(),
        scope: scope.into(),
        budget_chars: budget,
        with_team: false,
    }
}

/// The brief for `task` from project `repo` within `budget` characters,
/// asked of an instance ([`instance_with`]) holding one document per
/// `(title, path, paragraphs)` of `files`: its body is the heading
/// `# title` and then the paragraphs, a blank line between each.
///
/// # Errors
/// As [`instance_with`] and [`brief`].
pub fn repo_brief(
    ctx: &mut Ctx,
    files: &[(&str, &str, &[&str])],
    task: &str,
    budget: usize,
) -> Result<Brief, Failure> {
    let bodies: Vec<String> = files
        .iter()
        .map(|(title, _, paragraphs)| format!("# {title}\n\n{}\n", paragraphs.join("\n\n")))
        .collect();
    let docs: Vec<Doc<'_>> = files
        .iter()
        .zip(&bodies)
        .map(|((title, path, _), body)| Doc { title, path, body })
        .collect();
    let m = instance_with(ctx, &docs)?;
    brief(&m, &scopes(), &request(task, "repo", budget))
}

/// The brief `m` gives the rig's owner for `req`, through the one ruling
/// path, with no sibling client (every document here is memoria-owned).
///
/// # Errors
/// The reference's [`BriefError`], as it is.
pub fn ask(m: &SharedInstance, scopes: &Scopes, req: &BriefRequest) -> Result<Brief, BriefError> {
    block_on(memoria::ruled_brief(
        m,
        None,
        None,
        BRIEF_OWNER,
        req,
        scopes,
    ))
    .map(|r| r.brief)
}

/// As [`ask`], where a refusal fails the case.
///
/// # Errors
/// A [`Failure`] naming the refusal.
pub fn brief(m: &SharedInstance, scopes: &Scopes, req: &BriefRequest) -> Result<Brief, Failure> {
    ask(m, scopes, req).map_err(|e| Failure::new("the brief is built", e.to_string()))
}

/// The excerpts' texts, in order, for messages and comparisons.
pub fn texts(b: &Brief) -> Vec<&str> {
    b.excerpts.iter().map(|e| e.text.as_str()).collect()
}

/// What the brief carried: the excerpts' texts, in order, then the
/// description's, if it has one.
pub fn material(b: &Brief) -> Vec<&str> {
    let mut material = texts(b);
    if let Some(d) = &b.description {
        material.push(&d.text);
    }
    material
}
