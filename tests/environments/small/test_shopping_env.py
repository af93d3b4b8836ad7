"""The shopping environment: WebShop's reward, pages, clicks, the action limit, loaders."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agentbus import ActionProposed, TaskSource, UserError
from environments.shopping.catalogue import Catalogue, Product
from environments.shopping.env import ShoppingEnvironment
from environments.shopping.generator import CATALOGUE_SIZE
from environments.shopping.goal import Goal
from environments.shopping.reward import reward
from environments.shopping.session import Session
from environments.shopping.tasks import catalogue_of, generated_tasks, goal_of

DESK = Product(
    asin="B0DESK0001",
    title="Oakline Desk, Folding, Wood Finish",
    category="furniture",
    product_type="desk",
    price=120.0,
    attributes=("folding", "wood finish", "fully assembled"),
    options=(("color", ("black", "khaki")), ("size", ("40 inch", "48 inch"))),
)
GOAL = Goal(
    asin="B0DESK0001",
    category="furniture",
    product_type="desk",
    attributes=("folding", "wood finish"),
    options=(("color", "khaki"), ("size", "48 inch")),
    price_upper=140.0,
)
RIGHT = {"color": "khaki", "size": "48 inch"}


def _variant(**changes: object) -> Product:
    fields = {**DESK.__dict__, **changes}
    return Product(**fields)


def test_reward_all_right_is_one() -> None:
    parts = reward(DESK, RIGHT, GOAL)
    assert parts.reward == 1.0
    assert (parts.attributes_matched, parts.options_matched, parts.price_ok) == (2, 2, True)


def test_reward_partial_attribute_match() -> None:
    p = _variant(attributes=("folding", "metal frame"), title="Oakline Desk, Folding")
    assert reward(p, RIGHT, GOAL).reward == pytest.approx(4 / 5)


def test_reward_wrong_option() -> None:
    assert reward(DESK, {"color": "black", "size": "48 inch"}, GOAL).reward == pytest.approx(4 / 5)
    assert reward(DESK, {}, GOAL).reward == pytest.approx(3 / 5)


def test_reward_over_budget() -> None:
    assert reward(_variant(price=150.0), RIGHT, GOAL).reward == pytest.approx(4 / 5)


def test_reward_wrong_type_scales_everything() -> None:
    chair = _variant(product_type="office chair", title="Oakline Chair, Folding, Wood Finish")
    assert reward(chair, RIGHT, GOAL).reward == pytest.approx(0.5)  # same department
    lamp = _variant(product_type="table lamp", category="home", title="Oakline Lamp, Folding")
    assert reward(lamp, RIGHT, GOAL).reward == 0.0
    lamp_desk = _variant(product_type="lamp", category="home", title="Desk Lamp, Folding")
    assert reward(lamp_desk, RIGHT, GOAL).reward == pytest.approx(0.1)


def _small_catalogue(n: int = 25) -> Catalogue:
    products = [DESK] + [
        _variant(asin=f"B0DESK{i:04d}", title=f"Desk number {i}, Folding", price=100.0 + i)
        for i in range(2, n + 1)
    ]
    return Catalogue(products)


def test_pagination_ten_per_page_and_next_prev() -> None:
    s = Session(_small_catalogue(25), GOAL)
    r = s.act("search[folding desk]")
    assert r.valid and "Page 1 of 3 (total results: 25)" in r.text
    assert r.text.count("[B0DESK") == 10 and "[Next >]" in r.text and "[< Prev]" not in r.text
    r = s.act("click[Next >]")
    assert "Page 2 of 3" in r.text and "[< Prev]" in r.text
    r = s.act("click[Next >]")
    page = r.text.split("\n\n")[1]
    assert "Page 3 of 3" in page and page.count("[B0DESK") == 5 and "[Next >]" not in page
    r = s.act("click[< Prev]")
    assert "Page 2 of 3" in r.text


def test_results_are_capped_at_fifty() -> None:
    catalogue = catalogue_of("generated:0")
    assert len(catalogue.search("desk")) == 50


def test_invalid_and_ambiguous_clicks_leave_the_page() -> None:
    s = Session(_small_catalogue(25), GOAL)
    s.act("search[folding desk]")
    r = s.act("click[B0DESK000]")  # a prefix of several IDs
    assert not r.valid and "ambiguous" in r.text and s.state.page == "results"
    r = s.act("click[B0DESK00]")
    assert not r.valid and "ambiguous" in r.text
    r = s.act("click[Desk number 7]")  # the title instead of the ID
    assert not r.valid and "did you mean [B0DESK0007]" in r.text
    r = s.act("click[Buy Now]")
    assert not r.valid and "no element" in r.text
    r = s.act("search[desk]")
    assert not r.valid and "Back to Search" in r.text
    assert s.state.page == "results"


def test_item_page_options_and_purchase() -> None:
    s = Session(_small_catalogue(5), GOAL)
    s.act("search[folding wood finish desk]")
    r = s.act("click[b0desk0001]")  # case does not matter
    assert "color: [black] [khaki]" in r.text and "[Buy Now]" in r.text
    for label in ("Description", "< Prev"):
        assert s.act(f"click[{label}]").valid
    s.act("click[khaki]")
    s.act("click[48 inch]")
    r = s.act("click[Buy Now]")
    assert r.done and s.reward == 1.0


def test_action_limit_ends_with_zero_reward() -> None:
    s = Session(_small_catalogue(5), GOAL, limit=15)
    for i in range(14):
        assert not s.act("click[nothing]").done, i
    r = s.act("click[nothing]")
    assert r.done and s.reward == 0.0 and "All 15 actions" in r.text


@pytest.mark.parametrize(
    "text",
    ["", "buy the desk", "search[]", "click[a] click[b]", "search[desk", "open[B0DESK0001]"],
)
def test_malformed_actions_get_a_clear_observation(text: str) -> None:
    s = Session(_small_catalogue(5), GOAL)
    r = s.act(text)
    assert not r.valid and r.text.startswith("Invalid action:") and "[Search]" in r.text


async def test_environment_episode_and_score() -> None:
    setup = ShoppingEnvironment.setup(TaskSource(count=3, seed=0))
    task = setup.tasks[0]
    env = setup.factory()
    obs = await env.reset(task)
    assert "[Search]" in obs.text
    goal = goal_of(task)
    query = " ".join([goal.product_type, *goal.attributes])
    fb = await env.step(ActionProposed(text=f"search[{query}]"))
    assert goal.asin in fb.text
    await env.step(ActionProposed(text=f"click[{goal.asin}]"))
    for _, value in goal.options:
        await env.step(ActionProposed(text=f"click[{value}]"))
    fb = await env.step(ActionProposed(text="click[Buy Now]"))
    assert fb.done and fb.success
    score = await env.score()
    assert score.reward == 1.0 and score.success


def test_generator_is_seeded_prefix_stable_and_large() -> None:
    catalogue, small = generated_tasks(4, 7)
    _, large = generated_tasks(9, 7)
    assert [t.model_dump() for t in small] == [t.model_dump() for t in large[:4]]
    assert len(catalogue) == CATALOGUE_SIZE >= 1000
    assert len({p.category for p in catalogue.products}) >= 5
    phrasings = {t.data["phrasing"] for t in generated_tasks(20, 0)[1]}
    assert phrasings == {"plain", "rich"}


def test_webshop_loader(tmp_path: Path) -> None:
    products = [
        {
            "asin": "B000TEST01",
            "name": "Tea Tree Body Scrub",
            "product_category": "Beauty \u203a Bath \u203a Body Scrubs",
            "query": "body scrub",
            "pricing": ["$12.99"],
            "customization_options": {"size": [{"value": "8 oz"}, {"value": "12 oz"}]},
            "full_description": "A scrub.",
            "small_description": ["natural ingredients"],
        },
        {"asin": "B000TEST02", "name": "Plain Soap", "pricing": "$3.00 to $5.00"},
    ]
    instructions = {
        "B000TEST01": {
            "attributes": ["tea tree", "natural ingredients"],
            "instruction": "find me a tea tree body scrub in 8 oz, and price lower than 20.00 "
            "dollars",
            "instruction_attributes": ["tea tree"],
            "instruction_options": ["8 oz"],
        }
    }
    (tmp_path / "p.json").write_bytes(orjson.dumps(products))
    (tmp_path / "i.json").write_bytes(orjson.dumps(instructions))
    setup = ShoppingEnvironment.setup(
        TaskSource(dataset=tmp_path / "p.json", knowledge=tmp_path / "i.json")
    )
    assert len(setup.tasks) == 1
    goal = goal_of(setup.tasks[0])
    assert goal.price_upper == 20.0 and goal.options == (("size", "8 oz"),)
    product = catalogue_of(setup.tasks[0].data["catalogue"]).get("B000TEST01")
    assert product is not None and product.price == 12.99
    assert reward(product, {"size": "8 oz"}, goal).reward == 1.0
    with pytest.raises(UserError):
        ShoppingEnvironment.setup(TaskSource(dataset=tmp_path / "missing.json"))
