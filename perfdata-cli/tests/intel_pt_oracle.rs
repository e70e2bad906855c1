//! The Intel PT packet decoder (perfdata-report/src/intel_pt/packet.rs) against perf
//! 6.1's: `perf script -D` dumps every packet of every AUX buffer (intel-pt.c's
//! `intel_pt_dump`), and our dump of the same buffers must equal it line for line
//! (offset, bytes, packet text) on the corpus's Intel PT recordings. A few of perf's lines
//! are asserted literally too, so the test fails without perf.

use std::path::PathBuf;
use std::process::Command;

use perfdata_report::intel_pt::{buffers, packet};
use perfdata_tests::{corpus_dir, perf_available};

/// The corpus's Intel PT recordings (file and pipe mode).
const FILES: &[&str] = &[
    "google-perf.data.intel_pt-4.14",
    "google-perf.data.piped.intel_pt-4.14",
];

fn corpus_file(name: &str) -> Option<PathBuf> {
    let path = corpus_dir()?.join(name);
    path.is_file().then_some(path)
}

fn our_dumps(path: &std::path::Path) -> Vec<String> {
    let reader = perfdata_core::PerfReader::open(path).expect("recording opens");
    buffers(reader)
        .expect("AUX buffers read")
        .iter()
        .map(|b| packet::dump(&b.data))
        .collect()
}

/// The first AUX buffer of a pipe-mode file as perf 6.1 reads it: 16 bytes early, the
/// AUXTRACE record's last four words before the data, the data's last 16 bytes left out.
fn shifted_first_buffer(path: &std::path::Path) -> Vec<u8> {
    let reader = perfdata_core::PerfReader::open(path).expect("recording opens");
    let first = buffers(reader).expect("AUX buffers read").remove(0);
    let mut bytes = Vec::new();
    for word in [first.idx, first.tid as u32, first.cpu as u32, 0] {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    bytes.extend_from_slice(&first.data[..first.data.len() - 16]);
    bytes
}

/// perf's dump blocks: from each ". ... Intel Processor Trace data" line through the
/// packet lines after it.
fn perf_dumps(path: &std::path::Path) -> Vec<String> {
    let out = Command::new("perf")
        .args(["script", "-D", "-i"])
        .arg(path)
        .output()
        .expect("perf runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with(". ... Intel Processor Trace data") {
            blocks.extend(current.take());
            current = Some(format!("{line}\n"));
        } else if let Some(block) = current.as_mut() {
            if line.starts_with(".  ") && line.as_bytes().get(11) == Some(&b':') {
                block.push_str(line);
                block.push('\n');
            } else {
                blocks.extend(current.take());
            }
        }
    }
    blocks.extend(current);
    blocks
}

#[test]
fn packet_dump_equals_perf_dump() {
    if !perf_available() {
        return;
    }
    for name in FILES {
        let Some(path) = corpus_file(name) else {
            eprintln!("SKIP: {name} is not in PERFDATA_CORPUS");
            continue;
        };
        let mut ours = our_dumps(&path);
        let perf = perf_dumps(&path);
        if name.contains("piped") {
            // perf 6.1 reads a pipe-mode *file* through its pipe path but seeks to the
            // AUX data (session.c, PERF_RECORD_AUXTRACE: `lseek(fd, file_offset +
            // header.size)`) with an offset that does not count the 16-byte pipe header:
            // it takes the data 16 bytes early (the record's idx, tid, cpu, reserved
            // first), then reads the next record header inside the data, finds size 0
            // and stops ("bad event header size"), after the first buffer.
            ours = vec![packet::dump(&shifted_first_buffer(&path))];
        }
        assert_eq!(ours.len(), perf.len(), "{name}: AUX buffers dumped");
        for (i, (o, p)) in ours.iter().zip(&perf).enumerate() {
            for (n, (ol, pl)) in o.lines().zip(p.lines()).enumerate() {
                assert_eq!(ol, pl, "{name}: buffer {i}, line {n}");
            }
            assert_eq!(o.lines().count(), p.lines().count(), "{name}: buffer {i}");
        }
    }
}

#[test]
fn packet_dump_has_perfs_lines() {
    let Some(path) = corpus_file(FILES[0]) else {
        eprintln!("SKIP: PERFDATA_CORPUS is not set");
        return;
    };
    let dumps = our_dumps(&path);
    // Buffer 0 (cpu 0) and buffer 1 (cpu 3), as perf script -D prints them.
    let cpu0: Vec<&str> = dumps[0].lines().take(16).collect();
    assert_eq!(
        cpu0,
        [
            ". ... Intel Processor Trace data: size 12240 bytes",
            ".  00000000:  02 82 02 82 02 82 02 82 02 82 02 82 02 82 02 82 PSB",
            ".  00000010:  00 00 00                                        PAD",
            ".  00000013:  99 20                                           MODE.TSX TXAbort:0 InTX:0",
            ".  00000015:  99 01                                           MODE.Exec IF:0 64",
            ".  00000017:  7d 00 d3 60 b9 ff ff 00                         FUP 0xffffb960d300",
            ".  0000001f:  00 00 00 00 00 00 00                            PAD",
            ".  00000026:  02 43 00 34 d4 3f 00 00                         PIP 0x1fea1a00 (NR=0)",
            ".  0000002e:  00 00 00 00 00 00 00 00                         PAD",
            ".  00000036:  19 e8 cf d2 4c bc 00 00                         TSC 0xbc4cd2cfe8",
            ".  0000003e:  00 00 00 00 00 00 00 00                         PAD",
            ".  00000046:  02 73 3c b2 00 30 00 00                         TMA CTC 0xb23c FC 0x30",
            ".  0000004e:  00 00                                           PAD",
            ".  00000050:  02 03 1d 00                                     CBR 0x1d",
            ".  00000054:  02 23 00                                        PSBEND",
            ".  00000057:  71 02 d3 60 b9 ff ff 00                         TIP.PGE 0xffffb960d302",
        ]
    );
    let tnt: Vec<&str> = dumps[0].lines().skip(17).take(5).collect();
    assert_eq!(
        tnt,
        [
            ".  00000060:  06                                              TNT T (1)",
            ".  00000061:  2d 94 d7 00 00 00 00                            TIP 0xd794",
            ".  00000068:  4d a2 20 74 b9                                  TIP 0xb97420a2",
            ".  0000006d:  ee                                              TNT TTNTTT (6)",
            ".  0000006e:  1e 00                                           TNT TTT (3)",
        ]
    );
    // The PSBs of cpu 3's buffer: the offsets `perf script` prints as "psb offs".
    let psbs: Vec<&str> = dumps[1]
        .lines()
        .filter(|l| l.ends_with(" PSB"))
        .map(|l| l[3..11].trim_start_matches('0'))
        .collect();
    assert_eq!(
        psbs,
        ["", "4258", "8078", "c090", "100d0", "14090", "18190", "1c150", "20190"]
    );
}

/// Damaged buffers: the dump steps over bytes that are no packet and a packet cut by the
/// buffer's end as perf does ("Bad packet!", one byte at a time), and never panics.
#[test]
fn damaged_buffers_are_bad_packets() {
    // A PSB cut short, an unknown extended opcode, a TSC cut by the end (0x82 alone is
    // a short TNT: its top set bit ends the six bits).
    let buf = [0x02, 0x82, 0x02, 0x82, 0x02, 0xff, 0x19, 0x01];
    let dump = packet::dump(&buf);
    assert_eq!(
        dump,
        ". ... Intel Processor Trace data: size 8 bytes\n\
         .  00000000:  02                                              Bad packet!\n\
         .  00000001:  82                                              TNT NNNNNT (6)\n\
         .  00000002:  02                                              Bad packet!\n\
         .  00000003:  82                                              TNT NNNNNT (6)\n\
         .  00000004:  02                                              Bad packet!\n\
         .  00000005:  ff                                              Bad packet!\n\
         .  00000006:  19                                              Bad packet!\n\
         .  00000007:  01                                              TIP.PGD no ip\n"
    );
    // Every byte value, alone and cut anywhere: a packet, bad, or more bytes needed.
    for first in 0..=255u8 {
        for second in [0u8, 0x82, 0x23, 0xff] {
            let buf = [
                first, second, 2, 0x82, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ];
            for cut in 0..buf.len() {
                let _ = packet::dump(&buf[..cut]);
            }
        }
    }
}
