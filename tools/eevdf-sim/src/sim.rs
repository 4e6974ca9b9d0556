//! Section 2: the kernel-faithful mode. One CPU, nanosecond time, the fair class only.
//!
//! # What is modelled, and how
//!
//! The loop is a discrete-event simulation. Its events are the tick (every `1/HZ`), task
//! wakeups (timer expiries and ends of sleeps), forks, exits, feature changes and the end
//! of the running task's current burst. It calls the core at the points where 6.12's
//! fair.c does; the core makes every EEVDF decision (see [`crate::coreglue`]):
//!
//! | event | what the loop calls, in fair.c's order |
//! | --- | --- |
//! | tick | `update_curr` (entity_tick); a `true` answer (request used up, or PREEMPT_SHORT's `did_preempt_short`) sets need-resched |
//! | wakeup of a sleeping task | `enqueue_entity(ENQUEUE_WAKEUP)` (`update_curr`, then `place_entity` with PLACE_LAG), then `check_preempt_wakeup_fair` |
//! | wakeup of a delayed task | `requeue_delayed_entity` (DELAY_ZERO), then `check_preempt_wakeup_fair` |
//! | fork | `place_entity(ENQUEUE_INITIAL)` (PLACE_DEADLINE_INITIAL's half slice), enqueue, `check_preempt_wakeup_fair` (WF_FORK) |
//! | end of a messenger's request | the wakeup of the request's worker (WF_SYNC if the messenger says `sync`), then the next queued request, or a sleep |
//! | end of a worker's request | its next request posted: the wakeup of its messenger if it sleeps (WF_SYNC likewise), then its sleep |
//! | end of a burst | `dequeue_entity(DEQUEUE_SLEEP)`, which DELAY_DEQUEUE may turn into a delay, then `schedule()` |
//! | exit | a non-sleep dequeue (no delay), then `schedule()` |
//! | `sched_setattr()` of a task's slice (`setattr_every_us`) | the sched_change: `update_curr`, a `DEQUEUE_SAVE` dequeue of a queued task, `put_prev_entity` of a running one, the slice set, `ENQUEUE_RESTORE`, `set_next_entity` with `first` false |
//! | need-resched | `schedule()`: `pick_next_entity` (which finishes delayed dequeues it meets) with the previous task still current (so RUN_TO_PARITY applies), `put_prev_entity`, `set_next_entity` |
//!
//! Simplifications, stated once:
//! - one CPU, no cgroups, no other scheduling class, no PELT (nothing here reads it);
//! - need-resched is acted on at once: a context switch costs no time and there is no
//!   preemption delay (a fully preemptible kernel with free switches);
//! - HRTICK is off (6.12's default), so a slice that runs out is noticed at the next tick,
//!   at a wakeup or at a sleep, as in the kernel;
//! - a periodic task is forked asleep: its first activation is an ordinary wakeup at its
//!   first timer expiry (lag 0), not a fork placement; so is a worker, until its
//!   messenger wakes it (the messenger starts with every worker's request queued);
//! - a timer's wakeup comes from an interrupt (no WF_SYNC); a messenger's or a worker's
//!   comes from the waker, which is current (`check_preempt_wakeup_fair` sees it), and what
//!   6.19's `preempt_sync()` reads as the waker's run, `rq_clock_task() - exec_start` right
//!   after `update_curr()`, is computed the same way here (0);
//! - a worker that posts to a messenger that is awake (queued, not asleep) only queues its
//!   request: no wakeup.
//!
//! Wakeup latency is measured from the wakeup's reference time (the timer expiry for a
//! periodic task, the end of the sleep for a bursty one) to the moment the task starts
//! running. A periodic task that overran its period starts the next activation at once;
//! its latency is then how late it is (as cyclictest would report).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use anyhow::{Context, Result};

use crate::coreglue::{nice_to_weight, FairRq, FeatureSet, WeightSpec};
use crate::render::{Segment, TimelineData, Wakeup};
use crate::scenario::Behaviour;
use crate::scenario::{Scenario, NSEC_PER_MSEC, NSEC_PER_USEC};
use crate::stats::{Report, TaskStats};
use crate::workload::{AfterBurst, Workload};
use sched_eevdf::user::UserEntity;
use sched_eevdf::WakeFlags;

/// Options of one run that are not part of the scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Record the timeline picture's data from this time, ns.
    pub picture_from_ns: u64,
    /// … for this long, ns (0: no picture data).
    pub picture_len_ns: u64,
    /// Override the scenario's features before the run (applied after the file's).
    pub feature_overrides: Vec<(String, bool)>,
    /// Run the core's invariant checker (tree order, red-black shape, augmented values,
    /// cached leftmost, Σ w·key, Σ w, Σ r) after every event; an error stops the run.
    /// Costs O(n) per event: for tests.
    pub check_invariants: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Not forked yet.
    Unborn,
    /// Queued and waiting for the CPU.
    Runnable,
    /// On the CPU.
    Running,
    /// Blocked (possibly still on the runqueue as a delayed entity, the core knows).
    Sleeping,
    /// Gone.
    Exited,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    // The order of variants breaks ties between events at the same nanosecond: feature
    // changes first, then exits, forks, wakeups, and the tick last (so that a tick sees the
    // tasks that woke at its instant).
    Feature(usize),
    Exit(usize),
    Fork(usize),
    /// Wakeup of a task; the sequence number invalidates stale wakeups.
    Wake(usize, u64),
    /// A `sched_setattr()` of a task's slice (`setattr_every_us`).
    Setattr(usize),
    Tick,
}

struct Task {
    name: String,
    nice: Option<i32>,
    weight: u64,
    start_ns: u64,
    stop_ns: Option<u64>,
    setattr_every_ns: Option<u64>,
    /// The `sched_runtime` of the task's slice, ns, and how many `sched_setattr()`s it had.
    sched_runtime_ns: u64,
    setattrs: u64,
    state: State,
    work: Workload,
    /// CPU time still needed by the current burst, ns.
    remaining_ns: u64,
    /// Latency reference of the pending wakeup, if the task has not run since it woke.
    wake_ref_ns: Option<u64>,
    wake_seq: u64,
    runtime_ns: u64,
    latencies: Vec<u64>,
    switches_in: u64,
    preempted: u64,
    lag_min: i64,
    lag_max: i64,
    /// Since when the task has been runnable without running, if it is.
    runnable_since: Option<u64>,
    wait_max_ns: u64,
    wait_total_ns: u64,
    run_max_ns: u64,
    /// A messenger's queue of requests: the workers (task indices) it wakes next.
    requests: VecDeque<usize>,
    /// A worker's messenger (task index).
    messenger: Option<usize>,
    /// Wakeups between a messenger and its workers are WF_SYNC (the messenger's `sync`).
    sync: bool,
}

/// A finished run: the report and, if asked for, the picture's data.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Statistics.
    pub report: Report,
    /// Picture data for the requested window.
    pub timeline: Option<TimelineData>,
}

/// The simulator state.
pub struct Sim<'a> {
    now: u64,
    end: u64,
    tick_ns: u64,
    rq: FairRq<'a>,
    tasks: Vec<Task>,
    events: BinaryHeap<Reverse<(u64, Ev)>>,
    feature_changes: Vec<Vec<(String, bool)>>,
    curr: Option<usize>,
    /// Start of the current CPU segment (for runtime and the picture), ns.
    seg_start: u64,
    /// Last time the core's `update_curr` was told about the running task, ns.
    exec_start: u64,
    need_resched: bool,
    check_invariants: bool,
    idle_ns: u64,
    context_switches: u64,
    nr_events: u64,
    pic_from: u64,
    pic_to: u64,
    segments: Vec<Segment>,
    wakeups: Vec<Wakeup>,
}

/// Mixes the scenario seed with a task index (SplitMix64 finaliser), so every task has
/// its own stream.
fn task_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One task of the plan: what [`Sim::new`] needs besides the entity arena.
struct Plan {
    name: String,
    /// The `[[task]]` table it comes from.
    table: String,
    nice: Option<i32>,
    weight: WeightSpec,
    runtime_ns: u64,
    seed: u64,
    start_ns: u64,
    stop_ns: Option<u64>,
    setattr_every_ns: Option<u64>,
    behaviour: crate::scenario::Behaviour,
}

fn plan(sc: &Scenario) -> Vec<Plan> {
    let mut out = Vec::new();
    let mut index = 0u64;
    for spec in &sc.tasks {
        let weight = match (spec.nice, spec.weight) {
            (_, Some(w)) => WeightSpec::Weight(w),
            (Some(n), None) => WeightSpec::Nice(n),
            (None, None) => WeightSpec::Nice(0),
        };
        for k in 0..spec.count {
            let name = if spec.count == 1 {
                spec.name.clone()
            } else {
                format!("{}.{k}", spec.name)
            };
            let seed = match &spec.behaviour {
                Behaviour::Bursty { seed: Some(s), .. }
                | Behaviour::Worker { seed: Some(s), .. } => task_seed(*s, u64::from(k)),
                _ => task_seed(sc.seed, index),
            };
            out.push(Plan {
                name,
                table: spec.name.clone(),
                nice: spec.nice,
                weight,
                runtime_ns: spec.slice_us * NSEC_PER_USEC,
                seed,
                start_ns: spec.start_ms * NSEC_PER_MSEC,
                stop_ns: spec.stop_ms.map(|s| s * NSEC_PER_MSEC),
                setattr_every_ns: spec.setattr_every_us.map(|e| e * NSEC_PER_USEC),
                behaviour: spec.behaviour.clone(),
            });
            index += 1;
        }
    }
    out
}

impl<'a> Sim<'a> {
    /// Runs a scenario to its end.
    pub fn run(sc: &Scenario, opts: &RunOptions) -> Result<RunResult> {
        let plan = plan(sc);
        let arena: Vec<UserEntity> = FairRq::arena(
            &plan
                .iter()
                .map(|p| (p.weight, p.runtime_ns))
                .collect::<Vec<_>>(),
            sc.base_slice_ns(),
        );
        let mut sim = Sim::new(sc, opts, &plan, &arena)?;
        sim.check_invariants = opts.check_invariants;
        sim.run_loop()?;
        Ok(sim.finish(sc))
    }

    /// Builds the simulator for a validated scenario over an entity arena.
    fn new(
        sc: &Scenario,
        opts: &RunOptions,
        plan: &[Plan],
        arena: &'a [UserEntity],
    ) -> Result<Self> {
        let mut features = FeatureSet::from_names(&sc.features)?;
        for (n, v) in &opts.feature_overrides {
            features.set(n, *v)?;
        }
        let mut feature_changes = Vec::new();
        for c in &sc.feature_changes {
            let mut v = Vec::new();
            for (n, on) in &c.set {
                FeatureSet::check_name(n)?;
                v.push((n.clone(), *on));
            }
            feature_changes.push(v);
        }
        let rq = FairRq::new(
            arena,
            sc.base_slice_ns(),
            sc.tick_ns(),
            sc.migration_cost_ns(),
            features,
        );
        let mut tasks = Vec::new();
        let mut events = BinaryHeap::new();
        // Each worker's messenger (the scenario allows one per worker table).
        let messenger_of = |table: &str| {
            plan.iter().position(
                |m| matches!(&m.behaviour, Behaviour::Messenger { wakes, .. } if wakes == table),
            )
        };
        for (id, p) in plan.iter().enumerate() {
            let (requests, messenger, sync) = match &p.behaviour {
                Behaviour::Messenger { wakes, sync, .. } => (
                    (0..plan.len())
                        .filter(|&j| &plan[j].table == wakes)
                        .collect(),
                    None,
                    *sync,
                ),
                Behaviour::Worker { .. } => {
                    let m = messenger_of(&p.table);
                    let sync = m.is_some_and(|m| {
                        matches!(plan[m].behaviour, Behaviour::Messenger { sync: true, .. })
                    });
                    (VecDeque::new(), m, sync)
                }
                _ => (VecDeque::new(), None, false),
            };
            events.push(Reverse((p.start_ns, Ev::Fork(id))));
            if let Some(s) = p.stop_ns {
                if s < sc.duration_ns() {
                    events.push(Reverse((s, Ev::Exit(id))));
                }
            }
            if let Some(every) = p.setattr_every_ns {
                events.push(Reverse((p.start_ns + every, Ev::Setattr(id))));
            }
            tasks.push(Task {
                name: p.name.clone(),
                nice: p.nice,
                weight: match p.weight {
                    WeightSpec::Nice(n) => nice_to_weight(n),
                    WeightSpec::Weight(w) => w,
                },
                start_ns: p.start_ns,
                stop_ns: p.stop_ns,
                setattr_every_ns: p.setattr_every_ns,
                sched_runtime_ns: p.runtime_ns,
                setattrs: 0,
                state: State::Unborn,
                work: Workload::new(&p.behaviour, p.seed, p.start_ns),
                remaining_ns: 0,
                wake_ref_ns: None,
                wake_seq: 0,
                runtime_ns: 0,
                latencies: Vec::new(),
                switches_in: 0,
                preempted: 0,
                lag_min: 0,
                lag_max: 0,
                runnable_since: None,
                wait_max_ns: 0,
                wait_total_ns: 0,
                run_max_ns: 0,
                requests,
                messenger,
                sync,
            });
        }
        for (i, c) in sc.feature_changes.iter().enumerate() {
            events.push(Reverse((c.at_ms * NSEC_PER_MSEC, Ev::Feature(i))));
        }
        events.push(Reverse((sc.tick_ns(), Ev::Tick)));
        let pic_from = opts.picture_from_ns;
        let pic_to = if opts.picture_len_ns == 0 {
            pic_from
        } else {
            pic_from
                .saturating_add(opts.picture_len_ns)
                .min(sc.duration_ns())
        };
        Ok(Sim {
            now: 0,
            end: sc.duration_ns(),
            tick_ns: sc.tick_ns(),
            rq,
            tasks,
            events,
            feature_changes,
            curr: None,
            seg_start: 0,
            exec_start: 0,
            need_resched: false,
            check_invariants: false,
            idle_ns: 0,
            context_switches: 0,
            nr_events: 0,
            pic_from,
            pic_to,
            segments: Vec::new(),
            wakeups: Vec::new(),
        })
    }

    /// Moves the clock to `t`, accounting the running task's CPU time (but not telling the
    /// core: fair.c's `update_curr` runs only at the call sites listed above).
    fn advance(&mut self, t: u64) {
        debug_assert!(t >= self.now);
        let dt = t - self.now;
        match self.curr {
            Some(c) => {
                let task = &mut self.tasks[c];
                task.runtime_ns += dt;
                if task.remaining_ns != u64::MAX {
                    task.remaining_ns -= dt;
                }
            }
            None => self.idle_ns += dt,
        }
        self.now = t;
    }

    /// fair.c's `update_curr()`: hands the core the running time since the last call.
    /// Returns the core's resched answer.
    fn update_curr(&mut self) -> bool {
        if self.curr.is_none() {
            return false;
        }
        let delta = self.take_delta();
        self.rq.update_curr(delta)
    }

    /// The running task's execution time since the core last heard of it; the caller
    /// hands it to the core now.
    fn take_delta(&mut self) -> u64 {
        let delta = if self.curr.is_some() {
            self.now - self.exec_start
        } else {
            0
        };
        self.exec_start = self.now;
        delta
    }

    fn run_loop(&mut self) -> Result<()> {
        loop {
            if self.check_invariants {
                self.rq
                    .check()
                    .with_context(|| format!("after the event before t={} ns", self.now))?;
            }
            let next_ev = self.events.peek().map(|r| r.0 .0).unwrap_or(u64::MAX);
            let burst_end = self.curr.and_then(|c| {
                let r = self.tasks[c].remaining_ns;
                (r != u64::MAX).then(|| self.now + r)
            });
            if let Some(be) = burst_end {
                if be <= next_ev && be <= self.end {
                    self.advance(be);
                    self.nr_events += 1;
                    self.burst_end();
                    self.reschedule_if_needed();
                    continue;
                }
            }
            if next_ev >= self.end {
                self.advance(self.end);
                break;
            }
            let Some(Reverse((t, ev))) = self.events.pop() else {
                break;
            };
            self.advance(t);
            self.nr_events += 1;
            match ev {
                Ev::Tick => self.tick(),
                Ev::Fork(i) => self.fork(i),
                Ev::Wake(i, seq) => {
                    if self.tasks[i].state == State::Sleeping && self.tasks[i].wake_seq == seq {
                        self.wake(i, t, WakeFlags::NONE);
                    }
                }
                Ev::Exit(i) => self.exit(i),
                Ev::Setattr(i) => self.setattr(i),
                Ev::Feature(k) => {
                    for (n, v) in self.feature_changes[k].clone() {
                        // Names were checked in `new`.
                        let _ = self.rq.set_feature(&n, v);
                    }
                }
            }
            self.reschedule_if_needed();
        }
        self.close_segment();
        Ok(())
    }

    fn reschedule_if_needed(&mut self) {
        if self.need_resched || self.curr.is_none() {
            self.need_resched = false;
            self.schedule();
        }
    }

    fn sample_lags(&mut self) {
        for (i, t) in self.tasks.iter_mut().enumerate() {
            if matches!(t.state, State::Runnable | State::Running) {
                let lag = self.rq.lag(i);
                t.lag_min = t.lag_min.min(lag);
                t.lag_max = t.lag_max.max(lag);
            }
        }
    }

    fn tick(&mut self) {
        if self.update_curr() {
            self.need_resched = true;
        }
        self.sample_lags();
        let next = self.now + self.tick_ns;
        if next < self.end {
            self.events.push(Reverse((next, Ev::Tick)));
        }
    }

    fn fork(&mut self, i: usize) {
        if self.tasks[i].state != State::Unborn {
            return;
        }
        let start = self.tasks[i].start_ns;
        let first = self.tasks[i].work.first_wakeup_ns(start);
        if first > self.now {
            // Periodic: forked asleep until its first timer expiry; a worker until woken.
            self.tasks[i].state = State::Sleeping;
            self.tasks[i].wake_seq += 1;
            let seq = self.tasks[i].wake_seq;
            if first < self.end {
                self.events.push(Reverse((first, Ev::Wake(i, seq))));
            }
            return;
        }
        self.tasks[i].remaining_ns = self.tasks[i].work.next_burst_ns();
        self.tasks[i].state = State::Runnable;
        self.tasks[i].runnable_since = Some(self.now);
        self.tasks[i].wake_ref_ns = Some(self.now);
        let delta = self.take_delta();
        if self.rq.enqueue_new(i, delta) {
            self.need_resched = true;
        }
        self.check_preempt(i, WakeFlags::FORK);
    }

    fn wake(&mut self, i: usize, ref_ns: u64, flags: WakeFlags) {
        let t = &mut self.tasks[i];
        t.state = State::Runnable;
        t.runnable_since = Some(self.now);
        t.wake_ref_ns = Some(ref_ns);
        t.remaining_ns = t.work.next_burst_ns();
        let delta = self.take_delta();
        if self.rq.wake(i, delta) {
            self.need_resched = true;
        }
        self.check_preempt(i, flags);
    }

    fn check_preempt(&mut self, i: usize, flags: WakeFlags) {
        match self.curr {
            None => self.need_resched = true,
            Some(c) if c != i => {
                // check_preempt_wakeup_fair(): with a reschedule pending it ends early
                // (after 6.12's NEXT_BUDDY marking); else it calls update_curr() itself,
                // and preempt_sync() then reads the waker's run as now - exec_start.
                let pending = self.need_resched;
                let delta = if pending { 0 } else { self.take_delta() };
                let ran = self.now - self.exec_start;
                if self.rq.check_preempt_wakeup(i, delta, flags, ran, pending) {
                    self.need_resched = true;
                }
            }
            Some(_) => {}
        }
    }

    /// The running task `c` wakes task `w` if it sleeps (a messenger its worker, a worker
    /// its messenger), WF_SYNC if their messenger says so.
    fn wake_peer(&mut self, c: usize, w: usize) {
        if self.tasks[w].state != State::Sleeping {
            return;
        }
        let flags = if self.tasks[c].sync {
            WakeFlags::SYNC
        } else {
            WakeFlags::NONE
        };
        self.tasks[w].wake_seq += 1;
        self.wake(w, self.now, flags);
    }

    fn burst_end(&mut self) {
        let Some(c) = self.curr else { return };
        // A messenger handled the request at the head of its queue: it wakes its worker.
        if let Some(w) = self.tasks[c].requests.pop_front() {
            self.wake_peer(c, w);
        }
        // A worker is done: it posts its next request to its messenger.
        if let Some(m) = self.tasks[c].messenger {
            self.tasks[m].requests.push_back(c);
            self.wake_peer(c, m);
        }
        let after = match self.tasks[c].work.after_burst(self.now) {
            AfterBurst::Next if self.tasks[c].requests.is_empty() => {
                AfterBurst::SleepUntil(u64::MAX)
            }
            a => a,
        };
        match after {
            AfterBurst::Next => {
                let t = &mut self.tasks[c];
                t.remaining_ns = t.work.next_burst_ns();
            }
            AfterBurst::Continue(ref_ns) => {
                // Periodic overrun: the next activation starts at once, late by now − ref.
                let t = &mut self.tasks[c];
                t.latencies.push(self.now - ref_ns);
                if self.now >= self.pic_from && ref_ns < self.pic_to {
                    self.wakeups.push(Wakeup {
                        task: c,
                        at_ns: ref_ns.max(self.pic_from),
                        ran_ns: self.now,
                    });
                }
                t.remaining_ns = t.work.next_burst_ns();
            }
            AfterBurst::SleepUntil(when) => {
                let delta = self.take_delta();
                if self.rq.dequeue_sleep(c, delta) {
                    self.need_resched = true;
                }
                let t = &mut self.tasks[c];
                t.state = State::Sleeping;
                t.wake_seq += 1;
                let seq = t.wake_seq;
                if when < self.end {
                    self.events.push(Reverse((when, Ev::Wake(c, seq))));
                }
                self.need_resched = true;
            }
        }
    }

    /// `sched_setattr()` of task `i`'s slice, 1 µs longer than its own every other time,
    /// then the next one. A sleeping task is not queued (the kernel's sched_change then
    /// only sets the slice).
    fn setattr(&mut self, i: usize) {
        let t = &mut self.tasks[i];
        t.setattrs += 1;
        let runtime = t.sched_runtime_ns + (t.setattrs % 2) * NSEC_PER_USEC;
        if t.state != State::Exited {
            let delta = self.take_delta();
            if self.rq.sched_change(i, delta, runtime) {
                self.need_resched = true;
            }
        }
        if self.tasks[i].state != State::Exited {
            if let Some(every) = self.tasks[i].setattr_every_ns {
                let next = self.now + every;
                if next < self.end {
                    self.events.push(Reverse((next, Ev::Setattr(i))));
                }
            }
        }
    }

    fn exit(&mut self, i: usize) {
        match self.tasks[i].state {
            State::Running => {
                let delta = self.take_delta();
                self.rq.dequeue_exit(i, delta);
                self.need_resched = true;
            }
            State::Runnable | State::Sleeping => self.rq.dequeue_exit(i, 0),
            State::Unborn | State::Exited => {}
        }
        self.tasks[i].state = State::Exited;
        self.tasks[i].wake_ref_ns = None;
        self.tasks[i].runnable_since = None;
    }

    fn close_segment(&mut self) {
        if let Some(c) = self.curr {
            let ran = self.now - self.seg_start;
            self.tasks[c].run_max_ns = self.tasks[c].run_max_ns.max(ran);
            let (s, e) = (self.seg_start.max(self.pic_from), self.now.min(self.pic_to));
            if s < e {
                self.segments.push(Segment {
                    task: c,
                    start_ns: s,
                    end_ns: e,
                });
            }
        }
        self.seg_start = self.now;
    }

    /// `__schedule()` for the fair class: put the previous task back, pick, switch.
    fn schedule(&mut self) {
        let prev = self.curr;
        let prev_runnable = prev.is_some_and(|p| self.tasks[p].state == State::Running);
        // pick_task_fair(): update_curr() on a still-queued curr, pick with curr in place.
        let delta = self.take_delta();
        let next = self.rq.pick_next(delta);
        self.sample_lags_for(next);
        if next == prev {
            return;
        }
        self.close_segment();
        if let Some(p) = prev {
            if prev_runnable {
                self.tasks[p].state = State::Runnable;
                self.tasks[p].preempted += 1;
                self.tasks[p].runnable_since = Some(self.now);
            }
        }
        self.curr = next;
        self.exec_start = self.now;
        if let Some(n) = next {
            self.context_switches += 1;
            let now = self.now;
            let (pf, pt) = (self.pic_from, self.pic_to);
            let t = &mut self.tasks[n];
            t.state = State::Running;
            t.switches_in += 1;
            if let Some(since) = t.runnable_since.take() {
                let wait = now - since;
                t.wait_max_ns = t.wait_max_ns.max(wait);
                t.wait_total_ns += wait;
            }
            if let Some(r) = t.wake_ref_ns.take() {
                t.latencies.push(now - r);
                if now >= pf && r < pt {
                    self.wakeups.push(Wakeup {
                        task: n,
                        at_ns: r.max(pf),
                        ran_ns: now,
                    });
                }
            }
        }
    }

    fn sample_lags_for(&mut self, next: Option<usize>) {
        if let Some(n) = next {
            let lag = self.rq.lag(n);
            let t = &mut self.tasks[n];
            t.lag_min = t.lag_min.min(lag);
            t.lag_max = t.lag_max.max(lag);
        }
    }

    fn finish(mut self, sc: &Scenario) -> RunResult {
        let mut tasks = Vec::new();
        for (i, t) in self.tasks.iter_mut().enumerate() {
            let alive_to = t.stop_ns.unwrap_or(self.end).min(self.end);
            let alive = alive_to.saturating_sub(t.start_ns).max(1);
            let mut st = TaskStats {
                name: t.name.clone(),
                nice: t.nice,
                weight: t.weight,
                slice_ns: self.rq.slice_ns(i),
                runtime_ns: t.runtime_ns,
                cpu_share: t.runtime_ns as f64 / alive as f64,
                switches_in: t.switches_in,
                preempted: t.preempted,
                lag_min_vns: t.lag_min,
                lag_max_vns: t.lag_max,
                wait_max_ns: t.wait_max_ns,
                wait_total_ns: t.wait_total_ns,
                run_max_ns: t.run_max_ns,
                lag_errors: self.rq.lag_errors(i),
                lag_clamped_pos: self.rq.lag_clamps(i)[0],
                lag_clamped_neg: self.rq.lag_clamps(i)[1],
                ..TaskStats::default()
            };
            st.set_latencies(&mut t.latencies);
            tasks.push(st);
        }
        let report = Report {
            scenario: sc.name.clone(),
            duration_ns: self.end,
            hz: sc.hz,
            base_slice_ns: sc.base_slice_ns(),
            features: self.rq.initial_features(),
            idle_ns: self.idle_ns,
            context_switches: self.context_switches,
            events: self.nr_events,
            lag_errors: tasks.iter().map(|t| t.lag_errors).sum(),
            tasks,
        };
        let timeline = (self.pic_to > self.pic_from).then(|| TimelineData {
            title: sc.name.clone(),
            notes: Vec::new(),
            lanes: self.tasks.iter().map(|t| t.name.clone()).collect(),
            from_ns: self.pic_from,
            to_ns: self.pic_to,
            segments: std::mem::take(&mut self.segments),
            wakeups: std::mem::take(&mut self.wakeups),
        });
        RunResult { report, timeline }
    }
}

/// The text lines printed under a picture's title: the feature set that differs from the
/// defaults, then per task its CPU share and wakeup latency (first 12 tasks).
pub fn picture_notes(r: &Report) -> Vec<String> {
    let mut notes = Vec::new();
    let on: Vec<String> = r
        .features
        .iter()
        .filter(|(n, v)| FeatureSet::default_of(n) != Some(*v))
        .map(|(n, v)| if *v { n.clone() } else { format!("NO_{n}") })
        .collect();
    notes.push(format!(
        "HZ={} base slice {} us; features: 6.12 defaults{}{}",
        r.hz,
        r.base_slice_ns / 1000,
        if on.is_empty() { "" } else { " + " },
        on.join(" ")
    ));
    for t in r.tasks.iter().take(12) {
        notes.push(format!(
            "{:<14} share {:.3}  wakeup latency us: min {:.0} avg {:.0} p99 {:.0} max {:.0}",
            t.name,
            t.cpu_share,
            t.wakeup_latency_min_ns as f64 / 1e3,
            t.wakeup_latency_avg_ns / 1e3,
            t.wakeup_latency_p99_ns as f64 / 1e3,
            t.wakeup_latency_max_ns as f64 / 1e3
        ));
    }
    notes
}
