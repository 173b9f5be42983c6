//! The patterns RustPython 0.5.0's code generator emits that gotopy recognises, and the
//! operand encodings it relies on: one place to look when RustPython is upgraded.
//!
//! Everything here reads an instruction list ([`Body`] or a run of its [`Item`]s) and says
//! whether a shape is there; nothing edits. The compile path finds its sites by source span
//! (a marker, a guard, a trampoline's test and tail each carry a span no real node has), the
//! run-time decorator by names alone (`goto`, `label`). The cleanup a goto copies is found
//! here too: a `with` statement's exit, an `except ... as name` handler's unbinding, the
//! handler block an awaited exit jumps back from. Each shape has a unit test that compiles
//! a snippet and finds it (and, where a near miss exists, does not find that).
//!
//! This module knows RustPython's bytecode conventions, not gotopy's plans: which scope a
//! span belongs to or what a site becomes is the rewrite's business.

use rustpython_compiler::CodeObject;
use rustpython_compiler::core::SourceLocation;
use rustpython_compiler::core::bytecode::{self, BinaryOperator, ConstantData, Instruction};

use crate::rustpython::bytecode::{Body, Instr, Item, Label};

/// A source range as the code generator records it.
pub(crate) type Span = (SourceLocation, SourceLocation);

/// How many instructions a marker statement compiles to: `LOAD name; LOAD_ATTR; POP_TOP`.
pub(crate) const MARKER_LEN: usize = 3;

/// `LOAD_GLOBAL`'s argument is the name's index shifted left by one; the low bit asks for a
/// NULL pushed after the global (as a call's callable needs).
const LOAD_GLOBAL_PUSHES_NULL: u32 = 1;

/// The index in `co_names` of the name a `LOAD_GLOBAL` with argument `arg` loads.
pub(crate) fn global_name_index(arg: u32) -> u32 {
    arg >> 1
}

/// The argument of a `LOAD_GLOBAL` of name `index` that also pushes a NULL.
pub(crate) fn load_global_with_null(index: u32) -> u32 {
    index << 1 | LOAD_GLOBAL_PUSHES_NULL
}

/// The index in `co_names` of the attribute a `LOAD_ATTR` with argument `arg` loads.
fn attribute_name_index(arg: u32) -> u32 {
    bytecode::LoadAttr::from_u32(arg).name_idx()
}

/// Whether `op` loads a variable by name, whatever its scope.
pub(crate) fn is_name_load(op: Instruction) -> bool {
    matches!(
        op,
        Instruction::LoadGlobal { .. }
            | Instruction::LoadName { .. }
            | Instruction::LoadDeref { .. }
            | Instruction::LoadFast { .. }
            | Instruction::LoadFastBorrow { .. }
            | Instruction::LoadFastCheck { .. }
    )
}

/// The name an instruction loads, if it loads a global or module-level name.
pub(crate) fn loaded_name(op: Instruction, arg: u32, code: &CodeObject) -> Option<&str> {
    let index = match op {
        Instruction::LoadGlobal { .. } => global_name_index(arg),
        Instruction::LoadName { .. } => arg,
        _ => return None,
    };
    code.names.get(index as usize).map(String::as_str)
}

/// Whether `instr` is `LOAD_CONST None`.
fn is_none_load(instr: &Instr, code: &CodeObject) -> bool {
    matches!(instr.op, Instruction::LoadConst { .. })
        && matches!(
            code.constants.get(instr.arg as usize),
            Some(ConstantData::None)
        )
}

/// Whether `op` is a conditional jump that pops its condition.
fn is_conditional_jump(op: Instruction) -> bool {
    matches!(
        op,
        Instruction::PopJumpIfFalse { .. } | Instruction::PopJumpIfTrue { .. }
    )
}

/// The position of `label` in `body`.
pub(crate) fn label_position(body: &Body, label: Label) -> Option<usize> {
    body.items
        .iter()
        .position(|item| matches!(item, Item::Label(l) if *l == label))
}

// Markers and the sites the compile path prepares.

/// The span of a statement compiled as `LOAD name; LOAD_ATTR; POP_TOP`, all three
/// instructions with the same span, at the start of `items`: a marker, a trampoline's tail
/// or the end of a switch, as `prepare` writes them (the code generator gives all three the
/// span of the marker's leading name, or the whole span of a node `prepare` made).
pub(crate) fn marker_shape(items: &[Item]) -> Option<Span> {
    let [Item::Instr(load), Item::Instr(attr), Item::Instr(pop), ..] = items else {
        return None;
    };
    (matches!(attr.op, Instruction::LoadAttr { .. })
        && matches!(pop.op, Instruction::PopTop)
        && pop.location == attr.location
        && load.location == attr.location
        && is_name_load(load.op))
    .then_some(attr.location)
}

/// Whether the item before position `at` is the `POP_TOP` that drops an expression
/// statement's value: before a switch or computed goto's marker, the value it dispatches on
/// (`prepare` writes the subject as a statement of its own just before the marker).
pub(crate) fn value_popped_before(items: &[Item], at: usize) -> bool {
    at.checked_sub(1)
        .and_then(|before| items.get(before))
        .is_some_and(|item| matches!(item, Item::Instr(i) if matches!(i.op, Instruction::PopTop)))
}

/// How many instructions a switch's or computed goto's site spans: the value's `POP_TOP`,
/// then the marker.
pub(crate) const DISPATCH_LEN: usize = 1 + MARKER_LEN;

/// The start of a switch or computed goto, `items` being its site (`POP_TOP` of the value,
/// then the marker): the marker's load under the `POP_TOP`'s handler, whose location and
/// handler the dispatch's instructions take.
pub(crate) fn dispatch_start(items: &[Item]) -> Option<Instr> {
    match items {
        [Item::Instr(pop), Item::Instr(load), ..]
            if items.len() == DISPATCH_LEN && matches!(pop.op, Instruction::PopTop) =>
        {
            let mut start = load.clone();
            start.handler = pop.handler;
            Some(start)
        }
        _ => None,
    }
}

/// Whether a marker's load (as [`dispatch_start`] gives it) is a `LOAD_NAME` (module and
/// class bodies), so that other names there are loaded the same way.
pub(crate) fn loads_by_name(load: &Instr) -> bool {
    matches!(load.op, Instruction::LoadName { .. })
}

/// A guard's test, or a trampoline's: `LOAD name`, then perhaps `TO_BOOL` and `NOT_TAKEN`,
/// and one conditional jump, all with the same span.
#[derive(Debug)]
pub(crate) struct Guard {
    /// The span all of the test's instructions carry.
    pub(crate) span: Span,
    /// The position after the test.
    pub(crate) end: usize,
    /// The conditional jump.
    pub(crate) jump: Instr,
}

/// The test of a guard or trampoline at position `at` whose span `wanted` accepts.
pub(crate) fn guard_at(body: &Body, at: usize, wanted: impl Fn(&Span) -> bool) -> Option<Guard> {
    let Some(Item::Instr(load)) = body.items.get(at) else {
        return None;
    };
    if !is_name_load(load.op) || !wanted(&load.location) {
        return None;
    }
    let span = load.location;
    let mut end = at + 1;
    let mut jump = None;
    while let Some(Item::Instr(next)) = body.items.get(end) {
        if next.location != span {
            break;
        }
        match next.op {
            Instruction::ToBool | Instruction::NotTaken => end += 1,
            op if is_conditional_jump(op) && jump.is_none() => {
                jump = Some(next.clone());
                end += 1;
            }
            _ => break,
        }
    }
    jump.map(|jump| Guard { span, end, jump })
}

// The cleanup a goto copies from what the code generator emits for the frames it leaves.

/// `__exit__` is called with three arguments: `None, None, None` on a normal exit.
const EXIT_ARGUMENTS: u32 = 3;

/// How many instructions a plain (not awaited) `with` exit has: three `LOAD_CONST None`,
/// `CALL 3`, `POP_TOP`.
const PLAIN_EXIT_LEN: usize = 5;

/// An exit of the `with` statement that starts at `start`, the first after position `after`
/// (else the first at all) once `skip` of them are passed: `LOAD_CONST None` three times,
/// `CALL 3`, then `POP_TOP`, or for `async with` the await of the result (`GET_AWAITABLE`, a
/// `SEND` loop, `END_SEND`) and `POP_TOP`; every instruction at the statement's start.
pub(crate) fn with_exit(
    body: &Body,
    code: &CodeObject,
    after: usize,
    start: SourceLocation,
    skip: usize,
) -> Option<std::ops::Range<usize>> {
    let exit_at = |first: usize| {
        with_exit_at(body.items.get(first..)?, code, start).map(|len| first..first + len)
    };
    // Normally after the goto; but a goto in an `except` handler is in a block the code
    // generator moves after the function's other code.
    (after..body.items.len())
        .filter_map(exit_at)
        .nth(skip)
        .or_else(|| (0..body.items.len()).filter_map(exit_at).nth(skip))
}

/// The length of the `with` exit at the start of `items`, if one starts there.
fn with_exit_at(items: &[Item], code: &CodeObject, start: SourceLocation) -> Option<usize> {
    let is_none = |item: &Item| matches!(item, Item::Instr(instr) if is_none_load(instr, code));
    let here = |item: &Item| {
        matches!(item, Item::Label(_)) || matches!(item, Item::Instr(i) if i.location.0 == start)
    };
    let [a, b, c, Item::Instr(call), ..] = items else {
        return None;
    };
    let called = is_none(a)
        && is_none(b)
        && is_none(c)
        && matches!(call.op, Instruction::Call { .. })
        && call.arg == EXIT_ARGUMENTS
        && items.iter().take(4).all(here);
    if !called {
        return None;
    }
    let awaited = matches!(items.get(4), Some(Item::Instr(i)) if matches!(i.op, Instruction::GetAwaitable { .. }));
    let len =
        items.iter().take_while(|item| here(item)).position(
            |item| matches!(item, Item::Instr(i) if matches!(i.op, Instruction::PopTop)),
        )? + 1;
    // A plain exit is five instructions; an awaited one ends after its `END_SEND`.
    let fits = if awaited {
        let before_pop = len.checked_sub(2).and_then(|at| items.get(at));
        matches!(before_pop, Some(Item::Instr(i)) if matches!(i.op, Instruction::EndSend))
    } else {
        len == PLAIN_EXIT_LEN
    };
    fits.then_some(len)
}

/// `LOAD_CONST None; STORE name; DELETE name`, as the code generator emits it when a handler
/// with `as name` exits (only for local and module or class names).
pub(crate) fn unbind_sequence<'b>(
    body: &'b Body,
    code: &CodeObject,
    name: &str,
) -> Option<[&'b Instr; 3]> {
    let named = |op: Instruction, arg: u32| -> bool {
        let names = match op {
            Instruction::StoreFast { .. } | Instruction::DeleteFast { .. } => &code.varnames,
            Instruction::StoreName { .. } | Instruction::DeleteName { .. } => &code.names,
            _ => return false,
        };
        names.get(arg as usize).is_some_and(|n| n.as_str() == name)
    };
    body.items.windows(3).find_map(|window| {
        let [Item::Instr(load), Item::Instr(store), Item::Instr(delete)] = window else {
            return None;
        };
        let pair = matches!(
            (store.op, delete.op),
            (
                Instruction::StoreFast { .. },
                Instruction::DeleteFast { .. }
            ) | (
                Instruction::StoreName { .. },
                Instruction::DeleteName { .. }
            )
        );
        (is_none_load(load, code) && pair && store.arg == delete.arg && named(store.op, store.arg))
            .then_some([load, store, delete])
    })
}

/// The longest handler block [`returning_block`] accepts: an awaited exit's `CLEANUP_THROW`
/// block is a few instructions.
const MAX_RETURNING_BLOCK: usize = 4;

/// The instructions of the handler block at `label` if it is straight-line code ending with
/// a jump back to a label that `returns_to` accepts (and jumping nowhere else): the
/// `CLEANUP_THROW` block of an awaited `with` exit, which goes back into the exit.
pub(crate) fn returning_block(
    body: &Body,
    label: Label,
    returns_to: impl Fn(Label) -> bool,
) -> Option<Vec<Instr>> {
    let start = label_position(body, label)? + 1;
    let mut block = Vec::new();
    for item in body.items.get(start..)? {
        let Item::Instr(instr) = item else {
            return None;
        };
        block.push(instr.clone());
        if let Some(target) = instr.target {
            let back = matches!(
                instr.op,
                Instruction::JumpBackwardNoInterrupt { .. }
                    | Instruction::JumpBackward { .. }
                    | Instruction::JumpForward { .. }
            );
            return (back && returns_to(target)).then_some(block);
        }
        if block.len() > MAX_RETURNING_BLOCK {
            return None;
        }
    }
    None
}

// The run-time decorator's shapes: code compiled without gotopy, found by names alone.

/// The keyword of a marker statement the run-time decorator rewrites.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keyword {
    Goto,
    Label,
}

/// A `goto .name` or `label .name` statement at the start of `items`, as RustPython
/// compiles it: `LOAD_GLOBAL`/`LOAD_NAME` of the keyword, `LOAD_ATTR name`, `POP_TOP`. Gives
/// the keyword, the label's name and the keyword's load.
pub(crate) fn named_marker<'b, 'c>(
    items: &'b [Item],
    code: &'c CodeObject,
) -> Option<(Keyword, &'c str, &'b Instr)> {
    let [Item::Instr(load), Item::Instr(attr), Item::Instr(pop), ..] = items else {
        return None;
    };
    if !matches!(attr.op, Instruction::LoadAttr { .. }) || !matches!(pop.op, Instruction::PopTop) {
        return None;
    }
    let keyword = match loaded_name(load.op, load.arg, code) {
        Some("goto") => Keyword::Goto,
        Some("label") => Keyword::Label,
        _ => return None,
    };
    let name = code.names.get(attribute_name_index(attr.arg) as usize)?;
    Some((keyword, name.as_str(), load))
}

/// What needs the syntax tree among the instructions of a code object: `goto *expr` and
/// `while switch *expr` (the name, the value, then `BINARY_OP *` on the same line) and
/// `case[...]` (the name, the key, `BINARY_OP []`). Gives what it is and the load of its
/// name. (Loading `goto` or `switch` to decorate a function is none of these.)
pub(crate) fn needing_syntax_tree<'b>(
    instrs: &[&'b Instr],
    code: &CodeObject,
) -> Option<(&'static str, &'b Instr)> {
    let multiply = u32::from(BinaryOperator::Multiply);
    instrs.iter().enumerate().find_map(|(index, &load)| {
        let name = loaded_name(load.op, load.arg, code);
        if !matches!(name, Some("goto" | "switch" | "case")) {
            return None;
        }
        let operator = instrs
            .iter()
            .skip(index + 1)
            .take_while(|next| next.line.line == load.line.line && next.target.is_none())
            .find(|next| matches!(next.op, Instruction::BinaryOp { .. }))?;
        let what = match name {
            Some("goto") if operator.arg == multiply => "computed `goto *expr`",
            Some("switch") if operator.arg == multiply => "`while switch`",
            Some("case") if operator.arg != multiply => "`case[...]`",
            _ => return None,
        };
        Some((what, load))
    })
}

/// Whether a conditional jump `jump` that pops the result of `tested` is an `except`
/// clause's test: `CHECK_EXC_MATCH`, then `POP_JUMP_IF_FALSE` to the next clause.
pub(crate) fn is_except_clause_test(tested: Instruction, jump: Instruction) -> bool {
    matches!(tested, Instruction::CheckExcMatch)
        && matches!(jump, Instruction::PopJumpIfFalse { .. })
}

#[cfg(test)]
mod tests {
    use rustpython_compiler::{CompileOpts, Mode, compile};

    use super::*;
    use crate::rustpython::bytecode::code_objects;
    use crate::rustpython::compile::{Generated, generate_prepared};

    /// `text` compiled by RustPython alone.
    fn compiled(text: &str) -> CodeObject {
        match compile(text, Mode::Exec, "<test>", CompileOpts::default()) {
            Ok(code) => code,
            Err(error) => panic!("{error}: {text}"),
        }
    }

    /// The code object named `name` in `code` (the module is `<module>`), decoded.
    fn decoded<'c>(code: &'c CodeObject, name: &str) -> (&'c CodeObject, Body) {
        let Some(found) = code_objects(code)
            .into_iter()
            .find(|c| c.obj_name.as_str() == name)
        else {
            panic!("no code object `{name}`");
        };
        match Body::decode(found) {
            Ok(body) => (found, body),
            Err(error) => panic!("{error}"),
        }
    }

    /// Positions where `found` holds in `body`.
    fn positions(body: &Body, found: impl Fn(usize) -> bool) -> Vec<usize> {
        (0..body.items.len()).filter(|&at| found(at)).collect()
    }

    #[test]
    fn names_are_loaded_by_scope_and_globals_carry_a_null_bit() {
        let code = compiled("def f(x):\n    return g(x)\ng\n");
        let (f, body) = decoded(&code, "f");
        let loads: Vec<Option<&str>> = body
            .instrs()
            .filter(|i| is_name_load(i.op))
            .map(|i| loaded_name(i.op, i.arg, f))
            .collect();
        // `g` is a global, `x` a local (a name load, but not by name).
        assert_eq!(loads, [Some("g"), None]);
        let (module, body) = decoded(&code, "<module>");
        let names: Vec<&str> = body
            .instrs()
            .filter_map(|i| loaded_name(i.op, i.arg, module))
            .collect();
        assert_eq!(names, ["g"]);
        assert_eq!(global_name_index(load_global_with_null(7)), 7);
    }

    #[test]
    fn a_marker_is_three_instructions_with_one_span() {
        let text = "def f():\n    label .a\n    x.y\n    x.y.z\n    x.y()\n    goto .a\n";
        let prepared = generate_prepared(text);
        let (_, body) = decoded(&prepared.code, "f");
        let spans: Vec<Span> = (0..body.items.len())
            .filter_map(|at| marker_shape(body.items.get(at..)?))
            .collect();
        // `x.y` has the shape too, but not a marker's span; `x.y.z` and `x.y()` have not.
        assert_eq!(spans.len(), 3);
        let markers = spans.iter().filter(|span| prepared.markers.contains(span));
        assert_eq!(markers.count(), 2);
    }

    #[test]
    fn a_guard_is_a_name_test_with_one_span() {
        let text = "def f(x):\n    if x == 1:\n        pass\n    return\n    label .a\n";
        let Generated { code, guards, .. } = generate_prepared(text);
        let (_, body) = decoded(&code, "f");
        let found = positions(&body, |at| {
            guard_at(&body, at, |span| guards.contains(span)).is_some()
        });
        assert_eq!(found.len(), 1);
        let Some(guard) = guard_at(&body, found[0], |_| true) else {
            panic!()
        };
        assert!(matches!(guard.jump.op, Instruction::PopJumpIfFalse { .. }));
        // `x == 1` is no guard: its load and its comparison have different spans.
        let any = positions(&body, |at| guard_at(&body, at, |_| true).is_some());
        assert_eq!(any, found);
    }

    #[test]
    fn a_trampoline_has_a_test_and_a_tail_with_its_span() {
        let text =
            "def f():\n    try:\n        goto .out\n    finally:\n        g()\n    label .out\n";
        let Generated {
            code, trampolines, ..
        } = generate_prepared(text);
        let (_, body) = decoded(&code, "f");
        assert_eq!(trampolines.len(), 1);
        let is_trampoline = |span: &Span| trampolines.contains(span);
        let tests = positions(&body, |at| guard_at(&body, at, is_trampoline).is_some());
        let tails = positions(&body, |at| {
            body.items
                .get(at..)
                .and_then(marker_shape)
                .is_some_and(|span| is_trampoline(&span))
        });
        assert_eq!((tests.len(), tails.len()), (1, 1));
        assert!(tests[0] < tails[0]);
    }

    #[test]
    fn a_dispatch_starts_with_the_pop_of_its_value() {
        for (text, scope, by_name) in [
            ("def f(x):\n    goto *x\n", "f", false),
            ("x = 1\ngoto *x\n", "<module>", true),
            (
                "def f(x):\n    while switch *x:\n        pass\n",
                "f",
                false,
            ),
        ] {
            let Generated { code, markers, .. } = generate_prepared(text);
            let (_, body) = decoded(&code, scope);
            let starts: Vec<Instr> = positions(&body, |at| {
                body.items
                    .get(at..)
                    .and_then(marker_shape)
                    .is_some_and(|span| markers.contains(&span))
                    && value_popped_before(&body.items, at)
            })
            .into_iter()
            .filter_map(|at| body.items.get(at - 1..at - 1 + DISPATCH_LEN))
            .filter_map(dispatch_start)
            .collect();
            assert_eq!(starts.len(), 1, "{text}");
            assert_eq!(loads_by_name(&starts[0]), by_name, "{text}");
        }
        // A label marker follows no value.
        let Generated { code, markers, .. } = generate_prepared("def f(x):\n    label .a\n");
        let (_, body) = decoded(&code, "f");
        let label = positions(&body, |at| {
            body.items
                .get(at..)
                .and_then(marker_shape)
                .is_some_and(|span| markers.contains(&span))
        });
        assert_eq!(label.len(), 1);
        assert!(!value_popped_before(&body.items, label[0]));
    }

    #[test]
    fn a_switch_ends_with_a_marker_spanning_the_statement() {
        let text = "def f(x):\n    while switch *x:\n        pass\n    g()\n";
        let Generated {
            code, switch_ends, ..
        } = generate_prepared(text);
        let (_, body) = decoded(&code, "f");
        let ends = positions(&body, |at| {
            body.items
                .get(at..)
                .and_then(marker_shape)
                .is_some_and(|span| switch_ends.contains(&span))
        });
        assert_eq!(ends.len(), 1);
    }

    /// The location the `with` statement at line `line`, column 5, starts at.
    fn with_start(body: &Body, line: usize) -> SourceLocation {
        let Some(start) = body
            .instrs()
            .map(|i| i.location.0)
            .find(|l| l.line.get() == line && l.character_offset.get() == 5)
        else {
            panic!("nothing at line {line}, column 5")
        };
        start
    }

    #[test]
    fn a_with_exit_calls_exit_with_three_nones_at_the_statement() {
        let text = "def f(a):\n    with a:\n        g()\n    g(None, None, None)\n";
        let code = compiled(text);
        let (f, body) = decoded(&code, "f");
        let start = with_start(&body, 2);
        let Some(exit) = with_exit(&body, f, 0, start, 0) else {
            panic!("no exit")
        };
        assert_eq!(exit.len(), PLAIN_EXIT_LEN);
        // A call of `g` with three `None`s is not at the statement's start.
        assert_eq!(with_exit(&body, f, 0, start, 1), None);
        let call = with_start(&body, 4);
        assert_eq!(with_exit(&body, f, 0, call, 0), None);
    }

    #[test]
    fn an_awaited_exit_has_a_block_that_returns_into_it() {
        let text = "async def f(a):\n    async with a:\n        g()\n";
        let code = compiled(text);
        let (f, body) = decoded(&code, "f");
        let Some(exit) = with_exit(&body, f, 0, with_start(&body, 2), 0) else {
            panic!("no exit")
        };
        assert!(exit.len() > PLAIN_EXIT_LEN);
        let region = body.items.get(exit.clone()).unwrap_or_default();
        let inside: Vec<Label> = region
            .iter()
            .filter_map(|item| match item {
                Item::Label(label) => Some(*label),
                Item::Instr(_) => None,
            })
            .collect();
        let returning = region.iter().find_map(|item| match item {
            Item::Instr(Instr {
                handler: Some(handler),
                ..
            }) => returning_block(&body, handler.target, |l| inside.contains(&l)),
            _ => None,
        });
        let Some(block) = returning else {
            panic!("no handler block returns into the exit")
        };
        assert!(
            block
                .iter()
                .any(|i| matches!(i.op, Instruction::CleanupThrow))
        );
        // Nothing returns into code outside the exit.
        let outside = region.iter().find_map(|item| match item {
            Item::Instr(Instr {
                handler: Some(handler),
                ..
            }) => returning_block(&body, handler.target, |_| false),
            _ => None,
        });
        assert!(outside.is_none());
    }

    #[test]
    fn an_as_name_is_unbound_by_storing_and_deleting_none() {
        let text = "def f():\n    try:\n        g()\n    except E as error:\n        pass\n";
        let code = compiled(text);
        let (f, body) = decoded(&code, "f");
        let Some([_, store, _]) = unbind_sequence(&body, f, "error") else {
            panic!("no unbinding")
        };
        assert!(matches!(store.op, Instruction::StoreFast { .. }));
        assert!(unbind_sequence(&body, f, "g").is_none());
        let module = compiled("try:\n    g()\nexcept E as error:\n    pass\n");
        let (m, body) = decoded(&module, "<module>");
        assert!(unbind_sequence(&body, m, "error").is_some());
    }

    #[test]
    fn a_decorated_marker_is_found_by_its_names() {
        let code = compiled("def f(x):\n    label .a\n    x.a\n    goto .a\n");
        let (f, body) = decoded(&code, "f");
        let found: Vec<(Keyword, &str)> = (0..body.items.len())
            .filter_map(|at| named_marker(body.items.get(at..)?, f))
            .map(|(keyword, name, _)| (keyword, name))
            .collect();
        assert_eq!(found, [(Keyword::Label, "a"), (Keyword::Goto, "a")]);
    }

    #[test]
    fn computed_gotos_switches_and_cases_need_the_syntax_tree() {
        for (text, what) in [
            ("def f(x):\n    goto *x\n", Some("computed `goto *expr`")),
            (
                "def f(x):\n    while switch *x:\n        pass\n",
                Some("`while switch`"),
            ),
            ("def f():\n    case[1]\n", Some("`case[...]`")),
            ("def f(x):\n    goto .a\n    label .a\n", None),
            ("def f(x):\n    y = x * 2\n    print(goto)\n", None),
        ] {
            let code = compiled(text);
            let (f, body) = decoded(&code, "f");
            let instrs: Vec<&Instr> = body.instrs().collect();
            let found = needing_syntax_tree(&instrs, f).map(|(what, _)| what);
            assert_eq!(found, what, "{text}");
        }
    }

    #[test]
    fn an_except_clause_tests_the_match_then_jumps_if_false() {
        let test_after = |text: &str, check: fn(Instruction) -> bool| {
            let code = compiled(text);
            let (_, body) = decoded(&code, "f");
            let instrs: Vec<&Instr> = body.instrs().collect();
            instrs
                .windows(2)
                .any(|pair| check(pair[0].op) && is_except_clause_test(pair[0].op, pair[1].op))
        };
        let clause = "def f():\n    try:\n        g()\n    except E:\n        pass\n";
        assert!(test_after(clause, |op| matches!(
            op,
            Instruction::CheckExcMatch
        )));
        let star = "def f():\n    try:\n        g()\n    except* E:\n        pass\n";
        assert!(!test_after(star, |_| true));
    }
}
