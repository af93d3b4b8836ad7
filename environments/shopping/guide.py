"""The shopping specialisation of the four PRAF prompts (``Environment.guide``)."""

from __future__ import annotations

from agentbus import action_fence, env_guide
from environments.shopping.session import ACTION_LIMIT


def shopping_guide() -> dict[str, str]:
    return env_guide(
        system=(
            "You are shopping for a customer in a web shop that you see as text pages. "
            "Clickable elements are shown in square brackets. Two actions exist: "
            "search[query] (only on the search page) and click[element], where element is the "
            "exact text of a bracketed element on the current page: a product ID such as "
            "[B0ABC12345], an option value, [Next >], [< Prev], [Back to Search], [Description], "
            "[Features], [Reviews] or [Buy Now]. The customer's wishes are a product type, "
            "some attributes, option values (colour, size, ...) and a price ceiling; what you buy "
            f"is scored on all of them. Buy with [Buy Now] within {ACTION_LIMIT} actions or the "
            "task fails."
        ),
        planning=(
            "List what the customer asks for (product type, each attribute, each option value, the "
            "price ceiling), then plan the route: a search query with the type and the key "
            "attributes, which result to open, which options to select, when to buy."
        ),
        reasoning=(
            "Look at the current page. Decide the single next action: search, open the result that "
            "matches the wishes and the budget, select a missing option, go back when the page "
            "does not fit, or buy when everything matches. End with one line 'Next action: "
            "search[...]' or 'Next action: click[...]'."
        ),
        action=(
            "Write exactly one action inside one ```action fence, for example:\n"
            f"{action_fence('search[folding desk wood finish]')}\nor\n"
            f"{action_fence('click[B0ABC12345]')}\n"
            "Copy the element's text exactly as the page shows it, without the brackets' content "
            "changed."
        ),
        reflection=(
            "The last action failed or led away from the goal. Say what went wrong (a query that "
            "missed the product, a wrong result, an option not selected, a label not on the page) "
            "and end with one line 'Next action: search[...]' or 'Next action: click[...]'."
        ),
    )
