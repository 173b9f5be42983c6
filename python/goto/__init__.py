"""The module ``goto``: the names programs written for ``gotopy run`` import
(``from goto import goto, label``), the same objects as ``gotopy``'s."""

from gotopy import case, goto, label, switch, with_goto

__all__ = ["case", "goto", "label", "switch", "with_goto"]
