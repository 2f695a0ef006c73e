//! The reference's sibling client against a fake sibling over turmoil: batching, deadlines, announces.

use memoria::wire::{AnnounceFailure, Pair, S2_PAIRS_PER_CALL_MAX, Subject};
use memoria::{SIBLING_DEADLINE_MS, Verdict};
use memoria_simulator::{
    CallDetail, CallKind, OWNERS, Rung, SiblingSpec, Slow, TruncateAnnounce, World,
};

fn pairs(n: usize) -> Vec<Pair> {
    (0..n)
        .map(|i| Pair {
            item_id: format!("nobody-{i}"),
            revision: "r1".into(),
        })
        .collect()
}

#[test]
fn six_hundred_pairs_go_out_as_three_calls_of_at_most_256_and_all_come_back() {
    let world = World::new(11, vec![SiblingSpec::own("sheets")]);
    let trace = world.trace().clone();
    world
        .run(move |mut m| async move {
            m.warmed_up().await?;
            let client = m.state().siblings().ok_or("no client")?;
            let d = client
                .check("sheets", &Subject::address(OWNERS[0]), &pairs(600))
                .await;
            assert_eq!(d.verdicts.len(), 600);
            assert!(
                d.verdicts.iter().all(|v| *v == Verdict::NotVisible),
                "{:?}",
                d.faults
            );
            let sizes: Vec<usize> = trace
                .events()
                .iter()
                .filter_map(|e| match &e.detail {
                    CallDetail::S2 { pairs, .. } => Some(pairs.len()),
                    _ => None,
                })
                .collect();
            let mut sorted = sizes.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                vec![88, S2_PAIRS_PER_CALL_MAX, S2_PAIRS_PER_CALL_MAX]
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn the_deadline_covers_every_batch_of_one_sibling_together() {
    let world = World::new(12, vec![SiblingSpec::own("sheets")]);
    world.fake("sheets").faults().set_slow(Some(Slow {
        latency_ms: SIBLING_DEADLINE_MS - 100,
        only: Some(CallKind::S2),
    }));
    world
        .run(move |mut m| async move {
            m.warmed_up().await?;
            let client = m.state().siblings().ok_or("no client")?;
            let start = tokio::time::Instant::now();
            let d = client
                .check("sheets", &Subject::address(OWNERS[0]), &pairs(700))
                .await;
            let took = start.elapsed().as_millis() as u64;
            assert_eq!(d.verdicts.len(), 700);
            assert!(
                took < SIBLING_DEADLINE_MS + 50,
                "three batches took {took} ms"
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn an_announce_is_complete_only_with_its_close_and_a_matching_count() {
    let world = World::new(13, vec![SiblingSpec::own("docs")]);
    let docs = world.fake("docs").clone();
    docs.model().with(|m| {
        for i in 0..120 {
            m.add_item(
                &format!("d{i}"),
                Rung::Team,
                "T",
                "# T\n\nbody words here\n",
            )
            .unwrap();
        }
        m.add_item(
            "private",
            Rung::Private {
                owner: OWNERS[0].into(),
            },
            "P",
            "# P\n\nx\n",
        )
        .unwrap();
    });
    world
        .run(move |mut m| async move {
            m.warmed_up().await?;
            let client = m.state().siblings().ok_or("no client")?;
            let done = client.announce("docs").await.map_err(|e| e.to_string())?;
            assert_eq!(
                done.items.len(),
                120,
                "every team-visible item, and only those"
            );
            docs.faults()
                .set_truncate_announce(Some(TruncateAnnounce::NoClose));
            assert_eq!(client.announce("docs").await, Err(AnnounceFailure::NoClose));
            docs.faults()
                .set_truncate_announce(Some(TruncateAnnounce::WrongCount(-1)));
            assert!(matches!(
                client.announce("docs").await,
                Err(AnnounceFailure::CountMismatch {
                    declared: 119,
                    received: 120
                })
            ));
            Ok(())
        })
        .unwrap();
}
