//! The CPU time a server's process group has used, read from Linux `/proc`:
//! the yardstick of whether mcperr keeps a server busy. A single-threaded
//! server (the Python SDK, Node, rmcp on one job) busy for most of a
//! campaign's wall time is the limit; one often idle waits on mcperr.

use std::time::Duration;

/// The CPU time (user and system, with that of its reaped children) of
/// every process in the group `pgid`, or `None` where `/proc` cannot say
/// (not Linux, or the group is gone).
pub fn group_cpu_time(pgid: i32) -> Option<Duration> {
    let ticks_per_s = clock_ticks()?;
    let entries = std::fs::read_dir("/proc").ok()?;
    let mut ticks = 0u64;
    let mut found = false;
    for entry in entries.flatten() {
        let Some(stat) = std::fs::read_to_string(entry.path().join("stat")).ok() else {
            continue;
        };
        if let Some((group, used)) = group_and_ticks(&stat) {
            if group == pgid {
                ticks += used;
                found = true;
            }
        }
    }
    found.then(|| Duration::from_secs_f64(ticks as f64 / ticks_per_s as f64))
}

/// From one `/proc/PID/stat` line: the process group, and utime + stime +
/// cutime + cstime in clock ticks (proc(5): fields 5 and 14 to 17).
fn group_and_ticks(stat: &str) -> Option<(i32, u64)> {
    // The command name (field 2) is in parentheses and may hold spaces:
    // the fields after its closing parenthesis start at field 3 (state).
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let group = fields.get(2)?.parse().ok()?;
    let used = fields
        .get(11..15)?
        .iter()
        .map(|f| f.parse::<i64>().ok().map(|t| t.max(0) as u64))
        .sum::<Option<u64>>()?;
    Some((group, used))
}

fn clock_ticks() -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: sysconf only reads a system constant.
        let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        (t > 0).then_some(t as u64)
    }
    #[cfg(not(unix))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_its_group_and_its_four_cpu_fields() {
        // A command name with a space and a parenthesis, as proc(5) allows.
        let stat = "4242 (my (odd) server) S 1 4240 4240 0 -1 4194560 \
                    812 0 0 0 150 25 3 2 20 0 1 0 99 1000 100";
        assert_eq!(group_and_ticks(stat), Some((4240, 150 + 25 + 3 + 2)));
    }

    #[test]
    fn this_process_group_has_spent_cpu_time_and_a_gone_one_none() {
        // SAFETY: getpgrp has no preconditions.
        let own = unsafe { libc::getpgrp() };
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(50) {
            std::hint::black_box(0u64);
        }
        assert!(group_cpu_time(own).is_some_and(|t| t > Duration::ZERO));
        assert_eq!(group_cpu_time(i32::MAX), None);
    }
}
