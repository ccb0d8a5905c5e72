"""Model backends behind the `ChatModel` seam, chosen by a model spec:

- `local` (default): the built-in offline engine (`remelink.models.local`).
- `scripted:FILE`: the strict scripted model (tests, reproducible demos).
- anything else: a litellm model id (`openai/gpt-4.1-mini`, `ollama_chat/qwen3`, ...).
"""

from __future__ import annotations

from pathlib import Path

from remelink.config import Settings
from remelink.models.base import ChatModel


def make_model(settings: Settings, spec: str | None = None, *,
               vault: Path | None = None) -> ChatModel:
    spec = (spec or settings.model).strip()
    if spec == "local":
        from remelink.models.local import LocalModel

        return LocalModel(settings)
    if spec.startswith("scripted:"):
        from remelink.models.scripted import ScriptedModel

        name = spec.split(":", 1)[1]
        if settings.script_in_vault and spec == settings.model:
            if vault is None:
                from remelink.errors import UsageError

                raise UsageError(f"{spec}: a script named by config.yaml needs the vault")
            return ScriptedModel.from_file(vault / name, vault=vault)
        return ScriptedModel.from_file(Path(name).expanduser())
    from remelink.models.litellm_model import LiteLLMModel

    return LiteLLMModel(spec, settings)
