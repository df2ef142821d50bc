from django.apps import AppConfig
from django.urls import register_converter


class CoreConfig(AppConfig):
    name = "core"

    def ready(self) -> None:
        from core.ids import IdConverter

        # Registered once, before any URLconf is read: every `<id:…>` of the site is bounded.
        register_converter(IdConverter, "id")
