//! Property tests: for any event format and any field values, a SAMPLE encodes and
//! decodes back to itself in both byte orders; any attr bytes of any length survive a
//! round trip; any sequence of records is framed back exactly.

use binrw::Endian;
use perfdata_core::attr::{BranchSampleType, PerfEventAttr, ReadFormat, SampleType};
use perfdata_core::raw::SliceRecords;
use perfdata_core::record::{
    AuxSample, BranchEntry, BranchStack, Callchain, CpuRes, EventFormat, PidTid, RawData, ReadData,
    ReadValue, Regs, Sample, StackUser,
};
use perfdata_core::{decode, encode};
use proptest::prelude::*;

fn endian() -> impl Strategy<Value = Endian> {
    prop_oneof![Just(Endian::Little), Just(Endian::Big)]
}

fn format() -> impl Strategy<Value = EventFormat> {
    (
        any::<u32>(),
        0u64..32,
        prop_oneof![
            Just(BranchSampleType::empty()),
            Just(BranchSampleType::HW_INDEX),
            Just(BranchSampleType::HW_INDEX | BranchSampleType::COUNTERS),
            Just(BranchSampleType::COUNTERS),
        ],
        any::<u64>(),
        any::<u64>(),
    )
        .prop_map(|(st, rf, bst, regs_user, regs_intr)| {
            // Bits 0..=24 are the PERF_SAMPLE_* layout bits; WEIGHT and WEIGHT_STRUCT
            // share one slot, so at most one of them.
            let mut sample_type = SampleType::from_bits_truncate(st as u64 & 0x1ff_ffff);
            if sample_type.contains(SampleType::WEIGHT) {
                sample_type.remove(SampleType::WEIGHT_STRUCT);
            }
            EventFormat {
                sample_type,
                read_format: ReadFormat::from_bits_truncate(rf),
                branch_sample_type: bst,
                sample_regs_user: regs_user,
                sample_regs_intr: regs_intr,
                sample_id_all: true,
            }
        })
}

/// A sample with every field its format asks for, its values taken from `v` and `bytes`;
/// `n` sizes the variable-length parts.
fn sample_for(f: EventFormat, v: &[u64], bytes: &[u8], n: usize) -> Sample {
    let st = f.sample_type;
    let has = |b| st.contains(b);
    let val = |i: usize| v[i % v.len()];
    let rf = f.read_format;
    let opt = |b: bool, x: u64| b.then_some(x);
    let regs = |mask: u64, abi: u64| Regs {
        abi,
        regs: if abi == 0 {
            vec![]
        } else {
            (0..mask.count_ones() as usize).map(val).collect()
        },
    };
    let read = || {
        let value = |i: usize| ReadValue {
            value: val(i),
            id: opt(rf.contains(ReadFormat::ID), val(i + 1)),
            lost: opt(rf.contains(ReadFormat::LOST), val(i + 2)),
        };
        let time_enabled = opt(rf.contains(ReadFormat::TOTAL_TIME_ENABLED), val(10));
        let time_running = opt(rf.contains(ReadFormat::TOTAL_TIME_RUNNING), val(11));
        if rf.contains(ReadFormat::GROUP) {
            ReadData::Group {
                time_enabled,
                time_running,
                values: (0..n).map(value).collect(),
            }
        } else {
            let v = value(12);
            ReadData::Single {
                value: v.value,
                time_enabled,
                time_running,
                id: v.id,
                lost: v.lost,
            }
        }
    };
    Sample {
        identifier: opt(has(SampleType::IDENTIFIER), val(0)),
        ip: opt(has(SampleType::IP), val(1)),
        tid: has(SampleType::TID).then_some(PidTid {
            pid: val(2) as i32,
            tid: val(3) as i32,
        }),
        time: opt(has(SampleType::TIME), val(4)),
        addr: opt(has(SampleType::ADDR), val(5)),
        id: opt(has(SampleType::ID), val(6)),
        stream_id: opt(has(SampleType::STREAM_ID), val(7)),
        cpu: has(SampleType::CPU).then_some(CpuRes {
            cpu: val(8) as u32,
            res: 0,
        }),
        period: opt(has(SampleType::PERIOD), val(9)),
        read: has(SampleType::READ).then(read),
        callchain: has(SampleType::CALLCHAIN).then(|| Callchain::new((0..n).map(val).collect())),
        raw: has(SampleType::RAW).then(|| {
            // The kernel pads so that the u32 size and the data end 8-aligned.
            let len = (bytes.len() + 4).div_ceil(8) * 8 - 4;
            let mut data = bytes.to_vec();
            data.resize(len, 0);
            RawData::new(data)
        }),
        branch_stack: has(SampleType::BRANCH_STACK).then(|| BranchStack {
            hw_idx: opt(
                f.branch_sample_type.contains(BranchSampleType::HW_INDEX),
                val(13),
            ),
            entries: (0..n)
                .map(|i| BranchEntry {
                    from: val(i),
                    to: val(i + 1),
                    flags: val(i + 2),
                })
                .collect(),
            counters: if f.branch_sample_type.contains(BranchSampleType::COUNTERS) {
                (0..n).map(val).collect()
            } else {
                vec![]
            },
        }),
        regs_user: has(SampleType::REGS_USER).then(|| regs(f.sample_regs_user, val(14) % 3)),
        stack_user: has(SampleType::STACK_USER).then(|| StackUser {
            data: bytes[..bytes.len() / 8 * 8].to_vec(),
            dyn_size: (bytes.len() >= 8).then_some(val(15)),
        }),
        weight: opt(
            st.intersects(SampleType::WEIGHT | SampleType::WEIGHT_STRUCT),
            val(16),
        ),
        data_src: opt(has(SampleType::DATA_SRC), val(17)),
        transaction: opt(has(SampleType::TRANSACTION), val(18)),
        regs_intr: has(SampleType::REGS_INTR).then(|| regs(f.sample_regs_intr, val(19) % 3)),
        phys_addr: opt(has(SampleType::PHYS_ADDR), val(20)),
        cgroup: opt(has(SampleType::CGROUP), val(21)),
        data_page_size: opt(has(SampleType::DATA_PAGE_SIZE), val(22)),
        code_page_size: opt(has(SampleType::CODE_PAGE_SIZE), val(23)),
        aux: has(SampleType::AUX).then(|| AuxSample {
            data: bytes.to_vec(),
        }),
    }
}

proptest! {
    #[test]
    fn any_sample_round_trips(
        f in format(),
        v in prop::collection::vec(any::<u64>(), 1..40),
        bytes in prop::collection::vec(any::<u8>(), 0..64),
        n in 0usize..6,
        e in endian(),
    ) {
        let s = sample_for(f, &v, &bytes, n);
        let encoded = encode(&s, e, ()).unwrap();
        let back: Sample = decode(&encoded, e, (f,), 0, "SAMPLE").unwrap();
        prop_assert_eq!(&back, &s);
        prop_assert_eq!(encode(&back, e, ()).unwrap(), encoded);
    }

    #[test]
    fn any_attr_bytes_round_trip(len in 64usize..200, seed in any::<u64>(), e in endian()) {
        let bytes: Vec<u8> = (0..len)
            .map(|i| (seed.rotate_left(i as u32 % 64) >> (i % 8)) as u8)
            .collect();
        let attr = PerfEventAttr::parse(&bytes, len, e).unwrap();
        prop_assert_eq!(encode(&attr, e, ()).unwrap(), bytes);
        // The same attr in the other byte order reads back to the same fields.
        let other = if e == Endian::Little { Endian::Big } else { Endian::Little };
        let swapped = encode(&attr, other, ()).unwrap();
        prop_assert_eq!(PerfEventAttr::parse(&swapped, len, other).unwrap(), attr);
    }

    #[test]
    fn any_record_sequence_is_framed_back(sizes in prop::collection::vec((1u32..90, 0u16..100), 0..50)) {
        let mut data = Vec::new();
        let mut expected = Vec::new();
        for (ty, words) in sizes {
            // Types whose framing reads a payload length have their own tests.
            let ty = if ty == 66 || ty == 71 { 9 } else { ty };
            let size = 8 + words as usize * 8;
            let start = data.len();
            data.extend_from_slice(&ty.to_le_bytes());
            data.extend_from_slice(&0u16.to_le_bytes());
            data.extend_from_slice(&(size as u16).to_le_bytes());
            data.resize(start + size, ty as u8);
            expected.push((start as u64, ty, size));
        }
        let got: Vec<(u64, u32, usize)> = SliceRecords::new(&data, 0, Endian::Little, 0)
            .map(|r| r.map(|r| (r.offset, r.header.type_, r.bytes.len())))
            .collect::<Result<_, _>>()
            .unwrap();
        prop_assert_eq!(got, expected);
    }
}
