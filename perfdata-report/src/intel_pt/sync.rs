//! Getting in sync, as perf 6.1's intel-pt-decoder.c does: `intel_pt_sync` scans for a
//! PSB and walks PSB+ (`intel_pt_walk_psb`) for the time and the FUP's ip;
//! `intel_pt_sync_ip` (after an error: the resync) walks to the next packet that gives a
//! full ip (`intel_pt_walk_to_ip`).

use super::decoder::{Decoder, Err, PktState, IN_TX};
use super::packet::PacketType;
use super::state::{kind, InsnWalker};

/// perf's `INTEL_PT_PSB_STR`.
const PSB: [u8; 16] = [
    2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
];

impl<W: InsnWalker> Decoder<'_, W> {
    /// `intel_pt_have_ip`.
    fn have_ip(&self) -> bool {
        self.packet.count != 0
            && (self.have_last_ip || self.packet.count == 3 || self.packet.count == 6)
    }

    /// `intel_pt_scan_for_psb`: to the next PSB, through buffers. A PSB split between
    /// two buffers is not joined: perf joins it only for consecutive buffers, which
    /// these never are.
    fn scan_for_psb(&mut self) -> Result<(), Err> {
        loop {
            if self.buf().is_empty() {
                self.get_data()?;
            }
            match self.buf().windows(PSB.len()).position(|w| w == PSB) {
                Some(at) => {
                    self.pkt_step = at;
                    return self.get_next_packet();
                }
                None => {
                    self.pos += self.buf().len() as u64;
                    self.at = self.data.len();
                    self.pkt_step = 0;
                }
            }
        }
    }

    /// `intel_pt_sync`.
    pub(super) fn sync(&mut self) -> Result<(), Err> {
        self.pge = false;
        self.have_last_ip = false;
        self.last_ip = 0;
        self.psb_ip = 0;
        self.ip = 0;
        self.ret_stack.clear();
        self.scan_for_psb()?;
        self.have_last_ip = true;
        self.pkt_state = PktState::NoIp;
        self.walk_psb()?;
        self.state.kind = kind::PSB_EVT;
        self.state.from_ip = self.psb_ip;
        self.state.to_ip = 0;
        if self.ip != 0 {
            self.pkt_state = PktState::InSync;
        }
        Ok(())
    }

    /// `intel_pt_walk_psb`: PSB+ to get in sync.
    fn walk_psb(&mut self) -> Result<(), Err> {
        self.in_psb = true;
        let r = self.walk_psb_packets();
        self.in_psb = false;
        r
    }

    fn walk_psb_packets(&mut self) -> Result<(), Err> {
        use PacketType::*;
        loop {
            self.get_next_packet()?;
            if self.timing_packet() {
                continue;
            }
            match self.packet.kind {
                TipPgd | TipPge | Tip | Ptwrite | PtwriteIp | Exstop | ExstopIp | Mwait | Pwre
                | Pwrx | Bbp | Bip | Bep | BepIp => return Err(Err::NoEnt),
                Fup => {
                    self.pge = true;
                    if self.have_ip() {
                        self.set_ip();
                        self.psb_ip = self.ip;
                    }
                }
                Pip => self.set_pip(),
                ModeTsx => self.tx_flags = (self.packet.payload & IN_TX) as u32,
                TraceStop | Tnt => {
                    if self.packet.kind == TraceStop {
                        self.pge = false;
                        self.tx_flags = 0;
                    }
                    self.clock.have_tma = false;
                    self.pkt_state = if self.ip != 0 {
                        PktState::InSync
                    } else {
                        PktState::ErrResync
                    };
                    return Err(Err::NoEnt);
                }
                Bad => return Err(self.bug()),
                Ovf => return Err(self.overflow()),
                Psbend => return Ok(()),
                _ => {}
            }
        }
    }

    /// `intel_pt_walk_to_ip`.
    fn walk_to_ip(&mut self) -> Result<(), Err> {
        use PacketType::*;
        loop {
            self.get_next_packet()?;
            if self.timing_packet() {
                continue;
            }
            match self.packet.kind {
                TipPgd => {
                    self.pge = false;
                    if self.have_ip() {
                        self.set_ip();
                    }
                    if self.ip != 0 {
                        self.state.kind |= kind::TRACE_END;
                        return Ok(());
                    }
                }
                TipPge => {
                    self.pge = true;
                    if self.have_ip() {
                        self.set_ip();
                    }
                    if self.ip != 0 {
                        self.state.kind |= kind::TRACE_BEGIN;
                        return Ok(());
                    }
                }
                Tip => {
                    self.pge = true;
                    if self.have_ip() {
                        self.set_ip();
                    }
                    if self.ip != 0 {
                        return Ok(());
                    }
                }
                Fup => {
                    if self.have_ip() {
                        self.set_ip();
                    }
                    if self.ip != 0 {
                        return Ok(());
                    }
                }
                Pip => self.set_pip(),
                ModeTsx => self.tx_flags = (self.packet.payload & IN_TX) as u32,
                Ovf => return Err(self.overflow()),
                Bad => return Err(self.bug()),
                TraceStop => {
                    self.pge = false;
                    self.tx_flags = 0;
                    self.clock.have_tma = false;
                }
                Psb => {
                    self.state.psb_offset = self.pos;
                    self.psb_ip = 0;
                    self.last_ip = 0;
                    self.have_last_ip = true;
                    self.ret_stack.clear();
                    self.walk_psb()?;
                    self.state.kind = kind::PSB_EVT;
                    self.state.from_ip = self.psb_ip;
                    self.state.to_ip = 0;
                    return Ok(());
                }
                _ => {}
            }
        }
    }

    /// `intel_pt_sync_ip`: the resync after an error.
    pub(super) fn sync_ip(&mut self) -> Result<(), Err> {
        self.set_fup_tx_flags = false;
        if !self.params.branch_enable {
            self.pkt_state = PktState::InSync;
            self.state.kind = 0;
            return Ok(());
        }
        self.walk_to_ip()?;
        if self.state.kind & kind::PSB_EVT != 0 && self.ip == 0 {
            return Ok(());
        }
        self.pkt_state = PktState::InSync;
        self.state.from_ip = 0;
        self.state.to_ip = self.ip;
        Ok(())
    }
}
