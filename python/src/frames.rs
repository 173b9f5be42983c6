//! Errors that show the user's frames only: [`Frameless`], the native callable through which
//! the package's public entry points (the decorators, the import hook's `exec_module`) run
//! their Python code, and [`own_frames_dropped`], which `gotopy.compile` (native itself)
//! uses too.
//!
//! A Python frame that an exception leaves always adds itself to the traceback, re-raising
//! included, so no frame of gotopy's Python modules can take its own frames off an error on
//! its way to the user. A native call adds no frame: the user calls a [`Frameless`], whose
//! Python function's error comes back here, loses the frames of gotopy's own modules at the
//! head of its traceback, and is raised again from native code, so that the user's call is
//! the traceback's last frame (or, for a runtime error of a module the hook executes, the
//! module's frames follow it, as CPython shows them).

use pyo3::exceptions::{PySyntaxError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};

/// `function`, called so that its errors carry none of gotopy's frames: as a method too
/// (it binds as functions do). With `importing`, it is called through importlib's
/// `_call_with_frames_removed`, for a loader's `exec_module`: CPython's import statement
/// trims importlib's frames down to that call (`remove_importlib_frames` in
/// Python/import.c), so an error in a module the hook compiles or executes shows the
/// user's `import` line and then the error's own place, as for any module.
#[pyclass(frozen, dict, module = "gotopy._gotopy")]
pub struct Frameless {
    function: Py<PyAny>,
    /// The object it is bound to, as a method: the first argument.
    instance: Option<Py<PyAny>>,
    importing: bool,
}

#[pymethods]
impl Frameless {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let mut all: Vec<Bound<'_, PyAny>> = (self.instance.iter())
            .map(|one| one.bind(py).clone())
            .collect();
        all.extend(args.iter());
        if self.importing {
            let inner = Frameless {
                function: self.function.clone_ref(py),
                instance: None,
                importing: false,
            };
            all.insert(0, Bound::new(py, inner)?.into_any());
            let removed = py
                .import("importlib._bootstrap")?
                .getattr("_call_with_frames_removed")?;
            return Ok(removed.call(PyTuple::new(py, all)?, kwargs)?.unbind());
        }
        let called = self.function.bind(py).call(PyTuple::new(py, all)?, kwargs);
        called
            .map(Bound::unbind)
            .map_err(|error| own_frames_dropped(py, error))
    }

    fn __get__(
        slf: Py<Self>,
        py: Python<'_>,
        instance: Option<Bound<'_, PyAny>>,
        _owner: Option<Bound<'_, PyType>>,
    ) -> PyResult<Py<PyAny>> {
        let Some(instance) = instance.filter(|one| !one.is_none()) else {
            return Ok(slf.into_any());
        };
        let this = slf.get();
        let bound = Frameless {
            function: this.function.clone_ref(py),
            instance: Some(instance.unbind()),
            importing: this.importing,
        };
        Ok(Bound::new(py, bound)?.into_any().unbind())
    }
}

/// What `functools.update_wrapper` copies from a function to its wrapper, for `help`,
/// `inspect.signature` and `typing.get_type_hints` (its `WRAPPER_ASSIGNMENTS`; on 3.14,
/// where it copies `__annotate__`, the annotations themselves, which gotopy's modules hold
/// as strings).
const WRAPPER_ASSIGNMENTS: [&str; 6] = [
    "__module__",
    "__name__",
    "__qualname__",
    "__doc__",
    "__annotations__",
    "__type_params__",
];

/// `function` as a [`Frameless`] with its name, qualified name, module, docstring,
/// annotations, `__dict__` and `__wrapped__`, as `functools.update_wrapper` makes a
/// wrapper (done here: importing `functools` would be most of what `import gotopy` costs);
/// `importing` calls it through `_call_with_frames_removed`.
#[pyfunction]
#[pyo3(signature = (function, *, importing = false))]
pub fn frameless<'py>(
    py: Python<'py>,
    function: Bound<'py, PyAny>,
    importing: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let wrapper = Bound::new(
        py,
        Frameless {
            function: function.clone().unbind(),
            instance: None,
            importing,
        },
    )?;
    for name in WRAPPER_ASSIGNMENTS {
        // What the function does not have is left out, as `update_wrapper` leaves it.
        if let Ok(value) = function.getattr(name) {
            wrapper.setattr(name, value)?;
        }
    }
    if let Ok(own) = function.getattr("__dict__") {
        wrapper
            .getattr("__dict__")?
            .call_method1("update", (own,))?;
    }
    wrapper.setattr("__wrapped__", &function)?;
    Ok(wrapper.into_any())
}

/// `error` without the frames of gotopy's own modules at the head of its traceback. An
/// error that has nothing but those frames keeps them unless it is one gotopy raises for the
/// user (a `SyntaxError`, or a `TypeError` or `ValueError` about the arguments): any other is
/// a failure inside gotopy, whose frames a report needs.
pub(crate) fn own_frames_dropped(py: Python<'_>, error: PyErr) -> PyErr {
    let value = error.into_value(py).into_bound(py).into_any();
    let Ok(rest) = first_frame_not_own(&value) else {
        return PyErr::from_value(value);
    };
    let for_the_user = [
        py.get_type::<PySyntaxError>(),
        py.get_type::<PyTypeError>(),
        py.get_type::<PyValueError>(),
    ]
    .iter()
    .any(|kind| value.is_instance(kind).unwrap_or(false));
    if !rest.is_none() || for_the_user {
        // Only a traceback object or `None` is ever set, which CPython accepts.
        let _ = value.setattr("__traceback__", rest);
    }
    PyErr::from_value(value)
}

/// The first entry of the traceback of `error` whose frame is not one of gotopy's own
/// modules (`gotopy` and `gotopy.*`, by the frame's module name), or `None`.
fn first_frame_not_own<'py>(error: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let mut entry = error.getattr("__traceback__")?;
    while !entry.is_none() {
        let globals = entry.getattr("tb_frame")?.getattr("f_globals")?;
        let name = globals.get_item("__name__").ok();
        let name = name.and_then(|name| name.extract::<String>().ok());
        let own = name.is_some_and(|name| name == "gotopy" || name.starts_with("gotopy."));
        if !own {
            break;
        }
        entry = entry.getattr("tb_next")?;
    }
    Ok(entry)
}
