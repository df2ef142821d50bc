"""A questionnaire from any .xlsx with one question per row (issue 24, "Spreadsheets in").

Three steps, no ORM, each step its own modules:

1. `tables`: the upload opened the one way AVIA opens a workbook it did not write
   (`spreadsheets.reading.opened_workbook`: size, zip-bomb and XML-entity defences, formulas
   never evaluated), each visible sheet's cells kept with their row numbers, within bounds.
2. `presets` and `mapping`: which column holds which field — a preset's headers (the Cloud
   Security Alliance's CAIQ v4 and AI-CAIQ layouts, AVIA's own questionnaire workbook), else
   the headers' names. The person confirms or changes it on the mapping screen.
3. `document`: the rows turned into a questionnaire document in the shape of
   docs/catalogue-format.md, with a starter ruleset (`starter_rules`), or `WorkbookInvalid`
   with every bad row (sheet, row, column, code, reason, in the active language): all or
   nothing. A row is read by `rows` (its cells, text and problems), becomes a question in
   `questions` (code, texts, section), with its type, options and "required" from
   `answer_types`.

A formula in a cell is refused, never evaluated and never read as text: its text ("=A1&B1")
is not what the author meant the question to say, and AVIA does not calculate formulas (as
the answer workbook's import refuses them). Standard questionnaires are licensed: AVIA knows
their column headers only, never their questions.
"""
