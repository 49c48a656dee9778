"""toolang: a plugin-host agent runtime.

Plugins import what they need from here; everything else in ``toolang_core`` is
internal. Importing this package is cheap: the markers load eagerly, everything else
on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from toolang_core.attrs_code import install as _cache_attrs_code
from toolang_core.lazy_imports import defer_all as _defer_all
from toolang_core.regex_code import install as _keep_regex_code

_keep_regex_code()  # before the modules that compile expressions as they load
from toolang_core.markers import hookimpl, hookspec  # noqa: E402 - after the line above

_defer_all()  # before anything imports sqlite-utils (see toolang_core.lazy_imports)
_cache_attrs_code()  # before anything makes an attrs class (see toolang_core.attrs_code)

if TYPE_CHECKING:
    from toolang_core.agents.agentmd import (
        parse_agent_md as parse_agent_md,
    )
    from toolang_core.agents.partition import (
        PatternError as PatternError,
        ToolAssignment as ToolAssignment,
        ToolScopeError as ToolScopeError,
        assign_tools as assign_tools,
        narrow_tools as narrow_tools,
    )
    from toolang_core.agents.pool import (
        AgentPool as AgentPool,
        NoRecordsYet as NoRecordsYet,
        PoolHooks as PoolHooks,
        PoolNotInstalled as PoolNotInstalled,
        PoolRecords as PoolRecords,
    )
    from toolang_core.agents.pool_types import (
        AgentStats as AgentStats,
        Exclusion as Exclusion,
        PaymentTerms as PaymentTerms,
        PoolHealth as PoolHealth,
        PoolMember as PoolMember,
        Selection as Selection,
    )
    from toolang_core.agents.routing import (
        RouteProposal as RouteProposal,
    )
    from toolang_core.agents.types import (
        AgentDefinition as AgentDefinition,
        AgentDiagnostic as AgentDiagnostic,
        AgentHealth as AgentHealth,
        AgentLoad as AgentLoad,
        AgentSource as AgentSource,
    )
    from toolang_core.attachments import (
        Attachment as Attachment,
        AttachmentError as AttachmentError,
        AttachmentNotFound as AttachmentNotFound,
        AttachmentRef as AttachmentRef,
        AttachmentStore as AttachmentStore,
        attachment_refs as attachment_refs,
        attachment_refusal as attachment_refusal,
        with_attachments as with_attachments,
    )
    from toolang_core.config.loader import (
        find_config as find_config,
        load_config as load_config,
    )
    from toolang_core.config.model import (
        ToolangConfig as ToolangConfig,
    )
    from toolang_core.config.settings import (
        plugin_settings as plugin_settings,
    )
    from toolang_core.config.types import (
        EnvStr as EnvStr,
        Secret as Secret,
    )
    from toolang_core.credential import (
        CredentialError as CredentialError,
        cli_principal as cli_principal,
        read_credential as read_credential,
    )
    from toolang_core.doctor.check import (
        DoctorCheck as DoctorCheck,
    )
    from toolang_core.errors import (
        ConfigError as ConfigError,
        ModelAuthError as ModelAuthError,
        ModelConnectionError as ModelConnectionError,
        ModelError as ModelError,
        ModelNotFound as ModelNotFound,
        ModelOverloaded as ModelOverloaded,
        ModelRateLimited as ModelRateLimited,
        ModelRefused as ModelRefused,
        ModelServerError as ModelServerError,
        ModelTimeout as ModelTimeout,
        PluginError as PluginError,
        ToolangError as ToolangError,
        UsageError as UsageError,
        describe_exception as describe_exception,
    )
    from toolang_core.evals.results import (
        EvalRun as EvalRun,
        EvalRunNotFound as EvalRunNotFound,
        list_eval_runs as list_eval_runs,
        load_eval_run as load_eval_run,
    )
    from toolang_core.evals.types import (
        EvalCase as EvalCase,
        EvalContext as EvalContext,
        Evaluator as Evaluator,
        EvaluatorUse as EvaluatorUse,
        Observed as Observed,
        RecordedTurn as RecordedTurn,
        RegisterEvaluator as RegisterEvaluator,
        ToolCallSeen as ToolCallSeen,
        Verdict as Verdict,
    )
    from toolang_core.events import (
        Event as Event,
    )
    from toolang_core.execution.seam import (
        StageDone as StageDone,
    )
    from toolang_core.history import (
        Forked as Forked,
        RecordedCall as RecordedCall,
        ReplayedCall as ReplayedCall,
        ReplayPlan as ReplayPlan,
        ReplayReport as ReplayReport,
        check_agent_and_model as check_agent_and_model,
        fork_thread as fork_thread,
        plan_replay as plan_replay,
        replay_report as replay_report,
        replay_turn as replay_turn,
        submit_replay as submit_replay,
    )
    from toolang_core.hookspecs import (
        FAMILIES as FAMILIES,
    )
    from toolang_core.hookspecs.rules import (
        HookFailure as HookFailure,
    )
    from toolang_core.ids import (
        new_id as new_id,
    )
    from toolang_core.kept import (
        KeptFiles as KeptFiles,
        after_import as after_import,
    )
    from toolang_core.plugins.context import (
        PluginContext as PluginContext,
    )
    from toolang_core.plugins.host import (
        PluginHost as PluginHost,
    )
    from toolang_core.plugins.live_tools import (
        OfferClosed as OfferClosed,
        ToolClash as ToolClash,
    )
    from toolang_core.plugins.registrars import (
        RegisterFactory as RegisterFactory,
        RegisterRoute as RegisterRoute,
        RegisterSettings as RegisterSettings,
        RegisterTool as RegisterTool,
        RegisterTurnSource as RegisterTurnSource,
    )
    from toolang_core.plugins.routes import (
        HttpError as HttpError,
        RouteRegistration as RouteRegistration,
    )
    from toolang_core.questions.answers import (
        AnswerRefused as AnswerRefused,
    )
    from toolang_core.questions.book import (
        Question as Question,
        QuestionBook as QuestionBook,
        QuestionError as QuestionError,
    )
    from toolang_core.redaction import (
        MASK as MASK,
        RedactionPolicy as RedactionPolicy,
        is_secret_key as is_secret_key,
        redact as redact,
        redact_text as redact_text,
    )
    from toolang_core.redaction_stream import (
        StreamMasker as StreamMasker,
    )
    from toolang_core.regex_code import (
        regex_engine_code as regex_engine_code,
        regex_from_engine_code as regex_from_engine_code,
    )
    from toolang_core.runtime import (
        Runtime as Runtime,
    )
    from toolang_core.runtime.after_turn import (
        AFTER_KIND as AFTER_KIND,
        AFTER_STAGES as AFTER_STAGES,
        PROMPT_TRACE_KIND as PROMPT_TRACE_KIND,
    )
    from toolang_core.runtime.inbox import (
        Inbox as Inbox,
    )
    from toolang_core.runtime.oneshot import (
        await_turn as await_turn,
        give_up_turn as give_up_turn,
    )
    from toolang_core.runtime.recurring import (
        Recurring as Recurring,
    )
    from toolang_core.runtime_view import (
        RuntimeView as RuntimeView,
    )
    from toolang_core.sandbox.beneath import (
        OutsideRoot as OutsideRoot,
        files_beneath as files_beneath,
        open_beneath as open_beneath,
        regular_file as regular_file,
        relative_name as relative_name,
    )
    from toolang_core.sandbox.hidden_files import (
        hide_from_tools as hide_from_tools,
    )
    from toolang_core.sandbox.launch import (
        sandbox_argv as sandbox_argv,
    )
    from toolang_core.sandbox.policy import (
        SandboxError as SandboxError,
        tool_workdir as tool_workdir,
    )
    from toolang_core.sandbox.support import (
        sandbox_warning as sandbox_warning,
    )
    from toolang_core.schedule import (
        Schedule as Schedule,
        ScheduleError as ScheduleError,
    )
    from toolang_core.spend import (
        BUDGET_EXCEEDED as BUDGET_EXCEEDED,
        USAGE_LIMIT as USAGE_LIMIT,
        SpendBudget as SpendBudget,
        check_request_limits as check_request_limits,
        day_start as day_start,
    )
    from toolang_core.store.batch import (
        BatchWriter as BatchWriter,
    )
    from toolang_core.store.errors import (
        NotThreadOwner as NotThreadOwner,
        StoreBusy as StoreBusy,
        StoreCorrupt as StoreCorrupt,
        StoreError as StoreError,
        StoreMissing as StoreMissing,
        StoreNeedsMigration as StoreNeedsMigration,
        StoreSchemaTooNew as StoreSchemaTooNew,
        SubmitRejected as SubmitRejected,
        TurnNotFound as TurnNotFound,
    )
    from toolang_core.store.owners import (
        check_thread as check_thread,
        is_own as is_own,
        may_see as may_see,
        sees_every_owner as sees_every_owner,
        threads_seen_by as threads_seen_by,
    )
    from toolang_core.store.plugin_db import (
        PluginCheckpointer as PluginCheckpointer,
        open_plugin_database as open_plugin_database,
    )
    from toolang_core.store.plugin_tables import (
        Dialect as Dialect,
        PluginDatabase as PluginDatabase,
        PluginDatabases as PluginDatabases,
        PluginMigrations as PluginMigrations,
    )
    from toolang_core.store.protocol import (
        ExecutionStore as ExecutionStore,
    )
    from toolang_core.store.types import (
        GroupPolicy as GroupPolicy,
        NewTurnRequest as NewTurnRequest,
        Record as Record,
        StepRecord as StepRecord,
        TurnFilter as TurnFilter,
        TurnRequest as TurnRequest,
        TurnStatus as TurnStatus,
    )
    from toolang_core.store.usage import (
        Usage as Usage,
        UsageFilter as UsageFilter,
    )
    from toolang_core.taskruns.controller import (
        TaskRunController as TaskRunController,
    )
    from toolang_core.taskruns.spawning import (
        check_fan_out as check_fan_out,
        check_nesting as check_nesting,
        controller_of as controller_of,
        current_turn as current_turn,
        spawn_task_run as spawn_task_run,
        wait_budget as wait_budget,
    )
    from toolang_core.taskruns.types import (
        ApprovalWait as ApprovalWait,
        SpawnRequest as SpawnRequest,
        TaskRun as TaskRun,
        TaskRunError as TaskRunError,
        TaskRunExists as TaskRunExists,
        TaskRunFilter as TaskRunFilter,
        TaskRunNotFound as TaskRunNotFound,
        TaskRunProgress as TaskRunProgress,
        TaskRunStatus as TaskRunStatus,
        TaskRunTranscript as TaskRunTranscript,
        TranscriptEvent as TranscriptEvent,
    )
    from toolang_core.tools.approval_seal import (
        ApprovalKey as ApprovalKey,
        ApprovalKeyError as ApprovalKeyError,
        ApprovalKeyFile as ApprovalKeyFile,
    )
    from toolang_core.tools.approvals import (
        Approval as Approval,
        ApprovalBook as ApprovalBook,
        ApprovalError as ApprovalError,
        canonical_params as canonical_params,
        params_hash as params_hash,
    )
    from toolang_core.tools.context import (
        ToolContextError as ToolContextError,
        tool_owner as tool_owner,
        tool_runtime as tool_runtime,
    )
    from toolang_core.tools.open_process import (
        OpenToolProcess as OpenToolProcess,
        open_tool_process as open_tool_process,
    )
    from toolang_core.tools.process import (
        DEFAULT_ENV_ALLOW as DEFAULT_ENV_ALLOW,
        TOOL_CALL_ENV as TOOL_CALL_ENV,
        ToolProcessResult as ToolProcessResult,
        run_tool_process as run_tool_process,
        started_by_tool as started_by_tool,
        tool_process_env as tool_process_env,
    )
    from toolang_core.tools.types import (
        AskApproval as AskApproval,
        Block as Block,
        Denied as Denied,
        Granted as Granted,
        Modify as Modify,
        Observe as Observe,
        Pending as Pending,
        Refusal as Refusal,
        Tool as Tool,
        ToolCall as ToolCall,
        ToolCallContext as ToolCallContext,
        ToolFile as ToolFile,
        ToolOutput as ToolOutput,
        ToolResult as ToolResult,
    )
    from toolang_core.tools.validate import (
        SchemaError as SchemaError,
        check_schema as check_schema,
        read_schema_file as read_schema_file,
    )
    from toolang_core.tracecontext import (
        TRACE_CONTEXT_META as TRACE_CONTEXT_META,
        trace_context_meta as trace_context_meta,
        trace_context_of as trace_context_of,
    )
    from toolang_core.turn.attachments import (
        check_attachments_accepted as check_attachments_accepted,
    )
    from toolang_core.turn.guards import (
        GuardContext as GuardContext,
        Refuse as Refuse,
        RewriteAnswer as RewriteAnswer,
        RewritePrompt as RewritePrompt,
    )
    from toolang_core.turn.output import (
        OUTPUT_SCHEMA as OUTPUT_SCHEMA,
        is_typed as is_typed,
        output_value as output_value,
    )
    from toolang_core.turn.signals import (
        Follow as Follow,
        TurnSignal as TurnSignal,
        TurnSignalBus as TurnSignalBus,
        TurnSignals as TurnSignals,
    )
    from toolang_core.turn.streaming import (
        TextDelta as TextDelta,
        TurnStreams as TurnStreams,
    )

__version__ = "0.2.0"

_LAZY = {
    "parse_agent_md": "toolang_core.agents.agentmd",
    "PatternError": "toolang_core.agents.partition",
    "ToolAssignment": "toolang_core.agents.partition",
    "ToolScopeError": "toolang_core.agents.partition",
    "assign_tools": "toolang_core.agents.partition",
    "narrow_tools": "toolang_core.agents.partition",
    "AgentPool": "toolang_core.agents.pool",
    "NoRecordsYet": "toolang_core.agents.pool",
    "PoolHooks": "toolang_core.agents.pool",
    "PoolNotInstalled": "toolang_core.agents.pool",
    "PoolRecords": "toolang_core.agents.pool",
    "AgentStats": "toolang_core.agents.pool_types",
    "Exclusion": "toolang_core.agents.pool_types",
    "PaymentTerms": "toolang_core.agents.pool_types",
    "PoolHealth": "toolang_core.agents.pool_types",
    "PoolMember": "toolang_core.agents.pool_types",
    "Selection": "toolang_core.agents.pool_types",
    "RouteProposal": "toolang_core.agents.routing",
    "AgentDefinition": "toolang_core.agents.types",
    "AgentDiagnostic": "toolang_core.agents.types",
    "AgentHealth": "toolang_core.agents.types",
    "AgentLoad": "toolang_core.agents.types",
    "AgentSource": "toolang_core.agents.types",
    "Attachment": "toolang_core.attachments",
    "AttachmentError": "toolang_core.attachments",
    "AttachmentNotFound": "toolang_core.attachments",
    "AttachmentRef": "toolang_core.attachments",
    "AttachmentStore": "toolang_core.attachments",
    "attachment_refs": "toolang_core.attachments",
    "attachment_refusal": "toolang_core.attachments",
    "with_attachments": "toolang_core.attachments",
    "ToolangConfig": "toolang_core.config.model",
    "plugin_settings": "toolang_core.config.settings",
    "EnvStr": "toolang_core.config.types",
    "Secret": "toolang_core.config.types",
    "find_config": "toolang_core.config.loader",
    "load_config": "toolang_core.config.loader",
    "CredentialError": "toolang_core.credential",
    "cli_principal": "toolang_core.credential",
    "read_credential": "toolang_core.credential",
    "DoctorCheck": "toolang_core.doctor.check",
    "ConfigError": "toolang_core.errors",
    "ModelAuthError": "toolang_core.errors",
    "ModelConnectionError": "toolang_core.errors",
    "ModelError": "toolang_core.errors",
    "ModelNotFound": "toolang_core.errors",
    "ModelOverloaded": "toolang_core.errors",
    "ModelRateLimited": "toolang_core.errors",
    "ModelRefused": "toolang_core.errors",
    "ModelServerError": "toolang_core.errors",
    "ModelTimeout": "toolang_core.errors",
    "PluginError": "toolang_core.errors",
    "ToolangError": "toolang_core.errors",
    "UsageError": "toolang_core.errors",
    "describe_exception": "toolang_core.errors",
    "Event": "toolang_core.events",
    "new_id": "toolang_core.ids",
    "FAMILIES": "toolang_core.hookspecs",
    "Forked": "toolang_core.history",
    "RecordedCall": "toolang_core.history",
    "ReplayPlan": "toolang_core.history",
    "ReplayReport": "toolang_core.history",
    "ReplayedCall": "toolang_core.history",
    "check_agent_and_model": "toolang_core.history",
    "fork_thread": "toolang_core.history",
    "plan_replay": "toolang_core.history",
    "replay_report": "toolang_core.history",
    "replay_turn": "toolang_core.history",
    "submit_replay": "toolang_core.history",
    "PluginContext": "toolang_core.plugins.context",
    "HookFailure": "toolang_core.hookspecs.rules",
    "EvalCase": "toolang_core.evals.types",
    "EvalContext": "toolang_core.evals.types",
    "Evaluator": "toolang_core.evals.types",
    "EvaluatorUse": "toolang_core.evals.types",
    "Observed": "toolang_core.evals.types",
    "RecordedTurn": "toolang_core.evals.types",
    "RegisterEvaluator": "toolang_core.evals.types",
    "ToolCallSeen": "toolang_core.evals.types",
    "Verdict": "toolang_core.evals.types",
    "EvalRun": "toolang_core.evals.results",
    "EvalRunNotFound": "toolang_core.evals.results",
    "list_eval_runs": "toolang_core.evals.results",
    "load_eval_run": "toolang_core.evals.results",
    "PluginHost": "toolang_core.plugins.host",
    "OfferClosed": "toolang_core.plugins.live_tools",
    "ToolClash": "toolang_core.plugins.live_tools",
    "ToolOffer": "toolang_core.tools.types",
    "RegisterFactory": "toolang_core.plugins.registrars",
    "RegisterRoute": "toolang_core.plugins.registrars",
    "RegisterSettings": "toolang_core.plugins.registrars",
    "HttpError": "toolang_core.plugins.routes",
    "RouteRegistration": "toolang_core.plugins.routes",
    "RegisterTool": "toolang_core.plugins.registrars",
    "RegisterTurnSource": "toolang_core.plugins.registrars",
    "MASK": "toolang_core.redaction",
    "RedactionPolicy": "toolang_core.redaction",
    "is_secret_key": "toolang_core.redaction",
    "redact": "toolang_core.redaction",
    "redact_text": "toolang_core.redaction",
    "StreamMasker": "toolang_core.redaction_stream",
    "Runtime": "toolang_core.runtime",
    "RuntimeView": "toolang_core.runtime_view",
    "StageDone": "toolang_core.execution.seam",
    "AFTER_KIND": "toolang_core.runtime.after_turn",
    "AFTER_STAGES": "toolang_core.runtime.after_turn",
    "PROMPT_TRACE_KIND": "toolang_core.runtime.after_turn",
    "Inbox": "toolang_core.runtime.inbox",
    "await_turn": "toolang_core.runtime.oneshot",
    "give_up_turn": "toolang_core.runtime.oneshot",
    "Recurring": "toolang_core.runtime.recurring",
    "Schedule": "toolang_core.schedule",
    "ScheduleError": "toolang_core.schedule",
    "BatchWriter": "toolang_core.store.batch",
    "NotThreadOwner": "toolang_core.store.errors",
    "StoreBusy": "toolang_core.store.errors",
    "StoreCorrupt": "toolang_core.store.errors",
    "StoreError": "toolang_core.store.errors",
    "StoreMissing": "toolang_core.store.errors",
    "StoreNeedsMigration": "toolang_core.store.errors",
    "StoreSchemaTooNew": "toolang_core.store.errors",
    "SubmitRejected": "toolang_core.store.errors",
    "TurnNotFound": "toolang_core.store.errors",
    "check_thread": "toolang_core.store.owners",
    "is_own": "toolang_core.store.owners",
    "may_see": "toolang_core.store.owners",
    "sees_every_owner": "toolang_core.store.owners",
    "threads_seen_by": "toolang_core.store.owners",
    "PluginCheckpointer": "toolang_core.store.plugin_db",
    "open_plugin_database": "toolang_core.store.plugin_db",
    "Dialect": "toolang_core.store.plugin_tables",
    "PluginDatabase": "toolang_core.store.plugin_tables",
    "PluginDatabases": "toolang_core.store.plugin_tables",
    "PluginMigrations": "toolang_core.store.plugin_tables",
    "ExecutionStore": "toolang_core.store.protocol",
    "GroupPolicy": "toolang_core.store.types",
    "NewTurnRequest": "toolang_core.store.types",
    "Record": "toolang_core.store.types",
    "StepRecord": "toolang_core.store.types",
    "TurnFilter": "toolang_core.store.types",
    "TurnRequest": "toolang_core.store.types",
    "TurnStatus": "toolang_core.store.types",
    "Usage": "toolang_core.store.usage",
    "UsageFilter": "toolang_core.store.usage",
    "TaskRunController": "toolang_core.taskruns.controller",
    "spawn_task_run": "toolang_core.taskruns.spawning",
    "check_fan_out": "toolang_core.taskruns.spawning",
    "check_nesting": "toolang_core.taskruns.spawning",
    "controller_of": "toolang_core.taskruns.spawning",
    "current_turn": "toolang_core.taskruns.spawning",
    "wait_budget": "toolang_core.taskruns.spawning",
    "ApprovalWait": "toolang_core.taskruns.types",
    "SpawnRequest": "toolang_core.taskruns.types",
    "TaskRun": "toolang_core.taskruns.types",
    "TaskRunError": "toolang_core.taskruns.types",
    "TaskRunExists": "toolang_core.taskruns.types",
    "TaskRunFilter": "toolang_core.taskruns.types",
    "TaskRunNotFound": "toolang_core.taskruns.types",
    "TaskRunProgress": "toolang_core.taskruns.types",
    "TaskRunStatus": "toolang_core.taskruns.types",
    "TaskRunTranscript": "toolang_core.taskruns.types",
    "TranscriptEvent": "toolang_core.taskruns.types",
    "AnswerRefused": "toolang_core.questions.answers",
    "Question": "toolang_core.questions.book",
    "QuestionBook": "toolang_core.questions.book",
    "QuestionError": "toolang_core.questions.book",
    "ApprovalKey": "toolang_core.tools.approval_seal",
    "ApprovalKeyError": "toolang_core.tools.approval_seal",
    "ApprovalKeyFile": "toolang_core.tools.approval_seal",
    "Approval": "toolang_core.tools.approvals",
    "ApprovalBook": "toolang_core.tools.approvals",
    "ApprovalError": "toolang_core.tools.approvals",
    "canonical_params": "toolang_core.tools.approvals",
    "hide_from_tools": "toolang_core.sandbox.hidden_files",
    "OutsideRoot": "toolang_core.sandbox.beneath",
    "files_beneath": "toolang_core.sandbox.beneath",
    "open_beneath": "toolang_core.sandbox.beneath",
    "regular_file": "toolang_core.sandbox.beneath",
    "relative_name": "toolang_core.sandbox.beneath",
    "SandboxError": "toolang_core.sandbox.policy",
    "sandbox_argv": "toolang_core.sandbox.launch",
    "tool_workdir": "toolang_core.sandbox.policy",
    "sandbox_warning": "toolang_core.sandbox.support",
    "params_hash": "toolang_core.tools.approvals",
    "OpenToolProcess": "toolang_core.tools.open_process",
    "open_tool_process": "toolang_core.tools.open_process",
    "DEFAULT_ENV_ALLOW": "toolang_core.tools.process",
    "TOOL_CALL_ENV": "toolang_core.tools.process",
    "ToolProcessResult": "toolang_core.tools.process",
    "run_tool_process": "toolang_core.tools.process",
    "started_by_tool": "toolang_core.tools.process",
    "tool_process_env": "toolang_core.tools.process",
    "AskApproval": "toolang_core.tools.types",
    "Block": "toolang_core.tools.types",
    "Denied": "toolang_core.tools.types",
    "Granted": "toolang_core.tools.types",
    "Modify": "toolang_core.tools.types",
    "Observe": "toolang_core.tools.types",
    "Pending": "toolang_core.tools.types",
    "Refusal": "toolang_core.tools.types",
    "SchemaError": "toolang_core.tools.validate",
    "check_schema": "toolang_core.tools.validate",
    "read_schema_file": "toolang_core.tools.validate",
    "Tool": "toolang_core.tools.types",
    "ToolCall": "toolang_core.tools.types",
    "ToolCallContext": "toolang_core.tools.types",
    "ToolContextError": "toolang_core.tools.context",
    "tool_owner": "toolang_core.tools.context",
    "tool_runtime": "toolang_core.tools.context",
    "ToolFile": "toolang_core.tools.types",
    "ToolOutput": "toolang_core.tools.types",
    "ToolResult": "toolang_core.tools.types",
    "TRACE_CONTEXT_META": "toolang_core.tracecontext",
    "trace_context_meta": "toolang_core.tracecontext",
    "trace_context_of": "toolang_core.tracecontext",
    "GuardContext": "toolang_core.turn.guards",
    "Refuse": "toolang_core.turn.guards",
    "RewriteAnswer": "toolang_core.turn.guards",
    "RewritePrompt": "toolang_core.turn.guards",
    "OUTPUT_SCHEMA": "toolang_core.turn.output",
    "is_typed": "toolang_core.turn.output",
    "output_value": "toolang_core.turn.output",
    "check_attachments_accepted": "toolang_core.turn.attachments",
    "Follow": "toolang_core.turn.signals",
    "TurnSignal": "toolang_core.turn.signals",
    "TurnSignalBus": "toolang_core.turn.signals",
    "TurnSignals": "toolang_core.turn.signals",
    "TextDelta": "toolang_core.turn.streaming",
    "TurnStreams": "toolang_core.turn.streaming",
    "BUDGET_EXCEEDED": "toolang_core.spend",
    "USAGE_LIMIT": "toolang_core.spend",
    "SpendBudget": "toolang_core.spend",
    "check_request_limits": "toolang_core.spend",
    "day_start": "toolang_core.spend",
    "KeptFiles": "toolang_core.kept",
    "after_import": "toolang_core.kept",
    "regex_engine_code": "toolang_core.regex_code",
    "regex_from_engine_code": "toolang_core.regex_code",
}

__all__ = ["__version__", "hookimpl", "hookspec", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolang_core' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
