"""Health domains (pharmacy, laboratory, veterinary)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="pharmacy", sector="health", title="Retail pharmacy counter",
        description="Pharmacy technicians verify incoming prescriptions, fill and dispense them from shelf "
                    "stock, and track the refills each prescription has left.",
        actor="pharmacy technician",
        entities=[
            dict(name="patient", prefix="PT", fields=[
                "full_name:name label", "phone:phone", "birth_year:int 1930..2020",
                "insurance_plan:choice none|medicare|medicaid|commercial", "allergies:text", "copay_card:bool"]),
            dict(name="prescriber", prefix="DR", fields=[
                "full_name:name label", "npi:code unique",
                "specialty:choice family_medicine|pediatrics|cardiology|dermatology|psychiatry", "phone:phone",
                "dea_registered:bool"]),
            dict(name="drug", prefix="DG", fields=[
                "drug_name:text label", "ndc:code unique", "package_size:int 1..500",
                "form:choice tablet|capsule|liquid|inhaler|cream|injection", "on_hand:int 0..5000 balance",
                "schedule:choice none|II|III|IV|V", "unit_cost:money 0.05..400"],
                states=["stocked", "backordered", "recalled"],
                transitions={"mark_backordered": "stocked>backordered", "restock": "backordered>stocked",
                             "recall": "stocked,backordered>recalled"},
                words=["Amoxicillin 500 mg", "Lisinopril 10 mg", "Atorvastatin 20 mg", "Metformin 850 mg",
                       "Albuterol HFA 90 mcg", "Sertraline 50 mg", "Oxycodone 5 mg"]),
            dict(name="prescription", prefix="RX", parent="patient", refs=["prescriber", "drug"], fields=[
                "rx_number:code label unique", "quantity:int 1..360", "refills_remaining:int 0..11 balance",
                "days_supply:int 1..90", "written_on:datetime", "expires_at:datetime deadline", "directions:text"],
                states=["received", "verified", "on_hold", "transferred_out", "cancelled"],
                transitions={"verify": "received>verified", "hold": "received,verified>on_hold",
                             "release": "on_hold>verified", "transfer_out": "verified,on_hold>transferred_out",
                             "cancel": "received,on_hold>cancelled"}),
            dict(name="rx_fill", prefix="FL", parent="prescription", fields=[
                "fill_code:code label unique", "quantity_dispensed:int 1..360", "copay:money 0..250",
                "filled_on:datetime", "pharmacist_initials:code", "counseled:bool"],
                states=["queued", "filled", "picked_up", "returned_to_stock"],
                transitions={"complete": "queued>filled", "hand_out": "filled>picked_up",
                             "return_to_stock": "filled>returned_to_stock"}),
        ],
    ),
    Domain(
        id="lab_orders", sector="health", title="Clinical lab accessioning",
        description="Accessioning staff at a reference laboratory log test orders from client sites, track "
                    "specimens from collection to receipt, and release verified results.",
        actor="lab accessioner",
        entities=[
            dict(name="client_site", prefix="CL", fields=[
                "site_name:text label", "account_code:code unique", "phone:phone",
                "courier_route:choice A|B|C|D", "stat_pickups:bool"],
                words=["Northside Family Practice", "Riverbend Pediatrics", "St. Anne Oncology",
                       "Lakeshore Urgent Care", "Valley OB-GYN Associates", "Hillcrest Nursing Home"]),
            dict(name="patient", prefix="P", fields=[
                "full_name:name label", "mrn:code unique", "birth_year:int 1925..2023",
                "sex:choice female|male|other", "phone:phone"]),
            dict(name="test", prefix="T", fields=[
                "test_name:text label", "test_code:code unique", "specimen:choice blood|urine|swab|stool|tissue",
                "turnaround_hours:int 1..168", "list_price:money 5..900", "reagent_kits:int 0..400 balance",
                "reagent_lot_expires:datetime deadline"],
                states=["active", "suspended"],
                transitions={"suspend": "active>suspended", "reinstate": "suspended>active"},
                words=["Complete Blood Count", "Basic Metabolic Panel", "Lipid Panel", "Hemoglobin A1c",
                       "TSH", "Urinalysis", "SARS-CoV-2 PCR", "Vitamin D 25-OH"]),
            dict(name="lab_order", prefix="LO", parent="patient", refs=["client_site"], fields=[
                "accession:code label unique", "priority:choice routine|urgent|stat", "collected_at:datetime",
                "fasting:bool", "icd10_code:code", "billing:choice insurance|self_pay|client_bill",
                "max_tests:int 1..12 capacity"],
                states=["ordered", "collected", "received", "reported", "cancelled"],
                transitions={"collect": "ordered>collected", "receive": "collected>received",
                             "report": "received>reported", "cancel": "ordered,collected>cancelled"}),
            dict(name="result", prefix="RS", parent="lab_order", refs=["test"], fields=[
                "result_code:code label unique", "value:float 0..1000",
                "units:choice mg_dl|mmol_l|percent|cells_ul|iu_l", "flag:choice normal|low|high|critical",
                "verified_at:datetime", "performed_by:name"],
                states=["preliminary", "final", "corrected"],
                transitions={"finalize": "preliminary>final", "correct": "final>corrected"}),
        ],
    ),
    Domain(
        id="veterinary_clinic", sector="health", title="Veterinary clinic and boarding",
        description="Reception staff at a veterinary practice with a boarding kennel keep pet records and "
                    "vaccinations current and book pets into kennels.",
        actor="veterinary receptionist",
        entities=[
            dict(name="pet_owner", prefix="OW", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "account_credit:money 0..1000 balance",
                "reminder_channel:choice sms|email|phone"]),
            dict(name="pet", prefix="PET", parent="pet_owner", fields=[
                "pet_name:text label", "species:choice dog|cat|rabbit|bird|reptile", "breed:text",
                "weight_kg:float 0.1..90", "microchip:code unique", "neutered:bool"],
                states=["active", "deceased"], transitions={"record_passing": "active>deceased"},
                words=["Biscuit", "Luna", "Mochi", "Rex", "Pepper", "Ziggy", "Olive"]),
            dict(name="kennel", prefix="K", fields=[
                "kennel_code:code label unique", "size:choice small|medium|large|giant",
                "spaces:int 1..3 capacity", "nightly_rate:money 20..90", "heated:bool",
                "wing:choice north|south|cattery"],
                states=["open", "sanitizing", "closed"],
                transitions={"sanitize": "open>sanitizing", "reopen": "sanitizing,closed>open",
                             "close": "open,sanitizing>closed"}),
            dict(name="boarding_stay", prefix="BS", parent="kennel", refs=["pet"], fields=[
                "stay_code:code label unique", "check_in_at:datetime", "pickup_by:datetime",
                "nights:int 1..30", "feeding:choice house_diet|owner_food|prescription_diet",
                "medication_needed:bool", "deposit:money 0..300 balance"],
                states=["booked", "checked_in", "checked_out", "cancelled"],
                transitions={"check_in": "booked>checked_in", "check_out": "checked_in>checked_out",
                             "cancel": "booked>cancelled"}),
            dict(name="vaccination", prefix="VX", parent="pet", fields=[
                "vaccine_name:text label", "lot_number:code", "given_on:datetime", "due_again:datetime",
                "dose_ml:float 0.5..2", "administered_by:name",
                "route:choice subcutaneous|intramuscular|intranasal|oral"],
                words=["Rabies 3-year", "DHPP", "Bordetella", "Leptospirosis", "FVRCP", "Feline Leukemia"]),
        ],
    ),
]
