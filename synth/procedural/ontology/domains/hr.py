"""HR domains (payroll, recruiting, leave, IT assets)."""

from synth.procedural.ontology.schema import Domain

_DEPTS = "sales|engineering|finance|marketing|operations|support"

DOMAINS = [
    Domain(
        id="payroll", sector="hr", title="Payroll processing",
        description="Payroll administrators run pay cycles, review generated paystubs, and maintain employees' "
                    "deductions and direct-deposit accounts.",
        actor="payroll administrator",
        entities=[
            dict(name="employee", prefix="EM", fields=[
                "full_name:name label", "employee_number:code unique", "email:email",
                "pay_type:choice salaried|hourly|commission", "annual_salary:money 20000..350000",
                "tax_state:choice CA|NY|TX|WA|IL|FL", "pto_hours:float 0..240 balance"],
                states=["active", "on_leave", "terminated"],
                transitions={"place_on_leave": "active>on_leave", "return_from_leave": "on_leave>active",
                             "terminate": "active,on_leave>terminated"}),
            dict(name="pay_run", prefix="PR", fields=[
                "run_code:code label unique", "period_start:datetime", "pay_date:datetime deadline",
                "frequency:choice weekly|biweekly|semimonthly|monthly", "gross_total:money 0..5000000",
                "off_cycle:bool"],
                states=["draft", "calculated", "approved", "paid", "voided"],
                transitions={"calculate": "draft>calculated", "recalculate": "calculated>draft",
                             "approve": "calculated>approved", "disburse": "approved>paid",
                             "void": "calculated,approved>voided"}),
            dict(name="paystub", prefix="PS", parent="pay_run", refs=["employee"], fields=[
                "stub_number:code label unique", "gross_pay:money 0..40000", "federal_withholding:money 0..12000",
                "state_withholding:money 0..4000", "net_pay:money 0..30000", "hours_worked:float 0..120",
                "direct_deposit:bool"],
                states=["generated", "issued", "reversed"],
                transitions={"issue": "generated>issued", "reverse": "issued>reversed"}),
            dict(name="deduction", prefix="DD", parent="employee", fields=[
                "deduction_name:text label", "plan_code:code", "kind:choice pre_tax|post_tax|garnishment",
                "per_period_amount:money 0..3000", "annual_cap_remaining:money 0..23000 balance",
                "ends_on:datetime deadline"],
                states=["active", "suspended", "ended"],
                transitions={"suspend": "active>suspended", "resume": "suspended>active",
                             "end": "active,suspended>ended"},
                words=["401(k) contribution", "Dental PPO", "Health savings account", "Commuter transit",
                       "Child support order", "Vision plan"]),
            dict(name="deposit_account", prefix="DA", parent="employee", fields=[
                "account_mask:code label", "routing_number:code", "account_type:choice checking|savings",
                "split_percent:int 1..100", "bank_name:text"],
                states=["pending_prenote", "active", "closed"],
                transitions={"confirm_prenote": "pending_prenote>active", "close": "pending_prenote,active>closed"}),
        ],
    ),
    Domain(
        id="recruiting", sector="hr", title="Recruiting pipeline",
        description="Recruiters move candidates' applications for open requisitions through screening and "
                    "interview rounds to offers, hires or rejections.",
        actor="recruiter",
        entities=[
            dict(name="requisition", prefix="RQ", fields=[
                "job_title:text label", "req_number:code unique", f"department:choice {_DEPTS}",
                "applicant_cap:int 20..500 capacity", "salary_max:money 40000..400000",
                "work_mode:choice remote|hybrid|onsite", "close_by:datetime deadline"],
                states=["draft", "open", "on_hold", "filled", "cancelled"],
                transitions={"publish": "draft>open", "put_on_hold": "open>on_hold", "resume": "on_hold>open",
                             "mark_filled": "open>filled", "cancel": "draft,open,on_hold>cancelled"},
                words=["Senior Backend Engineer", "Account Executive", "Data Analyst", "Warehouse Supervisor",
                       "Product Designer", "HR Business Partner"]),
            dict(name="candidate", prefix="CD", fields=[
                "full_name:name label", "email:email unique", "phone:phone",
                "source:choice referral|job_board|agency|linkedin|career_fair", "years_experience:int 0..40",
                "willing_to_relocate:bool"]),
            dict(name="interviewer", prefix="IR", fields=[
                "full_name:name label", "email:email unique", f"department:choice {_DEPTS}",
                "weekly_interview_limit:int 1..15", "trained:bool"]),
            dict(name="application", prefix="AP", parent="requisition", refs=["candidate"], fields=[
                "application_code:code label unique", "applied_at:datetime", "resume_score:int 0..100",
                "expected_salary:money 30000..400000", "notice_period_weeks:int 0..12", "visa_sponsorship:bool"],
                states=["applied", "screening", "interviewing", "offer", "hired", "rejected"],
                transitions={"screen": "applied>screening", "advance": "screening>interviewing",
                             "move_to_offer": "interviewing>offer", "hire": "offer>hired",
                             "reject": "applied,screening,interviewing,offer>rejected"}),
            dict(name="interview", prefix="IV", parent="application", refs=["interviewer"], fields=[
                "interview_code:code label unique", "round:choice phone_screen|technical|onsite|panel|final",
                "scheduled_at:datetime", "duration_min:int 15..240", "format:choice video|onsite|phone",
                "score:int 1..5"],
                states=["scheduled", "completed", "no_show", "cancelled"],
                transitions={"complete": "scheduled>completed", "mark_no_show": "scheduled>no_show",
                             "cancel": "scheduled>cancelled"}),
            dict(name="job_offer", prefix="OF", parent="application", fields=[
                "offer_code:code label unique", "base_salary:money 30000..450000", "signing_bonus:money 0..50000",
                "equity_units:int 0..50000", "start_date:datetime", "respond_by:datetime deadline"],
                states=["drafted", "approved", "extended", "accepted", "declined", "rescinded"],
                transitions={"approve": "drafted>approved", "extend": "approved>extended",
                             "record_acceptance": "extended>accepted", "record_decline": "extended>declined",
                             "rescind": "approved,extended>rescinded"}),
        ],
    ),
    Domain(
        id="leave_management", sector="hr", title="Leave management",
        description="HR generalists approve or reject employees' time-off requests against their leave "
                    "balances, policy rules and blackout periods.",
        actor="HR generalist",
        entities=[
            dict(name="employee", prefix="EM", fields=[
                "full_name:name label", "email:email unique", f"department:choice {_DEPTS}", "hired_on:datetime",
                "country:choice US|UK|DE|IN|CA", "manager_name:name"],
                states=["active", "on_leave", "offboarded"],
                transitions={"start_leave": "active>on_leave", "return_to_work": "on_leave>active",
                             "offboard": "active,on_leave>offboarded"}),
            dict(name="leave_policy", plural="leave_policies", prefix="LP", fields=[
                "policy_name:text label", "policy_code:code unique", "accrual_hours_per_month:float 0..20",
                "carryover_cap_hours:int 0..240", "paid:bool", "requires_documentation:bool"],
                words=["Annual Vacation", "Sick Leave", "Parental Leave", "Bereavement", "Jury Duty",
                       "Unpaid Personal Leave"]),
            dict(name="blackout_period", prefix="BP", refs=["leave_policy"], fields=[
                "period_name:text label", "starts_on:datetime", "ends_on:datetime",
                f"department:choice {_DEPTS}", "hard_block:bool"],
                words=["Year-end close", "Black Friday week", "Annual inventory count", "Product launch freeze",
                       "External audit fieldwork"]),
            dict(name="leave_balance", prefix="LB", parent="employee", refs=["leave_policy"], fields=[
                "balance_code:code label unique", "hours_available:float 0..480 balance",
                "hours_pending:float 0..480", "accrued_ytd:float 0..480", "plan_year:int 2023..2026",
                "expires_on:datetime deadline"]),
            dict(name="leave_request", prefix="LR", parent="employee", refs=["leave_policy"], fields=[
                "request_code:code label unique", "starts_on:datetime", "ends_on:datetime", "hours:float 1..480",
                "reason:text", "half_day:bool"],
                states=["submitted", "approved", "rejected", "cancelled", "taken"],
                transitions={"approve": "submitted>approved", "reject": "submitted>rejected",
                             "cancel": "submitted,approved>cancelled", "mark_taken": "approved>taken"}),
        ],
    ),
    Domain(
        id="it_asset_tracking", sector="hr", title="IT asset and license tracking",
        description="IT service-desk staff assign laptops and other hardware to employees, send it for repair "
                    "or retirement, and manage software license seats.",
        actor="IT asset manager",
        entities=[
            dict(name="employee", prefix="EM", fields=[
                "full_name:name label", "email:email unique", f"department:choice {_DEPTS}",
                "work_location:choice hq|branch|remote", "cost_center:code"],
                states=["active", "offboarding", "departed"],
                transitions={"start_offboarding": "active>offboarding",
                             "complete_offboarding": "offboarding>departed"}),
            dict(name="asset_model", prefix="MD", fields=[
                "model_name:text label", "manufacturer:choice apple|dell|lenovo|hp|cisco|jabra",
                "category:choice laptop|monitor|phone|dock|headset|network", "unit_cost:money 20..4000",
                "lifecycle_months:int 12..72"],
                words=["MacBook Pro 14 M3", "Dell Latitude 7440", "ThinkPad X1 Carbon Gen 11",
                       "Dell U2723QE Monitor", "iPhone 15", "Jabra Evolve2 75"]),
            dict(name="hardware_asset", prefix="AS", parent="asset_model", refs=["employee"], fields=[
                "asset_tag:code label unique", "serial_number:code unique", "purchased_on:datetime",
                "warranty_ends:datetime", "condition:choice new|good|fair|damaged", "encrypted:bool"],
                states=["in_stock", "assigned", "in_repair", "lost", "retired"],
                transitions={"assign": "in_stock>assigned", "return_to_stock": "assigned,in_repair>in_stock",
                             "send_for_repair": "assigned,in_stock>in_repair", "report_lost": "assigned>lost",
                             "retire": "in_stock,in_repair>retired"}),
            dict(name="software_license", prefix="SL", fields=[
                "product_name:text label", "license_key:code unique", "vendor:choice adobe|microsoft|jetbrains|figma|zoom",
                "seats:int 5..500 capacity", "renewal_date:datetime deadline", "annual_cost:money 100..200000"],
                states=["active", "renewal_declined", "cancelled"],
                transitions={"decline_renewal": "active>renewal_declined",
                             "rescind_decline": "renewal_declined>active",
                             "cancel": "active,renewal_declined>cancelled"},
                words=["Adobe Creative Cloud", "Microsoft 365 E3", "JetBrains All Products", "Figma Professional",
                       "Zoom Business"]),
            dict(name="seat_assignment", prefix="SA", parent="software_license", refs=["employee"], fields=[
                "assignment_code:code label unique", "assigned_on:datetime", "last_active:datetime",
                "device_count:int 1..5", "admin_rights:bool"],
                states=["active", "revoked"],
                transitions={"revoke": "active>revoked", "restore": "revoked>active"}),
        ],
    ),
]
