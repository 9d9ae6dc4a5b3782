"""More logistics domains (cold chain, parcel lockers, container port terminal)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="cold_chain_monitoring", sector="logistics", title="Cold chain shipment monitoring",
        description="Quality controllers at a pharmaceutical distributor watch temperature loggers on "
                    "refrigerated shipments, triage excursion alerts, and release or quarantine goods on arrival.",
        actor="cold chain quality controller",
        entities=[
            dict(name="carrier", prefix="CA", fields=[
                "carrier_name:text label", "scac_code:code unique", "gdp_certified:bool",
                "on_time_rate:float 0.6..1", "dispatch_email:email", "reefer_units:int 2..400"],
                states=["approved", "probation", "disqualified"],
                transitions={"place_on_probation": "approved>probation", "restore": "probation>approved",
                             "disqualify": "approved,probation>disqualified"},
                words=["Polar Freight Lines", "CryoPort Logistics", "BlueIce Carriers", "Nordic Reefer AS",
                       "ThermoTrans Express", "Arctic Lane Haulage"]),
            dict(name="consignee", prefix="CN", fields=[
                "site_name:text label", "license_code:code unique",
                "receiving_hours:choice round_the_clock|business_hours|weekdays_only", "has_ultra_freezer:bool",
                "contact_phone:phone", "city:choice boston|chicago|atlanta|denver|seattle|dallas"]),
            dict(name="shipment", prefix="SH", parent="carrier", refs=["consignee"], fields=[
                "shipment_number:code label unique",
                "product_class:choice vaccines|biologics|insulin|cell_therapy|clinical_samples",
                "min_temp_c:float -80..8", "max_temp_c:float -60..25",
                "mode:choice air|reefer_truck|ocean_reefer", "eta:datetime",
                "stability_budget_min:int 0..240 balance", "pallets:int 1..33"],
                states=["booked", "in_transit", "arrived", "released", "quarantined", "rejected"],
                transitions={"depart": "booked>in_transit", "arrive": "in_transit>arrived",
                             "release": "arrived>released", "quarantine": "arrived>quarantined",
                             "clear_quarantine": "quarantined>released", "reject": "quarantined>rejected"}),
            dict(name="data_logger", prefix="DL", parent="shipment", fields=[
                "logger_serial:code label unique", "probe:choice air|product_simulant|dry_ice",
                "battery_pct:int 0..100", "interval_min:int 1..30", "calibrated_on:datetime",
                "last_reading_c:float -80..30"],
                states=["armed", "recording", "stopped", "failed"],
                transitions={"start_recording": "armed>recording", "stop_recording": "recording>stopped",
                             "mark_failed": "armed,recording>failed"}),
            dict(name="excursion", prefix="EX", parent="data_logger", fields=[
                "alert_code:code label unique", "peak_temp_c:float -90..45", "duration_min:int 1..720",
                "severity:choice minor|major|critical", "detected_on:datetime", "disposition_due:datetime deadline"],
                states=["open", "acknowledged", "closed_acceptable", "closed_product_loss"],
                transitions={"acknowledge": "open>acknowledged",
                             "close_as_acceptable": "acknowledged>closed_acceptable",
                             "declare_product_loss": "acknowledged>closed_product_loss"}),
        ],
    ),
    Domain(
        id="last_mile_lockers", sector="logistics", title="Parcel locker network",
        description="Locker network operators assign parcels to compartments in self-service pickup lockers, "
                    "send pickup codes, and recall parcels nobody collects in time.",
        actor="locker network operator",
        entities=[
            dict(name="locker_site", prefix="LS", fields=[
                "site_name:text label", "site_code:code unique",
                "host:choice supermarket|train_station|gas_station|campus|apartment_lobby",
                "compartment_slots:int 6..120 capacity", "open_all_hours:bool", "power:choice grid|solar"],
                states=["online", "maintenance", "offline"],
                transitions={"start_maintenance": "online>maintenance", "bring_online": "maintenance,offline>online",
                             "take_offline": "online,maintenance>offline"},
                words=["Central Station Hub", "Maple St. Grocer", "North Campus Library", "Harborview Apartments",
                       "Route 9 Gas", "Eastgate Mall"]),
            dict(name="compartment", prefix="CP", parent="locker_site", fields=[
                "door_code:code label", "size:choice small|medium|large|xl", "refrigerated:bool",
                "door_sensor_ok:bool", "open_cycles:int 0..50000"],
                states=["free", "occupied", "jammed", "disabled"],
                transitions={"occupy": "free>occupied", "vacate": "occupied>free",
                             "report_jam": "free,occupied>jammed", "repair": "jammed>free",
                             "disable": "jammed>disabled"}),
            dict(name="courier", prefix="CR", fields=[
                "full_name:name label", "badge_number:code unique", "company:choice dhl|ups|local_express|amazon_flex",
                "phone:phone", "drops_today:int 0..200", "zone:choice north|south|east|west"],
                states=["active", "suspended"],
                transitions={"suspend": "active>suspended", "reinstate": "suspended>active"}),
            dict(name="parcel", prefix="PC", parent="compartment", refs=["courier"], fields=[
                "tracking_number:code label unique", "recipient_email:email", "pickup_pin:code",
                "weight_kg:float 0.1..25", "pickup_deadline:datetime deadline", "cash_on_delivery:money 0..500",
                "signature_required:bool"],
                states=["announced", "in_locker", "collected", "expired", "returned_to_sender"],
                transitions={"deposit": "announced>in_locker", "collect": "in_locker>collected",
                             "expire": "in_locker>expired", "return_to_sender": "expired>returned_to_sender"}),
            dict(name="recall", prefix="RC", parent="locker_site", refs=["courier"], fields=[
                "task_code:code label unique", "parcels_to_collect:int 1..30", "due_by:datetime",
                "priority:choice low|normal|high", "van_plate:code"],
                states=["open", "assigned", "done", "cancelled"],
                transitions={"assign": "open>assigned", "complete": "assigned>done",
                             "cancel": "open,assigned>cancelled"}),
        ],
    ),
    Domain(
        id="port_terminal", sector="logistics", title="Container port terminal",
        description="Terminal planners allocate berths to vessel calls, track containers through the yard, and "
                    "release import boxes to truckers once customs holds clear.",
        actor="terminal planner",
        entities=[
            dict(name="berth", prefix="BE", fields=[
                "berth_code:code label unique", "length_m:int 200..450", "depth_m:float 10..18",
                "cranes:int 1..8", "shore_power:bool"],
                states=["available", "occupied", "maintenance"],
                transitions={"assign_vessel": "available>occupied", "clear": "occupied>available",
                             "start_maintenance": "available>maintenance", "end_maintenance": "maintenance>available"}),
            dict(name="vessel_call", prefix="VC", parent="berth", fields=[
                "vessel_name:text label", "voyage_number:code unique",
                "shipping_line:choice maersk|msc|cma_cgm|cosco|hapag_lloyd|one", "eta:datetime",
                "loa_m:int 120..400", "moves_planned:int 50..4000"],
                states=["announced", "berthed", "working", "departed", "cancelled"],
                transitions={"moor": "announced>berthed", "start_operations": "berthed>working",
                             "sail": "working>departed", "cancel": "announced>cancelled"},
                words=["Maersk Elba", "MSC Aurora", "CMA CGM Tage", "Cosco Shipping Lotus", "Hamburg Express",
                       "ONE Harmony"]),
            dict(name="yard_block", prefix="YB", fields=[
                "block_code:code label unique", "ground_slots:int 4..600 capacity", "max_tier:int 2..6",
                "reefer_plugs:int 0..200", "zone:choice import|export|empty|reefer|hazardous"]),
            dict(name="container", prefix="CT", parent="yard_block", refs=["vessel_call"], fields=[
                "container_number:code label unique", "size_type:choice 20GP|40GP|40HC|45HC|20RF|40RF",
                "gross_weight_kg:int 2000..32500", "hazardous:bool", "free_time_ends:datetime deadline",
                "storage_charges:money 0..5000 balance"],
                states=["on_vessel", "in_yard", "on_hold", "released", "gated_out"],
                transitions={"discharge": "on_vessel>in_yard", "place_hold": "in_yard>on_hold",
                             "lift_hold": "on_hold>in_yard", "release": "in_yard>released",
                             "gate_out": "released>gated_out"}),
            dict(name="hold", prefix="HO", parent="container", fields=[
                "hold_reference:code label unique", "agency:choice customs|agriculture|fda|fish_wildlife",
                "hold_kind:choice documentary|physical_exam|x_ray|fumigation", "placed_on:datetime",
                "exam_fee:money 0..2500"],
                states=["active", "exam_scheduled", "released"],
                transitions={"schedule_exam": "active>exam_scheduled", "release": "active,exam_scheduled>released"}),
            dict(name="appointment", prefix="AP", parent="container", fields=[
                "appointment_code:code label unique", "trucking_company:text", "tractor_plate:code",
                "window_start:datetime", "gate_lane:int 1..20", "chassis_provided:bool"],
                states=["booked", "arrived", "completed", "missed", "cancelled"],
                transitions={"check_in_at_gate": "booked>arrived", "complete": "arrived>completed",
                             "mark_missed": "booked>missed", "cancel": "booked>cancelled"}),
        ],
    ),
]
