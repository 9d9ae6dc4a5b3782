"""More legal domains (patent docketing)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="patent_docketing", sector="legal", title="Patent docketing",
        description="Docketing clerks at an IP law firm track clients' patent families and applications across "
                    "patent offices, calendar office-action response dates, and instruct annuity payments.",
        actor="patent docketing clerk",
        entities=[
            dict(name="ip_client", prefix="CL", fields=[
                "client_name:text label", "client_number:code unique", "billing_contact:email",
                "entity_size:choice large|small|micro", "annuity_instructions:choice pay_all|ask_first|let_lapse",
                "retainer_balance:money 0..200000 balance"],
                states=["active", "on_credit_hold", "departed"],
                transitions={"place_on_hold": "active>on_credit_hold", "release_hold": "on_credit_hold>active",
                             "close_relationship": "active,on_credit_hold>departed"},
                words=["Helix Biotherapeutics", "Quantara Semiconductors", "Brightwave Robotics",
                       "Ostrander Medical Devices", "Nimbus Battery Labs", "Fernhill Agritech"]),
            dict(name="patent_family", plural="patent_families", prefix="PF", parent="ip_client", fields=[
                "family_reference:code label unique", "invention_title:text",
                "technology:choice biotech|semiconductor|software|medical_device|battery|mechanical",
                "priority_date:datetime", "inventors:int 1..12", "responsible_attorney:name"]),
            dict(name="patent_application", prefix="PA", parent="patent_family", fields=[
                "application_number:code label unique", "office:choice uspto|epo|jpo|cnipa|wipo_pct|kipo",
                "filing_date:datetime", "claims_count:int 1..150", "next_statutory_date:datetime",
                "examiner:name", "publication_number:code"],
                states=["drafting", "filed", "under_examination", "allowed", "granted", "abandoned"],
                transitions={"file": "drafting>filed", "request_examination": "filed>under_examination",
                             "record_allowance": "under_examination>allowed", "record_grant": "allowed>granted",
                             "abandon": "filed,under_examination,allowed>abandoned"}),
            dict(name="office_action", prefix="OA", parent="patent_application", fields=[
                "action_code:code label unique",
                "action_kind:choice non_final_rejection|final_rejection|restriction|notice_of_allowance|search_report",
                "mailed_on:datetime", "response_due:datetime deadline", "extension_months:int 0..3",
                "rejected_claims:int 0..150"],
                states=["received", "response_drafting", "responded", "lapsed"],
                transitions={"start_response": "received>response_drafting",
                             "file_response": "response_drafting>responded",
                             "let_lapse": "received,response_drafting>lapsed"}),
            dict(name="annuity_payment", prefix="AN", parent="patent_application", fields=[
                "payment_reference:code label unique", "year_due:int 2..20", "official_fee:money 50..5000",
                "pay_by:datetime deadline", "surcharge:money 0..1500",
                "paid_through:choice direct|cpa_global|dennemeyer|local_associate"],
                states=["upcoming", "instructed", "paid", "lapsed"],
                transitions={"instruct": "upcoming>instructed", "pay": "instructed>paid",
                             "allow_lapse": "upcoming,instructed>lapsed"}),
        ],
    ),
]
