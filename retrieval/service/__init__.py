"""Memories served: an HTTP API over many memories (`api.py`, `registry.py`), one memory as an MCP server
(`mcp_tools.py`), the command (`server.py`) and a Python client (`client.py`)."""
