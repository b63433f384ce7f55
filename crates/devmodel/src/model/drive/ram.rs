//! Memory as a device.

use super::super::base::{earliest, Alloc};
use crate::params::{device_params, DeviceParams};
use crate::spec::Spec;
use crate::state::St;
use crate::IoKind;

/// Memory: a fixed latency and a copy bandwidth per unit.
pub(crate) struct Ram {
    units: usize,
    n: usize,
    latency_ns: f64,
    bpns: f64,
}

impl Ram {
    pub(crate) fn new(spec: &Spec, alloc: &mut Alloc) -> Ram {
        let Spec::Device { entry, overrides } = spec else {
            unreachable!()
        };
        let DeviceParams::Ram(p) = device_params(entry, overrides) else {
            unreachable!("a memory device's entry")
        };
        let n = p.units.round().clamp(1.0, 64.0) as usize;
        Ram {
            units: alloc.take(n),
            n,
            latency_ns: p.latency_us * 1e3,
            bpns: p.bandwidth_mb_s * 1e6 / 1e9,
        }
    }

    pub(crate) fn submit(&self, st: St, t: u64, kind: IoKind, len: u64) -> u64 {
        if let IoKind::Flush = kind {
            return t;
        }
        let u = self.units + earliest(st, self.units, self.n);
        let start = t.max(st.get(u));
        let done = start + (self.latency_ns + len as f64 / self.bpns) as u64;
        st.set(u, done);
        done
    }

    pub(crate) fn idle_at(&self, st: St) -> u64 {
        st.get(self.units + earliest(st, self.units, self.n))
    }
}
