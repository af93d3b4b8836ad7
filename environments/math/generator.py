"""A seeded generator of algebra and geometry problems with exact answers.

Ten knowledge points x five levels. Each problem knows its worked solution as
calculator inputs (what a perfect agent would type, in order), the method a
good plan names, a plausible wrong method with its own calculator inputs and
wrong answer (what a mistaken agent would do), and its exact answer computed
with sympy. Higher levels need more steps and bigger numbers, so a perfect
agent solves every problem in at most four rounds and a sloppy one can run
out of the ten.
"""

# ruff: noqa: E501  (problem texts read better unwrapped)
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import sympy

from agentbus import Task

LEVELS = (1, 2, 3, 4, 5)
#: the levels a run draws from by default: those the truth table describes. Its
#: reference runs are 30-task blocks, and the earlier order (knowledge points in
#: turn, the level rising every ten tasks) filled 30 tasks with levels 1-3 only,
#: so that is the population the table's values are the mean over.
RUN_LEVELS = (1, 2, 3)


@dataclass
class Problem:
    """One generated problem and everything the expert needs to play it."""

    text: str
    answer: sympy.Expr
    steps: list[str]
    method: str
    keywords: tuple[str, ...]
    wrong_method: str
    wrong_steps: list[str]
    wrong_answer: sympy.Expr
    knowledge_point: str = ""
    level: int = 1
    extra: dict[str, str] = field(default_factory=dict)


def lin(a: int, b: int, var: str = "x") -> str:
    """``a*x + b`` as plain text with tidy signs (``3*x - 5``)."""
    head = var if a == 1 else f"-{var}" if a == -1 else f"{a}*{var}"
    return head if b == 0 else f"{head} {'+' if b > 0 else '-'} {abs(b)}"


def tex(text: str) -> str:
    """Plain expression text as it would be typeset (``3*x`` -> ``3x``)."""
    return text.replace("*", "")


def nz(rng: random.Random, lo: int, hi: int) -> int:
    while True:
        v = rng.randint(lo, hi)
        if v != 0:
            return v


# --- algebra -----------------------------------------------------------------------------


def linear(rng: random.Random, level: int) -> Problem:
    x = rng.randint(-12, 12)
    a = rng.randint(2, 5 + 2 * level)
    b = nz(rng, -20, 20)
    if level <= 2:
        c = nz(rng, -3, 3) if level == 2 else 0
        if c == a:
            c = a - 1
        d = (a - c) * x + b
        left, right = lin(a, b), (lin(c, d) if c else str(d))
        steps = [f"{left} = {right}"]
        text = f"Solve for $x$: ${tex(left)} = {tex(right)}$."
        answer, ask = sympy.Integer(x), ""
    else:
        c = nz(rng, -4, 4)
        while c == a:
            c = nz(rng, -4, 4)
        d = a * (x + b) - c * x
        left, right = f"{a}*(x {'+' if b > 0 else '-'} {abs(b)})", lin(c, d)
        steps = [f"{left} = {right}"]
        text = f"Solve ${tex(left)} = {tex(right)}$"
        answer, ask = sympy.Integer(x), ""
        if level >= 4:
            k, m = rng.randint(2, 9), nz(rng, -9, 9)
            ask = f"{k}*x^2 {'+' if m > 0 else '-'} {abs(m)}" if level == 5 else lin(k, m)
            steps.append(ask.replace("x", f"({x})"))
            answer = sympy.Integer(k * x**2 + m if level == 5 else k * x + m)
        text += f" and give the value of ${tex(ask)}$." if ask else " for $x$."
    wrong = sympy.Integer(x + rng.choice([-2, -1, 1, 2]))
    return Problem(
        text=text,
        answer=answer,
        steps=steps,
        method="a linear equation: isolate x by collecting the x terms on one side",
        keywords=("isolate", "linear equation"),
        wrong_method="treat the numbers as a proportion and cross-multiply them",
        wrong_steps=[f"{b} * {a} / {max(abs(c), 1)}"],
        wrong_answer=wrong if not ask else answer + rng.choice([-3, 3]),
    )


def systems(rng: random.Random, level: int) -> Problem:
    while True:
        x, y = rng.randint(-9, 9), rng.randint(-9, 9)
        a1, b1, a2, b2 = (nz(rng, -3 - level, 3 + level) for _ in range(4))
        if a1 * b2 - a2 * b1 != 0:
            break
    c1, c2 = a1 * x + b1 * y, a2 * x + b2 * y
    e1 = f"{lin(a1, 0)} {'+' if b1 > 0 else '-'} {lin(abs(b1), 0, 'y')} = {c1}"
    e2 = f"{lin(a2, 0)} {'+' if b2 > 0 else '-'} {lin(abs(b2), 0, 'y')} = {c2}"
    steps = [f"{e1}, {e2}"]
    if level == 1:
        ask, answer = "x", sympy.Integer(x)
    elif level <= 3:
        ask, answer = "x + y", sympy.Integer(x + y)
        steps.append(f"({x}) + ({y})")
    else:
        k = rng.randint(2, 4)
        ask, answer = f"{k}x - y^2", sympy.Integer(k * x - y**2)
        steps.append(f"{k}*({x}) - ({y})^2")
    text = f"Given ${tex(e1)}$ and ${tex(e2)}$, what is ${ask}$?"
    return Problem(
        text=text,
        answer=answer,
        steps=steps,
        method="a system of linear equations: solve it by elimination or substitution",
        keywords=("system", "elimination", "substitution"),
        wrong_method="add the two right-hand sides and divide by the number of equations",
        wrong_steps=[f"({c1} + {c2}) / 2"],
        wrong_answer=sympy.Rational(c1 + c2, 2) + (1 if (c1 + c2) / 2 == answer else 0),
    )


def quadratic(rng: random.Random, level: int) -> Problem:
    r1, r2 = rng.randint(-4 - 2 * level, 4 + 2 * level), rng.randint(-4 - 2 * level, 9)
    while r1 == r2:
        r2 += 1
    a = 1 if level <= 3 else rng.randint(2, 3)
    b, c = -a * (r1 + r2), a * r1 * r2
    poly = f"{lin(a, 0, 'x^2')} {'+' if b >= 0 else '-'} {lin(abs(b), 0)} {'+' if c >= 0 else '-'} {abs(c)}"
    poly = poly.replace(" + 0*x", "").replace(" - 0*x", "").replace(" + 0", "")
    steps = [f"{poly} = 0"]
    if level <= 2:
        ask, answer = "the larger root", sympy.Integer(max(r1, r2))
    elif level <= 4:
        ask, answer = "the sum of the squares of the roots", sympy.Integer(r1**2 + r2**2)
        steps.append(f"({r1})^2 + ({r2})^2")
    else:
        ask, answer = "the product of the roots minus their sum", sympy.Integer(r1 * r2 - r1 - r2)
        steps.append(f"({r1})*({r2}) - (({r1}) + ({r2}))")
    text = f"For the equation ${tex(poly)} = 0$, find {ask}."
    return Problem(
        text=text,
        answer=answer,
        steps=steps,
        method="a quadratic equation: find its roots by factoring or the quadratic formula",
        keywords=("quadratic", "roots", "factor"),
        wrong_method="divide the constant term by the x coefficient",
        wrong_steps=[f"{c} / {b or 1}"],
        wrong_answer=answer + rng.choice([-2, -1, 1, 2]),
    )


def logarithms(rng: random.Random, level: int) -> Problem:
    base = rng.choice([2, 3, 5]) if level <= 3 else rng.choice([2, 3, 4, 6])
    k = rng.randint(2, 4 + level)
    n = base**k
    if level == 1:
        text, steps, answer = f"Evaluate $\\log_{{{base}}} {n}$.", [f"log({n}, {base})"], k
    elif level == 2:
        text, steps, answer = f"Solve ${base}^x = {n}$.", [f"log({n}, {base})"], k
    elif level == 3:
        m = rng.randint(1, 3)
        text = f"Solve ${base}^{{x + {m}}} = {n}$."
        steps, answer = [f"log({n}, {base})", f"{k} - {m}"], k - m
    elif level == 4:
        j = rng.randint(1, 3)
        text = f"Evaluate $\\log_{{{base}}} {n} + \\log_{{{base}}} {base**j}$."
        steps, answer = [f"log({n} * {base**j}, {base})"], k + j
    else:
        m = rng.randint(2, 4)
        text = f"If ${base}^{{{m}x}} = {n**m}$, what is ${base}^x + x$?"
        steps, answer = [f"log({n**m}, {base}) / {m}", f"{base}^{k} + {k}"], n + k
    return Problem(
        text=text,
        answer=sympy.Integer(answer),
        steps=steps,
        method="exponents and logarithms: rewrite with logarithms, log_b(N) is the exponent",
        keywords=("logarithm", "log_"),
        wrong_method="divide the number by the base",
        wrong_steps=[f"{n} / {base}"],
        wrong_answer=sympy.Integer(n // base),
    )


def sequences(rng: random.Random, level: int) -> Problem:
    a = rng.randint(-5, 12)
    if level <= 3:
        d, n = nz(rng, -4, 6), rng.randint(8, 10 * level + 10)
        terms = ", ".join(str(a + d * i) for i in range(4))
        if level <= 2:
            text = f"What is the {n}th term of the arithmetic sequence {terms}, ...?"
            steps, answer = [f"{a} + ({n} - 1)*({d})"], a + (n - 1) * d
        else:
            text = f"Find the sum of the first {n} terms of the arithmetic sequence {terms}, ..."
            steps = [f"{n}/2 * (2*({a}) + ({n} - 1)*({d}))"]
            answer = n * (2 * a + (n - 1) * d) // 2
        wrong = [f"{a} + {n}*({d})"]
        wrong_answer = a + n * d
    else:
        a, r, n = rng.randint(1, 5), rng.choice([2, 3, -2]), rng.randint(5, 8)
        terms = ", ".join(str(a * r**i) for i in range(4))
        if level == 4:
            text = f"What is the {n}th term of the geometric sequence {terms}, ...?"
            steps, answer = [f"{a} * ({r})^({n} - 1)"], a * r ** (n - 1)
        else:
            text = f"Find the sum of the first {n} terms of the geometric sequence {terms}, ..."
            steps, answer = [f"{a} * (({r})^{n} - 1) / ({r} - 1)"], a * (r**n - 1) // (r - 1)
        wrong = [f"{a} * {r} * {n}"]
        wrong_answer = a * r * n
    return Problem(
        text=text,
        answer=sympy.Integer(answer),
        steps=steps,
        method="sequences and series: use the n-th term or partial sum formula",
        keywords=("term formula", "sum formula", "a_n", "s_n", "common difference", "ratio"),
        wrong_method="continue the pattern a few terms by hand and extrapolate",
        wrong_steps=wrong,
        wrong_answer=sympy.Integer(wrong_answer),
    )


def complex_numbers(rng: random.Random, level: int) -> Problem:
    a, b, c, d = (nz(rng, -3 - level, 3 + level) for _ in range(4))
    z, w = a + b * sympy.I, c + d * sympy.I
    zs, ws = f"({a} {'+' if b > 0 else '-'} {abs(b)}i)", f"({c} {'+' if d > 0 else '-'} {abs(d)}i)"
    if level == 1:
        text, steps, answer = f"Simplify ${zs} + {ws}$.", [f"{zs} + {ws}"], z + w
    elif level == 2:
        text, steps, answer = f"Simplify ${zs}{ws}$.", [f"{zs}*{ws}"], z * w
    elif level == 3:
        text, steps, answer = (
            f"Simplify $\\frac{{{zs[1:-1]}}}{{{ws[1:-1]}}}$.",
            [f"{zs}/{ws}"],
            z / w,
        )
    elif level == 4:
        text = f"Find the modulus of ${zs}{ws}$."
        steps, answer = [f"{zs}*{ws}", f"Abs({zs}*{ws})"], sympy.Abs(z * w)
    else:
        text = f"Compute ${zs}^3$ and give the sum of its real and imaginary parts."
        zz = sympy.expand(z**3)
        re_, im_ = sympy.re(zz), sympy.im(zz)
        steps, answer = [f"{zs}^3", f"({re_}) + ({im_})"], re_ + im_
    answer = sympy.simplify(sympy.expand_complex(answer))
    wrong_answer = sympy.expand(answer + rng.choice([1, -1]) * (1 if level == 5 else sympy.I * 2))
    return Problem(
        text=text,
        answer=answer,
        steps=[s.replace("i)", "*i)") for s in steps],
        method="complex numbers: expand with the distributive law and use i^2 = -1",
        keywords=("i^2 = -1", "conjugate", "real and imaginary", "modulus"),
        wrong_method="treat i like an ordinary variable and drop the i^2 terms",
        wrong_steps=[f"{a}*{c} + {b}*{d}"],
        wrong_answer=wrong_answer,
    )


# --- geometry ----------------------------------------------------------------------------


def pythagorean(rng: random.Random, level: int) -> Problem:
    triples = [(3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (20, 21, 29)]
    a, b, c = triples[rng.randrange(len(triples))]
    k = rng.randint(1, 2 + level)
    a, b, c = a * k, b * k, c * k
    if level == 1:
        text, steps, answer = (
            f"A right triangle has legs {a} and {b}. How long is its hypotenuse?",
            [f"sqrt({a}^2 + {b}^2)"],
            sympy.Integer(c),
        )
    elif level == 2:
        text, steps, answer = (
            f"A right triangle has hypotenuse {c} and one leg {a}. How long is the other leg?",
            [f"sqrt({c}^2 - {a}^2)"],
            sympy.Integer(b),
        )
    elif level == 3:
        x1, y1 = rng.randint(-9, 9), rng.randint(-9, 9)
        p, q = rng.randint(1, 9), rng.randint(1, 9)
        text = f"What is the distance between $({x1}, {y1})$ and $({x1 + p}, {y1 + q})$?"
        steps = [f"sqrt(({x1 + p} - ({x1}))^2 + ({y1 + q} - ({y1}))^2)"]
        answer = sympy.sqrt(p * p + q * q)
    elif level == 4:
        p, q = rng.randint(2, 12), rng.randint(2, 12)
        text = f"A rectangle is {p} by {q}. What is the area of a square whose side is the rectangle's diagonal?"
        steps = [f"sqrt({p}^2 + {q}^2)", f"({p}^2 + {q}^2)"]
        answer = sympy.Integer(p * p + q * q)
    else:
        p, q, r = rng.randint(2, 9), rng.randint(2, 9), rng.randint(2, 9)
        text = f"A box measures {p} by {q} by {r}. How long is its space diagonal?"
        steps = [f"sqrt({p}^2 + {q}^2)", f"sqrt({p}^2 + {q}^2 + {r}^2)"]
        answer = sympy.sqrt(p * p + q * q + r * r)
    return Problem(
        text=text,
        answer=answer,
        steps=steps,
        method="the Pythagorean theorem: a^2 + b^2 = c^2 in a right triangle",
        keywords=("pythagor", "a^2 + b^2"),
        wrong_method="add the side lengths directly",
        wrong_steps=[f"{a} + {b}"],
        wrong_answer=sympy.Integer(a + b),
    )


def circles(rng: random.Random, level: int) -> Problem:
    r = rng.randint(2, 6 + 2 * level)
    pi = sympy.pi
    if level == 1:
        text, steps, answer = (
            f"What is the area of a circle of radius {r}? Express your answer in terms of $\\pi$.",
            [f"pi*{r}^2"],
            pi * r**2,
        )
        wrong = 2 * pi * r
    elif level == 2:
        d = 2 * r
        text = f"A circle has diameter {d}. What is its circumference, in terms of $\\pi$?"
        steps, answer, wrong = [f"pi*{d}"], pi * d, pi * r**2
    elif level == 3:
        t = rng.choice([30, 45, 60, 90, 120, 150])
        text = f"Find the length of an arc with central angle ${t}^\\circ$ in a circle of radius {r}, in terms of $\\pi$."
        steps, answer, wrong = (
            [f"{t}/360 * 2*pi*{r}"],
            sympy.Rational(t, 360) * 2 * pi * r,
            sympy.Rational(t, 360) * pi * r**2,
        )
    elif level == 4:
        t = rng.choice([40, 72, 80, 100, 135])
        text = f"What is the area of a sector with central angle ${t}^\\circ$ in a circle of radius {r}? Express it in terms of $\\pi$."
        steps, answer, wrong = (
            [f"{t}/360 * pi*{r}^2"],
            sympy.Rational(t, 360) * pi * r**2,
            sympy.Rational(t, 360) * 2 * pi * r,
        )
    else:
        text = f"A circle has area ${r * r}\\pi$. What is its circumference, in terms of $\\pi$?"
        steps, answer, wrong = [f"sqrt({r * r})", f"2*pi*{r}"], 2 * pi * r, pi * r * r / 2
    return Problem(
        text=text,
        answer=sympy.simplify(answer),
        steps=steps,
        method="circle formulas: area pi r^2, circumference 2 pi r, arcs as a fraction of 360 degrees",
        keywords=("pi r^2", "2 pi r", "2*pi*r", "pi*r^2", "circumference", "/360"),
        wrong_method="mix up the area and the circumference formulas",
        wrong_steps=[sympy.sstr(wrong).replace("**", "^")],
        wrong_answer=sympy.simplify(wrong),
    )


def areas(rng: random.Random, level: int) -> Problem:
    if level == 1:
        b, h = rng.randint(3, 20), rng.randint(3, 20)
        text = f"A triangle has base {b} and height {h}. What is its area?"
        steps, answer, wrong = [f"{b}*{h}/2"], sympy.Rational(b * h, 2), b * h
    elif level == 2:
        a, b, h = rng.randint(3, 15), rng.randint(3, 15), rng.randint(2, 12)
        text = f"A trapezoid has parallel sides {a} and {b} and height {h}. What is its area?"
        steps, answer, wrong = [f"({a} + {b})/2 * {h}"], sympy.Rational((a + b) * h, 2), a * b * h
    elif level == 3:
        pts = [(rng.randint(-6, 6), rng.randint(-6, 6)) for _ in range(3)]
        (x1, y1), (x2, y2), (x3, y3) = pts
        twice = x1 * (y2 - y3) + x2 * (y3 - y1) + x3 * (y1 - y2)
        if (x1, y1) == (x2, y2):
            x2 += 1  # two equal vertices: no third point makes a triangle
        while twice == 0:
            # moving the third vertex sideways helps unless the first two share a row
            if y1 == y2:
                y3 += 1
            else:
                x3 += 1
            twice = x1 * (y2 - y3) + x2 * (y3 - y1) + x3 * (y1 - y2)
        text = f"Find the area of the triangle with vertices $({x1}, {y1})$, $({x2}, {y2})$ and $({x3}, {y3})$."
        steps = [
            f"Abs(({x1})*(({y2}) - ({y3})) + ({x2})*(({y3}) - ({y1})) + ({x3})*(({y1}) - ({y2})))/2"
        ]
        answer, wrong = sympy.Rational(abs(twice), 2), abs(twice)
    elif level == 4:
        a, b, c = rng.choice([(5, 5, 6), (5, 5, 8), (13, 14, 15), (6, 8, 10), (10, 13, 13)])
        text = f"A triangle has sides {a}, {b} and {c}. What is its area?"
        s = sympy.Rational(a + b + c, 2)
        steps = [f"({a} + {b} + {c})/2", f"sqrt({s}*({s} - {a})*({s} - {b})*({s} - {c}))"]
        answer, wrong = sympy.sqrt(s * (s - a) * (s - b) * (s - c)), a * b * c // 2
    else:
        side = rng.randint(2, 10)
        text = (
            f"What is the area of a regular hexagon with side length {side}? Give an exact answer."
        )
        steps = [f"{side}^2", f"3*sqrt(3)/2 * {side}^2"]
        answer, wrong = sympy.Rational(3, 2) * sympy.sqrt(3) * side**2, 6 * side**2
    return Problem(
        text=text,
        answer=sympy.simplify(answer),
        steps=steps,
        method="area formulas: one half base times height, the shoelace or Heron's formula",
        keywords=("half", "shoelace", "heron", "(a + b)/2", "area formula"),
        wrong_method="multiply all the given lengths together",
        wrong_steps=[str(wrong)],
        wrong_answer=sympy.Integer(wrong),
    )


def volumes(rng: random.Random, level: int) -> Problem:
    r, h = rng.randint(2, 4 + level), rng.randint(2, 12)
    pi = sympy.pi
    if level == 1:
        ln, w = rng.randint(2, 12), rng.randint(2, 12)
        text = f"What is the volume of a box that is {ln} by {w} by {h}?"
        steps, answer, wrong = (
            [f"{ln}*{w}*{h}"],
            sympy.Integer(ln * w * h),
            sympy.Integer(2 * (ln * w + ln * h + w * h)),
        )
    elif level == 2:
        text = f"What is the volume of a cylinder with radius {r} and height {h}? Express it in terms of $\\pi$."
        steps, answer, wrong = [f"pi*{r}^2*{h}"], pi * r * r * h, 2 * pi * r * h
    elif level == 3:
        text = f"What is the volume of a cone with radius {r} and height {h}? Express it in terms of $\\pi$."
        steps, answer, wrong = [f"pi*{r}^2*{h}/3"], pi * r * r * h / 3, pi * r * r * h
    elif level == 4:
        text = f"What is the volume of a sphere of radius {r}? Express it in terms of $\\pi$."
        steps, answer, wrong = [f"4/3*pi*{r}^3"], sympy.Rational(4, 3) * pi * r**3, 4 * pi * r**2
    else:
        text = f"A cylinder has radius {r} and height {h}. What is its total surface area, in terms of $\\pi$?"
        steps = [f"2*pi*{r}^2", f"2*pi*{r}^2 + 2*pi*{r}*{h}"]
        answer, wrong = 2 * pi * r * r + 2 * pi * r * h, pi * r * r * h
    return Problem(
        text=text,
        answer=sympy.simplify(answer),
        steps=steps,
        method="volume and surface area formulas: box lwh, cylinder pi r^2 h, cone a third of it, sphere 4/3 pi r^3",
        keywords=("volume formula", "surface area formula", "pi r^2 h", "4/3", "lwh", "2 pi r h"),
        wrong_method="use the formula for the area of the base only",
        wrong_steps=[sympy.sstr(wrong).replace("**", "^")],
        wrong_answer=sympy.simplify(wrong),
    )


GENERATORS: dict[str, Callable[[random.Random, int], Problem]] = {
    "Linear Equations": linear,
    "Systems of Linear Equations": systems,
    "Quadratic Equations": quadratic,
    "Exponents and Logarithms": logarithms,
    "Sequences and Series": sequences,
    "Complex Numbers": complex_numbers,
    "Pythagorean Theorem": pythagorean,
    "Circles": circles,
    "Area of Triangles and Polygons": areas,
    "Volume and Surface Area": volumes,
}
KNOWLEDGE_POINTS: tuple[str, ...] = tuple(GENERATORS)


def to_task(problem: Problem, task_id: str) -> Task:
    answer = sympy.latex(problem.answer)
    wrong = sympy.latex(problem.wrong_answer)
    if wrong == answer:
        wrong = sympy.latex(problem.answer + 1)
    return Task(
        id=task_id,
        env="math",
        instruction=problem.text,
        data={"level": problem.level, "source": "generator"},
        hidden={
            "answer": answer,
            "knowledge_point": problem.knowledge_point,
            "method": problem.method,
            "keywords": list(problem.keywords),
            "steps": problem.steps,
            "wrong_method": problem.wrong_method,
            "wrong_steps": problem.wrong_steps,
            "wrong_answer": wrong,
        },
    )


def cell(seed: int, index: int, levels: tuple[int, ...] = RUN_LEVELS) -> tuple[str, int]:
    """(knowledge point, level) of task ``index``: a seeded shuffle of every cell per block.

    The tasks come in blocks of ``10 L`` (30 for the run levels), each block a
    seeded random order of every (knowledge point, level) once. So any first
    T tasks are a random sample of the cells without replacement, whatever
    T (a 5-task run is as likely to hold a level-3 circle as a level-1
    linear equation), and a whole block is exactly the table's mix. The
    earlier order (points in turn, the level rising every ten tasks) gave
    every 5- or 10-task run level-1 problems only, and a 5-task run the
    same five points (all-default pass rate 0.357 on tasks 0-4 against the
    table's 0.252). The order depends on the block alone, never on
    ``count``, so a longer run keeps the first tasks (prefix-stable).
    """
    cells = [(kp, lv) for lv in levels for kp in KNOWLEDGE_POINTS]
    block, at = divmod(index, len(cells))
    random.Random(f"math-order:{seed}:{block}").shuffle(cells)
    return cells[at]


def generate(count: int = 50, seed: int = 0, levels: tuple[int, ...] = RUN_LEVELS) -> list[Task]:
    """``count`` problems with unique texts, in :func:`cell`'s order (every prefix representative).

    Each problem's numbers come from its own stream (seed, index).
    """
    tasks: list[Task] = []
    seen: set[str] = set()
    for i in range(count):
        kp, level = cell(seed, i, levels)
        for attempt in range(200):
            rng = random.Random(f"math:{seed}:{i}:{attempt}")
            problem = GENERATORS[kp](rng, level)
            if problem.text not in seen:
                break
        else:
            problem.text += f" (problem {i + 1})"
        seen.add(problem.text)
        problem.knowledge_point, problem.level = kp, level
        tasks.append(to_task(problem, f"math-gen-{seed}-{i:04d}"))
    return tasks


__all__ = ["GENERATORS", "KNOWLEDGE_POINTS", "LEVELS", "RUN_LEVELS", "Problem", "cell", "generate"]
