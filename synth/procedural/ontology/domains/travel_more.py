"""More travel domains (flights, car rental)."""

from synth.procedural.ontology.schema import Domain

_AIRPORTS = "CDG|JFK|LHR|NRT|SFO|DXB"

DOMAINS = [
    Domain(
        id="flight_booking", sector="travel", title="Airline reservations",
        description="Airline reservation agents sell seats on scheduled flights, check passengers and their "
                    "bags in, and issue travel credits after disruptions.",
        actor="airline reservation agent",
        entities=[
            dict(name="passenger", prefix="PX", fields=[
                "full_name:name label", "email:email unique", "passport_number:code unique",
                "frequent_flyer_miles:int 0..500000 balance", "nationality:choice FR|US|GB|JP|AE|IN",
                "meal_preference:choice standard|vegetarian|halal|kosher|gluten_free"]),
            dict(name="flight", prefix="FL", fields=[
                "flight_number:code label", f"origin:choice {_AIRPORTS}", f"destination:choice {_AIRPORTS}",
                "departure_at:datetime", "curfew_at:datetime deadline", "seats:int 50..300 capacity", "base_fare:money 49..1800",
                "aircraft:choice A320|A321|B737|B787|A350"],
                states=["scheduled", "delayed", "boarding", "departed", "cancelled"],
                transitions={"delay": "scheduled>delayed", "reschedule": "delayed>scheduled",
                             "start_boarding": "scheduled,delayed>boarding", "depart": "boarding>departed",
                             "cancel": "scheduled,delayed>cancelled"},
                words=["AF1234", "BA0117", "JL0005", "UA0901", "EK0073", "LH0400"]),
            dict(name="flight_booking", prefix="PNR", parent="flight", refs=["passenger"], fields=[
                "record_locator:code label unique", "cabin:choice economy|premium|business|first",
                "fare_paid:money 49..9000", "bag_allowance:int 1..3 capacity", "seat_assignment:code",
                "booked_at:datetime"],
                states=["held", "ticketed", "checked_in", "boarded", "cancelled"],
                transitions={"ticket": "held>ticketed", "check_in": "ticketed>checked_in",
                             "board": "checked_in>boarded", "cancel": "held,ticketed>cancelled"}),
            dict(name="checked_bag", prefix="BG", parent="flight_booking", fields=[
                "tag_number:code label unique", "weight_kg:float 1..32", "oversized:bool", "excess_fee:money 0..200",
                "special_handling:choice none|fragile|sports|instrument"],
                states=["checked", "loaded", "delivered", "missing"],
                transitions={"load": "checked>loaded", "deliver": "loaded>delivered",
                             "report_missing": "checked,loaded>missing", "locate": "missing>delivered"}),
            dict(name="travel_credit", prefix="TC", parent="passenger", fields=[
                "voucher_code:code label unique", "remaining_value:money 0..2000 balance",
                "reason:choice cancellation|delay_compensation|goodwill", "expires_at:datetime deadline",
                "transferable:bool"],
                states=["active", "voided"], transitions={"void": "active>voided"}),
        ],
    ),
    Domain(
        id="car_rental", sector="travel", title="Car rental counter",
        description="Rental counter agents hand out cars from branch fleets, close rental agreements on return, "
                    "and process damage found at check-in.",
        actor="rental counter agent",
        entities=[
            dict(name="branch", plural="branches", prefix="BR", fields=[
                "branch_name:text label", "location_code:code unique", "city:choice LA|Seattle|Miami|Denver|Boston",
                "phone:phone", "opens_at_hour:int 5..10", "closes_at_hour:int 17..24", "after_hours_dropoff:bool",
                "parking_spaces:int 10..400 capacity"],
                words=["LAX Airport", "Downtown Seattle", "Miami Beach", "Denver Union Station", "Boston Logan",
                       "Sea-Tac Airport"]),
            dict(name="vehicle", prefix="V", parent="branch", fields=[
                "plate:code label unique", "make_model:text", "vehicle_class:choice economy|compact|suv|minivan|luxury",
                "odometer_km:int 0..150000", "daily_rate:money 25..300", "fuel_eighths:int 0..8"],
                states=["available", "rented", "in_maintenance", "retired"],
                transitions={"dispatch": "available>rented", "check_in": "rented>available",
                             "send_to_maintenance": "available,rented>in_maintenance",
                             "return_to_fleet": "in_maintenance>available",
                             "retire": "available,in_maintenance>retired"}),
            dict(name="renter", prefix="CU", fields=[
                "full_name:name label", "email:email unique", "license_number:code unique",
                "license_expires:datetime deadline", "loyalty_tier:choice base|silver|gold", "young_driver:bool"],
                states=["good_standing", "do_not_rent"],
                transitions={"ban": "good_standing>do_not_rent", "clear": "do_not_rent>good_standing"}),
            dict(name="rental_agreement", prefix="RA", parent="vehicle", refs=["renter"], fields=[
                "agreement_number:code label unique", "pickup_at:datetime", "return_due:datetime",
                "daily_rate:money 25..300", "coverage:choice none|cdw|full", "deposit_held:money 0..1000 balance",
                "mileage_out:int 0..150000"],
                states=["reserved", "on_rent", "returned", "cancelled", "no_show"],
                transitions={"start": "reserved>on_rent", "close_out": "on_rent>returned",
                             "cancel": "reserved>cancelled", "mark_no_show": "reserved>no_show"}),
            dict(name="damage_report", prefix="DR", parent="rental_agreement", fields=[
                "report_code:code label unique", "severity:choice cosmetic|minor|major|total_loss",
                "repair_estimate:money 0..25000", "panel:choice front|rear|left|right|roof|interior",
                "photos:int 0..20", "reported_at:datetime"],
                states=["reported", "assessed", "charged", "waived"],
                transitions={"assess": "reported>assessed", "charge": "assessed>charged",
                             "waive": "reported,assessed>waived"}),
        ],
    ),
]
