//! The decoder's main loop, as perf 6.1's intel-pt-decoder.c runs it: `intel_pt_decode`
//! dispatches on the packet state and `intel_pt_walk_trace` follows the packets when in
//! sync, until one gives something to report (a branch, a PSB, a CBR change, an error).

use super::decoder::{Decoder, Err, PktState};
use super::packet::PacketType;
use super::state::{kind, DecodeError, InsnWalker, State};

impl<W: InsnWalker> Decoder<'_, W> {
    /// `intel_pt_walk_trace`.
    fn walk_trace(&mut self) -> Result<(), Err> {
        use PacketType::*;
        let mut no_tip = false;
        self.get_next_packet()?;
        loop {
            if self.timing_packet() {
                if self.packet.kind == Cbr && self.clock.cbr != self.cbr_seen {
                    self.state.kind = 0;
                    return Ok(());
                }
                self.get_next_packet()?;
                continue;
            }
            match self.packet.kind {
                Tnt if self.packet.count != 0 => {
                    self.tnt = self.packet;
                    self.pkt_state = PktState::Tnt;
                    return self.walk_tnt();
                }
                TipPgd => {
                    if self.packet.count != 0 {
                        self.set_last_ip();
                    }
                    self.pkt_state = PktState::TipPgd;
                    return self.walk_tip();
                }
                TipPge => {
                    self.pge = true;
                    self.set_nr();
                    if self.packet.count != 0 {
                        self.set_ip();
                        self.state.from_ip = 0;
                        self.state.to_ip = self.ip;
                        self.state.kind |= kind::TRACE_BEGIN;
                        return Ok(());
                    }
                }
                Ovf => return Err(self.overflow()),
                Tip => {
                    if self.packet.count != 0 {
                        self.set_last_ip();
                    }
                    self.pkt_state = PktState::Tip;
                    return self.walk_tip();
                }
                Fup => {
                    if self.packet.count == 0 {
                        no_tip = false;
                    } else {
                        self.set_last_ip();
                        if !self.params.branch_enable {
                            self.ip = self.last_ip;
                            if self.fup_event() {
                                return Ok(());
                            }
                            no_tip = false;
                        } else {
                            self.pkt_state = if no_tip {
                                PktState::FupNoTip
                            } else {
                                PktState::Fup
                            };
                            match self.walk_fup() {
                                Err(Err::Again) => {}
                                r => return r,
                            }
                            if !no_tip {
                                return self.walk_fup_tip();
                            }
                            no_tip = false;
                        }
                    }
                }
                TraceStop => {
                    self.pge = false;
                    self.tx_flags = 0;
                    self.clock.have_tma = false;
                }
                Psb => {
                    self.state.psb_offset = self.pos;
                    self.psb_ip = 0;
                    if let Some(r) = self.psb_with_fup() {
                        return r;
                    }
                    match self.psb() {
                        Err(Err::Again) => continue,
                        r => return r,
                    }
                }
                Pip => self.pip_payload = self.packet.payload,
                ModeTsx => {
                    if !self.pge || self.in_psb {
                        self.tx_flags = (self.packet.payload & super::decoder::IN_TX) as u32;
                    } else {
                        self.mode_tsx(&mut no_tip)?;
                        continue;
                    }
                }
                Bad => return Err(self.bug()),
                // Power and PTWRITE events end the walk as perf's do, but carry no sample
                // here: their events are not synthesized by this port.
                Ptwrite | Exstop | Pwrx | Bep => {
                    self.state.kind = 0;
                    return Ok(());
                }
                PtwriteIp | ExstopIp | BepIp => {
                    self.get_next_packet()?;
                    if self.packet.kind == Fup {
                        no_tip = true;
                    }
                    continue;
                }
                _ => {}
            }
            self.get_next_packet()?;
        }
    }

    /// `intel_pt_walk_fup_tip`: the TIP an asynchronous FUP goes to.
    fn walk_fup_tip(&mut self) -> Result<(), Err> {
        use PacketType::*;
        if self.tx_flags & super::decoder::ABORT_TX as u32 != 0 {
            self.tx_flags = 0;
            self.state.flags &= !super::state::flags::IN_TX;
            self.state.flags |= super::state::flags::ABORT_TX;
        } else {
            self.state.flags |= super::state::flags::ASYNC;
        }
        loop {
            self.get_next_packet()?;
            match self.packet.kind {
                Cbr | Mtc | Cyc => {
                    self.timing_packet();
                }
                Ovf => return Err(self.overflow()),
                TipPgd => {
                    self.state.from_ip = self.ip;
                    if self.packet.count == 0 {
                        self.state.to_ip = 0;
                    } else {
                        self.set_ip();
                        self.state.to_ip = self.ip;
                    }
                    self.pge = false;
                    self.state.kind |= kind::TRACE_END;
                    self.update_nr();
                    return Ok(());
                }
                TipPge => {
                    self.pge = true;
                    self.state.from_ip = 0;
                    if self.packet.count == 0 {
                        self.state.to_ip = 0;
                    } else {
                        self.set_ip();
                        self.state.to_ip = self.ip;
                    }
                    self.state.kind |= kind::TRACE_BEGIN;
                    self.set_nr();
                    return Ok(());
                }
                Tip => {
                    self.state.from_ip = self.ip;
                    if self.packet.count == 0 {
                        self.state.to_ip = 0;
                    } else {
                        self.set_ip();
                        self.state.to_ip = self.ip;
                    }
                    self.update_nr();
                    return Ok(());
                }
                Pip => self.pip_payload = self.packet.payload,
                ModeExec | Vmcs | Mnt | Pad => {}
                _ => {
                    // perf: "Missing TIP after FUP".
                    self.pkt_state = PktState::ErrResync;
                    self.pkt_step = 0;
                    return Err(Err::NoEnt);
                }
            }
        }
    }

    fn step(&mut self) -> Result<(), Err> {
        match self.pkt_state {
            PktState::NoPsb => self.sync(),
            PktState::NoIp | PktState::ErrResync => {
                if self.pkt_state == PktState::NoIp {
                    self.have_last_ip = false;
                    self.last_ip = 0;
                    self.ip = 0;
                }
                self.sync_ip()
            }
            PktState::InSync => self.walk_trace(),
            PktState::Tnt => match self.walk_tnt() {
                Err(Err::Again) => self.walk_trace(),
                r => r,
            },
            PktState::Tip | PktState::TipPgd => self.walk_tip(),
            PktState::Fup => match self.walk_fup() {
                Err(Err::Again) => self.walk_fup_tip(),
                r => r,
            },
            PktState::FupNoTip => match self.walk_fup() {
                Err(Err::Again) => self.walk_trace(),
                r => r,
            },
            PktState::FupInPsb => self.fup_in_psb(),
        }
    }

    /// `intel_pt_decode`: the next state to report. The end of the trace is a state
    /// with [`DecodeError::NoData`]; calling on after it returns it again.
    pub fn decode(&mut self) -> &State {
        if self.no_more_data {
            return &self.state;
        }
        let result = loop {
            self.state.kind = kind::BRANCH;
            self.state.flags = 0;
            match self.step() {
                Err(Err::NoLink) => continue,
                r => break r,
            }
        };
        match result {
            Err(e) => {
                let err = match e {
                    Err::BadMsg => DecodeError::BadPacket,
                    Err::NoData => DecodeError::NoData,
                    Err::IlSeq => DecodeError::NoInstruction,
                    Err::NoEnt => DecodeError::Mismatch,
                    Err::Overflow => DecodeError::Overflow,
                    Err::NoSys => DecodeError::Internal,
                    Err::NoLink | Err::Again => DecodeError::Unknown,
                };
                self.no_more_data = err == DecodeError::NoData;
                self.state.err = Some(err);
                self.state.from_ip = self.ip;
                self.update_sample_time();
                self.set_nr();
            }
            Ok(()) => {
                self.state.err = None;
                if self.clock.cbr != self.cbr_seen {
                    self.cbr_seen = self.clock.cbr;
                    if self.state.kind == 0 {
                        self.state.from_ip = self.ip;
                        self.state.to_ip = 0;
                    }
                    self.state.kind |= kind::CBR_CHG;
                    self.state.cbr_payload = self.clock.cbr_payload;
                    self.state.cbr = self.clock.cbr;
                }
                if self.pkt_state.sample_time() {
                    self.update_sample_time();
                }
            }
        }
        // perf: "Let PSB event always have TSC timestamp".
        if self.state.kind & kind::PSB_EVT != 0 && self.clock.tsc_timestamp != 0 {
            self.sample_timestamp = self.clock.tsc_timestamp;
        }
        self.nr = self.next_nr;
        self.state.timestamp = self.sample_timestamp;
        &self.state
    }
}
