//! Prints the tour's transcript for one seed: `cargo run -p memoria-simulator --example tour -- 42`.

fn main() {
    let seed: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(42);
    match memoria_simulator::tour(seed) {
        Ok(t) => print!("{t}"),
        Err(e) => {
            eprintln!("{e}\nreplay: cargo run -p memoria-simulator --example tour -- {seed}");
            std::process::exit(1);
        }
    }
}
