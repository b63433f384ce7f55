//! Latencies in nanoseconds, kept in an HdrHistogram (3 significant digits, 1 ns to 1 hour), so that
//! percentiles have a known error bound (±0.1 %) and histograms of several jobs or drivers merge exactly.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

const HIGHEST_NS: u64 = 3_600_000_000_000;
const SIGNIFICANT_DIGITS: u8 = 3;

#[derive(Clone, Debug)]
pub struct LatencyHistogram(Histogram<u64>);

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        // The bounds are constants that hdrhistogram accepts; this cannot fail.
        Self(Histogram::new_with_bounds(1, HIGHEST_NS, SIGNIFICANT_DIGITS).expect("valid bounds"))
    }

    /// Records one latency; values above one hour are clamped to one hour.
    #[inline]
    pub fn record(&mut self, latency_ns: u64) {
        self.0.saturating_record(latency_ns.max(1));
    }

    pub fn add(&mut self, other: &LatencyHistogram) {
        // Same bounds on both sides, so adding cannot overflow the range.
        self.0.add(&other.0).expect("histograms share bounds");
    }

    pub fn reset(&mut self) {
        self.0.reset();
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    pub fn value_at_quantile(&self, quantile: f64) -> u64 {
        self.0.value_at_quantile(quantile)
    }

    pub fn stats(&self) -> LatencyNs {
        let h = &self.0;
        if h.is_empty() {
            return LatencyNs::default();
        }
        LatencyNs {
            mean: h.mean(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
            min: h.min(),
        }
    }

    /// HdrHistogram's V2 encoding in standard base64, the form stored in results.
    pub fn to_base64(&self) -> String {
        let mut bytes = Vec::new();
        V2Serializer::new()
            .serialize(&self.0, &mut bytes)
            .expect("writing to a Vec cannot fail");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    pub fn from_base64(text: &str) -> Result<Self, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| format!("histogram is not base64: {e}"))?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("histogram is not HdrHistogram V2: {e:?}"))?;
        let mut out = Self::new();
        out.0
            .add(&h)
            .map_err(|e| format!("histogram out of range: {e:?}"))?;
        Ok(out)
    }
}

/// Latency figures in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatencyNs {
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
    pub min: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Exact percentile of a raw latency log, by the nearest-rank rule HdrHistogram also uses.
    fn exact_percentile(sorted: &[u64], quantile: f64) -> u64 {
        let rank = ((quantile * sorted.len() as f64).ceil() as usize).max(1);
        sorted[rank - 1]
    }

    #[test]
    fn percentiles_match_a_raw_latency_log_within_the_error_bound() {
        // A device-like log: a log-normal body around 200 µs with a slow tail up to 50 ms.
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut raw: Vec<u64> = (0..200_000)
            .map(|_| {
                let body = 200_000.0 * (rng.random::<f64>() * 1.5).exp();
                let tail = if rng.random::<f64>() < 0.002 {
                    50_000_000.0 * rng.random::<f64>()
                } else {
                    0.0
                };
                (body + tail) as u64
            })
            .collect();
        let mut h = LatencyHistogram::new();
        for &v in &raw {
            h.record(v);
        }
        raw.sort_unstable();
        let stats = h.stats();
        for (q, got) in [
            (0.5, stats.p50),
            (0.9, stats.p90),
            (0.99, stats.p99),
            (0.999, stats.p999),
        ] {
            let want = exact_percentile(&raw, q);
            let error = (got as f64 - want as f64).abs() / want as f64;
            assert!(
                error <= 0.001,
                "p{q}: histogram {got} vs raw {want} ({error:.5})"
            );
        }
        let mean = raw.iter().sum::<u64>() as f64 / raw.len() as f64;
        assert!((stats.mean - mean).abs() / mean < 0.001);
        assert!(
            (stats.max as f64 - *raw.last().unwrap() as f64).abs() / (stats.max as f64) < 0.001
        );
        assert_eq!(h.count(), raw.len() as u64);
    }

    #[test]
    fn merge_and_round_trip() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        for v in 1..=1000u64 {
            a.record(v * 1000);
            b.record(v * 2000);
        }
        let mut merged = a.clone();
        merged.add(&b);
        assert_eq!(merged.count(), 2000);
        let back = LatencyHistogram::from_base64(&merged.to_base64()).unwrap();
        assert_eq!(back.stats(), merged.stats());
        assert!(LatencyHistogram::from_base64("not base64!").is_err());
    }

    #[test]
    fn out_of_range_values_are_clamped_not_lost() {
        let mut h = LatencyHistogram::new();
        h.record(0);
        h.record(u64::MAX);
        assert_eq!(h.count(), 2);
        assert_eq!(h.stats().min, 1);
    }
}
