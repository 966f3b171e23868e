//! Request counters for `GET /metrics` (Prometheus text format).

use std::{
    fmt::Write,
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

/// Upper bounds of the latency histogram, seconds.
const BUCKETS: [f64; 10] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0];
const CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/// Requests by status class, and a latency histogram.
#[derive(Default)]
pub struct Metrics {
    by_class: [AtomicU64; 5],
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Metrics {
    pub fn record(&self, status: u16, latency: Duration) {
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.by_class[class].fetch_add(1, Ordering::Relaxed);
        let secs = latency.as_secs_f64();
        for (bucket, bound) in self.buckets.iter().zip(BUCKETS) {
            if secs <= bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// The exposition text; `store_up` is whether the store answered just now.
    pub fn render(&self, backend: &str, store_up: bool) -> String {
        let mut out = String::with_capacity(1024);
        let _ = writeln!(
            out,
            "# HELP corkboard_store_up Whether the store answered a ping."
        );
        let _ = writeln!(out, "# TYPE corkboard_store_up gauge");
        let _ = writeln!(
            out,
            "corkboard_store_up{{backend=\"{backend}\"}} {}",
            u8::from(store_up)
        );
        let _ = writeln!(
            out,
            "# HELP corkboard_http_requests_total HTTP requests answered, by status class."
        );
        let _ = writeln!(out, "# TYPE corkboard_http_requests_total counter");
        for (class, n) in CLASSES.iter().zip(&self.by_class) {
            let _ = writeln!(
                out,
                "corkboard_http_requests_total{{class=\"{class}\"}} {}",
                n.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            out,
            "# HELP corkboard_http_request_duration_seconds Time to answer a request."
        );
        let _ = writeln!(
            out,
            "# TYPE corkboard_http_request_duration_seconds histogram"
        );
        for (bound, n) in BUCKETS.iter().zip(&self.buckets) {
            let _ = writeln!(
                out,
                "corkboard_http_request_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                n.load(Ordering::Relaxed)
            );
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "corkboard_http_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "corkboard_http_request_duration_seconds_sum {sum}");
        let _ = writeln!(out, "corkboard_http_request_duration_seconds_count {count}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_class_and_bucket() {
        let m = Metrics::default();
        m.record(200, Duration::from_millis(2));
        m.record(404, Duration::from_millis(30));
        let text = m.render("sqlite", true);
        assert!(text.contains("corkboard_http_requests_total{class=\"2xx\"} 1"));
        assert!(text.contains("corkboard_http_requests_total{class=\"4xx\"} 1"));
        assert!(text.contains("corkboard_http_request_duration_seconds_bucket{le=\"0.0025\"} 1"));
        assert!(text.contains("corkboard_http_request_duration_seconds_bucket{le=\"0.05\"} 2"));
        assert!(text.contains("corkboard_http_request_duration_seconds_count 2"));
    }
}
