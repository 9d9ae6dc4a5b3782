"""More retail domains (bookstore special orders, furniture delivery, pawn shop)."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="bookstore_orders", sector="retail", title="Bookstore special orders",
        description="Booksellers at an independent bookstore take special orders for titles not on the shelf, "
                    "order them from distributors and hold them for customer pickup.",
        actor="bookseller",
        entities=[
            dict(name="distributor", prefix="DI", fields=[
                "distributor_name:text label", "account_code:code unique", "trade_discount:float 0.2..0.5",
                "lead_time_days:int 1..21", "minimum_order_units:int 1..25", "returns_allowed:bool",
                "open_credit:money 0..20000 balance"],
                states=["active", "on_hold"],
                transitions={"put_on_hold": "active>on_hold", "release_hold": "on_hold>active"},
                words=["Ingram Book Company", "Baker & Taylor", "Penguin Random House Direct", "Bookazine",
                       "Hachette Direct", "Small Press Distribution"]),
            dict(name="book", prefix="BK", parent="distributor", fields=[
                "title:text label", "isbn:code unique", "author:name", "list_price:money 4.99..120",
                "binding:choice hardcover|paperback|audio_cd|boxed_set", "copies_on_hand:int 0..60 balance",
                "published_on:datetime"],
                states=["in_print", "backordered", "out_of_print"],
                transitions={"mark_backordered": "in_print>backordered", "restock": "backordered>in_print",
                             "declare_out_of_print": "in_print,backordered>out_of_print"},
                words=["The Overstory", "Braiding Sweetgrass", "Project Hail Mary", "Pachinko",
                       "The Body Keeps the Score", "Circe", "Klara and the Sun", "A Gentleman in Moscow"]),
            dict(name="patron", prefix="PA", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "store_credit:money 0..300 balance",
                "book_club_member:bool", "preferred_contact:choice email|phone|text_message"]),
            dict(name="special_order", prefix="SO", parent="book", refs=["patron"], fields=[
                "order_code:code label unique", "copies:int 1..10", "deposit_paid:money 0..100",
                "pickup_by:datetime deadline", "gift_wrap:bool", "ordered_on:datetime", "rush:bool"],
                states=["requested", "ordered", "arrived", "picked_up", "cancelled"],
                transitions={"place_with_distributor": "requested>ordered", "receive": "ordered>arrived",
                             "hand_over": "arrived>picked_up", "cancel": "requested,ordered,arrived>cancelled"}),
            dict(name="purchase_order", prefix="PO", parent="distributor", fields=[
                "po_number:code label unique", "line_count:int 1..80", "order_total:money 0..15000",
                "ship_method:choice ground|express|pallet_freight", "expected_on:datetime",
                "backorders_allowed:bool"],
                states=["draft", "submitted", "partially_received", "received", "cancelled"],
                transitions={"submit": "draft>submitted", "receive_partial": "submitted>partially_received",
                             "receive_in_full": "submitted,partially_received>received",
                             "cancel": "draft,submitted>cancelled"}),
        ],
    ),
    Domain(
        id="furniture_delivery", sector="retail", title="Furniture delivery scheduling",
        description="Delivery coordinators at a furniture retailer put sold pieces onto truck routes run by "
                    "two-person crews and handle damage claims raised at the doorstep.",
        actor="delivery coordinator",
        entities=[
            dict(name="crew", prefix="CR", fields=[
                "lead_installer:name label", "crew_phone:phone", "members:int 2..4", "assembly_certified:bool",
                "home_yard:choice north_yard|south_yard|east_yard", "overtime_hours_left:float 0..20 balance"],
                states=["available", "on_route", "off_shift"],
                transitions={"dispatch": "available>on_route", "return_to_yard": "on_route>available",
                             "end_shift": "available>off_shift", "start_shift": "off_shift>available"},
                words=["Marco Diaz", "Dwayne Porter", "Lena Kowalski", "Sam Okafor", "Rita Nguyen", "Joel Baptiste"]),
            dict(name="route", prefix="RT", refs=["crew"], fields=[
                "route_code:code label unique", "delivery_date:datetime", "max_stops:int 2..12 capacity",
                "truck_size:choice box_16ft|box_20ft|box_26ft", "region:choice north|south|east|west|downtown",
                "planned_miles:int 10..220"],
                states=["planning", "loaded", "in_progress", "completed", "cancelled"],
                transitions={"load": "planning>loaded", "depart": "loaded>in_progress",
                             "close_out": "in_progress>completed", "cancel": "planning,loaded>cancelled"}),
            dict(name="furniture_order", prefix="FO", fields=[
                "order_number:code label unique", "customer_name:name", "delivery_postcode:code",
                "piece_count:int 1..12", "white_glove:bool", "balance_due:money 0..8000 balance",
                "floor_level:int 0..20", "elevator_access:bool"],
                states=["awaiting_stock", "ready_to_schedule", "delivered", "cancelled"],
                transitions={"mark_ready": "awaiting_stock>ready_to_schedule",
                             "confirm_delivered": "ready_to_schedule>delivered",
                             "cancel": "awaiting_stock,ready_to_schedule>cancelled"}),
            dict(name="delivery_stop", prefix="DS", parent="route", refs=["furniture_order"], fields=[
                "stop_code:code label unique", "sequence:int 1..12", "window_start:datetime",
                "window_hours:int 2..4", "assembly_required:bool", "haul_away_old:bool", "signed_by:name"],
                states=["scheduled", "arrived", "delivered", "refused", "no_access"],
                transitions={"arrive": "scheduled>arrived", "complete_delivery": "arrived>delivered",
                             "record_refusal": "arrived>refused", "mark_no_access": "scheduled,arrived>no_access"}),
            dict(name="claim", prefix="CL", parent="delivery_stop", fields=[
                "claim_number:code label unique", "item_description:text",
                "damage_type:choice scratch|dent|tear|broken_part|wrong_color", "repair_cost:money 0..3000",
                "photos_attached:int 0..12", "reported_on:datetime"],
                states=["filed", "inspected", "repaired", "replaced", "denied"],
                transitions={"inspect": "filed>inspected", "approve_repair": "inspected>repaired",
                             "approve_replacement": "inspected>replaced", "deny": "filed,inspected>denied"}),
        ],
    ),
    Domain(
        id="pawn_shop", sector="retail", title="Pawn shop counter",
        description="Pawnbrokers write collateral loans against customers' items, take interest payments and "
                    "extensions, and move forfeited pledges to the sales floor.",
        actor="pawnbroker",
        entities=[
            dict(name="pledgor", prefix="PL", fields=[
                "full_name:name label", "id_document_number:code unique", "phone:phone",
                "loans_defaulted:int 0..10", "preferred_language:choice en|es|vi|zh", "thumbprint_on_file:bool"],
                states=["in_good_standing", "flagged", "barred"],
                transitions={"flag": "in_good_standing>flagged", "clear_flag": "flagged>in_good_standing",
                             "bar": "flagged>barred"}),
            dict(name="vault_shelf", prefix="VS", fields=[
                "shelf_code:code label unique", "section:choice jewelry|electronics|tools|instruments|firearms",
                "slots:int 4..40 capacity", "climate_controlled:bool", "locked_case:bool",
                "insured_value_cap:money 5000..100000"]),
            dict(name="pawn_loan", prefix="PN", refs=["pledgor"], fields=[
                "ticket_number:code label unique", "principal:money 20..5000", "monthly_rate:float 0.02..0.25",
                "payoff_due:money 0..7000 balance", "maturity_date:datetime deadline", "grace_days:int 0..60",
                "extensions_used:int 0..6"],
                states=["active", "extended", "redeemed", "forfeited"],
                transitions={"extend": "active>extended", "redeem": "active,extended>redeemed",
                             "forfeit": "active,extended>forfeited"}),
            dict(name="pledge", prefix="PG", parent="vault_shelf", refs=["pawn_loan"], fields=[
                "item_description:text label", "serial_number:code",
                "category:choice jewelry|electronics|tools|instruments|firearms", "appraised_value:money 10..8000",
                "item_condition:choice excellent|good|fair|poor", "karat:int 0..24"],
                states=["in_vault", "released", "on_sale_floor", "sold"],
                transitions={"release_to_owner": "in_vault>released", "move_to_floor": "in_vault>on_sale_floor",
                             "sell": "on_sale_floor>sold"},
                words=["14k gold rope chain", "DeWalt 20V drill kit", "Fender Stratocaster", "Rolex Datejust 36",
                       "PlayStation 5 console", "Canon EOS R6 body", "Diamond solitaire ring 1ct"]),
            dict(name="payment", prefix="PM", parent="pawn_loan", fields=[
                "receipt_number:code label unique", "payment_value:money 5..5000",
                "method:choice cash|debit|money_order", "applied_to:choice interest_only|partial_principal|payoff",
                "paid_on:datetime", "late_fee:money 0..50"],
                states=["posted", "reversed"], transitions={"reverse": "posted>reversed"}),
        ],
    ),
]
