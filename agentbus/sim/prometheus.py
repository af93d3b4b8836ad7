"""The simulator's ``GET /metrics`` in vLLM's Prometheus names, so routers read it as vLLM.

A router that balances vLLM replicas reads ``vllm:num_requests_running``,
``vllm:num_requests_waiting`` and the KV-cache usage from each server; the
simulator exposes the same names, so the same router code is tested here
against simulated servers. The simulator has no KV memory model: its
``vllm:kv_cache_usage_perc`` is the share of batch seats in use, which is
what the usage tracks on a server whose sequences are of similar length.
The JSON counters are at ``GET /metrics.json``.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from agentbus.sim.engine import SimEngine

#: the ``model_name`` label (the simulator serves every profile from one engine)
MODEL_NAME = "agentbus-sim"

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class SimCollector(Collector):
    """Reads the engine's serving model and counters at every scrape."""

    def __init__(self, engine: SimEngine) -> None:
        self.engine = engine

    def collect(self) -> Iterator[Metric]:
        serving, metrics = self.engine.serving, self.engine.metrics
        labels = ["model_name"]
        value = [MODEL_NAME]

        def gauge(name: str, doc: str, amount: float) -> GaugeMetricFamily:
            family = GaugeMetricFamily(name, doc, labels=labels)
            family.add_metric(value, amount)
            return family

        def counter(name: str, doc: str, amount: float) -> CounterMetricFamily:
            family = CounterMetricFamily(name, doc, labels=labels)
            family.add_metric(value, amount)
            return family

        seats = serving.config.max_num_seqs
        yield gauge("vllm:num_requests_running", "Requests in the batch.", serving.running)
        yield gauge("vllm:num_requests_waiting", "Requests queued.", serving.waiting)
        yield gauge(
            "vllm:kv_cache_usage_perc",
            "KV-cache usage, 1 = full (here: share of batch seats in use).",
            serving.running / seats,
        )
        yield counter(
            "vllm:prompt_tokens", "Prefill tokens processed.", float(metrics.prompt_tokens)
        )
        yield counter(
            "vllm:generation_tokens", "Generation tokens.", float(metrics.completion_tokens)
        )
        yield counter(
            "vllm:prefix_cache_hits",
            "Prompt tokens served from the prefix cache.",
            float(serving.cached_tokens),
        )
        yield counter(
            "vllm:request_success", "Requests finished.", float(metrics.by_status.get("200", 0))
        )


def registry_for(engine: SimEngine) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SimCollector(engine))
    return registry


def render(registry: CollectorRegistry) -> bytes:
    """The Prometheus text exposition of one scrape."""
    return generate_latest(registry)
