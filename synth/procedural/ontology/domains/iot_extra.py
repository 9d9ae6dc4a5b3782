"""More IoT domains (smart parking garage, water network telemetry)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="smart_parking", sector="iot", title="Smart parking garage",
        description="Garage operators watch bay occupancy sensors across parking levels, manage permit holders' "
                    "reservations, and issue and settle parking violations.",
        actor="garage operator",
        entities=[
            dict(name="parking_level", prefix="PL", fields=[
                "level_name:text label", "level_code:code unique", "bay_slots:int 10..400 capacity",
                "ev_chargers:int 0..40", "clearance_m:float 1.9..2.8", "covered:bool"],
                states=["open", "restricted", "closed"],
                transitions={"restrict": "open>restricted", "lift_restriction": "restricted>open",
                             "close": "open,restricted>closed", "reopen": "closed>open"},
                words=["P1 Basement", "P2 Basement", "Ground Level", "Level 3 Roof", "Visitor Deck"]),
            dict(name="parking_bay", prefix="PB", parent="parking_level", fields=[
                "bay_code:code label unique", "bay_kind:choice standard|compact|accessible|ev|motorcycle",
                "sensor_serial:code", "sensor_battery_pct:int 0..100", "last_heartbeat:datetime",
                "reservable:bool"],
                states=["vacant", "occupied", "reserved", "out_of_order"],
                transitions={"mark_occupied": "vacant,reserved>occupied", "mark_vacant": "occupied>vacant",
                             "hold": "vacant>reserved", "release_hold": "reserved>vacant",
                             "flag_out_of_order": "vacant,occupied,reserved>out_of_order",
                             "restore": "out_of_order>vacant"}),
            dict(name="permit_holder", prefix="PH", fields=[
                "full_name:name label", "email:email unique", "plate_number:code unique",
                "permit_kind:choice monthly|employee|resident|carpool", "prepaid_credit:money 0..500 balance",
                "valid_until:datetime deadline"],
                states=["active", "suspended", "expired"],
                transitions={"suspend": "active>suspended", "reinstate": "suspended>active",
                             "expire": "active,suspended>expired"}),
            dict(name="reservation", prefix="RV", parent="parking_bay", refs=["permit_holder"], fields=[
                "reservation_code:code label unique", "starts_at:datetime", "hours:int 1..24",
                "hourly_rate:money 0..40", "vehicle_plate:code", "ev_charging:bool"],
                states=["booked", "active", "completed", "cancelled", "no_show"],
                transitions={"start": "booked>active", "complete": "active>completed",
                             "cancel": "booked>cancelled", "mark_no_show": "booked>no_show"}),
            dict(name="violation", prefix="VL", parent="parking_bay", fields=[
                "citation_number:code label unique", "plate_seen:code",
                "reason:choice overstay|no_permit|wrong_bay_kind|blocking_lane", "fine:money 15..250",
                "issued_on:datetime", "pay_by:datetime deadline"],
                states=["issued", "paid", "appealed", "voided"],
                transitions={"record_payment": "issued>paid", "appeal": "issued>appealed",
                             "grant_appeal": "appealed>voided", "deny_appeal": "appealed>issued",
                             "void": "issued>voided"}),
        ],
    ),
    Domain(
        id="water_network_sensors", sector="iot", title="Water network telemetry",
        description="Network controllers at a water utility monitor pressure, flow and acoustic sensors across "
                    "district metered areas, triage leak alarms, and dispatch repair crews.",
        actor="water network controller",
        entities=[
            dict(name="district_area", prefix="DA", fields=[
                "dma_name:text label", "dma_code:code unique", "connections:int 300..8000",
                "target_pressure_bar:float 2..6", "night_flow_baseline_lps:float 0.5..40",
                "zone_kind:choice residential|commercial|industrial|mixed"],
                words=["Hillcrest DMA", "Riverside North", "Old Town Low Zone", "Airport Industrial",
                       "Lakeside High Zone", "Millbrook"]),
            dict(name="sensor", prefix="SN", parent="district_area", fields=[
                "serial_number:code label unique", "sensor_kind:choice pressure|flow|acoustic_logger|water_quality",
                "battery_pct:int 0..100", "reporting_interval_min:int 1..60", "depth_m:float 0..4",
                "last_reading:float 0..500", "installed_on:datetime"],
                states=["online", "offline", "faulty", "decommissioned"],
                transitions={"mark_offline": "online>offline", "bring_online": "offline,faulty>online",
                             "mark_faulty": "online,offline>faulty",
                             "decommission": "offline,faulty>decommissioned"}),
            dict(name="alarm", prefix="AL", parent="sensor", fields=[
                "alarm_code:code label unique",
                "alarm_kind:choice low_pressure|high_flow|leak_noise|turbidity|comms_loss",
                "measured_value:float 0..500", "threshold_value:float 0..500", "raised_on:datetime",
                "acknowledge_by:datetime", "priority:choice p1|p2|p3"],
                states=["raised", "acknowledged", "escalated", "cleared", "false_alarm"],
                transitions={"acknowledge": "raised>acknowledged", "escalate": "raised,acknowledged>escalated",
                             "clear": "acknowledged,escalated>cleared", "dismiss": "raised,acknowledged>false_alarm"}),
            dict(name="repair_crew", prefix="RC", fields=[
                "crew_name:text label", "supervisor:name", "phone:phone", "vans:int 1..4",
                "callout_hours_left:float 0..60 balance", "excavation_capable:bool"],
                states=["available", "dispatched", "off_shift"],
                transitions={"dispatch": "available>dispatched", "stand_down": "dispatched>available",
                             "end_shift": "available>off_shift", "start_shift": "off_shift>available"}),
            dict(name="work_order", prefix="WO", parent="alarm", refs=["repair_crew"], fields=[
                "wo_number:code label unique", "job:choice leak_repair|valve_exercise|sensor_replacement|main_flush",
                "estimated_loss_m3:float 0..5000", "road_closure:bool", "target_completion:datetime",
                "cost:money 0..50000"],
                states=["open", "assigned", "in_progress", "completed", "cancelled"],
                transitions={"assign": "open>assigned", "start_work": "assigned>in_progress",
                             "complete": "in_progress>completed", "cancel": "open,assigned>cancelled"}),
        ],
    ),
]
