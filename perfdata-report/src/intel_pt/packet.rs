//! The Intel PT packet decoder, a port of perf 6.1's
//! tools/perf/util/intel-pt-decoder/intel-pt-pkt-decoder.c: the bytes of an AUX buffer
//! into packets (`intel_pt_get_packet`), and each packet's text as `perf script -D`
//! prints it (`intel_pt_pkt_desc`).
//!
//! The decoder never fails: bytes that are no packet are reported as
//! [`Decoded::Bad`] and a packet cut by the end of the buffer as
//! [`Decoded::NeedMoreBytes`], as perf's negative return values say, and the caller
//! chooses what to do (the dump steps one byte; the trace decoder resyncs).

/// `INTEL_PT_PKT_MAX_SZ`: no packet is longer.
pub const MAX_PACKET_SIZE: usize = 16;

/// `INTEL_PT_VMX_NR_FLAG`: the PIP payload's non-root bit.
pub const VMX_NR_FLAG: u64 = 1;

/// perf's `enum intel_pt_pkt_type`, in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[allow(missing_docs)] // The names are the packets' names in the Intel SDM.
pub enum PacketType {
    #[default]
    Bad,
    Pad,
    Tnt,
    TipPgd,
    TipPge,
    Tsc,
    Tma,
    ModeExec,
    ModeTsx,
    Mtc,
    Tip,
    Fup,
    Cyc,
    Vmcs,
    Psb,
    Psbend,
    Cbr,
    TraceStop,
    Pip,
    Ovf,
    Mnt,
    Ptwrite,
    PtwriteIp,
    Exstop,
    ExstopIp,
    Mwait,
    Pwre,
    Pwrx,
    Bbp,
    Bip,
    Bep,
    BepIp,
    Cfe,
    CfeIp,
    Evd,
}

impl PacketType {
    /// perf's `packet_name[]`.
    pub fn name(self) -> &'static str {
        use PacketType::*;
        match self {
            Bad => "Bad Packet!",
            Pad => "PAD",
            Tnt => "TNT",
            TipPgd => "TIP.PGD",
            TipPge => "TIP.PGE",
            Tsc => "TSC",
            Tma => "TMA",
            ModeExec => "MODE.Exec",
            ModeTsx => "MODE.TSX",
            Mtc => "MTC",
            Tip => "TIP",
            Fup => "FUP",
            Cyc => "CYC",
            Vmcs => "VMCS",
            Psb => "PSB",
            Psbend => "PSBEND",
            Cbr => "CBR",
            TraceStop => "TraceSTOP",
            Pip => "PIP",
            Ovf => "OVF",
            Mnt => "MNT",
            Ptwrite | PtwriteIp => "PTWRITE",
            Exstop | ExstopIp => "EXSTOP",
            Mwait => "MWAIT",
            Pwre => "PWRE",
            Pwrx => "PWRX",
            Bbp => "BBP",
            Bip => "BIP",
            Bep | BepIp => "BEP",
            Cfe | CfeIp => "CFE",
            Evd => "EVD",
        }
    }
}

/// perf's `struct intel_pt_pkt`: the type, a count (TNT bits, IP compression, TMA's
/// fast counter, ...) and the payload, each as the packet type defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Packet {
    /// The packet's type.
    pub kind: PacketType,
    /// perf's `count`: its meaning depends on the type.
    pub count: u32,
    /// perf's `payload`: its meaning depends on the type.
    pub payload: u64,
}

/// perf's `enum intel_pt_pkt_ctx`: block packets (BIP) depend on the preceding BBP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PacketContext {
    /// No block context.
    #[default]
    None,
    /// After a BBP with 4-byte items.
    Block4,
    /// After a BBP with 8-byte items.
    Block8,
}

/// The result of decoding at one position (perf's return value of
/// `intel_pt_get_packet`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded {
    /// A packet and the bytes it takes, trailing PAD bytes included (up to 8 in all).
    Packet(Packet, usize),
    /// `INTEL_PT_BAD_PACKET`: the bytes are no packet.
    Bad,
    /// `INTEL_PT_NEED_MORE_BYTES`: the buffer ends inside the packet.
    NeedMoreBytes,
}

fn le(buf: &[u8]) -> u64 {
    buf.iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

fn need(buf: &[u8], n: usize, packet: Packet) -> Result<(Packet, usize), Decoded> {
    if buf.len() < n {
        Err(Decoded::NeedMoreBytes)
    } else {
        Ok((packet, n))
    }
}

fn pkt(kind: PacketType, count: u32, payload: u64) -> Packet {
    Packet {
        kind,
        count,
        payload,
    }
}

fn long_tnt(buf: &[u8]) -> Result<(Packet, usize), Decoded> {
    if buf.len() < 8 {
        return Err(Decoded::NeedMoreBytes);
    }
    let mut payload = le(&buf[..8]);
    let mut count = 47;
    while count > 0 {
        if payload & (1 << 63) != 0 {
            break;
        }
        payload <<= 1;
        count -= 1;
    }
    Ok((pkt(PacketType::Tnt, count, payload << 1), 8))
}

fn ptwrite(buf: &[u8]) -> Result<(Packet, usize), Decoded> {
    let count = u32::from((buf[1] >> 5) & 3);
    let kind = if buf[1] & 0x80 != 0 {
        PacketType::PtwriteIp
    } else {
        PacketType::Ptwrite
    };
    match count {
        0 if buf.len() < 6 => Err(Decoded::NeedMoreBytes),
        0 => Ok((pkt(kind, count, le(&buf[2..6])), 6)),
        1 if buf.len() < 10 => Err(Decoded::NeedMoreBytes),
        1 => Ok((pkt(kind, count, le(&buf[2..10])), 10)),
        _ => Err(Decoded::Bad),
    }
}

/// `intel_pt_get_ext`: the packets whose first byte is 0x02.
fn ext(buf: &[u8]) -> Result<(Packet, usize), Decoded> {
    use PacketType::*;
    if buf.len() < 2 {
        return Err(Decoded::NeedMoreBytes);
    }
    if buf[1] & 0x1f == 0x12 {
        return ptwrite(buf);
    }
    let len = buf.len();
    match buf[1] {
        0xa3 => long_tnt(buf),
        0x43 if len < 8 => Err(Decoded::NeedMoreBytes),
        0x43 => Ok((pkt(Pip, 0, le(&buf[2..8])), 8)),
        0x83 => Ok((pkt(TraceStop, 0, 0), 2)),
        0x03 if len < 4 => Err(Decoded::NeedMoreBytes),
        0x03 => Ok((pkt(Cbr, 0, le(&buf[2..4])), 4)),
        // VMCS: perf's count is (52 - 5) >> 3 = 5 payload bytes.
        0xc8 if len < 7 => Err(Decoded::NeedMoreBytes),
        0xc8 => Ok((pkt(Vmcs, 5, le(&buf[2..7])), 7)),
        0xf3 => Ok((pkt(Ovf, 0, 0), 2)),
        0x82 => {
            if len < 16 {
                return Err(Decoded::NeedMoreBytes);
            }
            if buf[2..16].chunks(2).any(|p| p != [2, 0x82]) {
                return Err(Decoded::Bad);
            }
            Ok((pkt(Psb, 0, 0), 16))
        }
        0x23 => Ok((pkt(Psbend, 0, 0), 2)),
        0x73 => need(
            buf,
            7,
            pkt(
                Tma,
                u32::from(buf.get(5).copied().unwrap_or(0))
                    | (u32::from(buf.get(6).copied().unwrap_or(0) & 1) << 8),
                u64::from(buf.get(2).copied().unwrap_or(0))
                    | (u64::from(buf.get(3).copied().unwrap_or(0)) << 8),
            ),
        ),
        0xc3 => {
            if len < 3 {
                return Err(Decoded::NeedMoreBytes);
            }
            match buf[2] {
                0x88 if len < 11 => Err(Decoded::NeedMoreBytes),
                0x88 => Ok((pkt(Mnt, 0, le(&buf[3..11])), 11)),
                _ => Err(Decoded::Bad),
            }
        }
        0x62 => Ok((pkt(Exstop, 0, 0), 2)),
        0xe2 => Ok((pkt(ExstopIp, 0, 0), 2)),
        0xc2 if len < 10 => Err(Decoded::NeedMoreBytes),
        0xc2 => Ok((pkt(Mwait, 0, le(&buf[2..10])), 10)),
        0x22 if len < 4 => Err(Decoded::NeedMoreBytes),
        0x22 => Ok((pkt(Pwre, 0, le(&buf[2..4])), 4)),
        0xa2 if len < 7 => Err(Decoded::NeedMoreBytes),
        0xa2 => Ok((pkt(Pwrx, 0, le(&buf[2..7])), 7)),
        0x63 if len < 3 => Err(Decoded::NeedMoreBytes),
        0x63 => Ok((
            pkt(Bbp, u32::from(buf[2] >> 7), u64::from(buf[2] & 0x1f)),
            3,
        )),
        0x33 => Ok((pkt(Bep, 0, 0), 2)),
        0xb3 => Ok((pkt(BepIp, 0, 0), 2)),
        0x13 if len < 4 => Err(Decoded::NeedMoreBytes),
        0x13 => {
            let kind = if buf[2] & 0x80 != 0 { CfeIp } else { Cfe };
            Ok((pkt(kind, u32::from(buf[2] & 0x1f), u64::from(buf[3])), 4))
        }
        0x53 if len < 11 => Err(Decoded::NeedMoreBytes),
        0x53 => Ok((pkt(Evd, u32::from(buf[2] & 0x3f), le(&buf[3..11])), 11)),
        _ => Err(Decoded::Bad),
    }
}

fn short_tnt(byte: u8) -> (Packet, usize) {
    let mut byte = u32::from(byte);
    let mut count = 6;
    while count > 0 {
        if byte & 0x80 != 0 {
            break;
        }
        byte <<= 1;
        count -= 1;
    }
    (pkt(PacketType::Tnt, count, u64::from(byte) << 57), 1)
}

fn cyc(buf: &[u8]) -> Result<(Packet, usize), Decoded> {
    let mut byte = u32::from(buf[0]);
    let mut payload = u64::from(byte >> 3);
    let mut offs = 1usize;
    let mut shift = 5u32;
    byte >>= 2;
    let len = buf.len() - 1;
    while byte & 1 != 0 {
        if offs > 9 {
            return Err(Decoded::Bad);
        }
        if len < offs {
            return Err(Decoded::NeedMoreBytes);
        }
        byte = u32::from(buf[offs]);
        offs += 1;
        // perf shifts a u64 by up to 61: the top bits fall off, as here.
        payload |= u64::from(byte >> 1).checked_shl(shift).unwrap_or(0);
        shift += 7;
    }
    Ok((pkt(PacketType::Cyc, 0, payload), offs))
}

/// `intel_pt_get_ip`: TIP, TIP.PGE, TIP.PGD and FUP; `count` is the IPBytes field.
fn ip(kind: PacketType, buf: &[u8]) -> Result<(Packet, usize), Decoded> {
    let count = u32::from(buf[0] >> 5);
    let ip_len = match count {
        0 => 0,
        1 => 2,
        2 => 4,
        3 | 4 => 6,
        6 => 8,
        _ => return Err(Decoded::Bad),
    };
    if buf.len() < ip_len + 1 {
        return Err(Decoded::NeedMoreBytes);
    }
    Ok((pkt(kind, count, le(&buf[1..1 + ip_len])), ip_len + 1))
}

fn mode(buf: &[u8]) -> Result<(Packet, usize), Decoded> {
    if buf.len() < 2 {
        return Err(Decoded::NeedMoreBytes);
    }
    let b = buf[1];
    match b >> 5 {
        0 => {
            let payload = match b & 3 {
                0 => 16,
                1 => 64,
                2 => 32,
                _ => return Err(Decoded::Bad),
            };
            // perf 5.18 keeps the whole byte in count: bit 2 is the IF flag.
            Ok((pkt(PacketType::ModeExec, u32::from(b), payload), 2))
        }
        1 if b & 3 == 3 => Err(Decoded::Bad),
        1 => Ok((pkt(PacketType::ModeTsx, 0, u64::from(b & 3)), 2)),
        _ => Err(Decoded::Bad),
    }
}

/// `intel_pt_do_get_packet`: one packet at the start of `buf`.
fn do_get_packet(buf: &[u8], ctx: PacketContext) -> Result<(Packet, usize), Decoded> {
    let Some(&byte) = buf.first() else {
        return Err(Decoded::NeedMoreBytes);
    };
    if byte & 7 == 4 && ctx != PacketContext::None {
        let n = if ctx == PacketContext::Block4 { 4 } else { 8 };
        if buf.len() < n + 1 {
            return Err(Decoded::NeedMoreBytes);
        }
        return Ok((
            pkt(PacketType::Bip, u32::from(byte >> 3), le(&buf[1..=n])),
            n + 1,
        ));
    }
    if byte & 1 == 0 {
        return match byte {
            0 => Ok((pkt(PacketType::Pad, 0, 0), 1)),
            2 => ext(buf),
            _ => Ok(short_tnt(byte)),
        };
    }
    if byte & 2 != 0 {
        return cyc(buf);
    }
    match byte & 0x1f {
        0x0d => ip(PacketType::Tip, buf),
        0x11 => ip(PacketType::TipPge, buf),
        0x01 => ip(PacketType::TipPgd, buf),
        0x1d => ip(PacketType::Fup, buf),
        0x19 => match byte {
            0x99 => mode(buf),
            0x19 if buf.len() < 8 => Err(Decoded::NeedMoreBytes),
            0x19 => Ok((pkt(PacketType::Tsc, 0, le(&buf[1..8])), 8)),
            0x59 if buf.len() < 2 => Err(Decoded::NeedMoreBytes),
            0x59 => Ok((pkt(PacketType::Mtc, 0, u64::from(buf[1])), 2)),
            _ => Err(Decoded::Bad),
        },
        _ => Err(Decoded::Bad),
    }
}

/// `intel_pt_upd_pkt_ctx`: the context the next packet is decoded in.
fn next_context(packet: &Packet, ctx: PacketContext) -> PacketContext {
    use PacketType::*;
    match packet.kind {
        Bad | Pad | Tsc | Tma | Mtc | Fup | Cyc | Cbr | Mnt | Exstop | ExstopIp | Pwre | Pwrx
        | Bip => ctx,
        Bbp if packet.count != 0 => PacketContext::Block4,
        Bbp => PacketContext::Block8,
        _ => PacketContext::None,
    }
}

/// perf's `intel_pt_get_packet`: the packet at the start of `buf` in context `ctx`,
/// which it updates. A packet takes the PAD bytes after it too, up to 8 bytes in all, as
/// perf counts them.
pub fn get_packet(buf: &[u8], ctx: &mut PacketContext) -> Decoded {
    match do_get_packet(buf, *ctx) {
        Ok((packet, mut len)) => {
            while len < 8 && buf.len() > len && buf[len] == 0 {
                len += 1;
            }
            *ctx = next_context(&packet, *ctx);
            Decoded::Packet(packet, len)
        }
        Err(e) => e,
    }
}

/// perf's `intel_pt_pkt_desc`: the packet's text in `perf script -D`.
pub fn describe(packet: &Packet) -> String {
    use PacketType::*;
    let name = packet.kind.name();
    let payload = packet.payload;
    match packet.kind {
        Bad | Pad | Psb | Psbend | TraceStop | Ovf => name.to_string(),
        Tnt => {
            let bits: String = (0..packet.count)
                .map(|i| {
                    if (payload << i) & (1 << 63) != 0 {
                        'T'
                    } else {
                        'N'
                    }
                })
                .collect();
            format!("{name} {bits} ({})", packet.count)
        }
        TipPgd | TipPge | Tip | Fup if packet.count == 0 => format!("{name} no ip"),
        TipPgd | TipPge | Tip | Fup | Cyc | Vmcs | Mtc | Mnt | Cbr | Tsc => {
            format!("{name} {payload:#x}")
        }
        Tma => format!("{name} CTC {:#x} FC {:#x}", payload as u32, packet.count),
        ModeExec => format!("{name} IF:{} {}", u32::from(packet.count & 4 != 0), payload),
        ModeTsx => format!("{name} TXAbort:{} InTX:{}", (payload >> 1) & 1, payload & 1),
        Pip => {
            let nr = u32::from(payload & VMX_NR_FLAG != 0);
            format!("{name} {:#x} (NR={nr})", (payload & !VMX_NR_FLAG) >> 1)
        }
        Ptwrite => format!("{name} {payload:#x} IP:0"),
        PtwriteIp => format!("{name} {payload:#x} IP:1"),
        Bep | Exstop => format!("{name} IP:0"),
        BepIp | ExstopIp => format!("{name} IP:1"),
        Mwait => format!(
            "{name} {payload:#x} Hints {:#x} Extensions {:#x}",
            payload & 0xff,
            (payload >> 32) & 3
        ),
        Pwre => format!(
            "{name} {payload:#x} HW:{} CState:{} Sub-CState:{}",
            u32::from(payload & 0x80 != 0),
            (payload >> 12) & 0xf,
            (payload >> 8) & 0xf
        ),
        Pwrx => format!(
            "{name} {payload:#x} Last CState:{} Deepest CState:{} Wake Reason {:#x}",
            (payload >> 4) & 0xf,
            payload & 0xf,
            (payload >> 8) & 0xf
        ),
        Bbp => format!(
            "{name} SZ {}-byte Type {payload:#x}",
            if packet.count != 0 { "4" } else { "8" }
        ),
        Bip => format!("{name} ID 0x{:02x} Value {payload:#x}", packet.count),
        Cfe | CfeIp => format!(
            "{name} IP:{} Type 0x{:02x} Vector {payload:#x}",
            u32::from(packet.kind == CfeIp),
            packet.count
        ),
        Evd => format!("{name} Type 0x{:02x} Payload {payload:#x}", packet.count),
    }
}

/// perf's `intel_pt_dump`: the lines `perf script -D` prints for an AUX buffer, from
/// ". ... Intel Processor Trace data" to the last packet. A byte that starts no packet
/// is printed alone as "Bad packet!", and the dump goes on at the next byte.
pub fn dump(buf: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = format!(
        ". ... Intel Processor Trace data: size {} bytes\n",
        buf.len()
    );
    let mut ctx = PacketContext::None;
    let mut pos = 0usize;
    while pos < buf.len() {
        let rest = &buf[pos..];
        let decoded = get_packet(rest, &mut ctx);
        let len = match decoded {
            Decoded::Packet(_, len) => len,
            _ => 1,
        };
        let _ = write!(out, ".  {pos:08x}: ");
        for b in &rest[..len] {
            let _ = write!(out, " {b:02x}");
        }
        for _ in len..16 {
            out.push_str("   ");
        }
        match decoded {
            Decoded::Packet(packet, _) => {
                let _ = writeln!(out, " {}", describe(&packet));
            }
            _ => out.push_str(" Bad packet!\n"),
        }
        pos += len;
    }
    out
}

#[cfg(test)]
#[path = "packet_tests.rs"]
mod tests;
