"""``toolang doctor`` checks of what every turn needs before it can run: directories
that can be created, a model every agent can reach, and the sandbox tools' programs run
in.

Kept apart from :mod:`toolang_core.doctor` (the configuration, plugins, store and
agents checks); both yield :class:`~toolang_core.doctor.Check` findings.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolang_core.doctor.check import Check, Status
    from toolang_core.doctor.context import DoctorContext
    from toolang_core.runtime import Runtime


def creatable(directory: Path) -> str | None:
    """Why ``directory`` cannot be created, or ``None`` when it exists or can be.

    Really tries: creates the missing directories and removes them again (permission
    bits do not tell the whole story — a read-only mount, /proc, a file in the way).
    """
    if directory.is_dir():
        return None if os.access(directory, os.W_OK | os.X_OK) else f"{directory} is not writable"
    missing = [directory, *(p for p in directory.parents if not p.exists())]
    made: list[Path] = []
    try:
        for path in reversed(missing):
            path.mkdir()
            made.append(path)
    except OSError as exc:
        return f"{directory} cannot be created: {exc.strerror or exc}"
    finally:
        for path in reversed(made):
            # something else may have put a file there meanwhile: then leave it
            with contextlib.suppress(OSError):
                path.rmdir()
    return None


def check_directories(ctx: DoctorContext) -> Iterator[Check]:
    """The home directory and the SQLite store's directory can be created (or exist)."""
    from toolang_core.doctor.check import Check

    config = ctx.config
    if config is None:
        return
    wanted = {config.home: "home"}
    if config.store.backend == "sqlite":
        wanted.setdefault(config.store_path.parent, "[store] path")
    for directory, key in wanted.items():
        if directory.exists() and not directory.is_dir():
            yield Check("home", "fail", f"{key}: {directory} exists but is not a directory")
            continue
        problem = creatable(directory)
        if problem:
            yield Check(
                "home",
                "fail",
                f"{key}: {problem}",
                ("point it at a directory you can write; `chat` and `run` cannot start",),
            )
        elif not directory.exists():
            yield Check(
                "home", "info", f"{key}: {directory} does not exist yet; created on first run"
            )
        else:
            yield Check("home", "ok", f"{key}: {directory} is writable")


def check_models(ctx: DoctorContext) -> Iterator[Check]:
    """Every active agent's model (or ``[models] default``) and fallback models (or
    ``[models] fallback``), and ``[agents] summary_model``, resolve, and where its
    provider can tell (a model with ``check()``), the provider knows the model."""
    from toolang_core.doctor.check import Check
    from toolang_core.doctor.context import runtime_for

    runtime = runtime_for(ctx)
    if runtime is None or runtime.config.runtime.executor != "agent":
        return  # only the agent loop asks a model
    if not runtime.host.components.of_kind("model"):
        yield Check(
            "models",
            "warn",
            "no model plugin is installed: agent turns cannot answer "
            "(install toolang-model-demo or toolang-model-llm)",
        )
        return
    default = runtime.config.models.default
    wanted: dict[str, list[str]] = {default: ["[models] default"]}
    try:
        agents = runtime.agents.registry.active()
    except Exception:  # the agents check reports a broken registry
        agents = []
    for index, spec in enumerate(runtime.config.models.fallback):
        wanted.setdefault(spec, []).append(f"[models] fallback[{index}]")
    if runtime.config.agents.summary_model is not None:
        wanted.setdefault(runtime.config.agents.summary_model, []).append("[agents] summary_model")
    for agent in agents:
        if agent.model:
            wanted.setdefault(agent.model, []).append(f"agent {agent.name!r}")
        for index, spec in enumerate(agent.fallback or ()):
            wanted.setdefault(spec, []).append(f"agent {agent.name!r} fallback[{index}]")
    problems = [
        f"{spec} ({', '.join(users)}): {problem}"
        for spec, users in wanted.items()
        if (problem := _model_problem(runtime, spec))
    ]
    if problems:
        yield Check("models", "fail", f"{len(problems)} model(s) cannot answer", tuple(problems))
    else:
        yield Check("models", "ok", f"model(s) resolve: {', '.join(wanted)}")


def _model_problem(runtime: Runtime, spec: str) -> str | None:
    from toolang_core.models.resolve import ModelResolver
    from toolang_core.models.types import ModelError

    try:
        model = ModelResolver(runtime).resolve(spec)
        check = getattr(model, "check", None)
        if check is not None:
            asyncio.run(check())
    except ModelError as exc:
        return str(exc)
    return None


def check_sandbox(ctx: DoctorContext) -> Iterator[Check]:
    """The OS sandbox of tools' programs: available (which bubblewrap, how the process
    limit is enforced here), or — ``[tools] sandbox = "required"`` — a failure naming
    what to install; ``sandbox = "off"`` is said as a warning (shown in red)."""
    from toolang_core.doctor.check import Check
    from toolang_core.sandbox.support import OFF_WARNING, sandbox_support

    config = ctx.config
    if config is None:
        return
    found = sandbox_support()
    if config.tools.sandbox == "off":
        detail = found.describe() if found.available else f"(and here: {found.problem})"
        yield Check("sandbox", "warn", OFF_WARNING, (f"available here: {detail}",))
        return
    if not found.available:
        yield Check(
            "sandbox",
            "fail",
            "tools' programs cannot run: the sandbox is required and not available here",
            (str(found.problem),),
        )
        return
    status: Status = "warn" if "NOT enforced" in found.process_limit else "ok"
    yield Check("sandbox", status, f"tools' programs run sandboxed: {found.describe()}")
