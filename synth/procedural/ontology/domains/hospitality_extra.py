"""More hospitality domains (event catering, ski resort)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="catering_orders", sector="hospitality", title="Event catering orders",
        description="Catering sales coordinators quote and confirm event orders, build each event's menu from "
                    "kitchen dishes, and book servers and bartenders for it.",
        actor="catering sales coordinator",
        entities=[
            dict(name="client_account", prefix="CA", fields=[
                "contact_name:name label", "email:email unique", "company:text", "phone:phone",
                "house_account_credit:money 0..10000 balance", "tax_exempt:bool"],
                states=["active", "on_credit_hold"],
                transitions={"place_credit_hold": "active>on_credit_hold",
                             "release_credit_hold": "on_credit_hold>active"}),
            dict(name="catering_event", prefix="CE", parent="client_account", fields=[
                "event_name:text label", "event_date:datetime", "guest_count:int 10..800",
                "service_style:choice drop_off|buffet|plated|family_style|stations", "venue_address:text",
                "deposit_paid:money 0..20000", "staffing_slots:int 1..30 capacity"],
                states=["inquiry", "quoted", "confirmed", "completed", "cancelled"],
                transitions={"send_quote": "inquiry>quoted", "confirm": "quoted>confirmed",
                             "complete": "confirmed>completed", "cancel": "inquiry,quoted,confirmed>cancelled"},
                words=["Harper-Lee Wedding Reception", "Q3 Board Lunch", "Spring Gala", "Tech Meetup Pizza Night",
                       "Retirement Party for D. Cole", "Graduation Brunch"]),
            dict(name="menu_item", prefix="MI", fields=[
                "dish_name:text label", "kitchen_code:code unique", "price_per_guest:money 2..60",
                "course:choice appetizer|main|side|dessert|beverage",
                "allergen:choice none|nuts|gluten|dairy|shellfish", "vegetarian:bool", "minimum_servings:int 10..50"],
                states=["available", "seasonal_off", "discontinued"],
                transitions={"pause_for_season": "available>seasonal_off", "bring_back": "seasonal_off>available",
                             "discontinue": "available,seasonal_off>discontinued"},
                words=["Braised short rib", "Caprese skewers", "Wild mushroom risotto", "Lemon tart",
                       "Herb roasted chicken", "Mezze platter", "Shrimp cocktail shooters"]),
            dict(name="order_line", prefix="OL", parent="catering_event", refs=["menu_item"], fields=[
                "line_code:code label unique", "servings:int 10..800", "unit_price:money 2..60",
                "dietary_tag:choice standard|vegan|gluten_free|kosher|halal", "plated_separately:bool"]),
            dict(name="staff_assignment", prefix="SA", parent="catering_event", fields=[
                "staffer_name:name label", "position:choice server|bartender|chef|captain|driver",
                "hourly_rate:money 18..45", "call_time:datetime", "hours_booked:float 2..12", "tips_pooled:bool"],
                states=["tentative", "confirmed", "released", "no_show"],
                transitions={"confirm": "tentative>confirmed", "release": "tentative,confirmed>released",
                             "mark_no_show": "confirmed>no_show"}),
        ],
    ),
    Domain(
        id="ski_resort", sector="hospitality", title="Ski resort guest services",
        description="Guest services staff at a ski resort sell lift passes, book ski school lessons and rental "
                    "kits, and track which lifts are running.",
        actor="guest services agent",
        entities=[
            dict(name="lift", prefix="LF", fields=[
                "lift_name:text label", "lift_code:code unique",
                "lift_kind:choice chairlift|gondola|t_bar|magic_carpet",
                "vertical_m:int 50..1200", "riders_per_hour:int 500..3600", "wind_hold_kmh:int 40..90"],
                states=["open", "wind_hold", "closed", "maintenance"],
                transitions={"place_wind_hold": "open>wind_hold", "resume": "wind_hold>open",
                             "close": "open,wind_hold>closed", "open_lift": "closed>open",
                             "start_maintenance": "closed>maintenance", "finish_maintenance": "maintenance>closed"},
                words=["Summit Express", "Eagle Gondola", "Bunny Carpet", "Glacier T-Bar", "Powder Bowl Quad",
                       "Sunrise Six"]),
            dict(name="guest", prefix="GU", fields=[
                "full_name:name label", "email:email unique", "phone:phone",
                "skill_level:choice beginner|intermediate|advanced|expert", "resort_credit:money 0..1000 balance",
                "boot_size_mondo:float 20..32"]),
            dict(name="ticket", prefix="TK", parent="guest", fields=[
                "ticket_number:code label unique", "product:choice day|multi_day|season|half_day|beginner_area",
                "ski_days_left:int 0..150 balance", "valid_until:datetime deadline", "price:money 29..1200",
                "age_band:choice child|youth|adult|senior"],
                states=["active", "suspended", "expired", "refunded"],
                transitions={"suspend": "active>suspended", "reinstate": "suspended>active",
                             "expire": "active,suspended>expired", "refund": "active>refunded"}),
            dict(name="ski_lesson", prefix="SL", parent="lift", fields=[
                "lesson_code:code label unique", "discipline:choice ski|snowboard|telemark",
                "lesson_format:choice private|group|kids_camp", "max_students:int 1..10 capacity",
                "meets_at:datetime", "instructor:name", "level:choice first_timer|level_2|level_3|level_4"],
                states=["scheduled", "in_progress", "done", "cancelled"],
                transitions={"start": "scheduled>in_progress", "finish": "in_progress>done",
                             "cancel": "scheduled>cancelled"}),
            dict(name="lesson_booking", prefix="LB", parent="ski_lesson", refs=["guest"], fields=[
                "booking_code:code label unique", "student_age:int 4..80", "price_paid:money 60..900",
                "rental_included:bool", "meeting_point:choice main_lodge|kids_center|summit_hut"],
                states=["booked", "checked_in", "completed", "no_show", "cancelled"],
                transitions={"check_in": "booked>checked_in", "complete": "checked_in>completed",
                             "mark_no_show": "booked>no_show", "cancel": "booked>cancelled"}),
            dict(name="rental", prefix="RN", parent="guest", fields=[
                "kit_tag:code label unique", "ski_length_cm:int 90..195", "helmet:bool", "din_setting:float 1..12",
                "due_back:datetime", "package:choice basic|performance|demo|snowboard"],
                states=["fitted", "out", "returned", "damaged"],
                transitions={"hand_out": "fitted>out", "check_in": "out>returned", "report_damage": "out>damaged"}),
        ],
    ),
]
