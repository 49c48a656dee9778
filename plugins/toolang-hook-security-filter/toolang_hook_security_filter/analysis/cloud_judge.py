"""Cloud, cluster, infrastructure and database CLIs: what tears something down.

Everything here is ``approve``: tearing down is sometimes the job, but never unattended.
A rule looks at the subcommand words (not the spelling of flags around them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from toolang_hook_security_filter.analysis.judges import Judges
from toolang_hook_security_filter.analysis.verdicts import Finding, approve, block

_KUBE_WIDE: Final = frozenset(
    [
        "namespace",
        "namespaces",
        "ns",
        "node",
        "nodes",
        "pv",
        "pvc",
        "persistentvolume",
        "persistentvolumeclaim",
        "crd",
        "crds",
        "customresourcedefinition",
        "clusterrole",
        "clusterrolebinding",
        "all",
        "storageclass",
    ]
)
_DESTROY_VERBS: Final = re.compile(
    r"^(delete|destroy|terminate|remove|rb|purge|deregister|drop)([-_:].*)?$"
)
SQL_CLIENTS: Final = {
    "psql": ("-c", "--command"), "mysql": ("-e", "--execute"), "mariadb": ("-e", "--execute"),
    "sqlite3": (), "clickhouse-client": ("-q", "--query"), "cockroach": ("-e", "--execute"),
    "sqlcmd": ("-q", "-Q"), "duckdb": ("-c",),
}  # fmt: skip


PROGRAMS: Final = frozenset(
    [
        "terraform",
        "tofu",
        "terragrunt",
        "pulumi",
        "cdk",
        "serverless",
        "sls",
        "kubectl",
        "oc",
        "k3s",
        "helm",
        "aws",
        "awslocal",
        "gcloud",
        "az",
        "doctl",
        "eksctl",
        "linode-cli",
        "hcloud",
        "scw",
        "ibmcloud",
        "oci",
        "gsutil",
        "heroku",
        "flyctl",
        "fly",
        "vercel",
        "netlify",
        "railway",
        "gh",
        "docker",
        "podman",
        "dropdb",
        "dropuser",
        "mysqladmin",
        "redis-cli",
        "valkey-cli",
        "keydb-cli",
        "mongo",
        "mongosh",
        "psql",
        "mysql",
        "mariadb",
        "sqlite3",
        "clickhouse-client",
        "cockroach",
        "sqlcmd",
        "duckdb",
        "git",
        "ssh",
        "scp",
        "curl",
        "wget",
        "nc",
        "ncat",
        "socat",
        "dig",
        "nslookup",
        "host",
        "ping",
    ]
)
"""Programs this module or the shell rules know: a string starting with one is a command."""


def _words(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


Handler = Callable[[str, list[str], list[str], Judges], Finding | None]
"""A CLI's rule: ``(program, words, args, judges)``; ``words`` are the non-option
``args``."""


def judge(prog: str, args: list[str], judges: Judges) -> Finding | None:
    """The finding about the CLI call ``prog args`` (:data:`HANDLERS`), or ``None``."""
    handler = HANDLERS.get(prog)
    return handler(prog, _words(args), args, judges) if handler is not None else None


def _infrastructure(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    verb = words[0] if words else ""
    if (
        verb == "destroy"
        or (verb == "apply" and "-destroy" in args)
        or verb == "remove"
        or (verb == "run-all" and "destroy" in words)
    ):
        return approve("cloud-teardown", f"{prog} destroys the infrastructure it manages")
    return None


def _helm(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    if words[:1] in (["uninstall"], ["delete"], ["del"]):
        return approve("cloud-teardown", "uninstalls a Helm release")
    return None


def _cloud(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    if any(_DESTROY_VERBS.match(w) for w in words):
        return approve("cloud-teardown", f"{prog} deletes cloud resources")
    return None


def _gsutil(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    if words[:1] == ["rb"] or (words[:1] == ["rm"] and any(a in ("-r", "-R", "-rf") for a in args)):
        return approve("cloud-teardown", "deletes a bucket or its whole contents")
    return None


def _platform(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    if any(re.search(r"destroy|delete|remove|^rm$", w) for w in words[:3]):
        return approve("cloud-teardown", f"{prog} destroys an app")
    return None


def _gh(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    if words[:2] in (["repo", "delete"], ["release", "delete"]):
        return approve("cloud-teardown", "deletes a GitHub repository or release")
    return None


def _drop_tool(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    return approve("destructive-sql", f"{prog} drops a database or role")


def _mysqladmin(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    if "drop" in words:
        return approve("destructive-sql", "drops a database")
    return None


def _redis(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    if any(w.upper() in ("FLUSHALL", "FLUSHDB") for w in words):
        return approve("destructive-sql", "empties a Redis database")
    return None


def _mongo(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    for index, arg in enumerate(args):
        if arg == "--eval" and index + 1 < len(args):
            return judges.nosql(args[index + 1])
    return None


def _kubectl(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    if not words:
        return None
    verb = words[0]
    every = any(a in ("--all", "-A", "--all-namespaces") for a in args)
    if verb == "delete":
        kinds = {k.split("/")[0].split(".")[0] for w in words[1:2] for k in w.split(",")}
        if kinds & _KUBE_WIDE or every:
            return approve(
                "cloud-teardown", f"deletes cluster-wide resources ({', '.join(sorted(kinds))})"
            )
        return None
    if verb in ("drain", "cordon") and verb == "drain":
        return approve("cloud-teardown", "drains a node")
    if verb == "scale" and every and any(a in ("--replicas=0",) for a in args):
        return approve("cloud-teardown", "scales every deployment to zero")
    if verb in ("run", "apply", "create", "debug") and re.search(
        r'"?(privileged|hostPID|hostNetwork|hostIPC)"?\s*:\s*true|hostPath', " ".join(args)
    ):
        return block("container-escape", "starts a pod with host privileges")
    return None


def _aws(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    if len(words) < 2:
        return None
    service, verb = words[0], words[1]
    if service == "s3":
        if verb == "rb" or (verb == "rm" and "--recursive" in args):
            return approve("cloud-teardown", "deletes an S3 bucket or its whole contents")
        return None
    if _DESTROY_VERBS.match(verb) or verb.startswith(
        ("delete-", "terminate-", "remove-", "deregister-")
    ):
        return approve("cloud-teardown", f"aws {service} {verb}")
    return None


def _docker(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    if words[:2] == ["system", "prune"] and ("--volumes" in args or "-a" in args):
        return approve("cloud-teardown", "deletes every unused image, container and volume")
    if words[:1] == ["volume"] and words[1:2] in (["rm"], ["prune"]):
        return approve("data-dir-delete", "deletes Docker volumes (their data)")
    return None


def _sql_client(prog: str, words: list[str], args: list[str], judges: Judges) -> Finding | None:
    flags = SQL_CLIENTS[prog]
    for index, arg in enumerate(args):
        if arg in flags and index + 1 < len(args):
            return judges.sql(args[index + 1])
        for flag in flags:
            if flag.startswith("--") and arg.startswith(flag + "="):
                return judges.sql(arg.split("=", 1)[1])
    if prog in ("sqlite3", "duckdb"):
        ops = _words(args)
        if len(ops) >= 2:
            return judges.sql(" ".join(ops[1:]))
    return None


def _each(names: tuple[str, ...], handler: Handler) -> dict[str, Handler]:
    return dict.fromkeys(names, handler)


HANDLERS: Final[dict[str, Handler]] = {
    **_each(
        ("terraform", "tofu", "terragrunt", "pulumi", "cdk", "serverless", "sls"), _infrastructure
    ),
    **_each(("kubectl", "oc", "k3s"), _kubectl),
    "helm": _helm,
    **_each(("aws", "awslocal"), _aws),
    **_each(
        ("gcloud", "az", "doctl", "eksctl", "linode-cli", "hcloud", "scw", "ibmcloud", "oci"),
        _cloud,
    ),
    "gsutil": _gsutil,
    **_each(("heroku", "flyctl", "fly", "vercel", "netlify", "railway"), _platform),
    "gh": _gh,
    **_each(("docker", "podman"), _docker),
    **_each(("dropdb", "dropuser"), _drop_tool),
    "mysqladmin": _mysqladmin,
    **_each(("redis-cli", "valkey-cli", "keydb-cli"), _redis),
    **_each(("mongo", "mongosh"), _mongo),
    **_each(tuple(SQL_CLIENTS), _sql_client),
}
"""Each CLI's rule, by program name."""
