//! `RecordRef::sample` (the borrowed `SampleView`) reads exactly what the owned `Sample`
//! model decodes: on every SAMPLE of every corpus file and fixture the view's
//! `to_sample` equals the decoded record's body and the bytes it leaves are the record's
//! `extra`; where decoding fails the view fails too. Cut short or with its counts made
//! huge, each kind of sample still gets the same outcome from both.

use perfdata_core::attr::SampleType;
use perfdata_core::raw::{Origin, OwnedRecord};
use perfdata_core::record::{RecordBody, RecordType};
use perfdata_core::{PerfReader, RecordRef};
use perfdata_tests::{all_inputs, corpus_dir, name};

/// Both readings of one SAMPLE's bytes: `Ok(true)` when both read it and agree,
/// `Ok(false)` when both refuse it, `Err` saying how they differ.
fn compare(item: &RecordRef<'_>) -> Result<bool, String> {
    let decoded = item.decode();
    let view = item.sample();
    match (decoded, view) {
        (Ok(record), Ok(Some(view))) => {
            let RecordBody::Sample(owned) = &record.body else {
                return Err(format!("decoded as {:?}", record.body));
            };
            if view.to_sample() != **owned {
                return Err(format!("view {view:?}\n != owned {owned:?}"));
            }
            let rest = &item.raw.bytes[8 + view.len..];
            if rest != record.extra.as_slice() {
                return Err(format!(
                    "view leaves {} bytes, decode {}",
                    rest.len(),
                    record.extra.len()
                ));
            }
            Ok(true)
        }
        (Err(_), Err(_)) => Ok(false),
        (d, v) => Err(format!(
            "decode {:?} but view {:?}",
            d.map(|_| ()),
            v.map(|_| ())
        )),
    }
}

#[test]
fn the_view_reads_every_sample_as_the_model_does() {
    let mut samples = 0u64;
    let mut both_failed = 0u64;
    // How many samples carried each variable-length field.
    let mut seen = [0u64; 6];
    let kinds = [
        SampleType::CALLCHAIN,
        SampleType::RAW,
        SampleType::READ,
        SampleType::REGS_USER,
        SampleType::STACK_USER,
        SampleType::BRANCH_STACK,
    ];
    for input in all_inputs() {
        let Ok(mut reader) = PerfReader::open(&input) else {
            continue;
        };
        // The corrupt corpus file ends in an error: its samples before it count.
        while let Ok(Some(item)) = reader.next_record() {
            if item.raw.record_type() != RecordType::Sample {
                assert!(item.sample().unwrap().is_none());
                continue;
            }
            match compare(&item) {
                Ok(true) => {
                    samples += 1;
                    let view = item.sample().unwrap().unwrap();
                    let present = [
                        view.callchain.is_some(),
                        view.raw.is_some(),
                        view.read.is_some(),
                        view.regs_user.is_some(),
                        view.stack_user.is_some(),
                        view.branch_stack.is_some(),
                    ];
                    for (n, p) in seen.iter_mut().zip(present) {
                        *n += u64::from(p);
                    }
                }
                Ok(false) => both_failed += 1,
                Err(e) => panic!("{} at {}: {e}", name(&input), item.raw.offset),
            }
        }
    }
    eprintln!("{samples} samples equal, {both_failed} refused by both; fields {seen:?}");
    // The fixtures alone hold thousands of samples with callchains, tracepoint data and
    // DWARF registers and stacks (5,563); the corpus more than doubles them.
    let floor = if corpus_dir().is_some() {
        12_000
    } else {
        5_000
    };
    assert!(samples > floor, "{samples}");
    for (i, kind) in kinds.iter().enumerate() {
        if matches!(i, 2 | 5) && corpus_dir().is_none() {
            continue; // reads and branch stacks are in the corpus only
        }
        assert!(seen[i] > 0, "no sample with {kind:?}");
    }
}

/// Every cut of the first sample of each sample_type, and every word of it set to
/// all-ones (a count of 2^64 - 1 where a count is), reads the same both ways.
#[test]
fn cut_and_inflated_samples_get_the_same_outcome() {
    let mut tried = 0;
    for input in all_inputs() {
        let Ok(mut reader) = PerfReader::open(&input) else {
            continue;
        };
        let meta = reader.meta().clone();
        let mut done = Vec::new();
        let mut firsts = Vec::new();
        while let Ok(Some(item)) = reader.next_record() {
            if item.raw.record_type() != RecordType::Sample {
                continue;
            }
            let Some(event) = item.locate().event else {
                continue;
            };
            if !done.contains(&event) && item.raw.bytes.len() <= 4096 {
                done.push(event);
                firsts.push(item.raw.bytes.to_vec());
            }
        }
        for bytes in firsts {
            let mut variants = Vec::new();
            for cut in (8..bytes.len()).step_by(4) {
                variants.push(with_size(&bytes[..cut], meta.endian));
            }
            for w in (8..bytes.len().saturating_sub(7)).step_by(8) {
                let mut b = bytes.clone();
                b[w..w + 8].fill(0xff);
                variants.push(b);
            }
            for b in variants {
                let owned = OwnedRecord {
                    bytes: b,
                    payload: Vec::new(),
                    rest: 0,
                    offset: 0,
                    origin: Origin::Top,
                    stream: 0,
                };
                let item = RecordRef::new(owned.as_raw(meta.endian), &meta);
                if let Err(e) = compare(&item) {
                    panic!("{}: {e}", name(&input));
                }
                tried += 1;
            }
        }
    }
    // 897 on the fixtures alone.
    let floor = if corpus_dir().is_some() { 1000 } else { 800 };
    assert!(tried > floor, "{tried}");
}

/// `bytes` with the header's size set to its length.
fn with_size(bytes: &[u8], endian: perfdata_core::Endian) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let size = b.len() as u16;
    b[6..8].copy_from_slice(&match endian {
        perfdata_core::Endian::Little => size.to_le_bytes(),
        perfdata_core::Endian::Big => size.to_be_bytes(),
    });
    b
}
