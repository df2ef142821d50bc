from argparse import ArgumentParser

from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from accounts.selectors import memberships_for_user, organization_by_name
from accounts.services import api_token_create
from core.errors import ServiceError


class Command(BaseCommand):
    help = (
        "Create a personal API token for a user and print it on stdout: one line, nothing "
        "else. --organization is needed when the user belongs to several organizations."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("email", help="The token's user.")
        parser.add_argument(
            "--organization", metavar="NAME", help="The organization the token acts in."
        )
        parser.add_argument(
            "--name", default="Command line", help="A label shown in the token list."
        )

    def handle(
        self,
        *args: object,
        email: str,
        organization: str | None,
        name: str,
        **options: object,
    ) -> None:
        user = User.objects.filter(email=email.strip().lower()).first()
        if user is None:
            raise CommandError(f"No user with the email address {email!r}.")
        if not user.is_active:
            raise CommandError(f"The user {user.email} is inactive.")
        memberships = list(memberships_for_user(user=user))
        if organization is not None:
            target = organization_by_name(name=organization)
            if target is None:
                raise CommandError(f"No organization named {organization!r}.")
            if not any(m.organization_id == target.pk for m in memberships):
                raise CommandError(f"{user.email} is not a member of {target.name!r}.")
        elif not memberships:
            raise CommandError(f"{user.email} is not a member of any organization.")
        elif len(memberships) > 1:
            names = ", ".join(repr(m.organization.name) for m in memberships)
            raise CommandError(
                f"{user.email} belongs to several organizations ({names}); "
                "choose one with --organization NAME."
            )
        else:
            target = memberships[0].organization
        try:
            _token, key = api_token_create(user=user, organization=target, name=name)
        except ServiceError as error:
            raise CommandError(" ".join(error.messages)) from error
        # The contract: the key alone, on one line, so scripts can capture it.
        self.stdout.write(key)
