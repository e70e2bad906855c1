//! The pseudo-random numbers of synthetic traces: SplitMix64, so that a seed gives the
//! same trace on every machine and every run (no dependency whose algorithm may change
//! between versions).

/// SplitMix64 (Steele, Lea, Flood 2014): small, fast and fully determined by its seed.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator for `seed`; `stream` separates independent uses of one seed (DSO
    /// layout, weights, sample order), so changing one does not shift the others.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut r = Rng {
            state: seed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03),
        };
        r.next_u64();
        r
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0), without modulo bias worth speaking of: the
    /// multiply-shift maps 64 random bits onto the range.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // SplitMix64 from state 0 (the reference implementation's first outputs).
        let mut r = Rng { state: 0 };
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn below_stays_in_range_and_streams_differ() {
        let mut r = Rng::new(7, 0);
        assert!((0..1000).all(|_| r.below(10) < 10));
        let a: Vec<u64> = (0..4).map(|_| Rng::new(7, 1).next_u64()).collect();
        let b = Rng::new(7, 2).next_u64();
        assert!(a.iter().all(|&x| x == a[0]) && a[0] != b);
    }
}
