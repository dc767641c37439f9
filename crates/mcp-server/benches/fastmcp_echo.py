"""A Python FastMCP (MCP Python SDK 1.x) server with one echo tool, for the throughput benchmark.

Usage: python fastmcp_echo.py PORT
"""

import sys

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("switchboard-bench-echo", host="127.0.0.1", port=int(sys.argv[1]), log_level="WARNING")


@mcp.tool()
def echo(message: str) -> str:
    """Returns the message."""
    return message


if __name__ == "__main__":
    mcp.run(transport="streamable-http")
