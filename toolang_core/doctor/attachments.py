"""``toolang doctor`` checks of ``[attachments]`` and of the models that take them:
the directory the files are kept in, the types and size limit configured, and the
fallback models that take fewer types than the model they back (docs/attachments.md).

The configuration's load already refuses what its shape tells (a size that is not a
positive integer, a type that is not ``major/minor``, an unknown key); these checks find
what only the machine or the models tell.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from toolang_core.doctor.check import Check
    from toolang_core.doctor.context import DoctorContext

TOP_LEVEL_TYPES: Final = frozenset(
    {"application", "audio", "font", "haptics", "image", "message", "model", "multipart"}
    | {"text", "video", "*"}
)
"""The registered top-level media types (IANA): a type under another is never sniffed."""
LARGE_BYTES: Final = 1024**3
"""A ``max_bytes`` above this is warned of: a file is held in memory while it is stored."""


def check_attachments(ctx: DoctorContext) -> Iterator[Check]:
    """``[attachments] dir`` can be created and written, each of ``types`` is one a
    file can be (its top-level type registered), and ``max_bytes`` is not so large
    that storing a file that size would exhaust memory. Each problem names its key."""
    from toolang_core.doctor.check import Check
    from toolang_core.doctor.setup import creatable

    config = ctx.config
    if config is None:
        return
    section = config.attachments
    problems = []
    directory = config.attachments_dir
    key = "[attachments] dir" if section.dir is not None else "[attachments] dir (default)"
    if directory.exists() and not directory.is_dir():
        problems.append(f"{key} = {str(directory)!r}: exists but is not a directory")
    elif (problem := creatable(directory)) is not None:
        problems.append(f"{key} = {str(directory)!r}: {problem}")
    for index, pattern in enumerate(section.types):
        major = pattern.partition("/")[0].lower()
        if major not in TOP_LEVEL_TYPES:
            problems.append(
                f"[attachments] types[{index}] = {pattern!r}: {major!r} is not a media type's "
                f"top level (one of {', '.join(sorted(TOP_LEVEL_TYPES - {'*'}))}); "
                "no file is ever of this type"
            )
    if problems:
        yield Check(
            "attachments",
            "fail",
            "the [attachments] configuration cannot work",
            tuple(problems),
        )
        return
    if section.max_bytes > LARGE_BYTES:
        yield Check(
            "attachments",
            "warn",
            f"[attachments] max_bytes = {section.max_bytes}: over 1 GiB; a file is held in "
            "memory while it is stored",
        )
        return
    yield Check(
        "attachments",
        "ok",
        f"attachments: up to {section.max_bytes} bytes, {len(section.types)} type(s), "
        f"kept in {directory}",
    )


def check_fallback_attachments(ctx: DoctorContext) -> Iterator[Check]:
    """Each fallback model takes the attachment types its model takes (where the models
    say: ``attachment_types``): one that takes fewer is skipped by a turn with such an
    attachment, so the turn has fewer models to fall back on. A warning per pair, naming
    where the fallback was named and the types it lacks."""
    from toolang_core.attachments import accepted_types, matches
    from toolang_core.doctor.check import Check
    from toolang_core.doctor.context import runtime_for
    from toolang_core.models.resolve import ModelResolver
    from toolang_core.models.types import ModelError
    from toolang_core.turn.model_retry import fallback_specs

    runtime = runtime_for(ctx)
    if runtime is None or runtime.config.runtime.executor != "agent":
        return
    models = runtime.config.models
    try:
        agents = runtime.agents.registry.active()
    except Exception:  # the agents check reports a broken registry
        agents = []
    pairs = {(models.default, spec, where) for spec, where in fallback_specs(models, None)}
    for agent in agents:
        model = agent.model or models.default
        pairs.update((model, spec, where) for spec, where in fallback_specs(models, agent))
    resolver = ModelResolver(runtime)
    problems = []
    for model, spec, where in sorted(pairs):
        if spec == model:
            continue
        try:
            takes = accepted_types(resolver.resolve(model))
            fallback_takes = accepted_types(resolver.resolve(spec))
        except ModelError:
            continue  # the models check names a model that cannot be had
        lacking = [t for t in takes if not matches(t, fallback_takes)]
        if lacking:
            problems.append(
                f"{where} = {spec!r} does not accept {', '.join(lacking)} that {model!r} "
                f"accepts (it accepts: {', '.join(fallback_takes) or 'no attachments'}); "
                "a turn with such an attachment skips it"
            )
    if problems:
        yield Check(
            "attachments",
            "warn",
            f"{len(problems)} fallback model(s) take fewer attachment types than their model",
            tuple(problems),
        )
