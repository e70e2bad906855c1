//! SAMPLE through the allow list. Its numbers are kept (ip, pid and tid, time, addr,
//! ids, cpu, period, counter values, branch records, weight, data source, transaction,
//! physical address, cgroup id, page sizes: what the kernel and the hardware measured).
//! Kept, past these, only when `keep_raw` says so: RAW payloads (rebuilt from their
//! tracepoint's format otherwise, see `raw`), user stacks, registers and AUX snapshots,
//! which are the program's memory (zeroed otherwise). A callchain entry that is no code
//! address is zeroed: a user one that lies in no executable mapping the recording
//! announced so far (the kernel's frame-pointer walk reads return addresses from the
//! user's stack, and where the frames end it reads whatever lies there: the environment
//! and argv are at the top of the stack), or a kernel one that is no kernel address. A
//! sample whose id matches no attr, whose pid, tid or cpu no kernel gives, or whose
//! bytes do not fit its event's layout (or run past it) is left out; perf drops the
//! first too.

use std::collections::BTreeMap;

use perfdata_core::record::{misc, RecordBody, Sample, SampleView};
use perfdata_core::RecordRef;

use super::checks::{self, located_ok};
use super::{Anonymize, Fate};
use crate::edit::Action;
use crate::error::Result;

/// PERF_CONTEXT_MAX: callchain entries from here up are context markers.
const CONTEXT_MAX: u64 = -4095i64 as u64;
/// PERF_CONTEXT_USER and PERF_CONTEXT_GUEST_USER.
const USER_CONTEXTS: [u64; 2] = [-512i64 as u64, -2560i64 as u64];
/// What the summary calls the callchain entries zeroed.
pub(super) const STRAY: &str = "callchain entries that are no code address (stack contents)";
/// Bytes of a RAW tracepoint payload kept when no format describes it: the common
/// fields (common_type, flags, preempt_count, common_pid), which say which tracepoint
/// and which task.
const RAW_COMMON: usize = 8;

/// The executable address ranges the recording's MMAP and MMAP2 records announced so
/// far, of every process, merged: as many as there are distinct mappings.
#[derive(Debug, Default)]
pub(super) struct ExecRanges(BTreeMap<u64, u64>);

/// The end of user address space on every architecture (x86's five-level paging, 57
/// bits, reaches it): eight bytes of text, read as an address, are past it.
const USER_END: u64 = 1 << 56;
/// No executable mapping is a terabyte long.
const MAP_LIMIT: u64 = 1 << 40;

impl ExecRanges {
    /// Add a user mapping; a kernel one (or one no kernel makes, its length or address
    /// damaged) is not where user return addresses are.
    pub(super) fn add(&mut self, addr: u64, len: u64) {
        let (mut start, mut end) = (addr, addr.saturating_add(len));
        if start >= end || len > MAP_LIMIT || end > USER_END {
            return;
        }
        // Merge with every range it touches.
        let touching: Vec<(u64, u64)> = self
            .0
            .range(..=end)
            .rev()
            .take_while(|(_, &e)| e >= start)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in touching {
            self.0.remove(&s);
            start = start.min(s);
            end = end.max(e);
        }
        self.0.insert(start, end);
    }

    pub(super) fn contains(&self, addr: u64) -> bool {
        self.0
            .range(..=addr)
            .next_back()
            .is_some_and(|(_, &end)| addr < end)
    }
}

/// Whether `misc`'s cpumode is a user one (user, guest user).
fn user_mode(misc: u16) -> bool {
    matches!(misc & misc::CPUMODE_MASK, 2 | 5)
}

/// Whether `ip` can be a kernel address: in the top 2^48 bytes of the 64-bit space,
/// where every 64-bit kernel lives, or below 4 GiB, a 32-bit kernel's.
fn kernel_like(ip: u64) -> bool {
    !(1 << 32..0xffff_0000_0000_0000).contains(&ip)
}

/// The entries of a callchain that are no code address, with the sample's `misc`
/// saying the context before the first marker: user entries that lie in no executable
/// mapping, and kernel entries that are no kernel address (a marker damaged leaves the
/// user's entries in the kernel's context).
pub(super) fn stray_entries<'a>(
    ips: impl Iterator<Item = u64> + 'a,
    misc: u16,
    exec: &'a ExecRanges,
) -> impl Iterator<Item = usize> + 'a {
    let mut user = user_mode(misc);
    ips.enumerate().filter_map(move |(i, ip)| {
        if ip >= CONTEXT_MAX {
            user = USER_CONTEXTS.contains(&ip);
            return None;
        }
        let code = ip == 0
            || if user {
                exec.contains(ip)
            } else {
                kernel_like(ip)
            };
        (!code).then_some(i)
    })
}

/// Whether the view holds anything [`Anonymize::sample_fields`] would change.
fn needs_rewrite(v: &SampleView<'_>, body_len: usize, keep_raw: bool, stray: bool) -> bool {
    let payloads = v.raw.is_some_and(|r| !r.is_empty())
        || v.stack_user.as_ref().is_some_and(|s| !s.data.is_empty())
        || [&v.regs_user, &v.regs_intr]
            .iter()
            .any(|r| r.as_ref().is_some_and(|r| !r.regs.is_empty()))
        || v.aux.is_some_and(|a| !a.is_empty());
    (payloads && !keep_raw) || stray || v.len != body_len || v.cpu.is_some_and(|c| c.res != 0)
}

impl Anonymize {
    pub(super) fn sample(&mut self, item: &RecordRef<'_>) -> Result<Action> {
        let event = match checks::event_of(item, true) {
            Ok(e) => e,
            Err(fate) => return self.leave_out(item, fate),
        };
        let Some(layout) = item.meta.events().layout(event) else {
            return self.leave_out(item, Fate::unvouched("no attr describes its layout"));
        };
        let body = item.raw.bytes.get(8..).unwrap_or_default();
        let endian = item.meta.endian;
        let Ok(view) = SampleView::parse(body, layout, endian, item.raw.offset + 8) else {
            return self.leave_out(
                item,
                Fate::unvouched("its bytes do not fit its event's layout"),
            );
        };
        let tid = view.tid.map(|t| (t.pid, t.tid));
        let ids = [view.id, view.stream_id, view.identifier];
        let cpu = view.cpu.map(|c| c.cpu);
        let read_ok = view.read.as_ref().is_none_or(|r| {
            let times = [r.time_enabled(), r.time_running()];
            checks::read_ok(item.meta, times, r.values())
        });
        if !read_ok || !located_ok(item.meta, tid, view.time, ids, cpu) {
            return self.leave_out(item, Fate::unvouched("numbers no kernel or perf gives"));
        }
        let misc = item.raw.header.misc;
        let stray = view
            .callchain
            .as_ref()
            .is_some_and(|c| stray_entries(c.iter(), misc, &self.exec).next().is_some());
        if !needs_rewrite(&view, body.len(), self.keep_raw, stray) {
            return Ok(Action::Keep);
        }
        let mut record = match item.decode() {
            Ok(r) => r,
            Err(_) => {
                return self.leave_out(
                    item,
                    Fate::unvouched("its bytes do not fit its event's layout"),
                )
            }
        };
        let RecordBody::Sample(s) = &mut record.body else {
            return self.leave_out(
                item,
                Fate::unvouched("its bytes do not fit its event's layout"),
            );
        };
        if let Err(why) = self.sample_fields(event, misc, s) {
            return self.leave_out(item, Fate::Unvouched(format!("its RAW payload: {why}")));
        }
        self.write(item, record)
    }

    /// Zero (or rebuild) what a sample holds that cannot be vouched for. Strict: a
    /// tracepoint's RAW payload its format does not lay out is an error (why).
    fn sample_fields(&self, event: usize, misc: u16, s: &mut Sample) -> Result<(), &'static str> {
        if let Some(cpu) = &mut s.cpu {
            cpu.res = 0; // reserved
        }
        if let Some(chain) = &mut s.callchain {
            let stray: Vec<usize> =
                stray_entries(chain.ips.iter().copied(), misc, &self.exec).collect();
            for &i in &stray {
                chain.ips[i] = 0;
            }
            self.counts.borrow_mut().zero(STRAY, stray.len() as u64);
        }
        if self.keep_raw {
            return Ok(());
        }
        let mut c = self.counts.borrow_mut();
        if let Some(raw) = &mut s.raw {
            match self.raw.rebuild(event, &raw.data, &self.names) {
                Ok(r) => {
                    raw.data = r.data;
                    c.raw_rebuilt += 1;
                    c.raw_fields(r.event, r.zeroed);
                }
                Err(Some(why)) if self.strict => return Err(why),
                Err(why) => {
                    if let Some(why) = why {
                        c.unvouched(&format!("RAW payloads past their common fields ({why})"));
                    }
                    if raw.data.len() > RAW_COMMON {
                        raw.data[RAW_COMMON..].fill(0);
                        c.raw_zeroed += 1;
                    }
                }
            }
        }
        if let Some(stack) = &mut s.stack_user {
            if !stack.data.is_empty() {
                stack.data.fill(0);
                c.stack_zeroed += 1;
            }
        }
        let mut regs = false;
        for r in [&mut s.regs_user, &mut s.regs_intr].into_iter().flatten() {
            if !r.regs.is_empty() {
                r.regs.fill(0);
                regs = true;
            }
        }
        c.regs_zeroed += u64::from(regs);
        if let Some(aux) = &mut s.aux {
            if !aux.data.is_empty() {
                aux.data.fill(0);
                c.aux_zeroed += 1;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_ranges_merge_and_contain() {
        let mut r = ExecRanges::default();
        r.add(0x1000, 0x1000);
        r.add(0x3000, 0x1000);
        assert!(r.contains(0x1000) && r.contains(0x1fff) && !r.contains(0x2000));
        r.add(0x1800, 0x2000); // bridges both
        assert_eq!(r.0.len(), 1);
        assert!(r.contains(0x2800) && r.contains(0x3fff) && !r.contains(0x4000));
        r.add(0, 0);
        assert!(!r.contains(0));
        // A length or an address no mapping has: not added.
        r.add(0x7f00_0000_0000, 1 << 60);
        r.add(0xffff_ffff_8100_0000, 0x1000);
        assert!(!r.contains(0x7f00_0000_1000) && !r.contains(0xffff_ffff_8100_0000));
    }

    #[test]
    fn entries_that_are_no_code_address_are_stray() {
        let mut exec = ExecRanges::default();
        exec.add(0x5000, 0x1000);
        let kernel = -128i64 as u64;
        let user = -512i64 as u64;
        // "anondir/" read from the stack as a return address.
        let text = u64::from_le_bytes(*b"anondir/");
        let ips = [kernel, 0xffffffff81000000, user, 0x5010, 0, text, 0x9000];
        let stray: Vec<usize> = stray_entries(ips.iter().copied(), 1, &exec).collect();
        assert_eq!(stray, vec![5, 6]);
        // The user marker damaged: the user's entries stand in the kernel's context.
        let ips = [
            kernel,
            0xffffffff81000000,
            user ^ 1 << 56,
            0x7f36e3024ad7,
            text,
        ];
        let stray: Vec<usize> = stray_entries(ips.iter().copied(), 1, &exec).collect();
        assert_eq!(stray, vec![2, 3, 4]);
        // No marker: the sample's cpumode says user.
        let stray: Vec<usize> = stray_entries([0x5010, text].into_iter(), 2, &exec).collect();
        assert_eq!(stray, vec![1]);
    }
}
