from django.apps import AppConfig


class QuestionnairesConfig(AppConfig):
    name = "questionnaires"
