//! Embedding CPython with gotopy: register gotopy's native module before the interpreter
//! starts, install gotopy once it runs, then run a script that imports a module using goto
//! (compiled by gotopy's import hook) and applies the run-time decorator to code it compiles
//! with `exec`. The CPython counterpart of `examples/embed.rs` (RustPython), with the same
//! module, `examples/embed/scheduler.py`.
//!
//! Run: `PYO3_PYTHON=python3.13 cargo run --manifest-path examples/embed_cpython/Cargo.toml`
//! (the interpreter's shared library on the loader's path).

use std::process::ExitCode;

use pyo3::prelude::*;
use pyo3::types::PyDict;

const SCRIPT: &std::ffi::CStr = c"
import sys
sys.path.insert(0, MODULES)
import scheduler
from goto import goto

print('first free 2-hour slot:', scheduler.first_free([1, 0, 1, 1, 0, 1, 1], 2))

# Code compiled without gotopy: the decorator rewrites it at run time.
source = '''
def collatz_steps(n):
    steps = 0
    label .again
    if n == 1:
        return steps
    n = n // 2 if n % 2 == 0 else 3 * n + 1
    steps += 1
    goto .again
'''
namespace = {}
exec(compile(source, '<user code>', 'exec'), namespace)
steps = goto(namespace['collatz_steps'])
print('collatz steps for 27:', steps(27))

try:
    exec(compile('def broken():\\n    goto .nowhere\\n', '<user code>', 'exec'), namespace)
    goto(namespace['broken'])
except SyntaxError as error:
    print('refused:', error.msg.split(':')[0], 'at line', error.lineno)
";

fn main() -> ExitCode {
    _gotopy::embed::register();
    Python::initialize();
    let modules = concat!(env!("CARGO_MANIFEST_DIR"), "/../embed");
    let ran = Python::attach(|py| -> PyResult<()> {
        _gotopy::embed::install(py)?;
        let globals = PyDict::new(py);
        globals.set_item("MODULES", modules)?;
        py.run(SCRIPT, Some(&globals), None)
    });
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            Python::attach(|py| error.print(py));
            ExitCode::FAILURE
        }
    }
}
