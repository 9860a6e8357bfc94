"""Asking a chat model for one pydantic answer, with bounded retries and counted fallbacks.

Any langchain-core ``BaseChatModel`` works. A model that supports ``with_structured_output``
answers through it (tool calling); any other is asked for JSON, which is parsed into the same
schema. A malformed answer (not JSON, wrong shape, empty) or an exception from the model is
retried up to ``retries`` times, telling the model what was wrong; then ``ask`` returns
``None`` and the caller runs its offline step. Every call, retry, fallback and token is counted
per operation in ``Usage``: nothing fails silently and nothing is hidden.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import pydantic
from pydantic import BaseModel

if TYPE_CHECKING:  # langchain-core takes a second to import; only a model call needs it
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

T = TypeVar("T", bound=BaseModel)

#: what ``Usage`` counts for each operation
METRICS = (
    "calls",
    "retries",
    "malformed",
    "errors",
    "fallbacks",
    "dropped_ids",
    "input_tokens",
    "output_tokens",
)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class Usage:
    """Thread-safe counters per operation (``enrich``, ``link``, ``adjudicate``, ...)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, dict[str, int]] = {}

    def add(self, op: str, metric: str, amount: int = 1) -> None:
        """Count ``amount`` more of ``metric`` for ``op``."""
        if metric not in METRICS:
            raise ValueError(f"unknown usage metric {metric!r}")
        with self._lock:
            row = self._counts.setdefault(op, dict.fromkeys(METRICS, 0))
            row[metric] += amount

    def snapshot(self) -> dict[str, dict[str, int]]:
        """A copy of every counter, by operation."""
        with self._lock:
            return {op: dict(row) for op, row in sorted(self._counts.items())}

    def props(self) -> dict[str, int]:
        """Flat ``<op>__<metric>`` properties, what a usage node stores."""
        return {f"{op}__{m}": n for op, row in self.snapshot().items() for m, n in row.items()}

    @staticmethod
    def from_props(rows: Iterator[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
        """Sum of flat usage properties (many nodes) back into counters by operation."""
        out: dict[str, dict[str, int]] = {}
        for props in rows:
            for key, value in props.items():
                op, sep, metric = key.partition("__")
                if sep and metric in METRICS and isinstance(value, int | float):
                    row = out.setdefault(op, dict.fromkeys(METRICS, 0))
                    row[metric] += int(value)
        return dict(sorted(out.items()))


class MalformedAnswerError(Exception):
    """The model's answer does not fit the schema."""


def parse_json(text: str, schema: type[T]) -> T:
    """The first JSON object in ``text`` (fenced or bare) validated as ``schema``."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise MalformedAnswerError("the answer holds no JSON object")
    try:
        data = json.loads(body[start : end + 1])
    except json.JSONDecodeError as exc:
        raise MalformedAnswerError(f"the JSON does not parse: {exc}") from None
    return validate(data, schema)


def validate(data: Any, schema: type[T]) -> T:
    """``data`` as ``schema``, or MalformedAnswerError naming the first problems."""
    if isinstance(data, schema):
        return data
    if isinstance(data, BaseModel):
        data = data.model_dump()
    try:
        return schema.model_validate(data)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'answer'}: {err['msg']}"
            for err in exc.errors()[:3]
        )
        raise MalformedAnswerError(f"the answer does not fit the schema: {problems}") from None


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        part if isinstance(part, str) else str(part.get("text", ""))
        for part in content
        if isinstance(part, str | dict)
    )


class NoteLLM:
    """One chat model and the counters of what was asked of it."""

    def __init__(self, model: BaseChatModel, *, retries: int, usage: Usage) -> None:
        self.model = model
        self.retries = retries
        self.usage = usage
        self._structured: dict[type[BaseModel], Any] = {}
        self._lock = threading.Lock()

    def _runnable(self, schema: type[BaseModel]) -> Any:
        """The structured-output runnable for ``schema``, or None: ask for JSON instead."""
        with self._lock:
            if schema not in self._structured:
                try:
                    runnable = self.model.with_structured_output(schema, include_raw=True)
                except NotImplementedError:
                    runnable = None
                self._structured[schema] = runnable
            return self._structured[schema]

    def ask(self, op: str, schema: type[T], system: str, prompt: str) -> T | None:
        """The model's answer as ``schema``, or None once retries are spent (fallback)."""
        from langchain_core.messages import HumanMessage, SystemMessage

        runnable = self._runnable(schema)
        instructions = system
        if runnable is None:
            shape = json.dumps(schema.model_json_schema(), separators=(",", ":"))
            instructions += f"\n\nReply with one JSON object matching this JSON schema:\n{shape}"
        messages: list[BaseMessage] = [SystemMessage(instructions), HumanMessage(prompt)]
        for attempt in range(self.retries + 1):
            if attempt:
                self.usage.add(op, "retries")
            self.usage.add(op, "calls")
            try:
                reply, answer = self._once(runnable, messages, schema)
            except Exception:  # a model or provider error: retried, then the offline step
                self.usage.add(op, "errors")
                continue
            self._count_tokens(op, reply)
            if isinstance(answer, MalformedAnswerError):
                self.usage.add(op, "malformed")
                messages = [*messages, HumanMessage(f"{answer}. Answer again, only the JSON.")]
                continue
            return answer
        self.usage.add(op, "fallbacks")
        return None

    def _once(
        self, runnable: Any, messages: list[BaseMessage], schema: type[T]
    ) -> tuple[BaseMessage | None, T | MalformedAnswerError]:
        """One model call: its reply and the parsed answer (or what was wrong with it)."""
        from langchain_core.messages import BaseMessage

        if runnable is None:
            message = self.model.invoke(messages)
            text = _text(message).strip()
            if not text:
                return message, MalformedAnswerError("the answer is empty")
            try:
                return message, parse_json(text, schema)
            except MalformedAnswerError as exc:
                return message, exc
        out = runnable.invoke(messages)
        raw = out.get("raw")
        reply = raw if isinstance(raw, BaseMessage) else None
        if out.get("parsing_error") is not None or out.get("parsed") is None:
            error = out.get("parsing_error") or "no tool call"
            return reply, MalformedAnswerError(f"the structured answer did not parse: {error}")
        try:
            return reply, validate(out["parsed"], schema)
        except MalformedAnswerError as exc:
            return reply, exc

    def _count_tokens(self, op: str, reply: BaseMessage | None) -> None:
        usage = getattr(reply, "usage_metadata", None)
        if usage:
            self.usage.add(op, "input_tokens", int(usage.get("input_tokens", 0)))
            self.usage.add(op, "output_tokens", int(usage.get("output_tokens", 0)))
