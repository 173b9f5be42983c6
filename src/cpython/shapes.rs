//! What gotopy knows of each CPython version's bytecode beyond its opcode table: which
//! opcodes end a block or jump backwards, how arguments name things, what each frame keeps
//! on the stack, where the compiler puts a `with` statement's exit, how it compares two
//! values. One place to look when CPython changes; every fact has a unit test that compiles
//! a snippet with that version's interpreter and finds it (`tools/pythons` gives them).
//!
//! Nothing here knows gotopy's plans or edits anything.

use std::sync::OnceLock;

use super::opcodes::{Opcodes, Version};

const UNCONDITIONAL: u8 = 1;
const TERMINAL: u8 = 2;
/// Encoded backwards (`END_ASYNC_FOR` from 3.14 too, though it is no jump).
const BACKWARD: u8 = 4;
/// Has a target but does not go there (`END_ASYNC_FOR`).
const NOT_CONTROL: u8 = 8;
/// Loads a variable by name, whatever its scope.
const NAME_LOAD: u8 = 16;

/// How an opcode's argument names a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Naming {
    None,
    /// An index into the fast locals, cells and free variables (`co_varnames`, then the
    /// cells that are not arguments, then `co_freevars`).
    Local,
    /// An index into `co_names`.
    Name,
    /// `LOAD_GLOBAL`: the index shifted left by one.
    Global,
    /// `LOAD_ATTR`: from 3.12 shifted left by one too.
    Attribute,
}

/// One version's shapes, with the opcode numbers the backend uses resolved.
#[derive(Debug)]
pub struct Shapes {
    /// The version.
    pub version: Version,
    /// Its opcode table.
    pub opcodes: &'static Opcodes,
    kinds: [u8; 256],
    naming: [Naming; 256],
    /// `EXTENDED_ARG`.
    pub extended_arg: u8,
    /// `JUMP_FORWARD`.
    pub jump_forward: u8,
    /// `JUMP_BACKWARD`.
    pub jump_backward: u8,
    /// `NOP`: where a marker was, it carries the marker's line (a line event).
    pub nop: u8,
    /// Whether the location table has one entry per run of instructions at one position
    /// (3.12 and later) or one per instruction (3.11).
    pub merged_location_runs: bool,
    /// Whether a `with` statement's exit carries its item's position (3.13 and later) or the
    /// statement's (3.11, 3.12 as released in 2023; its releases since mid-2024 carry the
    /// item's, which `lower::goto` finds when the statement's is not there).
    pub with_exit_at_item: bool,
    /// Whether `LOAD_FAST` may load a local without checking that it is bound (3.12 and
    /// later: the compiler uses it where its own flow graph proves the local bound, and
    /// `LOAD_FAST_CHECK` elsewhere; a goto adds paths that graph did not have).
    pub unchecked_local_loads: bool,
    /// The conditional jump taken when the value on top is true, forward: the only
    /// direction gotopy's searches jump in (3.11 names the direction).
    pub jump_if_true: u8,
    /// What follows a conditional jump where it does not jump (3.14 and later): `NOT_TAKEN`,
    /// which reports that branch to `sys.monitoring` (coverage.py's branch arcs).
    pub not_taken: Option<u8>,
    /// The stack slots a `for` loop's body runs above: its iterator, and from 3.14 the index
    /// or `NULL` beside it (what `POP_ITER` pops).
    pub for_slots: u32,
    /// The stack slots a `with` or `async with` body runs above: the bound `__exit__`, and
    /// from 3.14 its `self`.
    pub with_slots: u32,
    /// The argument `LOAD_COMMON_CONSTANT` (3.15) loads `None` with.
    pub common_none: Option<u32>,
    /// `BINARY_OP`'s argument for `*`.
    pub multiply: u32,
}

/// The argument of `BINARY_OP` for `*` (`NB_MULTIPLY`), the same on every version.
const NB_MULTIPLY: u32 = 5;

impl Shapes {
    /// The shapes of `version`.
    pub fn of(version: Version) -> &'static Shapes {
        static ALL: [OnceLock<Shapes>; Version::COUNT] =
            [const { OnceLock::new() }; Version::COUNT];
        ALL[version.index()].get_or_init(|| Shapes::new(version))
    }

    fn new(version: Version) -> Shapes {
        let opcodes = version.opcodes();
        let op = |name: &str| opcodes.op(name);
        // Every version has these; the opcode tables are the interpreters' own.
        let must =
            |name: &str| op(name).unwrap_or_else(|| panic!("CPython {version} has no {name}"));
        let mut kinds = [0u8; 256];
        let mut naming = [Naming::None; 256];
        for number in 0..=255u8 {
            let name = opcodes.name(number);
            if name.is_empty() {
                continue;
            }
            let kind = &mut kinds[usize::from(number)];
            if [
                "JUMP_FORWARD",
                "JUMP_BACKWARD",
                "JUMP_BACKWARD_NO_INTERRUPT",
            ]
            .contains(&name)
            {
                *kind |= UNCONDITIONAL;
            }
            if ["RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"].contains(&name) {
                *kind |= TERMINAL;
            }
            if name.contains("JUMP_BACKWARD") || name == "END_ASYNC_FOR" {
                *kind |= BACKWARD;
            }
            if name == "END_ASYNC_FOR" {
                *kind |= NOT_CONTROL;
            }
            if [
                "LOAD_FAST",
                "LOAD_FAST_CHECK",
                "LOAD_FAST_BORROW",
                "LOAD_GLOBAL",
                "LOAD_NAME",
                "LOAD_DEREF",
                "LOAD_CLASSDEREF",
                "LOAD_FROM_DICT_OR_GLOBALS",
                "LOAD_FROM_DICT_OR_DEREF",
            ]
            .contains(&name)
            {
                *kind |= NAME_LOAD;
            }
            naming[usize::from(number)] = if name == "LOAD_GLOBAL" {
                Naming::Global
            } else if name == "LOAD_ATTR" {
                Naming::Attribute
            } else if ["_DEREF", "_FAST", "_FAST_CHECK", "_FAST_BORROW"]
                .iter()
                .any(|suffix| name.ends_with(suffix))
                || name == "LOAD_CLASSDEREF"
            {
                Naming::Local
            } else if [
                "LOAD_NAME",
                "LOAD_FROM_DICT_OR_GLOBALS",
                "STORE_NAME",
                "DELETE_NAME",
                "STORE_GLOBAL",
                "DELETE_GLOBAL",
            ]
            .contains(&name)
            {
                Naming::Name
            } else {
                Naming::None
            };
        }
        let pop_iter = op("POP_ITER").and_then(|pop| opcodes.stack_effect(pop, 0, false));
        Shapes {
            version,
            opcodes,
            kinds,
            naming,
            extended_arg: must("EXTENDED_ARG"),
            jump_forward: must("JUMP_FORWARD"),
            jump_backward: must("JUMP_BACKWARD"),
            nop: must("NOP"),
            merged_location_runs: version.at_least(12),
            with_exit_at_item: version.at_least(13),
            unchecked_local_loads: version.at_least(12),
            jump_if_true: op("POP_JUMP_FORWARD_IF_TRUE")
                .unwrap_or_else(|| must("POP_JUMP_IF_TRUE")),
            not_taken: op("NOT_TAKEN"),
            for_slots: pop_iter.map_or(1, |effect| (-effect) as u32),
            with_slots: if version.at_least(14) { 2 } else { 1 },
            common_none: version.at_least(15).then_some(7),
            multiply: NB_MULTIPLY,
        }
    }

    fn kind(&self, op: u8) -> u8 {
        self.kinds[usize::from(op)]
    }

    /// Whether execution can go on to the next instruction after `op` (it does not return,
    /// raise or jump unconditionally).
    pub fn goes_on(&self, op: u8) -> bool {
        self.kind(op) & (UNCONDITIONAL | TERMINAL) == 0
    }

    /// Whether `op` jumps unconditionally.
    pub fn is_unconditional(&self, op: u8) -> bool {
        self.kind(op) & UNCONDITIONAL != 0
    }

    /// Whether `op` returns or raises.
    pub fn is_terminal(&self, op: u8) -> bool {
        self.kind(op) & TERMINAL != 0
    }

    /// Whether `op`'s relative argument counts backwards.
    pub fn is_backward(&self, op: u8) -> bool {
        self.kind(op) & BACKWARD != 0
    }

    /// Whether `op`'s target is where control goes when it jumps (not `END_ASYNC_FOR`'s).
    pub fn is_control(&self, op: u8) -> bool {
        self.kind(op) & NOT_CONTROL == 0
    }

    /// Whether `op` loads a variable by name (fast local, cell, global or name).
    pub fn is_name_load(&self, op: u8) -> bool {
        self.kind(op) & NAME_LOAD != 0
    }

    /// `dis.stack_effect`, and the compiler's count where it differs: `RETURN_GENERATOR`
    /// (3.11, 3.12) leaves the value that the `POP_TOP` after it drops when the generator
    /// first resumes.
    pub fn stack_effect(&self, op: u8, arg: u32, jump: bool) -> Option<i64> {
        let effect = self.opcodes.stack_effect(op, arg, jump)?;
        if effect == 0 && self.opcodes.name(op) == "RETURN_GENERATOR" {
            return Some(1);
        }
        Some(effect)
    }

    /// The opcode `name` of this version.
    pub fn op(&self, name: &str) -> Option<u8> {
        self.opcodes.op(name)
    }

    /// Whether `op` is the opcode `name`.
    pub fn is(&self, op: u8, name: &str) -> bool {
        self.opcodes.name(op) == name
    }

    /// Whether the conditional jump `op` pops its test and is taken when it is true
    /// (`Some(true)`), or false (`Some(false)`); `None` for anything else.
    pub fn jumps_if(&self, op: u8) -> Option<bool> {
        let name = self.opcodes.name(op);
        if !name.starts_with("POP_JUMP") {
            return None;
        }
        if name.ends_with("TRUE") {
            Some(true)
        } else if name.ends_with("FALSE") {
            Some(false)
        } else {
            None
        }
    }

    /// The variable an instruction names: a fast local, cell or free variable from `locals`
    /// (`co_varnames`, the cells that are not arguments, `co_freevars`), or a global,
    /// module-level or attribute name from `names` (`co_names`); `None` for an opcode that
    /// names none, or an argument outside the tables.
    pub fn name_of<'n>(
        &self,
        op: u8,
        arg: u32,
        names: &'n [String],
        locals: &'n [String],
    ) -> Option<&'n str> {
        let index = |arg: u32| usize::try_from(arg).ok();
        match self.naming[usize::from(op)] {
            Naming::None => None,
            Naming::Local => locals.get(index(arg)?).map(String::as_str),
            Naming::Name => names.get(index(arg)?).map(String::as_str),
            Naming::Global => names.get(index(arg >> 1)?).map(String::as_str),
            Naming::Attribute => {
                let arg = if self.version.at_least(12) {
                    arg >> 1
                } else {
                    arg
                };
                names.get(index(arg)?).map(String::as_str)
            }
        }
    }

    /// The stack slots the body of a frame of `kind` runs above, which a goto out of it
    /// drops: `for` (see `for_slots`), `async for` (its iterator), `with`/`async with` (see
    /// `with_slots`), `except` (the exception it replaced).
    pub fn slots(&self, kind: &str) -> u32 {
        match kind {
            "for" => self.for_slots,
            "with" | "async with" => self.with_slots,
            _ => 1,
        }
    }

    /// What compares the two values on top of the stack with `<` (`less`) or `==` and
    /// leaves what `jump_if_true` tests, as this version's compiler writes `if a < b:`:
    /// `COMPARE_OP` with this version's argument (3.12 adds a mask, 3.13 a bit that makes
    /// the result a `bool`).
    pub fn comparison(&self, less: bool) -> (u8, u32) {
        let compare = self.op("COMPARE_OP").unwrap_or_default();
        let arg = match (self.version.minor(), less) {
            (11, true) => 0,
            (11, false) => 2,
            (12, true) => 2,
            (12, false) => 40,
            (_, true) => 18,
            (_, false) => 88,
        };
        (compare, arg)
    }

    /// `raise NAME(f"{before}{value!r}{after}")` as this version's compiler writes it
    /// (opcode, argument), `name` the index of `NAME` in `co_names`, loaded by name
    /// (`LOAD_NAME`, as in a module or class body) or as a global, `before` and `after`
    /// indexes in `co_consts`, and `value` the load of the value.
    pub fn raise_formatted(
        &self,
        by_name: bool,
        name: u32,
        before: u32,
        value: (u8, u32),
        after: u32,
    ) -> Option<Vec<(u8, u32)>> {
        const REPR: u32 = 2;
        let op = |name: &str| self.op(name);
        let mut ops = if by_name {
            self.callable(&[(op("LOAD_NAME")?, name)])?
        } else {
            vec![(op("LOAD_GLOBAL")?, name << 1 | 1)]
        };
        ops.extend([(op("LOAD_CONST")?, before), value]);
        match op("FORMAT_VALUE") {
            Some(format_value) => ops.push((format_value, REPR)),
            None => ops.extend([(op("CONVERT_VALUE")?, REPR), (op("FORMAT_SIMPLE")?, 0)]),
        }
        ops.extend([(op("LOAD_CONST")?, after), (op("BUILD_STRING")?, 3)]);
        ops.extend(self.call(1)?);
        ops.push((op("RAISE_VARARGS")?, 1));
        Some(ops)
    }

    /// `load` (what pushes a callable) with the `NULL` of its call: under the callable up
    /// to 3.12, above it from 3.13.
    pub fn callable(&self, load: &[(u8, u32)]) -> Option<Vec<(u8, u32)>> {
        let push_null = (self.op("PUSH_NULL")?, 0);
        let mut ops = load.to_vec();
        if self.version.at_least(13) {
            ops.push(push_null);
        } else {
            ops.insert(0, push_null);
        }
        Some(ops)
    }

    /// The function made from the code object of constant `code` (no defaults, no
    /// closure), with the `NULL` of its call ([`Shapes::callable`]).
    pub fn function(&self, code: u32) -> Option<Vec<(u8, u32)>> {
        self.callable(&[
            (self.op("LOAD_CONST")?, code),
            (self.op("MAKE_FUNCTION")?, 0),
        ])
    }

    /// The call of what [`Shapes::callable`] pushed with the `argc` arguments above it
    /// (`PRECALL` first on 3.11).
    pub fn call(&self, argc: u32) -> Option<Vec<(u8, u32)>> {
        let mut ops = Vec::new();
        if let Some(precall) = self.op("PRECALL") {
            ops.push((precall, argc));
        }
        ops.push((self.op("CALL")?, argc));
        Some(ops)
    }

    /// `a[b]` of the two values on top of the stack: `BINARY_SUBSCR`, or from 3.14
    /// `BINARY_OP` with its argument for `[]`.
    pub fn subscript(&self) -> Option<(u8, u32)> {
        // `NB_SUBSCR`, 3.14's `dis._nb_ops`.
        const NB_SUBSCR: u32 = 26;
        match self.op("BINARY_SUBSCR") {
            Some(op) => Some((op, 0)),
            None => Some((self.op("BINARY_OP")?, NB_SUBSCR)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Shapes;
    use crate::cpython::Version;
    use crate::cpython::bytecode::{Body, Instr};
    use crate::cpython::code::Constant;
    use crate::cpython::testing::{Compiled, compiled, function};

    /// Each version's shapes, with `f` of `source` as it compiles it, decoded.
    fn each(source: &str, check: impl Fn(&'static Shapes, &Compiled, &Body)) {
        for version in Version::ALL {
            let shapes = Shapes::of(version);
            let found = function(version, source, "f");
            let body = Body::decode(shapes, found.code.raw()).unwrap();
            check(shapes, &found, &body);
        }
    }

    fn instrs(body: &Body) -> Vec<&Instr> {
        body.instrs().collect()
    }

    /// The index of the first instruction named `name`.
    fn first(shapes: &Shapes, body: &Body, name: &str) -> usize {
        instrs(body)
            .iter()
            .position(|instr| shapes.is(instr.op, name))
            .unwrap_or_else(|| panic!("CPython {}: no {name}", shapes.version))
    }

    #[test]
    fn slots_are_what_each_frame_keeps_under_its_body() {
        // Every statement starts on an empty stack, so the depth where a frame's body starts
        // is what the frame keeps there: what a goto out of it drops.
        let frames = [
            ("for", "def f(xs):\n    for x in xs:\n        probe()\n"),
            (
                "async for",
                "async def f(xs):\n    async for x in xs:\n        probe()\n",
            ),
            ("with", "def f(m):\n    with m as v:\n        probe()\n"),
            (
                "async with",
                "async def f(m):\n    async with m as v:\n        probe()\n",
            ),
            (
                "except",
                "def f():\n    try:\n        risky()\n    except E as e:\n        probe()\n",
            ),
        ];
        for (kind, source) in frames {
            each(source, |shapes, found, body| {
                let depths = body.depths(&[], None).unwrap().before;
                let at = instrs(body)
                    .iter()
                    .position(|instr| {
                        shapes.is_name_load(instr.op)
                            && shapes.name_of(
                                instr.op,
                                instr.arg,
                                &found.code.names,
                                &found.code.locals,
                            ) == Some("probe")
                    })
                    .unwrap();
                assert_eq!(
                    depths[at],
                    Some(i64::from(shapes.slots(kind))),
                    "CPython {}: {kind}",
                    shapes.version
                );
            });
        }
    }

    #[test]
    fn a_for_loop_keeps_its_slots_from_for_iter_on() {
        each(
            "def f(xs):\n    for x in xs:\n        pass\n",
            |shapes, _, body| {
                let depths = body.depths(&[], None).unwrap().before;
                let at = first(shapes, body, "FOR_ITER");
                assert_eq!(
                    depths[at],
                    Some(i64::from(shapes.for_slots)),
                    "CPython {}",
                    shapes.version
                );
            },
        );
    }

    #[test]
    fn a_with_exit_is_at_the_item_or_the_statement() {
        // The normal exit's call of `__exit__` is the last `CALL` (the exceptional exit calls
        // it with `WITH_EXCEPT_START`).
        each(
            "def f(m):\n    with m as v:\n        pass\n    return 1\n",
            |shapes, _, body| {
                let call = instrs(body)
                    .into_iter()
                    .rfind(|i| shapes.is(i.op, "CALL"))
                    .unwrap();
                if shapes.with_exit_at_item {
                    assert_eq!(call.position, [2, 2, 9, 10], "CPython {}", shapes.version);
                } else {
                    assert_eq!(
                        (call.position[0], call.position[2]),
                        (2, 4),
                        "CPython {}",
                        shapes.version
                    );
                }
            },
        );
    }

    #[test]
    fn names_are_what_each_instruction_names() {
        let source = "def f(o):\n    global g\n    o.plain\n    g = free\n";
        each(source, |shapes, found, body| {
            let code = &found.code;
            let named: Vec<&str> = instrs(body)
                .iter()
                .filter_map(|i| shapes.name_of(i.op, i.arg, &code.names, &code.locals))
                .collect();
            for name in ["plain", "g", "free"] {
                assert!(
                    named.contains(&name),
                    "CPython {}: {name} not in {named:?}",
                    shapes.version
                );
            }
        });
        // A free variable after the cells that are not arguments.
        let nested = "def f(a):\n    b = 1\n    def g():\n        return a + b\n    return g\n";
        for version in Version::ALL {
            let shapes = Shapes::of(version);
            let found = function(version, nested, "f.<locals>.g");
            let body = Body::decode(shapes, found.code.raw()).unwrap();
            let derefs: Vec<&str> = instrs(&body)
                .iter()
                .filter(|i| shapes.is(i.op, "LOAD_DEREF"))
                .filter_map(|i| shapes.name_of(i.op, i.arg, &found.code.names, &found.code.locals))
                .collect();
            assert_eq!(derefs, ["a", "b"], "CPython {version}");
        }
    }

    #[test]
    fn local_loads_are_unchecked_where_the_compiler_proves_them_bound() {
        let maybe = "def f(c):\n    if c:\n        x = 1\n    return x\n";
        let surely = "def f():\n    x = 1\n    return x\n";
        for version in Version::ALL {
            let shapes = Shapes::of(version);
            let last_load = |source: &str| {
                let found = function(version, source, "f");
                let body = Body::decode(shapes, found.code.raw()).unwrap();
                let load = instrs(&body)
                    .into_iter()
                    .rfind(|i| shapes.opcodes.name(i.op).starts_with("LOAD_FAST"))
                    .unwrap()
                    .op;
                shapes.opcodes.name(load)
            };
            assert_eq!(
                last_load(maybe) != last_load(surely),
                shapes.unchecked_local_loads,
                "CPython {version}"
            );
        }
    }

    #[test]
    fn a_raise_of_a_formatted_error_is_what_the_compiler_writes() {
        // In a function (`ValueError` a global) and in a module (by name), as each version
        // compiles it: every instruction but `RESUME`.
        let function_source = "def f(v):\n    raise ValueError(f'A{v!r}B')\n";
        let module_source = "raise ValueError(f'A{v!r}B')\n";
        for version in Version::ALL {
            let shapes = Shapes::of(version);
            for (source, by_name) in [(function_source, false), (module_source, true)] {
                let code = &compiled(version, source)[usize::from(!by_name)].code;
                let body = Body::decode(shapes, code.raw()).unwrap();
                let written: Vec<(u8, u32)> = instrs(&body)
                    .iter()
                    .map(|instr| (instr.op, instr.arg))
                    .filter(|&(op, _)| !shapes.is(op, "RESUME"))
                    .collect();
                let index = |text: &str| {
                    let at = code
                        .constants
                        .iter()
                        .position(|c| *c == Constant::Str(text.into()));
                    u32::try_from(at.unwrap()).unwrap()
                };
                let name = code.names.iter().position(|n| n == "ValueError").unwrap();
                let value = written[if by_name { 3 } else { 2 }];
                let ours = shapes
                    .raise_formatted(
                        by_name,
                        u32::try_from(name).unwrap(),
                        index("A"),
                        value,
                        index("B"),
                    )
                    .unwrap();
                assert_eq!(written, ours, "CPython {version}, {source:?}");
            }
        }
    }

    #[test]
    fn a_call_of_a_function_made_in_place_and_a_subscript_are_what_the_compiler_writes() {
        // The search function's call and the lookup of its number's frame: a function made
        // from a code constant, called with three arguments, its result subscripted.
        each(
            "def f():\n    return (lambda: 0)(1, 2, 3)[4]\n",
            |shapes, _, body| {
                let written: Vec<(u8, u32)> = (instrs(body).iter())
                    .map(|instr| (instr.op, instr.arg))
                    .filter(|&(op, _)| !shapes.is(op, "RESUME"))
                    .collect();
                let version = shapes.version;
                let make = (written.iter())
                    .position(|&(op, _)| shapes.is(op, "MAKE_FUNCTION"))
                    .unwrap();
                let made = shapes.function(written[make - 1].1).unwrap();
                assert_eq!(written[..made.len()], made, "CPython {version}");
                // Each argument is one load, then the call; the index is one load, then `[]`.
                let call = shapes.call(3).unwrap();
                let at = made.len() + 3;
                assert_eq!(written[at..at + call.len()], call, "CPython {version}");
                let subscript = shapes.subscript().unwrap();
                assert_eq!(written[at + call.len() + 1], subscript, "CPython {version}");
            },
        );
    }

    #[test]
    fn comparisons_are_what_the_compiler_writes_for_an_if() {
        for (less, operator) in [(true, "<"), (false, "==")] {
            let source = format!("def f(a, b):\n    if a {operator} b:\n        return 1\n");
            each(&source, |shapes, _, body| {
                let all = instrs(body);
                let at = first(shapes, body, "COMPARE_OP");
                assert_eq!(
                    (all[at].op, all[at].arg),
                    shapes.comparison(less),
                    "CPython {}",
                    shapes.version
                );
                // What follows tests the result as it is, as `jump_if_true` does.
                assert!(
                    shapes.jumps_if(all[at + 1].op).is_some(),
                    "CPython {}",
                    shapes.version
                );
            });
        }
        for version in Version::ALL {
            let shapes = Shapes::of(version);
            assert_eq!(shapes.jumps_if(shapes.jump_if_true), Some(true));
            assert!(!shapes.is_backward(shapes.jump_if_true));
        }
    }

    #[test]
    fn a_conditional_jump_is_followed_by_not_taken_from_3_14() {
        each(
            "def f(x):\n    if x:\n        return 1\n",
            |shapes, _, body| {
                let all = instrs(body);
                let at = all
                    .iter()
                    .position(|i| shapes.jumps_if(i.op).is_some())
                    .unwrap();
                let next = shapes.opcodes.name(all[at + 1].op);
                let expected = shapes.version.at_least(14);
                assert_eq!(next == "NOT_TAKEN", expected, "CPython {}", shapes.version);
                assert_eq!(
                    shapes.not_taken.is_some(),
                    expected,
                    "CPython {}",
                    shapes.version
                );
            },
        );
    }

    #[test]
    fn none_is_loaded_as_the_compiler_loads_it() {
        each(
            "def f(x):\n    x = None\n    return x\n",
            |shapes, found, body| {
                let load = instrs(body)[first(shapes, body, "STORE_FAST") - 1];
                let constants = &found.code.constants;
                assert!(
                    crate::cpython::lower::is_none(shapes, constants, load),
                    "CPython {}",
                    shapes.version
                );
            },
        );
    }

    #[test]
    fn generators_start_with_what_the_stack_effect_fix_says() {
        // `RETURN_GENERATOR`'s value is dropped by the `POP_TOP` after it: with the fix, the
        // depth analysis of a generator and a coroutine holds, and assembling them again gives
        // CPython's own stack size.
        for source in ["def f():\n    yield 1\n", "async def f():\n    await g()\n"] {
            each(source, |shapes, found, body| {
                let depths = body.depths(&[], None).unwrap();
                assert!(
                    depths.before.last().unwrap().is_some(),
                    "CPython {}",
                    shapes.version
                );
                let assembled = body.assemble().unwrap();
                assert_eq!(
                    assembled.depth.max(found.code.stacksize),
                    found.code.stacksize
                );
            });
        }
    }

    #[test]
    fn a_goto_star_is_a_multiplication() {
        each("def f(x):\n    goto * x\n", |shapes, _, body| {
            let multiply = instrs(body)[first(shapes, body, "BINARY_OP")].arg;
            assert_eq!(multiply, shapes.multiply, "CPython {}", shapes.version);
        });
    }

    #[test]
    fn decoding_and_assembling_reproduce_every_kind_of_jump() {
        // Loops both ways, `async for` (whose `END_ASYNC_FOR` names its loop from 3.14),
        // handlers, a long function whose jumps need `EXTENDED_ARG`.
        let long: String = (0..300)
            .map(|i| format!("        x{i} = x + {i}\n"))
            .collect();
        let source = format!(
            "async def f(xs, m):\n    async for x in xs:\n        try:\n            await m\n        \
             except E:\n            continue\n    while xs:\n        xs -= 1\n    if m:\n{long}    \
             return xs\n"
        );
        for version in Version::ALL {
            let shapes = Shapes::of(version);
            for found in compiled(version, &source) {
                let body = Body::decode(shapes, found.code.raw()).unwrap();
                // Each instruction has the position of its opcode's unit.
                let mut unit = 0;
                for instr in body.instrs() {
                    while shapes.is(found.code.code[2 * unit], "EXTENDED_ARG") {
                        unit += 1;
                    }
                    assert_eq!(instr.position, found.positions[unit], "CPython {version}");
                    unit += 1 + usize::from(shapes.opcodes.caches(instr.op));
                }
                let assembled = body.assemble().unwrap();
                assert_eq!(assembled.code, found.code.code, "CPython {version}");
                assert_eq!(
                    assembled.locations, found.code.locations,
                    "CPython {version}"
                );
                assert_eq!(
                    assembled.exceptions, found.code.exceptions,
                    "CPython {version}"
                );
                assert_eq!(
                    assembled.depth.max(found.code.stacksize),
                    found.code.stacksize
                );
            }
        }
    }
}
