//! C++ names as perf 6.1 prints them: it demangles with libiberty's `cplus_demangle`
//! and `DMGL_NO_OPTS` (no parameters, no `const`, no verbose expansions), where
//! [`cpp_demangle`] prints some things its own way. The differences that reach function
//! names are rewritten here, checked against `c++filt -p -i` (libiberty with the same
//! options) by the tests:
//!
//! - integer literals in template arguments: `(unsigned int)8` is `8u` (`l`, `ul`, `ll`,
//!   `ull`; plain `int` bare);
//! - an empty template argument pack prints nothing, not `, ` (`Foo<bool, >` is
//!   `Foo<bool>`);
//! - a member function's qualifiers (` const`, ` &`, ` &&`, ` volatile`) belong to its
//!   type, which is not printed;
//! - thunks are `non-virtual thunk to X(params)` and `virtual thunk to X(params)`, with
//!   parameters, as libiberty prints special names;
//! - the standard abbreviations `Ss`, `Si`, `So`, `Sd` print as `std::string`,
//!   `std::istream`, ... except before a constructor or destructor, where libiberty
//!   spells them out (`std::basic_ostream<char, std::char_traits<char> >::basic_ostream`);
//! - transaction clones (`_ZGTt`) have their parameters and qualifiers, as thunks do;
//! - the typeinfo of a function type has a space before its parameters, and a `const`
//!   function type's `const` after them (`typeinfo for void (int) const`);
//! - a local entity behind a default argument's scope keeps its qualifiers
//!   (`f(int)::{default arg#1}::{lambda()#1}::operator() const`).
//!
//! What cpp_demangle parsed or printed wrongly (a type after `sr`, pack expansions,
//! qualifiers of nested names, lambdas' parameters) is fixed in the parser itself:
//! vendor/cpp_demangle/PATCHES.md.

#[path = "libiberty_args.rs"]
mod args;

/// `d`, cpp_demangle's rendering of `mangled` without parameters or return type, as
/// libiberty prints it.
pub(crate) fn restyle(mangled: &str, d: String) -> String {
    if let Some(t) = thunk(mangled).or_else(|| transaction_clone(mangled)) {
        return t;
    }
    if let Some(t) = const_function_typeinfo(mangled) {
        return t;
    }
    let d = literals(&d.replace(", >", ">"));
    if let Some(s) = special_name(&d) {
        return spelt_out(mangled, words(&s));
    }
    let d = function_typeinfo(mangled, d);
    // A template's return type, which libiberty prints in `&(int f<0>(int))`, is only
    // in cpp_demangle's text with return types: demangled again when one is there.
    let with_returns = || {
        let d = demangled(mangled, &cpp_demangle::DemangleOptions::new().no_params())?;
        Some(literals(&d.replace(", >", ">")))
    };
    let d = args::addresses_of_functions(&d, &with_returns);
    let d = args::trailing_empty_packs(&args::function_types(&d));
    // libiberty drops a local entity's qualifiers (`f()::{lambda()#1}::operator()`)
    // but not behind a default argument's scope (`{default arg#1}`), which its
    // `d_encoding` does not look through.
    let d = if mangled.starts_with("_ZZ") && d.contains("::{default arg#") {
        words(&d)
    } else {
        strip_qualifiers(words(&d))
    };
    spelt_out(mangled, abbreviations(mangled, d))
}

/// cpp_demangle's `{vtable(X)}`, `{vtt(X)}` and `construction vtable for A-in-B` as
/// libiberty prints them: `vtable for X`, `VTT for X`, `construction vtable for
/// B-in-A` (the base first: cpp_demangle swaps the two).
fn special_name(d: &str) -> Option<String> {
    for (from, to) in [("{vtable(", "vtable for "), ("{vtt(", "VTT for ")] {
        if let Some(x) = d.strip_prefix(from).and_then(|r| r.strip_suffix(")}")) {
            return Some(format!("{to}{x}"));
        }
    }
    let pair = d.strip_prefix("construction vtable for ")?;
    let mut halves = pair.split("-in-");
    let (derived, base) = (halves.next()?, halves.next()?);
    if halves.next().is_some() {
        return None;
    }
    Some(format!("construction vtable for {base}-in-{derived}"))
}

/// Whole words cpp_demangle spells its own way: the anonymous namespace (GCC's
/// `_GLOBAL__N_1`, which libiberty's `d_identifier` prints `(anonymous namespace)`
/// wherever it is) and `std::nullptr_t` (`Dn`, libiberty's `decltype(nullptr)`).
fn words(d: &str) -> String {
    let mut out = String::with_capacity(d.len());
    let mut rest = d;
    while let Some(i) = rest.find("_GLOBAL_") {
        let word_start = i == 0 || !is_word(rest.as_bytes()[i - 1]);
        let tail = &rest[i + "_GLOBAL_".len()..];
        let anonymous = tail.len() >= 2
            && matches!(tail.as_bytes()[0], b'.' | b'_' | b'$')
            && tail.as_bytes()[1] == b'N';
        out.push_str(&rest[..i]);
        if word_start && anonymous {
            let len = tail
                .bytes()
                .take_while(|b| is_word(*b) || *b == b'$' || *b == b'.');
            out.push_str("(anonymous namespace)");
            rest = &tail[len.count()..];
        } else {
            out.push_str("_GLOBAL_");
            rest = tail;
        }
    }
    out.push_str(rest);
    out.replace("std::nullptr_t", "decltype(nullptr)")
}

/// Whether `b` can be part of an identifier.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The standard streams and string: (mangled abbreviation, simple name, full name, the
/// class's own name).
const ABBREVIATIONS: [(&str, &str, &str, &str); 4] = [
    (
        "Ss",
        "std::string",
        "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
        "basic_string",
    ),
    (
        "Si",
        "std::istream",
        "std::basic_istream<char, std::char_traits<char> >",
        "basic_istream",
    ),
    (
        "So",
        "std::ostream",
        "std::basic_ostream<char, std::char_traits<char> >",
        "basic_ostream",
    ),
    (
        "Sd",
        "std::iostream",
        "std::basic_iostream<char, std::char_traits<char> >",
        "basic_iostream",
    ),
];

/// A name in one of the [`ABBREVIATIONS`] (`_ZNSo...`, `_ZNKSi...`) printed as libiberty
/// prints the abbreviation there: spelt out before a constructor or destructor (its
/// `d_substitution` turns verbose when `C` or `D` follows), simple elsewhere.
fn abbreviations(mangled: &str, d: String) -> String {
    let Some(nested) = mangled
        .strip_prefix("_ZN")
        .map(|r| r.trim_start_matches(['K', 'V', 'r', 'R', 'O']))
    else {
        return d;
    };
    for (abbr, simple, full, class) in ABBREVIATIONS {
        let Some(after) = nested.strip_prefix(abbr) else {
            continue;
        };
        let short = simple.rsplit("::").next().unwrap_or(simple);
        if after.starts_with(['C', 'D']) {
            // cpp_demangle: `std::ostream::ostream`, `std::ostream::~ostream`.
            for (from, to) in [
                (format!("{simple}::~{short}"), format!("{full}::~{class}")),
                (format!("{simple}::{short}"), format!("{full}::{class}")),
            ] {
                if let Some(rest) = d.strip_prefix(from.as_str()) {
                    return format!("{to}{rest}");
                }
            }
        } else if let Some(rest) = d.strip_prefix(full) {
            return format!("{simple}{rest}");
        }
        return d;
    }
    d
}

/// `std::istream` and `std::iostream` (`Si`, `Sd`), which cpp_demangle spells out
/// everywhere and libiberty only before a constructor or destructor of theirs
/// (`std::basic_istream<char, std::char_traits<char> >::~basic_istream`): simple
/// elsewhere (`typeinfo for std::istream`, `f<std::istream>`). Only in a name that does
/// not spell the class itself (`13basic_istream`), whose text libiberty prints in full.
fn spelt_out(mangled: &str, d: String) -> String {
    let mut d = d;
    for (_, simple, full, class) in ABBREVIATIONS {
        if !d.contains(full) || mangled.contains(&format!("{}{class}", class.len())) {
            continue;
        }
        let mut out = String::with_capacity(d.len());
        let mut rest = d.as_str();
        while let Some(i) = rest.find(full) {
            out.push_str(&rest[..i]);
            let after = &rest[i + full.len()..];
            let structor = [format!("::{class}"), format!("::~{class}")]
                .iter()
                .any(|s| after.starts_with(s.as_str()));
            out.push_str(if structor { full } else { simple });
            // libiberty puts a space between two `>` only: `f<std::iostream>`.
            rest = match after.strip_prefix(" >") {
                Some(closed) if !structor => {
                    out.push('>');
                    closed
                }
                _ => after,
            };
        }
        out.push_str(rest);
        d = out;
    }
    d
}

/// The typeinfo of a function type (`_ZTIFvRiE`, `_ZTSF...`) with a space between the
/// return type and the parameters, as libiberty prints a function type
/// (`typeinfo for llvm::Error (llvm::jitlink::LinkGraph&)`; cpp_demangle prints a space
/// only after some return types).
fn function_typeinfo(mangled: &str, d: String) -> String {
    if !(mangled.starts_with("_ZTIF") || mangled.starts_with("_ZTSF")) || !d.ends_with(')') {
        return d;
    }
    // The parameter list is the group the final `)` closes.
    let mut depth = 0usize;
    for (i, b) in d.bytes().enumerate().rev() {
        match b {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    if i > 0 && d.as_bytes()[i - 1] != b' ' {
                        return format!("{} {}", &d[..i], &d[i..]);
                    }
                    return d;
                }
            }
            _ => {}
        }
    }
    d
}

/// The typeinfo of a `const` function type (`_ZTIKFvvE`: `typeinfo for void () const`),
/// which cpp_demangle prints with the `const` lost or on a parameter: the function
/// type's own, and ` const`. Dropping the `K` renumbers no substitution a parameter can
/// refer to (the qualified type is a candidate only after the function type).
fn const_function_typeinfo(mangled: &str) -> Option<String> {
    let kind = ["_ZTIKF", "_ZTSKF"]
        .into_iter()
        .find(|k| mangled.starts_with(k))?;
    let unqualified = format!("{}F{}", &kind[..4], &mangled[kind.len()..]);
    let opts = cpp_demangle::DemangleOptions::new()
        .no_params()
        .no_return_type();
    let d = demangled(&unqualified, &opts)?;
    let d = literals(&d.replace(", >", ">"));
    Some(format!(
        "{} const",
        function_typeinfo(&unqualified, words(&d))
    ))
}

/// cpp_demangle's text of `mangled` with `opts`, None where it does not parse or print:
/// what [`restyle`] starts from, and the renderings some names are demangled again in
/// (with parameters, with return types, of another encoding).
pub(crate) fn demangled(mangled: &str, opts: &cpp_demangle::DemangleOptions) -> Option<String> {
    cpp_demangle::Symbol::new(mangled).ok()?.demangle(opts).ok()
}

/// The trailing ` const`, ` volatile`, ` &`, ` &&` of a member function, gone.
fn strip_qualifiers(mut d: String) -> String {
    loop {
        let before = d.len();
        for q in [" const", " volatile", " restrict", " &&", " &"] {
            if let Some(rest) = d.strip_suffix(q) {
                d.truncate(rest.len());
            }
        }
        if d.len() == before {
            return d;
        }
    }
}

/// `(TYPE)N` literals libiberty prints with a suffix instead.
fn literals(d: &str) -> String {
    const SUFFIXES: [(&str, &str); 6] = [
        ("(unsigned long long)", "ull"),
        ("(long long)", "ll"),
        ("(unsigned long)", "ul"),
        ("(unsigned int)", "u"),
        ("(long)", "l"),
        ("(int)", ""),
    ];
    let mut out = String::with_capacity(d.len());
    let mut rest = d;
    'scan: while let Some(i) = rest.find('(') {
        out.push_str(&rest[..i]);
        let here = &rest[i..];
        for (cast, suffix) in SUFFIXES {
            let Some(after) = here.strip_prefix(cast) else {
                continue;
            };
            let sign = usize::from(after.starts_with('-'));
            let digits = after[sign..].bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 {
                out.push_str(&after[..sign + digits]);
                out.push_str(suffix);
                rest = &after[sign + digits..];
                continue 'scan;
            }
        }
        out.push('(');
        rest = &here[1..];
    }
    out.push_str(rest);
    out
}

/// A thunk (`_ZTh`: non-virtual, `_ZTv`: virtual) as libiberty names it: the target
/// with its parameters (cpp_demangle prints `{virtual override thunk({offset(-8)}, X)}`).
fn thunk(mangled: &str) -> Option<String> {
    let kind = if mangled.starts_with("_ZTh") {
        "non-virtual thunk to "
    } else if mangled.starts_with("_ZTv") {
        "virtual thunk to "
    } else {
        return None;
    };
    // A clone's suffix (`.llvm.N`, `.cold`) is not printed with `-p`; cpp_demangle
    // would print the thunk another way with it.
    let mangled = mangled.split('.').next().unwrap_or(mangled);
    let full = demangled(
        mangled,
        &cpp_demangle::DemangleOptions::new().no_return_type(),
    )?;
    // `{virtual override thunk({offset(-8)}, TARGET)}`, the offset with no `}` in it.
    let inner = full
        .strip_prefix("{virtual override thunk({")?
        .strip_suffix(")}")?;
    let target = &inner[inner.find("}, ")? + 3..];
    let target = literals(&target.replace(", >", ">"));
    // The target's own encoding (`NSoD1Ev` after `_ZTv0_n24_`) decides, as for any
    // name, whether a standard abbreviation in it is spelt out.
    let offsets = if kind.starts_with("virtual") { 2 } else { 1 };
    let encoding = after_offsets(&mangled[4..], offsets)?;
    Some(format!(
        "{kind}{}",
        abbreviations(&format!("_Z{encoding}"), target)
    ))
}

/// A transaction clone (`_ZGTt`, GCC's `-fgnu-tm` copy) as libiberty names it, like a
/// thunk: `transaction clone for X(params) const`, with parameters and qualifiers
/// (cpp_demangle's text without parameters has neither).
fn transaction_clone(mangled: &str) -> Option<String> {
    if !mangled.starts_with("_ZGTt") {
        return None;
    }
    let mangled = mangled.split('.').next().unwrap_or(mangled);
    let full = demangled(
        mangled,
        &cpp_demangle::DemangleOptions::new().no_return_type(),
    )?;
    let full = literals(&full.replace(", >", ">"));
    Some(words(&args::trailing_empty_packs(&full)))
}

/// What follows a thunk's `count` call offsets, each `n`? digits and `_` (`n16_`,
/// `0_n24_`).
fn after_offsets(mut rest: &str, count: usize) -> Option<&str> {
    for _ in 0..count {
        let sign = usize::from(rest.starts_with('n'));
        let digits = rest[sign..].bytes().take_while(u8::is_ascii_digit).count();
        rest = rest.get(sign + digits..)?.strip_prefix('_')?;
    }
    Some(rest)
}

#[cfg(test)]
#[path = "libiberty_tests.rs"]
mod tests;
