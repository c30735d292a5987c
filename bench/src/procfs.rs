//! Process CPU time and memory from `/proc` (Linux).

/// Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`, 100 on Linux).
const TICKS_PER_SEC: f64 = 100.0;

/// User + system CPU time of a process (all its threads, dead ones included), in seconds.
pub(crate) fn cpu_seconds(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; the fields after it are space separated.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / TICKS_PER_SEC)
}

/// The sum of [`cpu_seconds`] over several processes (`None` if there are none, or one of
/// them cannot be read).
pub(crate) fn cpu_seconds_sum(pids: &[String]) -> Option<f64> {
    if pids.is_empty() {
        return None;
    }
    pids.iter().map(|p| cpu_seconds(p)).sum()
}

/// [`cpu_seconds`] of every process whose command name (`/proc/<pid>/comm`) is `comm`.
pub(crate) fn cpu_by_comm(comm: &str) -> std::collections::HashMap<u32, f64> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Default::default();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == comm)
        })
        .filter_map(|pid| Some((pid, cpu_seconds(&pid.to_string())?)))
        .collect()
}

/// The sum of [`rss_mib`] over several processes.
pub(crate) fn rss_mib_sum(pids: &[String]) -> Option<f64> {
    if pids.is_empty() {
        return None;
    }
    pids.iter().map(|p| rss_mib(p)).sum()
}

/// CPU time the whole machine spent busy (all CPUs: user, nice, system, irq, softirq and
/// steal from the first line of `/proc/stat`), in seconds: beside the processes measured, it
/// shows how much else ran in the same window.
pub(crate) fn machine_busy_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    let t: Vec<f64> = line
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0.0))
        .collect();
    // user nice system idle iowait irq softirq steal
    let busy = t.first()? + t.get(1)? + t.get(2)? + t.get(5)? + t.get(6)? + t.get(7)?;
    Some(busy / TICKS_PER_SEC)
}

/// Resident set size in MiB (`VmRSS`).
pub(crate) fn rss_mib(pid: &str) -> Option<f64> {
    status_kib(pid, "VmRSS:").map(|k| k / 1024.0)
}

/// Peak resident set size in MiB (`VmHWM`).
pub(crate) fn peak_rss_mib(pid: &str) -> Option<f64> {
    status_kib(pid, "VmHWM:").map(|k| k / 1024.0)
}

fn status_kib(pid: &str, field: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line[field.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// The machine, for reports: CPU model and count, memory, kernel.
pub(crate) fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU", |(_, m)| m.trim())
        .to_owned();
    let cpus = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse::<f64>().ok())
        })
        .map_or(0.0, |k| k / 1024.0 / 1024.0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{model}, {cpus} CPUs, {mem_gib:.0} GiB RAM, Linux {}",
        kernel.trim()
    )
}
