"""More agriculture domains (greenhouse climate control, seed bank)."""

from synth.procedural.ontology.schema import Domain

_RECIPES = "grow|bloom|flush|propagation"

DOMAINS = [
    Domain(
        id="greenhouse_control", sector="agriculture", title="Greenhouse climate control",
        description="Growers at a commercial greenhouse set climate setpoints per zone, schedule fertigation "
                    "runs from nutrient tanks, and log crop batches from sowing to harvest.",
        actor="head grower",
        entities=[
            dict(name="greenhouse_zone", prefix="GZ", fields=[
                "zone_name:text label", "zone_code:code unique", "area_m2:int 200..20000",
                "bench_positions:int 4..400 capacity", "heating:choice gas_boiler|heat_pump|biomass",
                "shade_screen:bool", "co2_enrichment:bool"],
                states=["active", "fallow", "sanitizing"],
                transitions={"leave_fallow": "active>fallow", "start_sanitizing": "active,fallow>sanitizing",
                             "replant": "fallow,sanitizing>active"},
                words=["House 1 Propagation", "House 2 Tomatoes", "House 3 Cucumbers", "Bay 4 Herbs",
                       "Bay 5 Bedding Plants", "Quarantine Bay"]),
            dict(name="setpoint", prefix="CS", parent="greenhouse_zone", fields=[
                "profile_name:text label", "day_temp_c:float 14..30", "night_temp_c:float 10..24",
                "humidity_pct:int 50..95", "co2_ppm:int 400..1200", "vent_open_temp_c:float 18..32",
                "effective_from:datetime"],
                states=["draft", "active", "superseded"],
                transitions={"activate": "draft>active", "supersede": "active>superseded"}),
            dict(name="crop", prefix="CR", parent="greenhouse_zone", fields=[
                "batch_code:code label unique", "crop_species:choice tomato|cucumber|lettuce|basil|pepper|poinsettia",
                "variety:text", "plants:int 100..20000", "sown_on:datetime", "harvest_target:datetime",
                "expected_yield_kg:float 0..30000"],
                states=["sown", "transplanted", "growing", "harvesting", "harvested", "discarded"],
                transitions={"transplant": "sown>transplanted", "establish": "transplanted>growing",
                             "start_harvest": "growing>harvesting", "finish_harvest": "harvesting>harvested",
                             "discard": "sown,transplanted,growing>discarded"}),
            dict(name="fertigation_tank", prefix="FT", fields=[
                "tank_name:text label", "volume_liters:int 500..20000", "solution_left_l:float 0..20000 balance",
                f"recipe:choice {_RECIPES}", "last_refill:datetime", "mixer_ok:bool"],
                states=["in_service", "draining", "out_of_service"],
                transitions={"start_drain": "in_service>draining", "refill": "draining>in_service",
                             "take_out_of_service": "in_service,draining>out_of_service",
                             "return_to_service": "out_of_service>in_service"}),
            dict(name="irrigation_run", prefix="IR", parent="greenhouse_zone", refs=["fertigation_tank"], fields=[
                "run_code:code label unique", "starts_at:datetime", "duration_min:int 2..90",
                "ec_ms_cm:float 0.5..4", "ph:float 5..7", f"nutrient_recipe:choice {_RECIPES}",
                "drain_pct:int 0..60"],
                states=["scheduled", "running", "completed", "aborted"],
                transitions={"start": "scheduled>running", "complete": "running>completed",
                             "abort": "scheduled,running>aborted"}),
        ],
    ),
    Domain(
        id="seed_bank", sector="agriculture", title="Seed bank collection",
        description="Curators at a genebank accession seed lots from field collectors, run germination tests, "
                    "and ship samples to researchers who have signed transfer agreements.",
        actor="seed bank curator",
        entities=[
            dict(name="collector", prefix="CO", fields=[
                "full_name:name label", "email:email unique", "institution:text",
                "country:choice PE|ET|IN|MX|TR|US", "collecting_permits:int 0..20", "herbarium_vouchers:bool"]),
            dict(name="storage_vault", prefix="SV", fields=[
                "vault_name:text label", "temperature_c:float -20..5", "humidity_pct:int 10..40",
                "container_positions:int 50..5000 capacity", "safety_duplicate:bool", "backup_generator:bool"],
                states=["operational", "alarm", "offline"],
                transitions={"raise_alarm": "operational>alarm", "clear_alarm": "alarm>operational",
                             "take_offline": "operational,alarm>offline", "recommission": "offline>operational"},
                words=["Main Vault -18C", "Active Collection Room", "Safety Duplicate Box", "Cryo Dewar 2",
                       "Working Collection Fridge"]),
            dict(name="accession", prefix="AC", parent="storage_vault", refs=["collector"], fields=[
                "accession_number:code label unique", "species:text",
                "crop_group:choice cereal|legume|vegetable|wild_relative|forage|oilseed",
                "seeds_in_stock:int 0..100000 balance", "collected_on:datetime", "viability_pct:int 0..100",
                "origin:choice landrace|wild|breeding_line|cultivar"],
                states=["processing", "available", "restricted", "regeneration_needed", "deaccessioned"],
                transitions={"make_available": "processing>available", "restrict": "available>restricted",
                             "lift_restriction": "restricted>available",
                             "flag_for_regeneration": "available,restricted>regeneration_needed",
                             "mark_regenerated": "regeneration_needed>available",
                             "deaccession": "processing,regeneration_needed>deaccessioned"}),
            dict(name="germination_test", prefix="GT", parent="accession", fields=[
                "test_code:code label unique", "seeds_tested:int 25..400", "germinated:int 0..400",
                "pretreatment:choice none|scarification|cold_stratification|gibberellic_acid",
                "started_on:datetime", "read_by:datetime"],
                states=["set_up", "counting", "completed", "invalid"],
                transitions={"start_counting": "set_up>counting", "complete": "counting>completed",
                             "invalidate": "set_up,counting>invalid"}),
            dict(name="researcher", prefix="RS", fields=[
                "full_name:name label", "email:email unique", "institution:text", "smta_signed:bool",
                "country:choice US|KE|BR|DE|IN|AU"]),
            dict(name="seed_request", prefix="SR", parent="accession", refs=["researcher"], fields=[
                "request_code:code label unique", "seeds_requested:int 10..500",
                "purpose:choice breeding|research|education|repatriation", "import_permit_expires:datetime deadline",
                "phytosanitary_certificate:bool", "courier:choice dhl|fedex|post"],
                states=["received", "approved", "shipped", "declined"],
                transitions={"approve": "received>approved", "ship": "approved>shipped",
                             "decline": "received,approved>declined"}),
        ],
    ),
]
