"""Energy domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="utility_billing", sector="energy", title="Electric utility billing",
        description="Billing specialists at an electric utility validate meter reads, issue monthly bills on "
                    "each account's tariff, and work past-due accounts toward disconnection.",
        actor="utility billing specialist",
        entities=[
            dict(name="tariff", prefix="TF", fields=[
                "tariff_name:text label", "tariff_code:code unique", "rate_per_kwh:float 0.05..0.6",
                "fixed_monthly_charge:money 0..40", "time_of_use:bool",
                "customer_class:choice residential|small_business|commercial|industrial"],
                words=["Residential Standard R-1", "Time-of-Use TOU-D", "EV Owner Night Saver",
                       "Small Business GS-1", "Low-Income CARE", "Industrial Primary I-3"]),
            dict(name="customer_account", prefix="CA", fields=[
                "account_holder:name label", "account_number:code unique", "email:email",
                "service_address:text", "security_deposit:money 0..1000 balance", "autopay:bool"],
                states=["active", "disconnect_pending", "disconnected", "closed"],
                transitions={"issue_disconnect_notice": "active>disconnect_pending",
                             "restore": "disconnect_pending,disconnected>active",
                             "disconnect": "disconnect_pending>disconnected", "close": "active,disconnected>closed"}),
            dict(name="meter", prefix="MT", parent="customer_account", refs=["tariff"], fields=[
                "meter_number:code label unique", "meter_type:choice analog|amr|ami_smart", "multiplier:int 1..80",
                "installed_on:datetime", "last_read_kwh:int 0..999999", "phase:choice single|three"],
                states=["active", "faulty", "removed"],
                transitions={"flag_fault": "active>faulty", "repair": "faulty>active",
                             "retire": "active,faulty>removed"}),
            dict(name="meter_read", prefix="MR", parent="meter", fields=[
                "read_code:code label unique", "read_at:datetime", "reading_kwh:int 0..999999",
                "read_type:choice actual|estimated|customer", "reader:name"],
                states=["pending", "validated", "rejected"],
                transitions={"validate": "pending>validated", "reject": "pending>rejected"}),
            dict(name="utility_bill", prefix="BL", parent="customer_account", fields=[
                "bill_number:code label unique", "usage_kwh:int 0..20000", "amount_due:money 0..5000 balance",
                "due_date:datetime", "billing_period:code", "late_fee:money 0..50"],
                states=["issued", "past_due", "disputed", "paid", "written_off"],
                transitions={"mark_past_due": "issued>past_due", "open_dispute": "issued,past_due>disputed",
                             "resolve_dispute": "disputed>issued", "record_payment": "issued,past_due>paid",
                             "write_off": "past_due>written_off"}),
        ],
    ),
    Domain(
        id="solar_monitoring", sector="energy", title="Solar fleet monitoring",
        description="Operations analysts at a solar installer monitor customers' rooftop and ground arrays, "
                    "triage inverter alerts, and dispatch service visits.",
        actor="solar operations analyst",
        entities=[
            dict(name="solar_site", prefix="ST", fields=[
                "site_name:text label", "owner_name:name", "address:text", "system_kw:float 2..500",
                "install_date:datetime", "utility:choice pge|sce|xcel|duke|coned", "net_metering:bool"],
                words=["Hernandez Residence", "Maple Elementary Rooftop", "Sunfield Farm Array", "Riverside Warehouse",
                       "Bayview Condos Carport", "Okafor Residence"]),
            dict(name="inverter", prefix="IV", parent="solar_site", fields=[
                "serial:code label unique",
                "model:choice sma_sunny_boy|enphase_iq8|solaredge_se7600|fronius_primo|huawei_sun2000",
                "rated_kw:float 0.3..100", "firmware:code", "string_inputs:int 1..12 capacity",
                "commissioned_on:datetime"],
                states=["online", "fault", "offline", "replaced"],
                transitions={"flag_fault": "online>fault", "mark_offline": "online,fault>offline",
                             "restore": "fault,offline>online", "replace": "fault,offline>replaced"}),
            dict(name="panel_string", prefix="PS", parent="inverter", fields=[
                "string_code:code label unique", "panel_count:int 4..24", "panel_watts:int 250..600",
                "tilt_deg:int 0..60", "azimuth_deg:int 0..359", "shading:choice none|partial|heavy"]),
            dict(name="performance_alert", prefix="AL", parent="solar_site", refs=["inverter"], fields=[
                "alert_code:code label unique",
                "alert_type:choice ground_fault|arc_fault|underperformance|comm_loss|grid_outage",
                "severity:choice low|medium|high", "raised_at:datetime", "kwh_lost_estimate:float 0..500"],
                states=["open", "acknowledged", "dispatched", "resolved"],
                transitions={"acknowledge": "open>acknowledged", "dispatch": "acknowledged>dispatched",
                             "resolve": "open,acknowledged,dispatched>resolved"}),
            dict(name="service_visit", prefix="SV", parent="performance_alert", fields=[
                "visit_code:code label unique", "scheduled_for:datetime", "technician:name",
                "visit_type:choice inspection|repair|panel_cleaning|warranty_swap", "cost:money 0..5000",
                "warranty_covered:bool"],
                states=["scheduled", "completed", "cancelled"],
                transitions={"complete": "scheduled>completed", "cancel": "scheduled>cancelled"}),
        ],
    ),
    Domain(
        id="ev_charging", sector="energy", title="EV charging network",
        description="Network operations staff for a public EV charging network manage chargers at stations, "
                    "driver accounts and reservations, and close out charging sessions.",
        actor="charging network operator",
        entities=[
            dict(name="charging_station", prefix="ST", fields=[
                "station_name:text label", "address:text", "region:choice northwest|southwest|midwest|northeast|south",
                "access:choice public|fleet|workplace", "open_24h:bool", "parking_fee:money 0..10",
                "max_chargers:int 2..40 capacity"],
                words=["Westfield Mall Garage", "I-5 Rest Stop Exit 142", "City Hall Lot B", "Harborview Park & Ride",
                       "Airport Cell Phone Lot", "Greenway Grocery"]),
            dict(name="charger", prefix="CG", parent="charging_station", fields=[
                "evse_code:code label unique", "connector:choice ccs1|ccs2|chademo|j1772|nacs|type2",
                "max_kw:int 7..350", "price_per_kwh:money 0.15..0.79", "idle_fee_per_min:money 0..1"],
                states=["available", "faulted", "decommissioned"],
                transitions={"report_fault": "available>faulted", "repair": "faulted>available",
                             "decommission": "available,faulted>decommissioned"}),
            dict(name="driver", prefix="DR", fields=[
                "full_name:name label", "email:email unique", "rfid_card:code unique",
                "prepaid_balance:money 0..500 balance", "plan:choice pay_as_you_go|member|fleet",
                "vehicle_model:text"],
                states=["active", "suspended"],
                transitions={"suspend": "active>suspended", "reactivate": "suspended>active"}),
            dict(name="charging_session", prefix="CS", parent="charger", refs=["driver"], fields=[
                "session_code:code label unique", "started_at:datetime", "energy_kwh:float 0..150",
                "cost:money 0..120", "soc_start_pct:int 0..100", "soc_end_pct:int 0..100",
                "payment:choice app|rfid|credit_card|fleet_account"],
                states=["charging", "completed", "interrupted", "billed", "refunded"],
                transitions={"stop": "charging>completed", "interrupt": "charging>interrupted",
                             "bill": "completed,interrupted>billed", "refund": "billed>refunded"}),
            dict(name="charger_reservation", prefix="RV", parent="charger", refs=["driver"], fields=[
                "reservation_code:code label unique", "hold_until:datetime deadline", "reservation_fee:money 0..5",
                "requested_kw:int 7..350", "vehicle_plate:code"],
                states=["held", "fulfilled", "cancelled"],
                transitions={"fulfil": "held>fulfilled", "cancel": "held>cancelled"}),
        ],
    ),
]
