//! The last step before assembling, shared by the lowering and the rewrite without source:
//! each inserted jump takes the handler of the instruction it jumps to.

use super::LowerError;
use crate::cpython::bytecode::{Body, Indices, Instr, Item, Label};

/// Puts each jump gotopy inserted under the handler of the instruction it jumps to: a
/// backward jump can be interrupted (a signal, another thread), and the handlers around the
/// label are the ones that apply there.
pub(crate) fn jumps_on_their_labels_side(body: &mut Body) -> Result<(), LowerError> {
    let is_jump = |body: &Body, instr: &Instr| {
        instr.inserted && instr.target.is_some() && body.name(instr.op).starts_with("JUMP")
    };
    let mut jumps = Vec::new();
    for (at, item) in body.items.iter().enumerate() {
        if let Item::Instr(instr) = item
            && is_jump(body, instr)
        {
            jumps.push(at);
        }
    }
    for &at in &jumps {
        if let Some(instr) = body.items[at].instr_mut() {
            instr.handler = None;
        }
    }
    // The item index of each instruction, and the instruction index each label names.
    let mut item_of = Vec::new();
    let mut at_label: Indices<Label> = Indices::new();
    for (at, item) in body.items.iter().enumerate() {
        match item {
            Item::Label(label) => {
                at_label.insert(*label, item_of.len());
            }
            Item::Instr(_) => item_of.push(at),
        }
    }
    // The depths are found only when a target has a handler: code without handlers
    // where its jumps land (most generated code) needs none.
    let mut depths: Option<Vec<Option<i64>>> = None;
    // In order, each jump reading its target's handler as it is then.
    for at in jumps {
        let Some(target) = body.items[at].instr().and_then(|instr| instr.target) else {
            continue;
        };
        let Some(index) = at_label.get(target) else {
            continue;
        };
        let Some(&target_at) = item_of.get(index) else {
            continue;
        };
        let Some(handler) = body.items[target_at]
            .instr()
            .and_then(|instr| instr.handler)
        else {
            continue;
        };
        let depths = match &mut depths {
            Some(depths) => depths,
            None => depths.insert(body.depths(&[], None)?.before),
        };
        // Not a handler that only covers the label's instruction after its stack shrank.
        if let Some(depth) = depths[index]
            && i64::from(handler.depth) <= depth
            && let Some(jump) = body.items[at].instr_mut()
        {
            jump.handler = Some(handler);
        }
    }
    Ok(())
}
