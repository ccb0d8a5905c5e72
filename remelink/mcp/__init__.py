"""The memory as a Model Context Protocol server over stdio (SPEC §5.2).

`remelink.mcp.tools` does the work without the SDK; `remelink.mcp.server` is the only module
that imports the `mcp` package (the optional extra `remelink[mcp]`), and only when it runs.
"""
