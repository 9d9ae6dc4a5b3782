"""More real estate domains (contractor-side permit tracking, HOA management)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="construction_permits_tracking", sector="real_estate", title="Construction permit expediting",
        description="Permit expediters at a general contractor file building permit applications for each "
                    "project, answer plan-review comments, and book the inspections each permit requires.",
        actor="permit expediter",
        entities=[
            dict(name="project", prefix="PJ", fields=[
                "project_name:text label", "job_number:code unique",
                "project_kind:choice new_build|tenant_improvement|addition|demolition|solar_install",
                "valuation:money 10000..20000000", "jurisdiction:choice city|county|state_fire_marshal",
                "target_start:datetime", "superintendent:name"],
                states=["preconstruction", "under_construction", "closed_out"],
                transitions={"break_ground": "preconstruction>under_construction",
                             "close_out": "under_construction>closed_out"},
                words=["Elm St. Townhomes", "Harbor Tower TI Floor 12", "Maple Clinic Addition",
                       "Westfield Warehouse Demo", "Cedar School Solar Array", "Pine Ridge ADU"]),
            dict(name="permit_application", prefix="PA", parent="project", fields=[
                "application_number:code label unique",
                "permit_kind:choice building|electrical|plumbing|mechanical|grading|fire",
                "fees_due:money 0..60000 balance", "submitted_on:datetime", "review_cycles:int 0..6",
                "expedited_review:bool", "sheet_count:int 1..400"],
                states=["preparing", "submitted", "in_plan_review", "corrections_required", "issued", "withdrawn"],
                transitions={"submit": "preparing>submitted", "accept_for_review": "submitted>in_plan_review",
                             "receive_corrections": "in_plan_review>corrections_required",
                             "resubmit": "corrections_required>in_plan_review", "issue": "in_plan_review>issued",
                             "withdraw": "preparing,submitted,in_plan_review,corrections_required>withdrawn"}),
            dict(name="comment", prefix="CM", parent="permit_application", fields=[
                "comment_code:code label unique", "discipline:choice structural|fire|zoning|accessibility|energy",
                "sheet_reference:code", "severity:choice must_fix|clarify|advisory",
                "response_due:datetime deadline", "plan_reviewer:name"],
                states=["open", "responded", "cleared"],
                transitions={"respond": "open>responded", "clear": "responded>cleared", "reopen": "responded>open"}),
            dict(name="inspector", prefix="IS", fields=[
                "full_name:name label", "email:email unique", "phone:phone",
                "trade:choice building|electrical|plumbing|fire", "district:choice north|south|east|west"]),
            dict(name="inspection", prefix="IN", parent="permit_application", refs=["inspector"], fields=[
                "inspection_code:code label unique",
                "inspection_kind:choice footing|framing|rough_electrical|insulation|final",
                "requested_for:datetime", "reinspection_fee:money 0..300", "window:choice am|pm",
                "site_contact_phone:phone"],
                states=["requested", "scheduled", "passed", "failed", "cancelled"],
                transitions={"schedule": "requested>scheduled", "record_pass": "scheduled>passed",
                             "record_fail": "scheduled>failed", "cancel": "requested,scheduled>cancelled"}),
        ],
    ),
    Domain(
        id="hoa_management", sector="real_estate", title="HOA community management",
        description="Community association managers bill homeowners' dues, process architectural change "
                    "requests, and enforce covenant violations and board-approved reserve projects.",
        actor="community association manager",
        entities=[
            dict(name="association", prefix="AS", fields=[
                "community_name:text label", "association_code:code unique", "lot_count:int 20..1200",
                "monthly_dues:money 50..900", "reserve_fund:money 0..3000000 balance", "gated:bool"],
                words=["Willow Creek Estates", "Lakeshore Commons", "Sunset Ridge", "The Pines at Bellmont",
                       "Harbor Point Villas"]),
            dict(name="lot", prefix="LT", parent="association", fields=[
                "owner_name:name label", "lot_number:code unique", "owner_email:email",
                "delinquent_balance:money 0..15000 balance", "autopay:bool", "square_feet:int 600..6000"],
                states=["current", "delinquent", "in_collections", "lien_filed"],
                transitions={"mark_delinquent": "current>delinquent",
                             "bring_current": "delinquent,in_collections>current",
                             "send_to_collections": "delinquent>in_collections",
                             "file_lien": "in_collections>lien_filed", "release_lien": "lien_filed>current"}),
            dict(name="architectural_request", prefix="AR", parent="lot", fields=[
                "request_code:code label unique",
                "project_kind:choice fence|paint|solar_panels|addition|landscaping|pool",
                "estimated_cost:money 200..150000", "submitted_on:datetime", "decision_due:datetime deadline",
                "neighbor_signoffs:int 0..4"],
                states=["submitted", "under_review", "approved", "approved_with_conditions", "denied", "withdrawn"],
                transitions={"start_review": "submitted>under_review", "approve": "under_review>approved",
                             "approve_with_conditions": "under_review>approved_with_conditions",
                             "deny": "under_review>denied", "withdraw": "submitted,under_review>withdrawn"}),
            dict(name="violation", prefix="VI", parent="lot", fields=[
                "notice_number:code label unique",
                "category:choice trash_cans|unapproved_paint|parking|landscaping|noise|pets",
                "fine_assessed:money 0..1000", "cure_by:datetime", "observed_on:datetime",
                "photo_count:int 0..10"],
                states=["courtesy_notice", "fined", "hearing_requested", "cured", "dismissed"],
                transitions={"issue_fine": "courtesy_notice>fined", "mark_cured": "courtesy_notice,fined>cured",
                             "request_hearing": "fined>hearing_requested", "uphold_fine": "hearing_requested>fined",
                             "dismiss": "hearing_requested>dismissed"}),
            dict(name="project", prefix="PR", parent="association", fields=[
                "project_title:text label", "component:choice roofing|paving|pool_resurface|clubhouse_hvac|painting",
                "bid_total:money 1000..800000", "vendor:text", "board_vote_date:datetime",
                "complete_by:datetime"],
                states=["planned", "bidding", "approved", "in_progress", "completed", "cancelled"],
                transitions={"open_bidding": "planned>bidding", "approve_bid": "bidding>approved",
                             "start_work": "approved>in_progress", "complete": "in_progress>completed",
                             "cancel": "planned,bidding,approved>cancelled"}),
        ],
    ),
]
