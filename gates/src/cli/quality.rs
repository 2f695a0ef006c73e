//! `memoria-harness quality`: gate 29's retrieval quality measured and printed whole.

use std::process::ExitCode;

use super::EXIT_FAIL;

/// `memoria-harness quality`: gate 29's measurement, printed whole.
pub fn quality() -> ExitCode {
    match memoria_gates::quality::measure() {
        Ok(q) => {
            out!("{}", q.table());
            ExitCode::SUCCESS
        }
        Err(f) => {
            eprintln!("memoria-harness: gate 29 cannot measure: {f}");
            ExitCode::from(EXIT_FAIL)
        }
    }
}
