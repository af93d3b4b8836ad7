"""Loading WebShop's own files: products (``--dataset``) and instructions (``--knowledge``).

Fields read from a product (WebShop's scraped names and its normalised ones
both work): ``asin``; ``name``/``Title``; ``product_category`` (parts separated by the
right-pointing angle quote WebShop uses)
or ``category``; ``query`` (the product type); ``pricing``/``Price`` (a
number, ``"$12.99"``, ``"$10.00 to $20.00"`` or a list: the lowest is used);
``customization_options`` (group -> values or ``{"value": ...}`` records);
``full_description``/``Description``; ``small_description``/``BulletPoints``;
``average_rating``/``Rating``; ``Reviews``; ``Attributes``.

The instruction file maps an asin to one record or a list of records (the
layouts of ``items_ins_v2.json`` and ``items_human_ins.json``), or is a list
of records with an ``asin``; a record has ``instruction``,
``instruction_attributes``, ``instruction_options`` and optionally
``attributes`` (the product's) and ``price_upper``. Without an instruction
file, goals are drawn from the products as the generator draws them.
"""

from __future__ import annotations

import math
import random
import re
from pathlib import Path
from typing import Any

import orjson

from agentbus import Task, UserError, read_bounded
from environments.shopping.catalogue import Catalogue, Product, catalogue_for
from environments.shopping.generator import make_goal
from environments.shopping.goal import Goal
from environments.shopping.phrasing import plain, rich
from environments.shopping.task import make_task

_PATH_SEP = "\u203a"  # the separator of WebShop's product_category paths
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_CEILING = re.compile(r"price (?:lower|less) than \$?(\d+(?:\.\d+)?)", re.IGNORECASE)
_HELP = (
    "expected WebShop's product file (a JSON list of products with asin, name, pricing, "
    "customization_options, ...) as --dataset and optionally its instruction file as --knowledge"
)


def _read(path: Path, what: str) -> Any:
    try:
        return orjson.loads(read_bounded(path, f"shopping {what}"))
    except FileNotFoundError:
        raise UserError(f"shopping {what} {path} does not exist ({_HELP})") from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise UserError(f"shopping {what} {path} is not readable JSON: {exc}") from None


def _price(raw: Any) -> float | None:
    if isinstance(raw, (int, float)):
        return float(raw)
    if isinstance(raw, list):
        found = [p for p in (_price(r) for r in raw) if p is not None]
        return min(found) if found else None
    if isinstance(raw, str):
        numbers = [float(n) for n in _NUMBER.findall(raw.replace(",", ""))]
        return min(numbers) if numbers else None
    return None


def _options(raw: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(raw, dict):
        return ()
    groups = []
    for group, values in raw.items():
        if not isinstance(values, list):
            continue
        names = [str(v.get("value", "")) if isinstance(v, dict) else str(v) for v in values]
        names = [n.strip() for n in names if n and n.strip()]
        if names:
            groups.append((str(group).strip().lower(), tuple(dict.fromkeys(names))))
    return tuple(groups)


def _text_list(raw: Any) -> tuple[str, ...]:
    if isinstance(raw, str):
        return (raw,) if raw.strip() else ()
    if isinstance(raw, list):
        return tuple(str(x).strip() for x in raw if str(x).strip())
    return ()


def product_from(raw: dict[str, Any], attributes: tuple[str, ...] = ()) -> Product | None:
    asin = str(raw.get("asin", "")).strip()
    title = str(raw.get("name") or raw.get("Title") or "").strip()
    price = _price(raw.get("pricing", raw.get("Price")))
    if not asin or not title or price is None:
        return None
    path = [s.strip() for s in str(raw.get("product_category", "")).split(_PATH_SEP) if s.strip()]
    category = str(raw.get("category") or (path[0] if path else "")).strip().lower()
    ptype = str(raw.get("query") or (path[-1] if path else "")).strip().lower()
    reviews = []
    for r in raw.get("Reviews") or []:
        if isinstance(r, dict):
            stars = _price(r.get("score", r.get("rating", 0))) or 0
            reviews.append((int(stars), str(r.get("body") or r.get("title") or "")[:200]))
    rating = _price(raw.get("average_rating", raw.get("Rating")))
    return Product(
        asin=asin,
        title=title,
        category=category,
        product_type=ptype,
        price=price,
        attributes=attributes or _text_list(raw.get("Attributes")),
        options=_options(raw.get("customization_options", raw.get("options"))),
        description=str(raw.get("full_description") or raw.get("Description") or "")[:600],
        features=_text_list(raw.get("small_description") or raw.get("BulletPoints"))[:6],
        reviews=tuple(reviews[:4]),
        rating=rating if rating is not None and 0 <= rating <= 5 else None,
    )


def _records(raw: Any) -> list[dict[str, Any]]:
    """Instruction records, each with its asin, whatever the file's layout."""
    out: list[dict[str, Any]] = []
    if isinstance(raw, dict):
        for asin, value in raw.items():
            for rec in value if isinstance(value, list) else [value]:
                if isinstance(rec, dict):
                    out.append({"asin": asin, **rec})
    elif isinstance(raw, list):
        out = [r for r in raw if isinstance(r, dict) and r.get("asin")]
    return out


def load_products(path: Path, attributes: dict[str, tuple[str, ...]] | None = None) -> Catalogue:
    raw = _read(path, "product file")
    items = raw.get("products") if isinstance(raw, dict) else raw
    if not isinstance(items, list) or not items:
        raise UserError(f"shopping product file {path}: no products found ({_HELP})")
    products: dict[str, Product] = {}
    for item in items:
        if isinstance(item, dict):
            p = product_from(item, (attributes or {}).get(str(item.get("asin", "")), ()))
            if p is not None:
                products.setdefault(p.asin, p)
    if not products:
        raise UserError(
            f"shopping product file {path}: no usable product (each needs asin, name and a price)"
        )
    return Catalogue(list(products.values()))


def _goal(record: dict[str, Any], product: Product) -> tuple[Goal, str]:
    sentence = str(record.get("instruction", "")).strip()
    options = []
    groups = product.option_groups()
    for value in record.get("instruction_options") or []:
        value = str(value).strip()
        group = next(
            (g for g, vs in groups.items() if value.lower() in {v.lower() for v in vs}), "option"
        )
        options.append((group, value))
    ceiling = _price(record.get("price_upper"))
    if ceiling is None:
        m = _CEILING.search(sentence)
        ceiling = float(m.group(1)) if m else float(math.ceil(product.price * 1.25 / 10) * 10)
        if m is None:
            sentence = f"{sentence.rstrip('. ')}, and price lower than {ceiling:.2f} dollars"
    goal = Goal(
        asin=product.asin,
        category=product.category,
        product_type=product.product_type,
        attributes=tuple(str(a) for a in record.get("instruction_attributes") or ()),
        options=tuple(options),
        price_upper=ceiling,
        title=product.title,
    )
    return goal, sentence


def webshop_key(products: Path, instructions: Path | None) -> str:
    return f"webshop:{products.resolve()}|{instructions.resolve() if instructions else ''}"


def webshop_catalogue(key: str) -> Catalogue:
    """The catalogue of a ``webshop:`` key (products plus the instructions' attributes)."""
    products, _, instructions = key[len("webshop:") :].partition("|")
    records = _records(_read(Path(instructions), "instruction file")) if instructions else []
    attrs = {
        str(r["asin"]): tuple(str(a) for a in r["attributes"])
        for r in records
        if isinstance(r.get("attributes"), list)
    }
    return catalogue_for(key, lambda: load_products(Path(products), attrs))


def load_webshop(products: Path, instructions: Path | None) -> tuple[Catalogue, list[Task]]:
    key = webshop_key(products, instructions)
    records = _records(_read(instructions, "instruction file")) if instructions else []
    catalogue = webshop_catalogue(key)
    tasks: list[Task] = []
    if records:
        for i, record in enumerate(records):
            product = catalogue.get(str(record["asin"]))
            if product is None or not str(record.get("instruction", "")).strip():
                continue
            goal, sentence = _goal(record, product)
            tasks.append(make_task(f"webshop-{i:05d}", key, goal, sentence, "plain"))
        if not tasks:
            raise UserError(
                f"shopping instruction file {instructions}: no instruction names a product "
                f"of {products}"
            )
        return catalogue, tasks
    for i in range(min(len(catalogue), 500)):
        goal, is_rich = make_goal(catalogue, 0, i)
        rng = random.Random(f"shopping-phrase-webshop-{i}")
        sentence = rich(goal, rng) if is_rich else plain(goal)
        phrasing = "rich" if is_rich else "plain"
        tasks.append(make_task(f"webshop-{i:05d}", key, goal, sentence, phrasing))
    return catalogue, tasks
