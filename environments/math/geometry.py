"""The geometry knowledge points: one seeded problem per (rng, level).

Pythagorean theorem, circles, areas of triangles and polygons, volumes and
surface areas. Each function draws only from the ``rng`` it is given, in a
fixed order, so a seed always makes the same problem.
"""

# ruff: noqa: E501  (problem texts read better unwrapped)
from __future__ import annotations

import random

import sympy

from environments.math.problem import Problem


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
