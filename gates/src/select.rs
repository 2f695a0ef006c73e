//! Case selection by id and glob (placeholder until the CLI lands).
