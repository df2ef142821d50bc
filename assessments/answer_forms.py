"""The one form of catalogue questions: the buyer's section on the member pages and the vendor's
sections in the portal are the same form, limited to different sections.

Field names are the question codes (`comment-<code>` for a comment), ids `q-<code>`. A field
starts from the saved answer, or from the draft when one is kept (what was typed and not saved
yet, valid or not), and every value is checked by `questionnaires.validation.clean_answer`,
the function the API and the services use too. Which questions are asked (`show_if`) is decided
here, once per page, from the saved answers overlaid with whatever typed values are valid
(`CatalogueAnswersForm.hidden`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from django import forms
from django.utils.html import conditional_escape, format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from questionnaires.labels import shown_value, yes_no_labels
from questionnaires.spec import Question, QuestionnaireSpec, Section
from questionnaires.validation import (
    TEXT_MAX_LENGTH,
    clean_answer,
    hidden_codes,
    is_blank,
    visibility_for,
)

from .models import AnswerDraft
from .presenters.answers import answer_text, not_applicable_reason
from .presenters.evidence import EvidenceRow

REQUIRED_MESSAGE = _("This question is required.")
AUTO_ID = "q-%s"


def comment_name(code: str) -> str:
    return f"comment-{code}"


def with_code_spans(text: str) -> SafeString:
    """Catalogue text marks code with backticks (`max_total_num_tokens=`): show it as <code>.
    Every part is escaped; unbalanced backticks leave the text as it is."""
    parts = text.split("`")
    if len(parts) % 2 == 0:
        return conditional_escape(text)
    return format_html_join(
        "",
        "{}",
        (
            (format_html('<code translate="no">{}</code>', part) if index % 2 else part,)
            for index, part in enumerate(parts)
        ),
    )


class CodedChoices:
    """Radio buttons and checkboxes whose ids name the option (`q-PRF-07-yes`), so that a link
    to an answer survives a change in the order of the options."""

    def create_option(self, name: str, value: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        option = super().create_option(name, value, *args, **kwargs)  # type: ignore[misc]
        if option["attrs"].get("id"):  # the field's id, as `id_for_label` leaves it
            option["attrs"]["id"] = f"{option['attrs']['id']}-{value}"
        return option

    def id_for_label(self, id_: str, index: str | None = None) -> str:
        return id_  # the fieldset's legend labels the group


class CodedRadioSelect(CodedChoices, forms.RadioSelect):
    pass


class CodedCheckboxes(CodedChoices, forms.CheckboxSelectMultiple):
    pass


class DateInput(forms.DateInput):
    """The browser's date picker; the value is always sent as YYYY-MM-DD."""

    input_type = "date"

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs=attrs, format="%Y-%m-%d")


class AnswerField(forms.Field):
    """One catalogue question as a form field, checked by `clean_answer`.

    Never `required` at field level: whether a question is asked depends on the other answers
    (`show_if`), which `CatalogueAnswersForm.clean` decides.
    """

    def __init__(self, question: Question, language: str) -> None:
        self.question = question
        self.catalogue_required = question.required
        self.unit = question.unit_label.get(language) if question.unit_label else ""
        attrs: dict[str, Any] = {}
        if question.placeholder:
            attrs["placeholder"] = question.placeholder.get(language)
        widget: forms.Widget
        if question.type in ("yes_no", "choice", "multi_choice"):
            if question.type == "yes_no":
                labels = yes_no_labels(language)
                choices = [(code, labels[code]) for code in question.option_codes]
            else:
                choices = [(o.code, o.label.get(language)) for o in question.options]
            widget_class = CodedCheckboxes if question.type == "multi_choice" else CodedRadioSelect
            widget = widget_class(choices=choices)
        elif question.type == "integer":
            widget = forms.TextInput(
                attrs={**attrs, "inputmode": "numeric", "autocomplete": "off", "class": "number"}
            )
        elif question.type == "date":
            widget = DateInput(attrs=attrs)
        elif question.type == "text":
            widget = forms.Textarea(attrs={**attrs, "rows": 3, "maxlength": TEXT_MAX_LENGTH})
        else:  # version
            widget = forms.TextInput(
                attrs={**attrs, "autocomplete": "off", "spellcheck": "false", "maxlength": 64}
            )
        help_text = with_code_spans(question.help.get(language))
        if question.blank_means:
            help_text = format_html(
                "{} {}",
                help_text,
                _("Leave blank if: %(meaning)s.") % {"meaning": question.blank_means.get(language)},
            )
        super().__init__(
            required=False, label=question.text.get(language), help_text=help_text, widget=widget
        )

    def to_python(self, value: Any) -> Any:
        try:
            return clean_answer(self.question, value)
        except ValueError as exc:
            raise forms.ValidationError(str(exc.args[0]), code="invalid") from None

    def prepare_value(self, value: Any) -> Any:
        return shown_value(self.question, value)


def evidence_field(question: Question, language: str) -> forms.FileField:
    """A file question: the file chooser of its upload button (the file itself is handled by
    the upload, never by saving the page's answers)."""
    field = forms.FileField(
        required=False,
        label=question.text.get(language),
        widget=forms.FileInput(attrs={"id": f"q-{question.code}-file"}),
    )
    field.question = question  # type: ignore[attr-defined]  # named by its code in summaries
    return field


@dataclass
class QuestionRow:
    """One question of the form as a page shows it."""

    question: Question
    language: str
    answer: forms.BoundField | None = None  # None: not editable here (shown as text)
    comment: forms.BoundField | None = None
    not_applicable: str = ""  # why it is not asked, when `show_if` hides it
    display: str = ""  # the saved answer as text, for a question not editable here
    saved_comment: str = ""
    draft: bool = False  # what the field holds is a draft, not the saved answer
    errors: list[str] = field(default_factory=list)
    files: Sequence[EvidenceRow] = ()
    reopened: bool = False
    controls_visibility: bool = False

    @property
    def code(self) -> str:
        return self.question.code

    @property
    def type(self) -> str:
        return self.question.type

    @property
    def text(self) -> str:
        return self.question.text.get(self.language)

    @property
    def help(self) -> SafeString:
        return with_code_spans(self.question.help.get(self.language))

    @property
    def editable(self) -> bool:
        return self.answer is not None

    @property
    def produced_by_avia(self) -> bool:
        return self.question.produced_by_avia

    @property
    def use_fieldset(self) -> bool:
        return self.type in ("yes_no", "choice", "multi_choice")

    @property
    def describedby(self) -> str:
        ids = [f"q-{self.code}_helptext"]
        if self.question.unit_label is not None:
            ids.append(f"q-{self.code}-unit")
        if self.draft:
            ids.append(f"q-{self.code}-draft")
        if self.errors:
            ids.append(f"q-{self.code}_error")
        return " ".join(ids)

    @property
    def control(self) -> SafeString:
        """The input(s), linked to the help, unit, draft and error texts."""
        assert self.answer is not None
        attrs = {} if self.use_fieldset else {"aria-describedby": self.describedby}
        return self.answer.as_widget(attrs=attrs)

    @property
    def file_control(self) -> SafeString:
        """The file chooser of a file question, linked to its help, hint and errors."""
        assert self.answer is not None
        ids = [f"q-{self.code}_helptext", f"q-{self.code}-file-hint"]
        if self.errors:
            ids.append(f"q-{self.code}_error")
        return self.answer.as_widget(attrs={"aria-describedby": " ".join(ids)})

    @property
    def anchor_id(self) -> str:
        """Where an error summary link lands: the first control of the question."""
        if self.answer is None:
            return f"question-{self.code}"
        if self.use_fieldset and self.question.option_codes:
            return f"q-{self.code}-{self.question.option_codes[0]}"
        return f"q-{self.code}"


class CatalogueAnswersForm(forms.Form):
    """The questions of `section_codes` of a questionnaire, with a comment per question.

    `saved` and `saved_comments` are the assessment's answers; `drafts` what was typed and not
    saved yet; `editable` the codes the reader may change (None: all). With `require_answers`
    (the buyer's section, all answered at once), a blank required question is an error; the
    vendor saves a section at a time and submits at the end, when the services check.
    """

    def __init__(
        self,
        data: Any = None,
        *,
        questionnaire: QuestionnaireSpec,
        section_codes: Iterable[str],
        language: str,
        saved: Mapping[str, Any] | None = None,
        saved_comments: Mapping[str, str] | None = None,
        drafts: Mapping[str, AnswerDraft] | None = None,
        editable: Iterable[str] | None = None,
        require_answers: bool = False,
        files: Mapping[str, Sequence[EvidenceRow]] | None = None,
        reopened: Iterable[str] = (),
    ) -> None:
        self.questionnaire = questionnaire
        self.language = language
        self.saved = dict(saved or {})
        self.saved_comments = dict(saved_comments or {})
        self.drafts = dict(drafts or {})
        self.require_answers = require_answers
        self.evidence = files or {}
        self.reopened = set(reopened)
        wanted = set(section_codes)
        self.sections: list[Section] = [s for s in questionnaire.sections if s.code in wanted]
        # Evidence AVIA produces (the probe's result) is never answered or uploaded here.
        codes = {q.code for s in self.sections for q in s.questions if not q.produced_by_avia}
        self.editable_codes = codes if editable is None else codes & set(editable)
        initial = {}
        for code in self.editable_codes:
            question = questionnaire.questions[code]
            draft = self.drafts.get(code)
            if question.type != "file":
                initial[code] = (
                    draft.value if draft else shown_value(question, self.saved.get(code))
                )
            initial[comment_name(code)] = (
                draft.comment if draft else self.saved_comments.get(code, "")
            )
        super().__init__(data, initial=initial, auto_id=AUTO_ID)
        for section in self.sections:
            for question in section.questions:
                if question.code not in self.editable_codes:
                    continue
                self.fields[question.code] = (
                    evidence_field(question, language)
                    if question.type == "file"
                    else AnswerField(question, language)
                )
                self.fields[comment_name(question.code)] = forms.CharField(
                    label=_("Comment (optional)"),
                    required=False,
                    max_length=TEXT_MAX_LENGTH,
                    widget=forms.Textarea(attrs={"rows": 2}),
                )

    # -- what was typed ----------------------------------------------------------------------

    @property
    def question_codes(self) -> list[str]:
        return [name for name, f in self.fields.items() if isinstance(f, AnswerField)]

    def typed(self) -> dict[str, Any]:
        """Every answer field as typed (or as it starts), raw: for drafts and visibility."""
        return {code: self[code].value() for code in self.question_codes}

    def typed_comments(self) -> dict[str, str]:
        return {
            code: str(self[comment_name(code)].value() or "")
            for code in self.editable_codes
            if comment_name(code) in self.fields
        }

    @cached_property
    def hidden(self) -> set[str]:
        """Questions whose `show_if` is false, given `visible_values`."""
        return hidden_codes(self.questionnaire, self.visible_values)

    @cached_property
    def visible_values(self) -> dict[str, Any]:
        """The saved answers overlaid with every typed value that is valid (a value being typed
        that is not valid yet changes nothing)."""
        merged = dict(self.saved)
        for code, raw in self.typed().items():
            try:
                merged[code] = clean_answer(self.questionnaire.questions[code], raw)
            except ValueError:
                pass
        return merged

    # -- validation --------------------------------------------------------------------------

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        hidden = self.hidden
        for code in self.question_codes:
            if code in hidden:
                # Not asked, given the other answers: neither required nor saved. Its saved
                # answer stays as it was: ignored by scoring, back if the choice is undone.
                self.errors.pop(code, None)
                cleaned.pop(code, None)
                cleaned.pop(comment_name(code), None)
                continue
            if (
                self.require_answers
                and self.questionnaire.questions[code].required
                and code not in self.errors
                and is_blank(cleaned.get(code))
            ):
                self.add_error(code, forms.ValidationError(REQUIRED_MESSAGE, code="required"))
        return cleaned

    def answers(self) -> dict[str, Any]:
        """Answers to save, keyed by question code (a blank clears a saved answer; the services
        leave unchanged ones alone)."""
        return {
            code: self.cleaned_data[code]
            for code in self.question_codes
            if code in self.cleaned_data
            and not (is_blank(self.cleaned_data[code]) and self.saved.get(code) is None)
        }

    def comments(self) -> dict[str, str]:
        return {
            code: self.cleaned_data[comment_name(code)].strip()
            for code in self.editable_codes
            if comment_name(code) in self.cleaned_data
            and code not in self.hidden
            and (self.cleaned_data[comment_name(code)].strip() or self.saved_comments.get(code))
        }

    # -- what a page shows -------------------------------------------------------------------

    def rows(self, section: Section | None = None) -> list[QuestionRow]:
        """Every question of the form's sections (or of one), in order, with its state."""
        controlling = controlling_codes(self.questionnaire)
        rows = []
        for each in [section] if section is not None else self.sections:
            for question in each.questions:
                rows.append(self._row(question, controlling))
        return rows

    def _row(self, question: Question, controlling: set[str]) -> QuestionRow:
        code = question.code
        row = QuestionRow(
            question=question,
            language=self.language,
            files=self.evidence.get(code, ()),
            reopened=code in self.reopened,
            controls_visibility=code in controlling,
            saved_comment=self.saved_comments.get(code, ""),
        )
        if code in self.hidden:
            row.not_applicable = not_applicable_reason(
                self.questionnaire, code, self.visible_values, self.language
            )
            return row
        if code not in self.editable_codes:
            row.display = answer_text(question, self.saved.get(code), self.language)
            return row
        row.answer = self[code]
        row.comment = self[comment_name(code)]
        row.draft = code in self.drafts
        if self.is_bound and self._errors is not None:  # checked (a bound form may not be)
            row.errors = [str(e) for e in self.errors.get(code, [])]
        elif row.draft and row.answer is not None:
            # A draft is shown with what is wrong with it, so the reader can fix it before
            # saving; nothing was refused yet.
            try:
                clean_answer(question, self.drafts[code].value)
            except ValueError as exc:
                row.errors = [str(exc.args[0])]
        return row


def controlling_codes(spec: QuestionnaireSpec) -> set[str]:
    """Codes that some `show_if` reads: changing them may show or hide other questions."""
    by_identifier = {q.identifier: q.code for q in spec.iter_questions()}
    visibility = visibility_for(spec)
    return {
        by_identifier[name]
        for question in spec.iter_questions()
        if question.show_if
        for name in visibility.reads(question.code)
        if name in by_identifier
    }
