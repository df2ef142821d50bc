"""A mail server that refuses every message, for the outbox's retry tests."""

import smtplib

from django.core.mail.backends.base import BaseEmailBackend


class RefusingBackend(BaseEmailBackend):
    def send_messages(self, email_messages):
        raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")
