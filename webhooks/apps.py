from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "webhooks"

    def ready(self) -> None:
        # The services queue the delivery task by name (`core.queueing.publish`); registering
        # it here lets every process that loads Django send it, eager tests included.
        from . import tasks  # noqa: F401, PLC0415
