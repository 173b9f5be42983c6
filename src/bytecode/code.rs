//! Whole code objects: the tree of code objects nested in one's constants, walked or
//! rewritten in place, and the marshal format.
//!
//! It never looks inside an instruction list.

use rustpython_compiler::CodeObject;
use rustpython_compiler::core::bytecode::ConstantData;

/// Applies `f` to every code object nested in `code`'s constants, innermost first, then to
/// `code` itself. Code objects are rewritten in place: everything else about them stays.
///
/// `f` sees the code objects nested in its argument's constants as stubs (their own fields,
/// without constants), so that copying its constants copies no subtree; and each nested code
/// object is copied once (the constants of a code object can be rebuilt, not edited in
/// place). So the walk is linear in the size of the tree, however deeply it nests.
pub fn for_each_code_mut<E>(
    code: &mut CodeObject,
    f: &mut impl FnMut(&mut CodeObject) -> Result<(), E>,
) -> Result<(), E> {
    let children = if code.constants.iter().any(is_code) {
        let (constants, children) = stubbed(&code.constants, f)?;
        code.constants = constants.into_iter().collect();
        children
    } else {
        Vec::new()
    };
    f(code)?;
    put_back(code, children);
    Ok(())
}

fn is_code(constant: &ConstantData) -> bool {
    matches!(constant, ConstantData::Code { .. })
}

/// The rewritten code objects of one code object's constants, by constant index.
type Children = Vec<Option<CodeObject>>;

/// `constants` with every code object in them rewritten and replaced by its stub; the
/// rewritten code objects by constant index.
fn stubbed<E>(
    constants: &[ConstantData],
    f: &mut impl FnMut(&mut CodeObject) -> Result<(), E>,
) -> Result<(Vec<ConstantData>, Children), E> {
    let mut stubs = Vec::with_capacity(constants.len());
    let mut children = Vec::with_capacity(constants.len());
    for constant in constants {
        let ConstantData::Code { code } = constant else {
            stubs.push(constant.clone());
            children.push(None);
            continue;
        };
        let (constants, grandchildren) = stubbed(&code.constants, f)?;
        let mut child = without_constants(code);
        child.constants = constants.into_iter().collect();
        f(&mut child)?;
        put_back(&mut child, grandchildren);
        stubs.push(ConstantData::Code {
            code: Box::new(stub(&child)),
        });
        children.push(Some(child));
    }
    Ok((stubs, children))
}

/// Puts the rewritten code objects back where their stubs are.
fn put_back(code: &mut CodeObject, mut children: Children) {
    if children.iter().all(Option::is_none) {
        return;
    }
    code.constants = (code.constants.iter().enumerate())
        .map(|(index, constant)| match children.get_mut(index) {
            Some(child @ Some(_)) if is_code(constant) => ConstantData::Code {
                code: Box::new(child.take().expect("matched as present")),
            },
            _ => constant.clone(),
        })
        .collect();
}

/// A copy of `code`'s own fields, without its constants.
fn without_constants(code: &CodeObject) -> CodeObject {
    copy_of(code, true)
}

/// What the rewrite of a code object sees of one nested in its constants: its own fields
/// without its constants, code and tables (nothing reads them there; a copy of the code of
/// a function of 64,000 blocks is tens of megabytes).
fn stub(code: &CodeObject) -> CodeObject {
    copy_of(code, false)
}

/// A copy of `code`'s own fields without its constants, with its code and tables or not.
fn copy_of(code: &CodeObject, with_code: bool) -> CodeObject {
    let or_empty = |table: &[u8]| -> Box<[u8]> {
        if with_code {
            table.into()
        } else {
            Box::default()
        }
    };
    CodeObject {
        instructions: if with_code {
            code.instructions.clone()
        } else {
            Vec::new().into()
        },
        locations: if with_code {
            code.locations.clone()
        } else {
            Box::default()
        },
        flags: code.flags,
        posonlyarg_count: code.posonlyarg_count,
        arg_count: code.arg_count,
        kwonlyarg_count: code.kwonlyarg_count,
        source_path: code.source_path.clone(),
        first_line_number: code.first_line_number,
        max_stackdepth: code.max_stackdepth,
        obj_name: code.obj_name.clone(),
        qualname: code.qualname.clone(),
        constants: std::iter::empty().collect(),
        names: code.names.clone(),
        varnames: code.varnames.clone(),
        cellvars: code.cellvars.clone(),
        freevars: code.freevars.clone(),
        localspluskinds: code.localspluskinds.clone(),
        linetable: or_empty(&code.linetable),
        exceptiontable: or_empty(&code.exceptiontable),
    }
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
