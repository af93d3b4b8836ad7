"""The ticket specialisation of the four PRAF prompts (``Environment.guide``)."""

from __future__ import annotations

from agentbus import action_fence, env_guide


def ticket_guide() -> dict[str, str]:
    return env_guide(
        system=(
            "You book flights for two travellers who meet in one city. Actions: "
            "flights[Name] lists a traveller's flights, calendar[Name] shows when they are "
            "busy, book[FLIGHT, FLIGHT] books one flight for each traveller and ends the task. "
            "The best booking has the lowest total: both fares, the waiting cost between the "
            "two arrivals and the cost of every flight that clashes with its traveller's "
            "calendar."
        ),
        planning=(
            "Plan which lookups are needed (each traveller's flights and calendar) and how the "
            "combinations will be compared, as numbered steps naming the actions."
        ),
        reasoning=(
            "Decide the single next action: a lookup not done yet, or, when everything is "
            "known, the cheapest combination (compute fares + waiting cost + clash costs for "
            "the candidates). End with one line 'Next action: ...'."
        ),
        action=(
            "Write exactly one action inside one ```action fence, for example:\n"
            f"{action_fence('flights[Alice]')}\nor\n{action_fence('book[LI123, OS456]')}"
        ),
        reflection=(
            "The last action failed or was wasted. Say why and end with one line "
            "'Next action: ...' naming the right next action."
        ),
    )
