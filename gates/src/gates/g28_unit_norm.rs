//! Gate 28 (§7.2): every stored vector has L2 norm 1 ± ε, because search is a raw dot product, never a cosine.
//!
//! Requirement: with AI on, every vector memoria stores (the sealed row in
//! the store, the row in the sealed dense snapshot, the row in memory after
//! a wake) dequantises to a vector of L2 norm within its tolerance of 1
//! (`QuantisedVector::norm_tolerance`, at most `NORM_EPSILON`), and a dense
//! hit's score is the raw dot product of the dequantised query and row.
//! The stub provider's vectors are unit at 4,096 values, so their first 512
//! are far from unit: a pipeline that skips the renormalise stores norms
//! near 0.35 and this gate goes red (§7.2: a cosine would hide it).

use memoria::{DENSE_TOP_K, DenseMatrix, NORM_EPSILON, quantise_embedding};

use crate::rigs::dense::{SEEDED_CHUNKS, seeded, wake_ai_on};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// How far a hit's score may sit from the dot product recomputed here, in
/// f32 rounding of a 512-term sum of products of unit-sized values.
pub const SCORE_TOLERANCE: f64 = 1e-4;

/// Gate 28.
pub static GATE: Gate = Gate {
    id: "28",
    title: "Every stored vector has unit norm",
    gates_md: &[
        "Every stored vector has L2 norm 1 +- epsilon (search is a raw dot product, not cosine)",
    ],
    sections: &["§7.2"],
    requirement: "Every stored vector (store row, dense snapshot row, the matrix woken from it) has L2 norm 1 ± its tolerance (at most NORM_EPSILON); a dense hit's score is the raw dot product of the dequantised vectors.",
    cases: &[
        Case {
            id: "28/every-stored-vector-is-unit",
            desc: "Seed 200 passages with AI on and embed them; open every stored vector from the store's rows and from the dense snapshot, and require each norm within its tolerance of 1.",
            run: every_stored_vector_is_unit,
        },
        Case {
            id: "28/woken-vectors-are-unit",
            desc: "Delete 7 of the 200 documents (the matrix moves rows into the gaps), require the 193 vectors left in memory to be unit, then wake a second instance on the same store (the dense snapshot loads) and require it to hold the same 193, each of unit norm within its tolerance.",
            run: woken_vectors_are_unit,
        },
        Case {
            id: "28/score-is-a-raw-dot-product",
            desc: "Embed a query with the stub's embedder, take the dense top-k, and require each hit's score to equal the dot product of the dequantised query and row, undivided by any norm.",
            run: score_is_a_raw_dot_product,
        },
    ],
};

fn check_unit(where_: &str, m: &DenseMatrix) -> Result<(), Failure> {
    check_unit_n(where_, m, SEEDED_CHUNKS)
}

fn check_unit_n(where_: &str, m: &DenseMatrix, n: usize) -> Result<(), Failure> {
    ensure(
        m.len() == n,
        format!("{n} vectors in {where_}"),
        format!("{}", m.len()),
    )?;
    for (id, v) in m.vectors() {
        let (norm, tol) = (v.norm(), v.norm_tolerance());
        ensure(
            tol <= NORM_EPSILON && (norm - 1.0).abs() <= tol,
            format!("every vector in {where_} has norm 1 ± {tol:.4} (ε ≤ {NORM_EPSILON})"),
            format!("chunk {id} has norm {norm:.4}"),
        )?;
    }
    Ok(())
}

fn every_stored_vector_is_unit(ctx: &mut Ctx) -> Result<(), Failure> {
    let e = seeded(ctx, "data")?;
    let mut rows = DenseMatrix::new();
    for (id, bytes) in e
        .instance
        .store()
        .live_vectors()
        .map_err(|err| Failure::new("the stored vectors open", err.to_string()))?
    {
        let one = DenseMatrix::decode(&bytes)
            .map_err(|err| Failure::new("a stored vector decodes", err.to_string()))?;
        let v = one
            .get(id)
            .ok_or_else(|| Failure::new("a stored vector names its chunk", format!("{id}")))?;
        rows.push(id, &v)
            .map_err(|err| Failure::new("the stored vectors are distinct", err.to_string()))?;
    }
    check_unit("the store's sealed rows", &rows)?;
    let generation = e.instance.wake_report().generation;
    let snap = memoria::snapshot::read_vectors(&e.dir, &e.sealer, generation)
        .map_err(|err| Failure::new("the dense snapshot opens", err.to_string()))?
        .ok_or_else(|| Failure::new("the generation has a dense snapshot", "none"))?;
    let m = DenseMatrix::decode(&snap.matrix)
        .map_err(|err| Failure::new("the dense snapshot decodes", err.to_string()))?;
    check_unit("the sealed dense snapshot", &m)
}

/// Documents deleted before the second wake: the matrix moves rows into
/// the gaps, and every moved row must keep its own scale.
pub const DELETED_DOCUMENTS: usize = 7;

fn woken_vectors_are_unit(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut e = seeded(ctx, "data")?;
    let ids: Vec<String> = e
        .instance
        .store()
        .documents()
        .map_err(|err| Failure::new("the documents list", err.to_string()))?
        .into_iter()
        .map(|d| d.id)
        .step_by(SEEDED_CHUNKS / DELETED_DOCUMENTS)
        .take(DELETED_DOCUMENTS)
        .collect();
    for id in &ids {
        e.instance
            .delete(id)
            .map_err(|err| Failure::new("a seeded document deletes", err.to_string()))?;
    }
    let left = SEEDED_CHUNKS - ids.len();
    check_unit_n("the matrix after the deletions", e.instance.dense(), left)?;
    let (dir, sealer) = (e.dir.clone(), e.sealer.clone());
    drop(e);
    let again = wake_ai_on(&dir, sealer)?;
    ensure(
        again.wake_report().dense == memoria::DenseWake::Loaded,
        "the second wake loads the dense snapshot",
        format!("{:?}", again.wake_report().dense),
    )?;
    check_unit_n("the matrix woken from the snapshot", again.dense(), left)
}

fn score_is_a_raw_dot_product(ctx: &mut Ctx) -> Result<(), Failure> {
    let e = seeded(ctx, "data")?;
    let q = quantise_embedding(&memoria_simulator::stub_embed_text("budget ledger harbour"))
        .map_err(|err| Failure::new("the query quantises", err.to_string()))?;
    let hits = e.instance.dense().top_k(&q, DENSE_TOP_K);
    ensure(
        hits.len() == DENSE_TOP_K,
        format!("the dense scan returns {DENSE_TOP_K} hits"),
        format!("{}", hits.len()),
    )?;
    let qv = q.dequantised();
    for h in &hits {
        let row = e
            .instance
            .dense()
            .get(h.chunk_id)
            .ok_or_else(|| Failure::new("a hit's row is held", format!("{}", h.chunk_id)))?;
        let dot: f64 = qv
            .iter()
            .zip(row.dequantised())
            .map(|(a, b)| f64::from(*a) * f64::from(b))
            .sum();
        ensure(
            (f64::from(h.score) - dot).abs() <= SCORE_TOLERANCE,
            "a hit's score is the raw dot product of the dequantised vectors",
            format!("chunk {}: score {} against dot {dot}", h.chunk_id, h.score),
        )?;
    }
    Ok(())
}
