//! Gate 2 (§10, §3.1): the inversion probe: stored vectors are present, sealed, and nowhere at rest in a form anyone would write one in.
//!
//! Requirement, presence first: a 200-chunk corpus of known text, embedded
//! with AI on by the stub provider's embedder, reads back through the seal
//! as 200 vectors of the configured dimension, in the store and in the
//! sealed dense snapshot, with the sentinel chunk's vector equal to the
//! stub's sentinel as quantised. Only then the absence: every file at rest
//! (database, WAL, snapshot blobs, tombstone log, temporary files) parsed
//! as contiguous matrices at 256/512/768/1024/1536 × int8/f32/f64 × both
//! endiannesses correlates with the true corpus's pairwise cosines at no
//! more than r = 0.20, and the sentinel's leading components appear in no
//! dtype, endianness or decimal text form. What the probe does not see is
//! stated in `gates/probe/src/lib.rs`.

use memoria::{DenseMatrix, EMBED_DIM_STORED, quantise_embedding};

use crate::rigs::dense::{SEEDED_CHUNKS, seeded};
use crate::rigs::support::grep_dir;
use crate::{Case, Ctx, Failure, Gate, ensure};
use memoria_probe::{PROBE_CORRELATION_MAX, probe_matrices, sentinel_forms};

/// Leading components of the sentinel grepped at rest: eight int8 levels
/// are 64 bits, so a chance match in a few megabytes is negligible; eight
/// floats are longer still.
pub const SENTINEL_COMPONENTS: usize = 8;

/// Gate 2.
pub static GATE: Gate = Gate {
    id: "2",
    title: "Inversion probe",
    gates_md: &[
        "Inversion probe: presence (200 sealed vectors decrypt back) then absence (matrix parse at 256/512/768/1024/1536 dims x int8/f32/f64 x both endiannesses, pairwise-cosine correlation r > 0.20 fails; sentinel vector grep incl. decimal text)",
    ],
    sections: &["§10", "§3.1", "§7.2"],
    requirement: "Presence: a 200-chunk seeded corpus's sealed vectors decrypt back to 200 vectors of the configured dimension, the sentinel's matching the stub's. Absence: no file at rest parses as a matrix whose pairwise cosines correlate with the corpus's above r = 0.20, and the sentinel's leading components appear in no dtype, endianness or decimal text form.",
    cases: &[
        Case {
            id: "2/presence",
            desc: "Seed 200 one-passage documents with AI on and embed them with the stub's embedder; open every stored vector through the seal (store rows and the generation's dense snapshot) and require 200 of width 512 in each, the sentinel chunk's equal to the stub's sentinel quantised.",
            run: presence,
        },
        Case {
            id: "2/no-matrix-correlates",
            desc: "Checkpoint the database, then parse every file under the data directory as contiguous matrices (5 widths × int8/f32/f64 × both endiannesses, offsets 0-128) and require parses to have been judged and none to correlate with the corpus's pairwise cosines above r = 0.20.",
            run: no_matrix_correlates,
        },
        Case {
            id: "2/no-sentinel-at-rest",
            desc: "Grep every file under the data directory, before and after a checkpoint, for the sentinel's first 8 components as int8 levels, as the provider's, the unit and the dequantised values in f32 and f64 of both endiannesses, and as decimal text in five renderings and three separators; require no hit.",
            run: no_sentinel_at_rest,
        },
    ],
};

fn presence(ctx: &mut Ctx) -> Result<(), Failure> {
    let e = seeded(ctx, "data")?;
    let rows =
        e.instance.store().live_vectors().map_err(|err| {
            Failure::new("the stored vectors open through the seal", err.to_string())
        })?;
    ensure(
        rows.len() == SEEDED_CHUNKS,
        format!("{SEEDED_CHUNKS} sealed vectors in the store"),
        format!("{}", rows.len()),
    )?;
    let mut sentinel_stored = None;
    for (id, bytes) in &rows {
        let one = DenseMatrix::decode(bytes)
            .map_err(|err| Failure::new("a stored vector decodes", err.to_string()))?;
        let v = one.get(*id).ok_or_else(|| {
            Failure::new("a stored vector names its own chunk", format!("chunk {id}"))
        })?;
        ensure(
            v.levels().len() == EMBED_DIM_STORED,
            format!("each vector has {EMBED_DIM_STORED} values"),
            format!("{}", v.levels().len()),
        )?;
        if *id == e.sentinel_chunk {
            sentinel_stored = Some(v);
        }
    }
    let expected = quantise_embedding(&memoria_simulator::sentinel_vector())
        .map_err(|err| Failure::new("the stub's sentinel quantises", err.to_string()))?;
    ensure(
        sentinel_stored.as_ref() == Some(&expected),
        "the sentinel chunk's stored vector is the stub's sentinel, quantised",
        "it differs or is missing",
    )?;
    let generation = e.instance.wake_report().generation;
    let snap = memoria::snapshot::read_vectors(&e.dir, &e.sealer, generation)
        .map_err(|err| Failure::new("the dense snapshot opens through the seal", err.to_string()))?
        .ok_or_else(|| Failure::new("the generation has a dense snapshot", "none on disk"))?;
    let m = DenseMatrix::decode(&snap.matrix)
        .map_err(|err| Failure::new("the dense snapshot decodes", err.to_string()))?;
    ensure(
        m.len() == SEEDED_CHUNKS,
        format!("{SEEDED_CHUNKS} vectors in the sealed dense snapshot"),
        format!("{}", m.len()),
    )?;
    ensure(
        m.get(e.sentinel_chunk).as_ref() == Some(&expected),
        "the snapshot's sentinel vector is the stub's sentinel",
        "it differs or is missing",
    )
}

/// The true corpus: every stored vector, dequantised, in chunk order (the
/// order the store and the matrix hold them).
fn truth(m: &DenseMatrix) -> Vec<Vec<f64>> {
    let mut rows: Vec<(i64, Vec<f64>)> = m
        .vectors()
        .map(|(id, v)| (id, v.dequantised().into_iter().map(f64::from).collect()))
        .collect();
    rows.sort_by_key(|(id, _)| *id);
    rows.into_iter().map(|(_, v)| v).collect()
}

fn no_matrix_correlates(ctx: &mut Ctx) -> Result<(), Failure> {
    let e = seeded(ctx, "data")?;
    let truth = truth(e.instance.dense());
    ensure(
        truth.len() == SEEDED_CHUNKS,
        format!("the corpus's {SEEDED_CHUNKS} vectors are in memory"),
        format!("{}", truth.len()),
    )?;
    e.instance
        .store()
        .checkpoint()
        .map_err(|err| Failure::new("the database checkpoints", err.to_string()))?;
    let probe = probe_matrices(&e.dir, &truth);
    ensure(
        probe.files >= 3 && probe.parses > 0,
        "the probe read the database and both snapshot blobs and judged parses",
        format!("{} files, {} parses", probe.files, probe.parses),
    )?;
    ensure(
        probe.findings.is_empty(),
        format!("no parse correlates above r = {PROBE_CORRELATION_MAX}"),
        probe
            .findings
            .iter()
            .map(|f| {
                format!(
                    "{} at byte {} as {}×{:?}: r = {:.3} over {} rows",
                    f.file, f.offset, f.dim, f.dtype, f.r, f.rows
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
    )
}

fn no_sentinel_at_rest(ctx: &mut Ctx) -> Result<(), Failure> {
    let e = seeded(ctx, "data")?;
    let provider = memoria_simulator::sentinel_vector();
    let stored = quantise_embedding(&provider)
        .map_err(|err| Failure::new("the stub's sentinel quantises", err.to_string()))?;
    let head = |v: &[f64]| v[..SENTINEL_COMPONENTS].to_vec();
    let raw: Vec<f64> = provider.iter().map(|v| f64::from(*v)).collect();
    let prefix_norm = raw[..EMBED_DIM_STORED]
        .iter()
        .map(|v| v * v)
        .sum::<f64>()
        .sqrt();
    let unit: Vec<f64> = raw[..EMBED_DIM_STORED]
        .iter()
        .map(|v| v / prefix_norm)
        .collect();
    let deq: Vec<f64> = stored.dequantised().into_iter().map(f64::from).collect();
    let forms = sentinel_forms(
        &stored.levels()[..SENTINEL_COMPONENTS],
        &[
            ("the provider's values", head(&raw)),
            ("the unit prefix", head(&unit)),
            ("the dequantised values", head(&deq)),
        ],
    );
    // Presence: the forms are real byte strings the grep can see, and the
    // sentinel is stored (decrypted, it is there).
    ensure(
        forms.iter().all(|(_, b)| b.len() >= SENTINEL_COMPONENTS)
            && forms
                .iter()
                .any(|(n, _)| n.starts_with("int8 levels as text")),
        "every sentinel form is at least 8 bytes",
        "a form is shorter",
    )?;
    ensure(
        e.instance.dense().get(e.sentinel_chunk).as_ref() == Some(&stored),
        "the sentinel is stored (in memory, through the seal)",
        "it is not",
    )?;
    for phase in ["before a checkpoint", "after a checkpoint"] {
        if phase == "after a checkpoint" {
            e.instance
                .store()
                .checkpoint()
                .map_err(|err| Failure::new("the database checkpoints", err.to_string()))?;
        }
        for (name, bytes) in &forms {
            let hits = grep_dir(&e.dir, bytes);
            ensure(
                hits.is_empty(),
                format!("the sentinel {name} is nowhere at rest ({phase})"),
                hits.iter()
                    .map(|(f, at)| format!("{f} at byte {at}"))
                    .collect::<Vec<_>>()
                    .join("; "),
            )?;
        }
    }
    Ok(())
}
