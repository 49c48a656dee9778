"""Find toolang plugins through entry points and decide which ones to import.

The scan reads package metadata only — nothing is imported — so the allow- and
deny-lists are applied before any plugin code runs.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib.metadata import EntryPoint, entry_points

import attrs

from toolang_core.builtins import install_hint
from toolang_core.markers import PROJECT_NAME

ENV_LOAD = "TOOLANG_LOAD_PLUGINS"
ENV_DISABLE = "TOOLANG_DISABLE_PLUGINS"
ENV_STRICT = "TOOLANG_STRICT_PLUGINS"


def normalize(name: str) -> str:
    """Normalise a distribution or entry-point name as PEP 503 does (case, ``-_.``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@attrs.frozen
class EntryPointInfo:
    """One ``toolang`` entry point and the distribution that declares it."""

    name: str
    value: str
    distribution: str
    version: str
    entry_point: EntryPoint = attrs.field(eq=False, repr=False)

    def load(self) -> object:
        return self.entry_point.load()


def scan_entry_points(group: str = PROJECT_NAME) -> tuple[EntryPointInfo, ...]:
    """Return every entry point of ``group`` on ``sys.path``, in a deterministic order.

    Sorted by entry-point name, then by normalised distribution name, so load order
    never depends on the file system. Only metadata is read.
    """
    return _infos(entry_points(group=group))


def scan(group: str = PROJECT_NAME) -> tuple[tuple[EntryPointInfo, ...], list[str]]:
    """:func:`scan_entry_points`, and a message for each distribution that declares its
    entry points in a misspelt group instead (``toolang_plugins``): one read of the
    metadata for both."""
    from toolang_core.plugins.mistakes import looks_like, misdeclared_groups

    everything = entry_points()
    ours = everything.select(group=group)
    suspects = [g for g in everything.groups if g != group and looks_like(g, group)]
    found = [*ours, *(ep for g in suspects for ep in everything.select(group=g))]
    return _infos(ours), misdeclared_groups(found, group)


def _infos(found: Iterable[EntryPoint]) -> tuple[EntryPointInfo, ...]:
    infos = []
    for ep in found:
        dist = ep.dist
        # ``dist.name`` and ``dist.version`` would each parse the metadata file again.
        metadata = dist.metadata if dist is not None else None
        infos.append(
            EntryPointInfo(
                name=ep.name,
                value=ep.value,
                distribution=metadata["Name"] if metadata is not None else "<unknown>",
                version=metadata["Version"] if metadata is not None else "",
                entry_point=ep,
            )
        )
    return tuple(sorted(infos, key=lambda i: (i.name, normalize(i.distribution))))


def _split_names(value: str) -> frozenset[str]:
    """Names from a comma-separated list; spaces around each name are ignored."""
    return _names(value.split(","))


def _names(names: Iterable[str]) -> frozenset[str]:
    return frozenset(normalize(name.strip()) for name in names if name.strip())


@attrs.frozen
class LoadPolicy:
    """Which entry points may be imported, and whether a failure is fatal.

    ``allow`` of ``None`` allows everything; an empty ``allow`` loads nothing. Names in
    either list match an entry-point name or a distribution name, compared after
    :func:`normalize`; in the environment variables they are separated by commas, and
    spaces around a name are ignored.
    """

    allow: frozenset[str] | None = None
    deny: frozenset[str] = frozenset()
    strict: bool = False
    allow_origin: str = ""
    deny_origin: Mapping[str, str] = attrs.field(factory=dict)

    @classmethod
    def resolve(
        cls,
        env: Mapping[str, str],
        *,
        config_load: Sequence[str] | None = None,
        config_disable: Sequence[str] = (),
        config_strict: bool = False,
        strict_flag: bool = False,
    ) -> LoadPolicy:
        """Combine the environment with the configuration file.

        ``TOOLANG_LOAD_PLUGINS`` replaces ``[plugins] load`` when set (the empty string
        loads none); ``TOOLANG_DISABLE_PLUGINS`` adds to ``[plugins] disable``; strict
        mode is on if the flag, ``TOOLANG_STRICT_PLUGINS`` or ``[plugins] strict`` says so.
        """
        allow: frozenset[str] | None
        if ENV_LOAD in env:
            allow, allow_origin = _split_names(env[ENV_LOAD]), ENV_LOAD
        elif config_load is not None:
            allow, allow_origin = _names(config_load), "[plugins] load"
        else:
            allow, allow_origin = None, ""
        deny_origin = dict.fromkeys(_names(config_disable), "[plugins] disable")
        deny_origin.update(dict.fromkeys(_split_names(env.get(ENV_DISABLE, "")), ENV_DISABLE))
        strict = (
            strict_flag
            or config_strict
            or env.get(ENV_STRICT, "").strip().lower() in {"1", "true", "yes", "on"}
        )
        return cls(
            allow=allow,
            deny=frozenset(deny_origin),
            strict=strict,
            allow_origin=allow_origin,
            deny_origin=deny_origin,
        )

    def unmatched(self, infos: Iterable[EntryPointInfo]) -> list[str]:
        """A message for each allow- or deny-list name that matches no entry point.

        Such a name is most often a typo, which would leave a plugin on (deny) or off
        (allow) without a word; the host warns about each, and fails in strict mode.
        """
        known: dict[str, str] = {}
        for info in infos:
            known[normalize(info.name)] = info.name
            known.setdefault(normalize(info.distribution), info.distribution)
        messages = []
        listed = [(n, self.allow_origin) for n in sorted(self.allow or ())]
        listed += [(n, self.deny_origin.get(n, "the deny-list")) for n in sorted(self.deny)]
        for name, origin in listed:
            if name in known:
                continue
            hint = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
            suggestion = f" (did you mean {known[hint[0]]!r}?)" if hint else install_hint(name)
            messages.append(
                f"{origin} names {name!r}, but no installed plugin has that entry-point "
                f"or distribution name{suggestion}"
            )
        return messages

    def refusal(self, info: EntryPointInfo) -> str | None:
        """Return why ``info`` must not be imported, or ``None`` when it may be."""
        names = {normalize(info.name), normalize(info.distribution)}
        denied = names & self.deny
        if denied:
            return f"disabled by {self.deny_origin.get(min(denied), 'the deny-list')}"
        if self.allow is not None and not names & self.allow:
            return f"not listed in {self.allow_origin}"
        return None


def find_duplicates(infos: Iterable[EntryPointInfo]) -> dict[str, list[EntryPointInfo]]:
    """Group entry points that share a name across distributions."""
    by_name: dict[str, list[EntryPointInfo]] = {}
    for info in infos:
        by_name.setdefault(info.name, []).append(info)
    return {name: group for name, group in by_name.items() if len(group) > 1}
