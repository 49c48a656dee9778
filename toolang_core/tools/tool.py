"""A tool: the callable the agents may use, as a plugin registers it (:class:`Tool`).

With :class:`AskApproval`, the verdict a tool may carry so that none of its calls runs
unattended. Both are re-exported by :mod:`toolang_core.tools.types` (and
``toolang_core``), where the rest of the tool-call values live; they are kept here, in
a leaf, so that what names a registered tool (the plugin registration records the
runtime view reads) does not import the call's context, which names the view.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

JSON = Any
"""A value that survives ``json.dumps`` / ``json.loads`` unchanged."""


@attrs.frozen
class Tool:
    """A callable the agents may use.

    ``parameters`` is a JSON Schema object describing the keyword arguments of
    ``function``; parameters are validated against it before any hook runs.
    ``function`` may be sync or async and returns a JSON-able value, or a
    :class:`ToolOutput` (the value and files for the model: images, audio, documents).
    A sync function runs
    in a worker thread unless ``blocking`` is false (it then runs inline: only for quick,
    non-blocking work).
    """

    name: str
    description: str
    parameters: Mapping[str, JSON]
    function: Callable[..., JSON | Awaitable[JSON]]
    blocking: bool = True
    takes_context: bool = False
    """Whether ``function`` has a ``context`` parameter for the ToolCallContext."""
    requires: tuple[str, ...] = ()
    """Runtime services the tool needs (``"memory"``, ``"delegation"``); agents are not
    offered the tool while one of them is unavailable."""
    idempotent: bool = False
    """Whether running the same call twice does no more than running it once (a read, or
    a write keyed by ``ToolCallContext.idempotency_key``). A call cut off by a crash
    after it started is *in doubt*: an idempotent tool is run again, any other is not —
    the model (or a person, ``[tools] in_doubt``) is told it may already have run."""
    owner: str | None = None
    """The agent (or built-in role, e.g. ``"navigator"``) that should own the tool when
    no agent's prefix claims it — so an installed tool is usable at once. An agent's
    prefix claim still wins; an owner that is not an active agent is ignored and
    reported by ``toolang doctor``. See docs/hooks/tools.md."""
    asks_approval: AskApproval | None = None
    """Set for a tool no call of which may run unattended (it deletes, pays, publishes):
    every call waits for a person's approval, whatever the ApprovalGate's policy says,
    as when a SecurityFilter answers :class:`AskApproval`; the trace names its ``rule``
    (its ``params`` are ignored). Cheaper than a filter hook that looks for the tool on
    every call of every tool."""
    secret_params: tuple[str, ...] = ()
    """Top-level parameters that carry a secret *into* the tool (a vault's
    ``secrets_set``): a SecurityFilter leaves their values as they are — masking them
    would hand the tool ``********`` — and still judges them. Name each so
    :func:`toolang_core.is_secret_key` says it is a secret (``secret``, ``password``):
    the runtime's redaction policy then masks it wherever the call is recorded (the
    model's step, the trace, an approval request, logs)."""

    def __attrs_post_init__(self) -> None:
        from toolang_core.redaction import is_secret_key

        for param in self.secret_params:
            if not is_secret_key(param):
                raise ValueError(
                    f"tool {self.name!r}: secret_params names {param!r}, which the "
                    "redaction policy would not mask where the call is recorded; name "
                    "it like a secret (e.g. 'secret', 'password')"
                )

    @classmethod
    def from_function(
        cls,
        function: Callable[..., JSON | Awaitable[JSON]],
        *,
        name: str | None = None,
        description: str | None = None,
        blocking: bool = True,
        requires: tuple[str, ...] = (),
        idempotent: bool = False,
        owner: str | None = None,
        asks_approval: AskApproval | None = None,
        secret_params: tuple[str, ...] = (),
    ) -> Tool:
        """A tool whose schema comes from ``function``'s type hints and docstring.

        :raises SchemaError: naming the parameter whose annotation has no JSON Schema.
        """
        from toolang_core.tools.schema import function_schema, takes_context

        tool_name = name or function.__name__
        doc, parameters = function_schema(function, tool_name)
        return cls(
            tool_name,
            description or doc or tool_name,
            parameters,
            function,
            blocking,
            takes_context(function),
            requires,
            idempotent,
            owner,
            asks_approval,
            secret_params,
        )

    def constrain(self, **properties: Mapping[str, JSON]) -> Tool:
        """This tool with extra JSON Schema keywords on some parameters, e.g.
        ``tool.constrain(limit={"minimum": 1, "maximum": 50})`` — bounds a docstring
        cannot say. An optional parameter (``anyOf`` with ``null``) gets them on its
        non-null branch.

        :raises ValueError: naming the tool and a parameter it does not have.
        """
        schema = dict(self.parameters)
        props = {name: dict(value) for name, value in schema.get("properties", {}).items()}
        for name, extra in properties.items():
            if name not in props:
                raise ValueError(
                    f"tool {self.name!r} has no parameter {name!r} to constrain "
                    f"(it has: {', '.join(sorted(props)) or 'none'})"
                )
            if "anyOf" in props[name]:  # an optional parameter: tighten its non-null branch
                props[name]["anyOf"] = [
                    {**branch, **extra} if branch.get("type") != "null" else branch
                    for branch in props[name]["anyOf"]
                ]
            else:
                props[name].update(extra)
        schema["properties"] = props
        return attrs.evolve(self, parameters=schema)


@attrs.frozen
class AskApproval:
    """SecurityFilter verdict: the call may run only once a person approves it.

    For what is sometimes legitimate but never unattended (``terraform destroy``,
    dropping a database): the ApprovalGate asks even when its policy would let the tool
    run, and the trace names ``rule``. ``params``, when given, replace the call's
    parameters like :class:`Modify`'s (e.g. with personal data masked).
    """

    reason: str
    rule: str
    params: Mapping[str, JSON] | None = None
