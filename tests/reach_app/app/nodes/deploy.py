"""A node's update built two calls away, as large applications build them: the node returns
``await developer_deploy(state)``, which returns what a method of an agent object returns."""

from typing import Any


class DeveloperAgent:
    async def invoke(self, state: Any) -> dict[str, Any]:
        return {"deployed": "v2"}


agent = DeveloperAgent()


async def developer_deploy(state: Any) -> dict[str, Any]:
    return await agent.invoke(state)
