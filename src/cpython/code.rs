//! A CPython code object as the backend reads it, and what a rewrite gives back: plain data
//! that a shell fills from a real code object (the extension through PyO3, `gotopy compile
//! --python` from what its script sends) and turns back into one (`code.replace`).

use super::bytecode::RawCode;

/// The file name the code of a [`Constant::SearchFunction`] has, which no tracer or
/// coverage tool confuses with the program's.
pub const SEARCH_FILE: &str = crate::plan::cases::SEARCH_FILE;

/// The name of the function a [`Constant::SearchFunction`]'s text defines.
pub const SEARCH_FUNCTION: &str = crate::plan::cases::SEARCH_FUNCTION;

/// A constant of `co_consts`, as far as the backend needs to tell them apart. Serialized
/// (JSON, `"none"`, `{"int": "-1f"}`, `{"bytes": [104, 105]}`...), it is how `gotopy compile
/// --python`'s stand-in of the native module and the binary exchange constants.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Constant {
    /// `None`.
    None,
    /// An `int` (not a `bool`), in lowercase hexadecimal with `-` before a negative one, as
    /// Python's `format(value, "x")` writes it.
    Int(String),
    /// A `str`.
    Str(String),
    /// A `bytes`.
    Bytes(Vec<u8>),
    /// Anything else (a `bool`, a float, a tuple, a nested code object, a `str` that is not
    /// valid Unicode): what the backend reads, never adds.
    Other,
    /// A `bool` the backend adds.
    Bool(bool),
    /// A tuple the backend adds.
    Tuple(Vec<Constant>),
    /// The code object of the function `search` in the module of this text (that of
    /// [`crate::cpython::plan::SearchPlan`]), compiled with the file name `<gotopy>` by the
    /// interpreter that runs the code: what the shell adds for it.
    SearchFunction(String),
}

impl Constant {
    /// The `int` `value`, written as [`Constant::Int`] holds it.
    pub fn int(value: i64) -> Constant {
        Constant::Int(if value < 0 {
            format!("-{:x}", value.unsigned_abs())
        } else {
            format!("{value:x}")
        })
    }
}

/// What the backend reads of one code object (not its nested ones).
#[derive(Clone, Debug, Default)]
pub struct Code {
    /// `co_code`.
    pub code: Vec<u8>,
    /// `co_exceptiontable`.
    pub exceptions: Vec<u8>,
    /// `co_linetable`.
    pub locations: Vec<u8>,
    /// `co_firstlineno`.
    pub first_line: i32,
    /// `co_names`.
    pub names: Vec<String>,
    /// The names of the fast locals, cells and free variables, by the index the `*_FAST` and
    /// `*_DEREF` opcodes use: `co_varnames`, then the cells that are not arguments, then
    /// `co_freevars`.
    pub locals: Vec<String>,
    /// `len(co_varnames)`: the fast locals, arguments first.
    pub varnames: usize,
    /// `len(co_freevars)`: the last of `locals`.
    pub freevars: usize,
    /// `co_consts`.
    pub constants: Vec<Constant>,
    /// `co_flags`.
    pub flags: u32,
    /// `co_argcount`.
    pub argcount: u32,
    /// `co_kwonlyargcount`.
    pub kwonlyargcount: u32,
    /// `co_stacksize`.
    pub stacksize: u32,
    /// `co_qualname`.
    pub qualname: String,
}

impl Code {
    /// Its three tables, for the decoder.
    pub fn raw(&self) -> RawCode<'_> {
        RawCode {
            code: &self.code,
            exceptions: &self.exceptions,
            locations: &self.locations,
            first_line: self.first_line,
        }
    }

    /// Sets `locals`, `varnames` and `freevars` from `co_varnames`, `co_cellvars` and
    /// `co_freevars`: the index `_varname_from_oparg` maps to each name is its place in
    /// `co_varnames`, then among the cells that are not also arguments, then among the free
    /// variables.
    pub fn set_locals(
        &mut self,
        varnames: Vec<String>,
        cellvars: Vec<String>,
        freevars: Vec<String>,
    ) {
        self.varnames = varnames.len();
        self.freevars = freevars.len();
        let mut locals = varnames;
        let count = locals.len();
        locals.extend(
            cellvars
                .into_iter()
                .filter(|cell| !locals[..count].contains(cell))
                .collect::<Vec<_>>(),
        );
        locals.extend(freevars);
        self.locals = locals;
    }

    /// The names bound in this code object: its fast locals and its cells.
    pub fn bound(&self) -> &[String] {
        &self.locals[..self.locals.len() - self.freevars]
    }
}

/// A rewritten code object: its new tables and stack size, and the constants and names to
/// append to `co_consts` and `co_names`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lowered {
    /// `co_code`.
    pub code: Vec<u8>,
    /// `co_linetable`.
    pub locations: Vec<u8>,
    /// `co_exceptiontable`.
    pub exceptions: Vec<u8>,
    /// `co_stacksize`: never below the compiler's.
    pub stacksize: u32,
    /// Appended to `co_consts`, in order.
    pub added: Vec<Constant>,
    /// Appended to `co_names`, in order.
    pub names: Vec<String>,
}

/// `co_flags` bits: the function takes `*args`, `**kwargs`.
pub(crate) const VARARGS: u32 = 0x04;
pub(crate) const VARKEYWORDS: u32 = 0x08;
