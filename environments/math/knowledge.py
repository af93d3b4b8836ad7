"""The built-in knowledge base: short notes per knowledge point, in our own words.

The generator's tasks need no files, so their search tool needs a knowledge
base that ships with the code. Each knowledge point has a few notes; the
search tool returns the best three for a query, as CapaBench's does over its
knowledge-point file.
"""

from __future__ import annotations

KNOWLEDGE: dict[str, list[str]] = {
    "Linear Equations": [
        "Linear equations: to solve ax + b = cx + d, isolate x: move every x term to one side "
        "and every constant to the other, then divide by the coefficient of x, "
        "x = (d - b) / (a - c).",
        "Distributing a factor over parentheses, a(x + b) = ax + ab, is usually the first step "
        "when a linear equation contains brackets.",
    ],
    "Systems of Linear Equations": [
        "Systems of linear equations in two unknowns: eliminate one unknown by adding a multiple "
        "of one equation to the other (elimination), or solve one equation for a variable and "
        "substitute it into the other (substitution).",
        "A system of two linear equations has exactly one solution when the determinant "
        "a1*b2 - a2*b1 is not zero.",
    ],
    "Quadratic Equations": [
        "Quadratic equations ax^2 + bx + c = 0 are solved by factoring or with the quadratic "
        "formula x = (-b ± sqrt(b^2 - 4ac)) / (2a).",
        "Vieta's formulas for the roots of a quadratic: the sum of the roots is -b/a and the "
        "product of the roots is c/a; r1^2 + r2^2 = (r1 + r2)^2 - 2 r1 r2.",
        "The vertex of the parabola y = ax^2 + bx + c is at x = -b/(2a).",
    ],
    "Exponents and Logarithms": [
        "Logarithms: log_b(N) = k means b^k = N. An exponential equation b^x = N is solved by "
        "taking the logarithm: x = log_b(N).",
        "Logarithm rules: log_b(MN) = log_b(M) + log_b(N), log_b(M/N) = log_b(M) - log_b(N), "
        "log_b(M^k) = k log_b(M).",
        "Exponent rules: a^m a^n = a^(m+n), (a^m)^n = a^(mn), a^(-n) = 1/a^n.",
    ],
    "Sequences and Series": [
        "Arithmetic sequences: the n-th term is a_n = a_1 + (n - 1)d and the sum of the first n "
        "terms is S_n = n/2 (2a_1 + (n - 1)d).",
        "Geometric sequences: the n-th term is a_n = a_1 r^(n-1) and the sum of the first n terms "
        "is S_n = a_1 (r^n - 1) / (r - 1) for r != 1.",
    ],
    "Complex Numbers": [
        "Complex numbers: add and subtract real and imaginary parts separately; multiply with "
        "the distributive law using i^2 = -1.",
        "To divide complex numbers multiply numerator and denominator by the conjugate of the "
        "denominator; the modulus of a + bi is sqrt(a^2 + b^2).",
    ],
    "Pythagorean Theorem": [
        "Pythagorean theorem: in a right triangle with legs a and b and hypotenuse c, "
        "a^2 + b^2 = c^2, so c = sqrt(a^2 + b^2) and a leg is sqrt(c^2 - b^2).",
        "The distance between points (x1, y1) and (x2, y2) is sqrt((x2 - x1)^2 + (y2 - y1)^2); "
        "the diagonal of an a-by-b rectangle is sqrt(a^2 + b^2).",
    ],
    "Circles": [
        "Circles: the area is pi r^2 and the circumference is 2 pi r for radius r.",
        "Arcs and sectors: an arc of central angle theta degrees has length (theta/360) 2 pi r; "
        "the sector has area (theta/360) pi r^2.",
    ],
    "Area of Triangles and Polygons": [
        "Triangle area: one half of base times height; from vertices use the shoelace formula "
        "|x1(y2 - y3) + x2(y3 - y1) + x3(y1 - y2)| / 2.",
        "Trapezoid area: the average of the two parallel sides times the height, (a + b)/2 * h.",
        "Heron's formula: a triangle with sides a, b, c and semi-perimeter s = (a + b + c)/2 has "
        "area sqrt(s(s - a)(s - b)(s - c)).",
    ],
    "Volume and Surface Area": [
        "Volumes: a box is l w h, a cylinder pi r^2 h, a cone (1/3) pi r^2 h, a sphere "
        "(4/3) pi r^3.",
        "Surface areas: a cylinder has 2 pi r^2 + 2 pi r h, a sphere 4 pi r^2, a box "
        "2(lw + lh + wh).",
    ],
}


def knowledge_texts() -> list[str]:
    """Every note of the built-in knowledge base, in a stable order."""
    return [text for notes in KNOWLEDGE.values() for text in notes]


__all__ = ["KNOWLEDGE", "knowledge_texts"]
