"""Properties of the exact estimators, cross-checks against shapiq, and the Game."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentbus.core.errors import UserError
from attribution.estimates import NotEstimable
from attribution.exact import (
    banzhaf_matrix,
    banzhaf_values,
    exact_values,
    interaction_matrix,
    interaction_values,
    shapley_matrix,
    shapley_values,
)
from attribution.game import Game, coalition_key

SLOTS4 = ["planning", "reasoning", "action", "reflection"]


def games(min_n: int = 1, max_n: int = 6) -> st.SearchStrategy[np.ndarray]:
    return st.integers(min_n, max_n).flatmap(
        lambda n: st.lists(
            st.floats(-5, 5, allow_nan=False, width=32), min_size=1 << n, max_size=1 << n
        ).map(np.array)
    )


@settings(max_examples=60, deadline=None)
@given(games())
def test_efficiency(v: np.ndarray) -> None:
    phi = exact_values(v)
    assert phi.sum() == pytest.approx(v[-1] - v[0], abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(games(min_n=2), st.data())
def test_symmetry(v: np.ndarray, data: st.DataObject) -> None:
    n = len(v).bit_length() - 1
    i, j = data.draw(st.sampled_from([(a, b) for a in range(n) for b in range(a + 1, n)]))
    # make i and j interchangeable: v(S + i) = v(S + j) for S without both
    v = v.copy()
    for m in range(len(v)):
        if (m >> i & 1) and not (m >> j & 1):
            v[m ^ (1 << i) ^ (1 << j)] = v[m]
    for kind in ("shapley", "banzhaf"):
        phi = exact_values(v, kind)
        assert phi[i] == pytest.approx(phi[j], abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(games(), st.data())
def test_null_player(v: np.ndarray, data: st.DataObject) -> None:
    n = len(v).bit_length() - 1
    i = data.draw(st.integers(0, n - 1))
    v = v.copy()
    for m in range(len(v)):
        if m >> i & 1:
            v[m] = v[m ^ (1 << i)]
    for kind in ("shapley", "banzhaf"):
        assert exact_values(v, kind)[i] == pytest.approx(0.0, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(games(max_n=5), st.floats(-3, 3), st.floats(-3, 3), st.data())
def test_linearity(v: np.ndarray, a: float, b: float, data: st.DataObject) -> None:
    w = np.array(data.draw(st.lists(st.floats(-5, 5, width=32), min_size=len(v), max_size=len(v))))
    for kind in ("shapley", "banzhaf"):
        lhs = exact_values(a * v + b * w, kind)
        rhs = a * exact_values(v, kind) + b * exact_values(w, kind)
        assert np.allclose(lhs, rhs, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(games(min_n=2, max_n=2))
def test_two_slots_banzhaf_equals_shapley(v: np.ndarray) -> None:
    # With two players both weight schemes are 1/2 on each marginal contribution.
    assert np.allclose(exact_values(v, "shapley"), exact_values(v, "banzhaf"))
    phi = exact_values(v)
    assert phi[0] - phi[1] == pytest.approx(v[1] - v[2], abs=1e-9)


def test_banzhaf_differs_from_shapley_for_four_slots() -> None:
    v = np.zeros(16)
    v[15] = 1.0  # unanimity game: Shapley 1/4 each, Banzhaf 1/8 each
    assert np.allclose(exact_values(v), 0.25)
    assert np.allclose(exact_values(v, "banzhaf"), 0.125)


def test_cross_check_with_shapiq() -> None:
    shapiq = pytest.importorskip("shapiq")
    rng = np.random.default_rng(7)
    for n in (3, 4, 5):
        v = rng.random(1 << n)

        def value(coalitions: np.ndarray, v: np.ndarray = v, n: int = n) -> np.ndarray:
            masks = (np.asarray(coalitions).astype(int) * (1 << np.arange(n))).sum(axis=1)
            return v[masks]

        computer = shapiq.ExactComputer(value, n_players=n)
        sv = computer("SV", order=1).dict_values
        bv = computer("BV", order=1).dict_values
        sii = computer("SII", order=2).dict_values
        assert np.allclose(shapley_matrix(n) @ v, [sv[(i,)] for i in range(n)])
        assert np.allclose(banzhaf_matrix(n) @ v, [bv[(i,)] for i in range(n)])
        pairs, coef = interaction_matrix(n)
        assert np.allclose(coef @ v, [sii[p] for p in pairs])


def _full_game(v: np.ndarray, reps: int = 3) -> Game:
    game = Game(SLOTS4)
    for t in range(reps):
        for m in range(16):
            game.add_mask(m, f"t{t}", float(v[m]))
    return game


def test_game_estimates_match_exact_values_and_efficiency() -> None:
    rng = np.random.default_rng(3)
    v = rng.random(16)
    game = _full_game(v)
    est = shapley_values(game)
    assert np.allclose(est.values, exact_values(v))
    assert est.values.sum() == pytest.approx(game.means[15] - game.means[0], abs=1e-12)
    assert np.allclose(banzhaf_values(game).values, exact_values(v, "banzhaf"))
    assert len(interaction_values(game).slots) == 6
    slot = est["action"]
    assert slot.ci_low <= slot.value <= slot.ci_high
    assert slot.cs_low <= slot.ci_low and slot.cs_high >= slot.ci_high


def test_missing_coalition_is_not_estimable_never_zero() -> None:
    game = Game(SLOTS4)
    for m in range(15):
        game.add_mask(m, "t", 1.0)
    assert game.missing() == [frozenset(SLOTS4)]
    with pytest.raises(NotEstimable, match="planning\\+reasoning\\+action\\+reflection"):
        shapley_values(game)
    with pytest.raises(NotEstimable):
        banzhaf_values(game)


def test_keys_and_bad_input() -> None:
    game = Game(SLOTS4)
    assert game.coalition_key(["action", "planning"]) == "planning+action"
    assert game.coalition_key([]) == ""
    assert coalition_key(SLOTS4, {"reflection", "reasoning"}) == "reasoning+reflection"
    assert game.mask_of_key("planning+action") == 0b0101
    with pytest.raises(UserError, match="unknown slot"):
        game.add(["memory"], "t", 1.0)
    with pytest.raises(UserError, match="finite"):
        game.add([], "t", float("nan"))
    with pytest.raises(UserError, match="unique"):
        Game(["a", "a"])


def test_paired_se_equals_sd_of_task_differences() -> None:
    rng = np.random.default_rng(11)
    game = Game(SLOTS4)
    difficulty = rng.normal(size=40)
    rows = []
    for t in range(40):
        r = (rng.normal(size=16) + difficulty[t] > 0).astype(float)
        rows.append(r)
        for m in range(16):
            game.add_mask(m, f"t{t}", r[m])
    est = shapley_values(game)
    assert est.method == "paired"
    d = np.array(rows) @ shapley_matrix(4).T
    se_paired = d.std(axis=0, ddof=1) / np.sqrt(40)
    # equal up to the shrinkage term (zero unless a coalition is 0/m or m/m)
    assert np.all(est.se >= se_paired - 1e-12)
    assert np.allclose(est.se, se_paired, rtol=0.05)
    independent = shapley_values(game, method="independent")
    assert independent.method == "independent"
    assert np.all(independent.se > est.se)  # task effects cancel when paired


def test_independent_se_formula_and_shrinkage() -> None:
    game = Game(["a", "b"])
    for m in range(4):
        for k in range(10):
            game.add_mask(m, f"{m}-{k}", 1.0 if m == 3 else float(k % 2))
    est = shapley_values(game)
    assert est.method == "independent"
    p_full = 11 / 12  # 10/10 successes shrunk to (k+1)/(m+2)
    var = np.full(4, 0.25)
    var[3] = p_full * (1 - p_full)
    expected = (shapley_matrix(2) ** 2 @ (var / 10)) ** 0.5
    assert np.allclose(est.se, expected)
    assert est.se[0] > 0


def test_difference_and_rank_intervals() -> None:
    game = Game(SLOTS4)
    rng = np.random.default_rng(5)
    v = np.array([0.2 + 0.5 * (m >> 2 & 1) + 0.05 * (m & 1) for m in range(16)])
    for t in range(200):
        for m in range(16):
            game.add_mask(m, f"t{t}", float(rng.random() < v[m]))
    est = shapley_values(game)
    diff = est.difference("action", "planning")
    assert diff.excludes_zero() and diff.value > 0
    ranks = est.rank_intervals()
    assert ranks["action"] == (1, 1)
    assert ranks["reasoning"][1] == 4
    d = est.to_dict()
    assert d["slots"]["action"]["rank_low"] == 1
