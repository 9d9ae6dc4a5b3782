"""More government domains (passport office, public housing, court scheduling)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="passport_office", sector="government", title="Passport agency counter",
        description="Passport agency clerks take applications at counter appointments, chase missing supporting "
                    "documents, and track passport books from adjudication to mail-out.",
        actor="passport agency clerk",
        entities=[
            dict(name="applicant", prefix="AP", fields=[
                "full_name:name label", "email:email unique", "date_of_birth:datetime", "place_of_birth:text",
                "phone:phone", "minor:bool"],
                words=["Elena Petrova", "James O'Connor", "Mei Lin Zhou", "Carlos Mendes", "Fatima Al-Sayed",
                       "Noah Williams"]),
            dict(name="appointment_slot", prefix="SL", fields=[
                "slot_code:code label unique", "starts_at:datetime deadline",
                "counter:choice window_1|window_2|window_3|window_4", "max_applications:int 1..6 capacity",
                "service:choice routine|expedited|urgent_travel", "interpreter_booked:bool"],
                states=["open", "closed"], transitions={"close": "open>closed", "reopen": "closed>open"}),
            dict(name="passport_application", prefix="PA", parent="appointment_slot", refs=["applicant"], fields=[
                "application_number:code label unique",
                "application_kind:choice first_time|renewal|replacement_lost|name_change",
                "product:choice book|card|book_and_card", "fee_paid:money 30..200", "expedited:bool",
                "travel_date:datetime", "book_pages:choice standard_28|large_52"],
                states=["received", "pending_documents", "in_adjudication", "approved", "denied", "withdrawn"],
                transitions={"route_to_adjudication": "received>in_adjudication",
                             "request_documents": "received,in_adjudication>pending_documents",
                             "receive_documents": "pending_documents>in_adjudication",
                             "approve": "in_adjudication>approved", "deny": "in_adjudication>denied",
                             "withdraw": "received,pending_documents>withdrawn"}),
            dict(name="document", prefix="DO", parent="passport_application", fields=[
                "document_reference:code label unique",
                "document_kind:choice birth_certificate|naturalization_cert|old_passport|marriage_certificate|"
                "court_order",
                "issuing_authority:text", "issued_on:datetime", "certified_copy:bool", "return_by_mail:bool"],
                states=["received", "verified", "rejected", "returned"],
                transitions={"verify": "received>verified", "reject": "received>rejected",
                             "return_to_applicant": "verified,rejected>returned"}),
            dict(name="passport", prefix="PP", parent="passport_application", fields=[
                "book_number:code label unique", "validity_years:int 5..10", "print_batch:code",
                "mail_tracking:code", "expires_on:datetime", "delivery:choice standard_mail|priority_mail|pickup"],
                states=["queued_for_print", "printed", "mailed", "returned_undeliverable", "cancelled"],
                transitions={"print": "queued_for_print>printed", "mail": "printed>mailed",
                             "mark_undeliverable": "mailed>returned_undeliverable",
                             "cancel": "queued_for_print,printed>cancelled"}),
        ],
    ),
    Domain(
        id="public_housing", sector="government", title="Public housing authority",
        description="Housing authority caseworkers work the public housing waitlist, offer vacant units to "
                    "eligible households, and run annual rent recertifications.",
        actor="housing caseworker",
        entities=[
            dict(name="development", prefix="DV", fields=[
                "development_name:text label", "site_code:code unique", "unit_count:int 20..600",
                "elderly_only:bool", "district:choice north|south|east|west|central", "property_manager:name"],
                words=["Riverside Gardens", "Oak Terrace Homes", "Liberty Heights", "Cedar Court", "Maple Commons",
                       "Harbor View Towers"]),
            dict(name="housing_unit", prefix="HU", parent="development", fields=[
                "unit_number:code label", "bedrooms:int 0..5", "accessible:bool", "contract_rent:money 300..2200",
                "floor:int 0..20", "last_inspection:datetime"],
                states=["vacant_ready", "offered", "occupied", "under_repair", "offline"],
                transitions={"offer": "vacant_ready>offered", "withdraw_offer": "offered>vacant_ready",
                             "lease_up": "offered>occupied", "move_out": "occupied>under_repair",
                             "complete_repairs": "under_repair>vacant_ready", "take_offline": "under_repair>offline"}),
            dict(name="household", prefix="HH", fields=[
                "head_of_household:name label", "case_number:code unique", "household_size:int 1..10",
                "annual_income:money 0..90000", "priority:choice homeless|veteran|disabled|elderly|standard",
                "phone:phone", "rent_arrears:money 0..8000 balance"],
                states=["applied", "waitlisted", "housed", "removed"],
                transitions={"verify_eligibility": "applied>waitlisted", "house": "waitlisted>housed",
                             "remove": "applied,waitlisted>removed"}),
            dict(name="lease", prefix="LE", parent="housing_unit", refs=["household"], fields=[
                "lease_number:code label unique", "tenant_rent:money 25..1500", "start_date:datetime",
                "recertification_due:datetime", "utility_allowance:money 0..300", "pets_allowed:bool"],
                states=["active", "notice_given", "terminated"],
                transitions={"give_notice": "active>notice_given", "rescind_notice": "notice_given>active",
                             "terminate": "active,notice_given>terminated"}),
            dict(name="recertification", prefix="RC", parent="lease", fields=[
                "recert_code:code label unique", "reported_income:money 0..90000", "new_tenant_rent:money 25..1500",
                "documents_received:int 0..12", "due_by:datetime deadline", "interim:bool"],
                states=["scheduled", "documents_pending", "completed", "noncompliant"],
                transitions={"request_documents": "scheduled>documents_pending",
                             "complete": "scheduled,documents_pending>completed",
                             "mark_noncompliant": "documents_pending>noncompliant"}),
        ],
    ),
    Domain(
        id="court_scheduling", sector="government", title="Court calendar clerk",
        description="Court clerks assign cases to judges, set hearings on courtroom calendars, and grant "
                    "continuances or vacate settings as filings come in.",
        actor="court clerk",
        entities=[
            dict(name="judge", prefix="JD", fields=[
                "full_name:name label", "chambers_code:code unique",
                "division:choice civil|criminal|family|probate|traffic", "years_on_bench:int 0..40",
                "courtroom_clerk:name", "email:email"],
                states=["sitting", "on_leave", "retired"],
                transitions={"start_leave": "sitting>on_leave", "return_from_leave": "on_leave>sitting",
                             "retire": "sitting,on_leave>retired"},
                words=["Maria Delgado", "Robert Chen", "Angela Brooks", "Thomas Whitaker", "Nadia Farouk"]),
            dict(name="courtroom", prefix="CR", fields=[
                "room_number:code label unique", "floor:int 1..12", "jury_box:bool", "video_enabled:bool",
                "gallery_seats:int 20..200", "building:choice main_courthouse|annex|juvenile_center"],
                states=["in_use", "closed_for_repairs"],
                transitions={"close_for_repairs": "in_use>closed_for_repairs", "reopen": "closed_for_repairs>in_use"},
                words=["Dept 4A", "Dept 7", "Dept 12", "Dept 21B", "Courtroom J1", "Courtroom J2"]),
            dict(name="calendar_session", prefix="CS", parent="courtroom", refs=["judge"], fields=[
                "session_code:code label unique", "session_date:datetime deadline", "block:choice morning|afternoon",
                "max_hearings:int 4..40 capacity",
                "calendar_kind:choice arraignments|motions|trials|status_conferences"],
                states=["open", "locked", "cancelled"],
                transitions={"lock": "open>locked", "unlock": "locked>open", "cancel": "open,locked>cancelled"}),
            dict(name="court_case", prefix="CC", parent="judge", fields=[
                "case_number:code label unique", "caption:text",
                "case_kind:choice civil|criminal|family|probate|small_claims", "filed_on:datetime",
                "jury_demanded:bool", "next_filing_due:datetime"],
                states=["open", "stayed", "disposed"],
                transitions={"stay": "open>stayed", "lift_stay": "stayed>open", "dispose": "open,stayed>disposed"}),
            dict(name="hearing", prefix="HG", parent="calendar_session", refs=["court_case"], fields=[
                "hearing_code:code label unique",
                "hearing_kind:choice arraignment|motion|pretrial|trial|sentencing|status",
                "estimated_minutes:int 5..480", "interpreter_language:choice none|spanish|mandarin|vietnamese|asl",
                "remote_appearance:bool", "defense_counsel:name"],
                states=["set", "continued", "held", "vacated"],
                transitions={"grant_continuance": "set>continued", "reset": "continued>set",
                             "mark_held": "set>held", "vacate": "set,continued>vacated"}),
        ],
    ),
]
