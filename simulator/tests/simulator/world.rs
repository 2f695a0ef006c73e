//! The simulated world's own machinery: memoria restarts mid-run from its data directory and answers again.

use memoria::Verdict;
use memoria::wire::{Pair, Subject};
use memoria_simulator::{OWNERS, Rung, SiblingSpec, World};

#[test]
fn memoria_restarts_mid_run_keeps_what_it_held_and_answers_again() {
    let world = World::new(21, vec![SiblingSpec::own("sheets")]);
    world.fake("sheets").model().with(|m| {
        m.add_item("sh-1", Rung::Team, "Rota", "# Rota\n\nThe kestrel rota.\n")
            .expect("item");
    });
    world
        .run(move |mut m| async move {
            m.warmed_up().await?;
            let before = m.state().instance();
            let held = |m: &memoria_simulator::Memoria| {
                let i = m.state().instance();
                let g = i.lock().expect("instance");
                g.store()
                    .sibling_document("sheets", "sh-1")
                    .expect("store")
                    .is_some()
            };
            assert!(held(&m), "the item is held before the restart");
            m.restart().await;
            assert!(
                !std::sync::Arc::ptr_eq(&before, &m.state().instance()),
                "a new instance woke"
            );
            assert!(held(&m), "the item is still held after the restart");
            let client = m.state().siblings().ok_or("no client")?;
            let pair = Pair {
                item_id: "sh-1".into(),
                revision: "r1".into(),
            };
            let d = client
                .check("sheets", &Subject::address(OWNERS[0]), &[pair])
                .await;
            assert_eq!(d.verdicts, vec![Verdict::Visible]);
            let page = m.search(OWNERS[0], "kestrel").await;
            assert_eq!(page.response.status, http::StatusCode::OK);
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_world_configured_with_another_team_s_host_fails_with_a_typed_refusal_not_only_a_message() {
    use memoria::HostRefusal;
    use memoria_simulator::SIBLING_PORT;
    let foreign = SiblingSpec::foreign("sheets").host();
    let mut world = World::new(5, vec![SiblingSpec::own("sheets")]);
    world.configure_extra_url(&format!("http://{foreign}:{SIBLING_PORT}"));
    let failure = world
        .run(|_m| async { Ok(()) })
        .expect_err("memoria refuses another team's host");
    let refused = failure.refused.expect("the refusal is carried typed");
    assert_eq!(refused.refusal, HostRefusal::OtherTeam);
}
