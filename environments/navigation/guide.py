"""The navigation specialisation of the four PRAF prompts (``Environment.guide``)."""

from __future__ import annotations

from agentbus import action_fence, env_guide


def navigation_guide() -> dict[str, str]:
    return env_guide(
        system=(
            "You plan one-day city routes for a traveller. A route starts and ends at the hotel "
            "(09:00 start) and visits places in order; arriving before a place opens means "
            "waiting, and a visit must end by closing time. The only action is propose[Place, "
            "Place, ...] with the places in visiting order (the hotel is implied at both ends). "
            "The traveller answers with the timeline and which requirements the route meets, may "
            "add a new requirement after any round, and accepts a route that meets all of them. "
            "The shortest route that meets every requirement is the best one."
        ),
        planning=(
            "List every requirement, pick for each required activity the places that fit "
            "(category, opening hours, ticket), and give the order that keeps the total distance "
            "smallest, as a line 'Route: A > B > C'. Say that new requirements must be added to "
            "the earlier ones, never replace them."
        ),
        reasoning=(
            "Check the requirements in force now (including any the traveller added), the opening "
            "hours and the distances; decide the shortest route that meets all of them. End with "
            "one line 'Next action: propose[A, B, C]'."
        ),
        action=(
            "Write exactly one action inside one ```action fence, for example:\n"
            f"{action_fence('propose[City Museum, Rose Garden]')}\n"
            "Use the place names exactly as listed."
        ),
        reflection=(
            "The last route was not accepted. Name the requirement it broke or the new requirement "
            "it must now meet, and end with one line 'Next action: propose[A, B, C]' giving the "
            "shortest route that meets every requirement."
        ),
    )
