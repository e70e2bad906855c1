//! A borrowed view of PERF_RECORD_SAMPLE: the fixed fields read at the offsets of the
//! event's [`SampleLayout`], the variable ones (callchain, raw data, branch stack, registers, user
//! stack, AUX, group reads) kept as slices of them and read on demand.
//!
//! [`Sample`] copies every variable field into a `Vec`; a profiler that reads ip, pid,
//! time and the callchain of millions of samples needs none of those copies. The view
//! accepts exactly the bytes `Sample`'s model accepts (the same fields, in the kernel's
//! order, each length checked against what is left, nothing allocated), and
//! [`SampleView::to_sample`] gives the owned model back; `tests/tests/sample_view.rs`
//! compares the two on every SAMPLE of every corpus file and fixture.

use binrw::Endian;

use super::layout::{SampleLayout, Slots};
use super::sample::{
    branch_flags_from_big, AuxSample, BranchEntry, BranchStack, Callchain, CpuRes, PidTid, RawData,
    ReadData, ReadValue, Regs, Sample, StackUser,
};
use crate::attr::{BranchSampleType, ReadFormat, SampleType};
use crate::error::{Error, Problem, Result};

/// u64 words in the recording's byte order, read one at a time.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct U64s<'a> {
    bytes: &'a [u8],
    endian: Endian,
}

impl<'a> U64s<'a> {
    /// The words of `bytes` (a multiple of 8 long; a partial last word is ignored).
    pub fn new(bytes: &'a [u8], endian: Endian) -> Self {
        U64s { bytes, endian }
    }

    /// How many words.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len() / 8
    }

    /// No words at all.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Word `i`, if there is one.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u64> {
        let b = self.bytes.get(i.checked_mul(8)?..i.checked_mul(8)? + 8)?;
        Some(word(b, self.endian))
    }

    /// Every word, in order.
    #[inline]
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = u64> + ExactSizeIterator + 'a {
        let endian = self.endian;
        self.bytes.chunks_exact(8).map(move |b| word(b, endian))
    }

    /// The words' bytes as the recording holds them.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The words, copied.
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
}

impl std::fmt::Debug for U64s<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|w| format!("{w:#x}")))
            .finish()
    }
}

#[inline]
fn word(b: &[u8], endian: Endian) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    match endian {
        Endian::Little => u64::from_le_bytes(a),
        Endian::Big => u64::from_be_bytes(a),
    }
}

#[inline]
fn half(b: &[u8], endian: Endian) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    match endian {
        Endian::Little => u32::from_le_bytes(a),
        Endian::Big => u32::from_be_bytes(a),
    }
}

/// Where a body of `len` bytes, shorter than the fixed fields' `p.len`, runs short: at the
/// slot it ends in, or that slot's second u32 where the slot is a pair (TID, CPU) and its
/// first is whole, as a field-by-field read would find.
fn short_prefix(p: &Slots, len: usize) -> Short {
    let at = len / 8 * 8;
    match (p.is_pair(at + 8), len - at >= 4) {
        (true, true) => Short {
            at: at + 4,
            needed: 4,
        },
        (true, false) => Short { at, needed: 4 },
        (false, _) => Short { at, needed: 8 },
    }
}

/// Where the times start in a read's words: after a group's nr, or a single counter's
/// value.
const TIMES_AT: usize = 1;

/// PERF_SAMPLE_READ's bytes with the attr's read_format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadView<'a> {
    words: U64s<'a>,
    format: ReadFormat,
}

impl ReadView<'_> {
    /// A group's read (read_format GROUP): `nr` values.
    pub fn is_group(&self) -> bool {
        self.format.contains(ReadFormat::GROUP)
    }

    /// Time the counter (or group) was enabled (read_format TOTAL_TIME_ENABLED).
    pub fn time_enabled(&self) -> Option<u64> {
        self.format
            .contains(ReadFormat::TOTAL_TIME_ENABLED)
            .then(|| self.words.get(TIMES_AT))
            .flatten()
    }

    /// Time it was running (read_format TOTAL_TIME_RUNNING).
    pub fn time_running(&self) -> Option<u64> {
        let at = TIMES_AT + usize::from(self.format.contains(ReadFormat::TOTAL_TIME_ENABLED));
        self.format
            .contains(ReadFormat::TOTAL_TIME_RUNNING)
            .then(|| self.words.get(at))
            .flatten()
    }

    /// Each counter: the group's members, the leader first, or the one counter.
    pub fn values(&self) -> impl Iterator<Item = ReadValue> + '_ {
        let f = self.format;
        let times = usize::from(f.contains(ReadFormat::TOTAL_TIME_ENABLED))
            + usize::from(f.contains(ReadFormat::TOTAL_TIME_RUNNING));
        let has_id = f.contains(ReadFormat::ID);
        let has_lost = f.contains(ReadFormat::LOST);
        let stride = 1 + usize::from(has_id) + usize::from(has_lost);
        let (first, count) = if self.is_group() {
            (1 + times, (self.words.len() - 1 - times) / stride)
        } else {
            (0, 1)
        };
        (0..count).map(move |i| {
            let at = first + i * stride;
            // A single counter's id and lost follow its times.
            let (id_at, value) = if self.is_group() {
                (at + 1, self.words.get(at))
            } else {
                (1 + times, self.words.get(0))
            };
            ReadValue {
                value: value.unwrap_or(0),
                id: has_id.then(|| self.words.get(id_at)).flatten(),
                lost: has_lost
                    .then(|| self.words.get(id_at + usize::from(has_id)))
                    .flatten(),
            }
        })
    }

    /// The owned model.
    pub fn to_read_data(&self) -> ReadData {
        if self.is_group() {
            ReadData::Group {
                time_enabled: self.time_enabled(),
                time_running: self.time_running(),
                values: self.values().collect(),
            }
        } else {
            let v = self.values().next().unwrap_or(ReadValue {
                value: 0,
                id: None,
                lost: None,
            });
            ReadData::Single {
                value: v.value,
                time_enabled: self.time_enabled(),
                time_running: self.time_running(),
                id: v.id,
                lost: v.lost,
            }
        }
    }
}

/// PERF_SAMPLE_BRANCH_STACK, its entries read on demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchStackView<'a> {
    /// Hardware index of the most recent branch (BRANCH_HW_INDEX).
    pub hw_idx: Option<u64>,
    entries: U64s<'a>,
    /// One u64 per entry with BRANCH_COUNTERS, else empty.
    pub counters: U64s<'a>,
}

impl<'a> BranchStackView<'a> {
    /// How many branches.
    pub fn len(&self) -> usize {
        self.entries.len() / 3
    }

    /// No branches.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The branches, most recent first (flags in their little-endian layout, as
    /// [`BranchEntry`]).
    pub fn entries(&self) -> impl Iterator<Item = BranchEntry> + '_ {
        (0..self.len()).map(move |i| {
            let w = |k| self.entries.get(i * 3 + k).unwrap_or(0);
            let flags = match self.entries.endian {
                Endian::Little => w(2),
                Endian::Big => branch_flags_from_big(w(2)),
            };
            BranchEntry {
                from: w(0),
                to: w(1),
                flags,
            }
        })
    }

    /// The entries' bytes as stored: where they lie in the record tells what a reader
    /// of `entries[0]` with no entries (perf 6.1's LBR call-stack walk) reads instead.
    pub fn entries_bytes(&self) -> &'a [u8] {
        self.entries.bytes
    }

    /// The owned model.
    pub fn to_branch_stack(&self) -> BranchStack {
        BranchStack {
            hw_idx: self.hw_idx,
            entries: self.entries().collect(),
            counters: self.counters.to_vec(),
        }
    }
}

/// REGS_USER / REGS_INTR: the ABI and the registers the attr's mask selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegsView<'a> {
    /// PERF_SAMPLE_REGS_ABI_* (0: none recorded, and no registers follow).
    pub abi: u64,
    /// The registers, lowest mask bit first.
    pub regs: U64s<'a>,
}

/// STACK_USER: the copy of the user stack and how much of it is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackUserView<'a> {
    /// The copy, from the stack pointer up.
    pub data: &'a [u8],
    /// Bytes of the copy that are valid (absent when the copy is empty).
    pub dyn_size: Option<u64>,
}

/// PERF_RECORD_SAMPLE, borrowed from the record's bytes. The fixed fields are read when
/// the view is made; each is `Some` exactly when its PERF_SAMPLE_* bit is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleView<'a> {
    /// PERF_SAMPLE_IDENTIFIER: the event id.
    pub identifier: Option<u64>,
    /// PERF_SAMPLE_IP: instruction pointer.
    pub ip: Option<u64>,
    /// PERF_SAMPLE_TID: process and thread id.
    pub tid: Option<PidTid>,
    /// PERF_SAMPLE_TIME: time (ns).
    pub time: Option<u64>,
    /// PERF_SAMPLE_ADDR: data address.
    pub addr: Option<u64>,
    /// PERF_SAMPLE_ID: event id.
    pub id: Option<u64>,
    /// PERF_SAMPLE_STREAM_ID: the group leader's id.
    pub stream_id: Option<u64>,
    /// PERF_SAMPLE_CPU: CPU and a reserved word.
    pub cpu: Option<CpuRes>,
    /// PERF_SAMPLE_PERIOD: the sample period.
    pub period: Option<u64>,
    /// PERF_SAMPLE_READ: counter values.
    pub read: Option<ReadView<'a>>,
    /// PERF_SAMPLE_CALLCHAIN: instruction pointers, innermost first, with PERF_CONTEXT_*
    /// markers.
    pub callchain: Option<U64s<'a>>,
    /// PERF_SAMPLE_RAW: tracepoint or raw PMU data (the kernel's padding included).
    pub raw: Option<&'a [u8]>,
    /// PERF_SAMPLE_BRANCH_STACK: the last branch records.
    pub branch_stack: Option<BranchStackView<'a>>,
    /// PERF_SAMPLE_REGS_USER: user registers.
    pub regs_user: Option<RegsView<'a>>,
    /// PERF_SAMPLE_STACK_USER: a copy of the user stack.
    pub stack_user: Option<StackUserView<'a>>,
    /// WEIGHT, or WEIGHT_STRUCT read as the same u64.
    pub weight: Option<u64>,
    /// PERF_SAMPLE_DATA_SRC: memory hierarchy source of the access.
    pub data_src: Option<u64>,
    /// PERF_SAMPLE_TRANSACTION: transactional memory abort flags.
    pub transaction: Option<u64>,
    /// PERF_SAMPLE_REGS_INTR: registers at the interrupt.
    pub regs_intr: Option<RegsView<'a>>,
    /// PERF_SAMPLE_PHYS_ADDR: physical data address.
    pub phys_addr: Option<u64>,
    /// PERF_SAMPLE_CGROUP: cgroup id.
    pub cgroup: Option<u64>,
    /// PERF_SAMPLE_DATA_PAGE_SIZE: page size of the data address.
    pub data_page_size: Option<u64>,
    /// PERF_SAMPLE_CODE_PAGE_SIZE: page size of the ip.
    pub code_page_size: Option<u64>,
    /// PERF_SAMPLE_AUX: an AUX area snapshot.
    pub aux: Option<&'a [u8]>,
    /// Bytes of the body the fields took (what follows is the record's `extra`).
    pub len: usize,
}

/// Reads the body front to back; every length is checked against what is left before a
/// slice is taken, so a hostile count is an error, never an allocation or a panic.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    endian: Endian,
}

/// Where the body ran short and how many bytes the field needed: small, so that every
/// field's read returns in registers (a full `Error` per read made the view slower than
/// the owned decode); made an [`Error`] once, by [`SampleView::parse`].
#[derive(Debug, Clone, Copy)]
struct Short {
    at: usize,
    needed: u64,
}

type Step<T> = std::result::Result<T, Short>;

impl<'a> Cursor<'a> {
    #[inline(always)]
    fn short(&self, needed: u64) -> Short {
        Short {
            at: self.pos,
            needed,
        }
    }

    #[inline(always)]
    fn take(&mut self, n: u64) -> Step<&'a [u8]> {
        let left = self.bytes.len() - self.pos;
        if n > left as u64 {
            return Err(self.short(n));
        }
        let s = &self.bytes[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }

    #[inline(always)]
    fn u64(&mut self) -> Step<u64> {
        let endian = self.endian;
        self.take(8).map(|b| word(b, endian))
    }

    #[inline(always)]
    fn u32(&mut self) -> Step<u32> {
        let endian = self.endian;
        self.take(4).map(|b| half(b, endian))
    }

    #[inline(always)]
    fn opt_u64(&mut self, present: bool) -> Step<Option<u64>> {
        if present {
            self.u64().map(Some)
        } else {
            Ok(None)
        }
    }

    /// `count` words.
    #[inline(always)]
    fn words(&mut self, count: u64) -> Step<U64s<'a>> {
        let endian = self.endian;
        let n = count.checked_mul(8).ok_or_else(|| self.short(u64::MAX))?;
        self.take(n).map(|b| U64s::new(b, endian))
    }

    fn regs(&mut self, mask: u64) -> Step<RegsView<'a>> {
        let abi = self.u64()?;
        let n = if abi != 0 { mask.count_ones() } else { 0 };
        Ok(RegsView {
            abi,
            regs: self.words(u64::from(n))?,
        })
    }
}

impl<'a> SampleView<'a> {
    /// The view of a SAMPLE's body (`record[8..]`, after the header) laid out by
    /// `layout`, in `endian`; `offset` is where the body starts in the input, for errors.
    pub fn parse(
        body: &'a [u8],
        layout: &SampleLayout,
        endian: Endian,
        offset: u64,
    ) -> Result<Self> {
        Self::parse_inlined(body, layout, endian, offset)
    }

    /// [`SampleView::parse`], always inlined: for a loop over every sample that keeps a
    /// few of the fields. A view returned through memory by a call is read back right
    /// after the callee stored it field by field, and each read waits for its stores
    /// to land (a third of `perfdata script`'s reading loop).
    #[inline(always)]
    pub fn parse_inlined(
        body: &'a [u8],
        layout: &SampleLayout,
        endian: Endian,
        offset: u64,
    ) -> Result<Self> {
        Self::read(body, layout, endian).map_err(|short| {
            Error::format(
                offset + short.at as u64,
                "record SAMPLE",
                Problem::Truncated {
                    needed: short.needed,
                    available: (body.len() - short.at) as u64,
                },
            )
        })
    }

    #[inline(always)]
    fn read(body: &'a [u8], layout: &SampleLayout, endian: Endian) -> Step<Self> {
        let f = layout.format();
        let st = f.sample_type;
        // The fixed fields, at the layout's offsets (which count the 8-byte header).
        let p = layout.prefix();
        if body.len() < p.len {
            return Err(short_prefix(p, body.len()));
        }
        let at = |o: usize| &body[o - 8..o];
        let u64_at = |o: Option<usize>| o.map(|o| word(at(o), endian));
        let pair = |o: Option<usize>| {
            o.map(|o| {
                let w = at(o);
                (half(&w[..4], endian), half(&w[4..], endian))
            })
        };
        let mut s = SampleView {
            identifier: u64_at(p.identifier),
            ip: u64_at(p.ip),
            tid: pair(p.tid).map(|(pid, tid)| PidTid {
                pid: pid as i32,
                tid: tid as i32,
            }),
            time: u64_at(p.time),
            addr: u64_at(p.addr),
            id: u64_at(p.id),
            stream_id: u64_at(p.stream_id),
            cpu: pair(p.cpu).map(|(cpu, res)| CpuRes { cpu, res }),
            period: u64_at(p.period),
            ..Default::default()
        };
        let mut c = Cursor {
            bytes: body,
            pos: p.len,
            endian,
        };
        if st.contains(SampleType::READ) {
            s.read = Some(read_values(&mut c, f.read_format)?);
        }
        if st.contains(SampleType::CALLCHAIN) {
            let nr = c.u64()?;
            s.callchain = Some(c.words(nr)?);
        }
        if st.contains(SampleType::RAW) {
            let size = c.u32()?;
            s.raw = Some(c.take(u64::from(size))?);
        }
        if st.contains(SampleType::BRANCH_STACK) {
            let bst = f.branch_sample_type;
            let nr = c.u64()?;
            let hw_idx = c.opt_u64(bst.contains(BranchSampleType::HW_INDEX))?;
            let entries = c.words(nr.checked_mul(3).ok_or_else(|| c.short(u64::MAX))?)?;
            let counters = if bst.contains(BranchSampleType::COUNTERS) {
                c.words(nr)?
            } else {
                U64s::new(&[], endian)
            };
            s.branch_stack = Some(BranchStackView {
                hw_idx,
                entries,
                counters,
            });
        }
        if st.contains(SampleType::REGS_USER) {
            s.regs_user = Some(c.regs(f.sample_regs_user)?);
        }
        if st.contains(SampleType::STACK_USER) {
            let size = c.u64()?;
            let data = c.take(size)?;
            let dyn_size = c.opt_u64(size != 0)?;
            s.stack_user = Some(StackUserView { data, dyn_size });
        }
        s.weight = c.opt_u64(st.intersects(SampleType::WEIGHT | SampleType::WEIGHT_STRUCT))?;
        s.data_src = c.opt_u64(st.contains(SampleType::DATA_SRC))?;
        s.transaction = c.opt_u64(st.contains(SampleType::TRANSACTION))?;
        if st.contains(SampleType::REGS_INTR) {
            s.regs_intr = Some(c.regs(f.sample_regs_intr)?);
        }
        s.phys_addr = c.opt_u64(st.contains(SampleType::PHYS_ADDR))?;
        s.cgroup = c.opt_u64(st.contains(SampleType::CGROUP))?;
        s.data_page_size = c.opt_u64(st.contains(SampleType::DATA_PAGE_SIZE))?;
        s.code_page_size = c.opt_u64(st.contains(SampleType::CODE_PAGE_SIZE))?;
        if st.contains(SampleType::AUX) {
            let size = c.u64()?;
            s.aux = Some(c.take(size)?);
        }
        s.len = c.pos;
        Ok(s)
    }

    /// The id this sample names (IDENTIFIER, else ID).
    pub fn sample_id(&self) -> Option<u64> {
        self.identifier.or(self.id)
    }

    /// The owned model, field for field ([`Sample`] decoded from the same bytes).
    pub fn to_sample(&self) -> Sample {
        let regs = |r: &RegsView<'_>| Regs {
            abi: r.abi,
            regs: r.regs.to_vec(),
        };
        Sample {
            identifier: self.identifier,
            ip: self.ip,
            tid: self.tid,
            time: self.time,
            addr: self.addr,
            id: self.id,
            stream_id: self.stream_id,
            cpu: self.cpu,
            period: self.period,
            read: self.read.map(|r| r.to_read_data()),
            callchain: self.callchain.map(|c| Callchain::new(c.to_vec())),
            raw: self.raw.map(|r| RawData::new(r.to_vec())),
            branch_stack: self.branch_stack.map(|b| b.to_branch_stack()),
            regs_user: self.regs_user.as_ref().map(regs),
            stack_user: self.stack_user.map(|u| StackUser {
                data: u.data.to_vec(),
                dyn_size: u.dyn_size,
            }),
            weight: self.weight,
            data_src: self.data_src,
            transaction: self.transaction,
            regs_intr: self.regs_intr.as_ref().map(regs),
            phys_addr: self.phys_addr,
            cgroup: self.cgroup,
            data_page_size: self.data_page_size,
            code_page_size: self.code_page_size,
            aux: self.aux.map(|a| AuxSample { data: a.to_vec() }),
        }
    }
}

/// PERF_SAMPLE_READ: a single counter's words, or a group's nr and its values.
fn read_values<'a>(c: &mut Cursor<'a>, rf: ReadFormat) -> Step<ReadView<'a>> {
    let times = u64::from(rf.contains(ReadFormat::TOTAL_TIME_ENABLED))
        + u64::from(rf.contains(ReadFormat::TOTAL_TIME_RUNNING));
    let per_value =
        1 + u64::from(rf.contains(ReadFormat::ID)) + u64::from(rf.contains(ReadFormat::LOST));
    let start = c.pos;
    let words = if rf.contains(ReadFormat::GROUP) {
        let nr = c.u64()?;
        c.words(times)?;
        let n = nr.checked_mul(per_value).ok_or_else(|| c.short(u64::MAX))?;
        c.words(n)?;
        U64s::new(&c.bytes[start..c.pos], c.endian)
    } else {
        c.words(times + per_value)?
    };
    Ok(ReadView { words, format: rf })
}
