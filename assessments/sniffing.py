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


# Byte-order marks of UTF-8, UTF-16 and UTF-32 text (UTF-32 LE starts like UTF-16 LE).
_TEXT_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
# Control bytes that plain text does not contain (tab, line feed, form feed, carriage return
# and escape — ANSI colours in logs — are text).
_BINARY_CONTROLS = bytes(set(range(32)) - {9, 10, 12, 13, 27})


def _looks_like_utf16(head: bytes) -> bool:
    """ASCII-range text in UTF-16 without a BOM: every other byte is NUL, the rest are not."""
    even, odd = head[0::2], head[1::2]
    if len(odd) < 8:
        return False
    for zeros, others in ((even, odd), (odd, even)):
        if zeros.count(0) >= 0.9 * len(zeros) and others.count(0) <= 0.05 * len(others):
            return True
    return False


def _looks_like_legacy_text(head: bytes) -> bool:
    """Text in a legacy 8-bit encoding (Latin-1, Windows-1252, Big5...): no binary controls."""
    return sum(head.count(byte) for byte in _BINARY_CONTROLS) <= len(head) // 100


def sniff_content_type(head: bytes) -> str:
    for signature, content_type in _SIGNATURES:
        if head.startswith(signature):
            return content_type
    if head.startswith(_TEXT_BOMS):
        return "text/plain"
    if b"\x00" in head:
        return "text/plain" if _looks_like_utf16(head) else "application/octet-stream"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the sample is still text; other invalid
        # UTF-8 is text in another encoding when it has no binary control bytes. Such a log is
        # kept, and parsed as far as its ASCII part allows.
        if exc.start < len(head) - 4:
            return "text/plain" if _looks_like_legacy_text(head) else "application/octet-stream"
        text = head[: exc.start].decode("utf-8")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")) and stripped.rstrip().endswith(("}", "]")):
        return "application/json"
    return "text/plain"
