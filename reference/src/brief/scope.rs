//! Scopes in memoria's terms: a project is an import root, the team is this instance, the organisation is a configured shared collection (`brief-organisation-read.md` §1).
//!
//! The papers file memories under three nested scopes: a repository, a
//! team, the organisation. memoria holds documents, so:
//!
//! - a **project** (the papers' repository) is a named import root: every
//!   document whose recorded path lies under the root's path
//!   (`MEMORIA_PROJECTS=name=PATH,…`);
//! - the **organisation** is one configured shared collection, also a path
//!   (`MEMORIA_ORGANISATION=PATH`): what every project of the team may lean on;
//! - the **team** is the rest of this instance: uploads, sibling items and
//!   imports under no configured root.
//!
//! A document's recorded path is the path as its import was given (`memoria
//! import docs/` records `docs/a.md`), so a root is matched against it
//! component by component, lexically (`./docs` and `docs/` are one root).
//! The longest matching root wins; a sibling's item is the team's whatever
//! its title.

use std::fmt;

use serde::Serialize;

use crate::error::{Error, ErrorKind};
use crate::storage::store::DocumentSummary;

/// The environment variable naming the projects: `name=PATH,name=PATH`.
pub const PROJECTS_ENV: &str = "MEMORIA_PROJECTS";
/// The environment variable naming the organisation's shared collection: a path.
pub const ORGANISATION_ENV: &str = "MEMORIA_ORGANISATION";
/// The scope name that asks from the team.
pub const TEAM_SCOPE: &str = "team";
/// The scope name that asks from the organisation.
pub const ORGANISATION_SCOPE: &str = "organisation";
/// The most projects one instance names.
pub const PROJECTS_MAX: usize = 256;
/// The longest project name, in bytes.
pub const PROJECT_NAME_BYTES_MAX: usize = 64;

/// The scope a document is filed under.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum Scope {
    /// A named project (an import root).
    Project(String),
    /// This instance, outside every project and the organisation.
    Team,
    /// The organisation's shared collection.
    Organisation,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Project(name) => write!(f, "project {name}"),
            Scope::Team => f.write_str("the team"),
            Scope::Organisation => f.write_str("the organisation"),
        }
    }
}

/// The configured projects and organisation collection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scopes {
    projects: Vec<(String, Vec<String>)>,
    organisation: Option<Vec<String>>,
}

/// A path's components, lexically: empty and `.` components dropped.
fn components(path: &str) -> Vec<String> {
    path.split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_string)
        .collect()
}

fn usage(message: &'static str) -> Error {
    Error::new(ErrorKind::Config, message)
}

impl Scopes {
    /// No project and no organisation: every document is the team's.
    pub fn none() -> Scopes {
        Scopes::default()
    }

    /// Parses `projects` (`name=PATH,…`, empty for none) and `organisation`
    /// (a path, or `None`).
    ///
    /// # Errors
    /// [`ErrorKind::Config`] for an entry without `=`, an empty path, a
    /// name that is not lower-case letters, digits, `-`, `_` or `.` (at
    /// most [`PROJECT_NAME_BYTES_MAX`] bytes), a name that is `team` or
    /// `organisation`, a name given twice, or more than [`PROJECTS_MAX`]
    /// projects. The message names no path.
    pub fn parse(projects: &str, organisation: Option<&str>) -> Result<Scopes, Error> {
        let mut out = Scopes::default();
        for entry in projects.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (name, path) = entry
                .split_once('=')
                .ok_or_else(|| usage("a MEMORIA_PROJECTS entry is not name=PATH"))?;
            let name = name.trim();
            let well_formed = !name.is_empty()
                && name.len() <= PROJECT_NAME_BYTES_MAX
                && name.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.')
                });
            if !well_formed {
                return Err(usage(
                    "a project name is 1 to 64 lower-case letters, digits, '-', '_' or '.'",
                ));
            }
            if name == TEAM_SCOPE || name == ORGANISATION_SCOPE {
                return Err(usage(
                    "'team' and 'organisation' are scopes of their own, not project names",
                ));
            }
            if out.projects.iter().any(|(n, _)| n == name) {
                return Err(usage("a project is named twice in MEMORIA_PROJECTS"));
            }
            let root = components(path.trim());
            if root.is_empty() {
                return Err(usage("a MEMORIA_PROJECTS entry has an empty path"));
            }
            out.projects.push((name.to_string(), root));
            if out.projects.len() > PROJECTS_MAX {
                return Err(usage("more than 256 projects in MEMORIA_PROJECTS"));
            }
        }
        if let Some(org) = organisation.map(str::trim).filter(|o| !o.is_empty()) {
            out.organisation = Some(components(org));
        }
        Ok(out)
    }

    /// Reads [`PROJECTS_ENV`] and [`ORGANISATION_ENV`].
    ///
    /// # Errors
    /// As [`Scopes::parse`].
    pub fn from_env() -> Result<Scopes, Error> {
        let projects = std::env::var(PROJECTS_ENV).unwrap_or_default();
        let organisation = std::env::var(ORGANISATION_ENV).ok();
        Scopes::parse(&projects, organisation.as_deref())
    }

    /// The configured project names, in the order given.
    pub fn project_names(&self) -> impl Iterator<Item = &str> {
        self.projects.iter().map(|(n, _)| n.as_str())
    }

    /// True if an organisation collection is configured.
    pub fn has_organisation(&self) -> bool {
        self.organisation.is_some()
    }

    /// The scope `doc` is filed under: the longest configured root its
    /// recorded path lies under; a sibling's item, and a path under no
    /// root, are the team's.
    pub fn of(&self, doc: &DocumentSummary) -> Scope {
        self.of_path(&doc.path, doc.provenance.is_some())
    }

    /// As [`Scopes::of`], from a document's recorded path and whether it is
    /// a sibling's item: what a brief files every live document by without
    /// opening its title (`Store::document_paths`).
    pub fn of_path(&self, recorded: &str, from_sibling: bool) -> Scope {
        if from_sibling {
            return Scope::Team;
        }
        let path = components(recorded);
        let under = |root: &[String]| path.len() > root.len() && path.starts_with(root);
        let mut best: Option<(usize, Scope)> = None;
        for (name, root) in &self.projects {
            if under(root) && best.as_ref().is_none_or(|(n, _)| root.len() > *n) {
                best = Some((root.len(), Scope::Project(name.clone())));
            }
        }
        if let Some(root) = &self.organisation
            && under(root)
            && best.as_ref().is_none_or(|(n, _)| root.len() > *n)
        {
            best = Some((root.len(), Scope::Organisation));
        }
        best.map(|(_, s)| s).unwrap_or(Scope::Team)
    }

    /// The path of `doc` below the root of its scope, as components (the
    /// whole recorded path for the team's documents): what the path term
    /// reads.
    pub fn relative_path(&self, doc: &DocumentSummary) -> Vec<String> {
        let path = components(&doc.path);
        let root_len = match self.of(doc) {
            Scope::Project(name) => self
                .projects
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(0, |(_, r)| r.len()),
            Scope::Organisation => self.organisation.as_ref().map_or(0, Vec::len),
            Scope::Team => 0,
        };
        path[root_len.min(path.len())..].to_vec()
    }

    /// The scope an agent names with `--scope`: a project's name, `team` or
    /// `organisation`; `None` for a name not configured.
    pub fn named(&self, name: &str) -> Option<Scope> {
        match name {
            TEAM_SCOPE => Some(Scope::Team),
            ORGANISATION_SCOPE => self.organisation.as_ref().map(|_| Scope::Organisation),
            _ => self
                .projects
                .iter()
                .any(|(n, _)| n == name)
                .then(|| Scope::Project(name.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(path: &str) -> DocumentSummary {
        DocumentSummary {
            id: "d".into(),
            app: "memoria".into(),
            revision: 1,
            title: "t".into(),
            path: path.into(),
            chunk_count: 1,
            created_at: 0,
            updated_at: 0,
            provenance: None,
            date: crate::date::DocumentDate {
                kind: crate::date::DateKind::Imported,
                at: 0,
            },
        }
    }

    #[test]
    fn a_document_is_filed_under_the_longest_root_its_path_lies_under() {
        let s = Scopes::parse("tokio=crates/tokio, rt=./crates/tokio/rt", Some("org/")).unwrap();
        assert_eq!(
            s.of(&doc("crates/tokio/README.md")),
            Scope::Project("tokio".into())
        );
        assert_eq!(
            s.of(&doc("crates/tokio/rt/a.md")),
            Scope::Project("rt".into())
        );
        assert_eq!(s.of(&doc("./org/handbook.md")), Scope::Organisation);
        assert_eq!(s.of(&doc("crates/tokiox/a.md")), Scope::Team);
        assert_eq!(s.of(&doc("crates/tokio")), Scope::Team);
        assert_eq!(
            s.relative_path(&doc("crates/tokio/docs/runtime.md")),
            ["docs", "runtime.md"]
        );
    }

    #[test]
    fn a_malformed_projects_list_is_refused_with_a_config_error() {
        for bad in ["tokio", "=x", "Tokio=x", "team=x", "a=x,a=y", "a="] {
            let e = Scopes::parse(bad, None).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Config, "{bad}");
        }
    }

    #[test]
    fn a_scope_is_named_by_project_team_or_organisation_only_when_configured() {
        let s = Scopes::parse("a=x", None).unwrap();
        assert_eq!(s.named("a"), Some(Scope::Project("a".into())));
        assert_eq!(s.named("team"), Some(Scope::Team));
        assert_eq!(s.named("organisation"), None);
        assert_eq!(s.named("b"), None);
    }
}
