"""The vendor portal: a vendor contact answers one assessment through a private link, without
an account.

Every view goes through `portal_view`, which resolves the token (counting failed attempts per
client IP), renders in the contact's language and hands the view the link. Everything a URL
names after the token — a section, an evidence file — is looked up within `link.assessment`, and
whatever is not found (token, section, file) gets the same 404 page, so nothing can be probed.
The buyer's sections (`answered_by: buyer`), findings and scores never reach these pages.

Plain form posts are the whole interface; htmx, where it loads, only re-renders parts of a page
(conditional questions while answering, the evidence list after an upload).

One module per part: `access` (the token, `portal_view`, the `Portal` every view receives),
`common` (what every page shares), `pages` (landing, review, thanks, configuration change,
language) and `sections` (a section's form, autosave and evidence). Import each from its module.
"""
