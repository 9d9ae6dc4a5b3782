"""More energy domains (gas meter reading)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="gas_meter_reading", sector="energy", title="Gas meter reading",
        description="Meter-reading supervisors at a gas utility route readers to meters, validate readings "
                    "against expected usage, and schedule meter exchanges for failed or outdated meters.",
        actor="meter reading supervisor",
        entities=[
            dict(name="route", prefix="RR", fields=[
                "route_code:code label unique", "area:choice north|south|east|west|downtown",
                "cycle_day:int 1..28", "max_meters:int 10..400 capacity", "walk_km:float 2..25",
                "vehicle_needed:bool"],
                words=["N-01 Hillside", "N-07 Orchard", "S-03 Riverside", "E-12 Industrial Park", "W-05 Old Town",
                       "D-02 Main Street"]),
            dict(name="gas_meter", prefix="GM", parent="route", fields=[
                "meter_serial:code label unique", "premise_address:text",
                "meter_kind:choice diaphragm|rotary|turbine|smart_ami", "dials:int 4..8",
                "last_index_ccf:int 0..99999", "access:choice open|locked_gate|dog|inside_basement",
                "installed_on:datetime"],
                states=["active", "locked_off", "removed"],
                transitions={"lock_off": "active>locked_off", "restore_service": "locked_off>active",
                             "remove": "active,locked_off>removed"}),
            dict(name="reader", prefix="MR", fields=[
                "full_name:name label", "employee_number:code unique", "phone:phone", "handheld_serial:code",
                "reads_today:int 0..600", "transport:choice truck|car|on_foot"],
                states=["active", "on_leave"],
                transitions={"start_leave": "active>on_leave", "return_from_leave": "on_leave>active"}),
            dict(name="meter_reading", prefix="RD", parent="gas_meter", refs=["reader"], fields=[
                "reading_code:code label unique", "index_ccf:int 0..99999", "read_on:datetime",
                "source:choice manual|ami|customer|estimated",
                "skip_reason:choice none|dog|locked|obstructed|meter_damaged", "photo_taken:bool",
                "usage_vs_expected_pct:int 0..400"],
                states=["captured", "flagged", "validated", "rejected", "estimated"],
                transitions={"validate": "captured>validated", "flag": "captured>flagged",
                             "confirm": "flagged>validated", "reject": "captured,flagged>rejected",
                             "replace_with_estimate": "rejected>estimated"}),
            dict(name="meter_exchange", prefix="MX", parent="gas_meter", fields=[
                "order_number:code label unique",
                "reason:choice failed_test|smart_upgrade|damaged|periodic_replacement",
                "appointment_on:datetime", "technician:name", "new_meter_serial:code",
                "customer_must_be_home:bool"],
                states=["requested", "scheduled", "completed", "cancelled"],
                transitions={"schedule": "requested>scheduled", "complete": "scheduled>completed",
                             "cancel": "requested,scheduled>cancelled"}),
        ],
    ),
]
