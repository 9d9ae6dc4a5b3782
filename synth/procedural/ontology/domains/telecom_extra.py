"""More telecom domains (mobile number porting)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="number_porting", sector="telecom", title="Mobile number porting desk",
        description="Porting specialists at a mobile carrier submit port-in requests to losing carriers, fix "
                    "rejected requests, and ship SIMs ahead of each number's cutover.",
        actor="number porting specialist",
        entities=[
            dict(name="subscriber", prefix="SU", fields=[
                "full_name:name label", "email:email unique", "billing_zip:code",
                "plan:choice prepaid|postpaid_basic|postpaid_unlimited|business",
                "credit_check:choice passed|deposit_required|failed", "lines_allowed:int 1..10 capacity"],
                states=["pending_activation", "active", "suspended", "closed"],
                transitions={"activate": "pending_activation>active", "suspend": "active>suspended",
                             "restore": "suspended>active",
                             "close": "pending_activation,active,suspended>closed"}),
            dict(name="losing_carrier", prefix="LC", fields=[
                "carrier_name:text label", "spid:code unique", "response_sla_hours:int 2..72",
                "weekend_cutover:bool", "interface:choice npac_soa|email|portal", "escalation_email:email"],
                words=["Verizon Wireless", "AT&T Mobility", "T-Mobile USA", "US Cellular", "Mint Mobile",
                       "Visible"]),
            dict(name="port_request", prefix="PR", parent="subscriber", refs=["losing_carrier"], fields=[
                "port_order_number:code label unique", "phone_number:phone", "donor_account_number:code",
                "requested_due:datetime", "line_kind:choice mobile|landline|voip",
                "rejection_count:int 0..5", "transfer_pin_provided:bool"],
                states=["draft", "submitted", "rejected", "confirmed", "completed", "cancelled"],
                transitions={"submit": "draft>submitted", "record_rejection": "submitted>rejected",
                             "resubmit": "rejected>submitted", "record_confirmation": "submitted>confirmed",
                             "complete_cutover": "confirmed>completed",
                             "cancel": "draft,submitted,rejected,confirmed>cancelled"}),
            dict(name="rejection", prefix="RJ", parent="port_request", fields=[
                "notice_code:code label unique",
                "reason:choice account_number_mismatch|pin_invalid|name_mismatch|zip_mismatch|line_suspended",
                "received_on:datetime", "fix_by:datetime deadline", "auto_fixable:bool"],
                states=["open", "corrected", "escalated"],
                transitions={"correct": "open>corrected", "escalate": "open>escalated",
                             "resolve_escalation": "escalated>corrected"}),
            dict(name="sim_card", prefix="SC", parent="subscriber", fields=[
                "iccid:code label unique", "form_factor:choice physical|esim", "paired_imei:code",
                "pre_provisioned:bool", "shipped_on:datetime", "temporary_number:phone"],
                states=["in_stock", "shipped", "activated", "deactivated"],
                transitions={"ship": "in_stock>shipped", "activate": "shipped>activated",
                             "deactivate": "shipped,activated>deactivated"}),
        ],
    ),
]
