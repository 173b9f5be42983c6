//! Lowering a goto: the cleanup of every frame it leaves, innermost first, copied from what
//! the code generator itself emits for that frame (`crate::rustpython::shapes` finds it), then the jump
//! to its label, or to the trampoline of the first `try` statement with a `finally` clause
//! that it leaves.

use std::collections::HashMap;

use rustpython_compiler::core::bytecode::Instruction;

use super::context::{Lowering, Target};
use super::{REMOVED_AS_UNREACHABLE, Site, broken, jump_op, refuse};
use crate::front::diagnostic::Diagnostic;
use crate::front::scan::{Frame, FrameId, FrameKind, MarkerId};
use crate::plan::cases::handler_name;
use crate::plan::prepare::Trampoline;
use crate::rustpython::bytecode::{Instr, Item, Label};
use crate::rustpython::shapes;

/// A goto to lower, from frame `from` on (a trampoline's goto goes on from its `try`).
#[derive(Clone, Copy)]
pub(super) struct GotoAt<'n> {
    pub(super) marker: MarkerId,
    pub(super) from: Option<FrameId>,
    /// The label it goes to.
    pub(super) label: &'n str,
}

impl Lowering<'_, '_> {
    /// The cleanup for each frame a goto leaves, from the frame `from` on, innermost first,
    /// then the jump: to its label, or to the trampoline of the first `try` statement with a
    /// `finally` clause that it leaves. `site` is the instruction whose location the
    /// inserted instructions take; `at` the site being lowered.
    pub(super) fn lower_goto(
        &mut self,
        site: &Instr,
        at: &Site,
        goto: GotoAt,
    ) -> Result<Vec<Item>, Diagnostic> {
        let scope = self.scope;
        let Some(left) = scope.frames_left(goto.from, goto.label) else {
            return Err(broken(
                scope,
                goto.marker,
                format!("label `.{}` got past the checker", goto.label),
            ));
        };
        let mut items = Vec::new();
        let mut target = self.targets.labels.get(&(goto.label, at.copy)).copied();
        for (depth, &frame_id) in left.iter().enumerate() {
            let frame = scope.frame(frame_id);
            match frame.kind {
                FrameKind::For { .. } => {
                    // Cannot raise, so it needs no handler.
                    items.push(inserted(site, Instruction::PopIter));
                }
                FrameKind::Except { is_star: false } => {
                    items.extend(self.leave_except(frame, site, goto.marker)?);
                }
                FrameKind::With { .. } => {
                    // The exits of `with a, b:` share a location and come innermost first.
                    let inner_items = left
                        .iter()
                        .take(depth)
                        .filter(|&&id| scope.frame(id).header == frame.header)
                        .count();
                    items.extend(self.leave_with(frame, site, at, goto.marker, inner_items)?);
                }
                FrameKind::TryFinally => {
                    target = Some(self.trampoline_entry(goto.marker, frame_id, at.copy)?);
                    break;
                }
                FrameKind::SwitchBody(_) => {}
                // The checker rejects gotos out of `finally` bodies and `except*` handlers.
                kind => {
                    return Err(broken(
                        scope,
                        goto.marker,
                        format!(
                            "a goto leaving {} got past the checker",
                            crate::front::check::a(kind.describe())
                        ),
                    ));
                }
            }
        }
        let Some((label, handler)) = target else {
            return Err(refuse(
                scope,
                goto.marker,
                format!(
                    "the code generator removed label `.{}` as unreachable",
                    goto.label
                ),
                REMOVED_AS_UNREACHABLE,
            ));
        };
        // The goto's line is a line event before a `with` exit's (which carries the `with`
        // statement's line) runs, as CPython puts a `NOP` before the cleanup of a `break`
        // (a search that computed gotos share has no line: each had its own).
        if let Some(Item::Instr(first)) = items.first()
            && site.line.line >= 0
            && first.line.line != site.line.line
        {
            items.insert(0, Item::Instr(Instr::line_event(site)));
        }
        // The jump belongs to the label's side: if it is interrupted (a backward jump checks
        // for signals), the handlers around the label are the ones that apply.
        let mut jump = Instr::like(site, jump_op(), 0, Some(label));
        jump.handler = handler;
        items.push(Item::Instr(jump));
        Ok(items)
    }

    /// Leaving an `except` handler's body: the stack holds the exception it replaced;
    /// `POP_EXCEPT` restores that one, then `as name` is unbound as the handler's own exit
    /// does it.
    fn leave_except(
        &self,
        frame: &Frame,
        site: &Instr,
        goto: MarkerId,
    ) -> Result<Vec<Item>, Diagnostic> {
        let mut items = vec![inserted(site, Instruction::PopExcept)];
        let header = self.rewriter.text.get(frame.header.to_std_range());
        let Some(name) = header.and_then(handler_name) else {
            return Ok(items);
        };
        let Some(unbind) = shapes::unbind_sequence(&self.body, self.code, name) else {
            return Err(broken(
                self.scope,
                goto,
                format!("cannot find how this function unbinds `{name}`"),
            ));
        };
        items.extend(
            unbind
                .into_iter()
                .map(|instr| Item::Instr(Instr::like(site, instr.op, instr.arg, None))),
        );
        Ok(items)
    }

    /// Leaving a `with` body: call `__exit__(None, None, None)` (and await it) as the `with`
    /// statement's own normal exit does, the same instructions under the same (outer)
    /// handlers; `inner` exits of the same statement come before.
    fn leave_with(
        &mut self,
        frame: &Frame,
        site: &Instr,
        at: &Site,
        goto: MarkerId,
        inner: usize,
    ) -> Result<Vec<Item>, Diagnostic> {
        let start = self.rewriter.location(frame.header.start());
        let copy = shapes::with_exit(&self.body, self.code, at.at, start, inner)
            .and_then(|exit| self.copy_region(exit, site));
        copy.ok_or_else(|| {
            broken(
                self.scope,
                goto,
                "cannot find this `with` statement's exit in the compiled code".to_owned(),
            )
        })
    }

    /// Where the trampoline of `goto` for the `try` statement `frame` starts.
    fn trampoline_entry(
        &self,
        goto: MarkerId,
        frame: FrameId,
        copy: usize,
    ) -> Result<Target, Diagnostic> {
        let trampoline = Trampoline {
            scope: self.scope_id,
            goto,
            frame,
        };
        self.rewriter
            .trampoline_spans
            .get(&trampoline)
            .and_then(|&span| self.targets.entry_if_kept(span, copy))
            .ok_or_else(|| {
                broken(
                    self.scope,
                    goto,
                    "cannot find the copy of the `finally` body in the compiled code".to_owned(),
                )
            })
    }

    /// A copy of the instructions in `region` at the location of `site`, under the same
    /// handlers, with fresh labels for those defined inside it. A handler block that jumps
    /// back into the region (the `CLEANUP_THROW` of an awaited exit) is copied too, into the
    /// cold blocks placed at the end of the code.
    fn copy_region(&mut self, region: std::ops::Range<usize>, site: &Instr) -> Option<Vec<Item>> {
        let original: Vec<Item> = self.body.items.get(region)?.to_vec();
        let mut renamed: HashMap<Label, Label> = HashMap::new();
        for item in &original {
            if let Item::Label(label) = item {
                renamed.insert(*label, self.body.new_label());
            }
        }
        let rename = |label: Label| renamed.get(&label).copied().unwrap_or(label);
        let copied = |instr: &Instr| {
            let mut new = Instr::like(site, instr.op, instr.arg, None);
            new.target = instr.target.map(rename);
            new.handler = instr.handler;
            new
        };
        let mut blocks: HashMap<Label, Label> = HashMap::new();
        let mut copy = Vec::new();
        for item in &original {
            copy.push(match item {
                Item::Label(label) => Item::Label(rename(*label)),
                Item::Instr(instr) => {
                    let mut new = copied(instr);
                    if let Some(handler) = &mut new.handler
                        && let Some(block) =
                            shapes::returning_block(&self.body, handler.target, |l| {
                                renamed.contains_key(&l)
                            })
                    {
                        handler.target = match blocks.get(&handler.target) {
                            Some(&label) => label,
                            None => {
                                let label = self.body.new_label();
                                let cold = &mut self.added.cold;
                                cold.push(Item::Label(label));
                                cold.extend(block.iter().map(|instr| Item::Instr(copied(instr))));
                                blocks.insert(handler.target, label);
                                label
                            }
                        };
                    }
                    Item::Instr(new)
                }
            });
        }
        Some(copy)
    }
}

/// An instruction gotopy inserts at `site`'s location, with no argument and no handler.
fn inserted(site: &Instr, op: Instruction) -> Item {
    Item::Instr(Instr::like(site, op, 0, None))
}
