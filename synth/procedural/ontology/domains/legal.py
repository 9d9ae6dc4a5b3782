"""Legal domains."""

from synth.procedural.ontology.schema import Domain

_AREAS = "litigation|corporate|family|ip|employment|real_estate"

DOMAINS = [
    Domain(
        id="case_management", sector="legal", title="Law firm matter management",
        description="Paralegals at a litigation firm open client matters, log attorneys' billable time, and "
                    "keep court deadlines from being missed.",
        actor="paralegal",
        entities=[
            dict(name="client", prefix="CL", fields=[
                "client_name:text label", "client_type:choice individual|corporation|nonprofit|government",
                "email:email unique", "phone:phone", "retainer_balance:money 0..100000 balance",
                "conflict_checked:bool"],
                states=["prospective", "active", "former"],
                transitions={"engage": "prospective>active", "end_engagement": "active>former",
                             "re_engage": "former>active"},
                words=["Halvorsen Marine Ltd", "Priya Raman", "Greenway Tenants Union", "Castillo Family Trust",
                       "Northbridge Software Inc.", "City of Fairview"]),
            dict(name="attorney", prefix="AT", fields=[
                "full_name:name label", "bar_number:code unique", f"practice_area:choice {_AREAS}",
                "hourly_rate:money 150..1200", "partner:bool"],
                states=["active", "on_leave"],
                transitions={"start_leave": "active>on_leave", "return_from_leave": "on_leave>active"}),
            dict(name="matter", prefix="MT", parent="client", refs=["attorney"], fields=[
                "matter_number:code label unique", "caption:text", f"practice_area:choice {_AREAS}",
                "forum:choice state_court|federal_court|arbitration|none", "opened_on:datetime",
                "limitations_date:datetime", "budget_cap:money 0..500000"],
                states=["intake", "open", "stayed", "settled", "closed", "declined"],
                transitions={"accept": "intake>open", "decline": "intake>declined", "stay": "open>stayed",
                             "lift_stay": "stayed>open", "settle": "open,stayed>settled",
                             "close": "open,settled>closed"}),
            dict(name="time_entry", plural="time_entries", prefix="TE", parent="matter", refs=["attorney"], fields=[
                "entry_code:code label unique", "hours:float 0.1..12",
                "activity:choice research|drafting|court|client_call|discovery|travel", "worked_on:datetime",
                "billable:bool", "narrative:text"],
                states=["draft", "submitted", "billed", "written_off"],
                transitions={"submit": "draft>submitted", "bill": "submitted>billed",
                             "write_off": "submitted>written_off"}),
            dict(name="court_deadline", prefix="DL", parent="matter", fields=[
                "event_title:text label", "due_at:datetime deadline",
                "kind:choice answer|discovery|motion|hearing|trial", "rule_citation:code", "reminder_days:int 1..30"],
                states=["upcoming", "extended", "met", "vacated"],
                transitions={"mark_met": "upcoming,extended>met", "extend": "upcoming>extended",
                             "vacate": "upcoming,extended>vacated"},
                words=["Answer to complaint", "Initial disclosures", "Opposition to motion to dismiss",
                       "Expert witness designation", "Pretrial conference", "Deposition of plaintiff"]),
        ],
    ),
    Domain(
        id="contract_lifecycle", sector="legal", title="Contract lifecycle management",
        description="In-house contract managers draft agreements from approved templates, negotiate redlines "
                    "with counterparties, route them for signature and track obligations.",
        actor="contract manager",
        entities=[
            dict(name="counterparty", prefix="CP", plural="counterparties", fields=[
                "legal_name:text label", "jurisdiction:choice delaware|new_york|england|germany|singapore",
                "registration_number:code unique", "contact_email:email", "risk_rating:choice low|medium|high",
                "signatory:name"],
                words=["Acme Logistics LLC", "Brightwave Software Inc.", "Nordhavn Shipping A/S", "Pioneer Foods Co.",
                       "Helios Energy GmbH", "Meridian Health Partners"]),
            dict(name="contract_template", prefix="TP", fields=[
                "template_name:text label", "contract_type:choice nda|msa|sow|dpa|lease|license",
                "template_code:code unique", "governing_law:choice delaware|new_york|england|germany|singapore",
                "fallback_clauses:int 0..40"],
                states=["draft", "approved", "retired"],
                transitions={"approve": "draft>approved", "retire": "approved>retired"},
                words=["Mutual NDA", "Master Services Agreement", "Statement of Work", "Data Processing Addendum",
                       "Software License Agreement", "Office Lease"]),
            dict(name="contract", prefix="CT", parent="counterparty", refs=["contract_template"], fields=[
                "contract_number:code label unique", "title:text", "total_value:money 0..5000000",
                "unbilled_value:money 0..5000000 balance", "effective_date:datetime", "expires_on:datetime deadline",
                "auto_renew:bool",
                "notice_days:int 0..180"],
                states=["drafting", "in_negotiation", "pending_signature", "executed", "terminated"],
                transitions={"send_for_negotiation": "drafting>in_negotiation",
                             "route_for_signature": "in_negotiation>pending_signature",
                             "revise": "pending_signature>in_negotiation", "execute": "pending_signature>executed",
                             "terminate": "executed>terminated"}),
            dict(name="redline", prefix="RL", parent="contract", fields=[
                "redline_code:code label unique",
                "clause:choice liability|indemnity|payment_terms|termination|confidentiality|ip_ownership",
                "proposed_by:choice us|counterparty", "risk:choice low|medium|high", "negotiation_round:int 1..10"],
                states=["proposed", "escalated", "accepted", "rejected"],
                transitions={"escalate": "proposed>escalated", "accept": "proposed,escalated>accepted",
                             "reject": "proposed,escalated>rejected"}),
            dict(name="obligation", prefix="OB", parent="contract", fields=[
                "obligation_title:text label", "responsible:name", "due_on:datetime deadline",
                "frequency:choice once|monthly|quarterly|annual", "penalty:money 0..100000"],
                states=["pending", "deferred", "fulfilled", "waived"],
                transitions={"defer": "pending>deferred", "fulfil": "pending,deferred>fulfilled",
                             "waive": "pending,deferred>waived"}),
        ],
    ),
]
