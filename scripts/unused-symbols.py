#!/usr/bin/env python3
"""scripts/unused-symbols.py — symbols declared in Sources/ that no file in Sources/ references.

    swift build --build-tests && python3 scripts/unused-symbols.py   # reads .build/debug/index/store

Reads the compiler's index store (written by every debug build) through the toolchain's
libIndexStore. Prints NONE (no reference at all) or TESTONLY (only Tests/ or Examples/
reference it) with the declaration's place. Protocol witnesses and implicit declarations are
left out; parameters, extensions and accessors too. Review every line: Codable fields,
ArgumentParser's `validate`, GRDB callbacks and the app face (`R2UpKit.docc`) legitimately
have no caller in Sources/. A C header's records are rewritten only when a C file that
includes it is compiled again: `rm -rf .build/debug/index` for a fresh view.
"""
import collections, ctypes as C, os, shutil, sys

swift = shutil.which("swift") or sys.exit("swift is not on PATH")
lib = C.CDLL(os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(swift))), "lib", "libIndexStore.so"))
class Ref(C.Structure):
    _fields_ = [("data", C.c_char_p), ("length", C.c_size_t)]
def text(ref): return C.string_at(ref.data, ref.length).decode() if ref.data else ""
P = C.c_void_p
def fn(name, res, *args):
    f = getattr(lib, name); f.restype = res; f.argtypes = list(args); return f
UnitF, DepF, OccF = C.CFUNCTYPE(C.c_bool, P, Ref), C.CFUNCTYPE(C.c_bool, P, P), C.CFUNCTYPE(C.c_bool, P, P)
store_create = fn("indexstore_store_create", P, C.c_char_p, C.POINTER(P))
units_apply = fn("indexstore_store_units_apply_f", C.c_bool, P, C.c_uint, P, UnitF)
unit_reader = fn("indexstore_unit_reader_create", P, P, C.c_char_p, C.POINTER(P))
deps_apply = fn("indexstore_unit_reader_dependencies_apply_f", C.c_bool, P, P, DepF)
dep_kind = fn("indexstore_unit_dependency_get_kind", C.c_int, P)
dep_name = fn("indexstore_unit_dependency_get_name", Ref, P)
dep_path = fn("indexstore_unit_dependency_get_filepath", Ref, P)
record_reader = fn("indexstore_record_reader_create", P, P, C.c_char_p, C.POINTER(P))
occ_apply = fn("indexstore_record_reader_occurrences_apply_f", C.c_bool, P, P, OccF)
occ_symbol = fn("indexstore_occurrence_get_symbol", P, P)
occ_roles = fn("indexstore_occurrence_get_roles", C.c_uint64, P)
occ_line = fn("indexstore_occurrence_get_line_col", None, P, C.POINTER(C.c_uint), C.POINTER(C.c_uint))
sym_usr = fn("indexstore_symbol_get_usr", Ref, P)
sym_name = fn("indexstore_symbol_get_name", Ref, P)
sym_kind = fn("indexstore_symbol_get_kind", C.c_int, P)

DECL, DEF, REF, IMPLICIT, OVERRIDE = 1, 2, 4, 1 << 8, 1 << 11
SKIP_KINDS = {9, 23, 25}  # extension, deinit, parameter
root = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
error = P()
store = store_create(os.path.join(root, ".build/debug/index/store").encode(), C.byref(error))
if not store: sys.exit("no index store: run `swift build --build-tests` first")
units = []
units_apply(store, 0, None, UnitF(lambda _, name: units.append(text(name)) or True))
records = {}
def on_dep(_, dep):
    if dep_kind(dep) == 2: records[text(dep_name(dep))] = text(dep_path(dep))
    return True
on_dep_f = DepF(on_dep)
for unit in units:
    reader = unit_reader(store, unit.encode(), C.byref(error))
    if reader: deps_apply(reader, None, on_dep_f)
defs, refs, skip = {}, collections.defaultdict(set), set()
for record, path in records.items():
    if not path.startswith(root + "/"): continue
    rel = path[len(root) + 1:]
    def on_occ(_, occ):
        sym = occ_symbol(occ); usr = text(sym_usr(sym)); roles = occ_roles(occ)
        if roles & (DECL | DEF):
            if roles & (IMPLICIT | OVERRIDE): skip.add(usr)
            if rel.startswith("Sources/") and usr not in defs:
                line, col = C.c_uint(), C.c_uint(); occ_line(occ, C.byref(line), C.byref(col))
                defs[usr] = (rel, line.value, text(sym_name(sym)), sym_kind(sym))
        elif roles & REF:
            refs[usr].add("/".join(rel.split("/")[:2]))
        return True
    reader = record_reader(store, record.encode(), C.byref(error))
    if reader: occ_apply(reader, None, OccF(on_occ))
for usr, (rel, line, name, kind) in sorted(defs.items(), key=lambda item: item[1]):
    if usr in skip or kind in SKIP_KINDS or ":" in name.split("(")[0]: continue
    users = refs.get(usr, set())
    if any(u.startswith("Sources/") for u in users): continue
    print(f"{'TESTONLY' if users else 'NONE'}\t{rel}:{line}\t{name}\t{', '.join(sorted(users))}")
