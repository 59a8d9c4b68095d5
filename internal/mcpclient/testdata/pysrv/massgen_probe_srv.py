"""A minimal MCP server on stdio (standard library only) for massgen's tests.

Its one tool, probe, answers with the process's working directory and environment, so a test
sees where and with what massgen started it.
"""
import json
import os
import sys


def reply(msg_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method, msg_id = msg.get("method"), msg.get("id")
    if msg_id is None:
        continue  # a notification
    if method == "initialize":
        reply(msg_id, {"protocolVersion": msg["params"]["protocolVersion"],
                       "capabilities": {"tools": {}},
                       "serverInfo": {"name": "probe", "version": "1"}})
    elif method == "tools/list":
        reply(msg_id, {"tools": [{"name": "probe", "description": "where and with what this server runs",
                                  "inputSchema": {"type": "object", "properties": {}}}]})
    elif method == "tools/call":
        body = json.dumps({"cwd": os.getcwd(), "env": dict(os.environ), "module": __file__})
        reply(msg_id, {"content": [{"type": "text", "text": body}]})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id,
                                     "error": {"code": -32601, "message": "no such method"}}) + "\n")
        sys.stdout.flush()
