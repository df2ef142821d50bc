"""A request naming a host the site does not serve (a scanner, `HOST=0.0.0.0 make run` reached by
another name) is refused with the 400 page, never a 500: the middleware that refuses it runs
before the user is attached to the request, and the error page must render without one."""

import logging

import pytest


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/", "/api/v1/vendors/"])
def test_an_unknown_host_gets_the_400_page(client, path, caplog):
    with caplog.at_level(logging.CRITICAL, logger="django.security"):
        response = client.get(path, HTTP_HOST="192.0.2.2:8000")
    assert response.status_code == 400
    assert b"400" in response.content
