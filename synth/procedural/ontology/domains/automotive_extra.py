"""More automotive domains (tire shop)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="tire_shop", sector="automotive", title="Tire shop service desk",
        description="Service writers at a tire shop sell and fit tires from stock, book vehicles into service "
                    "bays, and run seasonal tire storage for customers.",
        actor="tire shop service writer",
        entities=[
            dict(name="tire_model", prefix="TM", fields=[
                "model_name:text label", "sku:code unique",
                "brand:choice michelin|bridgestone|continental|pirelli|goodyear|hankook",
                "season:choice summer|winter|all_season|all_terrain", "on_hand:int 0..200 balance",
                "unit_price:money 60..450", "load_index:int 80..125"],
                states=["stocked", "special_order", "discontinued"],
                transitions={"move_to_special_order": "stocked>special_order",
                             "restock": "special_order>stocked",
                             "discontinue": "stocked,special_order>discontinued"},
                words=["Michelin CrossClimate2 225/45R17", "Bridgestone Blizzak WS90 205/55R16",
                       "Continental ExtremeContact DWS06 245/40R18", "Pirelli Scorpion AT+ 265/70R17",
                       "Goodyear Assurance WeatherReady 235/65R17", "Hankook Kinergy PT 215/60R16"]),
            dict(name="customer", prefix="CU", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "fleet_account:bool",
                "loyalty_points:int 0..5000 balance", "text_reminders:bool"]),
            dict(name="vehicle", prefix="VH", parent="customer", fields=[
                "plate:code label unique", "make_model:text", "model_year:int 1995..2025",
                "wheel_diameter_in:int 14..22", "tpms_equipped:bool", "odometer_km:int 0..400000"]),
            dict(name="service_bay", prefix="SB", fields=[
                "bay_name:text label", "lift_kind:choice two_post|four_post|in_ground",
                "daily_slots:int 4..16 capacity", "alignment_rig:bool", "lead_technician:name"],
                states=["open", "down"],
                transitions={"mark_down": "open>down", "reopen": "down>open"},
                words=["Bay 1 Quick Lane", "Bay 2", "Bay 3 Alignment", "Bay 4 Heavy Duty", "Bay 5"]),
            dict(name="appointment", prefix="AP", parent="service_bay", refs=["vehicle", "tire_model"],
                 fields=[
                "work_order:code label unique",
                "service:choice mount_balance|rotation|flat_repair|alignment|seasonal_swap|tpms_service",
                "scheduled_for:datetime", "tires_fitted:int 0..4", "quoted_total:money 20..2000",
                "torque_rechecked:bool"],
                states=["booked", "checked_in", "in_bay", "completed", "no_show", "cancelled"],
                transitions={"check_in": "booked>checked_in", "pull_into_bay": "checked_in>in_bay",
                             "complete": "in_bay>completed", "mark_no_show": "booked>no_show",
                             "cancel": "booked,checked_in>cancelled"}),
            dict(name="storage_set", prefix="SS", parent="vehicle", fields=[
                "rack_location:code label unique", "tire_count:int 2..4", "tread_depth_mm:float 1.6..10",
                "season_stored:choice summer|winter", "stored_since:datetime", "storage_paid_until:datetime deadline",
                "storage_fee:money 40..160"],
                states=["stored", "retrieved", "disposed"],
                transitions={"retrieve": "stored>retrieved", "dispose": "stored>disposed"}),
        ],
    ),
]
