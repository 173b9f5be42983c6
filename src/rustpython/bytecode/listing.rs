//! Listings for people: the disassembly `gotopy dis` prints and the snapshots record, and
//! the control-flow graph in Graphviz DOT, drawn from the [`Flow`] of the decoded code.
//!
//! It renders and decides nothing: offsets come from the assembler's layout, edges and
//! blocks from [`Flow`].

use std::collections::BTreeSet;
use std::fmt::Write;
use std::ops::Range;

use rustpython_compiler::CodeObject;
use rustpython_compiler::core::bytecode::{Instruction, InstructionMetadata, OpArg};

use super::code::code_objects;
use super::decode::code_first_line;
use super::flow::{Edge, EdgeKind, Flow};
use super::{Body, BytecodeError};

/// One instruction as listings show it.
struct Listed {
    offset: usize,
    /// The source line, where it differs from the previous instruction's.
    line: Option<i32>,
    text: String,
    /// Whether a jump or a handler starts here.
    is_target: bool,
}

/// The instructions of one code object as listings show them, with its body.
fn listing(code: &CodeObject) -> Result<(Body, Vec<Listed>), BytecodeError> {
    let body = Body::decode(code)?;
    let layout = body.layout()?;
    let targets: BTreeSet<usize> = layout.labels.values().copied().collect();
    let mut last_line = None;
    let mut listed = Vec::new();
    for (index, instr) in body.instrs().enumerate() {
        let line =
            (instr.line.line >= 0 && Some(instr.line.line) != last_line).then_some(instr.line.line);
        if line.is_some() {
            last_line = line;
        }
        let text = match instr.target {
            Some(label) => {
                let target = layout
                    .labels
                    .get(label)
                    .ok_or(BytecodeError::UnplacedLabel(label))?;
                format!("{} -> {target}", opname(layout.ops[index]))
            }
            None => render(instr.op, instr.arg, code),
        };
        listed.push(Listed {
            offset: layout.offsets[index],
            line,
            text,
            is_target: targets.contains(&layout.offsets[index]),
        });
    }
    Ok((body, listed))
}

/// A readable listing of `code` and every code object nested in it: line numbers, offsets,
/// opcode names, arguments resolved to names and constants, jump targets, and the
/// exception table. `gotopy dis` prints it and the snapshots record it.
pub fn disassemble(code: &CodeObject) -> Result<String, BytecodeError> {
    code_objects(code)
        .into_iter()
        .map(disassemble_one)
        .collect()
}

/// The listing of one code object, without the code objects nested in it.
pub fn disassemble_one(code: &CodeObject) -> Result<String, BytecodeError> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Disassembly of {} (line {}):",
        code.qualname,
        code_first_line(code)
    );
    let (_, listed) = listing(code)?;
    for instr in listed {
        let marker = if instr.is_target { ">>" } else { "  " };
        let line = instr.line.map(|line| line.to_string()).unwrap_or_default();
        let _ = writeln!(out, "{line:>5} {marker} {:>5} {}", instr.offset, instr.text);
    }
    let entries = crate::tables::decode_exceptions(&code.exceptiontable)
        .map_err(|error| BytecodeError::BadExceptionTable(error.0))?;
    if !entries.is_empty() {
        let _ = writeln!(out, "Exception table:");
        for entry in entries {
            let _ = writeln!(
                out,
                "  {} to {} -> {} [{}]{}",
                entry.start,
                entry.end,
                entry.target,
                entry.depth,
                if entry.lasti { " lasti" } else { "" }
            );
        }
    }
    out.push('\n');
    Ok(out)
}

/// The control-flow graph of one code object (not its nested ones) in Graphviz DOT: a box
/// per basic block with its instructions as the listing shows them, solid edges for jumps
/// and fall-through (`jump` labels a conditional jump taken), dashed edges to exception
/// handlers.
pub fn control_flow_dot(code: &CodeObject) -> Result<String, BytecodeError> {
    let (body, listed) = listing(code)?;
    let flow = body.flow();
    let starts = flow.block_starts()?;
    let ends = starts.iter().skip(1).copied().chain([listed.len()]);
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", escape(&code.qualname));
    let _ = writeln!(out, "  node [shape=box, fontname=\"monospace\"];");
    let mut edges = Vec::new();
    let mut handled = BTreeSet::new();
    for (first, end) in starts.iter().copied().zip(ends) {
        let block = first..end;
        let name = listed[first].offset;
        let label: String = listed[block.clone()]
            .iter()
            .map(|instr| {
                let line = instr.line.map(|line| line.to_string()).unwrap_or_default();
                format!("{line:>5} {:>5} {}\\l", instr.offset, escape(&instr.text))
            })
            .collect();
        let _ = writeln!(out, "  b{name} [label=\"{label}\"];");
        edges.extend(block_edges(&flow, &listed, block.clone())?);
        for index in block {
            for edge in flow.successors(index) {
                let edge = edge?;
                if let EdgeKind::Handler(_) = edge.kind {
                    handled.insert((name, listed[edge.to].offset));
                }
            }
        }
    }
    edges.extend(
        handled
            .into_iter()
            .map(|(from, to)| format!("  b{from} -> b{to} [style=dashed];")),
    );
    for edge in edges {
        let _ = writeln!(out, "{edge}");
    }
    out.push_str("}\n");
    Ok(out)
}

/// The solid edges out of the block of `listed` over the instruction indices `block`: from
/// its last instruction, its jump (labelled `jump` when it may also go on), then going on.
fn block_edges(
    flow: &Flow,
    listed: &[Listed],
    block: Range<usize>,
) -> Result<Vec<String>, BytecodeError> {
    let from = listed[block.start].offset;
    let last = block.end - 1;
    let edges = flow.successors(last).collect::<Result<Vec<Edge>, _>>()?;
    let goes_on = edges.iter().any(|edge| edge.kind == EdgeKind::FallThrough);
    let jumps = edges.iter().filter(|edge| edge.is_jump()).map(|edge| {
        let kind = if goes_on { " [label=\"jump\"]" } else { "" };
        format!("  b{from} -> b{}{kind};", listed[edge.to].offset)
    });
    let next = edges
        .iter()
        .filter(|edge| edge.kind == EdgeKind::FallThrough)
        .map(|edge| format!("  b{from} -> b{};", listed[edge.to].offset));
    Ok(jumps.chain(next).collect())
}

/// `text` inside a DOT string.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The two local-variable indices of a superinstruction's argument (`LOAD_FAST_LOAD_FAST`
/// and the like): four bits each, the first in the high nibble.
fn local_pair(arg: u32) -> (u32, u32) {
    const BITS: u32 = 4;
    const MASK: u32 = (1 << BITS) - 1;
    (arg >> BITS, arg & MASK)
}

/// An instruction with its argument resolved. Local-variable arguments are resolved here
/// (RustPython's own display looks them up in `varnames` only and panics on cells).
fn render(op: Instruction, arg: u32, code: &CodeObject) -> String {
    let local = |index: u32| {
        let index = index as usize;
        code.varnames
            .iter()
            .chain(code.cellvars.iter())
            .chain(code.freevars.iter())
            .nth(index)
            .map_or_else(|| "?".to_owned(), |name| name.to_string())
    };
    match op {
        Instruction::LoadFast { .. }
        | Instruction::LoadFastBorrow { .. }
        | Instruction::LoadFastCheck { .. }
        | Instruction::LoadFastAndClear { .. }
        | Instruction::StoreFast { .. }
        | Instruction::DeleteFast { .. } => format!("{}({arg}, {})", opname(op), local(arg)),
        Instruction::LoadFastLoadFast { .. }
        | Instruction::LoadFastBorrowLoadFastBorrow { .. }
        | Instruction::StoreFastLoadFast { .. }
        | Instruction::StoreFastStoreFast { .. } => {
            let (first, second) = local_pair(arg);
            format!("{}({}, {})", opname(op), local(first), local(second))
        }
        _ => op
            .display(OpArg::new(arg), code)
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// The opcode's name as `dis` prints it (`JUMP_FORWARD`).
pub(super) fn opname(op: Instruction) -> String {
    let debug = format!("{op:?}");
    let name = debug.split([' ', '{']).next().unwrap_or(&debug);
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}
