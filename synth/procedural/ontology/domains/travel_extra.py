"""More travel domains (cruises, guided tours, airport lounges)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="cruise_bookings", sector="travel", title="Cruise line reservations",
        description="Cruise reservation agents sell cabins on scheduled sailings, add guests' shore excursions, "
                    "and manage the onboard credit on each guest's folio.",
        actor="cruise reservation agent",
        entities=[
            dict(name="ship", prefix="SH", fields=[
                "ship_name:text label", "imo_number:code unique", "gross_tonnage:int 30000..230000",
                "home_port:choice miami|barcelona|southampton|seattle|singapore", "year_built:int 1995..2024",
                "crew_count:int 600..2400"],
                states=["in_service", "in_drydock", "retired"],
                transitions={"send_to_drydock": "in_service>in_drydock", "return_to_service": "in_drydock>in_service",
                             "retire": "in_service,in_drydock>retired"},
                words=["Aurora Serenade", "Coral Voyager", "Northern Meridian", "Azure Horizon", "Island Majesty",
                       "Baltic Pearl"]),
            dict(name="sailing", prefix="SA", parent="ship", fields=[
                "voyage_code:code label unique", "departs_at:datetime", "nights:int 3..21",
                "itinerary:choice caribbean|mediterranean|alaska|norway_fjords|transatlantic",
                "cabins_for_sale:int 2..1800 capacity", "lead_fare:money 399..9000"],
                states=["scheduled", "boarding", "at_sea", "completed", "cancelled"],
                transitions={"open_boarding": "scheduled>boarding", "set_sail": "boarding>at_sea",
                             "disembark": "at_sea>completed", "cancel": "scheduled>cancelled"}),
            dict(name="cruise_guest", prefix="CG", fields=[
                "full_name:name label", "email:email unique", "passport_number:code unique",
                "loyalty_tier:choice none|silver|gold|platinum", "onboard_credit:money 0..2000 balance",
                "mobility_assistance:bool"]),
            dict(name="cabin_booking", prefix="CB", parent="sailing", refs=["cruise_guest"], fields=[
                "booking_number:code label unique", "cabin_number:code",
                "cabin_category:choice inside|oceanview|balcony|suite", "occupants:int 1..5",
                "fare_total:money 400..40000", "final_payment_due:datetime",
                "dining_time:choice early|late|anytime"],
                states=["held", "deposited", "paid_in_full", "checked_in", "cancelled"],
                transitions={"take_deposit": "held>deposited", "take_final_payment": "deposited>paid_in_full",
                             "check_in": "paid_in_full>checked_in",
                             "cancel": "held,deposited,paid_in_full>cancelled"}),
            dict(name="excursion", prefix="EX", parent="cabin_booking", fields=[
                "excursion_name:text label", "port:choice cozumel|santorini|juneau|bergen|nassau|naples",
                "participants:int 1..6", "price_per_person:money 29..450", "tour_starts:datetime deadline",
                "activity_level:choice easy|moderate|strenuous"],
                states=["requested", "confirmed", "waitlisted", "cancelled"],
                transitions={"confirm": "requested,waitlisted>confirmed", "waitlist": "requested>waitlisted",
                             "cancel": "requested,confirmed,waitlisted>cancelled"},
                words=["Cozumel Reef Snorkel", "Santorini Caldera Walk", "Mendenhall Glacier Trek",
                       "Bergen Funicular and Fish Market", "Nassau Beach Day", "Pompeii Guided Tour"]),
        ],
    ),
    Domain(
        id="tour_operator", sector="travel", title="Guided tour operations",
        description="Operations staff at a tour operator schedule multi-day guided departures, assign tour "
                    "leaders, and manage travellers' bookings and room sharing.",
        actor="tour operations coordinator",
        entities=[
            dict(name="tour_package", prefix="TP", fields=[
                "package_name:text label", "product_code:code unique", "duration_days:int 2..21",
                "region:choice patagonia|morocco|japan|peru|iceland|vietnam",
                "difficulty:choice easy|moderate|challenging", "price_from:money 600..9000"],
                states=["on_sale", "withdrawn"],
                transitions={"withdraw": "on_sale>withdrawn", "relaunch": "withdrawn>on_sale"},
                words=["Inca Trail Classic", "Highlights of Morocco", "Iceland Ring Road", "Japan Alps and Kyoto",
                       "Patagonia W Trek", "Mekong Delta Explorer"]),
            dict(name="tour_leader", prefix="TL", fields=[
                "full_name:name label", "email:email unique", "primary_language:choice en|es|fr|de|ja",
                "wilderness_first_aid:bool", "day_rate:money 120..450", "rating:float 3..5"],
                states=["active", "on_leave", "inactive"],
                transitions={"grant_leave": "active>on_leave", "return_from_leave": "on_leave>active",
                             "deactivate": "active,on_leave>inactive"}),
            dict(name="departure", prefix="DP", parent="tour_package", refs=["tour_leader"], fields=[
                "departure_code:code label unique", "start_date:datetime",
                "max_travellers:int 4..16 capacity", "minimum_to_run:int 2..8", "single_supplement:money 0..1200",
                "hotel_grade:choice comfort|superior|boutique"],
                states=["on_request", "guaranteed", "running", "completed", "cancelled"],
                transitions={"guarantee": "on_request>guaranteed", "start_tour": "guaranteed>running",
                             "finish": "running>completed", "cancel": "on_request,guaranteed>cancelled"}),
            dict(name="traveller", prefix="TR", fields=[
                "full_name:name label", "email:email unique", "phone:phone",
                "dietary_needs:choice none|vegetarian|vegan|gluten_free|nut_allergy", "travel_insurance:bool",
                "emergency_phone:phone"]),
            dict(name="booking", prefix="BK", parent="departure", refs=["traveller"], fields=[
                "booking_ref:code label unique", "room_type:choice twin_share|double|single",
                "price_paid:money 600..12000", "outstanding_payment:money 0..9000 balance",
                "balance_due_by:datetime deadline", "pre_tour_hotel_nights:int 0..3", "airport_transfer:bool"],
                states=["provisional", "confirmed", "travelled", "cancelled"],
                transitions={"confirm": "provisional>confirmed", "mark_travelled": "confirmed>travelled",
                             "cancel": "provisional,confirmed>cancelled"}),
        ],
    ),
    Domain(
        id="airport_lounge", sector="travel", title="Airport lounge reception",
        description="Lounge reception staff admit members and eligible passengers while watching each lounge's "
                    "seating, redeem guest passes, and book shower suites.",
        actor="lounge receptionist",
        entities=[
            dict(name="lounge", prefix="LG", fields=[
                "lounge_name:text label", "terminal:choice T1|T2|T3|T4|T5", "seats:int 2..400 capacity",
                "opens_hour:int 0..6", "closes_hour:int 20..24", "airside:bool", "shower_suites:int 0..12"],
                states=["open", "restricted", "closed"],
                transitions={"restrict_entry": "open>restricted", "lift_restriction": "restricted>open",
                             "close": "open,restricted>closed", "reopen": "closed>open"},
                words=["Skyline Lounge", "Polaris Lounge C", "Aurora Business Lounge", "The Terrace",
                       "Galleries North", "Pier Lounge"]),
            dict(name="member", prefix="MB", fields=[
                "full_name:name label", "membership_number:code unique",
                "program:choice priority_pass|airline_gold|amex_platinum|paid_annual",
                "guest_passes:int 0..12 balance", "expires_on:datetime deadline", "email:email"],
                states=["active", "suspended", "lapsed"],
                transitions={"suspend": "active>suspended", "reinstate": "suspended>active",
                             "lapse": "active,suspended>lapsed"}),
            dict(name="visit", prefix="VI", parent="lounge", refs=["member"], fields=[
                "visit_code:code label unique", "flight_number:code", "flight_departs:datetime",
                "party_size:int 1..4", "cabin_class:choice economy|premium|business|first",
                "walk_in_fee:money 0..75"],
                states=["waiting", "admitted", "left", "refused"],
                transitions={"admit": "waiting>admitted", "check_out": "admitted>left", "refuse": "waiting>refused"}),
            dict(name="shower_booking", prefix="SB", parent="visit", fields=[
                "suite_number:code label", "slot_start:datetime", "duration_min:int 15..30",
                "towel_kit:choice standard|premium", "accessible_suite:bool"],
                states=["booked", "in_use", "done", "no_show"],
                transitions={"start_use": "booked>in_use", "finish": "in_use>done", "mark_no_show": "booked>no_show"}),
            dict(name="voucher", prefix="VO", parent="member", fields=[
                "voucher_code:code label unique", "issued_by:choice airline|credit_card|lounge_desk",
                "face_value:money 0..80", "valid_until:datetime deadline", "transferable:bool"],
                states=["issued", "redeemed", "expired"],
                transitions={"redeem": "issued>redeemed", "expire": "issued>expired"}),
        ],
    ),
]
