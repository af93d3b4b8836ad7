"""The algebra knowledge points: one seeded problem per (rng, level).

Linear equations, systems, quadratics, exponents and logarithms, sequences and
complex numbers. Each function draws only from the ``rng`` it is given, in a
fixed order, so a seed always makes the same problem.
"""

# ruff: noqa: E501  (problem texts read better unwrapped)
from __future__ import annotations

import random

import sympy

from environments.math.problem import Problem, lin, nz, tex


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
