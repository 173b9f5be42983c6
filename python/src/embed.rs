//! gotopy in a Rust program that embeds CPython with PyO3, the way it adds any built-in
//! module: [`register`] before the interpreter starts puts gotopy's native module in
//! CPython's table of built-in modules; [`install`] once it runs makes the packages `gotopy`
//! and `goto` importable from their sources, which this crate carries (nothing is read from
//! or written to disk for them), and installs the import hook (`gotopy.install()`), so that
//! every module imported afterwards that has markers compiles through gotopy.
//!
//! ```no_run
//! use pyo3::prelude::*;
//!
//! gotopy_python::embed::register();
//! Python::initialize();
//! Python::attach(|py| -> PyResult<()> {
//!     gotopy_python::embed::install(py)?;
//!     py.run(c"from goto import goto, label", None, None)
//! })
//! .expect("gotopy is installed");
//! ```

use std::ffi::CStr;

use gotopy::cpython::package::MODULES;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A finder and loader for the package's modules (`SOURCES`, a dict the caller binds), put first on
/// `sys.meta_path`, with the built-in `_gotopy` as `gotopy._gotopy`; then the import hook,
/// whose cache names carry `REVISION` (the hook cannot digest files that are not there).
const INSTALL: &CStr = c"
import importlib.util
import sys


class EmbeddedGotopy:
    def __init__(self, sources):
        self.sources = sources

    def find_spec(self, name, path=None, target=None):
        if name not in self.sources:
            return None
        origin = f'<gotopy embedded: {name}>'
        return importlib.util.spec_from_loader(name, self, origin=origin, is_package=self.is_package(name))

    def is_package(self, name):
        return '.' not in name

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__spec__.name
        exec(compile(self.sources[name], module.__spec__.origin, 'exec', dont_inherit=True), module.__dict__)

    def get_source(self, name):
        return self.sources[name]


sys.modules['gotopy._gotopy'] = importlib.import_module('_gotopy')
sys.meta_path.insert(0, EmbeddedGotopy(SOURCES))
import gotopy._hook
gotopy._hook._REVISION = REVISION
gotopy.install()
";

/// Adds gotopy's native module to CPython's built-in modules. Call it before the
/// interpreter starts (`Python::initialize`, without PyO3's `auto-initialize`); it panics
/// if one already runs.
#[allow(unsafe_code)] // `append_to_inittab!` is PyO3's `unsafe` call of `PyImport_AppendInittab`, which it guards by checking that no interpreter runs yet.
pub fn register() {
    use crate::_gotopy;
    pyo3::append_to_inittab!(_gotopy);
}

/// Makes `gotopy` and `goto` importable and installs gotopy's import hook in the running
/// interpreter, which [`register`] prepared.
pub fn install(py: Python<'_>) -> PyResult<()> {
    let sources = PyDict::new(py);
    for (name, text) in MODULES {
        sources.set_item(name, text)?;
    }
    let globals = PyDict::new(py);
    globals.set_item("SOURCES", sources)?;
    globals.set_item("REVISION", revision())?;
    py.run(INSTALL, Some(&globals), None)
}

/// A digest of the sources and this crate's version, for the hook's cache names: another
/// gotopy never takes this one's cache files.
fn revision() -> String {
    // FNV-1a, 64 bits: stable across builds, which a cache name needs.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let version = env!("CARGO_PKG_VERSION");
    for text in MODULES
        .iter()
        .flat_map(|(name, text)| [*name, *text])
        .chain([version])
    {
        for byte in text.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("e{:011x}", hash >> 20)
}
