//! Drawing samples by weight: a Fenwick tree over per-cell counts. Drawn with
//! replacement it spreads samples by weight; drawn without replacement from counts
//! fixed in advance, the trace holds exactly those counts, in a random order, without
//! ever holding the samples in memory.

use super::rng::Rng;

/// Counts per cell, with prefix sums for drawing.
#[derive(Debug, Clone)]
pub struct Cells {
    tree: Vec<u64>,
    total: u64,
    /// The largest power of two not above the cell count: where the descent starts.
    top: usize,
}

impl Cells {
    /// Cells holding `counts`.
    pub fn new(counts: &[u64]) -> Self {
        let n = counts.len();
        let mut tree = vec![0u64; n + 1];
        for (i, &c) in counts.iter().enumerate() {
            tree[i + 1] += c;
            let parent = (i + 1) + ((i + 1) & (i + 1).wrapping_neg());
            if parent <= n {
                tree[parent] += tree[i + 1];
            }
        }
        let top = if n == 0 { 0 } else { 1 << n.ilog2() };
        Cells {
            tree,
            total: counts.iter().sum(),
            top,
        }
    }

    /// What is left in all cells.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Draw a cell with probability proportional to its count; `take` removes one from
    /// it. `None` when every cell is empty.
    pub fn draw(&mut self, rng: &mut Rng, take: bool) -> Option<usize> {
        if self.total == 0 {
            return None;
        }
        let mut r = rng.below(self.total);
        // Descend the tree: find the first cell whose prefix sum exceeds r.
        let n = self.tree.len() - 1;
        let mut pos = 0usize;
        let mut step = self.top;
        while step > 0 {
            let next = pos + step;
            if next <= n && self.tree[next] <= r {
                pos = next;
                r -= self.tree[next];
            }
            step >>= 1;
        }
        if take {
            let mut i = pos + 1;
            while i <= n {
                self.tree[i] -= 1;
                i += i & i.wrapping_neg();
            }
            self.total -= 1;
        }
        Some(pos)
    }
}

/// Drawing with replacement in constant time: Vose's alias table. Each draw picks a
/// column uniformly, then the column's own cell or its alias by a threshold, so a cell
/// comes out with probability weight / total exactly (integer thresholds, no floats).
#[derive(Debug, Clone)]
pub struct Alias {
    /// Per column: draws below this (out of `total`) keep the column's own cell.
    keep: Vec<u64>,
    alias: Vec<u32>,
    total: u64,
}

impl Alias {
    /// A table for `weights` (at most 2^32 cells, summing to at most 2^64 / cells);
    /// `None` when they are all zero or too large.
    pub fn new(weights: &[u64]) -> Option<Self> {
        let n = weights.len() as u128;
        let total = weights.iter().try_fold(0u64, |a, &w| a.checked_add(w))?;
        if total == 0 || n > u32::MAX as u128 {
            return None;
        }
        let t = total as u128;
        // Each column holds `total` units; cell i brings weight * n of them.
        let mut scaled: Vec<u128> = weights.iter().map(|&w| w as u128 * n).collect();
        let mut keep = vec![total; weights.len()];
        let mut alias: Vec<u32> = (0..weights.len() as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..weights.len()).partition(|&i| scaled[i] < t);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            keep[s] = scaled[s] as u64;
            alias[s] = l as u32;
            scaled[l] -= t - scaled[s];
            if scaled[l] < t {
                large.pop();
                small.push(l);
            }
        }
        Some(Alias { keep, alias, total })
    }

    /// Draw a cell.
    pub fn draw(&self, rng: &mut Rng) -> usize {
        let i = rng.below(self.keep.len() as u64) as usize;
        if rng.below(self.total) < self.keep[i] {
            i
        } else {
            self.alias[i] as usize
        }
    }
}

/// Split `total` over cells in proportion to `weights` (largest remainder: each cell
/// gets the floor of its share, the remainders go to the largest fractions, lowest
/// index first on ties). The result sums to `total` exactly.
pub fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| w as u128).sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    let mut counts = Vec::with_capacity(weights.len());
    let mut rems = Vec::with_capacity(weights.len());
    for (i, &w) in weights.iter().enumerate() {
        let share = total as u128 * w as u128;
        counts.push((share / sum) as u64);
        rems.push((share % sum, i));
    }
    let left = total - counts.iter().sum::<u64>();
    rems.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in rems.iter().take(left as usize) {
        counts[i] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawing_without_replacement_empties_exactly_the_counts() {
        let counts = [3u64, 0, 5, 1, 0, 7, 2];
        let mut cells = Cells::new(&counts);
        let mut got = [0u64; 7];
        let mut rng = Rng::new(1, 0);
        while let Some(i) = cells.draw(&mut rng, true) {
            got[i] += 1;
        }
        assert_eq!(got, counts);
        assert_eq!(cells.total(), 0);
    }

    #[test]
    fn drawing_with_replacement_follows_the_weights() {
        let mut cells = Cells::new(&[1, 3]);
        let mut rng = Rng::new(2, 0);
        let ones = (0..40_000)
            .filter(|_| cells.draw(&mut rng, false) == Some(1))
            .count();
        // 3/4 of 40000 = 30000; a binomial's sd here is about 87.
        assert!((29_500..30_500).contains(&ones), "{ones}");
        assert_eq!(cells.total(), 4);
    }

    #[test]
    fn alias_draws_follow_the_weights() {
        let w = [1u64, 0, 6, 3];
        let a = Alias::new(&w).unwrap();
        let mut rng = Rng::new(3, 0);
        let mut got = [0u64; 4];
        for _ in 0..100_000 {
            got[a.draw(&mut rng)] += 1;
        }
        // Expected 10000, 0, 60000, 30000; sd at most about 155.
        assert_eq!(got[1], 0);
        for (g, e) in got.iter().zip([10_000u64, 0, 60_000, 30_000]) {
            assert!(g.abs_diff(e) < 800, "{got:?}");
        }
        assert!(Alias::new(&[0, 0]).is_none());
        assert!(Alias::new(&[u64::MAX, 1]).is_none());
    }

    #[test]
    fn apportion_is_exact_and_proportional() {
        assert_eq!(apportion(12, &[1, 2, 3]), vec![2, 4, 6]);
        assert_eq!(apportion(10, &[1, 1, 1]), vec![4, 3, 3]);
        assert_eq!(apportion(7, &[0, 5]), vec![0, 7]);
        assert_eq!(apportion(5, &[0, 0]), vec![0, 0]);
    }
}
