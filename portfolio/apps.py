from django.apps import AppConfig


class PortfolioConfig(AppConfig):
    name = "portfolio"
