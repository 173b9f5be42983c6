//! Markers found in code objects by their shape alone, for the shells: whether a code
//! object still holds a marker (the decorator leaves one that holds none as it is), a
//! marker name misused where there is no marker (the decorator without source refuses
//! it), and a name that a standalone `.pyc` file would still need at run time.

use super::bytecode::{Body, BytecodeError, Instr};
use super::code::Code;
use super::shapes::Shapes;
use crate::tables::Position;

/// The names a marker statement starts with.
pub const MARKERS: [&str; 4] = ["goto", "label", "switch", "case"];

/// Whether a marker's name is among the names `code` (not its nested code objects) loads or
/// binds; when none is, it has no marker, used or misused, and is not decoded.
pub fn names_a_marker(code: &Code) -> bool {
    code.names
        .iter()
        .chain(&code.locals)
        .any(|name| MARKERS.contains(&name.as_str()))
}

/// The word a name load loads, if it is a marker's.
fn marker_word<'c>(shapes: &Shapes, code: &'c Code, instr: &Instr) -> Option<&'c str> {
    if !shapes.is_name_load(instr.op) {
        return None;
    }
    shapes
        .name_of(instr.op, instr.arg, &code.names, &code.locals)
        .filter(|name| MARKERS.contains(name))
}

/// Whether `code` (not its nested code objects) still holds a marker: `goto .x`, `label .x`,
/// `goto *x`, or a load of `switch` or `case` from outside the function (`while switch *x:`,
/// `case[...]`); false once gotopy has lowered it.
pub fn has_markers(shapes: &'static Shapes, code: &Code) -> Result<bool, BytecodeError> {
    if !names_a_marker(code) {
        return Ok(false);
    }
    let body = Body::decode(shapes, code.raw())?;
    let instrs: Vec<&Instr> = body.instrs().collect();
    let named = |instr: &Instr, name: &str| shapes.is(instr.op, name);
    for (index, load) in instrs.iter().enumerate() {
        let Some(word) = marker_word(shapes, code, load) else {
            continue;
        };
        let rest = &instrs[index + 1..];
        if matches!(word, "switch" | "case")
            && !shapes.opcodes.name(load.op).starts_with("LOAD_FAST")
        {
            return Ok(true);
        }
        if rest.len() > 1 && named(rest[0], "LOAD_ATTR") && named(rest[1], "POP_TOP") {
            return Ok(true);
        }
        // `goto *x`: the product of `goto` and the value, dropped.
        let end = rest.iter().position(|instr| {
            let name = shapes.opcodes.name(instr.op);
            name == "POP_TOP" || name.starts_with("STORE") || name.starts_with("RETURN")
        });
        let statement = match end {
            Some(end) if named(rest[end], "POP_TOP") => &rest[..end],
            _ => &[],
        };
        if word == "goto"
            && statement
                .iter()
                .any(|instr| named(instr, "BINARY_OP") && instr.arg == shapes.multiply)
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// What `check` rejects in a function that has no marker [`has_markers`] sees: a marker name
/// bound as a local (G007), or any load of `goto` or `label`, since none of them is a marker
/// statement (G005, G006: `x = goto .a`, `y = goto * x`, a bare `goto`, `label .a.b`); the
/// message and where. The rewrite without source refuses those rather than leave them to
/// run as plain Python.
pub fn misused_markers(
    shapes: &'static Shapes,
    code: &Code,
) -> Result<Option<(String, Position)>, BytecodeError> {
    if !names_a_marker(code) {
        return Ok(None);
    }
    for word in MARKERS {
        if code.bound().iter().any(|name| name == word) {
            let message = format!("`{word}` is a local variable of `{}`", code.qualname);
            return Ok(Some((message, [code.first_line, -1, -1, -1])));
        }
    }
    let body = Body::decode(shapes, code.raw())?;
    for load in body.instrs() {
        if let Some(word @ ("goto" | "label")) = marker_word(shapes, code, load) {
            let message = format!("`{word}` used other than as a marker statement");
            return Ok(Some((message, load.position)));
        }
    }
    Ok(None)
}

/// Why a standalone `.pyc` is refused (`G200`) whose code still loads `name`, an import of
/// gotopy's it left out ([`still_needed`] finds where), and what to write instead: the
/// words of both commands that write them, the binary's and the package's.
pub fn still_needed_refusal(name: &str) -> (String, &'static str) {
    let message = format!(
        "`{name}` is still needed at run time here, so this module cannot run where gotopy is \
         not installed"
    );
    let help = "this is a marker in a scope that is not rewritten, or the name used as a value: \
                decorate the function with `@goto`, or compile with --all-scopes";
    (message, help)
}

/// The first load in `code` (not its nested code objects) of one of `names` as a global or
/// module-level name, and where; for standalone `.pyc` files, whose imports of `goto` and
/// `gotopy` are left out.
pub fn still_needed(
    shapes: &'static Shapes,
    code: &Code,
    names: &[String],
) -> Result<Option<(String, Position)>, BytecodeError> {
    if !code
        .names
        .iter()
        .chain(&code.locals)
        .any(|name| names.contains(name))
    {
        return Ok(None);
    }
    let body = Body::decode(shapes, code.raw())?;
    for instr in body.instrs() {
        if !shapes.is_name_load(instr.op) || shapes.opcodes.name(instr.op).starts_with("LOAD_FAST")
        {
            continue;
        }
        if let Some(name) = shapes.name_of(instr.op, instr.arg, &code.names, &code.locals)
            && names.iter().any(|needed| needed == name)
        {
            let [line, end_line, column, end_column] = instr.position;
            let line = if line > 0 { line } else { code.first_line };
            return Ok(Some((
                name.to_owned(),
                [line, end_line, column, end_column],
            )));
        }
    }
    Ok(None)
}
