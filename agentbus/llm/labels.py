"""Short, distinct labels for model specs, for table headers and progress lines.

A spec such as ``vllm:http://127.0.0.1:8101/v1#meta-llama/Llama-3.1-8B-Instruct``
is too long for a column at 80 characters, and cutting it makes two replicas'
specs the same header. A label keeps the model's name and adds the host only
where two share a name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: longest model label shown in a table header before it is shortened
LABEL_MAX = 18


def model_labels(models: Sequence[str]) -> dict[str, str]:
    """Short, distinct header labels for model specs (``vllm:http://h:8101/v1#org/M`` -> ``M``).

    Short specs are kept as they are. A long one is shortened to its model
    name (after ``#``, last path part), then to ``name@host:port`` when two
    share a name, then numbered; never two identical labels.
    """
    models = list(dict.fromkeys(models))  # each spec once, in order
    labels: dict[str, str] = {}
    for m in models:
        labels[m] = m if len(m) <= LABEL_MAX else _short(m)
    by_label: dict[str, list[str]] = {}
    for m, label in labels.items():
        by_label.setdefault(label, []).append(m)
    for label, same in by_label.items():
        if len(same) > 1:
            for m in same:
                host = _host(m)
                labels[m] = f"{label}@{host}" if host else label
    seen: dict[str, int] = {}
    for m in models:
        label = labels[m]
        if label in seen:
            seen[label] += 1
            labels[m] = f"{label}#{seen[label]}"
        else:
            seen[label] = 1
    return labels


def _short(spec: str) -> str:
    name = spec.split("#", 1)[1] if "#" in spec else spec.split(":", 1)[-1]
    name = name.rstrip("/").rsplit("/", 1)[-1] or spec
    return name if len(name) <= LABEL_MAX else name[: LABEL_MAX - 1] + "~"


def _host(spec: str) -> str:
    found = re.search(r"://([^/,#]+)", spec)
    return found.group(1).rsplit("@", 1)[-1] if found else ""


__all__ = ["LABEL_MAX", "model_labels"]
