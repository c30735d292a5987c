//! Counting a server's instructions with callgrind: a figure that, unlike CPU time, does not
//! move with the machine's other load, its clock or its processor model.
//!
//! The server runs under `valgrind --tool=callgrind --callgrind-out-file=PATH`. When the
//! measured window opens, the run zeroes the server's counters (`callgrind_control -z`); when
//! it closes, it dumps them (`callgrind_control -d`, which writes `PATH.<n>`) and reads the
//! dump's total. Callgrind counts user-space instructions only: the kernel's share of a
//! request (the socket work) is not in it.

use std::path::Path;
use std::process::Command;

fn control(flag: &str, pid: u32) -> Result<(), String> {
    let out = Command::new("callgrind_control")
        .arg(flag)
        .arg(pid.to_string())
        .output()
        .map_err(|e| format!("callgrind_control (from valgrind) could not run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "callgrind_control {flag} {pid} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Zeroes the counters of the callgrind process `pid`.
pub(crate) fn zero(pid: u32) -> Result<(), String> {
    control("-z", pid)
}

/// Dumps the counters of the callgrind process `pid`, whose output file is `out`, and returns
/// the instructions counted since they were zeroed.
pub(crate) fn dump(pid: u32, out: &Path) -> Result<u64, String> {
    control("-d", pid)?;
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = out
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("{}: not a file name", out.display()))?;
    // The newest dump is the one with the highest `.<n>` suffix.
    let newest = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let file = e.file_name().into_string().ok()?;
            let n: u64 = file.strip_prefix(name)?.strip_prefix('.')?.parse().ok()?;
            Some((n, e.path()))
        })
        .max_by_key(|(n, _)| *n)
        .ok_or_else(|| format!("no callgrind dump {}.<n> was written", out.display()))?
        .1;
    let text =
        std::fs::read_to_string(&newest).map_err(|e| format!("{}: {e}", newest.display()))?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("{}: no summary line", newest.display()))
}
