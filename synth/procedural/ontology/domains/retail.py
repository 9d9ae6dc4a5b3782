"""Retail domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="grocery_delivery", sector="retail", title="Grocery delivery dispatch",
        description="Dispatchers at an online grocer slot customer orders into delivery windows, pick them from "
                    "shelf stock and send them out in vans.",
        actor="grocery dispatcher",
        entities=[
            dict(name="customer", prefix="C", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "wallet_credit:money 0..500 balance",
                "subscription:choice none|monthly|annual", "postcode:code"],
                states=["active", "suspended"],
                transitions={"suspend": "active>suspended", "reactivate": "suspended>active"}),
            dict(name="product", prefix="P", fields=[
                "product_name:text label", "sku:code unique", "unit_price:money 0.5..60",
                "stock_units:int 0..800 balance", "aisle:choice produce|dairy|bakery|frozen|pantry|household",
                "organic:bool", "best_before:datetime"],
                states=["listed", "delisted"], transitions={"delist": "listed>delisted", "relist": "delisted>listed"},
                words=["Organic Bananas 1kg", "Whole Milk 2L", "Sourdough Loaf", "Free-Range Eggs x12",
                       "Frozen Peas 900g", "Basmati Rice 5kg", "Greek Yogurt 500g", "Dish Soap 750ml"]),
            dict(name="delivery_slot", prefix="DS", fields=[
                "slot_code:code label unique", "window_start:datetime deadline", "max_orders:int 4..30 capacity",
                "van:choice van_1|van_2|van_3|ebike", "delivery_fee:money 0..9.99",
                "zone:choice north|south|east|west"],
                states=["open", "closed"], transitions={"close": "open>closed", "reopen": "closed>open"}),
            dict(name="grocery_order", prefix="GO", parent="delivery_slot", refs=["customer"], fields=[
                "order_number:code label unique", "basket_total:money 0..600", "item_count:int 1..80",
                "substitutions_allowed:bool", "bag_preference:choice paper|reusable|no_bags", "tip:money 0..30",
                "placed_at:datetime"],
                states=["placed", "picking", "out_for_delivery", "delivered", "cancelled"],
                transitions={"start_picking": "placed>picking", "dispatch": "picking>out_for_delivery",
                             "mark_delivered": "out_for_delivery>delivered",
                             "cancel": "placed,picking>cancelled"}),
            dict(name="order_item", prefix="OI", parent="grocery_order", refs=["product"], fields=[
                "line_code:code label unique", "quantity:int 1..24", "unit_price:money 0.5..60",
                "substitute_sku:code", "weight_grams:int 0..5000"],
                states=["requested", "picked", "out_of_stock"],
                transitions={"pick": "requested>picked", "mark_out_of_stock": "requested>out_of_stock"}),
        ],
    ),
    Domain(
        id="consignment_shop", sector="retail", title="Consignment shop",
        description="Staff at a second-hand consignment shop take in items from consignors, price and sell them, "
                    "and pay consignors their share.",
        actor="shop associate",
        entities=[
            dict(name="consignor", prefix="CN", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "payout_balance:money 0..5000 balance",
                "commission_rate:float 0.2..0.6", "payout_method:choice check|bank_transfer|store_credit"],
                states=["active", "inactive"],
                transitions={"deactivate": "active>inactive", "reactivate": "inactive>active"}),
            dict(name="consignment_item", prefix="CI", parent="consignor", fields=[
                "title:text label", "tag_code:code unique", "asking_price:money 5..2500",
                "floor_price:money 1..2000", "condition:choice like_new|good|fair|worn",
                "category:choice furniture|apparel|kitchen|decor|books", "contract_ends:datetime"],
                states=["intake", "on_floor", "sold", "returned_to_owner", "donated"],
                transitions={"accept": "intake>on_floor", "mark_sold": "on_floor>sold",
                             "return_to_owner": "intake,on_floor>returned_to_owner", "donate": "on_floor>donated"},
                words=["Mid-century teak sideboard", "Vintage Levi's 501 jeans", "Le Creuset dutch oven",
                       "Brass floor lamp", "Wool peacoat size M", "First-edition cookbook set",
                       "Rattan peacock chair"]),
            dict(name="shopper", prefix="SH", fields=[
                "full_name:name label", "email:email unique", "store_credit:money 0..800 balance", "phone:phone",
                "mailing_list:bool"]),
            dict(name="sale", prefix="SL", parent="consignment_item", refs=["shopper"], fields=[
                "receipt_number:code label unique", "sale_price:money 1..2500",
                "payment:choice cash|card|store_credit", "discount_pct:int 0..50", "sold_at:datetime",
                "return_window_ends:datetime deadline"],
                states=["completed", "refunded"], transitions={"refund": "completed>refunded"}),
            dict(name="payout", prefix="PO", parent="consignor", fields=[
                "payout_number:code label unique", "payout_amount:money 0..5000", "period:choice weekly|monthly|quarterly",
                "issued_on:datetime", "processing_fee:money 0..25"],
                states=["pending", "issued", "cancelled"],
                transitions={"issue": "pending>issued", "cancel": "pending>cancelled"}),
        ],
    ),
    Domain(
        id="marketplace_sellers", sector="retail", title="Marketplace seller operations",
        description="Marketplace operations staff onboard third-party sellers, police their listings, and settle "
                    "buyer disputes over orders.",
        actor="marketplace operations agent",
        entities=[
            dict(name="seller", prefix="SE", fields=[
                "store_name:text label", "contact_email:email unique", "rating:float 1..5",
                "payout_reserve:money 0..20000 balance", "country:choice US|UK|DE|FR|ES|IT",
                "fulfilment:choice self|marketplace", "listing_limit:int 10..1000 capacity"],
                states=["onboarding", "active", "suspended", "closed"],
                transitions={"approve": "onboarding>active", "suspend": "active>suspended",
                             "reinstate": "suspended>active", "close": "active,suspended>closed"},
                words=["Brightleaf Ceramics", "Nordic Knitworks", "Cobalt Audio Supply", "Little Fern Toys",
                       "Harbor Street Books", "Peak Trail Outfitters"]),
            dict(name="listing", prefix="LS", parent="seller", fields=[
                "title:text label", "sku:code unique", "price:money 1..3000", "quantity_available:int 0..500 balance",
                "condition:choice new|refurbished|used",
                "category:choice electronics|home|toys|books|outdoor|fashion", "listed_until:datetime deadline"],
                states=["draft", "live", "paused", "removed"],
                transitions={"publish": "draft>live", "pause": "live>paused", "resume": "paused>live",
                             "take_down": "draft,live,paused>removed"}),
            dict(name="buyer", prefix="BY", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "country:choice US|UK|DE|FR|ES|IT",
                "verified:bool"]),
            dict(name="marketplace_order", prefix="MO", parent="listing", refs=["buyer"], fields=[
                "order_number:code label unique", "quantity:int 1..10", "total:money 1..30000",
                "shipping_method:choice standard|express|pickup", "ship_by:datetime",
                "tracking_number:code"],
                states=["awaiting_shipment", "shipped", "delivered", "cancelled"],
                transitions={"ship": "awaiting_shipment>shipped", "confirm_delivery": "shipped>delivered",
                             "cancel": "awaiting_shipment>cancelled"}),
            dict(name="dispute", prefix="DP", parent="marketplace_order", fields=[
                "case_number:code label unique", "reason:choice not_received|not_as_described|damaged|wrong_item",
                "amount_claimed:money 0..3000", "opened_at:datetime", "respond_by:datetime"],
                states=["open", "seller_responded", "resolved_for_buyer", "resolved_for_seller"],
                transitions={"record_response": "open>seller_responded",
                             "rule_for_buyer": "open,seller_responded>resolved_for_buyer",
                             "rule_for_seller": "seller_responded>resolved_for_seller"}),
        ],
    ),
]
