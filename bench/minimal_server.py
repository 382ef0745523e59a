"""The baseline for the cold-start benchmark: a minimal FastMCP stdio server with one tool."""

from fastmcp import FastMCP

mcp = FastMCP("minimal")


@mcp.tool
def ping() -> str:
    """Answer pong."""
    return "pong"


if __name__ == "__main__":
    mcp.run(transport="stdio", show_banner=False)
