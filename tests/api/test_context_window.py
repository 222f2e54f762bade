"""ContextPlan.contextWindow: the model's input limit, for the UI's token gauge."""

from __future__ import annotations

from api.providers.offline import OFFLINE_CONTEXT_WINDOW
from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session

WINDOW = """query($s: ID!, $m: String) { contextPreview(input: {sessionId: $s, content: "hi", model: $m}) {
  model tokenEstimate contextWindow } }"""


async def test_the_preview_gives_the_chosen_models_context_window(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="gauge"))["id"]
    plan = (await gql(WINDOW, s=sid, m="offline/echo"))["contextPreview"]
    assert plan["model"] == "offline/echo"
    assert plan["contextWindow"] == OFFLINE_CONTEXT_WINDOW == 32768
    assert 0 < plan["tokenEstimate"] < plan["contextWindow"]
