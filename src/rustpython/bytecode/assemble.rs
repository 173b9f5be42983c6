//! Assembling: a [`Body`] laid out and stored in a [`CodeObject`] the way RustPython's code
//! generator does it: relative jumps whose direction follows the target, minimal
//! `EXTENDED_ARG` prefixes (sizes recomputed until they settle), cache units, the location
//! and line tables, the exception table and the maximum stack depth, after the verifier has
//! passed the list.
//!
//! This is the only place that computes offsets ([`Layout`]); the listing, the verifier and
//! the exception table read them from here.

use rustpython_compiler::CodeObject;
use rustpython_compiler::core::bytecode::{CodeUnit, CodeUnits, Instruction, OpArg};

use super::jump::{arg_for, pointing_at};
use super::line_table::encode_line_table;
use super::{Body, BytecodeError, Item, LabelMap};

/// Where everything goes.
pub(super) struct Layout {
    /// The offset of each instruction, in code units.
    pub(super) offsets: Vec<usize>,
    /// The offset of each placed label.
    pub(super) labels: LabelMap<usize>,
    /// Opcodes, with jump directions resolved.
    pub(super) ops: Vec<Instruction>,
    /// Arguments, with jump arguments resolved.
    pub(super) args: Vec<u32>,
    /// The length of the code, in code units.
    pub(super) size: usize,
}

impl Layout {
    /// The code units of instruction `index`: its prefixes, itself and its caches.
    fn units(&self, index: usize) -> impl Iterator<Item = CodeUnit> + use<> {
        let op = self.ops[index];
        let (prefixes, low) = OpArg::new(self.args[index]).split();
        prefixes
            .map(|byte| CodeUnit::new(Instruction::ExtendedArg, byte))
            .chain([CodeUnit::new(op, low)])
            .chain(std::iter::repeat_n(
                CodeUnit::new(Instruction::Cache, 0.into()),
                op.cache_entries(),
            ))
    }
}

/// The size of an instruction in code units: its `EXTENDED_ARG` prefixes, itself and its
/// caches.
fn size_of(op: Instruction, arg: u32) -> usize {
    OpArg::new(arg).instr_size() + op.cache_entries()
}

impl Body {
    /// Lays the instructions out and stores them, their locations, line table, exception
    /// table and maximum stack depth in `code`, after verifying them.
    pub fn assemble(&self, code: &mut CodeObject) -> Result<(), BytecodeError> {
        let layout = self.layout()?;
        let max_depth = self.verify(&layout)?;
        let mut units = Vec::with_capacity(layout.size);
        let mut locations = Vec::with_capacity(layout.size);
        let mut lines = Vec::with_capacity(layout.size);
        for (index, instr) in self.instrs().enumerate() {
            debug_assert_eq!(units.len(), layout.offsets[index]);
            let size = size_of(layout.ops[index], layout.args[index]);
            units.extend(layout.units(index));
            locations.extend(std::iter::repeat_n(instr.location, size));
            lines.extend(std::iter::repeat_n(instr.line, size));
        }
        code.instructions = CodeUnits::from(units);
        code.locations = locations.into_boxed_slice();
        code.linetable = encode_line_table(&lines, self.first_line);
        code.exceptiontable = self.exception_table(&layout)?;
        code.max_stackdepth = max_depth.max(self.compiled_depth);
        Ok(())
    }

    /// Offsets of every instruction and label, with jump arguments, iterated until the sizes
    /// of jump instructions stop changing (as RustPython's assembler does).
    pub(super) fn layout(&self) -> Result<Layout, BytecodeError> {
        let mut layout = Layout {
            offsets: Vec::new(),
            labels: LabelMap::default(),
            ops: self.instrs().map(|instr| instr.op).collect(),
            args: self
                .instrs()
                .map(|instr| if instr.target.is_some() { 0 } else { instr.arg })
                .collect(),
            size: 0,
        };
        loop {
            self.place(&mut layout);
            if !self.resolve_jumps(&mut layout)? {
                return Ok(layout);
            }
        }
    }

    /// The offsets of the instructions and labels, for the sizes the arguments have now.
    fn place(&self, layout: &mut Layout) {
        layout.offsets.clear();
        layout.labels.clear();
        let mut offset = 0;
        let mut index = 0;
        for item in &self.items {
            match item {
                Item::Label(label) => {
                    layout.labels.insert(*label, offset);
                }
                Item::Instr(_) => {
                    layout.offsets.push(offset);
                    offset += size_of(layout.ops[index], layout.args[index]);
                    index += 1;
                }
            }
        }
        layout.size = offset;
    }

    /// Points every jump at its label from where it is now; returns whether an
    /// instruction's size changed, so that everything has to be placed again.
    fn resolve_jumps(&self, layout: &mut Layout) -> Result<bool, BytecodeError> {
        let mut changed = false;
        for (index, instr) in self.instrs().enumerate() {
            let Some(label) = instr.target else { continue };
            let target = *layout
                .labels
                .get(label)
                .ok_or(BytecodeError::UnplacedLabel(label))? as u32;
            let start = layout.offsets[index] as u32;
            let old = layout.ops[index];
            let old_size = OpArg::new(layout.args[index]).instr_size() as u32;
            let after = start + old_size + old.cache_entries() as u32;
            let op = pointing_at(old, start, target);
            changed |= op.cache_entries() != old.cache_entries();
            layout.ops[index] = op;
            let arg = arg_for(op, after, target).ok_or(BytecodeError::BadJumpTarget {
                at: start as usize,
                target: i64::from(target),
            })?;
            changed |= OpArg::new(arg).instr_size() as u32 != old_size;
            layout.args[index] = arg;
        }
        Ok(changed)
    }
}
