//! Compiling a module with goto: check it, prepare its AST so that every label survives
//! RustPython's dead-code pass, compile it once with RustPython's code generator, then turn
//! each marker of every rewritten scope into real control flow in that scope's code object.
//!
//! Markers compile, as ordinary Python, to `LOAD name; LOAD_ATTR x; POP_TOP` with the
//! marker statement's source range, which is how they are found again in the bytecode. A
//! label becomes nothing; a goto becomes the cleanup of every frame it leaves, innermost
//! first, then a jump.
//!
//! Label survival: the code generator drops code it proves unreachable (after `return`,
//! `raise`, `break`, `continue`, or a `while True:` without `break`, or a `while` on any
//! other true constant: `"x"`, `...`, `not 0`), and a label there would vanish with it. In a
//! rewritten scope, each such statement that has a label after it is compiled as
//! `if label: <statement>` (and such a `while True:` as `while label:`), where
//! the test is the name `label` with the statement's own source range. The code generator
//! cannot fold that test, so what follows stays; the rewrite then deletes the test and its
//! conditional jump, so the statement is unconditional again and nothing of the guard is
//! left to run.
//!
//! Per code object the rewrite goes in steps over one context: `crate::rustpython::lower`.

use ruff_source_file::{SourceFile, SourceFileBuilder};
use ruff_text_size::TextRange;
use rustpython_compiler::CodeObject;
use rustpython_compiler::ast::{Mod, ModModule};
use rustpython_compiler::codegen::compile::{CompileOpts, compile_top};
use rustpython_compiler::core::Mode;

use crate::front::diagnostic::{Code, Diagnostic};
use crate::front::scan::Options;
use crate::front::source::Source;
use crate::plan::prepare::{Generator, Prepared, prepare};
use crate::plan::{Checked, REPORT, caught, on_checked, rejected};
pub use crate::plan::{CompileError, in_codegen};
use crate::rustpython::bytecode::for_each_code_mut;
use crate::rustpython::lower::Rewriter;
#[cfg(test)]
use crate::rustpython::shapes::Span;

/// A compiled module: the code object and the warnings found on the way.
pub struct Compiled {
    /// The module's code object, with its nested code objects.
    pub code: CodeObject,
    /// The warnings the checker found; never an error.
    pub warnings: Vec<Diagnostic>,
}

/// Compiles a module: checked, with every marker of every rewritten scope lowered.
///
/// A module with no marker in a rewritten scope compiles to exactly what
/// `rustpython_compiler::compile(text, Mode::Exec, path, CompileOpts::default())` gives.
pub fn compile_source(source: &Source, options: Options) -> Result<Compiled, CompileError> {
    on_checked(source, options, |checked| compile_checked(source, checked))
}

fn compile_checked(source: &Source, checked: Checked) -> Result<Compiled, CompileError> {
    let Checked {
        parsed,
        module,
        diagnostics,
        rewritten,
    } = checked;
    let mut ast = parsed.into_syntax();
    let file = SourceFileBuilder::new(source.path(), source.text()).finish();
    let prepared = if rewritten.is_empty() {
        Prepared::default()
    } else {
        prepare(&mut ast, &module, &rewritten, Generator::RustPython)
    };
    let mut code = generate(ast, &file)?;
    if !rewritten.is_empty() {
        // A panic in the rewrite is a bug in gotopy: reported as an internal error of the
        // file, never a crash of the program that embeds it.
        caught(|| {
            let rewriter = Rewriter::new(&module, &rewritten, &prepared, &file);
            let mut placed = Vec::new();
            for_each_code_mut(&mut code, &mut |code| {
                placed.extend(rewriter.rewrite(code)?);
                Ok(())
            })
            .map_err(|e| rejected(vec![e], source))?;
            rewriter
                .all_labels_placed(&placed)
                .map_err(|lost| rejected(lost, source))
        })
        .unwrap_or_else(|message| {
            Err(rejected(
                vec![
                    Diagnostic::new(
                        Code::Internal,
                        TextRange::default(),
                        format!("internal error: the rewrite panicked: {message}"),
                    )
                    .help(REPORT),
                ],
                source,
            ))
        })?;
    }
    Ok(Compiled {
        code,
        warnings: diagnostics,
    })
}

/// RustPython's code generator on the module, its errors and panics as [`CompileError::Codegen`].
fn generate(ast: ModModule, file: &SourceFile) -> Result<CodeObject, CompileError> {
    let generated = caught(|| {
        compile_top(
            Mod::Module(ast),
            file.clone(),
            Mode::Exec,
            CompileOpts::default(),
        )
    })
    .map_err(|message| {
        CompileError::Codegen(format!(
            "RustPython's code generator failed on this file (it panicked: {message})"
        ))
    })?;
    generated.map_err(|e| CompileError::Codegen(e.to_string()))
}

/// A module compiled after `prepare` and before the rewrite, with the spans of what
/// `prepare` added: the code the compile path's shapes are tested on.
#[cfg(test)]
pub(crate) struct Generated {
    pub(crate) code: CodeObject,
    pub(crate) guards: Vec<Span>,
    pub(crate) trampolines: Vec<Span>,
    pub(crate) markers: Vec<Span>,
    pub(crate) switch_ends: Vec<Span>,
}

/// `text` through the compile path up to the code generator, every scope rewritten.
#[cfg(test)]
pub(crate) fn generate_prepared(text: &str) -> Generated {
    let source = Source::new("<test>", text);
    let Ok(parsed) = crate::front::parse::parse(&source) else {
        panic!("a test snippet that does not parse: {text}");
    };
    let module = crate::front::scan::scan(
        parsed.syntax(),
        parsed.tokens(),
        &source,
        Options::new().all_scopes(true),
    );
    let file = SourceFileBuilder::new(source.path(), source.text()).finish();
    let mut ast = parsed.into_syntax();
    let rewritten: Vec<crate::front::scan::ScopeId> = (0..module.scopes.len())
        .map(crate::front::scan::ScopeId)
        .collect();
    let prepared = prepare(&mut ast, &module, &rewritten, Generator::RustPython);
    let Ok(code) = generate(ast, &file) else {
        panic!("a test snippet the code generator refuses: {text}");
    };
    let rewriter = Rewriter::new(&module, &rewritten, &prepared, &file);
    Generated {
        code,
        guards: rewriter.guards.iter().copied().collect(),
        trampolines: rewriter.trampolines.keys().copied().collect(),
        markers: rewriter.markers.keys().copied().collect(),
        switch_ends: rewriter.switch_ends.keys().copied().collect(),
    }
}
