"""The tools that ask the owner and wait: ``ask_decision``, ``wait_decision``,
``cancel_decision``, ``check_pending``, and ``approve`` (Claude Code's permission prompt, asked
as an approval card).

Their signatures are the public contract (``tests/data/contract/tools.json``); the work is in
:mod:`discord_mcp.decisions` and :mod:`discord_mcp.approvals`, imported on first call so the MCP
handshake stays fast. Every text they post passes the outbound checks
(:mod:`discord_mcp.outbound`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from discord_mcp.server import results
from discord_mcp.server.chat_tools import FILES_HELP
from discord_mcp.server.toolkit import Registry, Toolkit

if TYPE_CHECKING:
    from discord_mcp.decisions.model import Decision


def register(server: Registry, kit: Toolkit) -> None:
    """Add the decision tools to ``server``."""
    settings, runtime = kit.settings, kit.runtime

    async def ask_decision(
        question: Annotated[
            str, Field(description="The decision you need, as one clear question.")
        ],
        context: Annotated[
            str | None,
            Field(
                description="What you are doing and why it matters: the owner reads this on a "
                "phone, so keep it short."
            ),
        ] = None,
        options: Annotated[
            list[str] | None,
            Field(
                description="Up to 25 short, distinct choices (the owner picks one by letter, "
                "number, reaction or click). Omit for a free-text answer.",
                max_length=25,
            ),
        ] = None,
        thread_id: Annotated[
            str | None,
            Field(description="Ask in this existing Discord thread instead of a new one."),
        ] = None,
        timeout_seconds: Annotated[
            float | None,
            Field(
                description="Give up after this many seconds (status 'expired'). Omit to "
                "wait until answered; waiting is safe and costs nothing.",
                gt=0,
            ),
        ] = None,
        on_timeout: Annotated[
            str | None,
            Field(description="What you will do if it expires; shown to the owner."),
        ] = None,
        mention: Annotated[bool, Field(description="Ping the owner (their phone buzzes).")] = True,
        files: Annotated[list[str] | None, Field(description=FILES_HELP, max_length=10)] = None,
        urgent: Annotated[
            bool,
            Field(
                description="It cannot wait for the morning: reminders of an unanswered "
                "question then ignore the owner's quiet hours."
            ),
        ] = False,
    ) -> dict[str, Any]:
        """Ask your owner a question in Discord and wait for the answer.

        Returns when the owner answers, or with status "pending" before your client's time
        limit. On "pending", call wait_decision with the decision_id; never proceed on a pending
        decision or guess its answer. Asking the same question again while it is pending
        returns the existing decision. Statuses: answered (see answer / selected_option /
        selected_index), pending, cancelled, expired.
        """
        from discord_mcp.chat.messages import post_question_files
        from discord_mcp.decisions.questions import Question
        from discord_mcp.outbound.guard import Scrubber

        with kit.errors():
            scrub = Scrubber(settings)  # secrets out of every posted text; files checked first
            prepared = await scrub.files(settings, files)
            decision, created = await runtime().service.ask(
                Question(
                    question=scrub.text("question", question),
                    context=scrub.optional("context", context),
                    options=tuple(scrub.texts("options", options) or ()),
                    thread_id=thread_id,
                    timeout_seconds=timeout_seconds,
                    on_timeout=scrub.optional("on_timeout", on_timeout),
                    mention=mention,
                    session=kit.label(),
                    urgent=urgent,
                    project=await kit.project(),
                )
            )
            posted = created and await post_question_files(
                runtime().rest, decision.thread_id, prepared
            )
            runtime().asked(decision.id)
            decision = await kit.waited(decision.id, kit.block_bound(None))
            result = await runtime().decision_result(decision, duplicate=not created)
            return kit.reported(scrub.noted({**result, **(posted or {})}))

    async def wait_decision(
        decision_id: Annotated[str, Field(description="The id ask_decision returned.")],
        max_wait_seconds: Annotated[
            float | None,
            Field(description="Wait at most this long (capped below your client's limit).", ge=0),
        ] = None,
    ) -> dict[str, Any]:
        """Keep waiting for the owner's answer to a decision asked earlier.

        Returns the same result as ask_decision. If the status is still "pending", call
        wait_decision again (you may do unrelated work in between); do not proceed on it.
        """
        with kit.errors():
            decision = await kit.waited(decision_id.strip(), kit.block_bound(max_wait_seconds))
            return kit.reported(await runtime().decision_result(decision))

    async def cancel_decision(
        decision_id: Annotated[str, Field(description="The decision to withdraw.")],
        reason: Annotated[
            str | None, Field(description="Why it is no longer needed; shown to the owner.")
        ] = None,
    ) -> dict[str, Any]:
        """Withdraw a question you no longer need answered.

        The card in Discord says it was withdrawn, and waiting calls return "cancelled". A
        decision that was already answered stays answered (the result says so).
        """
        from discord_mcp.outbound.guard import Scrubber

        with kit.errors():
            service, scrub = runtime().service, Scrubber(settings)
            decision = await service.cancel(
                decision_id.strip(), scrub.optional("reason", reason), caller=kit.caller()
            )
            result = await runtime().decision_result(await kit.handed_over(decision))
            return kit.reported(scrub.noted(result))

    async def approve(
        tool_name: Annotated[str, Field(description="The tool that asks for permission.")],
        input: Annotated[dict[str, Any], Field(description="The tool's input.")],
        tool_use_id: Annotated[str | None, Field(description="The tool call's id.")] = None,
    ) -> str:
        """Claude Code's permission prompt (--permission-prompt-tool mcp__discord__approve).

        The owner answers on an approval card in Discord (Allow once / Allow for this session /
        Deny / Deny with a note…). Returns one JSON text block: {"behavior": "allow",
        "updatedInput": ...} or {"behavior": "deny", "message": ...}.
        """
        from discord_mcp.approvals.prompt_tool import answer_prompt

        call = kit.current()

        async def keep_alive(elapsed: float, decision: Decision) -> None:
            await call.report_progress(progress=round(elapsed, 1), message="waiting for approval")

        with kit.errors():
            return await answer_prompt(
                runtime().approvals,
                tool_name=tool_name,
                tool_input=input,
                tool_use_id=tool_use_id,
                environ=kit.env,
                label=kit.label(),
                wait_seconds=settings.approval_wait_seconds,
                progress=keep_alive,
            )

    async def check_pending() -> dict[str, Any]:
        """List this project's open decisions, and answers that arrived while you were away.

        Call it at the start of a session. Answers listed under answered_while_away are final:
        act on them. For each pending decision you still need, call wait_decision.
        """
        with kit.errors():
            service = runtime().service
            await service.recover()
            pending, away = [], []
            for decision in await service.store.aopen_decisions():
                if not settings.owns(decision) or decision.kind != "question":
                    continue
                if decision.status == "pending":
                    pending.append(results.pending_summary(decision))
                elif (
                    taken := await service.deliver_if_away(
                        decision, until_sent=kit.wire is not None
                    )
                ) is not None:
                    # Only answers whose asking session is gone and that nobody waits on:
                    # an answer reaches exactly one session (marked once it has left).
                    handed = await kit.handed_over(taken)
                    away.append(await runtime().decision_result(handed, away=True))
            return kit.reported(
                {"project": settings.project_name, "pending": pending, "answered_while_away": away}
            )

    server.add(ask_decision, "sends")
    server.add(wait_decision, "waits")
    server.add(cancel_decision, "sends")
    server.add(approve, "sends", text_result=True)
    server.add(check_pending, "sends")
