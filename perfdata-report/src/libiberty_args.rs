//! Types and expressions inside template arguments, as libiberty's `d_print_comp`
//! prints them where cpp_demangle prints otherwise: function types, the address of a
//! function, trailing empty packs in a parameter list. These rewrite cpp_demangle's
//! text, so each looks only at shapes that one construct produces (a `(` whose group
//! ends a template argument, a template argument that starts with `&`).

/// Whether `c` may end a type that a function type's parameter list follows.
fn ends_type(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '>' | '*' | '&' | ']')
}

/// The index of the `close` matching the `open` at `at` (same nesting, that pair only).
fn matching(s: &str, at: usize, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in s.bytes().enumerate().skip(at) {
        if b == open {
            depth += 1;
        } else if b == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// Words a `(` follows that open no parameter list of a function type.
const NOT_FUNCTION_TYPES: [&str; 8] = [
    "operator", "lambda", "decltype", "sizeof", "alignof", "noexcept", "typeid", "throw",
];

/// A function type in a template argument (`std::function<void(int)>`) with a space
/// between its return type and its parameters, as libiberty prints it (`void (int)`):
/// a `(` after a type whose group ends the argument (`,` or `>` follows its `)`; a
/// function's own parameters are followed by `::` or nothing).
pub(crate) fn function_types(d: &str) -> String {
    let mut out = String::with_capacity(d.len() + 8);
    let mut last = 0;
    for (i, _) in d.match_indices('(') {
        let before = &d[..i];
        // `&(` opens an address-of argument libiberty parenthesises, no type.
        if !before.chars().next_back().is_some_and(ends_type)
            || NOT_FUNCTION_TYPES.iter().any(|w| before.ends_with(w))
            || before.ends_with("<&")
            || before.ends_with(", &")
        {
            continue;
        }
        let Some(close) = matching(d, i, b'(', b')') else {
            continue;
        };
        if d[close + 1..].starts_with([',', '>']) {
            out.push_str(&d[last..i]);
            out.push(' ');
            last = i;
        }
    }
    out.push_str(&d[last..]);
    out
}

/// A pack expanded to nothing at the end of a parameter list: cpp_demangle prints its
/// separator (and a reference's `&&`), libiberty removes the `, ` (`f(int, )` is
/// `f(int)`).
pub(crate) fn trailing_empty_packs(d: &str) -> String {
    let mut d = d.to_string();
    for empty in [", &&)", ", &)", ", )"] {
        while d.contains(empty) {
            d = d.replace(empty, ")");
        }
    }
    d
}

/// One `&NAME(PARAMS)QUALS` template argument of cpp_demangle's text.
struct AddressOf<'a> {
    /// The function's name, with its template arguments.
    name: &'a str,
    /// Its parameter list, `(` to `)`.
    params: &'a str,
    /// ` const`, ` &&`, ... of a member function.
    quals: &'a str,
    /// Where the argument ends in the text it was read from (at its `,` or `>`).
    end: usize,
}

/// The address-of-function argument starting at `at` (a `&`), if it is one.
fn address_of(d: &str, at: usize) -> Option<AddressOf<'_>> {
    let bytes = d.as_bytes();
    let mut j = at + 1;
    let mut depth = 0usize;
    let open = loop {
        let rest = &d[j..];
        if rest.starts_with("(anonymous namespace)") {
            j += "(anonymous namespace)".len();
            continue;
        }
        if d[..j].ends_with("operator") && rest.starts_with("()") {
            j += 2;
            continue;
        }
        match *bytes.get(j)? {
            b'<' => depth += 1,
            b'>' if depth == 0 => return None,
            b'>' => depth -= 1,
            b',' | b'{' | b')' if depth == 0 => return None,
            b'(' if depth == 0 => break j,
            b'(' => j = matching(d, j, b'(', b')')?,
            _ => {}
        }
        j += 1;
    };
    let close = matching(d, open, b'(', b')')?;
    let mut end = close + 1;
    'quals: loop {
        for q in [" const", " volatile", " &&", " &"] {
            if d[end..].starts_with(q) {
                end += q.len();
                continue 'quals;
            }
        }
        break;
    }
    if !d[end..].starts_with([',', '>']) {
        return None;
    }
    Some(AddressOf {
        name: &d[at + 1..open],
        params: &d[open..=close],
        quals: &d[close + 1..end],
        end,
    })
}

/// Whether `name` has a `::` outside its template arguments (libiberty's
/// `DEMANGLE_COMPONENT_QUAL_NAME`).
fn is_qualified(name: &str) -> bool {
    let mut depth = 0usize;
    let b = name.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'<' => depth += 1,
            b'>' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && b.get(i + 1) == Some(&b':') => return true,
            _ => {}
        }
    }
    false
}

/// The address of a function in a template argument as libiberty prints it: `&NAME`
/// alone when NAME is qualified, not a template and has no qualifiers (`d_print_comp`
/// drops the parameters of exactly that shape), else the whole function in parentheses
/// (`&(int ns::f<0>(int))`, `&(ns::A::f() const)`), a template's return type first.
/// `with_returns` is cpp_demangle's text of the same symbol with return types, where a
/// template's is read; without it such an argument is left as it is.
pub(crate) fn addresses_of_functions(d: &str, with_returns: &dyn Fn() -> Option<String>) -> String {
    let mut out = String::with_capacity(d.len());
    let mut last = 0;
    let mut returns: Option<Option<String>> = None;
    let mut i = 0;
    while let Some(k) = d[i..].find('&') {
        let at = i + k;
        i = at + 1;
        if !(d[..at].ends_with('<') || d[..at].ends_with(", ")) {
            continue;
        }
        let Some(arg) = address_of(d, at) else {
            continue;
        };
        let template = arg.name.ends_with('>');
        let replaced = if is_qualified(arg.name) && !template && arg.quals.is_empty() {
            format!("&{}", addresses_of_functions(arg.name, with_returns))
        } else {
            let ret = if template {
                let text = returns.get_or_insert_with(with_returns).as_deref();
                match text.and_then(|t| return_type(t, arg.name, arg.params)) {
                    Some(r) => format!("{r} "),
                    None => continue,
                }
            } else {
                String::new()
            };
            format!(
                "&({ret}{}{}{})",
                addresses_of_functions(arg.name, with_returns),
                addresses_of_functions(arg.params, with_returns),
                arg.quals
            )
        };
        out.push_str(&d[last..at]);
        out.push_str(&replaced);
        last = arg.end;
        i = arg.end;
    }
    out.push_str(&d[last..]);
    out
}

/// The return type cpp_demangle prints before `name` + `params` in an address-of
/// argument of `text` (`&int ns::f<0>(int)`: `int`).
fn return_type<'t>(text: &'t str, name: &str, params: &str) -> Option<&'t str> {
    let needle = format!(" {name}{params}");
    for (p, _) in text.match_indices(needle.as_str()) {
        // The argument's `&`: the nearest one before that starts an argument, with
        // balanced brackets between it and the name.
        let head = &text[..p];
        let mut k = head.len();
        while let Some(a) = head[..k].rfind('&') {
            k = a;
            let ret = &head[a + 1..];
            let starts = head[..a].ends_with('<') || head[..a].ends_with(", ");
            if starts && balanced(ret) {
                return Some(ret);
            }
        }
    }
    None
}

/// Whether `s` opens and closes as many `<` as `>` and `(` as `)`.
fn balanced(s: &str) -> bool {
    s.matches('<').count() == s.matches('>').count()
        && s.matches('(').count() == s.matches(')').count()
}
