//! The rewrite without source: `goto .name` and `label .name` in a code object CPython
//! compiled without gotopy (a function made by `exec`, whose source gotopy cannot read),
//! where the bytecode alone proves it right: the label is there once (CPython keeps only
//! reachable labels), the goto and its label are under the same exception handler (so no
//! `try`, `with` or `except` is entered or left), the goto enters no `for` loop, and every
//! stack slot it has above its label's depth belongs to a `for` loop it leaves. Anything
//! else is refused; the decorator says to compile the source through gotopy instead.

use std::collections::{HashMap, HashSet};

use super::bytecode::{Body, InstrId, Item, Label};
use super::code::{Code, Lowered};
use super::lower::{LowerError, jumps_on_their_labels_side, same_block};
use super::markers::MARKERS;
use super::shapes::Shapes;

/// The help of every refusal of the rewrite without source.
pub const NO_SOURCE: &str = "compile its source with gotopy.compile(text, filename, \"exec\") in place of \
     compile(), or import it through gotopy.install(): from the source, gotopy rewrites every goto";

/// Lowers the gotos and labels of `code`, or says why the bytecode does not prove it right.
pub fn lower(shapes: &'static Shapes, code: &Code) -> Result<Lowered, LowerError> {
    let mut body = Body::decode(shapes, code.raw())?;
    let refuse = |message: String, at| LowerError::Refused {
        message,
        at,
        help: NO_SOURCE,
    };
    let name_of = |op: u8, arg: u32| shapes.name_of(op, arg, &code.names, &code.locals);
    let instrs: Vec<_> = body.instrs().cloned().collect();
    // (word, name, the load) of every `goto .name` and `label .name`.
    let mut markers: Vec<(&str, &str, usize)> = Vec::new();
    let mut used: HashSet<InstrId> = HashSet::new();
    for (index, window) in instrs.windows(3).enumerate() {
        let [load, attr, pop] = window else { continue };
        let word = if shapes.is_name_load(load.op) {
            name_of(load.op, load.arg)
        } else {
            None
        };
        if let Some(word @ ("goto" | "label")) = word
            && shapes.is(attr.op, "LOAD_ATTR")
            && shapes.is(pop.op, "POP_TOP")
        {
            markers.push((word, name_of(attr.op, attr.arg).unwrap_or(""), index));
            used.extend([load.id, attr.id, pop.id]);
        }
    }
    for instr in &instrs {
        if shapes.is_name_load(instr.op)
            && !used.contains(&instr.id)
            && let Some(word) = name_of(instr.op, instr.arg).filter(|name| MARKERS.contains(name))
        {
            return Err(refuse(
                format!(
                    "`{word}` used other than as `goto .name` or `label .name`: without the source \
                     gotopy rewrites only those"
                ),
                instr.position,
            ));
        }
    }
    let mut labels: HashMap<&str, usize> = HashMap::new();
    for &(word, name, load) in &markers {
        if word != "label" {
            continue;
        }
        let first = *labels.entry(name).or_insert(load);
        // CPython 3.12+ copies a small exit block into its predecessors: the same source,
        // the same code after it. A label written twice is neither.
        if first != load
            && (instrs[first].position != instrs[load].position
                || !same_block(|at| instrs.get(at), shapes, load + 3, first + 3, true))
        {
            return Err(refuse(
                format!("label `.{name}` is defined twice"),
                instrs[load].position,
            ));
        }
    }
    let stack = body.depths(&[], None)?.before;
    let at_label = body.label_indices();
    let loops: Vec<(usize, usize)> = (instrs.iter().enumerate())
        .filter(|(_, instr)| shapes.is(instr.op, "FOR_ITER"))
        .filter_map(|(index, instr)| Some((index, at_label.get(instr.target?)?)))
        .collect();
    let mut pops: HashMap<usize, u32> = HashMap::new();
    for &(word, name, site) in &markers {
        if word != "goto" {
            continue;
        }
        let load = &instrs[site];
        let Some(&there) = labels.get(name) else {
            return Err(refuse(
                format!(
                    "label `.{name}` is not in the compiled code (it is not defined, or CPython \
                     removed it as unreachable, which only compiling the source through gotopy \
                     prevents)"
                ),
                load.position,
            ));
        };
        let label = &instrs[there];
        let (Some(depth), Some(target_depth)) = (stack[site], stack[there]) else {
            return Err(refuse(
                format!("`goto .{name}` or its label is unreachable code"),
                load.position,
            ));
        };
        if load.handler != label.handler {
            return Err(refuse(
                format!(
                    "`goto .{name}` leaves or enters a `try`, `with` or `except` block: without \
                     the source gotopy rewrites only gotos that leave nothing but `for` loops"
                ),
                load.position,
            ));
        }
        let mut leaving = 0;
        for &(start, end) in &loops {
            let inside_goto = start < site && site < end;
            let inside_label = start < there && there < end;
            if inside_label && !inside_goto {
                return Err(refuse(
                    format!("`goto .{name}` jumps into a `for` body"),
                    load.position,
                ));
            }
            leaving += i64::from(inside_goto && !inside_label);
        }
        let extra = depth - target_depth;
        if extra != leaving * i64::from(shapes.for_slots) {
            return Err(refuse(
                format!("cannot prove what `goto .{name}` leaves on the stack"),
                load.position,
            ));
        }
        pops.insert(site, extra as u32);
    }
    let pop_top = shapes.op("POP_TOP").unwrap_or_default();
    let mut targets: HashMap<&str, Label> = HashMap::new();
    let mut placed: HashSet<&str> = HashSet::new();
    let by_load: HashMap<InstrId, (&str, &str, usize)> = markers
        .iter()
        .map(|&(word, name, load)| (instrs[load].id, (word, name, load)))
        .collect();
    let items = std::mem::take(&mut body.items);
    let mut out = Vec::with_capacity(items.len());
    let mut index = 0;
    while index < items.len() {
        let marker = items[index]
            .instr()
            .filter(|instr| used.contains(&instr.id))
            .and_then(|instr| by_load.get(&instr.id));
        let Some(&(word, name, load)) = marker else {
            out.push(items[index].clone());
            index += 1;
            continue;
        };
        let site = &instrs[load];
        if word == "label" {
            let label = if placed.contains(name) {
                body.new_label()
            } else {
                match targets.get(name) {
                    Some(&label) => label,
                    None => {
                        let label = body.new_label();
                        targets.insert(name, label);
                        label
                    }
                }
            };
            out.push(Item::Label(label));
            // Reaching a label is a line event, as in the lowering with source.
            out.push(Item::Instr(body.like(site, shapes.nop, 0, None)));
            placed.insert(name);
        } else {
            for _ in 0..pops.get(&load).copied().unwrap_or(0) {
                out.push(Item::Instr(body.new_instr(pop_top, 0, None, site.position)));
            }
            let target = match targets.get(name) {
                Some(&label) => label,
                None => {
                    let label = body.new_label();
                    targets.insert(name, label);
                    label
                }
            };
            let jump = body.like(site, shapes.jump_forward, 0, Some(target));
            out.push(Item::Instr(jump));
        }
        index += 3;
    }
    body.items = out;
    jumps_on_their_labels_side(&mut body)?;
    if shapes.unchecked_local_loads {
        super::lower::check_local_loads(&mut body, code)?;
    }
    let assembled = body.assemble()?;
    Ok(Lowered {
        code: assembled.code,
        locations: assembled.locations,
        exceptions: assembled.exceptions,
        stacksize: assembled.depth.max(code.stacksize),
        added: Vec::new(),
        names: Vec::new(),
    })
}
