"""tox inline plugin: one isolated env per plugin directory, and the integration env.

Each directory ``plugins/<dist>/`` with a ``pyproject.toml`` becomes a tox env named
``<dist>`` that installs toolang-core and that plugin only and runs its tests — so a
plugin that forgets to declare a dependency fails there. The ``integration`` env
installs every plugin together and runs every test.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tox.config.loader.memory import MemoryLoader
from tox.config.sets import ConfigSet
from tox.config.types import Command, EnvList
from tox.plugin import impl
from tox.session.state import State
from tox.tox_env.python.pip.req_file import PythonDeps

ROOT = Path(__file__).resolve().parent


def plugin_dirs() -> list[Path]:
    plugins = ROOT / "plugins"
    if not plugins.is_dir():
        return []
    return sorted(p for p in plugins.iterdir() if (p / "pyproject.toml").is_file())


@impl
def tox_extend_envs() -> Iterable[str]:
    return tuple(p.name for p in plugin_dirs())


@impl
def tox_add_core_config(core_conf: ConfigSet, state: State) -> None:
    env_list = core_conf["env_list"]
    assert isinstance(env_list, EnvList)
    # Plugin envs run by default, after the others. `integration` comes first: it is the
    # longest env by far, and `tox run-parallel` runs one env per CPU in this order, so
    # on 2 cores it runs beside all the rest instead of after them.
    for plugin in plugin_dirs():
        if plugin.name not in env_list.envs:
            env_list.envs.append(plugin.name)
    pos_args = list(state.conf.pos_args(None) or ())
    for plugin in plugin_dirs():
        state.conf.memory_seed_loaders[plugin.name].append(
            MemoryLoader(
                description=f"{plugin.name} alone: toolang-core and this plugin only",
                deps=PythonDeps(f"-e {ROOT}[testing]\n-e {plugin}[test]", root=ROOT),
                commands=[Command(["pytest", str(plugin / "tests"), *(pos_args or ["-q"])])],
                change_dir=plugin,
                labels=["plugins"],
            )
        )
    every = "\n".join(f"-e {p}[test]" for p in plugin_dirs())
    # mypy checks every plugin package against its real dependencies' types.
    state.conf.memory_seed_loaders["lint"].append(
        MemoryLoader(deps=PythonDeps(f"-e {ROOT}[lint]\n{every}", root=ROOT))
    )
    state.conf.memory_seed_loaders["integration"].append(
        MemoryLoader(
            deps=PythonDeps(f"-e {ROOT}[test]\nhatchling>=1.25\n{every}", root=ROOT),
            commands=[
                Command(
                    [
                        "pytest",
                        str(ROOT / "tests"),
                        *(str(p / "tests") for p in plugin_dirs()),
                        *(pos_args or ["-q"]),
                    ]
                )
            ],
        )
    )
