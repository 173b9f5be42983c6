//! Tests a compiler may compute: the truth of a literal test (`if False:`, `while 0:`),
//! which gotopy knows as the compilers do, and tests made only of constants (`if 1 - 1:`,
//! `if x and False:`, `if __debug__:`), which a compiler may fold in ways gotopy does not
//! follow. Both code generators drop the code under a test they compute to be false (and
//! the other clauses of one computed to be true), labels and all: `prepare` keeps that code
//! where the test is a literal, and `check` refuses a label where it is not. Pure functions
//! of one expression.

use rustpython_compiler::ast::{self as ast, Expr};

/// What a compiler may make of a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Folding {
    /// A literal whose truth every compiler computes as gotopy does ([`truth`]).
    Known(bool),
    /// An expression of constants (or one operand of `and`, `or` or `not` is one) that a
    /// compiler may compute, to a value gotopy does not.
    Unknown,
    /// A test evaluated at run time.
    Runtime,
}

/// What a compiler may make of `test`, the test of an `if`, `elif`, `while` or `assert`.
pub(crate) fn folding(test: &Expr) -> Folding {
    match truth(test) {
        Some(value) => Folding::Known(value),
        None if may_fold(test) => Folding::Unknown,
        None => Folding::Runtime,
    }
}

/// The truth value of a literal, a tuple of them, or `not`, `-` or `+` applied to one (signs
/// only to numbers, which keep their truth); `None` for anything else. Both code generators
/// compute at least these (RustPython's the literals, CPython's also `not`, signs and tuples
/// of constants, in its syntax tree or its flow graph), and they have no effect, so a test
/// of this kind may be replaced by one of the same truth.
pub(crate) fn truth(expr: &Expr) -> Option<bool> {
    match expr {
        Expr::BooleanLiteral(literal) => Some(literal.value),
        Expr::NoneLiteral(_) => Some(false),
        Expr::EllipsisLiteral(_) => Some(true),
        Expr::NumberLiteral(number) => Some(match &number.value {
            ast::Number::Int(int) => int.as_u64() != Some(0),
            ast::Number::Float(value) => *value != 0.0,
            ast::Number::Complex { real, imag } => *real != 0.0 || *imag != 0.0,
        }),
        Expr::StringLiteral(string) => Some(!string.value.is_empty()),
        Expr::BytesLiteral(bytes) => Some(!bytes.value.is_empty()),
        Expr::Tuple(tuple) => tuple
            .elts
            .iter()
            .all(|element| truth(element).is_some())
            .then_some(!tuple.elts.is_empty()),
        Expr::UnaryOp(unary) => match unary.op {
            ast::UnaryOp::Not => truth(&unary.operand).map(|operand| !operand),
            ast::UnaryOp::USub | ast::UnaryOp::UAdd => {
                truth(&unary.operand).filter(|_| numeric(&unary.operand))
            }
            ast::UnaryOp::Invert => None,
        },
        _ => None,
    }
}

/// A number or boolean literal, possibly signed.
fn numeric(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) => true,
        Expr::UnaryOp(unary) => {
            matches!(unary.op, ast::UnaryOp::USub | ast::UnaryOp::UAdd) && numeric(&unary.operand)
        }
        _ => false,
    }
}

/// Whether a compiler may compute a jump of the test `expr`: the test, or one of the operands
/// a compiler jumps on one by one (those of `and` and `or`, the operand of `not`, the three
/// parts of a conditional expression), is made of constants only.
fn may_fold(expr: &Expr) -> bool {
    match expr {
        Expr::BoolOp(boolean) => boolean.values.iter().any(jumped_on_constant),
        Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => jumped_on_constant(&unary.operand),
        Expr::If(conditional) => [&conditional.test, &conditional.body, &conditional.orelse]
            .into_iter()
            .any(|part| jumped_on_constant(part)),
        _ => constant(expr),
    }
}

fn jumped_on_constant(expr: &Expr) -> bool {
    truth(expr).is_some() || may_fold(expr)
}

/// Whether `expr` is made of literals and operators alone (`__debug__` counts: CPython
/// compiles it as the constant it is at the optimisation level), so a compiler may compute
/// it. Errs towards yes: displays and f-strings count, whether or not a compiler folds them.
fn constant(expr: &Expr) -> bool {
    match expr {
        Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_)
        | Expr::EllipsisLiteral(_)
        | Expr::NumberLiteral(_)
        | Expr::StringLiteral(_)
        | Expr::BytesLiteral(_) => true,
        Expr::Name(name) => name.id.as_str() == "__debug__",
        Expr::FString(string) => string
            .value
            .elements()
            .all(|element| matches!(element, ast::InterpolatedStringElement::Literal(_))),
        Expr::UnaryOp(unary) => constant(&unary.operand),
        Expr::BinOp(binary) => constant(&binary.left) && constant(&binary.right),
        Expr::BoolOp(boolean) => boolean.values.iter().all(constant),
        Expr::Compare(compare) => {
            constant(&compare.left) && compare.comparators.iter().all(constant)
        }
        Expr::If(conditional) => {
            constant(&conditional.test)
                && constant(&conditional.body)
                && constant(&conditional.orelse)
        }
        Expr::Subscript(subscript) => constant(&subscript.value) && constant(&subscript.slice),
        Expr::Slice(slice) => [&slice.lower, &slice.upper, &slice.step]
            .into_iter()
            .flatten()
            .all(|part| constant(part)),
        Expr::Tuple(tuple) => tuple.elts.iter().all(constant),
        Expr::List(list) => list.elts.iter().all(constant),
        Expr::Set(set) => set.elts.iter().all(constant),
        Expr::Dict(dict) => dict
            .items
            .iter()
            .all(|item| item.key.as_ref().is_none_or(constant) && constant(&item.value)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{Folding, folding};
    use rustpython_compiler::parser::parse_expression;

    fn of(text: &str) -> Folding {
        let parsed = parse_expression(text).expect("an expression");
        folding(parsed.expr())
    }

    #[test]
    fn literals_are_known_constants_unknown_and_the_rest_runtime() {
        for (text, expected) in [
            ("False", Folding::Known(false)),
            ("0", Folding::Known(false)),
            ("not 1", Folding::Known(false)),
            ("()", Folding::Known(false)),
            ("-0.0", Folding::Known(false)),
            ("'x'", Folding::Known(true)),
            ("(1, 'a')", Folding::Known(true)),
            ("1 - 1", Folding::Unknown),
            ("x and False", Folding::Unknown),
            ("not (x or 0)", Folding::Unknown),
            ("a if 1 else b", Folding::Unknown),
            ("__debug__", Folding::Unknown),
            ("not __debug__", Folding::Unknown),
            ("f'abc'", Folding::Unknown),
            ("[]", Folding::Unknown),
            ("x", Folding::Runtime),
            ("x == 0", Folding::Runtime),
            ("f(False)", Folding::Runtime),
            ("f'{x}'", Folding::Runtime),
            ("(x,)", Folding::Runtime),
            ("x and y", Folding::Runtime),
        ] {
            assert_eq!(of(text), expected, "{text}");
        }
    }
}
