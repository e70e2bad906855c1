//! The streaming builder: records are made from perfdata-core's models one at a time
//! and written at once through [`FileWriter`] or [`PipeWriter`] (and the
//! [`Compressor`]), so memory stays flat whatever the trace's size.

use std::io::{Seek, Write};

use binrw::Endian;
use perfdata_core::attr::SampleType;
use perfdata_core::feature::{BuildIdEntry, Compressed, FeatureId};
use perfdata_core::record::{
    misc, Comm, CpuRes, ForkExit, Mmap, Mmap2, Mmap2Id, PaddedString, PidTid, Record, RecordBody,
    RecordHeader, RecordType, Sample, SampleId,
};

use super::event::{normalize, EventSpec};
use super::host::{HostInfo, Recorded, CLOCK_MONOTONIC};
use super::tracing::tracing_data;
use perfdata_write::compress::{CompressFormat, Compressor, DEFAULT_MMAP_LEN};
use perfdata_write::error::Result;
use perfdata_write::file::{AttrEntry, FileWriter};
use perfdata_write::pipe::PipeWriter;

/// How the trace is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynthOptions {
    /// Byte order of the file.
    pub endian: Endian,
    /// Whether non-SAMPLE records carry the sample_id trailer (attr.sample_id_all).
    pub sample_id_all: bool,
    /// zstd level and record type: the kernel's records go into compressed records, as
    /// `perf record -z` writes them.
    pub compress: Option<(i32, CompressFormat)>,
    /// A FINISHED_ROUND after every this many records (0: none).
    pub round_every: u64,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            endian: Endian::Little,
            sample_id_all: true,
            compress: None,
            round_every: 1000,
        }
    }
}

/// What a trace is made of: its events, the machine it claims, how it is written.
#[derive(Debug, Clone, Default)]
pub struct TraceSpec {
    /// The events (attrs), in order.
    pub events: Vec<EventSpec>,
    /// What the features say about the machine.
    pub host: HostInfo,
    /// How the trace is written.
    pub opts: SynthOptions,
}

/// Where the records go: a file (features written at the end) or a pipe stream
/// (features sent before the data).
pub trait SynthTarget {
    /// What finishing hands back.
    type Output;
    /// Append a record (header included) and its payload.
    fn write_record(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()>;
    /// Append more payload to the record written last (a payload written in pieces).
    fn write_payload(&mut self, more: &[u8]) -> Result<()>;
    /// Write the features still to be written and flush.
    fn finish(self, features: &[(FeatureId, Vec<u8>)]) -> Result<Self::Output>;
    /// Append a SAMPLE taken on `cpu` (a directory keeps one stream per CPU).
    fn write_sample(&mut self, _cpu: u32, bytes: &[u8]) -> Result<()> {
        self.write_record(bytes, &[])
    }
}

impl<W: Write + Seek> SynthTarget for FileWriter<W> {
    type Output = W;
    fn write_record(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()> {
        FileWriter::write_record(self, bytes, payload)
    }
    fn write_payload(&mut self, more: &[u8]) -> Result<()> {
        FileWriter::write_payload(self, more)
    }
    fn finish(self, features: &[(FeatureId, Vec<u8>)]) -> Result<W> {
        FileWriter::finish_encoded(self, features, &[])
    }
}

impl<W: Write> SynthTarget for PipeWriter<W> {
    type Output = W;
    fn write_record(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()> {
        PipeWriter::write_record(self, bytes, payload)
    }
    fn write_payload(&mut self, more: &[u8]) -> Result<()> {
        PipeWriter::write_payload(self, more)
    }
    fn finish(self, _features: &[(FeatureId, Vec<u8>)]) -> Result<W> {
        PipeWriter::finish(self)
    }
}

/// A mapping of a file into a process (MMAP2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// Where the file is mapped.
    pub addr: u64,
    /// Bytes mapped.
    pub len: u64,
    /// File offset mapped at `addr`.
    pub pgoff: u64,
    /// The file's path.
    pub path: String,
    /// With a build id the MMAP2 carries it (misc MMAP_BUILD_ID) and the file's BUILD_ID
    /// feature lists it; without, the record has device and inode numbers.
    pub build_id: Option<[u8; 20]>,
}

/// One sample. Fields the event's sample_type lacks are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleSpec<'a> {
    /// Index of the event among the trace's events.
    pub event: usize,
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// Time (ns).
    pub time: u64,
    /// CPU.
    pub cpu: u32,
    /// The sampled ip.
    pub ip: u64,
    /// The period; `None` takes the event's sample_period.
    pub period: Option<u64>,
    /// Return addresses, innermost caller first: CALLCHAIN is the context marker, `ip`,
    /// then these.
    pub callers: &'a [u64],
    /// ADDR (and PHYS_ADDR): the data address.
    pub addr: u64,
    /// WEIGHT, and the value a tracepoint hit records.
    pub weight: u64,
}

/// Writes a synthetic trace record by record.
pub struct SynthWriter<T: SynthTarget> {
    pub(super) target: T,
    pub(super) endian: Endian,
    pub(super) events: Vec<EventSpec>,
    pub(super) ids: Vec<Vec<u64>>,
    pub(super) host: HostInfo,
    pub(super) opts: SynthOptions,
    pub(super) compressor: Option<Compressor>,
    pub(super) buf: Vec<u8>,
    pub(super) since_round: u64,
    pub(super) recorded: Recorded,
    /// Group read counters, per event and CPU.
    pub(super) counters: Vec<Vec<u64>>,
    /// The sample being made, kept so that its buffers are reused.
    pub(super) sample: Sample,
    /// Tracepoint hits so far (their `seq`).
    pub(super) hits: u64,
    /// Bytes of records made, before compression.
    pub(super) record_bytes: u64,
    pub(super) records: u64,
}

impl<W: Write + Seek> SynthWriter<FileWriter<W>> {
    /// Start a file: the header is written by [`SynthWriter::finish`].
    pub fn file(out: W, spec: TraceSpec) -> Result<Self> {
        let TraceSpec { events, host, opts } = spec;
        let (events, ids) = prepare(events, &host, &opts)?;
        let target =
            FileWriter::new(out, opts.endian, &attr_entries(&events, &ids), &[])?.caller_derives();
        SynthWriter::with_target(target, events, ids, host, opts)
    }
}

impl<W: Write> SynthWriter<PipeWriter<W>> {
    /// Start a pipe stream: HEADER_ATTR for every event, the features known before the
    /// data (all but BUILD_ID and SAMPLE_TIME, which perf 6.1 does not send either), the
    /// end-of-features marker and HEADER_TRACING_DATA for tracepoints.
    pub fn pipe(out: W, spec: TraceSpec) -> Result<Self> {
        let TraceSpec { events, host, opts } = spec;
        let (events, ids) = prepare(events, &host, &opts)?;
        let mut target = PipeWriter::new(out, opts.endian)?;
        for (e, ids) in events.iter().zip(&ids) {
            target.write_attr(&e.attr, ids)?;
        }
        let mut w = SynthWriter::with_target(target, events, ids, host, opts)?;
        let mut recorded = w.recorded_so_far();
        let tracing = recorded.tracing_data.take();
        for section in w.host.features(&w.events, &w.ids, &recorded) {
            let payload = section.encode(w.endian)?;
            // An empty HEADER_FEATURE is the end marker: a flag feature (BRANCH_STACK)
            // cannot be sent, as perf does not send it either.
            if !payload.is_empty() {
                w.target.write_feature(section.id, &payload)?;
            }
        }
        w.target.write_feature_end()?;
        if let Some(blob) = tracing {
            w.target.write_tracing_data(&blob)?;
        }
        Ok(w)
    }
}

/// Normalize the events and give each one id per CPU.
/// The attrs section of a file: each event's attr with its ids.
pub(super) fn attr_entries(events: &[EventSpec], ids: &[Vec<u64>]) -> Vec<AttrEntry> {
    events
        .iter()
        .zip(ids)
        .map(|(e, ids)| AttrEntry {
            attr: e.attr.clone(),
            ids: ids.clone(),
        })
        .collect()
}

pub(super) fn prepare(
    mut events: Vec<EventSpec>,
    host: &HostInfo,
    opts: &SynthOptions,
) -> Result<(Vec<EventSpec>, Vec<Vec<u64>>)> {
    normalize(&mut events, opts.sample_id_all)?;
    if host.clock.is_some() {
        for e in &mut events {
            e.attr.flags |= perfdata_core::attr::AttrFlags::USE_CLOCKID;
            e.attr.clockid = CLOCK_MONOTONIC;
        }
    }
    let n = u64::from(host.nr_cpus.max(1));
    let ids = (0..events.len() as u64)
        .map(|e| (0..n).map(|c| 1000 + e * n + c).collect())
        .collect();
    Ok((events, ids))
}

impl<T: SynthTarget> SynthWriter<T> {
    pub(super) fn with_target(
        target: T,
        events: Vec<EventSpec>,
        ids: Vec<Vec<u64>>,
        host: HostInfo,
        opts: SynthOptions,
    ) -> Result<Self> {
        let compressor = match opts.compress {
            Some((level, format)) => Some(Compressor::new(
                level,
                format,
                DEFAULT_MMAP_LEN,
                opts.endian,
            )?),
            None => None,
        };
        let counters = events
            .iter()
            .map(|_| vec![0; host.nr_cpus.max(1) as usize])
            .collect();
        Ok(SynthWriter {
            target,
            endian: opts.endian,
            events,
            ids,
            host,
            opts,
            compressor,
            buf: Vec::with_capacity(4096),
            since_round: 0,
            recorded: Recorded::default(),
            counters,
            sample: Sample::default(),
            hits: 0,
            record_bytes: 0,
            records: 0,
        })
    }

    /// The events as written (after normalization), and their ids (one per CPU).
    pub fn events(&self) -> (&[EventSpec], &[Vec<u64>]) {
        (&self.events, &self.ids)
    }

    /// The machine the trace claims.
    pub fn host(&self) -> &HostInfo {
        &self.host
    }

    /// Bytes of records made so far, before compression.
    pub fn record_bytes(&self) -> u64 {
        self.record_bytes
    }

    /// Records made so far (FINISHED_ROUND included, compressed records not).
    pub fn records(&self) -> u64 {
        self.records
    }

    /// What the features say about the data so far.
    fn recorded_so_far(&self) -> Recorded {
        let tps: Vec<_> = self
            .events
            .iter()
            .filter_map(|e| e.tracepoint.as_ref())
            .collect();
        Recorded {
            tracing_data: (!tps.is_empty()).then(|| tracing_data(&tps, self.endian)),
            branch_stack: self
                .events
                .iter()
                .any(|e| e.attr.sample_type.contains(SampleType::BRANCH_STACK)),
            compressed: self.compressor.as_ref().map(|c| {
                let level = self.opts.compress.map_or(0, |(l, _)| l.max(0) as u32);
                Compressed::zstd(level, c.ratio(), c.mmap_len() as u32)
            }),
            ..self.recorded.clone()
        }
    }

    /// The sample_id trailer of a non-SAMPLE record, as the first event's ring buffer
    /// on `cpu` writes it.
    fn trailer(&self, pid: i32, tid: i32, time: u64, cpu: u32) -> Option<SampleId> {
        if !self.opts.sample_id_all {
            return None;
        }
        let st = self.events[0].attr.sample_type;
        let id = self.ids[0][cpu as usize % self.ids[0].len()];
        let has = |b| st.contains(b);
        Some(SampleId {
            tid: has(SampleType::TID).then_some(PidTid { pid, tid }),
            time: has(SampleType::TIME).then_some(time),
            id: has(SampleType::ID).then_some(id),
            stream_id: has(SampleType::STREAM_ID).then_some(id),
            cpu: has(SampleType::CPU).then_some(CpuRes { cpu, res: 0 }),
            identifier: has(SampleType::IDENTIFIER).then_some(id),
        })
    }

    /// Encode and write a record: the kernel's records through the compressor when
    /// compressing, then a FINISHED_ROUND when a round is full.
    fn emit(&mut self, record: Record) -> Result<()> {
        self.buf.clear();
        record.encode_into(self.endian, &mut self.buf)?;
        self.emit_encoded(record.record_type().is_kernel(), None)
    }

    /// Write the record encoded in `buf`; `kernel` says whether it is one of the
    /// kernel's records (those go into compressed records).
    /// A sample goes to its CPU's stream where the target has one (a directory).
    pub(super) fn emit_encoded(&mut self, kernel: bool, sample_cpu: Option<u32>) -> Result<()> {
        self.record_bytes += self.buf.len() as u64;
        self.records += 1;
        let target = &mut self.target;
        match (self.compressor.as_mut(), sample_cpu) {
            (Some(c), _) if kernel => {
                c.push(&self.buf, &[], &mut |rec| target.write_record(rec, &[]))?
            }
            (_, Some(cpu)) => target.write_sample(cpu, &self.buf)?,
            _ => target.write_record(&self.buf, &[])?,
        }
        self.since_round += 1;
        if self.opts.round_every > 0 && self.since_round >= self.opts.round_every {
            self.finished_round()?;
        }
        Ok(())
    }

    /// FINISHED_ROUND: perf may sort and deliver every record before it. Pending
    /// compressed records are written first, as perf writes the ring buffers it
    /// flushed before the round marker.
    pub fn finished_round(&mut self) -> Result<()> {
        self.flush_compressed()?;
        self.buf.clear();
        Record::new(RecordType::FinishedRound, RecordBody::FinishedRound)
            .encode_into(self.endian, &mut self.buf)?;
        self.target.write_record(&self.buf, &[])?;
        self.record_bytes += self.buf.len() as u64;
        self.records += 1;
        self.since_round = 0;
        Ok(())
    }

    fn flush_compressed(&mut self) -> Result<()> {
        let target = &mut self.target;
        if let Some(c) = self.compressor.as_mut() {
            c.flush(&mut |rec| target.write_record(rec, &[]))?;
        }
        Ok(())
    }

    pub(super) fn kernel_record(
        &mut self,
        ty: RecordType,
        misc: u16,
        body: RecordBody,
        (pid, tid, time, cpu): (i32, i32, u64, u32),
    ) -> Result<()> {
        let mut r = Record::new(ty, body);
        r.header = RecordHeader::new(ty, misc, 0);
        r.sample_id = self.trailer(pid, tid, time, cpu);
        self.emit(r)
    }

    /// FORK: `pid`/`tid` created by `ppid`/`ptid`.
    pub fn fork(&mut self, pid: i32, ppid: i32, tid: i32, ptid: i32, time: u64) -> Result<()> {
        let body = RecordBody::Fork(ForkExit {
            pid,
            ppid,
            tid,
            ptid,
            time,
        });
        self.kernel_record(RecordType::Fork, 0, body, (pid, tid, time, 0))
    }

    /// EXIT of `tid` of `pid`.
    pub fn exit(&mut self, pid: i32, ppid: i32, tid: i32, ptid: i32, time: u64) -> Result<()> {
        let body = RecordBody::Exit(ForkExit {
            pid,
            ppid,
            tid,
            ptid,
            time,
        });
        self.kernel_record(RecordType::Exit, 0, body, (pid, tid, time, 0))
    }

    /// COMM: the thread's name; `exec` marks a name set by exec (misc COMM_EXEC).
    pub fn comm(&mut self, pid: i32, tid: i32, comm: &str, exec: bool, time: u64) -> Result<()> {
        let body = RecordBody::Comm(Comm {
            pid,
            tid,
            comm: PaddedString::new(comm),
        });
        let misc = if exec { misc::COMM_EXEC } else { 0 };
        self.kernel_record(RecordType::Comm, misc, body, (pid, tid, time, 0))
    }

    /// MMAP2 of a file into a process, executable and private; a build id goes into the
    /// record and the BUILD_ID feature.
    pub fn mmap2(&mut self, m: &Mapping, time: u64) -> Result<()> {
        let (id, misc) = match m.build_id {
            Some(build_id) => {
                let entry = BuildIdEntry::new(misc::USER, -1, &build_id, &m.path);
                if !self.recorded.build_ids.contains(&entry) {
                    self.recorded.build_ids.push(entry);
                }
                let id = Mmap2Id::BuildId {
                    build_id_size: 20,
                    reserved1: 0,
                    reserved2: 0,
                    build_id,
                };
                (id, misc::USER | misc::MMAP_BUILD_ID)
            }
            None => {
                let id = Mmap2Id::Inode {
                    maj: 8,
                    min: 1,
                    ino: 0x1000 + self.records,
                    ino_generation: 0,
                };
                (id, misc::USER)
            }
        };
        let body = RecordBody::Mmap2(Mmap2 {
            pid: m.pid,
            tid: m.tid,
            addr: m.addr,
            len: m.len,
            pgoff: m.pgoff,
            id,
            prot: 5,  // PROT_READ | PROT_EXEC
            flags: 2, // MAP_PRIVATE
            filename: PaddedString::new(&m.path),
        });
        self.kernel_record(RecordType::Mmap2, misc, body, (m.pid, m.tid, time, 0))
    }

    /// The kernel's MMAP, as perf synthesizes it: `[kernel.kallsyms]_text` in pid -1.
    pub fn kernel_mmap(&mut self, addr: u64, len: u64, time: u64) -> Result<()> {
        let body = RecordBody::Mmap(Mmap {
            pid: -1,
            tid: 0,
            addr,
            len,
            pgoff: addr,
            filename: PaddedString::new("[kernel.kallsyms]_text"),
        });
        self.kernel_record(RecordType::Mmap, misc::KERNEL, body, (-1, 0, time, 0))
    }

    /// A kernel module's MMAP, as perf record synthesizes one from /proc/modules: the
    /// module's file `path` (`/lib/modules/.../foo.ko`) at `addr`, file offset 0, in pid
    /// -1, kernel mode.
    pub fn module_mmap(&mut self, addr: u64, len: u64, path: &str, time: u64) -> Result<()> {
        let body = RecordBody::Mmap(Mmap {
            pid: -1,
            tid: 0,
            addr,
            len,
            pgoff: 0,
            filename: PaddedString::new(path),
        });
        self.kernel_record(RecordType::Mmap, misc::KERNEL, body, (-1, 0, time, 0))
    }

    /// Name the kernel's build id in the BUILD_ID feature, as perf record does for the
    /// kernel it ran on (`[kernel.kallsyms]`, kernel mode, pid -1): readers then look
    /// for that kernel's symbols (perf in the build-id cache, unless it is the running
    /// kernel).
    pub fn kernel_build_id(&mut self, build_id: &[u8; 20]) {
        let entry = BuildIdEntry::new(misc::KERNEL, -1, build_id, "[kernel.kallsyms]");
        if !self.recorded.build_ids.contains(&entry) {
            self.recorded.build_ids.push(entry);
        }
    }

    /// Flush the compressor, write the features (file mode) and the header; hands back
    /// the output.
    pub fn finish(mut self) -> Result<T::Output> {
        self.flush_compressed()?;
        let recorded = self.recorded_so_far();
        let sections = self.host.features(&self.events, &self.ids, &recorded);
        let mut features = Vec::with_capacity(sections.len());
        for s in sections {
            features.push((s.id, s.encode(self.endian)?));
        }
        self.target.finish(&features)
    }
}
