//! `eevdfctl top`: one frame of counter rates and per-CPU runqueue summaries, rendered from
//! a [`Stats`] delta and a [`Timeline`].

use super::{Stats, Timeline};

/// One frame of `eevdfctl top`: a header line, each counter's rate per second over the
/// `secs` that `delta` covers (per CPU and all), then per CPU its root cfs_rq's summary and
/// its first `rows` entity rows.
///
/// `sample` counts from 1; `of` is the number of frames asked for (0 = until interrupted).
pub fn render_top(
    sample: u64,
    of: u64,
    secs: f64,
    delta: &Stats,
    timeline: &Timeline,
    rows: usize,
) -> String {
    let of = if of == 0 {
        String::new()
    } else {
        format!(" of {of}")
    };
    let mut out = format!(
        "=== eevdfctl top: sample {sample}{of}, {:.0} ms ===\n",
        secs * 1000.0
    );
    out.push_str(&delta.render_with("counter (per s)", |v| {
        if secs > 0.0 {
            format!("{:.0}", v as f64 / secs)
        } else {
            "-".into()
        }
    }));
    for c in &timeline.0 {
        out.push('\n');
        match c.root() {
            None => out.push_str(&format!("cpu {}: no cfs_rq\n", c.cpu)),
            Some(rq) => {
                out.push_str(&format!(
                    "cpu {}: cfs_rq {} {} ({} cfs_rq{} on this CPU{})\n",
                    c.cpu,
                    rq.path,
                    rq.summary(),
                    c.cfs_rqs.len(),
                    if c.cfs_rqs.len() == 1 { "" } else { "s" },
                    if c.truncated { ", truncated" } else { "" }
                ));
                out.push_str(&rq.render_entities(rows, "  "));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::debugfs::timeline::tests::TIMELINE;

    #[test]
    fn top_frame() {
        let a = Stats::parse("cpu picks\n0 10\n1 0\nall 10\n").unwrap();
        let b = Stats::parse("cpu picks\n0 110\n1 50\nall 160\n").unwrap();
        let t = Timeline::parse(TIMELINE).unwrap();
        let out = render_top(1, 2, 0.5, &b.delta(&a).unwrap(), &t, 1);
        let want_head = "\
=== eevdfctl top: sample 1 of 2, 500 ms ===
counter (per s)  cpu0  cpu1  all
picks             200   100  300

cpu 0: cfs_rq / V=81234567890 zero=81234560000 sum_w=3072 nr_queued=3 min_slice_ns=3000000 (2 cfs_rqs on this CPU)
  S PID WEIGHT VRT-V    DL-V SLICE_NS C E D NAME
  R 412   1024 -1234 2998766  3000000 - y - hackbench
  ... 2 more

cpu 1: cfs_rq / V=5 zero=5 sum_w=0 nr_queued=0 min_slice_ns=- (1 cfs_rq on this CPU)
  (empty)

cpu 2: no cfs_rq
";
        assert!(out.starts_with(want_head), "{out}");
        assert!(
            out.contains("new_key=7 (1 cfs_rq on this CPU, truncated)"),
            "{out}"
        );
        assert!(render_top(3, 0, 1.0, &a, &Timeline::default(), 5)
            .starts_with("=== eevdfctl top: sample 3, 1000 ms ===\n"));
    }
}
