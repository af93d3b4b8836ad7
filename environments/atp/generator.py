"""Seeded Coq problems in CapaBench's format (a hole marked "Fill in your proof here").

Five kinds: a linear system over Z, an inequality with hypotheses, a square
bound (nonlinear, ``nia``), a defined function at a point (unfold, then
arithmetic), and a nat identity, each six times per 30-task block in a
seeded order (:mod:`environments.task_order`), so every prefix of a run
samples the truth table's mix. Each problem comes from its own random
stream ``(seed, i)``, so the first N of a larger set are the N of a smaller
one. Reference proofs are checked by the tests with coqc.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from environments.atp.problem import Problem
from environments.task_order import kind_at, source_index

HEADER = (
    "Require Import Coq.ZArith.ZArith.\n Require Import Coq.micromega.Psatz.\n"
    " Local Open Scope Z.\n"
)
MARKER = "\n(**********)\n(** Fill in your proof here*)\n(**********)"
NAMES = ("apples", "boats", "coins", "lamps", "books", "trees", "cups", "kites")

Kind = Callable[[random.Random, int], tuple[str, str, str]]


def linear_system(rng: random.Random, i: int) -> tuple[str, str, str]:
    x, y = rng.randint(1, 40), rng.randint(1, 40)
    a, b = rng.randint(2, 5), rng.randint(1, 4)
    name = f"{rng.choice(NAMES)}_system_{i}"
    statement = (
        f"Fact {name}: forall x y: Z, x + y = {x + y} -> {a} * x + {b} * y = {a * x + b * y} "
        f"-> x = {x}."
    )
    return name, statement, "Proof. intros. lia. Qed."


def bounded(rng: random.Random, i: int) -> tuple[str, str, str]:
    lo = rng.randint(-20, 20)
    hi = lo + rng.randint(3, 30)
    k = rng.randint(2, 6)
    name = f"bounded_{rng.choice(NAMES)}_{i}"
    statement = (
        f"Fact {name}: forall x: Z, {lo} < x -> x < {hi} -> {k} * x + 1 > {k * lo} /\\ "
        f"{k} * x < {k * hi}."
    )
    return name, statement, "Proof. intros x H1 H2. split; lia. Qed."


def square_bound(rng: random.Random, i: int) -> tuple[str, str, str]:
    a = rng.randint(1, 9)
    name = f"square_shift_{i}"
    statement = f"Fact {name}: forall x: Z, (x + {a}) * (x + {a}) >= 0."
    return name, statement, f"Proof. intros. pose proof sqr_pos (x + {a}). nia. Qed."


def defined_function(rng: random.Random, i: int) -> tuple[str, str, str]:
    a, b, c = rng.randint(2, 9), rng.randint(-9, 9), rng.randint(-5, 5)
    fn = f"g{i}"
    name = f"{fn}_at_{abs(c)}"
    statement = (
        f"Definition {fn} (x: Z): Z := {a} * x + ({b}).\n Fact {name}: {fn} ({c}) = {a * c + b}."
    )
    return name, statement, f"Proof. unfold {fn}. lia. Qed."


def nat_identity(rng: random.Random, i: int) -> tuple[str, str, str]:
    k = rng.randint(1, 9)
    name = f"nat_shuffle_{i}"
    statement = f"Fact {name}: forall n m: nat, (n + {k} + m = m + n + {k})%nat."
    return name, statement, "Proof. intros. lia. Qed."


KINDS: tuple[Kind, ...] = (linear_system, bounded, square_bound, defined_function, nat_identity)


def kind_of(seed: int, index: int) -> Kind:
    """Problem ``index``'s kind: each six times per 30-task block, in a seeded order."""
    return kind_at(KINDS, "atp", seed, index)


def make(kind: Kind, seed: int, index: int) -> Problem:
    """Problem ``index`` of run ``seed`` had it been of ``kind`` (tests pick a kind so)."""
    name, statement, proof = kind(random.Random(f"atp:{seed}:{index}"), index)
    source = f"{HEADER} {statement}{MARKER}"
    return Problem(f"coq-gen-{index:04d}", "coq", source, name, proof)


def generate(count: int, seed: int = 0) -> list[Problem]:
    """``count`` problems in :func:`kind_of`'s order.

    Problem ``i`` is the old order's problem ``j = source_index(...)`` (kind
    ``j mod 5``, stream ``(seed, j)``, id ``coq-gen-j``): a 30-task block holds
    the old block's very problems, reordered, so the simulator's per-id trap
    rates pair with the same problems as in the table's reference runs.
    """
    numbers = [source_index("atp", seed, i) for i in range(count)]
    return [make(KINDS[j % len(KINDS)], seed, j) for j in numbers]
