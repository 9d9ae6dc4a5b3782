"""Government domains."""

from synth.procedural.ontology.schema import Domain

_COUNTIES = "alameda|marin|napa|solano|sonoma"

DOMAINS = [
    Domain(
        id="permit_office", sector="government", title="Building permit office",
        description="Plan reviewers at a city building department take in permit applications for land "
                    "parcels, review and issue permits, and schedule site inspections.",
        actor="permit technician",
        entities=[
            dict(name="applicant", prefix="AP", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "contractor_license:code",
                "applicant_type:choice homeowner|contractor|architect|developer"]),
            dict(name="land_parcel", prefix="PR", fields=[
                "address:text label", "parcel_number:code unique",
                "zoning:choice r1|r2|commercial|industrial|mixed_use", "lot_area_sqft:int 1000..200000",
                "historic_district:bool", "flood_zone:bool"],
                words=["118 Elm Street", "4402 Harbor Blvd", "27 Quarry Road", "900 Main St Unit 3",
                       "61 Orchard Lane", "1500 Industrial Pkwy"]),
            dict(name="inspector", prefix="IS", fields=[
                "full_name:name label", "badge:code unique",
                "discipline:choice building|electrical|plumbing|mechanical|fire",
                "district:choice north|south|east|west|central", "daily_limit:int 4..12"],
                states=["active", "on_leave"],
                transitions={"start_leave": "active>on_leave", "return_from_leave": "on_leave>active"}),
            dict(name="permit_application", prefix="PA", parent="land_parcel", refs=["applicant"], fields=[
                "permit_number:code label unique",
                "work_type:choice new_build|addition|renovation|demolition|electrical|plumbing",
                "valuation:money 1000..5000000", "fee_due:money 0..25000 balance", "submitted_at:datetime",
                "expires_at:datetime deadline", "max_inspections:int 1..12 capacity"],
                states=["submitted", "under_review", "corrections_required", "approved", "denied", "issued"],
                transitions={"start_review": "submitted>under_review",
                             "request_corrections": "under_review>corrections_required",
                             "resubmit": "corrections_required>under_review", "approve": "under_review>approved",
                             "deny": "under_review>denied", "issue": "approved>issued"}),
            dict(name="site_inspection", prefix="IN", parent="permit_application", refs=["inspector"], fields=[
                "inspection_code:code label unique",
                "inspection_type:choice footing|framing|electrical|plumbing|final", "scheduled_for:datetime",
                "time_window:choice am|pm", "reinspection:bool", "deficiencies:int 0..20"],
                states=["scheduled", "passed", "failed", "cancelled"],
                transitions={"pass": "scheduled>passed", "fail": "scheduled>failed",
                             "cancel": "scheduled>cancelled"}),
        ],
    ),
    Domain(
        id="vehicle_registration", sector="government", title="Motor vehicle registration",
        description="Clerks at a state motor vehicle office register vehicles to their owners, issue and "
                    "suspend plates, record title liens and log emissions tests.",
        actor="DMV clerk",
        entities=[
            dict(name="vehicle_owner", prefix="OW", fields=[
                "full_name:name label", "license_number:code unique", "email:email", "phone:phone",
                "owner_type:choice individual|business|government", f"county:choice {_COUNTIES}",
                "unpaid_fines:money 0..5000 balance"]),
            dict(name="vehicle", prefix="VH", parent="vehicle_owner", fields=[
                "vin:code label unique", "make_model:text", "model_year:int 1990..2025",
                "fuel:choice gasoline|diesel|hybrid|electric", "gross_weight_kg:int 800..12000",
                "color:choice black|white|silver|red|blue|green"],
                states=["active", "salvage", "junked"],
                transitions={"brand_salvage": "active>salvage", "junk": "active,salvage>junked"}),
            dict(name="registration", prefix="RG", parent="vehicle", fields=[
                "plate_number:code label unique", "registered_on:datetime", "expires_on:datetime deadline",
                "fee_paid:money 20..900", "plate_type:choice standard|vanity|disabled|commercial|historic",
                f"county:choice {_COUNTIES}"],
                states=["pending", "active", "suspended", "cancelled"],
                transitions={"issue": "pending>active", "suspend": "active>suspended",
                             "reinstate": "suspended>active", "cancel": "pending,active,suspended>cancelled"},
                words=["7ABC123", "8XYZ442", "GOBEARS", "4TRK981", "6MNP305", "DRVSAFE"]),
            dict(name="vehicle_title", prefix="TT", parent="vehicle", refs=["vehicle_owner"], fields=[
                "title_number:code label unique", "issued_on:datetime", "lienholder:text",
                "odometer_miles:int 0..400000", "brand:choice clean|salvage|rebuilt|flood",
                "transfer_fee:money 0..150"],
                states=["issued", "lien_recorded", "transferred"],
                transitions={"record_lien": "issued>lien_recorded", "release_lien": "lien_recorded>issued",
                             "transfer": "issued>transferred"}),
            dict(name="emissions_test", prefix="ET", parent="vehicle", fields=[
                "certificate_number:code label unique", "tested_on:datetime", "hc_ppm:int 0..1200",
                "co_pct:float 0..5", "station_code:code", "test_method:choice obd|idle|dyno"],
                states=["recorded", "passed", "failed", "waived"],
                transitions={"certify_pass": "recorded>passed", "certify_fail": "recorded>failed",
                             "grant_waiver": "failed>waived"}),
        ],
    ),
    Domain(
        id="tax_filing", sector="government", title="Individual tax returns",
        description="Revenue agency examiners process individual income tax returns, match reported income "
                    "documents, record payments, and open or close audits.",
        actor="tax examiner",
        entities=[
            dict(name="taxpayer", prefix="TP", fields=[
                "full_name:name label", "tin:code unique", "email:email",
                "filing_status:choice single|married_joint|married_separate|head_of_household",
                "dependents:int 0..8", "credit_carryforward:money 0..20000 balance"]),
            dict(name="preparer", prefix="PR", fields=[
                "full_name:name label", "ptin:code unique", "firm:text",
                "credential:choice cpa|enrolled_agent|attorney|annual_filing_season", "email:email"],
                states=["active", "revoked"],
                transitions={"revoke": "active>revoked", "restore": "revoked>active"}),
            dict(name="tax_return", prefix="TR", parent="taxpayer", refs=["preparer"], fields=[
                "return_code:code label unique", "tax_year:int 2018..2024", "form:choice 1040|1040_sr|1040_nr|1040_x",
                "agi:money 0..500000", "tax_due:money 0..150000 balance", "refund_amount:money 0..30000",
                "filing_deadline:datetime"],
                states=["draft", "filed", "accepted", "rejected", "under_audit"],
                transitions={"file": "draft>filed", "accept": "filed>accepted", "reject": "filed>rejected",
                             "correct": "rejected>draft", "open_audit": "accepted>under_audit",
                             "close_audit": "under_audit>accepted"}),
            dict(name="income_document", prefix="DOC", parent="tax_return", fields=[
                "document_code:code label unique", "form_type:choice w2|1099_nec|1099_int|1099_div|1098",
                "payer_name:text", "reported_income:money 0..400000", "withholding:money 0..100000",
                "received_on:datetime"],
                states=["reported", "matched", "mismatched"],
                transitions={"match": "reported>matched", "flag_mismatch": "reported>mismatched",
                             "resolve": "mismatched>matched"},
                words=["Acme Corp W-2", "Chase Bank 1099-INT", "Uber 1099-NEC", "Vanguard 1099-DIV",
                       "Wells Fargo 1098", "City of Austin W-2"]),
            dict(name="tax_payment", prefix="PY", parent="tax_return", fields=[
                "payment_code:code label unique", "payment_amount:money 1..150000",
                "method:choice direct_debit|card|check|eftps", "scheduled_for:datetime", "installment_plan:bool"],
                states=["scheduled", "settled", "returned"],
                transitions={"settle": "scheduled>settled", "mark_returned": "scheduled>returned"}),
        ],
    ),
]
