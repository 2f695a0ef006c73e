//! Reports: text, JSON and JUnit renderings of a run (placeholder until the CLI lands).
