//! The registry: one module per gate, named after its number and subject.

pub mod g01_plaintext_grep;
pub mod g03_feed_rows_carry_no_content;
pub mod g04_no_content_in_logs;
pub mod g05_grants_join_decides;
pub mod g06_every_s2_result_handled;
pub mod g07_enumeration_diff;
pub mod g08_refusal_breaker;
pub mod g10_deletion_survives_restore;
pub mod g11_cross_team_refusal;
pub mod g17_no_undeclared_route;
pub mod g23_deadline_and_concurrency;
pub mod g24_wake_warm_up;
pub mod g25_s3_carries_no_person;
pub mod g26_external_id_keyed;
pub mod g27_sibling_restore_reconciles;
pub mod g38_egress_footer;

use crate::Gate;

/// Every registered gate, in id order.
pub static ALL: &[&Gate] = &[
    &g01_plaintext_grep::GATE,
    &g03_feed_rows_carry_no_content::GATE,
    &g04_no_content_in_logs::GATE,
    &g05_grants_join_decides::GATE,
    &g06_every_s2_result_handled::GATE,
    &g07_enumeration_diff::GATE,
    &g10_deletion_survives_restore::GATE,
    &g08_refusal_breaker::GATE,
    &g11_cross_team_refusal::GATE,
    &g17_no_undeclared_route::GATE,
    &g23_deadline_and_concurrency::GATE,
    &g24_wake_warm_up::GATE,
    &g25_s3_carries_no_person::GATE,
    &g26_external_id_keyed::GATE,
    &g27_sibling_restore_reconciles::GATE,
    &g38_egress_footer::GATE,
];
