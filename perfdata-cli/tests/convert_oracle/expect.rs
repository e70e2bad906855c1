//! What each conversion may change in perf's view, and why: the container's rules, then
//! perf 6.1's defects and perfdata's documented choices, each narrowed to the input,
//! conversion, lines and features it excuses.

use std::collections::BTreeSet;
use std::path::Path;

use super::view::View;

/// Inputs whose byte order cannot change (see tests/tests/rewrite.rs).
const NO_BYTE_SWAP: &[&str] = &[
    "jbeich-etm-perf_etm.data",
    "jbeich-lbr-perf_lbr.data",
    "jbeich-perf_with_add_counter.data",
    "jbeich-perf_with_arm_regs.data",
    "jbeich-perf_with_tracepoint_event.data",
];

/// Inputs perf reads in which `perf script` shows nothing: only their header and
/// features are compared.
pub const NO_SCRIPT: &[(&str, &str)] = &[(
    "KDAB-perf.data.true.v1",
    "84 records, none of them a SAMPLE (perf report --stats)",
)];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conversion {
    ToPipe,
    ToFile,
    Compress,
    Decompress,
    BigEndian,
    /// A file made from the pipe made from a file (event names survive: the pipe carries
    /// EVENT_DESC).
    PipeAndBack,
}

impl Conversion {
    pub fn args(self) -> &'static [&'static str] {
        match self {
            Conversion::ToPipe => &["--to-pipe"],
            Conversion::ToFile | Conversion::PipeAndBack => &["--to-file"],
            Conversion::Compress => &["--compress"],
            Conversion::Decompress => &["--decompress"],
            Conversion::BigEndian => &["--endian", "big"],
        }
    }

    /// The conversions that apply to an input.
    pub fn for_input(path: &Path, n: &str, pipe: bool) -> Vec<Conversion> {
        if path.is_dir() {
            return vec![Conversion::ToFile];
        }
        let mut v = if pipe {
            vec![Conversion::ToFile]
        } else {
            vec![
                Conversion::ToPipe,
                Conversion::PipeAndBack,
                Conversion::Compress,
            ]
        };
        let compressed = perfdata_core::PerfReader::open(path).is_ok_and(|r| {
            r.meta()
                .features
                .contains_key(&perfdata_core::feature::FeatureId::Compressed)
        });
        if compressed {
            v.push(Conversion::Decompress);
        }
        if !NO_BYTE_SWAP.contains(&n) {
            v.push(Conversion::BigEndian);
        }
        v
    }

    /// Lines perf 6.1 adds to its stderr for any output of this conversion.
    pub fn extra_stderr(self) -> &'static [&'static str] {
        match self {
            // It cannot read BPF data of the other byte order, and says so.
            Conversion::BigEndian => &[
                "interpreting bpf_prog_info from systems with endianness is not yet supported",
                "interpreting btf from systems with endianness is not yet supported",
            ],
            _ => &[],
        }
    }

    /// Whether perf shows a sample's interrupt registers the same way in the output:
    /// perf_event__attr_swap of perf 6.1 does not swap `sample_regs_intr`, so it names a
    /// big-endian file's registers from a byte-swapped mask.
    pub fn shows_iregs(self) -> bool {
        self != Conversion::BigEndian
    }

    /// Features the conversion drops whatever the input.
    pub fn drops(self, pipe_out: bool) -> &'static [&'static str] {
        match self {
            Conversion::Decompress => &["COMPRESSED"],
            // perf has no pipe-mode form of these (perf 6.1 never synthesizes them):
            // a stream says nothing of them, a file derives them again.
            Conversion::ToPipe => &["BRANCH_STACK", "AUXTRACE", "STAT", "DIR_FORMAT"],
            Conversion::ToFile => &["DIR_FORMAT"],
            _ if pipe_out => &[],
            _ => &[],
        }
    }

    /// Features the output may have that the input lacks: what a file derives from its
    /// records (checked against the samples where it has values: SAMPLE_TIME).
    pub fn adds(self, input: &BTreeSet<String>, out: &View) -> Vec<String> {
        let derived: &[&str] = match self {
            Conversion::ToFile | Conversion::PipeAndBack => {
                &["SAMPLE_TIME", "BRANCH_STACK", "STAT", "AUXTRACE"]
            }
            Conversion::Compress => &["COMPRESSED"],
            _ => &[],
        };
        derived
            .iter()
            .filter(|f| out.features.contains(**f) && !input.contains(**f))
            .map(|f| f.to_string())
            .collect()
    }
}

/// The exceptions of one (input, conversion) pair.
#[derive(Default)]
pub struct Expect {
    /// perf 6.1 cannot read the output at all, and why.
    pub unreadable: Option<&'static str>,
    /// Warnings perfdata must print (substrings); any other warning fails.
    pub warnings: &'static [&'static str],
    /// Features the output lacks, beyond the conversion's rule.
    pub drops: &'static [&'static str],
    /// Header lines (prefixes) that go with `drops`.
    pub header_lines: &'static [&'static str],
    /// Text of the input's script views replaced before comparing (perf's defects).
    pub substitutions: &'static [(&'static str, &'static str)],
    /// Lines perf 6.1 adds to its stderr for this output (its defects).
    pub extra_stderr: &'static [&'static str],
    /// perf shows the callchain lines (tab-indented) of this output differently.
    pub skip_callchains: bool,
}

/// One row of exceptions.
struct Row {
    input: &'static str,
    conv: Conversion,
    why: &'static str,
    expect: fn() -> Expect,
}

const EMPTY_BUILD_ID: &str = "its BUILD_ID feature is empty: perf 6.1 takes an empty \
     HEADER_FEATURE record for the end of the features, so a pipe leaves it out";
const BIG_FEATURES: &str = "CACHE (132,008 B), BPF_PROG_INFO (291,764 B) and BPF_BTF \
     (365,726 B) do not fit a pipe-mode record (u16 size): perfdata warns and leaves them out";
const SIMPLEPERF_BITS: &str = "simpleperf's feature bits 129 and 132: perf's pipe readers \
     reject unknown feature ids, so perfdata warns and leaves them out";
const ARM_REGS: &str = "the reader's warning about simpleperf's attr size (120 in 128-byte \
     entries), and bit 129 as above";

const BIG_FEATURE_WARNINGS: &[&str] = &[
    "feature CACHE is 132008 bytes, more than a pipe-mode record can hold; not written",
    "feature BPF_PROG_INFO is 291764 bytes, more than a pipe-mode record can hold; not written",
    "feature BPF_BTF is 365726 bytes, more than a pipe-mode record can hold; not written",
];
const BIG_FEATURE_LINES: &[&str] = &[
    "# CPU cache info",
    "#  L1",
    "#  L2",
    "#  L3",
    "# bpf_prog_info",
    "# \tsub_prog",
    "# btf info",
];
const SIMPLEPERF_WARNINGS: &[&str] = &[
    "feature bit 129 is not perf's; perf's pipe readers reject it, so it is not written",
    "feature bit 132 is not perf's; perf's pipe readers reject it, so it is not written",
];
const ARM_REGS_WARNINGS: &[&str] = &[
    "attr 0 says its size is 120 but attr_size gives 128",
    "feature bit 129 is not perf's; perf's pipe readers reject it, so it is not written",
    "attr 0 said its size is 120 but holds 128 bytes; its HEADER_ATTR says 128",
];

const INTEL_PT_PIPE: &str = "perf 6.1 fails on AUX area data in pipe mode ('bad event header \
     size'), as with the corpus's own piped Intel PT recording; PipeAndBack checks the stream";
const LBR_PIPE: &str = "perf 6.1 stitches LBR callchains differently in pipe mode: its own \
     `perf inject -o -` of this file shows other frames too; the sample lines are compared, \
     and PipeAndBack compares every line";
const EVENT_UPDATE_CPUS: &str = "perf_event__event_update_swap of perf 6.1 swaps type and id \
     only, not the cpu map of an EVENT_UPDATE CPUS record, so a big-endian copy warns";
const ANON_MAP: &str = "perf_event__mmap2_swap of perf 6.1 does not swap MMAP2 prot/flags, \
     so this perf-map (anonymous) mapping is named //anon in a big-endian file";

fn intel_pt_pipe() -> Expect {
    Expect {
        unreadable: Some(INTEL_PT_PIPE),
        ..Expect::default()
    }
}
fn lbr_pipe() -> Expect {
    Expect {
        skip_callchains: true,
        ..Expect::default()
    }
}
fn event_update_cpus_256() -> Expect {
    Expect {
        extra_stderr: &[
            "cpu_map__new_data unknown type 256",
            "failed to get event_update cpus",
        ],
        ..Expect::default()
    }
}
fn event_update_cpus_512() -> Expect {
    Expect {
        extra_stderr: &[
            "cpu_map__new_data unknown type 512",
            "failed to get event_update cpus",
        ],
        ..Expect::default()
    }
}
fn anon_map() -> Expect {
    Expect {
        substitutions: &[("(/tmp/perf-9689.map)", "(//anon)")],
        ..Expect::default()
    }
}
fn empty_build_id() -> Expect {
    Expect {
        drops: &["BUILD_ID"],
        ..Expect::default()
    }
}
fn big_features() -> Expect {
    Expect {
        warnings: BIG_FEATURE_WARNINGS,
        drops: &["CACHE", "BPF_PROG_INFO", "BPF_BTF"],
        header_lines: BIG_FEATURE_LINES,
        ..Expect::default()
    }
}
fn simpleperf_bits() -> Expect {
    Expect {
        warnings: SIMPLEPERF_WARNINGS,
        drops: &["FEATURE_129", "FEATURE_132"],
        ..Expect::default()
    }
}
fn arm_regs_to_pipe() -> Expect {
    Expect {
        warnings: ARM_REGS_WARNINGS,
        drops: &["BUILD_ID", "FEATURE_129"],
        ..Expect::default()
    }
}
fn arm_regs() -> Expect {
    Expect {
        warnings: &ARM_REGS_WARNINGS[..1],
        ..Expect::default()
    }
}

const EXCEPTIONS: &[Row] = &[
    Row {
        input: "KDAB-perf.data.true.v1",
        conv: Conversion::ToPipe,
        why: EMPTY_BUILD_ID,
        expect: empty_build_id,
    },
    Row {
        input: "KDAB-perf.data.true.v1",
        conv: Conversion::PipeAndBack,
        why: EMPTY_BUILD_ID,
        expect: empty_build_id,
    },
    Row {
        input: "google-perf.data.branch_stack_spec",
        conv: Conversion::ToPipe,
        why: BIG_FEATURES,
        expect: big_features,
    },
    Row {
        input: "google-perf.data.branch_stack_spec",
        conv: Conversion::PipeAndBack,
        why: BIG_FEATURES,
        expect: big_features,
    },
    Row {
        input: "jbeich-perf_with_add_counter.data",
        conv: Conversion::ToPipe,
        why: SIMPLEPERF_BITS,
        expect: simpleperf_bits,
    },
    Row {
        input: "jbeich-perf_with_add_counter.data",
        conv: Conversion::PipeAndBack,
        why: SIMPLEPERF_BITS,
        expect: simpleperf_bits,
    },
    Row {
        input: "jbeich-perf_with_arm_regs.data",
        conv: Conversion::ToPipe,
        why: ARM_REGS,
        expect: arm_regs_to_pipe,
    },
    Row {
        input: "jbeich-perf_with_arm_regs.data",
        conv: Conversion::PipeAndBack,
        why: ARM_REGS,
        expect: arm_regs_to_pipe,
    },
    Row {
        input: "jbeich-perf_with_arm_regs.data",
        conv: Conversion::Compress,
        why: ARM_REGS,
        expect: arm_regs,
    },
    Row {
        input: "google-perf.data.intel_pt-4.14",
        conv: Conversion::ToPipe,
        why: INTEL_PT_PIPE,
        expect: intel_pt_pipe,
    },
    Row {
        input: "KDAB-vector_static_gcc-perf.lbr.data",
        conv: Conversion::ToPipe,
        why: LBR_PIPE,
        expect: lbr_pipe,
    },
    Row {
        input: "google-perf.data.hybrid_topology",
        conv: Conversion::BigEndian,
        why: EVENT_UPDATE_CPUS,
        expect: event_update_cpus_256,
    },
    Row {
        input: "google-perf.data.piped.header_features_aligned-6.12",
        conv: Conversion::BigEndian,
        why: EVENT_UPDATE_CPUS,
        expect: event_update_cpus_512,
    },
    Row {
        input: "jbeich-generated_by_linux_perf.data",
        conv: Conversion::BigEndian,
        why: ANON_MAP,
        expect: anon_map,
    },
];

impl Expect {
    pub fn of(input: &str, conv: Conversion) -> Expect {
        EXCEPTIONS
            .iter()
            .find(|r| r.input == input && r.conv == conv)
            .map(|r| {
                let _ = r.why;
                (r.expect)()
            })
            .unwrap_or_default()
    }
}

/// Header lines a file derives that a pipe stream lacks (their values are checked
/// against the samples for SAMPLE_TIME).
const DERIVED_IN_FILES: &[&str] = &[
    "# contains samples with branch stack",
    "# time of first sample",
    "# time of last sample",
    "# sample duration",
    "# contains stat data",
    "# contains AUX area data",
];

/// Header lines perf 6.1 cannot show for a pipe stream (no pipe-mode form).
const NOT_IN_PIPES: &[&str] = &[
    "# contains samples with branch stack",
    "# contains AUX area data",
    "# contains stat data",
    "# directory data version",
];

/// Normalise what a conversion legitimately changes in the header view.
pub fn normalise_header(
    lines: &[String],
    conv: Conversion,
    is_input: bool,
    e: &Expect,
) -> Vec<String> {
    lines
        .iter()
        .filter(|l| !(is_input && e.header_lines.iter().any(|p| l.starts_with(p))))
        .filter(|l| match conv {
            Conversion::ToPipe if is_input => !NOT_IN_PIPES.iter().any(|p| l.starts_with(p)),
            Conversion::ToFile | Conversion::PipeAndBack if !is_input => {
                !DERIVED_IN_FILES.iter().any(|p| l.starts_with(p))
            }
            Conversion::ToFile | Conversion::PipeAndBack if is_input => {
                !DERIVED_IN_FILES.iter().any(|p| l.starts_with(p))
                    && !l.starts_with("# directory data version")
            }
            _ => true,
        })
        // Compressing or expanding is what these conversions are for.
        .filter(|l| {
            !(matches!(conv, Conversion::Compress | Conversion::Decompress)
                && l.starts_with("# compressed"))
        })
        // perf 6.1 cannot interpret BPF data of the other byte order.
        .filter(|l| {
            !(conv == Conversion::BigEndian
                && (l.starts_with("# bpf_prog_info")
                    || l.starts_with("# \tsub_prog")
                    || l.starts_with("# btf info")))
        })
        .map(|l| {
            let mut l = l.clone();
            // Re-compression changes the ratio, never the method or level.
            if l.starts_with("# compressed") {
                if let Some(i) = l.find(", ratio") {
                    l.truncate(i);
                }
            }
            // perf_event__attr_swap of perf 6.1 does not swap clockid or
            // sample_regs_intr (nor anything after sample_max_stack but aux_sample_size).
            if conv == Conversion::BigEndian && l.starts_with("# event :") {
                l = l
                    .split(", ")
                    .filter(|f| {
                        !f.starts_with("clockid = ") && !f.starts_with("sample_regs_intr = ")
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
            }
            l
        })
        .collect()
}
