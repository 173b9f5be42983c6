//! For the unit tests of the backend: the interpreters of every version, as `tools/pythons`
//! sets them up, and code objects compiled by them.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use super::Version;

/// `(version, interpreter)` for every version, from `tools/pythons` (run once).
pub(crate) fn interpreters() -> &'static [(Version, PathBuf)] {
    static FOUND: OnceLock<Vec<(Version, PathBuf)>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let tool = concat!(env!("CARGO_MANIFEST_DIR"), "/tools/pythons");
        let output = Command::new(tool)
            .output()
            .unwrap_or_else(|error| panic!("cannot run tools/pythons: {error}"));
        assert!(
            output.status.success(),
            "tools/pythons failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let found: Vec<(Version, PathBuf)> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| {
                let (version, path) = line.split_once(' ')?;
                let (major, minor) = version.split_once('.')?;
                Some((
                    Version::new(major.parse().ok()?, minor.parse().ok()?)?,
                    PathBuf::from(path),
                ))
            })
            .collect();
        assert_eq!(found.len(), Version::ALL.len(), "tools/pythons: {found:?}");
        found
    })
}

/// What `compiled` prints of each code object: its tables and names, as `Code` holds them,
/// and `co_positions()`.
const DESCRIBE: &str = r#"
import json, sys, types
def walk(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from walk(c)
def constant(c):
    if c is None: return None
    if type(c) is int: return {"int": format(c, "x")}
    if type(c) is str: return {"str": c}
    if type(c) is bytes: return {"bytes": c.hex()}
    return {"other": True}
out = []
for code in walk(compile(sys.stdin.read(), "probe.py", "exec")):
    out.append(dict(
        qualname=code.co_qualname, code=code.co_code.hex(), exceptions=code.co_exceptiontable.hex(),
        locations=code.co_linetable.hex(), first_line=code.co_firstlineno, names=list(code.co_names),
        varnames=list(code.co_varnames), cellvars=list(code.co_cellvars), freevars=list(code.co_freevars),
        constants=[constant(c) for c in code.co_consts], flags=code.co_flags, argcount=code.co_argcount,
        kwonlyargcount=code.co_kwonlyargcount, stacksize=code.co_stacksize,
        positions=[[-1 if p is None else p for p in position] for position in code.co_positions()],
    ))
json.dump(out, sys.stdout)
"#;

/// A code object compiled by a version's interpreter: what the backend reads of it, and the
/// position of each code unit as `co_positions()` gives it.
pub(crate) struct Compiled {
    pub(crate) code: super::code::Code,
    pub(crate) positions: Vec<crate::tables::Position>,
}

/// Every code object of `source` as `version` compiles it, the module first, by qualified
/// name.
pub(crate) fn compiled(version: Version, source: &str) -> Vec<Compiled> {
    use std::io::Write;
    let (_, python) = interpreters()
        .iter()
        .find(|(found, _)| *found == version)
        .expect("every version has an interpreter");
    let mut child = Command::new(python)
        .args(["-c", DESCRIBE])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(source.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "CPython {version} cannot compile {source:?}"
    );
    let described: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).unwrap();
    described
        .iter()
        .map(|one| {
            let hex = |name: &str| -> Vec<u8> {
                let text = one[name].as_str().unwrap().as_bytes();
                text.chunks(2)
                    .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
                    .collect()
            };
            let strings =
                |name: &str| -> Vec<String> { serde_json::from_value(one[name].clone()).unwrap() };
            let number = |name: &str| one[name].as_u64().unwrap() as u32;
            let constants = one["constants"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    use super::code::Constant;
                    if c.is_null() {
                        Constant::None
                    } else if let Some(hex) = c["int"].as_str() {
                        Constant::Int(hex.to_owned())
                    } else if let Some(text) = c["str"].as_str() {
                        Constant::Str(text.to_owned())
                    } else {
                        Constant::Other
                    }
                })
                .collect();
            let mut code = super::code::Code {
                code: hex("code"),
                exceptions: hex("exceptions"),
                locations: hex("locations"),
                first_line: one["first_line"].as_i64().unwrap() as i32,
                names: strings("names"),
                constants,
                flags: number("flags"),
                argcount: number("argcount"),
                kwonlyargcount: number("kwonlyargcount"),
                stacksize: number("stacksize"),
                qualname: one["qualname"].as_str().unwrap().to_owned(),
                ..super::code::Code::default()
            };
            code.set_locals(
                strings("varnames"),
                strings("cellvars"),
                strings("freevars"),
            );
            let positions = serde_json::from_value(one["positions"].clone()).unwrap();
            Compiled { code, positions }
        })
        .collect()
}

/// The code object `qualname` of `source` as `version` compiles it.
pub(crate) fn function(version: Version, source: &str, qualname: &str) -> Compiled {
    compiled(version, source)
        .into_iter()
        .find(|found| found.code.qualname == qualname)
        .unwrap_or_else(|| panic!("no {qualname} in {source:?}"))
}
