//! How a jump's argument encodes its target: which opcodes jump, in which direction, and
//! from where the distance counts. Decoding turns arguments into targets with
//! [`target_of`]; the assembler turns targets into arguments with [`arg_for`] and picks the
//! direction with [`pointing_at`]. Nothing else knows the encoding.
//!
//! Offsets here are in code units; this file computes distances from offsets it is given
//! and never lays anything out.

use rustpython_compiler::core::bytecode::{Arg, Instruction, InstructionMetadata};

/// Instructions whose argument is a relative jump, and the direction of the jump.
enum Jump {
    Forward,
    Backward,
    /// `END_ASYNC_FOR` points back at the `SEND` five units before its target.
    EndAsyncFor,
}

/// The distance from `END_ASYNC_FOR`'s target to the `END_SEND` it names.
const END_SEND_OFFSET: u32 = 5;

fn jump_kind(op: Instruction) -> Option<Jump> {
    match op {
        Instruction::EndAsyncFor => Some(Jump::EndAsyncFor),
        Instruction::JumpBackward { .. } | Instruction::JumpBackwardNoInterrupt { .. } => {
            Some(Jump::Backward)
        }
        _ if op.label_arg().is_some() => Some(Jump::Forward),
        _ => None,
    }
}

/// Where `op` with argument `arg` lands, when the instruction (its caches included) ends
/// at `after`; `None` when `op` does not jump. The result can be out of the code: the
/// caller checks that it lands on an instruction.
pub(super) fn target_of(op: Instruction, arg: u32, after: usize) -> Option<i64> {
    let (after, arg) = (after as i64, i64::from(arg));
    Some(match jump_kind(op)? {
        Jump::Forward => after + arg,
        Jump::Backward => after - arg,
        Jump::EndAsyncFor => after - arg - i64::from(END_SEND_OFFSET),
    })
}

/// The argument that makes `op`, ending at `after`, land at `target`; `None` when `op`
/// cannot reach it in its direction. An instruction that is no jump counts forward.
pub(super) fn arg_for(op: Instruction, after: u32, target: u32) -> Option<u32> {
    match jump_kind(op) {
        Some(Jump::Backward) => after.checked_sub(target),
        Some(Jump::EndAsyncFor) => after.checked_sub(target.checked_add(END_SEND_OFFSET)?),
        _ => target.checked_sub(after),
    }
}

/// `op` turned to point the way a jump from `start` to `target` goes: an unconditional
/// jump is `JUMP_FORWARD` or `JUMP_BACKWARD` by direction; other opcodes stay as they are.
pub(super) fn pointing_at(op: Instruction, start: u32, target: u32) -> Instruction {
    match op {
        Instruction::JumpForward { .. } if target <= start => Instruction::JumpBackward {
            delta: Arg::marker(),
        },
        Instruction::JumpBackward { .. } | Instruction::JumpBackwardNoInterrupt { .. }
            if target > start =>
        {
            Instruction::JumpForward {
                delta: Arg::marker(),
            }
        }
        op => op,
    }
}
