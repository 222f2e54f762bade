"""GraphQL documents and small steps the API tests share."""

from __future__ import annotations

from typing import Any

from tests.support.graphql import GraphQLClient

ERRORS = "errors { code message field }"
TURN = "id role content sequenceNumber provider model interrupted replyToSequence usage { promptTokens completionTokens cost }"
CHECKPOINT = (
    "id hash shortHash title objective summary decisions tasks openQuestions entities "
    "branchName authorAgent sourceTurnRange { first last } parent { id }"
)
SESSION = (
    "id title branchName activeProvider activeModel model memoryScope lastSequenceNumber "
    "space { id } mount { baseSequence checkpoint { id } } forkedFrom { id } seededFrom { id }"
)
PLAN = (
    "mode boundary tokenEstimate model checkpoints { id title } "
    "turns { sequenceNumber content } messages { role content }"
)

CREATE_SPACE = f"""
mutation($name: String!) {{ createSpace(input: {{name: $name}}) {{ space {{ id name }} {ERRORS} }} }}
"""
CREATE_SESSION = f"""
mutation($input: CreateSessionInput!) {{ createSession(input: $input) {{ session {{ {SESSION} }} {ERRORS} }} }}
"""
SEND = f"""
mutation($input: SendMessageInput!) {{
  sendMessage(input: $input) {{
    userTurn {{ {TURN} }} assistantTurn {{ {TURN} }} context {{ {PLAN} }} {ERRORS}
  }}
}}
"""
CREATE_CHECKPOINT = f"""
mutation($input: CreateCheckpointInput!) {{
  createCheckpoint(input: $input) {{ checkpoint {{ {CHECKPOINT} }} {ERRORS} }}
}}
"""
MOUNT = f"""
mutation($sessionId: ID!, $checkpointId: ID!) {{
  mountCheckpoint(input: {{sessionId: $sessionId, checkpointId: $checkpointId}}) {{
    session {{ {SESSION} }} {ERRORS}
  }}
}}
"""
PREVIEW = f"""
query($input: ContextPreviewInput!) {{ contextPreview(input: $input) {{ {PLAN} }} }}
"""


async def create_space(gql: GraphQLClient, name: str = "Trips") -> str:
    data = await gql(CREATE_SPACE, name=name)
    assert data["createSpace"]["errors"] == []
    space_id: str = data["createSpace"]["space"]["id"]
    return space_id


async def create_session(gql: GraphQLClient, **fields: Any) -> dict[str, Any]:
    data = await gql(CREATE_SESSION, input=fields)
    assert data["createSession"]["errors"] == [], data
    session: dict[str, Any] = data["createSession"]["session"]
    return session


async def send(gql: GraphQLClient, session_id: str, content: str, **fields: Any) -> dict[str, Any]:
    data = await gql(SEND, input={"sessionId": session_id, "content": content, **fields})
    payload: dict[str, Any] = data["sendMessage"]
    return payload


async def checkpoint(
    gql: GraphQLClient, session_id: str, title: str, **fields: Any
) -> dict[str, Any]:
    data = await gql(CREATE_CHECKPOINT, input={"sessionId": session_id, "title": title, **fields})
    assert data["createCheckpoint"]["errors"] == [], data
    saved: dict[str, Any] = data["createCheckpoint"]["checkpoint"]
    return saved


async def mount(gql: GraphQLClient, session_id: str, checkpoint_id: str) -> dict[str, Any]:
    data = await gql(MOUNT, sessionId=session_id, checkpointId=checkpoint_id)
    assert data["mountCheckpoint"]["errors"] == [], data
    session: dict[str, Any] = data["mountCheckpoint"]["session"]
    return session


async def preview(
    gql: GraphQLClient, session_id: str, content: str, **fields: Any
) -> dict[str, Any]:
    data = await gql(PREVIEW, input={"sessionId": session_id, "content": content, **fields})
    plan: dict[str, Any] = data["contextPreview"]
    return plan
