//! What several gates share: seeds, async on one thread, byte greps over data at rest, and captured logs.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use memoria::Dek;

/// Environment variable that fixes the seed for `cargo test` runs.
pub const SEED_ENV: &str = "MEMORIA_SEED";

/// The seed from [`SEED_ENV`], else a fresh random one (printed on failure).
pub fn seed_from_env() -> u64 {
    std::env::var(SEED_ENV)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(rand::random)
}

/// Runs a future to completion on a current-thread runtime, so everything it
/// does (including what it logs) happens on the calling thread.
///
/// # Panics
/// If the runtime cannot be built.
pub fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime")
        .block_on(fut)
}

/// A DEK derived from the case's random stream.
pub fn dek(rng: &mut impl rand::RngCore) -> Dek {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    Dek::from_bytes(b)
}

/// Every regular file under `dir`, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    v.sort();
    v
}

/// Where `needle` occurs in the raw bytes of every file under `dir`:
/// (file name relative to `dir`, byte offset). Names only, never content.
///
/// # Panics
/// If `needle` is empty: an empty needle is found everywhere and proves nothing.
pub fn grep_dir(dir: &Path, needle: &[u8]) -> Vec<(String, usize)> {
    assert!(!needle.is_empty(), "an empty needle proves nothing");
    let mut hits = Vec::new();
    for f in files_under(dir) {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        };
        if let Some(at) = find(&bytes, needle) {
            let rel = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
            hits.push((rel, at));
        }
    }
    hits
}

/// The first offset of `needle` in `hay` (`memchr::memmem`); `None` for an
/// empty needle, which would otherwise be found at 0 in every file.
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    memchr::memmem::find(hay, needle)
}

/// The file names of every file under `dir`, relative, for reports.
pub fn listing(dir: &Path) -> Vec<String> {
    files_under(dir)
        .iter()
        .map(|f| f.strip_prefix(dir).unwrap_or(f).display().to_string())
        .collect()
}

/// A `tracing` writer that keeps every line in memory.
#[derive(Debug, Clone, Default)]
pub struct CapturedLogs {
    buf: Arc<Mutex<Vec<u8>>>,
}

/// The process-wide capture: every line logged on any thread that has no
/// subscriber of its own (a blocking pool, a spawned thread). Installed once,
/// as the global default, the first time any capture starts.
pub fn global_logs() -> &'static CapturedLogs {
    static GLOBAL: std::sync::OnceLock<CapturedLogs> = std::sync::OnceLock::new();
    GLOBAL.get_or_init(|| {
        let logs = CapturedLogs::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .finish();
        // If something else installed a global subscriber first, lines from
        // other threads go there instead; `all_text` then says so.
        let _ = tracing::subscriber::set_global_default(subscriber);
        logs
    })
}

impl CapturedLogs {
    /// Everything logged so far on the capturing thread.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.buf.lock().expect("log buffer")).into_owned()
    }

    /// This capture's lines plus every line any other thread of the process
    /// logged: what an absence check must search. Other cases' lines are in it
    /// too, which is harmless for absences because canaries are unique per case.
    pub fn all_text(&self) -> String {
        format!("{}\n{}", self.text(), global_logs().text())
    }

    /// Runs `f` with a subscriber that writes every level to this buffer,
    /// on this thread only.
    pub fn capture<R>(&self, f: impl FnOnce() -> R) -> R {
        let _ = global_logs();
        let writer = self.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, f)
    }
}

impl std::io::Write for CapturedLogs {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.lock().expect("log buffer").write_all(data)?;
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The forms a SHA-256 digest could take at rest: raw, hex (both cases),
/// and base64 (standard, URL-safe, padded and not).
pub fn digest_forms(digest: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    vec![
        ("raw", digest.to_vec()),
        ("hex", hex::encode(digest).into_bytes()),
        ("HEX", hex::encode_upper(digest).into_bytes()),
        ("base64", STANDARD.encode(digest).into_bytes()),
        ("base64-nopad", STANDARD_NO_PAD.encode(digest).into_bytes()),
        ("base64url", URL_SAFE.encode(digest).into_bytes()),
        (
            "base64url-nopad",
            URL_SAFE_NO_PAD.encode(digest).into_bytes(),
        ),
    ]
}

/// Writes `bytes` to `path`, creating parents.
///
/// # Panics
/// If the file cannot be written.
pub fn write_file(path: &Path, bytes: &[u8]) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).expect("parent directory");
    }
    let mut f = std::fs::File::create(path).expect("create file");
    f.write_all(bytes).expect("write file");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_gives_the_first_offset_and_never_finds_an_empty_needle() {
        assert_eq!(find(b"abcabc", b"bc"), Some(1));
        assert_eq!(find(b"abc", b"abc"), Some(0));
        assert_eq!(find(b"ab", b"abc"), None, "a needle longer than the file");
        assert_eq!(find(b"abc", b"x"), None);
        assert_eq!(find(b"abc", b""), None);
        assert_eq!(find(b"", b""), None);
    }
}
