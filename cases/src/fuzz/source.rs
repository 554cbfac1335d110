//! Where the generator's choices come from. One [`Source`] trait, three
//! drivers: a seeded RNG for live runs ([`Seeded`], so a seed repeats a run
//! exactly), `arbitrary::Unstructured` for `cargo fuzz` (libFuzzer's bytes
//! steer the same choices, so coverage guidance applies), and a byte vector
//! for proptest ([`Bytes`], whose shrinking then shrinks the choices).

/// A stream of choices. Every generator decision is one `below` call.
pub trait Source {
    /// A number in `0..n` (`0` when `n` is 0).
    fn below(&mut self, n: u64) -> u64;

    /// True with probability `num / den`.
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// An index into a slice of `len` items (`len` > 0).
    fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// An integer in `lo..=hi`.
    fn int_in(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi as i128 - lo as i128 + 1).min(u64::MAX as i128) as u64;
        (lo as i128 + self.below(span) as i128) as i64
    }
}

/// A seeded SplitMix64 stream: fast, and the same seed gives the same run.
#[derive(Debug, Clone)]
pub struct Seeded(u64);

impl Seeded {
    /// A stream from `seed`.
    pub fn new(seed: u64) -> Seeded {
        Seeded(seed)
    }

    /// The next raw 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl Source for Seeded {
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // Lemire's multiply-shift: no modulo bias worth the name at these sizes.
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Choices read from bytes (proptest's `Vec<u8>`, a saved input): each
/// choice takes as many bytes as its range needs; when the bytes run out
/// every choice is 0, the simplest one, so shorter input means simpler values.
#[derive(Debug, Clone)]
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// Choices from `data`.
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { data }
    }
}

fn from_bytes(data: &mut &[u8], n: u64) -> u64 {
    if n <= 1 {
        return 0;
    }
    let need = (64 - (n - 1).leading_zeros()).div_ceil(8) as usize;
    let take = need.min(data.len());
    let mut x = 0u64;
    for b in &data[..take] {
        x = (x << 8) | u64::from(*b);
    }
    *data = &data[take..];
    x % n
}

impl Source for Bytes<'_> {
    fn below(&mut self, n: u64) -> u64 {
        from_bytes(&mut self.data, n)
    }
}

/// libFuzzer's input through `arbitrary` (the `cargo fuzz` targets).
impl Source for arbitrary::Unstructured<'_> {
    fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        self.int_in_range(0..=n - 1).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_repeats_its_choices_and_stays_in_range() {
        let (mut a, mut b) = (Seeded::new(7), Seeded::new(7));
        for n in [1u64, 2, 3, 10, 1 << 40, u64::MAX] {
            let x = a.below(n);
            assert_eq!(x, b.below(n));
            assert!(x < n.max(1));
        }
        assert_eq!(Seeded::new(1).int_in(-3, -3), -3);
        let mut s = Seeded::new(3);
        assert!((0..1000)
            .map(|_| s.int_in(-2, 2))
            .all(|x| (-2..=2).contains(&x)));
    }

    #[test]
    fn bytes_that_run_out_choose_the_simplest() {
        let mut b = Bytes::new(&[5]);
        assert_eq!(b.below(10), 5);
        assert_eq!(b.below(10), 0);
        assert_eq!(b.below(1 << 20), 0);
    }
}
