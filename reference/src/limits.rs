//! Every relationship between limits, checked when the crate compiles: a change that breaks one does not build.
//!
//! Each limit is a named constant beside the code it bounds, with its unit
//! last and its source. What one limit promises about another lives here,
//! once, as a `const` assertion, so it cannot drift into a comment.

use crate::ai::embed::{
    EMBED_INGEST_DEADLINE_MS, EMBED_INPUT_BYTES_MAX, EMBED_INPUTS_PER_CALL_MAX,
    EMBED_QUERY_DEADLINE_MS, EMBED_RESPONSE_BYTES_MAX, EMBED_RETRY_AFTER_MS_MAX, EMBEDDING_VALUES,
    JSON_FLOAT_BYTES_MAX,
};
use crate::dense::{
    DENSE_ROWS_MAX, DENSE_TOP_K, DOT_LEN_MAX, EMBED_DIM_NATIVE, EMBED_DIM_STORED,
    FUSION_DEPTH_CHUNKS, SCAN_BLOCK_ROWS,
};
use crate::ingest::connector::{CONNECTOR_CALL_DEADLINE_MS, CONNECTOR_ENTRIES_MAX};
use crate::ingest::decode::IMPORT_FILE_BYTES_MAX;
use crate::ingest::import::IMPORT_FILES_MAX;
use crate::net::transport::{INGEST_CALL_DEADLINE_MS, SIBLING_DEADLINE_MS};
use crate::net::wire::S2_PAIRS_PER_CALL_MAX;
use crate::page::{PAGE_MAX, PAGE_SIZE_RESULTS};
use crate::policy::breaker::{
    BASELINE_DAYS, BREAKER_COUNTERS_RETAINED_DAYS, REFUSAL_BREAKER_ASKERS_MIN, WINDOW_DAYS,
};
use crate::search::chunk::{
    CHUNK_BYTES_MAX, CHUNK_WORDS_MAX, CHUNK_WORDS_TARGET, RUNT_WORDS_MAX, WORD_BYTES_MAX,
};
use crate::search::facts::FACT_PASSAGE_BYTES_MAX;
use crate::search::query::{QUERY_BYTES_MAX, QUERY_WORDS_MAX};
use crate::storage::seal::{NONCE_BYTES, SEALED_OVERHEAD_BYTES, TAG_BYTES};
use crate::web::{
    MULTIPART_OVERHEAD_BYTES_MAX, SESSION_TTL_S, SESSIONS_MAX, SIGN_IN_LINK_TTL_S, UPLOAD_BYTES_MAX,
};

// §7, gate 29: the fused ranking is three pages deep, so that every page
// of the first three is a slice of one fused ranking.
const _: () = assert!(FUSION_DEPTH_CHUNKS == 3 * PAGE_SIZE_RESULTS);
// §3.2: the breaker's counters are kept for the window plus the baseline and
// no longer; a longer retention is a longer record of who was refused what.
const _: () = assert!(BREAKER_COUNTERS_RETAINED_DAYS == WINDOW_DAYS + BASELINE_DAYS);
// §8.1: the window is one UTC day, the baseline the days before it, and a
// breaker that one asker can fire is no breaker.
const _: () = assert!(WINDOW_DAYS == 1 && BASELINE_DAYS >= 1);
const _: () = assert!(REFUSAL_BREAKER_ASKERS_MIN > 1);

// §6.5: one page is one round of concurrent S2 calls, so a page's pairs fit
// in one batch of §4.1's cap.
const _: () = assert!(PAGE_SIZE_RESULTS <= S2_PAIRS_PER_CALL_MAX);
// §6.5: the page's deadline is the shortest a sibling call gets.
const _: () = assert!(SIBLING_DEADLINE_MS < INGEST_CALL_DEADLINE_MS);
const _: () = assert!(INGEST_CALL_DEADLINE_MS <= CONNECTOR_CALL_DEADLINE_MS);
// §8.1: the last page reachable is bounded.
const _: () = assert!(PAGE_MAX >= 1);

// A connector lists no more entries than an import takes files (gate 7).
const _: () = assert!(CONNECTOR_ENTRIES_MAX == IMPORT_FILES_MAX);
// §9.1: an upload's framing fits beside its 1 MiB body, and a file an
// import reads may be larger than an upload, never smaller.
const _: () = assert!(MULTIPART_OVERHEAD_BYTES_MAX < UPLOAD_BYTES_MAX);
const _: () = assert!(UPLOAD_BYTES_MAX <= IMPORT_FILE_BYTES_MAX);

// A sign-in link expires before the session it mints, and the table that
// holds both is not empty.
const _: () = assert!(SIGN_IN_LINK_TTL_S < SESSION_TTL_S);
const _: () = assert!(SESSIONS_MAX > 0);

// §7.2: a runt is merged into a neighbour below the target, and a chunk
// may grow past the target but never past the cap.
const _: () = assert!(RUNT_WORDS_MAX < CHUNK_WORDS_TARGET);
const _: () = assert!(CHUNK_WORDS_TARGET < CHUNK_WORDS_MAX);
// The byte ceiling is a last resort: a passage of counted words at the word
// ceiling, each a full WORD_BYTES_MAX with one space after it, fits under it;
// and every passage is small enough for the fact box to read (§8.8).
const _: () = assert!(CHUNK_WORDS_MAX * (WORD_BYTES_MAX + 1) < CHUNK_BYTES_MAX);
const _: () = assert!(CHUNK_BYTES_MAX <= FACT_PASSAGE_BYTES_MAX);
// A query holds at most as many words as bytes.
const _: () = assert!(QUERY_WORDS_MAX <= QUERY_BYTES_MAX);

// §3: a sealed cell is a version byte, a nonce, the ciphertext and a tag.
const _: () = assert!(SEALED_OVERHEAD_BYTES == 1 + NONCE_BYTES + TAG_BYTES);

// §7.2: the stored width is a truncation of the provider's, and the kernel
// is exact at it; a dense list alone can fill a page (§8.1); a scan block is
// never larger than the matrix may be.
const _: () = assert!(EMBED_DIM_STORED < EMBED_DIM_NATIVE);
const _: () = assert!(EMBED_DIM_STORED <= DOT_LEN_MAX);
const _: () = assert!(DENSE_TOP_K >= PAGE_SIZE_RESULTS);
const _: () = assert!(SCAN_BLOCK_ROWS <= DENSE_ROWS_MAX);
// §7.2: a full batch of 4,096-value vectors, every float at its longest
// JSON form plus 64 bytes of framing per vector and 4 KiB for the list,
// fits under the response cap: a cap that refused a well-formed batch would
// make ingest fail on a healthy provider.
const _: () = assert!(
    EMBED_INPUTS_PER_CALL_MAX * (EMBEDDING_VALUES * JSON_FLOAT_BYTES_MAX + 64) + 4096
        <= EMBED_RESPONSE_BYTES_MAX
);
// Every chunk and every query can be embedded whole: an input is refused,
// never cut, so the input cap is at least the chunker's and the query's.
const _: () = assert!(CHUNK_BYTES_MAX <= EMBED_INPUT_BYTES_MAX);
const _: () = assert!(QUERY_BYTES_MAX <= EMBED_INPUT_BYTES_MAX);
// The query's embedding shares the page's deadline with S2 (§6.5, §8.9):
// `EMBED_QUERY_DEADLINE_MS` is defined as `SIBLING_DEADLINE_MS`, so a
// mutation of the one moves the other and still builds (gate 23's
// recorded mutations must be viable to be killed).
const _: () = assert!(EMBED_QUERY_DEADLINE_MS < EMBED_INGEST_DEADLINE_MS);
// A Retry-After is honoured up to a wait no longer than one ingest call.
const _: () = assert!(EMBED_RETRY_AFTER_MS_MAX <= EMBED_INGEST_DEADLINE_MS);
