"""Web pages for members, one module per journey:

- `dashboard`: the dashboard and the vendors;
- `editing`: creating an assessment and editing its due date and the buyer's answers;
- `detail`: an assessment's overview, its progress, vendor links and rescoring;
- `findings`: findings, score and risk decisions;
- `review`: sign-off;
- `compare`: comparing scored assessments;
- `evidence`: evidence downloads.

Every view goes through `accounts.decorators.member_page` and fetches through the selectors,
so another organization's objects are 404 and a role without the capability gets 403. Writes
go through `assessments.services`; a refusal comes back beside the fields (`core.web`). What a
page shows is built by `assessments.presenters`, the same as the PDF.

Every page works as plain HTML forms; htmx (served locally by django-htmx) only re-renders
parts of a page.
"""
