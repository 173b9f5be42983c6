"""Lowering the markers of one code object that CPython compiled from a prepared tree.

The front end's plan says, for the scope, where each label and goto is (the span its load of
``label``/``goto`` carries) and which frames each goto leaves; ``gotopy._prepare`` made the
guards and trampolines. Here, on the instruction list (``gotopy._bytecode``):

- a guard (``if label:`` around a ``return``/``raise``/``break``/``continue`` or the body
  of a ``with`` that may end abruptly, ``while label:`` for a constant-true test) is
  deleted, so the statement is unconditional again;
  where its jump was "if true" (3.11's test at the bottom of a ``while``) it becomes a jump;
- a trampoline's guard becomes a jump over the copy, so only gotos enter it;
- a label (``LOAD label; LOAD_ATTR x; POP_TOP``) becomes a position, nothing runs;
- a goto becomes the cleanup of each frame it leaves, innermost first (``for``: drop the
  iterator; ``with``: a copy of the statement's own exit call; ``except``: ``POP_EXCEPT``
  and the ``as`` name unbound as the handler's own exit does), then a jump to the label or
  to the trampoline of the first ``try`` with ``finally`` it leaves.

From 3.12 CPython loads a local without checking that it is bound when its own flow graph
proves it is; a goto adds edges it never saw, so every such load is checked again on the
new graph and made ``LOAD_FAST_CHECK`` when the local may be unbound there (a crash
otherwise).
"""

from __future__ import annotations

import opcode
import types
from typing import Any

from gotopy import _versions
from gotopy._bytecode import (
    OP,
    Body,
    BytecodeError,
    Handler,
    Instr,
    Item,
    TERMINAL,
    UNCONDITIONAL,
    Label,
    depths,
    successors,
)

NAME_LOADS = frozenset(
    OP[name]
    for name in (
        "LOAD_FAST",
        "LOAD_FAST_CHECK",
        "LOAD_FAST_BORROW",
        "LOAD_GLOBAL",
        "LOAD_NAME",
        "LOAD_DEREF",
        "LOAD_CLASSDEREF",
        "LOAD_FROM_DICT_OR_GLOBALS",
        "LOAD_FROM_DICT_OR_DEREF",
    )
    if name in OP
)
CONDITIONAL = {
    OP[name]: name.endswith("TRUE")
    for name in OP
    if name.startswith("POP_JUMP") and name.endswith(("TRUE", "FALSE"))
}


class LowerError(Exception):
    """The rewrite cannot be proved correct: ``(message, span, help)``. With ``help`` (what
    to write instead) it is a refusal by design (``G200``); without, something gotopy
    expects of CPython's code did not hold, a failure inside gotopy (``G900``)."""

    def __init__(self, message: str, span: Any, help: str | None = None) -> None:
        super().__init__(message, span, help)


# The help of every refusal of the rewrite without source.
NO_SOURCE = (
    "compile it with gotopy.compile_source, or import it through gotopy.install(): from the "
    "source, gotopy rewrites every goto"
)

# The help of a label CPython removed before gotopy could see it.
REMOVED = (
    "CPython's compiler drops code under a condition it can prove false (`if False:`, "
    "`while 0:`), and after a loop on a test it computes to be true (`while 1 + 1:`); move "
    "the label, or test a variable instead"
)


def name_of(code: types.CodeType, instr: Instr) -> str | None:
    """The name an instruction loads or stores, for the opcodes markers and guards use."""
    name = instr.name
    arg = instr.arg
    if name == "LOAD_GLOBAL":
        arg >>= 1
    elif name == "LOAD_ATTR":
        arg = _versions.attribute_name_index(arg)
    if name.endswith(("_DEREF", "_FAST", "_FAST_CHECK", "_FAST_BORROW")) or name == "LOAD_CLASSDEREF":
        return code._varname_from_oparg(arg)  # type: ignore[attr-defined]
    if name in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_FROM_DICT_OR_GLOBALS") or name in (
        "STORE_NAME", "DELETE_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"
    ):
        return code.co_names[arg] if arg < len(code.co_names) else None
    return None


def _is_none(body: Body, instr: Instr) -> bool:
    """Whether ``instr`` loads ``None`` (3.15 has ``LOAD_COMMON_CONSTANT`` for it)."""
    if instr.name == "LOAD_CONST":
        return body.constants[instr.arg] is None
    if instr.name == "LOAD_COMMON_CONSTANT":
        common = _versions.common_constants()
        return instr.arg < len(common) and common[instr.arg] is None
    return False


MARKERS = ("goto", "label", "switch", "case")


def _names_a_marker(code: types.CodeType) -> bool:
    """Whether a marker's name is among the names ``code`` (not its nested code objects)
    loads or binds; when none is, it has no marker, used or misused, and is not decoded."""
    names = (code.co_names, code.co_varnames, code.co_cellvars, code.co_freevars)
    return any(word in table for table in names for word in MARKERS)


def has_markers(code: types.CodeType) -> bool:
    """Whether ``code`` (not its nested code objects) still holds a marker: ``goto .x``,
    ``label .x``, ``goto *x``, or a load of ``switch`` or ``case`` from outside the function
    (``while switch *x:``, ``case[...]``); false once gotopy has lowered it."""
    if not _names_a_marker(code):
        return False
    instrs = Body.decode(code).instrs()
    for index, load in enumerate(instrs):
        word = name_of(code, load) if load.op in NAME_LOADS else None
        if word not in MARKERS:
            continue
        rest = instrs[index + 1 :]
        if word in ("switch", "case") and not load.name.startswith("LOAD_FAST"):
            return True
        if len(rest) > 1 and rest[0].name == "LOAD_ATTR" and rest[1].name == "POP_TOP":
            return True
        # `goto *x`: the product of `goto` and the value, dropped.
        ends = [n for n, i in enumerate(rest) if i.name == "POP_TOP" or i.name.startswith(("STORE", "RETURN"))]
        statement = rest[: ends[0]] if ends and rest[ends[0]].name == "POP_TOP" else []
        if word == "goto" and any(i.name == "BINARY_OP" and i.arg == _MULTIPLY for i in statement):
            return True
    return False


def misused_markers(code: types.CodeType) -> tuple[str, Any] | None:
    """What ``check`` rejects in a function that has no marker ``has_markers`` sees: a marker
    name bound as a local (G007), or any load of ``goto`` or ``label``, since none of them
    is a marker statement (G005, G006: ``x = goto .a``, ``y = goto * x``, a bare ``goto``,
    ``label .a.b``); ``(message, position)``, or ``None``. The rewrite without source
    refuses those rather than leave them to run as plain Python."""
    if not _names_a_marker(code):
        return None
    bound = set(code.co_varnames) | set(code.co_cellvars)
    for word in MARKERS:
        if word in bound:
            return f"`{word}` is a local variable of `{code.co_qualname}`", (code.co_firstlineno, None, None, None)
    for load in Body.decode(code).instrs():
        loaded = name_of(code, load) if load.op in NAME_LOADS else None
        if loaded in ("goto", "label"):
            return f"`{loaded}` used other than as a marker statement", load.position
    return None


# `BINARY_OP`'s argument for `*`, from the interpreter's own table.
_MULTIPLY = [symbol for symbol, _ in opcode._nb_ops].index("NB_MULTIPLY")  # type: ignore[attr-defined]


class Lowering:
    def __init__(
        self,
        body: Body,
        scope: dict[str, Any],
        plan: dict[str, Any],
        withs: dict[tuple[int, int], list[tuple[int, int, int, int]]],
        finally_bodies: list[tuple[int, int, int, int]] = (),  # type: ignore[assignment]
    ):
        self.body = body
        self.withs = withs
        self.code = body.code
        self.scope = scope
        self.guards = {tuple(span) for span in plan["guards"]}
        self.trampolines = {tuple(t["span"]) for t in plan["trampolines"]}
        # Every copy of each trampoline's entry, by span, in code order.
        self.entries: dict[tuple, list[Label]] = {}
        # The instruction (a marker's or a guard's load) each label and entry stands for.
        self.marker_of: dict[int, Instr] = {}
        # An instruction at the depth each trampoline's entry starts with (the guard's).
        self.entry_depth_of: dict[int, Instr] = {}
        self.finally_bodies = finally_bodies
        # Every copy of each label in code order: CPython compiles a `finally` body more
        # than once (and 3.12 copies small exit blocks).
        self.labels: dict[str, list[Label]] = {}
        # Likewise for each case and end of a switch, by the span of its marker.
        self.places: dict[tuple, list[Label]] = {}
        self._constants: dict[tuple[type, object], int] | None = None

    def marker_at(self, index: int, word: str) -> str | None:
        """The attribute name of a ``word .name`` statement whose load is item ``index``."""
        items = self.body.items
        if index + 2 >= len(items):
            return None
        load, attr, pop = items[index : index + 3]
        if not (isinstance(attr, Instr) and isinstance(pop, Instr) and isinstance(load, Instr)):
            return None
        if attr.name != "LOAD_ATTR" or pop.name != "POP_TOP":
            return None
        if name_of(self.code, load) != word:
            return None
        return name_of(self.code, attr)

    def lower(self) -> types.CodeType:
        items = self.body.items
        scope = self.scope
        labels = {tuple(label["keyword"]): label["name"] for label in scope["labels"]}
        gotos: dict[tuple, list[dict[str, Any]]] = {}
        for goto in scope["gotos"]:
            gotos.setdefault(tuple(goto["keyword"]), []).append(goto)
        # Cases and the ends of switches are places like labels, by their markers' spans.
        places = {tuple(c["keyword"]) for s in scope["switches"] for c in s["cases"]}
        places |= {tuple(s["end"]) for s in scope["switches"]}
        dispatches = {tuple(s["dispatch"]): s for s in scope["switches"]}
        computed = {tuple(c["keyword"]): c for c in scope["computed"]}
        # The load of `goto` that a computed goto's error formats: a copy of the value.
        placeholders = {tuple(c["statement"]): c for c in scope["computed"]}
        self.guards |= set(placeholders)
        self.placeholder_of: dict[int, Instr] = {}
        self.copies_of = finally_copies(self.body, self.finally_bodies)
        # First pass: guards, trampolines, labels and places, whose positions the sites
        # (gotos, switches and computed gotos) need.
        out: list[Item] = []
        sites: list[tuple[int, str, dict[str, Any]]] = []
        index = 0
        while index < len(items):
            item = items[index]
            if not isinstance(item, Instr) or item.op not in NAME_LOADS:
                out.append(item)
                index += 1
                continue
            span = item.position
            word = name_of(self.code, item)
            if word == "label" and span in self.guards | self.trampolines:
                index = self.remove_guard(index, span in self.trampolines, out)
                continue
            if word == "label" and span in labels:
                name = self.marker_at(index, "label")
                if name is not None and name == labels[span]:
                    self.place(self.labels.setdefault(name, []), item, out)
                    index += 3
                    continue
            if word in ("case", "switch") and span in places and self.marker_at(index, word) == word:
                self.place(self.places.setdefault(span, []), item, out)
                index += 3
                continue
            # A switch's or computed goto's marker, its value on the stack before it.
            dispatch = {"switch": dispatches, "goto": computed}.get(word or "", {}).get(span)
            if dispatch is not None and self.marker_at(index, word or "") == word:
                kind = "switch" if word == "switch" else "computed"
                sites.append((self.subject_statement_end(out, dispatch), kind, dispatch))
                out.extend(items[index : index + 3])
                index += 3
                continue
            following = items[index + 1] if index + 1 < len(items) else item
            if word == "goto" and span in placeholders and _named(following, *_versions.CONVERSIONS):
                self.placeholder_of[id(placeholders[span])] = item
            if word == "goto" and span in gotos:
                name = self.marker_at(index, "goto")
                plan = next((g for g in gotos[span] if g["name"] == name), None)
                if plan is not None:
                    sites.append((len(out), "goto", plan))
                    out.extend(items[index : index + 3])
                    index += 3
                    continue
            out.append(item)
            index += 1
        self.body.items = out
        self.missing = set(labels.values()) - set(self.labels)
        # Every target is chosen on the code as CPython laid it out, before any splice.
        instrs = self.body.instrs()
        at_label = self.body._label_indices()
        index_of = {id(item): i for i, item in enumerate(instrs)}
        splices = self.decide(sites, instrs, at_label, index_of)
        # Second pass: the splices, back to front so indices hold.
        for at, kind, plan, targets in reversed(splices):
            site = out[at]
            assert isinstance(site, Instr)
            if targets is None:
                # A switch or computed goto in code that never runs: its markers go, the
                # value its statement computes is dropped as CPython compiled it.
                out[at + 1 : at + 4] = []
                placeholder = self.placeholder_of.get(id(plan))
                if placeholder is not None:
                    placeholder.op, placeholder.arg = OP["LOAD_CONST"], self.constant(plan["before"])
                continue
            if kind == "goto":
                out[at : at + 3] = self.lower_goto(site, plan, targets)
            elif kind == "switch":
                out[at : at + 4] = self.lower_switch(out[at - 1], out[at + 1], plan, targets)
            else:
                out[at : at + 4] = self.lower_computed(out[at - 1], out[at + 1], plan, targets)
        _jumps_on_their_labels_side(self.body)
        if _versions.UNCHECKED_LOCAL_LOADS:
            check_local_loads(self.body)
        return self.body.assemble()

    def place(self, copies: list[Label], marker: Instr, out: list[Item]) -> None:
        """Replaces a label's (or a place's) marker with a new copy of it."""
        label = Label()
        out.append(label)
        copies.append(label)
        self.marker_of[id(label)] = marker

    def subject_statement_end(self, out: list[Item], plan: dict[str, Any]) -> int:
        """The index in ``out`` of the ``POP_TOP`` that ends the statement computing a
        switch's subject or a computed goto's value, just before its marker: it carries the
        value's span (or none, when CPython folded a constant or joined branches), after
        code of the value."""
        subject = tuple(plan["subject"])
        pop = out[-1] if out else None
        # The last instruction of the subject's code (a jump target when the subject
        # branches, so a label may come between).
        value = next((item for item in reversed(out[:-1]) if isinstance(item, Instr)), None)
        if (
            isinstance(pop, Instr)
            and value is not None
            and pop.name == "POP_TOP"
            and pop.position in (subject, (None, None, None, None))
            and _within(value.position, subject)
        ):
            return len(out) - 1
        raise BytecodeError("cannot find where the compiled code computes this value")

    def targets(self, site: int, kind: str, plan: dict[str, Any]) -> Any:
        """Where a site's jumps go, on the code before any splice: a goto's copy of its
        target, a switch's case and end labels, or a computed goto's goto plans, each with
        the copy of its target; ``None`` for a dispatch in code that never runs."""
        instrs, at_label, stack = self.analysis
        if kind == "goto":
            if plan["name"] in self.missing:
                raise LowerError(
                    f"CPython's compiler removed label `.{plan['name']}` as unreachable", plan["keyword"], REMOVED
                )
            what = f"label `.{plan['name']}`"
            return self.choose(site, _left(stack[site] or 0, plan), self.candidates(plan), what, plan["keyword"])
        depth = stack[site]
        if depth is None:
            return None
        base = depth - 1  # the subject or value is on top
        if kind == "switch":
            cases = [
                self.choose_place(site, base, case["keyword"], f"case `{_case_value(case)!r}`")
                for case in plan["cases"]
            ]
            return cases, self.choose_place(site, base, plan["end"], "the end of this switch")
        # A computed goto: from below its value, as `goto .name` to each label it may reach.
        chosen = []
        for target in plan["targets"]:
            if target["name"] in self.missing:
                raise LowerError(
                    f"CPython's compiler removed label `.{target['name']}` as unreachable",
                    plan["keyword"],
                    REMOVED,
                )
            copy = self.choose(site, _left(base, target), self.candidates(target), f"label `.{target['name']}`", plan["keyword"])
            chosen.append((target, copy))
        # The error formats a copy of the value, from under what its statement pushed.
        placeholder = self.placeholder_of.get(id(plan))
        formatted = None if placeholder is None else stack[instrs.index(placeholder)]
        if formatted is None:
            raise BytecodeError("cannot find where a computed goto's error formats its value")
        return chosen, formatted - base

    def choose_place(self, site: int, depth: int, span: list[int], what: str) -> Label:
        copies = self.places.get(tuple(span), [])
        if not copies:
            raise LowerError(f"CPython's compiler removed {what} as unreachable", span, REMOVED)
        return copies[self.choose(site, depth, copies, what, span)]

    def choose(self, site: int, depth: int, candidates: list[Label], what: str, span: Any) -> int:
        """Which copy of a target a jump from instruction ``site`` goes to.

        CPython compiles a `finally` body once per way out of its `try` (and 3.12+ copies
        small exit blocks), and each trampoline is one more copy, so a label can have
        several copies, and so can a goto. A goto goes to a copy in the same copy of every
        `finally` body around the label (`finally_copies`), where the stack is ``depth``
        deep, as the goto leaves it. When exactly one copy fits, or all that fit start
        equal blocks, that is the goto's own; otherwise gotopy cannot tell, and refuses."""
        instrs, at_label, stack = self.analysis
        # A trampoline's copy is unreachable until its gotos are lowered: no depth yet.
        goto_copies = self.copies_of.get(id(instrs[site]), {})
        fitting = [
            number
            for number, label in enumerate(candidates)
            if (stack[site] is None or stack[at_label[id(label)]] in (None, depth))
            and self.same_copies(goto_copies, label)
        ]
        first = at_label[id(candidates[fitting[0]])] if fitting else 0
        if len(fitting) == 1 or (
            fitting and all(_same_block(instrs, first, at_label[id(candidates[n])]) for n in fitting[1:])
        ):
            return fitting[0]
        raise LowerError(
            f"cannot tell which of CPython's {len(fitting)} copies of {what} belongs to this "
            "jump (CPython compiled the `finally` body around them more than once)",
            span,
            "CPython compiles a `finally` body once for each way out of its `try`; move the "
            "jump and its target out of the `finally` body (into a function it calls, for "
            "example), or out of the code that copies it",
        )

    def decide(
        self,
        sites: list[tuple[int, str, dict[str, Any]]],
        instrs: list[Instr],
        at_label: dict[int, int],
        index_of: dict[int, int],
    ) -> list[tuple[int, str, dict[str, Any], Any]]:
        """Every site with its targets (``targets``), chosen on the code as CPython laid it
        out, before any splice. Code that only the new jumps reach (a case, a label after
        `return`, a trampoline) has no stack depth there yet: each target whose depth is
        known from its site is seeded with it, and the depths computed again, until
        nothing changes. A switch or computed goto that is still unreachable then is in
        code that never runs: ``None``."""
        seeds: dict[int, int] = {}
        decided: dict[int, Any] = {}
        stack: list[int | None] | None = None
        while True:
            # Seeds only add code that is reached: the earlier depths stay.
            stack = depths(self.body, seeds, stack)
            self.analysis = (instrs, at_label, stack)
            more: dict[int, int] = {}
            # Trampolines start at the depth of their guard.
            for key, reference in self.entry_depth_of.items():
                depth = stack[index_of[id(reference)]]
                if key in at_label and stack[at_label[key]] is None and depth is not None:
                    more[at_label[key]] = depth
            for number, (at, kind, plan) in enumerate(sites):
                site = index_of[id(self.body.items[at])]
                reached = stack[site]
                if number in decided or reached is None:
                    continue
                decided[number] = targets = self.targets(site, kind, plan)
                for label, depth in self.entered(kind, plan, targets, reached):
                    if stack[at_label[id(label)]] is None:
                        more[at_label[id(label)]] = depth
            if not more:
                break
            seeds = more
        result = []
        for number, (at, kind, plan) in enumerate(sites):
            targets = decided.get(number)
            if number not in decided and kind == "goto":
                # A goto in code that never runs still becomes a jump: its marker must not run.
                targets = self.targets(index_of[id(self.body.items[at])], kind, plan)
            result.append((at, kind, plan, targets))
        return result

    def entered(self, kind: str, plan: dict[str, Any], targets: Any, depth: int) -> list[tuple[Label, int]]:
        """The labels a site's jumps go to, each with the stack depth it has there."""
        if kind == "goto":
            return [(self.candidates(plan)[targets], _left(depth, plan))]
        if kind == "switch":
            cases, end = targets
            return [(label, depth - 1) for label in [*cases, end]]
        chosen, _ = targets
        return [(self.candidates(target)[copy], _left(depth - 1, target)) for target, copy in chosen]

    def same_copies(self, goto_copies: dict[int, int], label: Label) -> bool:
        """Whether a copy of a label (or trampoline entry) is in the same copy of every
        `finally` body around it as the goto: a goto never enters a `finally` body, so
        every one around its label is around it too."""
        marker = self.marker_of.get(id(label))
        if marker is None:
            return True
        label_copies = self.copies_of.get(id(marker), {})
        return all(goto_copies.get(body) == run for body, run in label_copies.items())

    def candidates(self, plan: dict[str, Any]) -> list[Label]:
        """The copies of where a goto goes: its trampoline's entry, or its label."""
        if plan["via"] is not None:
            return self.entries.get(tuple(plan["via"]), [])
        return self.labels.get(plan["name"], [])

    def remove_guard(self, index: int, trampoline: bool, out: list[Item]) -> int:
        """Deletes the guard whose load is item ``index``; the index after it."""
        items = self.body.items
        load = items[index]
        assert isinstance(load, Instr)
        at = index + 1
        if _named(items[at], "TO_BOOL"):
            at += 1
        jump = items[at]
        if not isinstance(jump, Instr) or jump.op not in CONDITIONAL or jump.target is None:
            raise LowerError("cannot find the test of a guard in the compiled code", load.position)
        at += 1
        if at < len(items) and _named(items[at], "NOT_TAKEN"):
            at += 1
        taken_if_true = CONDITIONAL[jump.op]
        if trampoline and not taken_if_true:
            # Ordinary flow jumps over the copy; gotos enter it after the jump.
            over = load.like(OP["JUMP_FORWARD"], 0, jump.target)
            out.append(over)
            entry = Label()
            out.append(entry)
            self.entries.setdefault(load.position, []).append(entry)
            self.marker_of[id(entry)] = load
            self.entry_depth_of[id(entry)] = over
        elif trampoline:
            # CPython laid the copy out at the jump's target: ordinary flow falls through.
            self.entries.setdefault(load.position, []).append(jump.target)
            self.marker_of[id(jump.target)] = load
            after = next((i for i in items[at:] if isinstance(i, Instr)), None)
            if after is not None:
                self.entry_depth_of[id(jump.target)] = after
        elif taken_if_true:
            out.append(load.like(OP["JUMP_FORWARD"], 0, jump.target))
        return at

    def lower_switch(self, value: Item, marker: Item, plan: dict[str, Any], targets: Any) -> list[Item]:
        """The search that replaces a switch's subject ``POP_TOP`` and dispatch marker: the
        subject stays on the stack, each leaf's ``==`` takes it off and jumps to its case,
        and no match (or anything raised by a comparison) goes to the end."""
        assert isinstance(marker, Instr)
        _own_reference(value)
        cases, end = targets
        instrs, at_label, stack = self.analysis
        guard = Handler(Label(), stack[at_label[id(end)]] or 0, False)
        keys = [(self.constant(_case_value(case)), label) for case, label in zip(plan["cases"], cases)]
        items: list[Item] = []
        self.search(keys, marker, guard, items, end=end)
        items += [guard.target, marker.like(OP["POP_TOP"]), marker.like(OP["JUMP_FORWARD"], 0, end)]
        return items

    def lower_computed(self, value: Item, marker: Item, plan: dict[str, Any], targets: Any) -> list[Item]:
        """The search that replaces a computed goto's value ``POP_TOP`` and marker: each leaf
        that matches goes to a stub that drops the value and goes to its label as ``goto
        .name`` would; no match (or anything raised by a comparison) goes on to the
        statement that raises ``ValueError``, whose load of the value becomes a copy."""
        assert isinstance(marker, Instr)
        _own_reference(value)
        chosen, below = targets
        placeholder = self.placeholder_of[id(plan)]
        placeholder.op, placeholder.arg = OP["COPY"], below + 1
        instrs, _, stack = self.analysis
        guard = Handler(Label(), (stack[instrs.index(marker)] or 0) + 1, False)
        miss = Label()
        keys: list[tuple[int, Label]] = []
        stubs: list[Item] = []
        for target, copy in chosen:
            stub = Label()
            keys.append((self.constant(target["name"]), stub))
            stubs += [stub, _bare(marker, "POP_TOP"), *self.lower_goto(marker, target, copy)]
        items: list[Item] = []
        self.search(keys, marker, guard, items, miss=miss)
        return items + stubs + [guard.target, marker.like(OP["POP_TOP"]), miss]

    def search(
        self,
        keys: list[tuple[int, Label]],
        site: Instr,
        guard: Handler,
        out: list[Item],
        end: Label | None = None,
        miss: Label | None = None,
    ) -> None:
        """A balanced binary search for the value on top of the stack among ``keys``
        (constant index, where to go when equal), sorted as Python orders them: one ``<``
        per level, one ``==`` at a leaf, so at most ceil(log2(n)) + 1 comparisons, every
        conditional jump forward. With ``end`` (a switch) the leaf's ``==`` takes the value
        and no match goes to ``end``; with ``miss`` the value stays for ``miss``. The
        comparisons run under ``guard``; the jumps under the site's own handler, so an
        interrupt on a backward jump is not taken for a failed comparison."""

        def guarded(name: str, arg: int = 0, target: Label | None = None) -> Instr:
            return Instr(OP[name], arg, target, guard, site.position, True)

        def compare(operator: str) -> list[Item]:
            return [guarded(name, arg) for name, arg in _versions.comparison(operator)]

        after = end if end is not None else miss
        if not keys:
            out += [site.like(OP["POP_TOP"])] if end is not None else []
            out.append(site.like(OP["JUMP_FORWARD"], 0, after))
        elif len(keys) == 1:
            constant, hit = keys[0]
            out += [] if end is not None else [guarded("COPY", 1)]
            out += [guarded("LOAD_CONST", constant), *compare("==")]
            out += [guarded(_versions.JUMP_IF_TRUE, 0, hit), site.like(OP["JUMP_FORWARD"], 0, after)]
        else:
            middle = len(keys) // 2
            below = Label()
            out += [guarded("COPY", 1), guarded("LOAD_CONST", keys[middle][0]), *compare("<")]
            out.append(guarded(_versions.JUMP_IF_TRUE, 0, below))
            self.search(keys[middle:], site, guard, out, end, miss)
            out.append(below)
            self.search(keys[:middle], site, guard, out, end, miss)

    def constant(self, value: object) -> int:
        """The index of ``value`` (an ``int``, ``str`` or ``bytes``) in ``co_consts``, added
        if needed; ``True`` is not ``1`` here."""
        if self._constants is None:
            self._constants = {}
            for index, existing in enumerate(self.body.constants):
                if isinstance(existing, (int, str, bytes)):
                    self._constants.setdefault((type(existing), existing), index)
        key = (type(value), value)
        if key not in self._constants:
            self._constants[key] = len(self.body.constants)
            self.body.constants.append(value)
        return self._constants[key]

    def lower_goto(self, site: Instr, plan: dict[str, Any], copy: int) -> list[Item]:
        cleanup: list[Item] = []
        for leave in plan["leaves"]:
            kind = leave["kind"]
            # Dropping a slot, restoring the previous exception and unbinding a name cannot
            # raise: those need no handler.
            if kind in ("for", "async for"):
                cleanup += [_bare(site, "POP_TOP") for _ in range(_versions.slots(kind))]
            elif kind == "except":
                cleanup.append(_bare(site, "POP_EXCEPT"))
                if leave["name"]:
                    cleanup += self.unbind(site, leave["name"], plan)
            else:
                cleanup += self.with_exit(site, leave, plan)
        candidates = self.candidates(plan)
        if not candidates:
            raise LowerError("cannot find the copy of the `finally` body in the compiled code", plan["keyword"])
        target = candidates[copy]
        jump = site.like(OP["JUMP_FORWARD"], 0, target)
        jump.handler = None
        return cleanup + [jump]

    def unbind(self, site: Instr, name: str, plan: dict[str, Any]) -> list[Item]:
        """``LOAD_CONST None; STORE name; DELETE name`` as the handler's own exit has it."""
        instrs = self.body.instrs()
        for first, store, delete in zip(instrs, instrs[1:], instrs[2:]):
            if (
                _is_none(self.body, first)
                and store.name.startswith("STORE_")
                and delete.name == "DELETE_" + store.name[6:]
                and store.arg == delete.arg
                and name_of(self.code, store) == name
            ):
                return [_bare(site, i.name, i.arg) for i in (first, store, delete)]
        raise LowerError(f"cannot find how this function unbinds `{name}`", plan["keyword"])

    def with_exit(self, site: Instr, leave: dict[str, Any], plan: dict[str, Any]) -> list[Item]:
        """A copy of the ``with`` statement's exit: three ``None``s, the call and what
        follows it up to the ``POP_TOP`` of its result, found after the goto."""
        line, _, column, _ = leave["header"]
        skip = leave["inner"]
        if _versions.WITH_EXIT_AT_ITEM:
            spans = self.withs.get((line, column), [])
            if len(spans) <= skip:
                raise LowerError("cannot find this `with` statement in CPython's tree", plan["keyword"])
            line, _, column, _ = spans[len(spans) - 1 - skip]
            skip = 0
        items = self.body.items
        start = items.index(site)
        found = []
        for index in range(len(items) - 3):
            first = items[index]
            if not isinstance(first, Instr) or first.position[0] != line or first.position[2] != column:
                continue
            window = items[index : index + 3]
            if not all(isinstance(i, Instr) and _is_none(self.body, i) for i in window):
                continue
            end = next(
                (
                    at
                    for at in range(index + 3, len(items))
                    if _named(items[at], "POP_TOP")
                ),
                None,
            )
            if end is not None:
                found.append((index < start, index, end))
        # Any copy is the same exit; the first after the goto, for the sake of locality.
        # (`with a, b:` on 3.11 and 3.12: all exits at one position, innermost first.)
        found.sort()
        if len(found) > skip:
            _, index, end = found[skip]
            return self.copy(items[index : end + 1], site)
        # The front end guards every `with` body that may end abruptly, so CPython always
        # compiles the normal exit.
        raise LowerError(f"cannot find this `{leave['kind']}` statement's exit in the compiled code", plan["keyword"])

    def copy(self, region: list[Item], site: Instr) -> list[Item]:
        """``region`` with fresh labels for those placed in it, under the same handlers."""
        renamed = {id(item): Label() for item in region if isinstance(item, Label)}

        def rename(label: Label | None) -> Label | None:
            return None if label is None else renamed.get(id(label), label)

        copy: list[Item] = []
        for item in region:
            if isinstance(item, Label):
                copy.append(renamed[id(item)])
                continue
            handler = item.handler
            if handler is not None and id(handler.target) in renamed:
                # The `CLEANUP_THROW` of an awaited `__aexit__` (3.12+) is in the region.
                handler = Handler(renamed[id(handler.target)], handler.depth, handler.lasti)
            copy.append(Instr(item.op, item.arg, rename(item.target), handler, item.position, False))
        return copy


def finally_copies(body: Body, spans: list[tuple[int, int, int, int]]) -> dict[int, dict[int, int]]:
    """For each instruction inside `finally` bodies, which copy of each body it is in.

    CPython compiles a `finally` body once per way out of its `try`, and gotopy adds one
    per trampoline; all copies carry the body's positions. A copy is a connected part of
    the flow graph (jumps, fall-through and handler edges, either way) restricted to the
    body: instructions whose positions lie inside it, and those without a position that
    lead into it (`PUSH_EXC_INFO`, jumps); copies meet only outside the body. Returns, by
    the id of each instruction, a map from the body's index in ``spans`` to its copy."""
    instrs = body.instrs()
    at_label = body._label_indices()
    edges: list[list[int]] = [[] for _ in instrs]
    for index, instr in enumerate(instrs):
        targets = successors(instrs, index, at_label)
        if instr.handler is not None:
            targets.append(at_label[id(instr.handler.target)])
        edges[index] = [to for to in targets if to < len(instrs)]
    result: dict[int, dict[int, int]] = {}
    for number, (line, end_line, column, end_column) in enumerate(spans):
        start, end = (line, column), (end_line, end_column)
        inside = [
            instr.position[0] is not None
            and start <= (instr.position[0], instr.position[2] or 0) < end
            for instr in instrs
        ]
        if not any(inside):
            continue  # a body of another code object: none of its copies is here
        # Instructions without a position that lead into the body through others like them.
        member = list(inside)
        changed = True
        while changed:
            changed = False
            for index, instr in enumerate(instrs):
                if not member[index] and instr.position[0] is None:
                    if any(member[to] for to in edges[index] if to != index):
                        member[index] = changed = True
        parent = list(range(len(instrs)))
        for index in range(len(instrs)):
            if member[index]:
                for to in edges[index]:
                    if member[to]:
                        parent[_root(parent, index)] = _root(parent, to)
        for index, instr in enumerate(instrs):
            if inside[index] or member[index]:
                result.setdefault(id(instr), {})[number] = _root(parent, index)
    return result


def _own_reference(value: Item) -> None:
    """Makes the load of a value that a search keeps on the stack (the item before the
    ``POP_TOP`` gotopy removed) a strong reference: CPython 3.14 borrows a local's reference
    only for a value consumed in its own basic block, and the search spans several."""
    if isinstance(value, Instr) and value.name == "LOAD_FAST_BORROW":
        value.op = OP["LOAD_FAST"]


def _left(depth: int, plan: dict[str, Any]) -> int:
    """The stack depth a goto leaves from ``depth`` once it has left its frames."""
    return depth - sum(_versions.slots(leave["kind"]) for leave in plan["leaves"])


def _case_value(case: dict[str, Any]) -> int | str | bytes:
    """A case value of the plan as Python's value."""
    value = case["value"]
    if "int" in value:
        return int(value["int"], 16)
    if "str" in value:
        return str(value["str"])
    return bytes(value["bytes"])


def _within(position: tuple[int | None, ...], span: tuple[int, ...]) -> bool:
    """Whether a position starts inside ``span`` (line, end line, column, end column)."""
    line, _, column, _ = position
    if line is None or column is None:
        return False
    return (span[0], span[2]) <= (line, column) < (span[1], span[3])


def _same_block(instrs: list[Instr], a: int, b: int, positions: bool = False) -> bool:
    """Whether the code from ``a`` and from ``b`` is the same up to a return, raise or
    unconditional jump: the same instructions, jumps and handlers (and source positions)."""
    for step in range(64):
        if a + step >= len(instrs) or b + step >= len(instrs):
            return False
        x, y = instrs[a + step], instrs[b + step]
        if (x.op, x.arg, x.handler) != (y.op, y.arg, y.handler) or x.target is not y.target:
            return False
        if positions and x.position != y.position:
            return False
        if x.op in TERMINAL or x.op in UNCONDITIONAL:
            return True
    return False


def _root(parent: list[int], node: int) -> int:
    """The representative of ``node``'s set (union-find, with path halving)."""
    while parent[node] != node:
        parent[node] = parent[parent[node]]
        node = parent[node]
    return node


def _named(item: Item, *names: str) -> bool:
    """Whether ``item`` is an instruction with one of those opcode names."""
    return isinstance(item, Instr) and item.name in names


def _bare(site: Instr, name: str, arg: int = 0) -> Instr:
    """An instruction at ``site``'s position under no handler."""
    instr = site.like(OP[name], arg)
    instr.handler = None
    return instr


def _jumps_on_their_labels_side(body: Body) -> None:
    """Puts each goto's jump under the handler of the instruction it jumps to: a backward
    jump can be interrupted (a signal, another thread), and the handlers around the label
    are the ones that apply there."""
    instrs = body.instrs()
    at_label = body._label_indices()
    jumps = [i for i in instrs if i.inserted and i.target is not None and i.name.startswith("JUMP")]
    for jump in jumps:
        jump.handler = None
    stack = depths(body)
    for jump in jumps:
        at = at_label.get(id(jump.target))
        if at is None or at >= len(instrs):
            continue
        handler, depth = instrs[at].handler, stack[at]
        # Not a handler that only covers the label's instruction after its stack shrank.
        if handler is not None and depth is not None and handler.depth <= depth:
            jump.handler = handler


def check_local_loads(body: Body) -> None:
    """Makes every load of a local that may be unbound on the new flow graph checked."""
    code = body.code
    instrs = body.instrs()
    at_label = body._label_indices()
    count = len(code.co_varnames)
    arguments = code.co_argcount + code.co_kwonlyargcount
    arguments += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    everything = (1 << count) - 1
    # Bit i set: local i may be unbound here.
    unbound: list[int | None] = [None] * len(instrs)
    unbound[0] = everything & ~((1 << arguments) - 1)
    work = [0]

    def flow(index: int, state: int) -> None:
        old = unbound[index]
        new = state if old is None else old | state
        if new != old:
            unbound[index] = new
            work.append(index)

    while work:
        index = work.pop()
        state = unbound[index]
        assert state is not None
        instr = instrs[index]
        if instr.handler is not None:
            flow(at_label[id(instr.handler.target)], state)
        after = _transfer(instr, state, count)
        for to in successors(instrs, index, at_label):
            if to < len(instrs):
                flow(to, after)
    new_items: list[Item] = []
    index = 0
    for item in body.items:
        if isinstance(item, Label):
            new_items.append(item)
            continue
        state = unbound[index] or 0
        index += 1
        new_items.extend(_checked(item, state, count))
    body.items = new_items


def _locals(instr: Instr) -> list[tuple[str, int]]:
    """``("load"|"store"|"delete", local)`` for each local an instruction touches, in order."""
    name, arg = instr.name, instr.arg
    if name in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"):
        return [("load", arg)]
    if name in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
        return [("load", arg >> 4), ("load", arg & 15)]
    if name == "STORE_FAST":
        return [("store", arg)]
    if name == "STORE_FAST_STORE_FAST":
        return [("store", arg >> 4), ("store", arg & 15)]
    if name == "STORE_FAST_LOAD_FAST":
        return [("store", arg >> 4), ("load", arg & 15)]
    if name == "DELETE_FAST":
        return [("delete", arg)]
    if name == "LOAD_FAST_AND_CLEAR":
        return [("delete", arg)]
    return []


def _transfer(instr: Instr, state: int, count: int) -> int:
    for action, local in _locals(instr):
        if local >= count:
            continue
        if action == "store":
            state &= ~(1 << local)
        elif action == "delete":
            state |= 1 << local
    return state


def _checked(instr: Instr, state: int, count: int) -> list[Instr]:
    """``instr``, or its loads split and checked where the local may be unbound."""
    actions = _locals(instr)
    risky = any(
        action == "load" and local < count and state >> local & 1 and instr.name != "LOAD_FAST_CHECK"
        for action, local in actions
    )
    if not risky:
        return [instr]
    split = []
    for action, local in actions:
        op = OP["LOAD_FAST_CHECK"] if action == "load" else OP["STORE_FAST"]
        piece = Instr(op, local, None, instr.handler, instr.position, True)
        split.append(piece)
    return split


__all__ = ["Lowering", "LowerError", "BytecodeError"]


def lower_without_source(code: types.CodeType) -> types.CodeType:
    """Lowers ``goto .name`` and ``label .name`` in a code object CPython compiled without
    gotopy (no source to check and prepare), where the bytecode alone proves it right: the
    label is there once (CPython keeps only reachable labels), the goto and its label are
    under the same exception handler (so no `try`, `with` or `except` is entered or
    left), the goto enters no `for` loop, and every stack slot it has above its label's
    depth is the iterator of a `for` loop it leaves. Anything else is a ``LowerError``."""
    body = Body.decode(code)
    instrs = body.instrs()
    index_of = {id(instr): index for index, instr in enumerate(instrs)}
    markers: list[tuple[str, str, Instr]] = []
    used: set[int] = set()
    for load, attr, pop in zip(instrs, instrs[1:], instrs[2:]):
        word = name_of(code, load) if load.op in NAME_LOADS else None
        if word in ("goto", "label") and attr.name == "LOAD_ATTR" and pop.name == "POP_TOP":
            name = name_of(code, attr) or ""
            markers.append((word, name, load))
            used.update((id(load), id(attr), id(pop)))
    for instr in instrs:
        if instr.op in NAME_LOADS and id(instr) not in used:
            if name_of(code, instr) in MARKERS:
                raise LowerError(
                    f"`{name_of(code, instr)}` used other than as `goto .name` or `label .name`: "
                    "without the source gotopy rewrites only those",
                    instr.position, NO_SOURCE,
                )
    labels: dict[str, Instr] = {}
    for word, name, load in markers:
        if word != "label":
            continue
        first = labels.setdefault(name, load)
        # CPython 3.12+ copies a small exit block into its predecessors: the same source,
        # the same code after it. A label written twice is neither.
        after = index_of[id(load)] + 3, index_of[id(first)] + 3
        if first is not load and (
            first.position != load.position or not _same_block(instrs, *after, positions=True)
        ):
            raise LowerError(f"label `.{name}` is defined twice", load.position, NO_SOURCE)
    stack = depths(body)
    at_label = body._label_indices()
    loops = [
        (index, at_label[id(instr.target)])
        for index, instr in enumerate(instrs)
        if instr.name == "FOR_ITER" and instr.target is not None
    ]
    pops: dict[int, int] = {}
    for word, name, load in markers:
        if word != "goto":
            continue
        label = labels.get(name)
        if label is None:
            raise LowerError(
                f"label `.{name}` is not in the compiled code (it is not defined, or CPython "
                "removed it as unreachable, which only compiling the source through gotopy "
                "prevents)",
                load.position, NO_SOURCE,
            )
        site, there = index_of[id(load)], index_of[id(label)]
        if stack[site] is None or stack[there] is None:
            raise LowerError(f"`goto .{name}` or its label is unreachable code", load.position, NO_SOURCE)
        if load.handler != label.handler:
            raise LowerError(
                f"`goto .{name}` leaves or enters a `try`, `with` or `except` block: without "
                "the source gotopy rewrites only gotos that leave nothing but `for` loops",
                load.position, NO_SOURCE,
            )
        leaving = 0
        for start, end in loops:
            inside_goto, inside_label = start < site < end, start < there < end
            if inside_label and not inside_goto:
                raise LowerError(f"`goto .{name}` jumps into a `for` body", load.position, NO_SOURCE)
            leaving += inside_goto and not inside_label
        extra = (stack[site] or 0) - (stack[there] or 0)
        if extra != leaving * _versions.slots("for"):
            raise LowerError(
                f"cannot prove what `goto .{name}` leaves on the stack", load.position, NO_SOURCE
            )
        pops[id(load)] = extra
    targets: dict[str, Label] = {}
    placed: set[str] = set()
    out: list[Item] = []
    items = body.items
    index = 0
    while index < len(items):
        item = items[index]
        marker = next((m for m in markers if m[2] is item), None) if id(item) in used else None
        if marker is None:
            out.append(item)
            index += 1
            continue
        word, name, load = marker
        if word == "label":
            # Gotos go to the first copy; the others are equal blocks.
            out.append(Label() if name in placed else targets.setdefault(name, Label()))
            placed.add(name)
        else:
            out += [_bare(load, "POP_TOP") for _ in range(pops[id(load)])]
            jump = load.like(OP["JUMP_FORWARD"], 0, targets.setdefault(name, Label()))
            out.append(jump)
        index += 3
    body.items = out
    _jumps_on_their_labels_side(body)
    if _versions.UNCHECKED_LOCAL_LOADS:
        check_local_loads(body)
    return body.assemble()
