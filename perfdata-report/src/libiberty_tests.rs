use crate::symtab::demangle;

/// Names checked one by one against `c++filt -p -i` (binutils 2.40 here).
#[test]
fn names_as_libiberty_prints_them() {
    for (mangled, filt) in [
        (
            "_ZThn32_N12_GLOBAL__N_113MPPassManagerD0Ev.llvm.2049004417421520800",
            "non-virtual thunk to (anonymous namespace)::MPPassManager::~MPPassManager()",
        ),
        (
            "_ZThn32_N12_GLOBAL__N_113MPPassManagerD1Ev.cold",
            "non-virtual thunk to (anonymous namespace)::MPPassManager::~MPPassManager()",
        ),
        (
            "_ZN2v835TryToCopyAndConvertArrayToCppBufferILj196608EiEEbNS_5LocalINS_5ArrayEEEPT0_j",
            "v8::TryToCopyAndConvertArrayToCppBuffer<196608u, int>",
        ),
        (
            "_ZGVZN2v88internal28CFunctionBuilderWithFunctionINS_16CTypeInfoBuilderIdJEEEJNS2_INS_5LocalINS_5ValueEEEJEEEEE5BuildEvE8instance",
            "guard variable for v8::internal::CFunctionBuilderWithFunction<v8::CTypeInfoBuilder<double>, v8::CTypeInfoBuilder<v8::Local<v8::Value>> >::Build()::instance",
        ),
        (
            "_ZZN2v88internal7Scanner28ScanIdentifierOrKeywordInnerEvENKUljE_clEj",
            "v8::internal::Scanner::ScanIdentifierOrKeywordInner()::{lambda(unsigned int)#1}::operator()",
        ),
        (
            "_ZNKR6icu_786number23NumberFormatterSettingsINS0_24LocalizedNumberFormatterEE12adoptPerUnitEPNS_11MeasureUnitE",
            "icu_78::number::NumberFormatterSettings<icu_78::number::LocalizedNumberFormatter>::adoptPerUnit",
        ),
        // A thunk to a standard stream's destructor: spelt out, as libiberty
        // spells the abbreviation before a destructor (libstdc++'s ostream thunk,
        // in `perf script` of every C++ program's recording).
        (
            "_ZTv0_n24_NSoD1Ev",
            "virtual thunk to std::basic_ostream<char, std::char_traits<char> >::~basic_ostream()",
        ),
        (
            "_ZThn16_NSdD0Ev",
            "non-virtual thunk to std::basic_iostream<char, std::char_traits<char> >::~basic_iostream()",
        ),
        (
            "_ZThn16_NSdD1Ev.cold",
            "non-virtual thunk to std::basic_iostream<char, std::char_traits<char> >::~basic_iostream()",
        ),
        (
            "_ZThn104_N4node7UDPWrap10OnSendDoneEPNS_7ReqWrapI13uv_udp_send_sEEi",
            "non-virtual thunk to node::UDPWrap::OnSendDone(node::ReqWrap<uv_udp_send_s>*, int)",
        ),
        (
            "_ZNK4node14options_parser13OptionsParserINS_12DebugOptionsEE17SimpleOptionFieldINS_8HostPortEE10LookupImplEPS2_",
            "node::options_parser::OptionsParser<node::DebugOptions>::SimpleOptionField<node::HostPort>::LookupImpl",
        ),
    ] {
        assert_eq!(demangle(mangled), filt, "{mangled}");
    }
}

/// node's names that differed before libiberty's printing of types and expressions in
/// template arguments was followed, each with `c++filt -p -i`'s text.
#[test]
fn node_template_arguments_as_libiberty_prints_them() {
    for (mangled, filt) in [
        // A function type: a space between its return type and its parameters.
        (
            "_ZNSt17_Function_handlerIFNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPKcEZN4node16HandleEnvOptionsESt10shared_ptrINS9_18EnvironmentOptionsEEEUlS7_E_E10_M_managerERSt9_Any_dataRKSF_St18_Manager_operation",
            "std::_Function_handler<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > (char const*), node::HandleEnvOptions(std::shared_ptr<node::EnvironmentOptions>)::{lambda(char const*)#1}>::_M_manager",
        ),
        // The address of a template function: in parentheses, with its return type.
        (
            "_ZN4node10StreamBase8JSMethodIXadL_ZNS0_11WriteStringILNS_8encodingE0EEEiRKN2v820FunctionCallbackInfoINS4_5ValueEEEEEEEvS9_",
            "node::StreamBase::JSMethod<&(int node::StreamBase::WriteString<(node::encoding)0>(v8::FunctionCallbackInfo<v8::Value> const&))>",
        ),
        // ... and a trailing empty pack in its parameters gone.
        (
            "_ZN2v88internal4wasm7liftoff16EmitFloatSetCondIXadL_ZNS0_24SharedMacroAssemblerBase7UcomisdINS0_11XMMRegisterES6_JEEEvT_T0_DpT1_EEEEvPNS1_16LiftoffAssemblerENS0_9ConditionENS0_8RegisterES6_S6_",
            "v8::internal::wasm::liftoff::EmitFloatSetCond<&(void v8::internal::SharedMacroAssemblerBase::Ucomisd<v8::internal::XMMRegister, v8::internal::XMMRegister>(v8::internal::XMMRegister, v8::internal::XMMRegister))>",
        ),
        // The address of a qualified function that is no template: its name alone.
        (
            "_ZN4node4wasi4WASI12WasiFunctionIPFvRS1_NS0_10WasmMemoryEjEXadL_ZNS1_8ProcExitES3_S4_jEEvJjEE12FastCallbackEN2v85LocalINS8_6ObjectEEEjRNS8_22FastApiCallbackOptionsE",
            "node::wasi::WASI::WasiFunction<void (*)(node::wasi::WASI&, node::wasi::WasmMemory, unsigned int), &node::wasi::WASI::ProcExit, void, unsigned int>::FastCallback",
        ),
        (
            "_ZN4node12_GLOBAL__N_16Parser5ProxyIMS1_FivEXadL_ZNS1_15on_chunk_headerEvEEE3RawEP18llhttp__internal_s",
            "node::(anonymous namespace)::Parser::Proxy<int (node::(anonymous namespace)::Parser::*)(), &node::(anonymous namespace)::Parser::on_chunk_header>::Raw",
        ),
        // ... unless it is a const member function.
        (
            "_ZN4node10BaseObject16InternalFieldSetILi3EXadL_ZNK2v85Value10IsFunctionEvEEEEvNS2_5LocalINS2_6StringEEENS4_IS3_EERKNS2_20PropertyCallbackInfoIvEE",
            "node::BaseObject::InternalFieldSet<3, &(v8::Value::IsFunction() const)>",
        ),
        // A trailing empty pack of references.
        (
            "_ZZN4node11SPrintFImplINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEJEEES6_PKcOT_DpOT0_E20error_and_abort_args",
            "node::SPrintFImpl<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >>(char const*, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&)::error_and_abort_args",
        ),
        // A legacy-Rust-shaped name without a hash is C++.
        ("_ZN12_GLOBAL__N_111gInclusionsE", "(anonymous namespace)::gInclusions"),
        (
            "_ZNSt15_Sp_counted_ptrIDnLN9__gnu_cxx12_Lock_policyE2EE10_M_disposeEv",
            "std::_Sp_counted_ptr<decltype(nullptr), (__gnu_cxx::_Lock_policy)2>::_M_dispose",
        ),
        // Special names of data symbols.
        (
            "_ZTVN2v88internal29SmallStringOptimizedAllocatorILm128EEE",
            "vtable for v8::internal::SmallStringOptimizedAllocator<128ul>",
        ),
        ("_ZTTN2v84base18CheckMessageStreamE", "VTT for v8::base::CheckMessageStream"),
        (
            "_ZTCN2v84base18CheckMessageStreamE0_So",
            "construction vtable for std::ostream-in-v8::base::CheckMessageStream",
        ),
    ] {
        assert_eq!(demangle(mangled), filt, "{mangled}");
    }
}

/// The C++ names (`_Z...`) `nm` lists as defined in `path`, from the dynamic symbol
/// table or the static one, each once; `None` when nm is not installed.
fn cxx_names(path: &str, dynamic: bool, kinds: &[&str]) -> Option<Vec<String>> {
    let mut args = vec!["--defined-only", "--without-symbol-versions", path];
    if dynamic {
        args.insert(0, "-D");
    }
    let nm = std::process::Command::new("nm").args(&args).output().ok()?;
    let text = String::from_utf8_lossy(&nm.stdout);
    let mut names: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, kind, name) = (f.next()?, f.next()?, f.next()?);
            let wanted = kinds.is_empty() || kinds.contains(&kind);
            (wanted && name.starts_with("_Z")).then(|| name.to_string())
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    Some(names)
}

/// `c++filt -p -i`'s text for each of `names`, or `None` when it is not installed.
fn cxxfilt(names: &[String]) -> Option<Vec<String>> {
    let mut filt = std::process::Command::new("c++filt")
        .args(["-p", "-i"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let input = names.join("\n") + "\n";
    let mut stdin = filt.stdin.take()?;
    let writer = std::thread::spawn(move || {
        std::io::Write::write_all(&mut stdin, input.as_bytes()).expect("c++filt reads")
    });
    let out = filt.wait_with_output().ok()?;
    writer.join().expect("writer");
    let text = String::from_utf8_lossy(&out.stdout);
    Some(text.lines().map(str::to_string).collect())
}

/// The names of `names` [`demangle`] prints otherwise than c++filt, each with both
/// texts; transaction clones (`_ZGTt`) aside, the one special case cpp_demangle renders
/// otherwise (they lose their parameters).
fn differences(names: &[String], filtered: &[String]) -> Vec<String> {
    assert_eq!(names.len(), filtered.len(), "c++filt prints a line a name");
    names
        .iter()
        .zip(filtered)
        .filter(|(n, f)| !n.starts_with("_ZGTt") && demangle(n) != **f)
        .map(|(n, f)| format!("{n}\n  ours {}\n  filt {f}", demangle(n)))
        .collect()
}

/// Every C++ function libstdc++ exports, demangled here and by `c++filt -p -i`: the
/// same but for transaction clones (69 names). 176 of 4451 differed before the
/// abbreviations were spelt as libiberty spells them, 71 before thunks' targets were
/// (2 of them, which a tolerance of 2% let through).
#[test]
fn libstdcxx_functions_demangle_as_cxxfilt() {
    let lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
    let Some(names) = cxx_names(lib, true, &["T", "W"]) else {
        eprintln!("SKIPPED: nm is not installed");
        return;
    };
    if names.len() < 1000 {
        eprintln!("SKIPPED: {lib} has {} C++ functions", names.len());
        return;
    }
    let Some(filtered) = cxxfilt(&names) else {
        eprintln!("SKIPPED: c++filt is not installed");
        return;
    };
    let differ = differences(&names, &filtered);
    assert!(
        differ.is_empty(),
        "{} of {} differ:\n{}",
        differ.len(),
        names.len(),
        differ.join("\n")
    );
}

/// Every C++ symbol of node's dynamic and static symbol tables (functions and data:
/// perf names both), demangled here and by `c++filt -p -i`. 4170 of 78753 differed
/// (node 20.20): vtables, function types, addresses of functions, anonymous
/// namespaces. What is left are cpp_demangle's own misreadings (a closure type's `&&`,
/// a local name's substitutions; 94 names) and names it cannot parse at all (SFINAE
/// expressions such as `srSt9__is_charIT_E7__value`; 26), which perf prints demangled
/// and perfdata as they are: at most 0.2% and 0.1% of the names.
#[test]
fn node_symbols_demangle_as_cxxfilt() {
    let Ok(node) = which_node() else {
        eprintln!("SKIPPED: node is not installed");
        return;
    };
    let (Some(mut names), Some(symtab)) =
        (cxx_names(&node, true, &[]), cxx_names(&node, false, &[]))
    else {
        eprintln!("SKIPPED: nm is not installed");
        return;
    };
    names.extend(symtab);
    names.sort_unstable();
    names.dedup();
    // c++filt cuts a word at `@` (a version), libiberty's call in perf does not.
    names.retain(|n| !n.contains('@'));
    if names.len() < 10_000 {
        eprintln!("SKIPPED: {node} has {} C++ symbols", names.len());
        return;
    }
    let Some(filtered) = cxxfilt(&names) else {
        eprintln!("SKIPPED: c++filt is not installed");
        return;
    };
    let differ = differences(&names, &filtered);
    let (unparsed, misread): (Vec<&String>, Vec<&String>) = differ.iter().partition(|d| {
        d.lines()
            .next()
            .is_some_and(|n| d.contains(&format!("ours {n}\n")))
    });
    eprintln!(
        "{} of {} differ: {} cpp_demangle cannot parse, {} it misreads",
        differ.len(),
        names.len(),
        unparsed.len(),
        misread.len()
    );
    assert!(
        misread.len() * 500 <= names.len() && unparsed.len() * 1000 <= names.len(),
        "{} of {} differ:\n{}",
        differ.len(),
        names.len(),
        differ.join("\n")
    );
}

/// The `node` on the PATH.
fn which_node() -> Result<String, ()> {
    let out = std::process::Command::new("sh")
        .args(["-c", "command -v node"])
        .output()
        .map_err(|_| ())?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && !path.is_empty() {
        Ok(path)
    } else {
        Err(())
    }
}
