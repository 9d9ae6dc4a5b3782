"""More education domains (exam proctoring, school transport, tutoring marketplace)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="exam_proctoring", sector="education", title="Exam proctoring center",
        description="Test-center coordinators schedule candidates into proctored exam sittings, check their IDs "
                    "at the door, and log irregularities that can void a result.",
        actor="test center coordinator",
        entities=[
            dict(name="exam_room", prefix="ER", fields=[
                "room_name:text label", "building:choice main|annex|library|science", "camera_count:int 0..12",
                "wheelchair_accessible:bool", "floor:int 0..5", "lockers:int 0..80"],
                states=["in_use", "out_of_service"],
                transitions={"take_out_of_service": "in_use>out_of_service", "restore": "out_of_service>in_use"},
                words=["Testing Lab A", "Testing Lab B", "Quiet Room 1", "Library Carrel Suite", "Annex 204",
                       "Science Hall 110"]),
            dict(name="exam_session", prefix="ES", parent="exam_room", fields=[
                "session_code:code label unique",
                "exam_program:choice comptia|aws|cpa|gmat|nursing_boards|bar_mbe", "starts_at:datetime",
                "seats:int 2..40 capacity", "duration_min:int 60..300", "lead_proctor:name"],
                states=["scheduled", "in_progress", "completed", "cancelled"],
                transitions={"begin": "scheduled>in_progress", "end": "in_progress>completed",
                             "cancel": "scheduled>cancelled"}),
            dict(name="candidate", prefix="CA", fields=[
                "full_name:name label", "email:email unique",
                "photo_id_kind:choice passport|drivers_license|national_id",
                "accommodation:choice none|extra_time|separate_room|reader|large_print", "retake_count:int 0..5",
                "phone:phone"]),
            dict(name="registration", prefix="RG", parent="exam_session", refs=["candidate"], fields=[
                "confirmation_code:code label unique", "workstation:int 1..40", "fee_paid:money 0..450",
                "id_verified:bool", "scaled_score:int 0..1000", "booked_on:datetime"],
                states=["registered", "checked_in", "testing", "submitted", "no_show", "voided"],
                transitions={"check_in": "registered>checked_in", "start_exam": "checked_in>testing",
                             "submit": "testing>submitted", "mark_no_show": "registered>no_show",
                             "void": "checked_in,testing,submitted>voided"}),
            dict(name="incident", prefix="IN", parent="registration", fields=[
                "incident_code:code label unique",
                "category:choice phone_use|talking|unauthorized_notes|left_room|technical_failure|identity_mismatch",
                "severity:choice minor|major|critical", "minutes_lost:int 0..120", "observed_on:datetime",
                "video_reference:code"],
                states=["logged", "under_review", "upheld", "dismissed"],
                transitions={"escalate": "logged>under_review", "uphold": "under_review>upheld",
                             "dismiss": "logged,under_review>dismissed"}),
        ],
    ),
    Domain(
        id="school_transport", sector="education", title="School bus transportation",
        description="District transportation coordinators assign students to bus routes, keep buses and drivers "
                    "road-ready, and log daily ridership and late runs.",
        actor="district transportation coordinator",
        entities=[
            dict(name="bus", plural="buses", prefix="BS", fields=[
                "fleet_number:code label unique", "seating:int 12..84", "wheelchair_lift:bool",
                "fuel:choice diesel|propane|electric|gasoline", "odometer_miles:int 0..250000",
                "inspection_due:datetime deadline"],
                states=["in_service", "in_shop", "retired"],
                transitions={"send_to_shop": "in_service>in_shop", "return_to_service": "in_shop>in_service",
                             "retire": "in_service,in_shop>retired"}),
            dict(name="driver", prefix="DR", fields=[
                "full_name:name label", "cdl_number:code unique", "phone:phone", "school_bus_endorsement:bool",
                "hours_available:float 0..40 balance", "years_driving:int 0..40"],
                states=["active", "on_leave", "separated"],
                transitions={"start_leave": "active>on_leave", "return_from_leave": "on_leave>active",
                             "separate": "active,on_leave>separated"}),
            dict(name="bus_route", prefix="RT", parent="bus", refs=["driver"], fields=[
                "route_code:code label unique",
                "school:choice lincoln_elementary|roosevelt_middle|central_high|westside_k8",
                "run:choice am|pm|midday_kindergarten", "seat_capacity:int 8..72 capacity",
                "first_pickup:datetime", "distance_miles:float 2..40"],
                states=["draft", "active", "suspended"],
                transitions={"activate": "draft>active", "suspend": "active>suspended", "resume": "suspended>active"},
                words=["LIN-AM-1", "LIN-PM-1", "ROO-AM-3", "CEN-AM-7", "WES-PM-2", "CEN-MID-K"]),
            dict(name="rider", prefix="RI", parent="bus_route", fields=[
                "student_name:name label", "grade:int 0..12", "stop_location:text", "needs_aide:bool",
                "guardian_phone:phone", "eligibility:choice distance|hazard_route|iep|courtesy"],
                states=["pending", "assigned", "withdrawn"],
                transitions={"approve": "pending>assigned", "withdraw": "pending,assigned>withdrawn"}),
            dict(name="ridership_log", prefix="RL", parent="bus_route", fields=[
                "log_code:code label unique", "service_date:datetime", "riders_counted:int 0..72",
                "minutes_late:int 0..90", "incident_reported:bool", "weather:choice clear|rain|snow|fog"],
                states=["submitted", "verified", "disputed"],
                transitions={"verify": "submitted>verified", "dispute": "submitted>disputed",
                             "resolve": "disputed>verified"}),
        ],
    ),
    Domain(
        id="tutoring_marketplace", sector="education", title="Tutoring marketplace support",
        description="Support staff at an online tutoring marketplace vet tutors, manage families' prepaid lesson "
                    "credits, and resolve lesson disputes between tutors and families.",
        actor="marketplace support agent",
        entities=[
            dict(name="tutor", prefix="TU", fields=[
                "full_name:name label", "email:email unique",
                "subject:choice math|chemistry|physics|english|sat_prep|spanish", "hourly_rate:money 20..150",
                "rating:float 1..5", "weekly_slots:int 1..40 capacity", "years_teaching:int 0..40"],
                states=["applied", "vetted", "active", "suspended", "removed"],
                transitions={"vet": "applied>vetted", "activate": "vetted>active", "suspend": "active>suspended",
                             "reinstate": "suspended>active", "remove": "applied,vetted,active,suspended>removed"},
                words=["Grace Whitfield", "Omar Haddad", "Lucia Ferreira", "Ben Adeyemi", "Hannah Kim",
                       "Ravi Menon"]),
            dict(name="household", prefix="HH", fields=[
                "guardian_name:name label", "email:email unique", "phone:phone", "lesson_credits:int 0..50 balance",
                "timezone:choice eastern|central|mountain|pacific", "referral_code:code"]),
            dict(name="student", prefix="ST", parent="household", fields=[
                "student_name:name label", "grade_level:int 1..12",
                "learning_goal:choice catch_up|test_prep|enrichment|homework_help", "has_iep:bool",
                "school_name:text"]),
            dict(name="lesson", prefix="LS", parent="tutor", refs=["student"], fields=[
                "lesson_code:code label unique", "starts_at:datetime", "duration_min:int 30..120",
                "lesson_format:choice online|in_home|library", "credits_charged:int 1..4", "tutor_summary:text"],
                states=["requested", "confirmed", "completed", "cancelled", "disputed"],
                transitions={"confirm": "requested>confirmed", "complete": "confirmed>completed",
                             "cancel": "requested,confirmed>cancelled", "flag_dispute": "completed>disputed"}),
            dict(name="dispute", prefix="DS", parent="lesson", fields=[
                "case_code:code label unique", "reason:choice tutor_no_show|student_no_show|quality|billing_error",
                "credits_claimed:int 1..4", "opened_on:datetime", "respond_by:datetime deadline",
                "raised_by:choice family|tutor"],
                states=["open", "awaiting_tutor", "refunded", "rejected"],
                transitions={"request_tutor_reply": "open>awaiting_tutor",
                             "refund_credits": "open,awaiting_tutor>refunded",
                             "reject": "open,awaiting_tutor>rejected"}),
        ],
    ),
]
