"""The PDF report's own headings and sentences, in English and Traditional Chinese (Hong Kong
usage); what the report shows of an assessment — answers, findings and their evidence, dates,
severity and decision names — comes from the shared presenters (`assessments.presenters`), the
same words as the web pages.

Chinese terms follow the glossary (`glossary.md` of the shared spec): 發現事項, 佐證資料, 風險級別,
詞元, 快取, 簽核... A test checks that both languages have exactly the same keys.
"""

from __future__ import annotations

from collections.abc import Mapping

LANGUAGES = ("en", "zh-hant")

# The lang attribute of the PDF's <html> element (and thus the PDF's /Lang entry).
HTML_LANG = {"en": "en", "zh-hant": "zh-Hant-HK"}

LABELS: Mapping[str, Mapping[str, str]] = {
    "en": {
        "report_title": "AI inference vendor isolation assessment",
        "report_subtitle": "Procurement report",
        "report_number": "Report number",
        "vendor": "Vendor",
        "assessment": "Assessment",
        "client": "Client organization",
        "prepared_by": "Prepared by",
        "date": "Date",
        "language": "Edition",
        "language_name": "English",
        "english_only": "The questionnaire is written in English only; its texts are in English.",
        "questionnaire": "Questionnaire",
        "ruleset": "Ruleset",
        "scoring_run": "Scoring run",
        "scored_as_of": "Scored as of",
        "submitted_at": "Submitted",
        "assessor": "Assessor",
        "confidential": "Confidential: prepared for procurement decision-making.",
        "contents": "Contents",
        "executive_summary": "Executive summary",
        "findings": "Findings",
        "evidence": "Evidence",
        "answers_appendix": "Appendix: questionnaire answers",
        "threads_appendix": "Appendix: questions to the vendor",
        "threads_intro": (
            "The clarification threads between the assessors and the vendor about the answers, "
            "as they stood when this report was generated."
        ),
        "no_threads": "No question was asked to the vendor.",
        "thread_open": "open",
        "thread_resolved": "resolved",
        "thread_vendor": "Vendor contact {email}",
        "sign_off": "Sign-off",
        "risk_tier": "Risk tier",
        "risk_score": "Risk score",
        "formula_heading": "How the score is calculated",
        "formula": (
            "Points per fired rule: critical 40, high 15, medium 5, low 1. "
            "Risk score = min(100, sum of points), an integer; 0 means nothing was found. "
            "Risk tier: critical if any critical rule fired; else high if any high rule fired "
            "or the score is at least 30; else medium if the score is at least 10; else low."
        ),
        "coverage_explained": (
            "Coverage of a section is the share of that section's rules that did not fire "
            "(100% = nothing found in the section)."
        ),
        "findings_by_severity": "Findings by severity",
        "coverage_by_section": "Coverage per section",
        "critical_and_high": "Critical and high findings",
        "no_critical_or_high": "No critical or high finding.",
        "findings_count": "Findings",
        "point": "point",
        "points": "points",
        "decision_heading": "Reviewer's decision",
        "no_decision": "No reviewer has decided on this scoring run yet.",
        "reviewer": "Reviewer",
        "decided_at": "Decided",
        "conditions": "Conditions",
        "no_findings": "No rule fired: no findings.",
        "section": "Section",
        "why_fired": "Why it fired",
        "incident_fact": "Incident fact it rests on",
        "rationale": "Rationale",  # an organization's own questionnaire: no incident behind it
        "remediation": "Remediation",
        "references": "Framework references",
        "as_summarised_note": " (as summarised)",
        "confidence_note": (
            "References marked “as summarised” are cited from reputable secondary sources "
            "(law firms, transcriptions), not from the primary text."
        ),
        "risk_decisions": "Risk decisions",
        "decision_owner": "Owner",
        "expires_on": "Expires",
        "expired": "(expired)",
        "evidence_intro": (
            "Startup logs of the vendor's inference engine, as parsed when this run was scored. "
            "The numbers come from the engine's own log lines, quoted exactly below."
        ),
        "no_evidence": "No evidence files were submitted for this run.",
        "probe": "Isolation probe",
        "probe_intro": (
            "AVIA tested the vendor's test endpoint itself, with two test tenants' keys and the "
            "vendor's signed authorisation, for the three behaviours behind the incident. These "
            "are the figures of the probe result this run read (PRB-02), not the vendor's word."
        ),
        "file": "File",
        "engine": "Inference engine",
        "kv_pool": "KV cache pool",
        "context_length": "Context length",
        "instance": "Engine instance",
        "notes": "Notes",
        "smallest_pool": "Smallest KV cache pool over all logs",
        "largest_context": "Largest context length over all logs",
        "answers_intro": (
            "Every question of the questionnaire with the answer scored in this run, and the "
            "comment given with it. Section {buyer} is answered by the buyer and never shown "
            "to the vendor."
        ),
        "comment": "Comment",
        "sign_off_intro": (
            "This report reproduces scoring run {run} exactly as it was scored: its findings, "
            "answers, evidence and ruleset version."
        ),
        "name": "Name",
        "signature": "Signature",
        "role_procurement": "Procurement lead",
        "role_compliance": "Compliance officer",
        "verification_heading": "Verifying this report",
        "verification": (
            "AVIA records the SHA-256 checksum of this PDF file when it is generated. Any member "
            "of {organization} can upload the file on AVIA's report verification page to confirm "
            "that it is an unaltered AVIA report, and to see which assessment and ruleset it "
            "came from."
        ),
        "generated_at": "Generated",
        "page_x_of_y_before": "Page ",
        "page_x_of_y_middle": " of ",
        "page_x_of_y_after": "",
        "overview_title": "Overview across clients",
        "overview_kicker": "The consultancy's clients",
        "overview_note": (
            "Each client's figures, counted on its own clock: its vendors by risk tier, its open "
            "findings by severity, and its overdue and due-soon items. Only clients whose "
            "engagement is active are listed; no vendor, answer or evidence is named."
        ),
        "clients_heading": "Clients",
        "client_count": "Clients",
        "no_clients": "The consultancy has no active client engagement.",
        "vendors_by_tier": "Vendors by risk tier",
        "findings_and_deadlines": "Open findings and deadlines",
        "overdue_count": "Overdue",
        "due_soon_count": "Due soon",
        "severity": "Severity",
        "portfolio_title": "Vendor portfolio report",
        "portfolio_kicker": "Across the organization's vendors",
        "as_of": "As of",
        "vendor_count": "Vendors",
        "tier_distribution": "Vendors by risk tier",
        "tier_distribution_note": (
            "Each vendor counts once, with the risk tier of its newest scored assessment."
        ),
        "not_scored": "Not scored",
        "open_findings": "Open findings by severity",
        "open_findings_note": (
            "The findings of each vendor's newest scored assessment. A risk decision is shown "
            "beside a finding and does not close it; a later scoring that no longer fires the "
            "rule does."
        ),
        "open_findings_count": "Open findings",
        "count": "Count",
        "current_assessment": "Current assessment",
        "next_assessment": "Next assessment",
        "decisions_heading": "Decisions and their expiries",
        "sign_offs": "Sign-offs",
        "no_sign_offs": "No current result has been signed off.",
        "no_risk_decisions": "No risk acceptance or mitigation is recorded on the current results.",
        "decision": "Decision",
        "rule": "Rule",
        "kind": "Kind",
        "state": "State",
        "expiring_soon": "(expiring soon)",
        "deadlines_heading": "Overdue and due soon",
        "overdue_heading": "Overdue",
        "due_soon_heading": "Due within {days} days",
        "no_overdue": "Nothing is overdue.",
        "no_due_soon": "Nothing falls due soon.",
        "what_is_due": "What is due",
        "answers_due": "The vendor's answers",
        "reassessment_due": "The next assessment",
        "due_on": "Due",
        "changes_heading": "Changes since the previous report",
        "changes_intro": "Compared with portfolio report {number} of {date}.",
        "first_report": (
            "This is the organization's first portfolio report: there is no earlier one to "
            "compare with."
        ),
        "no_changes": "Nothing changed.",
        "tiers_changed": "Risk tiers changed",
        "tier_change": "from {before} to {after}",
        "vendors_added": "Vendors added",
        "vendors_removed": "Vendors removed",
        "findings_opened": "Findings opened",
        "findings_closed": "Findings closed",
        "none": "None.",
        "verification_portfolio": (
            "AVIA records the SHA-256 checksum of this PDF file when it is generated. Any member "
            "of {organization} can upload the file on AVIA's report verification page to confirm "
            "that it is an unaltered AVIA portfolio report."
        ),
        "colon": ": ",
        "generator": "AVIA",
    },
    "zh-hant": {
        "report_title": "AI 推論服務供應商租戶隔離評估",
        "report_subtitle": "採購報告",
        "report_number": "報告編號",
        "vendor": "供應商",
        "assessment": "評估",
        "client": "委託機構",
        "prepared_by": "編製機構",
        "date": "日期",
        "language": "版本",
        "language_name": "繁體中文",
        "english_only": "此問卷只有英文版本，問卷內容以英文顯示。",
        "questionnaire": "問卷",
        "ruleset": "規則集",
        "scoring_run": "評分紀錄",
        "scored_as_of": "評分基準日",
        "submitted_at": "提交日期",
        "assessor": "評估人",
        "confidential": "機密文件：供採購決策之用。",
        "contents": "目錄",
        "executive_summary": "執行摘要",
        "findings": "發現事項",
        "evidence": "佐證資料",
        "answers_appendix": "附錄：問卷答案",
        "threads_appendix": "附錄：向供應商的提問",
        "threads_intro": "評估人與供應商就答案進行的提問討論，內容以本報告產生時為準。",
        "no_threads": "未有向供應商提出任何提問。",
        "thread_open": "未解決",
        "thread_resolved": "已解決",
        "thread_vendor": "供應商聯絡人 {email}",
        "sign_off": "簽核",
        "risk_tier": "風險級別",
        "risk_score": "風險分數",
        "formula_heading": "風險分數的計算方法",
        "formula": (
            "每項觸發的規則按嚴重程度計分：嚴重 40 分、高 15 分、中 5 分、低 1 分。"
            "風險分數 = min(100, 分數總和)，為整數；0 分表示沒有發現事項。"
            "風險級別：如有任何嚴重規則觸發，為「嚴重」；否則如有任何高規則觸發或分數不少於 30，"
            "為「高」；否則如分數不少於 10，為「中」；其餘為「低」。"
        ),
        "coverage_explained": (
            "某部分的覆蓋率，指該部分規則中未有觸發的比例（100% 表示該部分沒有發現事項）。"
        ),
        "findings_by_severity": "按嚴重程度劃分的發現事項",
        "coverage_by_section": "各部分覆蓋率",
        "critical_and_high": "嚴重及高風險發現事項",
        "no_critical_or_high": "沒有嚴重或高風險發現事項。",
        "findings_count": "發現事項",
        "point": "分",
        "points": "分",
        "decision_heading": "審閱人決定",
        "no_decision": "審閱人尚未就此評分紀錄作出決定。",
        "reviewer": "審閱人",
        "decided_at": "決定日期",
        "conditions": "條件",
        "no_findings": "沒有規則觸發：並無發現事項。",
        "section": "部分",
        "why_fired": "觸發原因",
        "incident_fact": "所依據的事故事實",
        "rationale": "理據",
        "remediation": "修復",
        "references": "框架參考",
        "as_summarised_note": "（按二手資料概述）",
        "confidence_note": (
            "標示「按二手資料概述」的參考出自可靠的二手資料（律師事務所評論、轉錄本等），而非原始條文。"
        ),
        "risk_decisions": "風險決定",
        "decision_owner": "負責人",
        "expires_on": "屆滿日期",
        "expired": "（已屆滿）",
        "evidence_intro": (
            "以下為供應商推論引擎的啟動日誌，按本次評分時的解析結果列出。"
            "有關數字均取自引擎本身的日誌行，並於下方逐字引錄。"
        ),
        "no_evidence": "本次評分沒有提交佐證資料檔案。",
        "probe": "隔離探測",
        "probe_intro": (
            "AVIA 以兩個測試租戶的金鑰，並在供應商已簽署的授權下，直接測試供應商的測試端點，"
            "檢查事故背後的三種行為。以下為本次評分所讀取的探測結果（PRB-02）的數據，"
            "並非供應商自述。"
        ),
        "file": "檔案",
        "engine": "推論引擎",
        "kv_pool": "KV 快取池",
        "context_length": "上下文長度",
        "instance": "引擎實例",
        "notes": "備註",
        "smallest_pool": "所有日誌中最小的 KV 快取池",
        "largest_context": "所有日誌中最大的上下文長度",
        "answers_intro": (
            "以下列出問卷每條問題在本次評分中採用的答案及所附備註。"
            "{buyer} 部分由採購方填寫，不會向供應商顯示。"
        ),
        "comment": "備註",
        "sign_off_intro": (
            "本報告按評分紀錄 {run} 的原貌重現：其發現事項、答案、佐證資料及規則集版本均與評分時相同。"
        ),
        "name": "姓名",
        "signature": "簽署",
        "role_procurement": "採購負責人",
        "role_compliance": "合規主任",
        "verification_heading": "核實本報告",
        "verification": (
            "AVIA 在產生本 PDF 檔案時已記錄其 SHA-256 校驗和。{organization}的任何成員均可在"
            " AVIA 的報告核實頁面上載本檔案，以確認其為未經改動的 AVIA 報告，並查看其所屬的評估及規則集。"
        ),
        "generated_at": "產生時間",
        "page_x_of_y_before": "第 ",
        "page_x_of_y_middle": " 頁，共 ",
        "page_x_of_y_after": " 頁",
        "overview_title": "各客戶概覽",
        "overview_kicker": "顧問機構的客戶",
        "overview_note": (
            "以下為各客戶按其本身時區計算的數字：按風險級別劃分的供應商、按嚴重程度劃分的未解決"
            "發現事項，以及已逾期和即將截止的項目。只列出委聘仍然有效的客戶；不會列出任何供應商、"
            "答案或佐證資料的名稱。"
        ),
        "clients_heading": "客戶",
        "client_count": "客戶",
        "no_clients": "本顧問機構沒有仍然有效的客戶委聘。",
        "vendors_by_tier": "按風險級別劃分的供應商",
        "findings_and_deadlines": "未解決發現事項及期限",
        "overdue_count": "已逾期",
        "due_soon_count": "即將截止",
        "severity": "嚴重程度",
        "portfolio_title": "供應商組合報告",
        "portfolio_kicker": "涵蓋機構的所有供應商",
        "as_of": "截至",
        "vendor_count": "供應商",
        "tier_distribution": "按風險級別劃分的供應商",
        "tier_distribution_note": "每個供應商只計算一次，以其最新已評分評估的風險級別為準。",
        "not_scored": "未評分",
        "open_findings": "按嚴重程度劃分的未解決發現事項",
        "open_findings_note": (
            "即每個供應商最新已評分評估的發現事項。風險決定只與發現事項並列顯示，不會令其結束；"
            "其後的評分不再觸發有關規則，發現事項才會結束。"
        ),
        "open_findings_count": "未解決發現事項",
        "count": "數目",
        "current_assessment": "現行評估",
        "next_assessment": "下次評估",
        "decisions_heading": "決定及其屆滿日期",
        "sign_offs": "簽核",
        "no_sign_offs": "現行結果均未經簽核。",
        "no_risk_decisions": "現行結果沒有記錄任何風險接受或緩解措施。",
        "decision": "決定",
        "rule": "規則",
        "kind": "類別",
        "state": "狀態",
        "expiring_soon": "（即將屆滿）",
        "deadlines_heading": "已逾期及即將截止",
        "overdue_heading": "已逾期",
        "due_soon_heading": "{days} 日內截止",
        "no_overdue": "沒有已逾期的項目。",
        "no_due_soon": "沒有即將截止的項目。",
        "what_is_due": "到期事項",
        "answers_due": "供應商的答案",
        "reassessment_due": "下次評估",
        "due_on": "截止日期",
        "changes_heading": "自上一份報告以來的變化",
        "changes_intro": "與 {date} 的組合報告 {number} 比較。",
        "first_report": "這是本機構的第一份組合報告，沒有較早的報告可供比較。",
        "no_changes": "沒有變化。",
        "tiers_changed": "風險級別的變化",
        "tier_change": "由{before}變為{after}",
        "vendors_added": "新增的供應商",
        "vendors_removed": "移除的供應商",
        "findings_opened": "新出現的發現事項",
        "findings_closed": "已結束的發現事項",
        "none": "沒有。",
        "verification_portfolio": (
            "AVIA 在產生本 PDF 檔案時已記錄其 SHA-256 校驗和。{organization}的任何成員均可在"
            " AVIA 的報告核實頁面上載本檔案，以確認其為未經改動的 AVIA 組合報告。"
        ),
        "colon": "：",
        "generator": "AVIA",
    },
}


def labels_for(language: str) -> Mapping[str, str]:
    """The labels of one edition; an unknown language is a programming error."""
    return LABELS[language]
