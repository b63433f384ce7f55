//! A RAID set: one I/O split into pieces on identical members (any [`Model`]).

use super::base::{Ctx, Model};
use crate::spec::RaidLevel;
use crate::state::St;
use crate::IoKind;

/// A RAID set of identical members.
pub(crate) struct Raid<M> {
    pub(super) level: RaidLevel,
    pub(super) members: Vec<M>,
    pub(super) stripe: u64,
}

/// One piece of an I/O on one member.
#[derive(Clone, Copy, Debug)]
struct Part {
    member: usize,
    addr: u64,
    len: u64,
    /// raid5: the stripe row and the parity member of that row.
    row: u64,
    parity: usize,
}

impl<M: Model> Raid<M> {
    /// Splits [addr, addr+len) into pieces per data chunk; `data_members` chunks per stripe row.
    fn split(
        &self,
        addr: u64,
        len: u64,
        data_members: u64,
        mut place: impl FnMut(u64) -> (usize, usize),
    ) -> Vec<Part> {
        let mut parts = Vec::new();
        let mut at = addr;
        let end = addr + len.max(1);
        while at < end {
            let chunk = at / self.stripe;
            let within = at % self.stripe;
            let n = (self.stripe - within).min(end - at);
            let row = chunk / data_members;
            let (member, parity) = place(chunk);
            parts.push(Part {
                member,
                addr: row * self.stripe + within,
                len: n,
                row,
                parity,
            });
            at += n;
        }
        parts
    }

    pub(super) fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        let n = self.members.len();
        if let IoKind::Flush = kind {
            return self
                .members
                .iter()
                .map(|m| m.submit(cx, t, kind, 0, 0))
                .max()
                .unwrap_or(t);
        }
        match self.level {
            RaidLevel::Raid0 => self
                .split(addr, len, n as u64, |c| ((c % n as u64) as usize, 0))
                .iter()
                .map(|p| self.members[p.member].submit(cx, t, kind, p.addr, p.len))
                .max()
                .unwrap_or(t),
            RaidLevel::Raid1 => self.mirror(cx, t, kind, &(0..n).collect::<Vec<_>>(), addr, len),
            RaidLevel::Raid10 => {
                let pairs = (n / 2) as u64;
                self.split(addr, len, pairs, |c| ((c % pairs) as usize, 0))
                    .iter()
                    .map(|p| {
                        self.mirror(
                            cx,
                            t,
                            kind,
                            &[2 * p.member, 2 * p.member + 1],
                            p.addr,
                            p.len,
                        )
                    })
                    .max()
                    .unwrap_or(t)
            }
            RaidLevel::Raid5 => self.raid5(cx, t, kind, addr, len),
        }
    }

    /// Reads go to the mirror that is free first; writes go to all.
    fn mirror(&self, cx: Ctx, t: u64, kind: IoKind, set: &[usize], addr: u64, len: u64) -> u64 {
        match kind {
            IoKind::Read => {
                let m = *set
                    .iter()
                    .min_by_key(|&&m| self.members[m].idle_at(cx.st))
                    .expect("mirror sets are not empty");
                self.members[m].submit(cx, t, kind, addr, len)
            }
            _ => set
                .iter()
                .map(|&m| self.members[m].submit(cx, t, kind, addr, len))
                .max()
                .unwrap_or(t),
        }
    }

    fn raid5(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        let n = self.members.len();
        let data = (n - 1) as u64;
        // Left-symmetric layout: parity rotates from the last member to the first, data follows it.
        let parts = self.split(addr, len, data, |c| {
            let row = c / data;
            let parity = (n - 1) - (row % n as u64) as usize;
            let member = (parity + 1 + (c % data) as usize) % n;
            (member, parity)
        });
        if let IoKind::Read = kind {
            return parts
                .iter()
                .map(|p| self.members[p.member].submit(cx, t, kind, p.addr, p.len))
                .max()
                .unwrap_or(t);
        }
        let mut done = t;
        let mut i = 0;
        while i < parts.len() {
            let row = parts[i].row;
            let j = parts[i..]
                .iter()
                .position(|p| p.row != row)
                .map_or(parts.len(), |k| i + k);
            let in_row = &parts[i..j];
            let parity = in_row[0].parity;
            let full_row =
                in_row.len() as u64 == data && in_row.iter().all(|p| p.len == self.stripe);
            let lo = in_row.iter().map(|p| p.addr).min().unwrap_or(0);
            let hi = in_row.iter().map(|p| p.addr + p.len).max().unwrap_or(0);
            // A small write reads the old data and the old parity, then writes both back. Each
            // member does its read before its write (one queue per member); the write is done when
            // the reads it depends on and the writes are. Submitting the writes at the reads'
            // completion instead would reserve the members' future and stall everything after it.
            let mut reads = t;
            if !full_row {
                for p in in_row {
                    reads = reads.max(self.members[p.member].submit(
                        cx,
                        t,
                        IoKind::Read,
                        p.addr,
                        p.len,
                    ));
                }
                reads = reads.max(self.members[parity].submit(cx, t, IoKind::Read, lo, hi - lo));
            }
            done = done.max(reads);
            for p in in_row {
                done = done.max(self.members[p.member].submit(cx, t, IoKind::Write, p.addr, p.len));
            }
            done = done.max(self.members[parity].submit(cx, t, IoKind::Write, lo, hi - lo));
            i = j;
        }
        done
    }

    pub(super) fn idle_at(&self, st: St) -> u64 {
        self.members
            .iter()
            .map(|m| m.idle_at(st))
            .max()
            .unwrap_or(0)
    }
}
