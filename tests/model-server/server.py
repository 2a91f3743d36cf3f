#!/usr/bin/env python3
"""A scripted stand-in for a remote model, for driving real agent CLIs in tests.

Speaks enough of the Anthropic Messages API (Claude Code) and of the OpenAI
Responses API (Codex) to make the real CLI run the tool calls of a script, one
turn per model request. Python 3.11 standard library only.

    python3 server.py --script SCRIPT.json [--port 0] [--port-file FILE]
                      [--log FILE] [--idle-exit SECONDS] [--dump-dir DIR]

See README.md beside this file for the script format and how tests use it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"
SIDE_TASK_TEXT = "Scripted session"
DONE_TEXT = "done"


# --------------------------------------------------------------------------- script


DEFAULT_USAGE = {"input_tokens": 10, "output_tokens": 20,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def read_turns(raw: Any, path: str) -> list[list[dict[str, Any]]]:
    if not isinstance(raw, list):
        raise ValueError(f"{path}: turns must be a list")
    turns = []
    for i, turn in enumerate(raw):
        if isinstance(turn, dict):  # a single block is a turn of one block
            turn = [turn]
        if not isinstance(turn, list) or not turn:
            raise ValueError(f"{path}: turn {i} must be a non-empty list of blocks")
        for j, block in enumerate(turn):
            if not isinstance(block, dict) or len(block) != 1:
                raise ValueError(f"{path}: turn {i} block {j} must be an object with one key")
            (kind,) = block
            if kind not in ("text", "tool_use", "exec", "patch", "function_call", "run", "mcp_call"):
                raise ValueError(f"{path}: turn {i} block {j}: unknown block kind {kind!r}")
        turns.append(turn)
    return turns


class Script:
    """The turns of a script, and the optional settings around them."""

    def __init__(self, data: Any, path: str) -> None:
        if isinstance(data, list):
            data = {"turns": data}
        if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
            raise ValueError(f"{path}: a script is {{\"turns\": [...]}} or a list of turns")
        self.turns: list[list[dict[str, Any]]] = read_turns(data["turns"], path)
        # Conversations whose first user message contains `prompt_contains` (a sub-agent's
        # prompt) take their turns from their own list, by the same rule as the main one.
        self.helpers: list[tuple[str, list[list[dict[str, Any]]]]] = []
        for k, helper in enumerate(data.get("helpers") or []):
            if not isinstance(helper, dict) or not isinstance(helper.get("prompt_contains"), str) \
                    or not isinstance(helper.get("turns"), list):
                raise ValueError(f"{path}: helper {k} must be {{\"prompt_contains\": \"...\", \"turns\": [...]}}")
            self.helpers.append((helper["prompt_contains"], read_turns(helper["turns"], f"{path}: helper {k}")))
        # The token usage every answer reports (Anthropic's names; Responses gets input/output).
        usage = data.get("usage") or {}
        if not isinstance(usage, dict) or not all(isinstance(v, int) and v >= 0 for v in usage.values()):
            raise ValueError(f"{path}: usage must map token kinds to counts")
        self.usage: dict[str, int] = {**DEFAULT_USAGE, **usage}
        # Requests with tools whose system prompt does not contain this string are
        # side tasks too (e.g. a sub-agent). None: every request with tools is main.
        self.main_system_contains: str | None = data.get("main_system_contains")
        # "history" (default): the turn is the number of model turns already in the
        # request's conversation (stateless, safe against retries);
        # "sequential": each main request takes the next turn.
        self.turn_from: str = data.get("turn_from", "history")
        if self.turn_from not in ("history", "sequential"):
            raise ValueError(f"{path}: turn_from must be \"history\" or \"sequential\"")
        self.side_text: str = data.get("side_text", SIDE_TASK_TEXT)
        self.done_text: str = data.get("done_text", DONE_TEXT)

    def turn(self, index: int, turns: list[list[dict[str, Any]]] | None = None) -> list[dict[str, Any]] | None:
        turns = self.turns if turns is None else turns
        return turns[index] if 0 <= index < len(turns) else None

    def helper_turns(self, first_prompt: str) -> list[list[dict[str, Any]]] | None:
        for needle, turns in self.helpers:
            if needle in first_prompt:
                return turns
        return None

    def run_hooks(self, index: int, turn: list[dict[str, Any]], done: set[int]) -> list[dict[str, Any]]:
        """Runs the turn's `run` blocks (argv lists) once, before the turn is answered, so a test
        can change the world between two tool calls; returns the blocks that are sent."""
        if index not in done:
            done.add(index)
            for b in turn:
                if "run" in b:
                    subprocess.run(b["run"], check=False, timeout=60,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return [b for b in turn if "run" not in b]

    def substitute(self, variables: dict[str, str]) -> None:
        """Replace `{{NAME}}` in every string of the turns by the value of NAME."""
        def sub(v: Any) -> Any:
            if isinstance(v, str):
                for k, val in variables.items():
                    v = v.replace("{{" + k + "}}", val)
                return v
            if isinstance(v, list):
                return [sub(x) for x in v]
            if isinstance(v, dict):
                return {k: sub(x) for k, x in v.items()}
            return v
        self.turns = sub(self.turns)


# --------------------------------------------------------------------------- helpers


def system_text(system: Any) -> str:
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    return ""


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict):
                if "text" in b and isinstance(b["text"], str):
                    parts.append(b["text"])
                elif "content" in b:
                    parts.append(content_text(b["content"]))
        return "\n".join(parts)
    return ""


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


# --------------------------------------------------------------------------- anthropic


def anthropic_turn_index(messages: list[Any]) -> int:
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


def anthropic_first_prompt(messages: list[Any]) -> str:
    """The text of the conversation's first user message (a sub-agent's is its prompt)."""
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user":
            return content_text(m.get("content"))
    return ""


def anthropic_last_tool_result(messages: list[Any]) -> dict[str, Any] | None:
    for m in reversed(messages):
        if not isinstance(m, dict) or not isinstance(m.get("content"), list):
            continue
        for b in reversed(m["content"]):
            if isinstance(b, dict) and b.get("type") == "tool_result":
                return {
                    "tool_use_id": b.get("tool_use_id"),
                    "is_error": bool(b.get("is_error", False)),
                    "content": content_text(b.get("content")),
                }
    return None


# --------------------------------------------------------------------------- MCP
# What the MCP proxy's tests read: which MCP tools (`mcp__SERVER__TOOL`) a request offered the
# model, so a test sees the agent re-list its tools after `notifications/tools/list_changed`.


# Claude Code (2.1.332) with its ToolSearch on offers MCP tools by name in the conversation instead
# of in `tools`: "… before calling them:\nNAME\nNAME…", and later "… no longer available …:\nNAME…"
# after a re-list. Read in order, they say which MCP tools the request offered.
DEFERRED = re.compile(r"(calling them:|no longer available\.[^:]*:)((?:\\n[A-Za-z0-9_-]+)+)")


def mcp_log_fields(tools: Any, body: Any = None) -> dict[str, Any]:
    names = set()
    for t in tools or []:
        if isinstance(t, dict):
            name = t.get("name") or ""
            if isinstance(name, str) and name.startswith("mcp__"):
                names.add(name)
    if body is not None:
        deferred: set[str] = set()
        for m in DEFERRED.finditer(json.dumps(body.get("messages") or [])):
            listed = {n for n in m.group(2).split("\\n") if n.startswith("mcp__")}
            if m.group(1) == "calling them:":
                deferred |= listed
            else:
                deferred -= listed
        names |= deferred
    return {"mcp_tools": sorted(names)}


def mcp_tool_use(call: dict[str, Any], block_id: str) -> dict[str, Any]:
    """`{"mcp_call": {"server", "tool", "arguments"}}` for Claude: `mcp__SERVER__TOOL`."""
    return {"type": "tool_use", "id": block_id,
            "name": f"mcp__{call['server']}__{call['tool']}", "input": call.get("arguments", {})}


def mcp_function_call(call: dict[str, Any], item_id: str, call_id: str) -> dict[str, Any]:
    """The same for Codex, which offers a server's tools in a namespace `mcp__SERVER`."""
    return {"type": "function_call", "id": item_id, "call_id": call_id,
            "namespace": f"mcp__{call['server']}", "name": call["tool"], "status": "completed",
            "arguments": json.dumps(call.get("arguments", {}))}


def anthropic_blocks(turn: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    blocks = []
    for j, b in enumerate(turn):
        if "text" in b:
            blocks.append({"type": "text", "text": str(b["text"])})
        elif "tool_use" in b:
            tu = b["tool_use"]
            blocks.append({
                "type": "tool_use",
                "id": tu.get("id") or f"toolu_tg{index:03d}{j:02d}",
                "name": tu["name"],
                "input": tu.get("input", {}),
            })
        elif "mcp_call" in b:
            blocks.append(mcp_tool_use(b["mcp_call"], f"toolu_tg{index:03d}{j:02d}"))
        elif "exec" in b:  # a shell command written for Codex: Claude's Bash tool
            blocks.append({
                "type": "tool_use",
                "id": f"toolu_tg{index:03d}{j:02d}",
                "name": "Bash",
                "input": {"command": b["exec"]},
            })
        else:
            raise ValueError(f"turn {index} block {j}: {next(iter(b))!r} is not for Claude")
    return blocks


def anthropic_stream(blocks: list[dict[str, Any]], model: str, msg_id: str, stop: str,
                     usage: dict[str, int] = DEFAULT_USAGE) -> bytes:
    out = [sse("message_start", {
        "type": "message_start",
        "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {**usage, "output_tokens": 1},
        },
    })]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            out.append(sse("content_block_start", {
                "type": "content_block_start", "index": i,
                "content_block": {"type": "text", "text": ""}}))
            out.append(sse("content_block_delta", {
                "type": "content_block_delta", "index": i,
                "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            out.append(sse("content_block_start", {
                "type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"],
                                  "input": {}}}))
            out.append(sse("content_block_delta", {
                "type": "content_block_delta", "index": i,
                "delta": {"type": "input_json_delta",
                          "partial_json": json.dumps(b["input"], separators=(",", ":"))}}))
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(sse("message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": usage["output_tokens"]}}))
    out.append(sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def anthropic_message(blocks: list[dict[str, Any]], model: str, msg_id: str, stop: str,
                      usage: dict[str, int] = DEFAULT_USAGE) -> dict:
    return {
        "id": msg_id, "type": "message", "role": "assistant", "model": model,
        "content": blocks, "stop_reason": stop, "stop_sequence": None,
        "usage": dict(usage),
    }


# --------------------------------------------------------------------------- openai responses

MODEL_OUTPUT_TYPES = {"function_call", "custom_tool_call", "local_shell_call", "reasoning",
                      "web_search_call"}


def is_model_item(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    t = item.get("type")
    if t in MODEL_OUTPUT_TYPES:
        return True
    return t in (None, "message") and item.get("role") == "assistant"


def responses_turn_index(items: list[Any]) -> int:
    """Number of model responses already in the history: runs of model-output items."""
    groups, prev = 0, False
    for item in items:
        cur = is_model_item(item)
        if cur and not prev:
            groups += 1
        prev = cur
    return groups


def responses_last_output(items: list[Any]) -> dict[str, Any] | None:
    for item in reversed(items):
        if isinstance(item, dict) and item.get("type") in (
                "function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            out = item.get("output")
            if isinstance(out, dict):  # {"content": ..., "success": ...}
                out = out.get("content", json.dumps(out))
            elif isinstance(out, list):
                out = content_text(out)
            return {"call_id": item.get("call_id"), "content": out}
    return None


def responses_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    tools = {}
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            name = t.get("name") or t.get("type")
            if name:
                tools[name] = t
    return tools


def responses_items(turn: list[dict[str, Any]], index: int, tools: dict[str, dict]) -> list[dict]:
    items = []
    for j, b in enumerate(turn):
        call_id = f"call_tg{index:03d}{j:02d}"
        if "text" in b:
            items.append({
                "type": "message", "id": f"msg_tg{index:03d}{j:02d}", "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": str(b["text"]), "annotations": []}],
            })
        elif "exec" in b:
            cmd = b["exec"]
            if "exec_command" in tools or not tools:
                name, args = "exec_command", {"cmd": cmd}
            elif "shell_command" in tools:
                name, args = "shell_command", {"command": cmd}
            elif "shell" in tools:
                name, args = "shell", {"command": ["bash", "-lc", cmd]}
            else:
                name, args = "exec_command", {"cmd": cmd}
            items.append({"type": "function_call", "id": f"fc_tg{index:03d}{j:02d}",
                          "call_id": call_id, "name": name, "status": "completed",
                          "arguments": json.dumps(args)})
        elif "patch" in b:
            patch = b["patch"]
            tool = tools.get("apply_patch")
            if tool is not None and tool.get("type") == "custom":
                items.append({"type": "custom_tool_call", "id": f"ctc_tg{index:03d}{j:02d}",
                              "call_id": call_id, "name": "apply_patch", "status": "completed",
                              "input": patch})
            elif tool is not None:
                items.append({"type": "function_call", "id": f"fc_tg{index:03d}{j:02d}",
                              "call_id": call_id, "name": "apply_patch", "status": "completed",
                              "arguments": json.dumps({"input": patch})})
            else:
                heredoc = f"apply_patch <<'PATCH'\n{patch.rstrip(chr(10))}\nPATCH\n"
                items.append({"type": "function_call", "id": f"fc_tg{index:03d}{j:02d}",
                              "call_id": call_id, "name": "exec_command", "status": "completed",
                              "arguments": json.dumps({"cmd": heredoc})})
        elif "mcp_call" in b:
            items.append(mcp_function_call(b["mcp_call"], f"fc_tg{index:03d}{j:02d}", call_id))
        elif "function_call" in b:
            fc = b["function_call"]
            items.append({"type": "function_call", "id": f"fc_tg{index:03d}{j:02d}",
                          "call_id": call_id, "name": fc["name"], "status": "completed",
                          "arguments": json.dumps(fc.get("arguments", {}))})
            # ---- governed runs (issue 13): a tool of a namespace (Codex offers an MCP server's
            # tools as the namespace `mcp__<server>`), named by the block's optional `namespace`.
            if "namespace" in fc:
                items[-1]["namespace"] = fc["namespace"]
        else:  # a Claude tool_use block: not meaningful for Codex
            raise ValueError(f"turn {index} block {j}: {next(iter(b))!r} is not for Codex")
    return items


def responses_usage(usage: dict[str, int]) -> dict[str, Any]:
    """The script's usage in the Responses API's terms: cached tokens are part of the input."""
    cached = usage["cache_read_input_tokens"]
    total_in = usage["input_tokens"] + cached + usage["cache_creation_input_tokens"]
    return {"input_tokens": total_in, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": usage["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": total_in + usage["output_tokens"]}


def responses_stream(items: list[dict], model: str, resp_id: str,
                     usage: dict[str, int] = DEFAULT_USAGE) -> bytes:
    created = int(time.time())
    base = {"id": resp_id, "object": "response", "created_at": created, "model": model}
    out = [sse("response.created", {
        "type": "response.created", "sequence_number": 0,
        "response": {**base, "status": "in_progress", "output": []}})]
    seq = 1
    for i, item in enumerate(items):
        added = dict(item)
        if item["type"] == "message":
            added = {**item, "status": "in_progress", "content": []}
        elif item["type"] == "function_call":
            added = {**item, "status": "in_progress", "arguments": ""}
        out.append(sse("response.output_item.added", {
            "type": "response.output_item.added", "sequence_number": seq,
            "output_index": i, "item": added}))
        seq += 1
        if item["type"] == "message":
            text = item["content"][0]["text"]
            out.append(sse("response.output_text.delta", {
                "type": "response.output_text.delta", "sequence_number": seq,
                "item_id": item["id"], "output_index": i, "content_index": 0, "delta": text}))
            seq += 1
        out.append(sse("response.output_item.done", {
            "type": "response.output_item.done", "sequence_number": seq,
            "output_index": i, "item": item}))
        seq += 1
    out.append(sse("response.completed", {
        "type": "response.completed", "sequence_number": seq,
        "response": {**base, "status": "completed", "output": items,
                     "usage": responses_usage(usage)}}))
    return b"".join(out)


# --------------------------------------------------------------------------- chat completions
# OpenAI Chat Completions (`POST …/chat/completions`), what OpenCode's `@ai-sdk/openai-compatible`
# provider speaks: tools offered as `{"type": "function", "function": {"name"}}`, tool calls as
# `tool_calls` deltas, tool results as `role: "tool"` messages.


def chat_turn_index(messages: list[Any]) -> int:
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


def chat_tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for t in body.get("tools") or []:
        if isinstance(t, dict) and isinstance(t.get("function"), dict):
            names.append(str(t["function"].get("name") or ""))
    return sorted(names)


def chat_last_tool_result(messages: list[Any]) -> dict[str, Any] | None:
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "tool":
            return {"tool_call_id": m.get("tool_call_id"), "content": content_text(m.get("content"))}
    return None


def chat_parts(turn: list[dict[str, Any]], index: int) -> tuple[str, list[dict[str, Any]]]:
    """The text and the tool calls of a turn, for Chat Completions."""
    text, calls = [], []
    for j, b in enumerate(turn):
        call_id = f"call_tg{index:03d}{j:02d}"
        if "text" in b:
            text.append(str(b["text"]))
        elif "tool_use" in b:
            tu = b["tool_use"]
            calls.append({"id": tu.get("id") or call_id, "name": tu["name"], "arguments": tu.get("input", {})})
        elif "exec" in b:  # a shell command: OpenCode's `bash` tool
            calls.append({"id": call_id, "name": "bash",
                          "arguments": {"command": b["exec"], "description": "Run a command"}})
        elif "mcp_call" in b:  # OpenCode names an MCP server's tool `SERVER_TOOL`
            c = b["mcp_call"]
            calls.append({"id": call_id, "name": f"{c['server']}_{c['tool']}", "arguments": c.get("arguments", {})})
        else:
            raise ValueError(f"turn {index} block {j}: {next(iter(b))!r} is not for Chat Completions")
    return "".join(text), calls


def chat_stream(text: str, calls: list[dict[str, Any]], model: str, chat_id: str) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None, usage: bool = False) -> bytes:
        data: dict[str, Any] = {"id": chat_id, "object": "chat.completion.chunk", "created": int(time.time()),
                                "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if usage:
            data["usage"] = {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
        return f"data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()

    out = [chunk({"role": "assistant", "content": ""})]
    if text:
        out.append(chunk({"content": text}))
    for i, c in enumerate(calls):
        out.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                           "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}]}))
    out.append(chunk({}, "tool_calls" if calls else "stop", usage=True))
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


# --------------------------------------------------------------------------- server


class State:
    def __init__(self, script: Script, log_path: str | None, dump_dir: str | None) -> None:
        self.script = script
        self.log_path = log_path
        self.dump_dir = dump_dir
        self.lock = threading.Lock()
        self.next_sequential = 0
        self.requests = 0
        self.last_request = time.monotonic()
        self.ran: set[int] = set()  # turns whose `run` blocks have run

    def log(self, entry: dict[str, Any]) -> None:
        if not self.log_path:
            return
        with self.lock, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, separators=(",", ":")) + "\n")

    def dump(self, n: int, path: str, body: bytes) -> None:
        if self.dump_dir:
            os.makedirs(self.dump_dir, exist_ok=True)
            name = f"{n:04d}-{path.strip('/').replace('/', '_') or 'root'}.json"
            with open(os.path.join(self.dump_dir, name), "wb") as f:
                f.write(body)

    def pick_turn(self, history_index: int,
                  helper: list[list[dict[str, Any]]] | None = None) -> tuple[int, list[dict[str, Any]] | None]:
        if helper is not None:  # a helper's conversation: always by its own history
            return history_index, self.script.turn(history_index, helper)
        if self.script.turn_from == "sequential":
            with self.lock:
                index = self.next_sequential
                self.next_sequential += 1
        else:
            index = history_index
        return index, self.script.turn(index)


class Handler(BaseHTTPRequestHandler):
    server_version = "sixfold-model-server/1"
    protocol_version = "HTTP/1.1"
    state: State  # set on the class before serving

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # -- plumbing

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            return self.rfile.read(length)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        return b""

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if ctype == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode())

    def _begin(self) -> tuple[int, bytes, str]:
        st = self.state
        with st.lock:
            st.requests += 1
            n = st.requests
            st.last_request = time.monotonic()
        body = self._read_body() if self.command in ("POST", "PUT", "PATCH") else b""
        path = self.path.split("?", 1)[0]
        st.dump(n, f"{self.command}{path}", body)
        return n, body, path

    # -- verbs

    def do_GET(self) -> None:
        n, _, path = self._begin()
        self.state.log({"n": n, "method": "GET", "path": path})
        if path.rstrip("/").endswith("/models"):
            self._json(200, {"data": [], "models": [], "object": "list"})
        else:
            self._json(404, {"error": {"type": "not_found", "message": f"no {path}"}})

    def do_HEAD(self) -> None:
        n, _, path = self._begin()
        self.state.log({"n": n, "method": "HEAD", "path": path})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        n, raw, path = self._begin()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self.state.log({"n": n, "method": "POST", "path": path, "error": "body not JSON"})
            self._json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                        "message": "body is not a JSON object"}})
            return
        try:
            if path.endswith("/messages/count_tokens"):
                self.state.log({"n": n, "method": "POST", "path": path})
                self._json(200, {"input_tokens": 10})
            elif path.endswith("/messages"):
                self._anthropic(n, path, body)
            elif path.endswith("/responses"):
                self._responses(n, path, body)
            elif path.endswith("/chat/completions"):
                self._chat(n, path, body)
            else:
                self.state.log({"n": n, "method": "POST", "path": path})
                self._json(200, {})
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:  # a script error: tell the client and the log, keep serving
            self.state.log({"n": n, "method": "POST", "path": path, "error": repr(e)})
            try:  # 400, not 5xx: clients retry server errors with back-off, which only hangs
                self._json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                            "message": f"model-server: {e}"}})
            except OSError:
                pass

    # -- the two APIs

    def _anthropic(self, n: int, path: str, body: dict[str, Any]) -> None:
        st = self.state
        messages = body.get("messages") or []
        tools = body.get("tools") or []
        model = body.get("model") or "claude-scripted"
        main = bool(tools)
        want = st.script.main_system_contains
        if main and want is not None and want not in system_text(body.get("system")):
            main = False
        entry: dict[str, Any] = {
            "n": n, "method": "POST", "path": path, "api": "anthropic",
            "stream": bool(body.get("stream")), "tools": bool(tools), "main": main,
            "messages": len(messages),
            "last_tool_result": anthropic_last_tool_result(messages),
        }
        entry.update(mcp_log_fields(tools, body))
        if main:
            helper = st.script.helper_turns(anthropic_first_prompt(messages))
            index, turn = st.pick_turn(anthropic_turn_index(messages), helper)
            entry["turn"] = index
            if helper is not None:
                entry["helper"] = True
            if turn is None:
                entry["exhausted"] = True
                turn = [{"text": st.script.done_text}]
            turn = st.script.run_hooks(index, turn, st.ran)
            blocks = anthropic_blocks(turn, index)
            msg_id = f"msg_tg{n:04d}"
        else:
            blocks = [{"type": "text", "text": st.script.side_text}]
            msg_id = f"msg_tgside{n:04d}"
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        entry["answer"] = [b if b["type"] == "text" else {"tool_use": b["name"], "id": b["id"]}
                           for b in blocks]
        st.log(entry)
        if body.get("stream"):
            self._send(200, anthropic_stream(blocks, model, msg_id, stop, st.script.usage), "text/event-stream")
        else:
            self._json(200, anthropic_message(blocks, model, msg_id, stop, st.script.usage))

    def _responses(self, n: int, path: str, body: dict[str, Any]) -> None:
        st = self.state
        items_in = body.get("input") or []
        if isinstance(items_in, str):
            items_in = [{"type": "message", "role": "user", "content": items_in}]
        tools = responses_tools(body)
        model = body.get("model") or "gpt-scripted"
        main = bool(tools)
        want = st.script.main_system_contains
        if main and want is not None and want not in str(body.get("instructions") or ""):
            main = False
        entry: dict[str, Any] = {
            "n": n, "method": "POST", "path": path, "api": "responses",
            "stream": bool(body.get("stream")), "tools": bool(tools), "main": main,
            "tool_names": sorted(tools), "items": len(items_in),
            "last_tool_result": responses_last_output(items_in),
        }
        if main:
            index, turn = st.pick_turn(responses_turn_index(items_in))
            entry["turn"] = index
            if turn is None:
                entry["exhausted"] = True
                turn = [{"text": st.script.done_text}]
            turn = st.script.run_hooks(index, turn, st.ran)
            items = responses_items(turn, index, tools)
        else:
            items = responses_items([{"text": st.script.side_text}], 999, tools)
        entry["answer"] = [{"type": i["type"], "name": i.get("name")} for i in items]
        st.log(entry)
        resp_id = f"resp_tg{n:04d}"
        if body.get("stream", True):
            self._send(200, responses_stream(items, model, resp_id, st.script.usage), "text/event-stream")
        else:
            self._json(200, {"id": resp_id, "object": "response", "status": "completed",
                             "model": model, "output": items,
                             "usage": responses_usage(st.script.usage)})

    def _chat(self, n: int, path: str, body: dict[str, Any]) -> None:
        st = self.state
        messages = body.get("messages") or []
        names = chat_tool_names(body)
        model = body.get("model") or "chat-scripted"
        main = bool(names)
        want = st.script.main_system_contains
        system = "\n".join(content_text(m.get("content")) for m in messages
                           if isinstance(m, dict) and m.get("role") == "system")
        if main and want is not None and want not in system:
            main = False
        entry: dict[str, Any] = {
            "n": n, "method": "POST", "path": path, "api": "chat",
            "stream": bool(body.get("stream")), "tools": bool(names), "main": main,
            "tool_names": names, "messages": len(messages),
            "last_tool_result": chat_last_tool_result(messages),
        }
        if main:
            index, turn = st.pick_turn(chat_turn_index(messages))
            entry["turn"] = index
            if turn is None:
                entry["exhausted"] = True
                turn = [{"text": st.script.done_text}]
            turn = st.script.run_hooks(index, turn, st.ran)
            text, calls = chat_parts(turn, index)
        else:
            text, calls = st.script.side_text, []
        entry["answer"] = ([{"type": "text", "text": text}] if text else []) + \
            [{"tool_use": c["name"], "id": c["id"]} for c in calls]
        st.log(entry)
        chat_id = f"chatcmpl_tg{n:04d}"
        if body.get("stream"):
            self._send(200, chat_stream(text, calls, model, chat_id), "text/event-stream")
        else:
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                    "name": c["name"], "arguments": json.dumps(c["arguments"])}} for c in calls]
            self._json(200, {"id": chat_id, "object": "chat.completion", "created": int(time.time()),
                             "model": model, "choices": [{"index": 0, "message": message,
                                                          "finish_reason": "tool_calls" if calls else "stop"}],
                             "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", required=True, help="JSON script: {\"turns\": [...]}")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    ap.add_argument("--port-file", help="write the chosen port here (atomically)")
    ap.add_argument("--log", help="append one JSON line per request here")
    ap.add_argument("--idle-exit", type=float, default=0,
                    help="exit after this many seconds without a request (0: never)")
    ap.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                    help="replace {{NAME}} in the script's strings by VALUE (repeatable)")
    ap.add_argument("--dump-dir", help="save every request body here (debugging)")
    args = ap.parse_args(argv)
    variables = {}
    for v in args.var:
        name, sep, value = v.partition("=")
        if not sep or not name:
            ap.error(f"--var wants NAME=VALUE, not {v!r}")
        variables[name] = value

    try:
        with open(args.script, encoding="utf-8") as f:
            script = Script(json.load(f), args.script)
        script.substitute(variables)
    except (OSError, ValueError) as e:
        print(f"model-server: {e}", file=sys.stderr)
        return 2

    Handler.state = State(script, args.log, args.dump_dir)
    httpd = ThreadingHTTPServer((HOST, args.port), Handler)
    httpd.daemon_threads = True
    port = httpd.server_address[1]

    def stop(*_: Any) -> None:
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    if args.port_file:
        tmp = f"{args.port_file}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    print(f"listening on {HOST}:{port}", flush=True)

    if args.idle_exit > 0:
        def watch() -> None:
            while True:
                time.sleep(min(1.0, args.idle_exit))
                if time.monotonic() - Handler.state.last_request >= args.idle_exit:
                    stop()
                    return
        threading.Thread(target=watch, daemon=True).start()

    httpd.serve_forever(poll_interval=0.2)
    httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
