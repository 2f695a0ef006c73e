//! Every gate case as a `cargo test` test: the same body the `memoria-harness` CLI runs.
//!
//! Set `MEMORIA_SEED=N` to replay a seed; a failure prints the seed and the
//! exact replay command.

use memoria_gates::{assert_case, registry};

macro_rules! case {
    ($name:ident, $id:literal) => {
        #[test]
        fn $name() {
            assert_case($id);
        }
    };
}

case!(
    gate_1_a_canary_document_is_ingested_searchable_and_at_rest,
    "1/presence"
);
case!(
    gate_1_no_canary_reaches_the_database_file_or_its_wal,
    "1/database-and-wal"
);
case!(
    gate_1_no_canary_reaches_the_sealed_snapshot_blobs,
    "1/snapshot-blobs"
);
case!(
    gate_1_no_canary_reaches_any_file_at_rest_after_revise_delete_and_wake,
    "1/every-file-at-rest"
);
case!(
    gate_3_feed_rows_are_exactly_four_fields_with_no_canary,
    "3/rows-are-four-fields"
);
case!(
    gate_3_memoria_refuses_a_feed_row_with_a_visibility_flag_or_title,
    "3/memoria-refuses-a-leaky-row"
);
case!(
    gate_5_the_siblings_grants_join_gives_two_people_different_pages,
    "5/two-people"
);
case!(
    gate_6_every_decoder_table_case_gives_its_listed_verdicts,
    "6/decoder-table"
);
case!(
    gate_6_each_of_the_five_s2_values_gets_its_treatment_on_one_page,
    "6/five-values"
);
case!(
    gate_6_every_malformed_s2_answer_is_withheld_loudly,
    "6/malformed-answers"
);
case!(
    gate_11_hostile_sibling_hosts_are_refused_at_configuration,
    "11/hostile-hosts"
);
case!(
    gate_11_another_teams_sibling_is_never_dialled,
    "11/other-team-never-dialled"
);
case!(
    gate_11_a_redirect_to_another_team_is_not_followed,
    "11/redirect-not-followed"
);
case!(
    gate_23_a_sibling_past_its_deadline_does_not_delay_the_page,
    "23/deadline"
);
case!(gate_23_three_siblings_are_asked_at_once, "23/concurrency");
case!(
    gate_24_every_sibling_is_polled_on_wake_with_no_query,
    "24/every-sibling-polled-unprompted"
);
case!(
    gate_25_an_individually_granted_item_is_never_fetched_or_stored,
    "25/granted-item-never-fetched"
);
case!(
    gate_4_the_sign_in_token_is_delivered_but_never_logged,
    "4/sign-in-token"
);
case!(
    gate_4_query_text_is_searched_but_never_logged,
    "4/query-text"
);
case!(
    gate_4_titles_passages_and_paths_are_handled_but_never_logged,
    "4/titles-passages-paths"
);
case!(
    gate_17_every_route_registration_is_readable,
    "17/registrations-readable"
);
case!(
    gate_17_no_route_is_registered_without_being_declared,
    "17/no-undeclared"
);
case!(
    gate_17_no_declared_route_is_left_unregistered,
    "17/no-unregistered-declaration"
);
case!(
    gate_17_no_nest_merge_or_service_route_and_one_fallback,
    "17/no-nest-merge-or-service"
);
case!(
    gate_26_the_same_body_gives_the_same_external_id,
    "26/same-body-same-id"
);
case!(
    gate_26_a_second_dek_gives_a_different_external_id,
    "26/second-dek-different-id"
);
case!(
    gate_26_sha256_of_the_body_appears_nowhere_at_rest,
    "26/sha256-absent-at-rest"
);
case!(
    gate_27_a_restored_sibling_answers_ahead_and_an_equal_not_visible_and_nothing_is_deleted,
    "27/restore-answers-and-nothing-lost"
);
case!(
    gate_27_docs_fill_the_page_while_sheets_is_named_as_reconciling,
    "27/docs-fill-the-page"
);
case!(
    gate_27_with_docs_removed_the_page_names_sheets_and_never_says_no_results,
    "27/docs-removed-page-names-sheets"
);
case!(
    gate_27_an_announce_that_fails_midway_retires_nothing,
    "27/failed-announce-retires-nothing"
);
case!(
    gate_27_a_completed_announce_retires_the_lost_row_and_refetches_the_older_revision,
    "27/completed-announce-reconciles"
);
case!(
    gate_38_every_declared_get_route_renders_the_footer_at_every_status,
    "38/every-get-route"
);
case!(
    gate_38_every_error_page_renders_the_footer,
    "38/error-pages"
);
case!(
    gate_38_every_footer_exemption_is_verified,
    "38/exemptions-verified"
);
case!(
    gate_38_the_footer_states_the_egress_mode_truthfully,
    "38/footer-is-truthful"
);

case!(
    gate_1_no_canary_reaches_any_file_when_the_index_is_rebuilt,
    "1/rebuild-path"
);
case!(
    gate_1_no_aes_gcm_nonce_repeats_at_rest,
    "1/nonces-never-repeat"
);
case!(
    gate_4_nothing_prints_around_the_log_outside_the_cli_and_the_sign_in_delivery,
    "4/no-stray-prints"
);
case!(
    gate_17_every_undeclared_method_and_path_answers_404_or_405,
    "17/undeclared-paths-answer-404"
);
case!(
    gate_26_external_id_is_the_hmac_under_the_dek_purpose_key,
    "26/keyed-under-the-dek"
);
case!(
    gate_38_server_error_pages_render_the_footer,
    "38/server-error-pages"
);

case!(
    gate_1_a_sealed_cell_moved_to_another_row_fails_to_open,
    "1/cells-bound-to-rows"
);

#[test]
fn every_registered_case_has_a_test_in_this_file() {
    let source = include_str!("gates.rs");
    let missing: Vec<&str> = registry()
        .iter()
        .flat_map(|g| g.cases.iter())
        .map(|c| c.id)
        .filter(|id| !source.contains(&format!("\"{id}\"")))
        .collect();
    assert!(missing.is_empty(), "cases without a test: {missing:?}");
}
