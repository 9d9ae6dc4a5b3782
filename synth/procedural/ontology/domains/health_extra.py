"""More health domains (blood bank, dental practice, physiotherapy)."""

from synth.procedural.ontology.schema import Domain

_GROUPS = "O_neg|O_pos|A_neg|A_pos|B_pos|AB_pos"

DOMAINS = [
    Domain(
        id="blood_bank", sector="health", title="Blood bank inventory",
        description="Blood bank technologists register donors, track collected units through testing, and "
                    "crossmatch and issue units to hospital requests before they expire.",
        actor="blood bank technologist",
        entities=[
            dict(name="donor", prefix="DN", fields=[
                "full_name:name label", "donor_number:code unique", f"blood_group:choice {_GROUPS}",
                "last_donation:datetime", "hemoglobin_g_dl:float 11..18", "weight_kg:int 50..140", "phone:phone"],
                states=["eligible", "deferred", "permanently_deferred"],
                transitions={"defer": "eligible>deferred", "clear_deferral": "deferred>eligible",
                             "defer_permanently": "eligible,deferred>permanently_deferred"}),
            dict(name="blood_drive", prefix="BD", fields=[
                "drive_name:text label", "site_type:choice fixed_center|mobile_bus|workplace|school",
                "scheduled_for:datetime", "donor_slots:int 3..120 capacity", "beds:int 2..16",
                "coordinator:name"],
                states=["planned", "in_progress", "closed", "cancelled"],
                transitions={"open_drive": "planned>in_progress", "close_drive": "in_progress>closed",
                             "cancel": "planned>cancelled"},
                words=["Riverside High Drive", "City Hall Plasma Day", "Metro Center Fixed Site",
                       "Tech Park Bus Visit", "St. Luke's Parish Drive", "Westgate Mall Drive"]),
            dict(name="blood_unit", prefix="BU", parent="blood_drive", refs=["donor"], fields=[
                "unit_number:code label unique", "component:choice whole_blood|red_cells|plasma|platelets",
                "volume_ml:int 200..500", f"blood_group:choice {_GROUPS}", "expires_on:datetime deadline",
                "storage_temp_c:float -30..6", "irradiated:bool"],
                states=["quarantined", "available", "reserved", "issued", "discarded"],
                transitions={"release": "quarantined>available", "reserve": "available>reserved",
                             "unreserve": "reserved>available", "issue": "reserved>issued",
                             "discard": "quarantined,available,reserved>discarded"}),
            dict(name="hospital_request", prefix="HR", fields=[
                "request_number:code label unique",
                "requesting_hospital:choice st_marys|general|childrens|veterans|university",
                "units_requested:int 1..12 capacity", "urgency:choice routine|urgent|emergency_release",
                "needed_by:datetime", f"patient_blood_group:choice {_GROUPS}",
                "ward:choice icu|surgery|oncology|obstetrics|emergency"],
                states=["received", "crossmatching", "fulfilled", "cancelled"],
                transitions={"start_crossmatch": "received>crossmatching", "fulfil": "crossmatching>fulfilled",
                             "cancel": "received,crossmatching>cancelled"}),
            dict(name="crossmatch", plural="crossmatches", prefix="XM", parent="hospital_request",
                 refs=["blood_unit"], fields=[
                     "crossmatch_code:code label unique",
                     "method:choice immediate_spin|electronic|full_antiglobulin", "performed_on:datetime",
                     "technologist_initials:code", "antibody_screen_positive:bool", "incubation_min:int 0..45"],
                 states=["pending", "compatible", "incompatible"],
                 transitions={"record_compatible": "pending>compatible",
                              "record_incompatible": "pending>incompatible"}),
        ],
    ),
    Domain(
        id="dental_practice", sector="health", title="Dental practice front office",
        description="Front-office staff at a dental practice book patients into dentists' chairs, present "
                    "treatment plans, and submit insurance claims for completed visits.",
        actor="dental front-office coordinator",
        entities=[
            dict(name="dentist", prefix="DT", fields=[
                "full_name:name label", "license_number:code unique",
                "specialty:choice general|orthodontics|endodontics|periodontics|pediatric",
                "daily_chair_hours:int 4..10", "accepts_new_patients:bool", "hygienist_support:bool"],
                states=["practicing", "on_leave", "departed"],
                transitions={"start_leave": "practicing>on_leave", "return_from_leave": "on_leave>practicing",
                             "depart": "practicing,on_leave>departed"},
                words=["Priya Raman", "Daniel Okoro", "Helen Castillo", "Marcus Lindqvist", "Aiko Tanaka"]),
            dict(name="patient", prefix="PT", fields=[
                "full_name:name label", "email:email unique", "phone:phone",
                "insurance_plan:choice none|delta_ppo|cigna_dhmo|metlife|aetna",
                "annual_max_remaining:money 0..2500 balance", "last_xray:datetime",
                "recall_interval_months:int 3..12"],
                states=["active", "inactive", "dismissed"],
                transitions={"deactivate": "active>inactive", "reactivate": "inactive>active",
                             "dismiss": "active,inactive>dismissed"}),
            dict(name="appointment", prefix="AP", parent="dentist", refs=["patient"], fields=[
                "appointment_code:code label unique", "starts_at:datetime", "chair:choice op1|op2|op3|op4",
                "duration_min:int 15..180", "reason:choice cleaning|exam|filling|crown_prep|extraction|emergency",
                "confirmed_by_text:bool"],
                states=["booked", "confirmed", "checked_in", "completed", "no_show", "cancelled"],
                transitions={"confirm": "booked>confirmed", "check_in": "booked,confirmed>checked_in",
                             "complete": "checked_in>completed", "mark_no_show": "booked,confirmed>no_show",
                             "cancel": "booked,confirmed>cancelled"}),
            dict(name="treatment_plan", prefix="TP", parent="patient", fields=[
                "plan_title:text label", "estimated_fee:money 80..25000", "patient_portion:money 0..15000",
                "phases:int 1..6", "presented_on:datetime", "estimate_valid_until:datetime deadline",
                "financing:choice none|in_house|carecredit"],
                states=["proposed", "accepted", "in_progress", "completed", "declined"],
                transitions={"accept": "proposed>accepted", "start": "accepted>in_progress",
                             "complete": "in_progress>completed", "decline": "proposed>declined"},
                words=["Full-mouth periodontal therapy", "Upper crown #14", "Invisalign phase 1",
                       "Root canal #30 and crown", "Implant #19", "Night guard"]),
            dict(name="claim", prefix="CL", parent="appointment", fields=[
                "claim_number:code label unique", "cdt_code:code", "billed_fee:money 50..5000",
                "payer_estimate:money 0..4000", "submitted_on:datetime", "attachments:int 0..6"],
                states=["draft", "submitted", "paid", "denied", "appealed"],
                transitions={"submit": "draft>submitted", "record_payment": "submitted,appealed>paid",
                             "record_denial": "submitted,appealed>denied", "appeal": "denied>appealed"}),
        ],
    ),
    Domain(
        id="physiotherapy_plans", sector="health", title="Physiotherapy clinic",
        description="Physiotherapists at an outpatient clinic set up referral-based treatment plans, book "
                    "sessions against authorized visits, and assign home exercise programs.",
        actor="physiotherapist",
        entities=[
            dict(name="physiotherapist", prefix="PH", fields=[
                "full_name:name label", "registration_number:code unique",
                "focus:choice sports|neuro|orthopedic|pediatric|vestibular", "caseload_limit:int 3..40 capacity",
                "session_length_min:int 30..60", "dry_needling_certified:bool"]),
            dict(name="client", prefix="CL", fields=[
                "full_name:name label", "email:email unique", "phone:phone",
                "payer:choice self_pay|private_insurance|workers_comp|medicare", "date_of_injury:datetime",
                "referring_doctor:name"],
                states=["active", "discharged"],
                transitions={"discharge": "active>discharged", "readmit": "discharged>active"}),
            dict(name="treatment_plan", prefix="TP", parent="physiotherapist", refs=["client"], fields=[
                "plan_code:code label unique",
                "diagnosis:choice acl_rehab|low_back_pain|rotator_cuff|ankle_sprain|post_stroke|frozen_shoulder",
                "authorized_visits:int 0..30 balance", "authorization_expires:datetime deadline",
                "goal_pain_score:int 0..10", "visits_per_week:int 1..3"],
                states=["evaluation", "active", "on_hold", "completed", "cancelled"],
                transitions={"activate": "evaluation>active", "pause": "active>on_hold", "resume": "on_hold>active",
                             "complete": "active>completed", "cancel": "evaluation,active,on_hold>cancelled"}),
            dict(name="visit", prefix="VS", parent="treatment_plan", fields=[
                "session_code:code label unique", "session_date:datetime", "pain_before:int 0..10",
                "pain_after:int 0..10", "modality:choice manual_therapy|exercise|ultrasound|tens|hydrotherapy",
                "billed_units:int 1..6"],
                states=["scheduled", "attended", "missed", "cancelled"],
                transitions={"mark_attended": "scheduled>attended", "mark_missed": "scheduled>missed",
                             "cancel": "scheduled>cancelled"}),
            dict(name="exercise", prefix="EX", parent="treatment_plan", fields=[
                "exercise_name:text label", "sets:int 1..5", "reps:int 5..30", "hold_seconds:int 0..60",
                "resistance_band:choice none|yellow|red|green|blue|black", "days_per_week:int 1..7"],
                states=["assigned", "progressed", "discontinued"],
                transitions={"progress": "assigned>progressed", "discontinue": "assigned,progressed>discontinued"},
                words=["Clamshells", "Wall slides", "Single-leg bridge", "Banded external rotation", "Heel raises",
                       "Bird dog", "Terminal knee extension"]),
        ],
    ),
]
