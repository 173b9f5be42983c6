//! Whole code objects: the tree of code objects nested in one's constants, walked or
//! rewritten in place, and the marshal format.
//!
//! It never looks inside an instruction list.

use rustpython_compiler::CodeObject;
use rustpython_compiler::core::bytecode::ConstantData;

/// Applies `f` to every code object nested in `code`'s constants, innermost first, then to
/// `code` itself. Code objects are rewritten in place: everything else about them stays.
pub fn for_each_code_mut<E>(
    code: &mut CodeObject,
    f: &mut impl FnMut(&mut CodeObject) -> Result<(), E>,
) -> Result<(), E> {
    if code
        .constants
        .iter()
        .any(|constant| matches!(constant, ConstantData::Code { .. }))
    {
        let mut constants: Vec<ConstantData> = code.constants.iter().cloned().collect();
        for constant in &mut constants {
            if let ConstantData::Code { code: inner } = constant {
                for_each_code_mut(inner, f)?;
            }
        }
        code.constants = constants.into_iter().collect();
    }
    f(code)
}

/// Every code object in `code`, itself first, depth first.
pub fn code_objects(code: &CodeObject) -> Vec<&CodeObject> {
    let mut found = vec![code];
    for constant in code.constants.iter() {
        if let ConstantData::Code { code } = constant {
            found.extend(code_objects(code));
        }
    }
    found
}

/// A code object in RustPython's marshal format.
pub fn marshal(code: &CodeObject) -> Vec<u8> {
    let mut bytes = Vec::new();
    rustpython_compiler::core::marshal::serialize_code(&mut bytes, code);
    bytes
}
