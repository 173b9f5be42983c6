//! How markers and case values look in the tree: the shape of an expression that is a
//! marker (`goto .a`, `goto *x`, `case[1, 2]`), the subject of `while switch *x:`, a
//! decorator that opts in, and a case value read as a switch key. Pure functions of one
//! expression; the scanner decides what a shape means where it stands.

use malachite_bigint::BigInt;
use ruff_text_size::Ranged;
use rustpython_compiler::ast::{self as ast, Expr, Operator, UnaryOp};

use super::{CaseKey, CaseValue, DECORATOR_NAMES, MARKER_NAMES};

pub(super) fn name_of(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(name) => Some(name.id.as_str()),
        _ => None,
    }
}

pub(super) fn marker_name(name: &str) -> Option<&'static str> {
    MARKER_NAMES.into_iter().find(|marker| *marker == name)
}

/// `goto`/`label` at the root of an attribute chain such as `goto .a .b`.
pub(super) fn chained_marker(expr: &Expr) -> Option<&'static str> {
    match expr {
        Expr::Attribute(attribute) => chained_marker(&attribute.value),
        Expr::Name(name) => ["goto", "label"]
            .into_iter()
            .find(|marker| *marker == name.id.as_str()),
        _ => None,
    }
}

/// Which marker an expression is shaped like, if any.
pub(super) fn marker_shape(expr: &Expr) -> Option<&'static str> {
    let (base, name) = match expr {
        Expr::Attribute(attribute) => (&*attribute.value, ["goto", "label"].as_slice()),
        Expr::BinOp(binary) if binary.op == Operator::Mult => {
            (&*binary.left, ["goto", "switch"].as_slice())
        }
        Expr::Subscript(subscript) => (&*subscript.value, ["case"].as_slice()),
        _ => return None,
    };
    let base = name_of(base)?;
    marker_name(base).filter(|marker| name.contains(marker))
}

/// The subject of `while switch *subject:`.
pub(super) fn switch_subject(test: &Expr) -> Option<&Expr> {
    match test {
        Expr::BinOp(binary)
            if binary.op == Operator::Mult && name_of(&binary.left) == Some("switch") =>
        {
            Some(&binary.right)
        }
        _ => None,
    }
}

pub(crate) fn is_goto_decorator(expr: &Expr) -> bool {
    let name = match expr {
        Expr::Name(name) => name.id.as_str(),
        Expr::Attribute(attribute) => attribute.attr.id.as_str(),
        _ => return false,
    };
    DECORATOR_NAMES.contains(&name)
}

/// The names an import of `goto` or `gotopy` binds (`import gotopy.x` binds `gotopy`;
/// `from goto import goto as g` binds `g`), or `None` for any other statement: an import
/// of which any module is another, or a relative one.
pub(crate) fn marker_import_names(stmt: &ast::Stmt) -> Option<Vec<String>> {
    let ours = |name: &str| {
        let package = name.split('.').next().unwrap_or_default();
        package == "goto" || package == "gotopy"
    };
    match stmt {
        ast::Stmt::Import(import) if import.names.iter().all(|alias| ours(&alias.name)) => Some(
            (import.names.iter())
                .map(|alias| match &alias.asname {
                    Some(name) => name.to_string(),
                    None => alias.name.split('.').next().unwrap_or_default().to_owned(),
                })
                .collect(),
        ),
        ast::Stmt::ImportFrom(import)
            if import.level == 0 && import.module.as_ref().is_some_and(|m| ours(m)) =>
        {
            Some(
                (import.names.iter())
                    .map(|alias| alias.asname.as_ref().unwrap_or(&alias.name).to_string())
                    .collect(),
            )
        }
        _ => None,
    }
}

/// Whether a statement is `gotopy.install()` (or `goto.install()`), which a program that
/// runs without gotopy does not need.
pub(crate) fn is_install_call(stmt: &ast::Stmt) -> bool {
    let ast::Stmt::Expr(statement) = stmt else {
        return false;
    };
    let Expr::Call(call) = statement.value.as_ref() else {
        return false;
    };
    let Expr::Attribute(attribute) = call.func.as_ref() else {
        return false;
    };
    attribute.attr.as_str() == "install"
        && matches!(name_of(&attribute.value), Some("goto" | "gotopy"))
}

pub(super) fn case_values(slice: &Expr) -> Vec<CaseValue> {
    match slice {
        Expr::Tuple(tuple) if !tuple.elts.is_empty() => tuple.elts.iter().map(case_value).collect(),
        _ => vec![case_value(slice)],
    }
}

fn case_value(expr: &Expr) -> CaseValue {
    let value = match expr {
        Expr::NumberLiteral(_) => int_of(expr),
        Expr::UnaryOp(unary) => match (unary.op, int_of(&unary.operand)) {
            (UnaryOp::USub, CaseKey::Int(value)) => CaseKey::Int(-value),
            (UnaryOp::UAdd, value @ CaseKey::Int(_)) => value,
            _ => CaseKey::Invalid,
        },
        Expr::StringLiteral(string) => CaseKey::Str(string.value.to_str().to_owned()),
        Expr::BytesLiteral(bytes) => CaseKey::Bytes(bytes.value.bytes().collect()),
        _ => CaseKey::Invalid,
    };
    CaseValue {
        range: expr.range(),
        value,
    }
}

fn int_of(expr: &Expr) -> CaseKey {
    match expr {
        Expr::NumberLiteral(number) => int_value(&number.value),
        _ => CaseKey::Invalid,
    }
}

fn int_value(number: &ast::Number) -> CaseKey {
    let ast::Number::Int(int) = number else {
        return CaseKey::Invalid;
    };
    match int.as_u64() {
        Some(small) => CaseKey::Int(BigInt::from(small)),
        None => parse_big_int(&int.to_string()).map_or(CaseKey::Invalid, CaseKey::Int),
    }
}

/// A big integer literal as written in source: `123_456...`, `0x...`, `0o...` or `0b...`.
fn parse_big_int(token: &str) -> Option<BigInt> {
    let digits: String = token.chars().filter(|&c| c != '_').collect();
    let lower = digits.to_ascii_lowercase();
    let (radix, digits) = match lower.get(..2) {
        Some("0x") => (16, &lower[2..]),
        Some("0o") => (8, &lower[2..]),
        Some("0b") => (2, &lower[2..]),
        _ => (10, lower.as_str()),
    };
    BigInt::parse_bytes(digits.as_bytes(), radix)
}
