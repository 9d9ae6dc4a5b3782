"""Automotive domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="auto_repair_shop", sector="automotive", title="Auto repair shop",
        description="Service advisors at an independent auto repair shop write up repair orders for customers' "
                    "vehicles, get estimates authorized, and dispatch job lines to technicians.",
        actor="service advisor",
        entities=[
            dict(name="customer", prefix="CU", fields=[
                "full_name:name label", "phone:phone", "email:email unique",
                "preferred_contact:choice phone|sms|email", "fleet_account:bool", "shop_credit:money 0..1000 balance"]),
            dict(name="vehicle", prefix="VH", parent="customer", fields=[
                "plate_number:code label", "vin:code unique", "make_model:text", "model_year:int 1995..2025",
                "mileage:int 0..400000", "powertrain:choice gas|diesel|hybrid|electric"]),
            dict(name="technician", prefix="TC", fields=[
                "full_name:name label", "employee_code:code unique", "ase_certifications:int 0..9",
                "skill_level:choice a|b|c|lube", "flat_rate_pay:money 20..60"],
                states=["clocked_out", "clocked_in"],
                transitions={"clock_in": "clocked_out>clocked_in", "clock_out": "clocked_in>clocked_out"}),
            dict(name="repair_order", prefix="RO", parent="vehicle", fields=[
                "ro_number:code label unique", "complaint:text", "promised_at:datetime",
                "estimate:money 0..15000", "authorized_amount:money 0..15000", "odometer_in:int 0..400000",
                "max_job_lines:int 1..20 capacity"],
                states=["written_up", "awaiting_approval", "in_progress", "waiting_parts", "ready_for_pickup",
                        "closed"],
                transitions={"send_estimate": "written_up>awaiting_approval",
                             "authorize": "awaiting_approval>in_progress", "decline_work": "awaiting_approval>closed",
                             "wait_for_parts": "in_progress>waiting_parts", "resume": "waiting_parts>in_progress",
                             "finish": "in_progress>ready_for_pickup", "close": "ready_for_pickup>closed"}),
            dict(name="job_line", prefix="JB", parent="repair_order", refs=["technician"], fields=[
                "op_code:code label", "labor_hours:float 0.1..20", "parts_cost:money 0..5000",
                "labor_rate:money 90..220", "warranty:bool",
                "category:choice brakes|engine|electrical|suspension|maintenance|tires"],
                states=["pending", "in_work", "done", "declined"],
                transitions={"start": "pending>in_work", "complete": "in_work>done", "decline": "pending>declined"},
                words=["Front brake pads and rotors", "Synthetic oil change", "Timing belt replacement",
                       "Four-wheel alignment", "Battery replacement", "Check engine light diagnosis"]),
        ],
    ),
    Domain(
        id="fleet_management", sector="automotive", title="Company fleet management",
        description="Fleet coordinators assign company vehicles to licensed drivers, schedule preventive "
                    "maintenance, and review fuel-card transactions.",
        actor="fleet coordinator",
        entities=[
            dict(name="fleet_vehicle", prefix="VH", fields=[
                "unit_name:text label", "unit_number:code unique", "vin:code unique",
                "vehicle_type:choice sedan|pickup|cargo_van|box_truck|tractor",
                "fuel:choice gasoline|diesel|electric|cng", "odometer_km:int 0..900000", "acquired_on:datetime"],
                words=["Van 12 Ford Transit", "Truck 7 Isuzu NPR", "Pickup 3 Ford F-150", "Sedan 21 Camry Hybrid",
                       "Van 15 Mercedes Sprinter", "Tractor 2 Freightliner Cascadia"],
                states=["in_service", "in_shop", "out_of_service", "disposed"],
                transitions={"send_to_shop": "in_service>in_shop",
                             "return_to_service": "in_shop,out_of_service>in_service",
                             "ground": "in_service,in_shop>out_of_service", "dispose": "out_of_service>disposed"}),
            dict(name="driver", prefix="DR", fields=[
                "full_name:name label", "license_number:code unique", "license_class:choice a|b|c",
                "license_expires:datetime deadline", "safety_score:int 0..100", "phone:phone"],
                states=["active", "suspended", "terminated"],
                transitions={"suspend": "active>suspended", "reinstate": "suspended>active",
                             "terminate": "active,suspended>terminated"}),
            dict(name="vehicle_assignment", prefix="AS", parent="fleet_vehicle", refs=["driver"], fields=[
                "assignment_code:code label unique", "starts_at:datetime", "ends_at:datetime",
                "purpose:choice delivery_route|sales_calls|service_calls|pool", "start_odometer_km:int 0..900000",
                "take_home:bool"],
                states=["scheduled", "active", "returned", "cancelled"],
                transitions={"hand_over": "scheduled>active", "check_in": "active>returned",
                             "cancel": "scheduled>cancelled"}),
            dict(name="fuel_card", prefix="FC", parent="driver", fields=[
                "card_number:code label unique", "monthly_limit_left:money 0..3000 balance",
                "expires_at:datetime deadline", "fuel_only:bool", "pin_reset_required:bool"],
                states=["active", "blocked", "cancelled"],
                transitions={"block": "active>blocked", "unblock": "blocked>active",
                             "cancel": "active,blocked>cancelled"}),
            dict(name="fuel_transaction", prefix="FT", parent="fuel_card", refs=["fleet_vehicle"], fields=[
                "receipt_number:code label unique", "liters:float 1..600", "fuel_cost:money 1..1500",
                "merchant:text", "odometer_km:int 0..900000", "product:choice regular|premium|diesel|def|ev_charge"],
                states=["posted", "flagged", "approved", "disputed"],
                transitions={"approve": "posted,flagged>approved", "flag": "posted>flagged",
                             "dispute": "flagged>disputed"}),
            dict(name="maintenance_event", prefix="ME", parent="fleet_vehicle", fields=[
                "work_order:code label unique",
                "service_type:choice oil_change|tires|brakes|inspection|recall|collision", "cost:money 0..20000",
                "odometer_km:int 0..900000", "vendor:text", "scheduled_for:datetime"],
                states=["scheduled", "in_progress", "completed", "cancelled"],
                transitions={"start": "scheduled>in_progress", "complete": "in_progress>completed",
                             "cancel": "scheduled>cancelled"}),
        ],
    ),
]
