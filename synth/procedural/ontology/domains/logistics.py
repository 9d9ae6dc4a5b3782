"""Logistics domains."""

from synth.procedural.ontology.schema import Domain

_PORTS = "CNSHA|SGSIN|NLRTM|USLAX|DEHAM|AEJEA"

DOMAINS = [
    Domain(
        id="parcel_delivery", sector="logistics", title="Parcel delivery depot",
        description="Depot dispatchers at a parcel carrier load shippers' parcels onto courier routes, record "
                    "delivery attempts, and resolve delivery exceptions.",
        actor="depot dispatcher",
        entities=[
            dict(name="depot", prefix="DP", fields=[
                "depot_name:text label", "hub_code:code unique", "us_state:choice NJ|TN|NV|GA|IL|TX",
                "dock_doors:int 2..40", "sort_rate_per_hour:int 500..20000", "open_24h:bool"],
                words=["Newark Hub", "Memphis Sort Center", "Reno Depot", "Atlanta South", "Chicago O'Hare Gateway",
                       "Dallas Crossdock"]),
            dict(name="courier", prefix="CR", parent="depot", fields=[
                "full_name:name label", "badge_number:code unique", "phone:phone",
                "vehicle_type:choice van|cargo_bike|box_truck|scooter", "years_service:int 0..35"],
                states=["off_shift", "on_shift", "suspended"],
                transitions={"clock_in": "off_shift>on_shift", "clock_out": "on_shift>off_shift",
                             "suspend": "off_shift,on_shift>suspended", "reinstate": "suspended>off_shift"}),
            dict(name="route", prefix="RT", parent="courier", fields=[
                "route_code:code label unique", "max_stops:int 20..180 capacity", "route_date:datetime",
                "zone:choice urban|suburban|rural|business_park", "distance_km:float 5..300"],
                states=["planned", "loaded", "on_road", "completed"],
                transitions={"load": "planned>loaded", "depart": "loaded>on_road", "complete": "on_road>completed"}),
            dict(name="shipper", prefix="SH", fields=[
                "company_name:text label", "account_number:code unique", "contact_email:email",
                "prepaid_credit:money 0..20000 balance", "service_level:choice ground|two_day|overnight",
                "contract_expires:datetime deadline"]),
            dict(name="parcel", prefix="PC", parent="route", refs=["shipper"], fields=[
                "tracking_number:code label unique", "weight_kg:float 0.1..30", "declared_value:money 0..5000",
                "signature_required:bool", "deliver_by:datetime", "recipient_name:name",
                "recipient_phone:phone", "max_attempts:int 1..3 capacity"],
                states=["label_created", "in_transit", "out_for_delivery", "delivered", "exception", "returned"],
                transitions={"pick_up": "label_created>in_transit", "load_for_delivery": "in_transit>out_for_delivery",
                             "deliver": "out_for_delivery>delivered",
                             "flag_exception": "in_transit,out_for_delivery>exception",
                             "resolve_exception": "exception>in_transit", "return_to_sender": "exception>returned"}),
            dict(name="delivery_attempt", prefix="DA", parent="parcel", fields=[
                "attempt_code:code label unique", "attempted_at:datetime",
                "outcome:choice delivered|no_one_home|refused|address_issue|access_denied",
                "left_with:choice recipient|neighbor|safe_place|locker|none", "photo_proof:bool",
                "gps_accuracy_m:int 1..100"]),
        ],
    ),
    Domain(
        id="warehouse_inventory", sector="logistics", title="Warehouse inventory control",
        description="Inventory controllers at a distribution center put stock lots away into bin locations, "
                    "quarantine or scrap bad lots, and reconcile cycle counts.",
        actor="inventory controller",
        entities=[
            dict(name="warehouse", prefix="WH", fields=[
                "site_name:text label", "site_code:code unique", "region:choice east|central|west|south",
                "square_meters:int 1000..80000", "temperature_controlled:bool"]),
            dict(name="bin_location", prefix="BN", parent="warehouse", fields=[
                "bin_code:code label unique", "zone:choice picking|reserve|bulk|cold|returns",
                "lot_slots:int 1..12 capacity", "aisle:int 1..60", "shelf_level:int 1..6", "hazmat_ok:bool"],
                states=["active", "blocked"], transitions={"block": "active>blocked", "unblock": "blocked>active"}),
            dict(name="sku", prefix="SK", fields=[
                "description:text label", "sku_code:code unique", "unit_of_measure:choice each|case|pallet|kg",
                "reorder_point:int 0..500", "unit_cost:money 0.1..900", "weight_kg:float 0.01..500"],
                words=["M8 hex bolts, box of 100", "Nitrile gloves size L", "Stretch wrap 18in",
                       "Lithium battery pack 48V", "Ceramic floor tile 60x60", "Olive oil 1L, case of 12"]),
            dict(name="stock_lot", prefix="LT", parent="bin_location", refs=["sku"], fields=[
                "lot_number:code label unique", "on_hand:int 0..5000 balance", "received_at:datetime",
                "expiry:datetime", "supplier_batch:code"],
                states=["available", "quarantined", "scrapped"],
                transitions={"quarantine": "available>quarantined", "release": "quarantined>available",
                             "scrap": "quarantined>scrapped"}),
            dict(name="cycle_count", prefix="CC", parent="warehouse", refs=["bin_location"], fields=[
                "count_code:code label unique", "counted_at:datetime", "expected_units:int 0..5000",
                "counted_units:int 0..5000", "counter:name", "method:choice full|blind|spot"],
                states=["scheduled", "counted", "recount_requested", "approved"],
                transitions={"post_results": "scheduled,recount_requested>counted", "approve": "counted>approved",
                             "request_recount": "counted>recount_requested"}),
        ],
    ),
    Domain(
        id="freight_booking", sector="logistics", title="Ocean freight bookings",
        description="Booking desk staff at an ocean carrier confirm shippers' container bookings onto vessel "
                    "voyages before cargo cutoff and issue bills of lading.",
        actor="carrier booking agent",
        entities=[
            dict(name="shipper_account", prefix="SA", fields=[
                "company_name:text label", "account_code:code unique", "contact_email:email",
                "credit_available:money 0..250000 balance", "payment_terms:choice prepaid|net15|net30|net60",
                "hazmat_certified:bool"],
                words=["Pacific Rim Traders", "Alpine Furniture Export", "Delta Agro Commodities",
                       "Kestrel Electronics", "Solano Wine Exporters", "Baltic Timber Co."]),
            dict(name="vessel_voyage", prefix="VY", fields=[
                "voyage_number:code label unique", "vessel_name:text", f"port_of_loading:choice {_PORTS}",
                f"port_of_discharge:choice {_PORTS}", "container_slots:int 50..800 capacity",
                "cargo_cutoff:datetime"],
                states=["scheduled", "loading", "sailed", "arrived", "cancelled"],
                transitions={"open_loading": "scheduled>loading", "sail": "loading>sailed",
                             "arrive": "sailed>arrived", "cancel": "scheduled>cancelled"}),
            dict(name="freight_booking", prefix="BKG", parent="shipper_account", refs=["vessel_voyage"], fields=[
                "booking_number:code label unique", "commodity:text", "incoterm:choice FOB|CIF|EXW|DAP|DDP",
                "quoted_rate:money 500..15000", "containers_requested:int 1..40", "hazardous:bool"],
                states=["requested", "confirmed", "rolled", "shipped", "cancelled"],
                transitions={"confirm": "requested>confirmed", "roll_over": "confirmed>rolled",
                             "reconfirm": "rolled>confirmed", "ship": "confirmed>shipped",
                             "cancel": "requested,confirmed,rolled>cancelled"}),
            dict(name="container", prefix="CT", parent="vessel_voyage", refs=["freight_booking"], fields=[
                "container_number:code label unique", "size:choice 20ft|40ft|40ft_hc|reefer_40",
                "gross_weight_kg:int 2000..30000", "seal_number:code", "reefer_temp_c:float -30..15",
                "vgm_submitted:bool"],
                states=["empty_released", "gated_in", "loaded", "discharged"],
                transitions={"gate_in": "empty_released>gated_in", "load": "gated_in>loaded",
                             "discharge": "loaded>discharged"}),
            dict(name="bill_of_lading", prefix="BL", parent="freight_booking", fields=[
                "bl_number:code label unique", "consignee:text", "notify_party:text",
                "freight_terms:choice prepaid|collect", "issued_at:datetime", "originals:int 1..3"],
                states=["draft", "issued", "surrendered"],
                transitions={"issue": "draft>issued", "surrender": "issued>surrendered"}),
        ],
    ),
]
