//! What the bench binaries share to print their figures: latency percentiles from samples in
//! microseconds, and the value of a `--flag N` argument. One formatting for every bench, so
//! figures in notes and the README read alike.

/// `p50 …ms  p95 …ms … max …ms` of `samples_us` (microseconds) at each fraction of `marks`
/// (`1.0` prints as `max`). Empty samples print as `no samples`.
pub fn percentiles(mut samples_us: Vec<u128>, marks: &[f64]) -> String {
    if samples_us.is_empty() {
        return "no samples".to_owned();
    }
    samples_us.sort_unstable();
    let last = samples_us.len() - 1;
    marks
        .iter()
        .map(|&fraction| {
            let at = samples_us[(last as f64 * fraction).round() as usize] as f64 / 1000.0;
            let label = if fraction >= 1.0 {
                "max".to_owned()
            } else {
                format!("p{}", (fraction * 100.0).round())
            };
            format!("{label} {at:>7.2} ms")
        })
        .collect::<Vec<_>>()
        .join("  ")
}

/// The number after `flag` on the command line (`--calls 500`), or `default`.
pub fn flag_value(flag: &str, default: usize) -> usize {
    let arguments: Vec<String> = std::env::args().collect();
    arguments
        .iter()
        .position(|argument| argument == flag)
        .and_then(|index| arguments.get(index + 1))
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::percentiles;

    #[test]
    fn percentiles_pick_the_nearest_rank_and_label_the_maximum() {
        let samples = (1..=100).map(|ms| ms * 1000).collect();
        assert_eq!(
            percentiles(samples, &[0.5, 0.99, 1.0]),
            "p50   51.00 ms  p99   99.00 ms  max  100.00 ms"
        );
        assert_eq!(percentiles(Vec::new(), &[0.5]), "no samples");
    }
}
