//! Whether perf 6.1 reads a tracing data blob: its `trace_report` (util/trace-event-read.c)
//! walks the blob and hands every event format to libtraceevent's parser
//! (`tep_parse_event`), and fails at the first part that does not read. A file whose
//! TRACING_DATA fails there has no event formats, and perf refuses to open it when it
//! has tracepoint events ("broken or missing trace data").
//!
//! The blob's layout is checked as `trace_report` reads it, and each format as
//! libtraceevent reads the parts that decide its fields: the `name:` and `ID:` lines,
//! every `field:` line (type, name, array bounds, `offset:`, `size:`, `signed:`), and the
//! start of `print fmt:` (a quoted string); of the print arguments, only that their
//! parentheses close (libtraceevent's expression parser accepts more than is checked
//! here).

use std::fmt::Write as _;

/// Why perf 6.1's `trace_report` cannot read `blob`, or `None` when it can (as far as
/// checked: see the module's comment).
pub fn unreadable(blob: &[u8]) -> Option<String> {
    read(blob).err()
}

struct Blob<'a> {
    b: &'a [u8],
    pos: usize,
    big: bool,
}

impl<'a> Blob<'a> {
    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8], String> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.pos.checked_add(n))
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| {
                format!(
                    "{what} at byte {} needs {n} bytes, {} remain",
                    self.pos,
                    self.b.len() - self.pos
                )
            })?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn string(&mut self, what: &str) -> Result<&'a [u8], String> {
        let rest = &self.b[self.pos..];
        let n = rest
            .iter()
            .position(|&c| c == 0)
            .ok_or_else(|| format!("{what} at byte {} has no end", self.pos))?;
        self.pos += n + 1;
        Ok(&rest[..n])
    }
    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let b: [u8; 4] = self.take(4, what)?.try_into().expect("4 bytes");
        Ok(if self.big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }
    fn u64(&mut self, what: &str) -> Result<u64, String> {
        let b: [u8; 8] = self.take(8, what)?.try_into().expect("8 bytes");
        Ok(if self.big {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        })
    }
}

/// `trace_report`'s reading, in its order.
fn read(blob: &[u8]) -> Result<(), String> {
    let mut b = Blob {
        b: blob,
        pos: 0,
        big: false,
    };
    if b.take(3, "the magic")? != b"\x17\x08\x44" {
        return Err("its magic is not \\x17\\x08\\x44 (\"no trace data in the file\")".into());
    }
    if b.take(7, "the tag")? != b"tracing" {
        return Err("not a trace file (missing 'tracing' tag)".into());
    }
    let version = b.string("the version")?;
    b.big = b.take(1, "the byte order")?[0] != 0;
    b.take(1, "the long size")?;
    if b.u32("the page size")? == 0 {
        return Err("the page size is 0".into());
    }
    if b.take(12, "header_page")? != b"header_page\0" {
        return Err("did not read header page".into());
    }
    let n = b.u64("the header page's size")?;
    b.take(n, "the header page")?;
    if b.take(13, "header_event")? != b"header_event\0" {
        return Err("did not read header event".into());
    }
    let n = b.u64("the header event's size")?;
    b.take(n, "the header event")?;
    for i in 0..b.u32("the ftrace format count")? {
        let n = b.u64("an ftrace format's size")?;
        let text = b.take(n, "an ftrace format")?;
        format(text, true).map_err(|e| format!("ftrace format {i}: {e}"))?;
    }
    for _ in 0..b.u32("the system count")? {
        let system = String::from_utf8_lossy(b.string("a system's name")?).into_owned();
        for i in 0..b.u32("an event format count")? {
            let n = b.u64("an event format's size")?;
            let text = b.take(n, "an event format")?;
            format(text, system == "ftrace")
                .map_err(|e| format!("event format {i} of system {system}: {e}"))?;
        }
    }
    let n = b.u32("the kallsyms size")?;
    b.take(u64::from(n), "kallsyms")?;
    let n = b.u32("the printk formats' size")?;
    b.take(u64::from(n), "the printk formats")?;
    // atof(version) >= 0.6: the version's leading number.
    let lead: String = String::from_utf8_lossy(version)
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    if lead.parse::<f64>().is_ok_and(|v| v >= 0.6) {
        let n = b.u64("the saved cmdlines' size")?;
        b.take(n, "the saved cmdlines")?;
    }
    Ok(())
}

/// libtraceevent's token types (`enum tep_event_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The end of the text, or a character that is not printable.
    None,
    Space,
    Newline,
    Op,
    Delim,
    Item,
    DQuote,
    SQuote,
}

/// libtraceevent's `get_type`.
fn kind(c: u8) -> Kind {
    match c {
        b'\n' => Kind::Newline,
        b' ' | b'\t' | b'\r' | 0x0b | 0x0c => Kind::Space,
        c if c.is_ascii_alphanumeric() || c == b'_' => Kind::Item,
        b'\'' => Kind::SQuote,
        b'"' => Kind::DQuote,
        c if !(0x20..0x7f).contains(&c) => Kind::None,
        b'(' | b')' | b',' => Kind::Delim,
        _ => Kind::Op,
    }
}

/// libtraceevent's tokenizer (`__read_token`) over one format's text.
struct Tokens<'a> {
    t: &'a [u8],
    pos: usize,
}

impl Tokens<'_> {
    fn peek(&self) -> Option<u8> {
        self.t.get(self.pos).copied()
    }

    fn raw(&mut self) -> (Kind, String) {
        let Some(c) = self.peek() else {
            return (Kind::None, String::new());
        };
        self.pos += 1;
        let k = kind(c);
        let mut tok = vec![c];
        match k {
            Kind::None | Kind::Newline | Kind::Delim => {}
            Kind::Op => {
                let next = self.peek();
                let doubled = matches!(c, b'+' | b'|' | b'&' | b'>' | b'<' | b'-');
                if c == b'-' && next == Some(b'>') {
                    tok.push(b'>');
                    self.pos += 1;
                } else if doubled && next == Some(c) {
                    tok.push(c);
                    self.pos += 1;
                    if matches!(c, b'>' | b'<') && self.peek() == Some(b'=') {
                        tok.push(b'=');
                        self.pos += 1;
                    }
                } else if matches!(c, b'>' | b'<' | b'!' | b'=' | b'+' | b'|' | b'&' | b'-')
                    && next == Some(b'=')
                {
                    tok.push(b'=');
                    self.pos += 1;
                }
            }
            Kind::DQuote | Kind::SQuote => {
                tok.clear();
                loop {
                    // A quote ends the string unless the character before it is a
                    // backslash (libtraceevent's test, `"\\\\"` included).
                    let mut last = c;
                    loop {
                        let Some(ch) = self.peek() else {
                            // An unterminated string: libtraceevent reads on past the
                            // end of its buffer.
                            return (Kind::None, String::new());
                        };
                        self.pos += 1;
                        if ch == c && last != b'\\' {
                            break;
                        }
                        tok.push(ch);
                        last = ch;
                    }
                    if k != Kind::DQuote {
                        break;
                    }
                    // Adjacent strings concatenate.
                    let save = self.pos;
                    while self.peek().is_some_and(|ch| ch.is_ascii_whitespace()) {
                        self.pos += 1;
                    }
                    if self.peek() != Some(b'"') {
                        self.pos = save;
                        break;
                    }
                    self.pos += 1;
                }
            }
            Kind::Space | Kind::Item => {
                while self.peek().is_some_and(|ch| kind(ch) == k) {
                    tok.push(self.t[self.pos]);
                    self.pos += 1;
                }
            }
        }
        (k, String::from_utf8_lossy(&tok).into_owned())
    }

    /// `read_token`: spaces skipped.
    fn token(&mut self) -> (Kind, String) {
        loop {
            let t = self.raw();
            if t.0 != Kind::Space {
                return t;
            }
        }
    }

    /// `read_token_item`: spaces and line breaks skipped.
    fn item(&mut self) -> (Kind, String) {
        loop {
            let t = self.raw();
            if !matches!(t.0, Kind::Space | Kind::Newline) {
                return t;
            }
        }
    }

    /// `read_expected`: the next token (spaces skipped) is `want` of kind `k`.
    fn expect(&mut self, k: Kind, want: &str) -> Result<(), String> {
        let t = self.token();
        expected(t, k, Some(want)).map(|_| ())
    }

    /// `read_expected_item`: as `expect`, line breaks skipped too.
    fn expect_item(&mut self, want: &str) -> Result<(), String> {
        let t = self.item();
        expected(t, Kind::Item, Some(want)).map(|_| ())
    }

    /// `read_expect_type`: the next token is of kind `k`; its text.
    fn expect_kind(&mut self, k: Kind) -> Result<String, String> {
        let t = self.token();
        expected(t, k, None)
    }
}

fn expected(
    (k, tok): (Kind, String),
    want_kind: Kind,
    want: Option<&str>,
) -> Result<String, String> {
    if k == want_kind && want.is_none_or(|w| w == tok) {
        return Ok(tok);
    }
    let mut msg = String::from("expected ");
    match want {
        Some(w) => {
            let _ = write!(msg, "'{w}'");
        }
        None => {
            let _ = write!(msg, "a token of type {want_kind:?}");
        }
    }
    let _ = write!(msg, " but read '{}'", tok.escape_debug());
    Err(msg)
}

/// One event format as libtraceevent's `__tep_parse_format` reads it; `ftrace`: a format
/// of the ftrace system, whose fields may say `special` and hold a `.`.
fn format(text: &[u8], ftrace: bool) -> Result<(), String> {
    let mut t = Tokens { t: text, pos: 0 };
    // name: ITEM
    t.expect(Kind::Item, "name")?;
    t.expect(Kind::Op, ":")?;
    t.expect_kind(Kind::Item)?;
    // ID: number (an int, not negative)
    t.expect_item("ID")?;
    t.expect(Kind::Op, ":")?;
    let id = t.expect_kind(Kind::Item)?;
    // strtoul, then an int that must not be negative.
    let digits: String = id.chars().take_while(char::is_ascii_digit).collect();
    if !digits.is_empty() && digits.parse::<i32>().is_err() {
        return Err(format!("ID {id} is not an int"));
    }
    // format:\n, the common fields, a blank line, the event's fields, a blank line.
    t.expect_item("format")?;
    t.expect(Kind::Op, ":")?;
    t.expect_kind(Kind::Newline)?;
    fields(&mut t, ftrace)?;
    fields(&mut t, ftrace)?;
    // print fmt: "..." [, args]
    t.expect_item("print")?;
    t.expect(Kind::Item, "fmt")?;
    t.expect(Kind::Op, ":")?;
    t.expect_kind(Kind::DQuote)?;
    loop {
        let (k, tok) = t.item();
        match k {
            Kind::None => return Ok(()),
            Kind::DQuote => continue,
            _ => {
                expected((k, tok), Kind::Delim, Some(","))?;
                break;
            }
        }
    }
    print_args(&mut t)
}

/// `event_read_fields`: `field:TYPE NAME[N];\toffset:O;\tsize:S;[\tsigned:X;]` lines up
/// to a blank line.
fn fields(t: &mut Tokens<'_>, ftrace: bool) -> Result<(), String> {
    loop {
        let (k, tok) = t.token();
        if k == Kind::Newline {
            return Ok(());
        }
        expected((k, tok), Kind::Item, Some("field"))?;
        let mut next = t.token();
        if ftrace && next == (Kind::Item, "special".into()) {
            next = t.token();
        }
        expected(next, Kind::Op, Some(":"))?;
        t.expect_kind(Kind::Item)?;
        // The rest of the type, then the name: items and `*` (`.` in ftrace's).
        let mut words = 1;
        let mut last = String::new();
        let stop = loop {
            let (k, tok) = t.token();
            if k == Kind::Item || (k == Kind::Op && (tok == "*" || (ftrace && tok == "."))) {
                words += 1;
                last = tok;
                continue;
            }
            if k == Kind::Delim && tok == "(" && last == "__attribute__" {
                let mut depth = 1;
                while depth > 0 {
                    match t.token() {
                        (Kind::None, _) => return Err("an unclosed __attribute__".into()),
                        (Kind::Delim, p) if p == "(" => depth += 1,
                        (Kind::Delim, p) if p == ")" => depth -= 1,
                        _ => {}
                    }
                }
                continue;
            }
            break (k, tok);
        };
        if words < 2 {
            return Err("a field without a type".into());
        }
        let (mut k, mut tok) = stop;
        if k != Kind::Op {
            return expected((k, tok), Kind::Op, None).map(|_| ());
        }
        if tok == "[" {
            loop {
                (k, tok) = t.token();
                match k {
                    Kind::None => return Err("an array without ']'".into()),
                    Kind::Op if tok == "]" => break,
                    _ => {}
                }
            }
            (k, tok) = t.token();
            if k == Kind::Item {
                (k, tok) = t.token();
            }
        }
        expected((k, tok), Kind::Op, Some(";"))?;
        for key in ["offset", "size"] {
            t.expect(Kind::Item, key)?;
            t.expect(Kind::Op, ":")?;
            t.expect_kind(Kind::Item)?;
            t.expect(Kind::Op, ";")?;
        }
        let (k, tok) = t.token();
        if k != Kind::Newline {
            expected((k, tok), Kind::Item, Some("signed"))?;
            t.expect(Kind::Op, ":")?;
            t.expect_kind(Kind::Item)?;
            t.expect(Kind::Op, ";")?;
            t.expect_kind(Kind::Newline)?;
        }
    }
}

/// The print arguments: every parenthesis opened before the text ends is closed
/// (libtraceevent stops at the first character that is not printable, without error).
fn print_args(t: &mut Tokens<'_>) -> Result<(), String> {
    let mut depth = 0usize;
    loop {
        match t.item() {
            (Kind::None, _) if depth > 0 => {
                return Err("a print argument's '(' is not closed".into())
            }
            (Kind::None, _) => return Ok(()),
            (Kind::Delim, p) if p == "(" => depth += 1,
            (Kind::Delim, p) if p == ")" => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch\nID: 316\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:__data_loc char[] f;\toffset:24;\tsize:4;\tsigned:0;\n\tfield:const char * p;\toffset:32;\tsize:8;\tsigned:0;\n\nprint fmt: \"prev_comm=%s f=%s\", REC->prev_comm, __get_str(f)\n";

    fn blob(formats: &[&str]) -> Vec<u8> {
        let mut b = b"\x17\x08\x44tracing0.6\0".to_vec();
        b.push(0);
        b.push(8);
        b.extend_from_slice(&4096u32.to_le_bytes());
        b.extend_from_slice(b"header_page\0");
        b.extend_from_slice(&2u64.to_le_bytes());
        b.extend_from_slice(b"hp");
        b.extend_from_slice(b"header_event\0");
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(b"sched\0");
        b.extend_from_slice(&(formats.len() as u32).to_le_bytes());
        for f in formats {
            b.extend_from_slice(&(f.len() as u64).to_le_bytes());
            b.extend_from_slice(f.as_bytes());
        }
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&0u64.to_le_bytes());
        b
    }

    #[test]
    fn a_well_formed_blob_reads() {
        assert_eq!(unreadable(&blob(&[SWITCH])), None);
        // No `signed:` (older kernels), and a print format without arguments.
        let old = SWITCH.replace("\tsigned:0;", "").replace("\tsigned:1;", "");
        let bare = "name: a\nID: 1\nformat:\n\n\nprint fmt: \"x\"\n";
        assert_eq!(unreadable(&blob(&[&old, bare])), None);
    }

    #[test]
    fn what_libtraceevent_refuses_is_named() {
        for (from, to, why) in [
            (
                "field:char",
                "fieLd:char",
                "expected 'field' but read 'fieLd'",
            ),
            ("ID: 316", "IDh: 316", "expected 'ID' but read 'IDh'"),
            ("offset:8;", "offset:8 ", "expected ';'"),
            ("size:16;", "sise:16;", "expected 'size' but read 'sise'"),
            ("char[] f", "char[ f", "an array without ']'"),
            ("__get_str(f)", "__get_str(f", "is not closed"),
            ("print fmt: \"", "print fmt: ", "a token of type DQuote"),
            ("name: sched", "name: \u{1}sched", "a token of type Item"),
        ] {
            let f = SWITCH.replacen(from, to, 1);
            let got = unreadable(&blob(&[&f])).unwrap_or_default();
            assert!(got.contains(why), "{from} -> {to}: {got}");
            assert!(got.starts_with("event format 0 of system sched: "), "{got}");
        }
    }

    #[test]
    fn the_layout_is_read_as_trace_report_reads_it() {
        let good = blob(&[SWITCH]);
        let mut b = good.clone();
        b[3] = b'T';
        assert!(unreadable(&b).unwrap().contains("missing 'tracing' tag"));
        let mut b = good.clone();
        b[16..20].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(unreadable(&b).unwrap(), "the page size is 0");
        // A format's size past the end.
        let at = good.windows(5).position(|w| w == b"sched").unwrap() + 10;
        let mut b = good.clone();
        b[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(unreadable(&b).unwrap().contains("an event format at byte"));
        // Cut before the saved cmdlines (version 0.6 has them).
        assert!(unreadable(&good[..good.len() - 8]).is_some());
    }
}
