"""Content-type sniffing of uploads from their first bytes (the client's claim is not trusted)."""

from __future__ import annotations

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "application/gzip"),
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x7fELF", "application/x-executable"),
    (b"MZ", "application/x-msdownload"),
)


def sniff_content_type(head: bytes) -> str:
    for signature, content_type in _SIGNATURES:
        if head.startswith(signature):
            return content_type
    if b"\x00" in head:
        return "application/octet-stream"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the sample is still text.
        if exc.start < len(head) - 4:
            return "application/octet-stream"
        text = head[: exc.start].decode("utf-8")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")) and stripped.rstrip().endswith(("}", "]")):
        return "application/json"
    return "text/plain"
