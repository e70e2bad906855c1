// The DWARF unwinding tests' Rust workload, built as a release binary (no frame
// pointers): outer -> middle -> leaf, none inlined.
use std::hint::black_box;

#[inline(never)]
fn leaf(n: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..n {
        s = black_box(s.wrapping_mul(31).wrapping_add(i ^ (s >> 3)));
    }
    s
}

#[inline(never)]
fn middle(n: u64, k: u64) -> u64 {
    if k % 2 == 0 {
        leaf(n)
    } else {
        leaf(n / 2).wrapping_add(leaf(n / 2))
    }
}

#[inline(never)]
fn outer(rounds: u64) -> u64 {
    (0..rounds).fold(0, |t, k| t.wrapping_add(middle(200_000, k)))
}

fn main() {
    let rounds = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1500);
    println!("{}", outer(black_box(rounds)));
}
