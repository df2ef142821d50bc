from argparse import ArgumentParser

from django.core.management.base import BaseCommand, CommandError

from accounts.models import OrganizationKind
from accounts.selectors import organization_by_name
from accounts.services import organization_create
from core.errors import ServiceError


class Command(BaseCommand):
    help = "Create an organization and, if needed, its owner (who gets an unusable password)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("name", help="Organization name (unique, regardless of case).")
        parser.add_argument(
            "--owner", required=True, metavar="EMAIL", help="Owner's email address."
        )
        parser.add_argument(
            "--consultancy",
            action="store_true",
            help="A consultancy: its owners open client workspaces from the web.",
        )

    def handle(
        self, *args: object, name: str, owner: str, consultancy: bool, **options: object
    ) -> None:
        if organization_by_name(name=name) is not None:
            raise CommandError(f"An organization named {name.strip()!r} already exists.")
        try:
            organization = organization_create(
                name=name,
                owner_email=owner,
                kind=OrganizationKind.CONSULTANCY if consultancy else OrganizationKind.ORGANIZATION,
            )
        except ServiceError as error:
            raise CommandError(" ".join(error.messages)) from error
        kind_word = "consultancy" if organization.is_consultancy else "organization"
        self.stdout.write(
            f"Created {kind_word} {organization.name!r} ({organization.slug}) "
            f"owned by {owner.strip().lower()}."
        )
