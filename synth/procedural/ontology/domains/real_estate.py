"""Real estate domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="property_rentals", sector="real_estate", title="Residential leasing office",
        description="Leasing agents for a residential property manager list vacant units, screen tenants, sign "
                    "leases and post rent charges.",
        actor="leasing agent",
        entities=[
            dict(name="property", prefix="PR", plural="properties", fields=[
                "property_name:text label", "address:text",
                "property_type:choice apartment_complex|townhomes|single_family|duplex",
                "year_built:int 1900..2024", "pet_friendly:bool", "site_manager:name"],
                words=["Oakwood Apartments", "Harbor View Lofts", "Cedar Ridge Townhomes", "14 Willow Lane",
                       "Parkside Commons", "The Granary Flats"]),
            dict(name="rental_unit", prefix="UN", parent="property", fields=[
                "unit_number:code label", "bedrooms:int 0..5", "bathrooms:float 1..4", "sqft:int 350..3500",
                "market_rent:money 700..6000", "floor:int 1..30"],
                states=["vacant", "listed", "occupied", "make_ready"],
                transitions={"advertise": "vacant,make_ready>listed", "occupy": "listed>occupied",
                             "move_out": "occupied>make_ready", "finish_turnover": "make_ready>vacant"}),
            dict(name="tenant", prefix="TN", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "monthly_income:money 1000..30000",
                "credit_score:int 300..850", "has_pets:bool"],
                states=["applicant", "approved", "denied"],
                transitions={"approve": "applicant>approved", "deny": "applicant>denied"}),
            dict(name="lease", prefix="LS", parent="rental_unit", refs=["tenant"], fields=[
                "lease_number:code label unique", "monthly_rent:money 700..6000",
                "security_deposit:money 0..12000 balance", "starts_on:datetime", "ends_on:datetime deadline",
                "term_months:int 1..24", "autopay:bool"],
                states=["draft", "signed", "active", "notice_given", "terminated"],
                transitions={"sign": "draft>signed", "activate": "signed>active", "give_notice": "active>notice_given",
                             "withdraw_notice": "notice_given>active",
                             "terminate_early": "active,notice_given>terminated"}),
            dict(name="rent_charge", prefix="RC", parent="lease", fields=[
                "charge_code:code label unique", "amount_due:money 0..6000 balance", "due_on:datetime",
                "charge_type:choice rent|late_fee|utility|pet_rent|parking", "period:code"],
                states=["open", "paid", "written_off"],
                transitions={"mark_paid": "open>paid", "write_off": "open>written_off"}),
        ],
    ),
    Domain(
        id="maintenance_requests", sector="real_estate", title="Building maintenance desk",
        description="Maintenance coordinators for an apartment portfolio dispatch technicians to residents' work "
                    "orders and track the spare parts each repair uses.",
        actor="maintenance coordinator",
        entities=[
            dict(name="building", prefix="BD", fields=[
                "building_name:text label", "address:text", "floors:int 1..60", "year_built:int 1900..2024",
                "has_elevator:bool"],
                words=["Linden Court", "The Meridian", "Riverside Towers", "Maple Gardens", "Station Square Lofts"]),
            dict(name="unit", prefix="UN", parent="building", fields=[
                "unit_number:code label", "occupant_name:name", "occupant_phone:phone", "bedrooms:int 0..5",
                "access_instructions:text", "pets_on_site:bool"]),
            dict(name="technician", prefix="TC", fields=[
                "full_name:name label", "phone:phone",
                "trade:choice plumbing|electrical|hvac|appliance|general|pest_control", "hourly_rate:money 35..150",
                "licensed:bool"],
                states=["on_duty", "off_duty"],
                transitions={"end_shift": "on_duty>off_duty", "start_shift": "off_duty>on_duty"}),
            dict(name="work_order", prefix="WO", parent="unit", refs=["technician"], fields=[
                "ticket_number:code label unique", "category:choice plumbing|electrical|hvac|appliance|pest|locks",
                "priority:choice low|normal|urgent|emergency", "reported_at:datetime",
                "respond_by:datetime", "permission_to_enter:bool", "issue_summary:text"],
                states=["submitted", "scheduled", "in_progress", "on_hold_parts", "completed", "cancelled"],
                transitions={"schedule": "submitted>scheduled", "start": "scheduled>in_progress",
                             "wait_for_parts": "in_progress>on_hold_parts", "resume": "on_hold_parts>in_progress",
                             "complete": "in_progress>completed", "cancel": "submitted,scheduled>cancelled"}),
            dict(name="spare_part", prefix="PT", fields=[
                "part_name:text label", "part_number:code unique", "on_hand:int 0..500 balance",
                "unit_cost:money 1..600", "reorder_level:int 0..50", "shelf_bin:code"],
                words=["Kitchen faucet cartridge", "HVAC filter 20x25x1", "Smoke detector", "Toilet fill valve",
                       "Garbage disposal 1/2 HP", "Door lockset, satin nickel"]),
            dict(name="part_usage", prefix="PU", parent="work_order", refs=["spare_part"], fields=[
                "usage_code:code label unique", "quantity:int 1..20", "unit_cost:money 1..600",
                "billable_to_resident:bool", "used_at:datetime"],
                states=["drawn", "installed", "returned"],
                transitions={"install": "drawn>installed", "return_to_shelf": "drawn>returned"}),
        ],
    ),
    Domain(
        id="coworking_spaces", sector="real_estate", title="Coworking space front desk",
        description="Community managers at a coworking operator sign up members, book meeting rooms against "
                    "room credits, and issue guest passes.",
        actor="community manager",
        entities=[
            dict(name="location", prefix="LC", fields=[
                "location_name:text label", "city:choice sf|nyc|london|berlin|austin", "opens_hour:int 5..9",
                "closes_hour:int 18..24", "phone_booths:int 0..20"],
                words=["SoMa Hub", "Brooklyn Navy Yard", "Shoreditch Works", "Kreuzberg Loft", "East Austin Studio"]),
            dict(name="meeting_room", prefix="MR", parent="location", fields=[
                "room_name:text label", "seats:int 2..30", "credits_per_hour:int 1..10",
                "av_setup:choice none|tv|projector|video_conf", "whiteboard:bool"],
                states=["bookable", "closed_for_repair"],
                transitions={"close_for_repair": "bookable>closed_for_repair", "reopen": "closed_for_repair>bookable"},
                words=["Ada", "Turing", "Hopper", "Lovelace", "Curie", "Fibonacci"]),
            dict(name="member", prefix="MB", fields=[
                "full_name:name label", "email:email unique", "company:text",
                "membership:choice hot_desk|dedicated_desk|private_office|virtual",
                "room_credits:int 0..200 balance", "key_card:code unique", "guest_pass_quota:int 1..10 capacity"],
                states=["active", "paused", "cancelled"],
                transitions={"pause": "active>paused", "resume": "paused>active", "cancel": "active,paused>cancelled"}),
            dict(name="room_booking", prefix="RB", parent="meeting_room", refs=["member"], fields=[
                "booking_code:code label unique", "starts_at:datetime", "duration_min:int 30..480",
                "attendees:int 1..30", "credits_charged:int 0..80", "catering:bool"],
                states=["booked", "checked_in", "completed", "cancelled", "no_show"],
                transitions={"check_in": "booked>checked_in", "complete": "checked_in>completed",
                             "cancel": "booked>cancelled", "mark_no_show": "booked>no_show"}),
            dict(name="guest_pass", plural="guest_passes", prefix="GP", parent="member", fields=[
                "pass_code:code label unique", "guest_name:name", "visit_date:datetime deadline",
                "host_notified:bool", "wifi_access:bool"],
                states=["issued", "used", "revoked"],
                transitions={"admit": "issued>used", "revoke": "issued>revoked"}),
        ],
    ),
]
