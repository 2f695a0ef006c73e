//! The rigs every gate builds its world with: seeds, one-thread async, byte greps at rest and captured logs ([`support`]), one hand clock ([`clock`]), one in-process app ([`app`]), one instance for the briefs' gates ([`brief`]), one instance for the fact box's gates ([`facts`]), one with AI on and its chunks embedded ([`dense`]), a world answering with the stub provider ([`answer`]), simulated worlds of fake siblings ([`sim`]) and in suite shape with a fake home ([`home`]), a throwaway CA and a TLS server on real loopback ([`tls`]), and one reader for the pages memoria renders ([`page`]).
//!
//! A gate asserts through these and never re-implements them: a second
//! HTML scanner or a second hand clock in a gate file is a rig waiting to
//! be moved here.

pub mod answer;
pub mod app;
pub mod artefacts;
pub mod brief;
pub mod clock;
pub mod dense;
pub mod facts;
pub mod home;
pub mod page;
pub mod sim;
pub mod support;
pub mod tls;
