"""An Inspect AI task with three model roles: a planner, a solver and a critic.

Plain Inspect, nothing of agentbus: run it with ``inspect eval`` and
``--model-role planner=... --model-role solver=... --model-role critic=...``,
or attribute it by role with agentbus:

    python -m agentbus.run --inspect examples/inspect/arithmetic.py@arithmetic \\
        --slots planner,solver,critic

The solver's logic (the same as examples/plain_openai/agent.py, so the truth
on the simulator is known: truth.py):
  1. the planner writes a plan and its own guess (ANSWER line);
  2. the solver answers, reading the plan;
  3. the critic solves the task on its own; when its answer equals the
     solver's, that answer is accepted;
  4. otherwise the solver tries again (at most ROUNDS answers in all); each
     prompt names its attempt, so no two calls of a sample are the same request;
  5. with no confirmed answer, the planner's guess is the answer.
Inspect's ``match(numeric=True)`` scorer compares the answer with the target.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ModelOutput, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import Generate, Solver, TaskState, solver

ROUNDS = 2

PROMPTS = {
    "planner": "Outline, in a few steps, how to work out the arithmetic question.",
    "solver": "Work the arithmetic out step by step; a plan may be given.",
    "critic": "Work the question out independently to check the proposed result.",
}


def answer_of(text: str) -> str | None:
    """What follows the last 'ANSWER:' marker of a reply (None without one)."""
    marker = "ANSWER:"
    if marker not in (text or ""):
        return None
    value = text.rsplit(marker, 1)[1].strip().splitlines()
    return value[0].strip() if value else None


async def ask(role: str, prompt: str) -> str | None:
    """One call of the model bound to ``role``; its ANSWER value."""
    output = await get_model(role=role).generate(
        [
            ChatMessageSystem(content=PROMPTS[role]),
            ChatMessageUser(content=prompt + "\nEnd with a line 'ANSWER: <value>'."),
        ]
    )
    return answer_of(output.completion)


@solver
def plan_solve_critique(rounds: int = ROUNDS) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        question = state.input_text
        guess = await ask("planner", f"Task: {question}\nWrite a short plan.")
        plan = f"A planner's guess: {guess}" if guess else "No plan."
        answer = await ask("solver", f"Task: {question}\n{plan}\nAttempt 1.")
        final = None
        for attempt in range(1, rounds + 1):
            check = await ask(
                "critic", f"Task: {question}\nProposed: {answer}\nRound {attempt}: solve it."
            )
            if check is not None and check == answer:
                final = answer
                break
            if attempt < rounds:
                answer = await ask(
                    "solver",
                    f"Task: {question}\n{plan}\nA reviewer rejected {answer}. "
                    f"Attempt {attempt + 1}.",
                )
        if final is None:
            final = guess if guess is not None else answer
        state.output = ModelOutput.from_content("plan_solve_critique", final or "")
        return state

    return solve


@task
def arithmetic() -> Task:
    return Task(
        dataset=json_dataset(str(Path(__file__).parent / "arithmetic.jsonl")),
        solver=plan_solve_critique(),
        scorer=match(numeric=True),
        version=1,
    )
