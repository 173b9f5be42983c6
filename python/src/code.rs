//! Code objects between Python and `gotopy::cpython`: what the backend reads of one
//! ([`read`], [`read_tables`]), the tree of a module's code objects ([`Tree`]), and a code object rebuilt with
//! what a rewrite gave ([`replace`]). No decision about bytecode is made here.

use std::collections::{HashMap, HashSet};

use gotopy::cpython::code::{Code, Constant, Lowered, SEARCH_FILE, SEARCH_FUNCTION};
use gotopy::cpython::module::Node;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyString, PyTuple};

/// `types.CodeType`.
pub fn code_type(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    py.import("types")?.getattr("CodeType")
}

/// What the bytecode layer reads of the code object `code`: its three tables, its first
/// line and its stack size; the rest of [`Code`] is left empty (names and constants are
/// copied only for a rewrite, by [`read`]).
pub fn read_tables(code: &Bound<'_, PyAny>) -> PyResult<Code> {
    let bytes = |name: &str| -> PyResult<Vec<u8>> { code.getattr(name)?.extract::<Vec<u8>>() };
    Ok(Code {
        code: bytes("co_code")?,
        exceptions: bytes("co_exceptiontable")?,
        locations: bytes("co_linetable")?,
        first_line: code.getattr("co_firstlineno")?.extract()?,
        stacksize: code.getattr("co_stacksize")?.extract()?,
        ..Code::default()
    })
}

/// What the backend reads of the code object `code` (not its nested ones).
pub fn read(code: &Bound<'_, PyAny>) -> PyResult<Code> {
    let strings = |name: &str| -> PyResult<Vec<String>> {
        let tuple = code.getattr(name)?;
        let tuple = tuple.cast::<PyTuple>()?;
        tuple.iter().map(|item| item.extract::<String>()).collect()
    };
    let consts = code.getattr("co_consts")?;
    let mut read = Code {
        names: strings("co_names")?,
        constants: consts
            .cast::<PyTuple>()?
            .iter()
            .map(|c| constant(&c))
            .collect::<PyResult<_>>()?,
        flags: code.getattr("co_flags")?.extract()?,
        argcount: code.getattr("co_argcount")?.extract()?,
        kwonlyargcount: code.getattr("co_kwonlyargcount")?.extract()?,
        qualname: code.getattr("co_qualname")?.extract()?,
        ..read_tables(code)?
    };
    read.set_locals(
        strings("co_varnames")?,
        strings("co_cellvars")?,
        strings("co_freevars")?,
    );
    Ok(read)
}

/// A constant as the backend tells them apart.
fn constant(value: &Bound<'_, PyAny>) -> PyResult<Constant> {
    if value.is_none() {
        return Ok(Constant::None);
    }
    if value.is_exact_instance_of::<PyInt>() {
        return Ok(match value.extract::<i64>() {
            Ok(small) => Constant::int(small),
            Err(_) => Constant::Int(
                (value.py().import("builtins")?.getattr("format")?)
                    .call1((value, "x"))?
                    .extract()?,
            ),
        });
    }
    if value.is_exact_instance_of::<PyString>() {
        // A `str` that is not valid Unicode (a lone surrogate) equals no case value.
        return Ok(value
            .extract::<String>()
            .map_or(Constant::Other, Constant::Str));
    }
    if value.is_exact_instance_of::<PyBytes>() {
        return Ok(Constant::Bytes(value.extract()?));
    }
    Ok(Constant::Other)
}

/// A constant the backend added, as a Python object.
fn to_python<'py>(py: Python<'py>, value: &Constant) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Constant::Int(hex) => py.import("builtins")?.getattr("int")?.call1((hex, 16))?,
        Constant::Str(text) => PyString::new(py, text).into_any(),
        Constant::Bytes(bytes) => PyBytes::new(py, bytes).into_any(),
        Constant::Bool(value) => PyBool::new(py, *value).to_owned().into_any(),
        Constant::Tuple(items) => {
            let items =
                (items.iter().map(|item| to_python(py, item))).collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)?.into_any()
        }
        Constant::SearchFunction(text) => search_function(py, text)?,
        Constant::None | Constant::Other => py.None().into_bound(py),
    })
}

/// The code object of the function `search` that `text` defines, compiled by this
/// interpreter as `gotopy compile --python` compiles it (`src/cli/standin.py`).
fn search_function<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let builtins = py.import("builtins")?;
    let module = builtins
        .getattr("compile")?
        .call1((text, SEARCH_FILE, "exec", 0, true))?;
    let consts = module.getattr("co_consts")?;
    for constant in consts.cast::<PyTuple>()?.iter() {
        if constant.is_instance(&code_type(py)?)?
            && constant.getattr("co_name")?.extract::<String>()? == SEARCH_FUNCTION
        {
            return Ok(constant);
        }
    }
    Err(pyo3::exceptions::PySystemError::new_err(
        "gotopy: the search function of computed gotos did not compile",
    ))
}

/// `code` with the tables, stack size, added constants and added names of `lowered`.
pub fn replace<'py>(code: &Bound<'py, PyAny>, lowered: &Lowered) -> PyResult<Bound<'py, PyAny>> {
    let py = code.py();
    let mut consts: Vec<Bound<'py, PyAny>> = code
        .getattr("co_consts")?
        .cast::<PyTuple>()?
        .iter()
        .collect();
    for added in &lowered.added {
        consts.push(to_python(py, added)?);
    }
    let changes = PyDict::new(py);
    changes.set_item("co_code", PyBytes::new(py, &lowered.code))?;
    changes.set_item("co_consts", PyTuple::new(py, consts)?)?;
    if !lowered.names.is_empty() {
        let mut names: Vec<Bound<'py, PyAny>> = code
            .getattr("co_names")?
            .cast::<PyTuple>()?
            .iter()
            .collect();
        let added = lowered.names.iter().map(|name| PyString::new(py, name));
        names.extend(added.map(Bound::into_any));
        changes.set_item("co_names", PyTuple::new(py, names)?)?;
    }
    changes.set_item("co_linetable", PyBytes::new(py, &lowered.locations))?;
    changes.set_item("co_exceptiontable", PyBytes::new(py, &lowered.exceptions))?;
    changes.set_item("co_stacksize", lowered.stacksize)?;
    code.call_method("replace", (), Some(&changes))
}

/// A module's code objects in pre-order, as `gotopy::cpython::module` sees them, with the
/// objects themselves.
pub struct Tree<'py> {
    /// The tree as the backend sees it.
    pub nodes: Vec<Node>,
    /// The code object of each node.
    pub objects: Vec<Bound<'py, PyAny>>,
}

impl<'py> Tree<'py> {
    /// The tree of `module`.
    pub fn of(module: &Bound<'py, PyAny>) -> PyResult<Tree<'py>> {
        let code_type = code_type(module.py())?;
        let mut tree = Tree {
            nodes: Vec::new(),
            objects: Vec::new(),
        };
        let mut work = vec![(module.clone(), None)];
        while let Some((code, parent)) = work.pop() {
            let index = tree.nodes.len();
            tree.nodes.push(Node {
                parent,
                qualname: code.getattr("co_qualname")?.extract()?,
            });
            let consts = code.getattr("co_consts")?;
            let nested: Vec<Bound<'py, PyAny>> = consts
                .cast::<PyTuple>()?
                .iter()
                .filter(|c| c.is_instance(&code_type).unwrap_or(false))
                .collect();
            // Reversed onto the stack, so that the first constant comes out first.
            work.extend(nested.into_iter().rev().map(|c| (c, Some(index))));
            tree.objects.push(code);
        }
        Ok(tree)
    }

    /// The module with each node of `new` replaced by its new code object, and every code
    /// object on the way to one rebuilt around it; and the replacements as they are placed
    /// in the tree (a copy, where something nested in one was replaced too).
    pub fn rebuild(
        &self,
        new: HashMap<usize, Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyAny>, Vec<Bound<'py, PyAny>>)> {
        let mut along: HashSet<usize> = HashSet::new();
        for &index in new.keys() {
            let mut at = Some(index);
            while let Some(node) = at {
                if !along.insert(node) {
                    break;
                }
                at = self.nodes[node].parent;
            }
        }
        let by_pointer: HashMap<usize, usize> = (self.objects.iter().enumerate())
            .map(|(index, object)| (object.as_ptr() as usize, index))
            .collect();
        let code_type = code_type(self.objects[0].py())?;
        let mut placed = Vec::new();
        let module = self.rebuild_node(0, &new, &along, &by_pointer, &code_type, &mut placed)?;
        Ok((module, placed))
    }

    fn rebuild_node(
        &self,
        index: usize,
        new: &HashMap<usize, Bound<'py, PyAny>>,
        along: &HashSet<usize>,
        by_pointer: &HashMap<usize, usize>,
        code_type: &Bound<'py, PyAny>,
        placed: &mut Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let original = &self.objects[index];
        if !along.contains(&index) {
            return Ok(original.clone());
        }
        let replaced = new.get(&index);
        let mut code = replaced.unwrap_or(original).clone();
        let consts: Vec<Bound<'py, PyAny>> = code
            .getattr("co_consts")?
            .cast::<PyTuple>()?
            .iter()
            .collect();
        let mut changed = false;
        let mut rebuilt = Vec::with_capacity(consts.len());
        for constant in consts {
            let nested = by_pointer.get(&(constant.as_ptr() as usize)).copied();
            match nested {
                Some(child) if constant.is_instance(code_type)? => {
                    let new_child =
                        self.rebuild_node(child, new, along, by_pointer, code_type, placed)?;
                    changed |= !new_child.is(&constant);
                    rebuilt.push(new_child);
                }
                _ => rebuilt.push(constant),
            }
        }
        if changed {
            let changes = PyDict::new(code.py());
            changes.set_item("co_consts", PyTuple::new(code.py(), rebuilt)?)?;
            code = code.call_method("replace", (), Some(&changes))?;
        }
        if replaced.is_some() {
            placed.push(code.clone());
        }
        Ok(code)
    }
}
