import pytest

from tests.llm_server import ScriptedServer


@pytest.fixture
def llm_server():
    """A scripted OpenAI-compatible server on 127.0.0.1 (see tests/llm_server.py); closed after the test."""
    server = ScriptedServer()
    yield server
    server.close()
