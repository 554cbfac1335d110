//! How many requests wait in the pipe at once, chosen by measuring.
//!
//! Servers differ: a Node or Rust server answers faster the deeper the
//! pipe (it overlaps reading, work and writing: 3,265 requests/s at 64 in
//! flight against 734 at 8 for the TypeScript SDK's Bookshop), while a
//! Python server that starts a task per request does better with few
//! waiting (the Python SDK's Bookshop: 743 at 8, 616 at 64; one run each). No fixed depth suits both, so unless `--in-flight` fixes one, the
//! campaign surveys depths from the widest down, one short epoch each,
//! stops the survey once a depth is clearly worse than the best seen, and
//! keeps the best for the rest of the campaign.

use std::time::{Duration, Instant};

/// Depths surveyed, widest first (the narrowest is where a server that
/// leaves requests unanswered starts to hold up the pipe).
const SURVEY: &[usize] = &[64, 32, 16, 8, 4];
/// One epoch: at least this many answers and this long, so that a rate is
/// measured over more than the pipe's own fill and drain.
const EPOCH_ANSWERS: u64 = 256;
const EPOCH_TIME: Duration = Duration::from_millis(200);
/// A depth this far below the best rate ends the survey (narrower ones
/// would only be worse).
const GIVE_UP: f64 = 0.7;

/// The pipe's depth: fixed, or surveyed then kept.
#[derive(Debug, Clone)]
pub(crate) struct Width {
    current: usize,
    /// The survey's next depths; empty once settled (or fixed).
    left: Vec<usize>,
    best: Option<(usize, f64)>,
    epoch: Option<(Instant, u64)>,
}

impl Width {
    /// Always `n`.
    pub(crate) fn fixed(n: usize) -> Width {
        Width {
            current: n.max(1),
            left: vec![],
            best: None,
            epoch: None,
        }
    }

    /// Surveyed from the widest depth, starting now.
    pub(crate) fn surveyed(now: Instant) -> Width {
        Width {
            current: SURVEY[0],
            left: SURVEY[1..].to_vec(),
            best: None,
            epoch: Some((now, 0)),
        }
    }

    /// The depth to fill the pipe to now.
    pub(crate) fn get(&self) -> usize {
        self.current
    }

    /// One answer came at `now` (the survey's measure).
    pub(crate) fn answered(&mut self, now: Instant) {
        let Some((start, n)) = &mut self.epoch else {
            return;
        };
        *n += 1;
        let took = now.saturating_duration_since(*start);
        if *n < EPOCH_ANSWERS || took < EPOCH_TIME {
            return;
        }
        let rate = *n as f64 / took.as_secs_f64();
        let best = match self.best {
            Some((_, b)) if b >= rate => b,
            _ => {
                self.best = Some((self.current, rate));
                rate
            }
        };
        let next = self.left.first().copied();
        match next {
            Some(depth) if rate >= best * GIVE_UP => {
                self.left.remove(0);
                self.current = depth;
                self.epoch = Some((now, 0));
            }
            _ => {
                // Settled: the best depth for the rest of the campaign.
                self.left.clear();
                self.current = self.best.map_or(self.current, |(d, _)| d);
                self.epoch = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds answers at `rate(depth)` per second until the survey settles.
    fn settle(rate: impl Fn(usize) -> f64) -> usize {
        let mut now = Instant::now();
        let mut w = Width::surveyed(now);
        for _ in 0..100_000 {
            now += Duration::from_secs_f64(1.0 / rate(w.get()));
            w.answered(now);
            if w.epoch.is_none() {
                return w.get();
            }
        }
        panic!("never settled");
    }

    #[test]
    fn a_server_that_overlaps_work_keeps_the_deep_pipe() {
        // The TypeScript SDK's figures: 3,265 at 64, 1,347 at 16, 734 at 8.
        let depth = settle(|d| match d {
            64 => 3265.0,
            32 => 2400.0,
            16 => 1347.0,
            _ => 734.0,
        });
        assert_eq!(depth, 64);
    }

    #[test]
    fn a_server_slowed_by_waiting_tasks_gets_a_shallow_pipe() {
        // The Python SDK's figures: 616 at 64, 647 at 16, 743 at 8, 577 at 4.
        let depth = settle(|d| match d {
            64 => 616.0,
            32 => 630.0,
            16 => 647.0,
            8 => 743.0,
            _ => 577.0,
        });
        assert_eq!(depth, 8);
    }

    #[test]
    fn a_fixed_depth_never_moves() {
        let mut w = Width::fixed(3);
        let now = Instant::now();
        for i in 0..10_000 {
            w.answered(now + Duration::from_millis(i));
        }
        assert_eq!(w.get(), 3);
    }
}
