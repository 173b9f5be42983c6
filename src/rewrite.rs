//! Rewriting a code object that RustPython compiled without gotopy: what the run-time
//! decorator `goto(f)` does (SPEC section 6) for code made by `exec`, `compile` or another
//! embedder.
//!
//! Without the source there is no syntax tree, so markers are found by their shape alone:
//! `LOAD_GLOBAL`/`LOAD_NAME goto` (or `label`), `LOAD_ATTR name`, `POP_TOP`. A label becomes
//! nothing and a goto a jump, when that is provably all it takes: the goto and its label
//! are under the same exception handler, and every stack slot the goto has above its
//! label's depth holds the iterator of a `for` loop around the goto (each dropped with
//! `POP_ITER`); so the jump leaves only `for` loops and enters no block. Anything else is
//! refused with an error
//! that says to compile the file through gotopy, which rewrites every case; so is a label
//! RustPython's own compiler already removed as unreachable, and `goto *expr`/`while
//! switch`, which need the syntax tree.

use std::collections::HashMap;

use rustpython_compiler::CodeObject;
use rustpython_compiler::core::bytecode::Instruction;

use crate::bytecode::{Body, BytecodeError, Item, for_each_code_mut};
use crate::compile::jump_op;

/// Why a code object could not be rewritten: a message and the source line it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RewriteError {
    /// What went wrong.
    pub message: String,
    /// The file the code object says it comes from.
    pub path: String,
    /// 1-based, when known.
    pub line: Option<u32>,
}

/// Rewrites every marker of `code` and of the code objects nested in it, in place.
///
/// A code object without markers (for example one gotopy already compiled) is left as it
/// is, so rewriting twice changes nothing.
///
/// ```
/// use rustpython_compiler::{CompileOpts, Mode, compile};
///
/// let text = "def f(n):\n    label .top\n    n -= 1\n    if n:\n        goto .top\n    return n\n";
/// let mut code = compile(text, Mode::Exec, "<demo>", CompileOpts::default()).unwrap();
/// gotopy::rewrite::rewrite_code(&mut code).unwrap();
/// let listing = gotopy::bytecode::disassemble(&code).unwrap();
/// assert!(listing.contains("JUMP_BACKWARD") && !listing.contains("LOAD_ATTR"));
/// ```
/// Returns whether anything changed.
pub fn rewrite_code(code: &mut CodeObject) -> Result<bool, RewriteError> {
    let mut changed = false;
    for_each_code_mut(code, &mut |code| {
        changed |= rewrite_one(code)?;
        Ok(())
    })?;
    Ok(changed)
}

/// A marker found by shape.
struct Found {
    at: usize,
    keyword: Keyword,
    name: String,
    line: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Keyword {
    Goto,
    Label,
}

fn rewrite_one(code: &mut CodeObject) -> Result<bool, RewriteError> {
    let path = code.source_path.to_string();
    let qualname = code.qualname.to_string();
    let error = |message: String, line: Option<u32>| RewriteError {
        message,
        path: path.clone(),
        line,
    };
    let internal = |e: BytecodeError| error(format!("cannot rewrite `{qualname}`: {e}"), None);
    let mut body = Body::decode(code).map_err(internal)?;
    refuse_unsupported(&body, code).map_err(|(message, line)| error(message, line))?;
    let found = find(&body, code);
    if found.is_empty() {
        return Ok(false);
    }
    let depths = body.stack_depths().map_err(internal)?;
    let mut labels = HashMap::new();
    for marker in found.iter().filter(|m| m.keyword == Keyword::Label) {
        let Item::Instr(load) = &body.items[marker.at] else {
            unreachable!("markers are found on instructions")
        };
        let place = (depths[marker.at], load.handler);
        if labels
            .insert(marker.name.as_str(), (body.new_label(), place))
            .is_some()
        {
            return Err(error(
                format!("duplicate label `.{}` in `{}`", marker.name, code.qualname),
                Some(marker.line),
            ));
        }
    }
    for marker in found.iter().rev() {
        let replacement = match marker.keyword {
            Keyword::Label => vec![Item::Label(labels[marker.name.as_str()].0)],
            Keyword::Goto => {
                let Some(&(label, (depth, handler))) = labels.get(marker.name.as_str()) else {
                    return Err(error(
                        format!(
                            "label `.{}` not found in `{}`: it does not exist, or the \
                             interpreter's compiler removed it as unreachable (after a \
                             `return`, `raise`, `break`, `continue` or an endless loop); \
                             compile the file through gotopy, which keeps such labels",
                            marker.name, code.qualname
                        ),
                        Some(marker.line),
                    ));
                };
                let Item::Instr(load) = &body.items[marker.at] else {
                    unreachable!("markers are found on instructions")
                };
                let Some(iterators) = loops_left(&body, &depths, marker.at, depth)
                    .filter(|_| load.handler == handler)
                else {
                    return Err(error(
                        format!(
                            "cannot rewrite `goto .{}` in `{}` at run time: it leaves or \
                             enters a `with`, `try` or `except` block (or enters a `for` \
                             loop), whose handling needs the source; compile the file \
                             through gotopy (`gotopy run`, the import hook or `gotopy \
                             compile`)",
                            marker.name, code.qualname
                        ),
                        Some(marker.line),
                    ));
                };
                let mut items: Vec<Item> = (0..iterators)
                    .map(|_| {
                        let pop = crate::bytecode::Instr::like(load, Instruction::PopIter, 0, None);
                        Item::Instr(pop)
                    })
                    .collect();
                let mut jump = crate::bytecode::Instr::like(load, jump_op(), 0, Some(label));
                jump.handler = handler;
                items.push(Item::Instr(jump));
                items
            }
        };
        body.items.splice(marker.at..marker.at + 3, replacement);
    }
    body.assemble(code).map_err(internal)?;
    Ok(true)
}

/// How many `for` loops a goto at `at` leaves on its way to a label at stack depth `to`:
/// `Some(n)` when every stack slot the goto has above `to` holds the iterator of a `for`
/// loop around it (a `FOR_ITER` entered at that depth whose exit comes after the goto),
/// `None` when the stack differs in any other way.
fn loops_left(body: &Body, depths: &[Option<u32>], at: usize, to: Option<u32>) -> Option<u32> {
    let (Some(from), Some(to)) = (depths[at], to) else {
        return None;
    };
    if from < to {
        return None;
    }
    let mut slots = std::collections::BTreeSet::new();
    for (index, item) in body.items[..at].iter().enumerate() {
        let Item::Instr(instr) = item else { continue };
        let (Instruction::ForIter { .. }, Some(exit), Some(depth)) =
            (instr.op, instr.target, depths[index])
        else {
            continue;
        };
        let exit_at = body
            .items
            .iter()
            .position(|item| matches!(item, Item::Label(l) if *l == exit));
        if exit_at.is_some_and(|exit_at| exit_at > at) && depth > to && depth <= from {
            slots.insert(depth);
        }
    }
    (slots.len() as u32 == from - to && slots.iter().copied().eq(to + 1..=from))
        .then_some(from - to)
}

/// The name an instruction loads, if it loads a global or module-level name.
fn loaded_name(op: Instruction, arg: u32, code: &CodeObject) -> Option<&str> {
    let index = match op {
        Instruction::LoadGlobal { .. } => arg >> 1,
        Instruction::LoadName { .. } => arg,
        _ => return None,
    };
    code.names.get(index as usize).map(String::as_str)
}

/// Every `goto .name` and `label .name` statement, in order.
fn find(body: &Body, code: &CodeObject) -> Vec<Found> {
    let mut found = Vec::new();
    for (at, window) in body.items.windows(3).enumerate() {
        let [Item::Instr(load), Item::Instr(attr), Item::Instr(pop)] = window else {
            continue;
        };
        if !matches!(attr.op, Instruction::LoadAttr { .. })
            || !matches!(pop.op, Instruction::PopTop)
        {
            continue;
        }
        let keyword = match loaded_name(load.op, load.arg, code) {
            Some("goto") => Keyword::Goto,
            Some("label") => Keyword::Label,
            _ => continue,
        };
        let Some(name) = code.names.get((attr.arg >> 1) as usize) else {
            continue;
        };
        found.push(Found {
            at,
            keyword,
            name: name.clone(),
            line: u32::try_from(load.line.line).unwrap_or(0),
        });
    }
    found
}

/// `goto *expr` and `while switch *expr` (the name, the value, then `BINARY_OP *` on the
/// same line) and `case[...]` (the name, the key, `BINARY_OP []`) need the syntax tree;
/// refuse them rather than leave them to fail at run time. (Loading `goto` or `switch` to
/// decorate a function is none of these.)
fn refuse_unsupported(body: &Body, code: &CodeObject) -> Result<(), (String, Option<u32>)> {
    const MULTIPLY: u32 = 5;
    let instrs: Vec<&crate::bytecode::Instr> = body.instrs().collect();
    for (index, load) in instrs.iter().enumerate() {
        let name = loaded_name(load.op, load.arg, code);
        if !matches!(name, Some("goto" | "switch" | "case")) {
            continue;
        }
        let operator = instrs[index + 1..]
            .iter()
            .take_while(|next| next.line.line == load.line.line && next.target.is_none())
            .find(|next| matches!(next.op, Instruction::BinaryOp { .. }));
        let what = match (name, operator) {
            (Some("goto"), Some(op)) if op.arg == MULTIPLY => "computed `goto *expr`",
            (Some("switch"), Some(op)) if op.arg == MULTIPLY => "`while switch`",
            (Some("case"), Some(op)) if op.arg != MULTIPLY => "`case[...]`",
            _ => continue,
        };
        return Err((
            format!(
                "{what} in `{}` cannot be rewritten at run time: it needs the source; compile \
                 the file through gotopy",
                code.qualname
            ),
            u32::try_from(load.line.line).ok(),
        ));
    }
    Ok(())
}
