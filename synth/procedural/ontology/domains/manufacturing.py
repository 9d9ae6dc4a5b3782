"""Manufacturing domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="production_line", sector="manufacturing", title="Production line control",
        description="Shift supervisors on a factory floor release work orders to production lines, issue "
                    "material lots to them, and log line downtime.",
        actor="shift supervisor",
        entities=[
            dict(name="production_line", prefix="LN", fields=[
                "line_name:text label", "plant:choice plant_1|plant_2|plant_3",
                "shift_pattern:choice 1x8|2x8|3x8|4x12", "rated_units_per_hour:int 10..5000",
                "oee_target_pct:int 50..95"],
                states=["running", "changeover", "down", "idle"],
                transitions={"start_changeover": "running,idle>changeover", "finish_changeover": "changeover>running",
                             "stop": "running,changeover>down", "restart": "down,idle>running",
                             "idle": "running>idle"},
                words=["Line 1 Bottling", "Line 2 Canning", "SMT Line A", "Final Assembly East", "Paint Shop",
                       "Stamping Press 4"]),
            dict(name="product", prefix="PR", fields=[
                "product_name:text label", "part_number:code unique", "unit_cost:money 0.05..900",
                "cycle_time_s:int 1..3600", "drawing_revision:code", "requires_inspection:bool"],
                words=["12oz Cola Can", "Brake Caliper BC-220", "IoT Sensor Board", "Office Chair Base",
                       "Inverter Housing", "Hinge Bracket HB-7"]),
            dict(name="work_order", prefix="WO", parent="production_line", refs=["product"], fields=[
                "order_number:code label unique", "quantity_planned:int 10..100000",
                "quantity_remaining:int 0..100000 balance", "due_at:datetime",
                "priority:choice low|normal|rush", "max_material_issues:int 1..30 capacity"],
                states=["released", "in_progress", "on_hold", "completed", "cancelled"],
                transitions={"start": "released>in_progress", "hold": "released,in_progress>on_hold",
                             "resume": "on_hold>in_progress", "complete": "in_progress>completed",
                             "cancel": "released,on_hold>cancelled"}),
            dict(name="material_lot", prefix="ML", fields=[
                "lot_number:code label unique", "material:choice aluminum_coil|steel_sheet|resin_pellets|pcb_blank|paint",
                "on_hand_kg:float 0..50000 balance", "supplier:text", "received_on:datetime",
                "expires_on:datetime deadline"],
                states=["received", "released_for_use", "quarantined", "consumed"],
                transitions={"release": "received,quarantined>released_for_use",
                             "quarantine": "received,released_for_use>quarantined",
                             "mark_consumed": "released_for_use>consumed"}),
            dict(name="material_issue", prefix="MI", parent="work_order", refs=["material_lot"], fields=[
                "issue_code:code label unique", "quantity_kg:float 0.1..5000", "issued_at:datetime",
                "issued_by:name", "scrap_kg:float 0..500"],
                states=["issued", "returned"], transitions={"return_to_stores": "issued>returned"}),
            dict(name="downtime_event", prefix="DT", parent="production_line", refs=["work_order"], fields=[
                "event_code:code label unique",
                "reason:choice breakdown|changeover|material_shortage|quality|no_operator|planned_maintenance",
                "started_at:datetime", "minutes:int 1..1440", "operator:name", "equipment:text"],
                states=["open", "closed"], transitions={"close": "open>closed", "reopen": "closed>open"}),
        ],
    ),
    Domain(
        id="quality_control", sector="manufacturing", title="Supplier quality control",
        description="Quality engineers inspect incoming supplier lots against inspection plans, raise "
                    "nonconformance reports, and drive corrective actions to closure.",
        actor="quality engineer",
        entities=[
            dict(name="inspection_plan", prefix="IP", fields=[
                "plan_name:text label", "plan_code:code unique", "sample_size:int 2..200", "aql:float 0.1..6.5",
                "frequency:choice every_lot|daily|weekly|first_article",
                "gauge:choice caliper|cmm|visual|torque|leak_test"],
                states=["draft", "approved", "obsolete"],
                transitions={"approve": "draft>approved", "make_obsolete": "approved>obsolete"},
                words=["Incoming Aluminum Coil", "Weld Seam Visual", "Final Torque Audit", "First Article CMM",
                       "Leak Test 100%", "PCB Solder Joint AOI"]),
            dict(name="supplier", prefix="SP", fields=[
                "supplier_name:text label", "supplier_code:code unique", "country:choice US|MX|CN|DE|VN|IN",
                "quality_rating:int 0..100", "iso_certified:bool", "contact_email:email",
                "chargeback_balance:money 0..50000 balance"],
                states=["approved", "probation", "disqualified"],
                transitions={"place_on_probation": "approved>probation", "restore": "probation>approved",
                             "disqualify": "approved,probation>disqualified"},
                words=["Apex Metal Stamping", "Shenzhen Brightcircuit", "Monterrey Castings", "Rheinland Polymers",
                       "Saigon Precision Parts", "Pune Forge Works"]),
            dict(name="inspection_lot", prefix="IL", parent="supplier", refs=["inspection_plan"], fields=[
                "lot_code:code label unique", "part_number:code", "quantity_received:int 1..100000",
                "received_at:datetime", "inspect_by:datetime deadline", "defects_found:int 0..500"],
                states=["pending", "in_inspection", "accepted", "rejected", "conditionally_released"],
                transitions={"start": "pending>in_inspection", "accept": "in_inspection>accepted",
                             "reject": "in_inspection>rejected",
                             "release_conditionally": "in_inspection>conditionally_released"}),
            dict(name="nonconformance", prefix="NC", parent="inspection_lot", fields=[
                "ncr_number:code label unique",
                "defect_type:choice dimensional|cosmetic|material|functional|labeling|contamination",
                "severity:choice minor|major|critical", "quantity_affected:int 1..10000",
                "disposition:choice use_as_is|rework|scrap|return_to_vendor", "cost_impact:money 0..250000"],
                states=["open", "under_review", "dispositioned", "closed"],
                transitions={"review": "open>under_review", "disposition": "under_review>dispositioned",
                             "close": "dispositioned>closed"}),
            dict(name="corrective_action", prefix="CA", parent="nonconformance", fields=[
                "car_number:code label unique",
                "root_cause:choice operator_error|machine|material|method|measurement|design",
                "owner:name", "due_on:datetime deadline", "recurrence_count:int 0..10"],
                states=["requested", "accepted", "implemented", "verified", "rejected"],
                transitions={"accept": "requested>accepted", "reject": "requested>rejected",
                             "mark_implemented": "accepted>implemented", "verify": "implemented>verified",
                             "reopen": "implemented>accepted"}),
        ],
    ),
]
