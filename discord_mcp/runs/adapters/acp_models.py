"""An ACP agent's models: what its session offers, and switching among them (issue 34).

Theory. The protocol has two spellings, and the agents we test speak one each:

- session config options (the current protocol, stable since February 2026): ``session/new``
  and ``session/load`` answer ``configOptions``; the select whose ``category`` is ``model``
  lists the models (``options``: ``value``, ``name``) and its ``currentValue``;
  ``session/set_config_option`` ``{sessionId, configId, value}`` switches. Claude's agent
  (0.101) and codex-acp (0.16) offer this.
- the older, unstable ``models`` object ``{availableModels: [{modelId, name}],
  currentModelId}``, switched by ``session/set_model`` ``{sessionId, modelId}``. Gemini CLI
  (0.61, ``gemini --acp``) offers only this.

Config options win when an agent offers both (the protocol says clients should prefer them).
The SDK (agent-client-protocol 0.12) knows only config options and drops ``models`` from its
typed answers, so the answers are read here from the raw JSON. What an agent offers is its
own word: ids and names are shown as they are, and a switch to a model the agent did not
offer is refused before it is asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

SET_MODEL = "session/set_model"
"""The unstable method Gemini CLI 0.61 switches models with (not in the SDK any more)."""


@dataclass(frozen=True)
class AgentModel:
    """One model an agent offers: its id (what a switch names) and its own name for it."""

    model_id: str
    name: str

    def label(self) -> str:
        return (
            self.model_id if self.name in ("", self.model_id) else f"{self.name} ({self.model_id})"
        )


@dataclass(frozen=True)
class ModelMenu:
    """The models a session offers, the current one, and how to switch."""

    models: tuple[AgentModel, ...]
    current: str | None
    how: Literal["config", "set_model"]
    config_id: str = ""

    def offers(self, model_id: str) -> bool:
        return any(m.model_id == model_id for m in self.models)

    def ids(self) -> tuple[str, ...]:
        return tuple(m.model_id for m in self.models)


def menu_of(answer: Any) -> ModelMenu | None:
    """The model menu in a ``session/new`` / ``session/load`` (or ``set_config_option``)
    answer, or None when it offers none. Malformed parts are skipped, never guessed."""
    if not isinstance(answer, Mapping):
        return None
    return _from_config(answer.get("configOptions")) or _from_models(answer.get("models"))


def _from_config(options: Any) -> ModelMenu | None:
    if not isinstance(options, Sequence) or isinstance(options, str):
        return None
    for option in options:
        if not isinstance(option, Mapping) or option.get("category") != "model":
            continue
        if option.get("type") != "select" or not isinstance(option.get("id"), str):
            continue
        models = _models(option.get("options"), "value", "name")
        if not models:
            continue
        current = option.get("currentValue")
        return ModelMenu(
            models=models,
            current=current if isinstance(current, str) else None,
            how="config",
            config_id=str(option["id"]),
        )
    return None


def _from_models(state: Any) -> ModelMenu | None:
    if not isinstance(state, Mapping):
        return None
    models = _models(state.get("availableModels"), "modelId", "name")
    if not models:
        return None
    current = state.get("currentModelId")
    return ModelMenu(
        models=models, current=current if isinstance(current, str) else None, how="set_model"
    )


def _models(entries: Any, id_key: str, name_key: str) -> tuple[AgentModel, ...]:
    if not isinstance(entries, Sequence) or isinstance(entries, str):
        return ()
    found: list[AgentModel] = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        if "options" in entry and isinstance(entry.get("options"), Sequence):  # a group
            found += _models(entry["options"], id_key, name_key)
            continue
        model_id = entry.get(id_key)
        if isinstance(model_id, str) and model_id.strip():
            name = entry.get(name_key)
            found.append(AgentModel(model_id, name if isinstance(name, str) else model_id))
    return tuple(dict.fromkeys(found))


def switch_request(menu: ModelMenu, session_id: str, model_id: str) -> tuple[str, dict[str, Any]]:
    """The method and params that switch ``session_id`` to ``model_id``."""
    if menu.how == "config":
        return "session/set_config_option", {
            "sessionId": session_id,
            "configId": menu.config_id,
            "value": model_id,
        }
    return SET_MODEL, {"sessionId": session_id, "modelId": model_id}
