//! The lowering's cost, counted on generated functions of growing size.

use super::Lowering;
use crate::cpython::Version;
use crate::cpython::plan::plan_source;
use crate::cpython::shapes::Shapes;
use crate::cpython::testing::function;
use crate::splice::{
    assert_linear, assert_linear_on, generated, generated_with_computed,
    generated_with_computed_in_loops, generated_with_temporaries,
};
use crate::{Options, Source};

/// Lowers the function `f` of `text` for `version`.
fn lower(version: Version, text: &str) {
    let source = Source::new("big.py", text);
    let plan = plan_source(&source, Options::default()).expect("the module plans");
    assert!(!plan.edits_tree(), "CPython compiles the source as written");
    let compiled = function(version, text, "f");
    Lowering::lower(Shapes::of(version), &compiled.code, &plan.scopes[0], &plan)
        .expect("the function lowers");
}

#[test]
fn the_lowering_costs_what_the_code_costs() {
    for version in [Version::ALL[0], Version::ALL[Version::ALL.len() - 1]] {
        assert_linear(&format!("CPython {version}"), |text| lower(version, text));
    }
}

/// A local of its own per block: CPython 3.12 and later check the loads again
/// (`locals::check_local_loads`).
#[test]
fn a_temporary_per_block_costs_what_the_code_costs() {
    let version = Version::ALL[Version::ALL.len() - 1];
    let route = format!("CPython {version}, temporaries");
    assert_linear_on(&route, generated_with_temporaries, |text| {
        lower(version, text)
    });
}

/// A computed goto that can reach every label (the return dispatch of three-address
/// code), lowered in CPython's own code of the source: a search as large as the
/// function's labels.
#[test]
fn a_computed_goto_over_every_label_costs_what_the_code_costs() {
    let dispatching = |blocks: usize| {
        let dispatch = "    if steps < 0:\n        goto *('b' + str(-steps))\n    label .done\n";
        generated(blocks).replace("    label .done\n", dispatch)
    };
    assert!(dispatching(2).contains("goto *('b'"));
    for version in [Version::ALL[0], Version::ALL[Version::ALL.len() - 1]] {
        let route = format!("CPython {version}, a computed goto");
        assert_linear_on(&route, dispatching, |text| lower(version, text));
    }
}

/// A computed goto in every sixteenth block, each over every label: the computed gotos
/// of one place share one search and its stubs.
#[test]
fn many_computed_gotos_cost_what_the_code_costs() {
    for version in [Version::ALL[0], Version::ALL[Version::ALL.len() - 1]] {
        let route = format!("CPython {version}, many computed gotos");
        assert_linear_on(&route, generated_with_computed, |text| lower(version, text));
    }
}

/// A computed goto in each of many loops, each over every label: each calls the one
/// search function of the code object and goes on by its levels, where each had a
/// search and a stub per label of its own (G of them over L labels cost G times L).
#[test]
fn computed_gotos_in_many_frames_cost_what_the_code_costs() {
    for version in [Version::ALL[0], Version::ALL[Version::ALL.len() - 1]] {
        let route = format!("CPython {version}, computed gotos in many frames");
        assert_linear_on(&route, generated_with_computed_in_loops, |text| {
            lower(version, text)
        });
    }
}

/// A `try`/`finally` in every block: the copies of each `finally` body are found among
/// its own instructions, not among the whole function's.
#[test]
fn finally_bodies_cost_what_they_hold() {
    let with_finally = |blocks: usize| {
        let finally = "    try:\n        n += 1\n    finally:\n        a += 1\n";
        generated(blocks).replace("    n += 1\n", finally)
    };
    for version in [Version::ALL[0], Version::ALL[Version::ALL.len() - 1]] {
        let route = format!("CPython {version}, finally bodies");
        assert_linear_on(&route, with_finally, |text| lower(version, text));
    }
}
