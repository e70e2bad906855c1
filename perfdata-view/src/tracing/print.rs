//! A tracepoint's `print fmt:` line evaluated as libtraceevent (and so perf script)
//! evaluates it: a printf format string and C expressions over the record's fields
//! (`REC->field`), with casts, arithmetic, bit operators, comparisons, `?:`, string
//! literals and the helpers `__get_str`, `__print_flags` and `__print_symbolic`.
//!
//! Numbers are held as 64 bits, as libtraceevent holds them (unsigned long long); a
//! printf conversion without `l` prints the low 32 bits, as `(int)` or `(unsigned)` of
//! them. A print format that uses anything else is not understood ([`PrintFmt::parse`]
//! or [`PrintFmt::render`] gives `None`) and the caller prints the fields instead.

/// A value during evaluation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Val {
    /// A number, as 64 bits.
    Int(u64),
    /// A string.
    Str(String),
}

impl Val {
    fn int(&self) -> u64 {
        match self {
            Val::Int(v) => *v,
            Val::Str(_) => 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Num(u64),
    Str(String),
    Ident(String),
    Punct(&'static str),
}

const PUNCTS: &[&str] = &[
    "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "{", "}", "[", "]", ",", "?",
    ":", "+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "<", ">", ".",
];

fn tokens(s: &str) -> Option<Vec<Tok>> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'"' {
            let mut text = Vec::new();
            i += 1;
            loop {
                match *b.get(i)? {
                    b'"' => break,
                    b'\\' => {
                        i += 1;
                        text.push(match *b.get(i)? {
                            b'n' => b'\n',
                            b't' => b'\t',
                            other => other,
                        });
                    }
                    other => text.push(other),
                }
                i += 1;
            }
            i += 1;
            let text = String::from_utf8_lossy(&text).into_owned();
            // Adjacent literals join, as in C.
            match out.last_mut() {
                Some(Tok::Str(prev)) => prev.push_str(&text),
                _ => out.push(Tok::Str(text)),
            }
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            let word = s[start..i].trim_end_matches(['u', 'U', 'l', 'L']);
            let n = match word.strip_prefix("0x").or(word.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16).ok()?,
                None if word.len() > 1 && word.starts_with('0') => {
                    u64::from_str_radix(&word[1..], 8).ok()?
                }
                None => word.parse().ok()?,
            };
            out.push(Tok::Num(n));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(s[start..i].to_string()));
        } else {
            let p = PUNCTS.iter().find(|p| s[i..].starts_with(**p))?;
            out.push(Tok::Punct(p));
            i += p.len();
        }
    }
    Some(out)
}

/// An integer C type a cast converts to: its size in bytes (8 for pointers) and sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CType {
    size: u32,
    signed: bool,
}

impl CType {
    fn convert(self, v: u64) -> u64 {
        if self.size >= 8 {
            return v;
        }
        let shift = 64 - 8 * self.size;
        if self.signed {
            (((v << shift) as i64) >> shift) as u64
        } else {
            (v << shift) >> shift
        }
    }
}

/// The C type a cast names, if these words are one.
fn c_type(words: &[Tok]) -> Option<CType> {
    let mut size = None;
    let mut signed = true;
    for w in words {
        match w {
            Tok::Punct("*") => size = Some(8),
            Tok::Ident(w) => match w.as_str() {
                "const" | "volatile" | "struct" | "void" => {}
                "unsigned" => signed = false,
                "signed" => signed = true,
                "char" | "bool" => size = size.or(Some(1)),
                "short" => size = Some(2),
                "int" => size = size.or(Some(4)),
                "long" => size = Some(8),
                "size_t" | "u64" | "__u64" | "uintptr_t" => (size, signed) = (Some(8), false),
                "s64" | "__s64" | "loff_t" | "ssize_t" => (size, signed) = (Some(8), true),
                "u32" | "__u32" | "gfp_t" => (size, signed) = (Some(4), false),
                "s32" | "__s32" | "pid_t" => (size, signed) = (Some(4), true),
                "u16" | "__u16" => (size, signed) = (Some(2), false),
                "s16" | "__s16" => (size, signed) = (Some(2), true),
                "u8" | "__u8" => (size, signed) = (Some(1), false),
                "s8" | "__s8" => (size, signed) = (Some(1), true),
                _ => return None,
            },
            _ => return None,
        }
    }
    Some(CType {
        size: size.unwrap_or(4),
        signed,
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Expr {
    Num(u64),
    Str(String),
    Field(String),
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Cast(CType, Box<Expr>),
    Call(String, Vec<Expr>),
    /// `{ value, "name" }` in `__print_flags` and `__print_symbolic`.
    Pair(Box<Expr>, Box<Expr>),
}

/// Binary operators by precedence, loosest first (C's order).
const LEVELS: &[&[&str]] = &[
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", "<=", ">", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn eat(&mut self, p: &str) -> bool {
        let yes = matches!(self.peek(), Some(Tok::Punct(q)) if *q == p);
        if yes {
            self.pos += 1;
        }
        yes
    }
    fn expect(&mut self, p: &str) -> Option<()> {
        self.eat(p).then_some(())
    }

    fn expr(&mut self) -> Option<Expr> {
        let cond = self.binary(0)?;
        if !self.eat("?") {
            return Some(cond);
        }
        let a = self.expr()?;
        self.expect(":")?;
        let b = self.expr()?;
        Some(Expr::Cond(Box::new(cond), Box::new(a), Box::new(b)))
    }

    fn binary(&mut self, level: usize) -> Option<Expr> {
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let mut left = self.binary(level + 1)?;
        while let Some(Tok::Punct(p)) = self.peek() {
            let Some(op) = ops.iter().find(|o| **o == *p) else {
                break;
            };
            self.pos += 1;
            let right = self.binary(level + 1)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
        Some(left)
    }

    fn unary(&mut self) -> Option<Expr> {
        for op in ["-", "!", "~"] {
            if self.eat(op) {
                return Some(Expr::Unary(op, Box::new(self.unary()?)));
            }
        }
        if self.eat("(") {
            // A cast: type words up to the closing parenthesis.
            let close = self.toks[self.pos..]
                .iter()
                .position(|t| *t == Tok::Punct(")"))?;
            let words = &self.toks[self.pos..self.pos + close];
            if let Some(ty) = c_type(words).filter(|_| close > 0) {
                self.pos += close + 1;
                return Some(Expr::Cast(ty, Box::new(self.unary()?)));
            }
            let e = self.expr()?;
            self.expect(")")?;
            return Some(e);
        }
        self.primary()
    }

    fn primary(&mut self) -> Option<Expr> {
        match self.next()? {
            Tok::Num(n) => Some(Expr::Num(n)),
            Tok::Str(s) => Some(Expr::Str(s)),
            Tok::Punct("{") => {
                let v = self.expr()?;
                self.expect(",")?;
                let name = self.expr()?;
                self.expect("}")?;
                Some(Expr::Pair(Box::new(v), Box::new(name)))
            }
            Tok::Ident(id) if id == "REC" => {
                self.expect("->")?;
                match self.next()? {
                    Tok::Ident(field) => Some(Expr::Field(field)),
                    _ => None,
                }
            }
            Tok::Ident(name) if self.eat("(") => {
                // `__get_str(field)` and its kin name the field bare, without `REC->`
                // (the kernel writes `__get_str(parent_comm)` for sched_process_fork).
                if name.starts_with("__get_") {
                    if let (Some(Tok::Ident(field)), Some(Tok::Punct(")"))) = (
                        self.toks.get(self.pos).cloned(),
                        self.toks.get(self.pos + 1),
                    ) {
                        self.pos += 2;
                        return Some(Expr::Call(name, vec![Expr::Field(field)]));
                    }
                }
                let mut args = Vec::new();
                if !self.eat(")") {
                    loop {
                        args.push(self.expr()?);
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Some(Expr::Call(name, args))
            }
            _ => None,
        }
    }
}

/// A parsed `print fmt:` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintFmt {
    format: String,
    args: Vec<Expr>,
}

impl PrintFmt {
    /// Parse the text after `print fmt:`; `None` if it is not understood.
    pub fn parse(line: &str) -> Option<Self> {
        let mut p = Parser {
            toks: tokens(line)?,
            pos: 0,
        };
        let Some(Tok::Str(format)) = p.next() else {
            return None;
        };
        let mut args = Vec::new();
        while p.eat(",") {
            args.push(p.expr()?);
        }
        (p.pos == p.toks.len()).then_some(PrintFmt { format, args })
    }

    /// The text for a record whose fields `field` gives by name; `None` when the format
    /// uses a field, helper or conversion not understood.
    pub fn render(&self, field: &dyn Fn(&str) -> Option<Val>) -> Option<String> {
        let vals = self
            .args
            .iter()
            .map(|a| eval(a, field))
            .collect::<Option<Vec<Val>>>()?;
        printf(&self.format, &vals)
    }
}

fn eval(e: &Expr, field: &dyn Fn(&str) -> Option<Val>) -> Option<Val> {
    let int = |e: &Expr| eval(e, field).map(|v| v.int());
    Some(match e {
        Expr::Num(n) => Val::Int(*n),
        Expr::Str(s) => Val::Str(s.clone()),
        Expr::Field(name) => field(name)?,
        Expr::Cast(ty, e) => Val::Int(ty.convert(int(e)?)),
        Expr::Unary(op, e) => {
            let v = int(e)?;
            Val::Int(match *op {
                "-" => v.wrapping_neg(),
                "!" => u64::from(v == 0),
                _ => !v,
            })
        }
        Expr::Binary(op, a, b) => Val::Int(binary(op, int(a)?, int(b)?)?),
        Expr::Cond(c, a, b) => {
            if int(c)? != 0 {
                eval(a, field)?
            } else {
                eval(b, field)?
            }
        }
        Expr::Call(name, args) => call(name, args, field)?,
        Expr::Pair(..) => return None,
    })
}

fn binary(op: &str, a: u64, b: u64) -> Option<u64> {
    let (sa, sb) = (a as i64, b as i64);
    Some(match op {
        "||" => u64::from(a != 0 || b != 0),
        "&&" => u64::from(a != 0 && b != 0),
        "|" => a | b,
        "^" => a ^ b,
        "&" => a & b,
        "==" => u64::from(a == b),
        "!=" => u64::from(a != b),
        "<" => u64::from(sa < sb),
        "<=" => u64::from(sa <= sb),
        ">" => u64::from(sa > sb),
        ">=" => u64::from(sa >= sb),
        "<<" => a.checked_shl(b as u32).unwrap_or(0),
        ">>" => a.checked_shr(b as u32).unwrap_or(0),
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" => a.checked_div(b)?,
        "%" => a.checked_rem(b)?,
        _ => return None,
    })
}

/// The `{ value, "name" }` pairs of a flags or symbols list.
fn pairs(args: &[Expr], field: &dyn Fn(&str) -> Option<Val>) -> Option<Vec<(u64, String)>> {
    args.iter()
        .map(|a| match a {
            Expr::Pair(v, name) => match (eval(v, field)?, eval(name, field)?) {
                (Val::Int(v), Val::Str(s)) => Some((v, s)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn call(name: &str, args: &[Expr], field: &dyn Fn(&str) -> Option<Val>) -> Option<Val> {
    match (name, args) {
        ("__get_str", [Expr::Field(f)]) => field(f),
        // libtraceevent's PRINT_FLAGS: each flag wholly set, in list order, joined by
        // the delimiter; what no flag covers as hex after them.
        ("__print_flags", [v, delim, list @ ..]) => {
            let mut v = eval(v, field)?.int();
            let Val::Str(delim) = eval(delim, field)? else {
                return None;
            };
            let mut parts = Vec::new();
            for (flag, text) in pairs(list, field)? {
                if v == 0 && flag == 0 {
                    parts.push(text);
                    break;
                }
                if flag != 0 && v & flag == flag {
                    parts.push(text);
                    v &= !flag;
                }
            }
            if v != 0 {
                parts.push(format!("0x{v:x}"));
            }
            Some(Val::Str(parts.join(&delim)))
        }
        ("__print_symbolic", [v, list @ ..]) => {
            let v = eval(v, field)?.int();
            let found = pairs(list, field)?.into_iter().find(|(s, _)| *s == v);
            Some(Val::Str(
                found.map_or_else(|| format!("0x{v:x}"), |(_, t)| t),
            ))
        }
        _ => None,
    }
}

/// C's printf over `vals` for the conversions print formats use: d i u x X o c s p,
/// with flags, width, precision and the h, hh, l, ll and z lengths.
fn printf(format: &str, vals: &[Val]) -> Option<String> {
    let mut out = String::new();
    let mut vals = vals.iter();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut flags = String::new();
        while let Some(&f) = chars.peek().filter(|f| "-0+ #".contains(**f)) {
            flags.push(f);
            chars.next();
        }
        let number = |chars: &mut std::iter::Peekable<std::str::Chars>| {
            let mut n = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                n.push(d);
                chars.next();
            }
            n.parse::<usize>().ok()
        };
        let width = number(&mut chars).unwrap_or(0);
        let precision = if chars.peek() == Some(&'.') {
            chars.next();
            Some(number(&mut chars).unwrap_or(0))
        } else {
            None
        };
        let mut bits = 32;
        while let Some(&l) = chars.peek().filter(|l| "hlzL".contains(**l)) {
            bits = match (l, bits) {
                ('h', 16) => 8,
                ('h', _) => 16,
                _ => 64,
            };
            chars.next();
        }
        let conv = chars.next()?;
        let v = vals.next()?;
        let mask = |x: u64| if bits == 64 { x } else { x & ((1 << bits) - 1) };
        let signed = |x: u64| {
            let shift = 64 - bits;
            ((x << shift) as i64) >> shift
        };
        let (sign, body) = match (conv, v) {
            ('s', Val::Str(s)) => {
                let s = match precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s.clone(),
                };
                (String::new(), s)
            }
            ('s', Val::Int(n)) => (String::new(), n.to_string()),
            ('c', v) => (String::new(), char::from(v.int() as u8).to_string()),
            ('d' | 'i', v) => {
                let n = signed(v.int());
                let sign = if n < 0 {
                    "-"
                } else if flags.contains('+') {
                    "+"
                } else {
                    ""
                };
                (sign.to_string(), digits(n.unsigned_abs(), 10, precision))
            }
            ('u', v) => (String::new(), digits(mask(v.int()), 10, precision)),
            ('o', v) => (String::new(), digits(mask(v.int()), 8, precision)),
            ('x' | 'X', v) => {
                let mut d = digits(mask(v.int()), 16, precision);
                if conv == 'X' {
                    d = d.to_uppercase();
                }
                let prefix = if flags.contains('#') && v.int() != 0 {
                    "0x"
                } else {
                    ""
                };
                (prefix.to_string(), d)
            }
            ('p', v) => ("0x".to_string(), digits(v.int(), 16, None)),
            _ => return None,
        };
        let len = sign.len() + body.chars().count();
        let pad = width.saturating_sub(len);
        if flags.contains('-') {
            out.push_str(&sign);
            out.push_str(&body);
            out.extend(std::iter::repeat_n(' ', pad));
        } else if flags.contains('0') && precision.is_none() && conv != 's' {
            out.push_str(&sign);
            out.extend(std::iter::repeat_n('0', pad));
            out.push_str(&body);
        } else {
            out.extend(std::iter::repeat_n(' ', pad));
            out.push_str(&sign);
            out.push_str(&body);
        }
    }
    Some(out)
}

/// `n` in `radix` with at least `precision` digits (C: precision 0 prints 0 as "").
fn digits(n: u64, radix: u32, precision: Option<usize>) -> String {
    let s = match radix {
        8 => format!("{n:o}"),
        16 => format!("{n:x}"),
        _ => n.to_string(),
    };
    match precision {
        Some(0) if n == 0 => String::new(),
        Some(p) if s.len() < p => format!("{}{s}", "0".repeat(p - s.len())),
        _ => s,
    }
}
