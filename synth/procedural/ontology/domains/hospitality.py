"""Hospitality domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="restaurant_reservations", sector="hospitality", title="Restaurant reservations",
        description="Hosts at a busy restaurant book parties into lunch and dinner services, assign tables, "
                    "seat guests and settle their checks.",
        actor="restaurant host",
        entities=[
            dict(name="service", prefix="SV", fields=[
                "service_name:text label", "service_date:datetime", "booking_cutoff:datetime deadline",
                "max_bookings:int 10..80 capacity", "meal:choice breakfast|lunch|dinner|brunch",
                "tasting_menu:bool"],
                states=["open", "closed", "cancelled"],
                transitions={"close_books": "open>closed", "reopen_books": "closed>open",
                             "cancel": "open,closed>cancelled"},
                words=["Friday dinner", "Saturday brunch", "Sunday lunch", "Valentine's tasting", "Tuesday dinner",
                       "Chef's table Thursday"]),
            dict(name="dining_table", prefix="TB", fields=[
                "table_code:code label unique", "seats:int 2..12",
                "area:choice main|patio|bar|private_room|window", "accessible:bool", "combinable:bool"],
                states=["in_service", "out_of_service"],
                transitions={"take_out_of_service": "in_service>out_of_service",
                             "return_to_service": "out_of_service>in_service"},
                words=["T1", "T2", "T7", "P3", "B5", "PR1"]),
            dict(name="diner", prefix="GS", fields=[
                "full_name:name label", "phone:phone", "email:email unique", "visits:int 0..300",
                "allergies:text", "vip:bool", "house_credit:money 0..500 balance"]),
            dict(name="reservation", prefix="RS", parent="service", refs=["diner", "dining_table"], fields=[
                "confirmation_code:code label unique", "party_size:int 1..12", "arrival_time:datetime",
                "occasion:choice none|birthday|anniversary|business|date_night", "deposit:money 0..500 balance",
                "high_chair:bool"],
                states=["booked", "confirmed", "seated", "completed", "no_show", "cancelled"],
                transitions={"confirm": "booked>confirmed", "seat": "booked,confirmed>seated",
                             "complete": "seated>completed", "mark_no_show": "booked,confirmed>no_show",
                             "cancel": "booked,confirmed>cancelled"}),
            dict(name="guest_check", prefix="BL", parent="reservation", fields=[
                "check_number:code label unique", "subtotal:money 0..5000", "tip:money 0..1000",
                "covers:int 1..12", "payment:choice card|cash|split|house_account",
                "service_charge_pct:int 0..20"],
                states=["open", "paid", "comped"],
                transitions={"settle": "open>paid", "comp": "open>comped"}),
        ],
    ),
    Domain(
        id="event_ticketing", sector="hospitality", title="Event box office",
        description="Box-office staff put events at partner venues on sale, sell ticket orders to customers, "
                    "scan tickets at the door, and refund postponed shows.",
        actor="box office agent",
        entities=[
            dict(name="venue", prefix="VN", fields=[
                "venue_name:text label", "city:choice austin|denver|portland|nashville|chicago",
                "parking_spaces:int 0..5000", "indoor:bool", "box_office_phone:phone", "accessible_seating:bool"],
                words=["Riverside Amphitheater", "The Blue Room", "Civic Arena", "Grand Theatre", "Warehouse 9",
                       "Botanic Garden Lawn"]),
            dict(name="event", prefix="EV", parent="venue", fields=[
                "event_name:text label", "starts_at:datetime deadline", "ticket_limit:int 50..20000 capacity",
                "genre:choice concert|theatre|comedy|sports|conference|festival",
                "age_restriction:choice all_ages|16_plus|18_plus|21_plus", "base_price:money 10..500"],
                states=["scheduled", "on_sale", "postponed", "cancelled"],
                transitions={"open_sales": "scheduled>on_sale", "postpone": "scheduled,on_sale>postponed",
                             "reschedule": "postponed>on_sale",
                             "cancel": "scheduled,on_sale,postponed>cancelled"},
                words=["Jazz at Sunset", "Hamlet in the Park", "Stand-up Showcase", "Indie Rock Night",
                       "City Marathon Expo", "Winter Lights Festival"]),
            dict(name="ticket_buyer", prefix="CU", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "marketing_opt_in:bool",
                "wallet_credit:money 0..1000 balance"]),
            dict(name="ticket_order", prefix="OR", parent="ticket_buyer", fields=[
                "order_number:code label unique", "order_total:money 0..5000",
                "payment_method:choice card|apple_pay|paypal|gift_card", "placed_at:datetime",
                "promo_code:code", "fees:money 0..300"],
                states=["pending", "paid", "refunded", "charged_back"],
                transitions={"capture_payment": "pending>paid", "refund": "paid>refunded",
                             "record_chargeback": "paid>charged_back"}),
            dict(name="ticket", prefix="TK", parent="event", refs=["ticket_order"], fields=[
                "ticket_code:code label unique", "seat:code", "price_paid:money 0..1500",
                "tier:choice general|reserved|vip|accessible", "delivery:choice mobile|print_at_home|will_call"],
                states=["reserved", "issued", "scanned", "refunded", "void"],
                transitions={"issue": "reserved>issued", "scan": "issued>scanned", "refund": "issued>refunded",
                             "void": "reserved,issued>void"}),
        ],
    ),
]
