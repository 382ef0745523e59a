"""Checks emulator exchanges against Discord's official OpenAPI spec (tests/data/discord-openapi).

The checker is an ``exchange_hook``: give it to an emulator and it judges every ``/api/v10``
request and response by the spec alone. It finds the operation by matching the concrete path
against the spec's own path templates (literal segments beat parameters, so ``/users/@me`` is
not ``/users/{user_id}``); it never trusts the emulator's route names. For that operation it
validates the path and query parameters, the request body against ``requestBody``, the response
body against the response for the status (falling back to ``4XX``-style ranges, then
``default``) and the types of the rate-limit headers the response declares. Schemas are
validated with ``openapi_schema_validator.OAS31Validator`` (formats included) through a
``referencing`` registry holding the whole spec, loaded once per test session.

That validator costs about 13 ms of CPU for an ordinary exchange (a page of messages), seven
times what the emulator spends answering it, on every exchange of every test. So each schema is
first tried with ``jsonschema_rs`` (compiled, about a hundredth of that), which is never
laxer: it checks the same JSON Schema 2020-12 keywords, the OAS ``int32``/``int64`` formats as
the bounds they mean, ``date-time`` with OAS31's own checker, and the formats it knows besides
(stricter is harmless). An instance it passes has no violation; one it fails goes to
``OAS31Validator``, whose messages (or silence) are the verdict.
tests/emulator/test_openapi_fast_path.py holds the two to that.

Deliberate allowances, where Discord's docs and the spec part ways or the spec is silent:

- **Requests Discord refuses.** A request the spec rejects (a 101-character ``custom_id``, six
  buttons in a row, ``limit=101``) is reported only if the emulator *accepted* it (status below
  400). Tests send invalid requests on purpose to see Discord's errors; what must never happen
  is the emulator taking something Discord would not. ``OpenAPIChecker(strict_requests=True)``
  reports every request the spec rejects.
- **Content length.** The spec allows 4000 characters of ``content``; the docs (and Discord, for
  bots) allow 2000. Nothing needs allowing: 2000 < 4000, and the emulator's 50035 for longer
  content is a valid ``ErrorResponse``.
- **The 429 body's ``code``.** The spec requires it, the docs call it optional. The emulator
  always sends ``"code": 0``, so the spec's rule is kept here (clients must still tolerate its
  absence on the real Discord).
- **The Cloudflare ban.** A 429 whose body is HTML (no JSON, no rate-limit headers) is the
  documented ban, which the API spec does not describe; it is accepted.
- **Field error codes.** In a 50035 body the spec types each ``errors...._errors[].code`` as
  an integer; the docs (and Discord) send strings such as ``"BASE_TYPE_REQUIRED"``. String
  codes are accepted when they are non-empty upper-case identifiers; the rest of the error tree
  is checked against the spec.
- **Server errors.** The spec lists no 5xx responses; 5xx answers (scripted faults) are not
  checked.
- **Boolean queries.** Discord also reads ``1``/``0`` as booleans (discord.py sends
  ``with_response=1``); they are coerced like ``true``/``false``.
- **Command permissions.** The docs type a command's ``default_member_permissions`` as a
  string of permission bits (discord.py sends ``"8"``); the spec's request schemas as an
  integer. A string of digits is judged as that integer.
- **DM recipients.** ``POST /users/@me/channels``'s ``recipient_id`` is a snowflake string in
  the spec; Discord reads snowflakes from JSON numbers too, and discord.py sends one. A
  non-negative integer is judged as its string.
- **Forwards.** The docs define ``message_reference.type`` 1 (FORWARD), whose message carries
  the original in ``message_snapshots``; the spec's ``MessageReferenceType`` lists only 0. A
  response's reference of type 1 on a message with snapshots is judged as type 0 (everything
  else about it, the snapshots included, against the spec).
- **Attachment ids.** In a request's ``attachments`` the docs allow a "snowflake or number"
  (the ``n`` of ``files[n]``; discord.py sends ``0``, ``1``...), the spec a snowflake string.
  A non-negative integer is judged as its string.

Multipart requests (``multipart/form-data``, a message with files) are parsed here with the
standard library's MIME parser, independently of the emulator: the ``payload_json`` part (or
the plain form fields) and a string for each file part make the instance judged against the
operation's ``multipart/form-data`` schema (which adds ``files[n]`` to the JSON body's).
"""

from __future__ import annotations

import email.parser
import email.policy
import functools
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import jsonschema_rs
import referencing
import referencing.jsonschema
from openapi_schema_validator import OAS31Validator, oas31_format_checker

from discord_mcp.emulator import Exchange

SPEC_PATH = Path(__file__).resolve().parent.parent / "data" / "discord-openapi" / "openapi.json"
_BASE = "urn:discord"
_JSON = "application/json"


@dataclass(frozen=True)
class Violation:
    """One way an exchange broke the spec."""

    method: str
    path: str
    status: int
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.method} {self.path} -> {self.status}: {self.where}: {self.message}"


@dataclass(frozen=True)
class _Operation:
    template: str
    method: str
    pointer: tuple[str, ...]
    spec: dict[str, Any]
    parameters: tuple[dict[str, Any], ...]


def _pointer(parts: tuple[str, ...]) -> str:
    escaped = "/".join(part.replace("~", "~0").replace("/", "~1") for part in parts)
    return f"{_BASE}#/{quote(escaped, safe='/~')}"


class _Spec:
    """The loaded spec: its path templates, a reference registry and cached validators."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.registry: referencing.Registry[Any] = referencing.Registry().with_resource(
            _BASE,
            referencing.Resource.from_contents(
                document, default_specification=referencing.jsonschema.DRAFT202012
            ),
        )
        self.templates = [
            (template, template.strip("/").split("/")) for template in document["paths"]
        ]
        self._validators: dict[str, OAS31Validator] = {}
        self._fast: dict[str, jsonschema_rs.Validator] = {}
        self._fast_registry = jsonschema_rs.Registry(
            [(_BASE, _bounded_integers(document))], draft=jsonschema_rs.Draft202012
        )
        self._lock = threading.Lock()

    def resolve(
        self, node: dict[str, Any], pointer: tuple[str, ...]
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        """Follow a local ``$ref`` (``#/components/...``); returns the target and its pointer."""
        while "$ref" in node:
            parts = tuple(unquote(p) for p in node["$ref"].removeprefix("#/").split("/"))
            pointer = tuple(p.replace("~1", "/").replace("~0", "~") for p in parts)
            node = self.document
            for part in pointer:
                node = node[part]
        return node, pointer

    def passes(self, schema: dict[str, Any], instance: Any) -> bool:
        """Whether the compiled validator passes ``instance`` (``schema``'s ``$ref``s absolute).
        True only where ``OAS31Validator`` would pass it too; False means "ask it"."""
        key = json.dumps(schema, sort_keys=True)
        with self._lock:
            fast = self._fast.get(key)
            if fast is None:
                fast = jsonschema_rs.Draft202012Validator(
                    _bounded_integers(schema),
                    registry=self._fast_registry,
                    validate_formats=True,
                    formats={"date-time": _is_datetime},
                )
                self._fast[key] = fast
        try:
            return bool(fast.is_valid(instance))
        except Exception:  # an instance it cannot read (an integer beyond 64 bits): ask OAS31
            return False

    def errors(self, pointer: tuple[str, ...], instance: Any) -> list[str]:
        """Messages for each way ``instance`` fails the schema at ``pointer`` in the spec."""
        if self.passes_at(pointer, instance):
            return []
        return self.oas31_errors(pointer, instance)

    def passes_at(self, pointer: tuple[str, ...], instance: Any) -> bool:
        """:meth:`passes` for the schema at ``pointer`` in the spec."""
        return self.passes({"$ref": _pointer(pointer)}, instance)

    def oas31_errors(self, pointer: tuple[str, ...], instance: Any) -> list[str]:
        """:meth:`errors` by ``OAS31Validator`` alone (the verdict behind the compiled one)."""
        key = _pointer(pointer)
        with self._lock:
            validator = self._validators.get(key)
            if validator is None:
                validator = OAS31Validator(
                    {"$ref": key}, registry=self.registry, format_checker=oas31_format_checker
                )
                self._validators[key] = validator
        found = []
        for error in validator.iter_errors(instance):
            location = "".join(f"[{p!r}]" for p in error.absolute_path) or "(root)"
            found.append(f"at {location}: {error.message[:300]}")
        return found

    def operation(self, method: str, segments: list[str]) -> _Operation | str:
        """The operation for a concrete path, or a sentence saying why there is none."""
        best: tuple[int, str] | None = None
        for template, parts in self.templates:
            if len(parts) != len(segments):
                continue
            literal = 0
            for part, segment in zip(parts, segments, strict=True):
                if part.startswith("{") and part.endswith("}"):
                    if not segment:
                        break
                elif part == segment:
                    literal += 1
                else:
                    break
            else:
                if best is None or literal > best[0]:
                    best = (literal, template)
        if best is None:
            return "the spec has no path matching it"
        template = best[1]
        item = self.document["paths"][template]
        op = item.get(method.lower())
        if op is None:
            return f"the spec has no {method} operation on {template}"
        parameters = tuple(item.get("parameters", [])) + tuple(op.get("parameters", []))
        return _Operation(template, method, ("paths", template, method.lower()), op, parameters)


@functools.cache
def load_spec() -> _Spec:
    """The spec, parsed once per process (1.2 MB)."""
    return _Spec(json.loads(SPEC_PATH.read_text(encoding="utf-8")))


def _coerce(value: str, schema: dict[str, Any]) -> Any:
    """A query or header string as the type its schema names (left as is if it does not fit)."""
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    try:
        if "integer" in kinds:
            return int(value)
        if "number" in kinds:
            return float(value)
        if "boolean" in kinds and value in ("1", "0"):
            # Discord reads 1 and 0 as booleans in queries (discord.py sends with_response=1).
            return value == "1"
        if "boolean" in kinds and value in ("true", "false", "True", "False"):
            return value.lower() == "true"
    except ValueError:
        return value
    return value


class OpenAPIChecker:
    """An ``exchange_hook`` that records every way an exchange breaks the spec.

    Safe to call from the emulator's thread; read ``violations`` or call :meth:`report` from
    the test.
    """

    def __init__(self, *, strict_requests: bool = False) -> None:
        self.strict_requests = strict_requests
        self.violations: list[Violation] = []
        self.exchanges = 0
        self._lock = threading.Lock()

    def __call__(self, exchange: Exchange) -> None:
        try:
            found = self.check(exchange)
        except Exception as exc:  # a checker bug must fail the test, not vanish in a log
            found = [_violation(exchange, "checker", f"crashed: {exc!r}")]
        with self._lock:
            self.exchanges += 1
            self.violations.extend(found)

    def check(self, exchange: Exchange) -> list[Violation]:
        """Every way ``exchange`` breaks the spec (see the module docstring for allowances)."""
        spec = load_spec()
        segments = [unquote(s) for s in exchange.path.strip("/").split("/")]
        accepted = exchange.status < 400
        judge_request = accepted or self.strict_requests
        operation = spec.operation(exchange.method, segments)
        if isinstance(operation, str):
            found = [_violation(exchange, "route", operation)] if judge_request else []
            if not accepted and isinstance(exchange.response_json, dict):
                for message in spec.errors(
                    ("components", "schemas", "ErrorResponse"), exchange.response_json
                ):
                    found.append(_violation(exchange, "error body", message))
            return found
        found = []
        if judge_request:
            found += self._request(spec, operation, exchange, segments)
        found += self._response(spec, operation, exchange)
        return found

    def _request(
        self, spec: _Spec, op: _Operation, exchange: Exchange, segments: list[str]
    ) -> list[Violation]:
        found: list[Violation] = []
        template_parts = op.template.strip("/").split("/")
        path_values = {
            part[1:-1]: segment
            for part, segment in zip(template_parts, segments, strict=True)
            if part.startswith("{")
        }
        declared_query: dict[str, dict[str, Any]] = {}
        for parameter in op.parameters:
            parameter, _ = spec.resolve(parameter, ())
            name, where = parameter["name"], parameter["in"]
            schema = parameter.get("schema", {})
            if where == "query":
                declared_query[name] = schema
            elif where == "path" and name in path_values:
                instance = _coerce(path_values[name], schema)
                for message in _inline_errors(spec, schema, instance):
                    found.append(_violation(exchange, f"path parameter {name}", message))
        for name, value in exchange.query.items():
            if name not in declared_query:
                found.append(
                    _violation(exchange, "query", f"parameter {name!r} is not in the spec")
                )
                continue
            instance = _coerce(value, declared_query[name])
            for message in _inline_errors(spec, declared_query[name], instance):
                found.append(_violation(exchange, f"query parameter {name}", message))
        body = op.spec.get("requestBody")
        if body is None:
            if exchange.request_json is not None:
                found.append(_violation(exchange, "request body", "the operation takes no body"))
            return found
        body, pointer = spec.resolve(body, (*op.pointer, "requestBody"))
        media, instance = _JSON, exchange.request_json
        if _media_type(exchange.request_content_type) == _MULTIPART:
            media = _MULTIPART
            instance, problems = _form_instance(exchange)
            found += [_violation(exchange, "request body", problem) for problem in problems]
        if instance is None:
            if body.get("required"):
                found.append(_violation(exchange, "request body", "required but missing"))
            return found
        if media not in body.get("content", {}):
            found.append(_violation(exchange, "request body", f"the operation takes no {media}"))
            return found
        if "/commands" in op.template:
            instance = _permissions_as_integers(instance)
        instance = _attachment_ids_as_strings(instance)
        if op.template == "/users/@me/channels":
            instance = _recipient_as_string(instance)
        schema_pointer = (*pointer, "content", media, "schema")
        for message in spec.errors(schema_pointer, instance):
            found.append(_violation(exchange, "request body", message))
        return found

    def _response(self, spec: _Spec, op: _Operation, exchange: Exchange) -> list[Violation]:
        status = exchange.status
        headers = {k.lower(): v for k, v in exchange.response_headers.items()}
        content_type = headers.get("content-type", "")
        if status == 429 and content_type.startswith("text/html"):
            return []  # the Cloudflare ban page: documented, outside the API spec
        if status >= 500:
            return []  # the spec describes no server errors
        responses = op.spec.get("responses", {})
        for key in (str(status), f"{status // 100}XX", "default"):
            if key in responses:
                break
        else:
            return [_violation(exchange, "status", f"the spec lists no {status} response")]
        response, pointer = spec.resolve(responses[key], (*op.pointer, "responses", key))
        found: list[Violation] = []
        for name, header in response.get("headers", {}).items():
            value = headers.get(name.lower())
            if value is None:
                continue
            header, _ = spec.resolve(header, (*pointer, "headers", name))
            schema = header.get("schema", {})
            for message in _inline_errors(spec, schema, _coerce(value, schema)):
                found.append(_violation(exchange, f"header {name}", message))
        content = response.get("content")
        if not content:
            if exchange.response_json is not None:
                found.append(_violation(exchange, "response body", "the spec says there is none"))
            return found
        if _JSON not in content:
            return found
        if exchange.response_json is None:
            found.append(_violation(exchange, "response body", "JSON expected, none sent"))
            return found
        if not content_type.startswith(_JSON):
            found.append(_violation(exchange, "Content-Type", f"{content_type!r}, not JSON"))
        body = exchange.response_json
        if status >= 400 and isinstance(body, dict) and "errors" in body:
            body, problems = _with_docs_error_codes(body)
            found += [_violation(exchange, "response body", problem) for problem in problems]
        body = _forwards_as_default(body)
        for message in spec.errors((*pointer, "content", _JSON, "schema"), body):
            found.append(_violation(exchange, "response body", message))
        return found

    def report(self) -> str:
        """A readable list of the violations ("" when there are none)."""
        with self._lock:
            violations = list(self.violations)
        if not violations:
            return ""
        lines = [f"{len(violations)} problem(s) against Discord's OpenAPI spec:"]
        lines += [f"  - {violation}" for violation in violations[:50]]
        if len(violations) > 50:
            lines.append(f"  ... and {len(violations) - 50} more")
        return "\n".join(lines)


def _inline_errors(spec: _Spec, schema: dict[str, Any], instance: Any) -> list[str]:
    """Validate against a small inline schema whose ``$ref``s point into the spec."""
    if "$ref" in schema:
        _, pointer = spec.resolve(schema, ())
        return spec.errors(pointer, instance)
    schema = _absolute_refs(schema)
    if spec.passes(schema, instance):
        return []
    validator = OAS31Validator(schema, registry=spec.registry, format_checker=oas31_format_checker)
    return [error.message[:300] for error in validator.iter_errors(instance)]


_FORMAT_BOUNDS = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _bounded_integers(node: Any) -> Any:
    """A copy of ``node`` where each OAS ``int32``/``int64`` format also carries its bounds, as
    an ``allOf`` (``minimum``/``maximum`` judge numbers only, as the OAS format checks do)."""
    if isinstance(node, list):
        return [_bounded_integers(item) for item in node]
    if not isinstance(node, dict):
        return node
    copied = {key: _bounded_integers(value) for key, value in node.items()}
    bounds = _FORMAT_BOUNDS.get(node["format"]) if isinstance(node.get("format"), str) else None
    if bounds is not None:
        low, high = bounds
        copied["allOf"] = [*copied.get("allOf", []), {"minimum": low, "maximum": high}]
    return copied


def _is_datetime(value: str) -> bool:
    return bool(oas31_format_checker.conforms(value, "date-time"))


def _absolute_refs(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: (
                _BASE + value if key == "$ref" and value.startswith("#") else _absolute_refs(value)
            )
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_absolute_refs(item) for item in node]
    return node


def _forwards_as_default(node: Any) -> Any:
    """Messages forwarding another (reference type 1 with snapshots) with the reference's type
    as the spec knows it (0); everything else as it is."""
    if isinstance(node, list):
        return [_forwards_as_default(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _forwards_as_default(value) for key, value in node.items()}
    reference = out.get("message_reference")
    if isinstance(reference, dict) and reference.get("type") == 1 and out.get("message_snapshots"):
        out["message_reference"] = reference | {"type": 0}
    return out


def _with_docs_error_codes(body: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The body with the docs' string field-error codes swapped for the spec's integers."""
    problems: list[str] = []

    def walk(node: Any, path: str) -> Any:
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "_errors" and isinstance(value, list):
                out[key] = [swap(item, f"{path}._errors") for item in value]
            else:
                out[key] = walk(value, f"{path}.{key}")
        return out

    def swap(item: Any, path: str) -> Any:
        if not isinstance(item, dict) or not isinstance(item.get("code"), str):
            return item
        code = item["code"]
        if not code or not code.replace("_", "").isalnum() or code.upper() != code:
            problems.append(f"at {path}: field error code {code!r} is not an identifier")
        return item | {"code": 0}

    return body | {"errors": walk(body["errors"], "errors")}, problems


_MULTIPART = "multipart/form-data"


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _form_instance(exchange: Exchange) -> tuple[dict[str, Any] | None, list[str]]:
    """A multipart body as the object its schema describes, and what is wrong with it."""
    head = f"Content-Type: {exchange.request_content_type}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        head + exchange.request_body
    )
    if not message.is_multipart():
        return None, ["a multipart/form-data body without parts"]
    instance: dict[str, Any] = {}
    problems: list[str] = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            problems.append("a part without a name")
            continue
        payload = part.get_payload(decode=True)
        raw = payload if isinstance(payload, bytes) else b""
        if part.get_filename() is not None:
            instance[name] = "<binary>"
        elif name == "payload_json":
            try:
                decoded = json.loads(raw)
            except ValueError:
                problems.append("payload_json is not JSON")
                continue
            if not isinstance(decoded, dict):
                problems.append("payload_json is not a JSON object")
                continue
            instance.update(decoded)
        else:
            text = raw.decode("utf-8", "replace")
            try:
                instance[name] = json.loads(text) if name != "content" else text
            except ValueError:
                instance[name] = text
    return instance, problems


def _permissions_as_integers(node: Any) -> Any:
    """A command body with ``default_member_permissions`` strings as integers (an allowance)."""
    if isinstance(node, list):
        return [_permissions_as_integers(item) for item in node]
    if isinstance(node, dict):
        value = node.get("default_member_permissions")
        if isinstance(value, str) and value.isdigit():
            return node | {"default_member_permissions": int(value)}
    return node


def _recipient_as_string(body: Any) -> Any:
    """A DM body whose integer ``recipient_id`` is a string (an allowance)."""
    if not isinstance(body, dict):
        return body
    number = body.get("recipient_id")
    if isinstance(number, int) and not isinstance(number, bool) and number >= 0:
        return body | {"recipient_id": str(number)}
    return body


def _attachment_ids_as_strings(body: Any) -> Any:
    """A body whose ``attachments[].id`` integers are strings (an allowance)."""
    if not isinstance(body, dict):
        return body
    if isinstance(body.get("data"), dict):  # an interaction callback's message
        return body | {"data": _attachment_ids_as_strings(body["data"])}
    entries = body.get("attachments")
    if not isinstance(entries, list):
        return body

    def fixed(entry: Any) -> Any:
        number = entry.get("id") if isinstance(entry, dict) else None
        if isinstance(number, int) and not isinstance(number, bool) and number >= 0:
            return entry | {"id": str(number)}
        return entry

    return body | {"attachments": [fixed(entry) for entry in entries]}


def _violation(exchange: Exchange, where: str, message: str) -> Violation:
    return Violation(exchange.method, exchange.path, exchange.status, where, message)
