//! perf 6.1's own packet decoder test (tools/perf/arch/x86/tests/
//! intel-pt-pkt-decoder-test.c): each byte sequence with the packet, length and context
//! perf expects; MODE.Exec's count is the whole byte since perf 5.18 (the IF bit).

use super::{get_packet, Decoded, PacketContext as Ctx, PacketType as T};

/// (bytes, length, context before, type, count, payload, context after).
type Case = (&'static [u8], usize, Ctx, T, u32, u64, Ctx);

const N: Ctx = Ctx::None;
const B4: Ctx = Ctx::Block4;
const B8: Ctx = Ctx::Block8;
const PSB: &[u8] = &[
    2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
];

const CASES: &[Case] = &[
    (&[0], 1, N, T::Pad, 0, 0, N),
    (&[4], 1, N, T::Tnt, 1, 0, N),
    (&[6], 1, N, T::Tnt, 1, 0x20 << 58, N),
    (&[0x80], 1, N, T::Tnt, 6, 0, N),
    (&[0xfe], 1, N, T::Tnt, 6, 0x3f << 58, N),
    (&[0x02, 0xa3, 2], 8, N, T::Tnt, 1, 0xa302 << 47, N),
    (&[0x02, 0xa3, 3], 8, N, T::Tnt, 1, 0x1a302 << 47, N),
    (
        &[0x02, 0xa3, 0, 0, 0, 0, 0, 0x80],
        8,
        N,
        T::Tnt,
        47,
        0xa302 << 1,
        N,
    ),
    (
        &[0x02, 0xa3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        8,
        N,
        T::Tnt,
        47,
        0xffffffffffffa302 << 1,
        N,
    ),
    (&[0x0d], 1, N, T::Tip, 0, 0, N),
    (&[0x2d, 1, 2], 3, N, T::Tip, 1, 0x201, N),
    (&[0x4d, 1, 2, 3, 4], 5, N, T::Tip, 2, 0x4030201, N),
    (&[0x6d, 1, 2, 3, 4, 5, 6], 7, N, T::Tip, 3, 0x60504030201, N),
    (&[0x8d, 1, 2, 3, 4, 5, 6], 7, N, T::Tip, 4, 0x60504030201, N),
    (
        &[0xcd, 1, 2, 3, 4, 5, 6, 7, 8],
        9,
        N,
        T::Tip,
        6,
        0x807060504030201,
        N,
    ),
    (&[0x11], 1, N, T::TipPge, 0, 0, N),
    (&[0x31, 1, 2], 3, N, T::TipPge, 1, 0x201, N),
    (
        &[0xd1, 1, 2, 3, 4, 5, 6, 7, 8],
        9,
        N,
        T::TipPge,
        6,
        0x807060504030201,
        N,
    ),
    (&[0x01], 1, N, T::TipPgd, 0, 0, N),
    (
        &[0x81, 1, 2, 3, 4, 5, 6],
        7,
        N,
        T::TipPgd,
        4,
        0x60504030201,
        N,
    ),
    (&[0x1d], 1, N, T::Fup, 0, 0, N),
    (&[0x5d, 1, 2, 3, 4], 5, N, T::Fup, 2, 0x4030201, N),
    (
        &[0xdd, 1, 2, 3, 4, 5, 6, 7, 8],
        9,
        N,
        T::Fup,
        6,
        0x807060504030201,
        N,
    ),
    (
        &[0x02, 0x43, 2, 4, 6, 8, 10, 12],
        8,
        N,
        T::Pip,
        0,
        0xC0A08060402,
        N,
    ),
    (
        &[0x02, 0x43, 3, 4, 6, 8, 10, 12],
        8,
        N,
        T::Pip,
        0,
        0xC0A08060403,
        N,
    ),
    (&[0x99, 0x00], 2, N, T::ModeExec, 0, 16, N),
    (&[0x99, 0x01], 2, N, T::ModeExec, 1, 64, N),
    (&[0x99, 0x02], 2, N, T::ModeExec, 2, 32, N),
    (&[0x99, 0x04], 2, N, T::ModeExec, 4, 16, N),
    (&[0x99, 0x05], 2, N, T::ModeExec, 5, 64, N),
    (&[0x99, 0x06], 2, N, T::ModeExec, 6, 32, N),
    (&[0x99, 0x20], 2, N, T::ModeTsx, 0, 0, N),
    (&[0x99, 0x21], 2, N, T::ModeTsx, 0, 1, N),
    (&[0x99, 0x22], 2, N, T::ModeTsx, 0, 2, N),
    (&[0x02, 0x83], 2, N, T::TraceStop, 0, 0, N),
    (&[0x02, 0x03, 0x12, 0], 4, N, T::Cbr, 0, 0x12, N),
    (
        &[0x19, 1, 2, 3, 4, 5, 6, 7],
        8,
        N,
        T::Tsc,
        0,
        0x7060504030201,
        N,
    ),
    (&[0x59, 0x12], 2, N, T::Mtc, 0, 0x12, N),
    (&[0x02, 0x73], 7, N, T::Tma, 0, 0, N),
    (&[0x02, 0x73, 1, 2], 7, N, T::Tma, 0, 0x201, N),
    (&[0x02, 0x73, 0, 0, 0, 0xff, 1], 7, N, T::Tma, 0x1ff, 0, N),
    (
        &[0x02, 0x73, 0x80, 0xc0, 0, 0xff, 1],
        7,
        N,
        T::Tma,
        0x1ff,
        0xc080,
        N,
    ),
    (&[0x03], 1, N, T::Cyc, 0, 0, N),
    (&[0x0b], 1, N, T::Cyc, 0, 1, N),
    (&[0xfb], 1, N, T::Cyc, 0, 0x1f, N),
    (&[0x07, 2], 2, N, T::Cyc, 0, 0x20, N),
    (&[0xff, 0xfe], 2, N, T::Cyc, 0, 0xfff, N),
    (&[0x07, 1, 2], 3, N, T::Cyc, 0, 0x1000, N),
    (&[0xff, 0xff, 0xfe], 3, N, T::Cyc, 0, 0x7ffff, N),
    (
        &[0x07, 1, 1, 1, 1, 1, 1, 1, 1, 2],
        10,
        N,
        T::Cyc,
        0,
        0x2000000000000000,
        N,
    ),
    (
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xe],
        10,
        N,
        T::Cyc,
        0,
        0xffffffffffffffff,
        N,
    ),
    (
        &[0x02, 0xc8, 1, 2, 3, 4, 5],
        7,
        N,
        T::Vmcs,
        5,
        0x504030201,
        N,
    ),
    (&[0x02, 0xf3], 2, N, T::Ovf, 0, 0, N),
    (&[0x02, 0xf3], 2, B4, T::Ovf, 0, 0, N),
    (&[0x02, 0xf3], 2, B8, T::Ovf, 0, 0, N),
    (PSB, 16, N, T::Psb, 0, 0, N),
    (PSB, 16, B4, T::Psb, 0, 0, N),
    (&[0x02, 0x23], 2, N, T::Psbend, 0, 0, N),
    (
        &[0x02, 0xc3, 0x88, 1, 2, 3, 4, 5, 6, 7],
        11,
        N,
        T::Mnt,
        0,
        0x7060504030201,
        N,
    ),
    (&[0x02, 0x12, 1, 2, 3, 4], 6, N, T::Ptwrite, 0, 0x4030201, N),
    (
        &[0x02, 0x32, 1, 2, 3, 4, 5, 6, 7, 8],
        10,
        N,
        T::Ptwrite,
        1,
        0x807060504030201,
        N,
    ),
    (
        &[0x02, 0x92, 1, 2, 3, 4],
        6,
        N,
        T::PtwriteIp,
        0,
        0x4030201,
        N,
    ),
    (&[0x02, 0x62], 2, N, T::Exstop, 0, 0, N),
    (&[0x02, 0xe2], 2, N, T::ExstopIp, 0, 0, N),
    (
        &[0x02, 0xc2, 0xff, 2, 3, 4, 7, 6, 7, 8],
        10,
        N,
        T::Mwait,
        0,
        0x8070607040302ff,
        N,
    ),
    (&[0x02, 0x22, 0x80, 0x34], 4, N, T::Pwre, 0, 0x3480, N),
    (
        &[0x02, 0xa2, 0xff, 0xff, 0xff, 0xff, 0xff],
        7,
        N,
        T::Pwrx,
        0,
        0xffffffffff,
        N,
    ),
    (&[0x02, 0x63, 0x00], 3, N, T::Bbp, 0, 0, B8),
    (&[0x02, 0x63, 0x80], 3, N, T::Bbp, 1, 0, B4),
    (&[0x02, 0x63, 0x9f], 3, N, T::Bbp, 1, 0x1f, B4),
    (&[0x04], 5, B4, T::Bip, 0, 0, B4),
    (&[0xfc, 1, 2, 3, 4], 5, B4, T::Bip, 0x1f, 0x04030201, B4),
    (
        &[0x04, 1, 2, 3, 4, 5, 6, 7, 8],
        9,
        B8,
        T::Bip,
        0,
        0x0807060504030201,
        B8,
    ),
    (&[0x02, 0x33], 2, B4, T::Bep, 0, 0, N),
    (&[0x02, 0xb3], 2, B8, T::BepIp, 0, 0, N),
    (&[0x02, 0x13, 0x01, 0x03], 4, N, T::Cfe, 1, 3, N),
    (&[0x02, 0x13, 0x9f, 0xff], 4, N, T::CfeIp, 0x1f, 0xff, N),
    (
        &[0x02, 0x53, 0x09, 1, 2, 3, 4, 5, 6, 7],
        11,
        N,
        T::Evd,
        0x09,
        0x7060504030201,
        N,
    ),
];

#[test]
fn perfs_packet_table() {
    for (n, &(bytes, len, ctx, kind, count, payload, new_ctx)) in CASES.iter().enumerate() {
        // perf's table gives `len` bytes, zero-filled after those listed.
        let mut buf = [0u8; 16];
        buf[..bytes.len()].copy_from_slice(bytes);
        let mut c = ctx;
        match get_packet(&buf[..len], &mut c) {
            Decoded::Packet(p, l) => {
                assert_eq!(
                    (p.kind, p.count, p.payload, l, c),
                    (kind, count, payload, len, new_ctx),
                    "case {n}: {bytes:02x?}"
                );
            }
            other => panic!("case {n}: {bytes:02x?}: {other:?}"),
        }
    }
}

#[test]
fn cut_packets_need_more_bytes() {
    // Every multi-byte packet of the table, cut by one byte, wants more (a PAD is
    // one byte and cannot be cut; TNT and CYC of one byte neither).
    for &(bytes, len, ctx, kind, ..) in CASES {
        if len < 2 || kind == T::Pad {
            continue;
        }
        let mut buf = [0u8; 16];
        buf[..bytes.len()].copy_from_slice(bytes);
        let mut c = ctx;
        assert_eq!(
            get_packet(&buf[..len - 1], &mut c),
            Decoded::NeedMoreBytes,
            "{bytes:02x?}"
        );
    }
}
