//! The decoder's buffers, and its fast forward towards a time: perf 6.1's
//! `intel_pt_fast_forward` (intel-pt-decoder.c) with the queue's lookahead over the
//! buffers still to come (intel-pt.c `intel_pt_lookahead`). perf script's `--time`
//! starts each queue's decoding at the last PSB before the range's start
//! ([`super::queues`]), so the states before it are never decoded.

use super::decoder::{Decoder, PktState};
use super::packet::{get_packet, Decoded, PacketContext, PacketType};
use super::state::InsnWalker;
use super::timing::eight_byte_tsc;

/// A queue's trace buffers, in order, each read when asked (and read again when the
/// fast forward looks ahead): perf's queue of `auxtrace_buffer`s.
pub trait Buffers: Send {
    /// How many buffers there are.
    fn count(&self) -> usize;
    /// Buffer `i`'s bytes and its reference TSC; `None` where it cannot be read (the
    /// queue's data then ends there).
    fn get(&self, i: usize) -> Option<(Vec<u8>, u64)>;
}

impl Buffers for Vec<(Vec<u8>, u64)> {
    fn count(&self) -> usize {
        self.len()
    }

    fn get(&self, i: usize) -> Option<(Vec<u8>, u64)> {
        self.as_slice().get(i).cloned()
    }
}

/// The PSB packet's 16 bytes.
const PSB: [u8; 16] = [
    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
];

/// `intel_pt_next_psb`: where the first PSB at or after `from` is.
fn next_psb(buf: &[u8], from: usize) -> Option<usize> {
    let rest = buf.get(from..)?;
    rest.windows(PSB.len())
        .position(|w| w == PSB)
        .map(|at| from + at)
}

/// `intel_pt_next_tsc`: the payload of the first TSC packet of the PSB+ at `buf`'s
/// start (none after PSBEND or a bad packet).
fn next_tsc(mut buf: &[u8]) -> Option<u64> {
    let mut ctx = PacketContext::None;
    while !buf.is_empty() {
        let Decoded::Packet(p, len) = get_packet(buf, &mut ctx) else {
            return None;
        };
        match p.kind {
            PacketType::Tsc => return Some(p.payload),
            PacketType::Psbend => return None,
            _ => buf = &buf[len..],
        }
    }
    None
}

impl<W: InsnWalker> Decoder<'_, W> {
    /// `intel_pt_fast_forward`: reposition at the last PSB whose TSC is before
    /// `timestamp` (TSC ticks): the buffers whose first PSB's TSC is before it are
    /// skipped to the last of them, then the PSBs of that buffer.
    pub fn fast_forward(&mut self, timestamp: u64) {
        // intel_pt_ff_cb over the buffers after the current one: the reference of
        // the last whose first PSB+ has a TSC before `timestamp`.
        let mut target = 0;
        for i in self.next_buffer..self.buffers.count() {
            let Some((data, reference)) = self.buffers.get(i) else {
                break;
            };
            let Some(tsc) = next_psb(&data, 0).and_then(|at| next_tsc(&data[at..])) else {
                continue;
            };
            if eight_byte_tsc(tsc, reference) < timestamp {
                target = reference;
            } else {
                break;
            }
        }
        if target != 0 {
            loop {
                // -ENOLINK (a new buffer, repositioned) is no error here.
                self.pos += self.buf().len() as u64;
                self.at = self.data.len();
                if self.get_data() == Err(super::decoder::Err::NoData) {
                    return;
                }
                if self.clock.buf_timestamp == target {
                    break;
                }
            }
        }
        if self.data.is_empty() {
            return;
        }
        // Walk the buffer's PSBs while their TSC is before `timestamp`.
        let Some(mut psb) = next_psb(&self.data, self.at) else {
            return;
        };
        while let Some(tsc) = next_tsc(&self.data[psb..]) {
            if eight_byte_tsc(tsc, self.clock.buf_timestamp) >= timestamp {
                break;
            }
            // intel_pt_reposition at this PSB.
            self.pos += (psb - self.at) as u64;
            self.at = psb;
            self.ip = 0;
            self.pkt_state = PktState::NoPsb;
            let reference = self.clock.ref_timestamp;
            self.clock.reposition(reference);
            match next_psb(&self.data, psb + 1) {
                Some(next) => psb = next,
                None => break,
            }
        }
    }
}
