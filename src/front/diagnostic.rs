//! Diagnostics: what gotopy reports about a file, and how it is shown.
//!
//! A [`Diagnostic`] holds byte ranges into one [`Source`]; lines and columns are computed
//! only when it is rendered, as text in the rustc/ruff style (through `annotate-snippets`)
//! or as JSON. This module decides how a problem is shown, never whether it is one: the
//! rules live in `check`.

use std::ops::Range;

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use ruff_text_size::TextRange;
use serde::Serialize;

use crate::front::source::{Location, Source};

/// The help of every internal error (`G900`), in every command and the Python package: a
/// failure inside gotopy is never the program's fault.
pub const REPORT: &str =
    "this is a bug in gotopy, not in your program; please report it with the file that triggers it";

/// Whether a diagnostic makes `check` fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Makes `check` fail and keeps the module from compiling.
    Error,
    /// Reported without making `check` fail.
    Warning,
}

macro_rules! codes {
    ($($variant:ident = $code:literal, $name:literal, $severity:ident;)*) => {
        /// Every problem gotopy reports, named after the problem. The codes are stable:
        /// a code is never reused for another meaning.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Code {
            $(
                #[doc = concat!("`", $code, "` (`", $name, "`).")]
                $variant,
            )*
        }

        impl Code {
            /// Every code, in the order of their numbers.
            pub const ALL: &[Code] = &[$(Code::$variant,)*];

            /// The stable code, such as `G001`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)*
                }
            }

            /// A kebab-case name, such as `duplicate-label`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)*
                }
            }

            /// Where the language reference explains it: its row in docs/language.md's
            /// table of codes, in the repository that `Cargo.toml` names.
            pub fn documentation(self) -> String {
                format!(
                    "{}/blob/main/docs/language.md#{}",
                    env!("CARGO_PKG_REPOSITORY"),
                    self.as_str().to_lowercase()
                )
            }

            /// Whether the problem is an error or a warning.
            pub fn severity(self) -> Severity {
                match self {
                    $(Code::$variant => Severity::$severity,)*
                }
            }
        }
    };
}

codes! {
    SyntaxError = "G000", "syntax-error", Error;
    DuplicateLabel = "G001", "duplicate-label", Error;
    UnknownLabel = "G002", "unknown-label", Error;
    JumpIntoFrame = "G003", "jump-into-frame", Error;
    GotoOutOfFinally = "G004", "goto-out-of-finally", Error;
    MarkerInExpression = "G005", "marker-in-expression", Error;
    MalformedMarker = "G006", "malformed-marker", Error;
    MarkerNameBound = "G007", "marker-name-bound", Error;
    DuplicateCaseValue = "G008", "duplicate-case-value", Error;
    MixedCaseKinds = "G009", "mixed-case-kinds", Error;
    InvalidCaseValue = "G010", "invalid-case-value", Error;
    ContinueInSwitch = "G011", "continue-in-switch", Error;
    ElseOnSwitch = "G012", "else-on-switch", Error;
    CaseOutsideSwitch = "G013", "case-outside-switch", Error;
    GotoOutOfExceptStar = "G014", "goto-out-of-except-star", Error;
    UnusedLabel = "G101", "unused-label", Warning;
    MarkersNotRewritten = "G102", "markers-not-rewritten", Warning;
    CannotRewrite = "G200", "cannot-rewrite", Error;
    Internal = "G900", "internal-error", Error;
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A related place shown beside the primary one, such as the first definition of a label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    /// The place, as a byte range into the source.
    pub range: TextRange,
    /// Text shown under the place.
    pub message: String,
}

/// One problem at one place in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The problem.
    pub code: Code,
    /// One line, lowercase, names in backticks, no trailing period.
    pub message: String,
    /// The primary place, as a byte range into the source.
    pub range: TextRange,
    /// Text under the caret of the primary place; empty for none.
    pub label: String,
    /// Other places that explain the problem.
    pub related: Vec<Related>,
    /// Footnotes: how to fix it, or why it is a problem.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with no label, related places or help.
    pub fn new(code: Code, range: TextRange, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            range,
            label: String::new(),
            related: Vec::new(),
            help: None,
        }
    }

    /// Sets the text under the caret of the primary place.
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Adds a related place.
    pub fn related(mut self, range: TextRange, message: impl Into<String>) -> Self {
        self.related.push(Related {
            range,
            message: message.into(),
        });
        self
    }

    /// Sets the help footnote.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The severity of its code.
    pub fn severity(&self) -> Severity {
        self.code.severity()
    }

    /// Whether it makes `check` fail.
    pub fn is_error(&self) -> bool {
        self.severity() == Severity::Error
    }
}

/// Renders diagnostics of one source in the rustc/ruff text style.
pub fn render_text(diagnostics: &[Diagnostic], source: &Source, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for diagnostic in diagnostics {
        out.push_str(&renderer.render(&report(diagnostic, source)));
        out.push_str("\n\n");
    }
    out
}

/// How `gotopy check` reports: one list of formats for the binary, the Python package and
/// its type stubs, which take their names and help from here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// [`report_text`].
    Text,
    /// [`report_json`].
    Json,
    /// [`report_github`].
    Github,
}

impl Format {
    /// Every format, the default first.
    pub const ALL: [Format; 3] = [Format::Text, Format::Json, Format::Github];

    /// The name a command line takes (`--format NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Github => "github",
        }
    }

    /// What the format is, for a command line's help.
    pub fn about(self) -> &'static str {
        match self {
            Format::Text => "rustc/ruff style diagnostics with source snippets",
            Format::Json => "One JSON array of diagnostics",
            Format::Github => {
                "GitHub Actions workflow commands: an annotation on the line of each diagnostic"
            }
        }
    }

    /// The format named `name`.
    pub fn named(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|format| format.name() == name)
    }
}

/// The report of every checked source in `format` (`color` for text only).
pub fn report_as<'a>(
    format: Format,
    checked: impl IntoIterator<Item = (&'a Source, &'a [Diagnostic])>,
    color: bool,
) -> Result<String, serde_json::Error> {
    match format {
        Format::Text => Ok(report_text(checked, color)),
        Format::Json => report_json(checked),
        Format::Github => Ok(report_github(checked)),
    }
}

/// The text report of `gotopy check`: each source's diagnostics as [`render_text`] draws
/// them, then the summary line (`checked 2 files: 1 error, 0 warnings`).
pub fn report_text<'a>(
    checked: impl IntoIterator<Item = (&'a Source, &'a [Diagnostic])>,
    color: bool,
) -> String {
    let mut out = String::new();
    let (mut files, mut errors, mut warnings) = (0, 0, 0);
    for (source, diagnostics) in checked {
        out.push_str(&render_text(diagnostics, source, color));
        let source_errors = diagnostics.iter().filter(|d| d.is_error()).count();
        files += 1;
        errors += source_errors;
        warnings += diagnostics.len() - source_errors;
    }
    out.push_str(&format!(
        "checked {}: {}, {}\n",
        plural(files, "file"),
        plural(errors, "error"),
        plural(warnings, "warning")
    ));
    out
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// The JSON report of `gotopy check --format json`: one pretty-printed array of every
/// source's [`JsonDiagnostic`]s, in order, and a final newline.
pub fn report_json<'a>(
    checked: impl IntoIterator<Item = (&'a Source, &'a [Diagnostic])>,
) -> Result<String, serde_json::Error> {
    let all: Vec<JsonDiagnostic> = checked
        .into_iter()
        .flat_map(|(source, diagnostics)| {
            diagnostics
                .iter()
                .map(move |diagnostic| JsonDiagnostic::new(diagnostic, source))
        })
        .collect();
    let mut json = serde_json::to_string_pretty(&all)?;
    json.push('\n');
    Ok(json)
}

/// The report of `gotopy check --format github`: one GitHub Actions workflow command per
/// diagnostic (`::error title=gotopy (G002),file=…,line=…,col=…,endLine=…,endColumn=…::…`),
/// which a workflow step turns into an annotation on the file's line, as ruff's
/// `--output-format github` does. The message reads `PATH:LINE:COLUMN: CODE message`, then
/// each related place and the help on lines of their own; no summary line.
pub fn report_github<'a>(
    checked: impl IntoIterator<Item = (&'a Source, &'a [Diagnostic])>,
) -> String {
    let mut out = String::new();
    for (source, diagnostics) in checked {
        for diagnostic in diagnostics {
            let at = JsonSpan::new(diagnostic.range, source);
            let command = match diagnostic.severity() {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let mut message = format!(
                "{}:{}:{}: {} {}",
                source.path(),
                at.line,
                at.column,
                diagnostic.code.as_str(),
                diagnostic.message
            );
            for related in &diagnostic.related {
                let Location { line, column } = source.location(related.range.start());
                message.push_str(&format!(
                    "\n{}:{line}:{column}: {}",
                    source.path(),
                    related.message
                ));
            }
            if let Some(help) = &diagnostic.help {
                message.push_str(&format!("\nhelp: {help}"));
            }
            out.push_str(&format!(
                "::{command} title={},file={},line={},col={},endLine={},endColumn={}::{}\n",
                escape_property(&format!("gotopy ({})", diagnostic.code.as_str())),
                escape_property(source.path()),
                at.line,
                at.column,
                at.end_line,
                at.end_column,
                escape_data(&message)
            ));
        }
    }
    out
}

/// A workflow command's message: `%`, carriage returns and line feeds escaped, as the
/// GitHub Actions toolkit escapes them.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: as [`escape_data`], and `:` and `,` too, which
/// separate the properties.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

fn report<'a>(diagnostic: &'a Diagnostic, source: &'a Source) -> Vec<Group<'a>> {
    let level = match diagnostic.severity() {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let primary = span(diagnostic.range, source);
    let related: Vec<_> = diagnostic
        .related
        .iter()
        .map(|related| (span(related.range, source), related.message.as_str()))
        .collect();
    // annotate-snippets reads its whole source for every report (line table, line count),
    // so it gets only the lines the places are on: rendering a file's diagnostics then
    // costs their number times the lines shown, not times the file's size.
    let ends = related
        .iter()
        .flat_map(|(range, _)| [range.start, range.end])
        .chain([primary.start, primary.end]);
    let (low, high) = ends.fold((usize::MAX, 0), |(low, high), offset| {
        (low.min(offset), high.max(offset))
    });
    let (line_start, lines) = source.snippet_lines(low, high);
    let local = |range: &Range<usize>| range.start - lines.start..range.end - lines.start;
    let mut snippet = Snippet::source(&source.text()[lines.clone()])
        .line_start(line_start)
        .path(source.path())
        .annotation(
            AnnotationKind::Primary
                .span(local(&primary))
                .label(non_empty(&diagnostic.label)),
        );
    for (range, message) in &related {
        snippet = snippet.annotation(AnnotationKind::Context.span(local(range)).label(*message));
    }
    let mut group = level
        .primary_title(diagnostic.message.as_str())
        .id(diagnostic.code.as_str())
        .element(snippet);
    if let Some(help) = &diagnostic.help {
        group = group.element(Level::HELP.message(help.as_str()));
    }
    vec![group]
}

fn non_empty(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

/// A byte range annotate-snippets can show: clamped to the text and to character boundaries.
fn span(range: TextRange, source: &Source) -> Range<usize> {
    let text = source.text();
    let clamp = |offset: usize| {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    };
    clamp(range.start().to_usize())..clamp(range.end().to_usize())
}

/// The JSON form of a diagnostic, with positions resolved.
#[derive(Debug, Serialize)]
pub struct JsonDiagnostic<'a> {
    /// The stable code, such as `G001`.
    pub code: Code,
    /// The kebab-case name of the code, such as `duplicate-label`.
    pub name: &'static str,
    /// `error` or `warning`.
    pub severity: Severity,
    /// The one-line message.
    pub message: &'a str,
    /// The path the source is reported under.
    pub path: &'a str,
    /// Where the primary place starts and ends.
    #[serde(flatten)]
    pub span: JsonSpan,
    /// Text under the caret of the primary place; empty for none.
    pub label: &'a str,
    /// The help footnote, if any.
    pub help: Option<&'a str>,
    /// Other places that explain the problem.
    pub related: Vec<JsonRelated<'a>>,
}

/// The start and end of a range as one-based lines and character columns.
#[derive(Debug, Serialize)]
pub struct JsonSpan {
    /// The line the range starts on.
    pub line: usize,
    /// The column the range starts at.
    pub column: usize,
    /// The line the range ends on.
    pub end_line: usize,
    /// The column just past the end of the range.
    pub end_column: usize,
}

/// The JSON form of a related place.
#[derive(Debug, Serialize)]
pub struct JsonRelated<'a> {
    /// Text shown under the place.
    pub message: &'a str,
    /// The path the source is reported under.
    pub path: &'a str,
    /// Where the place starts and ends.
    #[serde(flatten)]
    pub span: JsonSpan,
}

impl JsonSpan {
    fn new(range: TextRange, source: &Source) -> Self {
        let Location { line, column } = source.location(range.start());
        let end = source.location(range.end());
        Self {
            line,
            column,
            end_line: end.line,
            end_column: end.column,
        }
    }
}

impl<'a> JsonDiagnostic<'a> {
    /// The JSON form of `diagnostic`, with positions resolved in `source`.
    pub fn new(diagnostic: &'a Diagnostic, source: &'a Source) -> Self {
        Self {
            code: diagnostic.code,
            name: diagnostic.code.name(),
            severity: diagnostic.severity(),
            message: &diagnostic.message,
            path: source.path(),
            span: JsonSpan::new(diagnostic.range, source),
            label: &diagnostic.label,
            help: diagnostic.help.as_deref(),
            related: diagnostic
                .related
                .iter()
                .map(|related| JsonRelated {
                    message: &related.message,
                    path: source.path(),
                    span: JsonSpan::new(related.range, source),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report as annotate-snippets draws it from the whole text, as gotopy did before
    /// it cut snippets to their lines: the oracle the cut snippets must match byte for byte.
    fn whole_text(diagnostic: &Diagnostic, source: &Source) -> String {
        let mut snippet = Snippet::source(source.text())
            .line_start(1)
            .path(source.path())
            .annotation(
                AnnotationKind::Primary
                    .span(span(diagnostic.range, source))
                    .label(non_empty(&diagnostic.label)),
            );
        for related in &diagnostic.related {
            snippet = snippet.annotation(
                AnnotationKind::Context
                    .span(span(related.range, source))
                    .label(related.message.as_str()),
            );
        }
        let group = Level::WARNING
            .primary_title(diagnostic.message.as_str())
            .id(diagnostic.code.as_str())
            .element(snippet);
        let mut out = Renderer::plain().render(&[group]);
        out.push_str("\n\n");
        out
    }

    fn range(start: usize, end: usize) -> TextRange {
        let at = |offset: usize| ruff_text_size::TextSize::new(offset as u32);
        TextRange::new(at(start), at(end))
    }

    /// Every primary range, alone and with related places before, after and around it, in
    /// texts with blank lines, CRLF and lone CR line ends, multi-byte characters, with and
    /// without a final line end, and empty.
    #[test]
    fn snippets_cut_to_their_lines_render_as_the_whole_text_does() {
        let texts = [
            "",
            "\n",
            "a = 1",
            "a = 1\n",
            "def f():\n    label .a\n\n    goto .a\n",
            "x\n\n\n\n\n\n\n\n\n\n\n\ny = 'é'\nz\n",
            "if a:\r\n    b\r\n\r\nc\r\n",
            "a\rb\nc\r\n",
            "é\nàü\n€\n\u{1F600} = 1",
            "first\nsecond\nthird\nfourth\nfifth\nsixth\nseventh",
        ];
        for text in texts {
            let source = Source::new("t.py", text);
            let len = text.len();
            for start in 0..=len + 1 {
                for end in start..=len + 1 {
                    let primary =
                        Diagnostic::new(Code::UnusedLabel, range(start, end), "m").label("here");
                    let others = [(0, 0), (0, 1.min(len)), (len / 2, len), (len, len + 1)];
                    let mut cases = vec![primary.clone()];
                    for (low, high) in others {
                        cases.push(primary.clone().related(range(low, high), "there"));
                    }
                    for diagnostic in cases {
                        assert_eq!(
                            render_text(std::slice::from_ref(&diagnostic), &source, false),
                            whole_text(&diagnostic, &source),
                            "{text:?} {diagnostic:?}"
                        );
                    }
                }
            }
        }
    }

    /// A workflow command as the GitHub Actions runner reads one: `::NAME PROPERTIES::MESSAGE`,
    /// properties split at `,` and `=`, then `%25`, `%0D`, `%0A`, `%3A` and `%2C` decoded
    /// (the toolkit's escapes; written here from its documentation, not from gotopy).
    fn parse_command(line: &str) -> (String, Vec<(String, String)>, String) {
        let decode = |text: &str| {
            text.replace("%0D", "\r")
                .replace("%0A", "\n")
                .replace("%3A", ":")
                .replace("%2C", ",")
                .replace("%25", "%")
        };
        let rest = line.strip_prefix("::").expect("a command starts with ::");
        let (head, message) = rest.split_once("::").expect("a command has a message");
        let (name, properties) = head.split_once(' ').expect("a command has properties");
        let properties = properties
            .split(',')
            .map(|pair| {
                let (key, value) = pair.split_once('=').expect("key=value");
                (key.to_owned(), decode(value))
            })
            .collect();
        (name.to_owned(), properties, decode(message))
    }

    /// Paths, messages and help with the characters that separate a command's parts come
    /// through whole; positions are the JSON report's; related places and help follow the
    /// message on lines of their own.
    #[test]
    fn github_commands_escape_what_would_split_them() {
        let source = Source::new("a,b:c%d.py", "x = 1\nlabel .é\nlabel .é\n");
        let diagnostics = [
            Diagnostic::new(Code::DuplicateLabel, range(16, 25), "label `é` 100%: again")
                .related(range(6, 15), "first, here")
                .help("rename one\r\nof them"),
            Diagnostic::new(Code::UnusedLabel, range(6, 15), "unused"),
        ];
        let report = report_github([(&source, diagnostics.as_slice())]);
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines.len(), 2, "{report}");
        let (name, properties, message) = parse_command(lines[0]);
        assert_eq!(name, "error");
        let property = |key: &str| {
            properties
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
                .unwrap_or_else(|| panic!("no {key} in {properties:?}"))
        };
        assert_eq!(property("title"), "gotopy (G001)");
        assert_eq!(property("file"), "a,b:c%d.py");
        let json = serde_json::to_value(JsonDiagnostic::new(&diagnostics[0], &source)).unwrap();
        for (key, field) in [
            ("line", "line"),
            ("col", "column"),
            ("endLine", "end_line"),
            ("endColumn", "end_column"),
        ] {
            assert_eq!(property(key), json[field].to_string(), "{key}");
        }
        assert_eq!((property("line"), property("col")), ("3", "1"));
        assert_eq!(
            message,
            "a,b:c%d.py:3:1: G001 label `é` 100%: again\na,b:c%d.py:2:1: first, here\nhelp: rename one\r\nof them"
        );
        let (name, _, message) = parse_command(lines[1]);
        assert_eq!(name, "warning");
        assert_eq!(message, "a,b:c%d.py:2:1: G101 unused");
    }
}
