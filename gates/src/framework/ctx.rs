//! What a case body may use: the run's seed, a random stream of its own, a scratch directory, and canary words.

/// What a case may use: the run's seed and a scratch directory of its own.
#[derive(Debug)]
pub struct Ctx {
    seed: u64,
    rng: rand::rngs::StdRng,
    scratch: tempfile::TempDir,
}

impl Ctx {
    /// A context for one case, driven by `seed`.
    ///
    /// # Panics
    /// If no temporary directory can be created: nothing can run then.
    pub fn new(seed: u64, case_id: &str) -> Ctx {
        use rand::SeedableRng as _;
        // Each case gets its own stream, so selecting cases never shifts another's choices.
        let mut mix = seed ^ 0x9e37_79b9_7f4a_7c15;
        for b in case_id.bytes() {
            mix = mix.rotate_left(5) ^ u64::from(b);
            mix = mix.wrapping_mul(0x100_0000_01b3);
        }
        Ctx {
            seed,
            rng: rand::rngs::StdRng::seed_from_u64(mix),
            scratch: tempfile::Builder::new()
                .prefix("memoria-gate-")
                .tempdir()
                .expect("a scratch directory"),
        }
    }

    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The case's random stream, derived from the seed and the case id.
    pub fn rng(&mut self) -> &mut rand::rngs::StdRng {
        &mut self.rng
    }

    /// The case's scratch root: every file the case makes lives under it.
    pub fn root(&self) -> &std::path::Path {
        self.scratch.path()
    }

    /// A fresh subdirectory of the case's scratch directory.
    ///
    /// # Panics
    /// If the directory cannot be created.
    pub fn dir(&self, name: &str) -> std::path::PathBuf {
        let p = self.scratch.path().join(name);
        std::fs::create_dir_all(&p).expect("scratch subdirectory");
        p
    }

    /// A canary word: lowercase consonants that no stemmer rewrites, unique
    /// per seed and case, [`CANARY_CHARS`] long. Grep for [`canary_tail`] too:
    /// FTS5 stores a term after its sorted neighbour with their shared prefix
    /// removed, so a plaintext index image holds only a canary's tail.
    pub fn canary(&mut self) -> String {
        use rand::Rng as _;
        const LETTERS: &[u8] = b"bcdfghjkmnpqrtvwxz";
        let tail: String = (0..CANARY_CHARS - 3)
            .map(|_| LETTERS[self.rng.gen_range(0..LETTERS.len())] as char)
            .collect();
        format!("qzv{tail}")
    }
}

/// Length of a canary word, in characters.
pub const CANARY_CHARS: usize = 17;
/// Length of the canary tail that is grepped as well, in characters. A
/// neighbouring term would have to share the first 7 random characters for
/// prefix compression to hide the tail: odds of 18^-4 per pair.
pub const CANARY_TAIL_CHARS: usize = 10;

/// The last [`CANARY_TAIL_CHARS`] characters of a canary.
pub fn canary_tail(canary: &str) -> &str {
    &canary[canary.len().saturating_sub(CANARY_TAIL_CHARS)..]
}
