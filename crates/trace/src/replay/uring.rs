//! The io_uring replay worker: one thread drives many lanes through one ring, each lane with at
//! most one operation in flight. Buffers and descriptors are registered once, one clock read serves
//! a whole batch of completions, and nothing is allocated per operation — so the replay costs
//! about what `oltplab device` costs per I/O at the same queue depth.
//!
//! [`StreamWorker`] is btreplay's pair of threads for one record file: it submits its stream's
//! bunches back to back, each with one `io_uring_enter` (btreplay's one `io_submit`), while any of
//! its I/O control blocks is free, and frees a block as its completion is reaped.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use io_uring::{opcode, squeue, types, IoUring};
use oltplab_core::error::strerror;
use oltplab_core::{Error, Result};

use super::acc::Acc;
use super::plan::PlanOp;
use super::target::ReplayFile;
use super::{needs_buffered, Clock, LaneBuffers, Pacing};
use crate::Op;

pub struct UringWorker<'a> {
    pub lanes: Vec<&'a [PlanOp]>,
    pub files: &'a [ReplayFile],
    pub direct: bool,
    pub align_bytes: u64,
    pub pacing: &'a Pacing,
    pub clock: Clock,
    pub stop: &'a AtomicBool,
    pub done_ops: &'a AtomicU64,
}

struct Lane<'a> {
    ops: &'a [PlanOp],
    next: usize,
    issued_ns: u64,
    /// Modelled completion of the op in flight (emulating).
    deadline_ns: Option<u64>,
    /// The op's real I/O is done and the lane waits for its modelled completion; holds its result.
    holding: Option<i32>,
}

/// Why a lane sits in the timer heap: the heap's entries are (time, lane), and the lane's
/// `holding` says whether the time ends a modelled completion or is its next op's start.
type Timers = BinaryHeap<Reverse<(u64, u32)>>;

impl UringWorker<'_> {
    pub fn run(self) -> Result<Acc> {
        let n = self.lanes.len();
        let mut acc = Acc::default();
        if n == 0 {
            return Ok(acc);
        }
        let buffers = LaneBuffers::new(&self.lanes);
        let entries = (n as u32)
            .next_power_of_two()
            .clamp(8, super::MAX_URING_LANES as u32);
        let (mut ring, rs) = RingSetup::new(entries, self.files, &buffers)?;
        let RingSetup {
            fds,
            fixed_files,
            fixed_buffers,
            ext_arg,
        } = rs;

        let mut lanes: Vec<Lane> = self
            .lanes
            .iter()
            .map(|ops| Lane {
                ops,
                next: 0,
                issued_ns: 0,
                deadline_ns: None,
                holding: None,
            })
            .collect();
        let mut ready: Vec<u32> = Vec::with_capacity(n);
        let mut timers: Timers = BinaryHeap::new();
        let mut done: Vec<(u32, i32)> = Vec::new();
        let mut now = self.clock.now_ns();
        for (i, lane) in lanes.iter().enumerate() {
            if lane.ops.is_empty() {
                continue;
            }
            match self.pacing.due_ns(&lane.ops[0]) {
                Some(due) if due > now => timers.push(Reverse((due, i as u32))),
                _ => ready.push(i as u32),
            }
        }
        let mut in_flight = 0usize;
        let mut failure: Option<Error> = None;
        let mut completions: Vec<(u64, i32)> = Vec::with_capacity(entries as usize * 2);
        loop {
            if failure.is_some() || self.stop.load(Ordering::Relaxed) {
                ready.clear();
                timers.retain(|&Reverse((_, l))| lanes[l as usize].holding.is_some());
            }
            // Issue every ready lane's next operation.
            while let Some(l) = ready.pop() {
                let lane = &mut lanes[l as usize];
                let op = lane.ops[lane.next];
                lane.issued_ns = now;
                lane.deadline_ns = self.pacing.model_deadline_ns(&op, now, &self.clock);
                if op.op == Op::Truncate {
                    // io_uring has no ftruncate before Linux 6.9: done here, synchronously.
                    let f = &self.files[op.file as usize];
                    // SAFETY: ftruncate on a descriptor we own.
                    let rc = unsafe {
                        libc::ftruncate(f.buffered.as_raw_fd(), op.offset as libc::off_t)
                    };
                    done.push((l, if rc < 0 { -errno() } else { 0 }));
                    continue;
                }
                let (fd_index, unaligned) = self.descriptor(&op);
                acc.unaligned_ops += unaligned as u64;
                let target = if fixed_files {
                    Target::Fixed(fd_index)
                } else {
                    Target::Fd(fds[fd_index as usize])
                };
                let entry = if self.pacing.model_only(&op) {
                    opcode::Nop::new().build().user_data(l as u64)
                } else {
                    build_entry(&op, target, buffers.lane_ptr(l as usize), fixed_buffers)
                        .user_data(l as u64)
                };
                // SAFETY: the entry's buffer stays valid until its completion is reaped.
                unsafe { ring.submission().push(&entry) }.map_err(|_| {
                    Error::failed("io_uring submission queue overflow (more I/Os than lanes)")
                })?;
                in_flight += 1;
            }
            if in_flight == 0 && done.is_empty() {
                let Some(&Reverse((due, _))) = timers.peek() else {
                    break;
                };
                pace_until(&self.clock, due, self.stop);
            } else if in_flight > 0 {
                // Wake a calibrated margin before the next timer and poll the ring until it is due:
                // a timed wait overshoots as a sleep does.
                let wait = if !done.is_empty() {
                    Some(0)
                } else {
                    let early = oltplab_devmodel::spin_margin_ns();
                    timers
                        .peek()
                        .map(|&Reverse((due, _))| due.saturating_sub(now).saturating_sub(early))
                };
                let submitter = ring.submitter();
                let result = match wait {
                    None => submitter.submit_and_wait(1),
                    Some(ns) if ext_arg => {
                        let ts = types::Timespec::from(Duration::from_nanos(ns.max(1)));
                        let args = types::SubmitArgs::new().timespec(&ts);
                        submitter.submit_with_args(1, &args)
                    }
                    Some(ns) => {
                        let r = submitter.submit();
                        std::thread::sleep(Duration::from_nanos(ns.min(100_000)));
                        r
                    }
                };
                match result {
                    Ok(_) => {}
                    Err(e)
                        if matches!(
                            e.raw_os_error(),
                            Some(libc::ETIME)
                                | Some(libc::EINTR)
                                | Some(libc::EBUSY)
                                | Some(libc::EAGAIN)
                        ) => {}
                    Err(e) => {
                        // Nothing can be reaped reliably any more; the kernel still owns buffers.
                        drain(&mut ring, in_flight);
                        return Err(Error::failed(format!("io_uring_enter failed: {e}")));
                    }
                }
                completions.extend(ring.completion().map(|c| (c.user_data(), c.result())));
            }
            now = self.clock.now_ns();
            let batch = completions.len() + done.len();
            in_flight -= completions.len();
            for (l, res) in completions
                .drain(..)
                .map(|(l, r)| (l as u32, r))
                .chain(done.drain(..))
            {
                let lane = &mut lanes[l as usize];
                let op = lane.ops[lane.next];
                if let Some(err) = check(&op, res, &self.files[op.file as usize], &mut acc) {
                    failure.get_or_insert(err);
                    continue;
                }
                match lane.deadline_ns {
                    // The real I/O beat the modelled device: the lane waits for the model.
                    Some(deadline) if deadline > now => {
                        lane.holding = Some(res);
                        timers.push(Reverse((deadline, l)));
                    }
                    _ => self.finish(lane, l, res, now, &mut acc, &mut ready, &mut timers),
                }
            }
            if batch > 0 {
                self.done_ops.fetch_add(batch as u64, Ordering::Relaxed);
            }
            // Lanes whose time has come: held ones complete, waiting ones become ready.
            while let Some(&Reverse((due, l))) = timers.peek() {
                if due > now {
                    break;
                }
                timers.pop();
                let lane = &mut lanes[l as usize];
                match lane.holding.take() {
                    Some(res) => self.finish(lane, l, res, now, &mut acc, &mut ready, &mut timers),
                    None => ready.push(l),
                }
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        Ok(acc)
    }

    /// Accounts the lane's op as completed at `now` and schedules its next one.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn finish(
        &self,
        lane: &mut Lane,
        l: u32,
        res: i32,
        now: u64,
        acc: &mut Acc,
        ready: &mut Vec<u32>,
        timers: &mut Timers,
    ) {
        let op = lane.ops[lane.next];
        let latency = now.saturating_sub(lane.issued_ns);
        if let Some(deadline) = lane.deadline_ns {
            self.pacing
                .record_realised(deadline.saturating_sub(lane.issued_ns), latency);
        }
        acc.complete(&op, now, latency, res.max(0) as u64);
        lane.next += 1;
        if lane.next < lane.ops.len() {
            match self.pacing.due_ns(&lane.ops[lane.next]) {
                Some(due) if due > now => timers.push(Reverse((due, l))),
                _ => ready.push(l),
            }
        }
    }

    /// The registered descriptor index for `op`, and whether it had to go buffered.
    fn descriptor(&self, op: &PlanOp) -> (u32, bool) {
        let main = op.file as u32 * 2;
        if needs_buffered(op, self.direct, self.align_bytes) {
            (main + 1, true)
        } else {
            (main, false)
        }
    }
}

/// A ring with the replay's files (and buffers, where the kernel takes them) registered.
struct RingSetup {
    /// Descriptor 2i is file i's main descriptor (direct when direct), 2i+1 its buffered one.
    fds: Vec<RawFd>,
    fixed_files: bool,
    fixed_buffers: bool,
    ext_arg: bool,
}

impl RingSetup {
    fn new(entries: u32, files: &[ReplayFile], buffers: &LaneBuffers) -> Result<(IoUring, Self)> {
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_coop_taskrun()
            .setup_defer_taskrun()
            .setup_cqsize(entries * 2)
            .build(entries)
            .or_else(|_| IoUring::builder().setup_cqsize(entries * 2).build(entries))
            .map_err(|e| {
                Error::failed(format!(
                    "cannot set up io_uring with {entries} entries: {e}"
                ))
            })?;
        let fds: Vec<RawFd> = files
            .iter()
            .flat_map(|f| {
                let main = f.direct.as_ref().unwrap_or(&f.buffered).as_raw_fd();
                [main, f.buffered.as_raw_fd()]
            })
            .collect();
        let submitter = ring.submitter();
        let fixed_files = submitter.register_files(&fds).is_ok();
        // SAFETY: the buffers outlive the ring's use of them: every I/O is reaped before returning.
        let fixed_buffers = buffers.len_bytes() > 0
            && unsafe { submitter.register_buffers(&[buffers.iovec()]) }.is_ok();
        let ext_arg = ring.params().is_feature_ext_arg();
        Ok((
            ring,
            Self {
                fds,
                fixed_files,
                fixed_buffers,
                ext_arg,
            },
        ))
    }

    /// The entry for `op` into `buf`, or a no-op for a sync only the model times.
    fn entry(
        &self,
        op: &PlanOp,
        fd_index: u32,
        buf: *mut u8,
        pacing: &Pacing,
        user_data: u64,
    ) -> squeue::Entry {
        if pacing.model_only(op) {
            return opcode::Nop::new().build().user_data(user_data);
        }
        let target = if self.fixed_files {
            Target::Fixed(fd_index)
        } else {
            Target::Fd(self.fds[fd_index as usize])
        };
        build_entry(op, target, buf, self.fixed_buffers).user_data(user_data)
    }

    /// Submits what is queued and waits for a completion, at most `wait_ns` (`None`: until one
    /// comes; `Some(0)`: not at all).
    fn submit_and_wait(&self, ring: &mut IoUring, wait_ns: Option<u64>) -> std::io::Result<()> {
        let submitter = ring.submitter();
        let result = match wait_ns {
            None => submitter.submit_and_wait(1),
            Some(ns) if self.ext_arg => {
                let ts = types::Timespec::from(Duration::from_nanos(ns.max(1)));
                let args = types::SubmitArgs::new().timespec(&ts);
                submitter.submit_with_args(1, &args)
            }
            Some(ns) => {
                let r = submitter.submit();
                std::thread::sleep(Duration::from_nanos(ns.min(100_000)));
                r
            }
        };
        match result {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}

/// One btreplay stream (the I/O of one traced CPU on one device), as btreplay's submitting and
/// reaping threads replay one record file with `-N`: bunch after bunch, each bunch (or the part of
/// it that free control blocks allow) in one submit, nothing waiting for a completion except a
/// bunch that finds every one of the `iocbs` blocks in flight. With `--time-scale` a bunch waits
/// for its traced time, as btreplay without `-N` does.
pub struct StreamWorker<'a> {
    pub ops: &'a [PlanOp],
    /// The index of each bunch's first operation.
    pub bunches: &'a [u32],
    pub iocbs: usize,
    pub files: &'a [ReplayFile],
    pub direct: bool,
    pub align_bytes: u64,
    pub pacing: &'a Pacing,
    pub clock: Clock,
    pub stop: &'a AtomicBool,
    pub done_ops: &'a AtomicU64,
}

/// A control block in use: its operation, when it was issued, its modelled completion.
#[derive(Clone, Copy, Default)]
struct Block {
    op: usize,
    issued_ns: u64,
    deadline_ns: Option<u64>,
}

impl StreamWorker<'_> {
    pub fn run(self) -> Result<Acc> {
        let mut acc = Acc::default();
        let n_ops = self.ops.len();
        if n_ops == 0 || self.bunches.is_empty() {
            return Ok(acc);
        }
        let slots = self.iocbs.clamp(1, n_ops);
        // A buffer per control block, each as large as the stream's largest read or write.
        let buffers = LaneBuffers::new(&vec![self.ops; slots]);
        let entries = (slots as u32)
            .next_power_of_two()
            .clamp(8, super::MAX_URING_LANES as u32);
        let (mut ring, rs) = RingSetup::new(entries, self.files, &buffers)?;
        let mut free: Vec<u32> = (0..slots as u32).rev().collect();
        let mut blocks = vec![Block::default(); slots];
        // Blocks whose real I/O is done but whose modelled completion is still ahead.
        let mut held: BinaryHeap<Reverse<(u64, u32, i32)>> = BinaryHeap::new();
        let mut done: Vec<(u32, i32)> = Vec::new();
        let mut completions: Vec<(u64, i32)> = Vec::with_capacity(entries as usize * 2);
        let (mut next, mut bunch, mut in_flight) = (0usize, 0usize, 0usize);
        let mut failure: Option<Error> = None;
        let mut now = self.clock.now_ns();
        loop {
            let stopping = failure.is_some() || self.stop.load(Ordering::Relaxed);
            // Bunches back to back while control blocks are free.
            let mut due_wait: Option<u64> = None;
            while !stopping && next < n_ops && !free.is_empty() {
                let start = self.bunches[bunch] as usize;
                let end = self.bunches.get(bunch + 1).map_or(n_ops, |&e| e as usize);
                if next == start {
                    if let Some(due) = self.pacing.due_ns(&self.ops[start]) {
                        if due > now {
                            due_wait = Some(due);
                            break;
                        }
                    }
                }
                let n = free.len().min(end - next);
                for i in next..next + n {
                    let slot = free.pop().expect("counted free blocks");
                    let op = self.ops[i];
                    blocks[slot as usize] = Block {
                        op: i,
                        issued_ns: now,
                        deadline_ns: self.pacing.model_deadline_ns(&op, now, &self.clock),
                    };
                    if op.op == Op::Truncate {
                        let f = &self.files[op.file as usize];
                        // SAFETY: ftruncate on a descriptor we own.
                        let rc = unsafe {
                            libc::ftruncate(f.buffered.as_raw_fd(), op.offset as libc::off_t)
                        };
                        done.push((slot, if rc < 0 { -errno() } else { 0 }));
                        continue;
                    }
                    let main = op.file as u32 * 2;
                    let unaligned = needs_buffered(&op, self.direct, self.align_bytes);
                    acc.unaligned_ops += unaligned as u64;
                    let entry = rs.entry(
                        &op,
                        main + unaligned as u32,
                        buffers.lane_ptr(slot as usize),
                        self.pacing,
                        slot as u64,
                    );
                    // SAFETY: the block's buffer stays valid until its completion is reaped.
                    unsafe { ring.submission().push(&entry) }.map_err(|_| {
                        Error::failed("io_uring submission queue overflow (more I/Os than blocks)")
                    })?;
                    in_flight += 1;
                }
                next += n;
                if next == end {
                    bunch += 1;
                }
                // One submit per bunch, as btreplay's io_submit.
                if let Err(e) = ring.submit() {
                    if !matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EAGAIN)) {
                        drain(&mut ring, in_flight);
                        return Err(Error::failed(format!("io_uring_enter failed: {e}")));
                    }
                }
            }
            let next_timer = held
                .peek()
                .map(|&Reverse((t, _, _))| t)
                .into_iter()
                .chain(due_wait)
                .min();
            if in_flight == 0 && done.is_empty() {
                match next_timer {
                    Some(t) => pace_until(&self.clock, t, self.stop),
                    None if next >= n_ops || stopping => break,
                    None => {}
                }
            } else if in_flight > 0 {
                let wait = if !done.is_empty() {
                    Some(0)
                } else {
                    let early = oltplab_devmodel::spin_margin_ns();
                    next_timer.map(|t| t.saturating_sub(now).saturating_sub(early))
                };
                if let Err(e) = rs.submit_and_wait(&mut ring, wait) {
                    drain(&mut ring, in_flight);
                    return Err(Error::failed(format!("io_uring_enter failed: {e}")));
                }
                completions.extend(ring.completion().map(|c| (c.user_data(), c.result())));
            }
            now = self.clock.now_ns();
            in_flight -= completions.len();
            let mut finished = 0u64;
            for (slot, res) in completions
                .drain(..)
                .map(|(s, r)| (s as u32, r))
                .chain(done.drain(..))
            {
                let b = blocks[slot as usize];
                let op = self.ops[b.op];
                if let Some(err) = check(&op, res, &self.files[op.file as usize], &mut acc) {
                    failure.get_or_insert(err);
                    free.push(slot);
                    continue;
                }
                match b.deadline_ns {
                    Some(deadline) if deadline > now => held.push(Reverse((deadline, slot, res))),
                    _ => {
                        self.finish(b, res, now, &mut acc);
                        free.push(slot);
                        finished += 1;
                    }
                }
            }
            while let Some(&Reverse((deadline, slot, res))) = held.peek() {
                if deadline > now {
                    break;
                }
                held.pop();
                self.finish(blocks[slot as usize], res, now, &mut acc);
                free.push(slot);
                finished += 1;
            }
            if finished > 0 {
                self.done_ops.fetch_add(finished, Ordering::Relaxed);
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        Ok(acc)
    }

    #[inline]
    fn finish(&self, b: Block, res: i32, now: u64, acc: &mut Acc) {
        let latency = now.saturating_sub(b.issued_ns);
        if let Some(deadline) = b.deadline_ns {
            self.pacing
                .record_realised(deadline.saturating_sub(b.issued_ns), latency);
        }
        acc.complete(&self.ops[b.op], now, latency, res.max(0) as u64);
    }
}

/// Waits until `due_ns` (replay time): a sleep that ends a calibrated margin early, then a spin,
/// because sleeps on a busy machine overshoot by tens of µs or more.
pub(super) fn sleep_until(clock: &Clock, due_ns: u64) {
    oltplab_devmodel::wait_until(clock.t0_ns + due_ns);
}

/// [`sleep_until`] that ends early when `stop` is set, looking at it every 100 ms: a traced idle
/// gap, or a crafted time years away, must not outlast Ctrl-C.
pub(super) fn pace_until(clock: &Clock, due_ns: u64, stop: &AtomicBool) {
    const SLICE_NS: u64 = 100_000_000;
    loop {
        let left = due_ns.saturating_sub(clock.now_ns());
        if stop.load(Ordering::Relaxed) || left == 0 {
            return;
        }
        if left <= SLICE_NS {
            return sleep_until(clock, due_ns);
        }
        std::thread::sleep(Duration::from_nanos(SLICE_NS));
    }
}

/// Turns a completion into an error, or `None` if the replay may go on (counting what it must).
pub(super) fn check(op: &PlanOp, res: i32, file: &ReplayFile, acc: &mut Acc) -> Option<Error> {
    if res >= 0 {
        return None;
    }
    let errno = -res;
    let optional = matches!(op.op, Op::Trim | Op::Fallocate | Op::SyncRange);
    if optional && matches!(errno, libc::EOPNOTSUPP | libc::EINVAL | libc::ENOSYS) {
        acc.unsupported_ops += 1;
        return None;
    }
    Some(Error::failed(format!(
        "replaying a {} of {} bytes at offset {} of {} failed: {}",
        op.op.name(),
        op.len,
        op.offset,
        file.path.display(),
        strerror(errno)
    )))
}

pub(super) fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

enum Target {
    Fixed(u32),
    Fd(RawFd),
}

fn build_entry(op: &PlanOp, target: Target, buf: *mut u8, fixed_buffers: bool) -> squeue::Entry {
    macro_rules! build {
        ($t:expr) => {
            match op.op {
                Op::Read if fixed_buffers => opcode::ReadFixed::new($t, buf, op.len, 0)
                    .offset(op.offset)
                    .build(),
                Op::Read => opcode::Read::new($t, buf, op.len).offset(op.offset).build(),
                Op::Write if fixed_buffers => opcode::WriteFixed::new($t, buf, op.len, 0)
                    .offset(op.offset)
                    .build(),
                Op::Write => opcode::Write::new($t, buf, op.len)
                    .offset(op.offset)
                    .build(),
                Op::Fsync => opcode::Fsync::new($t).build(),
                Op::Fdatasync => opcode::Fsync::new($t)
                    .flags(types::FsyncFlags::DATASYNC)
                    .build(),
                Op::SyncRange => opcode::SyncFileRange::new($t, op.len)
                    .offset(op.offset)
                    .flags(libc::SYNC_FILE_RANGE_WRITE as u32)
                    .build(),
                Op::Trim => opcode::Fallocate::new($t, op.len as u64)
                    .offset(op.offset)
                    .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                    .build(),
                Op::Fallocate => opcode::Fallocate::new($t, op.len as u64)
                    .offset(op.offset)
                    .build(),
                Op::Truncate => unreachable!("truncate is done synchronously"),
            }
        };
    }
    match target {
        Target::Fixed(i) => build!(types::Fixed(i)),
        Target::Fd(fd) => build!(types::Fd(fd)),
    }
}

/// Waits for every I/O still in flight, so their buffers can be freed.
fn drain(ring: &mut IoUring, mut in_flight: usize) {
    for _ in 0..10_000 {
        if in_flight == 0 {
            return;
        }
        let _ = ring.submit_and_wait(1);
        in_flight = in_flight.saturating_sub(ring.completion().count());
    }
}
