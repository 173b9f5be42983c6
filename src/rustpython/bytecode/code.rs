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
/// place). So the walk is linear in the size of the tree, however deeply it nests. The
/// originals are dropped as soon as they are copied, before `f` runs on any of them, so that
/// a big function's code is alive once while it is rewritten, not twice. When `f` fails,
/// the walk stops there, with every code object back in its place (those `f` changed
/// changed).
pub fn for_each_code_mut<E>(
    code: &mut CodeObject,
    f: &mut impl FnMut(&mut CodeObject) -> Result<(), E>,
) -> Result<(), E> {
    if !code.constants.iter().any(is_code) {
        return f(code);
    }
    let (constants, children) = detached(&code.constants);
    code.constants = constants.into_iter().collect();
    rewrite_tree(code, children, f)
}

fn is_code(constant: &ConstantData) -> bool {
    matches!(constant, ConstantData::Code { .. })
}

/// A copy of a nested code object, its constants stubbed, and copies of the code objects
/// in them.
struct Detached {
    code: CodeObject,
    children: Children,
}

/// The copies of the code objects of one code object's constants, by constant index.
type Children = Vec<Option<Detached>>;

/// `constants` with every code object in them replaced by its stub, and a copy of each
/// (and of every code object nested in it), by constant index.
fn detached(constants: &[ConstantData]) -> (Vec<ConstantData>, Children) {
    let mut stubs = Vec::with_capacity(constants.len());
    let mut children = Vec::with_capacity(constants.len());
    for constant in constants {
        let ConstantData::Code { code } = constant else {
            stubs.push(constant.clone());
            children.push(None);
            continue;
        };
        let mut child = copy_of(code, true);
        let (constants, grandchildren) = detached(&code.constants);
        child.constants = constants.into_iter().collect();
        stubs.push(ConstantData::Code {
            code: Box::new(stub(&child)),
        });
        children.push(Some(Detached {
            code: child,
            children: grandchildren,
        }));
    }
    (stubs, children)
}

/// Applies `f` to the copies in `children` and everything nested in them, innermost first,
/// then to `code`, and puts the copies back in `code`'s constants, also when `f` fails.
fn rewrite_tree<E>(
    code: &mut CodeObject,
    mut children: Children,
    f: &mut impl FnMut(&mut CodeObject) -> Result<(), E>,
) -> Result<(), E> {
    let result = (children.iter_mut().flatten())
        .try_for_each(|child| {
            let grandchildren = std::mem::take(&mut child.children);
            rewrite_tree(&mut child.code, grandchildren, f)
        })
        .and_then(|()| f(code));
    put_back(code, children);
    result
}

/// Puts the rewritten code objects back where their stubs are.
fn put_back(code: &mut CodeObject, mut children: Children) {
    if children.iter().all(Option::is_none) {
        return;
    }
    code.constants = (code.constants.iter().enumerate())
        .map(|(index, constant)| match children.get_mut(index) {
            Some(child @ Some(_)) if is_code(constant) => ConstantData::Code {
                code: Box::new(child.take().expect("matched as present").code),
            },
            _ => constant.clone(),
        })
        .collect();
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
    let mut found = Vec::new();
    // Without recursion: `lambda`s nest thousands deep. The last constant is pushed first,
    // so that the first comes out first.
    let mut work = vec![code];
    while let Some(code) = work.pop() {
        found.push(code);
        work.extend(
            code.constants
                .iter()
                .rev()
                .filter_map(|constant| match constant {
                    ConstantData::Code { code } => Some(&**code),
                    _ => None,
                }),
        );
    }
    found
}

/// How many code objects nest in one another in `code`, itself included.
pub(crate) fn nesting(code: &CodeObject) -> usize {
    let mut deepest = 0;
    let mut work = vec![(code, 1)];
    while let Some((code, depth)) = work.pop() {
        deepest = deepest.max(depth);
        work.extend(code.constants.iter().filter_map(|constant| match constant {
            ConstantData::Code { code } => Some((&**code, depth + 1)),
            _ => None,
        }));
    }
    deepest
}

/// The most code objects nested in one another that RustPython's marshal (which recurses
/// into each, by up to 10 KB of stack in a debug build) reads or writes on the caller's
/// stack, 2 MiB for a new thread; deeper ones move to gotopy's deep stack.
const SHALLOW_NESTING: usize = 64;

/// A code object in RustPython's marshal format.
pub fn marshal(code: &CodeObject) -> Vec<u8> {
    let serialize = || {
        let mut bytes = Vec::new();
        rustpython_compiler::core::marshal::serialize_code(&mut bytes, code);
        bytes
    };
    if nesting(code) > SHALLOW_NESTING {
        crate::front::depth::on_big_stack(serialize)
    } else {
        serialize()
    }
}

/// The code object [`marshal`] wrote into `bytes`, all of them; `None` when they hold
/// anything else.
pub fn unmarshal(bytes: &[u8]) -> Option<CodeObject> {
    use rustpython_compiler::core::bytecode::BasicBag;
    use rustpython_compiler::core::marshal::{Cursor, deserialize_code};
    let read = || {
        let mut cursor = Cursor {
            data: bytes,
            position: 0,
        };
        let code = deserialize_code(&mut cursor, BasicBag).ok()?;
        (cursor.position == bytes.len()).then_some(code)
    };
    if may_nest_deeply(bytes) {
        crate::front::depth::on_big_stack(read)
    } else {
        read()
    }
}

/// Whether the code objects marshalled in `bytes` may nest more than [`SHALLOW_NESTING`]
/// deep, for the work that recurses into them (reading them, rewriting what was read): how
/// deeply they nest is unknown until they are read, but each takes more than
/// `SMALLEST_CODE` bytes.
pub(crate) fn may_nest_deeply(bytes: &[u8]) -> bool {
    bytes.len() > SHALLOW_NESTING * SMALLEST_CODE
}

/// Fewer bytes than any code object takes in RustPython's marshal format (its name, file
/// name, flags and counts alone take more).
const SMALLEST_CODE: usize = 32;

#[cfg(test)]
mod tests {
    use rustpython_compiler::{CompileOpts, Mode, compile};

    use super::*;

    const NESTED: &str = "def f():\n    def g():\n        return 1\n    class C:\n        def m(self):\n            return lambda: 2\n    return g, C\n\ndef h():\n    pass\n";

    fn nested() -> CodeObject {
        compile(NESTED, Mode::Exec, "<nested>", CompileOpts::default()).unwrap()
    }

    #[test]
    fn unmarshal_reads_what_marshal_wrote_and_nothing_else() {
        let bytes = marshal(&nested());
        let read = unmarshal(&bytes).expect("a code object");
        assert_eq!(marshal(&read), bytes);
        assert!(unmarshal(&bytes[..bytes.len() - 1]).is_none());
        assert!(unmarshal(&[bytes.as_slice(), b"x"].concat()).is_none());
        assert!(unmarshal(NESTED.as_bytes()).is_none());
    }

    #[test]
    fn the_walk_visits_innermost_first_and_each_sees_its_children_as_stubs() {
        let original = nested();
        let mut code = nested();
        let mut seen = Vec::new();
        let result: Result<(), ()> = for_each_code_mut(&mut code, &mut |code| {
            for constant in code.constants.iter() {
                if let ConstantData::Code { code: child } = constant {
                    assert!(child.instructions.is_empty() && child.constants.is_empty());
                }
            }
            assert!(!code.instructions.is_empty());
            seen.push(code.qualname.clone());
            Ok(())
        });
        result.unwrap();
        let expected = [
            "f.<locals>.g",
            "f.<locals>.C.m.<locals>.<lambda>",
            "f.<locals>.C.m",
        ];
        assert_eq!(seen[..3], expected);
        assert_eq!(seen[3..], ["f.<locals>.C", "f", "h", "<module>"]);
        // Nothing changed, so the tree is the compiler's again, byte for byte.
        assert_eq!(marshal(&code), marshal(&original));
    }

    #[test]
    fn a_walk_that_fails_leaves_every_code_object_in_place() {
        let original = nested();
        let mut code = nested();
        let result = for_each_code_mut(&mut code, &mut |code| {
            if &*code.qualname == "f.<locals>.C.m" {
                Err(())
            } else {
                Ok(())
            }
        });
        assert_eq!(result, Err(()));
        assert_eq!(marshal(&code), marshal(&original));
    }

    /// Code objects nested as deeply as gotopy accepts scopes (`depth::MAX_SCOPES`, only
    /// `lambda`s nest so deep) are walked, marshalled, read back, rewritten by the run-time
    /// decorator and dropped on a new thread's 2 MiB stack: the marshal, which recurses
    /// into each, moves to the deep stack. (Built by hand: RustPython's code generator takes
    /// memory quadratic in such nesting.)
    #[test]
    fn code_objects_nested_as_deeply_as_gotopy_accepts_fit_a_small_stack() {
        let depth = crate::front::depth::MAX_SCOPES + 1;
        let module = compile(
            "x = lambda: 1\n",
            Mode::Exec,
            "<deep>",
            CompileOpts::default(),
        )
        .unwrap();
        let lambda = (module.constants.iter())
            .find_map(|constant| match constant {
                ConstantData::Code { code } => Some(code),
                _ => None,
            })
            .expect("the lambda's code");
        let mut code = (**lambda).clone();
        for _ in 1..depth {
            let mut outer = (**lambda).clone();
            outer.constants = (outer.constants.iter())
                .map(|constant| match constant {
                    ConstantData::Code { .. } => unreachable!("a lambda's body has no code"),
                    other => other.clone(),
                })
                .chain([ConstantData::Code {
                    code: Box::new(code),
                }])
                .collect();
            code = outer;
        }
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                assert_eq!(nesting(&code), depth);
                assert_eq!(code_objects(&code).len(), depth);
                let bytes = marshal(&code);
                let rewritten = crate::rustpython::rewrite::rewrite_marshalled(&bytes);
                assert!(matches!(rewritten, Ok(Ok(None))), "{rewritten:?}");
                drop(code);
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
