from django.apps import AppConfig


class SpreadsheetsConfig(AppConfig):
    name = "spreadsheets"
