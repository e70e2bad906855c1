//! The Intel PT packet decoder (perfdata-report/src/intel_pt/packet.rs) against perf
//! 6.1's: `perf script -D` dumps every packet of every AUX buffer (intel-pt.c's
//! `intel_pt_dump`), and our dump of the same buffers must equal it line for line
//! (offset, bytes, packet text) on the corpus's Intel PT recordings. A few of perf's lines
//! are asserted literally too, so the test fails without perf.

use std::path::PathBuf;
use std::process::Command;

use perfdata_report::intel_pt::{packet, read_trace};
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
    let trace = read_trace(reader).expect("AUX buffers read");
    trace
        .buffers
        .iter()
        .map(|b| packet::dump(&trace.data(b).expect("AUX data read")))
        .collect()
}

/// The first AUX buffer of a pipe-mode file as perf 6.1 reads it: 16 bytes early, the
/// AUXTRACE record's last four words before the data, the data's last 16 bytes left out.
fn shifted_first_buffer(path: &std::path::Path) -> Vec<u8> {
    let reader = perfdata_core::PerfReader::open(path).expect("recording opens");
    let trace = read_trace(reader).expect("AUX buffers read");
    let first = &trace.buffers[0];
    let data = trace.data(first).expect("AUX data read");
    let mut bytes = Vec::new();
    for word in [first.idx, first.tid as u32, first.cpu as u32, 0] {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    bytes.extend_from_slice(&data[..data.len() - 16]);
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

#[perfdata_oracle::needs(perf, corpus)]
#[test]
fn packet_dump_equals_perf_dump() {
    for name in FILES {
        let path = corpus_file(name).expect("the corpus holds the Intel PT recordings");
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

#[perfdata_oracle::needs(corpus)]
#[test]
fn packet_dump_has_perfs_lines() {
    let path = corpus_file(FILES[0]).expect("the corpus holds the Intel PT recording");
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

/// The decoder's reports for every queue of `path` with perf's walker when the binaries
/// are missing: the events perf script synthesizes from them (PSB, CBR, the branches
/// perf's default `--itrace` keeps: asynchronous ones and trace ends) and the errors,
/// as text lines in perf's units.
fn decoded(path: &std::path::Path) -> (Vec<String>, Vec<String>) {
    use perfdata_report::intel_pt::decoder::Decoder;
    use perfdata_report::intel_pt::state::{flags, kind, DecodeError, NoCode};
    let reader = perfdata_core::PerfReader::open(path).expect("recording opens");
    let trace = perfdata_report::intel_pt::read_trace(reader).expect("trace read");
    let info = trace.info.expect("an Intel PT AUXTRACE_INFO");
    let (mut events, mut errors) = (Vec::new(), Vec::new());
    for idx in trace.queue_indexes() {
        let cpu = trace.buffers.iter().find(|b| b.idx == idx).unwrap().cpu;
        let mut decoder = Decoder::new(trace.params, trace.queue(idx), NoCode);
        for _ in 0..1_000_000 {
            let s = decoder.decode().clone();
            let ns = info.tc.to_perf_time(s.timestamp);
            let us = format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000);
            match s.err {
                Some(DecodeError::NoData) => break,
                Some(e) => errors.push(format!(
                    "{}.{:09} cpu {cpu} ip {:#x} code {}: {}",
                    ns / 1_000_000_000,
                    ns % 1_000_000_000,
                    s.from_ip,
                    e.code(),
                    e.message()
                )),
                None => {
                    if s.kind & kind::PSB_EVT != 0 {
                        events.push(format!(
                            "{us} [{cpu:03}] psb offs: {:#x} {:x}",
                            s.psb_offset, s.from_ip
                        ));
                    }
                    if s.kind & kind::CBR_CHG != 0 {
                        events.push(format!("{us} [{cpu:03}] cbr: {} {:x}", s.cbr, s.from_ip));
                    }
                    if s.kind & kind::BRANCH != 0
                        && (s.flags & flags::ASYNC != 0 || s.kind & kind::TRACE_END != 0)
                    {
                        events.push(format!("{us} branches: {:x} => {:x}", s.from_ip, s.to_ip));
                    }
                }
            }
        }
    }
    (events, errors)
}

/// The decoder's events are perf script's synthesized events, at perf's times; its
/// errors hold every error line perf prints, in order, at perf's nanosecond (perf drops
/// those of a DSO whose data it already failed to read: that filter is the walker's).
#[perfdata_oracle::needs(corpus)]
#[test]
fn decoder_events_equal_perfs() {
    let path = corpus_file(FILES[0]).expect("the corpus holds the Intel PT recording");
    let (events, errors) = decoded(&path);
    // perf script's psb, cbr and branches lines (time, cpu, payload, ips), cpu 0's
    // queue first.
    assert_eq!(
        events,
        [
            "641.257928 [000] psb offs: 0x0 ffffffffb960d300",
            "641.257928 [000] cbr: 29 ffffffffb960d300",
            "641.257937 branches: 7fb36d296300 => ffffffffba001340",
            "641.256845 [003] psb offs: 0x0 ffffffffb960d300",
            "641.256845 [003] cbr: 29 ffffffffb960d300",
            "641.256912 branches: 7fb36d08bd60 => ffffffffba001340",
            "641.257059 [003] psb offs: 0x4258 0",
            "641.257183 [003] psb offs: 0x8078 0",
            "641.257183 branches: ffffffffb960d300 => 0",
            "641.257315 [003] psb offs: 0xc090 0",
            "641.257482 [003] psb offs: 0x100d0 0",
            "641.257552 [003] psb offs: 0x14090 0",
            "641.257676 [003] psb offs: 0x18190 0",
            "641.257740 [003] psb offs: 0x1c150 0",
            "641.257864 branches: 5cba63221580 => ffffffffba001340",
            "641.257866 [003] psb offs: 0x20190 0",
            "641.257903 branches: 5cba631ef570 => ffffffffba001340",
        ]
    );
    // perf's first error line of cpu 0, then some of cpu 3 (the first, last, ...).
    let perf_lines = [
        "641.257943456 cpu 0 ip 0x7fb36d252e68 code 5: Failed to get instruction",
        "641.256845844 cpu 3 ip 0xffffffffb960d302 code 5: Failed to get instruction",
        "641.256915789 cpu 3 ip 0x7fb36d08bd60 code 5: Failed to get instruction",
        "641.257424123 cpu 3 ip 0x7fb36c944e70 code 5: Failed to get instruction",
        "641.257791789 cpu 3 ip 0x7fb36cc6bb4f code 5: Failed to get instruction",
        "641.257910789 cpu 3 ip 0xfffffe000008a000 code 5: Failed to get instruction",
    ];
    assert_subsequence(&errors, perf_lines.iter().map(|l| l.to_string()));
    if perf_available() {
        let perf_errors = error_lines(&perf_script_text(&path));
        assert_eq!(perf_errors.len(), 114);
        // Our errors are per queue, perf's interleaved by time: compare per cpu.
        for cpu in ["0", "3"] {
            let pick = |v: &[String]| -> Vec<String> {
                v.iter()
                    .filter(|l| l.split(' ').nth(2) == Some(cpu))
                    .cloned()
                    .collect()
            };
            assert_subsequence(&pick(&errors), pick(&perf_errors).into_iter());
        }
    }
}

/// Every one of `wanted` is in `have`, in order.
fn assert_subsequence(have: &[String], wanted: impl Iterator<Item = String>) {
    let mut at = 0;
    for w in wanted {
        match have[at..].iter().position(|h| *h == w) {
            Some(i) => at += i + 1,
            None => panic!("{w:?} is not among the decoder's errors (in order)"),
        }
    }
}

/// Damaged AUX data through the decoder: garbage, a PSB+ cut short, the real trace cut
/// in the middle or with bytes overwritten. Each ends in "No more data" after a bounded
/// number of states (a bad byte is a "Bad packet" error and one byte stepped over, as
/// perf's `intel_pt_bad_packet`), never a panic or an endless loop.
#[test]
fn decoder_survives_damaged_buffers() {
    use perfdata_report::intel_pt::decoder::Decoder;
    use perfdata_report::intel_pt::state::{DecodeError, DecoderParams, NoCode};
    let mut cases: Vec<Vec<u8>> = Vec::new();
    // A PSB, then garbage from a simple generator.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut garbage = vec![
        2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
    ];
    for _ in 0..4000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        garbage.push(x as u8);
    }
    cases.push(garbage);
    cases.push(vec![
        2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 0x19,
    ]);
    cases.push(vec![0xff; 64]);
    let mut params = DecoderParams {
        branch_enable: true,
        return_compression: true,
        ..DecoderParams::default()
    };
    if let Some(path) = corpus_file(FILES[0]) {
        let reader = perfdata_core::PerfReader::open(&path).expect("recording opens");
        let trace = perfdata_report::intel_pt::read_trace(reader).expect("trace read");
        params = trace.params;
        let real = trace.data(&trace.buffers[1]).expect("AUX data read");
        cases.push(real[..real.len() / 3].to_vec());
        let mut stamped = real.clone();
        for i in (100..stamped.len()).step_by(997) {
            stamped[i] = 0xd5;
        }
        cases.push(stamped);
    }
    for (n, data) in cases.iter().enumerate() {
        let mut decoder = Decoder::new(params, vec![(data.clone(), 0)], NoCode);
        let mut states = 0usize;
        let mut bad = 0usize;
        loop {
            let state = decoder.decode();
            states += 1;
            match state.err {
                Some(DecodeError::NoData) => break,
                Some(DecodeError::BadPacket) => bad += 1,
                _ => {}
            }
            assert!(
                states <= 2 * data.len() + 10,
                "case {n}: no end after {states} states"
            );
        }
        // Calling on after the end stays at the end.
        assert_eq!(decoder.decode().err, Some(DecodeError::NoData));
        if n == 0 {
            assert!(bad > 0, "garbage has bad packets");
        }
    }
}

/// A trace whose largest buffer is more than the decoder holds is left whole (no
/// buffer kept, not decoded, that buffer's size said), and only an Intel PT trace's
/// buffers are kept. The buffers' bytes are not held: each is read from the file.
#[perfdata_oracle::needs(corpus)]
#[test]
fn a_buffer_beyond_the_limit_is_not_held() {
    use perfdata_report::intel_pt::read_trace_within;
    let path = corpus_file("google-perf.data.intel_pt-4.14").expect("corpus");
    let whole = read_trace(perfdata_core::PerfReader::open(&path).unwrap()).unwrap();
    let largest = whole.buffers.iter().map(|b| b.size).max().unwrap();
    assert!(whole.info.is_some() && largest > 10_000 && whole.too_large == 0);
    // Each buffer's bytes are where the AUXTRACE record says, its size long.
    for b in whole.buffers.iter() {
        assert_eq!(whole.data(b).unwrap().len() as u64, b.size);
    }
    let cut =
        read_trace_within(perfdata_core::PerfReader::open(&path).unwrap(), largest - 1).unwrap();
    assert!(cut.info.is_none() && cut.buffers.is_empty());
    assert_eq!(cut.too_large, largest);
    let kept = read_trace_within(perfdata_core::PerfReader::open(&path).unwrap(), largest).unwrap();
    assert!(kept.info.is_some() && kept.too_large == 0);
    // An ETM recording has AUX buffers too: none kept.
    let etm = corpus_file("jbeich-etm-perf_etm.data").expect("corpus");
    let etm = read_trace(perfdata_core::PerfReader::open(&etm).unwrap()).unwrap();
    assert!(etm.info.is_none() && etm.buffers.is_empty());
}

/// What `perf script -i path` prints on stdout.
pub(crate) fn perf_script_text(path: &std::path::Path) -> String {
    let out = Command::new("perf")
        .args(["script", "-i"])
        .arg(path)
        .output()
        .expect("perf runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// perf script's instruction trace error lines as `T cpu C ip IP code ...` (pid and tid
/// left out: the decoder's queues do not know them).
pub(crate) fn error_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix(" instruction trace error type 1 time "))
        .map(|l| {
            // "T cpu C pid P tid T ip IP code ..."
            let f: Vec<&str> = l.splitn(10, ' ').collect();
            format!("{} cpu {} ip {} {}", f[0], f[2], f[8], f[9])
        })
        .collect()
}

/// A recording read from memory (no file to read the buffers from again) has its AUX
/// data copied to a temporary file as it is read: the same buffers, the same bytes, and
/// the decoder's states the same as from the file.
#[perfdata_oracle::needs(corpus)]
#[test]
fn buffers_of_an_input_not_read_again_are_copied() {
    use perfdata_core::{PerfReader, ReadOptions};
    use perfdata_report::intel_pt::decoder::Decoder;
    use perfdata_report::intel_pt::state::NoCode;
    let path = corpus_file("google-perf.data.intel_pt-4.14").expect("corpus");
    let file = read_trace(PerfReader::open(&path).unwrap()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let copied = read_trace(PerfReader::from_vec(bytes, ReadOptions::default()).unwrap()).unwrap();
    assert_eq!(copied.buffers.len(), file.buffers.len());
    for (a, b) in file.buffers.iter().zip(copied.buffers.iter()) {
        assert_eq!(
            (a.file_offset, a.idx, a.size),
            (b.file_offset, b.idx, b.size)
        );
        let same = file.data(a).unwrap() == copied.data(b).unwrap();
        assert!(same, "buffer at {:#x}: its copy differs", a.file_offset);
    }
    for idx in file.queue_indexes() {
        let states = |t: &perfdata_report::intel_pt::Trace| {
            let mut d = Decoder::new(t.params, t.queue(idx), NoCode);
            let mut out = Vec::new();
            loop {
                let s = d.decode().clone();
                if s.err == Some(perfdata_report::intel_pt::state::DecodeError::NoData) {
                    return out;
                }
                out.push((s.timestamp, s.from_ip, s.to_ip, s.kind));
            }
        };
        let ours = states(&file);
        assert!(ours.len() > 20, "queue {idx}: {} states", ours.len());
        assert_eq!(ours, states(&copied), "queue {idx}");
    }
}

/// A pipe-mode recording's trace is not decoded (docs/intel-pt.md, what is left): the
/// listing says so, from stdin and from the file, and lists the recorded samples; a
/// file-mode recording's decoding says nothing of it.
#[perfdata_oracle::needs(corpus)]
#[test]
fn an_undecoded_trace_is_said() {
    let piped = corpus_file("google-perf.data.piped.intel_pt-4.14").expect("corpus");
    let run = |path: &std::path::Path, stdin: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_perfdata"));
        cmd.arg("script");
        if stdin {
            cmd.args(["-i", "-"])
                .stdin(std::fs::File::open(path).expect("opens"));
        } else {
            cmd.arg("-i").arg(path);
        }
        let out = cmd.output().expect("perfdata runs");
        assert!(out.status.success());
        (
            String::from_utf8_lossy(&out.stdout).lines().count(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let said = "the Intel PT trace is not decoded";
    for stdin in [false, true] {
        let (lines, stderr) = run(&piped, stdin);
        assert_eq!(lines, 11, "the recorded samples");
        assert!(stderr.contains(said), "{stderr}");
    }
    let file = corpus_file(FILES[0]).expect("corpus");
    let (_, stderr) = run(&file, false);
    assert!(!stderr.contains(said), "{stderr}");
}
