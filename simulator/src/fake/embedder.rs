//! A real sentence-embedding model behind the stub provider, for demos on loopback: all-MiniLM-L6-v2, run by `fixtures/quality/minilm.py --serve` as a child process (§7.2, issue 12).
//!
//! The stub's own vectors are hashed words, NOT semantic. With a
//! [`ModelEmbedder`] set ([`crate::StubProvider::with_model`]), the stub
//! answers the model's vectors instead: 384 values, then zeros to the
//! provider's 4,096 ([`crate::STUB_VECTOR_VALUES`]), which memoria truncates
//! to its 512 and renormalises as it would a real provider's. The model is
//! the one `fixtures/corpus/fetch-minilm` brings from PyPI (gate 29 measures
//! with it); nothing is downloaded at run time.
//!
//! **Never inside a simulation.** The child is a real process and its
//! answers take wall-clock time; a turmoil world uses the hashed stub. This
//! is for `memoria-harness serve-provider --model minilm` and `demo --ai
//! --model minilm` over loopback.
//!
//! The protocol is one JSON line each way per call: `{"texts": [...]}` in,
//! `{"vectors": [[...], ...]}` (or `{"error": "..."}`) out. Nothing is
//! logged; an error names the step, never a text.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, PoisonError};

/// Values in each of the model's vectors (all-MiniLM-L6-v2).
pub const MODEL_VALUES: usize = 384;

/// Where `fixtures/corpus/fetch-minilm` puts the model and its Python, from
/// the workspace root.
pub const MODEL_HOME_RELATIVE: &str = "fixtures/corpus/minilm";
/// The model runner, from the workspace root.
pub const MODEL_SCRIPT_RELATIVE: &str = "fixtures/quality/minilm.py";

/// Why the model could not embed.
#[derive(Debug, thiserror::Error)]
pub enum EmbedderError {
    /// The model or its Python is not fetched.
    #[error("{0} has no model or no Python: run fixtures/corpus/fetch-minilm")]
    NotFetched(PathBuf),
    /// The child could not be started, written to or read from.
    #[error("the model process: {0}")]
    Process(String),
    /// The child answered something other than one vector of
    /// [`MODEL_VALUES`] per text.
    #[error("the model's answer: {0}")]
    Answer(String),
}

struct Pipes {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

/// The model as a child process, one call at a time.
pub struct ModelEmbedder(Mutex<Pipes>);

impl std::fmt::Debug for ModelEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ModelEmbedder(all-MiniLM-L6-v2)")
    }
}

impl ModelEmbedder {
    /// Starts the model from the workspace at `root` (the directory holding
    /// `fixtures/`). The model loads in the child in about a second.
    ///
    /// # Errors
    /// [`EmbedderError::NotFetched`] if `fetch-minilm` has not run;
    /// [`EmbedderError::Process`] if the child does not start.
    pub fn start(root: &Path) -> Result<ModelEmbedder, EmbedderError> {
        let home = root.join(MODEL_HOME_RELATIVE);
        let python = home.join("venv/bin/python");
        let model = home.join("model");
        if !python.is_file() || !model.join("model.safetensors").is_file() {
            return Err(EmbedderError::NotFetched(home));
        }
        let mut child = Command::new(&python)
            .arg(root.join(MODEL_SCRIPT_RELATIVE))
            .arg(&model)
            .arg("--serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| EmbedderError::Process(e.to_string()))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        Ok(ModelEmbedder(Mutex::new(Pipes {
            _child: child,
            stdin,
            stdout,
        })))
    }

    /// The model's vectors for `texts`, in order, each [`MODEL_VALUES`]
    /// long and of unit length. Blocks until the child answers.
    ///
    /// # Errors
    /// [`EmbedderError::Process`] if the child is gone;
    /// [`EmbedderError::Answer`] if its answer is malformed.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedderError> {
        let mut pipes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut line = serde_json::to_string(&serde_json::json!({ "texts": texts }))
            .map_err(|e| EmbedderError::Process(e.to_string()))?;
        line.push('\n');
        pipes
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| pipes.stdin.flush())
            .map_err(|e| EmbedderError::Process(e.to_string()))?;
        let mut answer = String::new();
        let n = pipes
            .stdout
            .read_line(&mut answer)
            .map_err(|e| EmbedderError::Process(e.to_string()))?;
        if n == 0 {
            return Err(EmbedderError::Process("it exited".into()));
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            vectors: Option<Vec<Vec<f32>>>,
            error: Option<String>,
        }
        let a: Answer =
            serde_json::from_str(&answer).map_err(|e| EmbedderError::Answer(e.to_string()))?;
        if let Some(e) = a.error {
            return Err(EmbedderError::Answer(e));
        }
        let vectors = a.vectors.unwrap_or_default();
        if vectors.len() != texts.len() || vectors.iter().any(|v| v.len() != MODEL_VALUES) {
            return Err(EmbedderError::Answer(format!(
                "{} vectors for {} texts, or one not of {MODEL_VALUES} values",
                vectors.len(),
                texts.len()
            )));
        }
        Ok(vectors)
    }
}
