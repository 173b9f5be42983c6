//! Lowering the markers of one module's code objects, as RustPython's code generator made
//! them from the prepared tree: the module's [`Rewriter`] (what the rewrite looks for, by
//! span), then per code object the steps over one context (`context::Lowering`): find the
//! sites (`sites`), number the copies the code generator made of them (`copies`), choose
//! every jump target (`targets`), plan what each site becomes (`apply`, with a goto's
//! cleanup in `goto` and the searches of switches and computed gotos in `dispatch`,
//! `levels` and `search`), then splice and assemble (`apply`). The same stages, under the
//! same names, as the CPython backend's `cpython/lower/`. The patterns of RustPython's
//! output that these steps look for are in `crate::rustpython::shapes`.

use std::collections::{HashMap, HashSet};

use ruff_source_file::{PositionEncoding, SourceFile};
use ruff_text_size::{TextRange, TextSize};
use rustpython_compiler::CodeObject;
use rustpython_compiler::core::SourceLocation;
use rustpython_compiler::core::bytecode::{Arg, Instruction};

use crate::front::diagnostic::{Code, Diagnostic};
use crate::front::scan::{MarkerId, MarkerKind, Module, Scope, ScopeId, SwitchId};
use crate::rustpython::bytecode::{Body, BytecodeError};
use crate::rustpython::shapes::Span;

mod apply;
mod context;
mod copies;
mod dispatch;
mod goto;
mod levels;
mod search;
mod sites;
mod targets;

use context::Lowering;
use copies::number_copies;
use sites::{Site, SiteKind};

use crate::plan::prepare::{Prepared, Trampoline};
use crate::plan::{REPORT, lost_track, refuse};

/// What the rewrite looks for in every code object of one module: the spans of the markers
/// of rewritten scopes and of everything `prepare` added, as the code generator records
/// them.
pub(crate) struct Rewriter<'a> {
    pub(crate) module: &'a Module,
    pub(crate) file: &'a SourceFile,
    pub(crate) text: &'a str,
    /// Label and goto statements of rewritten scopes, by their span.
    pub(crate) markers: HashMap<Span, (ScopeId, MarkerId)>,
    pub(crate) guards: HashSet<Span>,
    /// Trampolines by the span of their instructions, and the span of each.
    pub(crate) trampolines: HashMap<Span, Trampoline>,
    pub(crate) trampoline_spans: HashMap<Trampoline, Span>,
    /// Where each switch's default starts, by span.
    pub(crate) switch_ends: HashMap<Span, (ScopeId, SwitchId)>,
}

impl<'a> Rewriter<'a> {
    pub(crate) fn new(
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
    pub(crate) fn rewrite(
        &self,
        code: &mut CodeObject,
    ) -> Result<Vec<(ScopeId, MarkerId)>, Diagnostic> {
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
    pub(crate) fn all_labels_placed(
        &self,
        placed: &[(ScopeId, MarkerId)],
    ) -> Result<(), Vec<Diagnostic>> {
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
