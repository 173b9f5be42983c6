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
//! Per code object the rewrite goes in steps over one context, `Lowering`: find
//! the sites (`sites`), number the copies the code generator made of them (`copies`),
//! choose every jump target (`targets`), plan what each site becomes (`lower`, with a
//! goto's cleanup in `goto` and the searches of switches and computed gotos in
//! `dispatch`), then splice and assemble (`lower`). The patterns of RustPython's output
//! that these steps look for are in `crate::rustpython::shapes`.

use std::collections::{HashMap, HashSet};

use ruff_source_file::{PositionEncoding, SourceFile, SourceFileBuilder};
use ruff_text_size::{TextRange, TextSize};
use rustpython_compiler::CodeObject;
use rustpython_compiler::ast::{Mod, ModModule};
use rustpython_compiler::codegen::compile::{CompileOpts, compile_top};
use rustpython_compiler::core::bytecode::{Arg, Instruction};
use rustpython_compiler::core::{Mode, SourceLocation};

use crate::front::diagnostic::{Code, Diagnostic};
use crate::front::scan::{MarkerId, MarkerKind, Module, Options, Scope, ScopeId, SwitchId};
use crate::front::source::Source;
use crate::rustpython::bytecode::{Body, BytecodeError, for_each_code_mut};
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
    crate::front::depth::on_deep_stack(source, || compile_source_here(source, options))
}

fn compile_source_here(source: &Source, options: Options) -> Result<Compiled, CompileError> {
    let Checked {
        parsed,
        module,
        diagnostics,
        rewritten,
    } = checked(source, options)?;
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

mod context;
mod copies;
mod dispatch;
mod goto;
mod levels;
mod lower;
mod search;
mod sites;
mod targets;

use context::Lowering;
use copies::number_copies;
use sites::{Site, SiteKind};

use crate::plan::prepare::{Generator, Prepared, Trampoline, prepare};
use crate::plan::{Checked, checked, lost_track, refuse};
pub use crate::plan::{CompileError, in_codegen};
use crate::plan::{REPORT, caught, rejected};

/// What the rewrite looks for in every code object of one module: the spans of the markers
/// of rewritten scopes and of everything `prepare` added, as the code generator records
/// them.
struct Rewriter<'a> {
    module: &'a Module,
    file: &'a SourceFile,
    text: &'a str,
    /// Label and goto statements of rewritten scopes, by their span.
    markers: HashMap<Span, (ScopeId, MarkerId)>,
    guards: HashSet<Span>,
    /// Trampolines by the span of their instructions, and the span of each.
    trampolines: HashMap<Span, Trampoline>,
    trampoline_spans: HashMap<Trampoline, Span>,
    /// Where each switch's default starts, by span.
    switch_ends: HashMap<Span, (ScopeId, SwitchId)>,
}

impl<'a> Rewriter<'a> {
    fn new(
        module: &'a Module,
        rewritten: &[ScopeId],
        prepared: &Prepared,
        file: &'a SourceFile,
    ) -> Self {
        let code = file.to_source_code();
        let span = |range: TextRange| {
            (
                code.source_location(range.start(), PositionEncoding::Utf8),
                code.source_location(range.end(), PositionEncoding::Utf8),
            )
        };
        let mut markers = HashMap::new();
        for &id in rewritten {
            let scope = &module.scopes[id.0];
            for (index, marker) in scope.markers.iter().enumerate() {
                if let Some(name) = marker_name_range(scope, &marker.kind, marker.range.start()) {
                    markers.insert(span(name), (id, MarkerId(index)));
                }
            }
        }
        let trampolines: HashMap<Span, Trampoline> = prepared
            .trampolines
            .iter()
            .map(|&(range, trampoline)| (span(range), trampoline))
            .collect();
        Rewriter {
            module,
            file,
            text: file.source_text(),
            markers,
            guards: prepared.guards.iter().map(|&range| span(range)).collect(),
            trampoline_spans: trampolines.iter().map(|(&s, &t)| (t, s)).collect(),
            trampolines,
            switch_ends: prepared
                .switch_ends
                .iter()
                .map(|&(range, scope, switch)| (span(range), (scope, switch)))
                .collect(),
        }
    }

    /// Rewrites one code object: find the sites, pair the copies the code generator made,
    /// choose every jump target, lower each site, then splice and assemble. Gives the labels
    /// it placed.
    fn rewrite(&self, code: &mut CodeObject) -> Result<Vec<(ScopeId, MarkerId)>, Diagnostic> {
        let mut body = Body::decode(code).map_err(|e| internal(code, TextRange::default(), e))?;
        body.repair_handlers()
            .map_err(|e| internal(code, TextRange::default(), e))?;
        // Guards live only in scopes with labels, so removing them first changes nothing
        // in a code object without markers.
        sites::remove_guards(&mut body, &self.guards);
        let mut sites = self.find_sites(&body);
        if sites.is_empty() {
            return Ok(Vec::new());
        }
        number_copies(&body, &mut sites);
        // From here on the decoded body is the code: `assemble` writes the units and their
        // locations again, and a function of 64,000 blocks has tens of megabytes of them.
        // (On an error the module is refused and the code object dropped.)
        code.instructions = Vec::new().into();
        code.locations = Box::default();
        let mut lowering = Lowering::new(self, code, body, sites)?;
        lowering.choose_targets()?;
        let splices = lowering.plan()?;
        let lowered = lowering.apply(splices)?;
        lowered.assemble(code)
    }

    /// The source location of a byte offset, as the code generator records it.
    fn location(&self, offset: TextSize) -> SourceLocation {
        self.file
            .to_source_code()
            .source_location(offset, PositionEncoding::Utf8)
    }

    /// The trampoline whose instructions carry `span`.
    fn trampoline(&self, span: Span) -> Result<Trampoline, Diagnostic> {
        self.trampolines.get(&span).copied().ok_or_else(|| {
            lost_track(
                TextRange::default(),
                "a trampoline's test or tail without its trampoline",
            )
        })
    }

    /// Refuses every label of a rewritten scope that no code object held (the code
    /// generator removed it).
    fn all_labels_placed(&self, placed: &[(ScopeId, MarkerId)]) -> Result<(), Vec<Diagnostic>> {
        let placed: HashSet<&(ScopeId, MarkerId)> = placed.iter().collect();
        let mut lost = Vec::new();
        for &(scope_id, marker) in self.markers.values() {
            let scope = &self.module.scopes[scope_id.0];
            if matches!(scope.marker(marker).kind, MarkerKind::Label { .. })
                && !placed.contains(&(scope_id, marker))
            {
                lost.push(refuse(
                    scope,
                    marker,
                    "the code generator removed this label as unreachable".to_owned(),
                    REMOVED_AS_UNREACHABLE,
                ));
            }
        }
        if lost.is_empty() {
            Ok(())
        } else {
            lost.sort_by_key(|d| d.range.start());
            Err(lost)
        }
    }
}

/// The range the code generator gives all three instructions of a marker: its leading
/// name's; for a switch, what `prepare` gives it (see `expand_dispatches`). `None` for a
/// malformed marker, which is never rewritten.
fn marker_name_range(scope: &Scope, kind: &MarkerKind, start: TextSize) -> Option<TextRange> {
    let keyword = match kind {
        MarkerKind::Label { .. } => "label",
        MarkerKind::Goto { .. } | MarkerKind::ComputedGoto { .. } => "goto",
        MarkerKind::Case { .. } => "case",
        MarkerKind::Switch(switch) => {
            return Some(TextRange::new(start, scope.switch(*switch).subject.start()));
        }
        MarkerKind::Malformed { .. } => return None,
    };
    Some(TextRange::at(start, TextSize::of(keyword)))
}

/// A failure inside gotopy: something it expects of the compiled code did not hold.
fn broken(scope: &Scope, marker: MarkerId, what: String) -> Diagnostic {
    lost_track(scope.marker(marker).range, &what)
}

/// A rewrite of `code` that fails verification, reported at `range`.
fn internal(code: &CodeObject, range: TextRange, error: BytecodeError) -> Diagnostic {
    Diagnostic::new(
        Code::Internal,
        range,
        format!(
            "internal error: the rewrite of `{}` fails verification: {error}",
            code.qualname
        ),
    )
    .help(REPORT)
}

/// The help of a refusal of a label or case the code generator dropped.
const REMOVED_AS_UNREACHABLE: &str = "RustPython's code generator drops code under a condition it \
     can prove false (`if False:`, `while 0:`); move the marker out of that block, or test a \
     variable instead";

/// An unconditional jump; `assemble` chooses its direction and argument.
pub(crate) fn jump_op() -> Instruction {
    Instruction::JumpForward {
        delta: Arg::marker(),
    }
}

fn times(count: usize) -> String {
    match count {
        0 => "not at all".to_owned(),
        1 => "once".to_owned(),
        2 => "twice".to_owned(),
        n => format!("{n} times"),
    }
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
    let rewritten: Vec<ScopeId> = (0..module.scopes.len()).map(ScopeId).collect();
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
