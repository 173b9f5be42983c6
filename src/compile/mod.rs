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
//! `raise`, `break`, `continue`, or a `while True:` without `break`), and a label there would
//! vanish with it. In a rewritten scope, each such statement that has a label after it is
//! compiled as `if label: <statement>` (and such a `while True:` as `while label:`), where
//! the test is the name `label` with the statement's own source range. The code generator
//! cannot fold that test, so what follows stays; the rewrite then deletes the test and its
//! conditional jump, so the statement is unconditional again and nothing of the guard is
//! left to run.

use std::collections::{HashMap, HashSet};

use ruff_source_file::{PositionEncoding, SourceFile, SourceFileBuilder};
use ruff_text_size::{TextRange, TextSize};
use rustpython_compiler::CodeObject;
use rustpython_compiler::ast::{Mod, ModModule};
use rustpython_compiler::codegen::compile::{CompileOpts, compile_top};
use rustpython_compiler::core::bytecode::{ConstantData, Instruction};
use rustpython_compiler::core::{Mode, SourceLocation};

use crate::bytecode::{Body, BytecodeError, Handler, Instr, Item, Label, for_each_code_mut};
use crate::diagnostic::{Code, Diagnostic};
use crate::scan::{
    FrameId, FrameKind, MarkerId, MarkerKind, Module, Options, Scope, ScopeId, SwitchId,
};
use crate::source::{Location, Source};

/// Why a module could not be compiled.
///
/// Shown with `Display`, a rejection is its first error with its place and how many errors
/// follow; [`crate::diagnostic::render_text`] shows all of them in full.
///
/// ```
/// use gotopy::compile::compile_source;
/// use gotopy::{Options, Source};
///
/// let source = Source::new("demo.py", "@goto\ndef f():\n    goto .a\n    goto .b\n");
/// let Err(error) = compile_source(&source, Options::new()) else { panic!() };
/// assert_eq!(
///     error.to_string(),
///     "demo.py:3:11: error[G002]: unknown label `.a` (and 1 more error)"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The checker, or the rewrite, found errors.
    #[error("{}", rejected_summary(path, *location, diagnostics))]
    #[non_exhaustive]
    Rejected {
        /// All the diagnostics, the warnings found on the way included.
        diagnostics: Vec<Diagnostic>,
        /// The path of the module, as its [`Source`] reports it.
        path: String,
        /// Where the first error starts.
        location: Location,
    },
    /// RustPython's code generator refused the module (for example `return` outside a
    /// function); the message is its own.
    #[error("{0}")]
    Codegen(String),
}

/// A rejection of `source` with these diagnostics, which hold at least one error.
fn rejected(diagnostics: Vec<Diagnostic>, source: &Source) -> CompileError {
    let first = diagnostics
        .iter()
        .find(|d| d.is_error())
        .or(diagnostics.first())
        .map_or(TextSize::default(), |d| d.range.start());
    CompileError::Rejected {
        path: source.path().to_owned(),
        location: source.location(first),
        diagnostics,
    }
}

/// `path:line:column: error[code]: message`, of the first error, and how many more follow.
fn rejected_summary(path: &str, location: Location, diagnostics: &[Diagnostic]) -> String {
    let mut errors = diagnostics.iter().filter(|d| d.is_error());
    let Some(first) = errors.next() else {
        return format!("{path}: rejected without an error");
    };
    let mut summary = format!(
        "{path}:{}:{}: error[{}]: {}",
        location.line,
        location.column,
        first.code.as_str(),
        first.message
    );
    match errors.count() {
        0 => {}
        1 => summary.push_str(" (and 1 more error)"),
        more => summary.push_str(&format!(" (and {more} more errors)")),
    }
    summary
}

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
    let parsed = crate::parse::parse(source).map_err(|e| rejected(vec![e], source))?;
    let module = crate::scan::scan(parsed.syntax(), parsed.tokens(), options);
    let diagnostics = crate::check::check(&module, source);
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(rejected(diagnostics, source));
    }
    let file = SourceFileBuilder::new(source.path(), source.text()).finish();
    let mut ast = parsed.into_syntax();
    let rewritten: Vec<ScopeId> = (0..module.scopes.len())
        .map(ScopeId)
        .filter(|&id| {
            let scope = &module.scopes[id.0];
            scope.rewritten && !scope.markers.is_empty()
        })
        .collect();
    let prepared = if rewritten.is_empty() {
        Prepared::default()
    } else {
        prepare(&mut ast, &module, &rewritten)
    };
    let mut code = generate(ast, &file)?;
    if !rewritten.is_empty() {
        // A panic in the rewrite is a bug in gotopy: reported as an internal error of the
        // file, never a crash of the program that embeds it.
        caught(|| {
            let mut rewriter = Rewriter::new(&module, &rewritten, &prepared, &file);
            for_each_code_mut(&mut code, &mut |code| rewriter.rewrite(code))
                .map_err(|e| rejected(vec![e], source))?;
            rewriter
                .all_labels_placed()
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

thread_local! {
    static IN_CODEGEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread is inside code whose panics gotopy catches and reports as errors of
/// the file: RustPython's code generator (which panics on some valid programs) or gotopy's
/// own rewrite. A panic hook can stay quiet about those.
///
/// Not API: public only for the `gotopy` binary's panic hook.
#[doc(hidden)]
pub fn in_codegen() -> bool {
    IN_CODEGEN.get()
}

/// Runs `f`, giving its panic message instead if it panics.
fn caught<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    IN_CODEGEN.set(true);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    IN_CODEGEN.set(false);
    result.map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "no message".to_owned())
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

mod copies;
mod dispatch;
mod prepare;

use copies::number_copies;
use prepare::{Prepared, Trampoline, frames_left, prepare};

/// A source range as the code generator records it.
type Span = (SourceLocation, SourceLocation);

struct Rewriter<'a> {
    module: &'a Module,
    file: &'a SourceFile,
    text: &'a str,
    /// Label and goto statements of rewritten scopes, by their span.
    markers: HashMap<Span, (ScopeId, MarkerId)>,
    guards: Vec<Span>,
    /// Trampolines by the span of their instructions, and the span of each.
    trampolines: HashMap<Span, Trampoline>,
    trampoline_spans: HashMap<Trampoline, Span>,
    /// Where each switch's default starts, by span.
    switch_ends: HashMap<Span, (ScopeId, SwitchId)>,
    /// Labels found in some code object, to check that none was lost.
    placed: Vec<(ScopeId, MarkerId)>,
}

/// Something in a code object that the rewrite replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum SiteKind {
    /// A label or goto statement: three instructions.
    Marker(ScopeId, MarkerId),
    /// The test of a trampoline (`LOAD label`, maybe `TO_BOOL`, a conditional jump); `jump`
    /// is the position of the conditional jump from the site's start.
    Entry(Span),
    /// The goto that ends a trampoline.
    Exit(Span),
    /// The end of a `while switch` statement.
    SwitchEnd(ScopeId, SwitchId),
}

/// A goto to lower, from frame `from` on (a trampoline's goto goes on from its `try`).
#[derive(Clone, Copy)]
struct GotoAt<'n> {
    scope: ScopeId,
    marker: MarkerId,
    from: Option<FrameId>,
    /// The label it goes to.
    label: &'n str,
}

/// A switch or computed goto to lower: its site (`POP_TOP` of the value, then its marker).
#[derive(Clone, Copy)]
struct Dispatch<'s> {
    site: &'s Site,
    scope_id: ScopeId,
    marker: MarkerId,
}

/// What lowering one code object adds besides its instruction list.
struct Additions {
    /// Blocks reached only as handlers, placed after everything else.
    cold: Vec<Item>,
    constants: Vec<ConstantData>,
    names: Vec<String>,
    /// Handlers of searches, whose depth is known only once the code is complete.
    unknown_depths: Vec<dispatch::UnknownDepth>,
}

impl Additions {
    fn constant(&mut self, value: ConstantData) -> u32 {
        let index = match self.constants.iter().position(|c| *c == value) {
            Some(index) => index,
            None => {
                self.constants.push(value);
                self.constants.len() - 1
            }
        };
        index as u32
    }

    fn name(&mut self, name: &str) -> u32 {
        let index = match self.names.iter().position(|n| n == name) {
            Some(index) => index,
            None => {
                self.names.push(name.to_owned());
                self.names.len() - 1
            }
        };
        index as u32
    }
}

struct Site {
    at: usize,
    len: usize,
    kind: SiteKind,
    /// How many times the same statement came before in this code object: the code
    /// generator compiles a `finally` body more than once, and the markers in each copy
    /// belong together.
    copy: usize,
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
            for (index, marker) in module.scopes[id.0].markers.iter().enumerate() {
                // The code generator gives all three instructions of a marker the range of
                // its leading name.
                let start = marker.range.start();
                let name = match marker.kind {
                    MarkerKind::Label { .. } => TextRange::at(start, TextSize::of("label")),
                    MarkerKind::Goto { .. } | MarkerKind::ComputedGoto { .. } => {
                        TextRange::at(start, TextSize::of("goto"))
                    }
                    MarkerKind::Case { .. } => TextRange::at(start, TextSize::of("case")),
                    // See `expand_dispatches`.
                    MarkerKind::Switch(switch) => {
                        TextRange::new(start, module.scopes[id.0].switch(switch).subject.start())
                    }
                    MarkerKind::Malformed { .. } => continue,
                };
                markers.insert(span(name), (id, MarkerId(index)));
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
            placed: Vec::new(),
        }
    }

    fn rewrite(&mut self, code: &mut CodeObject) -> Result<(), Diagnostic> {
        let mut body = Body::decode(code).map_err(|e| self.internal(code, None, e))?;
        // Guards live only in scopes with labels, so removing them first changes nothing
        // in a code object without markers.
        remove_guards(&mut body, &self.guards);
        let mut sites = self.find_sites(&body);
        number_copies(&body, &mut sites);
        let Some(scope_id) = sites.first().map(|site| match site.kind {
            SiteKind::Marker(scope, _) | SiteKind::SwitchEnd(scope, _) => scope,
            SiteKind::Entry(span) | SiteKind::Exit(span) => self.trampolines[&span].scope,
        }) else {
            return Ok(());
        };
        let scope = &self.module.scopes[scope_id.0];
        let first = match sites[0].kind {
            SiteKind::Marker(_, marker) => marker,
            SiteKind::Entry(span) | SiteKind::Exit(span) => self.trampolines[&span].goto,
            SiteKind::SwitchEnd(_, switch) => scope.switch_marker(switch),
        };
        let mut added = Additions {
            cold: Vec::new(),
            constants: code.constants.to_vec(),
            names: code.names.to_vec(),
            unknown_depths: Vec::new(),
        };
        // Every jump target first, so that gotos can go to either side of them. A jump takes
        // the handler in force at its target.
        let mut targets = Targets::default();
        let mut copies: HashMap<SiteKind, usize> = HashMap::new();
        for site in &sites {
            *copies.entry(site.kind).or_default() += 1;
            let Item::Instr(load) = &body.items[site.at] else {
                unreachable!("sites are found on instructions")
            };
            let handler = load.handler;
            match site.kind {
                SiteKind::Marker(_, marker) => match &scope.marker(marker).kind {
                    MarkerKind::Label { name, .. } => {
                        let label = body.new_label();
                        targets
                            .labels
                            .insert((name.as_str(), site.copy), (label, handler));
                        self.placed.push((scope_id, marker));
                    }
                    MarkerKind::Case {
                        switch: Some(_), ..
                    } => {
                        let label = body.new_label();
                        targets.cases.insert((marker, site.copy), (label, handler));
                    }
                    _ => {}
                },
                SiteKind::SwitchEnd(_, switch) => {
                    let label = body.new_label();
                    targets.ends.insert((switch, site.copy), (label, handler));
                }
                SiteKind::Entry(span) => {
                    let label = match entry_jump(&body, site) {
                        // `if label:` jumps past the copy when false: the copy starts next.
                        (Instruction::PopJumpIfFalse { .. }, _) => body.new_label(),
                        // Jumps to the copy when true.
                        (_, target) => target,
                    };
                    targets.entries.insert((span, site.copy), (label, handler));
                }
                SiteKind::Exit(_) => {}
            }
        }
        // Back to front, so that each splice leaves the earlier positions valid.
        for site in sites.iter().rev() {
            let Item::Instr(instr) = &body.items[site.at] else {
                unreachable!("sites are found on instructions")
            };
            let instr = instr.clone();
            let replacement = match site.kind {
                SiteKind::Marker(_, marker) => match &scope.marker(marker).kind {
                    MarkerKind::Label { name, .. } => {
                        vec![Item::Label(targets.labels[&(name.as_str(), site.copy)].0)]
                    }
                    MarkerKind::Case {
                        switch: Some(_), ..
                    } => vec![Item::Label(targets.cases[&(marker, site.copy)].0)],
                    MarkerKind::Switch(switch) => {
                        let dispatch = Dispatch {
                            site,
                            scope_id,
                            marker,
                        };
                        self.lower_switch(&mut body, &mut added, &targets, dispatch, *switch)?
                    }
                    MarkerKind::ComputedGoto { .. } => {
                        let dispatch = Dispatch {
                            site,
                            scope_id,
                            marker,
                        };
                        self.lower_computed_goto(code, &mut body, &mut added, &targets, dispatch)?
                    }
                    MarkerKind::Goto { name, .. } => {
                        let label_copies = copies
                            .get(&SiteKind::Marker(
                                scope_id,
                                scope.labels.get(name).expect("checked").definition,
                            ))
                            .copied()
                            .unwrap_or(0);
                        if label_copies == 0 {
                            return Err(self.refuse(
                                scope,
                                marker,
                                format!(
                                    "the code generator removed label `.{name}` as unreachable"
                                ),
                                REMOVED_AS_UNREACHABLE,
                            ));
                        }
                        if label_copies != copies[&site.kind] {
                            return Err(self.broken(
                                scope,
                                marker,
                                format!(
                                    "the code generator compiled this goto {} and label `.{name}` {}",
                                    times(copies[&site.kind]),
                                    times(label_copies)
                                ),
                            ));
                        }
                        let goto = GotoAt {
                            scope: scope_id,
                            marker,
                            from: scope.marker(marker).frame,
                            label: name,
                        };
                        self.lower_goto(code, &mut body, &mut added, &targets, &instr, site, goto)?
                    }
                    _ => Vec::new(),
                },
                SiteKind::Entry(span) => {
                    let (condition, over) = entry_jump(&body, site);
                    if matches!(condition, Instruction::PopJumpIfFalse { .. }) {
                        // Ordinary control flow jumps over the copy; the jump takes the line
                        // of where it lands, so that it adds no line event of its own.
                        let lands = body.items[label_position(&body, over)..]
                            .iter()
                            .find_map(|item| match item {
                                Item::Instr(next) => Some(next),
                                Item::Label(_) => None,
                            })
                            .unwrap_or(&instr);
                        let mut jump = Instr::like(lands, jump_op(), 0, Some(over));
                        jump.handler = instr.handler;
                        let entry = targets.entries[&(span, site.copy)].0;
                        vec![Item::Instr(jump), Item::Label(entry)]
                    } else {
                        Vec::new()
                    }
                }
                SiteKind::Exit(span) => {
                    let trampoline = self.trampolines[&span];
                    let MarkerKind::Goto { name, .. } = &scope.marker(trampoline.goto).kind else {
                        unreachable!("trampolines are made for gotos")
                    };
                    let goto = GotoAt {
                        scope: scope_id,
                        marker: trampoline.goto,
                        from: scope.frame(trampoline.frame).parent,
                        label: name,
                    };
                    self.lower_goto(code, &mut body, &mut added, &targets, &instr, site, goto)?
                }
                SiteKind::SwitchEnd(_, switch) => {
                    vec![Item::Label(targets.ends[&(switch, site.copy)].0)]
                }
            };
            body.items.splice(site.at..site.at + site.len, replacement);
        }
        body.items.extend(added.cold);
        set_search_depths(&mut body, &added.unknown_depths)
            .map_err(|e| self.internal(code, Some((scope, first)), e))?;
        code.constants = added.constants.into_iter().collect();
        code.names = added.names.into_boxed_slice();
        body.assemble(code)
            .map_err(|e| self.internal(code, Some((scope, first)), e))
    }

    /// Every site to rewrite, in order.
    fn find_sites(&self, body: &Body) -> Vec<Site> {
        let mut sites = Vec::new();
        let mut seen: HashMap<SiteKind, usize> = HashMap::new();
        let mut at = 0;
        while at < body.items.len() {
            let found = if let Some(span) = marker_shape(&body.items[at..]) {
                if let Some(&(scope, marker)) = self.markers.get(&span) {
                    let kind = &self.module.scopes[scope.0].marker(marker).kind;
                    let takes_value = matches!(
                        kind,
                        MarkerKind::Switch(_) | MarkerKind::ComputedGoto { .. }
                    );
                    let after_value = at > 0
                        && matches!(&body.items[at - 1], Item::Instr(i) if matches!(i.op, Instruction::PopTop));
                    if takes_value && after_value {
                        // The statement before left the value: its `POP_TOP` is replaced too.
                        at -= 1;
                        Some((SiteKind::Marker(scope, marker), 4))
                    } else {
                        Some((SiteKind::Marker(scope, marker), 3))
                    }
                } else if let Some(&(scope, switch)) = self.switch_ends.get(&span) {
                    Some((SiteKind::SwitchEnd(scope, switch), 3))
                } else if self.trampolines.contains_key(&span) {
                    Some((SiteKind::Exit(span), 3))
                } else {
                    None
                }
            } else {
                guard_at(body, at, |span| self.trampolines.contains_key(span))
                    .map(|(span, end, _)| (SiteKind::Entry(span), end - at))
            };
            match found {
                Some((kind, len)) => {
                    let copy = seen.entry(kind).or_default();
                    sites.push(Site {
                        at,
                        len,
                        kind,
                        copy: *copy,
                    });
                    *copy += 1;
                    at += len;
                }
                None => at += 1,
            }
        }
        sites
    }

    /// The cleanup for each frame a goto leaves, from the frame `from` on, innermost first,
    /// then the jump: to its label, or to the trampoline of the first `try` statement with a
    /// `finally` clause that it leaves.
    #[allow(clippy::too_many_arguments)]
    fn lower_goto(
        &self,
        code: &CodeObject,
        body: &mut Body,
        added: &mut Additions,
        targets: &Targets,
        site: &Instr,
        at: &Site,
        GotoAt {
            scope: scope_id,
            marker: goto,
            from,
            label: name,
        }: GotoAt,
    ) -> Result<Vec<Item>, Diagnostic> {
        let scope = &self.module.scopes[scope_id.0];
        let left = frames_left(scope, from, name);
        let mut items = Vec::new();
        let mut target = targets.labels.get(&(name, at.copy)).copied();
        for (depth, &frame_id) in left.iter().enumerate() {
            let frame = scope.frame(frame_id);
            match frame.kind {
                FrameKind::For { .. } => {
                    // Cannot raise, so it needs no handler.
                    items.push(Item::Instr(Instr::like(
                        site,
                        Instruction::PopIter,
                        0,
                        None,
                    )));
                }
                FrameKind::Except { is_star: false } => {
                    // In a handler body the stack holds the exception it replaced; POP_EXCEPT
                    // restores that one, then `as name` is unbound as the handler's own exit
                    // does it.
                    items.push(Item::Instr(Instr::like(
                        site,
                        Instruction::PopExcept,
                        0,
                        None,
                    )));
                    if let Some(name) = handler_name(&self.text[frame.header.to_std_range()]) {
                        let Some(unbind) = unbind_sequence(body, code, name) else {
                            return Err(self.broken(
                                scope,
                                goto,
                                format!("cannot find how this function unbinds `{name}`"),
                            ));
                        };
                        items.extend(unbind.into_iter().map(|instr| {
                            Item::Instr(Instr::like(site, instr.op, instr.arg, None))
                        }));
                    }
                }
                FrameKind::With { .. } => {
                    // Call `__exit__(None, None, None)` (and await it) as the `with`
                    // statement's own normal exit does: the same instructions under the same
                    // (outer) handlers. The exits of `with a, b:` share a location and come
                    // innermost first.
                    let inner_items = left[..depth]
                        .iter()
                        .filter(|&&id| scope.frame(id).header == frame.header)
                        .count();
                    let start = self.location(frame.header.start());
                    let Some(exit) = with_exit(body, code, at.at, start, inner_items) else {
                        return Err(self.broken(
                            scope,
                            goto,
                            "cannot find this `with` statement's exit in the compiled code"
                                .to_owned(),
                        ));
                    };
                    items.extend(copy_region(body, exit, site, &mut added.cold));
                }
                FrameKind::TryFinally => {
                    let trampoline = Trampoline {
                        scope: scope_id,
                        goto,
                        frame: frame_id,
                    };
                    let span = self.trampoline_spans[&trampoline];
                    target = targets.entries.get(&(span, at.copy)).copied();
                    if target.is_none() {
                        return Err(self.broken(
                            scope,
                            goto,
                            "cannot find the copy of the `finally` body in the compiled code"
                                .to_owned(),
                        ));
                    }
                    break;
                }
                FrameKind::SwitchBody(_) => {}
                // The checker rejects gotos out of `finally` bodies and `except*` handlers.
                kind => {
                    return Err(self.broken(
                        scope,
                        goto,
                        format!(
                            "a goto leaving {} got past the checker",
                            crate::check::a(kind.describe())
                        ),
                    ));
                }
            }
        }
        let Some((label, handler)) = target else {
            return Err(self.refuse(
                scope,
                goto,
                format!("the code generator removed label `.{name}` as unreachable"),
                REMOVED_AS_UNREACHABLE,
            ));
        };
        // The jump belongs to the label's side: if it is interrupted (a backward jump checks
        // for signals), the handlers around the label are the ones that apply.
        let mut jump = Instr::like(site, jump_op(), 0, Some(label));
        jump.handler = handler;
        items.push(Item::Instr(jump));
        Ok(items)
    }

    fn location(&self, offset: TextSize) -> SourceLocation {
        self.file
            .to_source_code()
            .source_location(offset, PositionEncoding::Utf8)
    }

    fn all_labels_placed(&self) -> Result<(), Vec<Diagnostic>> {
        let placed = &self.placed;
        let mut lost = Vec::new();
        for &(scope_id, marker) in self.markers.values() {
            let scope = &self.module.scopes[scope_id.0];
            if matches!(scope.marker(marker).kind, MarkerKind::Label { .. })
                && !placed.contains(&(scope_id, marker))
            {
                lost.push(self.refuse(
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

    /// A construct gotopy refuses by design: `why` says what it is, `instead` what to write.
    fn refuse(&self, scope: &Scope, marker: MarkerId, why: String, instead: &str) -> Diagnostic {
        Diagnostic::new(
            Code::CannotRewrite,
            scope.marker(marker).range,
            format!("cannot rewrite: {why}"),
        )
        .help(instead)
    }

    /// A failure inside gotopy: something it expects of the compiled code did not hold.
    fn broken(&self, scope: &Scope, marker: MarkerId, what: String) -> Diagnostic {
        Diagnostic::new(
            Code::Internal,
            scope.marker(marker).range,
            format!("internal error: {what}"),
        )
        .help(REPORT)
    }

    fn internal(
        &self,
        code: &CodeObject,
        at: Option<(&Scope, MarkerId)>,
        error: BytecodeError,
    ) -> Diagnostic {
        let range = at.map_or(TextRange::default(), |(scope, marker)| {
            scope.marker(marker).range
        });
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
}

/// Gives each search handler its depth, from the stack depth where its search starts in
/// the finished code. Those handlers are left out of that analysis: they only lead to where
/// the search goes anyway, so no depth depends on them. A search that no code reaches never
/// runs; its handlers keep depth 0 and the verifier, which checks reachable code, skips them.
fn set_search_depths(
    body: &mut Body,
    unknown: &[dispatch::UnknownDepth],
) -> Result<(), BytecodeError> {
    if unknown.is_empty() {
        return Ok(());
    }
    let handlers: HashSet<Label> = unknown.iter().map(|u| u.handler).collect();
    let at_labels = body.depths_at_labels(&handlers)?;
    let mut depths: HashMap<Label, u32> = HashMap::new();
    for u in unknown {
        if let Some(&depth) = at_labels.get(&u.start) {
            let depth = depth
                .checked_sub(u.below)
                .ok_or(BytecodeError::StackDepth {
                    at: 0,
                    message: format!("a search starts with {depth} values on the stack"),
                })?;
            depths.insert(u.handler, depth);
        }
    }
    for item in &mut body.items {
        if let Item::Instr(Instr {
            handler: Some(handler),
            ..
        }) = item
            && let Some(&depth) = depths.get(&handler.target)
        {
            handler.depth = depth;
        }
    }
    Ok(())
}

/// The help of every internal error.
const REPORT: &str =
    "this is a bug in gotopy, not in your program; please report it with this file";

/// The help of a refusal of a label or case the code generator dropped.
const REMOVED_AS_UNREACHABLE: &str = "RustPython's code generator drops code under a condition it \
     can prove false (`if False:`, `while 0:`); move the marker out of that block, or test a \
     variable instead";

/// The `as` name of an `except ... as name` header, if it has one.
fn handler_name(header: &str) -> Option<&str> {
    let is_identifier = |c: char| c.is_alphanumeric() || c == '_';
    let name_start = header
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_identifier(c))
        .last()?
        .0;
    let before = header[..name_start].trim_end().strip_suffix("as")?;
    (!before.ends_with(is_identifier)).then_some(&header[name_start..])
}

/// `LOAD_CONST None; STORE name; DELETE name`, as the code generator emits it when a handler
/// with `as name` exits (only for local and module or class names).
fn unbind_sequence<'b>(body: &'b Body, code: &CodeObject, name: &str) -> Option<[&'b Instr; 3]> {
    let named = |op: Instruction, arg: u32| -> bool {
        let names = match op {
            Instruction::StoreFast { .. } | Instruction::DeleteFast { .. } => &code.varnames,
            Instruction::StoreName { .. } | Instruction::DeleteName { .. } => &code.names,
            _ => return false,
        };
        names.get(arg as usize).is_some_and(|n| n.as_str() == name)
    };
    body.items.windows(3).find_map(|window| {
        let [Item::Instr(load), Item::Instr(store), Item::Instr(delete)] = window else {
            return None;
        };
        let is_none = matches!(load.op, Instruction::LoadConst { .. })
            && matches!(
                code.constants.get(load.arg as usize),
                Some(rustpython_compiler::core::bytecode::ConstantData::None)
            );
        let pair = matches!(
            (store.op, delete.op),
            (
                Instruction::StoreFast { .. },
                Instruction::DeleteFast { .. }
            ) | (
                Instruction::StoreName { .. },
                Instruction::DeleteName { .. }
            )
        );
        (is_none && pair && store.arg == delete.arg && named(store.op, store.arg))
            .then_some([load, store, delete])
    })
}

/// An exit of the `with` statement that starts at `start`, the first after position `after`
/// (else the first at all) once `skip` of them are passed: `LOAD_CONST None` three times, `CALL 3`, then `POP_TOP`,
/// or for `async with` the await of the result (`GET_AWAITABLE`, a `SEND` loop, `END_SEND`)
/// and `POP_TOP`; every instruction at the statement's start.
fn with_exit(
    body: &Body,
    code: &CodeObject,
    after: usize,
    start: SourceLocation,
    skip: usize,
) -> Option<std::ops::Range<usize>> {
    let is_none = |item: &Item| {
        matches!(item, Item::Instr(instr)
        if matches!(instr.op, Instruction::LoadConst { .. })
            && matches!(
                code.constants.get(instr.arg as usize),
                Some(rustpython_compiler::core::bytecode::ConstantData::None)
            ))
    };
    let here = |item: &Item| {
        matches!(item, Item::Label(_)) || matches!(item, Item::Instr(i) if i.location.0 == start)
    };
    let exit_at = |first: usize| -> Option<std::ops::Range<usize>> {
        let items = &body.items[first..];
        let [a, b, c, Item::Instr(call), ..] = items else {
            return None;
        };
        let called = is_none(a)
            && is_none(b)
            && is_none(c)
            && matches!(call.op, Instruction::Call { .. })
            && call.arg == 3
            && items[..4].iter().all(here);
        if !called {
            return None;
        }
        let awaited = matches!(items.get(4), Some(Item::Instr(i)) if matches!(i.op, Instruction::GetAwaitable { .. }));
        let len = items.iter().take_while(|item| here(item)).position(
            |item| matches!(item, Item::Instr(i) if matches!(i.op, Instruction::PopTop)),
        )? + 1;
        // A plain exit is five instructions; an awaited one ends after its `END_SEND`.
        let fits = if awaited {
            matches!(&items[len - 2], Item::Instr(i) if matches!(i.op, Instruction::EndSend))
        } else {
            len == 5
        };
        fits.then(|| first..first + len)
    };
    // Normally after the goto; but a goto in an `except` handler is in a block the code
    // generator moves after the function's other code.
    (after..body.items.len())
        .filter_map(exit_at)
        .nth(skip)
        .or_else(|| (0..body.items.len()).filter_map(exit_at).nth(skip))
}

/// A copy of the instructions in `region` at the location of `site`, under the same
/// handlers, with fresh labels for those defined inside it. A handler block that jumps back
/// into the region (the `CLEANUP_THROW` of an awaited exit) is copied too, into `cold`, to
/// be placed at the end of the code.
fn copy_region(
    body: &mut Body,
    region: std::ops::Range<usize>,
    site: &Instr,
    cold: &mut Vec<Item>,
) -> Vec<Item> {
    let original: Vec<Item> = body.items[region].to_vec();
    let mut renamed: HashMap<Label, Label> = HashMap::new();
    for item in &original {
        if let Item::Label(label) = item {
            renamed.insert(*label, body.new_label());
        }
    }
    let copied = |instr: &Instr, renamed: &HashMap<Label, Label>| {
        let mut new = Instr::like(site, instr.op, instr.arg, None);
        new.target = instr.target.map(|t| renamed.get(&t).copied().unwrap_or(t));
        new.handler = instr.handler;
        new
    };
    let mut blocks: HashMap<Label, Label> = HashMap::new();
    let mut copy = Vec::new();
    for item in &original {
        copy.push(match item {
            Item::Label(label) => Item::Label(renamed[label]),
            Item::Instr(instr) => {
                let mut new = copied(instr, &renamed);
                if let Some(handler) = &mut new.handler
                    && let Some(block) = returning_block(body, handler.target, &renamed)
                {
                    handler.target = match blocks.get(&handler.target) {
                        Some(&label) => label,
                        None => {
                            let label = body.new_label();
                            cold.push(Item::Label(label));
                            cold.extend(
                                block
                                    .iter()
                                    .map(|instr| Item::Instr(copied(instr, &renamed))),
                            );
                            blocks.insert(handler.target, label);
                            label
                        }
                    };
                }
                Item::Instr(new)
            }
        });
    }
    copy
}

/// The instructions of the handler block at `label` if it is straight-line code ending with
/// a jump back to a label in `renamed` (and jumping nowhere else).
fn returning_block(
    body: &Body,
    label: Label,
    renamed: &HashMap<Label, Label>,
) -> Option<Vec<Instr>> {
    let start = label_position(body, label) + 1;
    let mut block = Vec::new();
    for item in &body.items[start..] {
        let Item::Instr(instr) = item else {
            return None;
        };
        block.push(instr.clone());
        if let Some(target) = instr.target {
            let back = matches!(
                instr.op,
                Instruction::JumpBackwardNoInterrupt { .. }
                    | Instruction::JumpBackward { .. }
                    | Instruction::JumpForward { .. }
            );
            return (back && renamed.contains_key(&target)).then_some(block);
        }
        if block.len() > 4 {
            return None;
        }
    }
    None
}

pub(crate) fn is_name_load(op: Instruction) -> bool {
    matches!(
        op,
        Instruction::LoadGlobal { .. }
            | Instruction::LoadName { .. }
            | Instruction::LoadDeref { .. }
            | Instruction::LoadFast { .. }
            | Instruction::LoadFastBorrow { .. }
            | Instruction::LoadFastCheck { .. }
    )
}

/// Where each jump target of one code object is, with the handler in force there.
#[derive(Default)]
struct Targets<'n> {
    /// Labels by name and copy.
    labels: HashMap<(&'n str, usize), (Label, Option<Handler>)>,
    /// Where trampolines start, by span and copy.
    entries: HashMap<(Span, usize), (Label, Option<Handler>)>,
    /// Case markers by marker and copy.
    cases: HashMap<(MarkerId, usize), (Label, Option<Handler>)>,
    /// Where each switch's default starts, by switch and copy.
    ends: HashMap<(SwitchId, usize), (Label, Option<Handler>)>,
}

pub(crate) fn jump_op() -> Instruction {
    Instruction::JumpForward {
        delta: rustpython_compiler::core::bytecode::Arg::marker(),
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

/// The span of a statement compiled as `LOAD name; LOAD_ATTR; POP_TOP`, all three
/// instructions with the same span, at the start of `items`.
fn marker_shape(items: &[Item]) -> Option<Span> {
    let [Item::Instr(load), Item::Instr(attr), Item::Instr(pop), ..] = items else {
        return None;
    };
    (matches!(attr.op, Instruction::LoadAttr { .. })
        && matches!(pop.op, Instruction::PopTop)
        && pop.location == attr.location
        && load.location == attr.location
        && is_name_load(load.op))
    .then_some(attr.location)
}

/// A guard's test at `at` whose span `wanted` accepts: `LOAD name`, then perhaps `TO_BOOL`
/// and `NOT_TAKEN`, and one conditional jump, all with the same span. Gives the span, the
/// end of the test and the position of the conditional jump.
fn guard_at(
    body: &Body,
    at: usize,
    wanted: impl Fn(&Span) -> bool,
) -> Option<(Span, usize, usize)> {
    let Some(Item::Instr(load)) = body.items.get(at) else {
        return None;
    };
    if !is_name_load(load.op) || !wanted(&load.location) {
        return None;
    }
    let span = load.location;
    let mut end = at + 1;
    let mut jump = None;
    while let Some(Item::Instr(next)) = body.items.get(end) {
        if next.location != span {
            break;
        }
        match next.op {
            Instruction::ToBool | Instruction::NotTaken => end += 1,
            Instruction::PopJumpIfFalse { .. } | Instruction::PopJumpIfTrue { .. }
                if jump.is_none() =>
            {
                jump = Some(end);
                end += 1;
            }
            _ => break,
        }
    }
    jump.map(|jump| (span, end, jump))
}

/// The conditional jump of a trampoline's test, and where it goes.
fn entry_jump(body: &Body, site: &Site) -> (Instruction, Label) {
    body.items[site.at..site.at + site.len]
        .iter()
        .find_map(|item| match item {
            Item::Instr(
                instr @ Instr {
                    op: Instruction::PopJumpIfFalse { .. } | Instruction::PopJumpIfTrue { .. },
                    ..
                },
            ) => Some((instr.op, instr.target.expect("jumps have targets"))),
            _ => None,
        })
        .expect("a trampoline's test ends with a conditional jump")
}

fn label_position(body: &Body, label: Label) -> usize {
    body.items
        .iter()
        .position(|item| matches!(item, Item::Label(l) if *l == label))
        .expect("jump targets are placed")
}

/// Deletes each guard's test; a guard that jumps into its statement becomes a plain jump.
fn remove_guards(body: &mut Body, guards: &[Span]) {
    let mut at = 0;
    while at < body.items.len() {
        let Some((_, end, jump)) = guard_at(body, at, |span| guards.contains(span)) else {
            at += 1;
            continue;
        };
        let Item::Instr(conditional) = &body.items[jump] else {
            unreachable!()
        };
        let replacement = match conditional.op {
            // `if label:` jumps past its statement when false: always fall into it.
            Instruction::PopJumpIfFalse { .. } => Vec::new(),
            // Jumps to its statement when true: always jump.
            _ => {
                let mut always = conditional.clone();
                always.op = jump_op();
                always.inserted = true;
                always.handler = None;
                vec![Item::Instr(always)]
            }
        };
        let added = replacement.len();
        body.items.splice(at..end, replacement);
        at += added;
    }
}
