//! Choosing cases: by gate id, case id or glob, with `--skip`, the way h2spec and connect-conformance select.
//!
//! A selector is a gate id (`6`), a case id (`27/empty-page`), or a glob
//! over case ids (`1/*`, `*/presence`, `2?/*`). No selector means every
//! case. `--skip` takes the same forms and wins over a selection.

use crate::{Case, Gate, registry};

/// A parsed selector.
#[derive(Debug, Clone)]
pub struct Selector {
    text: String,
    pattern: Option<glob::Pattern>,
}

impl Selector {
    /// Parses a selector.
    ///
    /// # Errors
    /// A message if the glob is malformed.
    pub fn parse(text: &str) -> Result<Selector, String> {
        let pattern = if text.contains(['*', '?', '[']) {
            Some(glob::Pattern::new(text).map_err(|e| format!("selector {text:?}: {e}"))?)
        } else {
            None
        };
        Ok(Selector {
            text: text.to_string(),
            pattern,
        })
    }

    /// True if this selector picks `case` of `gate`.
    pub fn matches(&self, gate: &Gate, case: &Case) -> bool {
        match &self.pattern {
            Some(p) => p.matches(case.id),
            None => self.text == gate.id || self.text == case.id,
        }
    }

    /// True if this selector names at least one registered case.
    pub fn matches_any(&self) -> bool {
        registry()
            .iter()
            .any(|g| g.cases.iter().any(|c| self.matches(g, c)))
    }
}

/// The selected cases, grouped by gate in registry order.
///
/// # Errors
/// A message naming every selector or skip that matches nothing, or saying
/// that the skips leave no case to run: a typo or an over-wide `--skip` must
/// not run zero cases and call it a pass.
pub fn select(
    selectors: &[String],
    skips: &[String],
) -> Result<Vec<(&'static Gate, Vec<&'static Case>)>, String> {
    let sel = selectors
        .iter()
        .map(|s| Selector::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let skip = skips
        .iter()
        .map(|s| Selector::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let unknown: Vec<&str> = sel
        .iter()
        .chain(skip.iter())
        .filter(|s| !s.matches_any())
        .map(|s| s.text.as_str())
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "no registered gate or case matches: {}",
            unknown.join(", ")
        ));
    }
    let mut out = Vec::new();
    for g in registry() {
        let cases: Vec<&Case> = g
            .cases
            .iter()
            .filter(|c| sel.is_empty() || sel.iter().any(|s| s.matches(g, c)))
            .filter(|c| !skip.iter().any(|s| s.matches(g, c)))
            .collect();
        if !cases.is_empty() {
            out.push((*g, cases));
        }
    }
    if out.is_empty() {
        return Err(format!(
            "the selection runs no case: --skip {} leaves nothing of it",
            skips.join(" --skip ")
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(sel: &[&str], skip: &[&str]) -> Vec<&'static str> {
        let s: Vec<String> = sel.iter().map(|x| x.to_string()).collect();
        let k: Vec<String> = skip.iter().map(|x| x.to_string()).collect();
        select(&s, &k)
            .unwrap()
            .into_iter()
            .flat_map(|(_, cs)| cs.into_iter().map(|c| c.id))
            .collect()
    }

    #[test]
    fn a_gate_id_selects_its_cases_and_not_a_longer_id_sharing_its_prefix() {
        let got = ids(&["1"], &[]);
        assert!(!got.is_empty());
        assert!(got.iter().all(|id| id.starts_with("1/")));
    }

    #[test]
    fn globs_and_skips_compose() {
        let got = ids(&["1/*"], &["1/presence"]);
        assert!(!got.contains(&"1/presence"));
        assert!(got.contains(&"1/database-and-wal"));
    }

    #[test]
    fn a_selector_that_matches_nothing_is_an_error_not_an_empty_pass() {
        assert!(select(&["99".to_string()], &[]).is_err());
        assert!(select(&[], &["nope/*".to_string()]).is_err());
    }

    #[test]
    fn skipping_every_selected_case_is_an_error_not_an_empty_pass() {
        let err = select(&["1".to_string()], &["1/*".to_string()]).unwrap_err();
        assert!(err.contains("runs no case"), "{err}");
        assert!(select(&[], &["*".to_string()]).is_err());
    }
}
