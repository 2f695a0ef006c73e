//! Time as a dependency: the reference reads time only through [`Clock`].
//!
//! Production uses [`SystemClock`]. A simulated run supplies its own clock,
//! which is how "nothing inside a simulated run reads the wall clock" holds
//! for the reference too.

/// A source of the current time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Seconds since the Unix epoch, UTC.
    fn now_unix_s(&self) -> i64;
}

/// The operating system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_unix_s(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
    }
}

/// A clock that always reads the same instant; for tests.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub i64);

impl Clock for FixedClock {
    fn now_unix_s(&self) -> i64 {
        self.0
    }
}

/// Formats Unix seconds as an ISO date (`2026-11-30`), UTC.
pub fn iso_date(unix_s: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix_s)
        .map(|t| {
            t.format(time::macros::format_description!("[year]-[month]-[day]"))
                .unwrap_or_default()
        })
        .unwrap_or_else(|_| "unknown date".to_string())
}

/// Formats Unix seconds as an ISO date and minute (`2026-11-30 09:00`), UTC.
pub fn iso_date_time(unix_s: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix_s)
        .map(|t| {
            t.format(time::macros::format_description!(
                "[year]-[month]-[day] [hour]:[minute]"
            ))
            .unwrap_or_default()
        })
        .unwrap_or_else(|_| "unknown time".to_string())
}
