//! `perfdata completions SHELL` and `perfdata manpage`: shell completions and a man page
//! made from the clap definitions, so that they name every command and option the binary
//! has; and the examples each command's `--help` ends with.

use clap::CommandFactory;

use crate::CliError;

/// Examples shown after each command's help, by command name.
pub const EXAMPLES: &[(&str, &str)] = &[
    (
        "info",
        "perfdata info                        # ./perf.data, as perf does\n  \
         perfdata info -i run.data --json | jq .features",
    ),
    (
        "stats",
        "perfdata stats perf.data\n  perfdata stats --json perf.data | jq .total",
    ),
    (
        "dump",
        "perfdata dump perf.data | grep ' SAMPLE '\n  \
         perfdata dump --json perf.data | jq -c 'select(.type == \"MMAP2\") | .body.filename'\n  \
         perfdata dump --no-decompress perf.data   # COMPRESSED records as stored",
    ),
    (
        "check",
        "perfdata check perf.data other.data\n  perfdata check --json perf.data | jq .problems",
    ),
    (
        "convert",
        "perfdata convert perf.data --to-pipe -o - | perf report -i -\n  \
         perfdata convert -i perf.data --compress=3 -o small.data\n  \
         perfdata convert perf.data --decompress --endian big -o big.data",
    ),
    (
        "synth",
        "perfdata synth --samples 1000 --processes 2 -o synth.data\n  \
         perfdata synth --events cpu-clock,tracepoint --callchain 4 --pipe -o - | perf script -i -",
    ),
    (
        "merge",
        "perfdata merge perf.data.2026112603* -o run.data   # --switch-output rotations\n  \
         perfdata merge host-a.data host-b.data --align start -o fleet.data\n  \
         perfdata merge a.data b.data -z -o - | perf report -i -",
    ),
    (
        "strip",
        "perfdata strip perf.data --comm 'kworker*' -o less.data\n  \
         perfdata strip perf.data --keep --pid 1234 --time 10%-20% -o slice.data",
    ),
    (
        "buildid",
        "perfdata buildid list perf.data\n  \
         perfdata buildid remap perf.data --path /build=/usr -o moved.data",
    ),
    (
        "anonymize",
        "perfdata anonymize perf.data --salt \"$TEAM_SECRET\" -o share.data\n  \
         perfdata anonymize perf.data --keep-path /opt/app --keep-comm app -o share.data\n  \
         perfdata anonymize --strict damaged.data -o share.data   # fail rather than drop",
    ),
    (
        "unwind",
        "perfdata unwind perf.data -o unwound.data   # callchains instead of stack copies\n  \
         perfdata unwind perf.data --symfs /srv/sysroot -o - | perfdata anonymize - -o share.data",
    ),
    (
        "report",
        "perfdata report perf.data\n  perfdata report -s dso,sym -n --json perf.data | jq .events",
    ),
    (
        "script",
        "perfdata script perf.data\n  \
         perfdata script -F comm,tid,time,ip,sym --ns perf.data\n  \
         perfdata script -G --pid 4242 --time 2036.37,2036.38 perf.data",
    ),
    (
        "diff",
        "perfdata diff perf.data.old perf.data      # as perf diff: Baseline, Delta Abs\n  \
         perfdata diff -c ratio --sort comm,dso,sym before.data after.data\n  \
         perfdata diff base.data run1.data run2.data  # a Delta Abs column per run",
    ),
    (
        "export",
        "perfdata export perf.data --format folded -o out.folded   # flamegraph.pl input\n  \
         perfdata export --format parquet fleet/ -o tables --partition host,date",
    ),
    (
        "flamegraph",
        "perfdata flamegraph perf.data                 # writes flamegraph.svg\n  \
         perfdata flamegraph -e cpu-clock perf.data -o cpu.svg",
    ),
    (
        "completions",
        "perfdata completions bash > /etc/bash_completion.d/perfdata\n  \
         perfdata completions zsh > \"${fpath[1]}/_perfdata\"\n  \
         perfdata completions fish > ~/.config/fish/completions/perfdata.fish",
    ),
    (
        "help-json",
        "perfdata help-json | grep address   # the fields that are \"0x...\" strings",
    ),
    (
        "manpage",
        "perfdata manpage > perfdata.1 && man ./perfdata.1",
    ),
];

/// The command line with each command's examples after its help.
pub fn command() -> clap::Command {
    let mut cmd = crate::Cli::command();
    for (name, examples) in EXAMPLES {
        cmd = cmd.mut_subcommand(*name, |c| c.after_help(format!("Examples:\n  {examples}")));
    }
    cmd
}

/// Write `shell`'s completion script to stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<(), CliError> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command(), "perfdata", &mut out);
    write_stdout(&out)
}

/// Write the man page (roff) to stdout: the main page (synopsis, options, commands),
/// then a section per command with its whole `--help`, examples included.
pub fn manpage() -> Result<(), CliError> {
    let cmd = command();
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut out)?;
    for sub in cmd.get_subcommands() {
        let help = sub
            .clone()
            .bin_name(format!("perfdata {}", sub.get_name()))
            .render_long_help()
            .to_string();
        out.extend_from_slice(
            roff_section(&format!("perfdata {}", sub.get_name()), &help).as_bytes(),
        );
    }
    write_stdout(&out)
}

/// `text` as a roff section titled `title`, lines kept as they are.
fn roff_section(title: &str, text: &str) -> String {
    let mut s = format!(".SH \"{}\"\n.nf\n", title.to_uppercase());
    for line in text.lines() {
        // A line starting with . or ' would be a roff request; \& makes it text.
        let line = line.replace('\\', "\\e");
        if line.starts_with(['.', '\'']) {
            s.push_str("\\&");
        }
        s.push_str(&line);
        s.push('\n');
    }
    s.push_str(".fi\n");
    s
}

fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}
