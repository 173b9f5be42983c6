//! What both bytecode layers name places by: a [`Label`], a position in an instruction list
//! that jumps and handlers name instead of an offset, and a [`Handler`], an entry of the
//! exception table by label. CPython 3.11+ and RustPython 0.5 share the table's format
//! (`crate::tables`), and with it what an entry holds; each backend's instruction list
//! (`rustpython::bytecode`, `cpython::bytecode`) is built on these two.

/// A position in an instruction list that jumps and handlers can name: the instruction
/// after it. Only an identity: where it is placed in the list is its position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(pub u32);

/// The exception handler that covers an instruction (an entry of the exception table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handler {
    /// Where the handler's code starts.
    pub target: Label,
    /// The stack depth the handler unwinds to before pushing the exception.
    pub depth: u32,
    /// Whether the handler also receives the offset of the raising instruction.
    pub lasti: bool,
}

impl Handler {
    /// How many values the handler pushes on the stack it unwound: the exception, and the
    /// offset of the raising instruction when it asks for it.
    pub fn pushes(self) -> u32 {
        1 + u32::from(self.lasti)
    }

    /// The stack depth its code starts with.
    pub fn entry_depth(self) -> u32 {
        self.depth + self.pushes()
    }

    /// Whether an instruction that runs with `depth` values on the stack can reach this
    /// handler: one deeper than the stack cannot unwind to its depth. RustPython's code
    /// generator lets the cleanup handler of a `with` or `except` cover some instructions
    /// after the stack has shrunk below the handler's depth. Most never raise (the `except`
    /// cleanup's own); the code after a `with` whose body never finishes normally can, and
    /// RustPython's VM then panics, so its rewrites give those instructions the enclosing
    /// handler (`rustpython::bytecode::Body::repair_handlers`). Anywhere else such a handler
    /// is no edge of theirs.
    pub fn reached_at(self, depth: usize) -> bool {
        self.depth as usize <= depth
    }
}
