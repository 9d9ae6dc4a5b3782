"""More HR domains (mandatory training compliance, hospital shift swaps)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="training_compliance", sector="hr", title="Mandatory training compliance",
        description="Compliance coordinators assign mandatory courses to employees by role, seat them in "
                    "instructor-led sessions, and track completions, certificate expiries and extensions.",
        actor="training compliance coordinator",
        entities=[
            dict(name="course", prefix="CO", fields=[
                "course_title:text label", "course_code:code unique",
                "regulator:choice osha|hipaa|sox|gdpr|internal", "duration_hours:float 0.5..16",
                "delivery:choice elearning|classroom|blended", "recert_months:int 0..36", "pass_mark:int 50..100"],
                states=["active", "retired"],
                transitions={"retire": "active>retired", "reactivate": "retired>active"},
                words=["Bloodborne Pathogens", "Anti-Harassment for Managers", "HIPAA Privacy Essentials",
                       "Forklift Operator Safety", "Anti-Bribery and Corruption", "Data Protection Basics"]),
            dict(name="employee", prefix="EM", fields=[
                "full_name:name label", "email:email unique",
                "job_role:choice nurse|warehouse_associate|manager|engineer|sales_rep",
                "site:choice hq|plant_2|distribution_center|clinic", "hire_date:datetime", "manager_email:email"],
                states=["active", "on_leave", "terminated"],
                transitions={"start_leave": "active>on_leave", "return_from_leave": "on_leave>active",
                             "terminate": "active,on_leave>terminated"}),
            dict(name="classroom_session", prefix="CS", parent="course", fields=[
                "session_code:code label unique", "starts_at:datetime", "seats:int 4..40 capacity",
                "trainer:name", "location:choice hq_room_a|plant_2_training|online_live",
                "language:choice en|es|fr"],
                states=["scheduled", "held", "cancelled"],
                transitions={"mark_held": "scheduled>held", "cancel": "scheduled>cancelled"}),
            dict(name="training_assignment", prefix="TA", parent="employee", refs=["course"], fields=[
                "assignment_code:code label unique", "due_date:datetime", "attempts:int 0..5",
                "last_score:int 0..100", "trigger:choice new_hire|annual_refresh|role_change|incident_followup",
                "extensions_granted:int 0..2"],
                states=["assigned", "in_progress", "completed", "overdue", "waived"],
                transitions={"start": "assigned>in_progress", "complete": "in_progress>completed",
                             "mark_overdue": "assigned,in_progress>overdue",
                             "record_late_completion": "overdue>completed", "waive": "assigned,overdue>waived"}),
            dict(name="enrollment", prefix="EN", parent="classroom_session", refs=["employee"], fields=[
                "booking_code:code label unique", "booked_on:datetime",
                "dietary_need:choice none|vegetarian|vegan|halal", "transport_needed:bool",
                "shift_cover_arranged:bool"],
                states=["booked", "attended", "absent", "cancelled"],
                transitions={"mark_attended": "booked>attended", "mark_absent": "booked>absent",
                             "cancel": "booked>cancelled"}),
            dict(name="certificate", prefix="CE", parent="training_assignment", fields=[
                "certificate_number:code label unique", "issued_on:datetime", "expires_on:datetime deadline",
                "issuer:choice internal_lms|red_cross|osha_outreach|external_vendor", "final_score:int 0..100"],
                states=["valid", "expired", "revoked"],
                transitions={"expire": "valid>expired", "revoke": "valid>revoked"}),
        ],
    ),
    Domain(
        id="shift_swaps", sector="hr", title="Hospital shift swap desk",
        description="Staffing coordinators at a hospital publish unit rosters, approve shift trades and pickups "
                    "between nurses, and keep overtime within each person's limit.",
        actor="staffing coordinator",
        entities=[
            dict(name="care_unit", prefix="CU", fields=[
                "unit_name:text label", "cost_center:code unique", "min_staff_per_shift:int 2..12",
                "specialty:choice icu|med_surg|emergency|pediatrics|oncology", "union_contract:choice ana|seiu|none",
                "nurse_manager:name"],
                words=["4 West Med-Surg", "Cardiac ICU", "Emergency Department", "Pediatrics 3B",
                       "Oncology Infusion", "Labor and Delivery"]),
            dict(name="staff_member", prefix="SM", parent="care_unit", fields=[
                "full_name:name label", "badge_number:code unique", "licensure:choice rn|lpn|cna|unit_clerk|rt",
                "fte:float 0.2..1", "overtime_hours_left:float 0..24 balance", "seniority_years:int 0..40",
                "float_pool:bool"],
                states=["active", "on_leave", "separated"],
                transitions={"start_leave": "active>on_leave", "return_from_leave": "on_leave>active",
                             "separate": "active,on_leave>separated"}),
            dict(name="roster_period", prefix="RP", parent="care_unit", fields=[
                "period_code:code label unique", "starts_on:datetime", "publish_by:datetime",
                "weeks:int 2..6", "shift_slots:int 10..400 capacity", "self_scheduling:bool"],
                states=["draft", "published", "locked"],
                transitions={"publish": "draft>published", "lock": "published>locked"}),
            dict(name="shift", prefix="SF", parent="roster_period", refs=["staff_member"], fields=[
                "shift_code:code label unique", "starts_at:datetime", "length_hours:int 4..12",
                "shift_kind:choice day|evening|night|weekend", "differential_pay:money 0..8", "charge_nurse:bool"],
                states=["scheduled", "open", "worked", "cancelled"],
                transitions={"drop": "scheduled>open", "fill": "open>scheduled", "mark_worked": "scheduled>worked",
                             "cancel": "scheduled,open>cancelled"}),
            dict(name="swap", prefix="SW", parent="shift", refs=["staff_member"], fields=[
                "request_code:code label unique", "swap_kind:choice trade|giveaway|pickup",
                "reason:choice childcare|education|medical|personal", "submitted_on:datetime",
                "respond_by:datetime deadline", "triggers_overtime:bool"],
                states=["pending_peer", "pending_manager", "approved", "denied", "withdrawn"],
                transitions={"peer_accept": "pending_peer>pending_manager", "approve": "pending_manager>approved",
                             "deny": "pending_peer,pending_manager>denied",
                             "withdraw": "pending_peer,pending_manager>withdrawn"}),
        ],
    ),
]
