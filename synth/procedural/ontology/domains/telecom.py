"""Telecom domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="mobile_plans", sector="telecom", title="Mobile carrier account care",
        description="Retail-store reps at a mobile carrier add lines to customer accounts, change rate plans, "
                    "swap SIM cards, and manage device installment agreements.",
        actor="carrier store rep",
        entities=[
            dict(name="carrier_account", prefix="AC", fields=[
                "account_holder:name label", "account_number:code unique", "email:email",
                "billing_cycle_day:int 1..28", "account_type:choice consumer|business|government",
                "line_limit:int 1..10 capacity"],
                states=["active", "suspended", "closed"],
                transitions={"suspend": "active>suspended", "restore": "suspended>active",
                             "close": "active,suspended>closed"}),
            dict(name="rate_plan", prefix="PL", fields=[
                "plan_name:text label", "monthly_fee:money 10..120", "data_allowance_gb:int 1..150",
                "hotspot_gb:int 0..50", "international_roaming:bool", "five_g:bool"],
                words=["Unlimited Plus", "Essentials 15GB", "Prepaid 5GB", "Family Share 50GB", "Business Unlimited",
                       "Senior 55+"]),
            dict(name="mobile_line", prefix="LN", parent="carrier_account", refs=["rate_plan"], fields=[
                "line_label:text label", "msisdn:phone unique", "data_left_gb:float 0..150 balance",
                "activated_on:datetime", "port_in:bool", "voicemail_pin_set:bool"],
                states=["pending_activation", "active", "suspended", "ported_out", "cancelled"],
                transitions={"activate": "pending_activation>active", "suspend": "active>suspended",
                             "restore": "suspended>active", "port_out": "active,suspended>ported_out",
                             "cancel": "pending_activation,active,suspended>cancelled"},
                words=["Mom's iPhone", "Dad's Pixel", "Kid's watch", "Work iPad", "Tablet line", "Hotspot"]),
            dict(name="sim_card", prefix="SIM", parent="mobile_line", fields=[
                "iccid:code label unique", "sim_type:choice physical|esim", "puk:code", "shipped_on:datetime",
                "carrier_locked:bool"],
                states=["shipped", "active", "deactivated"],
                transitions={"activate": "shipped>active", "deactivate": "shipped,active>deactivated"}),
            dict(name="device_installment", prefix="DI", parent="mobile_line", fields=[
                "agreement_number:code label unique", "device_model:text", "financed_amount:money 100..2000",
                "remaining_balance:money 0..2000 balance", "monthly_payment:money 5..90",
                "payoff_by:datetime deadline"],
                states=["active", "paid_off", "defaulted"],
                transitions={"pay_off": "active>paid_off", "mark_defaulted": "active>defaulted"}),
        ],
    ),
    Domain(
        id="fiber_installations", sector="telecom", title="Fiber-to-the-home installs",
        description="Field-operations schedulers at a fiber ISP book installation appointments for service "
                    "addresses, assign technicians, and provision ONTs on PON ports.",
        actor="field operations scheduler",
        entities=[
            dict(name="service_address", prefix="AD", plural="service_addresses", fields=[
                "street_address:text label", "premises_type:choice single_family|apartment|business",
                "serviceable:bool", "drop_length_m:int 10..300", "fiber_hub:code"],
                words=["212 Cedar Ave", "88 Bridge Rd Apt 4C", "1750 Commerce Dr Suite 200", "9 Lantern Way",
                       "431 Elmwood Ct", "60 Mill Pond Rd"]),
            dict(name="field_technician", prefix="TC", fields=[
                "full_name:name label", "employee_code:code unique", "region:choice north|south|east|west",
                "certification:choice splicing|install|both", "jobs_per_day:int 2..8"],
                states=["available", "on_leave"],
                transitions={"start_leave": "available>on_leave", "return_from_leave": "on_leave>available"}),
            dict(name="install_order", prefix="IO", parent="service_address", refs=["field_technician"], fields=[
                "order_number:code label unique", "speed_tier:choice 300m|500m|1g|2g|5g",
                "appointment_at:datetime", "wifi_extender:bool", "static_ip:bool",
                "install_fee:money 0..250"],
                states=["created", "scheduled", "en_route", "completed", "failed", "cancelled"],
                transitions={"schedule": "created>scheduled", "dispatch": "scheduled>en_route",
                             "complete": "en_route>completed", "mark_failed": "en_route>failed",
                             "reschedule": "failed>scheduled", "cancel": "created,scheduled,failed>cancelled"}),
            dict(name="pon_port", prefix="PP", fields=[
                "port_code:code label unique", "olt_name:code", "splitter_ratio:choice 1x16|1x32|1x64",
                "max_subscribers:int 16..64 capacity", "optical_budget_db:float 20..32"],
                states=["in_service", "maintenance"],
                transitions={"start_maintenance": "in_service>maintenance", "end_maintenance": "maintenance>in_service"}),
            dict(name="ont_device", prefix="ONT", parent="pon_port", refs=["service_address"], fields=[
                "serial:code label unique", "model:choice nokia_g240|calix_gp1100|huawei_hg8245|adtran_411",
                "rx_power_dbm:float -30..-8", "firmware:code", "installed_on:datetime"],
                states=["provisioned", "online", "offline", "returned"],
                transitions={"bring_online": "provisioned>online", "mark_offline": "online>offline",
                             "recover": "offline>online", "return_to_warehouse": "provisioned,offline>returned"}),
        ],
    ),
    Domain(
        id="customer_support_tickets", sector="telecom", title="ISP support desk",
        description="Support agents at an internet provider work customer tickets through team queues, reply, "
                    "escalate outages, and credit accounts for service failures.",
        actor="support agent",
        entities=[
            dict(name="subscriber", prefix="CU", fields=[
                "full_name:name label", "email:email unique", "phone:phone",
                "account_tier:choice residential|smb|enterprise", "service_credits:money 0..500 balance",
                "language:choice en|es|fr"]),
            dict(name="support_queue", prefix="QU", fields=[
                "queue_name:text label", "channel:choice phone|email|chat|social", "sla_hours:int 1..72",
                "max_open:int 20..500 capacity", "business_hours_only:bool"],
                words=["Billing Questions", "Internet Outages", "Mobile Device Help", "Cancellations and Retention",
                       "Enterprise Priority", "Spanish-language Support"]),
            dict(name="agent", prefix="AG", fields=[
                "full_name:name label", "email:email unique", "team:choice billing|technical|retention|escalations",
                "skill_level:int 1..3", "can_issue_credits:bool"],
                states=["available", "on_break", "offline"],
                transitions={"take_break": "available>on_break", "end_break": "on_break>available",
                             "log_off": "available,on_break>offline", "log_on": "offline>available"}),
            dict(name="ticket", prefix="TK", parent="support_queue", refs=["subscriber", "agent"], fields=[
                "ticket_number:code label unique", "subject:text", "priority:choice low|normal|high|urgent",
                "category:choice billing|outage|device|plan_change|cancellation",
                "first_response_due:datetime", "reopen_count:int 0..10"],
                states=["new", "open", "pending_customer", "escalated", "resolved", "closed"],
                transitions={"assign": "new>open", "await_customer": "open>pending_customer",
                             "resume": "pending_customer>open", "escalate": "open>escalated",
                             "resolve": "open,escalated,pending_customer>resolved", "reopen": "resolved>open",
                             "close": "resolved>closed"}),
            dict(name="ticket_reply", plural="ticket_replies", prefix="RP", parent="ticket", fields=[
                "reply_code:code label unique", "author_type:choice agent|customer|system", "sent_at:datetime",
                "internal_only:bool", "word_count:int 1..2000"]),
            dict(name="satisfaction_survey", prefix="SV", parent="ticket", fields=[
                "survey_code:code label unique", "csat_score:int 1..5", "nps:int 0..10", "comment:text",
                "sent_at:datetime", "respond_by:datetime deadline"],
                states=["sent", "answered", "withdrawn"],
                transitions={"record_answer": "sent>answered", "withdraw": "sent>withdrawn"}),
        ],
    ),
]
