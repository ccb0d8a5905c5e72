"""remelink: long-term memory as a markdown vault, distilled and auto-linked."""

__version__ = "0.1.0"
