//! A sample's line (perf's `process_event`): the start, period, event name, synthesized
//! and tracepoint text, address, memory columns, then the ip or the callchain one frame
//! per line. Apart from the listing's state ([`super::Printer`]) and its settling of
//! events, which change for other reasons than what a line holds.

use std::borrow::Cow;

use super::fields::{Field, Fields};
use super::{line, meminfo, Printer, MAX_STACK};
use crate::callgraph::Order;
use crate::max_stack::cut_chain;
use crate::model::ResolvedSample;
use crate::process::{Location, Machine};
use crate::replay::SampleExtra;

impl Printer<'_> {
    /// Print the sample `s` of event `event` into the buffer, as its fields ask.
    pub(super) fn print(&mut self, m: &Machine, s: &ResolvedSample, x: &SampleExtra, event: usize) {
        // Fields borrowed apart: the event's name is written into the buffer as is.
        let ev = &self.events[event];
        let f = ev.fields;
        let chain = self.script.callchains && ev.callchain;
        let (tracepoint, addr_is_code, weight_struct) =
            (ev.tracepoint, ev.addr_is_code, ev.weight_struct);
        let comm = m.comms.get(s.ip.comm).map_or(":-1", String::as_str);
        // perf's sample CPU is -1 where the sample has none (printed where an AUX
        // trace allows -F cpu on such events).
        let cpu = s.cpu.unwrap_or(u32::MAX);
        line::start(
            &mut self.buf,
            &mut self.memos,
            f,
            chain,
            self.script.ns,
            comm,
            s.pid,
            s.tid,
            cpu,
            s.time.unwrap_or(0),
        );
        let buf = &mut self.buf;
        if f.has(Field::Period) {
            self.memos.period.uint(buf, s.period, 10);
            buf.push(b' ');
        }
        let bts = ev.bts;
        let bts_addr = bts && (f.has(Field::Addr) || ev.default_fields);
        if f.has(Field::Event) {
            line::right(buf, ev.name.as_bytes(), self.name_width);
            buf.extend_from_slice(b": ");
        }
        if let (true, Some(text)) = (f.has(Field::Synth), self.synth_text.take()) {
            buf.extend_from_slice(text.as_bytes());
        }
        if f.has(Field::Trace) {
            if let (Some(id), Some(raw), Some(traces)) = (tracepoint, &x.raw, &self.traces) {
                if let Some(text) = traces.text(id, raw) {
                    buf.extend_from_slice(text.as_bytes());
                }
            }
        }
        if f.has(Field::Addr) && !bts {
            let addr = x.addr.unwrap_or(0);
            line::hex(&mut self.buf, addr, 16);
            if addr_is_code {
                let t = s.ip.thread;
                let map = m.maps_of(t).find(addr).copied();
                let at = Location {
                    dso: map.map(|m| m.dso),
                    addr: map.map_or(addr, |m| m.map_ip(addr)),
                    ip: addr,
                    ..s.ip
                };
                self.frame_names(m, &at, f);
            }
        }
        // perf prints a BTS event's line (perf_sample__fprintf_bts) and returns before
        // the memory columns.
        if !bts {
            self.memory_columns(x, f, weight_struct);
        }
        if f.has(Field::Ip) {
            // A sample of an event with callchains lists its frames, none or many.
            if chain {
                self.buf.push(b'\n');
                // perf script's cursor walks the chain from the sample (callee order);
                // the frames from `unwound` on are unwound ones.
                let (frames, unwound) = if s.lbr {
                    let n = s.callchain.len();
                    (
                        Cow::Borrowed(&s.callchain[..n.min(MAX_STACK)]),
                        n - s.unwound.min(n),
                    )
                } else {
                    let n = Some(self.script.max_stack.unwrap_or(MAX_STACK));
                    let (frames, kept) = cut_chain(&s.callchain, n, Order::Callee, s.unwound);
                    let first = frames.len() - kept;
                    (frames, first)
                };
                for (i, at) in frames.iter().enumerate() {
                    self.buf.push(b'\t');
                    line::hex(&mut self.buf, m.chain_ip(at), 16);
                    if !(self.script.inline && i >= unwound && self.inlined(m, at, f)) {
                        self.frame_names(m, at, f);
                    }
                    self.buf.push(b'\n');
                }
            } else {
                self.buf.push(b' ');
                line::hex(&mut self.buf, s.ip.ip, 16);
                self.frame_names(m, &s.ip, f);
            }
        }
        // perf_sample__fprintf_bts: the branch's target after its source.
        if let (true, Some(to)) = (bts_addr, self.branch_to.take()) {
            self.buf.extend_from_slice(b" => ");
            line::hex(&mut self.buf, to.ip, 16);
            self.frame_names(m, &to, f);
        }
        self.buf.push(b'\n');
    }

    /// perf's data_src, weight and ins_lat columns, as `f` asks.
    fn memory_columns(&mut self, x: &SampleExtra, f: Fields, weight_struct: bool) {
        let show = [Field::DataSrc, Field::Weight, Field::InsLat].map(|g| f.has(g));
        let widest = &mut self.data_src_width;
        meminfo::columns(
            &mut self.buf,
            x.data_src,
            x.weight,
            weight_struct,
            show,
            widest,
        );
    }
}
