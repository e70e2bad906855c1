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

// Every C++ name of libstdc++, node and cc1plus against c++filt: perfdata-cli's
// tests/demangle_oracle.rs (a suite test: it needs c++filt and nm).

/// A full type after `sr` (GCC's SFINAE names; vendored cpp_demangle's change 1): 0.4.5
/// could not parse these, and perfdata printed them mangled.
#[test]
fn sr_types_as_libiberty_reads_them() {
    for (mangled, filt) in [
        // `srSt...`: g++ -O0's std::swap<int>.
        (
            "_ZSt4swapIiENSt9enable_ifIXsrSt6__and_IJSt6__not_ISt15__is_tuple_likeIT_EESt21is_move_constructibleIS4_ESt18is_move_assignableIS4_EEE5valueEvE4typeERS4_SE_",
            "std::swap<int>",
        ),
        // `srSt...` and `srN...E`, node's.
        (
            "_ZN2v84base17PrintCheckOperandIPKcEENSt9enable_ifIXaaaantsrSt11is_functionINSt14remove_pointerIT_E4typeEE5valuentsrSt7is_enumIS7_E5valuesrNS0_19has_output_operatorIS7_NS0_18CheckMessageStreamEvEE5valueENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEE4typeES7_",
            "v8::base::PrintCheckOperand<char const*>",
        ),
        // `srN...E` whose substitutions a later `S7_` refers to (cc1plus).
        (
            "_ZngI16wide_int_storageEN2wi13binary_traitsI16generic_wide_intIT_ES5_XsrNS1_10int_traitsIS5_EE14precision_typeEXsrS7_14precision_typeEE11result_typeERKS5_",
            "operator-<wide_int_storage>",
        ),
        // The old mangling, `sr <type> <name>` with no `E` (cc1plus).
        (
            "_Z10multiple_pILj1EljEN10if_nonpolyIT1_bXsr15poly_int_traitsIS1_E7is_polyEE4typeERK12poly_int_podIXT_ET0_ES1_",
            "multiple_p<1u, long, unsigned int>",
        ),
    ] {
        assert_eq!(demangle(mangled), filt, "{mangled}");
    }
}

/// What cpp_demangle 0.4.5 printed otherwise than libiberty (vendored changes 2 to 6).
#[test]
fn printing_as_libiberty_prints() {
    for (mangled, filt) in [
        // A pack expansion's pattern for each element (change 2).
        (
            "_ZZ1fIJiiiEEvDpOT_E1x",
            "f<int, int, int>(int&&, int&&, int&&)::x",
        ),
        (
            "_ZZN4node11SPrintFImplIPvJS1_S1_EEENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPKcOT_DpOT0_E20error_and_abort_args",
            "node::SPrintFImpl<void*, void*, void*>(char const*, void*&&, void*&&, void*&&)::error_and_abort_args",
        ),
        // A nested name's qualifier without what follows the whole name (change 3).
        (
            "_Z1fIN1X1AERNS1_1BEEvv",
            "f<X::A, X::A::B&>",
        ),
        (
            "_ZNSt6vectorIN4llvm13FileCheckDiagESaIS1_EE17_M_realloc_insertIJRKNS0_9SourceMgrENS0_5Check13FileCheckTypeERNS0_5SMLocERNS1_9MatchTypeERNS0_7SMRangeERNS0_9StringRefEEEEvN9__gnu_cxx17__normal_iteratorIPS1_S3_EEDpOT_",
            "std::vector<llvm::FileCheckDiag, std::allocator<llvm::FileCheckDiag> >::_M_realloc_insert<llvm::SourceMgr const&, llvm::Check::FileCheckType, llvm::SMLoc&, llvm::FileCheckDiag::MatchType&, llvm::SMRange&, llvm::StringRef&>",
        ),
        (
            "_ZN4llvm25getUniqueExitBlocksHelperINS_10BasicBlockENS_8LoopBaseIS1_NS_4LoopEEEZNKS4_19getUniqueExitBlocksERNS_15SmallVectorImplIPS1_EEEUlPKS1_E_EEvPKT0_RNS5_IPT_EET1_",
            "llvm::getUniqueExitBlocksHelper<llvm::BasicBlock, llvm::LoopBase<llvm::BasicBlock, llvm::Loop>, llvm::LoopBase<llvm::BasicBlock, llvm::Loop>::getUniqueExitBlocks(llvm::SmallVectorImpl<llvm::BasicBlock*>&) const::{lambda(llvm::BasicBlock const*)#1}>",
        ),
        // A lambda's own `&&` (change 4).
        (
            "_ZNSt8__detail9__variant12__gen_vtableIvOZNS0_16_Variant_storageILb0EJSt10unique_ptrI9bignum_stN4node15FunctionDeleterIS4_XadL_Z13BN_clear_freeEEEEEiEE8_M_resetEvEUlOT_E_JRSt7variantIJS8_iEEEE9_S_vtableE",
            "std::__detail::__variant::__gen_vtable<void, std::__detail::__variant::_Variant_storage<false, std::unique_ptr<bignum_st, node::FunctionDeleter<bignum_st, &BN_clear_free> >, int>::_M_reset()::{lambda(auto:1&&)#1}&&, std::variant<std::unique_ptr<bignum_st, node::FunctionDeleter<bignum_st, &BN_clear_free> >, int>&>::_S_vtable",
        ),
        // The scope of a default argument (change 5), its qualifiers kept.
        (
            "_ZZ1fiEd_NKUlvE_clEv",
            "f(int)::{default arg#1}::{lambda()#1}::operator() const",
        ),
        (
            "_ZTIZNK5clang15LocationContext9printJsonERN4llvm11raw_ostreamEPKcjbSt8functionIFvPKS0_EEEd_UlS8_E_",
            "typeinfo for clang::LocationContext::printJson(llvm::raw_ostream&, char const*, unsigned int, bool, std::function<void (clang::LocationContext const*)>) const::{default arg#1}::{lambda(clang::LocationContext const*)#1}",
        ),
        // A reference's template parameter in the scope it was first printed in (change 6).
        (
            "_ZZN10napi_env__14CallIntoModuleIRZN15node_napi_env__13CallFinalizerILb0EEEvPFvPS_PvS4_ES4_S4_EUlS3_E_ZNS1_18CallbackIntoModuleILb0ES7_EEvOT0_EUlS3_N2v85LocalINSC_5ValueEEEE_EEvOT_SB_E20error_and_abort_args",
            "napi_env__::CallIntoModule<node_napi_env__::CallFinalizer<false>(void (*)(napi_env__*, void*, void*), void*, void*)::{lambda(napi_env__*)#1}&, node_napi_env__::CallbackIntoModule<false, node_napi_env__::CallFinalizer<false>(void (*)(napi_env__*, void*, void*), void*, void*)::{lambda(napi_env__*)#1}>(node_napi_env__::CallFinalizer<false>(void (*)(napi_env__*, void*, void*), void*, void*)::{lambda(napi_env__*)#1}&&)::{lambda(napi_env__*, v8::Local<v8::Value>)#1}>(node_napi_env__::CallFinalizer<false>(void (*)(napi_env__*, void*, void*), void*, void*)::{lambda(napi_env__*)#1}&, node_napi_env__::CallFinalizer<false>(void (*)(napi_env__*, void*, void*), void*, void*)::{lambda(napi_env__*)#1}&&)::error_and_abort_args",
        ),
    ] {
        assert_eq!(demangle(mangled), filt, "{mangled}");
    }
}

/// Names of this machine's other C++ libraries (absl, libstdc++'s `std::call_once`, gflags)
/// that 0.4.5 read or printed otherwise (vendored changes 7 to 9).
#[test]
fn more_names_as_libiberty_prints_them() {
    for (mangled, filt) in [
        // A lambda in a variable's initializer: `M` after the first component (change 7).
        (
            "_ZN15FLAGS_nofromenvMUlvE_4_FUNEv",
            "FLAGS_nofromenv::{lambda()#1}::_FUN",
        ),
        // A pointer to member under `&&` (change 8).
        (
            "_ZZN4absl7debian313base_internal12CallOnceImplIMNS0_14flags_internal8FlagImplEFvvEJPS4_EEEvPSt6atomicIjENS1_14SchedulingModeEOT_DpOT0_E5trans",
            "absl::debian3::base_internal::CallOnceImpl<void (absl::debian3::flags_internal::FlagImpl::*)(), absl::debian3::flags_internal::FlagImpl*>(std::atomic<unsigned int>*, absl::debian3::base_internal::SchedulingMode, void (absl::debian3::flags_internal::FlagImpl::*&&)(), absl::debian3::flags_internal::FlagImpl*&&)::trans",
        ),
        // A constructor template's parameters, no return type among them (change 9).
        ("_ZZN1AC1IiEERiE1x", "A::A<int>(int&)::x"),
        (
            "_ZZNSt9once_flag18_Prepare_executionC4IZSt9call_onceIMSt6threadFvvEJPS3_EEvRS_OT_DpOT0_EUlvE_EERS8_ENUlvE_4_FUNEv",
            "std::once_flag::_Prepare_execution::_Prepare_execution<std::call_once<void (std::thread::*)(), std::thread*>(std::once_flag&, void (std::thread::*&&)(), std::thread*&&)::{lambda()#1}>(void (std::thread::*&)())::{lambda()#1}::_FUN",
        ),
    ] {
        assert_eq!(demangle(mangled), filt, "{mangled}");
    }
}

/// Special names and standard abbreviations restyled as libiberty prints them.
#[test]
fn special_names_as_libiberty_prints_them() {
    for (mangled, filt) in [
        // Transaction clones, with parameters and qualifiers.
        (
            "_ZGTtNKSt11logic_error4whatEv",
            "transaction clone for std::logic_error::what() const",
        ),
        (
            "_ZGTtNSt11logic_errorC1EPKc",
            "transaction clone for std::logic_error::logic_error(char const*)",
        ),
        // A function type's typeinfo: a space before its parameters, a `const` one's `const` after.
        (
            "_ZTIFN4llvm5ErrorERNS_7jitlink9LinkGraphEE",
            "typeinfo for llvm::Error (llvm::jitlink::LinkGraph&)",
        ),
        (
            "_ZTSKFvRKN5clang4ento9CallEventERNS0_14CheckerContextEE",
            "typeinfo name for void (clang::ento::CallEvent const&, clang::ento::CheckerContext&) const",
        ),
        // `Si` and `Sd` simple, but for their constructors and where the class is spelt in the name.
        (
            "_ZTISi",
            "typeinfo for std::istream",
        ),
        (
            "_Z1fISdEvv",
            "f<std::iostream>",
        ),
        (
            "_Z1fISt6vectorISiSaISiEEEvv",
            "f<std::vector<std::istream, std::allocator<std::istream> > >",
        ),
        (
            "_Z1fISt13basic_istreamIcSt11char_traitsIcEEEvv",
            "f<std::basic_istream<char, std::char_traits<char> > >",
        ),
        (
            "_ZNSiC1Ev",
            "std::basic_istream<char, std::char_traits<char> >::basic_istream",
        ),
    ] {
        assert_eq!(demangle(mangled), filt, "{mangled}");
    }
}
