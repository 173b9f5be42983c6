#!/usr/bin/env python3
"""Check what `tools/dist --all` built, from the bytes of each file: a wheel's platform tag and
its native module, or a release binary of the `gotopy` program.

    tools/check_artifact.py --platform linux-aarch64 --forbid-path /home/me dist/gotopy-*.whl

Each artifact is read as the loader of its platform would read it, with a small reader of
ELF, PE and Mach-O headers written for this (the standard library only, so that it runs on any
Python 3.8 and later, on every platform's runner, with nothing to install):

- the machine code is for the platform's processor (a Mach-O fat binary: one slice for each
  processor of universal2, and no other);
- Linux: the C library symbols it links to need nothing newer than glibc 2.17
  (manylinux2014), it needs no shared library outside manylinux2014's list, and a program's
  loader is that processor's;
- Windows: x86-64 code, and every DLL it imports is one Windows itself has (no MinGW runtime
  DLL left to find on the user's machine); a program is a console program;
- macOS: each slice's minimum macOS version (LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX) is
  no newer than the one the wheel's tag or `--macos` promises, and an arm64 slice carries a
  code signature (macOS kills unsigned arm64 code);
- the native module of a wheel: abi3 (or, on Linux, the cp313t wheel's for free-threaded
  CPython 3.13), CPython's symbols left for the interpreter to supply at
  run time (ELF: undefined, and no libpython needed; PE: imported from `python3.dll`, the
  stable ABI's DLL, not `python3X.dll`; Mach-O: undefined with the dynamic-lookup ordinal,
  `-undefined dynamic_lookup`, and no Python framework or libpython loaded), and
  `PyInit__gotopy` exported;
- a program: stripped (no symbol table and no DWARF sections left);
- neither holds a path given with `--forbid-path` (the build machine's repository, cargo and
  rustup homes): a build path in a binary tells about the machine and breaks reproducibility.

Facts go to standard error, one line per artifact; a failed check prints what it found and
ends with status 1. Nothing is hard-coded about gotopy but the module's name, `_gotopy`.
"""

from __future__ import annotations

import argparse
import re
import struct
import sys
import zipfile
from pathlib import PurePosixPath

# --- the platforms ------------------------------------------------------------------------

# What each platform's artifacts must be: ELF e_machine, PE Machine, or Mach-O CPU types.
EM_X86_64, EM_AARCH64 = 62, 183
PE_AMD64 = 0x8664
CPU_X86_64, CPU_ARM64 = 0x01000007, 0x0100000C
MACHO_ARCH = {CPU_X86_64: "x86_64", CPU_ARM64: "arm64"}

PLATFORMS = {
    "linux-x86_64": {"format": "ELF", "machine": EM_X86_64, "wheel_tag": "manylinux_2_17_x86_64"},
    "linux-aarch64": {"format": "ELF", "machine": EM_AARCH64, "wheel_tag": "manylinux_2_17_aarch64"},
    "windows-x86_64": {"format": "PE", "machine": PE_AMD64, "wheel_tag": "win_amd64"},
    "macos-x86_64": {"format": "Mach-O", "archs": {"x86_64"}, "wheel_tag": "macosx_*_x86_64"},
    "macos-arm64": {"format": "Mach-O", "archs": {"arm64"}, "wheel_tag": "macosx_*_arm64"},
    "macos-universal2": {
        "format": "Mach-O",
        "archs": {"x86_64", "arm64"},
        "wheel_tag": "macosx_*_universal2",
    },
}

# manylinux2014's libraries (PEP 599), and its newest glibc symbol version.
MANYLINUX2014_LIBS = {
    "libgcc_s.so.1", "libstdc++.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libc.so.6",
    "libnsl.so.1", "libutil.so.1", "libpthread.so.0", "libresolv.so.2", "libX11.so.6",
    "libXext.so.6", "libXrender.so.1", "libICE.so.6", "libSM.so.6", "libGL.so.1",
    "libgobject-2.0.so.0", "libgthread-2.0.so.0", "libglib-2.0.so.0",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
}
GLIBC_MAX = (2, 17)
ELF_INTERP = {EM_X86_64: "/lib64/ld-linux-x86-64.so.2", EM_AARCH64: "/lib/ld-linux-aarch64.so.1"}

# The DLLs every Windows 10 and later has (lower case). A DLL outside this list would have to
# come with the program: a MinGW runtime DLL (libgcc_s_seh-1.dll, libwinpthread-1.dll) left
# dynamic by the linker is what this catches.
WINDOWS_DLLS = {
    "kernel32.dll", "ntdll.dll", "advapi32.dll", "ws2_32.dll", "userenv.dll", "bcrypt.dll",
    "bcryptprimitives.dll", "msvcrt.dll", "ucrtbase.dll", "shell32.dll", "ole32.dll",
    "oleaut32.dll", "user32.dll", "secur32.dll", "crypt32.dll", "iphlpapi.dll", "psapi.dll",
    "dbghelp.dll", "shlwapi.dll", "version.dll", "synchronization.dll", "netapi32.dll",
    "mswsock.dll", "ncrypt.dll", "powrprof.dll", "winmm.dll", "gdi32.dll", "comctl32.dll",
    "comdlg32.dll", "rpcrt4.dll", "setupapi.dll", "wldap32.dll", "dnsapi.dll", "ntoskrnl.exe",
}
MODULE = "_gotopy"


class Failed(Exception):
    """A check that the artifact does not pass; its message says what was found."""


# --- ELF ----------------------------------------------------------------------------------

def elf_facts(data: bytes) -> dict:
    if data[:4] != b"\x7fELF":
        raise Failed("not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise Failed("not a 64-bit little-endian ELF file")
    (e_type, machine, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum,
     shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", data, 16)
    sections = []
    for i in range(shnum):
        sh = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        sections.append({"name": sh[0], "type": sh[1], "offset": sh[4], "size": sh[5],
                         "link": sh[6], "entsize": sh[9]})
    names = sections[shstrndx] if sections else None

    def cstr(section, offset):
        start = section["offset"] + offset
        return data[start:data.index(b"\0", start)].decode("utf-8", "replace")

    for section in sections:
        section["name"] = cstr(names, section["name"]) if names else ""
    facts = {"machine": machine, "type": e_type, "needed": [], "versions": set(),
             "undefined": set(), "exported": set(), "interp": None,
             "symtab": any(s["type"] == 2 for s in sections),
             "debug": sorted(s["name"] for s in sections if s["name"].startswith(".debug"))}
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz, _, _ = struct.unpack_from(
            "<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 3:  # PT_INTERP
            facts["interp"] = data[p_offset:p_offset + p_filesz].rstrip(b"\0").decode()
    for section in sections:
        strtab = sections[section["link"]] if section["link"] < len(sections) else None
        if section["type"] == 6:  # SHT_DYNAMIC
            for off in range(section["offset"], section["offset"] + section["size"], 16):
                tag, value = struct.unpack_from("<qQ", data, off)
                if tag == 0:
                    break
                if tag == 1:  # DT_NEEDED
                    facts["needed"].append(cstr(strtab, value))
        elif section["type"] == 11:  # SHT_DYNSYM
            for off in range(section["offset"] + 24, section["offset"] + section["size"], 24):
                st_name, st_info, _, st_shndx, _, _ = struct.unpack_from("<IBBHQQ", data, off)
                name = cstr(strtab, st_name)
                if not name:
                    continue
                if st_shndx == 0:
                    facts["undefined"].add(name)
                elif st_info >> 4 in (1, 2):  # STB_GLOBAL, STB_WEAK
                    facts["exported"].add(name)
        elif section["type"] == 0x6FFFFFFE:  # SHT_GNU_verneed
            off = section["offset"]
            while True:
                _, cnt, _, aux, nxt = struct.unpack_from("<HHIII", data, off)
                a = off + aux
                for _ in range(cnt):
                    _, _, _, name, anext = struct.unpack_from("<IHHII", data, a)
                    facts["versions"].add(cstr(strtab, name))
                    a += anext
                if not nxt:
                    break
                off += nxt
    return facts


def check_elf(data: bytes, platform: dict, kind: str) -> str:
    facts = elf_facts(data)
    if facts["machine"] != platform["machine"]:
        raise Failed(f"ELF machine {facts['machine']}, expected {platform['machine']}")
    glibc = sorted(
        tuple(int(n) for n in v.split("_", 1)[1].split("."))
        for v in facts["versions"] if re.fullmatch(r"GLIBC_\d+(\.\d+)*", v))
    if not glibc:
        raise Failed("no glibc symbol version: not linked against glibc")
    if glibc[-1] > GLIBC_MAX:
        newer = sorted(v for v in facts["versions"] if v.startswith("GLIBC_")
                       and tuple(int(n) for n in v[6:].split(".")) > GLIBC_MAX)
        raise Failed(f"needs glibc {'.'.join(map(str, glibc[-1]))} ({', '.join(newer)}); "
                     f"manylinux2014 is glibc {'.'.join(map(str, GLIBC_MAX))}")
    outside = [lib for lib in facts["needed"] if lib not in MANYLINUX2014_LIBS]
    if outside:
        raise Failed(f"needs shared libraries outside manylinux2014: {', '.join(outside)}")
    said = [f"ELF {'x86-64' if facts['machine'] == EM_X86_64 else 'aarch64'}",
            f"glibc {'.'.join(map(str, glibc[-1]))}", f"needs {', '.join(facts['needed'])}"]
    if kind == "extension":
        if any("python" in lib for lib in facts["needed"]):
            raise Failed(f"links libpython ({facts['needed']}): CPython's symbols must be "
                         "left to the interpreter")
        python = sorted(s for s in facts["undefined"] if s.startswith(("Py", "_Py")))
        if not python:
            raise Failed("no undefined Py* symbol: CPython's API is not left to the interpreter")
        init = f"PyInit_{MODULE}"
        if init not in facts["exported"]:
            raise Failed(f"does not export {init}")
        said.append(f"{len(python)} Py* symbols from the interpreter")
    else:
        if facts["interp"] != ELF_INTERP[facts["machine"]]:
            raise Failed(f"loader {facts['interp']}, expected {ELF_INTERP[facts['machine']]}")
        if facts["symtab"] or facts["debug"]:
            raise Failed(f"not stripped: {'.symtab ' if facts['symtab'] else ''}"
                         f"{' '.join(facts['debug'])}")
        said.append("stripped")
    return ", ".join(said)


# --- PE -----------------------------------------------------------------------------------

def pe_facts(data: bytes) -> dict:
    if data[:2] != b"MZ":
        raise Failed("not a PE file (no MZ header)")
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    if data[pe:pe + 4] != b"PE\0\0":
        raise Failed("not a PE file (no PE signature)")
    machine, nsections, _, symptr, nsyms, optsize, characteristics = struct.unpack_from(
        "<HHIIIHH", data, pe + 4)
    opt = pe + 24
    magic = struct.unpack_from("<H", data, opt)[0]
    if magic != 0x20B:
        raise Failed(f"optional header magic {magic:#x}, not PE32+")
    subsystem = struct.unpack_from("<H", data, opt + 68)[0]
    ndirs = struct.unpack_from("<I", data, opt + 108)[0]
    dirs = [struct.unpack_from("<II", data, opt + 112 + 8 * i) for i in range(ndirs)]
    sections = []
    for i in range(nsections):
        name, vsize, vaddr, rawsize, rawptr = struct.unpack_from(
            "<8sIIII", data, opt + optsize + 40 * i)
        sections.append((name.rstrip(b"\0").decode("ascii", "replace"), vaddr,
                         max(vsize, rawsize), rawptr))

    def offset(rva):
        for _, vaddr, size, rawptr in sections:
            if vaddr <= rva < vaddr + size:
                return rva - vaddr + rawptr
        raise Failed(f"RVA {rva:#x} is in no section")

    def cstr(rva):
        start = offset(rva)
        return data[start:data.index(b"\0", start)].decode("ascii", "replace")

    imports, exports = [], set()
    if ndirs > 1 and dirs[1][0]:
        off = offset(dirs[1][0])
        while True:
            _, _, _, name, first = struct.unpack_from("<IIIII", data, off)
            if not name and not first:
                break
            imports.append(cstr(name))
            off += 20
    if ndirs > 0 and dirs[0][0]:
        (_, _, _, _, _, _, _, nnames, _, names, _) = struct.unpack_from(
            "<IIHHIIIIIII", data, offset(dirs[0][0]))
        for i in range(nnames):
            exports.add(cstr(struct.unpack_from("<I", data, offset(names) + 4 * i)[0]))
    return {"machine": machine, "dll": bool(characteristics & 0x2000), "subsystem": subsystem,
            "imports": imports, "exports": exports, "symbols": symptr != 0 or nsyms != 0,
            "sections": [s[0] for s in sections]}


def check_pe(data: bytes, platform: dict, kind: str) -> str:
    facts = pe_facts(data)
    if facts["machine"] != platform["machine"]:
        raise Failed(f"PE machine {facts['machine']:#x}, expected {platform['machine']:#x}")
    dlls = [d.lower() for d in facts["imports"]]
    said = ["PE x86-64"]
    if kind == "extension":
        if not facts["dll"]:
            raise Failed("not a DLL")
        pythons = [d for d in dlls if re.fullmatch(r"python3\d*\.dll", d)]
        if pythons != ["python3.dll"]:
            raise Failed(f"imports {pythons or 'no Python DLL'}: an abi3 module imports "
                         "python3.dll alone, the stable ABI's")
        init = f"PyInit_{MODULE}"
        if init not in facts["exports"]:
            raise Failed(f"does not export {init}")
        dlls.remove("python3.dll")
        # Built by MSVC, a module needs its C runtime, which CPython for Windows ships.
        dlls = [d for d in dlls if d not in ("vcruntime140.dll", "vcruntime140_1.dll")]
        said.append("CPython from python3.dll")
    else:
        if facts["dll"] or facts["subsystem"] != 3:
            raise Failed(f"not a console program (DLL: {facts['dll']}, subsystem "
                         f"{facts['subsystem']})")
        debug = [s for s in facts["sections"] if s.startswith((".debug", "/"))]
        if facts["symbols"] or debug:
            raise Failed(f"not stripped: COFF symbols {facts['symbols']}, sections {debug}")
        said.append("console, stripped")
    foreign = [d for d in dlls if d not in WINDOWS_DLLS and not d.startswith("api-ms-win-")]
    if foreign:
        raise Failed(f"imports DLLs Windows does not have: {', '.join(foreign)}")
    said.append(f"imports {', '.join(sorted(set(dlls)))}")
    return ", ".join(said)


# --- Mach-O -------------------------------------------------------------------------------

def macho_slices(data: bytes) -> list:
    """(arch name, bytes) of each slice of a fat or thin Mach-O file."""
    magic = struct.unpack_from(">I", data)[0]
    if magic == 0xCAFEBABE:
        count = struct.unpack_from(">I", data, 4)[0]
        slices = []
        for i in range(count):
            cputype, _, off, size, _ = struct.unpack_from(">iiIII", data, 8 + 20 * i)
            slices.append((MACHO_ARCH.get(cputype & 0xFFFFFFFF, hex(cputype)),
                           data[off:off + size]))
        return slices
    if struct.unpack_from("<I", data)[0] == 0xFEEDFACF:
        cputype = struct.unpack_from("<I", data, 4)[0]
        return [(MACHO_ARCH.get(cputype, hex(cputype)), data)]
    raise Failed("not a Mach-O file")


def version(v: int) -> tuple:
    return (v >> 16, (v >> 8) & 0xFF)


def macho_facts(data: bytes) -> dict:
    magic, _, _, filetype, ncmds, _, _ = struct.unpack_from("<IiiIIII", data)
    if magic != 0xFEEDFACF:
        raise Failed("a slice is not a 64-bit Mach-O image")
    facts = {"filetype": filetype, "minos": None, "dylibs": [], "signed": False,
             "undefined": {}, "id": None, "rpaths": [], "debug": False, "symbols": 0}
    off = 32
    symtab = None
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, off)
        if cmd == 0x32:  # LC_BUILD_VERSION
            facts["minos"] = version(struct.unpack_from("<I", data, off + 12)[0])
        elif cmd == 0x24:  # LC_VERSION_MIN_MACOSX
            facts["minos"] = version(struct.unpack_from("<I", data, off + 8)[0])
        elif cmd in (0xC, 0x80000018, 0x8000001F, 0x20, 0x80000023, 0xD, 0x8000001C):
            at = struct.unpack_from("<I", data, off + 8)[0]
            name = data[off + at:off + size].split(b"\0")[0].decode("utf-8", "replace")
            key = {0xD: "id", 0x8000001C: "rpaths"}.get(cmd, "dylibs")
            if key == "id":
                facts["id"] = name
            else:
                facts[key].append(name)
        elif cmd == 0x1D:  # LC_CODE_SIGNATURE
            facts["signed"] = True
        elif cmd in (0x22, 0x80000022):  # LC_DYLD_INFO(_ONLY): what dyld binds, and to what
            offsets = struct.unpack_from("<10I", data, off + 8)
            facts["bound"] = {}
            for start, length in zip(offsets[2:8:2], offsets[3:8:2]):  # bind, weak, lazy
                facts["bound"].update(bind_ordinals(data[start:start + length]))
        elif cmd == 0x2:  # LC_SYMTAB
            symtab = struct.unpack_from("<IIII", data, off + 8)
        elif cmd == 0x19:  # LC_SEGMENT_64: a __DWARF segment is debug information
            if data[off + 8:off + 24].rstrip(b"\0") == b"__DWARF":
                facts["debug"] = True
        off += size
    if symtab:
        symoff, nsyms, stroff, _ = symtab
        for i in range(nsyms):
            strx, n_type, _, n_desc, _ = struct.unpack_from("<IBBHQ", data, symoff + 16 * i)
            name = data[stroff + strx:data.index(b"\0", stroff + strx)].decode("utf-8",
                                                                             "replace")
            if n_type & 0xE0:  # a stab: debug map entries (N_OSO names object files)
                facts["debug"] = True
            elif n_type & 0x0E == 0 and n_type & 1:  # N_UNDF, N_EXT
                facts["undefined"][name] = n_desc >> 8
            else:
                facts["symbols"] += 1
    return facts


def bind_ordinals(opcodes: bytes) -> dict:
    """{symbol: library ordinal} from a stream of dyld's bind opcodes (mach-o/loader.h): the
    special ordinals as a byte, 0xFE for a flat lookup at run time (-undefined
    dynamic_lookup), as the symbol table's n_desc writes them."""
    def uleb(at: int) -> int:
        value = shift = 0
        while True:
            byte = opcodes[at[0]]
            at[0] += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    found, ordinal, name, at = {}, 0, "", [0]
    while at[0] < len(opcodes):
        byte = opcodes[at[0]]
        at[0] += 1
        opcode, immediate = byte & 0xF0, byte & 0x0F
        if opcode == 0x10:  # SET_DYLIB_ORDINAL_IMM
            ordinal = immediate
        elif opcode == 0x20:  # SET_DYLIB_ORDINAL_ULEB
            ordinal = uleb(at)
        elif opcode == 0x30:  # SET_DYLIB_SPECIAL_IMM: 0, or -1, -2, -3 as a byte
            ordinal = (0xF0 | immediate) if immediate else 0
        elif opcode == 0x40:  # SET_SYMBOL_TRAILING_FLAGS_IMM, then the name
            end = opcodes.index(b"\0", at[0])
            name = opcodes[at[0]:end].decode("utf-8", "replace")
            at[0] = end + 1
        elif opcode in (0x60, 0x70, 0x80, 0xA0):  # an addend, a segment's offset, an address
            uleb(at)
        elif opcode == 0xC0:  # DO_BIND_ULEB_TIMES_SKIPPING_ULEB
            uleb(at)
            uleb(at)
        if opcode in (0x90, 0xA0, 0xB0, 0xC0):  # a bind of the current symbol
            found[name] = ordinal
    return found


def check_macho(data: bytes, platform: dict, kind: str, macos: tuple | None) -> str:
    slices = macho_slices(data)
    archs = [arch for arch, _ in slices]
    if sorted(archs) != sorted(platform["archs"]):
        raise Failed(f"Mach-O slices {archs}, expected {sorted(platform['archs'])}")
    said = [f"Mach-O {'+'.join(archs)}"]
    for arch, body in slices:
        facts = macho_facts(body)
        if facts["minos"] is None:
            raise Failed(f"{arch}: no minimum macOS version")
        promised = (macos or {}).get(arch, (macos or {}).get("*"))
        if macos is not None and promised is None:
            raise Failed(f"{arch}: no platform tag names this architecture")
        if promised and facts["minos"] > promised:
            raise Failed(f"{arch}: needs macOS {'.'.join(map(str, facts['minos']))}, newer "
                         f"than the {'.'.join(map(str, promised))} promised")
        if arch == "arm64" and not facts["signed"]:
            raise Failed("arm64: no code signature (macOS refuses to run unsigned arm64 code)")
        if any("python" in lib.lower() for lib in facts["dylibs"]):
            raise Failed(f"{arch}: loads {facts['dylibs']}: CPython's symbols must be left "
                         "to the interpreter")
        if kind == "extension":
            if facts["filetype"] not in (6, 8):  # MH_DYLIB, MH_BUNDLE
                raise Failed(f"{arch}: Mach-O file type {facts['filetype']}, not a library")
            # What dyld binds, where the image says (LC_DYLD_INFO); the symbol table's own
            # ordinals otherwise (zig writes 0 there, ld64 the one dyld uses).
            ordinals = facts.get("bound") or facts["undefined"]
            python = {n: o for n, o in ordinals.items() if n.startswith(("_Py", "__Py"))}
            if not python:
                raise Failed(f"{arch}: no undefined _Py* symbol")
            bound = sorted(n for n, ordinal in python.items() if ordinal != 0xFE)
            if bound:
                raise Failed(f"{arch}: {len(bound)} of CPython's symbols are bound to a "
                             f"library, not looked up at run time (-undefined "
                             f"dynamic_lookup): {', '.join(bound[:5])}")
            if facts["id"] and facts["id"].startswith("/"):
                raise Failed(f"{arch}: install name {facts['id']} is a build path")
        else:
            if facts["filetype"] != 2:  # MH_EXECUTE
                raise Failed(f"{arch}: Mach-O file type {facts['filetype']}, not a program")
            if facts["debug"]:
                raise Failed(f"{arch}: not stripped (debug map or __DWARF)")
        said.append(f"{arch} macOS {'.'.join(map(str, facts['minos']))}"
                    f"{' signed' if facts['signed'] else ''}"
                    f"{' ' + str(len(python)) + ' _Py* looked up at run time' if kind == 'extension' else ''}")
    return ", ".join(said)


# --- artifacts ----------------------------------------------------------------------------

def check_paths(data: bytes, forbidden: list) -> None:
    """A forbidden path counts as a directory of a path written in the data: followed by a
    separator (the home /root is no match for a source's arithmetic/root.rs)."""
    for path in forbidden:
        found = [m.start() for m in re.finditer(re.escape(path.rstrip("/\\").encode()) + rb"[/\\]", data)]
        if found:
            at = found[0]
            start = data.rfind(b"\0", max(0, at - 200), at) + 1
            shown = data[start:data.find(b"\0", at, at + 200)][:160]
            raise Failed(f"holds the build path {path} ({len(found)} times), e.g. "
                         f"{shown.decode('utf-8', 'replace')!r}")


def check_binary(data: bytes, name: str, platform: dict, kind: str, forbidden: list,
                 macos=None) -> str:
    check_paths(data, forbidden)
    if platform["format"] == "ELF":
        return check_elf(data, platform, kind)
    if platform["format"] == "PE":
        return check_pe(data, platform, kind)
    return check_macho(data, platform, kind, macos)


def wheel_macos(tags: list) -> dict:
    """The macOS version each architecture's tag promises: macosx_10_12_x86_64 says 10.12
    for x86_64; universal2 holds for both."""
    promised = {}
    for tag in tags:
        m = re.fullmatch(r"macosx_(\d+)_(\d+)_(\w+)", tag)
        if m:
            arch = {"universal2": "*", "intel": "x86_64"}.get(m[3], m[3])
            promised[arch] = min(promised.get(arch, (99, 0)), (int(m[1]), int(m[2])))
    return promised


def check_wheel(path: str, platform_name: str, forbidden: list) -> str:
    platform = PLATFORMS[platform_name]
    name = PurePosixPath(path).name
    parts = name[:-4].split("-")
    if len(parts) != 5:
        raise Failed(f"{name}: not a wheel name (NAME-VERSION-PY-ABI-PLATFORM.whl)")
    _, _, python, abi, tags = parts
    # The abi3 wheel, or (Linux) the version-specific one for free-threaded CPython 3.13.
    if (python, abi) == ("cp311", "abi3"):
        suffix = ".pyd" if platform["format"] == "PE" else ".abi3.so"
    elif (python, abi) == ("cp313", "cp313t") and platform["format"] == "ELF":
        suffix = f".cpython-313t-{platform_name.split('-')[1]}-linux-gnu.so"
    else:
        raise Failed(f"tagged {python}-{abi}, expected cp311-abi3 (or cp313-cp313t on Linux)")
    tags = tags.split(".")
    if not any(PurePosixPath(t).match(platform["wheel_tag"]) for t in tags):
        raise Failed(f"platform tags {tags}, none {platform['wheel_tag']}")
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
        meta = [n for n in names if n.endswith(".dist-info/WHEEL")]
        if len(meta) != 1:
            raise Failed("no .dist-info/WHEEL")
        declared = {line.split(":", 1)[1].strip()
                    for line in wheel.read(meta[0]).decode().splitlines()
                    if line.startswith("Tag:")}
        expected = {f"{python}-{abi}-{t}" for t in tags}
        if declared != expected:
            raise Failed(f"WHEEL's tags {sorted(declared)} differ from the name's "
                         f"{sorted(expected)}")
        modules = [n for n in names if re.fullmatch(rf"gotopy/{MODULE}[^/]*\.(so|pyd)", n)]
        if modules != [f"gotopy/{MODULE}{suffix}"]:
            raise Failed(f"native modules {modules}, expected gotopy/{MODULE}{suffix}")
        data = wheel.read(modules[0])
    facts = check_binary(data, modules[0], platform, "extension", forbidden,
                         wheel_macos(tags) if platform["format"] == "Mach-O" else None)
    return f"{'.'.join(tags)}; {modules[0]} ({len(data):,} bytes): {facts}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--platform", required=True, choices=sorted(PLATFORMS))
    parser.add_argument("--forbid-path", action="append", default=[], metavar="PATH",
                        help="fail if an artifact holds this string (a build path)")
    parser.add_argument("--macos", action="append", default=[], metavar="[ARCH=]X.Y",
                        help="the newest minimum macOS version a program may need (for "
                        "one architecture's slice: arm64=11.0)")
    parser.add_argument("artifacts", nargs="+", metavar="ARTIFACT",
                        help="a wheel (.whl), or a release binary of the program")
    args = parser.parse_args(argv)
    forbidden = [p for p in args.forbid_path if len(p) > 1]
    failed = False
    for path in args.artifacts:
        try:
            if path.endswith(".whl"):
                said = check_wheel(path, args.platform, forbidden)
            else:
                with open(path, "rb") as f:
                    data = f.read()
                macos = None
                for promise in args.macos:
                    arch, _, ver = promise.rpartition("=")
                    macos = macos or {}
                    macos[arch or "*"] = tuple(int(n) for n in ver.split("."))
                said = check_binary(data, path, PLATFORMS[args.platform], "program",
                                    forbidden, macos)
            print(f"check_artifact: {PurePosixPath(path).name}: {said}", file=sys.stderr)
        except Failed as error:
            print(f"check_artifact: {path}: {error}", file=sys.stderr)
            failed = True
        except (struct.error, ValueError, IndexError, zipfile.BadZipFile) as error:
            print(f"check_artifact: {path}: unreadable ({error})", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
