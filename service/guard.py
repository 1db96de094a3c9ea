"""What keeps the service up under hostile or careless clients.

- :class:`GuardedH11Protocol`: uvicorn's h11 protocol with a deadline for
  a request's headers (a slowloris client trickling them is cut off).
- :class:`Guard`: ASGI middleware in front of the app: the Host header
  against an allow-list (DNS rebinding), ``application/json`` on POST
  bodies (no cross-site ``text/plain`` form posts), the body's size and its
  read deadline (413, 408). Its refusals have the service's error shape
  ``{"error", "where"}``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a client has to send a request's headers (the first one, and each
#: one after on a kept-alive connection).
HEADER_TIMEOUT = float(os.environ.get("ROUTECALC_HEADER_TIMEOUT", "5"))


class GuardedH11Protocol(H11Protocol):
    """Closes a connection whose request headers do not arrive in time; sends
    without Nagle's delay (asyncio sets TCP_NODELAY only on sockets opened with
    an explicit protocol number, not uvicorn's: a response in two writes then
    waited 40 ms for the client's delayed ACK)."""

    header_timeout = HEADER_TIMEOUT

    def connection_made(self, transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm()

    def _arm(self) -> None:
        """Start the wait for the next request's headers."""
        self._disarm()
        self._waiting_after = self.cycle
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.cycle is self._waiting_after and not self.transport.is_closing():
            self.logger.info("closing a connection whose request headers took over %g s", self.header_timeout)
            if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                self._write_error(
                    b"408 Request Timeout", f"request headers not received within {self.header_timeout:g} s", "headers"
                )
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot read (no Host, a bad request line or
        Content-Length): the service's error shape, not uvicorn's plain text."""
        self._write_error(b"400 Bad Request", f"not a valid HTTP/1.1 request ({msg.rstrip('.')})", "request")
        self.transport.close()

    def _write_error(self, status: bytes, message: str, where: str) -> None:
        body = json.dumps({"error": message, "where": where}).encode()
        self.transport.write(
            b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\n"
            b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not self._waiting_after:
            self._disarm()  # the headers are in: the request runs

    def on_response_complete(self) -> None:
        self._arm()
        super().on_response_complete()
        if self.cycle is not self._waiting_after:
            self._disarm()  # a pipelined request started at once

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)


def _refuse(status: int, message: str, where: str, headers: dict[str, str] | None = None):
    body = json.dumps({"error": message, "where": where}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": body})

    return app


def host_allowed(host: str, allowed: tuple[str, ...]) -> bool:
    """Whether a Host header (port dropped) is in the allow-list; ``*`` allows any."""
    if "*" in allowed:
        return True
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name.strip("[]").lower() in allowed


class Guard:
    """ASGI middleware: Host, Content-Type, body size and body read time."""

    def __init__(self, app, *, max_body: int, body_timeout: float, allowed_hosts: tuple[str, ...]):
        self.app = app
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.allowed_hosts = tuple(h.strip("[]").lower() for h in allowed_hosts)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        host = headers.get(b"host", b"").decode("latin-1")
        if not host_allowed(host, self.allowed_hosts):
            return await _refuse(
                421,
                f"host {host[:100]!r} is not served here (allowed: "
                f"{', '.join(self.allowed_hosts)}; see --allowed-host)",
                "host",
            )(scope, receive, send)
        if scope["method"] not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        media = headers.get(b"content-type", b"").decode("latin-1").split(";")[0].strip().lower()
        if media != "application/json":
            return await _refuse(
                415, f"the body must be application/json, not {media[:100] or 'unnamed'!r}", "content-type"
            )(scope, receive, send)
        too_big = _refuse(413, f"request body over the {self.max_body}-byte limit", "body")
        length = headers.get(b"content-length", b"")
        if length.isdigit() and int(length) > self.max_body:
            return await too_big(scope, receive, send)
        loop = asyncio.get_running_loop()
        until = loop.time() + self.body_timeout
        chunks, size, more = [], 0, True
        while more:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, until - loop.time()))
            except TimeoutError:
                return await _refuse(
                    408, f"request body not received within {self.body_timeout:g} s", "body", {"connection": "close"}
                )(scope, receive, send)
            if message["type"] != "http.request":
                return  # the client left
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_body:
                return await too_big(scope, receive, send)
            more = message.get("more_body", False)
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        await self.app(scope, replay, send)
