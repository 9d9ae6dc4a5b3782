"""Agriculture domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="farm_inventory", sector="agriculture", title="Row-crop farm records",
        description="Farm managers on a row-crop operation plan plantings per field, record input applications "
                    "from the chemical shed, and weigh harvest loads into storage bins.",
        actor="farm manager",
        entities=[
            dict(name="field_plot", prefix="FP", fields=[
                "field_name:text label", "block_code:code unique", "acreage:float 0.5..640",
                "soil_type:choice loam|clay|sandy|silt|peat", "irrigated:bool", "organic_certified:bool"],
                words=["North 40", "Creek Bottom", "Hilltop Orchard", "West Pivot", "Greenhouse 2", "Home Paddock"]),
            dict(name="crop_planting", prefix="CP", parent="field_plot", fields=[
                "planting_code:code label unique", "crop:choice corn|soybeans|wheat|tomatoes|alfalfa|apples",
                "planted_on:datetime", "expected_yield_per_acre:int 10..300", "harvest_by:datetime deadline",
                "seeding_rate:int 1000..40000"],
                states=["planned", "planted", "harvested", "failed"],
                transitions={"plant": "planned>planted", "harvest": "planted>harvested", "abandon": "planned,planted>failed"}),
            dict(name="input_product", prefix="IP", fields=[
                "product_name:text label", "product_type:choice seed|fertilizer|herbicide|insecticide|fungicide|fuel",
                "on_hand:float 0..20000 balance", "unit:choice kg|l|bag|gal", "unit_cost:money 0.5..400",
                "restricted_use:bool"],
                words=["Pioneer P1197 corn seed", "Urea 46-0-0", "Glyphosate 41%", "UAN 32% liquid nitrogen",
                       "Off-road diesel", "Azoxystrobin fungicide"]),
            dict(name="input_application", prefix="AR", parent="crop_planting", refs=["input_product"], fields=[
                "application_code:code label unique", "applied_on:datetime", "rate_per_acre:float 0..500",
                "acres_treated:float 0..640", "applicator:name", "wind_mph:int 0..25", "reentry_hours:int 0..72"],
                states=["planned", "applied", "voided"],
                transitions={"mark_applied": "planned>applied", "void": "planned>voided"}),
            dict(name="storage_bin", prefix="SB", fields=[
                "bin_name:text label", "stored_bushels:int 0..50000 balance", "moisture_target:float 12..16",
                "aerated:bool", "commodity:choice corn|soybeans|wheat|empty"],
                states=["filling", "sealed", "unloading"],
                transitions={"seal": "filling>sealed", "start_unloading": "sealed>unloading",
                             "resume_filling": "unloading>filling"}),
            dict(name="harvest_load", prefix="HL", parent="storage_bin", refs=["crop_planting"], fields=[
                "ticket_number:code label unique", "gross_bushels:float 50..1500", "moisture_pct:float 10..30",
                "test_weight_lb:float 40..64", "truck:code", "hauled_at:datetime"],
                states=["weighed", "accepted", "rejected"],
                transitions={"accept": "weighed>accepted", "reject": "weighed>rejected"}),
        ],
    ),
    Domain(
        id="livestock_records", sector="agriculture", title="Cattle herd records",
        description="Herd managers on a cattle ranch keep animals in pens, record veterinary treatments with "
                    "their withdrawal periods, and track breeding through calving.",
        actor="herd manager",
        entities=[
            dict(name="pen", prefix="PN", fields=[
                "pen_name:text label", "head_capacity:int 5..400 capacity",
                "pen_type:choice freestall|calf_hutch|pasture|feedlot|maternity",
                "water_source:choice trough|pond|automatic", "bedding:choice straw|sand|sawdust|none"],
                states=["open", "quarantined", "resting"],
                transitions={"quarantine": "open>quarantined", "lift_quarantine": "quarantined>open",
                             "rest": "open>resting", "restock": "resting>open"},
                words=["Maternity Pen A", "Calf Barn", "Heifer Pasture", "Freestall East", "Finishing Lot 3",
                       "Sick Pen"]),
            dict(name="animal", prefix="AN", parent="pen", fields=[
                "ear_tag:code label unique", "breed:choice holstein|jersey|angus|hereford|simmental",
                "sex:choice heifer|cow|bull|steer", "birth_date:datetime", "weight_kg:int 30..1200",
                "rfid:code unique"],
                states=["active", "sold", "culled", "deceased"],
                transitions={"sell": "active>sold", "cull": "active>culled", "record_death": "active>deceased"}),
            dict(name="drug_product", prefix="DP", fields=[
                "product_name:text label", "active_ingredient:text", "doses_on_hand:int 0..2000 balance",
                "meat_withdrawal_days:int 0..60", "milk_withdrawal_hours:int 0..240", "prescription_only:bool"],
                words=["Excenel RTU", "Draxxin", "Banamine", "Spectramast LC", "Ivomec Pour-On", "Nuflor"]),
            dict(name="treatment", prefix="TR", parent="animal", refs=["drug_product"], fields=[
                "treatment_code:code label unique", "diagnosis:choice mastitis|pneumonia|lameness|scours|pinkeye",
                "dose_ml:float 1..60", "treated_on:datetime", "withdrawal_until:datetime deadline",
                "veterinarian:name"],
                states=["ongoing", "completed", "failed"],
                transitions={"complete_course": "ongoing>completed", "mark_failed": "ongoing>failed"}),
            dict(name="breeding_event", prefix="BE", parent="animal", fields=[
                "event_code:code label unique", "method:choice ai|natural|embryo_transfer", "sire_code:code",
                "bred_on:datetime", "technician:name", "expected_calving:datetime"],
                states=["bred", "confirmed_pregnant", "open", "calved"],
                transitions={"confirm_pregnancy": "bred>confirmed_pregnant",
                             "mark_open": "bred,confirmed_pregnant>open", "record_calving": "confirmed_pregnant>calved"}),
        ],
    ),
]
