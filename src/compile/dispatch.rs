//! Lowering `while switch` and computed `goto *expr`: a balanced binary search of
//! comparisons over the value the marker left on the stack.

use rustpython_compiler::CodeObject;
use rustpython_compiler::core::bytecode::{Arg, ComparisonOperator, ConstantData, Instruction};

use super::{Additions, Dispatch, GotoAt, Rewriter, Targets, frames_left, jump_op};
use crate::bytecode::{Body, Handler, Instr, Item, Label};
use crate::diagnostic::Diagnostic;
use crate::scan::{CaseKey, FrameKind, MarkerId, MarkerKind, SwitchId};

impl Rewriter<'_> {
    /// A switch: the subject is on the stack; search the case values, then drop the
    /// subject and jump to the matching case, or to the end of the switch (the default).
    pub(super) fn lower_switch(
        &self,
        body: &mut Body,
        added: &mut Additions,
        targets: &Targets,
        dispatch: Dispatch,
        switch: SwitchId,
    ) -> Result<Vec<Item>, Diagnostic> {
        let scope = &self.module.scopes[dispatch.scope_id.0];
        let copy = dispatch.site.copy;
        let mut cases: Vec<(&CaseKey, MarkerId)> = Vec::new();
        for (index, marker) in scope.markers.iter().enumerate() {
            if let MarkerKind::Case {
                switch: Some(of),
                values,
            } = &marker.kind
                && *of == switch
            {
                cases.extend(values.iter().map(|value| (&value.value, MarkerId(index))));
            }
        }
        cases.sort_by(|a, b| python_order(a.0, b.0));
        let Some(&(end, end_handler)) = targets.ends.get(&(switch, copy)) else {
            return Err(self.broken(
                scope,
                dispatch.marker,
                "cannot find where this switch ends in the compiled code".to_owned(),
            ));
        };
        let (site, mut items) = self.dispatch_start(body, dispatch)?;
        let mut keys = Vec::new();
        for &(value, marker) in &cases {
            let Some(&(case, _)) = targets.cases.get(&(marker, copy)) else {
                return Err(self.refuse(
                    scope,
                    marker,
                    "the code generator removed this case as unreachable".to_owned(),
                    super::REMOVED_AS_UNREACHABLE,
                ));
            };
            keys.push((added.constant(constant(value)), case));
        }
        let miss = body.new_label();
        let start = body.new_label();
        items.push(Item::Label(start));
        let guard = guard_handler(body, added, &site, (start, 0), miss);
        // At a leaf the value is gone: anything raised there goes straight to the end.
        let leaf_guard = guard_handler(body, added, &site, (start, 1), end);
        let search = Search {
            site: &site,
            guard,
            miss,
            consume: Some((end, leaf_guard)),
        };
        search.emit(&keys, body, &mut items);
        items.push(Item::Label(miss));
        items.push(Item::Instr(outer(&site, Instruction::PopTop, 0, None)));
        let mut jump = outer(&site, jump_op(), 0, Some(end));
        jump.handler = end_handler;
        items.push(Item::Instr(jump));
        Ok(items)
    }

    /// `goto *expr`: the value is on the stack; search the names of the labels this goto
    /// may jump to, then drop the value and go there as `goto .name` would; any other value
    /// raises `ValueError`.
    pub(super) fn lower_computed_goto(
        &self,
        code: &CodeObject,
        body: &mut Body,
        added: &mut Additions,
        targets: &Targets,
        dispatch: Dispatch,
    ) -> Result<Vec<Item>, Diagnostic> {
        let scope = &self.module.scopes[dispatch.scope_id.0];
        let goto = scope.marker(dispatch.marker);
        let mut names: Vec<&str> = Vec::new();
        for entry in scope.labels.iter() {
            // Only the labels SPEC 4 lets this goto reach, by the checker's own rule.
            let label = scope.marker(entry.definition);
            if crate::check::jump(scope, goto, label, &entry.name).is_some()
                || !targets
                    .labels
                    .contains_key(&(entry.name.as_str(), dispatch.site.copy))
            {
                continue;
            }
            let left = frames_left(scope, goto.frame, &entry.name);
            if left
                .iter()
                .any(|&frame| scope.frame(frame).kind == FrameKind::TryFinally)
            {
                return Err(self.refuse(
                    scope,
                    dispatch.marker,
                    format!(
                        "a computed goto that may leave a `try` statement with `finally` (to \
                         label `.{}`) is not supported",
                        entry.name
                    ),
                    "its `finally` body would have to go on to a label chosen at run time; \
                     dispatch with `if`/`elif` and one `goto .name` per label, or move the \
                     computed goto out of the `try` statement",
                ));
            }
            names.push(entry.name.as_str());
        }
        names.sort_unstable();
        let (site, mut items) = self.dispatch_start(body, dispatch)?;
        let miss = body.new_label();
        let start = body.new_label();
        items.push(Item::Label(start));
        let guard = guard_handler(body, added, &site, (start, 0), miss);
        let mut stubs = Vec::new();
        let mut keys = Vec::new();
        for &name in &names {
            let stub = body.new_label();
            keys.push((
                added.constant(constant(&CaseKey::Str(name.to_owned()))),
                stub,
            ));
            stubs.push((name, stub));
        }
        let search = Search {
            site: &site,
            guard,
            miss,
            consume: None,
        };
        search.emit(&keys, body, &mut items);
        for (name, stub) in stubs {
            items.push(Item::Label(stub));
            items.push(Item::Instr(outer(&site, Instruction::PopTop, 0, None)));
            let goto = GotoAt {
                scope: dispatch.scope_id,
                marker: dispatch.marker,
                from: goto.frame,
                label: name,
            };
            let jump = self.lower_goto(code, body, added, targets, &site, dispatch.site, goto)?;
            items.extend(jump);
        }
        // raise ValueError(f"...{value!r}..."), the value still on the stack.
        let reachable: Vec<String> = names.iter().map(|name| format!(".{name}")).collect();
        let before = "goto *: no label named ";
        let after = format!(
            " that this goto can jump to in `{}` (it can reach {})",
            scope.qualname,
            if reachable.is_empty() {
                "none".to_owned()
            } else {
                reachable.join(", ")
            }
        );
        items.push(Item::Label(miss));
        let error = added.name("ValueError");
        let mut raise = if site_loads_by_name(body, dispatch) {
            vec![
                (
                    Instruction::LoadName {
                        namei: Arg::marker(),
                    },
                    error,
                ),
                (Instruction::PushNull, 0),
            ]
        } else {
            // The low bit asks for a NULL after the callable.
            vec![(
                Instruction::LoadGlobal {
                    namei: Arg::marker(),
                },
                error << 1 | 1,
            )]
        };
        raise.extend([
            (
                Instruction::LoadConst {
                    consti: Arg::marker(),
                },
                added.constant(ConstantData::Str {
                    value: before.into(),
                }),
            ),
            (Instruction::Copy { i: Arg::marker() }, 4),
            (
                Instruction::ConvertValue {
                    oparg: Arg::marker(),
                },
                2,
            ),
            (Instruction::FormatSimple, 0),
            (
                Instruction::LoadConst {
                    consti: Arg::marker(),
                },
                added.constant(ConstantData::Str {
                    value: after.as_str().into(),
                }),
            ),
            (
                Instruction::BuildString {
                    count: Arg::marker(),
                },
                3,
            ),
            (
                Instruction::Call {
                    argc: Arg::marker(),
                },
                1,
            ),
            (
                Instruction::RaiseVarargs {
                    argc: Arg::marker(),
                },
                1,
            ),
        ]);
        items.extend(
            raise
                .into_iter()
                .map(|(op, arg)| Item::Instr(outer(&site, op, arg, None))),
        );
        Ok(items)
    }

    /// The instruction whose location and handler a dispatch's instructions take (the
    /// marker's load), checking that the value is there to be searched.
    fn dispatch_start(
        &self,
        body: &Body,
        dispatch: Dispatch,
    ) -> Result<(Instr, Vec<Item>), Diagnostic> {
        let scope = &self.module.scopes[dispatch.scope_id.0];
        match &body.items[dispatch.site.at..dispatch.site.at + dispatch.site.len] {
            [Item::Instr(pop), Item::Instr(load), ..] if dispatch.site.len == 4 => {
                let mut site = load.clone();
                site.handler = pop.handler;
                Ok((site, Vec::new()))
            }
            _ => Err(self.broken(
                scope,
                dispatch.marker,
                "cannot find where the compiled code computes this value".to_owned(),
            )),
        }
    }
}

/// The handler of a search's comparisons: it drops what was raised and goes to `miss` as
/// if nothing matched. Its block goes into `cold`. It unwinds the stack to the depth at
/// `start` (where the search begins with the value on top) less `below`: 0 keeps the value
/// for `miss` to drop or report, 1 drops it too. That depth is computed on the finished
/// code, once every jump that reaches the search is in place (`Additions::unknown_depths`).
fn guard_handler(
    body: &mut Body,
    added: &mut Additions,
    site: &Instr,
    (start, below): (Label, u32),
    miss: Label,
) -> Handler {
    let target = body.new_label();
    added.cold.push(Item::Label(target));
    added
        .cold
        .push(Item::Instr(outer(site, Instruction::PopTop, 0, None)));
    added
        .cold
        .push(Item::Instr(outer(site, jump_op(), 0, Some(miss))));
    added.unknown_depths.push(UnknownDepth {
        handler: target,
        start,
        below,
    });
    Handler {
        target,
        depth: 0,
        lasti: false,
    }
}

/// A handler whose depth is the stack depth at `start` less `below`.
pub(super) struct UnknownDepth {
    pub(super) handler: Label,
    pub(super) start: Label,
    pub(super) below: u32,
}

/// An inserted instruction at `site`'s location under `site`'s handler.
fn outer(site: &Instr, op: Instruction, arg: u32, target: Option<Label>) -> Instr {
    let mut instr = Instr::like(site, op, arg, target);
    instr.handler = site.handler;
    instr
}

/// Whether the marker of a dispatch loads its name with `LOAD_NAME` (module and class
/// bodies), so that other names are loaded the same way.
fn site_loads_by_name(body: &Body, dispatch: Dispatch) -> bool {
    matches!(&body.items[dispatch.site.at + 1], Item::Instr(load)
        if matches!(load.op, Instruction::LoadName { .. }))
}

/// A case value as a constant.
fn constant(key: &CaseKey) -> ConstantData {
    match key {
        CaseKey::Int(value) => ConstantData::Integer {
            value: value.clone(),
        },
        CaseKey::Str(value) => ConstantData::Str {
            value: value.as_str().into(),
        },
        CaseKey::Bytes(value) => ConstantData::Bytes {
            value: value.clone(),
        },
        CaseKey::Invalid => unreachable!("checked: case values are valid"),
    }
}

/// How Python orders two case values of one kind: integers by value, `str` by code point
/// (which UTF-8 byte order preserves), `bytes` bytewise.
fn python_order(a: &CaseKey, b: &CaseKey) -> std::cmp::Ordering {
    match (a, b) {
        (CaseKey::Int(a), CaseKey::Int(b)) => a.cmp(b),
        (CaseKey::Str(a), CaseKey::Str(b)) => a.cmp(b),
        (CaseKey::Bytes(a), CaseKey::Bytes(b)) => a.cmp(b),
        _ => std::cmp::Ordering::Equal,
    }
}

/// A balanced binary search for the value on top of the stack among `keys` (constant
/// index, where to go when equal), sorted as Python orders them: one `<` per level, one
/// `==` at a leaf, so at most ceil(log2(n)) + 1 comparisons. The `<` comparisons copy the
/// value, under `guard`; the jumps all go forward.
struct Search<'s> {
    site: &'s Instr,
    /// Handler of the comparisons made while the value stays on the stack.
    guard: Handler,
    /// Where no match goes, the value still on the stack.
    miss: Label,
    /// For a switch, the leaf's `==` takes the value off the stack: a match jumps straight
    /// to its case, no match to the end (the default), and the comparison is under this
    /// handler, whose depth is without the value.
    consume: Option<(Label, Handler)>,
}

impl Search<'_> {
    fn emit(&self, keys: &[(u32, Label)], body: &mut Body, out: &mut Vec<Item>) {
        let instr = |op: Instruction, arg: u32, target: Option<Label>, handler: Handler| {
            let mut instr = Instr::like(self.site, op, arg, target);
            instr.handler = Some(handler);
            Item::Instr(instr)
        };
        let load = |constant: u32, handler: Handler| {
            let op = Instruction::LoadConst {
                consti: Arg::marker(),
            };
            instr(op, constant, None, handler)
        };
        let compare = |how: ComparisonOperator, handler: Handler| {
            let op = Instruction::CompareOp {
                opname: Arg::marker(),
            };
            instr(op, u32::from(how), None, handler)
        };
        let jump_if_true = |to: Label, handler: Handler| {
            let op = Instruction::PopJumpIfTrue {
                delta: Arg::marker(),
            };
            instr(op, 0, Some(to), handler)
        };
        let copy = instr(Instruction::Copy { i: Arg::marker() }, 1, None, self.guard);
        match (keys, self.consume) {
            ([], _) => out.push(instr(jump_op(), 0, Some(self.miss), self.guard)),
            ([(constant, hit)], Some((end, handler))) => out.extend([
                load(*constant, handler),
                compare(ComparisonOperator::Equal, handler),
                jump_if_true(*hit, handler),
                instr(jump_op(), 0, Some(end), handler),
            ]),
            ([(constant, hit)], None) => out.extend([
                copy,
                load(*constant, self.guard),
                compare(ComparisonOperator::Equal, self.guard),
                jump_if_true(*hit, self.guard),
                instr(jump_op(), 0, Some(self.miss), self.guard),
            ]),
            _ => {
                let middle = keys.len() / 2;
                let below = body.new_label();
                out.extend([
                    copy,
                    load(keys[middle].0, self.guard),
                    compare(ComparisonOperator::Less, self.guard),
                    jump_if_true(below, self.guard),
                ]);
                self.emit(&keys[middle..], body, out);
                out.push(Item::Label(below));
                self.emit(&keys[..middle], body, out);
            }
        }
    }
}
