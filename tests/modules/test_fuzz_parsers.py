"""Fuzzing every parser of model-written text (hypothesis).

A model's answer is outside input: whatever it writes, each parser returns a
value or a rejection that says what was wrong, and never lets an exception
escape (an exception here would cost an episode, or count an infrastructure
failure as an agent failure). Text is drawn both at random and from the
parsers' own keywords and punctuation glued together, which reaches the
deeper branches that random text alone rarely does. Example counts stay
modest so the suite stays fast.
"""

from __future__ import annotations

import anyio
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def glued(*tokens: str) -> st.SearchStrategy[str]:
    """Text glued from ``tokens``, punctuation and random snippets."""
    pieces = st.sampled_from(
        [*tokens, " ", "\n", "```", "(", ")", "[", "]", "{", "}", ":", ",", '"', "'", "\\", "="]
    )
    return st.lists(st.one_of(pieces, st.text(max_size=8)), max_size=30).map("".join)


def model_text(*tokens: str) -> st.SearchStrategy[str]:
    return st.one_of(st.text(max_size=300), glued(*tokens))


# ------------------------------------------------------------ agent modules


@SETTINGS
@given(model_text("Action:", "ACTION", "```", "Answer", "Final Answer:", "Step 1.", "1.", "-"))
def test_praf_action_and_plan_parsers(text: str) -> None:
    from modules.praf.parsing import parse_action, parse_steps

    parsed = parse_action(text)
    if parsed.text is None:
        assert parsed.error and parsed.error.strip(), "a rejection must say what is wrong"
    else:
        assert isinstance(parsed.text, str)
    steps = parse_steps(text)
    assert all(isinstance(s, str) for s in steps)


@SETTINGS
@given(model_text("Score:", "score: ", "10", "7.5", "-3", "/10", "Score: 11"))
def test_mirror_critic_score(text: str) -> None:
    from modules.mirror.base import parse_score

    score = parse_score(text)
    assert score is None or 1 <= score <= 10


# -------------------------------------------------------------- environments


@SETTINGS
@given(model_text("\\frac", "{", "}", "^", "**", "sqrt", "x", "=", "9", "e", "__", "import"))
@example("\\frac\\")  # a macro argument that is a lone backslash: was an AssertionError
@example("\\frac{1}\\\n2")  # a backslash before a newline
def test_math_calculator_screen(text: str) -> None:
    from environments.math.safeparse import CalcError, to_plain

    try:
        plain = to_plain(text)
    except CalcError as exc:
        assert str(exc).strip(), "a rejection must say what is wrong"
    else:
        assert isinstance(plain, str)


@settings(max_examples=40, deadline=None)
@given(model_text("\\frac{1}{2}", "2^", "x", "=", "solve", "sqrt(", "9**9", ",", "pi", "1e9"))
def test_math_calculator_end_to_end(text: str) -> None:
    """The whole tool, worker pool and time limit included: a result or a CalcError."""
    from environments.math.calculator import Calculator
    from environments.math.safeparse import CalcError

    async def call() -> None:
        try:
            result = await Calculator(timeout=2.0)(text)
        except CalcError as exc:
            assert str(exc).strip()
        else:
            assert isinstance(result, str)

    anyio.run(call)


@SETTINGS
@given(
    model_text(
        "git ",
        "commit",
        "branch",
        "checkout",
        "merge",
        "rebase",
        "-b",
        "--onto",
        "HEAD",
        "~",
        "^",
        "main",
        "undo",
        ";",
        "&&",
        "'",
        '"',
        "cherry-pick",
        "reset",
        "--hard",
        "tag",
        "push",
    )
)
def test_git_commands(line: str) -> None:
    from environments.git.model import GitModel, log
    from environments.git.tree import Repo, default_tree

    failures: list[object] = []
    original = log.warning
    log.warning = lambda *a, **k: failures.append((a, k))  # type: ignore[method-assign]
    try:
        model = GitModel(Repo(default_tree()))
        result = model.run(line)
    finally:
        log.warning = original  # type: ignore[method-assign]
    assert isinstance(result.output, str)
    if not result.ok:
        assert result.output.strip(), "a refused command must say why"
    assert not failures, f"the git model crashed on {line!r}: {failures}"


@SETTINGS
@given(
    model_text(
        "EXECUTE",
        "NAME Alice ACTION",
        "NAME Bob ACTION",
        "PICK",
        "PLACE",
        "MOVE",
        "WAIT",
        "SWEEP",
        "DUMP",
        "PATH",
        "(",
        ")",
        ",",
        "0.1",
        "\n",
    )
)
def test_robot_execute_blocks(text: str) -> None:
    from environments.robot.parser import parse_execute

    rounds = parse_execute(text)
    assert isinstance(rounds, list)


@SETTINGS
@given(model_text("bash", "answer(", "finish", "```bash", "rm -rf /", "\n"))
def test_os_actions(text: str) -> None:
    from environments.os.actions import parse_move

    move = parse_move(text)
    assert move.kind in ("bash", "answer", "finish")


@SETTINGS
@given(
    model_text(
        '{"name": ',
        '"arguments": ',
        '"search_flights"',
        '"book"',
        "<tool_call>",
        "</tool_call>",
        "```json",
        "null",
        "[]",
        "{}",
        "1e999",
        '"x"',
    )
)
def test_tool_calls(text: str) -> None:
    from environments.tools.calls import Call, Result, execute, parse_call

    parsed = parse_call(text)
    if isinstance(parsed, str):
        assert parsed.strip()
        return
    assert isinstance(parsed, Call)
    result = execute(parsed)
    assert isinstance(result, Result) and result.text.strip()


@SETTINGS
@given(
    st.dictionaries(
        st.text(max_size=12),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=5), inner, max_size=3)
            ),
            max_leaves=8,
        ),
        max_size=5,
    )
)
def test_tool_call_arguments_against_every_api(arguments: dict[str, object]) -> None:
    from environments.tools.apis import CATALOGUE
    from environments.tools.calls import Call, execute

    for name in CATALOGUE:
        result = execute(Call(name, arguments))
        assert result.text.strip()
        if not result.ok:
            assert result.text.startswith("ERROR ") and name in result.text


@SETTINGS
@given(model_text("search[", "click[", "buy now", "back to search", "]", "next >", "< prev"))
def test_shopping_actions(text: str) -> None:
    from environments.shopping.session import parse

    parsed = parse(text)
    if isinstance(parsed, str):
        assert parsed.strip()


@SETTINGS
@given(model_text("Proof.", "Qed.", "Admitted.", "Axiom", "(*", "*)", "intros.", "Require", "Ltac"))
def test_atp_proof_guard(text: str) -> None:
    from environments.atp.guard import refuse

    for prover in ("coq", "lean", "isabelle"):
        why = refuse(prover, text)
        assert why is None or why.strip()


@SETTINGS
@given(model_text("## Task", "## History", "Round 1", "Action:", "Feedback:", "[", "]", "\n"))
def test_bracket_prompt_reader(text: str) -> None:
    from agentbus import last_action
    from agentbus import prompt_sections as sections
    from agentbus import read_rounds as rounds

    assert isinstance(sections(text), dict)
    assert isinstance(rounds(text), list)
    found = last_action(text, ("search", "click"))
    assert found is None or isinstance(found, str)


def test_parsers_exist() -> None:
    """A renamed parser must fail here rather than leave a fuzz test importing nothing."""
    import environments.tools.calls
    import modules.praf.parsing

    assert callable(modules.praf.parsing.parse_action)
    assert callable(environments.tools.calls.parse_call)


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
