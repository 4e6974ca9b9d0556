// SPDX-License-Identifier: GPL-2.0

//! criterion benchmarks: enqueue, dequeue, pick and pick-and-requeue at N = 1 .. 100k,
//! for the crate (augmented rbtree, O(log n)) and for an O(n) baseline (a `Vec` scanned
//! with the same eligibility rule). See Documentation/benchmarks.md for the command and
//! the table.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sched_eevdf::user::{UserEntity, UserRunqueue};
use sched_eevdf::*;

const SIZES: [usize; 6] = [1, 10, 100, 1_000, 10_000, 100_000];
/// Extra entities enqueued/dequeued per timed batch (ops per batch; `iters` ops in all).
const K: usize = 32;

fn batches(iters: u64) -> u64 {
    iters.div_ceil(K as u64)
}

/// Time of `batches(iters) * K` operations, scaled to `iters` operations.
fn per_iter(t: Duration, iters: u64) -> Duration {
    t.mul_f64(iters as f64 / (batches(iters) * K as u64) as f64)
}

fn entities(n: usize) -> Vec<UserEntity> {
    (0..n)
        .map(|i| UserEntity::new(LoadWeight::from_nice((i % 40) as i32 - 20)))
        .collect()
}

/// A runqueue with `ents` queued, one of them running, after some scheduling.
fn build<'a>(ents: &'a [UserEntity], cfg: Config) -> UserRunqueue<'a> {
    let mut rq = UserRunqueue::new();
    for e in ents {
        enqueue_entity(&mut rq, e.se(), EnqueueFlags::INITIAL, cfg);
    }
    for _ in 0..ents.len().min(2_000) {
        let _ = update_curr(&mut rq, 700_000, cfg);
        let _ = schedule(&mut rq, cfg);
    }
    rq
}

/// The O(n) baseline: entities in a `Vec`, sums recomputed and all entities scanned.
#[derive(Clone, Copy)]
struct Lin {
    v: u64,
    d: u64,
    w: i64,
}

struct LinRq {
    ents: Vec<Lin>,
}

impl LinRq {
    fn new(n: usize) -> Self {
        let mut x = 1u64;
        let ents = (0..n)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                let v = (x >> 40) % 4_000_000;
                Lin {
                    v,
                    d: v + 700_000,
                    w: sched_eevdf::load::SCHED_PRIO_TO_WEIGHT[i % 40] as i64,
                }
            })
            .collect();
        LinRq { ents }
    }
    fn enqueue(&mut self, e: Lin) {
        self.ents.push(e);
    }
    fn dequeue(&mut self, v: u64) -> Option<Lin> {
        let i = self.ents.iter().position(|e| e.v == v)?;
        Some(self.ents.swap_remove(i))
    }
    /// Earliest eligible deadline: one pass for Σ w (v - v0) and Σ w, one pass to scan.
    fn pick(&self) -> Option<usize> {
        let v0 = self.ents.first()?.v;
        let (mut avg, mut load) = (0i64, 0i64);
        for e in &self.ents {
            avg = avg.wrapping_add((e.v.wrapping_sub(v0) as i64).wrapping_mul(e.w));
            load = load.wrapping_add(e.w);
        }
        let mut best: Option<usize> = None;
        for (i, e) in self.ents.iter().enumerate() {
            if avg >= (e.v.wrapping_sub(v0) as i64).wrapping_mul(load)
                && best.is_none_or(|b| vtime::vruntime_before(e.d, self.ents[b].d))
            {
                best = Some(i);
            }
        }
        best
    }
}

fn bench(c: &mut Criterion) {
    let cfg = Config::DEFAULT;
    let mut g = c.benchmark_group("eevdf");
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_millis(1200));
    g.sample_size(20);

    for &n in &SIZES {
        let ents = entities(n);
        let extra = entities(K);
        let mut rq = build(&ents, cfg);

        g.bench_function(BenchmarkId::new("enqueue/rbtree", n), |b| {
            b.iter_custom(|iters| {
                let mut t = Duration::ZERO;
                for _ in 0..batches(iters) {
                    let s = Instant::now();
                    for e in &extra {
                        enqueue_entity(&mut rq, e.se(), EnqueueFlags::WAKEUP, cfg);
                    }
                    t += s.elapsed();
                    for e in &extra {
                        dequeue_entity(
                            &mut rq,
                            e.se(),
                            DequeueFlags::SLEEP | DequeueFlags::SPECIAL,
                            cfg,
                        );
                    }
                }
                per_iter(t, iters)
            })
        });
        g.bench_function(BenchmarkId::new("dequeue/rbtree", n), |b| {
            b.iter_custom(|iters| {
                let mut t = Duration::ZERO;
                for _ in 0..batches(iters) {
                    for e in &extra {
                        enqueue_entity(&mut rq, e.se(), EnqueueFlags::WAKEUP, cfg);
                    }
                    let s = Instant::now();
                    for e in &extra {
                        dequeue_entity(
                            &mut rq,
                            e.se(),
                            DequeueFlags::SLEEP | DequeueFlags::SPECIAL,
                            cfg,
                        );
                    }
                    t += s.elapsed();
                }
                per_iter(t, iters)
            })
        });
        // Without RUN_TO_PARITY, so that a protected current does not short-cut the search.
        let search = Config {
            features: cfg.features.with(Features::RUN_TO_PARITY, false),
            ..cfg
        };
        g.bench_function(BenchmarkId::new("pick/rbtree", n), |b| {
            b.iter(|| black_box(pick_eevdf(black_box(&rq), search)))
        });
        g.bench_function(BenchmarkId::new("pick_requeue/rbtree", n), |b| {
            b.iter(|| {
                let _ = update_curr(&mut rq, 700_000, search);
                black_box(schedule(&mut rq, search))
            })
        });
        check_invariants(&rq).expect("benchmarks keep the invariants");

        let mut lin = LinRq::new(n);
        let lin_extra: Vec<Lin> = (0..K as u64)
            .map(|k| Lin {
                v: 10_000_000 + k,
                d: 1,
                w: 1024,
            })
            .collect();
        g.bench_function(BenchmarkId::new("enqueue/linear", n), |b| {
            b.iter_custom(|iters| {
                let mut t = Duration::ZERO;
                for _ in 0..batches(iters) {
                    let s = Instant::now();
                    for e in &lin_extra {
                        lin.enqueue(black_box(*e));
                    }
                    t += s.elapsed();
                    for e in &lin_extra {
                        lin.dequeue(e.v);
                    }
                }
                per_iter(t, iters)
            })
        });
        g.bench_function(BenchmarkId::new("dequeue/linear", n), |b| {
            b.iter_custom(|iters| {
                let mut t = Duration::ZERO;
                for _ in 0..batches(iters) {
                    for e in &lin_extra {
                        lin.enqueue(*e);
                    }
                    let s = Instant::now();
                    for e in &lin_extra {
                        black_box(lin.dequeue(black_box(e.v)));
                    }
                    t += s.elapsed();
                }
                per_iter(t, iters)
            })
        });
        g.bench_function(BenchmarkId::new("pick/linear", n), |b| {
            b.iter(|| black_box(lin.pick()))
        });
        g.bench_function(BenchmarkId::new("pick_requeue/linear", n), |b| {
            b.iter(|| {
                // Run the pick for 0.7 ms of virtual time, then requeue it (O(n) find).
                if let Some(i) = lin.pick() {
                    let mut e = lin.ents.swap_remove(i);
                    e.v = e.v.wrapping_add(700_000 * 1024 / e.w as u64);
                    e.d = e.v.wrapping_add(700_000 * 1024 / e.w as u64);
                    lin.enqueue(e);
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
