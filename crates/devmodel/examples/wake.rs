use oltplab_devmodel::{now_ns, wait_until};
fn main() {
    let mut late = Vec::new();
    for i in 0..300u64 {
        let d = now_ns() + 500_000 + (i % 7) * 300_000;
        late.push(wait_until(d).unwrap_or(0));
    }
    late.sort_unstable();
    println!(
        "early {} p50 {} p90 {} p99 {} max {}",
        oltplab_devmodel::early_wake_ns(),
        late[150],
        late[270],
        late[297],
        late[299]
    );
}
