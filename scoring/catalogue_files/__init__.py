"""A catalogue uploaded by an organization: read, bounded and checked before anything is saved.

Uploaded content is hostile until checked. The steps are separate modules, each one idea:

- `reading`: the file read with YAML's safe loader, keeping each entry's line, refusing anchors
  and aliases (a small file could expand into a huge one), held to `questionnaires.bounds`;
- `checking`: the document's shape, entry by entry (questionnaire, sections, questions,
  options, frameworks, ruleset, rules), using the checks of one value in `value_checks`;
- `compiling`: the checked content parsed and compiled by the same code as the shipped
  catalogue (`parse_questionnaire`, `parse_ruleset`, `CompiledRuleset`);
- `problems`: what is wrong, each problem with the file, the line, the code (question, option,
  section or rule) and what is wrong, in the reader's language;
- `document`: what reading gives (a YAML file here, a spreadsheet in `spreadsheets`): the data
  and where each entry is.

The document's shape (docs/catalogue-format.md, "Uploading a catalogue"):

    questionnaire: {...}   # a questionnaire version, as in questionnaires/catalog/ (optional
                           # when the ruleset scores a questionnaire already published)
    ruleset: {...}         # a ruleset version, as in scoring/catalog/
    frameworks: [...]      # optional: the organization's own framework references

No ORM: the caller passes what the owner already has (`owned_questionnaires`).
"""
