//! This process's own figures from the kernel: CPU time and `/proc/self` counters, for the 90k binaries.

/// CPU seconds this process has used, user + system (`getrusage(RUSAGE_SELF)`).
pub fn rusage_cpu_s() -> f64 {
    // SAFETY: getrusage writes one rusage into the zeroed value it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// A `/proc/self/status` figure in bytes (`VmRSS`, `VmHWM`; the kernel
/// writes them in kB); 0 if absent.
pub fn status_bytes(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim_start_matches(':').trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// A `/proc/self/io` counter in bytes (`rchar`: every byte `read` and its
/// kin returned); 0 if absent.
pub fn io_bytes(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim_start_matches(':').trim().parse::<u64>().ok())
        .unwrap_or(0)
}
