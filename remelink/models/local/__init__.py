"""The local engine (`model: local`, the default): offline, deterministic, no key.

- `engine.py`: `LocalModel`, the `ChatModel` that plays the tool protocol (integration,
  extraction, tagging, topics);
- `protocol.py`: the task, tool calls and results as the engine reads them from the messages;
- `extract.py`: units from the structure of the notes;
- `decide.py`: same_abstraction / related / unrelated; `write.py`: bucket-shaped node bodies;
- `text.py`: the language helpers (cues, sentences, titles, tags); `embed.py`: the optional
  sentence embedder.
"""

from remelink.models.local.engine import LocalModel

__all__ = ["LocalModel"]
