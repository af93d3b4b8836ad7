"""Variants: what fills a slot on each side of a coalition game, a model or any implementation.

CapaBench's game swaps a slot's *model*: the default side runs the agent's
module on the default model, the test side the same module on the model under
test. MIRROR's ablation switches a component *off*, and MMAU's planner-shift
holds one stage on a named model. A :class:`Variant` covers all of them: a
(module, model) pair, either part possibly left to the run ("the agent's
module", "this side's model"), or ``off`` (no actor is built for the slot, so
it makes no LLM call).

Spelling (``--vary SLOT=DEFAULT:TEST`` and the TOML table ``[vary]``)::

    off              the slot is skipped
    on               the agent's module, with this side's model (the run's
                     default model, or the test column's model)
    @MODEL           the agent's module with MODEL (sim:strong, vllm:URL#name, ...)
    MODULE           the module registered as MODULE, with this side's model
    MODULE@MODEL     both named

Model specs contain ``:`` (``sim:weak``), so ``DEFAULT:TEST`` is split at the
one ``:`` whose two sides are both valid variants (``@sim:weak:@sim:strong``
splits only one way); when no split or more than one is valid the text is
refused with the rule spelled out. Module names must be registered modules,
which is what makes ``MODULE`` unambiguous.

Episode metadata carries the outcome for actors: ``assignment`` maps every
slot of the agent to the model spec its actor was given, or :data:`OFF`
(see :meth:`agentbus.core.actor.Actor.slot_off`), and ``variants`` (only when a
run varies implementations) names each slot's two variants.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from agentbus.core.errors import UserError
from agentbus.llm.spec import parse_spec

#: the variant of a slot that is skipped; also its value in episode ``assignment`` metadata
OFF = "off"
#: the agent's own module with this side's model
ON = "on"

RULE = (
    "each side is off, on, @MODEL, MODULE or MODULE@MODEL (MODULE a registered module, "
    "MODEL a model spec such as sim:strong)"
)


@dataclass(frozen=True)
class Variant:
    """One side of a varied slot: ``off``, or a module and a model (None = left to the run)."""

    module: str | None = None
    model: str | None = None
    off: bool = False

    @property
    def follows_side(self) -> bool:
        """Whether the model comes from the side (default model / test column)."""
        return not self.off and self.model is None

    def spelled(self) -> str:
        """The canonical spelling (what ``parse_variant`` reads back)."""
        if self.off:
            return OFF
        if self.module is None and self.model is None:
            return ON
        if self.model is None:
            return str(self.module)
        return f"{self.module or ''}@{self.model}"

    def resolve(self, agent_module: str, side_model: str) -> tuple[str, str] | None:
        """(module, model) for a side whose own model is ``side_model``; None when off."""
        if self.off:
            return None
        return self.module or agent_module, self.model or side_model


def label(resolved: tuple[str, str] | None) -> str:
    """How people see a resolved variant: ``off`` or ``MODULE@MODEL``."""
    return OFF if resolved is None else f"{resolved[0]}@{resolved[1]}"


def _check_model(text: str) -> str:
    parse_spec(text)  # UserError for a spec that names no valid backend form
    return text


def parse_variant(text: str, modules: Collection[str]) -> Variant:
    """One side's variant; a one-line UserError when it is none of the forms."""
    text = text.strip()
    if text == OFF:
        return Variant(off=True)
    if text == ON:
        return Variant()
    module, at, model = text.partition("@")
    if module and module not in modules:
        raise UserError(f"{module!r} is not a registered module ({RULE})")
    if not at:
        return Variant(module=module)
    if not model:
        raise UserError(f"{text!r} names no model after '@' ({RULE})")
    return Variant(module=module or None, model=_check_model(model))


def _try(text: str, modules: Collection[str]) -> Variant | None:
    try:
        return parse_variant(text, modules)
    except UserError:
        return None


def parse_pair(text: str, modules: Collection[str]) -> tuple[Variant, Variant]:
    """``DEFAULT:TEST`` -> the two variants, split at the one ``:`` that leaves both valid."""
    splits = []
    for at, char in enumerate(text):
        if char != ":":
            continue
        left, right = _try(text[:at], modules), _try(text[at + 1 :], modules)
        if left is not None and right is not None:
            splits.append((left, right))
    if len(splits) == 1:
        return splits[0]
    if not splits:
        raise UserError(f"cannot read {text!r} as DEFAULT:TEST; {RULE}")
    raise UserError(f"{text!r} splits into DEFAULT:TEST in more than one way; {RULE}")


def parse_vary(slot: str, text: str, modules: Collection[str]) -> tuple[Variant, Variant]:
    """The variants of ``slot`` from its ``DEFAULT:TEST`` text (errors name the slot)."""
    try:
        return parse_pair(text, modules)
    except UserError as exc:
        raise UserError(f"--vary {slot}={text}: {exc}") from None


__all__ = ["OFF", "ON", "RULE", "Variant", "label", "parse_pair", "parse_variant", "parse_vary"]
