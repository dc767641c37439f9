"""A gateway client on the official Python SDK (`ClientSession` over Streamable HTTP), driven
by the server's integration test `gateway::sdk_clients`: lists every page of tools, calls
`everything__echo`, lists the resources and reads the first one through the gateway, then
prints what it got as one JSON line.

Usage: python gateway_client.py URL TOKEN MESSAGE
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.types import Implementation


async def main(url: str, token: str, message: str) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with streamablehttp_client(url, headers=headers) as (read, write, _):
        info = Implementation(name="python-sdk-gateway-client", version="1.0.0")
        async with ClientSession(read, write, client_info=info) as session:
            initialized = await session.initialize()
            tools = []
            cursor = None
            while True:
                page = await session.list_tools(cursor=cursor)
                tools.extend(tool.name for tool in page.tools)
                cursor = page.nextCursor
                if not cursor:
                    break
            called = await session.call_tool("everything__echo", {"message": message})
            resources = [str(resource.uri) for resource in (await session.list_resources()).resources]
            contents = (await session.read_resource(resources[0])).contents
            print(
                json.dumps(
                    {
                        "server": initialized.serverInfo.name,
                        "tools": tools,
                        "echoed": called.content[0].text,
                        "resources": resources,
                        "read_uri": str(contents[0].uri),
                    }
                )
            )


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
