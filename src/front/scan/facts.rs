//! What `scan` records of a module: its scopes, and in each its markers, the frames around
//! them, its switches and label table, and the facts `check` decides on (marker shapes
//! misplaced, tests of constants, local bindings of the marker names). Facts only: no
//! diagnostic is made here.

use malachite_bigint::BigInt;
use ruff_text_size::TextRange;
use rustpython_compiler::ast::name::Name;

use super::LabelTable;

/// The names that make up gotopy's markers.
pub const MARKER_NAMES: [&str; 4] = ["goto", "label", "switch", "case"];

/// Decorators that ask for a function to be rewritten (SPEC section 2).
pub const DECORATOR_NAMES: [&str; 3] = ["goto", "with_goto", "switch"];

/// What the caller chose about which scopes are rewritten.
///
/// New choices may be added, so it is built from [`Options::new`] (the defaults) and its
/// setters rather than written out field by field:
///
/// ```
/// let options = gotopy::Options::new().all_scopes(true);
/// assert!(options.all_scopes);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Rewrite every scope that contains markers, module and class bodies included.
    /// Without it only functions decorated with `goto`, `with_goto` or `switch` are.
    pub all_scopes: bool,
    /// Also rewrite the function or class whose definition starts on this one-based line (its
    /// first decorator's line, or its `def`'s or `class`'s: CPython's `co_firstlineno`),
    /// decorated or not: the run-time decorator applied without `@`, as in `f = goto(f)`.
    pub scope_line: Option<usize>,
}

impl Options {
    /// The defaults: only decorated functions are rewritten.
    pub fn new() -> Options {
        Options::default()
    }

    /// Sets the field `all_scopes`.
    #[must_use]
    pub fn all_scopes(mut self, all_scopes: bool) -> Options {
        self.all_scopes = all_scopes;
        self
    }

    /// Sets the field `scope_line`.
    #[must_use]
    pub fn scope_line(mut self, line: Option<usize>) -> Options {
        self.scope_line = line;
        self
    }
}

macro_rules! id_type {
    ($($name:ident),*) => {$(
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub usize);
    )*};
}
id_type!(ScopeId, FrameId, MarkerId, SwitchId);

/// Everything `scan` found in one module. Scope 0 is the module body.
#[derive(Debug)]
pub struct Module {
    pub scopes: Vec<Scope>,
    /// The decorator the module's messages name: the first of `goto` and `with_goto` that
    /// an import binds (`with_goto` in a file written for the old libraries), else `goto`.
    pub decorator: &'static str,
    /// Whether an import binds [`Module::decorator`].
    #[cfg_attr(not(feature = "server"), allow(dead_code))] // What the language server reads.
    pub imports_decorator: bool,
}

impl Module {
    /// The innermost scope around `range`: the last in source order that holds it (nested
    /// scopes come after their parent), the module's when no function or class does.
    pub fn scope_around(&self, range: TextRange) -> &Scope {
        (self.scopes.iter())
            .rfind(|scope| scope.range.contains_range(range))
            .unwrap_or(&self.scopes[0])
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    Module,
    Class,
    Function,
}

/// One code object's worth of source: a module, class or function body.
#[derive(Debug)]
pub struct Scope {
    pub kind: ScopeKind,
    /// `__qualname__`-style: `f`, `C.m`, `outer.<locals>.inner`; `<module>` for the module.
    pub qualname: String,
    /// The name in the `def` or `class` header; empty at offset 0 for the module.
    pub name_range: TextRange,
    /// The whole definition, its decorators included; the whole text for the module.
    pub range: TextRange,
    /// Decorated with `goto`, `with_goto` or `switch`, or named by [`Options::scope_line`].
    pub decorated: bool,
    /// Whether gotopy rewrites this scope's code object.
    pub rewritten: bool,
    pub frames: Vec<Frame>,
    pub markers: Vec<Marker>,
    pub switches: Vec<Switch>,
    pub labels: LabelTable,
    /// Marker shapes used inside larger expressions, in source order.
    pub misplaced: Vec<Misplaced>,
    /// Local bindings of `goto`, `label`, `switch` or `case`, in source order.
    pub bindings: Vec<Binding>,
    /// Tests of constants whose value gotopy does not compute ([`Folding::Unknown`]), in
    /// source order.
    pub constant_tests: Vec<ConstantTest>,
}

/// A region of a scope's body that holds run-time state or unwinds, innermost last on a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub kind: FrameKind,
    /// The header that opens it (`for x in y`, `with a as b`, `except E as e`, `finally`).
    pub header: TextRange,
    pub parent: Option<FrameId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// A `for` body; `is_async` for `async for`.
    For { is_async: bool },
    /// The body of one context manager of a `with` statement.
    With { is_async: bool },
    /// An `except` handler body; `is_star` for `except*`.
    Except { is_star: bool },
    /// A `finally` body.
    Finally,
    /// The `try` body, handlers and `else` of a `try` statement that has a `finally`: not a
    /// frame in the SPEC's sense (it may be entered) but leaving it runs the finally body.
    TryFinally,
    /// The body of a `while switch` statement: not a frame, recorded so that the rewrite
    /// knows which switch a marker is in.
    SwitchBody(SwitchId),
}

impl FrameKind {
    /// Frames in the SPEC's sense: a goto may leave them but never enter them.
    pub fn is_frame(self) -> bool {
        !matches!(self, FrameKind::TryFinally | FrameKind::SwitchBody(_))
    }

    /// How diagnostics name it: "`for` body", "`except` handler", ...
    pub fn describe(self) -> &'static str {
        match self {
            FrameKind::For { is_async: false } => "`for` body",
            FrameKind::For { is_async: true } => "`async for` body",
            FrameKind::With { is_async: false } => "`with` body",
            FrameKind::With { is_async: true } => "`async with` body",
            FrameKind::Except { is_star: false } => "`except` handler",
            FrameKind::Except { is_star: true } => "`except*` handler",
            FrameKind::Finally => "`finally` body",
            FrameKind::TryFinally => "`try` body",
            FrameKind::SwitchBody(_) => "`while switch` body",
        }
    }
}

/// A marker statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub kind: MarkerKind,
    /// The whole statement.
    pub range: TextRange,
    /// The innermost frame around it, if any.
    pub frame: Option<FrameId>,
    /// It is the only statement of its block: removing it would leave the block empty.
    #[cfg_attr(not(feature = "server"), allow(dead_code))] // What the language server reads.
    pub alone: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkerKind {
    /// `label .name`
    Label { name: Name, name_range: TextRange },
    /// `goto .name`
    Goto { name: Name, name_range: TextRange },
    /// `goto *expr`
    ComputedGoto { target: TextRange },
    /// The header of `while switch *expr:`
    Switch(SwitchId),
    /// `case[v, ...]`, in the switch whose body holds it (none outside any switch).
    Case {
        switch: Option<SwitchId>,
        values: Vec<CaseValue>,
    },
    /// A statement that is meant as a marker but has no valid shape.
    Malformed { message: String, help: &'static str },
}

/// A `while switch *subject:` statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Switch {
    /// `while switch *subject`
    pub header: TextRange,
    pub subject: TextRange,
    /// The frame around the whole statement.
    pub frame: Option<FrameId>,
    /// `continue` statements that would continue the switch itself.
    pub continues: Vec<TextRange>,
    /// The `else` keyword of an `else:` clause.
    pub else_keyword: Option<TextRange>,
    /// The marker of its `while switch` header.
    pub marker: MarkerId,
    /// Its `case[...]` markers, in source order.
    pub cases: Vec<MarkerId>,
}

/// One value of a `case[...]` marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseValue {
    pub range: TextRange,
    pub value: CaseKey,
}

/// A case value as Python compares it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CaseKey {
    Int(BigInt),
    Str(String),
    Bytes(Vec<u8>),
    /// Anything but an integer, `str` or `bytes` literal.
    Invalid,
}

impl CaseKey {
    /// The kind as diagnostics name it; `None` for an invalid value.
    pub fn kind(&self) -> Option<&'static str> {
        match self {
            CaseKey::Int(_) => Some("int"),
            CaseKey::Str(_) => Some("str"),
            CaseKey::Bytes(_) => Some("bytes"),
            CaseKey::Invalid => None,
        }
    }
}

/// A marker shape (`goto .x`, `label .x`, `goto *x`, `switch *x`, `case[x]`) used inside a
/// larger expression instead of as a statement of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Misplaced {
    pub range: TextRange,
    pub name: &'static str,
    /// For `goto *a + b`, which Python reads as `(goto * a) + b`: the range of `a + b`, the
    /// target the user most likely meant.
    pub computed_target: Option<TextRange>,
}

/// The test of an `if`, `elif`, `while` or `assert` made of constants that a compiler may
/// compute though gotopy does not (`if 1 - 1:`, `while x or 1:`, `if __debug__:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConstantTest {
    pub test: TextRange,
    /// The code a compiler may drop as unreachable because of it: for an `if` or `elif`,
    /// from the test to the end of the statement (its body, or the clauses after it); for a
    /// `while` or an `assert`, from the test to the end of the scope (the loop may never
    /// end, the assertion always fail).
    pub region: TextRange,
}

/// A local binding of one of [`MARKER_NAMES`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    pub name: &'static str,
    pub range: TextRange,
}

impl Scope {
    pub fn marker(&self, id: MarkerId) -> &Marker {
        &self.markers[id.0]
    }

    pub fn frame(&self, id: FrameId) -> &Frame {
        &self.frames[id.0]
    }

    pub fn switch(&self, id: SwitchId) -> &Switch {
        &self.switches[id.0]
    }

    /// The values of a switch's cases, in source order, each with its case marker.
    pub fn case_values(&self, id: SwitchId) -> impl Iterator<Item = (&CaseValue, MarkerId)> {
        self.switch(id).cases.iter().flat_map(move |&case| {
            let values = match &self.marker(case).kind {
                MarkerKind::Case { values, .. } => values.as_slice(),
                _ => &[],
            };
            values.iter().map(move |value| (value, case))
        })
    }

    /// The frames around a place, outermost first.
    pub fn frame_path(&self, innermost: Option<FrameId>) -> Vec<FrameId> {
        let mut path = Vec::new();
        let mut next = innermost;
        while let Some(id) = next {
            path.push(id);
            next = self.frame(id).parent;
        }
        path.reverse();
        path
    }

    /// The frames a goto at `from` leaves on its way to label `name`, innermost first (`None`
    /// if the scope has no such label, which the checker rules out).
    pub fn frames_left(&self, from: Option<FrameId>, name: &str) -> Option<Vec<FrameId>> {
        let entry = self.labels.get(name)?;
        let from = self.frame_path(from);
        let to = self.frame_path(self.marker(entry.definition).frame);
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        Some(from.iter().skip(common).rev().copied().collect())
    }

    /// How diagnostics name the scope: "function `f`", "class `C`", "the module".
    pub fn describe(&self) -> String {
        match self.kind {
            ScopeKind::Module => "the module body".to_owned(),
            ScopeKind::Class => format!("class `{}`", self.qualname),
            ScopeKind::Function => format!("function `{}`", self.qualname),
        }
    }
}
