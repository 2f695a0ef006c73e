//! The determinism self-check: one seed, run twice, prints the same transcript byte for byte, with memoria's store work run inline.

use memoria_simulator::tour;

fn seed() -> u64 {
    std::env::var("MEMORIA_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_0004)
}

#[test]
fn one_seed_run_twice_prints_the_same_transcript_byte_for_byte() {
    let seed = seed();
    let replay = format!(
        "replay: MEMORIA_SEED={seed} cargo test -p memoria-simulator --test simulator -- determinism::"
    );
    let a = tour(seed).unwrap_or_else(|e| panic!("{e}\n{replay}"));
    let b = tour(seed).unwrap_or_else(|e| panic!("{e}\n{replay}"));
    assert!(
        a.lines().count() > 20,
        "the transcript is too short to mean anything:\n{a}\n{replay}"
    );
    assert!(
        a.contains("\"call\":\"S2\""),
        "the tour made no S2 call\n{replay}"
    );
    if a != b {
        let at = a
            .lines()
            .zip(b.lines())
            .position(|(x, y)| x != y)
            .unwrap_or(0);
        panic!(
            "seed {seed}: transcripts differ at line {at}:\n  first:  {}\n  second: {}\n{replay}",
            a.lines().nth(at).unwrap_or(""),
            b.lines().nth(at).unwrap_or("")
        );
    }
}

#[test]
fn two_seeds_choose_different_settings() {
    let a = memoria_simulator::tour_world(1).settings();
    let b = memoria_simulator::tour_world(2).settings();
    assert_ne!(a, b, "the seed drives nothing");
}

#[test]
fn a_simulated_memoria_runs_its_store_work_inline_on_the_simulation_s_thread() {
    // What keeps the transcript above a function of the seed: no store work
    // finishes on a real thread pool at a wall-clock moment (issue 10).
    let world = memoria_simulator::tour_world(seed());
    world
        .run(|m| async move {
            let state = m.state();
            assert_eq!(state.offload(), memoria::Offload::Inline);
            let here = std::thread::current().id();
            let ran_on = state
                .blocking(|_| std::thread::current().id())
                .await
                .map_err(|e| e.to_string())?;
            assert_eq!(ran_on, here, "store work ran on the simulation's thread");
            Ok(())
        })
        .unwrap();
}
