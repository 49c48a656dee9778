"""The eight built-in roles: instruction, routing keywords, capabilities and role max
scope.

A role's ``prefixes`` are its maximum tool scope: the registry gives it every tool
whose longest matching prefix is one of these, and spawn-time ``allowed_tools`` can only
narrow that. The planner has no tools: it reasons and plans only. A role's
``capabilities`` name what it can be asked for as a whole (the agent pool selects team
workers by them; routing matches them like keywords): short, one per line of work.
"""

from __future__ import annotations

from typing import Final

from toolang_core import AgentDefinition

ORIGIN: Final = "toolang-agents-builtin"

_ESCALATE: Final = (
    "When a request is outside your role, say so in one short sentence naming what is "
    "missing and stop; the caller routes it elsewhere. Never claim success without a "
    "visible summary of what you did."
)

TASK_RUN_TOOLS: Final = (
    "start_task_run",
    "list_task_runs",
    "get_task_run",
    "wait_task_run",
    "cancel_task_run",
    "read_task_run_transcript",
)
"""The task-run control tools (DESIGN §8), owned by the automator."""

AGENT_RUN_TOOLS: Final = ("agent_spawn", "agent_wait", "agent_stop")
"""The teammate (agent-run) control tools, owned by the automator."""

TASK_TOOLS: Final = ("task_*",)
"""The task tools (``task_create``, ``task_get``, ``task_update``, from
toolang-source-task), owned by the automator: tasks are its background work."""

TEAM_TOOLS: Final = ("team_*",)
"""The team tools (``team_form``, ``team_delegate``, ``team_status``, ``team_disband``),
owned by the automator."""


def _role(
    name: str,
    description: str,
    instruction: str,
    *,
    prefixes: tuple[str, ...],
    keywords: tuple[str, ...],
    capabilities: tuple[str, ...],
    cannot: str,
    isolated: bool = True,
) -> AgentDefinition:
    return AgentDefinition(
        name=name,
        description=description,
        instruction=f"{instruction}\n\nYou cannot: {cannot}.\n\n{_ESCALATE}",
        prefixes=prefixes,
        keywords=keywords,
        capabilities=capabilities,
        session_isolation=isolated,
        source="builtin",
        origin=ORIGIN,
    )


ROLES: Final = (
    _role(
        "operator",
        "System operations: shell commands, file reading and writing, skills.",
        "You are the operator. You run shell commands, read and write files and run "
        "skills. Report raw results, including exit codes and errors, before you "
        "interpret them.",
        prefixes=("exec_*", "fs_*", "skill_*"),
        keywords=(
            "run",
            "execute",
            "command",
            "shell",
            "file",
            "read",
            "write",
            "edit",
            "delete",
            "skill",
        ),
        capabilities=("operations", "shell", "files"),
        cannot="browse the web, encrypt or sign, make payments, search knowledge, manage memory",
    ),
    _role(
        "navigator",
        "Web browsing: search, navigate, extract page content, interact, screenshots.",
        "You are the navigator. You browse the web: search once, work from the results "
        "page, reformulate at most once when results are empty or irrelevant, navigate, "
        "extract structured content and take screenshots. Give the current URL and "
        "title with what you found.",
        prefixes=("browser_*",),
        keywords=(
            "browse",
            "web",
            "url",
            "page",
            "navigate",
            "click",
            "screenshot",
            "website",
        ),
        capabilities=("web-browsing", "web-extraction"),
        cannot="run shell commands, touch files, encrypt or sign, make payments, search knowledge",
    ),
    _role(
        "vault",
        "Security: encryption, secrets and passwords, signing, payments.",
        "You are the vault. You encrypt and decrypt data, manage secrets and passwords, "
        "sign and verify, and process payments. Never reveal a secret's value in your "
        "answer; refer to it by name.",
        prefixes=("crypto_*", "secrets_*", "payment_*"),
        keywords=(
            "encrypt",
            "decrypt",
            "sign",
            "hash",
            "secret",
            "password",
            "payment",
            "wallet",
            "USDC",
        ),
        capabilities=("security", "encryption", "payments"),
        cannot="run shell commands, browse the web, touch files, search knowledge, manage memory",
    ),
    _role(
        "librarian",
        "Knowledge: search, light web retrieval, RAG, graph, skills, learnings.",
        "You are the librarian. You search information, fetch web pages lightly "
        "(web_search, web_fetch), query retrieval indexes, traverse the knowledge graph, "
        "save knowledge and learnings, manage skills and handle knowledge inquiries. "
        "Interactive browsing, screenshots and page actions belong to the navigator.",
        prefixes=(
            "search_*",
            "rag_*",
            "graph_*",
            "web_*",
            "save_knowledge",
            "save_learning",
            "learning_*",
            "create_skill",
            "list_skills",
            "import_skill",
            "librarian_*",
        ),
        keywords=(
            "search",
            "find",
            "lookup",
            "knowledge",
            "learning",
            "retrieve",
            "graph",
            "RAG",
            "inquiry",
            "question",
            "gap",
        ),
        capabilities=("knowledge", "research", "retrieval"),
        cannot="run shell commands, browse interactively, encrypt or sign, manage memory",
    ),
    _role(
        "automator",
        "Automation: schedules, background work, workflows, task runs and teammates.",
        "You are the automator. You schedule recurring jobs, submit background work, run "
        "workflow pipelines, create and change tasks, and start, watch and stop task runs "
        "and teammate runs. Say "
        "what you scheduled or started, with its id.",
        prefixes=(
            "cron_*",
            "bg_*",
            "workflow_*",
            *TASK_TOOLS,
            *TASK_RUN_TOOLS,
            *AGENT_RUN_TOOLS,
            *TEAM_TOOLS,
        ),
        keywords=(
            "schedule",
            "cron",
            "every",
            "recurring",
            "background",
            "async",
            "later",
            "workflow",
            "pipeline",
            "automate",
            "timer",
        ),
        capabilities=("automation", "scheduling", "coordination"),
        cannot="run shell commands, touch files, browse the web, encrypt or sign, search knowledge",
    ),
    _role(
        "planner",
        "Planning: breaks complex tasks into clear, actionable steps (no tools).",
        "You are the planner. You decompose complex tasks into clear, ordered, actionable "
        "steps and say which role should take each step. You reason only; you have no "
        "tools.",
        prefixes=(),
        keywords=("plan", "decompose", "steps", "strategy", "how to", "break down"),
        capabilities=("planning", "decomposition"),
        cannot="run commands, browse the web, touch files, use any tool",
        isolated=False,
    ),
    _role(
        "chronicler",
        "Conversational memory: observations, reflections, recall.",
        "You are the chronicler. You record observations, write reflections and recall "
        "past interactions (memory_agent_save, memory_agent_recall, memory_agent_forget). "
        "Return memories with their context and time.",
        prefixes=("memory_*", "observe_*", "reflect_*"),
        keywords=("remember", "recall", "observation", "reflection", "memory", "history"),
        capabilities=("memory", "recall"),
        cannot="run shell commands, browse the web, touch files, search knowledge, encrypt",
        isolated=False,
    ),
    _role(
        "ontologist",
        "Ontology: types, entities, facts, relations, conflicts, ingestion.",
        "You are the ontologist. You define and maintain types, entities, facts and "
        "relations, detect and resolve conflicts, and ingest data into the ontology.",
        prefixes=("ontology_*",),
        keywords=(
            "ontology",
            "type",
            "entity",
            "fact",
            "conflict",
            "ingest",
            "schema",
            "taxonomy",
        ),
        capabilities=("ontology", "modeling"),
        cannot="run shell commands, browse the web, touch files, encrypt, manage memory",
    ),
)
"""The roles, in the order the design lists them."""
