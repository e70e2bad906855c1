//! Whole CFI rows evaluated with gimli.

use super::*;
use crate::unwind::regs::UserState;

/// glibc 2.36's (Debian 12, x86_64) `.eh_frame` CIE, and its FDE of `__vfork`
/// (0xd43b0..0xd43d2) as `readelf --debug-dump=frames` shows them, copied byte for
/// byte; only the FDE's CIE pointer and pc-relative start are re-aimed for the
/// section's new place (`svma`).
fn vfork_eh_frame(svma: u64) -> Vec<u8> {
    let mut eh = vec![
        0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x7a, 0x52, 0x00, 0x01, 0x78, 0x10,
        0x01, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0x00, 0x00,
    ];
    let fde_at = eh.len() as u64;
    eh.extend_from_slice(&[
        0x18, 0x00, 0x00, 0x00, 0x44, 0x24, 0x01, 0x00, 0x28, 0x90, 0xf1, 0xff, 0x22, 0x00, 0x00,
        0x00, 0x00, 0x41, 0x0e, 0x00, 0x09, 0x10, 0x05, 0x48, 0x0e, 0x08, 0x00, 0x00,
    ]);
    let cie_pointer = (fde_at + 4) as u32;
    eh[fde_at as usize + 4..][..4].copy_from_slice(&cie_pointer.to_le_bytes());
    let field = svma + fde_at + 8;
    let start = (0xd43b0u64.wrapping_sub(field)) as u32;
    eh[fde_at as usize + 8..][..4].copy_from_slice(&start.to_le_bytes());
    eh.extend_from_slice(&[0, 0, 0, 0]);
    eh
}

#[test]
fn vforks_return_address_in_rdi_is_found_and_followed() {
    let svma = 0x1a8f40;
    let rows = Rows::of_eh_frame(&vfork_eh_frame(svma), svma, 0x26000, 0x1d2000, Arch::X86_64);
    // From the `pop %rdi` on, the return address is said to be in rdi (after the
    // `push %rdi` too, where it still is, with the CFA 8 bytes up).
    assert_eq!(rows.len(), 2);
    let row = rows.at(0xd43b8).expect("the row after the syscall");
    assert_eq!(
        row,
        Row {
            cfa: Some((7, 0)),
            ra: Rule::Register(5),
            fp: Rule::Undefined
        }
    );
    assert_eq!(rows.at(0xd43b1), Some(row));
    assert_eq!(rows.at(0xd43b0), None, "before the pop: the CIE's rule");
    let pushed = rows.at(0xd43b9).expect("after the push");
    assert_eq!(pushed.cfa, Some((7, 8)));
    assert_eq!(rows.at(0xd43d1), Some(pushed));
    assert_eq!(rows.at(0xd43d2), None, "past the FDE");
    assert!(row.needs_untracked(Arch::X86_64));
    // The sample's registers: perf's default x86_64 mask (AX..SS, R8..R15), DI (5)
    // the return address, SP (7) and BP (6) as sampled.
    let mut regs: Vec<u64> = (0..20).collect();
    regs[5] = 0x5555_0000_1224;
    regs[6] = 0x7ffc_0000_2000;
    regs[7] = 0x7ffc_0000_1000;
    regs[8] = 0x7f00_000d_43b8;
    let user = UserState {
        abi: 2,
        mask: 0xff0fff,
        regs,
        ..Default::default()
    };
    let all = AllRegs::from_user(Arch::X86_64, &user);
    let mut no_stack = |_: u64| Err(());
    assert_eq!(
        row.apply(&all, true, &mut no_stack),
        Ok(Outcome::Caller {
            ra: 0x5555_0000_1224,
            sp: 0x7ffc_0000_1000,
            fp: 0x7ffc_0000_2000
        })
    );
    // A sample without DI: the walk cannot follow it, and says so.
    let without_di = UserState {
        mask: 0xff0fdf,
        regs: user
            .regs
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != 5)
            .map(|(_, r)| *r)
            .collect(),
        ..user
    };
    let all = AllRegs::from_user(Arch::X86_64, &without_di);
    assert_eq!(row.apply(&all, true, &mut no_stack), Err(Fail::Untracked));
}

#[test]
fn rows_framehop_follows_are_not_kept() {
    // The CIE's rule alone (CFA rsp+8, rip at CFA-8) and a frame-pointer row.
    let cfa_in_rbp = Row {
        cfa: Some((6, 16)),
        ra: Rule::Offset(-8),
        fp: Rule::Offset(-16),
    };
    assert!(!cfa_in_rbp.needs_untracked(Arch::X86_64));
    // `_dl_runtime_resolve`'s CFA in rbx, arm64's return address in x16.
    let cfa_in_rbx = Row {
        cfa: Some((3, 8)),
        ..cfa_in_rbp
    };
    assert!(cfa_in_rbx.needs_untracked(Arch::X86_64));
    let lr_in_x16 = Row {
        cfa: Some((31, 0)),
        ra: Rule::Register(16),
        fp: Rule::Same,
    };
    assert!(lr_in_x16.needs_untracked(Arch::Aarch64));
    let mut stack = |addr: u64| if addr == 0x1000 { Ok(0x4000) } else { Err(()) };
    let mut arm = AllRegs::new(Arch::Aarch64);
    arm.set(16, Some(0x40_1234));
    arm.set(31, Some(0x1000));
    arm.set(29, Some(0x2000));
    assert_eq!(
        lr_in_x16.apply(&arm, true, &mut stack),
        Ok(Outcome::Caller {
            ra: 0x40_1234,
            sp: 0x1000,
            fp: 0x2000
        })
    );
    // A saved word outside the stack copy: named by its address.
    let saved = Row {
        cfa: Some((31, 16)),
        ra: Rule::Offset(-8),
        fp: Rule::Offset(-16),
    };
    assert_eq!(saved.apply(&arm, true, &mut stack), Err(Fail::Read(0x1008)));
    let undefined = Row {
        ra: Rule::Undefined,
        ..saved
    };
    assert_eq!(
        undefined.apply(&arm, true, &mut stack),
        Ok(Outcome::Outermost)
    );
}

#[test]
fn a_whole_row_restores_every_register_it_names() {
    // ld.so's `_dl_runtime_resolve_xsavec` inside: CFA rbx+32, rbx at CFA-32, the
    // return address at CFA-8 (its FDE and the PLT's CIE).
    let row = FullRow {
        cfa: Some((3, 32)),
        rules: vec![(3, Rule::Offset(-32)), (16, Rule::Offset(-8))],
    };
    let mut regs = AllRegs::new(Arch::X86_64);
    regs.set(3, Some(0x7ffc_0000_1000));
    regs.set(7, Some(0x7ffc_0000_0800));
    regs.set(12, Some(0x1212));
    let mut stack = |addr: u64| match addr {
        0x7ffc_0000_1000 => Ok(0x7ffc_0000_2000),
        0x7ffc_0000_1018 => Ok(0x5555_0000_25f5),
        _ => Err(()),
    };
    let caller = row.caller(&regs, true, &mut stack).expect("the caller");
    assert_eq!(caller.ip(), Some(0x5555_0000_25f5));
    assert_eq!(caller.sp(), Some(0x7ffc_0000_1020));
    assert_eq!(caller.get(3), Some(0x7ffc_0000_2000), "rbx restored");
    assert_eq!(caller.get(12), Some(0x1212), "r12 unchanged");
    // Without rbx the CFA is not known; a saved word outside the copy neither.
    regs.set(3, None);
    assert_eq!(row.caller(&regs, true, &mut stack), None);
    regs.set(3, Some(0x7ffc_0000_3000));
    assert_eq!(row.caller(&regs, true, &mut stack), None);
}

#[test]
fn a_register_popped_in_the_sampled_epilogue_is_its_callers() {
    // ld.so's `_dl_fixup` sampled at 0xff99, after `add $0x18,%rsp; pop %rbx`: CFA
    // rsp+32, rbx at CFA-40 (8 bytes below rsp, outside the copy), rbp, r12, r13
    // and the return address in the copy (glibc 2.36, readelf's frames-interp).
    let row = FullRow {
        cfa: Some((7, 32)),
        rules: vec![
            (3, Rule::Offset(-40)),
            (6, Rule::Offset(-32)),
            (12, Rule::Offset(-24)),
            (13, Rule::Offset(-16)),
            (16, Rule::Offset(-8)),
        ],
    };
    let sp = 0x7ffe_0000_1000u64;
    let mut regs = AllRegs::new(Arch::X86_64);
    regs.set(7, Some(sp));
    regs.set(3, Some(0x7ffe_0000_2fd0));
    let mut copy = |addr: u64| match addr.checked_sub(sp) {
        Some(at) if at < 0x2000 => Ok(0x1000 + at),
        _ => Err(()),
    };
    let caller = row.caller(&regs, true, &mut copy).expect("the caller");
    assert_eq!(caller.get(3), Some(0x7ffe_0000_2fd0), "rbx as popped");
    assert_eq!(caller.get(6), Some(0x1000), "rbp read at rsp");
    assert_eq!(caller.ip(), Some(0x1018));
    assert_eq!(caller.sp(), Some(sp + 32));
    // Walked to (not sampled), a register's value is not its slot's: not known.
    let walked = row.caller(&regs, false, &mut copy).expect("the caller");
    assert_eq!((walked.get(3), walked.get(6)), (None, Some(0x1000)));
    assert_eq!(walked.ip(), Some(0x1018));
    // A slot above the stack pointer the copy does not hold is not guessed: r13 is
    // not known, and without the return address there is no caller.
    let mut short = |addr: u64| if addr < sp + 16 { copy(addr) } else { Err(()) };
    assert_eq!(row.caller(&regs, true, &mut short), None);
    let mut no_r13 = |addr: u64| if addr == sp + 16 { Err(()) } else { copy(addr) };
    let caller = row.caller(&regs, true, &mut no_r13).expect("the caller");
    assert_eq!((caller.get(13), caller.get(12)), (None, Some(0x1008)));
    // Nor the return address below the stack pointer (the register is this frame's).
    let ra_below = FullRow {
        cfa: Some((7, 0)),
        rules: vec![(16, Rule::Offset(-8))],
    };
    regs.set(16, Some(0x7f00_0000_ff99));
    assert_eq!(ra_below.caller(&regs, true, &mut copy), None);
    // The row framehop cannot follow takes the frame pointer so too.
    let fp_below = Row {
        cfa: Some((7, 32)),
        ra: Rule::Offset(-8),
        fp: Rule::Offset(-40),
    };
    regs.set(6, Some(0x7ffe_0000_3000));
    assert_eq!(
        fp_below.apply(&regs, true, &mut copy),
        Ok(Outcome::Caller {
            ra: 0x1018,
            sp: sp + 32,
            fp: 0x7ffe_0000_3000
        })
    );
    assert_eq!(
        fp_below.apply(&regs, false, &mut copy),
        Err(Fail::Read(sp - 8))
    );
}
