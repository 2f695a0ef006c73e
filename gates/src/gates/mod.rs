//! The registry: one module per gate, named after its number and subject, declared and registered in one list.
//!
//! **Adding a gate** is the gate's file (`gNN_subject.rs`, exporting a
//! `pub static GATE: Gate`) and one line in the `register!` list below,
//! in id order. A suite gate (GATES.md's "suite N" checks that memoria's
//! side holds) is `sNN_subject.rs` with the id `"suite N"`, listed after
//! every numbered gate, in its own ascending order. That line declares the module and puts its `GATE` in
//! [`ALL`]; `memoria-harness run`, `list`, `sweep`, the mutation runner and
//! `cargo test --test gates` (one trial per case) all read [`ALL`], so
//! nothing else names the gate. The tests below hold the list in id order
//! with well-formed, unique case ids.

use crate::Gate;

/// Declares each gate module and lists its `GATE` in [`ALL`], in the order given.
macro_rules! register {
    ($($module:ident),+ $(,)?) => {
        $(pub mod $module;)+

        /// Every registered gate, in id order.
        pub static ALL: &[&Gate] = &[$(&$module::GATE),+];
    };
}

register! {
    g01_plaintext_grep,
    g02_inversion_probe,
    g03_feed_rows_carry_no_content,
    g04_no_content_in_logs,
    g05_grants_join_decides,
    g06_every_s2_result_handled,
    g07_enumeration_diff,
    g08_refusal_breaker,
    g09_derived_artefact_provenance,
    g10_deletion_survives_restore,
    g11_cross_team_refusal,
    g12_token_rotation,
    g13_two_consumer_isolation,
    g14_answer_citations,
    g15_ai_off_floor,
    g16_credential_sets_disjoint,
    g17_no_undeclared_route,
    g18_external_source_authorization,
    g19_mixed_provenance,
    g20_wake_budget,
    g21_admission_read_not_held,
    g22_unit_certification,
    g23_deadline_and_concurrency,
    g24_wake_warm_up,
    g25_s3_carries_no_person,
    g26_external_id_keyed,
    g27_sibling_restore_reconciles,
    g28_unit_norm,
    g29_retrieval_quality,
    g30_embedding_canary,
    g31_provider_body_never_logged,
    g32_prompt_passages_ruled,
    g33_admission_before_classifier,
    g34_fact_candidates_ruled,
    g35_fact_recognisers,
    g36_fact_labels,
    g37_fact_cap_collision_narrowing,
    g38_egress_footer,
    g39_model_half_sends_and_locates,
    g40_brief_repeats,
    g41_organisation_read,
    g42_brief_material,
    s05_stale_roster,
}

#[cfg(test)]
mod tests {
    use super::ALL;

    /// A gate id's place in the order: numbered gates first, then GATES.md's
    /// suite gates (`suite N`), each by number.
    fn order(id: &str) -> (u8, u32) {
        match id.strip_prefix("suite ") {
            Some(n) => (1, n.parse().expect("a suite gate's id is `suite N`")),
            None => (0, id.parse().expect("a gate id is a number or `suite N`")),
        }
    }

    #[test]
    fn the_registry_lists_gates_in_ascending_id_order_without_repeats() {
        assert!(ALL.len() >= 16, "the registry holds {} gates", ALL.len());
        let ids: Vec<(u8, u32)> = ALL.iter().map(|g| order(g.id)).collect();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "gate ids out of order or repeated: {ids:?}"
        );
        assert!(
            ALL.iter().any(|g| g.id.starts_with("suite ")) && ALL.iter().any(|g| g.id == "1"),
            "the registry holds numbered and suite gates"
        );
    }

    #[test]
    fn every_case_id_is_its_gates_id_a_slash_and_a_slug_and_no_id_repeats() {
        let mut seen = std::collections::BTreeSet::new();
        let mut bad = vec![];
        for g in ALL {
            assert!(!g.cases.is_empty(), "gate {} has no case", g.id);
            for c in g.cases {
                let slug = c.id.strip_prefix(&format!("{}/", g.id)).unwrap_or("");
                let well_formed = !slug.is_empty()
                    && slug
                        .chars()
                        .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-');
                if !well_formed || !seen.insert(c.id) {
                    bad.push(c.id);
                }
            }
        }
        assert!(bad.is_empty(), "malformed or repeated case ids: {bad:?}");
    }
}
