"""Seeded tools tasks: single-tool, same-category multi-tool, multi-step; and their variants.

Task ``i`` of seed ``s`` is drawn from its own ``random.Random``, so task
sets are prefix-stable. Facts are what the ground-truth calls return, read
from the same seeded backend the environment serves.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from environments.tools.apis import ARTISTS, CATALOGUE, CITIES, COMPANIES, RATES
from environments.tools.calls import Call, execute
from environments.tools.spec import CallSpec, PriorSpec, TaskSpec, TransientSpec

Built = tuple[str, str, list[Call], Callable[[list[dict[str, Any]]], list[str]]]


def _c(fn: str, **arguments: Any) -> Call:
    return Call(fn, arguments)


def _num(x: float) -> str:
    return f"{x:g}" if isinstance(x, int) or float(x).is_integer() else f"{x:.2f}"


def _single(rng: random.Random) -> Built:
    city = rng.choice(sorted(CITIES))
    pick = rng.randrange(6)
    if pick == 0:
        units = rng.choice(("metric", "imperial"))
        return (
            f"What is the temperature in {city} right now, in {units} units?",
            "weather",
            [_c("get_current_weather", city=city, units=units)],
            lambda r: [_num(r[0]["temperature"])],
        )
    if pick == 1:
        return (
            f"How good is the air in {city} today? Give the AQI and its level.",
            "weather",
            [_c("get_air_quality", city=city)],
            lambda r: [_num(r[0]["aqi"]), r[0]["level"]],
        )
    if pick == 2:
        return (
            f"What is the UTC offset of {city}?",
            "travel",
            [_c("get_timezone", city=city)],
            lambda r: [r[0]["utc_offset"]],
        )
    if pick == 3:
        days = rng.randint(2, 6)
        return (
            f"What high temperature is forecast for {city} {days} days from now?",
            "weather",
            [_c("get_forecast", city=city, days=days)],
            lambda r: [_num(r[0]["days"][-1]["high"])],
        )
    if pick == 4:
        symbol = rng.choice(sorted(COMPANIES.values()))
        return (
            f"What is the last price of the stock {symbol}?",
            "finance",
            [_c("get_stock_quote", symbol=symbol)],
            lambda r: [_num(r[0]["price"])],
        )
    a, b = rng.sample(sorted(RATES), 2)
    amount = rng.choice((25, 80, 150, 400, 1200))
    return (
        f"How much is {amount} {a} in {b}?",
        "finance",
        [_c("convert_currency", amount=amount, from_currency=a, to_currency=b)],
        lambda r: [_num(r[0]["result"])],
    )


def _multi_tool(rng: random.Random) -> Built:
    city = rng.choice(sorted(CITIES))
    pick = rng.randrange(3)
    if pick == 0:
        units = rng.choice(("metric", "imperial"))
        return (
            f"For a trip to {city}: what is the temperature there now ({units} units), "
            "and what is its air quality index?",
            "weather",
            [_c("get_current_weather", city=city, units=units), _c("get_air_quality", city=city)],
            lambda r: [_num(r[0]["temperature"]), _num(r[1]["aqi"])],
        )
    if pick == 1:
        every = execute(_c("search_hotels", city=city, max_price=2000)).response or {}
        prices = sorted(h["price_per_night"] for h in every.get("hotels", []))
        cap = prices[min(1, len(prices) - 1)] + 5
        return (
            f"I am going to {city}: what is its UTC offset, and which is the cheapest hotel "
            f"at most ${cap} a night, at what price?",
            "travel",
            [_c("get_timezone", city=city), _c("search_hotels", city=city, max_price=cap)],
            lambda r: [
                r[0]["utc_offset"],
                r[1]["hotels"][0]["name"],
                _num(r[1]["hotels"][0]["price_per_night"]),
            ],
        )
    symbol = rng.choice(sorted(COMPANIES.values()))
    a, b = rng.sample(sorted(RATES), 2)
    amount = rng.choice((50, 200, 750))
    return (
        f"Two things: the last price of {symbol}, and how much {amount} {a} is in {b}.",
        "finance",
        [
            _c("get_stock_quote", symbol=symbol),
            _c("convert_currency", amount=amount, from_currency=a, to_currency=b),
        ],
        lambda r: [_num(r[0]["price"]), _num(r[1]["result"])],
    )


def _multi_step(rng: random.Random) -> Built:
    pick = rng.randrange(4)
    if pick in (0, 1):
        name = rng.choice(ARTISTS)
        aid = execute(_c("search_artist", name=name)).response or {}
        if pick == 0:
            n = rng.randint(2, 4)
            return (
                f"Which are the top {n} tracks of {name}?",
                "music",
                [
                    _c("search_artist", name=name),
                    _c("get_top_tracks", artist_id=aid["artist_id"], limit=n),
                ],
                lambda r: list(r[1]["tracks"]),
            )
        return (
            f"What genre does {name} play, and which country are they from?",
            "music",
            [_c("search_artist", name=name), _c("get_artist_info", artist_id=aid["artist_id"])],
            lambda r: [r[1]["genre"], r[1]["country"]],
        )
    company = rng.choice(sorted(COMPANIES))
    symbol = COMPANIES[company]
    if pick == 2:
        return (
            f"What is {company}'s share price?",
            "finance",
            [_c("search_company", name=company), _c("get_stock_quote", symbol=symbol)],
            lambda r: [_num(r[1]["price"])],
        )
    cur = rng.choice(sorted(c for c in RATES if c != "USD"))
    price = (execute(_c("get_stock_quote", symbol=symbol)).response or {})["price"]
    return (
        f"What is {company}'s share price in {cur}?",
        "finance",
        [
            _c("search_company", name=company),
            _c("get_stock_quote", symbol=symbol),
            _c("convert_currency", amount=price, from_currency="USD", to_currency=cur),
        ],
        lambda r: [_num(r[2]["result"])],
    )


def wrong_version(call: Call) -> Call:
    """The call with one argument broken the way people break it (a typo, a bad value)."""
    args = dict(call.arguments)
    for name, value in args.items():
        if name in ("units",):
            args[name] = "celsius"
        elif name in ("symbol", "from_currency", "to_currency"):
            args[name] = str(value).lower()
        elif name in ("days", "limit"):
            args[name] = int(value) + 8
        elif name in ("city", "name"):
            args[name] = str(value)[:-1]
        elif name == "amount":
            args[name] = -float(value)
        elif name == "max_price":
            args[name] = 5
        else:
            continue
        return Call(call.name, args)
    return Call(call.name, {})


def make_spec(seed: int, index: int) -> TaskSpec:
    rng = random.Random(f"tools-{seed}-{index}")
    kind = rng.choices(("single", "multi_tool", "multi_step"), weights=(35, 30, 35))[0]
    maker = {"single": _single, "multi_tool": _multi_tool, "multi_step": _multi_step}[kind]
    query, category, calls, facts_of = maker(rng)
    responses = []
    for call in calls:
        result = execute(call)
        assert result.ok and result.response is not None, (call, result.text)
        responses.append(result.response)
    variant = rng.choices(("none", "transient", "correction"), weights=(50, 25, 25))[0]
    transient = prior = None
    if variant == "transient":
        transient = TransientSpec(
            index=rng.randrange(len(calls)), kind=rng.choice(("rate_limit", "timeout"))
        )
    elif variant == "correction":
        wrong = wrong_version(calls[0])
        prior = PriorSpec(
            call=CallSpec(name=wrong.name, arguments=wrong.arguments), error=execute(wrong).text
        )
    needed = {c.name for c in calls}
    cats = {CATALOGUE[n].category for n in needed}
    offered = sorted({a.name for a in CATALOGUE.values() if a.category in cats} | needed)
    return TaskSpec(
        id=f"tools-{seed}-{index:03d}",
        query=query,
        kind=kind,
        category=category,
        tools=offered,
        calls=[CallSpec(name=c.name, arguments=c.arguments) for c in calls],
        facts=facts_of(responses),
        variant=variant,
        transient=transient,
        prior=prior,
    )
