from argparse import ArgumentParser

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts.selectors import organization_by_name
from accounts.services import organization_create


class Command(BaseCommand):
    help = "Create an organization and, if needed, its owner (who gets an unusable password)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("name", help="Organization name (unique, regardless of case).")
        parser.add_argument(
            "--owner", required=True, metavar="EMAIL", help="Owner's email address."
        )

    def handle(self, *args: object, name: str, owner: str, **options: object) -> None:
        if organization_by_name(name=name) is not None:
            raise CommandError(f"An organization named {name.strip()!r} already exists.")
        try:
            organization = organization_create(name=name, owner_email=owner)
        except ValidationError as error:
            raise CommandError(_describe(error)) from error
        self.stdout.write(
            f"Created organization {organization.name!r} ({organization.slug}) "
            f"owned by {owner.strip().lower()}."
        )


def _describe(error: ValidationError) -> str:
    return " ".join(error.messages)
