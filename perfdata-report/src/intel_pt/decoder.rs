//! The Intel PT trace decoder's state machine, a port of perf 6.1's
//! tools/perf/util/intel-pt-decoder/intel-pt-decoder.c (`intel_pt_decode` and the walks
//! it calls): find a PSB, take the IP and time from PSB+, then follow TNT, TIP, FUP and
//! the timing packets, asking an [`InsnWalker`] to walk the instructions between them.
//!
//! The boundary: instructions are never decoded here. The walker only says whether the
//! walk is already at its target or why it could not read the code (perf's
//! `intel_pt_walk_next_insn` returning -EINVAL, reported as "Failed to get instruction",
//! or -ENOENT, which perf's decoder swallows). That is all perf itself does when the
//! traced binaries are not on the machine, and the states it reports are then the same.
//! Not ported either: hop/leap modes, VM time correlation, period sampling.

use super::fast_forward::Buffers;
use super::packet::{get_packet, Decoded, Packet, PacketContext, PacketType};
use super::state::{kind, DecoderParams, InsnWalker, State, WalkError};
use super::timing::Clock;

/// perf's `enum intel_pt_pkt_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PktState {
    NoPsb,
    NoIp,
    ErrResync,
    InSync,
    Tnt,
    Tip,
    TipPgd,
    Fup,
    FupNoTip,
    FupInPsb,
}

impl PktState {
    /// `intel_pt_sample_time`.
    pub(super) fn sample_time(self) -> bool {
        !matches!(
            self,
            PktState::Tnt
                | PktState::Tip
                | PktState::TipPgd
                | PktState::Fup
                | PktState::FupNoTip
                | PktState::FupInPsb
        )
    }
}

/// perf's negative error numbers inside the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Err {
    NoLink,
    Again,
    BadMsg,
    NoData,
    IlSeq,
    NoEnt,
    Overflow,
    NoSys,
}

/// The decoder over one queue's trace buffers, in order.
pub struct Decoder<'a, W: InsnWalker> {
    pub(super) walker: W,
    /// The queue's buffers, each read when the decoder reaches it.
    pub(super) buffers: Box<dyn Buffers + 'a>,
    /// The next buffer's index.
    pub(super) next_buffer: usize,
    pub(super) params: DecoderParams,
    pub(super) clock: Clock,
    pub(super) state: State,
    /// The buffer being decoded, and how far (`buf()` is what is left of it).
    pub(super) data: Vec<u8>,
    pub(super) at: usize,
    pub(super) pos: u64,
    pub(super) pkt_step: usize,
    pub(super) packet: Packet,
    pub(super) last_packet_type: PacketType,
    pub(super) pkt_ctx: PacketContext,
    pub(super) pkt_state: PktState,
    pub(super) tnt: Packet,
    pub(super) last_ip: u64,
    pub(super) have_last_ip: bool,
    pub(super) ip: u64,
    pub(super) psb_ip: u64,
    pub(super) ret_stack: Vec<u64>,
    pub(super) pge: bool,
    pub(super) in_psb: bool,
    pub(super) tx_flags: u32,
    pub(super) fup_tx_flags: u32,
    pub(super) set_fup_tx_flags: bool,
    pub(super) pip_payload: u64,
    pub(super) nr: bool,
    pub(super) next_nr: bool,
    pub(super) cbr_seen: u32,
    pub(super) sample_timestamp: u64,
    pub(super) sample_insn_cnt: u64,
    pub(super) no_more_data: bool,
}

pub(super) const IN_TX: u64 = 1;
pub(super) const ABORT_TX: u64 = 2;

impl<'a, W: InsnWalker> Decoder<'a, W> {
    /// A decoder of `buffers` (each with its reference TSC, taken when the decoder
    /// reaches it and dropped at its end), walking with `walker`.
    pub fn new(params: DecoderParams, buffers: impl Buffers + 'a, walker: W) -> Self {
        Decoder {
            walker,
            buffers: Box::new(buffers),
            next_buffer: 0,
            params,
            clock: Clock::new(params.timing),
            state: State::default(),
            data: Vec::new(),
            at: 0,
            pos: 0,
            pkt_step: 0,
            packet: Packet::default(),
            last_packet_type: PacketType::Bad,
            pkt_ctx: PacketContext::None,
            pkt_state: PktState::NoPsb,
            tnt: Packet::default(),
            last_ip: 0,
            have_last_ip: false,
            ip: 0,
            psb_ip: 0,
            ret_stack: Vec::new(),
            pge: false,
            in_psb: false,
            tx_flags: 0,
            fup_tx_flags: 0,
            set_fup_tx_flags: false,
            pip_payload: 0,
            nr: false,
            next_nr: false,
            cbr_seen: 0,
            sample_timestamp: 0,
            sample_insn_cnt: 0,
            no_more_data: false,
        }
    }

    /// What is left of the buffer being decoded.
    pub(super) fn buf(&self) -> &[u8] {
        &self.data[self.at.min(self.data.len())..]
    }

    /// Step `n` bytes on in the buffer being decoded.
    pub(super) fn advance(&mut self, n: usize) {
        self.at = (self.at + n).min(self.data.len());
    }

    /// The walker (to read what it recorded).
    pub fn walker(&self) -> &W {
        &self.walker
    }

    /// `intel_pt_calc_ip`: a packet's (compressed) ip against the last one.
    pub(super) fn calc_ip(packet: &Packet, last_ip: u64) -> u64 {
        match packet.count {
            1 => (last_ip & 0xffff_ffff_ffff_0000) | packet.payload,
            2 => (last_ip & 0xffff_ffff_0000_0000) | packet.payload,
            3 => {
                let ip = packet.payload;
                if ip & 0x8000_0000_0000 != 0 {
                    ip | 0xffff_0000_0000_0000
                } else {
                    ip
                }
            }
            4 => (last_ip & 0xffff_0000_0000_0000) | packet.payload,
            6 => packet.payload,
            _ => 0,
        }
    }

    pub(super) fn set_last_ip(&mut self) {
        self.last_ip = Self::calc_ip(&self.packet, self.last_ip);
        self.have_last_ip = true;
    }

    pub(super) fn set_ip(&mut self) {
        self.set_last_ip();
        self.ip = self.last_ip;
    }

    pub(super) fn update_nr(&mut self) {
        self.next_nr = self.pip_payload & 1 != 0;
    }

    pub(super) fn set_nr(&mut self) {
        self.nr = self.pip_payload & 1 != 0;
        self.next_nr = self.nr;
    }

    pub(super) fn set_pip(&mut self) {
        self.pip_payload = self.packet.payload;
        self.set_nr();
    }

    pub(super) fn bug(&mut self) -> Err {
        self.pkt_state = PktState::NoPsb;
        Err::NoSys
    }

    pub(super) fn update_sample_time(&mut self) {
        self.sample_timestamp = self.clock.timestamp;
        self.sample_insn_cnt = self.clock.timestamp_insn_cnt;
    }

    /// `intel_pt_get_data` / `intel_pt_get_next_data`: the next buffer. perf's buffers
    /// here are never consecutive (no overlap detection), so each repositions.
    pub(super) fn get_data(&mut self) -> Result<(), Err> {
        self.pkt_step = 0;
        // The buffer before is dropped here: one is held at a time.
        let next = (self.next_buffer < self.buffers.count())
            .then(|| self.buffers.get(self.next_buffer))
            .flatten();
        self.next_buffer += 1;
        let Some((buf, reference)) = next else {
            self.data = Vec::new();
            self.at = 0;
            return Err(Err::NoData);
        };
        self.data = buf;
        self.at = 0;
        if self.data.is_empty() {
            return Err(Err::NoData);
        }
        self.clock.buf_timestamp = reference;
        self.ip = 0;
        self.pkt_state = PktState::NoPsb;
        self.clock.reposition(reference);
        self.state.trace_nr += 1;
        Err(Err::NoLink)
    }

    /// `intel_pt_bad_packet`.
    fn bad_packet(&mut self) -> Err {
        self.tx_flags = 0;
        self.clock.have_tma = false;
        self.pkt_step = 1;
        // perf's non-strict ERR1 keeps the state.
        Err::BadMsg
    }

    /// `intel_pt_get_next_packet`: the next packet that is not PAD.
    pub(super) fn get_next_packet(&mut self) -> Result<(), Err> {
        self.last_packet_type = self.packet.kind;
        loop {
            self.pos += self.pkt_step as u64;
            self.advance(self.pkt_step);
            if self.buf().is_empty() {
                self.get_data()?;
            }
            let at = self.at.min(self.data.len());
            match get_packet(&self.data[at..], &mut self.pkt_ctx) {
                Decoded::Packet(p, len) => {
                    self.packet = p;
                    self.pkt_step = len;
                }
                _ => {
                    self.packet = Packet::default();
                    return Err(self.bad_packet());
                }
            }
            if self.packet.kind != PacketType::Pad {
                return Ok(());
            }
        }
    }

    /// `intel_pt_pkt_lookahead` with perf's `intel_pt_psb_lookahead_cb`: the FUP of the
    /// PSB+ ahead, unless a TIP.PGE follows PSBEND.
    fn psb_lookahead_fup(&self) -> Option<Packet> {
        use PacketType::*;
        let mut ctx = self.pkt_ctx;
        let mut buf = self.buf();
        let mut step = self.pkt_step;
        let mut fup: Option<Packet> = None;
        let mut after_psbend = 0;
        loop {
            let packet = loop {
                buf = &buf[step.min(buf.len())..];
                if buf.is_empty() {
                    return None;
                }
                match get_packet(buf, &mut ctx) {
                    Decoded::Packet(p, len) => {
                        step = len;
                        if p.kind != Pad {
                            break p;
                        }
                    }
                    _ => return None,
                }
            };
            match packet.kind {
                Pad | Mnt | Tsc | Tma | ModeExec | ModeTsx | Mtc | Cyc | Vmcs | Cbr | Pip => {
                    if after_psbend > 0 {
                        after_psbend -= 1;
                        if after_psbend == 0 {
                            return fup;
                        }
                    }
                }
                Fup => {
                    if after_psbend > 0 || fup.is_some() || packet.count == 0 {
                        return fup;
                    }
                    fup = Some(packet);
                }
                Psbend => {
                    fup?;
                    after_psbend = 6;
                }
                TipPge => {
                    if after_psbend > 0 {
                        fup = None;
                    }
                    return fup;
                }
                Ptwrite | PtwriteIp | Exstop | ExstopIp | Mwait | Pwre | Pwrx | Bbp | Bip | Bep
                | BepIp
                    if after_psbend > 0 =>
                {
                    after_psbend -= 1;
                    if after_psbend == 0 {
                        return fup;
                    }
                }
                _ => return fup,
            }
        }
    }

    /// `intel_pt_walk_insn`, as far as a walker that decodes nothing allows.
    pub(super) fn walk_insn(&mut self, to_ip: u64) -> Result<(), Err> {
        match self.walker.walk(self.ip, to_ip, self.next_nr) {
            Ok(()) if to_ip != 0 && self.ip == to_ip => Err(Err::Again),
            Ok(()) => Err(self.bug()),
            Err(e) => {
                self.pkt_state = PktState::NoIp;
                Err(match e {
                    WalkError::KnownBad => Err::NoLink,
                    WalkError::Unreadable => Err::IlSeq,
                })
            }
        }
    }

    /// `intel_pt_fup_event`, for the transaction flags (the only FUP events this
    /// decoder sets).
    pub(super) fn fup_event(&mut self) -> bool {
        if self.set_fup_tx_flags {
            self.set_fup_tx_flags = false;
            self.tx_flags = self.fup_tx_flags;
            self.state.kind = 1 << 2;
            if u64::from(self.fup_tx_flags) & ABORT_TX != 0 {
                self.state.kind |= kind::BRANCH;
            }
            self.state.from_ip = self.ip;
            self.state.to_ip = 0;
            self.state.flags = self.fup_tx_flags;
            return true;
        }
        false
    }

    /// `intel_pt_walk_fup`.
    pub(super) fn walk_fup(&mut self) -> Result<(), Err> {
        let ip = self.last_ip;
        match self.walk_insn(ip) {
            Err(Err::Again) => {
                let no_tip = self.pkt_state != PktState::Fup;
                self.pkt_state = PktState::InSync;
                if self.fup_event() && no_tip {
                    return Ok(());
                }
                Err(Err::Again)
            }
            Err(e) => {
                self.set_fup_tx_flags = false;
                Err(e)
            }
            Ok(()) => Ok(()),
        }
    }

    /// `intel_pt_walk_tip`: the walk to a TIP's branch always fails here.
    pub(super) fn walk_tip(&mut self) -> Result<(), Err> {
        self.walk_insn(0)
    }

    /// `intel_pt_walk_tnt`: likewise.
    pub(super) fn walk_tnt(&mut self) -> Result<(), Err> {
        self.walk_insn(0)
    }

    /// `intel_pt_mode_tsx`.
    pub(super) fn mode_tsx(&mut self, no_tip: &mut bool) -> Result<(), Err> {
        let fup_tx_flags = (self.packet.payload & (IN_TX | ABORT_TX)) as u32;
        self.get_next_packet()?;
        if self.packet.kind == PacketType::Fup {
            self.fup_tx_flags = fup_tx_flags;
            self.set_fup_tx_flags = true;
            if u64::from(self.fup_tx_flags) & ABORT_TX == 0 {
                *no_tip = true;
            }
        } else {
            self.tx_flags = (self.packet.payload & IN_TX) as u32;
        }
        Ok(())
    }

    pub(super) fn last_was_cyc(&self) -> bool {
        self.last_packet_type == PacketType::Cyc
    }

    /// The timing packets every walk handles alike; true if the packet was one.
    pub(super) fn timing_packet(&mut self) -> bool {
        let cyc = self.last_was_cyc();
        match self.packet.kind {
            PacketType::Tsc => self.clock.tsc(self.packet.payload, cyc),
            PacketType::Tma => self.clock.tma(self.packet.payload, self.packet.count),
            PacketType::Mtc => self.clock.mtc(self.packet.payload, cyc),
            PacketType::Cyc => self.clock.cyc(self.packet.payload),
            PacketType::Cbr => self.clock.cbr(self.packet.payload),
            _ => return false,
        }
        true
    }

    /// `intel_pt_walk_psbend`: PSB+ when already in sync.
    fn walk_psbend(&mut self) -> Result<(), Err> {
        use PacketType::*;
        self.in_psb = true;
        let r = loop {
            if let Err(e) = self.get_next_packet() {
                break Err(e);
            }
            if self.timing_packet() {
                continue;
            }
            match self.packet.kind {
                Psbend => break Ok(()),
                TipPgd | TipPge | Tip | Tnt | TraceStop | Bad | Psb | Ptwrite | PtwriteIp
                | Exstop | ExstopIp | Mwait | Pwre | Pwrx | Bbp | Bip | Bep | BepIp => {
                    self.clock.have_tma = false;
                    break Err(Err::Again);
                }
                Ovf => break Err(self.overflow()),
                Pip => self.set_pip(),
                Fup => {
                    self.pge = true;
                    if self.packet.count != 0 {
                        self.set_last_ip();
                        self.psb_ip = self.last_ip;
                    }
                }
                ModeTsx => self.tx_flags = (self.packet.payload & IN_TX) as u32,
                _ => {}
            }
        };
        self.in_psb = false;
        r
    }

    pub(super) fn overflow(&mut self) -> Err {
        self.tx_flags = 0;
        self.set_nr();
        self.clock.timestamp_insn_cnt = 0;
        self.pkt_state = PktState::ErrResync;
        Err::Overflow
    }

    /// `intel_pt_psb`.
    pub(super) fn psb(&mut self) -> Result<(), Err> {
        self.last_ip = 0;
        self.psb_ip = 0;
        self.have_last_ip = true;
        self.ret_stack.clear();
        self.walk_psbend()?;
        self.state.kind = kind::PSB_EVT;
        self.state.from_ip = self.psb_ip;
        self.state.to_ip = 0;
        Ok(())
    }

    /// `intel_pt_fup_in_psb`.
    pub(super) fn fup_in_psb(&mut self) -> Result<(), Err> {
        if self.ip != self.last_ip {
            match self.walk_fup() {
                Err(Err::Again) => {}
                r => return r,
            }
        }
        self.pkt_state = PktState::InSync;
        if self.psb().is_err() {
            self.pkt_state = PktState::ErrResync;
            return Err(Err::NoEnt);
        }
        Ok(())
    }

    /// `intel_pt_psb_with_fup`: Some(result) when the PSB+ has a FUP to walk to.
    pub(super) fn psb_with_fup(&mut self) -> Option<Result<(), Err>> {
        if !self.params.branch_enable || !self.pge {
            return None;
        }
        let fup = self.psb_lookahead_fup()?;
        self.packet = fup;
        self.set_last_ip();
        self.pkt_state = PktState::FupInPsb;
        Some(self.fup_in_psb())
    }
}
