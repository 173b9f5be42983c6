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
    /// Appends the code units of instruction `index` to `units`: its prefixes, itself and
    /// its caches (one at a time: a chain of iterators has no exact size to extend by, and
    /// this runs for each of a big function's millions of instructions).
    fn push_units(&self, index: usize, units: &mut Vec<CodeUnit>) {
        let op = self.ops[index];
        let (prefixes, low) = OpArg::new(self.args[index]).split();
        for byte in prefixes {
            units.push(CodeUnit::new(Instruction::ExtendedArg, byte));
        }
        units.push(CodeUnit::new(op, low));
        let cache = CodeUnit::new(Instruction::Cache, 0.into());
        units.extend(std::iter::repeat_n(cache, op.cache_entries()));
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
            let start = units.len();
            layout.push_units(index, &mut units);
            let size = units.len() - start;
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
    /// of jump instructions stop changing (as RustPython's assembler does: every round
    /// points every jump from the offsets of the round before, starting from the smallest
    /// sizes). Only jumps change size, so a round sums the sizes again and visits the jumps,
    /// each with the index of the instruction its label names, found once.
    pub(super) fn layout(&self) -> Result<Layout, BytecodeError> {
        let mut ops = Vec::with_capacity(self.items.len());
        let mut args = Vec::with_capacity(self.items.len());
        let mut sizes = Vec::with_capacity(self.items.len());
        // The instruction each label names (the number of instructions after the last).
        let mut named = LabelMap::default();
        let mut jumps = Vec::new();
        for item in &self.items {
            match item {
                Item::Label(label) => named.insert(*label, ops.len()),
                Item::Instr(instr) => {
                    let arg = instr.unplaced_arg();
                    if let Some(label) = instr.target {
                        jumps.push((ops.len(), label));
                    }
                    ops.push(instr.op);
                    args.push(arg);
                    sizes.push(size_of(instr.op, arg));
                }
            }
        }
        let jumps = (jumps.into_iter())
            .map(|(index, label)| {
                let &to = named
                    .get(label)
                    .ok_or(BytecodeError::UnplacedLabel(label))?;
                Ok((index, to))
            })
            .collect::<Result<Vec<(usize, usize)>, BytecodeError>>()?;
        let mut layout = Layout {
            offsets: vec![0; ops.len()],
            labels: LabelMap::default(),
            ops,
            args,
            size: 0,
        };
        loop {
            let mut offset = 0;
            for (at, size) in layout.offsets.iter_mut().zip(&sizes) {
                *at = offset;
                offset += size;
            }
            layout.size = offset;
            if !layout.resolve_jumps(&jumps, &mut sizes)? {
                break;
            }
        }
        for (label, &index) in named.iter() {
            let offset = layout.offsets.get(index).copied().unwrap_or(layout.size);
            layout.labels.insert(label, offset);
        }
        Ok(layout)
    }
}

impl Layout {
    /// Points every jump (its index, and the index of the instruction it goes to) at its
    /// target from where it is now; returns whether an instruction's size changed, so that
    /// everything has to be placed again.
    fn resolve_jumps(
        &mut self,
        jumps: &[(usize, usize)],
        sizes: &mut [usize],
    ) -> Result<bool, BytecodeError> {
        let mut changed = false;
        for &(index, to) in jumps {
            let target = self.offsets.get(to).copied().unwrap_or(self.size) as u32;
            let start = self.offsets[index] as u32;
            let after = start + sizes[index] as u32;
            let op = pointing_at(self.ops[index], start, target);
            let arg = arg_for(op, after, target).ok_or(BytecodeError::BadJumpTarget {
                at: start as usize,
                target: i64::from(target),
            })?;
            self.ops[index] = op;
            self.args[index] = arg;
            let size = size_of(op, arg);
            changed |= size != sizes[index];
            sizes[index] = size;
        }
        Ok(changed)
    }
}
