//! The application room: the use-cases that drive the instance from above it, for the surfaces to call alike (issue 29).
//!
//! A room below `instance/` says what a thing is (a decoded file, a
//! connector's pages, a canary's sentences, an artefact's roots, the
//! provider's calls); the functions here hold an [`crate::Instance`] or a
//! [`crate::SharedInstance`] and do the work with it:
//!
//! - [`import`]: `memoria import`, an upload's and a connector item's bytes
//!   ingested (§5);
//! - [`connector`]: a connector's enumeration applied as a diff, and a
//!   local folder kept in sync (§5.1, gate 7);
//! - [`queue`]: the embedding queue drained with no lock held while the
//!   provider works (§7.2);
//! - [`canary`]: the embedding canary checked at wake (§8.2, gate 30);
//! - [`artefacts`]: the derived artefacts written and kept current (§5.2).
//!
//! The room sits above `sibling/` (whose ruling, sync and pulls are the
//! request's other use-cases) and below the surfaces: the web page
//! (`AppState`, the upload and connector routes) and the demo call it as
//! `crate::app::…`, the CLI (`memoria import`, `sync-folder`) through the
//! crate's facade.

pub mod artefacts;
pub mod canary;
pub mod connector;
pub mod import;
pub mod queue;
