//! The registry: one module per gate, named after its number and subject.

pub mod g01_plaintext_grep;
pub mod g04_no_content_in_logs;
pub mod g17_no_undeclared_route;
pub mod g26_external_id_keyed;
pub mod g38_egress_footer;

use crate::Gate;

/// Every registered gate, in id order.
pub static ALL: &[&Gate] = &[
    &g01_plaintext_grep::GATE,
    &g04_no_content_in_logs::GATE,
    &g17_no_undeclared_route::GATE,
    &g26_external_id_keyed::GATE,
    &g38_egress_footer::GATE,
];
