# massgen's custom tool runner: run by python3 -I -B -c inside the command sandbox. It reads one
# JSON request on stdin and writes one JSON answer on stdout; what the tool prints goes to stderr.
#
#   {"op": "describe", "file": F, "functions": [..]}
#       -> {"ok": true, "functions": {name: {"ok": true, "parameters": {..}, "description": ".."}
#                                          | {"ok": false, "error": ".."}}}
#   {"op": "call", "file": F, "function": f, "args": {..}, "preset": {..}, "context": {..}}
#       -> {"ok": true, "text": ".."} | {"ok": false, "error": ".."}
#
# A file that cannot be loaded answers {"ok": false, "kind": "import"|"syntax"|"load",
# "module": .., "error": ..}.
import asyncio
import dataclasses
import enum
import importlib.util
import inspect
import json
import os
import re
import sys
import traceback
import types
import typing

RUNNER_ENV = "MASSGEN_TOOL_RUNNER"
# MAX_ANSWER keeps the answer under what massgen reads of stdout (1 MiB).
MAX_ANSWER = 1000 * 1000


def main():
    os.environ.pop(RUNNER_ENV, None)
    # The answer goes to the real stdout; anything the tool prints, to stderr.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", errors="replace")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        req = json.loads(sys.stdin.read())
        sys.stdin = open(os.devnull)
        answer = handle(req)
    except BaseException as e:  # the answer must always be written
        answer = {"ok": False, "kind": "runner", "error": describe_exc(e)}
    out.write(encode(answer))
    out.flush()


def encode(answer):
    """The answer as JSON, cut to what massgen reads of stdout."""
    if isinstance(answer.get("error"), str) and len(answer["error"]) > 10000:
        answer["error"] = answer["error"][:10000] + " [...]"
    data = json.dumps(answer, ensure_ascii=False, default=str)
    size = len(data.encode("utf-8", "replace"))
    while size > MAX_ANSWER and answer.get("text"):
        text = answer["text"]
        keep = max(0, len(text) * MAX_ANSWER // size * 9 // 10)
        answer["text"] = text[:keep] + "\n[... truncated: the result has %d characters]" % answer.get("length", len(text))
        answer.setdefault("length", len(text))
        data = json.dumps(answer, ensure_ascii=False, default=str)
        size = len(data.encode("utf-8", "replace"))
    answer.pop("length", None)
    return json.dumps(answer, ensure_ascii=False, default=str)


def handle(req):
    install_massgen_shim()
    path = req["file"]
    sys.path.insert(0, os.path.dirname(path))
    module, err = load(path)
    if err is not None:
        return err
    if req["op"] == "describe":
        return {"ok": True, "functions": {name: describe(module, name) for name in req["functions"]}}
    fn = getattr(module, req["function"], None)
    if not callable(fn):
        return {"ok": False, "error": "%s has no function %s" % (path, req["function"])}
    return call(fn, req.get("args") or {}, req.get("preset") or {}, req.get("context") or {})


def module_name(path):
    """The name the file is loaded under: its own name, or for a file of MassGen's tool folder
    (.../massgen/tool/...) its dotted name in MassGen's package, so that its relative imports
    (from .._result import ExecutionResult) resolve, against the shim when MassGen is not
    installed. Only the file itself is loaded from the folder: a sibling it imports is not."""
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)
    stem = os.path.splitext(parts[-1])[0]
    for i in range(len(parts) - 2, 0, -1):
        if parts[i - 1] == "massgen" and parts[i] == "tool":
            dotted = ["massgen", "tool"] + parts[i + 1:-1] + [stem]
            if all(p.isidentifier() for p in dotted):
                return ".".join(dotted)
            break
    return stem or "custom_tool"


def load(path):
    name = module_name(path)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            return None, {"ok": False, "kind": "load", "error": "%s cannot be loaded as a Python module" % path}
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module, None
    except ImportError as e:
        return None, {"ok": False, "kind": "import", "module": e.name or "", "line": line_in(e, path),
                      "error": describe_exc(e), "trace": trace_tail()}
    except SyntaxError as e:
        return None, {"ok": False, "kind": "syntax", "line": e.lineno or 0, "error": describe_exc(e)}
    except BaseException as e:
        return None, {"ok": False, "kind": "load", "line": line_in(e, path), "error": describe_exc(e), "trace": trace_tail()}


def line_in(e, path):
    """The line of path where e was raised from (0: not in path)."""
    line = 0
    for frame in traceback.extract_tb(e.__traceback__):
        if os.path.abspath(frame.filename) == os.path.abspath(path):
            line = frame.lineno or 0
    return line


def describe_exc(e):
    msg = str(e)
    return type(e).__name__ + (": " + msg if msg else "")


def trace_tail(limit=2000):
    """The traceback of the exception being handled, without the runner's own frames."""
    etype, e, tb = sys.exc_info()
    frames = [f for f in traceback.extract_tb(tb) if f.filename != "<string>" and not f.filename.startswith("<frozen")]
    t = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) + \
        "".join(traceback.format_exception_only(etype, e))
    return t[-limit:]


# ---- describing a function -----------------------------------------------------------------

def describe(module, name):
    fn = getattr(module, name, None)
    if fn is None:
        own = sorted(k for k, v in vars(module).items()
                     if inspect.isfunction(v) and not k.startswith("_") and getattr(v, "__module__", None) == module.__name__)
        return {"ok": False, "kind": "missing",
                "error": "no function %s in the file (its functions: %s)" % (name, ", ".join(own) or "none")}
    if not callable(fn):
        return {"ok": False, "kind": "missing", "error": "%s is a %s, not a function" % (name, type(fn).__name__)}
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as e:
        return {"ok": False, "error": "cannot read the signature of %s: %s" % (name, e)}
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = {}
    doc = parse_docstring(inspect.getdoc(fn) or "")
    skip = set(getattr(fn, "__context_params__", ()) or ())
    props, required = {}, []
    for pname, p in sig.parameters.items():
        if pname in ("self", "cls") or pname in skip:
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        s = type_schema(hints.get(pname, p.annotation))
        if doc["params"].get(pname):
            s["description"] = doc["params"][pname]
        if p.default is p.empty:
            required.append(pname)
        else:
            s["default"] = jsonable(p.default)
        props[pname] = s
    params = {"type": "object", "properties": props}
    if required:
        params["required"] = required
    names = [k for k, p in sig.parameters.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    var_kw = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
    return {"ok": True, "parameters": params, "description": doc["description"], "accepts": names, "var_kwargs": var_kw}


_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|"
                      r"Raises|Exceptions|Except|Attributes|Example|Examples|Returns|Return|Yields|Yield|"
                      r"Note|Notes|Warning|Warnings|See Also|References)\s*:?\s*$")
_GOOGLE_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


def parse_docstring(doc):
    """Google, reST and numpy docstrings: the description (first line, then the text up to the
    first section, as docstring_parser gives MassGen) and each parameter's description."""
    lines = doc.splitlines()
    params = {}
    desc_end = len(lines)
    i = 0
    while i < len(lines):
        line = lines[i]
        if _REST_PARAM.match(line.strip()) or line.strip().startswith((":return", ":raises", ":rtype", ":type")):
            desc_end = min(desc_end, i)
            m = _REST_PARAM.match(line.strip())
            if m:
                text = [m.group(2).strip()]
                j = i + 1
                while j < len(lines) and lines[j].strip() and not lines[j].strip().startswith(":"):
                    text.append(lines[j].strip())
                    j += 1
                params[m.group(1)] = " ".join(t for t in text if t)
                i = j
                continue
            i += 1
            continue
        numpy = i + 1 < len(lines) and re.match(r"^\s*-{3,}\s*$", lines[i + 1] or "")
        m = _SECTION.match(line)
        if m or numpy:
            desc_end = min(desc_end, i)
            title = (m.group(1) if m else line.strip())
            if title.lower() in ("args", "arguments", "parameters", "params", "keyword args", "keyword arguments", "other parameters"):
                i = parse_param_section(lines, i + (2 if numpy else 1), params, numpy)
                continue
        i += 1
    desc_lines = lines[:desc_end]
    while desc_lines and not desc_lines[-1].strip():
        desc_lines.pop()
    short = desc_lines[0].strip() if desc_lines else ""
    long = "\n".join(desc_lines[1:]).strip()
    description = short + ("\n\n" + long if long else "")
    return {"description": description, "params": params}


def parse_param_section(lines, i, params, numpy):
    base = None
    cur, text = None, []

    def flush():
        if cur is not None:
            params[cur.lstrip("*")] = " ".join(t for t in text if t)

    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        if base is None:
            base = indent
        if indent < base or (indent == base and _SECTION.match(line)):
            break
        if indent == base:
            flush()
            if numpy:
                name = line.strip().split(":", 1)[0].strip()
                cur, text = name, []
            else:
                m = _GOOGLE_PARAM.match(line.strip())
                if not m:
                    break
                cur, text = m.group(1), [m.group(3).strip()]
        else:
            text.append(line.strip())
        i += 1
    flush()
    return i


def jsonable(v):
    try:
        json.dumps(v)
        return v
    except (TypeError, ValueError):
        if isinstance(v, enum.Enum):
            return jsonable(v.value)
        if isinstance(v, (set, frozenset, tuple)):
            return [jsonable(x) for x in v]
        return str(v)


_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", bytes: "string"}


def type_schema(t):
    """A JSON schema for a type hint, close to what pydantic gives MassGen."""
    if t is inspect.Parameter.empty or t is typing.Any or t is object:
        return {}
    if t is None or t is type(None):
        return {"type": "null"}
    if isinstance(t, str):  # an annotation that could not be resolved
        return {}
    if t in _SCALARS:
        return {"type": _SCALARS[t]}
    origin = typing.get_origin(t)
    args = typing.get_args(t)
    if origin is not None and origin is getattr(typing, "Annotated", None):
        return type_schema(args[0])
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        return {"anyOf": [type_schema(a) for a in args]}
    if origin is typing.Literal:
        vals = [jsonable(a) for a in args]
        s = {"enum": vals}
        kinds = {type(v) for v in vals}
        if len(kinds) == 1 and next(iter(kinds)) in _SCALARS:
            s["type"] = _SCALARS[next(iter(kinds))]
        return s
    if t is dict or origin is dict or (origin is not None and _is_sub(origin, ("Mapping",))):
        s = {"type": "object"}
        if len(args) == 2 and args[1] is not typing.Any:
            s["additionalProperties"] = type_schema(args[1])
        return s
    if t in (list, set, frozenset, tuple) or origin in (list, set, frozenset, tuple) or \
            (origin is not None and _is_sub(origin, ("Sequence", "Set"))):
        s = {"type": "array", "items": {}}
        if args and (origin is not tuple or len(set(a for a in args if a is not Ellipsis)) == 1):
            s["items"] = type_schema(args[0])
        if t in (set, frozenset) or origin in (set, frozenset):
            s["uniqueItems"] = True
        return s
    if inspect.isclass(t):
        if issubclass(t, enum.Enum):
            return {"enum": [jsonable(m.value) for m in t]}
        if hasattr(t, "model_json_schema"):  # a pydantic model
            try:
                return t.model_json_schema()
            except Exception:
                return {"type": "object"}
        if dataclasses.is_dataclass(t):
            return {"type": "object"}
        if t.__name__ in ("Path", "PosixPath", "PurePath"):
            return {"type": "string", "format": "path"}
        for base, name in _SCALARS.items():
            if issubclass(t, base):
                return {"type": name}
    return {}


def _is_sub(origin, names):
    import collections.abc as abc
    for n in names:
        c = getattr(abc, n, None)
        if c is not None and inspect.isclass(origin) and issubclass(origin, c):
            return True
    return False


# ---- calling a function --------------------------------------------------------------------

def call(fn, args, preset, context):
    try:
        sig = inspect.signature(fn)
        params = sig.parameters
    except (TypeError, ValueError):
        params = {}
    var_kw = any(p.kind == p.VAR_KEYWORD for p in params.values())
    ctx_names = set(getattr(fn, "__context_params__", ()) or ())
    owned = set(preset) | ctx_names
    if "agent_cwd" in context and ("agent_cwd" in params or var_kw):
        owned.add("agent_cwd")
    fixed = sorted(k for k in args if k in owned)
    if fixed:
        return {"ok": False, "error": "argument(s) %s are set by the configuration and cannot be given" % ", ".join(fixed)}
    if not var_kw and params:
        unknown = sorted(k for k in args if k not in params)
        if unknown:
            valid = sorted(k for k in params if k not in owned)
            return {"ok": False, "error": "unexpected argument(s) %s (valid: %s)" % (", ".join(unknown), ", ".join(valid))}
    kwargs = dict(args)
    kwargs.update(preset)
    for k in ctx_names:
        if k in context:
            kwargs[k] = context[k]
    if "agent_cwd" in owned:
        kwargs["agent_cwd"] = context["agent_cwd"]
    try:
        result = fn(**kwargs)
        text = asyncio.run(collect(result))
    except (Exception, SystemExit) as e:
        return {"ok": False, "error": describe_exc(e), "trace": trace_tail()}
    return {"ok": True, "text": text if text else "Tool executed successfully"}


async def collect(result):
    """The text MassGen's model sees: the data of every output block of every non-log result."""
    if inspect.isawaitable(result):
        result = await result
    if inspect.isasyncgen(result):
        parts = []
        async for item in result:
            parts.append(as_text(item))
        return "".join(parts)
    if inspect.isgenerator(result):
        return "".join(as_text(item) for item in result)
    return as_text(result)


def as_text(r):
    if r is None:
        return ""
    if isinstance(r, str):
        return r
    if isinstance(r, bytes):
        return r.decode("utf-8", "replace")
    blocks = getattr(r, "output_blocks", None)
    if blocks is not None:
        if getattr(r, "is_log", False):
            return ""
        return "".join(str(b.data) for b in blocks if getattr(b, "data", None))
    try:
        return json.dumps(r, default=str)
    except (TypeError, ValueError):
        return str(r)


# ---- MassGen's tool result types, when MassGen itself is not installed --------------------

def install_massgen_shim():
    try:
        if importlib.util.find_spec("massgen") is not None:
            return
    except (ImportError, ValueError):
        return
    from dataclasses import dataclass, field
    from datetime import datetime
    from typing import List, Optional

    @dataclass
    class ContentBlock:
        block_type: str
        data: str

    @dataclass
    class TextContent(ContentBlock):
        def __init__(self, data):
            super().__init__(block_type="text", data=data)

    @dataclass
    class ImageContent(ContentBlock):
        def __init__(self, data):
            super().__init__(block_type="image", data=data)

    @dataclass
    class AudioContent(ContentBlock):
        def __init__(self, data):
            super().__init__(block_type="audio", data=data)

    @dataclass
    class ExecutionResult:
        output_blocks: List[ContentBlock]
        meta_info: Optional[dict] = None
        is_streaming: bool = False
        is_final: bool = True
        is_log: bool = False
        was_interrupted: bool = False
        result_id: str = field(default_factory=lambda: datetime.now().strftime("%Y%m%d_%H%M%S_%f"))

    def context_params(*names):
        def decorator(func):
            func.__context_params__ = set(names)
            return func
        return decorator

    def package(name):
        m = types.ModuleType(name)
        m.__path__ = []  # a package: its other submodules are not found (ModuleNotFoundError)
        return m

    massgen, tool = package("massgen"), package("massgen.tool")
    result = types.ModuleType("massgen.tool._result")
    decorators = types.ModuleType("massgen.tool._decorators")
    for m in (result, tool):
        m.ContentBlock, m.TextContent, m.ImageContent, m.AudioContent = ContentBlock, TextContent, ImageContent, AudioContent
        m.ExecutionResult = ExecutionResult
    decorators.context_params = tool.context_params = context_params
    massgen.tool = tool
    tool._result, tool._decorators = result, decorators
    sys.modules.update({"massgen": massgen, "massgen.tool": tool,
                        "massgen.tool._result": result, "massgen.tool._decorators": decorators})


if __name__ == "__main__":
    main()
